/* rest: the rest of the ABI (abi11): an intercommunicator call on an
 * intracommunicator fails with MPI_ERR_COMM under MPI_ERRORS_RETURN, info objects,
 * handle conversion, status accessors, the tool interface's presence, user
 * attributes, MPI_ERR_IN_STATUS. Prints "rest ok <rank>". */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

static void remote(void) {
    int rc, n;
    rc = MPI_Comm_remote_size(MPI_COMM_WORLD, &n); /* an intracommunicator */
    CHECK(rc == MPI_ERR_COMM, "MPI_Comm_remote_size returned %d", rc);
    /* The profiling name fails the same way. */
    rc = PMPI_Comm_remote_size(MPI_COMM_WORLD, &n);
    CHECK(rc == MPI_ERR_COMM, "PMPI_Comm_remote_size returned %d", rc);
}

static void tools(void) {
    int provided, n;
    OK(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));
    OK(MPI_T_cvar_get_num(&n));
    CHECK(n > 0, "%d cvars", n);
    OK(MPI_T_pvar_get_num(&n));
    CHECK(n > 0, "%d pvars", n);
    int rc = MPI_T_cvar_get_info(-1, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
    CHECK(rc == MPI_T_ERR_INVALID_INDEX, "MPI_T_cvar_get_info returned %d", rc); /* mpit.c tests the rest */
    OK(MPI_T_finalize());
}

static void infos(void) {
    MPI_Info info, dup;
    char key[MPI_MAX_INFO_KEY], val[MPI_MAX_INFO_VAL];
    int n, flag, len;
    OK(MPI_Info_create(&info));
    OK(MPI_Info_set(info, "alpha", "1"));
    OK(MPI_Info_set(info, "beta", "two"));
    OK(MPI_Info_set(info, "alpha", "one"));
    OK(MPI_Info_get_nkeys(info, &n));
    CHECK(n == 2, "nkeys %d", n);
    OK(MPI_Info_get_nthkey(info, 1, key));
    CHECK(strcmp(key, "beta") == 0, "key 1 = %s", key);
    len = sizeof val;
    OK(MPI_Info_get_string(info, "alpha", &len, val, &flag));
    CHECK(flag && strcmp(val, "one") == 0 && len == 4, "alpha = %s (flag %d, len %d)", val, flag, len);
    len = 2; /* truncated, the full length comes back */
    OK(MPI_Info_get_string(info, "beta", &len, val, &flag));
    CHECK(flag && strcmp(val, "t") == 0 && len == 4, "beta = %s (len %d)", val, len);
    OK(MPI_Info_get_string(info, "gamma", &len, val, &flag));
    CHECK(!flag, "gamma found");
    OK(MPI_Info_dup(info, &dup));
    OK(MPI_Info_delete(info, "alpha"));
    OK(MPI_Info_get_nkeys(info, &n));
    CHECK(n == 1, "nkeys after delete %d", n);
    OK(MPI_Info_get_nkeys(dup, &n));
    CHECK(n == 2, "the duplicate changed: %d keys", n);
    int rc = MPI_Info_delete(info, "alpha");
    CHECK(rc == MPI_ERR_INFO_NOKEY, "deleting a missing key returned %d", rc);
    OK(MPI_Info_free(&dup));
    CHECK(dup == MPI_INFO_NULL, "freed info not MPI_INFO_NULL");
    rc = MPI_Info_get_nkeys(dup, &n);
    CHECK(rc == MPI_ERR_INFO, "MPI_INFO_NULL returned %d", rc);
    MPI_Info stale = info;
    OK(MPI_Info_free(&info));
    rc = MPI_Info_set(stale, "k", "v");
    CHECK(rc == MPI_ERR_INFO, "a freed info returned %d", rc);
    OK(MPI_Info_get_string(MPI_INFO_ENV, "maxprocs", &(int){MPI_MAX_INFO_VAL}, val, &flag));
    CHECK(flag && atoi(val) == size, "MPI_INFO_ENV maxprocs = %s (flag %d)", val, flag);
    rc = MPI_Info_set(MPI_INFO_ENV, "k", "v");
    CHECK(rc == MPI_ERR_INFO, "setting MPI_INFO_ENV returned %d", rc);
    MPI_Comm c;
    OK(MPI_Info_create(&info));
    OK(MPI_Info_set(info, "mpi_assert_no_any_tag", "true"));
    OK(MPI_Comm_dup_with_info(MPI_COMM_WORLD, info, &c));
    OK(MPI_Comm_set_info(c, info));
    OK(MPI_Info_free(&info));
    OK(MPI_Comm_get_info(c, &info));
    OK(MPI_Info_get_nkeys(info, &n));
    OK(MPI_Info_free(&info));
    OK(MPI_Comm_free(&c));
}

