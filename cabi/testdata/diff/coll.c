/* coll: every collective, its v, in-place and non-blocking forms, at
 * several counts, datatypes and roots; self-checking. */
#include "dt.h"

static const int counts[] = {0, 1, 3, 17, 1000};
#define NCOUNTS 5

/* Values rank r contributes at position i. */
static int val(int r, int i) { return (r * 7 + i * 3) % 23 - 5; }

static void bcast(void) {
    for (int k = 0; k < NCOUNTS; k++) {
        int n = counts[k];
        for (int root = 0; root < size; root++) {
            int *b = malloc((n + 1) * sizeof(int));
            double *d = malloc((n + 1) * sizeof(double));
            for (int i = 0; i < n; i++) { b[i] = rank == root ? val(root, i) : -99; d[i] = rank == root ? i * 0.5 : -1; }
            OK(MPI_Bcast(b, n, MPI_INT, root, MPI_COMM_WORLD));
            MPI_Request r;
            OK(MPI_Ibcast(d, n, MPI_DOUBLE, root, MPI_COMM_WORLD, &r));
            OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
            for (int i = 0; i < n; i++) {
                if (b[i] != val(root, i) || d[i] != i * 0.5) { CHECK(0, "bcast n %d root %d i %d: %d %g", n, root, i, b[i], d[i]); break; }
            }
            free(b); free(d);
        }
    }
}

