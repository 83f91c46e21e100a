/* lifecycle: a call before MPI_Init ("before") or after MPI_Finalize
 * ("after") is an error under the default MPI_ERRORS_ARE_FATAL, whatever
 * its arguments: the datatype queries on a predefined type ("before-size"),
 * with a NULL output argument ("before-null", "after-null"). */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv) {
    int size = 0, i;
    MPI_Aint a;
    const char *what = argc > 1 ? argv[1] : "";
    if (strcmp(what, "before") == 0) {
        MPI_Comm_size(MPI_COMM_WORLD, &size);
        printf("not reached\n");
        return 0;
    }
    if (strcmp(what, "before-size") == 0) {
        MPI_Type_get_extent(MPI_INT, &a, &a);
        printf("not reached\n");
        return 0;
    }
    if (strcmp(what, "before-null") == 0) {
        MPI_Type_size_c(MPI_INT, NULL);
        printf("not reached\n");
        return 0;
    }
    MPI_Init(&argc, &argv);
    MPI_Finalize();
    if (strcmp(what, "after-null") == 0)
        MPI_Type_get_envelope(MPI_INT, NULL, &i, &i, &i);
    else
        MPI_Barrier(MPI_COMM_WORLD);
    printf("not reached\n");
    return 0;
}