static void conversions(void) {
    MPI_Comm c;
    OK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
    int i = MPI_Comm_toint(c);
    CHECK(MPI_Comm_fromint(i) == c, "fromint(toint(c)) != c");
    CHECK(MPI_Comm_toint(MPI_COMM_WORLD) == 0x101, "toint(MPI_COMM_WORLD) = %d", MPI_Comm_toint(MPI_COMM_WORLD));
    CHECK(MPI_Type_fromint(0x209) == MPI_INT, "fromint(0x209) is not MPI_INT");
    OK(MPI_Comm_free(&c));
    MPI_Status st;
    int v;
    OK(MPI_Status_set_source(&st, 7));
    OK(MPI_Status_set_tag(&st, 8));
    OK(MPI_Status_set_error(&st, MPI_ERR_TAG));
    OK(MPI_Status_set_cancelled(&st, 1));
    OK(MPI_Status_get_source(&st, &v));
    CHECK(v == 7 && st.MPI_SOURCE == 7, "source %d", v);
    OK(MPI_Status_get_tag(&st, &v));
    CHECK(v == 8, "tag %d", v);
    OK(MPI_Status_get_error(&st, &v));
    CHECK(v == MPI_ERR_TAG, "error %d", v);
    OK(MPI_Test_cancelled(&st, &v));
    CHECK(v == 1, "cancelled %d", v);
}

/* A synchronous send to a receiver that posts late has not completed after
 * a round trip that shows it was exchanged; a standard send of the same
 * size, buffered, has (the control). Ranks 0 and 1. */
static void ssend_waits_for_the_receive(MPI_Comm comm) {
    int me, n, flag, x = 7, y = 0, z = 9, w = 0;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &n);
    if (n < 2 || me > 1)
        return;
    if (me == 0) {
        MPI_Request s, b;
        OK(MPI_Issend(&x, 1, MPI_INT, 1, 1, comm, &s));
        OK(MPI_Isend(&z, 1, MPI_INT, 1, 5, comm, &b));
        OK(MPI_Send(&x, 1, MPI_INT, 1, 2, comm));
        OK(MPI_Recv(&y, 1, MPI_INT, 1, 3, comm, MPI_STATUS_IGNORE));
        OK(MPI_Test(&b, &flag, MPI_STATUS_IGNORE));
        CHECK(flag, "the buffered standard send has not completed after the round trip");
        OK(MPI_Test(&s, &flag, MPI_STATUS_IGNORE));
        CHECK(!flag, "MPI_Issend completed before rank 1 posted its receive");
        OK(MPI_Send(&x, 1, MPI_INT, 1, 4, comm));
        OK(MPI_Wait(&s, MPI_STATUS_IGNORE));
        OK(MPI_Ssend(&x, 1, MPI_INT, 1, 6, comm)); /* the blocking form, to a posted receive */
        MPI_Request p;
        OK(MPI_Ssend_init(&x, 1, MPI_INT, 1, 7, comm, &p));
        OK(MPI_Start(&p));
        OK(MPI_Wait(&p, MPI_STATUS_IGNORE));
        OK(MPI_Request_free(&p));
    } else {
        MPI_Request r;
        OK(MPI_Recv(&y, 1, MPI_INT, 0, 2, comm, MPI_STATUS_IGNORE));
        OK(MPI_Send(&y, 1, MPI_INT, 0, 3, comm));
        OK(MPI_Recv(&y, 1, MPI_INT, 0, 4, comm, MPI_STATUS_IGNORE));
        OK(MPI_Irecv(&w, 1, MPI_INT, 0, 6, comm, &r));
        OK(MPI_Recv(&y, 1, MPI_INT, 0, 1, comm, MPI_STATUS_IGNORE));
        CHECK(y == 7, "synchronous message %d", y);
        OK(MPI_Recv(&y, 1, MPI_INT, 0, 5, comm, MPI_STATUS_IGNORE));
        CHECK(y == 9, "buffered message %d", y);
        OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
        OK(MPI_Recv(&y, 1, MPI_INT, 0, 7, comm, MPI_STATUS_IGNORE));
    }
}

