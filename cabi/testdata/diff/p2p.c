/* p2p: point-to-point semantics on any number of ranks, self-checking. */
#include "dt.h"

static void modes(void) {
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    int buf[100], in[100];
    MPI_Status st;
    for (int i = 0; i < 100; i++) buf[i] = rank * 1000 + i;
    /* Each mode, to the next rank around the ring. */
    for (int mode = 0; mode < 4; mode++) {
        MPI_Request r;
        memset(in, 0xff, sizeof in);
        OK(MPI_Irecv(in, 100, MPI_INT, prev, 10 + mode, MPI_COMM_WORLD, &r));
        OK(MPI_Barrier(MPI_COMM_WORLD));
        switch (mode) {
        case 0: OK(MPI_Send(buf, 100, MPI_INT, next, 10, MPI_COMM_WORLD)); break;
        case 1: OK(MPI_Ssend(buf, 100, MPI_INT, next, 11, MPI_COMM_WORLD)); break;
        case 2: OK(MPI_Rsend(buf, 100, MPI_INT, next, 12, MPI_COMM_WORLD)); break;
        case 3: {
            int sz;
            OK(MPI_Pack_size(100, MPI_INT, MPI_COMM_WORLD, &sz));
            sz += MPI_BSEND_OVERHEAD;
            void *b = malloc(sz);
            OK(MPI_Buffer_attach(b, sz));
            OK(MPI_Bsend(buf, 100, MPI_INT, next, 13, MPI_COMM_WORLD));
            void *bb; int bsz;
            OK(MPI_Buffer_detach(&bb, &bsz));
            CHECK(bb == b && bsz == sz, "detach %p %d want %p %d", bb, bsz, b, sz);
            free(b);
        } break;
        }
        OK(MPI_Wait(&r, &st));
        int c;
        OK(MPI_Get_count(&st, MPI_INT, &c));
        CHECK(c == 100 && st.MPI_SOURCE == prev && st.MPI_TAG == 10 + mode, "mode %d count %d src %d tag %d", mode, c, st.MPI_SOURCE, st.MPI_TAG);
        for (int i = 0; i < 100; i++)
            if (in[i] != prev * 1000 + i) { CHECK(0, "mode %d in[%d]=%d", mode, i, in[i]); break; }
    }
}

