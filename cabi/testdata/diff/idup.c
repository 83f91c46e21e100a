/* idup: MPI_Comm_idup and MPI_Comm_idup_with_info as nonblocking
 * duplicates. Several are outstanding at once, of one parent and of
 * different parents (an intracommunicator, a split, an intercommunicator,
 * MPI_COMM_SELF), interleaved with other nonblocking collectives and with
 * point-to-point traffic that can only complete if the idup did not block,
 * and completed in different orders on different ranks (Wait in reverse,
 * Waitany, Test loops, Waitall). Every duplicate is then checked: size,
 * rank, MPI_CONGRUENT with its parent, a context of its own (a message sent
 * on the parent is not seen on the duplicate), and traffic on it.
 * Attributes are copied as if MPI_Comm_dup had run at the idup call (MPI
 * 5.0 §7.4.2): a value set on the parent after the call does not reach the
 * duplicate; a copy callback that fails makes the call fail (newcomm
 * MPI_COMM_NULL) while the duplicate completes in the background.
 * Self-checking on any number of ranks. */
#include "dt.h"

static int copies;

static int copy_fn(MPI_Comm c, int key, void *extra, void *in, void *out, int *flag) {
    (void)c; (void)key; (void)extra;
    copies++;
    *(void **)out = in;
    *flag = 1;
    return MPI_SUCCESS;
}

/* check_dup: dup is a working duplicate of parent (an intracommunicator or
 * an intercommunicator), with a context of its own. */
static void check_dup(MPI_Comm parent, MPI_Comm dup, const char *what) {
    int res, inter, n, pn, r, pr;
    CHECK(dup != MPI_COMM_NULL, "%s: MPI_COMM_NULL", what);
    if (dup == MPI_COMM_NULL)
        return;
    OK(MPI_Comm_compare(parent, dup, &res));
    CHECK(res == MPI_CONGRUENT, "%s: compare %d, want MPI_CONGRUENT", what, res);
    MPI_Comm_test_inter(dup, &inter);
    MPI_Comm_size(dup, &n);
    MPI_Comm_size(parent, &pn);
    MPI_Comm_rank(dup, &r);
    MPI_Comm_rank(parent, &pr);
    CHECK(n == pn && r == pr, "%s: size %d rank %d, want %d %d", what, n, r, pn, pr);
    int peers = n, to, from;
    if (inter)
        MPI_Comm_remote_size(dup, &peers);
    /* A message on the parent must not match a receive on the duplicate:
     * intra, rank r sends to r+1; inter, local rank r sends to remote rank
     * r % peers, so it receives from the remote ranks j with j % n == r. */
    to = inter ? r % peers : (r + 1) % n;
    from = (r + n - 1) % n;
    int token = 1000 + r, got = -1, flag = 1, receives = 0;
    for (int j = 0; j < peers; j++)
        if (!inter || j % n == r)
            receives++;
    if (!inter)
        receives = 1;
    MPI_Request sr;
    OK(MPI_Isend(&token, 1, MPI_INT, to, 5, parent, &sr));
    /* Everybody's message is posted on the parent before anyone probes the
     * duplicate: the barrier on the parent orders it. */
    OK(MPI_Barrier(parent));
    OK(MPI_Iprobe(MPI_ANY_SOURCE, 5, dup, &flag, MPI_STATUS_IGNORE));
    CHECK(!flag, "%s: a message sent on the parent is visible on the duplicate", what);
    for (int k = 0; k < receives; k++) {
        MPI_Status st;
        OK(MPI_Recv(&got, 1, MPI_INT, MPI_ANY_SOURCE, 5, parent, &st));
        CHECK(got == 1000 + st.MPI_SOURCE, "%s: got %d from %d on the parent", what, got, st.MPI_SOURCE);
    }
    OK(MPI_Wait(&sr, MPI_STATUS_IGNORE));
    /* Traffic on the duplicate itself. */
    if (!inter) {
        int sum = -1;
        OK(MPI_Allreduce(&r, &sum, 1, MPI_INT, MPI_SUM, dup));
        CHECK(sum == n * (n - 1) / 2, "%s: allreduce %d, want %d", what, sum, n * (n - 1) / 2);
        got = -1;
        OK(MPI_Sendrecv(&r, 1, MPI_INT, to, 6, &got, 1, MPI_INT, from, 6, dup, MPI_STATUS_IGNORE));
        CHECK(got == from, "%s: sendrecv got %d, want %d", what, got, from);
    } else {
        int sum = -1, rn = peers;
        OK(MPI_Allreduce(&r, &sum, 1, MPI_INT, MPI_SUM, dup)); /* the remote group's ranks */
        CHECK(sum == rn * (rn - 1) / 2, "%s: inter allreduce %d, want %d", what, sum, rn * (rn - 1) / 2);
    }
}