/* On a one-process communicator a synchronous send completes when its
 * receive takes it. */
static void ssend_self(void) {
    int x = 3, y = 0, flag;
    MPI_Request s;
    OK(MPI_Issend(&x, 1, MPI_INT, 0, 1, MPI_COMM_SELF, &s));
    OK(MPI_Test(&s, &flag, MPI_STATUS_IGNORE));
    CHECK(!flag, "MPI_Issend to self completed before the receive");
    OK(MPI_Recv(&y, 1, MPI_INT, 0, 1, MPI_COMM_SELF, MPI_STATUS_IGNORE));
    OK(MPI_Test(&s, &flag, MPI_STATUS_IGNORE));
    CHECK(flag && y == 3, "MPI_Issend to self: flag %d, received %d", flag, y);
    int rc = MPI_Ssend(&x, 1, MPI_INT, 0, 2, MPI_COMM_SELF);
    CHECK(rc == MPI_ERR_OTHER, "MPI_Ssend to self with no receive returned %d, want a deadlock (MPI_ERR_OTHER)", rc);
}

/* MPI_Cancel of a receive nothing matches, of a receive already matched, of
 * a buffered send, and of an unmatched synchronous send. */
static void cancels(MPI_Comm comm) {
    int me, n, x = 1, y = 0, flag;
    MPI_Status st;
    MPI_Request r;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &n);
    OK(MPI_Irecv(&y, 1, MPI_INT, MPI_ANY_SOURCE, 97, comm, &r)); /* no one sends tag 97 */
    OK(MPI_Cancel(&r));
    OK(MPI_Wait(&r, &st));
    OK(MPI_Test_cancelled(&st, &flag));
    CHECK(flag, "the unmatched receive was not cancelled");
    CHECK(r == MPI_REQUEST_NULL, "the cancelled request is not MPI_REQUEST_NULL after MPI_Wait");
    int peer = (me + 1) % n, from = (me + n - 1) % n;
    OK(MPI_Send(&x, 1, MPI_INT, peer, 99, comm));
    OK(MPI_Irecv(&y, 1, MPI_INT, from, 99, comm, &r));
    OK(MPI_Wait(&r, &st)); /* matched: a cancel now does nothing */
    OK(MPI_Test_cancelled(&st, &flag));
    CHECK(!flag && y == 1, "a completed receive reads cancelled %d (y %d)", flag, y);
    /* A synchronous send no one receives is withdrawn; the matched one is not. */
    MPI_Request s;
    OK(MPI_Issend(&x, 1, MPI_INT, peer, 98, comm, &s));
    OK(MPI_Cancel(&s));
    OK(MPI_Wait(&s, &st));
    OK(MPI_Test_cancelled(&st, &flag));
    CHECK(flag, "the unmatched synchronous send was not cancelled");
    OK(MPI_Barrier(comm));
    OK(MPI_Iprobe(from, 98, comm, &flag, MPI_STATUS_IGNORE));
    CHECK(!flag, "the cancelled synchronous send was delivered");
    OK(MPI_Barrier(comm));
}

/* Matched probes: the probed message is claimed, a later wildcard receive
 * does not take it, and Mrecv/Imrecv deliver it; MPI_PROC_NULL gives
 * MPI_MESSAGE_NO_PROC. */
