/* p2pstd: behaviours that MPICH's test suite (pt2pt, comm, group, init,
 * errhan, attr, info, basic) expects and bcsmpi got wrong, one section per
 * defect, self-checking on any number of ranks (each rank talks to itself
 * and to its neighbours). Written for bcsmpi; no MPICH code. */
#include "dt.h"

#define MARK 12345 /* a value no call of this program returns as an error code */

/* Calls returning one status leave its MPI_ERROR as the program set it
 * (Open MPI does everywhere, MPICH 4.0 everywhere but Probe, Iprobe and
 * Sendrecv_replace; the return code is the error); Waitall, which
 * fills an array, sets each to MPI_SUCCESS. */
static void status_error_field(void) {
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    int out = rank, in = -1, flag = 0, idx = -1;
    MPI_Status st;
    MPI_Request r[2];
    MPI_Message m;

#define FRESH() (memset(&st, 0, sizeof st), st.MPI_ERROR = MARK)
#define KEPT(what) CHECK(st.MPI_ERROR == MARK, "%s: MPI_ERROR = %d, want it left at %d", what, st.MPI_ERROR, MARK)

    FRESH();
    OK(MPI_Sendrecv(&out, 1, MPI_INT, next, 1, &in, 1, MPI_INT, prev, 1, MPI_COMM_WORLD, &st));
    KEPT("MPI_Sendrecv");
    CHECK(in == prev && st.MPI_SOURCE == prev && st.MPI_TAG == 1, "Sendrecv got %d from %d tag %d", in, st.MPI_SOURCE, st.MPI_TAG);

    FRESH();
    in = out;
    OK(MPI_Sendrecv_replace(&in, 1, MPI_INT, next, 2, prev, 2, MPI_COMM_WORLD, &st));
    KEPT("MPI_Sendrecv_replace");

    OK(MPI_Isend(&out, 1, MPI_INT, next, 3, MPI_COMM_WORLD, &r[0]));
    FRESH();
    OK(MPI_Probe(prev, 3, MPI_COMM_WORLD, &st));
    KEPT("MPI_Probe");
    FRESH();
    while (!flag)
        OK(MPI_Iprobe(prev, 3, MPI_COMM_WORLD, &flag, &st));
    KEPT("MPI_Iprobe");
    FRESH();
    OK(MPI_Recv(&in, 1, MPI_INT, prev, 3, MPI_COMM_WORLD, &st));
    KEPT("MPI_Recv");
    FRESH();
    OK(MPI_Wait(&r[0], &st));
    KEPT("MPI_Wait");

    OK(MPI_Isend(&out, 1, MPI_INT, next, 4, MPI_COMM_WORLD, &r[0]));
    FRESH();
    OK(MPI_Mprobe(prev, 4, MPI_COMM_WORLD, &m, &st));
    KEPT("MPI_Mprobe");
    FRESH();
    OK(MPI_Mrecv(&in, 1, MPI_INT, &m, &st));
    KEPT("MPI_Mrecv");
    CHECK(in == prev && m == MPI_MESSAGE_NULL, "Mrecv got %d", in);
    flag = 0;
    FRESH();
    while (!flag)
        OK(MPI_Test(&r[0], &flag, &st));
    KEPT("MPI_Test");

    OK(MPI_Isend(&out, 1, MPI_INT, next, 5, MPI_COMM_WORLD, &r[0]));
    OK(MPI_Irecv(&in, 1, MPI_INT, prev, 5, MPI_COMM_WORLD, &r[1]));
    FRESH();
    OK(MPI_Waitany(2, r, &idx, &st));
    KEPT("MPI_Waitany");
    flag = 0;
    FRESH();
    while (!flag)
        OK(MPI_Testany(2, r, &idx, &flag, &st));
    KEPT("MPI_Testany");

    /* MPI_PROC_NULL: the status says source MPI_PROC_NULL, tag MPI_ANY_TAG,
     * count 0, and still leaves MPI_ERROR. */
    FRESH();
    OK(MPI_Recv(&in, 1, MPI_INT, MPI_PROC_NULL, 6, MPI_COMM_WORLD, &st));
    KEPT("MPI_Recv from MPI_PROC_NULL");
    int c = -1;
    OK(MPI_Get_count(&st, MPI_INT, &c));
    CHECK(st.MPI_SOURCE == MPI_PROC_NULL && st.MPI_TAG == MPI_ANY_TAG && c == 0, "PROC_NULL status %d %d %d", st.MPI_SOURCE, st.MPI_TAG, c);
    FRESH();
    OK(MPI_Mprobe(MPI_PROC_NULL, 6, MPI_COMM_WORLD, &m, &st));
    KEPT("MPI_Mprobe of MPI_PROC_NULL");
    CHECK(m == MPI_MESSAGE_NO_PROC, "Mprobe of MPI_PROC_NULL: message %p", (void *)m);
    FRESH();
    OK(MPI_Mrecv(&in, 1, MPI_INT, &m, &st));
    KEPT("MPI_Mrecv of MPI_MESSAGE_NO_PROC");

    /* The array form sets every MPI_ERROR. */
    MPI_Status sts[2];
    sts[0].MPI_ERROR = sts[1].MPI_ERROR = MARK;
    OK(MPI_Isend(&out, 1, MPI_INT, next, 7, MPI_COMM_WORLD, &r[0]));
    OK(MPI_Irecv(&in, 1, MPI_INT, prev, 7, MPI_COMM_WORLD, &r[1]));
    OK(MPI_Waitall(2, r, sts));
    CHECK(sts[0].MPI_ERROR == MPI_SUCCESS && sts[1].MPI_ERROR == MPI_SUCCESS, "Waitall errors %d %d", sts[0].MPI_ERROR, sts[1].MPI_ERROR);
#undef FRESH
#undef KEPT
}