static int copy_fails(MPI_Comm c, int key, void *extra, void *in, void *out, int *flag) {
    (void)c; (void)key; (void)extra; (void)in; (void)out;
    *flag = 1;
    return MPI_ERR_OTHER;
}

int main(int argc, char **argv) {
    start(&argc, &argv);

    /* 1. Not blocking: ranks other than 0 start the idup, then Ssend to
     * rank 0, which receives every message before it starts its own idup. */
    MPI_Comm d0;
    MPI_Request q0;
    int v = rank;
    if (rank == 0) {
        for (int i = 1; i < size; i++) {
            OK(MPI_Recv(&v, 1, MPI_INT, i, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            CHECK(v == i, "recv %d from %d", v, i);
        }
        OK(MPI_Comm_idup(MPI_COMM_WORLD, &d0, &q0));
    } else {
        OK(MPI_Comm_idup(MPI_COMM_WORLD, &d0, &q0));
        OK(MPI_Ssend(&v, 1, MPI_INT, 0, 1, MPI_COMM_WORLD));
    }
    OK(MPI_Wait(&q0, MPI_STATUS_IGNORE));
    CHECK(q0 == MPI_REQUEST_NULL, "request not freed by Wait");
    check_dup(MPI_COMM_WORLD, d0, "idup while a message waits");

    /* 2. An attribute as at the call: set 7, idup, set 8, complete. */
    int key;
    OK(MPI_Comm_create_keyval(copy_fn, MPI_COMM_NULL_DELETE_FN, &key, NULL));
    OK(MPI_Comm_set_attr(d0, key, (void *)(intptr_t)7));
    MPI_Comm da;
    MPI_Request qa;
    OK(MPI_Comm_idup(d0, &da, &qa));
    OK(MPI_Comm_set_attr(d0, key, (void *)(intptr_t)8));
    OK(MPI_Wait(&qa, MPI_STATUS_IGNORE));
    void *val = NULL;
    int flag = 0;
    OK(MPI_Comm_get_attr(da, key, &val, &flag));
    CHECK(flag && val == (void *)(intptr_t)7, "attribute on the duplicate: flag %d value %ld, want 7 (the parent's at the call)",
          flag, (long)(intptr_t)val);
    CHECK(copies == 1, "copy callback ran %d times, want 1", copies);
    check_dup(d0, da, "idup with an attribute");
    OK(MPI_Comm_free(&da));

    /* 3. Many outstanding: 4 idups of WORLD, 2 of a split, 2 of d0 (with
     * info), one of SELF, interleaved with an Ibarrier and an Iallreduce on
     * WORLD; even ranks wait in reverse, odd ranks by Waitany. */
    enum { NW = 4, NS = 2, ND = 2, N = NW + NS + ND + 3 };
    MPI_Comm split, out[N], parent[N];
    MPI_Request q[N];
    OK(MPI_Comm_split(MPI_COMM_WORLD, rank % 2, -rank, &split));
    MPI_Info info;
    OK(MPI_Info_create(&info));
    OK(MPI_Info_set(info, "mpi_assert_no_any_tag", "false"));
    int k = 0, one = 1, sum = -1;
    for (int i = 0; i < NW; i++) {
        parent[k] = MPI_COMM_WORLD;
        OK(MPI_Comm_idup(MPI_COMM_WORLD, &out[k], &q[k]));
        k++;
        if (i == 1) {
            parent[k] = MPI_COMM_NULL;
            OK(MPI_Ibarrier(MPI_COMM_WORLD, &q[k]));
            k++;
        }
    }
    for (int i = 0; i < NS; i++) {
        parent[k] = split;
        OK(MPI_Comm_idup(split, &out[k], &q[k]));
        k++;
    }
    parent[k] = MPI_COMM_NULL;
    OK(MPI_Iallreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &q[k]));
    k++;
    for (int i = 0; i < ND; i++) {
        parent[k] = d0;
        OK(MPI_Comm_idup_with_info(d0, info, &out[k], &q[k]));
        k++;
    }
    OK(MPI_Info_free(&info));
    parent[k] = MPI_COMM_SELF;
    OK(MPI_Comm_idup(MPI_COMM_SELF, &out[k], &q[k]));
    k++;
    CHECK(k == N, "k %d", k);
    if (rank % 2 == 0) {
        for (int i = N - 1; i >= 0; i--)
            OK(MPI_Wait(&q[i], MPI_STATUS_IGNORE));
    } else {
        for (int i = 0; i < N; i++) {
            int idx = -1;
            OK(MPI_Waitany(N, q, &idx, MPI_STATUS_IGNORE));
            CHECK(idx >= 0 && idx < N, "waitany index %d", idx);
        }
    }
    CHECK(sum == size, "iallreduce %d, want %d", sum, size);
    for (int i = 0; i < N; i++) {
        CHECK(q[i] == MPI_REQUEST_NULL, "request %d not freed", i);
        if (parent[i] == MPI_COMM_NULL)
            continue;
        char what[64];
        snprintf(what, sizeof what, "outstanding idup %d", i);
        check_dup(parent[i], out[i], what);
    }
    /* The duplicates of one parent are distinct communicators. */
    int res;
    OK(MPI_Comm_compare(out[0], out[1], &res));
    CHECK(res == MPI_CONGRUENT, "two duplicates of WORLD compare %d, want MPI_CONGRUENT", res);
    for (int i = 0; i < N; i++)
        if (parent[i] != MPI_COMM_NULL)
            OK(MPI_Comm_free(&out[i]));

    /* 4. Intercommunicator: the two halves of WORLD (by parity), three
     * idups outstanding, completed by Test loops; a point-to-point message
     * across the intercommunicator is in flight meanwhile. */
    if (size >= 2) {
        MPI_Comm half, ic, idup[3];
        MPI_Request iq[3];
        OK(MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half)); /* leaders: world 0 and 1 */
        OK(MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, rank % 2 ? 0 : 1, 9, &ic));
        OK(MPI_Comm_free(&half));
        for (int i = 0; i < 3; i++)
            OK(MPI_Comm_idup(ic, &idup[i], &iq[i]));
        int lr, rsize, tok = -1, mine;
        MPI_Comm_rank(ic, &lr);
        MPI_Comm_remote_size(ic, &rsize);
        mine = 500 + lr;
        MPI_Request pr[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
        if (lr < rsize) {
            OK(MPI_Irecv(&tok, 1, MPI_INT, lr, 3, ic, &pr[0]));
            OK(MPI_Isend(&mine, 1, MPI_INT, lr, 3, ic, &pr[1]));
        }
        int done = 0;
        while (done < 3) {
            for (int i = 2; i >= 0; i--) {
                int f = 0;
                if (iq[i] == MPI_REQUEST_NULL)
                    continue;
                OK(MPI_Test(&iq[i], &f, MPI_STATUS_IGNORE));
                if (f)
                    done++;
            }
        }
        OK(MPI_Waitall(2, pr, MPI_STATUSES_IGNORE));
        if (lr < rsize)
            CHECK(tok == 500 + lr, "intercomm message %d, want %d", tok, 500 + lr);
        for (int i = 0; i < 3; i++) {
            check_dup(ic, idup[i], "intercommunicator idup");
            OK(MPI_Comm_free(&idup[i]));
        }
        OK(MPI_Comm_free(&ic));
    }

    /* 5. A copy callback that fails (on every rank): MPI_Comm_idup fails
     * with its code, newcomm is MPI_COMM_NULL and request MPI_REQUEST_NULL
     * (as MPICH); the duplicate completes in the background, so later
     * collectives and idups on the parent still match. */
    {
        MPI_Comm base, bad = MPI_COMM_WORLD, again;
        MPI_Request bq = MPI_REQUEST_NULL;
        int fkey, rc, cls = -1;
        OK(MPI_Comm_dup(MPI_COMM_WORLD, &base));
        OK(MPI_Comm_set_errhandler(base, MPI_ERRORS_RETURN));
        OK(MPI_Comm_create_keyval(copy_fails, MPI_COMM_NULL_DELETE_FN, &fkey, NULL));
        OK(MPI_Comm_set_attr(base, fkey, NULL));
        rc = MPI_Comm_idup(base, &bad, &bq);
        MPI_Error_class(rc, &cls);
        CHECK(cls == MPI_ERR_OTHER, "idup with a failing copy callback: class %d, want MPI_ERR_OTHER", cls);
        CHECK(bad == MPI_COMM_NULL && bq == MPI_REQUEST_NULL, "failed idup left newcomm %p request %p", (void *)bad, (void *)bq);
        OK(MPI_Barrier(base));
        OK(MPI_Comm_delete_attr(base, fkey));
        OK(MPI_Comm_idup(base, &again, &bq));
        OK(MPI_Wait(&bq, MPI_STATUS_IGNORE));
        check_dup(base, again, "idup after a failed one");
        OK(MPI_Comm_free(&again));
        OK(MPI_Comm_free(&base));
        OK(MPI_Comm_free_keyval(&fkey));
    }

    /* 6. Errors: request NULL, newcomm NULL, comm MPI_COMM_NULL are
     * reported (MPI_ERRORS_RETURN on WORLD). */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm bad;
    MPI_Request bq;
    int rc = MPI_Comm_idup(MPI_COMM_NULL, &bad, &bq);
    int cls = -1;
    MPI_Error_class(rc, &cls);
    CHECK(rc != MPI_SUCCESS && cls == MPI_ERR_COMM, "idup of MPI_COMM_NULL: rc %d class %d, want MPI_ERR_COMM", rc, cls);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);

    OK(MPI_Comm_free_keyval(&key));
    OK(MPI_Comm_free(&split));
    OK(MPI_Comm_free(&d0));
    return finish("idup");
}