static void mprobes(MPI_Comm comm) {
    int me, n, a[3] = {0}, b = 0, flag, count;
    MPI_Status st;
    MPI_Message m;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &n);
    int peer = (me + 1) % n, from = (me + n - 1) % n;
    int out[3] = {me, me + 10, me + 20}, second = me + 100;
    OK(MPI_Send(out, 3, MPI_INT, peer, 40, comm));
    OK(MPI_Send(&second, 1, MPI_INT, peer, 41, comm));
    OK(MPI_Mprobe(from, 40, comm, &m, &st));
    CHECK(m != MPI_MESSAGE_NULL && st.MPI_SOURCE == from && st.MPI_TAG == 40, "Mprobe source %d tag %d", st.MPI_SOURCE, st.MPI_TAG);
    OK(MPI_Get_count(&st, MPI_INT, &count));
    CHECK(count == 3, "Mprobe count %d", count);
    /* The claimed message is not for this wildcard receive: it gets tag 41. */
    OK(MPI_Recv(&b, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &st));
    CHECK(st.MPI_TAG == 41 && b == from + 100, "the wildcard receive got tag %d value %d", st.MPI_TAG, b);
    OK(MPI_Mrecv(a, 3, MPI_INT, &m, &st));
    CHECK(m == MPI_MESSAGE_NULL && a[0] == from && a[2] == from + 20 && st.MPI_TAG == 40, "Mrecv got %d %d", a[0], a[2]);
    OK(MPI_Send(out, 3, MPI_INT, peer, 42, comm));
    do {
        OK(MPI_Improbe(from, 42, comm, &flag, &m, &st));
    } while (!flag);
    MPI_Request r;
    OK(MPI_Imrecv(a, 3, MPI_INT, &m, &r));
    OK(MPI_Wait(&r, &st));
    OK(MPI_Get_count(&st, MPI_INT, &count));
    CHECK(count == 3 && a[1] == from + 10 && st.MPI_SOURCE == from, "Imrecv count %d a[1] %d", count, a[1]);
    int rc = MPI_Mrecv(a, 3, MPI_INT, &m, &st);
    CHECK(rc == MPI_ERR_REQUEST, "MPI_Mrecv of MPI_MESSAGE_NULL returned %d", rc);
    OK(MPI_Mprobe(MPI_PROC_NULL, 0, comm, &m, &st));
    CHECK(m == MPI_MESSAGE_NO_PROC && st.MPI_SOURCE == MPI_PROC_NULL, "probe of MPI_PROC_NULL");
    OK(MPI_Mrecv(a, 3, MPI_INT, &m, &st));
    CHECK(st.MPI_SOURCE == MPI_PROC_NULL && m == MPI_MESSAGE_NULL, "Mrecv of MPI_MESSAGE_NO_PROC");
    OK(MPI_Improbe(from, 43, comm, &flag, &m, &st));
    CHECK(!flag, "Improbe found a message no one sent");
    OK(MPI_Barrier(comm));
}

static int copies, deletes;
static int copy_fn(MPI_Comm c, int k, void *extra, void *in, void *out, int *flag) {
    (void)c, (void)k;
    copies++;
    *(void **)out = (char *)in + *(int *)extra;
    *flag = 1;
    return MPI_SUCCESS;
}
static int delete_fn(MPI_Comm c, int k, void *val, void *extra) {
    (void)c, (void)k, (void)val, (void)extra;
    deletes++;
    return MPI_SUCCESS;
}

