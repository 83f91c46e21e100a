# Driver of pyext.c (TestPythonExtension): each rank prints "pyext ok <rank>".
import os
import pickle
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

# Pickled objects of sizes the receiver does not know, received from any
# source by Mprobe/Get_count/Mrecv, as mpi4py's comm.recv does.
if r == 0:
    seen = {}
    for _ in range(n - 1):
        b, src, tag = pyext.precv(pyext.any_source(), 11)
        seen[src] = pickle.loads(b)
        assert tag == 11
    assert seen == {s: {"from": s, "pad": "x" * (s * 30000)} for s in range(1, n)}, seen.keys()
else:
    pyext.psend(pickle.dumps({"from": r, "pad": "x" * (r * 30000)}), 0, 11)

# Two Python threads per rank, each receiving by Mprobe/Mrecv on its own tag
# from the previous rank while the main thread sends both, in reverse order.
if n > 1:
    got = {}

    def recv(tag):
        b, src, t = pyext.precv((r - 1) % n, tag)
        got[tag] = (pickle.loads(b), src, t)

    ts = [threading.Thread(target=recv, args=(tag,)) for tag in (21, 22)]
    for th in ts:
        th.start()
    for tag in (22, 21):
        pyext.psend(pickle.dumps([tag, r] * (tag * 100)), (r + 1) % n, tag)
    for th in ts:
        th.join()
    p = (r - 1) % n
    assert got == {t: ([t, p] * (t * 100), p, t) for t in (21, 22)}, got.keys()

assert pyext.allsum(1) == n
os.write(1, b"pyext ok %d\n" % r)  # one write: ranks share the pipe
