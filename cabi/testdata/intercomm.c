/* intercomm: communicators made among a subset (MPI_Comm_create_group of
 * a strict subset, MPI_Comm_create with disjoint groups), sessions,
 * intercommunicators and the dynamic-process answers. argv[1] picks the
 * part ("groups", "sessions", "inter", "dynamic"; none: all). Prints
 * "intercomm ok <rank>". Self-checking; needs no particular size, but
 * the subset cases need 3 or more ranks to mean something. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size;
static int bcs; /* running on bcsmpi: check its answers to erroneous calls too */

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

static int class_of(int rc) {
    int cls = -1;
    MPI_Error_class(rc, &cls);
    return cls;
}

/* groups: the parity classes each make a communicator with
 * MPI_Comm_create_group, the other class not calling; the same group
 * twice with one tag; disjoint groups through MPI_Comm_create. */
static void groups(void) {
    MPI_Group world, mine, half;
    MPI_Comm c, c2;
    int r, n, sum;
    OK(MPI_Comm_group(MPI_COMM_WORLD, &world));
    /* My parity class, in reverse world order. */
    int *list = malloc(size * sizeof(int)), k = 0;
    for (int i = size - 1; i >= 0; i--)
        if (i % 2 == rank % 2)
            list[k++] = i;
    OK(MPI_Group_incl(world, k, list, &mine));
    OK(MPI_Comm_create_group(MPI_COMM_WORLD, mine, 3, &c));
    OK(MPI_Comm_size(c, &n));
    OK(MPI_Comm_rank(c, &r));
    CHECK(n == k && list[r] == rank, "parity group: rank %d of %d, want %d", r, n, k);
    OK(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, c));
    int want = 0;
    for (int i = 0; i < k; i++)
        want += list[i];
    CHECK(sum == want, "parity group sum %d, want %d", sum, want);
    /* Point-to-point within it: a ring. */
    int got = -1;
    OK(MPI_Sendrecv(&rank, 1, MPI_INT, (r + 1) % n, 9, &got, 1, MPI_INT, (r + n - 1) % n, 9, c, MPI_STATUS_IGNORE));
    CHECK(got == list[(r + n - 1) % n], "ring got %d", got);
    /* The same group and tag again: a new communicator, congruent. */
    OK(MPI_Comm_create_group(MPI_COMM_WORLD, mine, 3, &c2));
    int res;
    OK(MPI_Comm_compare(c, c2, &res));
    CHECK(res == (n == 1 ? MPI_CONGRUENT : MPI_CONGRUENT), "compare %d", res);
    OK(MPI_Barrier(c2));
    OK(MPI_Comm_free(&c2));
    OK(MPI_Comm_free(&c));
    /* The world's own collectives were not disturbed. */
    OK(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    CHECK(sum == size * (size - 1) / 2, "world sum %d", sum);
    /* From a duplicate, only the first two ranks. */
    MPI_Comm dup;
    OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    if (size >= 2 && rank < 2) {
        MPI_Group two, dg;
        int pair[2] = {1, 0};
        OK(MPI_Comm_group(dup, &dg));
        OK(MPI_Group_incl(dg, 2, pair, &two));
        OK(MPI_Group_free(&dg));
        OK(MPI_Comm_create_group(dup, two, 0, &c));
        OK(MPI_Comm_rank(c, &r));
        CHECK(r == 1 - rank, "pair rank %d", r);
        OK(MPI_Comm_free(&c));
        OK(MPI_Group_free(&two));
    }
    OK(MPI_Barrier(dup));
    /* A caller outside the group (MPI_GROUP_EMPTY too) gets MPI_COMM_NULL,
     * locally: the group's only member is not calling. */
    OK(MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN));
    if (size >= 2) {
        MPI_Group other;
        int o = (rank + 1) % size;
        OK(MPI_Group_incl(world, 1, &o, &other));
        c = MPI_COMM_WORLD;
        OK(MPI_Comm_create_group(dup, other, 0, &c));
        CHECK(c == MPI_COMM_NULL, "outside the group: not MPI_COMM_NULL");
        OK(MPI_Group_free(&other));
    }
    c = MPI_COMM_WORLD;
    OK(MPI_Comm_create_group(dup, MPI_GROUP_EMPTY, 0, &c));
    CHECK(c == MPI_COMM_NULL, "MPI_GROUP_EMPTY: not MPI_COMM_NULL");
    OK(MPI_Comm_free(&dup));
    /* MPI_Comm_create with disjoint groups: the lower and upper halves. */
    int h = size / 2, lo = rank < h ? 0 : h, hn = rank < h ? h : size - h;
    int range[1][3] = {{lo, lo + hn - 1, 1}};
    OK(MPI_Group_range_incl(world, 1, range, &half));
    OK(MPI_Comm_create(MPI_COMM_WORLD, half, &c));
    CHECK(c != MPI_COMM_NULL, "disjoint halves: MPI_COMM_NULL");
    OK(MPI_Comm_size(c, &n));
    OK(MPI_Comm_rank(c, &r));
    CHECK(n == hn && r == rank - lo, "half: rank %d of %d, want %d of %d", r, n, rank - lo, hn);
    OK(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, c));
    CHECK(sum == hn * lo + hn * (hn - 1) / 2, "half sum %d", sum);
    OK(MPI_Comm_free(&c));
    /* One group leaving out rank 0: rank 0 gets MPI_COMM_NULL. */
    MPI_Group rest;
    int zero = 0;
    OK(MPI_Group_excl(world, 1, &zero, &rest));
    OK(MPI_Comm_create(MPI_COMM_WORLD, rest, &c));
    CHECK((c == MPI_COMM_NULL) == (rank == 0), "without rank 0: null %d", c == MPI_COMM_NULL);
    if (c != MPI_COMM_NULL)
        OK(MPI_Comm_free(&c));
    OK(MPI_Group_free(&rest));
    OK(MPI_Group_free(&half));
    OK(MPI_Group_free(&mine));
    OK(MPI_Group_free(&world));
    free(list);
}