static void attributes(void) {
    static int step = 1;
    static char base[8];
    int k, k2, flag;
    void *v;
    OK(MPI_Comm_create_keyval(copy_fn, delete_fn, &k, &step));
    OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &k2, NULL));
    MPI_Comm c, d;
    OK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
    OK(MPI_Comm_get_attr(c, k, &v, &flag));
    CHECK(!flag, "an attribute never set is found");
    OK(MPI_Comm_set_attr(c, k, base));
    OK(MPI_Comm_set_attr(c, k2, base + 4));
    OK(MPI_Comm_get_attr(c, k, &v, &flag));
    CHECK(flag && v == base, "get_attr flag %d", flag);
    OK(MPI_Comm_set_attr(c, k, base + 2)); /* replaces: the old value is deleted */
    CHECK(deletes == 1, "%d deletes after replacing", deletes);
    OK(MPI_Comm_dup(c, &d)); /* copies k through copy_fn, not k2 (null copy) */
    CHECK(copies == 1, "%d copies", copies);
    OK(MPI_Comm_get_attr(d, k, &v, &flag));
    CHECK(flag && v == base + 3, "the copy callback's value: flag %d", flag);
    OK(MPI_Comm_get_attr(d, k2, &v, &flag));
    CHECK(!flag, "the null copy function copied");
    OK(MPI_Comm_delete_attr(c, k2));
    int rc = MPI_Comm_delete_attr(c, k2);
    CHECK(rc == MPI_ERR_KEYVAL, "deleting a missing attribute returned %d", rc);
    OK(MPI_Comm_free_keyval(&k2));
    CHECK(k2 == MPI_KEYVAL_INVALID, "the freed keyval is %d", k2);
    OK(MPI_Comm_free(&c)); /* deletes k on c */
    CHECK(deletes == 2, "%d deletes after freeing c", deletes);
    OK(MPI_Comm_free(&d));
    CHECK(deletes == 3, "%d deletes after freeing d", deletes);
    int *tag_ub;
    OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &tag_ub, &flag));
    CHECK(flag && *tag_ub >= 32767, "MPI_TAG_UB");
    rc = MPI_Comm_get_attr(MPI_COMM_WORLD, 12345, &v, &flag);
    CHECK(rc == MPI_ERR_KEYVAL, "an unknown keyval returned %d", rc);
    /* An attribute on MPI_COMM_SELF is deleted at MPI_Finalize. */
    OK(MPI_Comm_set_attr(MPI_COMM_SELF, k, base));
}

/* MPI_ERR_IN_STATUS: one of the requests of Waitall/Testall/Waitsome fails
 * (truncation); each status's MPI_ERROR says which. */
static void in_status(MPI_Comm comm) {
    int me, n, big[2] = {1, 2}, small = 0, ok = 0, flag, outcount, idx[2];
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &n);
    int peer = (me + 1) % n, from = (me + n - 1) % n;
    for (int round = 0; round < 3; round++) {
        MPI_Request r[2];
        MPI_Status st[2];
        OK(MPI_Irecv(&ok, 1, MPI_INT, from, 50, comm, &r[0]));
        OK(MPI_Irecv(&small, 1, MPI_INT, from, 51, comm, &r[1]));
        OK(MPI_Send(big, 1, MPI_INT, peer, 50, comm));
        OK(MPI_Send(big, 2, MPI_INT, peer, 51, comm));
        st[0].MPI_ERROR = st[1].MPI_ERROR = -1;
        int rc;
        if (round == 0) {
            rc = MPI_Waitall(2, r, st);
        } else if (round == 1) {
            do {
                rc = MPI_Testall(2, r, &flag, st);
            } while (rc == MPI_SUCCESS && !flag);
        } else {
            rc = MPI_Waitsome(2, r, &outcount, idx, st);
            if (rc == MPI_SUCCESS) { /* the good one alone; the other next */
                CHECK(outcount == 1 && idx[0] == 0 && st[0].MPI_ERROR == MPI_SUCCESS, "Waitsome outcount %d", outcount);
                rc = MPI_Waitsome(2, r, &outcount, idx, st);
                CHECK(rc == MPI_ERR_IN_STATUS && outcount == 1 && idx[0] == 1 && st[0].MPI_ERROR == MPI_ERR_TRUNCATE,
                      "Waitsome rc %d outcount %d error %d", rc, outcount, st[0].MPI_ERROR);
            } else {
                CHECK(rc == MPI_ERR_IN_STATUS && outcount == 2, "Waitsome rc %d outcount %d", rc, outcount);
                CHECK(st[idx[0] == 1 ? 0 : 1].MPI_ERROR == MPI_ERR_TRUNCATE, "Waitsome statuses");
            }
            OK(MPI_Barrier(comm));
            continue;
        }
        CHECK(rc == MPI_ERR_IN_STATUS, "round %d returned %d, want MPI_ERR_IN_STATUS", round, rc);
        CHECK(st[0].MPI_ERROR == MPI_SUCCESS && st[1].MPI_ERROR == MPI_ERR_TRUNCATE, "round %d statuses' errors %d %d",
              round, st[0].MPI_ERROR, st[1].MPI_ERROR);
        CHECK(r[0] == MPI_REQUEST_NULL && r[1] == MPI_REQUEST_NULL, "round %d left requests", round);
        OK(MPI_Barrier(comm));
    }
}

