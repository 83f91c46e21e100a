/* ssend_deadlock: ranks 0 and 1 each MPI_Ssend to the other before
 * receiving. With standard sends of 4 bytes (buffered) this runs; with
 * synchronous sends it can never complete, and bcsrun must report it. With
 * the argument "standard" it uses MPI_Send (the control). */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int me, x = 1, y;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    int other = 1 - me;
    if (argc > 1 && strcmp(argv[1], "standard") == 0)
        MPI_Send(&x, 1, MPI_INT, other, 0, MPI_COMM_WORLD);
    else
        MPI_Ssend(&x, 1, MPI_INT, other, 0, MPI_COMM_WORLD);
    MPI_Recv(&y, 1, MPI_INT, other, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    printf("ssend_deadlock ok %d\n", me);
    MPI_Finalize();
    return 0;
}