/* dynamic: a bcsrun job has no parent; spawning, ports, names and join
 * fail with their classes; MPI_Comm_disconnect frees. */
static void dynamic(void) {
    MPI_Comm parent = MPI_COMM_WORLD, dup, ic = MPI_COMM_WORLD;
    OK(MPI_Comm_get_parent(&parent));
    CHECK(parent == MPI_COMM_NULL, "MPI_Comm_get_parent gave a communicator");
    OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    if (bcs) {
        OK(MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN));
        OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
        /* maxprocs is significant only at root: the others pass a larger
         * one than their array, and their codes are left alone. */
        int codes[3] = {-7, -7, -7};
        char *args[] = {NULL};
        int rc = MPI_Comm_spawn("./child", args, rank == 0 ? 2 : 1000000, MPI_INFO_NULL, 0, dup, &ic, codes);
        if (rank == 0)
            CHECK(class_of(rc) == MPI_ERR_SPAWN && ic == MPI_COMM_NULL && codes[0] == MPI_ERR_SPAWN && codes[1] == MPI_ERR_SPAWN &&
                      codes[2] == -7,
                  "spawn: rc %d codes %d %d %d", rc, codes[0], codes[1], codes[2]);
        else
            CHECK(class_of(rc) == MPI_ERR_SPAWN && ic == MPI_COMM_NULL && codes[0] == -7 && codes[2] == -7,
                  "spawn at a non-root: rc %d codes %d %d %d", rc, codes[0], codes[1], codes[2]);
        char port[MPI_MAX_PORT_NAME] = "";
        rc = MPI_Open_port(MPI_INFO_NULL, port);
        CHECK(class_of(rc) == MPI_ERR_PORT, "open_port: rc %d", rc);
        rc = MPI_Comm_accept(port, MPI_INFO_NULL, 0, dup, &ic);
        CHECK(class_of(rc) == MPI_ERR_PORT, "accept: rc %d", rc);
        rc = MPI_Comm_connect(port, MPI_INFO_NULL, 0, dup, &ic);
        CHECK(class_of(rc) == MPI_ERR_PORT, "connect: rc %d", rc);
        rc = MPI_Close_port(port);
        CHECK(class_of(rc) == MPI_ERR_PORT, "close_port: rc %d", rc);
        rc = MPI_Publish_name("svc", MPI_INFO_NULL, port);
        CHECK(class_of(rc) == MPI_ERR_SERVICE, "publish: rc %d", rc);
        rc = MPI_Unpublish_name("svc", MPI_INFO_NULL, port);
        CHECK(class_of(rc) == MPI_ERR_SERVICE, "unpublish: rc %d", rc);
        rc = MPI_Lookup_name("svc", MPI_INFO_NULL, port);
        CHECK(class_of(rc) == MPI_ERR_NAME, "lookup: rc %d", rc);
        rc = MPI_Comm_join(0, &ic);
        CHECK(class_of(rc) == MPI_ERR_UNSUPPORTED_OPERATION, "join: rc %d", rc);
        rc = MPI_Comm_disconnect(&parent); /* MPI_COMM_NULL */
        CHECK(class_of(rc) == MPI_ERR_COMM, "disconnect of MPI_COMM_NULL: rc %d", rc);
        OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
    }
    OK(MPI_Barrier(dup));
    OK(MPI_Comm_disconnect(&dup));
    CHECK(dup == MPI_COMM_NULL, "disconnect left the handle");
}

/* inter: intercommunicators between the even (group A) and odd (group B)
 * world ranks: point-to-point naming the remote group, the blocking
 * collectives, merge, dup, create_from_groups, and one over MPI_COMM_SELF. */
