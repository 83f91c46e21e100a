/* intercoll: the intercommunicator collectives beyond the blocking eight:
 * the non-blocking and persistent forms, the v- and w-forms and
 * Reduce_scatter(_block), with unequal groups (even and odd world ranks),
 * roots on both sides, uneven counts and displacements, and a
 * non-commutative user operation (2x2 integer matrix products, whose order
 * the standard fixes: the remote group's rank order). Self-checking on any
 * number of ranks (one rank: nothing to check). Open MPI 4.1 passes it (it
 * lacks the MPI-4 persistent collectives, skipped there); MPICH 4.0.2 does
 * not: its MPI_Ibcast on an intercommunicator with the root at a local rank
 * other than 0 delivers nothing (8 ranks) or fails an internal assertion
 * (5 ranks). */
#include "dt.h"

static MPI_Comm ic;
static int A, L, R, lr; /* in group A (even world ranks); sizes; local rank */

static void waitok(MPI_Request *q) { OK(MPI_Wait(q, MPI_STATUS_IGNORE)); }

/* remote member j's value i in a test named by base */
static int val(int base, int color, int j, int i) { return base + color * 100000 + 1000 * j + i; }

static void bcast(void) {
    /* root: local rank L-1 of A; then rank 0 of B */
    for (int side = 0; side < 2; side++) {
        int inRoot = side == 0 ? A : !A, rootl = side == 0 ? (A ? L - 1 : R - 1) : 0;
        int buf[50];
        for (int i = 0; i < 50; i++) buf[i] = inRoot && lr == rootl ? 7 * i + side : -1;
        int root = inRoot ? (lr == rootl ? MPI_ROOT : MPI_PROC_NULL) : rootl;
        MPI_Request q;
        OK(MPI_Ibcast(buf, 50, MPI_INT, root, ic, &q));
        waitok(&q);
        for (int i = 0; i < 50; i++) {
            int want = inRoot ? (lr == rootl ? 7 * i + side : -1) : 7 * i + side;
            CHECK(buf[i] == want, "ibcast side %d buf[%d] = %d, want %d", side, i, buf[i], want);
        }
    }
}

static void gatherv_scatterv(void) {
    /* Igatherv to B's rank 0 from A (A member j sends j+1 ints), placed in
     * reverse order; Iscatterv from A's rank 0 to B likewise. */
    int cnt[64], dsp[64], buf[4096], sb[64];
    if (A) {
        for (int i = 0; i < lr + 1; i++) sb[i] = val(1, 0, lr, i);
        MPI_Request q;
        OK(MPI_Igatherv(sb, lr + 1, MPI_INT, NULL, NULL, NULL, MPI_INT, 0, ic, &q));
        waitok(&q);
    } else {
        int off = 0;
        for (int j = R - 1; j >= 0; j--) { cnt[j] = j + 1; dsp[j] = off; off += j + 1 + 2; }
        for (int i = 0; i < off; i++) buf[i] = -5;
        MPI_Request q;
        OK(MPI_Igatherv(NULL, 0, MPI_INT, buf, cnt, dsp, MPI_INT, lr == 0 ? MPI_ROOT : MPI_PROC_NULL, ic, &q));
        waitok(&q);
        if (lr == 0)
            for (int j = 0; j < R; j++) {
                for (int i = 0; i < j + 1; i++)
                    CHECK(buf[dsp[j] + i] == val(1, 0, j, i), "igatherv from %d [%d] = %d", j, i, buf[dsp[j] + i]);
                CHECK(buf[dsp[j] + j + 1] == -5, "igatherv wrote past block %d", j);
            }
        else
            CHECK(buf[0] == -5, "igatherv wrote at a non-root");
    }
    if (A) {
        int off = 0;
        for (int j = R - 1; j >= 0; j--) { cnt[j] = j + 1; dsp[j] = off; off += j + 1; }
        for (int j = 0; j < R; j++)
            for (int i = 0; i < j + 1; i++) buf[dsp[j] + i] = val(2, 0, j, i);
        MPI_Request q;
        OK(MPI_Iscatterv(buf, cnt, dsp, MPI_INT, NULL, 0, MPI_INT, lr == 0 ? MPI_ROOT : MPI_PROC_NULL, ic, &q));
        waitok(&q);
    } else {
        for (int i = 0; i < 64; i++) sb[i] = -5;
        MPI_Request q;
        OK(MPI_Iscatterv(NULL, NULL, NULL, MPI_INT, sb, lr + 1, MPI_INT, 0, ic, &q));
        waitok(&q);
        for (int i = 0; i < lr + 1; i++) CHECK(sb[i] == val(2, 0, lr, i), "iscatterv [%d] = %d", i, sb[i]);
        CHECK(sb[lr + 1] == -5, "iscatterv wrote past its block");
    }
}

