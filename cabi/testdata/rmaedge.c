/* rmaedge: one-sided corner cases, each a regression for a defect found by
 * running a conformance suite against bcsmpi. Every section checks its
 * results and aborts naming the line on a mismatch. Prints
 * "rmaedge ok <rank>". Needs 2 or more ranks. argv[1], when given, names
 * the one section to run.
 *
 *   zero:  operations that move nothing (zero counts; datatypes of no
 *          bytes; zero-size origin against a differently typed target)
 *          succeed under MPI_ERRORS_ARE_FATAL, in every form.
 *   ctypes: accumulates on the predefined types with no Go element type
 *          (long double, float/double/long double complex, long double-int
 *          pairs), plain and derived, to others and to self: Accumulate,
 *          Get_accumulate, Fetch_and_op; an operation the standard does not
 *          define on them is MPI_ERR_OP.
 *   many:  300 windows live at once (each holds header receives; they
 *          used to exhaust the rank's request slots at 128 windows on 2
 *          ranks, 16 on 9 or more), each still working.
 *   flood: every rank but 0 issues 20000 Gets of 64 KiB from rank 0 in one
 *          fence epoch, then in one lock_all epoch: each result holds a
 *          request slot until it arrives, and a burst larger than the
 *          rank's 4096 slots used to fail with MPI_ERR_REQUEST (named as
 *          MPI_Irecv).
 *   putflood: every rank but 0 takes a shared lock on rank 0, which is in
 *          sleep(), and issues 20000 Puts of 2 KiB, 20000 Accumulates from a
 *          strided (vector) origin type and 20000 Rputs: each message over
 *          the inline size holds a request slot until the target takes it,
 *          and those used to fail at op 4095 with MPI_ERR_REQUEST.
 *   slots: (run alone) MPI_Win_create with too few request slots left for
 *          its header receives fails with MPI_ERR_REQUEST on every rank and
 *          leaves nothing behind (it used to leave a live window and its
 *          communicator, reported at MPI_Finalize, and its receives'
 *          budget); a window made afterwards works. */
#include <complex.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int rank, size;

