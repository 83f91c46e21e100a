/* userop: a user operation is the same operation on every rank when every
 * rank made it from the same function, whatever else each rank created
 * before: the handles differ (here rank 0 makes and frees extra operations
 * first, odd ranks make one more they keep), the reductions must not be
 * reported as a collective mismatch and must give the right sums.
 * Self-checking on any number of ranks. With the argument "mismatch", rank 0
 * passes add_ints and the others max_ints: different functions are
 * different operations, and the job must abort naming them (the Go test
 * checks the exit and the message). An operation whose function is code
 * made at run time (a trampoline in anonymous executable memory, as JITs
 * and libffi closures give; x86-64 only) is made on every rank after the
 * ranks made different numbers of operations: it must not be reported as
 * a mismatch either. */
#include "dt.h"
#include <stdint.h>
#include <sys/mman.h>

static void add_ints(void *in, void *inout, int *len, MPI_Datatype *t) {
    (void)t;
    for (int i = 0; i < *len; i++)
        ((int *)inout)[i] += ((int *)in)[i];
}

static void max_ints(void *in, void *inout, int *len, MPI_Datatype *t) {
    (void)t;
    for (int i = 0; i < *len; i++)
        if (((int *)in)[i] > ((int *)inout)[i])
            ((int *)inout)[i] = ((int *)in)[i];
}

int main(int argc, char **argv) {
    start(&argc, &argv);
    MPI_Op extra, keep = MPI_OP_NULL, sum, mx;
    if (rank == 0)
        for (int i = 0; i < 3; i++) {
            OK(MPI_Op_create(max_ints, 1, &extra));
            OK(MPI_Op_free(&extra));
        }
    if (rank % 2)
        OK(MPI_Op_create(max_ints, 0, &keep));
    OK(MPI_Op_create(add_ints, 1, &sum));
    OK(MPI_Op_create(max_ints, 1, &mx));

    int v[4], r[4], want = size * (size - 1) / 2;
    if (argc > 1 && strcmp(argv[1], "mismatch") == 0) {
        OK(MPI_Allreduce(v, r, 4, MPI_INT, rank == 0 ? sum : mx, MPI_COMM_WORLD));
        printf("mismatch not detected on rank %d\n", rank);
        return finish("userop");
    }
    for (int i = 0; i < 4; i++)
        v[i] = rank + i;
    OK(MPI_Allreduce(v, r, 4, MPI_INT, sum, MPI_COMM_WORLD));
    for (int i = 0; i < 4; i++)
        CHECK(r[i] == want + size * i, "Allreduce r[%d] = %d, want %d", i, r[i], want + size * i);
    OK(MPI_Allreduce(v, r, 4, MPI_INT, mx, MPI_COMM_WORLD));
    for (int i = 0; i < 4; i++)
        CHECK(r[i] == size - 1 + i, "Allreduce max r[%d] = %d, want %d", i, r[i], size - 1 + i);

    r[0] = -1;
    OK(MPI_Reduce(v, r, 1, MPI_INT, sum, size - 1, MPI_COMM_WORLD));
    if (rank == size - 1)
        CHECK(r[0] == want, "Reduce = %d, want %d", r[0], want);

    MPI_Request q;
    OK(MPI_Iallreduce(v, r, 2, MPI_INT, sum, MPI_COMM_WORLD, &q));
    OK(MPI_Wait(&q, MPI_STATUS_IGNORE));
    CHECK(r[0] == want && r[1] == want + size, "Iallreduce = %d %d", r[0], r[1]);

    /* a communicator where only some ranks made the extra operation */
    MPI_Comm half;
    OK(MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half));
    int hs, hr, s = 0;
    MPI_Comm_size(half, &hs);
    MPI_Comm_rank(half, &hr);
    OK(MPI_Scan(&rank, &s, 1, MPI_INT, sum, half));
    int ws = 0;
    for (int i = rank % 2, k = 0; k <= hr; i += 2, k++)
        ws += i;
    CHECK(s == ws, "Scan on half = %d, want %d", s, ws);
    OK(MPI_Comm_free(&half));

#if defined(__x86_64__)
    {
        unsigned char *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        CHECK(p != MAP_FAILED, "mmap of an executable page failed");
        unsigned char code[14] = {0xff, 0x25, 0, 0, 0, 0}; /* jmp *0(%rip) */
        uint64_t target = (uint64_t)(uintptr_t)add_ints;
        memcpy(code + 6, &target, 8);
        memcpy(p, code, sizeof code);
        MPI_Op tramp;
        OK(MPI_Op_create((MPI_User_function *)(void *)p, 1, &tramp));
        OK(MPI_Allreduce(v, r, 1, MPI_INT, tramp, MPI_COMM_WORLD));
        CHECK(r[0] == want, "Allreduce with a run-time function = %d, want %d", r[0], want);
        OK(MPI_Op_free(&tramp));
        munmap(p, 4096);
    }
#endif
    if (keep != MPI_OP_NULL)
        OK(MPI_Op_free(&keep));
    OK(MPI_Op_free(&sum));
    OK(MPI_Op_free(&mx));
    return finish("userop");
}
