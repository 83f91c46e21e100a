/* rmaslices: the synchronisation cost of one-sided operations, in time
 * slices. Rank 0 repeats one pattern ITER times against rank 1 (or, for
 * "self", against itself); the other ranks wait in MPI_Barrier meanwhile,
 * so they are served from inside it. The slices a pattern takes are the
 * difference of the job's slice counts (bcsrun -v, or the manifest's
 * "slices" under BCS_MDS) between ITER and 2*ITER, divided by ITER: a
 * count, not a time, so a loaded machine changes it little.
 *
 *   put      lock_all once; Put; Win_flush
 *   get      lock_all once; Get; Win_flush
 *   acc      lock_all once; Accumulate; Win_flush
 *   fop      lock_all once; Fetch_and_op; Win_flush
 *   cas      lock_all once; Compare_and_swap; Win_flush
 *   putlocal lock_all once; Put; Win_flush_local
 *   lockx    Win_lock(exclusive); Put; Win_unlock
 *   locks    Win_lock(shared); Put; Win_unlock
 *   lockonly Win_lock(exclusive); Win_unlock
 *   xacc     Win_lock(exclusive) once; Accumulate; Win_flush
 *   xfop     Win_lock(exclusive) once; Fetch_and_op; Win_flush
 *   xcas     Win_lock(exclusive) once; Compare_and_swap; Win_flush
 *   lockall  Win_lock_all; Win_unlock_all
 *   fence    Win_fence; Put; Win_fence (every rank: the fence is collective)
 *   self     lock_all once; Put to the caller's own rank; Win_flush
 *   shmput   the put pattern on an MPI_Win_allocate_shared window
 *   shmfop   the fop pattern on an MPI_Win_allocate_shared window
 *   shmsync  a store into rank 1's shared segment; MPI_Win_sync
 *   pingpong MPI_Send to rank 1 and MPI_Recv of its reply (no window use):
 *            the two-sided round trip, for comparison
 *
 *   bin/bcscc -O2 -o rmaslices bench/cabi/rmaslices.c
 *   for k in 200 400; do bin/bcsrun -v -n 2 ./rmaslices put $k; done
 *   (bench/cabi/rmaslices.sh runs every pattern so and prints slices per iteration)
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc != 3 || size < 2) {
        if (rank == 0)
            fprintf(stderr, "usage: bcsrun -n 2 rmaslices PATTERN ITER\n");
        MPI_Finalize();
        return 2;
    }
    const char *p = argv[1];
    int iter = atoi(argv[2]);
    int shm = strncmp(p, "shm", 3) == 0;
    int *mem;
    MPI_Win win;
    if (shm)
        MPI_Win_allocate_shared(64 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win);
    else
        MPI_Win_allocate(64 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win);
    memset(mem, 0, 64 * sizeof(int));
    MPI_Barrier(MPI_COMM_WORLD);
    if (shm)
        p += 3;
    int v = 1, r = 0, c = 0, t = strcmp(p, "self") == 0 ? 0 : 1;
    if (strcmp(p, "pingpong") == 0) {
        for (int i = 0; i < iter && rank < 2; i++) {
            if (rank == 0) {
                MPI_Send(&v, 1, MPI_INT, 1, 0, MPI_COMM_WORLD);
                MPI_Recv(&r, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            } else {
                MPI_Recv(&r, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                MPI_Send(&v, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
            }
        }
    } else if (strcmp(p, "fence") == 0) {
        for (int i = 0; i < iter; i++) {
            MPI_Win_fence(0, win);
            if (rank == 0)
                MPI_Put(&v, 1, MPI_INT, 1, 0, 1, MPI_INT, win);
            MPI_Win_fence(0, win);
        }
    } else if (rank == 0) {
        int lockall = strncmp(p, "lock", 4) != 0 && p[0] != 'x';
        if (lockall)
            MPI_Win_lock_all(0, win);
        else if (p[0] == 'x')
            MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t, 0, win);
        int *peer = NULL;
        if (strcmp(p, "sync") == 0) {
            MPI_Aint sz;
            int du;
            MPI_Win_shared_query(win, 1, &sz, &du, &peer);
        }
        for (int i = 0; i < iter; i++) {
            if (strcmp(p, "put") == 0 || strcmp(p, "self") == 0) {
                MPI_Put(&v, 1, MPI_INT, t, 0, 1, MPI_INT, win);
                MPI_Win_flush(t, win);
            } else if (strcmp(p, "get") == 0) {
                MPI_Get(&r, 1, MPI_INT, t, 0, 1, MPI_INT, win);
                MPI_Win_flush(t, win);
            } else if (strcmp(p, "acc") == 0 || strcmp(p, "xacc") == 0) {
                MPI_Accumulate(&v, 1, MPI_INT, t, 0, 1, MPI_INT, MPI_SUM, win);
                MPI_Win_flush(t, win);
            } else if (strcmp(p, "fop") == 0 || strcmp(p, "xfop") == 0) {
                MPI_Fetch_and_op(&v, &r, MPI_INT, t, 0, MPI_SUM, win);
                MPI_Win_flush(t, win);
            } else if (strcmp(p, "cas") == 0 || strcmp(p, "xcas") == 0) {
                MPI_Compare_and_swap(&v, &c, &r, MPI_INT, t, 0, win);
                MPI_Win_flush(t, win);
            } else if (strcmp(p, "putlocal") == 0) {
                MPI_Put(&v, 1, MPI_INT, t, 0, 1, MPI_INT, win);
                MPI_Win_flush_local(t, win);
            } else if (strcmp(p, "lockx") == 0 || strcmp(p, "locks") == 0) {
                MPI_Win_lock(p[4] == 'x' ? MPI_LOCK_EXCLUSIVE : MPI_LOCK_SHARED, t, 0, win);
                MPI_Put(&v, 1, MPI_INT, t, 0, 1, MPI_INT, win);
                MPI_Win_unlock(t, win);
            } else if (strcmp(p, "lockall") == 0) {
                MPI_Win_lock_all(0, win);
                MPI_Win_unlock_all(win);
            } else if (strcmp(p, "lockonly") == 0) {
                MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t, 0, win);
                MPI_Win_unlock(t, win);
            } else if (strcmp(p, "sync") == 0) {
                peer[i % 64] = i;
                MPI_Win_sync(win);
            } else {
                fprintf(stderr, "rmaslices: unknown pattern %s\n", argv[1]);
                MPI_Abort(MPI_COMM_WORLD, 2);
            }
        }
        if (lockall)
            MPI_Win_unlock_all(win);
        else if (p[0] == 'x')
            MPI_Win_unlock(t, win);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_free(&win);
    MPI_Finalize();
    return 0;
}
