/* cg: the C version of examples/cg. Solves A x = b by the conjugate
 * gradient method on a vector distributed over the ranks: A is the 1-D
 * Laplacian with a small shift (tridiagonal 2+s, -1), b is all ones. Every
 * iteration does one halo exchange (Isend/Irecv with both neighbours, one
 * Waitall) and two Allreduce calls for the dot products.
 *
 * Rank 0 then repeats the whole solve serially, summing the dot products
 * block by block and then in rank order (the order the runtime's reduction
 * uses), and checks that the residual history is the same bit for bit.
 *
 *   bin/bcscc -O2 -o cg examples/c/cg.c -lm && bin/bcsrun -n 4 ./cg [N [ITERS [TOL [SHIFT]]]]
 */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int n = 20000, max_iter = 400, me, p, left, right;
static double tol = 1e-8, shift = 0.01;

/* block is the range [lo, hi) of rows rank r of np owns. */
static void block(int r, int np, int *lo, int *hi) {
    int q = n / np, rem = n % np;
    *lo = r * q + (r < rem ? r : rem);
    *hi = *lo + q + (r < rem ? 1 : 0);
}

/* local is the dot product of a[lo:hi] and b[lo:hi], summed left to right. */
static double local(const double *a, const double *b, int lo, int hi) {
    double s = 0;
    for (int i = lo; i < hi; i++)
        s += a[i] * b[i];
    return s;
}

static double parallel_dot(const double *a, const double *b, int m) {
    double s = local(a, b, 0, m), out;
    MPI_Allreduce(&s, &out, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    return out;
}

/* serial_dot sums per block, then in rank order, as Allreduce does. */
static double serial_dot(const double *a, const double *b, int m) {
    (void)m;
    double total = 0;
    for (int k = 0; k < p; k++) {
        int lo, hi;
        block(k, p, &lo, &hi);
        double s = local(a, b, lo, hi);
        total = k == 0 ? s : total + s;
    }
    return total;
}

/* halo sends my first interior value of d to the left and my last to the
 * right, both directions in flight at once. */
static void halo(double *d, int m) {
    MPI_Request rs[4];
    MPI_Irecv(d + m + 1, 1, MPI_DOUBLE, right, 1, MPI_COMM_WORLD, &rs[0]);
    MPI_Irecv(d, 1, MPI_DOUBLE, left, 2, MPI_COMM_WORLD, &rs[1]);
    MPI_Isend(d + 1, 1, MPI_DOUBLE, left, 1, MPI_COMM_WORLD, &rs[2]);
    MPI_Isend(d + m, 1, MPI_DOUBLE, right, 2, MPI_COMM_WORLD, &rs[3]);
    MPI_Waitall(4, rs, MPI_STATUSES_IGNORE);
}

static void no_halo(double *d, int m) { (void)d, (void)m; }

/* solve runs CG on m local unknowns (x = 0, b = 1); it fills x and the
 * history of r.r and returns the number of iterations. */
static int solve(int m, double (*dot)(const double *, const double *, int), void (*exchange)(double *, int), double *x,
                 double *history, double *res) {
    double *r = malloc(sizeof(double) * (size_t)m), *q = malloc(sizeof(double) * (size_t)m),
           *d = calloc((size_t)m + 2, sizeof(double));
    for (int i = 0; i < m; i++)
        x[i] = 0, r[i] = 1, d[i + 1] = 1;
    double rr = dot(r, r, m), b2 = rr;
    int iter = 0;
    for (; iter < max_iter && sqrt(rr / b2) > tol; iter++) {
        exchange(d, m);
        for (int i = 0; i < m; i++)
            q[i] = (2 + shift) * d[i + 1] - d[i] - d[i + 2];
        double alpha = rr / dot(d + 1, q, m);
        for (int i = 0; i < m; i++) {
            x[i] += alpha * d[i + 1];
            r[i] -= alpha * q[i];
        }
        double rr_new = dot(r, r, m), beta = rr_new / rr;
        rr = rr_new;
        for (int i = 0; i < m; i++)
            d[i + 1] = r[i] + beta * d[i + 1];
        history[iter] = rr;
    }
    *res = sqrt(rr / b2);
    free(r), free(q), free(d);
    return iter;
}

int main(int argc, char **argv) {
    if (argc > 1)
        n = atoi(argv[1]);
    if (argc > 2)
        max_iter = atoi(argv[2]);
    if (argc > 3)
        tol = atof(argv[3]);
    if (argc > 4)
        shift = atof(argv[4]);
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    if (n < p || max_iter < 0) {
        if (me == 0)
            fprintf(stderr, "cg: N = %d must be at least the number of ranks (%d) and ITERS = %d >= 0\n", n, p, max_iter);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int lo, hi;
    block(me, p, &lo, &hi);
    int m = hi - lo;
    left = me > 0 ? me - 1 : MPI_PROC_NULL;
    right = me < p - 1 ? me + 1 : MPI_PROC_NULL;
    double *x = malloc(sizeof(double) * (size_t)m), *history = malloc(sizeof(double) * (size_t)(max_iter + 1)), res;
    double t0 = MPI_Wtime();
    int iter = solve(m, parallel_dot, halo, x, history, &res);
    double elapsed = MPI_Wtime() - t0;
    double *ones = malloc(sizeof(double) * (size_t)m);
    for (int i = 0; i < m; i++)
        ones[i] = 1;
    double xsum = parallel_dot(x, ones, m);
    if (me == 0) {
        double *xs = malloc(sizeof(double) * (size_t)n), *ref = malloc(sizeof(double) * (size_t)(max_iter + 1)), rres;
        int riter = solve(n, serial_dot, no_halo, xs, ref, &rres);
        int same = riter == iter;
        for (int i = 0; same && i < iter; i++)
            same = memcmp(&ref[i], &history[i], sizeof(double)) == 0;
        printf("cg: %d unknowns on %d ranks: %d iterations in %.0f ms (%.2f ms/iteration, 2 allreduce + 1 halo exchange each), "
               "residual %.3g, sum(x) = %.12g\n",
               n, p, iter, elapsed * 1e3, elapsed * 1e3 / (iter > 0 ? iter : 1), res, xsum);
        if (!same) {
            printf("cg: MISMATCH: the residual history differs from the serial run\n");
            fflush(stdout);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        printf("cg: residual history identical to the serial run, bit for bit\n");
        free(xs), free(ref);
    }
    free(x), free(history), free(ones);
    MPI_Finalize();
    return 0;
}
