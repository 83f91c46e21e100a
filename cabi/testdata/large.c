/* large: the large-count forms (MPI_X_c) of point-to-point calls and
 * collectives, persistent collectives (MPI_X_init) and their rules,
 * MPI_Bsend_init, MPI_Isendrecv(_replace), MPI_Reduce_local, MPI_Op_create_c
 * generalized requests, partitioned communication, user error classes,
 * attributes on datatypes, the buffers of buffered sends (MPI 4.1), MPI_Cart_map, MPI_Graph_map, MPI_Type_match_size. Every result is checked against a
 * serial computation. Prints "large ok <rank>".
 *
 * With an argument, one case under MPI_ERRORS_ARE_FATAL (its message is
 * checked by the Go test): "bigcount", "active", "gfree", "gcancel"; or "big": rank 0 sends
 * 2^31+4096 bytes to rank 1 with MPI_Send_c (about 2 GiB on rank 1). */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

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
#define FAILS(call, class)                                                          \
    do {                                                                            \
        int rc_ = (call);                                                           \
        CHECK(rc_ == (class), "%s returned %d, want %s", #call, rc_, #class);      \
    } while (0)

#define BEYOND ((MPI_Count)1 << 48) /* more than bcsmpi moves in one call */

static int val(int r, int i) { return r * 1000 + i; }

static void p2p_c(void) {
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int out[4], in[4];
    MPI_Status st;
    MPI_Count n;
    for (int k = 0; k < 4; k++)
        out[k] = val(rank, k);

    /* Send_c and Recv_c: even ranks send first. */
    for (int phase = 0; phase < 2; phase++) {
        if ((rank % 2 == 0) == (phase == 0)) {
            OK(MPI_Send_c(out, 4, MPI_INT, right, 1, MPI_COMM_WORLD));
        } else {
            memset(in, 0, sizeof in);
            OK(MPI_Recv_c(in, 4, MPI_INT, left, 1, MPI_COMM_WORLD, &st));
            for (int k = 0; k < 4; k++)
                CHECK(in[k] == val(left, k), "Recv_c in[%d] = %d", k, in[k]);
            OK(MPI_Get_count_c(&st, MPI_INT, &n));
            CHECK(n == 4 && st.MPI_SOURCE == left && st.MPI_TAG == 1, "count %lld source %d", (long long)n, st.MPI_SOURCE);
        }
        if (size == 1) { /* a self-send: send, then receive */
            if (phase == 0) {
                OK(MPI_Recv_c(in, 4, MPI_INT, left, 1, MPI_COMM_WORLD, &st));
                CHECK(in[3] == val(left, 3), "self Recv_c %d", in[3]);
            }
            break;
        }
    }

    /* Isend_c, Irecv_c, Issend_c, Irsend_c. */
    MPI_Request rq[6];
    int in2[4], in3[4];
    OK(MPI_Irecv_c(in, 4, MPI_INT, left, 2, MPI_COMM_WORLD, &rq[0]));
    OK(MPI_Irecv_c(in2, 4, MPI_INT, left, 3, MPI_COMM_WORLD, &rq[1]));
    OK(MPI_Irecv_c(in3, 4, MPI_INT, left, 4, MPI_COMM_WORLD, &rq[2]));
    OK(MPI_Isend_c(out, 4, MPI_INT, right, 2, MPI_COMM_WORLD, &rq[3]));
    OK(MPI_Issend_c(out, 4, MPI_INT, right, 3, MPI_COMM_WORLD, &rq[4]));
    OK(MPI_Irsend_c(out, 4, MPI_INT, right, 4, MPI_COMM_WORLD, &rq[5]));
    OK(MPI_Waitall(6, rq, MPI_STATUSES_IGNORE));
    for (int k = 0; k < 4; k++)
        CHECK(in[k] == val(left, k) && in2[k] == in[k] && in3[k] == in[k], "Isend_c/Irecv_c in[%d] = %d %d %d", k, in[k], in2[k], in3[k]);

    /* Sendrecv_c and Sendrecv_replace_c. */
    OK(MPI_Sendrecv_c(out, 4, MPI_INT, right, 5, in, 4, MPI_INT, left, 5, MPI_COMM_WORLD, &st));
    CHECK(in[2] == val(left, 2), "Sendrecv_c %d", in[2]);
    int rep[4];
    memcpy(rep, out, sizeof rep);
    OK(MPI_Sendrecv_replace_c(rep, 4, MPI_INT, right, 6, left, 6, MPI_COMM_WORLD, &st));
    CHECK(rep[1] == val(left, 1), "Sendrecv_replace_c %d", rep[1]);

    /* Bsend_c with a buffer attached by Buffer_attach_c; Bsend_init. */
    MPI_Count bsize = 4 * (MPI_BSEND_OVERHEAD + (MPI_Count)sizeof out);
    char *bbuf = malloc((size_t)bsize);
    OK(MPI_Buffer_attach_c(bbuf, bsize));
    OK(MPI_Bsend_c(out, 4, MPI_INT, right, 7, MPI_COMM_WORLD));
    OK(MPI_Recv_c(in, 4, MPI_INT, left, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK(in[0] == val(left, 0), "Bsend_c %d", in[0]);
    MPI_Request ps, pr;
    int data[4];
    OK(MPI_Bsend_init(data, 4, MPI_INT, right, 8, MPI_COMM_WORLD, &ps));
    OK(MPI_Recv_init_c(in, 4, MPI_INT, left, 8, MPI_COMM_WORLD, &pr));
    for (int it = 0; it < 3; it++) {
        for (int k = 0; k < 4; k++)
            data[k] = val(rank, k) + it;
        OK(MPI_Start(&pr));
        OK(MPI_Start(&ps));
        OK(MPI_Wait(&ps, MPI_STATUS_IGNORE));
        OK(MPI_Wait(&pr, &st));
        CHECK(pr != MPI_REQUEST_NULL && ps != MPI_REQUEST_NULL, "persistent requests were freed by Wait");
        for (int k = 0; k < 4; k++)
            CHECK(in[k] == val(left, k) + it, "Bsend_init start %d: in[%d] = %d", it, k, in[k]);
    }
    OK(MPI_Request_free(&ps));
    OK(MPI_Request_free(&pr));
    void *got;
    MPI_Count gotsize;
    OK(MPI_Buffer_detach_c(&got, &gotsize));
    CHECK(got == bbuf && gotsize == bsize, "Buffer_detach_c gave %p %lld", got, (long long)gotsize);
    free(bbuf);

    /* Send_init_c, Ssend_init_c, Rsend_init_c. */
    MPI_Request p3[3], r3[3];
    int in4[3][4];
    OK(MPI_Send_init_c(out, 4, MPI_INT, right, 9, MPI_COMM_WORLD, &p3[0]));
    OK(MPI_Ssend_init_c(out, 4, MPI_INT, right, 10, MPI_COMM_WORLD, &p3[1]));
    OK(MPI_Rsend_init_c(out, 4, MPI_INT, right, 11, MPI_COMM_WORLD, &p3[2]));
    for (int k = 0; k < 3; k++)
        OK(MPI_Irecv_c(in4[k], 4, MPI_INT, left, 9 + k, MPI_COMM_WORLD, &r3[k]));
    OK(MPI_Startall(3, p3));
    OK(MPI_Waitall(3, r3, MPI_STATUSES_IGNORE));
    OK(MPI_Waitall(3, p3, MPI_STATUSES_IGNORE));
    for (int k = 0; k < 3; k++) {
        CHECK(in4[k][3] == val(left, 3), "X_init_c %d: %d", k, in4[k][3]);
        OK(MPI_Request_free(&p3[k]));
    }

    /* Mprobe, then Mrecv_c and Imrecv_c. */
    MPI_Message msg;
    MPI_Request q;
    OK(MPI_Isend_c(out, 4, MPI_INT, right, 12, MPI_COMM_WORLD, &q));
    OK(MPI_Mprobe(left, 12, MPI_COMM_WORLD, &msg, &st));
    OK(MPI_Mrecv_c(in, 4, MPI_INT, &msg, &st));
    CHECK(in[1] == val(left, 1) && msg == MPI_MESSAGE_NULL, "Mrecv_c %d", in[1]);
    OK(MPI_Wait(&q, MPI_STATUS_IGNORE));
    OK(MPI_Isend_c(out, 4, MPI_INT, right, 13, MPI_COMM_WORLD, &q));
    OK(MPI_Mprobe(left, 13, MPI_COMM_WORLD, &msg, &st));
    MPI_Request q2;
    OK(MPI_Imrecv_c(in, 4, MPI_INT, &msg, &q2));
    OK(MPI_Wait(&q2, &st));
    OK(MPI_Wait(&q, MPI_STATUS_IGNORE));
    CHECK(in[2] == val(left, 2), "Imrecv_c %d", in[2]);

    /* Counts are not truncated: 2^48 bytes is refused, not taken as 0. */
    FAILS(MPI_Send_c(out, BEYOND, MPI_BYTE, MPI_PROC_NULL, 0, MPI_COMM_WORLD), MPI_ERR_COUNT);
    FAILS(MPI_Recv_c(in, -1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &st), MPI_ERR_COUNT);
    /* A count beyond INT_MAX with a NULL buffer is refused naming it. */
    FAILS(MPI_Isend_c(NULL, ((MPI_Count)1 << 32) + 4, MPI_BYTE, right, 0, MPI_COMM_WORLD, &q), MPI_ERR_BUFFER);
    /* ... and one within the bound goes through to MPI_PROC_NULL. */
    OK(MPI_Send_c(out, ((MPI_Count)1 << 32) + 4, MPI_BYTE, MPI_PROC_NULL, 0, MPI_COMM_WORLD));
}

/* MPI_Op_create_c's functions take an MPI_Count length. */
static MPI_Count last_len;
static void mix_c(void *in, void *inout, MPI_Count *len, MPI_Datatype *dt) {
    int *a = in, *b = inout;
    CHECK(*dt == MPI_INT, "mix_c datatype");
    last_len = *len;
    for (MPI_Count i = 0; i < *len; i++)
        b[i] = a[i] * 10 + b[i];
}
static void sum_c(void *in, void *inout, MPI_Count *len, MPI_Datatype *dt) {
    (void)dt;
    for (MPI_Count i = 0; i < *len; i++)
        ((int *)inout)[i] += ((int *)in)[i];
}

/* MPI_Reduce_local(_c) and MPI_Op_create_c. */
static void local_ops(void) {
    int in[3] = {1, 2, 3}, io[3] = {10, 20, 30};
    OK(MPI_Reduce_local(in, io, 3, MPI_INT, MPI_SUM));
    CHECK(io[0] == 11 && io[1] == 22 && io[2] == 33, "Reduce_local sum %d %d %d", io[0], io[1], io[2]);
    /* A vector type: every other double. */
    double din[4] = {5, -1, 1, -1}, dio[4] = {2, 7, 9, 7};
    MPI_Datatype vec;
    OK(MPI_Type_vector(2, 1, 2, MPI_DOUBLE, &vec));
    OK(MPI_Type_commit(&vec));
    OK(MPI_Reduce_local_c(din, dio, 1, vec, MPI_MAX));
    CHECK(dio[0] == 5 && dio[1] == 7 && dio[2] == 9 && dio[3] == 7, "Reduce_local_c vector max %g %g %g %g", dio[0], dio[1], dio[2], dio[3]);
    OK(MPI_Type_free(&vec));
    int pin[4] = {3, 1, 8, 0}, pio[4] = {3, 0, 9, 2}; /* (value, index) pairs */
    OK(MPI_Reduce_local(pin, pio, 2, MPI_2INT, MPI_MINLOC));
    CHECK(pio[0] == 3 && pio[1] == 0 && pio[2] == 8 && pio[3] == 0, "Reduce_local minloc %d %d %d %d", pio[0], pio[1], pio[2], pio[3]);
    FAILS(MPI_Reduce_local(din, dio, 1, MPI_DOUBLE, MPI_BAND), MPI_ERR_OP);
    FAILS(MPI_Reduce_local(in, io, -1, MPI_INT, MPI_SUM), MPI_ERR_COUNT);
    /* User operations: inoutbuf = inbuf op inoutbuf, in that order. */
    MPI_Op mix, sum;
    OK(MPI_Op_create_c(mix_c, 0, &mix));
    OK(MPI_Op_create_c(sum_c, 1, &sum));
    io[0] = 4, io[1] = 5, io[2] = 6;
    OK(MPI_Reduce_local(in, io, 3, MPI_INT, mix));
    CHECK(io[0] == 14 && io[1] == 25 && io[2] == 36 && last_len == 3, "Reduce_local with mix_c %d %d %d len %lld", io[0], io[1], io[2], (long long)last_len);
    int mine[2] = {rank, 2 * rank}, tot[2];
    OK(MPI_Allreduce_c(mine, tot, 2, MPI_INT, sum, MPI_COMM_WORLD));
    CHECK(tot[0] == size * (size - 1) / 2 && tot[1] == size * (size - 1), "Allreduce_c with sum_c %d %d", tot[0], tot[1]);
    /* mix is not commutative: the fold is in rank order, ((v0 op v1) op v2)
     * with a op b = 10a + b... applied as inout = in op inout. */
    OK(MPI_Reduce(mine, tot, 1, MPI_INT, mix, 0, MPI_COMM_WORLD));
    if (rank == 0) {
        int want = 0;
        for (int r = 0; r < size; r++)
            want = r == 0 ? 0 : want * 10 + r;
        CHECK(tot[0] == want, "Reduce with mix_c %d, want %d", tot[0], want);
    }
    OK(MPI_Op_free(&mix));
    OK(MPI_Op_free(&sum));
}

/* Generalized requests. */
static int g_frees, g_cancel_complete = -1, g_fail, g_free_fail, g_cancel_fail;
static int g_query(void *extra, MPI_Status *st) {
    CHECK(extra == &g_frees, "query_fn extra_state %p", extra);
    st->MPI_SOURCE = 7, st->MPI_TAG = 8;
    MPI_Status_set_elements(st, MPI_BYTE, 5);
    MPI_Status_set_cancelled(st, 0);
    return g_fail;
}
static int g_free(void *extra) {
    (*(int *)extra)++;
    return g_free_fail;
}
static int g_cancel(void *extra, int complete) {
    (void)extra;
    g_cancel_complete = complete;
    return g_cancel_fail;
}
static void grequests(void) {
    MPI_Request g, gs[2];
    MPI_Status st, sts[2];
    int flag, n;
    OK(MPI_Grequest_start(g_query, g_free, g_cancel, &g_frees, &g));
    OK(MPI_Test(&g, &flag, &st));
    CHECK(!flag && g != MPI_REQUEST_NULL, "Test of an incomplete generalized request: flag %d", flag);
    FAILS(MPI_Wait(&g, &st), MPI_ERR_OTHER); /* nothing else can complete it: a deadlock */
    OK(MPI_Cancel(&g));
    CHECK(g_cancel_complete == 0, "cancel_fn complete = %d", g_cancel_complete);
    OK(MPI_Grequest_complete(g));
    FAILS(MPI_Grequest_complete(g), MPI_ERR_REQUEST);
    CHECK(g_frees == 0, "free_fn before the completion call");
    OK(MPI_Wait(&g, &st));
    OK(MPI_Get_count(&st, MPI_BYTE, &n));
    CHECK(g == MPI_REQUEST_NULL && st.MPI_SOURCE == 7 && st.MPI_TAG == 8 && n == 5 && g_frees == 1,
          "Wait: source %d tag %d count %d frees %d", st.MPI_SOURCE, st.MPI_TAG, n, g_frees);
    /* Freed before it completes: free_fn runs at MPI_Grequest_complete. */
    OK(MPI_Grequest_start(g_query, g_free, g_cancel, &g_frees, &g));
    MPI_Request copy = g;
    OK(MPI_Request_free(&g));
    CHECK(g == MPI_REQUEST_NULL && g_frees == 1, "Request_free: frees %d", g_frees);
    OK(MPI_Grequest_complete(copy));
    CHECK(g_frees == 2, "free_fn after Request_free and complete: %d", g_frees);
    /* query_fn's error is the request's. */
    OK(MPI_Grequest_start(g_query, g_free, g_cancel, &g_frees, &gs[0]));
    OK(MPI_Grequest_start(g_query, g_free, g_cancel, &g_frees, &gs[1]));
    OK(MPI_Grequest_complete(gs[0]));
    OK(MPI_Grequest_complete(gs[1]));
    g_fail = MPI_ERR_OTHER;
    FAILS(MPI_Waitall(2, gs, sts), MPI_ERR_IN_STATUS);
    CHECK(sts[0].MPI_ERROR == MPI_ERR_OTHER && sts[1].MPI_ERROR == MPI_ERR_OTHER && g_frees == 4, "Waitall: errors %d %d, frees %d", sts[0].MPI_ERROR, sts[1].MPI_ERROR, g_frees);
    g_fail = 0;
    FAILS(MPI_Grequest_complete(MPI_REQUEST_NULL), MPI_ERR_REQUEST);
    /* free_fn's error is the freeing call's: the completion call (query_fn's
     * error first), MPI_Request_free, or MPI_Grequest_complete after it. */
    g_free_fail = MPI_ERR_ARG;
    OK(MPI_Grequest_start(g_query, g_free, g_cancel, &g_frees, &g));
    OK(MPI_Grequest_complete(g));
    FAILS(MPI_Wait(&g, &st), MPI_ERR_ARG);
    CHECK(g == MPI_REQUEST_NULL && st.MPI_ERROR == MPI_ERR_ARG && g_frees == 5, "Wait with a failing free_fn: error %d, frees %d", st.MPI_ERROR, g_frees);
    OK(MPI_Grequest_start(g_query, g_free, g_cancel, &g_frees, &g));
    OK(MPI_Grequest_complete(g));
    g_fail = MPI_ERR_OTHER;
    FAILS(MPI_Test(&g, &flag, &st), MPI_ERR_OTHER);
    CHECK(flag && g == MPI_REQUEST_NULL && g_frees == 6, "Test with failing query_fn and free_fn: flag %d, frees %d", flag, g_frees);
    g_fail = 0;
    OK(MPI_Grequest_start(g_query, g_free, g_cancel, &g_frees, &gs[0]));
    OK(MPI_Grequest_start(g_query, g_free, g_cancel, &g_frees, &gs[1]));
    OK(MPI_Grequest_complete(gs[0]));
    OK(MPI_Grequest_complete(gs[1]));
    FAILS(MPI_Waitall(2, gs, sts), MPI_ERR_IN_STATUS);
    CHECK(sts[0].MPI_ERROR == MPI_ERR_ARG && sts[1].MPI_ERROR == MPI_ERR_ARG && g_frees == 8, "Waitall with a failing free_fn: errors %d %d, frees %d", sts[0].MPI_ERROR, sts[1].MPI_ERROR, g_frees);
    OK(MPI_Grequest_start(g_query, g_free, g_cancel, &g_frees, &g));
    OK(MPI_Grequest_complete(g));
    FAILS(MPI_Request_free(&g), MPI_ERR_ARG);
    CHECK(g == MPI_REQUEST_NULL && g_frees == 9, "Request_free with a failing free_fn: frees %d", g_frees);
    OK(MPI_Grequest_start(g_query, g_free, g_cancel, &g_frees, &g));
    copy = g;
    OK(MPI_Request_free(&g));
    FAILS(MPI_Grequest_complete(copy), MPI_ERR_ARG);
    CHECK(g_frees == 10, "Grequest_complete after Request_free with a failing free_fn: frees %d", g_frees);
    g_free_fail = 0;
    /* cancel_fn's error is MPI_Cancel's; a code that is no class is MPI_ERR_OTHER. */
    OK(MPI_Grequest_start(g_query, g_free, g_cancel, &g_frees, &g));
    g_cancel_fail = MPI_ERR_ARG;
    FAILS(MPI_Cancel(&g), MPI_ERR_ARG);
    g_cancel_fail = 12345;
    FAILS(MPI_Cancel(&g), MPI_ERR_OTHER);
    g_cancel_fail = 0;
    OK(MPI_Grequest_complete(g));
    OK(MPI_Wait(&g, &st));
}

/* MPI_Cart_map, MPI_Graph_map, MPI_Type_match_size, MPI_Type_get_value_index. */
static void maps(void) {
    int nr, dims[2] = {1, size > 1 ? size - 1 : 1}, periods[2] = {0, 0};
    OK(MPI_Cart_map(MPI_COMM_WORLD, 2, dims, periods, &nr));
    CHECK(nr == (rank < dims[1] ? rank : MPI_UNDEFINED), "Cart_map gave %d", nr);
    dims[1] = size + 1;
    FAILS(MPI_Cart_map(MPI_COMM_WORLD, 2, dims, periods, &nr), MPI_ERR_DIMS);
    int idx[1] = {0};
    OK(MPI_Graph_map(MPI_COMM_WORLD, 1, idx, NULL, &nr));
    CHECK(nr == (rank == 0 ? 0 : MPI_UNDEFINED), "Graph_map gave %d", nr);
    MPI_Datatype t;
    OK(MPI_Type_match_size(MPI_TYPECLASS_REAL, 8, &t));
    CHECK(t == MPI_REAL8, "Type_match_size real 8");
    OK(MPI_Type_match_size(MPI_TYPECLASS_INTEGER, 4, &t));
    CHECK(t == MPI_INTEGER4, "Type_match_size integer 4");
    FAILS(MPI_Type_match_size(MPI_TYPECLASS_INTEGER, 3, &t), MPI_ERR_ARG);
    OK(MPI_Type_get_value_index(MPI_DOUBLE, MPI_INT, &t));
    CHECK(t == MPI_DOUBLE_INT, "Type_get_value_index(double, int)");
    OK(MPI_Type_get_value_index(MPI_FLOAT, MPI_FLOAT, &t));
    CHECK(t == MPI_DATATYPE_NULL, "Type_get_value_index(float, float) is no predefined pair");
    FAILS(MPI_Type_get_value_index(MPI_DOUBLE, MPI_DATATYPE_NULL, &t), MPI_ERR_TYPE);
}

/* Partitioned communication: 4 partitions of 2 ints to the right. */
static void partitioned(void) {
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int out[8] = {0}, in[8] = {0}, flag;
    MPI_Request ps, pr;
    OK(MPI_Psend_init(out, 4, 2, MPI_INT, right, 30, MPI_COMM_WORLD, MPI_INFO_NULL, &ps));
    OK(MPI_Precv_init_c(in, 4, 2, MPI_INT, left, 30, MPI_COMM_WORLD, MPI_INFO_NULL, &pr));
    FAILS(MPI_Pready(0, ps), MPI_ERR_REQUEST); /* not started */
    FAILS(MPI_Parrived(ps, 0, &flag), MPI_ERR_REQUEST); /* a send */
    for (int it = 0; it < 3; it++) {
        for (int k = 0; k < 8; k++)
            out[k] = -1, in[k] = -2;
        OK(MPI_Start(&pr));
        OK(MPI_Start(&ps));
        for (int k = 6; k < 8; k++)
            out[k] = val(rank, k) + it;
        OK(MPI_Pready(3, ps));
        FAILS(MPI_Pready(3, ps), MPI_ERR_ARG);
        FAILS(MPI_Pready(4, ps), MPI_ERR_ARG);
        if (it == 1) /* the other partitions are not ready: nothing can mark them while this waits */
            FAILS(MPI_Wait(&ps, MPI_STATUS_IGNORE), MPI_ERR_OTHER);
        for (int k = 0; k < 4; k++)
            out[k] = val(rank, k) + it;
        OK(MPI_Pready_range(0, 1, ps));
        out[4] = val(rank, 4) + it, out[5] = val(rank, 5) + it;
        int two[1] = {2};
        OK(MPI_Pready_list(1, two, ps));
        flag = 0;
        while (!flag)
            OK(MPI_Parrived(pr, 1, &flag));
        for (int k = 0; k < 8; k++)
            CHECK(in[k] == val(left, k) + it, "partitioned start %d: in[%d] = %d", it, k, in[k]);
        OK(MPI_Wait(&ps, MPI_STATUS_IGNORE));
        OK(MPI_Wait(&pr, MPI_STATUS_IGNORE));
        OK(MPI_Parrived(pr, 3, &flag)); /* inactive: arrived */
        CHECK(flag == 1, "Parrived on an inactive request: %d", flag);
    }
    FAILS(MPI_Parrived(pr, 4, &flag), MPI_ERR_ARG);
    OK(MPI_Request_free(&ps));
    OK(MPI_Request_free(&pr));
}

/* User error classes, codes and strings. */
static void user_errors(void) {
    int cls, code, code2, c, len, flag, *last;
    char text[MPI_MAX_ERROR_STRING];
    OK(MPI_Add_error_class(&cls));
    CHECK(cls > MPI_ERR_LASTCODE, "Add_error_class gave %d", cls);
    OK(MPI_Add_error_code(cls, &code));
    OK(MPI_Add_error_code(MPI_ERR_ARG, &code2));
    CHECK(code != cls && code2 != code, "codes %d %d %d", cls, code, code2);
    OK(MPI_Add_error_string(code, "the widget broke"));
    OK(MPI_Error_class(code, &c));
    CHECK(c == cls, "Error_class of the code %d", c);
    OK(MPI_Error_class(code2, &c));
    CHECK(c == MPI_ERR_ARG, "Error_class of a code of MPI_ERR_ARG: %d", c);
    OK(MPI_Error_class(cls, &c));
    CHECK(c == cls, "Error_class of the class %d", c);
    OK(MPI_Error_string(code, text, &len));
    CHECK(strcmp(text, "the widget broke") == 0 && len == 16, "Error_string %s %d", text, len);
    OK(MPI_Error_string(cls, text, &len));
    CHECK(len == 0, "Error_string with none set: %s", text);
    OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &last, &flag));
    CHECK(flag && *last == code2, "MPI_LASTUSEDCODE %d, want %d", *last, code2);
    FAILS(MPI_Add_error_string(MPI_ERR_ARG, "no"), MPI_ERR_ARG);
    FAILS(MPI_Add_error_code(12345, &c), MPI_ERR_ARG);
    FAILS(MPI_Remove_error_class(cls), MPI_ERR_ARG); /* it still has a code */
    OK(MPI_Remove_error_string(code));
    OK(MPI_Remove_error_code(code));
    OK(MPI_Remove_error_class(cls));
    FAILS(MPI_Error_class(cls, &c), MPI_ERR_ARG);
    OK(MPI_Remove_error_code(code2));
}

/* Attributes on datatypes. */
static int t_copies, t_deletes;
static int t_copy(MPI_Datatype t, int key, void *extra, void *in, void *out, int *flag) {
    (void)t, (void)key, (void)extra;
    t_copies++;
    *(intptr_t *)out = (intptr_t)in + 100;
    *flag = 1;
    return MPI_SUCCESS;
}
static int t_delete(MPI_Datatype t, int key, void *val, void *extra) {
    (void)t, (void)key, (void)val;
    CHECK(extra == &t_deletes, "delete_fn extra_state");
    t_deletes++;
    return MPI_SUCCESS;
}
static void type_attrs(void) {
    int key, dupkey, ckey, flag;
    void *v;
    MPI_Datatype vec, dup;
    OK(MPI_Type_create_keyval(t_copy, t_delete, &key, &t_deletes));
    OK(MPI_Type_create_keyval(MPI_TYPE_DUP_FN, MPI_TYPE_NULL_DELETE_FN, &dupkey, NULL));
    OK(MPI_Type_vector(2, 1, 3, MPI_INT, &vec));
    OK(MPI_Type_set_attr(vec, key, (void *)(intptr_t)7));
    OK(MPI_Type_set_attr(vec, dupkey, (void *)(intptr_t)9));
    OK(MPI_Type_get_attr(vec, key, &v, &flag));
    CHECK(flag && (intptr_t)v == 7, "Type_get_attr %d %ld", flag, (long)(intptr_t)v);
    OK(MPI_Type_dup(vec, &dup));
    CHECK(t_copies == 1, "copy_fn ran %d times", t_copies);
    OK(MPI_Type_get_attr(dup, key, &v, &flag));
    CHECK(flag && (intptr_t)v == 107, "the copy's attribute %ld", (long)(intptr_t)v);
    OK(MPI_Type_get_attr(dup, dupkey, &v, &flag));
    CHECK(flag && (intptr_t)v == 9, "MPI_TYPE_DUP_FN's copy %ld", (long)(intptr_t)v);
    OK(MPI_Type_set_attr(vec, key, (void *)(intptr_t)8)); /* replaces: deletes the old value */
    CHECK(t_deletes == 1, "delete_fn on replace: %d", t_deletes);
    OK(MPI_Type_free(&dup));
    CHECK(t_deletes == 2, "delete_fn at Type_free: %d", t_deletes);
    OK(MPI_Type_delete_attr(vec, key));
    CHECK(t_deletes == 3, "delete_fn at Type_delete_attr: %d", t_deletes);
    OK(MPI_Type_get_attr(vec, key, &v, &flag));
    CHECK(!flag, "a deleted attribute is still there");
    FAILS(MPI_Type_delete_attr(vec, key), MPI_ERR_KEYVAL);
    OK(MPI_Type_set_attr(MPI_DOUBLE, dupkey, (void *)(intptr_t)5)); /* predefined types take attributes */
    OK(MPI_Type_get_attr(MPI_DOUBLE, dupkey, &v, &flag));
    CHECK(flag && (intptr_t)v == 5, "attribute on MPI_DOUBLE");
    OK(MPI_Type_delete_attr(MPI_DOUBLE, dupkey));
    OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &ckey, NULL));
    FAILS(MPI_Type_set_attr(vec, ckey, NULL), MPI_ERR_KEYVAL);
    FAILS(MPI_Comm_set_attr(MPI_COMM_WORLD, key, NULL), MPI_ERR_KEYVAL);
    OK(MPI_Comm_free_keyval(&ckey));
    OK(MPI_Type_free(&vec));
    OK(MPI_Type_free_keyval(&key));
    CHECK(key == MPI_KEYVAL_INVALID, "Type_free_keyval left %d", key);
    OK(MPI_Type_free_keyval(&dupkey));
}