static void wildcards(void) {
    /* Every rank sends to rank 0 with tag = rank; rank 0 receives with
     * ANY_SOURCE/ANY_TAG after probing. */
    if (rank != 0) {
        int v[3] = {rank, rank * 2, rank * 3};
        OK(MPI_Send(v, rank % 3 + 1, MPI_INT, 0, rank, MPI_COMM_WORLD));
    } else {
        int seen = 0;
        for (int k = 1; k < size; k++) {
            MPI_Status st;
            OK(MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
            int c;
            OK(MPI_Get_count(&st, MPI_INT, &c));
            CHECK(st.MPI_TAG == st.MPI_SOURCE && c == st.MPI_SOURCE % 3 + 1, "probe src %d tag %d count %d", st.MPI_SOURCE, st.MPI_TAG, c);
            int v[3] = {0, 0, 0};
            MPI_Status st2;
            OK(MPI_Recv(v, 3, MPI_INT, st.MPI_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st2));
            CHECK(st2.MPI_SOURCE == st.MPI_SOURCE && st2.MPI_TAG == st.MPI_TAG && v[0] == st.MPI_SOURCE, "recv src %d tag %d v0 %d", st2.MPI_SOURCE, st2.MPI_TAG, v[0]);
            OK(MPI_Get_count(&st2, MPI_INT, &c));
            CHECK(c == st.MPI_SOURCE % 3 + 1, "count %d", c);
            OK(MPI_Get_elements(&st2, MPI_INT, &c));
            CHECK(c == st.MPI_SOURCE % 3 + 1, "elements %d", c);
            OK(MPI_Get_count(&st2, MPI_BYTE, &c));
            CHECK(c == 4 * (st.MPI_SOURCE % 3 + 1), "bytes %d", c);
            seen |= 1 << st.MPI_SOURCE;
        }
        CHECK(seen == ((1 << size) - 2), "seen %#x", seen);
    }
    /* Get_count with a type that does not divide. */
    OK(MPI_Barrier(MPI_COMM_WORLD));
    if (size >= 2) {
        if (rank == 1) {
            char c[5] = "abcd";
            OK(MPI_Send(c, 5, MPI_CHAR, 0, 7, MPI_COMM_WORLD));
        } else if (rank == 0) {
            char c[8];
            MPI_Status st;
            OK(MPI_Recv(c, 8, MPI_CHAR, 1, 7, MPI_COMM_WORLD, &st));
            int n;
            OK(MPI_Get_count(&st, MPI_INT, &n));
            CHECK(n == MPI_UNDEFINED, "count of 5 bytes as int %d", n);
            OK(MPI_Get_count(&st, MPI_CHAR, &n));
            CHECK(n == 5, "count %d", n);
        }
    }
    OK(MPI_Barrier(MPI_COMM_WORLD));
}

static void procnull_zero(void) {
    MPI_Status st;
    int x = 5;
    OK(MPI_Send(&x, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD));
    OK(MPI_Recv(&x, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &st));
    int c = -7;
    OK(MPI_Get_count(&st, MPI_INT, &c));
    CHECK(st.MPI_SOURCE == MPI_PROC_NULL && st.MPI_TAG == MPI_ANY_TAG && c == 0 && x == 5, "proc null status src %d tag %d count %d", st.MPI_SOURCE, st.MPI_TAG, c);
    /* MPICH 4.0 gives this status source 0 and tag 0. */
    MPI_Request r;
    OK(MPI_Irecv(&x, 1, MPI_INT, MPI_PROC_NULL, 3, MPI_COMM_WORLD, &r));
    OK(MPI_Wait(&r, &st));
    CHECK(r == MPI_REQUEST_NULL && st.MPI_SOURCE == MPI_PROC_NULL && st.MPI_TAG == MPI_ANY_TAG, "irecv proc null src %d tag %d", st.MPI_SOURCE, st.MPI_TAG);
    int flag;
    OK(MPI_Iprobe(MPI_PROC_NULL, 0, MPI_COMM_WORLD, &flag, &st));
    CHECK(flag && st.MPI_SOURCE == MPI_PROC_NULL && st.MPI_TAG == MPI_ANY_TAG, "iprobe proc null flag %d", flag);
    OK(MPI_Probe(MPI_PROC_NULL, 0, MPI_COMM_WORLD, &st));
    OK(MPI_Sendrecv(&x, 1, MPI_INT, MPI_PROC_NULL, 0, &x, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &st));
    CHECK(st.MPI_SOURCE == MPI_PROC_NULL, "sendrecv proc null src %d", st.MPI_SOURCE);
    /* Zero-length message to self and around. */
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    OK(MPI_Sendrecv(NULL, 0, MPI_INT, next, 4, &x, 1, MPI_INT, prev, 4, MPI_COMM_WORLD, &st));
    OK(MPI_Get_count(&st, MPI_INT, &c));
    CHECK(c == 0 && st.MPI_SOURCE == prev && st.MPI_TAG == 4 && x == 5, "zero-length count %d src %d", c, st.MPI_SOURCE);
    /* Status ignore. */
    OK(MPI_Sendrecv(&rank, 1, MPI_INT, next, 5, &x, 1, MPI_INT, prev, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK(x == prev, "x %d", x);
}

static void truncation(void) {
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    int big[10] = {0}, small[4];
    MPI_Request r;
    MPI_Status st;
    OK(MPI_Irecv(small, 4, MPI_INT, prev, 20, MPI_COMM_WORLD, &r));
    OK(MPI_Send(big, 10, MPI_INT, next, 20, MPI_COMM_WORLD));
    int rc = MPI_Wait(&r, &st);
    int cls = -1;
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_TRUNCATE, "wait truncation class %d rc %d", cls, rc);
    /* Blocking receive truncation. */
    OK(MPI_Send(big, 10, MPI_INT, next, 21, MPI_COMM_WORLD) );
    rc = MPI_Recv(small, 4, MPI_INT, prev, 21, MPI_COMM_WORLD, &st);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_TRUNCATE, "recv truncation class %d", cls);
    /* An invalid rank and tag. */
    rc = MPI_Send(big, 1, MPI_INT, size + 3, 0, MPI_COMM_WORLD);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_RANK, "bad rank class %d", cls);
    rc = MPI_Send(big, 1, MPI_INT, next, -5, MPI_COMM_WORLD);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_TAG, "bad tag class %d", cls);
    rc = MPI_Send(big, -1, MPI_INT, next, 0, MPI_COMM_WORLD);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_COUNT, "bad count class %d", cls);
    rc = MPI_Send(big, 1, MPI_DATATYPE_NULL, next, 0, MPI_COMM_WORLD);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_TYPE, "null type class %d", cls);
    rc = MPI_Send(big, 1, MPI_INT, next, 0, MPI_COMM_NULL);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_COMM, "null comm class %d", cls);
    OK(MPI_Barrier(MPI_COMM_WORLD));
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
}

