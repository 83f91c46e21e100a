// Two ranks each send N small messages to the other with MPI_Send before
// receiving any: a program that relies on the runtime buffering N blocking
// sends. It completes while N is below max(eager_max, size); past it, both
// ranks wait in MPI_Send for a match that never comes, which the deadlock
// detector must report (naming the eager sends) rather than hang.
// Run as eagerh2h N; prints "h2h ok RANK".
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
    int rank, n = argc > 1 ? atoi(argv[1]) : 100, fails = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    for (int i = 0; i < n; i++)
        MPI_Send(&i, 1, MPI_INT, 1 - rank, i, MPI_COMM_WORLD);
    for (int i = 0; i < n; i++) {
        int x = -1;
        MPI_Recv(&x, 1, MPI_INT, 1 - rank, i, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (x != i) {
            printf("message %d: %d\n", i, x);
            fails++;
        }
    }
    MPI_Finalize();
    if (fails == 0)
        printf("h2h ok %d\n", rank);
    return fails != 0;
}
