/* fatal: an invalid rank under the default MPI_ERRORS_ARE_FATAL; what the
 * program printed before is not lost. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, v = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    printf("before the error %d\n", rank);
    if (rank == 1)
        MPI_Send(&v, 1, MPI_INT, 99, 0, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