static void replace_persistent(void) {
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    int v[4];
    MPI_Status st;
    for (int i = 0; i < 4; i++) v[i] = rank + i;
    OK(MPI_Sendrecv_replace(v, 4, MPI_INT, next, 30, prev, 30, MPI_COMM_WORLD, &st));
    CHECK(v[0] == prev && v[3] == prev + 3 && st.MPI_SOURCE == prev && st.MPI_TAG == 30, "replace v0 %d", v[0]);
    /* Persistent send/recv, started three times. */
    int out, in;
    MPI_Request rq[2];
    OK(MPI_Recv_init(&in, 1, MPI_INT, prev, 31, MPI_COMM_WORLD, &rq[0]));
    OK(MPI_Send_init(&out, 1, MPI_INT, next, 31, MPI_COMM_WORLD, &rq[1]));
    for (int it = 0; it < 3; it++) {
        out = rank * 10 + it;
        in = -1;
        OK(MPI_Startall(2, rq));
        MPI_Status sts[2];
        OK(MPI_Waitall(2, rq, sts));
        CHECK(rq[0] != MPI_REQUEST_NULL && rq[1] != MPI_REQUEST_NULL, "persistent request freed by wait");
        CHECK(in == prev * 10 + it && sts[0].MPI_SOURCE == prev && sts[0].MPI_TAG == 31, "persistent it %d in %d", it, in);
    }
    /* Wait on an inactive persistent request returns an empty status. */
    st.MPI_SOURCE = 77; st.MPI_TAG = 77;
    OK(MPI_Wait(&rq[0], &st));
    CHECK(st.MPI_SOURCE == MPI_ANY_SOURCE && st.MPI_TAG == MPI_ANY_TAG, "inactive wait src %d tag %d", st.MPI_SOURCE, st.MPI_TAG);
    int flag = 0;
    OK(MPI_Test(&rq[0], &flag, &st));
    CHECK(flag, "test of inactive request gives flag 0");
    OK(MPI_Request_free(&rq[0]));
    OK(MPI_Request_free(&rq[1]));
    CHECK(rq[0] == MPI_REQUEST_NULL && rq[1] == MPI_REQUEST_NULL, "request free");
    /* Persistent ssend. */
    OK(MPI_Ssend_init(&out, 1, MPI_INT, next, 32, MPI_COMM_WORLD, &rq[1]));
    OK(MPI_Irecv(&in, 1, MPI_INT, prev, 32, MPI_COMM_WORLD, &rq[0]));
    OK(MPI_Start(&rq[1]));
    MPI_Status sts2[2];
    OK(MPI_Waitall(2, rq, sts2));
    CHECK(rq[0] == MPI_REQUEST_NULL, "nonpersistent not freed");
    OK(MPI_Request_free(&rq[1]));
}