static void allgatherv_alltoallv(void) {
    int cnt[64], dsp[64], buf[4096], sb[4096];
    int me = A ? 0 : 1, other = 1 - me;
    for (int i = 0; i < lr + 1; i++) sb[i] = val(3, me, lr, i);
    int off = 0;
    for (int j = 0; j < R; j++) { cnt[j] = j + 1; dsp[j] = off + 1; off += j + 2; }
    for (int i = 0; i < off + 1; i++) buf[i] = -5;
    MPI_Request q;
    OK(MPI_Iallgatherv(sb, lr + 1, MPI_INT, buf, cnt, dsp, MPI_INT, ic, &q));
    waitok(&q);
    for (int j = 0; j < R; j++) {
        for (int i = 0; i < j + 1; i++)
            CHECK(buf[dsp[j] + i] == val(3, other, j, i), "iallgatherv from %d [%d] = %d", j, i, buf[dsp[j] + i]);
        CHECK(buf[dsp[j] - 1] == -5, "iallgatherv wrote before block %d", j);
    }
    /* Alltoallv: to remote j, j+lr+1 ints; from remote j, lr+j+1 ints. */
    int sc[64], sd[64], rc[64], rd[64];
    int so = 0, ro = 0;
    for (int j = 0; j < R; j++) {
        sc[j] = j + lr + 1; sd[j] = so;
        for (int i = 0; i < sc[j]; i++) sb[so + i] = val(4, me, lr, 10 * j + i);
        so += sc[j];
        rc[j] = lr + j + 1; rd[j] = ro; ro += rc[j] + 1;
    }
    for (int i = 0; i < ro; i++) buf[i] = -5;
    for (int pass = 0; pass < 2; pass++) {
        if (pass == 0) {
            OK(MPI_Ialltoallv(sb, sc, sd, MPI_INT, buf, rc, rd, MPI_INT, ic, &q));
            waitok(&q);
        } else {
            /* Alltoallw with byte displacements, the same exchange */
            MPI_Datatype t[64];
            int sdb[64], rdb[64];
            for (int j = 0; j < R; j++) { t[j] = MPI_INT; sdb[j] = sd[j] * 4; rdb[j] = rd[j] * 4; }
            for (int i = 0; i < ro; i++) buf[i] = -5;
            OK(MPI_Ialltoallw(sb, sc, sdb, t, buf, rc, rdb, t, ic, &q));
            waitok(&q);
        }
        for (int j = 0; j < R; j++) {
            for (int i = 0; i < rc[j]; i++)
                CHECK(buf[rd[j] + i] == val(4, other, j, 10 * lr + i), "pass %d ialltoallv/w from %d [%d] = %d", pass, j, i, buf[rd[j] + i]);
            CHECK(buf[rd[j] + rc[j]] == -5, "pass %d wrote past block %d", pass, j);
        }
    }
}

/* 2x2 integer matrices, a non-commutative associative operation */
static void matmul(void *in, void *inout, int *len, MPI_Datatype *t) {
    int *a = in, *b = inout;
    for (int k = 0; k < *len; k++, a += 4, b += 4) {
        int c[4] = {a[0] * b[0] + a[1] * b[2], a[0] * b[1] + a[1] * b[3], a[2] * b[0] + a[3] * b[2], a[2] * b[1] + a[3] * b[3]};
        memcpy(b, c, sizeof c);
    }
}

static void mat(int j, int k, int *m) { m[0] = j + 1 + k; m[1] = 1; m[2] = 1; m[3] = k % 2; }

