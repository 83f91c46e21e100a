/* hello: every rank says who it is; rank 0 adds up the ranks.
 *
 *   bin/bcscc -o hello examples/c/hello.c && bin/bcsrun -n 4 ./hello
 */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size, len, sum = 0;
    char name[MPI_MAX_PROCESSOR_NAME];
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Get_processor_name(name, &len);
    printf("hello from rank %d of %d on %s\n", rank, size, name);
    MPI_Reduce(&rank, &sum, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("sum of ranks = %d (want %d)\n", sum, size * (size - 1) / 2);
    MPI_Finalize();
    return 0;
}