static void waits(void) {
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    MPI_Request rq[6];
    int in[3], out[3];
    for (int i = 0; i < 3; i++) out[i] = rank * 100 + i;
    rq[0] = MPI_REQUEST_NULL;
    rq[3] = MPI_REQUEST_NULL;
    OK(MPI_Irecv(&in[0], 1, MPI_INT, prev, 40, MPI_COMM_WORLD, &rq[1]));
    OK(MPI_Irecv(&in[1], 1, MPI_INT, prev, 41, MPI_COMM_WORLD, &rq[2]));
    OK(MPI_Isend(&out[0], 1, MPI_INT, next, 40, MPI_COMM_WORLD, &rq[4]));
    OK(MPI_Isend(&out[1], 1, MPI_INT, next, 41, MPI_COMM_WORLD, &rq[5]));
    int done = 0, guard = 0;
    while (done < 4 && guard++ < 100) {
        int idx;
        MPI_Status st;
        OK(MPI_Waitany(6, rq, &idx, &st));
        CHECK(idx != 0 && idx != 3 && idx >= 0 && idx < 6, "waitany idx %d", idx);
        if (idx == 1 || idx == 2)
            CHECK(st.MPI_TAG == 39 + idx && st.MPI_SOURCE == prev, "waitany status tag %d", st.MPI_TAG);
        CHECK(rq[idx] == MPI_REQUEST_NULL, "waitany did not free");
        done++;
    }
    CHECK(in[0] == prev * 100 && in[1] == prev * 100 + 1, "waitany data");
    /* Waitany of all-null gives MPI_UNDEFINED and an empty status. */
    int idx;
    MPI_Status st;
    st.MPI_SOURCE = 5;
    OK(MPI_Waitany(6, rq, &idx, &st));
    CHECK(idx == MPI_UNDEFINED && st.MPI_SOURCE == MPI_ANY_SOURCE && st.MPI_TAG == MPI_ANY_TAG, "waitany null idx %d src %d", idx, st.MPI_SOURCE);
    int flag = 0;
    OK(MPI_Testany(6, rq, &idx, &flag, &st));
    CHECK(flag && idx == MPI_UNDEFINED, "testany null flag %d idx %d", flag, idx);
    int outcount, idxs[6];
    MPI_Status sts[6];
    OK(MPI_Waitsome(6, rq, &outcount, idxs, sts));
    CHECK(outcount == MPI_UNDEFINED, "waitsome null outcount %d", outcount);
    OK(MPI_Testsome(6, rq, &outcount, idxs, sts));
    CHECK(outcount == MPI_UNDEFINED, "testsome null outcount %d", outcount);
    flag = 0;
    OK(MPI_Testall(6, rq, &flag, sts));
    CHECK(flag, "testall null flag %d", flag);
    OK(MPI_Waitall(0, rq, sts));
    /* Waitsome with real requests. */
    OK(MPI_Irecv(&in[2], 1, MPI_INT, prev, 42, MPI_COMM_WORLD, &rq[2]));
    OK(MPI_Isend(&out[2], 1, MPI_INT, next, 42, MPI_COMM_WORLD, &rq[4]));
    int total = 0;
    guard = 0;
    while (total < 2 && guard++ < 100) {
        OK(MPI_Waitsome(6, rq, &outcount, idxs, sts));
        CHECK(outcount >= 1 && outcount <= 2, "waitsome outcount %d", outcount);
        for (int i = 0; i < outcount; i++) {
            CHECK(idxs[i] == 2 || idxs[i] == 4, "waitsome idx %d", idxs[i]);
            if (idxs[i] == 2) CHECK(sts[i].MPI_TAG == 42 && sts[i].MPI_SOURCE == prev, "waitsome status");
        }
        total += outcount;
    }
    CHECK(in[2] == prev * 100 + 2, "waitsome data");
    /* Testall with a pending receive gives false and leaves the requests. */
    OK(MPI_Irecv(&in[0], 1, MPI_INT, prev, 43, MPI_COMM_WORLD, &rq[0]));
    flag = 1;
    OK(MPI_Testall(1, rq, &flag, sts));
    CHECK(!flag && rq[0] != MPI_REQUEST_NULL, "testall of unmatched receive flag %d", flag);
    OK(MPI_Barrier(MPI_COMM_WORLD));
    OK(MPI_Send(&out[0], 1, MPI_INT, next, 43, MPI_COMM_WORLD));
    guard = 0;
    do {
        OK(MPI_Testall(1, rq, &flag, sts));
    } while (!flag && guard++ < 10000000);
    CHECK(flag && rq[0] == MPI_REQUEST_NULL && sts[0].MPI_TAG == 43, "testall completes");
}