static void product(int n, int k, int *out) { /* M(0,k) * M(1,k) * ... * M(n-1,k) */
    int m[4];
    out[0] = 1; out[1] = 0; out[2] = 0; out[3] = 1;
    for (int j = n - 1; j >= 0; j--) {
        int one = 1;
        mat(j, k, m);
        matmul(m, out, &one, NULL);
    }
}

static void reductions(void) {
    MPI_Datatype m4;
    MPI_Op op;
    OK(MPI_Type_contiguous(4, MPI_INT, &m4));
    OK(MPI_Type_commit(&m4));
    OK(MPI_Op_create(matmul, 0, &op));
    enum { K = 3 };
    int sb[4 * K], rb[8 * K], want[4];
    for (int k = 0; k < K; k++) mat(lr, k, sb + 4 * k);
    /* Ireduce to A's last rank of B's matrices */
    for (int i = 0; i < 4 * K; i++) rb[i] = -5;
    MPI_Request q;
    int root = A ? (lr == L - 1 ? MPI_ROOT : MPI_PROC_NULL) : R - 1;
    OK(MPI_Ireduce(sb, rb, K, m4, op, root, ic, &q));
    waitok(&q);
    for (int k = 0; k < K; k++) {
        product(R, k, want);
        for (int i = 0; i < 4; i++) {
            int w = A && lr == L - 1 ? want[i] : -5;
            CHECK(rb[4 * k + i] == w, "ireduce k %d [%d] = %d, want %d", k, i, rb[4 * k + i], w);
        }
    }
    /* Iallreduce both ways, and as a persistent collective started twice */
    MPI_Request p = MPI_REQUEST_NULL;
#if MPI_VERSION >= 4 /* persistent collectives: MPI-4 */
    OK(MPI_Allreduce_init(sb, rb, K, m4, op, ic, MPI_INFO_NULL, &p));
#endif
    MPI_Op op3 = MPI_OP_NULL; /* freed after the init, before the starts */
#if MPI_VERSION >= 4
    MPI_Request p3;
    OK(MPI_Op_create(matmul, 0, &op3));
    OK(MPI_Allreduce_init(sb, rb + 4 * K, K, m4, op3, ic, MPI_INFO_NULL, &p3));
    OK(MPI_Op_free(&op3));
    for (int pass = 0; pass < 2; pass++) {
        for (int i = 0; i < 4 * K; i++) rb[4 * K + i] = -5;
        OK(MPI_Start(&p3));
        waitok(&p3);
        for (int k = 0; k < K; k++) {
            product(R, k, want);
            for (int i = 0; i < 4; i++)
                CHECK(rb[4 * K + 4 * k + i] == want[i], "allreduce_init with a freed op, pass %d k %d [%d] = %d", pass, k, i, rb[4 * K + 4 * k + i]);
        }
    }
    OK(MPI_Request_free(&p3));
#endif
    for (int pass = 0; pass < (p == MPI_REQUEST_NULL ? 1 : 3); pass++) {
        for (int i = 0; i < 4 * K; i++) rb[i] = -5;
        if (pass == 0) {
            /* the operation and datatype freed while the request is
             * pending, as the standard allows */
            MPI_Datatype m4d;
            MPI_Op op2;
            OK(MPI_Type_dup(m4, &m4d));
            OK(MPI_Op_create(matmul, 0, &op2));
            OK(MPI_Iallreduce(sb, rb, K, m4d, op2, ic, &q));
            OK(MPI_Op_free(&op2));
            OK(MPI_Type_free(&m4d));
            waitok(&q);
        } else {
            OK(MPI_Start(&p));
            waitok(&p);
        }
        for (int k = 0; k < K; k++) {
            product(R, k, want);
            for (int i = 0; i < 4; i++)
                CHECK(rb[4 * k + i] == want[i], "pass %d iallreduce k %d [%d] = %d, want %d", pass, k, i, rb[4 * k + i], want[i]);
        }
    }
    if (p != MPI_REQUEST_NULL)
        OK(MPI_Request_free(&p));
    OK(MPI_Op_free(&op));
    OK(MPI_Type_free(&m4));
    /* Reduce_scatter(_block): vectors of L*R ints; remote j gives
     * 1000*j + x; this member's segment comes back summed. */
    int T = L * R, *v = malloc(sizeof(int) * T), *r = malloc(sizeof(int) * (T + 1)), cnt[64];
    for (int x = 0; x < T; x++) v[x] = val(0, 0, lr, x);
    for (int form = 0; form < 4; form++) {
        int seg = R, at = lr * R;
        for (int i = 0; i < L; i++) cnt[i] = R;
        if (form == 2 && L > 1 && R > 1) { /* uneven: one item moves from member 0 to the last */
            cnt[0]--, cnt[L - 1]++;
            at = lr == 0 ? 0 : lr * R - 1;
            seg = cnt[lr];
        }
        if (form == 3 && L > 1) { /* member 0 gets nothing, the last its items too */
            cnt[0] = 0, cnt[L - 1] += R;
            at = lr == 0 ? 0 : (lr - 1) * R;
            seg = cnt[lr];
        }
        for (int i = 0; i <= T; i++) r[i] = -5;
        if (form == 0)
            OK(MPI_Reduce_scatter_block(v, r, R, MPI_INT, MPI_SUM, ic));
        else if (form == 1) {
            OK(MPI_Ireduce_scatter_block(v, r, R, MPI_INT, MPI_SUM, ic, &q));
            waitok(&q);
        } else if (form == 2)
            OK(MPI_Reduce_scatter(v, r, cnt, MPI_INT, MPI_SUM, ic));
        else {
            OK(MPI_Ireduce_scatter(v, r, cnt, MPI_INT, MPI_SUM, ic, &q));
            waitok(&q);
        }
        for (int i = 0; i < seg; i++) {
            int w = 1000 * (R * (R - 1) / 2) + R * (at + i);
            CHECK(r[i] == w, "reduce_scatter form %d [%d] = %d, want %d", form, i, r[i], w);
        }
        CHECK(r[seg] == -5, "reduce_scatter form %d wrote past its segment", form);
    }
    free(v);
    free(r);
}