/* Error classes and codes added and removed in a loop: the numbers are
 * reused, so the table and MPI_LASTUSEDCODE stay bounded (removing a class
 * scanned every number ever handed out, so such a loop took quadratic time),
 * and a class with a live code cannot be removed. */
static void error_codes_reused(void) {
    enum { NCLASS = 8, NCODE = 4, ROUNDS = 100 };
    int cls[NCLASS], code[NCLASS][NCODE], *last, flag, first = -1, most = 0;
    char text[MPI_MAX_ERROR_STRING];
    for (int round = 0; round < ROUNDS; round++) {
        for (int i = 0; i < NCLASS; i++) {
            OK(MPI_Add_error_class(&cls[i]));
            for (int j = 0; j < NCODE; j++) {
                OK(MPI_Add_error_code(cls[i], &code[i][j]));
                snprintf(text, sizeof text, "round %d class %d code %d", round, i, j);
                OK(MPI_Add_error_string(code[i][j], text));
                if (code[i][j] > most)
                    most = code[i][j];
            }
        }
        if (first < 0)
            first = cls[0];
        OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &last, &flag));
        CHECK(flag && *last == code[NCLASS - 1][NCODE - 1], "round %d: MPI_LASTUSEDCODE %d, want %d", round, *last, code[NCLASS - 1][NCODE - 1]);
        for (int i = 0; i < NCLASS; i++)
            for (int j = 0; j < NCODE; j++) {
                int c = -1, len = 0;
                char want[MPI_MAX_ERROR_STRING];
                OK(MPI_Error_class(code[i][j], &c));
                CHECK(c == cls[i], "class of code %d is %d, want %d", code[i][j], c, cls[i]);
                OK(MPI_Error_string(code[i][j], text, &len));
                snprintf(want, sizeof want, "round %d class %d code %d", round, i, j);
                CHECK(strcmp(text, want) == 0, "string of code %d is '%s', want '%s'", code[i][j], text, want);
            }
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        int rc = MPI_Remove_error_class(cls[0]), ec = -1;
        MPI_Error_class(rc, &ec);
        CHECK(ec == MPI_ERR_ARG, "removing a class with live codes: class %d, want MPI_ERR_ARG", ec);
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
        for (int i = 0; i < NCLASS; i++) {
            for (int j = 0; j < NCODE; j++) {
                OK(MPI_Remove_error_string(code[i][j]));
                OK(MPI_Remove_error_code(code[i][j]));
            }
            OK(MPI_Remove_error_class(cls[i]));
        }
    }
    CHECK(most < first + NCLASS * (NCODE + 1), "after %d rounds of %d numbers the largest code is %d (first %d): removed numbers are not reused",
          ROUNDS, NCLASS * (NCODE + 1), most, first);
}

/* MPI_Comm_dup when an attribute copy callback fails: the call fails with
 * the callback's code and newcomm is MPI_COMM_NULL (as in MPICH and Open
 * MPI; it was left unset, and the half-made duplicate was never released).
 * An attribute copied before the failing one does not survive either. */
