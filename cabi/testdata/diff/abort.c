/* abort: MPI_Abort(comm, code) from one rank ends the job with code as the
 * exit status, while the others wait in a receive (argv[1] picks the
 * aborting rank, argv[2] the code, argv[3] "self" aborts on
 * MPI_COMM_SELF). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int who = argc > 1 ? atoi(argv[1]) : 0, code = argc > 2 ? atoi(argv[2]) : 1;
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == who % size) {
        printf("aborting %d\n", rank);
        fflush(stdout);
        MPI_Abort(argc > 3 && !strcmp(argv[3], "self") ? MPI_COMM_SELF : MPI_COMM_WORLD, code);
    }
    int x;
    MPI_Recv(&x, 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    printf("not reached\n");
    MPI_Finalize();
    return 0;
}
