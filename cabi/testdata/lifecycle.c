/* lifecycle: a call before MPI_Init ("before") or after MPI_Finalize
 * ("after") is an error under the default MPI_ERRORS_ARE_FATAL. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv) {
    int size = 0;
    if (argc > 1 && strcmp(argv[1], "before") == 0) {
        MPI_Comm_size(MPI_COMM_WORLD, &size);
        printf("not reached\n");
        return 0;
    }
    MPI_Init(&argc, &argv);
    MPI_Finalize();
    MPI_Barrier(MPI_COMM_WORLD);
    printf("not reached\n");
    return 0;
}