static void cancel(void) {
    int x;
    MPI_Request r;
    MPI_Status st;
    OK(MPI_Irecv(&x, 1, MPI_INT, MPI_ANY_SOURCE, 999, MPI_COMM_WORLD, &r));
    OK(MPI_Cancel(&r));
    OK(MPI_Wait(&r, &st));
    int flag = 0;
    OK(MPI_Test_cancelled(&st, &flag));
    CHECK(flag, "receive not cancelled");
    CHECK(r == MPI_REQUEST_NULL, "cancelled request not freed");
    /* A completed receive is not cancelled. */
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    OK(MPI_Irecv(&x, 1, MPI_INT, prev, 50, MPI_COMM_WORLD, &r));
    OK(MPI_Send(&rank, 1, MPI_INT, next, 50, MPI_COMM_WORLD));
    OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_Status st2;
    OK(MPI_Probe(MPI_PROC_NULL, 0, MPI_COMM_WORLD, &st2));
    /* wait until matched */
    int done = 0;
    while (!done) OK(MPI_Test(&r, &done, &st));
    CHECK(x == prev, "x %d", x);
    OK(MPI_Test_cancelled(&st, &flag));
    CHECK(!flag, "completed receive reported cancelled");
}

static void order(void) {
    /* Non-overtaking: many messages of one tag arrive in order, with
     * ANY_TAG interleaving. */
    if (size < 2) return;
    if (rank == 0) {
        for (int i = 0; i < 50; i++) OK(MPI_Send(&i, 1, MPI_INT, 1, i % 3, MPI_COMM_WORLD));
    } else if (rank == 1) {
        for (int i = 0; i < 50; i++) {
            int v;
            MPI_Status st;
            OK(MPI_Recv(&v, 1, MPI_INT, 0, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
            CHECK(v == i && st.MPI_TAG == i % 3, "order v %d want %d", v, i);
        }
    }
    /* Mprobe/Mrecv. */
    if (rank == 0) {
        double d[3] = {1.5, 2.5, 3.5};
        OK(MPI_Send(d, 3, MPI_DOUBLE, 1, 60, MPI_COMM_WORLD));
    } else if (rank == 1) {
        MPI_Message m;
        MPI_Status st;
        OK(MPI_Mprobe(0, 60, MPI_COMM_WORLD, &m, &st));
        int c;
        OK(MPI_Get_count(&st, MPI_DOUBLE, &c));
        CHECK(c == 3, "mprobe count %d", c);
        double d[3];
        OK(MPI_Mrecv(d, 3, MPI_DOUBLE, &m, &st));
        CHECK(m == MPI_MESSAGE_NULL && d[2] == 3.5 && st.MPI_TAG == 60 && st.MPI_SOURCE == 0, "mrecv");
    }
    OK(MPI_Barrier(MPI_COMM_WORLD));
}

static void derived(void) {
    /* A vector column sent, received contiguous, and back. */
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    int m[4][5], col[4];
    for (int i = 0; i < 4; i++) for (int j = 0; j < 5; j++) m[i][j] = rank * 100 + i * 10 + j;
    MPI_Datatype vt;
    OK(MPI_Type_vector(4, 1, 5, MPI_INT, &vt));
    OK(MPI_Type_commit(&vt));
    MPI_Status st;
    OK(MPI_Sendrecv(&m[0][2], 1, vt, next, 70, col, 4, MPI_INT, prev, 70, MPI_COMM_WORLD, &st));
    for (int i = 0; i < 4; i++) CHECK(col[i] == prev * 100 + i * 10 + 2, "col[%d]=%d", i, col[i]);
    int c;
    OK(MPI_Get_count(&st, vt, &c));
    CHECK(c == 1, "count in vectors %d", c);
    OK(MPI_Get_elements(&st, vt, &c));
    CHECK(c == 4, "elements %d", c);
    /* Receive 2 ints into the vector type: Get_count undefined, elements 2 */
    OK(MPI_Sendrecv(col, 2, MPI_INT, next, 71, &m[0][0], 1, vt, prev, 71, MPI_COMM_WORLD, &st));
    OK(MPI_Get_count(&st, vt, &c));
    CHECK(c == MPI_UNDEFINED, "partial count %d", c);
    OK(MPI_Get_elements(&st, vt, &c));
    CHECK(c == 2, "partial elements %d", c);
    OK(MPI_Type_free(&vt));
    CHECK(vt == MPI_DATATYPE_NULL, "type free");
}

int main(int argc, char **argv) {
    start(&argc, &argv);
    modes();
    wildcards();
    procnull_zero();
    truncation();
    replace_persistent();
    waits();
    cancel();
    order();
    derived();
    return finish("p2p");
}
