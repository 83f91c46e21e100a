/* commlimit: communicator churn and exhaustion. argv[1] picks the part:
 *  "churn": batches of MPI_Comm_dup then MPI_Comm_free, and of
 *    MPI_Comm_split then MPI_Comm_free, more communicators in all than the
 *    runtime lets one process hold at once (so freed ones must make room),
 *    each checked for its group and used now and then;
 *  "limit": under MPI_ERRORS_RETURN, rank 0 first holds EXTRA communicators
 *    of its own (MPI_Comm_create with the group {0}), then every rank
 *    duplicates MPI_COMM_WORLD until the runtime refuses: every rank must be
 *    refused at the same call (the limit is rank 0's), with MPI_ERR_OTHER, a
 *    message naming the limit, and MPI_COMM_NULL; MPI_Comm_idup is refused
 *    too (at its MPI_Wait); the job goes on, frees everything, and then
 *    MPI_Comm_split makes as many again plus EXTRA (the freed slots count
 *    again), to the next refusal;
 *  "fatal": duplicates under MPI_ERRORS_ARE_FATAL until the refusal ends
 *    the job (the Go test checks its message);
 *  "cancel": receives stay pending across every member's MPI_Comm_free:
 *    one is matched afterwards, the other cancelled (MPI 5.0 §7.4.3);
 *  "inter": rank 0 at the limit less a few: MPI_Comm_dup of an
 *    intercommunicator whose local duplicate only rank 0's group is refused
 *    fails in both groups; MPI_Intercomm_create and
 *    MPI_Intercomm_create_from_groups refused again and again leak nothing
 *    (once rank 0 frees three, one is made); "interleak": the same
 *    without the duplicate.
 * Prints "commlimit ok <rank>". Self-checking; any size >= 2. */
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

enum { BATCH = 100, MAXCOMMS = 8192, EXTRA = 100 };

/* check: c is a communicator of the world's processes in world order. */
static void check(MPI_Comm c, int use) {
    int r, n, cmp, sum;
    OK(MPI_Comm_rank(c, &r));
    OK(MPI_Comm_size(c, &n));
    CHECK(r == rank && n == size, "rank %d of %d, want %d of %d", r, n, rank, size);
    OK(MPI_Comm_compare(c, MPI_COMM_WORLD, &cmp));
    CHECK(cmp == MPI_CONGRUENT, "compare = %d, want MPI_CONGRUENT", cmp);
    if (use) {
        OK(MPI_Allreduce(&r, &sum, 1, MPI_INT, MPI_SUM, c));
        CHECK(sum == size * (size - 1) / 2, "sum %d", sum);
    }
}

static void churn(void) {
    static MPI_Comm cs[BATCH];
    MPI_Comm base;
    OK(MPI_Comm_dup(MPI_COMM_WORLD, &base));
    for (int b = 0; b < 45; b++) { /* 4500 duplicates, more than one process may hold */
        for (int i = 0; i < BATCH; i++)
            OK(MPI_Comm_dup(base, &cs[i]));
        for (int i = 0; i < BATCH; i++)
            check(cs[i], i == b % BATCH);
        for (int i = 0; i < BATCH; i++) {
            OK(MPI_Comm_free(&cs[i]));
            CHECK(cs[i] == MPI_COMM_NULL, "the freed handle is not MPI_COMM_NULL");
        }
    }
    for (int b = 0; b < 10; b++) { /* splits by parity: half the members each */
        for (int i = 0; i < BATCH; i++)
            OK(MPI_Comm_split(base, rank % 2, -rank, &cs[i]));
        int r, n, want = (size - rank % 2 + 1) / 2;
        OK(MPI_Comm_size(cs[b], &n));
        OK(MPI_Comm_rank(cs[b], &r));
        CHECK(n == want, "split size %d, want %d", n, want);
        CHECK(r == (size - 1 - rank) / 2, "split rank %d, want %d (keys reverse the order)", r, (size - 1 - rank) / 2);
        for (int i = 0; i < BATCH; i++)
            OK(MPI_Comm_free(&cs[i]));
    }
    OK(MPI_Comm_free(&base));
}

/* fill makes communicators with MPI_Comm_dup (split: MPI_Comm_split) of
 * the world until the runtime refuses; it checks the refusal and returns
 * how many it made. */
static int fill(MPI_Comm *cs, int split) {
    int n = 0, rc = MPI_SUCCESS;
    while (n < MAXCOMMS) {
        MPI_Comm c = MPI_COMM_WORLD;
        rc = split ? MPI_Comm_split(MPI_COMM_WORLD, 0, rank, &c) : MPI_Comm_dup(MPI_COMM_WORLD, &c);
        if (rc != MPI_SUCCESS) {
            CHECK(c == MPI_COMM_NULL, "a refused communicator is not MPI_COMM_NULL");
            break;
        }
        cs[n++] = c;
    }
    CHECK(rc != MPI_SUCCESS, "%d communicators made, never refused", n);
    int cls;
    OK(MPI_Error_class(rc, &cls));
    CHECK(cls == MPI_ERR_OTHER, "refused with class %d, want MPI_ERR_OTHER", cls);
    /* Every rank was refused at the same call. */
    int lo, hi;
    OK(MPI_Allreduce(&n, &lo, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD));
    OK(MPI_Allreduce(&n, &hi, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD));
    CHECK(lo == n && hi == n, "made %d here, %d..%d across ranks", n, lo, hi);
    check(cs[n - 1], 1); /* the last one made works */
    return n;
}