static int copy_calls;
static int copy_fails(MPI_Comm c, int key, void *extra, void *in, void *out, int *flag) {
    (void)c, (void)key, (void)extra, (void)in, (void)out;
    copy_calls++;
    *flag = 1;
    return MPI_ERR_OTHER;
}
static void dup_copy_fails(void) {
    int kgood, kbad, rc, ec = -1, flag = 0, *val;
    static int payload = 7;
    MPI_Comm base, dup = MPI_COMM_WORLD;
    OK(MPI_Comm_dup(MPI_COMM_WORLD, &base));
    OK(MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, &kgood, NULL));
    OK(MPI_Comm_create_keyval(copy_fails, MPI_COMM_NULL_DELETE_FN, &kbad, NULL));
    OK(MPI_Comm_set_attr(base, kgood, &payload));
    OK(MPI_Comm_set_attr(base, kbad, &payload));
    OK(MPI_Comm_set_errhandler(base, MPI_ERRORS_RETURN));
    rc = MPI_Comm_dup(base, &dup);
    MPI_Error_class(rc, &ec);
    CHECK(ec == MPI_ERR_OTHER && copy_calls == 1, "Comm_dup with a failing copy callback: class %d (want MPI_ERR_OTHER), %d calls", ec, copy_calls);
    CHECK(dup == MPI_COMM_NULL, "Comm_dup that failed left newcomm = %p, want MPI_COMM_NULL", (void *)dup);
    /* Without the failing attribute the duplicate works and keeps the other. */
    OK(MPI_Comm_delete_attr(base, kbad));
    OK(MPI_Comm_dup(base, &dup));
    OK(MPI_Comm_get_attr(dup, kgood, &val, &flag));
    CHECK(flag && val == &payload, "the DUP_FN attribute: flag %d", flag);
    OK(MPI_Barrier(dup));
    OK(MPI_Comm_free(&dup));
    OK(MPI_Comm_free(&base));
    OK(MPI_Comm_free_keyval(&kgood));
    OK(MPI_Comm_free_keyval(&kbad));
}

/* MPI_LASTUSEDCODE is never below MPI_ERR_LASTCODE (MPI 5.0 §9.5: "always
 * greater than or equal to"): before any class is added and after all are
 * removed it was the last predefined class (62 < 16383). MPICH 4.0 and
 * Open MPI 4.1 give MPI_ERR_LASTCODE there too. */
static void lastusedcode_floor(void) {
    int *last = NULL, flag = 0, cls;
    OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &last, &flag));
    CHECK(flag && *last >= MPI_ERR_LASTCODE, "MPI_LASTUSEDCODE %d with no user class, want >= MPI_ERR_LASTCODE %d", flag ? *last : -1, MPI_ERR_LASTCODE);
    OK(MPI_Add_error_class(&cls));
    CHECK(cls > MPI_ERR_LASTCODE, "user class %d, want above MPI_ERR_LASTCODE", cls);
    OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &last, &flag));
    CHECK(flag && *last == cls, "MPI_LASTUSEDCODE %d, want %d", flag ? *last : -1, cls);
    OK(MPI_Remove_error_class(cls));
    OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &last, &flag));
    CHECK(flag && *last >= MPI_ERR_LASTCODE, "MPI_LASTUSEDCODE %d after removing every class, want >= %d", flag ? *last : -1, MPI_ERR_LASTCODE);
}

/* MPI_Type_dup when a type attribute's copy callback fails: the call fails
 * and newtype is MPI_DATATYPE_NULL, as MPI_Comm_dup gives MPI_COMM_NULL
 * (MPICH's attr/attrerrtype; newtype was a live half-made duplicate).
 * MPICH 4.0 gives MPI_DATATYPE_NULL; Open MPI 4.1 leaves newtype as it was. */