static void inter(void) {
    if (size < 2)
        return;
    MPI_Comm local, ic, merged, dup;
    MPI_Status st;
    int color = rank % 2, other = 1 - color, flag = 0, n, lr, r, v, sum;
    int asize = (size + 1) / 2, bsize = size / 2;
    int lsize = color == 0 ? asize : bsize, rsize = color == 0 ? bsize : asize;
#define REMOTE_WORLD(j) (2 * (j) + other)
    OK(MPI_Comm_split(MPI_COMM_WORLD, color, rank, &local));
    OK(MPI_Comm_rank(local, &lr));
    OK(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, other, 77, &ic));
    OK(MPI_Comm_test_inter(ic, &flag));
    CHECK(flag == 1, "test_inter %d", flag);
    OK(MPI_Comm_size(ic, &n));
    OK(MPI_Comm_rank(ic, &r));
    CHECK(n == lsize && r == lr, "intercomm: rank %d of %d, want %d of %d", r, n, lr, lsize);
    OK(MPI_Comm_remote_size(ic, &n));
    CHECK(n == rsize, "remote size %d, want %d", n, rsize);
    MPI_Group rg, wg;
    OK(MPI_Comm_remote_group(ic, &rg));
    OK(MPI_Comm_group(MPI_COMM_WORLD, &wg));
    for (int j = 0; j < rsize; j++) {
        int w;
        OK(MPI_Group_translate_ranks(rg, 1, &j, wg, &w));
        CHECK(w == REMOTE_WORLD(j), "remote rank %d is world rank %d", j, w);
    }
    OK(MPI_Group_free(&rg));
    OK(MPI_Group_free(&wg));
    /* Point-to-point: ranks name the remote group. */
    if (lr < rsize) {
        OK(MPI_Sendrecv(&rank, 1, MPI_INT, lr, 5, &v, 1, MPI_INT, MPI_ANY_SOURCE, 5, ic, &st));
        CHECK(v == REMOTE_WORLD(lr) && st.MPI_SOURCE == lr, "p2p: got %d from %d", v, st.MPI_SOURCE);
    }
    int rc0 = MPI_SUCCESS;
    if (bcs) {
        /* MPI_File_open's errors go to MPI_FILE_NULL's handler
         * (MPI_ERRORS_RETURN), not to the intercommunicator's. */
        OK(MPI_Comm_set_errhandler(ic, MPI_ERRORS_ARE_FATAL));
        MPI_File fh = MPI_FILE_NULL;
        rc0 = MPI_File_open(ic, "never-created", MPI_MODE_RDWR | MPI_MODE_CREATE, MPI_INFO_NULL, &fh);
        CHECK(class_of(rc0) == MPI_ERR_COMM && fh == MPI_FILE_NULL, "MPI_File_open on an intercommunicator: rc %d", rc0);
        OK(MPI_Comm_set_errhandler(ic, MPI_ERRORS_RETURN));
        rc0 = MPI_Send(&rank, 1, MPI_INT, rsize, 5, ic);
        CHECK(class_of(rc0) == MPI_ERR_RANK, "send to remote rank %d: rc %d", rsize, rc0);
        MPI_Request q;
        rc0 = MPI_Ibarrier(ic, &q);
        CHECK(rc0 == MPI_SUCCESS, "ibarrier on an intercommunicator: rc %d", rc0);
        if (rc0 == MPI_SUCCESS)
            OK(MPI_Wait(&q, MPI_STATUS_IGNORE));
        /* Windows, topologies and MPI_Comm_create_group need an intracommunicator. */
        MPI_Win win = MPI_WIN_NULL;
        MPI_Comm tc = MPI_COMM_NULL;
        void *wbase = NULL;
        int wbuf[1], zero = 0, dims[1] = {lsize}, periods[1] = {0}, idx[1] = {0}, me0 = lr;
        rc0 = MPI_Win_create(wbuf, sizeof wbuf, 1, MPI_INFO_NULL, ic, &win);
        CHECK(class_of(rc0) == MPI_ERR_COMM && win == MPI_WIN_NULL, "MPI_Win_create on an intercommunicator: rc %d", rc0);
        rc0 = MPI_Win_allocate(4, 1, MPI_INFO_NULL, ic, &wbase, &win);
        CHECK(class_of(rc0) == MPI_ERR_COMM && win == MPI_WIN_NULL, "MPI_Win_allocate on an intercommunicator: rc %d", rc0);
        rc0 = MPI_Win_allocate_shared(4, 1, MPI_INFO_NULL, ic, &wbase, &win);
        CHECK(class_of(rc0) == MPI_ERR_COMM && win == MPI_WIN_NULL, "MPI_Win_allocate_shared on an intercommunicator: rc %d", rc0);
        rc0 = MPI_Win_create_dynamic(MPI_INFO_NULL, ic, &win);
        CHECK(class_of(rc0) == MPI_ERR_COMM && win == MPI_WIN_NULL, "MPI_Win_create_dynamic on an intercommunicator: rc %d", rc0);
        rc0 = MPI_Cart_create(ic, 1, dims, periods, 0, &tc);
        CHECK(class_of(rc0) == MPI_ERR_COMM && tc == MPI_COMM_NULL, "MPI_Cart_create on an intercommunicator: rc %d", rc0);
        rc0 = MPI_Graph_create(ic, 1, idx, NULL, 0, &tc);
        CHECK(class_of(rc0) == MPI_ERR_COMM && tc == MPI_COMM_NULL, "MPI_Graph_create on an intercommunicator: rc %d", rc0);
        rc0 = MPI_Dist_graph_create_adjacent(ic, 0, NULL, MPI_UNWEIGHTED, 0, NULL, MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &tc);
        CHECK(class_of(rc0) == MPI_ERR_COMM && tc == MPI_COMM_NULL, "MPI_Dist_graph_create_adjacent on an intercommunicator: rc %d",
              rc0);
        rc0 = MPI_Dist_graph_create(ic, 1, &me0, &zero, NULL, MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &tc);
        CHECK(class_of(rc0) == MPI_ERR_COMM && tc == MPI_COMM_NULL, "MPI_Dist_graph_create on an intercommunicator: rc %d", rc0);
        MPI_Group lg;
        OK(MPI_Comm_group(ic, &lg));
        rc0 = MPI_Comm_create_group(ic, lg, 0, &tc);
        CHECK(class_of(rc0) == MPI_ERR_COMM && tc == MPI_COMM_NULL, "MPI_Comm_create_group on an intercommunicator: rc %d", rc0);
        OK(MPI_Group_free(&lg));

        OK(MPI_Comm_set_errhandler(ic, MPI_ERRORS_ARE_FATAL));
    }
    OK(MPI_Barrier(ic));
    /* A user message sent before a collective, with the tag bcsmpi's
     * collectives use inside, is not taken by the collective, nor the
     * collective's message by a receive of any source and tag. */
    if (color == 0 && lr == 0) {
        MPI_Request q;
        int msg = 111, b = 222;
        OK(MPI_Isend(&msg, 1, MPI_INT, 0, 1, ic, &q));
        OK(MPI_Bcast(&b, 1, MPI_INT, MPI_ROOT, ic));
        OK(MPI_Wait(&q, MPI_STATUS_IGNORE));
    } else if (color == 0) {
        OK(MPI_Bcast(&v, 1, MPI_INT, MPI_PROC_NULL, ic));
    } else {
        v = -1;
        OK(MPI_Bcast(&v, 1, MPI_INT, 0, ic));
        CHECK(v == 222, "bcast after a user message with tag 1: %d, want 222", v);
        if (lr == 0) {
            v = -1;
            OK(MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, ic, &st));
            CHECK(v == 111 && st.MPI_SOURCE == 0 && st.MPI_TAG == 1, "user message: %d from %d tag %d, want 111 from 0 tag 1", v,
                  st.MPI_SOURCE, st.MPI_TAG);
        }
    }
    /* Bcast from A's rank 0, then from B's last rank. */
    v = color == 0 && lr == 0 ? 1234 : -1;
    OK(MPI_Bcast(&v, 1, MPI_INT, color == 0 ? (lr == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0, ic));
    CHECK(color == 0 ? v == (lr == 0 ? 1234 : -1) : v == 1234, "bcast A: %d", v);
    double d[3] = {0, 0, 0};
    if (color == 1 && lr == bsize - 1)
        d[0] = 1.5, d[1] = 2.5, d[2] = 3.5;
    OK(MPI_Bcast(d, 3, MPI_DOUBLE, color == 1 ? (lr == bsize - 1 ? MPI_ROOT : MPI_PROC_NULL) : bsize - 1, ic));
    CHECK(color == 1 || (d[0] == 1.5 && d[2] == 3.5), "bcast B: %g %g", d[0], d[2]);
    /* Allreduce: the sum of the remote group's world ranks. */
    int rsum = 0;
    for (int j = 0; j < rsize; j++)
        rsum += REMOTE_WORLD(j);
    OK(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, ic));
    CHECK(sum == rsum, "allreduce %d, want %d", sum, rsum);
    /* Allgather: the remote group's world ranks in its rank order. */
    int *all = malloc(size * sizeof(int));
    OK(MPI_Allgather(&rank, 1, MPI_INT, all, 1, MPI_INT, ic));
    for (int j = 0; j < rsize; j++)
        CHECK(all[j] == REMOTE_WORLD(j), "allgather[%d] = %d", j, all[j]);
    /* Reduce to B's rank 0. */
    sum = -1;
    OK(MPI_Reduce(&rank, &sum, 1, MPI_INT, MPI_SUM, color == 1 ? (lr == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0, ic));
    CHECK(!(color == 1 && lr == 0) || sum == rsum, "reduce %d, want %d", sum, rsum);
    /* Gather to A's rank 0. */
    for (int j = 0; j < size; j++)
        all[j] = -1;
    OK(MPI_Gather(&rank, 1, MPI_INT, all, 1, MPI_INT, color == 0 ? (lr == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0, ic));
    if (color == 0 && lr == 0)
        for (int j = 0; j < bsize; j++)
            CHECK(all[j] == REMOTE_WORLD(j), "gather[%d] = %d", j, all[j]);
    /* Scatter from B's rank 0 to A. */
    for (int j = 0; j < size; j++)
        all[j] = 100 + j;
    v = -1;
    OK(MPI_Scatter(all, 1, MPI_INT, &v, 1, MPI_INT, color == 1 ? (lr == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0, ic));
    CHECK(color == 1 || v == 100 + lr, "scatter %d", v);
    /* Alltoall: block j goes to remote rank j. */
    int *sb = malloc(size * sizeof(int)), *rb = malloc(size * sizeof(int));
    for (int j = 0; j < rsize; j++)
        sb[j] = rank * 100 + j;
    OK(MPI_Alltoall(sb, 1, MPI_INT, rb, 1, MPI_INT, ic));
    for (int j = 0; j < rsize; j++)
        CHECK(rb[j] == REMOTE_WORLD(j) * 100 + lr, "alltoall[%d] = %d", j, rb[j]);
    free(sb);
    free(rb);
    free(all);
    /* Merge: A (high = 0) first, then B. */
    OK(MPI_Intercomm_merge(ic, color, &merged));
    OK(MPI_Comm_rank(merged, &r));
    OK(MPI_Comm_size(merged, &n));
    CHECK(n == size && r == (color == 0 ? lr : asize + lr), "merged: rank %d of %d", r, n);
    OK(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, merged));
    CHECK(sum == size * (size - 1) / 2, "merged sum %d", sum);
    OK(MPI_Comm_free(&merged));
    /* B first (A passes high = 1). */
    OK(MPI_Intercomm_merge(ic, other, &merged));
    OK(MPI_Comm_rank(merged, &r));
    CHECK(r == (color == 1 ? lr : bsize + lr), "merged B first: rank %d", r);
    OK(MPI_Comm_free(&merged));
    /* Split: color = local rank % 2, reversed key; color 1 exists on both
     * sides only with 4 or more ranks; a color missing on one side gives
     * MPI_COMM_NULL. */
    MPI_Comm sp;
    int c2 = lr % 2;
    OK(MPI_Comm_split(ic, c2, -lr, &sp));
    int mine_n = (lsize - c2 + 1) / 2, their_n = (rsize - c2 + 1) / 2;
    if (their_n == 0) {
        CHECK(sp == MPI_COMM_NULL, "split: a color missing remotely gave a communicator");
    } else {
        OK(MPI_Comm_test_inter(sp, &flag));
        OK(MPI_Comm_size(sp, &n));
        OK(MPI_Comm_rank(sp, &r));
        CHECK(flag && n == mine_n && r == mine_n - 1 - lr / 2, "split: inter %d, rank %d of %d, want %d of %d", flag, r, n,
              mine_n - 1 - lr / 2, mine_n);
        OK(MPI_Comm_remote_size(sp, &n));
        CHECK(n == their_n, "split: remote size %d, want %d", n, their_n);
        /* The remote rank 0 is the remote group's highest local rank of this color. */
        int top = -1, got = -1;
        for (int j = c2; j < rsize; j += 2)
            top = REMOTE_WORLD(j);
        if (r == 0) {
            OK(MPI_Sendrecv(&rank, 1, MPI_INT, 0, 6, &got, 1, MPI_INT, 0, 6, sp, MPI_STATUS_IGNORE));
            CHECK(got == top, "split: remote rank 0 is world rank %d, want %d", got, top);
        }
        OK(MPI_Comm_free(&sp));
    }
    /* A duplicate is an intercommunicator with its own message space. */
    OK(MPI_Comm_dup(ic, &dup));
    OK(MPI_Comm_test_inter(dup, &flag));
    CHECK(flag == 1, "dup: test_inter %d", flag);
    /* Compare: an intercommunicator is never like an intracommunicator. */
    int res;
    OK(MPI_Comm_compare(ic, ic, &res));
    CHECK(res == MPI_IDENT, "compare ic ic: %d", res);
    OK(MPI_Comm_compare(ic, dup, &res));
    CHECK(res == MPI_CONGRUENT, "compare ic dup: %d", res);
    OK(MPI_Comm_compare(ic, MPI_COMM_WORLD, &res));
    CHECK(res == MPI_UNEQUAL, "compare ic world: %d", res);
    OK(MPI_Intercomm_merge(ic, color, &merged));
    OK(MPI_Comm_compare(merged, ic, &res));
    CHECK(res == MPI_UNEQUAL, "compare merged ic: %d", res);
    OK(MPI_Comm_free(&merged));
    OK(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, dup));
    CHECK(sum == rsum, "dup allreduce %d", sum);
    OK(MPI_Comm_disconnect(&dup));
    OK(MPI_Comm_free(&ic));
    OK(MPI_Comm_free(&local));
    /* From groups, without a parent. */
    MPI_Group world, mine, theirs;
    OK(MPI_Comm_group(MPI_COMM_WORLD, &world));
    int *l = malloc(size * sizeof(int)), *t = malloc(size * sizeof(int)), ln = 0, tn = 0;
    for (int j = 0; j < size; j++) {
        if (j % 2 == color)
            l[ln++] = j;
        else
            t[tn++] = j;
    }
    OK(MPI_Group_incl(world, ln, l, &mine));
    OK(MPI_Group_incl(world, tn, t, &theirs));
    OK(MPI_Intercomm_create_from_groups(mine, 0, theirs, 0, "org.bcsmpi.inter", MPI_INFO_NULL, MPI_ERRORS_RETURN, &ic));
    OK(MPI_Comm_remote_size(ic, &n));
    CHECK(n == rsize, "from groups: remote size %d", n);
    { /* Both groups reversed: the same members in another order, similar. */
        MPI_Group rmine, rtheirs;
        MPI_Comm ic2;
        int *rl = malloc(size * sizeof(int)), *rt = malloc(size * sizeof(int));
        for (int j = 0; j < ln; j++)
            rl[j] = l[ln - 1 - j];
        for (int j = 0; j < tn; j++)
            rt[j] = t[tn - 1 - j];
        OK(MPI_Group_incl(world, ln, rl, &rmine));
        OK(MPI_Group_incl(world, tn, rt, &rtheirs));
        OK(MPI_Intercomm_create_from_groups(rmine, 0, rtheirs, 0, "org.bcsmpi.inter2", MPI_INFO_NULL, MPI_ERRORS_RETURN, &ic2));
        OK(MPI_Comm_compare(ic, ic2, &res));
        CHECK(res == (ln > 1 || tn > 1 ? MPI_SIMILAR : MPI_CONGRUENT), "compare reversed groups: %d", res);
        OK(MPI_Comm_free(&ic2));
        OK(MPI_Group_free(&rmine));
        OK(MPI_Group_free(&rtheirs));
        free(rl);
        free(rt);
    }
    OK(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, ic));
    CHECK(sum == rsum, "from groups: allreduce %d", sum);
    OK(MPI_Comm_free(&ic));
    OK(MPI_Group_free(&mine));
    OK(MPI_Group_free(&theirs));
    OK(MPI_Group_free(&world));
    free(l);
    free(t);
    /* Over MPI_COMM_SELF: world ranks 0 and 1 alone. */
    if (rank < 2) {
        OK(MPI_Intercomm_create(MPI_COMM_SELF, 0, MPI_COMM_WORLD, 1 - rank, 9, &ic));
        OK(MPI_Comm_size(ic, &n));
        OK(MPI_Comm_remote_size(ic, &r));
        CHECK(n == 1 && r == 1, "self intercomm: %d and %d", n, r);
        OK(MPI_Sendrecv(&rank, 1, MPI_INT, 0, 3, &v, 1, MPI_INT, 0, 3, ic, &st));
        CHECK(v == 1 - rank && st.MPI_SOURCE == 0, "self intercomm p2p: %d from %d", v, st.MPI_SOURCE);
        OK(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, ic));
        CHECK(sum == 1 - rank, "self intercomm allreduce %d", sum);
        OK(MPI_Comm_free(&ic));
    }