#define CHECK(cond, ...)                                                  \
    do {                                                                  \
        if (!(cond)) {                                                    \
            printf("FAIL rank %d line %d: %s: ", rank, __LINE__, #cond); \
            printf(__VA_ARGS__);                                          \
            printf("\n");                                                 \
            fflush(stdout);                                               \
            MPI_Abort(MPI_COMM_WORLD, 3);                                 \
        }                                                                 \
    } while (0)

#define OK(call) CHECK((call) == MPI_SUCCESS, "%s", #call)

static void zero(void) {
    int wbuf[8], obuf[8], rbuf[8];
    MPI_Datatype empty, types[4];
    MPI_Win win;
    MPI_Request req;
    for (int i = 0; i < 8; i++)
        wbuf[i] = 100 + rank, obuf[i] = -1, rbuf[i] = -2;
    OK(MPI_Type_contiguous(0, MPI_INT, &empty));
    OK(MPI_Type_commit(&empty));
    types[0] = empty, types[1] = MPI_INT, types[2] = MPI_DOUBLE, types[3] = MPI_SHORT;
    OK(MPI_Win_create(wbuf, sizeof wbuf, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    OK(MPI_Win_fence(0, win));
    int t = (rank + 1) % size;
    for (int a = 0; a < 4; a++)
        for (int b = 0; b < 4; b++) {
            /* zero counts of any types; count 1 of the empty type against count 0 */
            int oc = a == 0 ? 1 : 0, tc = b == 0 ? 2 : 0;
            OK(MPI_Put(obuf, oc, types[a], t, 0, tc, types[b], win));
            OK(MPI_Get(obuf, oc, types[a], t, 0, tc, types[b], win));
            OK(MPI_Accumulate(obuf, oc, types[a], t, 0, tc, types[b], MPI_SUM, win));
            OK(MPI_Accumulate(NULL, 0, types[a], t, 0, tc, types[b], MPI_PROD, win));
            OK(MPI_Get_accumulate(obuf, oc, types[a], rbuf, 0, types[(a + b) % 4], t, 0, tc, types[b], MPI_SUM, win));
            OK(MPI_Get_accumulate(NULL, 0, types[a], NULL, 0, types[b], t, 0, 0, types[(a + 1) % 4], MPI_MAX, win));
            OK(MPI_Rput(obuf, oc, types[a], t, 0, tc, types[b], win, &req));
            OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
            OK(MPI_Rget(obuf, oc, types[a], t, 0, tc, types[b], win, &req));
            OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
            OK(MPI_Raccumulate(obuf, oc, types[a], t, 0, tc, types[b], MPI_BXOR, win, &req));
            OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
            OK(MPI_Rget_accumulate(obuf, oc, types[a], rbuf, 0, types[b], t, 0, tc, types[b], MPI_MIN, win, &req));
            OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
        }
    OK(MPI_Win_fence(0, win));
    for (int i = 0; i < 8; i++) {
        CHECK(wbuf[i] == 100 + rank, "wbuf[%d] = %d, want %d (nothing written)", i, wbuf[i], 100 + rank);
        CHECK(obuf[i] == -1 && rbuf[i] == -2, "origin/result [%d] = %d/%d changed", i, obuf[i], rbuf[i]);
    }
    OK(MPI_Win_free(&win));
    OK(MPI_Type_free(&empty));
}

typedef struct { long double v; int i; } ldi;

static void ctypes(void) {
    enum { K = 4 };
    long double ld[K], ldres[K], ldo[K];
    double _Complex dc[K], dco[K];
    float _Complex fc[K], fco[K];
    long double _Complex lc[K], lco[K];
    ldi pr[1], pro;
    MPI_Win wld, wdc, wfc, wlc, wpr;
    MPI_Datatype ld2;
    OK(MPI_Type_contiguous(2, MPI_LONG_DOUBLE, &ld2));
    OK(MPI_Type_commit(&ld2));
    for (int i = 0; i < K; i++)
        ld[i] = 1.0L, dc[i] = 1.0, fc[i] = 1.0f, lc[i] = 1.0L;
    pr[0].v = -1.0L, pr[0].i = -1;
    OK(MPI_Win_create(ld, sizeof ld, sizeof(long double), MPI_INFO_NULL, MPI_COMM_WORLD, &wld));
    OK(MPI_Win_create(dc, sizeof dc, sizeof(double _Complex), MPI_INFO_NULL, MPI_COMM_WORLD, &wdc));
    OK(MPI_Win_create(fc, sizeof fc, sizeof(float _Complex), MPI_INFO_NULL, MPI_COMM_WORLD, &wfc));
    OK(MPI_Win_create(lc, sizeof lc, sizeof(long double _Complex), MPI_INFO_NULL, MPI_COMM_WORLD, &wlc));
    OK(MPI_Win_create(pr, sizeof pr, sizeof(ldi), MPI_INFO_NULL, MPI_COMM_WORLD, &wpr));
    /* Every rank adds r+1 to every element of every rank's windows (long
     * double: slots 0-1 as MPI_LONG_DOUBLE, 2-3 through the derived type),
     * multiplies the complex ones by i, and offers (r, r) to MAXLOC. */
    for (int i = 0; i < K; i++)
        ldo[i] = rank + 1.0L, dco[i] = I, fco[i] = I, lco[i] = I;
    pro.v = rank, pro.i = rank;
    OK(MPI_Win_fence(0, wld));
    OK(MPI_Win_fence(0, wdc));
    OK(MPI_Win_fence(0, wfc));
    OK(MPI_Win_fence(0, wlc));
    OK(MPI_Win_fence(0, wpr));
    for (int t = 0; t < size; t++) {
        OK(MPI_Accumulate(ldo, 2, MPI_LONG_DOUBLE, t, 0, 2, MPI_LONG_DOUBLE, MPI_SUM, wld));
        OK(MPI_Accumulate(ldo, 1, ld2, t, 2, 1, ld2, MPI_SUM, wld));
        OK(MPI_Accumulate(dco, K, MPI_C_DOUBLE_COMPLEX, t, 0, K, MPI_C_DOUBLE_COMPLEX, MPI_PROD, wdc));
        OK(MPI_Accumulate(fco, K, MPI_C_FLOAT_COMPLEX, t, 0, K, MPI_C_FLOAT_COMPLEX, MPI_PROD, wfc));
        OK(MPI_Accumulate(lco, K, MPI_C_LONG_DOUBLE_COMPLEX, t, 0, K, MPI_C_LONG_DOUBLE_COMPLEX, MPI_SUM, wlc));
        OK(MPI_Accumulate(&pro, 1, MPI_LONG_DOUBLE_INT, t, 0, 1, MPI_LONG_DOUBLE_INT, MPI_MAXLOC, wpr));
    }
    OK(MPI_Win_fence(0, wld));
    OK(MPI_Win_fence(0, wdc));
    OK(MPI_Win_fence(0, wfc));
    OK(MPI_Win_fence(0, wlc));
    OK(MPI_Win_fence(0, wpr));
    long double sum = 1.0L + size * (size + 1) / 2.0L;
    /* i^size: 1, i, -1, -i */
    double _Complex ip = 1.0;
    for (int k = 0; k < size; k++)
        ip *= I;
    for (int i = 0; i < K; i++) {
        CHECK(ld[i] == sum, "long double [%d] = %Lg, want %Lg", i, ld[i], sum);
        CHECK(dc[i] == ip, "double complex [%d] = %g%+gi, want %g%+gi", i, creal(dc[i]), cimag(dc[i]), creal(ip), cimag(ip));
        CHECK(fc[i] == (float _Complex)ip, "float complex [%d] = %g%+gi", i, crealf(fc[i]), cimagf(fc[i]));
        CHECK(lc[i] == 1.0L + size * I, "long double complex [%d] = %Lg%+Lgi", i, creall(lc[i]), cimagl(lc[i]));
    }
    CHECK(pr[0].v == size - 1 && pr[0].i == size - 1, "MAXLOC pair = (%Lg, %d), want (%d, %d)", pr[0].v, pr[0].i, size - 1, size - 1);
    /* Passive target: Fetch_and_op and Get_accumulate on long double fetch
     * the value before and leave the sum; the last rank to go sees all. */
    OK(MPI_Barrier(MPI_COMM_WORLD));
    long double one = 1.0L, before = -1.0L;
    for (int t = 0; t < size; t++) {
        OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t, 0, wld));
        OK(MPI_Fetch_and_op(&one, &before, MPI_LONG_DOUBLE, t, 0, MPI_SUM, wld));
        OK(MPI_Get_accumulate(ldo, 1, ld2, ldres, 2, MPI_LONG_DOUBLE, t, 1, 1, ld2, MPI_MAX, wld));
        OK(MPI_Win_unlock(t, wld));
        CHECK(before >= sum && before < sum + size, "fetched %Lg, want %Lg..%Lg", before, sum, sum + size - 1);
        CHECK(ldres[0] == sum, "Get_accumulate fetched %Lg, want %Lg", ldres[0], sum);
    }
    OK(MPI_Barrier(MPI_COMM_WORLD));
    CHECK(ld[0] == sum + size, "after Fetch_and_op: %Lg, want %Lg", ld[0], sum + size);
    /* Operations the standard does not define on these types. */
    OK(MPI_Win_set_errhandler(wdc, MPI_ERRORS_RETURN));
    OK(MPI_Win_lock(MPI_LOCK_SHARED, (rank + 1) % size, 0, wdc));
    int rc = MPI_Accumulate(dco, 1, MPI_C_DOUBLE_COMPLEX, (rank + 1) % size, 0, 1, MPI_C_DOUBLE_COMPLEX, MPI_MAX, wdc), cls;
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_OP, "MPI_MAX on MPI_C_DOUBLE_COMPLEX: class %d, want MPI_ERR_OP", cls);
    rc = MPI_Accumulate(dco, 1, MPI_C_DOUBLE_COMPLEX, (rank + 1) % size, 0, 2, MPI_FLOAT, MPI_SUM, wdc);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_TYPE, "double complex against 2 floats: class %d, want MPI_ERR_TYPE", cls);
    OK(MPI_Win_unlock((rank + 1) % size, wdc));
    OK(MPI_Win_free(&wld));
    OK(MPI_Win_free(&wdc));
    OK(MPI_Win_free(&wfc));
    OK(MPI_Win_free(&wlc));
    OK(MPI_Win_free(&wpr));
    OK(MPI_Type_free(&ld2));
}

