/* optypes: predefined reductions on long double, the complex types and
 * every pair type (as MPICH's coll/opsum, opprod, opmax, opminloc tests
 * use them); self-checking. */
#include <complex.h>
#include "dt.h"

static void longdouble(void) {
    long double in[3] = {1, 0, rank > 0}, out[3] = {0, 1, 1};
    OK(MPI_Reduce(in, out, 3, MPI_LONG_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD));
    if (rank == 0) CHECK(out[0] == size && out[1] == 0 && out[2] == size - 1, "long double sum %Lg %Lg %Lg", out[0], out[1], out[2]);
    long double v = rank + 1.5L, r;
    OK(MPI_Allreduce(&v, &r, 1, MPI_LONG_DOUBLE, MPI_MAX, MPI_COMM_WORLD));
    CHECK(r == size + 0.5L, "long double max %Lg", r);
    OK(MPI_Allreduce(&v, &r, 1, MPI_LONG_DOUBLE, MPI_MIN, MPI_COMM_WORLD));
    CHECK(r == 1.5L, "long double min %Lg", r);
    v = rank % 2 ? 2 : 1;
    OK(MPI_Allreduce(&v, &r, 1, MPI_LONG_DOUBLE, MPI_PROD, MPI_COMM_WORLD));
    CHECK(r == (long double)(1 << (size / 2)), "long double prod %Lg", r);
    OK(MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_LONG_DOUBLE, MPI_SUM, MPI_COMM_WORLD));
    CHECK(v == size + size / 2, "long double in place %Lg", v);
    long double s = 1, sc;
    OK(MPI_Scan(&s, &sc, 1, MPI_LONG_DOUBLE, MPI_SUM, MPI_COMM_WORLD));
    CHECK(sc == rank + 1, "long double scan %Lg", sc);
    MPI_Request rq;
    OK(MPI_Iallreduce(&s, &sc, 1, MPI_LONG_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &rq));
    OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    CHECK(sc == size, "long double iallreduce %Lg", sc);
    long double a[2] = {1, 2}, b[2] = {3, 4};
    OK(MPI_Reduce_local(a, b, 2, MPI_LONG_DOUBLE, MPI_PROD));
    CHECK(b[0] == 3 && b[1] == 8, "long double reduce_local %Lg %Lg", b[0], b[1]);
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    int rc = MPI_Allreduce(&s, &sc, 1, MPI_LONG_DOUBLE, MPI_BAND, MPI_COMM_WORLD), cls = -1;
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_OP, "MPI_BAND on long double class %d", cls);
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
}

static void complexes(void) {
    double _Complex d[3] = {1 - 1 * I, 0, (rank > 0) - (rank > 0) * I}, dr[3];
    OK(MPI_Reduce(d, dr, 3, MPI_C_DOUBLE_COMPLEX, MPI_SUM, 0, MPI_COMM_WORLD));
    if (rank == 0) CHECK(dr[0] == size - size * I && dr[1] == 0 && dr[2] == (size - 1) - (size - 1) * I, "double complex sum");
    OK(MPI_Allreduce(d, dr, 3, MPI_DOUBLE_COMPLEX, MPI_SUM, MPI_COMM_WORLD));
    CHECK(dr[0] == size - size * I, "fortran double complex sum %g%+gi", creal(dr[0]), cimag(dr[0]));
    float _Complex f = I, fr;
    OK(MPI_Allreduce(&f, &fr, 1, MPI_C_FLOAT_COMPLEX, MPI_PROD, MPI_COMM_WORLD));
    float _Complex e = 1;
    for (int q = 0; q < size; q++) e *= I;
    CHECK(fr == e, "float complex prod %g%+gi", crealf(fr), cimagf(fr));
    OK(MPI_Allreduce(&f, &fr, 1, MPI_C_COMPLEX, MPI_SUM, MPI_COMM_WORLD));
    CHECK(fr == size * I, "c complex sum");
    long double _Complex l = 2 + rank * I, lr;
    OK(MPI_Allreduce(&l, &lr, 1, MPI_C_LONG_DOUBLE_COMPLEX, MPI_SUM, MPI_COMM_WORLD));
    CHECK(lr == 2 * size + (size * (size - 1) / 2) * I, "long double complex sum");
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    int rc = MPI_Allreduce(&f, &fr, 1, MPI_C_FLOAT_COMPLEX, MPI_MAX, MPI_COMM_WORLD), cls = -1;
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_OP, "MPI_MAX on complex class %d", cls);
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
}

static void pairs(void) {
    struct { long double v; int i; } ld = {rank % 3, rank}, ldr;
    OK(MPI_Allreduce(&ld, &ldr, 1, MPI_LONG_DOUBLE_INT, MPI_MAXLOC, MPI_COMM_WORLD));
    int mx = size > 2 ? 2 : size - 1;
    CHECK(ldr.v == mx && ldr.i == mx, "long double int maxloc %Lg %d", ldr.v, ldr.i);
    OK(MPI_Allreduce(&ld, &ldr, 1, MPI_LONG_DOUBLE_INT, MPI_MINLOC, MPI_COMM_WORLD));
    CHECK(ldr.v == 0 && ldr.i == 0, "long double int minloc %Lg %d", ldr.v, ldr.i);
    struct { short v; int i; } sh[2] = {{-(rank % 2), rank}, {rank, rank}}, shr[2];
    OK(MPI_Allreduce(sh, shr, 2, MPI_SHORT_INT, MPI_MINLOC, MPI_COMM_WORLD));
    CHECK(shr[0].v == (size > 1 ? -1 : 0) && shr[0].i == (size > 1 ? 1 : 0) && shr[1].v == 0 && shr[1].i == 0, "short int minloc");
    OK(MPI_Allreduce(sh, shr, 2, MPI_SHORT_INT, MPI_MAXLOC, MPI_COMM_WORLD));
    CHECK(shr[0].v == 0 && shr[0].i == 0 && shr[1].v == size - 1 && shr[1].i == size - 1, "short int maxloc");
    float ff[2] = {rank % 2, rank}, ffr[2];
    OK(MPI_Allreduce(ff, ffr, 1, MPI_2REAL, MPI_MAXLOC, MPI_COMM_WORLD));
    CHECK(ffr[0] == (size > 1) && ffr[1] == (size > 1), "2real maxloc %g %g", ffr[0], ffr[1]);
    double dd[2] = {-rank, rank}, ddr[2];
    OK(MPI_Allreduce(dd, ddr, 1, MPI_2DOUBLE_PRECISION, MPI_MINLOC, MPI_COMM_WORLD));
    CHECK(ddr[0] == -(size - 1) && ddr[1] == size - 1, "2double minloc %g %g", ddr[0], ddr[1]);
    int ii[2] = {5, size - rank}, iir[2];
    OK(MPI_Allreduce(ii, iir, 1, MPI_2INTEGER, MPI_MINLOC, MPI_COMM_WORLD));
    CHECK(iir[0] == 5 && iir[1] == 1, "2integer minloc %d %d", iir[0], iir[1]);
    struct { long v; int i; } lv = {rank / 2, rank}, lvr;
    OK(MPI_Allreduce(&lv, &lvr, 1, MPI_LONG_INT, MPI_MAXLOC, MPI_COMM_WORLD));
    CHECK(lvr.v == (size - 1) / 2 && lvr.i == ((size - 1) / 2) * 2, "long int maxloc tie %ld %d", lvr.v, lvr.i);
}

int main(int argc, char **argv) {
    start(&argc, &argv);
    longdouble();
    complexes();
    pairs();
    return finish("optypes");
}