#undef REMOTE_WORLD
}

static int sess_calls, sess_last;
static void sess_handler(MPI_Session *s, int *code, ...) {
    (void)s;
    sess_calls++;
    sess_last = *code;
}

static int has_key(MPI_Info info, const char *key, char *val) {
    int flag = 0, len = MPI_MAX_INFO_VAL;
    OK(MPI_Info_get_string(info, key, &len, val, &flag));
    return flag;
}

/* sessions: psets, groups and communicators from a session (the whole
 * world, the caller, and the even ranks without the odd ones), session
 * error handlers and buffers. Works with or without MPI_Init. */
static void sessions(const char *tag) {
    MPI_Session s;
    MPI_Info info;
    MPI_Group g, ev;
    MPI_Comm c, self;
    char val[MPI_MAX_INFO_VAL];
    int n, r, sum;
    OK(MPI_Info_create(&info));
    OK(MPI_Info_set(info, "thread_level", "MPI_THREAD_SINGLE"));
    OK(MPI_Session_init(info, MPI_ERRORS_RETURN, &s));
    OK(MPI_Info_free(&info));
    OK(MPI_Session_get_num_psets(s, MPI_INFO_NULL, &n));
    CHECK(n >= 2, "%d psets", n);
    int world = 0, me = 0;
    for (int i = 0; i < n; i++) {
        int len = 0;
        OK(MPI_Session_get_nth_pset(s, MPI_INFO_NULL, i, &len, NULL));
        char *name = malloc(len);
        OK(MPI_Session_get_nth_pset(s, MPI_INFO_NULL, i, &len, name));
        CHECK((int)strlen(name) == len - 1, "pset %d: %s, length %d", i, name, len);
        world += strcmp(name, "mpi://WORLD") == 0;
        me += strcmp(name, "mpi://SELF") == 0;
        free(name);
    }
    CHECK(world == 1 && me == 1, "mpi://WORLD %d times, mpi://SELF %d times", world, me);
    OK(MPI_Session_get_pset_info(s, "mpi://WORLD", &info));
    CHECK(has_key(info, "mpi_size", val) && atoi(val) == size, "mpi://WORLD mpi_size %s", val);
    OK(MPI_Info_free(&info));
    OK(MPI_Session_get_pset_info(s, "mpi://SELF", &info));
    CHECK(has_key(info, "mpi_size", val) && atoi(val) == 1, "mpi://SELF mpi_size %s", val);
    OK(MPI_Info_free(&info));
    OK(MPI_Session_get_info(s, &info));
    CHECK(has_key(info, "thread_level", val), "no thread_level in the session's info");
    OK(MPI_Info_free(&info));
    /* The world's pset. */
    OK(MPI_Group_from_session_pset(s, "mpi://WORLD", &g));
    OK(MPI_Group_size(g, &n));
    CHECK(n == size, "world group size %d", n);
    OK(MPI_Comm_create_from_group(g, tag, MPI_INFO_NULL, MPI_ERRORS_RETURN, &c));
    OK(MPI_Comm_rank(c, &r));
    OK(MPI_Comm_size(c, &n));
    CHECK(r == rank && n == size, "session world: rank %d of %d", r, n);
    OK(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, c));
    CHECK(sum == size * (size - 1) / 2, "session world sum %d", sum);
    /* Even ranks only: the odd ones do not call. */
    int *evens = malloc(size * sizeof(int)), k = 0;
    for (int i = 0; i < size; i += 2)
        evens[k++] = i;
    OK(MPI_Group_incl(g, k, evens, &ev));
    if (rank % 2 == 0) {
        MPI_Comm ce;
        OK(MPI_Comm_create_from_group(ev, "evens", MPI_INFO_NULL, MPI_ERRORS_RETURN, &ce));
        OK(MPI_Comm_size(ce, &n));
        OK(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, ce));
        CHECK(n == k && sum == k * (k - 1), "evens: size %d sum %d", n, sum);
        OK(MPI_Comm_free(&ce));
    } else { /* outside the group: MPI_COMM_NULL, locally */
        MPI_Comm ce = MPI_COMM_WORLD;
        OK(MPI_Comm_create_from_group(ev, "odd-outside", MPI_INFO_NULL, MPI_ERRORS_RETURN, &ce));
        CHECK(ce == MPI_COMM_NULL, "create_from_group outside the group: not MPI_COMM_NULL");
    }
    OK(MPI_Group_free(&ev));
    free(evens);
    OK(MPI_Group_free(&g));
    /* The caller's pset. */
    OK(MPI_Group_from_session_pset(s, "mpi://SELF", &g));
    OK(MPI_Comm_create_from_group(g, tag, MPI_INFO_NULL, MPI_ERRORS_RETURN, &self));
    OK(MPI_Comm_size(self, &n));
    CHECK(n == 1, "session self size %d", n);
    OK(MPI_Comm_free(&self));
    OK(MPI_Group_free(&g));
    /* Errors go to the session's handler (MPICH 4.0 aborts instead). */
    if (bcs) {
        int rc = MPI_Session_get_pset_info(s, "mpi://NOWHERE", &info);
        CHECK(class_of(rc) == MPI_ERR_ARG, "unknown pset: rc %d", rc);
        /* Errors of the constructors without a communicator go to their
         * errhandler argument (the world's handler is fatal). */
        MPI_Comm bad = MPI_COMM_NULL;
        rc = MPI_Comm_create_from_group(MPI_GROUP_NULL, tag, MPI_INFO_NULL, MPI_ERRORS_RETURN, &bad);
        CHECK(class_of(rc) == MPI_ERR_GROUP && bad == MPI_COMM_NULL, "create_from_group(MPI_GROUP_NULL): rc %d", rc);
        MPI_Group gs;
        OK(MPI_Group_from_session_pset(s, "mpi://SELF", &gs));
        rc = MPI_Comm_create_from_group(gs, NULL, MPI_INFO_NULL, MPI_ERRORS_RETURN, &bad);
        CHECK(class_of(rc) == MPI_ERR_ARG && bad == MPI_COMM_NULL, "create_from_group(stringtag NULL): rc %d", rc);
        rc = MPI_Intercomm_create_from_groups(gs, 5, MPI_GROUP_NULL, 0, tag, MPI_INFO_NULL, MPI_ERRORS_RETURN, &bad);
        CHECK(class_of(rc) == MPI_ERR_GROUP && bad == MPI_COMM_NULL, "intercomm_create_from_groups(MPI_GROUP_NULL): rc %d", rc);
        rc = MPI_Intercomm_create_from_groups(gs, 5, gs, 0, tag, MPI_INFO_NULL, MPI_ERRORS_RETURN, &bad);
        CHECK(class_of(rc) == MPI_ERR_RANK && bad == MPI_COMM_NULL, "intercomm_create_from_groups(local_leader 5): rc %d", rc);
        OK(MPI_Group_free(&gs));
    }
    MPI_Errhandler eh, got;
    OK(MPI_Session_create_errhandler(sess_handler, &eh));
    OK(MPI_Session_set_errhandler(s, eh));
    OK(MPI_Session_get_errhandler(s, &got));
    CHECK(got == eh, "get_errhandler gave another handler");
    OK(MPI_Session_call_errhandler(s, MPI_ERR_OTHER));
    CHECK(sess_calls == 1 && sess_last == MPI_ERR_OTHER, "handler called %d times, code %d", sess_calls, sess_last);
    if (bcs) {
        n = 0;
        MPI_Session_get_nth_pset(s, MPI_INFO_NULL, 99, &n, NULL);
        CHECK(sess_calls == 2 && class_of(sess_last) == MPI_ERR_ARG, "handler called %d times, code %d", sess_calls, sess_last);
    }
    sess_calls = 0;
    OK(MPI_Session_set_errhandler(s, MPI_ERRORS_RETURN));
    OK(MPI_Errhandler_free(&eh));