static void limit(void) {
    static MPI_Comm cs[MAXCOMMS], mine[EXTRA];
    MPI_Group world, zero;
    int z = 0;
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    OK(MPI_Comm_group(MPI_COMM_WORLD, &world));
    OK(MPI_Group_incl(world, 1, &z, &zero));
    for (int i = 0; i < EXTRA; i++) {
        OK(MPI_Comm_create(MPI_COMM_WORLD, zero, &mine[i]));
        CHECK((mine[i] == MPI_COMM_NULL) == (rank != 0), "MPI_Comm_create of {0} gave %s", mine[i] == MPI_COMM_NULL ? "MPI_COMM_NULL" : "a communicator");
    }
    int n = fill(cs, 0);
    /* The world counts as one of rank 0's communicators. */
    CHECK(n == 4096 - 1 - EXTRA, "made %d duplicates, want %d", n, 4096 - 1 - EXTRA);
    /* MPI_Comm_idup is refused at its completion. */
    MPI_Comm c = MPI_COMM_WORLD;
    MPI_Request req;
    OK(MPI_Comm_idup(MPI_COMM_WORLD, &c, &req));
    int rc = MPI_Wait(&req, MPI_STATUS_IGNORE), cls = -1;
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_OTHER, "MPI_Wait of a refused MPI_Comm_idup: rc %d class %d, want MPI_ERR_OTHER", rc, cls);
    CHECK(c == MPI_COMM_NULL, "a refused MPI_Comm_idup's communicator is not MPI_COMM_NULL");
    for (int i = 0; i < n; i++)
        OK(MPI_Comm_free(&cs[i]));
    for (int i = 0; i < EXTRA; i++)
        if (mine[i] != MPI_COMM_NULL)
            OK(MPI_Comm_free(&mine[i]));
    /* The freed slots count again: as many as the limit allows now. */
    n = fill(cs, 1);
    CHECK(n == 4096 - 1, "made %d splits after freeing, want %d", n, 4096 - 1);
    for (int i = 0; i < n; i++)
        OK(MPI_Comm_free(&cs[i]));
    OK(MPI_Group_free(&zero));
    OK(MPI_Group_free(&world));
}

/* cancelAfterFree: rank 1's receives on x stay pending while every member
 * frees x; rank 0's send (posted before its free) matches one afterwards,
 * and rank 1 cancels the other. */
static void cancelAfterFree(void) {
    MPI_Comm x;
    MPI_Request rq[2];
    int got = -1, v = 42, flag = 0;
    OK(MPI_Comm_dup(MPI_COMM_WORLD, &x));
    if (rank == 1) {
        OK(MPI_Irecv(&got, 1, MPI_INT, 0, 1, x, &rq[0]));
        OK(MPI_Irecv(&v, 1, MPI_INT, 0, 2, x, &rq[1]));
    }
    OK(MPI_Barrier(MPI_COMM_WORLD)); /* both receives posted */
    if (rank == 0)
        OK(MPI_Isend(&v, 1, MPI_INT, 1, 1, x, &rq[0]));
    OK(MPI_Comm_free(&x));
    OK(MPI_Barrier(MPI_COMM_WORLD));
    OK(MPI_Barrier(MPI_COMM_WORLD)); /* every free has reached the runtime */
    if (rank == 0)
        OK(MPI_Wait(&rq[0], MPI_STATUS_IGNORE));
    if (rank == 1) {
        MPI_Status st;
        OK(MPI_Wait(&rq[0], &st));
        CHECK(got == 42, "received %d on the freed communicator, want 42", got);
        OK(MPI_Cancel(&rq[1]));
        OK(MPI_Wait(&rq[1], &st));
        OK(MPI_Test_cancelled(&st, &flag));
        CHECK(flag == 1, "the receive pending on the freed communicator was not cancelled");
    }
}

/* inter: findings of the communicator limit's review on intercommunicators.
 * Rank 0 is in group A (even ranks), rank 1 in group B (odd ranks). */
