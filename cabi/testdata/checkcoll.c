/* checkcoll: writes the receive buffer of a nonblocking collective before the
 * runtime writes it, for BCS_CHECK=buffers: rank 0 posts MPI_Iallgather,
 * writes into the block rank 1 contributes, and only then lets rank 1 post;
 * its MPI_Wait must report the write (the default fatal handler ends the
 * job). Without the check the program runs to the end. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define N (1 << 17) /* doubles per rank: 1 MiB */

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, go = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    double *send = calloc(N, sizeof(double)), *recv = calloc(2 * N, sizeof(double));
    MPI_Request r;
    if (rank == 0) {
        MPI_Iallgather(send, N, MPI_DOUBLE, recv, N, MPI_DOUBLE, MPI_COMM_WORLD, &r);
        recv[N + 3 * 512 + 1] = 42.0; /* byte 1060872: 4 KiB block 259 */
        MPI_Send(&go, 1, MPI_INT, 1, 8, MPI_COMM_WORLD);
    } else {
        MPI_Recv(&go, 1, MPI_INT, 0, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Iallgather(send, N, MPI_DOUBLE, recv, N, MPI_DOUBLE, MPI_COMM_WORLD, &r);
    }
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    printf("not reported %d\n", rank);
    free(send);
    free(recv);
    MPI_Finalize();
    return 0;
}