#if MPI_VERSION > 4 || (MPI_VERSION == 4 && MPI_SUBVERSION >= 1) /* session buffers are MPI 4.1 */
    /* Buffered sends on the session's communicator use its buffer. */
    int bsize = 4 * (MPI_BSEND_OVERHEAD + (int)sizeof(int));
    char *buf = malloc(bsize);
    OK(MPI_Session_attach_buffer(s, buf, bsize));
    int got_v = -1;
    OK(MPI_Bsend(&rank, 1, MPI_INT, (rank + 1) % size, 4, c));
    OK(MPI_Recv(&got_v, 1, MPI_INT, (rank + size - 1) % size, 4, c, MPI_STATUS_IGNORE));
    CHECK(got_v == (rank + size - 1) % size, "bsend ring got %d", got_v);
    OK(MPI_Session_flush_buffer(s));
    MPI_Request req;
    OK(MPI_Session_iflush_buffer(s, &req));
    OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    void *back;
    int bn;
    OK(MPI_Session_detach_buffer(s, &back, &bn));
    CHECK(back == buf && bn == bsize, "detached %p %d, attached %p %d", back, bn, (void *)buf, bsize);
    free(buf);
#endif
    OK(MPI_Comm_free(&c));
    OK(MPI_Session_finalize(&s));
    CHECK(s == MPI_SESSION_NULL, "session not MPI_SESSION_NULL after finalize");
}

