/* putbw: one-sided put bandwidth for long transfers, as osu_put_bw: rank 0
 * locks rank 1's window once and issues BURST puts of SIZE bytes (all to
 * offset 0), then MPI_Win_flush, REPS times per (size, burst). Rank 1 waits
 * in MPI_Barrier meanwhile (it is served from inside it). Prints MB/s per
 * size and burst, and MPI_Send/MPI_Recv of the same sizes for comparison.
 *
 *   go build -o bin/ ./cmd/... && bin/bcscc -O2 -o putbw bench/cabi/putbw.c
 *   bin/bcsrun -n 2 ./putbw [REPS]            (and with --nodes 2)
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size, reps = argc > 1 ? atoi(argv[1]) : 10;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2) {
        if (rank == 0)
            fprintf(stderr, "putbw: run with 2 ranks\n");
        MPI_Finalize();
        return 1;
    }
    const int sizes[] = {4096, 65536, 1 << 20, 4 << 20}, bursts[] = {1, 16, 64};
    const int maxn = 4 << 20;
    char *mem, *buf = malloc(maxn);
    memset(buf, 1, maxn);
    MPI_Win win;
    MPI_Win_allocate(maxn, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win);
    if (rank == 0)
        printf("%-10s %9s %6s %12s %10s\n", "op", "bytes", "burst", "us/burst", "MB/s");
    for (int s = 0; s < 4; s++) {
        int n = sizes[s];
        for (int b = 0; b < 3; b++) {
            MPI_Barrier(MPI_COMM_WORLD);
            if (rank == 0) {
                MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win);
                MPI_Put(buf, n, MPI_BYTE, 1, 0, n, MPI_BYTE, win); /* warm-up */
                MPI_Win_flush(1, win);
                double t0 = MPI_Wtime();
                for (int r = 0; r < reps; r++) {
                    for (int k = 0; k < bursts[b]; k++)
                        MPI_Put(buf, n, MPI_BYTE, 1, 0, n, MPI_BYTE, win);
                    MPI_Win_flush(1, win);
                }
                double t = MPI_Wtime() - t0;
                MPI_Win_unlock(1, win);
                printf("%-10s %9d %6d %12.1f %10.1f\n", "put", n, bursts[b], t * 1e6 / reps,
                       (double)n * bursts[b] * reps / t / 1e6);
            }
        }
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        for (int r = 0; r < reps; r++) {
            if (rank == 0)
                MPI_Send(buf, n, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
            else
                MPI_Recv(buf, n, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        double t = MPI_Wtime() - t0;
        if (rank == 0)
            printf("%-10s %9d %6d %12.1f %10.1f\n", "send/recv", n, 1, t * 1e6 / reps, (double)n * reps / t / 1e6);
    }
    MPI_Win_free(&win);
    free(buf);
    MPI_Finalize();
    return 0;
}
