/* callcost: what a call into bcsmpi's C ABI costs, in ns per call, for calls
 * the C shim serves itself and for calls that cross into Go.
 *
 *   bin/bcscc -O2 -o callcost bench/cabi/callcost.c && bin/bcsrun -n 1 ./callcost [N [multiple]]
 *
 * With "multiple" the program asks for MPI_THREAD_MULTIPLE (one thread
 * still makes every call): the cost of the call lock (cabi/doc.go, "Threads").
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}

#define MEASURE(label, call)                                      \
    do {                                                          \
        double t0 = now();                                        \
        for (long i = 0; i < n; i++) {                            \
            call;                                                 \
        }                                                         \
        printf("%-48s %8.1f ns/call\n", label, (now() - t0) * 1e9 / n); \
    } while (0)

int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 1000000;
    int provided;
    if (argc > 2 && strcmp(argv[2], "multiple") == 0) {
        MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
        printf("MPI_THREAD_MULTIPLE provided: %s\n", provided == MPI_THREAD_MULTIPLE ? "yes" : "no");
    } else
        MPI_Init(&argc, &argv);
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    int r, s, v = 0;
    volatile double w;
    MEASURE("MPI_Comm_rank(MPI_COMM_WORLD)  [C]", MPI_Comm_rank(MPI_COMM_WORLD, &r));
    MEASURE("MPI_Wtime()  [C]", w = MPI_Wtime());
    MEASURE("MPI_Type_size(MPI_DOUBLE)  [C]", MPI_Type_size(MPI_DOUBLE, &s));
    MEASURE("MPI_Comm_rank(dup of world)  [C -> Go]", MPI_Comm_rank(dup, &r));
    MEASURE("MPI_Send(1 int, MPI_PROC_NULL)  [C -> Go -> mpiapi]", MPI_Send(&v, 1, MPI_INT, MPI_PROC_NULL, 0, dup));
    (void)w;
    MPI_Comm_free(&dup);
    MPI_Finalize();
    return 0;
}
