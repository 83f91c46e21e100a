/* putlat: one-sided latency in the shape of OSU's osu_put_latency and
 * osu_get_latency: rank 0 issues an operation to rank 1 and completes it,
 * ITER times per size, in four synchronisation modes:
 *   flush  lock(shared) once; Put; Win_flush            (osu_put_latency -s flush)
 *   lock   Win_lock; Put; Win_unlock                    (-s lock)
 *   fence  Put; Win_fence (both ranks)                  (-s fence)
 *   get    lock once; Get; Win_flush                    (osu_get_latency -s flush)
 *   put_bw, get_bw: 64 operations then one flush        (osu_put_bw, osu_get_bw)
 * and MPI_Send/Recv ping-pong half round trip for comparison. Rank 1 waits
 * in MPI_Barrier while rank 0 works (passive modes), so it is served from
 * inside its blocking call.
 *
 *   bin/bcscc -O2 -o putlat bench/cabi/putlat.c && bin/bcsrun -n 2 [--nodes 2] ./putlat [ITER]
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size, iter = argc > 1 ? atoi(argv[1]) : 100;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2) {
        if (rank == 0)
            fprintf(stderr, "putlat: run with 2 ranks\n");
        MPI_Finalize();
        return 1;
    }
    const int sizes[] = {8, 1024, 65536};
    char *mem, *buf = malloc(65536);
    memset(buf, 1, 65536);
    MPI_Win win;
    MPI_Win_allocate(65536, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win);
    if (rank == 0)
        printf("%-8s %8s %12s\n", "mode", "bytes", "us/op");
    for (int s = 0; s < 3; s++) {
        int n = sizes[s];
        double t0, t;
        /* flush */
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0) {
            MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win);
            t0 = MPI_Wtime();
            for (int i = 0; i < iter; i++) {
                MPI_Put(buf, n, MPI_BYTE, 1, 0, n, MPI_BYTE, win);
                MPI_Win_flush(1, win);
            }
            t = MPI_Wtime() - t0;
            MPI_Win_unlock(1, win);
            printf("%-8s %8d %12.1f\n", "flush", n, t * 1e6 / iter);
        }
        /* lock */
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0) {
            t0 = MPI_Wtime();
            for (int i = 0; i < iter; i++) {
                MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win);
                MPI_Put(buf, n, MPI_BYTE, 1, 0, n, MPI_BYTE, win);
                MPI_Win_unlock(1, win);
            }
            t = MPI_Wtime() - t0;
            printf("%-8s %8d %12.1f\n", "lock", n, t * 1e6 / iter);
        }
        /* fence */
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Win_fence(0, win);
        t0 = MPI_Wtime();
        for (int i = 0; i < iter; i++) {
            if (rank == 0)
                MPI_Put(buf, n, MPI_BYTE, 1, 0, n, MPI_BYTE, win);
            MPI_Win_fence(0, win);
        }
        t = MPI_Wtime() - t0;
        MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
        if (rank == 0)
            printf("%-8s %8d %12.1f\n", "fence", n, t * 1e6 / iter);
        /* get */
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0) {
            MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win);
            t0 = MPI_Wtime();
            for (int i = 0; i < iter; i++) {
                MPI_Get(buf, n, MPI_BYTE, 1, 0, n, MPI_BYTE, win);
                MPI_Win_flush(1, win);
            }
            t = MPI_Wtime() - t0;
            MPI_Win_unlock(1, win);
            printf("%-8s %8d %12.1f\n", "get", n, t * 1e6 / iter);
        }
        /* bandwidth, as osu_put_bw / osu_get_bw: 64 operations, one flush */
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0) {
            for (int get = 0; get < 2; get++) {
                int reps = iter / 10 > 0 ? iter / 10 : 1;
                MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win);
                t0 = MPI_Wtime();
                for (int i = 0; i < reps; i++) {
                    for (int k = 0; k < 64; k++) {
                        if (get)
                            MPI_Get(buf, n, MPI_BYTE, 1, 0, n, MPI_BYTE, win);
                        else
                            MPI_Put(buf, n, MPI_BYTE, 1, 0, n, MPI_BYTE, win);
                    }
                    MPI_Win_flush(1, win);
                }
                t = MPI_Wtime() - t0;
                MPI_Win_unlock(1, win);
                printf("%-8s %8d %12.1f us per 64 ops, %.2f MB/s\n", get ? "get_bw" : "put_bw", n, t * 1e6 / reps,
                       64.0 * n * reps / t / 1e6);
            }
        }
        /* ping-pong, half round trip */
        MPI_Barrier(MPI_COMM_WORLD);
        t0 = MPI_Wtime();
        for (int i = 0; i < iter; i++) {
            if (rank == 0) {
                MPI_Send(buf, n, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
                MPI_Recv(buf, n, MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            } else {
                MPI_Recv(buf, n, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                MPI_Send(buf, n, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
            }
        }
        t = MPI_Wtime() - t0;
        if (rank == 0)
            printf("%-8s %8d %12.1f\n", "sendrecv", n, t * 1e6 / iter / 2);
    }
    MPI_Win_free(&win);
    free(buf);
    MPI_Finalize();
    return 0;
}
