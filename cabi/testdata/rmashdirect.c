/* rmashdirect: Put and Get on a shared window (MPI_Win_allocate_shared),
 * which a member does itself, a copy into or out of the target's segment,
 * once the target's exposure is certain (cabi/doc.go). Each check aborts
 * naming the line; prints "rmashdirect ok <rank>". Run on 2 or more ranks
 * of one node (the window is made over MPI_COMM_TYPE_SHARED's communicator).
 *
 *   counter: every rank increments rank 0's counter ITER times with a
 *     Get, a flush and a Put under an exclusive lock. The increments are
 *     not atomic, so the total is right only if the exclusive lock really
 *     excludes: a copy made before the target granted the lock would lose
 *     increments.
 *   shared:  under lock_all, Put, flush, Get of a strided (vector) layout
 *     to the next rank, repeated (direct after the first flush), and a
 *     Put then Get without a flush between them, ordered by the flush
 *     before the Get's use.
 *   fence, pscw: Put and Get of derived types in fence and
 *     post-start-complete-wait epochs, checked by the target after the
 *     epoch.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ITER 200
#define N 64

static int rank, size;

#define CHECK(c)                                                                        \
    do {                                                                                \
        if (!(c)) {                                                                     \
            fprintf(stderr, "rmashdirect: rank %d: line %d: %s\n", rank, __LINE__, #c); \
            MPI_Abort(MPI_COMM_WORLD, 1);                                               \
        }                                                                               \
    } while (0)

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_rank(node, &rank);
    MPI_Comm_size(node, &size);
    CHECK(size >= 2);
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    int *mem;
    MPI_Win win;
    MPI_Win_allocate_shared(2 * N * sizeof(int), sizeof(int), MPI_INFO_NULL, node, &mem, &win);
    memset(mem, 0, 2 * N * sizeof(int));
    MPI_Barrier(node);

    /* counter */
    for (int i = 0; i < ITER; i++) {
        int v = -1;
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
        MPI_Get(&v, 1, MPI_INT, 0, 0, 1, MPI_INT, win);
        MPI_Win_flush(0, win);
        v++;
        MPI_Put(&v, 1, MPI_INT, 0, 0, 1, MPI_INT, win);
        MPI_Win_flush(0, win); /* the lock is known granted now: the rest may be direct */
        MPI_Get(&v, 1, MPI_INT, 0, 0, 1, MPI_INT, win);
        MPI_Win_flush(0, win);
        CHECK(v >= 1);
        MPI_Win_unlock(0, win);
    }
    MPI_Barrier(node);
    if (rank == 0) {
        MPI_Win_sync(win);
        CHECK(mem[0] == ITER * size);
    }
    MPI_Barrier(node);

    /* shared: a vector of N ints with stride 2 in the next rank's segment */
    MPI_Datatype vec;
    MPI_Type_vector(N, 1, 2, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    int src[N], got[N];
    MPI_Win_lock_all(0, win);
    for (int round = 0; round < 5; round++) {
        for (int i = 0; i < N; i++)
            src[i] = 1000 * rank + 10 * round + i;
        MPI_Put(src, N, MPI_INT, next, 0, 1, vec, win);
        MPI_Win_flush(next, win);
        memset(got, 0, sizeof(got));
        MPI_Get(got, N, MPI_INT, next, 0, 1, vec, win);
        MPI_Win_flush(next, win);
        for (int i = 0; i < N; i++)
            CHECK(got[i] == src[i]);
    }
    MPI_Win_unlock_all(win);
    MPI_Barrier(node);
    MPI_Win_sync(win);
    for (int i = 0; i < N; i++)
        CHECK(mem[2 * i] == 1000 * prev + 40 + i && mem[2 * i + 1] == 0);

    /* fence */
    MPI_Win_fence(0, win);
    for (int i = 0; i < N; i++)
        src[i] = -(1000 * rank + i);
    MPI_Put(src, N, MPI_INT, next, 1, 1, vec, win); /* the odd slots */
    MPI_Win_fence(0, win);
    for (int i = 0; i < N; i++)
        CHECK(mem[2 * i + 1] == -(1000 * prev + i));
    MPI_Get(got, N, MPI_INT, prev, 0, 1, vec, win); /* prev's even slots: written by prev - 1 */
    MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
    for (int i = 0; i < N; i++)
        CHECK(got[i] == 1000 * ((prev + size - 1) % size) + 40 + i);

    /* pscw: everyone posts to prev and starts to next */
    MPI_Group g, gn, gp;
    MPI_Comm_group(node, &g);
    MPI_Group_incl(g, 1, &next, &gn);
    MPI_Group_incl(g, 1, &prev, &gp);
    MPI_Win_post(gp, 0, win);
    MPI_Win_start(gn, 0, win);
    int stamp = 5000 + rank;
    MPI_Put(&stamp, 1, MPI_INT, next, 2 * N - 1, 1, MPI_INT, win);
    MPI_Win_complete(win);
    MPI_Win_wait(win);
    CHECK(mem[2 * N - 1] == 5000 + prev);

    MPI_Group_free(&g);
    MPI_Group_free(&gn);
    MPI_Group_free(&gp);
    MPI_Type_free(&vec);
    MPI_Win_free(&win);
    MPI_Comm_free(&node);
    int wr;
    MPI_Comm_rank(MPI_COMM_WORLD, &wr);
    printf("rmashdirect ok %d\n", wr);
    MPI_Finalize();
    return 0;
}