/* Persistent and _c collectives with a non-contiguous datatype: a column
 * (stride 3) of ints, packed and unpacked at each completion. */
static void derived(void) {
    MPI_Datatype col;
    OK(MPI_Type_vector(4, 1, 3, MPI_INT, &col));
    OK(MPI_Type_commit(&col));
    int m[12];
    MPI_Request q;
    OK(MPI_Bcast_init(m, 1, col, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &q));
    for (int it = 0; it < 2; it++) {
        for (int i = 0; i < 12; i++)
            m[i] = rank == 0 ? 10 * it + i : -1;
        OK(MPI_Start(&q));
        OK(MPI_Wait(&q, MPI_STATUS_IGNORE));
        for (int i = 0; i < 12; i++)
            CHECK(m[i] == (i % 3 == 0 || rank == 0 ? 10 * it + i : -1), "Bcast_init of a column, start %d: m[%d] = %d", it, i, m[i]);
    }
    OK(MPI_Request_free(&q));
    int *all = malloc(sizeof(int) * 12 * size);
    for (int i = 0; i < 12; i++)
        m[i] = val(rank, i);
    for (int i = 0; i < 12 * size; i++)
        all[i] = -1;
    /* Each member's column arrives as 4 contiguous ints. */
    OK(MPI_Allgather_c(m, 1, col, all, 4, MPI_INT, MPI_COMM_WORLD));
    for (int r = 0; r < size; r++)
        for (int k = 0; k < 4; k++)
            CHECK(all[4 * r + k] == val(r, 3 * k), "Allgather_c of a column from %d [%d] = %d", r, k, all[4 * r + k]);
    OK(MPI_Type_free(&col));
    free(all);
}

