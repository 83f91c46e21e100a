/* termhandler: a program that handles SIGTERM itself (installed before
   MPI_Init) and one that ignores it, then raises it: it keeps its own
   disposition under bcsrun, recording or replaying alike. */
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

static volatile sig_atomic_t got;

static void on_term(int sig) { got = sig; }

int main(int argc, char **argv) {
    int ignore = argc > 1 && strcmp(argv[1], "ignore") == 0;
    signal(SIGTERM, ignore ? SIG_IGN : on_term);
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Barrier(MPI_COMM_WORLD);
    raise(SIGTERM);
    printf("rank %d: %s\n", rank, ignore ? "ignored SIGTERM" : got == SIGTERM ? "handled SIGTERM" : "SIGTERM not handled");
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
