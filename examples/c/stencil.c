/* stencil: the C version of examples/stencil. A 1-D halo-exchange stencil:
 * each rank owns a block of a periodic array, computes (about WORK_MS of
 * arithmetic per iteration, or OPS multiply-adds when OPS > 0: a fixed
 * amount of work, so that a rank stopped or preempted does not count the
 * lost time as work done, as bench/gang needs), then exchanges halos with both neighbours with
 * Isend/Irecv/Waitall. At the end rank 0 checks a checksum against a serial
 * computation and prints timings.
 *
 *   bin/bcscc -O2 -o stencil examples/c/stencil.c -lm && bin/bcsrun -n 4 ./stencil [ITERS [HALO_BYTES [WORK_MS [OPS]]]]
 */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static volatile double sink;

/* busy computes for ms milliseconds of wall-clock time. */
static void busy(double ms) {
    double x = 1.0, t0 = MPI_Wtime();
    while ((MPI_Wtime() - t0) * 1e3 < ms)
        for (int i = 0; i < 1000; i++)
            x = x * 1.0000001 + 1e-9;
    sink += x;
}

/* spin computes n multiply-adds. */
static void spin(long n) {
    double x = 1.0;
    for (long i = 0; i < n; i++)
        x = x * 1.0000001 + 1e-9;
    sink += x;
}

static double serial(int total, int iters) {
    double *u = malloc(sizeof(double) * total), *nx = malloc(sizeof(double) * total), s = 0;
    for (int i = 0; i < total; i++)
        u[i] = sin((double)i);
    for (int it = 0; it < iters; it++) {
        for (int i = 0; i < total; i++)
            nx[i] = 0.25 * u[(i + total - 1) % total] + 0.5 * u[i] + 0.25 * u[(i + 1) % total];
        double *t = u;
        u = nx, nx = t;
    }
    for (int i = 0; i < total; i++)
        s += u[i];
    free(u), free(nx);
    return s;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int iters = argc > 1 ? atoi(argv[1]) : 200, halo = argc > 2 ? atoi(argv[2]) : 64 << 10;
    double work = argc > 3 ? atof(argv[3]) : 1.0;
    long ops = argc > 4 ? atol(argv[4]) : 0;
    int me, n;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    int h = halo / 8, local = 4 * h;
    if (h < 1 || iters < 1) {
        fprintf(stderr, "stencil: want ITERS >= 1 and HALO_BYTES >= 8\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    double *u = calloc(local + 2 * h, sizeof(double)), *next = calloc(local + 2 * h, sizeof(double));
    double *sendL = malloc(sizeof(double) * h), *sendR = malloc(sizeof(double) * h);
    double *recvL = malloc(sizeof(double) * h), *recvR = malloc(sizeof(double) * h);
    for (int i = 0; i < local; i++)
        u[h + i] = sin((double)(me * local + i));
    int left = (me + n - 1) % n, right = (me + 1) % n;

    double comp = 0, comm = 0, t0 = MPI_Wtime();
    for (int it = 0; it < iters; it++) {
        double c0 = MPI_Wtime();
        if (ops > 0)
            spin(ops);
        else
            busy(work);
        comp += MPI_Wtime() - c0;

        double m0 = MPI_Wtime();
        memcpy(sendL, u + h, sizeof(double) * h);
        memcpy(sendR, u + local, sizeof(double) * h);
        MPI_Request rq[4];
        MPI_Irecv(recvL, h, MPI_DOUBLE, left, 1, MPI_COMM_WORLD, &rq[0]);
        MPI_Irecv(recvR, h, MPI_DOUBLE, right, 0, MPI_COMM_WORLD, &rq[1]);
        MPI_Isend(sendL, h, MPI_DOUBLE, left, 0, MPI_COMM_WORLD, &rq[2]);
        MPI_Isend(sendR, h, MPI_DOUBLE, right, 1, MPI_COMM_WORLD, &rq[3]);
        MPI_Waitall(4, rq, MPI_STATUSES_IGNORE);
        comm += MPI_Wtime() - m0;
        memcpy(u, recvL, sizeof(double) * h);
        memcpy(u + h + local, recvR, sizeof(double) * h);
        for (int i = h; i < h + local; i++)
            next[i] = 0.25 * u[i - 1] + 0.5 * u[i] + 0.25 * u[i + 1];
        double *t = u;
        u = next, next = t;
    }
    double wall = MPI_Wtime() - t0;

    double sum = 0, total = 0;
    for (int i = h; i < h + local; i++)
        sum += u[i];
    MPI_Reduce(&sum, &total, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    if (me == 0) {
        double want = serial(n * local, iters);
        if (fabs(total - want) > 1e-6 * fmax(1, fabs(want))) {
            fprintf(stderr, "stencil: checksum %.12g, serial %.12g\n", total, want);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        printf("stencil: %d ranks, %d iterations, %d-byte halos: wall %.3f s (%.3f ms/iter; compute %.3f ms/iter, "
               "communication %.3f ms/iter), checksum ok\n",
               n, iters, h * 8, wall, wall * 1e3 / iters, comp * 1e3 / iters, comm * 1e3 / iters);
    }
    free(u), free(next), free(sendL), free(sendR), free(recvL), free(recvR);
    MPI_Finalize();
    return 0;
}