static void errors_and_progress(void) {
    OK(MPI_Comm_set_errhandler(ic, MPI_ERRORS_RETURN));
    int x = 1, y = 0, cls = -1;
    int rc = MPI_Scan(&x, &y, 1, MPI_INT, MPI_SUM, ic);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_COMM, "MPI_Scan on an intercommunicator: class %d", cls);
    rc = MPI_Allreduce(MPI_IN_PLACE, &y, 1, MPI_INT, MPI_SUM, ic);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_BUFFER, "MPI_IN_PLACE on an intercommunicator: class %d", cls);
    /* recvbuf = NULL where a result lands (every member passes it, so none
     * enters the exchange; they used to panic in the reduction) */
    int sb[64], cnt[64];
    MPI_Request nq;
    for (int i = 0; i < 64; i++) sb[i] = i, cnt[i] = 1;
    rc = MPI_Reduce_scatter_block(sb, NULL, 2, MPI_INT, MPI_SUM, ic);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_BUFFER, "MPI_Reduce_scatter_block with recvbuf = NULL: class %d", cls);
    rc = MPI_Reduce_scatter(sb, NULL, cnt, MPI_INT, MPI_SUM, ic);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_BUFFER, "MPI_Reduce_scatter with recvbuf = NULL: class %d", cls);
    rc = MPI_Iallreduce(sb, NULL, 4, MPI_INT, MPI_SUM, ic, &nq);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_BUFFER, "MPI_Iallreduce with recvbuf = NULL: class %d", cls);
    if (A && lr == 0) { /* the root alone: it fails before the exchange */
        rc = MPI_Ireduce(sb, NULL, 4, MPI_INT, MPI_SUM, MPI_ROOT, ic, &nq);
        MPI_Error_class(rc, &cls);
        CHECK(cls == MPI_ERR_BUFFER, "MPI_Ireduce at MPI_ROOT with recvbuf = NULL: class %d", cls);
    }