static void inter(int dup) {
    static MPI_Comm own[MAXCOMMS];
    MPI_Comm half, ic, d;
    int n = 0, rc, ok, all;
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    OK(MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half));
    OK(MPI_Comm_set_errhandler(half, MPI_ERRORS_RETURN));
    OK(MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, 1 - rank % 2, 7, &ic));
    OK(MPI_Comm_set_errhandler(ic, MPI_ERRORS_RETURN));
    /* Rank 0 alone joins communicators until the runtime refuses. */
    for (;;) {
        MPI_Comm c = MPI_COMM_NULL;
        rc = MPI_Comm_split(MPI_COMM_WORLD, rank == 0 ? 0 : MPI_UNDEFINED, 0, &c);
        if (rc != MPI_SUCCESS)
            break;
        CHECK(n < MAXCOMMS, "never refused");
        if (rank == 0)
            own[n] = c;
        n++;
    }
    /* Rank 0 is at the limit; two fewer: the duplicate's two union parts
     * fit (both groups), its local group's part does not (group A only). */
    if (dup) {
        if (rank == 0) {
            OK(MPI_Comm_free(&own[--n]));
            OK(MPI_Comm_free(&own[--n]));
        }
        d = MPI_COMM_WORLD;
        rc = MPI_Comm_dup(ic, &d);
        ok = rc == MPI_SUCCESS;
        OK(MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD));
        CHECK(all == 0, "MPI_Comm_dup of the intercommunicator succeeded on some rank (here rc %d): both groups must fail", rc);
        CHECK(d == MPI_COMM_NULL, "a failed duplicate is not MPI_COMM_NULL");
        /* Rank 0 joins one more, back to the limit less one. */
        MPI_Comm one = MPI_COMM_NULL;
        OK(MPI_Comm_split(MPI_COMM_WORLD, rank == 0 ? 0 : MPI_UNDEFINED, 0, &one));
        if (rank == 0)
            own[n++] = one;
    } else if (rank == 0)
        OK(MPI_Comm_free(&own[--n]));
    /* Refused again and again: nothing may stay counted. Rank 0 is at the
     * limit less one: the local group's part fits, the union (or its
     * twin) does not. */
    MPI_Group wg, lg, rg;
    OK(MPI_Comm_group(MPI_COMM_WORLD, &wg));
    OK(MPI_Comm_group(half, &lg));
    OK(MPI_Comm_remote_group(ic, &rg));
    for (int i = 0; i < 20; i++) {
        MPI_Comm y = MPI_COMM_WORLD;
        rc = i % 2 ? MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, 1 - rank % 2, 8, &y)
                   : MPI_Intercomm_create_from_groups(lg, 0, rg, 0, "commlimit", MPI_INFO_NULL, MPI_ERRORS_RETURN, &y);
        ok = rc == MPI_SUCCESS;
        OK(MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD));
        CHECK(all == 0, "attempt %d: an intercommunicator was made on some rank (here rc %d) with rank 0 at the limit", i, rc);
        CHECK(y == MPI_COMM_NULL, "attempt %d: a failed intercommunicator is not MPI_COMM_NULL", i);
    }
    /* Three free: an intercommunicator takes three (union, its twin, the
     * local group's duplicate), so one is made now. */
    if (rank == 0)
        for (int i = 0; i < 3; i++)
            OK(MPI_Comm_free(&own[--n]));
    MPI_Comm y;
    OK(MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, 1 - rank % 2, 9, &y));
    int rsize;
    OK(MPI_Comm_remote_size(y, &rsize));
    CHECK(rsize == (rank % 2 ? (size + 1) / 2 : size / 2), "remote size %d", rsize);
    OK(MPI_Comm_free(&y));
    OK(MPI_Comm_dup(ic, &d)); /* and a duplicate, with three more free */
    OK(MPI_Comm_free(&d));
    if (rank == 0)
        while (n > 0)
            OK(MPI_Comm_free(&own[--n]));
    OK(MPI_Group_free(&wg));
    OK(MPI_Group_free(&lg));
    OK(MPI_Group_free(&rg));
    OK(MPI_Comm_free(&ic));
    OK(MPI_Comm_free(&half));
}

int main(int argc, char **argv) {
    OK(MPI_Init(&argc, &argv));
    OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    CHECK(argc == 2, "usage: commlimit churn|limit|fatal|cancel|inter|interleak");
    if (strcmp(argv[1], "churn") == 0)
        churn();
    else if (strcmp(argv[1], "limit") == 0)
        limit();
    else if (strcmp(argv[1], "fatal") == 0) { /* MPI_ERRORS_ARE_FATAL: the refusal ends the job, saying why */
        MPI_Comm c;
        for (int i = 0; i < MAXCOMMS; i++)
            MPI_Comm_dup(MPI_COMM_WORLD, &c);
        CHECK(0, "%d duplicates made, never refused", MAXCOMMS);
    }
    else if (strcmp(argv[1], "cancel") == 0)
        cancelAfterFree();
    else if (strcmp(argv[1], "inter") == 0)
        inter(1);
    else if (strcmp(argv[1], "interleak") == 0)
        inter(0);
    else
        CHECK(0, "unknown part %s", argv[1]);
    printf("commlimit ok %d\n", rank);
    OK(MPI_Finalize());
    return 0;
}
