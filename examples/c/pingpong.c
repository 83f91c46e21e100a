/* pingpong: the C version of examples/pingpong. Bounces a message between
 * ranks 0 and 1, checks every byte, and reports the round-trip time in
 * milliseconds and in slices. Other ranks idle.
 *
 *   bin/bcscc -O2 -o pingpong examples/c/pingpong.c && bin/bcsrun -n 2 ./pingpong [BYTES [ITERS]]
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int size = argc > 1 ? atoi(argv[1]) : 1024, iters = argc > 2 ? atoi(argv[2]) : 100;
    int rank, nranks;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    if (nranks < 2 || size < 0 || iters < 1) {
        fprintf(stderr, "pingpong needs at least 2 ranks, BYTES >= 0 and ITERS >= 1\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    unsigned char *buf = malloc(size > 0 ? (size_t)size : 1);
    double t0 = MPI_Wtime();
    for (int i = 0; i < iters; i++) {
        if (rank == 0) {
            for (int j = 0; j < size; j++)
                buf[j] = (unsigned char)(i + j);
            MPI_Send(buf, size, MPI_BYTE, 1, i, MPI_COMM_WORLD);
            MPI_Recv(buf, size, MPI_BYTE, 1, i, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            for (int j = 0; j < size; j++)
                if (buf[j] != (unsigned char)(i + j + 1)) {
                    fprintf(stderr, "iteration %d byte %d = %d, want %d\n", i, j, buf[j], (unsigned char)(i + j + 1));
                    MPI_Abort(MPI_COMM_WORLD, 1);
                }
        } else if (rank == 1) {
            MPI_Recv(buf, size, MPI_BYTE, 0, i, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            for (int j = 0; j < size; j++)
                buf[j]++;
            MPI_Send(buf, size, MPI_BYTE, 0, i, MPI_COMM_WORLD);
        }
    }
    if (rank == 0) {
        double rt = (MPI_Wtime() - t0) / iters;
        const char *ns = getenv("BCS_TIMESLICE_NS");
        double slice = ns ? atof(ns) * 1e-9 : 0;
        printf("pingpong: %d iterations of %d bytes: %.3f ms per round trip (%.2f slices of %gus), data verified\n",
               iters, size, rt * 1e3, slice > 0 ? rt / slice : 0, slice * 1e6);
    }
    free(buf);
    MPI_Finalize();
    return 0;
}