#if MPI_VERSION >= 4
    rc = MPI_Reduce_scatter_block_init(sb, NULL, 2, MPI_INT, MPI_SUM, ic, MPI_INFO_NULL, &nq);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_BUFFER, "MPI_Reduce_scatter_block_init with recvbuf = NULL: class %d", cls);
    /* a bad datatype fails the persistent init, not its first MPI_Start */
    {
        MPI_Datatype unc, uts[64];
        int rb2[64], zd[64];
        OK(MPI_Type_contiguous(2, MPI_INT, &unc)); /* never committed */
        for (int i = 0; i < 64; i++) uts[i] = unc, zd[i] = 0;
        rc = MPI_Bcast_init(sb, 1, unc, A ? (lr == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0, ic, MPI_INFO_NULL, &nq);
        MPI_Error_class(rc, &cls);
        CHECK(cls == MPI_ERR_TYPE || (A && lr != 0 && rc == MPI_SUCCESS),
              "MPI_Bcast_init with an uncommitted type: class %d", cls);
        if (rc == MPI_SUCCESS) OK(MPI_Request_free(&nq));
        rc = MPI_Allgather_init(sb, 1, unc, rb2, 2, MPI_INT, ic, MPI_INFO_NULL, &nq);
        MPI_Error_class(rc, &cls);
        CHECK(cls == MPI_ERR_TYPE, "MPI_Allgather_init with an uncommitted sendtype: class %d", cls);
        rc = MPI_Alltoallv_init(sb, cnt, zd, MPI_INT, rb2, cnt, zd, unc, ic, MPI_INFO_NULL, &nq);
        MPI_Error_class(rc, &cls);
        CHECK(cls == MPI_ERR_TYPE, "MPI_Alltoallv_init with an uncommitted recvtype: class %d", cls);
        rc = MPI_Alltoallw_init(sb, cnt, zd, uts, rb2, cnt, zd, uts, ic, MPI_INFO_NULL, &nq);
        MPI_Error_class(rc, &cls);
        CHECK(cls == MPI_ERR_TYPE, "MPI_Alltoallw_init with uncommitted types: class %d", cls);
        OK(MPI_Type_free(&unc));
    }
#endif
    OK(MPI_Comm_set_errhandler(ic, MPI_ERRORS_ARE_FATAL));
    /* A's rank 0 posts an Ibarrier and then sends to B's rank 0, which
     * receives before entering the barrier: the barrier must not need
     * A's Wait to have been called first, nor block the post. */
    MPI_Request q;
    if (A && lr == 0) {
        OK(MPI_Ibarrier(ic, &q));
        OK(MPI_Send(&x, 1, MPI_INT, 0, 9, ic));
        waitok(&q);
    } else if (!A && lr == 0) {
        OK(MPI_Recv(&y, 1, MPI_INT, 0, 9, ic, MPI_STATUS_IGNORE));
        CHECK(y == 1, "message before the barrier: %d", y);
        OK(MPI_Ibarrier(ic, &q));
        waitok(&q);
    } else {
        OK(MPI_Ibarrier(ic, &q));
        waitok(&q);
    }
#if MPI_VERSION >= 4
    /* Bcast_init started twice, root on A's side */
    int b[3] = {0, 0, 0};
    OK(MPI_Bcast_init(b, 3, MPI_INT, A ? (lr == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0, ic, MPI_INFO_NULL, &q));
    for (int pass = 1; pass <= 2; pass++) {
        if (A && lr == 0) b[0] = b[1] = b[2] = 40 + pass;
        OK(MPI_Start(&q));
        waitok(&q);
        if (!A) CHECK(b[0] == 40 + pass && b[2] == 40 + pass, "bcast_init pass %d: %d", pass, b[0]);
    }
    OK(MPI_Request_free(&q));
#endif
}

int main(int argc, char **argv) {
    start(&argc, &argv);
    if (size >= 2) {
        MPI_Comm local;
        A = rank % 2 == 0;
        OK(MPI_Comm_split(MPI_COMM_WORLD, !A, rank, &local));
        OK(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, A ? 1 : 0, 5, &ic));
        OK(MPI_Comm_size(ic, &L));
        OK(MPI_Comm_remote_size(ic, &R));
        OK(MPI_Comm_rank(ic, &lr));
        bcast();
        gatherv_scatterv();
        allgatherv_alltoallv();
        reductions();
        errors_and_progress();
        OK(MPI_Comm_free(&ic));
        OK(MPI_Comm_free(&local));
    }
    return finish("intercoll");
}
