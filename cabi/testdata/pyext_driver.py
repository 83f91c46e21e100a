# Driver of pyext.c (TestPythonExtension): each rank prints "pyext ok <rank>".
import threading

import pyext

r, n = pyext.rank(), pyext.size()
assert pyext.thread_level() == 3, "thread level %d, want MULTIPLE" % pyext.thread_level()
assert pyext.allsum(r + 1) == n * (n + 1) // 2

# 100000 bytes: more than one eager descriptor's worth.
got = pyext.shift(bytes([r % 256]) * 100000)
assert got == bytes([(r - 1) % n % 256]) * 100000, got[:8]

# A collective from a second Python thread, while the main thread waits in
# join with the interpreter lock released.
res = []
t = threading.Thread(target=lambda: res.append(pyext.allsum(1)))
t.start()
t.join()
assert res == [n], res

# A bad destination is an exception naming MPI_ERR_RANK, not the job's end.
try:
    pyext.send_to(n)
except RuntimeError as e:
    assert ("class %d:" % pyext.err_rank()) in str(e), str(e)
else:
    raise AssertionError("MPI_Send to rank %d succeeded" % n)

assert pyext.allsum(1) == n
print("pyext ok %d" % r, flush=True)