int main(int argc, char **argv) {
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int len;
    OK(MPI_Get_library_version(lib, &len));
    bcs = strstr(lib, "bcsmpi") != NULL;
    const char *part = argc > 1 ? argv[1] : "all";
    if (strcmp(part, "sessions-only") == 0) {
        /* No MPI_Init: the sessions model alone, twice over. */
        MPI_Session s;
        MPI_Group g;
        MPI_Comm c;
        OK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s));
        OK(MPI_Group_from_session_pset(s, "mpi://WORLD", &g));
        OK(MPI_Comm_create_from_group(g, "first", MPI_INFO_NULL, MPI_ERRORS_RETURN, &c));
        OK(MPI_Comm_rank(c, &rank));
        OK(MPI_Comm_size(c, &size));
        OK(MPI_Group_free(&g));
        OK(MPI_Comm_free(&c));
        OK(MPI_Session_finalize(&s));
        int flag = 1;
        OK(MPI_Initialized(&flag));
        CHECK(flag == 0, "MPI_Initialized says %d in a sessions-only program", flag);
        if (bcs) { /* MPICH 4.0 crashes starting a session after one ended */
            sessions("second");
            sessions("third");
        }
        printf("intercomm ok %d\n", rank);
        return 0;
    }
    if (strcmp(part, "outlive") == 0) {
        /* A session started before MPI_Init, used after MPI_Finalize. */
        MPI_Session s;
        MPI_Group g;
        MPI_Comm c;
        OK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s));
        OK(MPI_Init(&argc, &argv));
        OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
        OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
        OK(MPI_Group_from_session_pset(s, "mpi://WORLD", &g));
        OK(MPI_Comm_create_from_group(g, "outlive", MPI_INFO_NULL, MPI_ERRORS_RETURN, &c));
        OK(MPI_Group_free(&g));
        OK(MPI_Finalize());
        int sum = 0;
        OK(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, c));
        CHECK(sum == size * (size - 1) / 2, "after MPI_Finalize: sum %d", sum);
        OK(MPI_Comm_free(&c));
        OK(MPI_Session_finalize(&s));
        printf("intercomm ok %d\n", rank);
        return 0;
    }
    OK(MPI_Init(&argc, &argv));
    OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    int all = strcmp(part, "all") == 0;
    if (all || strcmp(part, "groups") == 0)
        groups();
    if (all || strcmp(part, "sessions") == 0)
        sessions("org.bcsmpi.test");
    if (all || strcmp(part, "inter") == 0)
        inter();
    if (all || strcmp(part, "dynamic") == 0)
        dynamic();
    if (strcmp(part, "group-missing") == 0 && size >= 3) {
        /* World rank 2 never joins the group creation: a deadlock, reported. */
        if (rank < 2) {
            MPI_Group w, g;
            MPI_Comm c;
            int three[3] = {0, 1, 2};
            OK(MPI_Comm_group(MPI_COMM_WORLD, &w));
            OK(MPI_Group_incl(w, 3, three, &g));
            OK(MPI_Comm_create_group(MPI_COMM_WORLD, g, 4, &c));
            CHECK(0, "MPI_Comm_create_group returned without rank 2");
        }
        OK(MPI_Finalize());
        return 0;
    }
    if (strcmp(part, "overlap-fatal") == 0) { /* the fatal message names the ranks in both groups */
        MPI_Group w, g;
        MPI_Comm ic;
        OK(MPI_Comm_group(MPI_COMM_WORLD, &w));
        OK(MPI_Group_incl(w, 1, &rank, &g));
        MPI_Intercomm_create_from_groups(g, 0, g, 0, "overlap", MPI_INFO_NULL, MPI_ERRORS_ARE_FATAL, &ic);
        CHECK(0, "MPI_Intercomm_create_from_groups of overlapping groups returned under MPI_ERRORS_ARE_FATAL");
    }
    if (strcmp(part, "spawn-fatal") == 0) { /* under the default handler: the job ends */
        char *args[] = {NULL};
        MPI_Comm ic;
        MPI_Comm_spawn("./child", args, 1, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &ic, MPI_ERRCODES_IGNORE);
        CHECK(0, "MPI_Comm_spawn returned under MPI_ERRORS_ARE_FATAL");
    }
    OK(MPI_Barrier(MPI_COMM_WORLD));
    printf("intercomm ok %d\n", rank);
    OK(MPI_Finalize());
    return 0;
}