static void misc(void) {
    double *p;
    OK(MPI_Alloc_mem(4 * sizeof(double), MPI_INFO_NULL, &p));
    p[3] = 1.5;
    OK(MPI_Free_mem(p));
    int flag = -1;
    OK(MPI_Comm_test_inter(MPI_COMM_WORLD, &flag));
    CHECK(flag == 0, "test_inter %d", flag);
    MPI_Group world, g;
    OK(MPI_Comm_group(MPI_COMM_WORLD, &world));
    int ranges[1][3] = {{size - 1, 0, -2}}, n, r;
    OK(MPI_Group_range_incl(world, 1, ranges, &g));
    OK(MPI_Group_size(g, &n));
    CHECK(n == (size - 1) / 2 + 1, "range_incl size %d", n);
    OK(MPI_Group_rank(g, &r));
    CHECK(r == ((size - 1 - rank) % 2 == 0 ? (size - 1 - rank) / 2 : MPI_UNDEFINED), "range_incl rank %d", r);
    OK(MPI_Group_free(&g));
    OK(MPI_Group_range_excl(world, 1, ranges, &g));
    OK(MPI_Group_size(g, &n));
    CHECK(n == size - ((size - 1) / 2 + 1), "range_excl size %d", n);
    OK(MPI_Group_free(&g));
    int bad[1][3] = {{0, size, 1}};
    int rc = MPI_Group_range_incl(world, 1, bad, &g);
    CHECK(rc == MPI_ERR_ARG, "a range past the group returned %d", rc);
    OK(MPI_Group_free(&world));
    MPI_Comm c;
    MPI_Request q;
    OK(MPI_Comm_idup(MPI_COMM_WORLD, &c, &q));
    OK(MPI_Wait(&q, MPI_STATUS_IGNORE));
    OK(MPI_Comm_size(c, &n));
    CHECK(n == size && q == MPI_REQUEST_NULL, "idup size %d", n);
    OK(MPI_Comm_free(&c));
    int x = rank, y = -1;
    MPI_Request rs[2];
    OK(MPI_Recv_init(&y, 1, MPI_INT, 0, 3, MPI_COMM_SELF, &rs[0]));
    OK(MPI_Rsend_init(&x, 1, MPI_INT, 0, 3, MPI_COMM_SELF, &rs[1]));
    OK(MPI_Startall(2, rs));
    OK(MPI_Waitall(2, rs, MPI_STATUSES_IGNORE));
    CHECK(y == rank, "Rsend_init delivered %d", y);
    OK(MPI_Request_free(&rs[0]));
    OK(MPI_Request_free(&rs[1]));
}

int main(int argc, char **argv) {
    OK(MPI_Init(&argc, &argv));
    OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    remote();
    tools();
    infos();
    conversions();
    ssend_waits_for_the_receive(MPI_COMM_WORLD);
    ssend_self();
    cancels(MPI_COMM_WORLD);
    cancels(MPI_COMM_SELF);
    mprobes(MPI_COMM_WORLD);
    mprobes(MPI_COMM_SELF);
    attributes();
    in_status(MPI_COMM_WORLD);
    in_status(MPI_COMM_SELF);
    misc();
    OK(MPI_Finalize());
    CHECK(deletes == 4, "%d deletes after MPI_Finalize, want 4 (MPI_COMM_SELF's attribute)", deletes);
    printf("rest ok %d\n", rank);
    return 0;
}