static void reduce(void) {
    for (int k = 0; k < NCOUNTS; k++) {
        int n = counts[k];
        int *s = malloc((n + 1) * sizeof(int)), *r = malloc((n + 1) * sizeof(int));
        long *ls = malloc((n + 1) * sizeof(long)), *lr = malloc((n + 1) * sizeof(long));
        for (int i = 0; i < n; i++) { s[i] = val(rank, i); ls[i] = val(rank, i); }
        MPI_Op ops[] = {MPI_SUM, MPI_PROD, MPI_MAX, MPI_MIN, MPI_BAND, MPI_BOR, MPI_BXOR, MPI_LAND, MPI_LOR, MPI_LXOR};
        for (int o = 0; o < 10; o++) {
            int root = (o + k) % size;
            for (int i = 0; i < n; i++) r[i] = -12345;
            OK(MPI_Reduce(s, r, n, MPI_INT, ops[o], root, MPI_COMM_WORLD));
            OK(MPI_Allreduce(ls, lr, n, MPI_LONG, ops[o], MPI_COMM_WORLD));
            for (int i = 0; i < n; i++) {
                long e = val(0, i);
                for (int q = 1; q < size; q++) {
                    long v = val(q, i);
                    switch (o) {
                    case 0: e += v; break;
                    case 1: e *= v; break;
                    case 2: e = v > e ? v : e; break;
                    case 3: e = v < e ? v : e; break;
                    case 4: e &= v; break;
                    case 5: e |= v; break;
                    case 6: e ^= v; break;
                    case 7: e = e && v; break;
                    case 8: e = e || v; break;
                    case 9: e = !e != !v; break;
                    }
                }
                if (o == 1) e = (int)e;
                if (rank == root && r[i] != (int)e) { CHECK(0, "reduce op %d n %d i %d: %d want %ld", o, n, i, r[i], e); break; }
                if (rank != root && r[i] != -12345) { CHECK(0, "reduce wrote non-root recvbuf"); break; }
                if (lr[i] != e && o != 1) { CHECK(0, "allreduce op %d n %d i %d: %ld want %ld", o, n, i, lr[i], e); break; }
            }
        }
        /* In place. */
        for (int i = 0; i < n; i++) r[i] = val(rank, i);
        OK(MPI_Allreduce(MPI_IN_PLACE, r, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
        for (int i = 0; i < n; i++) {
            int e = 0;
            for (int q = 0; q < size; q++) e += val(q, i);
            if (r[i] != e) { CHECK(0, "allreduce in place n %d i %d: %d want %d", n, i, r[i], e); break; }
        }
        int root = size - 1;
        for (int i = 0; i < n; i++) r[i] = val(rank, i);
        if (rank == root) OK(MPI_Reduce(MPI_IN_PLACE, r, n, MPI_INT, MPI_MAX, root, MPI_COMM_WORLD));
        else OK(MPI_Reduce(r, NULL, n, MPI_INT, MPI_MAX, root, MPI_COMM_WORLD));
        if (rank == root)
            for (int i = 0; i < n; i++) {
                int e = val(0, i);
                for (int q = 1; q < size; q++) if (val(q, i) > e) e = val(q, i);
                if (r[i] != e) { CHECK(0, "reduce in place n %d i %d: %d want %d", n, i, r[i], e); break; }
            }
        /* Non-blocking. */
        MPI_Request rq[2];
        OK(MPI_Iallreduce(s, r, n, MPI_INT, MPI_MIN, MPI_COMM_WORLD, &rq[0]));
        OK(MPI_Ireduce(ls, lr, n, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD, &rq[1]));
        OK(MPI_Wait(&rq[0], MPI_STATUS_IGNORE));
        OK(MPI_Wait(&rq[1], MPI_STATUS_IGNORE));
        for (int i = 0; i < n; i++) {
            int e = val(0, i); long es = 0;
            for (int q = 0; q < size; q++) { if (val(q, i) < e) e = val(q, i); es += val(q, i); }
            if (r[i] != e || (rank == 0 && lr[i] != es)) { CHECK(0, "iallreduce/ireduce n %d i %d", n, i); break; }
        }
        free(s); free(r); free(ls); free(lr);
    }
    /* Float types. */
    float f = rank + 0.5f, fr;
    double d = rank * 1.5, dr;
    OK(MPI_Allreduce(&f, &fr, 1, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD));
    OK(MPI_Allreduce(&d, &dr, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD));
    CHECK(fr == size * (size - 1) / 2.0f + size * 0.5f && dr == (size - 1) * 1.5, "float %g double %g", fr, dr);
    unsigned char uc = 1 << (rank % 8), ucr;
    OK(MPI_Allreduce(&uc, &ucr, 1, MPI_UNSIGNED_CHAR, MPI_BOR, MPI_COMM_WORLD));
    unsigned char ue = 0;
    for (int q = 0; q < size; q++) ue |= 1 << (q % 8);
    CHECK(ucr == ue, "uchar bor %d want %d", ucr, ue);
    short sh = rank, shr;
    OK(MPI_Allreduce(&sh, &shr, 1, MPI_SHORT, MPI_SUM, MPI_COMM_WORLD));
    CHECK(shr == size * (size - 1) / 2, "short %d", shr);
    long long ll = 1LL << 40, llr;
    OK(MPI_Allreduce(&ll, &llr, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD));
    CHECK(llr == size * (1LL << 40), "long long %lld", llr);
    unsigned u = 0xffffffffu - rank, ur;
    OK(MPI_Allreduce(&u, &ur, 1, MPI_UNSIGNED, MPI_MIN, MPI_COMM_WORLD));
    CHECK(ur == 0xffffffffu - (size - 1), "unsigned min %u", ur);
    int8_t i8 = -rank, i8r;
    OK(MPI_Allreduce(&i8, &i8r, 1, MPI_INT8_T, MPI_MIN, MPI_COMM_WORLD));
    CHECK(i8r == -(size - 1), "int8 %d", i8r);
    _Bool b = rank == 0, br;
    OK(MPI_Allreduce(&b, &br, 1, MPI_C_BOOL, MPI_LOR, MPI_COMM_WORLD));
    CHECK(br == 1, "bool lor %d", br);
    OK(MPI_Allreduce(&b, &br, 1, MPI_C_BOOL, MPI_LAND, MPI_COMM_WORLD));
    CHECK(br == (size == 1), "bool land %d", br);
}

static void minloc(void) {
    struct { double v; int i; } di[3], dr[3];
    struct { int v; int i; } ii[3], ir[3];
    struct { float v; int i; } fi[2], fr[2];
    struct { long v; int i; } li[2], lr[2];
    struct { short v; int i; } si[2], sr[2];
    for (int k = 0; k < 3; k++) {
        di[k].v = (rank * 3 + k) % 4; di[k].i = rank;
        ii[k].v = (rank * 5 + k) % 3; ii[k].i = rank;
    }
    for (int k = 0; k < 2; k++) {
        fi[k].v = (rank + k) % 2; fi[k].i = rank;
        li[k].v = -(rank % 3); li[k].i = rank;
        si[k].v = rank % 2; si[k].i = rank;
    }
    OK(MPI_Allreduce(di, dr, 3, MPI_DOUBLE_INT, MPI_MINLOC, MPI_COMM_WORLD));
    OK(MPI_Allreduce(ii, ir, 3, MPI_2INT, MPI_MAXLOC, MPI_COMM_WORLD));
    OK(MPI_Allreduce(fi, fr, 2, MPI_FLOAT_INT, MPI_MAXLOC, MPI_COMM_WORLD));
    OK(MPI_Allreduce(li, lr, 2, MPI_LONG_INT, MPI_MINLOC, MPI_COMM_WORLD));
    OK(MPI_Reduce(si, sr, 2, MPI_SHORT_INT, MPI_MAXLOC, 0, MPI_COMM_WORLD));
    for (int k = 0; k < 3; k++) {
        double ev = 1e9; int ei = -1;
        int mv = -1, mi = -1;
        for (int q = 0; q < size; q++) {
            double v = (q * 3 + k) % 4;
            if (v < ev) { ev = v; ei = q; }
            int w = (q * 5 + k) % 3;
            if (w > mv) { mv = w; mi = q; }
        }
        CHECK(dr[k].v == ev && dr[k].i == ei, "minloc double k %d: %g %d want %g %d", k, dr[k].v, dr[k].i, ev, ei);
        CHECK(ir[k].v == mv && ir[k].i == mi, "maxloc 2int k %d: %d %d want %d %d", k, ir[k].v, ir[k].i, mv, mi);
    }
    for (int k = 0; k < 2; k++) {
        float fv = -1; int fi2 = -1;
        long lv = 1; int li2 = -1;
        short sv = -1; int si2 = -1;
        for (int q = 0; q < size; q++) {
            if ((q + k) % 2 > fv) { fv = (q + k) % 2; fi2 = q; }
            if (-(q % 3) < lv) { lv = -(q % 3); li2 = q; }
            if (q % 2 > sv) { sv = q % 2; si2 = q; }
        }
        CHECK(fr[k].v == fv && fr[k].i == fi2, "maxloc float k %d: %g %d want %g %d", k, fr[k].v, fr[k].i, fv, fi2);
        CHECK(lr[k].v == lv && lr[k].i == li2, "minloc long k %d: %ld %d want %ld %d", k, lr[k].v, lr[k].i, lv, li2);
        if (rank == 0) CHECK(sr[k].v == sv && sr[k].i == si2, "maxloc short k %d: %d %d want %d %d", k, sr[k].v, sr[k].i, sv, si2);
    }
    /* Ties pick the lowest index. */
    ii[0].v = 5; ii[0].i = size - rank;
    OK(MPI_Allreduce(ii, ir, 1, MPI_2INT, MPI_MINLOC, MPI_COMM_WORLD));
    CHECK(ir[0].v == 5 && ir[0].i == 1, "minloc tie %d %d", ir[0].v, ir[0].i);
}

/* A non-commutative operation: 2x2 matrix product on int[4]. */
static void matmul(void *in, void *inout, int *len, MPI_Datatype *dt) {
    (void)dt;
    int *a = in, *b = inout;
    for (int k = 0; k < *len; k++, a += 4, b += 4) {
        int c[4] = {a[0] * b[0] + a[1] * b[2], a[0] * b[1] + a[1] * b[3], a[2] * b[0] + a[3] * b[2], a[2] * b[1] + a[3] * b[3]};
        memcpy(b, c, sizeof c);
    }
}

static void addint(void *in, void *inout, int *len, MPI_Datatype *dt) {
    (void)dt;
    for (int i = 0; i < *len; i++) ((int *)inout)[i] += ((int *)in)[i];
}

static void mat_of(int r, int *m) {
    m[0] = 1; m[1] = r + 1; m[2] = 0; m[3] = 1;
    if (r % 2) { m[0] = 0; m[1] = 1; m[2] = 1; m[3] = r; }
}

static void userops(void) {
    MPI_Op op, add;
    MPI_Datatype mat;
    OK(MPI_Type_contiguous(4, MPI_INT, &mat));
    OK(MPI_Type_commit(&mat));
    OK(MPI_Op_create(matmul, 0, &op));
    OK(MPI_Op_create(addint, 1, &add));
    int c = -1;
    OK(MPI_Op_commutative(op, &c));
    CHECK(c == 0, "commutative %d", c);
    OK(MPI_Op_commutative(add, &c));
    CHECK(c == 1, "commutative %d", c);
    OK(MPI_Op_commutative(MPI_SUM, &c));
    CHECK(c == 1, "sum commutative %d", c);
    int m[8], r[8], e[4] = {1, 0, 0, 1};
    mat_of(rank, m); mat_of(rank + 1, m + 4);
    for (int q = 0; q < size; q++) {
        int t[4];
        mat_of(q, t);
        /* result = m0 * m1 * ... in rank order */
        int n[4] = {e[0] * t[0] + e[1] * t[2], e[0] * t[1] + e[1] * t[3], e[2] * t[0] + e[3] * t[2], e[2] * t[1] + e[3] * t[3]};
        memcpy(e, n, sizeof n);
    }
    for (int root = 0; root < size; root++) {
        memset(r, 0, sizeof r);
        OK(MPI_Reduce(m, r, 1, mat, op, root, MPI_COMM_WORLD));
        if (rank == root) CHECK(!memcmp(r, e, sizeof e), "noncommutative reduce root %d: %d %d %d %d want %d %d %d %d", root, r[0], r[1], r[2], r[3], e[0], e[1], e[2], e[3]);
    }
    memset(r, 0, sizeof r);
    OK(MPI_Allreduce(m, r, 1, mat, op, MPI_COMM_WORLD));
    CHECK(!memcmp(r, e, sizeof e), "noncommutative allreduce");
    /* Scan with the non-commutative op. */
    OK(MPI_Scan(m, r, 1, mat, op, MPI_COMM_WORLD));
    int s[4] = {1, 0, 0, 1};
    for (int q = 0; q <= rank; q++) {
        int t[4];
        mat_of(q, t);
        int n[4] = {s[0] * t[0] + s[1] * t[2], s[0] * t[1] + s[1] * t[3], s[2] * t[0] + s[3] * t[2], s[2] * t[1] + s[3] * t[3]};
        memcpy(s, n, sizeof n);
    }
    CHECK(!memcmp(r, s, sizeof s), "noncommutative scan");
    /* User op on ints, count 3. */
    int v[3] = {rank, 1, -rank}, w[3];
    OK(MPI_Allreduce(v, w, 3, MPI_INT, add, MPI_COMM_WORLD));
    CHECK(w[0] == size * (size - 1) / 2 && w[1] == size && w[2] == -w[0], "user add %d %d %d", w[0], w[1], w[2]);
    /* A persistent collective keeps its operation after MPI_Op_free (the
     * standard: freeing marks it; what refers to it still works). */
    MPI_Request pr;
    OK(MPI_Allreduce_init(v, w, 3, MPI_INT, add, MPI_COMM_WORLD, MPI_INFO_NULL, &pr));
    OK(MPI_Op_free(&add));
    for (int round = 0; round < 2; round++) {
        memset(w, 0, sizeof w);
        OK(MPI_Start(&pr));
        OK(MPI_Wait(&pr, MPI_STATUS_IGNORE));
        CHECK(w[0] == size * (size - 1) / 2 && w[1] == size && w[2] == -w[0], "persistent user add after Op_free %d %d %d", w[0], w[1], w[2]);
    }
    OK(MPI_Request_free(&pr));
    OK(MPI_Op_free(&op));
    CHECK(op == MPI_OP_NULL && add == MPI_OP_NULL, "op free");
    OK(MPI_Type_free(&mat));
}

static void scans(void) {
    for (int k = 0; k < NCOUNTS; k++) {
        int n = counts[k];
        int *s = malloc((n + 1) * sizeof(int)), *r = malloc((n + 1) * sizeof(int)), *x = malloc((n + 1) * sizeof(int));
        for (int i = 0; i < n; i++) { s[i] = val(rank, i); x[i] = -777; }
        OK(MPI_Scan(s, r, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
        OK(MPI_Exscan(s, x, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
        for (int i = 0; i < n; i++) {
            int e = 0;
            for (int q = 0; q < rank; q++) e += val(q, i);
            if (r[i] != e + val(rank, i)) { CHECK(0, "scan n %d i %d: %d", n, i, r[i]); break; }
            if (rank > 0 && x[i] != e) { CHECK(0, "exscan n %d i %d: %d want %d", n, i, x[i], e); break; }
        }
        for (int i = 0; i < n; i++) r[i] = val(rank, i);
        OK(MPI_Scan(MPI_IN_PLACE, r, n, MPI_INT, MPI_MAX, MPI_COMM_WORLD));
        for (int i = 0; i < n; i++) x[i] = val(rank, i);
        OK(MPI_Exscan(MPI_IN_PLACE, x, n, MPI_INT, MPI_MAX, MPI_COMM_WORLD));
        for (int i = 0; i < n; i++) {
            int e = -1000;
            for (int q = 0; q < rank; q++) if (val(q, i) > e) e = val(q, i);
            int e2 = val(rank, i) > e ? val(rank, i) : e;
            if (r[i] != e2) { CHECK(0, "scan in place n %d i %d", n, i); break; }
            if (rank > 0 && x[i] != e) { CHECK(0, "exscan in place n %d i %d: %d want %d", n, i, x[i], e); break; }
        }
        MPI_Request rq[2];
        for (int i = 0; i < n; i++) { x[i] = -777; }
        OK(MPI_Iscan(s, r, n, MPI_INT, MPI_PROD, MPI_COMM_WORLD, &rq[0]));
        OK(MPI_Iexscan(s, x, n, MPI_INT, MPI_BXOR, MPI_COMM_WORLD, &rq[1]));
        OK(MPI_Wait(&rq[0], MPI_STATUS_IGNORE));
        OK(MPI_Wait(&rq[1], MPI_STATUS_IGNORE));
        for (int i = 0; i < n; i++) {
            int e = 1, ex = 0;
            for (int q = 0; q <= rank; q++) e *= val(q, i);
            for (int q = 0; q < rank; q++) ex ^= val(q, i);
            if (r[i] != e || (rank > 0 && x[i] != ex)) { CHECK(0, "iscan/iexscan n %d i %d", n, i); break; }
        }
        free(s); free(r); free(x);
    }
}

static void redscat(void) {
    for (int k = 0; k < 4; k++) {
        int n = counts[k];
        int *rc = malloc(size * sizeof(int)), tot = 0;
        for (int q = 0; q < size; q++) { rc[q] = (n + q) % 4; tot += rc[q]; }
        int *s = malloc((tot + 1) * sizeof(int)), *r = malloc((rc[rank] + 1) * sizeof(int));
        for (int i = 0; i < tot; i++) s[i] = val(rank, i);
        OK(MPI_Reduce_scatter(s, r, rc, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
        int off = 0;
        for (int q = 0; q < rank; q++) off += rc[q];
        for (int i = 0; i < rc[rank]; i++) {
            int e = 0;
            for (int q = 0; q < size; q++) e += val(q, off + i);
            if (r[i] != e) { CHECK(0, "reduce_scatter n %d i %d: %d want %d", n, i, r[i], e); break; }
        }
        /* In place. */
        for (int i = 0; i < tot; i++) s[i] = val(rank, i);
        OK(MPI_Reduce_scatter(MPI_IN_PLACE, s, rc, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
        for (int i = 0; i < rc[rank]; i++) {
            int e = 0;
            for (int q = 0; q < size; q++) e += val(q, off + i);
            if (s[i] != e) { CHECK(0, "reduce_scatter in place n %d i %d: %d want %d", n, i, s[i], e); break; }
        }
        /* Block. */
        int *sb = malloc((n * size + 1) * sizeof(int)), *rb = malloc((n + 1) * sizeof(int));
        for (int i = 0; i < n * size; i++) sb[i] = val(rank, i);
        OK(MPI_Reduce_scatter_block(sb, rb, n, MPI_INT, MPI_MAX, MPI_COMM_WORLD));
        for (int i = 0; i < n; i++) {
            int e = -1000;
            for (int q = 0; q < size; q++) if (val(q, rank * n + i) > e) e = val(q, rank * n + i);
            if (rb[i] != e) { CHECK(0, "reduce_scatter_block n %d i %d", n, i); break; }
        }
        OK(MPI_Reduce_scatter_block(MPI_IN_PLACE, sb, n, MPI_INT, MPI_MAX, MPI_COMM_WORLD));
        for (int i = 0; i < n; i++) {
            if (sb[i] != rb[i]) { CHECK(0, "reduce_scatter_block in place n %d i %d", n, i); break; }
        }
        MPI_Request rq;
        OK(MPI_Ireduce_scatter(s, r, rc, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &rq));
        OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
        OK(MPI_Ireduce_scatter_block(sb, rb, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &rq));
        OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
        free(rc); free(s); free(r); free(sb); free(rb);
    }
}

static void gathers(void) {
    for (int k = 0; k < NCOUNTS; k++) {
        int n = counts[k];
        for (int root = 0; root < size; root++) {
            int *s = malloc((n + 1) * sizeof(int)), *r = malloc((n * size + 1) * sizeof(int));
            for (int i = 0; i < n; i++) s[i] = val(rank, i);
            for (int i = 0; i < n * size; i++) r[i] = -1;
            OK(MPI_Gather(s, n, MPI_INT, r, n, MPI_INT, root, MPI_COMM_WORLD));
            if (rank == root)
                for (int q = 0; q < size; q++) for (int i = 0; i < n; i++)
                    if (r[q * n + i] != val(q, i)) { CHECK(0, "gather n %d root %d q %d i %d", n, root, q, i); q = size; break; }
            /* In place at the root. */
            if (rank == root) {
                for (int i = 0; i < n * size; i++) r[i] = -1;
                for (int i = 0; i < n; i++) r[root * n + i] = val(root, i);
                OK(MPI_Gather(MPI_IN_PLACE, n, MPI_INT, r, n, MPI_INT, root, MPI_COMM_WORLD));
                for (int q = 0; q < size; q++) for (int i = 0; i < n; i++)
                    if (r[q * n + i] != val(q, i)) { CHECK(0, "gather in place n %d q %d i %d", n, q, i); q = size; break; }
            } else OK(MPI_Gather(s, n, MPI_INT, NULL, 0, MPI_DATATYPE_NULL, root, MPI_COMM_WORLD));
            /* Scatter back. */
            for (int i = 0; i < n; i++) s[i] = -1;
            OK(MPI_Scatter(r, n, MPI_INT, s, n, MPI_INT, root, MPI_COMM_WORLD));
            for (int i = 0; i < n; i++) if (s[i] != val(rank, i)) { CHECK(0, "scatter n %d root %d i %d: %d", n, root, i, s[i]); break; }
            if (rank == root) {
                OK(MPI_Scatter(r, n, MPI_INT, MPI_IN_PLACE, n, MPI_INT, root, MPI_COMM_WORLD));
                for (int q = 0; q < size; q++) for (int i = 0; i < n; i++)
                    if (r[q * n + i] != val(q, i)) { CHECK(0, "scatter in place changed sendbuf"); q = size; break; }
            } else {
                for (int i = 0; i < n; i++) s[i] = -1;
                OK(MPI_Scatter(NULL, 0, MPI_DATATYPE_NULL, s, n, MPI_INT, root, MPI_COMM_WORLD));
                for (int i = 0; i < n; i++) if (s[i] != val(rank, i)) { CHECK(0, "scatter (in place root) n %d i %d", n, i); break; }
            }
            /* Gatherv with varying counts and displacements in reverse. */
            int *rc = malloc(size * sizeof(int)), *dp = malloc(size * sizeof(int)), tot = 0;
            for (int q = 0; q < size; q++) rc[q] = (q + n) % 3;
            for (int q = size - 1; q >= 0; q--) { dp[q] = tot; tot += rc[q] + 1; }
            int *gv = malloc((tot + 1) * sizeof(int));
            for (int i = 0; i < tot; i++) gv[i] = -1;
            for (int i = 0; i < rc[rank]; i++) s[i] = val(rank, i);
            int *sv = malloc(3 * sizeof(int));
            for (int i = 0; i < 3; i++) sv[i] = val(rank, i);
            OK(MPI_Gatherv(sv, rc[rank], MPI_INT, gv, rc, dp, MPI_INT, root, MPI_COMM_WORLD));
            if (rank == root)
                for (int q = 0; q < size; q++) {
                    for (int i = 0; i < rc[q]; i++) if (gv[dp[q] + i] != val(q, i)) { CHECK(0, "gatherv n %d root %d q %d i %d: %d", n, root, q, i, gv[dp[q] + i]); break; }
                    CHECK(gv[dp[q] + rc[q]] == -1, "gatherv wrote a gap");
                }
            int got[3] = {-1, -1, -1};
            OK(MPI_Scatterv(gv, rc, dp, MPI_INT, got, rc[rank], MPI_INT, root, MPI_COMM_WORLD));
            for (int i = 0; i < rc[rank]; i++) CHECK(got[i] == val(rank, i), "scatterv n %d root %d i %d: %d", n, root, i, got[i]);
            MPI_Request rq;
            OK(MPI_Igatherv(sv, rc[rank], MPI_INT, gv, rc, dp, MPI_INT, root, MPI_COMM_WORLD, &rq));
            OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
            OK(MPI_Iscatterv(gv, rc, dp, MPI_INT, got, rc[rank], MPI_INT, root, MPI_COMM_WORLD, &rq));
            OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
            for (int i = 0; i < rc[rank]; i++) CHECK(got[i] == val(rank, i), "iscatterv");
            OK(MPI_Igather(s, n, MPI_INT, r, n, MPI_INT, root, MPI_COMM_WORLD, &rq));
            OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
            OK(MPI_Iscatter(r, n, MPI_INT, s, n, MPI_INT, root, MPI_COMM_WORLD, &rq));
            OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
            free(s); free(r); free(rc); free(dp); free(gv); free(sv);
        }
    }
}

static void allgathers(void) {
    for (int k = 0; k < NCOUNTS; k++) {
        int n = counts[k];
        int *s = malloc((n + 1) * sizeof(int)), *r = malloc((n * size + 1) * sizeof(int));
        for (int i = 0; i < n; i++) s[i] = val(rank, i);
        OK(MPI_Allgather(s, n, MPI_INT, r, n, MPI_INT, MPI_COMM_WORLD));
        for (int q = 0; q < size; q++) for (int i = 0; i < n; i++)
            if (r[q * n + i] != val(q, i)) { CHECK(0, "allgather n %d", n); q = size; break; }
        for (int i = 0; i < n * size; i++) r[i] = -1;
        for (int i = 0; i < n; i++) r[rank * n + i] = val(rank, i);
        OK(MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, r, n, MPI_INT, MPI_COMM_WORLD));
        for (int q = 0; q < size; q++) for (int i = 0; i < n; i++)
            if (r[q * n + i] != val(q, i)) { CHECK(0, "allgather in place n %d", n); q = size; break; }
        /* Allgatherv. */
        int *rc = malloc(size * sizeof(int)), *dp = malloc(size * sizeof(int)), tot = 0;
        for (int q = 0; q < size; q++) { rc[q] = (q * n) % 5; dp[q] = tot; tot += rc[q] + 2; }
        int *g = malloc((tot + 1) * sizeof(int));
        int sv[5];
        for (int i = 0; i < 5; i++) sv[i] = val(rank, i);
        OK(MPI_Allgatherv(sv, rc[rank], MPI_INT, g, rc, dp, MPI_INT, MPI_COMM_WORLD));
        for (int q = 0; q < size; q++) for (int i = 0; i < rc[q]; i++)
            if (g[dp[q] + i] != val(q, i)) { CHECK(0, "allgatherv n %d q %d i %d", n, q, i); q = size; break; }
        for (int i = 0; i < tot; i++) g[i] = -1;
        for (int i = 0; i < rc[rank]; i++) g[dp[rank] + i] = val(rank, i);
        OK(MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, g, rc, dp, MPI_INT, MPI_COMM_WORLD));
        for (int q = 0; q < size; q++) for (int i = 0; i < rc[q]; i++)
            if (g[dp[q] + i] != val(q, i)) { CHECK(0, "allgatherv in place n %d q %d i %d", n, q, i); q = size; break; }
        MPI_Request rq;
        OK(MPI_Iallgather(s, n, MPI_INT, r, n, MPI_INT, MPI_COMM_WORLD, &rq));
        OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
        OK(MPI_Iallgatherv(sv, rc[rank], MPI_INT, g, rc, dp, MPI_INT, MPI_COMM_WORLD, &rq));
        OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
        free(s); free(r); free(rc); free(dp); free(g);
    }
}

static void alltoalls(void) {
    for (int k = 0; k < NCOUNTS; k++) {
        int n = counts[k];
        int *s = malloc((n * size + 1) * sizeof(int)), *r = malloc((n * size + 1) * sizeof(int));
        for (int q = 0; q < size; q++) for (int i = 0; i < n; i++) s[q * n + i] = rank * 10000 + q * 100 + i;
        OK(MPI_Alltoall(s, n, MPI_INT, r, n, MPI_INT, MPI_COMM_WORLD));
        for (int q = 0; q < size; q++) for (int i = 0; i < n; i++)
            if (r[q * n + i] != q * 10000 + rank * 100 + i) { CHECK(0, "alltoall n %d", n); q = size; break; }
        OK(MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, s, n, MPI_INT, MPI_COMM_WORLD));
        for (int q = 0; q < size; q++) for (int i = 0; i < n; i++)
            if (s[q * n + i] != q * 10000 + rank * 100 + i) { CHECK(0, "alltoall in place n %d", n); q = size; break; }
        MPI_Request rq;
        OK(MPI_Ialltoall(r, n, MPI_INT, s, n, MPI_INT, MPI_COMM_WORLD, &rq));
        OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
        /* Alltoallv: rank r sends (r+q)%3 ints to q. */
        int *sc = malloc(size * sizeof(int)), *sd = malloc(size * sizeof(int)), *rcn = malloc(size * sizeof(int)), *rd = malloc(size * sizeof(int));
        int st = 0, rt = 0;
        for (int q = 0; q < size; q++) {
            sc[q] = (rank + q + n) % 3; sd[q] = st; st += sc[q];
            rcn[q] = (q + rank + n) % 3;
        }
        for (int q = size - 1; q >= 0; q--) { rd[q] = rt; rt += rcn[q]; }
        int *vs = malloc((st + 1) * sizeof(int)), *vr = malloc((rt + 1) * sizeof(int));
        for (int q = 0; q < size; q++) for (int i = 0; i < sc[q]; i++) vs[sd[q] + i] = rank * 100 + q * 10 + i;
        OK(MPI_Alltoallv(vs, sc, sd, MPI_INT, vr, rcn, rd, MPI_INT, MPI_COMM_WORLD));
        for (int q = 0; q < size; q++) for (int i = 0; i < rcn[q]; i++)
            if (vr[rd[q] + i] != q * 100 + rank * 10 + i) { CHECK(0, "alltoallv n %d q %d i %d: %d", n, q, i, vr[rd[q] + i]); q = size; break; }
        OK(MPI_Ialltoallv(vs, sc, sd, MPI_INT, vr, rcn, rd, MPI_INT, MPI_COMM_WORLD, &rq));
        OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
        /* In-place alltoallv: symmetric counts needed. */
        int *ic = malloc(size * sizeof(int)), *id = malloc(size * sizeof(int)), it = 0;
        for (int q = 0; q < size; q++) { ic[q] = (rank + q) % 2 + 1; id[q] = it; it += ic[q]; }
        int *ib = malloc(it * sizeof(int));
        for (int q = 0; q < size; q++) for (int i = 0; i < ic[q]; i++) ib[id[q] + i] = rank * 100 + q * 10 + i;
        OK(MPI_Alltoallv(MPI_IN_PLACE, NULL, NULL, MPI_DATATYPE_NULL, ib, ic, id, MPI_INT, MPI_COMM_WORLD));
        for (int q = 0; q < size; q++) for (int i = 0; i < ic[q]; i++)
            if (ib[id[q] + i] != q * 100 + rank * 10 + i) { CHECK(0, "alltoallv in place q %d i %d: %d", q, i, ib[id[q] + i]); q = size; break; }
        free(s); free(r); free(sc); free(sd); free(rcn); free(rd); free(vs); free(vr); free(ic); free(id); free(ib);
    }
}

static void barrier(void) {
    OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_Request r;
    OK(MPI_Ibarrier(MPI_COMM_WORLD, &r));
    int flag = 0, guard = 0;
    while (!flag && guard++ < 100000000) OK(MPI_Test(&r, &flag, MPI_STATUS_IGNORE));
    CHECK(flag && r == MPI_REQUEST_NULL, "ibarrier");
}

static void derivedcoll(void) {
    /* Bcast and gather of a struct type and a vector type. */
    struct rec { int a; double b; char c; } recs[3];
    MPI_Datatype rt;
    int bl[3] = {1, 1, 1};
    MPI_Aint dp[3] = {offsetof(struct rec, a), offsetof(struct rec, b), offsetof(struct rec, c)};
    MPI_Datatype ty[3] = {MPI_INT, MPI_DOUBLE, MPI_CHAR};
    OK(MPI_Type_create_struct(3, bl, dp, ty, &rt));
    OK(MPI_Type_commit(&rt));
    for (int root = 0; root < size; root++) {
        for (int i = 0; i < 3; i++) { recs[i].a = rank == root ? i + root : -1; recs[i].b = rank == root ? i * 0.25 : -1; recs[i].c = rank == root ? 'x' + i : 0; }
        OK(MPI_Bcast(recs, 3, rt, root, MPI_COMM_WORLD));
        for (int i = 0; i < 3; i++) CHECK(recs[i].a == i + root && recs[i].b == i * 0.25 && recs[i].c == 'x' + i, "struct bcast root %d i %d", root, i);
    }
    struct rec *all = malloc(size * sizeof *all), mine = {rank, rank * 2.0, 'a' + rank};
    OK(MPI_Allgather(&mine, 1, rt, all, 1, rt, MPI_COMM_WORLD));
    for (int q = 0; q < size; q++) CHECK(all[q].a == q && all[q].b == q * 2.0 && all[q].c == 'a' + q, "struct allgather q %d", q);
    free(all);
    OK(MPI_Type_free(&rt));
    /* Gather a column of a matrix at the root as rows (send vector, receive contiguous). */
    int m[3][4];
    for (int i = 0; i < 3; i++) for (int j = 0; j < 4; j++) m[i][j] = rank * 100 + i * 10 + j;
    MPI_Datatype col;
    OK(MPI_Type_vector(3, 1, 4, MPI_INT, &col));
    OK(MPI_Type_commit(&col));
    int *g = malloc(3 * size * sizeof(int));
    OK(MPI_Gather(&m[0][1], 1, col, g, 3, MPI_INT, 0, MPI_COMM_WORLD));
    if (rank == 0)
        for (int q = 0; q < size; q++) for (int i = 0; i < 3; i++) CHECK(g[q * 3 + i] == q * 100 + i * 10 + 1, "column gather q %d i %d: %d", q, i, g[q * 3 + i]);
    free(g);
    OK(MPI_Type_free(&col));
    /* Resized type: scatter every other int. */
    MPI_Datatype rs;
    OK(MPI_Type_create_resized(MPI_INT, 0, 2 * sizeof(int), &rs));
    OK(MPI_Type_commit(&rs));
    int *src = malloc(2 * size * sizeof(int)), got = -1;
    for (int i = 0; i < 2 * size; i++) src[i] = i;
    OK(MPI_Scatter(src, 1, rs, &got, 1, MPI_INT, 0, MPI_COMM_WORLD));
    CHECK(got == 2 * rank, "resized scatter got %d", got);
    free(src);
    OK(MPI_Type_free(&rs));
}

static void comms(void) {
    /* Collectives on a split communicator (odd/even) and reversed order. */
    MPI_Comm c;
    OK(MPI_Comm_split(MPI_COMM_WORLD, rank % 2, size - rank, &c));
    int cr, cs;
    MPI_Comm_rank(c, &cr);
    MPI_Comm_size(c, &cs);
    int sum;
    OK(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, c));
    int e = 0;
    for (int q = rank % 2; q < size; q += 2) e += q;
    CHECK(sum == e, "split allreduce %d want %d", sum, e);
    int *all = malloc(cs * sizeof(int));
    OK(MPI_Allgather(&rank, 1, MPI_INT, all, 1, MPI_INT, c));
    for (int i = 0; i < cs; i++) CHECK(all[i] > (i + 1 < cs ? all[i + 1] : -1), "split order all[%d]=%d", i, all[i]);
    int sc;
    OK(MPI_Scan(&rank, &sc, 1, MPI_INT, MPI_SUM, c));
    e = 0;
    for (int i = 0; i <= cr; i++) e += all[i];
    CHECK(sc == e, "split scan %d want %d", sc, e);
    free(all);
    OK(MPI_Comm_free(&c));
    /* MPI_COMM_SELF. */
    int x = 3, y = 0;
    OK(MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_SELF));
    CHECK(y == 3, "self allreduce %d", y);
    OK(MPI_Exscan(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_SELF));
    OK(MPI_Bcast(&x, 1, MPI_INT, 0, MPI_COMM_SELF));
}

int main(int argc, char **argv) {
    start(&argc, &argv);
    barrier();
    bcast();
    reduce();
    minloc();
    userops();
    scans();
    redscat();
    gathers();
    allgathers();
    alltoalls();
    derivedcoll();
    comms();
    return finish("coll");
}