/* Buffers of buffered sends: a communicator's, the process's, automatic. */
static void buffers(void) {
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int out[2] = {val(rank, 0), val(rank, 1)}, in[2];
    char small[32], big[4 * (MPI_BSEND_OVERHEAD + 64)]; /* small: no room for a message and its header */
    void *p;
    int n;
    MPI_Count nc;
    OK(MPI_Buffer_attach(big, sizeof big));
    OK(MPI_Comm_attach_buffer(MPI_COMM_WORLD, small, sizeof small));
    FAILS(MPI_Comm_attach_buffer(MPI_COMM_WORLD, small, sizeof small), MPI_ERR_BUFFER);
    /* The communicator's buffer is used, and 8 bytes do not fit in it. */
    FAILS(MPI_Bsend(out, 2, MPI_INT, right, 40, MPI_COMM_WORLD), MPI_ERR_BUFFER);
    OK(MPI_Comm_flush_buffer(MPI_COMM_WORLD));
    OK(MPI_Comm_detach_buffer(MPI_COMM_WORLD, &p, &n));
    CHECK(p == small && n == (int)sizeof small, "Comm_detach_buffer gave %p %d", p, n);
    OK(MPI_Bsend(out, 2, MPI_INT, right, 41, MPI_COMM_WORLD)); /* the process's buffer */
    OK(MPI_Recv(in, 2, MPI_INT, left, 41, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK(in[1] == val(left, 1), "Bsend through the process's buffer %d", in[1]);
    OK(MPI_Buffer_flush());
    OK(MPI_Buffer_detach(&p, &n));
    CHECK(p == big, "Buffer_detach gave %p", p);
    OK(MPI_Comm_attach_buffer_c(MPI_COMM_WORLD, MPI_BUFFER_AUTOMATIC, 0));
    for (int k = 0; k < 3; k++)
        OK(MPI_Bsend(out, 2, MPI_INT, right, 42, MPI_COMM_WORLD));
    for (int k = 0; k < 3; k++)
        OK(MPI_Recv(in, 2, MPI_INT, left, 42, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    OK(MPI_Comm_detach_buffer_c(MPI_COMM_WORLD, &p, &nc));
    CHECK(p == MPI_BUFFER_AUTOMATIC && nc == 0, "automatic buffer detached as %p %lld", p, (long long)nc);
    FAILS(MPI_Comm_detach_buffer(MPI_COMM_WORLD, &p, &n), MPI_ERR_BUFFER);
    OK(MPI_Buffer_flush()); /* nothing attached: nothing to flush */
}

/* Isendrecv and Isendrecv_replace, int and _c. */
static void isendrecv(void) {
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int out[3] = {val(rank, 0), val(rank, 1), val(rank, 2)}, in[3] = {0}, rep[3];
    MPI_Request q[2];
    MPI_Status st[2];
    memcpy(rep, out, sizeof rep);
    OK(MPI_Isendrecv(out, 3, MPI_INT, right, 20, in, 3, MPI_INT, left, 20, MPI_COMM_WORLD, &q[0]));
    OK(MPI_Isendrecv_replace(rep, 3, MPI_INT, right, 21, left, 21, MPI_COMM_WORLD, &q[1]));
    OK(MPI_Waitall(2, q, st));
    CHECK(q[0] == MPI_REQUEST_NULL && q[1] == MPI_REQUEST_NULL, "Waitall left the requests");
    for (int k = 0; k < 3; k++)
        CHECK(in[k] == val(left, k) && rep[k] == val(left, k), "Isendrecv in[%d] = %d, rep %d", k, in[k], rep[k]);
    int n;
    OK(MPI_Get_count(&st[0], MPI_INT, &n));
    CHECK(n == 3 && st[0].MPI_SOURCE == left && st[0].MPI_TAG == 20, "Isendrecv status: count %d source %d tag %d", n, st[0].MPI_SOURCE, st[0].MPI_TAG);
    int flag = 0;
    memcpy(rep, out, sizeof rep);
    OK(MPI_Isendrecv_c(out, 3, MPI_INT, right, 22, in, 3, MPI_INT, left, 22, MPI_COMM_WORLD, &q[0]));
    OK(MPI_Isendrecv_replace_c(rep, 3, MPI_INT, right, 23, left, 23, MPI_COMM_WORLD, &q[1]));
    while (!flag)
        OK(MPI_Testall(2, q, &flag, MPI_STATUSES_IGNORE));
    CHECK(in[0] == val(left, 0) && rep[2] == val(left, 2), "Isendrecv_c %d %d", in[0], rep[2]);
    /* One of them completed by Wait, the other by Test. */
    OK(MPI_Isendrecv(out, 3, MPI_INT, right, 24, in, 3, MPI_INT, left, 24, MPI_COMM_WORLD, &q[0]));
    OK(MPI_Wait(&q[0], &st[0]));
    CHECK(in[1] == val(left, 1) && st[0].MPI_SOURCE == left, "Isendrecv Wait %d", in[1]);
    OK(MPI_Isendrecv(out, 3, MPI_INT, MPI_PROC_NULL, 25, in, 3, MPI_INT, MPI_PROC_NULL, 25, MPI_COMM_WORLD, &q[0]));
    OK(MPI_Wait(&q[0], &st[0]));
    CHECK(st[0].MPI_SOURCE == MPI_PROC_NULL, "Isendrecv from MPI_PROC_NULL: source %d", st[0].MPI_SOURCE);
}

/* The collectives' _c forms against a serial computation. */
static void coll_c(void) {
    int P = size;
    int *a = malloc(sizeof(int) * 4 * P), *b = malloc(sizeof(int) * 4 * P * P);
    MPI_Count *cnt = malloc(sizeof(MPI_Count) * P), *cnt2 = malloc(sizeof(MPI_Count) * P);
    MPI_Aint *dsp = malloc(sizeof(MPI_Aint) * P), *dsp2 = malloc(sizeof(MPI_Aint) * P);
    int root = P - 1;

    for (int i = 0; i < 4; i++)
        a[i] = rank == root ? val(root, i) : -1;
    OK(MPI_Bcast_c(a, 4, MPI_INT, root, MPI_COMM_WORLD));
    for (int i = 0; i < 4; i++)
        CHECK(a[i] == val(root, i), "Bcast_c a[%d] = %d", i, a[i]);

    for (int i = 0; i < 4; i++)
        a[i] = val(rank, i);
    OK(MPI_Allreduce_c(a, b, 4, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    for (int i = 0; i < 4; i++) {
        int want = 0;
        for (int r = 0; r < P; r++)
            want += val(r, i);
        CHECK(b[i] == want, "Allreduce_c b[%d] = %d, want %d", i, b[i], want);
    }
    for (int i = 0; i < 4; i++)
        b[i] = -7;
    OK(MPI_Reduce_c(a, b, 4, MPI_INT, MPI_MAX, root, MPI_COMM_WORLD));
    if (rank == root)
        CHECK(b[3] == val(P - 1, 3), "Reduce_c max %d", b[3]);
    OK(MPI_Scan_c(a, b, 4, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    {
        int want = 0;
        for (int r = 0; r <= rank; r++)
            want += val(r, 1);
        CHECK(b[1] == want, "Scan_c %d, want %d", b[1], want);
    }
    OK(MPI_Exscan_c(a, b, 4, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    if (rank > 0) {
        int want = 0;
        for (int r = 0; r < rank; r++)
            want += val(r, 2);
        CHECK(b[2] == want, "Exscan_c %d, want %d", b[2], want);
    }

    /* Reduce_scatter_block_c: block r of the sum goes to r (2 per block). */
    int *v = malloc(sizeof(int) * 2 * P);
    for (int i = 0; i < 2 * P; i++)
        v[i] = val(rank, i);
    OK(MPI_Reduce_scatter_block_c(v, b, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    for (int k = 0; k < 2; k++) {
        int want = 0;
        for (int r = 0; r < P; r++)
            want += val(r, 2 * rank + k);
        CHECK(b[k] == want, "Reduce_scatter_block_c b[%d] = %d, want %d", k, b[k], want);
    }
    /* Reduce_scatter_c: member r gets r+1 elements. */
    int total = P * (P + 1) / 2, first = rank * (rank + 1) / 2;
    int *w = malloc(sizeof(int) * total);
    for (int i = 0; i < total; i++)
        w[i] = val(rank, i);
    for (int r = 0; r < P; r++)
        cnt[r] = r + 1;
    OK(MPI_Reduce_scatter_c(w, b, cnt, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    for (int k = 0; k <= rank; k++) {
        int want = 0;
        for (int r = 0; r < P; r++)
            want += val(r, first + k);
        CHECK(b[k] == want, "Reduce_scatter_c b[%d] = %d, want %d", k, b[k], want);
    }

    /* Gather_c, Scatter_c, Allgather_c, Alltoall_c. */
    OK(MPI_Gather_c(a, 2, MPI_INT, b, 2, MPI_INT, root, MPI_COMM_WORLD));
    if (rank == root)
        for (int r = 0; r < P; r++)
            CHECK(b[2 * r + 1] == val(r, 1), "Gather_c from %d: %d", r, b[2 * r + 1]);
    for (int i = 0; i < 2 * P; i++)
        v[i] = val(root, i);
    OK(MPI_Scatter_c(v, 2, MPI_INT, b, 2, MPI_INT, root, MPI_COMM_WORLD));
    CHECK(b[0] == val(root, 2 * rank) && b[1] == val(root, 2 * rank + 1), "Scatter_c %d %d", b[0], b[1]);
    OK(MPI_Allgather_c(a, 3, MPI_INT, b, 3, MPI_INT, MPI_COMM_WORLD));
    for (int r = 0; r < P; r++)
        CHECK(b[3 * r + 2] == val(r, 2), "Allgather_c from %d: %d", r, b[3 * r + 2]);
    for (int i = 0; i < 2 * P; i++)
        v[i] = val(rank, i);
    OK(MPI_Alltoall_c(v, 2, MPI_INT, b, 2, MPI_INT, MPI_COMM_WORLD));
    for (int r = 0; r < P; r++)
        CHECK(b[2 * r] == val(r, 2 * rank) && b[2 * r + 1] == val(r, 2 * rank + 1), "Alltoall_c from %d: %d", r, b[2 * r]);

    /* The v forms: member r contributes r+1 elements, placed in reverse
     * order of members, with a gap of one element before each block. */
    MPI_Aint off = 0;
    for (int r = P - 1; r >= 0; r--) {
        cnt[r] = r + 1;
        dsp[r] = off + 1;
        off += r + 2;
    }
    int span = (int)off;
    int *g = malloc(sizeof(int) * span);
    for (int i = 0; i < span; i++)
        g[i] = -1;
    OK(MPI_Gatherv_c(a, rank + 1, MPI_INT, g, cnt, dsp, MPI_INT, root, MPI_COMM_WORLD));
    if (rank == root)
        for (int r = 0; r < P; r++)
            for (int k = 0; k <= r; k++)
                CHECK(g[dsp[r] + k] == val(r, k), "Gatherv_c from %d [%d]: %d", r, k, g[dsp[r] + k]);
    for (int i = 0; i < span; i++)
        g[i] = -1;
    OK(MPI_Allgatherv_c(a, rank + 1, MPI_INT, g, cnt, dsp, MPI_INT, MPI_COMM_WORLD));
    for (int r = 0; r < P; r++)
        for (int k = 0; k <= r; k++)
            CHECK(g[dsp[r] + k] == val(r, k), "Allgatherv_c from %d [%d]: %d", r, k, g[dsp[r] + k]);
    CHECK(g[0] == -1, "Allgatherv_c wrote the gap");
    for (int i = 0; i < span; i++)
        g[i] = rank == root ? i : -1;
    OK(MPI_Scatterv_c(g, cnt, dsp, MPI_INT, b, rank + 1, MPI_INT, root, MPI_COMM_WORLD));
    for (int k = 0; k <= rank; k++)
        CHECK(b[k] == dsp[rank] + k, "Scatterv_c [%d] = %d", k, b[k]);
    /* Alltoallv_c: member r sends k+1 elements val(r, 10k + i) to k. */
    MPI_Aint so = 0, ro = 0;
    for (int k = 0; k < P; k++) {
        cnt[k] = k + 1, dsp[k] = so, so += k + 1;
        cnt2[k] = rank + 1, dsp2[k] = ro, ro += rank + 1;
    }
    int *sv = malloc(sizeof(int) * so), *rv = malloc(sizeof(int) * ro);
    for (int k = 0; k < P; k++)
        for (int i = 0; i <= k; i++)
            sv[dsp[k] + i] = val(rank, 10 * k + i);
    MPI_Request q;
    OK(MPI_Ialltoallv_c(sv, cnt, dsp, MPI_INT, rv, cnt2, dsp2, MPI_INT, MPI_COMM_WORLD, &q));
    OK(MPI_Wait(&q, MPI_STATUS_IGNORE));
    for (int k = 0; k < P; k++)
        for (int i = 0; i <= rank; i++)
            CHECK(rv[dsp2[k] + i] == val(k, 10 * rank + i), "Ialltoallv_c from %d [%d] = %d", k, i, rv[dsp2[k] + i]);
    for (int i = 0; i < (int)ro; i++)
        rv[i] = -1;
    OK(MPI_Alltoallv_c(sv, cnt, dsp, MPI_INT, rv, cnt2, dsp2, MPI_INT, MPI_COMM_WORLD));
    CHECK(rv[dsp2[P - 1] + rank] == val(P - 1, 10 * rank + rank), "Alltoallv_c %d", rv[dsp2[P - 1] + rank]);
    /* Alltoallw_c: the same with byte displacements and a type per peer. */
    MPI_Datatype *ty = malloc(sizeof(MPI_Datatype) * P);
    for (int k = 0; k < P; k++) {
        dsp[k] *= sizeof(int), dsp2[k] *= sizeof(int);
        ty[k] = MPI_INT;
    }
    for (int i = 0; i < (int)ro; i++)
        rv[i] = -1;
    OK(MPI_Alltoallw_c(sv, cnt, dsp, ty, rv, cnt2, dsp2, ty, MPI_COMM_WORLD));
    for (int k = 0; k < P; k++)
        CHECK(rv[dsp2[k] / sizeof(int)] == val(k, 10 * rank), "Alltoallw_c from %d: %d", k, rv[dsp2[k] / sizeof(int)]);
    OK(MPI_Iallreduce_c(MPI_IN_PLACE, a, 4, MPI_INT, MPI_MIN, MPI_COMM_WORLD, &q));
    OK(MPI_Wait(&q, MPI_STATUS_IGNORE));
    CHECK(a[0] == val(0, 0), "Iallreduce_c in place %d", a[0]);

    /* Counts beyond the bound are refused, not truncated (every member
     * fails alike before anything moves). */
    FAILS(MPI_Bcast_c(a, BEYOND, MPI_BYTE, 0, MPI_COMM_WORLD), MPI_ERR_COUNT);
    FAILS(MPI_Allreduce_c(a, b, BEYOND, MPI_INT, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_COUNT);
    cnt[0] = BEYOND;
    FAILS(MPI_Allgatherv_c(a, 1, MPI_INT, g, cnt, dsp, MPI_INT, MPI_COMM_WORLD), MPI_ERR_COUNT);
    cnt[0] = -2;
    FAILS(MPI_Alltoallv_c(sv, cnt, dsp, MPI_INT, rv, cnt2, dsp2, MPI_INT, MPI_COMM_WORLD), MPI_ERR_COUNT);
    free(a), free(b), free(cnt), free(cnt2), free(dsp), free(dsp2), free(v), free(w), free(g), free(sv), free(rv), free(ty);
}

/* Neighbourhood collectives' _c and _init forms on a periodic ring. */
static void neighbors(void) {
    MPI_Comm ring;
    int dims[1] = {size}, periods[1] = {1};
    OK(MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &ring));
    int src, dst;
    OK(MPI_Cart_shift(ring, 0, 1, &src, &dst));
    int mine[2] = {val(rank, 0), val(rank, 1)}, got[4];
    OK(MPI_Neighbor_allgather_c(mine, 2, MPI_INT, got, 2, MPI_INT, ring));
    CHECK(got[0] == val(src, 0) && got[3] == val(dst, 1), "Neighbor_allgather_c %d %d", got[0], got[3]);
    MPI_Count c2[2] = {1, 1};
    MPI_Aint d2[2] = {1, 0};
    OK(MPI_Neighbor_allgatherv_c(mine, 1, MPI_INT, got, c2, d2, MPI_INT, ring));
    CHECK(got[1] == val(src, 0) && got[0] == val(dst, 0), "Neighbor_allgatherv_c %d %d", got[1], got[0]);
    int sendv[2] = {val(rank, 5), val(rank, 6)};
    MPI_Aint sd[2] = {0, 1};
    OK(MPI_Neighbor_alltoallv_c(sendv, c2, sd, MPI_INT, got, c2, d2, MPI_INT, ring));
    /* sendv[0] goes to src (whose dst block is 1 ... placed at d2[1] = 0). */
    CHECK(got[1] == val(src, 6) && got[0] == val(dst, 5), "Neighbor_alltoallv_c %d %d", got[1], got[0]);
    MPI_Datatype t2[2] = {MPI_INT, MPI_INT};
    MPI_Aint bd[2] = {0, sizeof(int)};
    OK(MPI_Neighbor_alltoallw_c(sendv, c2, bd, t2, got, c2, bd, t2, ring));
    CHECK(got[0] == val(src, 6) && got[1] == val(dst, 5), "Neighbor_alltoallw_c %d %d", got[0], got[1]);
    MPI_Request q;
    OK(MPI_Neighbor_alltoall_init(sendv, 1, MPI_INT, got, 1, MPI_INT, ring, MPI_INFO_NULL, &q));
    for (int it = 0; it < 2; it++) {
        sendv[0] = val(rank, 7 + it), sendv[1] = val(rank, 8 + it);
        OK(MPI_Start(&q));
        OK(MPI_Wait(&q, MPI_STATUS_IGNORE));
        CHECK(got[0] == val(src, 8 + it) && got[1] == val(dst, 7 + it), "Neighbor_alltoall_init start %d: %d %d", it, got[0], got[1]);
    }
    OK(MPI_Request_free(&q));
    OK(MPI_Comm_free(&ring));
}

/* Persistent collectives: several starts with new data, Startall, the rules. */
static void persistent(void) {
    int P = size, root = 0;
    MPI_Request q[6];
    int a[4], b[4], bc[3], *g = malloc(sizeof(int) * 2 * P), *sc = malloc(sizeof(int) * 2 * P);
    OK(MPI_Barrier_init(MPI_COMM_WORLD, MPI_INFO_NULL, &q[0]));
    OK(MPI_Bcast_init(bc, 3, MPI_INT, root, MPI_COMM_WORLD, MPI_INFO_NULL, &q[1]));
    OK(MPI_Allreduce_init(a, b, 4, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &q[2]));
    OK(MPI_Allgather_init(a, 2, MPI_INT, g, 2, MPI_INT, MPI_COMM_WORLD, MPI_INFO_NULL, &q[3]));
    OK(MPI_Reduce_init_c(a, b, 4, MPI_INT, MPI_MAX, root, MPI_COMM_WORLD, MPI_INFO_NULL, &q[4]));
    OK(MPI_Scatter_init(sc, 2, MPI_INT, bc, 2, MPI_INT, root, MPI_COMM_WORLD, MPI_INFO_NULL, &q[5]));
    for (int it = 0; it < 3; it++) {
        for (int i = 0; i < 4; i++)
            a[i] = val(rank, i) * (it + 1);
        for (int i = 0; i < 3; i++)
            bc[i] = rank == root ? val(root, i) + it : -1;
        OK(MPI_Start(&q[0]));
        OK(MPI_Start(&q[1]));
        OK(MPI_Startall(2, &q[2]));
        OK(MPI_Waitall(4, q, MPI_STATUSES_IGNORE));
        for (int k = 0; k < 4; k++)
            CHECK(q[k] != MPI_REQUEST_NULL, "Waitall freed persistent request %d", k);
        for (int i = 0; i < 3; i++)
            CHECK(bc[i] == val(root, i) + it, "Bcast_init start %d: bc[%d] = %d", it, i, bc[i]);
        for (int i = 0; i < 4; i++) {
            int want = 0;
            for (int r = 0; r < P; r++)
                want += val(r, i) * (it + 1);
            CHECK(b[i] == want, "Allreduce_init start %d: b[%d] = %d, want %d", it, i, b[i], want);
        }
        for (int r = 0; r < P; r++)
            CHECK(g[2 * r + 1] == val(r, 1) * (it + 1), "Allgather_init start %d from %d: %d", it, r, g[2 * r + 1]);
        OK(MPI_Start(&q[4]));
        OK(MPI_Wait(&q[4], MPI_STATUS_IGNORE));
        if (rank == root)
            CHECK(b[2] == val(P - 1, 2) * (it + 1), "Reduce_init_c start %d: %d", it, b[2]);
        for (int i = 0; i < 2 * P; i++)
            sc[i] = rank == root ? 100 * it + i : -1;
        OK(MPI_Start(&q[5]));
        int flag = 0;
        while (!flag)
            OK(MPI_Test(&q[5], &flag, MPI_STATUS_IGNORE));
        CHECK(bc[0] == 100 * it + 2 * rank && bc[1] == 100 * it + 2 * rank + 1, "Scatter_init start %d: %d %d", it, bc[0], bc[1]);
    }
    /* Rules: an inactive persistent request completes at once in Wait. */
    MPI_Status st;
    OK(MPI_Wait(&q[1], &st));
    CHECK(q[1] != MPI_REQUEST_NULL && st.MPI_SOURCE == MPI_ANY_SOURCE, "Wait on an inactive request: source %d", st.MPI_SOURCE);
    /* Starting an active request is MPI_ERR_REQUEST; it stays active. */
    OK(MPI_Start(&q[0]));
    FAILS(MPI_Start(&q[0]), MPI_ERR_REQUEST);
    FAILS(MPI_Startall(1, &q[0]), MPI_ERR_REQUEST);
    OK(MPI_Wait(&q[0], MPI_STATUS_IGNORE));
    /* MPI_REQUEST_NULL and a non-persistent request cannot be started. */
    MPI_Request nul = MPI_REQUEST_NULL, nb;
    FAILS(MPI_Start(&nul), MPI_ERR_REQUEST);
    OK(MPI_Ibarrier(MPI_COMM_WORLD, &nb));
    FAILS(MPI_Start(&nb), MPI_ERR_REQUEST);
    OK(MPI_Wait(&nb, MPI_STATUS_IGNORE));
    /* Argument errors surface at init. */
    MPI_Request bad = MPI_REQUEST_NULL;
    FAILS(MPI_Bcast_init(bc, -1, MPI_INT, root, MPI_COMM_WORLD, MPI_INFO_NULL, &bad), MPI_ERR_COUNT);
    FAILS(MPI_Bcast_init(bc, 1, MPI_INT, P, MPI_COMM_WORLD, MPI_INFO_NULL, &bad), MPI_ERR_ROOT);
    FAILS(MPI_Allreduce_init(a, b, 1, MPI_INT, MPI_OP_NULL, MPI_COMM_WORLD, MPI_INFO_NULL, &bad), MPI_ERR_OP);
    CHECK(bad == MPI_REQUEST_NULL, "a failed init set the request");
    /* Request_free frees them; a freed one cannot be started. */
    MPI_Request keep = q[2];
    for (int k = 0; k < 6; k++) {
        OK(MPI_Request_free(&q[k]));
        CHECK(q[k] == MPI_REQUEST_NULL, "Request_free left request %d", k);
    }
    FAILS(MPI_Start(&keep), MPI_ERR_REQUEST);

    /* The other families, started once each (every member in one order). */
    int P1 = P * (P + 1) / 2;
    int *x = malloc(sizeof(int) * 2 * P1), *y = malloc(sizeof(int) * 2 * P1);
    int *cnt = malloc(sizeof(int) * P), *dsp = malloc(sizeof(int) * P);
    MPI_Count *ccnt = malloc(sizeof(MPI_Count) * P);
    MPI_Aint *cdsp = malloc(sizeof(MPI_Aint) * P);
    for (int r = 0, o = 0; r < P; r++) {
        cnt[r] = r + 1, dsp[r] = o, ccnt[r] = r + 1, cdsp[r] = o;
        o += r + 1;
    }
    for (int i = 0; i < 2 * P1; i++)
        x[i] = val(rank, i), y[i] = -1;
    MPI_Request m[8];
    OK(MPI_Scan_init(x, y, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &m[0]));
    OK(MPI_Start(&m[0]));
    OK(MPI_Wait(&m[0], MPI_STATUS_IGNORE));
    {
        int want = 0;
        for (int r = 0; r <= rank; r++)
            want += val(r, 1);
        CHECK(y[1] == want, "Scan_init %d, want %d", y[1], want);
    }
    OK(MPI_Exscan_init(x, y, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &m[1]));
    OK(MPI_Reduce_scatter_block_init(x, y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &m[2]));
    OK(MPI_Start(&m[1]));
    OK(MPI_Wait(&m[1], MPI_STATUS_IGNORE));
    OK(MPI_Start(&m[2]));
    OK(MPI_Wait(&m[2], MPI_STATUS_IGNORE));
    {
        int want = 0;
        for (int r = 0; r < P; r++)
            want += val(r, rank);
        CHECK(y[0] == want, "Reduce_scatter_block_init %d, want %d", y[0], want);
    }
    OK(MPI_Reduce_scatter_init(x, y, cnt, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &m[3]));
    OK(MPI_Start(&m[3]));
    OK(MPI_Wait(&m[3], MPI_STATUS_IGNORE));
    {
        int want = 0;
        for (int r = 0; r < P; r++)
            want += val(r, dsp[rank] + rank);
        CHECK(y[rank] == want, "Reduce_scatter_init %d, want %d", y[rank], want);
    }
    for (int i = 0; i < 2 * P1; i++)
        y[i] = -1;
    OK(MPI_Gatherv_init(x, rank + 1, MPI_INT, y, cnt, dsp, MPI_INT, root, MPI_COMM_WORLD, MPI_INFO_NULL, &m[4]));
    OK(MPI_Allgatherv_init_c(x, rank + 1, MPI_INT, y, ccnt, cdsp, MPI_INT, MPI_COMM_WORLD, MPI_INFO_NULL, &m[5]));
    OK(MPI_Start(&m[4]));
    OK(MPI_Wait(&m[4], MPI_STATUS_IGNORE));
    if (rank == root)
        CHECK(y[dsp[P - 1] + P - 1] == val(P - 1, P - 1), "Gatherv_init %d", y[dsp[P - 1] + P - 1]);
    OK(MPI_Start(&m[5]));
    OK(MPI_Wait(&m[5], MPI_STATUS_IGNORE));
    for (int r = 0; r < P; r++)
        CHECK(y[dsp[r]] == val(r, 0), "Allgatherv_init_c from %d: %d", r, y[dsp[r]]);
    OK(MPI_Scatterv_init(x, cnt, dsp, MPI_INT, y, rank + 1, MPI_INT, root, MPI_COMM_WORLD, MPI_INFO_NULL, &m[6]));
    OK(MPI_Start(&m[6]));
    OK(MPI_Wait(&m[6], MPI_STATUS_IGNORE));
    CHECK(y[rank] == val(root, dsp[rank] + rank), "Scatterv_init %d", y[rank]);
    for (int r = 0; r < P; r++)
        cnt[r] = 1, dsp[r] = r;
    OK(MPI_Alltoallv_init(x, cnt, dsp, MPI_INT, y, cnt, dsp, MPI_INT, MPI_COMM_WORLD, MPI_INFO_NULL, &m[7]));
    OK(MPI_Start(&m[7]));
    OK(MPI_Wait(&m[7], MPI_STATUS_IGNORE));
    for (int r = 0; r < P; r++)
        CHECK(y[r] == val(r, rank), "Alltoallv_init from %d: %d", r, y[r]);
    for (int k = 0; k < 8; k++)
        OK(MPI_Request_free(&m[k]));
    MPI_Request aw;
    MPI_Datatype *ty = malloc(sizeof(MPI_Datatype) * P);
    for (int r = 0; r < P; r++)
        ty[r] = MPI_INT, dsp[r] = r * (int)sizeof(int), y[r] = -1;
    OK(MPI_Alltoallw_init(x, cnt, dsp, ty, y, cnt, dsp, ty, MPI_COMM_WORLD, MPI_INFO_NULL, &aw));
    OK(MPI_Start(&aw));
    OK(MPI_Wait(&aw, MPI_STATUS_IGNORE));
    for (int r = 0; r < P; r++)
        CHECK(y[r] == val(r, rank), "Alltoallw_init from %d: %d", r, y[r]);
    OK(MPI_Request_free(&aw));
    free(g), free(sc), free(x), free(y), free(cnt), free(dsp), free(ccnt), free(cdsp), free(ty);
}

int main(int argc, char **argv) {
    OK(MPI_Init(&argc, &argv));
    OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    if (argc > 1 && strcmp(argv[1], "bigcount") == 0) { /* fatal: the message names the count */
        int x;
        MPI_Send_c(&x, BEYOND, MPI_BYTE, MPI_PROC_NULL, 0, MPI_COMM_WORLD);
        printf("not reached %d\n", rank);
        return 0;
    }
    if (argc > 1 && strcmp(argv[1], "active") == 0) { /* fatal: the message names the request */
        MPI_Request q;
        int x = 1;
        MPI_Bcast_init(&x, 1, MPI_INT, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &q);
        MPI_Start(&q);
        MPI_Start(&q);
        printf("not reached %d\n", rank);
        return 0;
    }
    if (argc > 1 && (strcmp(argv[1], "gfree") == 0 || strcmp(argv[1], "gcancel") == 0)) { /* fatal: the message names the callback */
        MPI_Request g;
        MPI_Grequest_start(g_query, g_free, g_cancel, &g_frees, &g);
        if (argv[1][1] == 'f') {
            g_free_fail = 12345;
            MPI_Grequest_complete(g);
            MPI_Wait(&g, MPI_STATUS_IGNORE);
        } else {
            g_cancel_fail = MPI_ERR_ARG;
            MPI_Cancel(&g);
        }
        printf("not reached %d\n", rank);
        return 0;
    }
    if (argc > 1 && strcmp(argv[1], "big") == 0) { /* 2^31 + 4096 bytes from rank 0 to rank 1 */
        MPI_Count n = ((MPI_Count)1 << 31) + 4096;
        /* Untouched pages read as zeros without memory behind them. */
        unsigned char *p = mmap(NULL, (size_t)n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        CHECK(p != MAP_FAILED, "mmap of %lld bytes failed", (long long)n);
        MPI_Count marks[4] = {0, ((MPI_Count)1 << 31) - 1, (MPI_Count)1 << 31, n - 1};
        if (rank == 0) {
            for (int k = 0; k < 4; k++)
                p[marks[k]] = (unsigned char)(0xa0 + k);
            OK(MPI_Send_c(p, n, MPI_BYTE, 1, 5, MPI_COMM_WORLD));
        } else if (rank == 1) {
            MPI_Status st;
            OK(MPI_Recv_c(p, n, MPI_BYTE, 0, 5, MPI_COMM_WORLD, &st));
            MPI_Count got;
            int gi;
            OK(MPI_Get_count_c(&st, MPI_BYTE, &got));
            CHECK(got == n, "Get_count_c %lld, want %lld", (long long)got, (long long)n);
            OK(MPI_Get_count(&st, MPI_BYTE, &gi));
            CHECK(gi == MPI_UNDEFINED, "Get_count %d, want MPI_UNDEFINED", gi);
            for (int k = 0; k < 4; k++)
                CHECK(p[marks[k]] == 0xa0 + k, "byte %lld = %#x", (long long)marks[k], p[marks[k]]);
            CHECK(p[12345] == 0 && p[n - 2] == 0, "zeros");
        }
        munmap(p, (size_t)n);
        OK(MPI_Finalize());
        printf("large ok %d\n", rank);
        return 0;
    }
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    p2p_c();
    coll_c();
    neighbors();
    persistent();
    isendrecv();
    local_ops();
    grequests();
    maps();
    partitioned();
    user_errors();
    type_attrs();
    derived();
    buffers();
    OK(MPI_Finalize());
    printf("large ok %d\n", rank);
    return 0;
}
