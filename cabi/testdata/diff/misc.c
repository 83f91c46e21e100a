/* misc: the corners MPI test suites visit: errors in request arrays,
 * many outstanding requests, buffered-send limits, large messages,
 * zero counts, Alltoallw with derived types, Reduce_local; self-checking. */
#include "dt.h"

static void in_status(void) {
    if (size < 2) return;
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    int out[8] = {0}, a[8], b[2];
    MPI_Request rq[4];
    MPI_Status st[4];
    OK(MPI_Irecv(a, 8, MPI_INT, prev, 1, MPI_COMM_WORLD, &rq[0]));
    OK(MPI_Irecv(b, 2, MPI_INT, prev, 2, MPI_COMM_WORLD, &rq[1]));
    OK(MPI_Isend(out, 8, MPI_INT, next, 1, MPI_COMM_WORLD, &rq[2]));
    OK(MPI_Isend(out, 8, MPI_INT, next, 2, MPI_COMM_WORLD, &rq[3]));
    for (int i = 0; i < 4; i++) st[i].MPI_ERROR = -5;
    int rc = MPI_Waitall(4, rq, st), cls = -1;
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_IN_STATUS, "waitall class %d", cls);
    MPI_Error_class(st[1].MPI_ERROR, &cls);
    CHECK(cls == MPI_ERR_TRUNCATE, "status 1 class %d", cls);
    CHECK(st[0].MPI_ERROR == MPI_SUCCESS || st[0].MPI_ERROR == MPI_ERR_PENDING, "status 0 error %d", st[0].MPI_ERROR);
    OK(MPI_Barrier(MPI_COMM_WORLD));
    /* Buffered send beyond the attached buffer: MPI_ERR_BUFFER. */
    char *buf = malloc(100 + MPI_BSEND_OVERHEAD);
    OK(MPI_Buffer_attach(buf, 100 + MPI_BSEND_OVERHEAD));
    char big[1000] = {0};
    rc = MPI_Bsend(big, 1000, MPI_CHAR, next, 3, MPI_COMM_WORLD);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_BUFFER, "bsend overflow class %d", cls); /* Open MPI 4.1 sends it */
    OK(MPI_Bsend(big, 50, MPI_CHAR, next, 4, MPI_COMM_WORLD));
    OK(MPI_Recv(big, 1000, MPI_CHAR, prev, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    void *p;
    int sz;
    OK(MPI_Buffer_detach(&p, &sz));
    free(buf);
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
}

static void many(void) {
    /* 64 receives from everyone, posted before the sends, completed with
     * Testsome/Waitany/Testany mixes. */
    enum { K = 16 };
    int n = K * size;
    MPI_Request *rq = malloc(2 * n * sizeof *rq);
    int *in = malloc(n * sizeof(int)), *out = malloc(n * sizeof(int));
    for (int q = 0; q < size; q++) for (int k = 0; k < K; k++) {
        OK(MPI_Irecv(&in[q * K + k], 1, MPI_INT, q, k, MPI_COMM_WORLD, &rq[q * K + k]));
    }
    OK(MPI_Barrier(MPI_COMM_WORLD));
    for (int q = 0; q < size; q++) for (int k = K - 1; k >= 0; k--) {
        out[q * K + k] = rank * 1000 + q * 100 + k;
        OK(MPI_Isend(&out[q * K + k], 1, MPI_INT, q, k, MPI_COMM_WORLD, &rq[n + q * K + k]));
    }
    int done = 0, guard = 0, idx[2048];
    MPI_Status *st = malloc(2 * n * sizeof *st);
    while (done < 2 * n && guard++ < 1000000) {
        int oc;
        if (guard % 3 == 0) {
            OK(MPI_Testsome(2 * n, rq, &oc, idx, st));
            if (oc == MPI_UNDEFINED) break;
            for (int i = 0; i < oc; i++) {
                if (idx[i] < n) CHECK(st[i].MPI_SOURCE == idx[i] / K && st[i].MPI_TAG == idx[i] % K, "testsome status %d", idx[i]);
            }
            done += oc;
        } else if (guard % 3 == 1) {
            int j, f;
            MPI_Status s;
            OK(MPI_Testany(2 * n, rq, &j, &f, &s));
            if (f && j != MPI_UNDEFINED) {
                if (j < n) CHECK(s.MPI_SOURCE == j / K && s.MPI_TAG == j % K, "testany status %d", j);
                done++;
            }
        } else {
            int j;
            MPI_Status s;
            OK(MPI_Waitany(2 * n, rq, &j, &s));
            if (j == MPI_UNDEFINED) break;
            if (j < n) CHECK(s.MPI_SOURCE == j / K && s.MPI_TAG == j % K, "waitany status %d", j);
            done++;
        }
    }
    CHECK(done == 2 * n, "completed %d of %d", done, 2 * n);
    for (int q = 0; q < size; q++) for (int k = 0; k < K; k++)
        CHECK(in[q * K + k] == q * 1000 + rank * 100 + k, "many in[%d] = %d", q * K + k, in[q * K + k]);
    free(rq); free(in); free(out); free(st);
}

static void nbcolls(void) {
    /* Several non-blocking collectives on two communicators, completed in
     * reverse order. */
    MPI_Comm d;
    OK(MPI_Comm_dup(MPI_COMM_WORLD, &d));
    int a = rank, b = rank * 2, c = 0, e = 0, f[64], g = -1;
    MPI_Request rq[5];
    OK(MPI_Iallreduce(&a, &c, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &rq[0]));
    OK(MPI_Iallreduce(&b, &e, 1, MPI_INT, MPI_MAX, d, &rq[1]));
    OK(MPI_Iallgather(&a, 1, MPI_INT, f, 1, MPI_INT, d, &rq[2]));
    OK(MPI_Ibarrier(MPI_COMM_WORLD, &rq[3]));
    if (rank == 0) g = 42;
    OK(MPI_Ibcast(&g, 1, MPI_INT, 0, MPI_COMM_WORLD, &rq[4]));
    for (int i = 4; i >= 0; i--) OK(MPI_Wait(&rq[i], MPI_STATUS_IGNORE));
    CHECK(c == size * (size - 1) / 2 && e == 2 * (size - 1) && g == 42, "nb colls %d %d %d", c, e, g);
    for (int q = 0; q < size; q++) CHECK(f[q] == q, "iallgather %d", q);
    /* Point-to-point interleaved with a pending collective. */
    OK(MPI_Ibarrier(d, &rq[0]));
    int next = (rank + 1) % size, prev = (rank + size - 1) % size, x = -1;
    OK(MPI_Sendrecv(&rank, 1, MPI_INT, next, 0, &x, 1, MPI_INT, prev, 0, d, MPI_STATUS_IGNORE));
    CHECK(x == prev, "p2p under ibarrier %d", x);
    OK(MPI_Wait(&rq[0], MPI_STATUS_IGNORE));
    OK(MPI_Comm_free(&d));
}

static void large(void) {
    int n = 1 << 20;
    double *s = malloc(n * sizeof(double)), *r = malloc(n * sizeof(double));
    for (int i = 0; i < n; i++) s[i] = rank + i % 7;
    OK(MPI_Allreduce(s, r, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD));
    for (int i = 0; i < n; i += 4099) {
        double e = size * (size - 1) / 2.0 + size * (i % 7);
        if (r[i] != e) { CHECK(0, "large allreduce %d: %g want %g", i, r[i], e); break; }
    }
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    MPI_Status st;
    OK(MPI_Sendrecv(s, n, MPI_DOUBLE, next, 5, r, n, MPI_DOUBLE, prev, 5, MPI_COMM_WORLD, &st));
    int c;
    OK(MPI_Get_count(&st, MPI_DOUBLE, &c));
    CHECK(c == n && r[n - 1] == prev + (n - 1) % 7, "large sendrecv count %d", c);
    if (rank == 0) for (int i = 0; i < n; i++) s[i] = i;
    OK(MPI_Bcast(s, n, MPI_DOUBLE, 0, MPI_COMM_WORLD));
    CHECK(s[n - 1] == n - 1 && s[12345] == 12345, "large bcast");
    /* Large synchronous send. */
    if (size >= 2) {
        if (rank == 0) OK(MPI_Ssend(s, n, MPI_DOUBLE, 1, 6, MPI_COMM_WORLD));
        if (rank == 1) {
            MPI_Status ps;
            OK(MPI_Probe(0, 6, MPI_COMM_WORLD, &ps));
            OK(MPI_Get_count(&ps, MPI_DOUBLE, &c));
            CHECK(c == n, "probe of large ssend count %d", c);
            OK(MPI_Recv(r, n, MPI_DOUBLE, 0, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            CHECK(r[n - 1] == n - 1, "large ssend data");
        }
    }
    free(s); free(r);
}

static void zeros(void) {
    /* Zero counts in every collective. */
    int x = 7, y = 8, *rc = calloc(size, sizeof(int)), *dp = malloc(size * sizeof(int));
    for (int q = 0; q < size; q++) dp[q] = 100 + q; /* past the end: count 0 */
    OK(MPI_Bcast(&x, 0, MPI_INT, 0, MPI_COMM_WORLD));
    OK(MPI_Gather(&x, 0, MPI_INT, &x, 0, MPI_INT, 0, MPI_COMM_WORLD));
    OK(MPI_Gatherv(&x, 0, MPI_INT, &x, rc, dp, MPI_INT, 0, MPI_COMM_WORLD));
    OK(MPI_Scatterv(&x, rc, dp, MPI_INT, &x, 0, MPI_INT, 0, MPI_COMM_WORLD));
    OK(MPI_Allgatherv(&x, 0, MPI_INT, &x, rc, dp, MPI_INT, MPI_COMM_WORLD));
    OK(MPI_Alltoallv(&y, rc, dp, MPI_INT, &x, rc, dp, MPI_INT, MPI_COMM_WORLD));
    OK(MPI_Reduce(&x, &x, 0, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD));
    OK(MPI_Allreduce(MPI_IN_PLACE, &x, 0, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    OK(MPI_Reduce_scatter(MPI_IN_PLACE, &x, rc, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    OK(MPI_Scan(&x, &x, 0, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    CHECK(x == 7, "zero counts wrote %d", x);
    /* Only rank 0 contributes to a Gatherv. */
    int mine[2] = {rank, rank}, got[2] = {-1, -1};
    rc[0] = 2; dp[0] = 0;
    OK(MPI_Gatherv(mine, rank == 0 ? 2 : 0, MPI_INT, got, rc, dp, MPI_INT, 0, MPI_COMM_WORLD));
    if (rank == 0) CHECK(got[0] == 0 && got[1] == 0, "one-contributor gatherv");
    OK(MPI_Allgatherv(mine, rank == 0 ? 2 : 0, MPI_INT, got, rc, dp, MPI_INT, MPI_COMM_WORLD));
    CHECK(got[0] == 0 && got[1] == 0, "one-contributor allgatherv %d %d", got[0], got[1]);
    free(rc); free(dp);
}

static void alltoallw(void) {
    /* Rank r sends to q: (q+1) ints as a contiguous type at byte offset
     * 64*q; receives from q into a vector (stride 2) at offset 128*q. */
    int *sb = malloc(64 * size), *rb = malloc(128 * size);
    int *sc = malloc(size * sizeof(int)), *rcn = malloc(size * sizeof(int));
    int *sd = malloc(size * sizeof(int)), *rd = malloc(size * sizeof(int));
    MPI_Datatype *st = malloc(size * sizeof(MPI_Datatype)), *rt = malloc(size * sizeof(MPI_Datatype));
    for (int q = 0; q < size; q++) {
        int k = (q + rank) % 3 + 1; /* ints between rank and q */
        sc[q] = 1; sd[q] = 64 * q;
        OK(MPI_Type_contiguous(k, MPI_INT, &st[q]));
        OK(MPI_Type_commit(&st[q]));
        rcn[q] = 1; rd[q] = 128 * q;
        OK(MPI_Type_vector(k, 1, 2, MPI_INT, &rt[q]));
        OK(MPI_Type_commit(&rt[q]));
        for (int i = 0; i < k; i++) sb[16 * q + i] = rank * 100 + q * 10 + i;
    }
    for (int i = 0; i < 32 * size; i++) rb[i] = -1;
    OK(MPI_Alltoallw(sb, sc, sd, st, rb, rcn, rd, rt, MPI_COMM_WORLD));
    for (int q = 0; q < size; q++) {
        int k = (q + rank) % 3 + 1;
        for (int i = 0; i < k; i++) CHECK(rb[32 * q + 2 * i] == q * 100 + rank * 10 + i, "alltoallw q %d i %d: %d", q, i, rb[32 * q + 2 * i]);
        CHECK(rb[32 * q + 1] == -1, "alltoallw gap written");
    }
    for (int q = 0; q < size; q++) { OK(MPI_Type_free(&st[q])); OK(MPI_Type_free(&rt[q])); }
    free(sb); free(rb); free(sc); free(rcn); free(sd); free(rd); free(st); free(rt);
}

static void uop(void *in, void *io, int *n, MPI_Datatype *t) {
    (void)t;
    /* a o b = a: associative, not commutative */
    for (int i = 0; i < *n; i++) ((int *)io)[i] = ((int *)in)[i];
}

static void local(void) {
    int a[3] = {1, 2, 3}, b[3] = {10, 20, 30};
    OK(MPI_Reduce_local(a, b, 3, MPI_INT, MPI_SUM));
    CHECK(b[0] == 11 && b[2] == 33, "reduce_local sum");
    struct { double v; int i; } p[2] = {{1.0, 3}, {5.0, 1}}, q[2] = {{1.0, 2}, {4.0, 0}};
    OK(MPI_Reduce_local(p, q, 2, MPI_DOUBLE_INT, MPI_MAXLOC));
    CHECK(q[0].v == 1.0 && q[0].i == 2 && q[1].v == 5.0 && q[1].i == 1, "reduce_local maxloc %g %d %g %d", q[0].v, q[0].i, q[1].v, q[1].i);
    MPI_Op op;
    OK(MPI_Op_create(uop, 0, &op));
    OK(MPI_Reduce_local(a, b, 3, MPI_INT, op));
    CHECK(b[0] == 1 && b[1] == 2, "reduce_local user %d %d", b[0], b[1]);
    /* A non-commutative user op in a reduction: fold in rank order. */
    int v = rank + 1, r = 0;
    OK(MPI_Allreduce(&v, &r, 1, MPI_INT, op, MPI_COMM_WORLD));
    CHECK(r == 1, "noncommutative reduction %d want rank 0's 1", r);
    int sc = -1;
    OK(MPI_Scan(&v, &sc, 1, MPI_INT, op, MPI_COMM_WORLD));
    CHECK(sc == 1, "noncommutative scan %d", sc);
    OK(MPI_Op_free(&op));
}

static void persist_bsend(void) {
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    int sz = 4 * (sizeof(int) + MPI_BSEND_OVERHEAD);
    void *b = malloc(sz);
    OK(MPI_Buffer_attach(b, sz));
    int v = 0, in = -1;
    MPI_Request rq[2];
    OK(MPI_Bsend_init(&v, 1, MPI_INT, next, 11, MPI_COMM_WORLD, &rq[0]));
    OK(MPI_Recv_init(&in, 1, MPI_INT, prev, 11, MPI_COMM_WORLD, &rq[1]));
    for (int it = 0; it < 5; it++) {
        v = rank + it;
        OK(MPI_Start(&rq[1]));
        OK(MPI_Start(&rq[0]));
        OK(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
        CHECK(in == prev + it, "bsend_init it %d: %d", it, in);
    }
    OK(MPI_Request_free(&rq[0]));
    OK(MPI_Request_free(&rq[1]));
    void *p;
    OK(MPI_Buffer_detach(&p, &sz));
    free(b);
    /* Ibsend, Irsend, Issend. */
    int o[3] = {rank, rank + 1, rank + 2}, i3[3] = {-1, -1, -1};
    MPI_Request r6[6];
    OK(MPI_Irecv(&i3[0], 1, MPI_INT, prev, 20, MPI_COMM_WORLD, &r6[0]));
    OK(MPI_Irecv(&i3[1], 1, MPI_INT, prev, 21, MPI_COMM_WORLD, &r6[1]));
    OK(MPI_Irecv(&i3[2], 1, MPI_INT, prev, 22, MPI_COMM_WORLD, &r6[2]));
    OK(MPI_Barrier(MPI_COMM_WORLD));
    sz = 64 + MPI_BSEND_OVERHEAD;
    b = malloc(sz);
    OK(MPI_Buffer_attach(b, sz));
    OK(MPI_Ibsend(&o[0], 1, MPI_INT, next, 20, MPI_COMM_WORLD, &r6[3]));
    OK(MPI_Irsend(&o[1], 1, MPI_INT, next, 21, MPI_COMM_WORLD, &r6[4]));
    OK(MPI_Issend(&o[2], 1, MPI_INT, next, 22, MPI_COMM_WORLD, &r6[5]));
    int flag = 0, guard = 0;
    while (!flag && guard++ < 10000000) OK(MPI_Testall(6, r6, &flag, MPI_STATUSES_IGNORE));
    CHECK(flag && i3[0] == prev && i3[1] == prev + 1 && i3[2] == prev + 2, "i*send %d %d %d", i3[0], i3[1], i3[2]);
    OK(MPI_Buffer_detach(&p, &sz));
    free(b);
}

static void get_status(void) {
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    int in = -1, flag = 0;
    MPI_Request r;
    MPI_Status st;
    OK(MPI_Irecv(&in, 1, MPI_INT, prev, 30, MPI_COMM_WORLD, &r));
    OK(MPI_Send(&rank, 1, MPI_INT, next, 30, MPI_COMM_WORLD));
    int guard = 0;
    while (!flag && guard++ < 10000000) OK(MPI_Request_get_status(r, &flag, &st));
    CHECK(flag && r != MPI_REQUEST_NULL && st.MPI_SOURCE == prev && st.MPI_TAG == 30, "get_status flag %d", flag);
    OK(MPI_Wait(&r, &st));
    CHECK(in == prev && st.MPI_SOURCE == prev, "wait after get_status");
    OK(MPI_Request_get_status(MPI_REQUEST_NULL, &flag, &st));
    CHECK(flag && st.MPI_SOURCE == MPI_ANY_SOURCE && st.MPI_TAG == MPI_ANY_TAG, "get_status null");
    /* Status of a completed send: source and tag are not defined, error is. */
    OK(MPI_Isend(&rank, 1, MPI_INT, next, 31, MPI_COMM_WORLD, &r));
    OK(MPI_Recv(&in, 1, MPI_INT, prev, 31, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    OK(MPI_Wait(&r, &st));
    int cancelled = 1;
    OK(MPI_Test_cancelled(&st, &cancelled));
    CHECK(!cancelled, "send reported cancelled");
}

static void exscan_inplace(void) {
    int v[2] = {rank + 1, 100};
    OK(MPI_Exscan(MPI_IN_PLACE, v, 1, MPI_INT, MPI_PROD, MPI_COMM_WORLD));
    int e = 1;
    for (int q = 0; q < rank; q++) e *= q + 1;
    if (rank > 0) CHECK(v[0] == e, "exscan in place prod %d want %d", v[0], e);
    CHECK(v[1] == 100, "exscan wrote past count");
    /* Sendrecv_replace with a vector type. */
    int m[6] = {rank, -1, rank + 1, -1, rank + 2, -1};
    MPI_Datatype vt;
    OK(MPI_Type_vector(3, 1, 2, MPI_INT, &vt));
    OK(MPI_Type_commit(&vt));
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    OK(MPI_Sendrecv_replace(m, 1, vt, next, 40, prev, 40, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK(m[0] == prev && m[2] == prev + 1 && m[4] == prev + 2 && m[1] == -1 && m[3] == -1, "sendrecv_replace vector %d %d %d", m[0], m[2], m[4]);
    OK(MPI_Type_free(&vt));
}

int main(int argc, char **argv) {
    start(&argc, &argv);
    in_status();
    many();
    nbcolls();
    large();
    zeros();
    alltoallw();
    local();
    persist_bsend();
    get_status();
    exscan_inplace();
    return finish("misc");
}