static void many(void) {
    enum { NW = 300 };
    static MPI_Win w[NW];
    static int buf[NW];
    for (int i = 0; i < NW; i++) {
        buf[i] = -1;
        OK(MPI_Win_create(&buf[i], sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &w[i]));
    }
    /* Each rank writes i*size+rank into window i of its right neighbour,
     * oldest and newest windows alike. */
    int t = (rank + 1) % size, from = (rank + size - 1) % size;
    for (int i = 0; i < NW; i += 13) {
        int v = i * size + rank;
        OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t, 0, w[i]));
        OK(MPI_Put(&v, 1, MPI_INT, t, 0, 1, MPI_INT, w[i]));
        OK(MPI_Win_unlock(t, w[i]));
    }
    OK(MPI_Barrier(MPI_COMM_WORLD));
    for (int i = 0; i < NW; i++) {
        int want = i % 13 == 0 ? i * size + from : -1;
        CHECK(buf[i] == want, "window %d holds %d, want %d", i, buf[i], want);
    }
    for (int i = NW - 1; i >= 0; i--)
        OK(MPI_Win_free(&w[i]));
}

static void flood(void) {
    enum { NG = 20000, NI = 16384 };
    int *wbuf = malloc(NI * sizeof(int)), *res = malloc(NI * sizeof(int));
    MPI_Win win;
    for (int i = 0; i < NI; i++)
        wbuf[i] = rank * 1000003 + i, res[i] = -1;
    OK(MPI_Win_create(wbuf, NI * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    /* Rank 0 is the target of everyone else and serves only from inside
     * MPI_Win_fence and MPI_Barrier, so results pile up at the origins.
     * Every Get reads the same target bytes into the same result buffer:
     * whatever order they land in, the result is the target's pattern. */
    const int t = 0;
    OK(MPI_Win_fence(0, win));
    for (int i = 0; rank != t && i < NG; i++)
        OK(MPI_Get(res, NI, MPI_INT, t, 0, NI, MPI_INT, win));
    OK(MPI_Win_fence(0, win));
    for (int i = 0; rank != t && i < NI; i++)
        CHECK(res[i] == i, "fence: res[%d] = %d, want %d", i, res[i], i);
    for (int i = 0; i < NI; i++)
        res[i] = -1;
    if (rank != t) {
        OK(MPI_Win_lock_all(0, win));
        for (int i = 0; i < NG; i++)
            OK(MPI_Get(res, NI, MPI_INT, t, 0, NI, MPI_INT, win));
        OK(MPI_Win_unlock_all(win));
        for (int i = 0; i < NI; i++)
            CHECK(res[i] == i, "lock_all: res[%d] = %d, want %d", i, res[i], i);
    }
    OK(MPI_Barrier(MPI_COMM_WORLD));
    OK(MPI_Win_free(&win));
    free(wbuf);
    free(res);
}

static void putflood(void) {
    enum { NP = 20000, NI = 512 };
    int n = (size - 1) * 2 * NI;
    int *wbuf = malloc(n * sizeof(int)), *src = malloc(2 * NI * sizeof(int));
    MPI_Datatype vec;
    MPI_Win win;
    MPI_Request req;
    for (int i = 0; i < n; i++)
        wbuf[i] = 0;
    for (int i = 0; i < 2 * NI; i++)
        src[i] = i % 2 == 0 ? 1 : -7; /* vec takes the even ones */
    OK(MPI_Type_vector(NI, 1, 2, MPI_INT, &vec));
    OK(MPI_Type_commit(&vec));
    OK(MPI_Win_create(wbuf, n * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    /* origin r owns [put region, accumulate region] at (r-1)*2*NI */
    const int t = 0;
    if (rank == t) {
        sleep(2); /* a passive target: out of MPI while the origins flood it */
    } else {
        int *pv = malloc(NI * sizeof(int));
        MPI_Aint base = (MPI_Aint)(rank - 1) * 2 * NI;
        for (int i = 0; i < NI; i++)
            pv[i] = rank * 100000 + i;
        OK(MPI_Win_lock(MPI_LOCK_SHARED, t, 0, win));
        for (int i = 0; i < NP; i++)
            CHECK(MPI_Put(pv, NI, MPI_INT, t, base, NI, MPI_INT, win) == MPI_SUCCESS, "MPI_Put %d failed", i);
        for (int i = 0; i < NP; i++)
            CHECK(MPI_Accumulate(src, 1, vec, t, base + NI, NI, MPI_INT, MPI_SUM, win) == MPI_SUCCESS,
                  "MPI_Accumulate %d failed", i);
        for (int i = 0; i < NP; i++) {
            CHECK(MPI_Rput(pv, NI, MPI_INT, t, base, NI, MPI_INT, win, &req) == MPI_SUCCESS, "MPI_Rput %d failed", i);
            OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
        }
        OK(MPI_Win_unlock(t, win));
        free(pv);
    }
    OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == t)
        for (int r = 1; r < size; r++)
            for (int i = 0; i < NI; i++) {
                int *reg = wbuf + (r - 1) * 2 * NI;
                CHECK(reg[i] == r * 100000 + i, "put: origin %d [%d] = %d, want %d", r, i, reg[i], r * 100000 + i);
                CHECK(reg[NI + i] == NP, "accumulate: origin %d [%d] = %d, want %d", r, i, reg[NI + i], NP);
            }
    OK(MPI_Win_free(&win));
    OK(MPI_Type_free(&vec));
    free(wbuf);
    free(src);
}

static void slots(void) {
    enum { MAXQ = 1 << 16 };
    MPI_Request *q = malloc(MAXQ * sizeof(MPI_Request));
    int *b = malloc(MAXQ * sizeof(int)), n = 0, cls = -1, wb[4] = {0, 0, 0, 0};
    MPI_Comm d;
    MPI_Win win;
    OK(MPI_Comm_dup(MPI_COMM_WORLD, &d));
    OK(MPI_Comm_set_errhandler(d, MPI_ERRORS_RETURN));
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    /* take every request slot, then give back 8: enough to create the
     * window's communicator, not for its header receives (32 per peer) */
    while (n < MAXQ && MPI_Irecv(&b[n], 1, MPI_INT, MPI_ANY_SOURCE, 77, d, &q[n]) == MPI_SUCCESS)
        n++;
    CHECK(n < MAXQ && n > 64, "%d receives posted", n);
    for (int i = 0; i < 8; i++) {
        n--;
        OK(MPI_Cancel(&q[n]));
        OK(MPI_Wait(&q[n], MPI_STATUS_IGNORE));
    }
    int rc = MPI_Win_create(wb, sizeof wb, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_REQUEST, "MPI_Win_create with 8 request slots free: class %d, want MPI_ERR_REQUEST", cls);
    for (int i = 0; i < n; i++) {
        OK(MPI_Cancel(&q[i]));
        OK(MPI_Wait(&q[i], MPI_STATUS_IGNORE));
    }
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
    OK(MPI_Win_create(wb, sizeof wb, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    int v = rank + 1, t = (rank + 1) % size;
    OK(MPI_Win_fence(0, win));
    OK(MPI_Put(&v, 1, MPI_INT, t, 0, 1, MPI_INT, win));
    OK(MPI_Win_fence(0, win));
    int from = (rank + size - 1) % size;
    CHECK(wb[0] == from + 1, "after the failed window: wb[0] = %d, want %d", wb[0], from + 1);
    OK(MPI_Win_free(&win));
    OK(MPI_Comm_free(&d));
    free(q);
    free(b);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    /* argv[1] names one section; none: all of them */
    const char *only = argc > 1 ? argv[1] : NULL;
    if (!only || strcmp(only, "zero") == 0)
        zero();
    if (!only || strcmp(only, "ctypes") == 0)
        ctypes();
    if (!only || strcmp(only, "many") == 0)
        many();
    if (!only || strcmp(only, "flood") == 0)
        flood();
    if (!only || strcmp(only, "putflood") == 0)
        putflood();
    if (only && strcmp(only, "slots") == 0)
        slots();
    printf("rmaedge ok %d\n", rank);
    MPI_Finalize();
    return 0;
}