static int type_copy_fails(MPI_Datatype t, int key, void *extra, void *in, void *out, int *flag) {
    (void)t, (void)key, (void)extra, (void)in, (void)out;
    *flag = 1;
    return MPI_ERR_OTHER;
}
static int type_deletes;
static int type_delete_count(MPI_Datatype t, int key, void *val, void *extra) {
    (void)t, (void)key, (void)val, (void)extra;
    type_deletes++;
    return MPI_SUCCESS;
}
static void type_dup_copy_fails(void) {
    int key, rc, ec = -1;
    MPI_Datatype base, dup = MPI_INT;
    OK(MPI_Type_contiguous(2, MPI_INT, &base));
    OK(MPI_Type_create_keyval(type_copy_fails, type_delete_count, &key, NULL));
    OK(MPI_Type_set_attr(base, key, NULL));
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    rc = MPI_Type_dup(base, &dup);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    MPI_Error_class(rc, &ec);
    CHECK(ec == MPI_ERR_OTHER, "Type_dup with a failing copy callback: class %d, want MPI_ERR_OTHER", ec);
    CHECK(dup == MPI_DATATYPE_NULL, "Type_dup that failed left newtype = %p, want MPI_DATATYPE_NULL", (void *)dup);
    OK(MPI_Type_free(&base));
    CHECK(type_deletes == 1, "delete callback ran %d times, want 1 (the base's attribute only)", type_deletes);
    OK(MPI_Type_free_keyval(&key));
}

/* Buffered sends count a realistic header, not all of MPI_BSEND_OVERHEAD
 * (512 in the MPI-5 ABI, an upper bound): ten 40-byte messages to itself
 * fit in 2000 bytes, as under MPICH (96 bytes each) and Open MPI (128);
 * with 552 bytes each the fourth Bsend failed with MPI_ERR_BUFFER (MPICH's
 * pt2pt/bsend2-5). A message bigger than the buffer still fails. */
static void bsend_small_buffer(void) {
    static char buf[2000];
    int a[10], b[10], rc, cls = -1;
    void *p;
    int n;
    OK(MPI_Buffer_attach(buf, sizeof buf));
    for (int j = 0; j < 10; j++) {
        for (int i = 0; i < 10; i++)
            a[i] = 100 * j + i;
        OK(MPI_Bsend(a, 10, MPI_INT, rank, 50 + j, MPI_COMM_WORLD));
    }
    for (int j = 0; j < 10; j++) {
        OK(MPI_Recv(b, 10, MPI_INT, rank, 50 + j, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        CHECK(b[0] == 100 * j && b[9] == 100 * j + 9, "buffered message %d: %d..%d", j, b[0], b[9]);
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    rc = MPI_Bsend(buf, 1990, MPI_CHAR, rank, 60, MPI_COMM_WORLD); /* the data alone nearly fills it */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_BUFFER, "a message and its header beyond the buffer: class %d, want MPI_ERR_BUFFER", cls);
    OK(MPI_Buffer_detach(&p, &n));
    CHECK(p == buf && n == (int)sizeof buf, "Buffer_detach gave %p %d", p, n);
}

/* MPI_Comm_free does not wait for the other members: a rank frees a
 * communicator with a receive pending on it, and the message is sent only
 * after a handshake on MPI_COMM_WORLD; the receive then completes normally
 * (bcsmpi's free was a barrier over the communicator: deadlock). Rank 0
 * frees its copy last, after sending. */
static void free_with_pending_recv(void) {
    MPI_Comm c;
    MPI_Request r;
    int in[4] = {-1, -1, -1, -1}, out[4] = {10, 11, 12, 13}, last = size - 1;
    OK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
    if (size == 1) {
        OK(MPI_Comm_free(&c));
        CHECK(c == MPI_COMM_NULL, "Comm_free left %p", (void *)c);
        return;
    }
    if (rank == last) {
        OK(MPI_Irecv(in, 4, MPI_INT, 0, 9, c, &r));
        OK(MPI_Comm_free(&c));
        CHECK(c == MPI_COMM_NULL, "Comm_free left %p", (void *)c);
        OK(MPI_Sendrecv(NULL, 0, MPI_INT, 0, 8, NULL, 0, MPI_INT, 0, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
        CHECK(in[0] == 10 && in[3] == 13, "receive pending at Comm_free got %d..%d", in[0], in[3]);
    } else if (rank == 0) {
        OK(MPI_Sendrecv(NULL, 0, MPI_INT, last, 8, NULL, 0, MPI_INT, last, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        OK(MPI_Send(out, 4, MPI_INT, last, 9, c));
        OK(MPI_Comm_free(&c));
    } else {
        OK(MPI_Comm_free(&c));
    }
    OK(MPI_Barrier(MPI_COMM_WORLD));
}

int main(int argc, char **argv) {
    start(&argc, &argv);
    status_error_field();
    error_codes_reused();
    dup_copy_fails();
    lastusedcode_floor();
    type_dup_copy_fails();
    bsend_small_buffer();
    free_with_pending_recv();
    return finish("p2pstd");
}
