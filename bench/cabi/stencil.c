/*
 * bench/cabi/stencil.c: examples/stencil's -ops mode in C, for the Open MPI
 * comparison of bench/gang (the same program is built with mpicc.openmpi and
 * run under mpirun.openmpi). Each rank owns 4*h doubles of a periodic 1-D
 * domain, computes -ops multiply-adds per iteration (a fixed amount of work,
 * so a rank stopped or preempted does not count the lost time as work), then
 * exchanges h-double halos with both neighbours (Irecv, Irecv, Isend, Isend,
 * Waitall) and applies the 3-point stencil. At the end rank 0 compares the
 * sum with a serial computation and prints the wall time.
 *
 *   mpirun -np 2 ./stencil [-iters N] [-ops N] [-halo BYTES]
 */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static volatile double sink;

static void spin(long n)
{
	double x = 1.0;
	for (long i = 0; i < n; i++)
		x = x * 1.0000001 + 1e-9;
	sink += x;
}

static double serial(int total, int iters)
{
	double *u = malloc(sizeof(double) * total), *nx = malloc(sizeof(double) * total);
	for (int i = 0; i < total; i++)
		u[i] = sin((double)i);
	for (int it = 0; it < iters; it++) {
		for (int i = 0; i < total; i++)
			nx[i] = 0.25 * u[(i + total - 1) % total] + 0.5 * u[i] + 0.25 * u[(i + 1) % total];
		double *t = u;
		u = nx;
		nx = t;
	}
	double s = 0;
	for (int i = 0; i < total; i++)
		s += u[i];
	free(u);
	free(nx);
	return s;
}

int main(int argc, char **argv)
{
	int iters = 100, halo = 4096;
	long ops = 1000000;
	MPI_Init(&argc, &argv);
	for (int i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "-iters"))
			iters = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "-ops"))
			ops = atol(argv[i + 1]);
		else if (!strcmp(argv[i], "-halo"))
			halo = atoi(argv[i + 1]);
		else {
			fprintf(stderr, "stencil: unknown flag %s (valid: -iters, -ops, -halo)\n", argv[i]);
			MPI_Abort(MPI_COMM_WORLD, 2);
		}
	}
	int me, n;
	MPI_Comm_rank(MPI_COMM_WORLD, &me);
	MPI_Comm_size(MPI_COMM_WORLD, &n);
	int h = halo / 8, local = 4 * h;
	double *u = calloc(local + 2 * h, sizeof(double)), *next = calloc(local + 2 * h, sizeof(double));
	for (int i = 0; i < local; i++)
		u[h + i] = sin((double)(me * local + i));
	int left = (me + n - 1) % n, right = (me + 1) % n;
	double t0 = MPI_Wtime();
	for (int it = 0; it < iters; it++) {
		spin(ops);
		MPI_Request rs[4];
		MPI_Irecv(u, h, MPI_DOUBLE, left, 1, MPI_COMM_WORLD, &rs[0]);
		MPI_Irecv(u + h + local, h, MPI_DOUBLE, right, 0, MPI_COMM_WORLD, &rs[1]);
		MPI_Isend(u + h, h, MPI_DOUBLE, left, 0, MPI_COMM_WORLD, &rs[2]);
		MPI_Isend(u + local, h, MPI_DOUBLE, right, 1, MPI_COMM_WORLD, &rs[3]);
		MPI_Waitall(4, rs, MPI_STATUSES_IGNORE);
		for (int i = h; i < h + local; i++)
			next[i] = 0.25 * u[i - 1] + 0.5 * u[i] + 0.25 * u[i + 1];
		double *t = u;
		u = next;
		next = t;
	}
	double wall = MPI_Wtime() - t0, sum = 0, total = 0;
	for (int i = h; i < h + local; i++)
		sum += u[i];
	MPI_Reduce(&sum, &total, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
	if (me == 0) {
		double want = serial(n * local, iters);
		if (fabs(total - want) > 1e-6 * fmax(1, fabs(want))) {
			fprintf(stderr, "stencil: checksum %.12g, serial %.12g\n", total, want);
			MPI_Abort(MPI_COMM_WORLD, 1);
		}
		printf("stencil: %d ranks, %d iterations, %d-byte halos: wall %.3f s, checksum ok\n", n, iters, h * 8, wall);
	}
	MPI_Finalize();
	return 0;
}
