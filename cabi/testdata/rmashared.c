/* rmashared: shared-memory windows (MPI_Win_allocate_shared,
 * MPI_Win_shared_query), window attributes with user keyvals, and the
 * large-count (_c) forms of one-sided communication. Prints
 * "rmashared ok <rank>".
 *
 * Shared windows are made over the ranks of one node
 * (MPI_Comm_split_type(MPI_COMM_TYPE_SHARED)): each rank writes its segment
 * with plain stores and reads every other's after MPI_Win_sync and
 * MPI_Barrier; Put, Get, Accumulate and Fetch_and_op reach the same memory
 * under fence, lock/unlock, lock_all and flush; the mapping is an anonymous
 * memory file (checked in /proc/self/maps), so nothing is named in /dev/shm.
 * MPI_COMM_WORLD over several nodes is refused with MPI_ERR_RMA_SHARED.
 * Long transfers: a burst of puts, a put whose buffer changes after
 * MPI_Win_flush_local, a long accumulate and a put into a strided target.
 *
 * Modes (argv[1]), each under the fatal handler, whose message the Go test
 * checks: none: everything above; "abort": rank 0 aborts the job while a
 * shared window is live; "bigput": MPI_Put_c of 2^31 bytes into a small
 * window; "bigget": MPI_Get_c of 2^48 bytes; "dispunit": MPI_Win_create_c
 * with disp_unit 2^31; "world": MPI_Win_allocate_shared over
 * MPI_COMM_WORLD (on several nodes). */
#include <limits.h>
#include <mpi.h>
#include <stdint.h>
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

/* FAILS checks the error class of a call (its message is checked by the
 * Go test under the fatal handler: see the modes). */
#define FAILS(call, class)                                                          \
    do {                                                                            \
        int rc_ = (call), cls_;                                                     \
        MPI_Error_class(rc_, &cls_);                                                \
        CHECK(cls_ == (class), "%s returned class %d, want %s", #call, cls_, #class); \
    } while (0)

/* ---- window attributes ---- */

static int deletes, copies, fail_delete;
static int extra_state = 42;

static int copy_fn(MPI_Win w, int k, void *extra, void *in, void *out, int *flag) {
    (void)w, (void)k, (void)extra, (void)in, (void)out, (void)flag;
    copies++;
    return MPI_SUCCESS;
}

static MPI_Win expect_win;
static int expect_key;

static int delete_fn(MPI_Win w, int k, void *val, void *extra) {
    CHECK(w == expect_win, "delete callback got another window");
    CHECK(k == expect_key, "delete callback keyval %d, want %d", k, expect_key);
    CHECK(extra == &extra_state, "delete callback extra_state %p", extra);
    CHECK(val != NULL, "delete callback value NULL");
    deletes++;
    return fail_delete ? MPI_ERR_OTHER : MPI_SUCCESS;
}

static void attributes(void) {
    static int a = 1, b = 2, c = 3;
    MPI_Win win;
    double buf[4];
    int key, key2, flag, *v;
    OK(MPI_Win_create(buf, sizeof buf, sizeof(double), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    expect_win = win;
    OK(MPI_Win_create_keyval(copy_fn, delete_fn, &key, &extra_state));
    OK(MPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, MPI_WIN_NULL_DELETE_FN, &key2, NULL));
    expect_key = key;

    OK(MPI_Win_get_attr(win, key, &v, &flag));
    CHECK(!flag, "attribute before set");
    OK(MPI_Win_set_attr(win, key, &a));
    OK(MPI_Win_get_attr(win, key, &v, &flag));
    CHECK(flag && v == &a, "get after set: flag %d", flag);
    OK(MPI_Win_set_attr(win, key, &b)); /* replaces: the old value is deleted */
    CHECK(deletes == 1, "deletes %d after a replacement", deletes);
    OK(MPI_Win_get_attr(win, key, &v, &flag));
    CHECK(flag && v == &b, "get after replacement");
    OK(MPI_Win_delete_attr(win, key));
    CHECK(deletes == 2, "deletes %d after delete_attr", deletes);
    OK(MPI_Win_get_attr(win, key, &v, &flag));
    CHECK(!flag, "attribute after delete");
    FAILS(MPI_Win_delete_attr(win, key), MPI_ERR_KEYVAL);

    /* A failing delete callback fails the call and keeps the attribute. */
    OK(MPI_Win_set_attr(win, key, &c));
    fail_delete = 1;
    CHECK(MPI_Win_delete_attr(win, key) != MPI_SUCCESS, "a failing delete callback succeeded");
    fail_delete = 0;
    OK(MPI_Win_get_attr(win, key, &v, &flag));
    CHECK(flag && v == &c, "attribute kept after a failing delete callback");

    /* Predefined keys cannot be set; other kinds of keyval are refused. */
    FAILS(MPI_Win_set_attr(win, MPI_WIN_BASE, &a), MPI_ERR_KEYVAL);
    int ckey;
    OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &ckey, NULL));
    FAILS(MPI_Win_set_attr(win, ckey, &a), MPI_ERR_KEYVAL);
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    FAILS(MPI_Comm_set_attr(MPI_COMM_WORLD, key, &a), MPI_ERR_KEYVAL);
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
    OK(MPI_Comm_free_keyval(&ckey));

    /* A freed keyval's attributes keep working until the window goes. */
    OK(MPI_Win_set_attr(win, key2, &a));
    int freed = key;
    OK(MPI_Win_free_keyval(&key));
    CHECK(key == MPI_KEYVAL_INVALID, "keyval not reset");
    OK(MPI_Win_get_attr(win, freed, &v, &flag));
    CHECK(flag && v == &c, "attribute of a freed keyval");
    FAILS(MPI_Win_set_attr(win, freed, &a), MPI_ERR_KEYVAL);

    /* MPI_Win_free deletes what is left; copy callbacks never run. */
    OK(MPI_Win_free(&win));
    CHECK(deletes == 4, "deletes %d after MPI_Win_free (want 4: the failing call counted)", deletes);
    CHECK(copies == 0, "copies %d", copies);
    OK(MPI_Win_free_keyval(&key2));
}

/* ---- shared windows ---- */

/* mapped_from tells what backs the mapping that holds p (/proc/self/maps). */
static void mapped_from(const void *p, char *out, size_t n) {
    FILE *f = fopen("/proc/self/maps", "r");
    char line[512];
    out[0] = 0;
    while (f && fgets(line, sizeof line, f)) {
        unsigned long lo, hi;
        int off = 0;
        if (sscanf(line, "%lx-%lx %*s %*s %*s %*s %n", &lo, &hi, &off) >= 2 && (uintptr_t)p >= lo &&
            (uintptr_t)p < hi) {
            snprintf(out, n, "%s", line + off);
            out[strcspn(out, "\n")] = 0;
            break;
        }
    }
    if (f)
        fclose(f);
}

#define SEG 64 /* ints per rank, times rank + 1 */

static int segval(int r, int i) { return r * 100000 + i; }

static void shared(MPI_Comm node, int noncontig) {
    int nr, ns;
    MPI_Comm_rank(node, &nr);
    MPI_Comm_size(node, &ns);
    MPI_Info info = MPI_INFO_NULL;
    if (noncontig) {
        OK(MPI_Info_create(&info));
        OK(MPI_Info_set(info, "alloc_shared_noncontig", "true"));
    }
    MPI_Aint bytes = (MPI_Aint)(nr + 1) * SEG * sizeof(int);
    int *mine;
    MPI_Win win;
    OK(MPI_Win_allocate_shared(bytes, sizeof(int), info, node, &mine, &win));
    if (info != MPI_INFO_NULL)
        OK(MPI_Info_free(&info));

    int *flavor, *model, *unitp, flag;
    MPI_Aint *wsize;
    void *base;
    OK(MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, &flavor, &flag));
    CHECK(flag && *flavor == MPI_WIN_FLAVOR_SHARED, "flavor %d", *flavor);
    OK(MPI_Win_get_attr(win, MPI_WIN_MODEL, &model, &flag));
    CHECK(flag && *model == MPI_WIN_UNIFIED, "model %d", *model);
    OK(MPI_Win_get_attr(win, MPI_WIN_BASE, &base, &flag));
    CHECK(flag && base == mine, "base %p, baseptr %p", base, (void *)mine);
    OK(MPI_Win_get_attr(win, MPI_WIN_SIZE, &wsize, &flag));
    CHECK(flag && *wsize == bytes, "size %ld", (long)*wsize);
    OK(MPI_Win_get_attr(win, MPI_WIN_DISP_UNIT, &unitp, &flag));
    CHECK(flag && *unitp == sizeof(int), "disp_unit %d", *unitp);

    char from[256];
    mapped_from(mine, from, sizeof from);
    CHECK(strstr(from, "memfd:") != NULL && strstr(from, "/dev/shm") == NULL,
          "the shared window is backed by %s, want an anonymous memory file", from);

    /* Every segment, from MPI_Win_shared_query: contiguous in rank order
     * by default, page-aligned with alloc_shared_noncontig. */
    int **seg = malloc(ns * sizeof *seg);
    for (int r = 0; r < ns; r++) {
        MPI_Aint sz;
        int unit;
        OK(MPI_Win_shared_query(win, r, &sz, &unit, &seg[r]));
        CHECK(sz == (MPI_Aint)(r + 1) * SEG * (MPI_Aint)sizeof(int) && unit == sizeof(int), "rank %d: size %ld unit %d",
              r, (long)sz, unit);
        if (r == nr)
            CHECK(seg[r] == mine, "own segment %p, baseptr %p", (void *)seg[r], (void *)mine);
        if (noncontig)
            CHECK((uintptr_t)seg[r] % 4096 == 0, "segment %d at %p is not page-aligned", r, (void *)seg[r]);
        else if (r > 0)
            CHECK(seg[r] == seg[r - 1] + r * SEG, "segment %d at %p does not follow %d's", r, (void *)seg[r], r - 1);
    }
    MPI_Aint sz;
    MPI_Aint unit_c;
    int *p;
    OK(MPI_Win_shared_query(win, MPI_PROC_NULL, &sz, (int *)&flag, &p));
    CHECK(p == seg[0] && sz == SEG * (MPI_Aint)sizeof(int), "MPI_PROC_NULL: %p size %ld", (void *)p, (long)sz);
    OK(MPI_Win_shared_query_c(win, ns - 1, &sz, &unit_c, &p));
    CHECK(p == seg[ns - 1] && unit_c == sizeof(int), "_c: %p unit %ld", (void *)p, (long)unit_c);

    /* Plain stores into one's own segment, plain loads of everyone's. */
    OK(MPI_Win_lock_all(MPI_MODE_NOCHECK, win));
    for (int i = 0; i < (nr + 1) * SEG; i++)
        mine[i] = segval(nr, i);
    OK(MPI_Win_sync(win));
    OK(MPI_Barrier(node));
    OK(MPI_Win_sync(win));
    for (int r = 0; r < ns; r++)
        for (int i = 0; i < (r + 1) * SEG; i++)
            CHECK(seg[r][i] == segval(r, i), "load of rank %d's [%d] = %d, want %d", r, i, seg[r][i], segval(r, i));
    OK(MPI_Barrier(node)); /* everyone has read before anyone writes again */
    OK(MPI_Win_unlock_all(win));

    /* Put and Get under fence land in (come from) the same memory. */
    int right = (nr + 1) % ns, left = (nr + ns - 1) % ns;
    int out[SEG], in[SEG];
    for (int i = 0; i < SEG; i++)
        out[i] = -segval(nr, i);
    OK(MPI_Win_fence(0, win));
    OK(MPI_Put(out, SEG, MPI_INT, right, 0, SEG, MPI_INT, win));
    OK(MPI_Win_fence(0, win));
    for (int i = 0; i < SEG; i++)
        CHECK(mine[i] == -segval(left, i), "after a put from %d: [%d] = %d", left, i, mine[i]);
    for (int i = 0; i < SEG; i++)
        CHECK(seg[right][i] == -segval(nr, i), "load of what this rank put at %d: [%d] = %d", right, i,
              seg[right][i]);
    OK(MPI_Get(in, SEG, MPI_INT, left, 0, SEG, MPI_INT, win));
    OK(MPI_Win_fence(0, win));
    for (int i = 0; i < SEG; i++) {
        int want = -segval((left + ns - 1) % ns, i); /* what left's left put there */
        CHECK(in[i] == want, "get from %d: [%d] = %d, want %d", left, i, in[i], want);
    }
    OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));

    /* Accumulate and Fetch_and_op under locks: every rank adds to rank 0's
     * first int; a load there after the barrier sees them all. */
    OK(MPI_Barrier(node));
    if (nr == 0)
        mine[0] = 0;
    OK(MPI_Win_sync(win));
    OK(MPI_Barrier(node));
    int one = 1, old;
    OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
    OK(MPI_Accumulate(&one, 1, MPI_INT, 0, 0, 1, MPI_INT, MPI_SUM, win));
    OK(MPI_Win_flush(0, win));
    OK(MPI_Fetch_and_op(&one, &old, MPI_INT, 0, 0, MPI_SUM, win));
    OK(MPI_Win_unlock(0, win));
    CHECK(old >= 1 && old < 2 * ns, "fetched %d", old);
    OK(MPI_Barrier(node));
    OK(MPI_Win_sync(win));
    CHECK(seg[0][0] == 2 * ns, "rank 0's counter %d, want %d", seg[0][0], 2 * ns);
    OK(MPI_Barrier(node));
    OK(MPI_Win_free(&win));
    CHECK(win == MPI_WIN_NULL, "win not reset");
    free(seg);
}

/* Segments of size 0: MPI_PROC_NULL names the lowest rank with memory. */
static void shared_empty(MPI_Comm node) {
    int nr, ns;
    MPI_Comm_rank(node, &nr);
    MPI_Comm_size(node, &ns);
    MPI_Aint bytes = nr == 0 || nr == 2 ? 0 : 16;
    char *mine, *p;
    MPI_Win win;
    OK(MPI_Win_allocate_shared_c(bytes, 1, MPI_INFO_NULL, node, &mine, &win));
    MPI_Aint sz;
    int unit;
    OK(MPI_Win_shared_query(win, MPI_PROC_NULL, &sz, &unit, &p));
    if (ns == 1) {
        CHECK(sz == 0 && p != NULL, "all empty: size %ld p %p", (long)sz, (void *)p);
    } else {
        char *one;
        OK(MPI_Win_shared_query(win, 1, &sz, &unit, &one));
        CHECK(sz == 16 && p == one, "MPI_PROC_NULL: size %ld, %p, want rank 1's %p", (long)sz, (void *)p, (void *)one);
    }
    OK(MPI_Win_free(&win));
}

/* MPI_Win_shared_query on other flavors: the caller's own memory only. */
static void query_other(void) {
    int *mem;
    MPI_Win win;
    OK(MPI_Win_allocate(8 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
    MPI_Aint sz;
    int unit, *p;
    OK(MPI_Win_shared_query(win, rank, &sz, &unit, &p));
    CHECK(p == mem && sz == 8 * sizeof(int) && unit == sizeof(int), "own: %p size %ld", (void *)p, (long)sz);
    if (size > 1) {
        OK(MPI_Win_shared_query(win, (rank + 1) % size, &sz, &unit, &p));
        CHECK(p == NULL && sz == 0, "another rank's memory of a non-shared window: %p size %ld", (void *)p, (long)sz);
    }
    OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    FAILS(MPI_Win_shared_query(win, size, &sz, &unit, &p), MPI_ERR_RANK);
    OK(MPI_Win_free(&win));
}

/* ---- large-count forms ---- */

#define NL 32

static void large(void) {
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    long long *mem;
    MPI_Win win;
    OK(MPI_Win_allocate_c(2 * NL * sizeof(long long), sizeof(long long), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
    OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    for (int i = 0; i < 2 * NL; i++)
        mem[i] = 0;
    long long out[NL], in[NL], res[NL];
    for (int i = 0; i < NL; i++)
        out[i] = (long long)rank * 1000 + i;
    MPI_Request rq[4];

    OK(MPI_Win_fence(0, win));
    OK(MPI_Put_c(out, NL, MPI_LONG_LONG, right, 0, NL, MPI_LONG_LONG, win));
    OK(MPI_Accumulate_c(out, NL, MPI_LONG_LONG, right, NL, NL, MPI_LONG_LONG, MPI_SUM, win));
    OK(MPI_Win_fence(0, win));
    for (int i = 0; i < NL; i++)
        CHECK(mem[i] == (long long)left * 1000 + i && mem[NL + i] == mem[i], "Put_c/Accumulate_c [%d] = %lld, %lld", i,
              mem[i], mem[NL + i]);
    OK(MPI_Barrier(MPI_COMM_WORLD)); /* checked before the next epoch's operations arrive */
    OK(MPI_Get_c(in, NL, MPI_LONG_LONG, right, 0, NL, MPI_LONG_LONG, win));
    OK(MPI_Get_accumulate_c(out, NL, MPI_LONG_LONG, res, NL, MPI_LONG_LONG, right, NL, NL, MPI_LONG_LONG, MPI_SUM,
                            win));
    OK(MPI_Win_fence(0, win));
    for (int i = 0; i < NL; i++)
        CHECK(in[i] == out[i] && res[i] == out[i], "Get_c/Get_accumulate_c [%d] = %lld, %lld", i, in[i], res[i]);
    for (int i = 0; i < NL; i++)
        CHECK(mem[NL + i] == 2 * ((long long)left * 1000 + i), "after Get_accumulate_c [%d] = %lld", i, mem[NL + i]);
    OK(MPI_Barrier(MPI_COMM_WORLD));

    OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, win));
    OK(MPI_Rput_c(out, NL, MPI_LONG_LONG, right, NL, NL, MPI_LONG_LONG, win, &rq[0]));
    OK(MPI_Raccumulate_c(out, NL, MPI_LONG_LONG, right, NL, NL, MPI_LONG_LONG, MPI_SUM, win, &rq[1]));
    OK(MPI_Rget_accumulate_c(NULL, 0, MPI_LONG_LONG, res, NL, MPI_LONG_LONG, right, NL, NL, MPI_LONG_LONG, MPI_NO_OP,
                             win, &rq[2]));
    OK(MPI_Rget_c(in, NL, MPI_LONG_LONG, right, 0, NL, MPI_LONG_LONG, win, &rq[3]));
    OK(MPI_Waitall(4, rq, MPI_STATUSES_IGNORE));
    OK(MPI_Win_unlock(right, win));
    for (int i = 0; i < NL; i++)
        CHECK(res[i] == 2 * out[i] && in[i] == out[i], "Rget_accumulate_c/Rget_c [%d] = %lld, %lld", i, res[i], in[i]);

    /* Counts beyond INT_MAX are taken as they are: within bcsmpi's bound
     * the window's size refuses this one (the count is not truncated), and
     * beyond it the count itself is refused. */
    MPI_Count big = (MPI_Count)INT_MAX + 1;
    OK(MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win));
    FAILS(MPI_Put_c(out, big, MPI_BYTE, right, 0, big, MPI_BYTE, win), MPI_ERR_RMA_RANGE);
    FAILS(MPI_Get_c(in, (MPI_Count)1 << 48, MPI_BYTE, right, 0, (MPI_Count)1 << 48, MPI_BYTE, win), MPI_ERR_COUNT);
    FAILS(MPI_Put_c(out, -1, MPI_BYTE, right, 0, 1, MPI_BYTE, win), MPI_ERR_COUNT);
    OK(MPI_Win_unlock(right, win));
    OK(MPI_Win_free(&win));

    /* MPI_Win_create_c: an MPI_Aint disp_unit, within the int attribute. */
    OK(MPI_Win_create_c(mem, 0, 3, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    int *unitp, flag;
    OK(MPI_Win_get_attr(win, MPI_WIN_DISP_UNIT, &unitp, &flag));
    CHECK(flag && *unitp == 3, "disp_unit %d", *unitp);
    OK(MPI_Win_free(&win));
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    FAILS(MPI_Win_create_c(mem, 0, (MPI_Aint)INT_MAX + 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win), MPI_ERR_DISP);
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
}

/* ---- long transfers (bodies sent from the program's buffer, and received
 * straight into the window when the target layout is contiguous) ---- */

#define BIG (1 << 16) /* doubles per rank: 512 KiB */

static double bval(int r, int i, int k) { return r * 1e7 + i + k * 0.25; }

static void bulk(void) {
    int t = (rank + 1) % size, prev = (rank + size - 1) % size;
    double *mem, *src = malloc(BIG * sizeof(double));
    MPI_Win win;
    OK(MPI_Win_allocate(BIG * sizeof(double), sizeof(double), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
    for (int i = 0; i < BIG; i++)
        mem[i] = -1;
    OK(MPI_Barrier(MPI_COMM_WORLD));

    /* A burst of four puts of 128 KiB, one per quarter, then one flush. */
    for (int i = 0; i < BIG; i++)
        src[i] = bval(rank, i, 0);
    OK(MPI_Win_lock_all(0, win));
    for (int q = 0; q < 4; q++)
        OK(MPI_Put(src + q * (BIG / 4), BIG / 4, MPI_DOUBLE, t, q * (BIG / 4), BIG / 4, MPI_DOUBLE, win));
    OK(MPI_Win_flush(t, win));
    OK(MPI_Win_unlock_all(win));
    OK(MPI_Barrier(MPI_COMM_WORLD));
    for (int i = 0; i < BIG; i++)
        CHECK(mem[i] == bval(prev, i, 0), "burst put [%d] = %.17g, want %.17g", i, mem[i], bval(prev, i, 0));
    OK(MPI_Barrier(MPI_COMM_WORLD));

    /* Local completion: once MPI_Win_flush_local returns, the buffer may
     * change; the target holds what it held at the put. One put of the
     * whole 512 KiB. */
    for (int i = 0; i < BIG; i++)
        src[i] = bval(rank, i, 1);
    OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t, 0, win));
    OK(MPI_Put(src, BIG, MPI_DOUBLE, t, 0, BIG, MPI_DOUBLE, win));
    OK(MPI_Win_flush_local(t, win));
    for (int i = 0; i < BIG; i++)
        src[i] = 0;
    OK(MPI_Win_unlock(t, win));
    OK(MPI_Barrier(MPI_COMM_WORLD));
    for (int i = 0; i < BIG; i++)
        CHECK(mem[i] == bval(prev, i, 1), "put after flush_local [%d] = %.17g, want %.17g", i, mem[i],
              bval(prev, i, 1));
    OK(MPI_Barrier(MPI_COMM_WORLD));

    /* A long accumulate, then a long put into a strided target (both
     * through a buffer at the target), under fence. */
    for (int i = 0; i < BIG / 2; i++)
        src[i] = bval(rank, i, 2);
    MPI_Datatype every2;
    OK(MPI_Type_vector(BIG / 4, 1, 2, MPI_DOUBLE, &every2));
    OK(MPI_Type_commit(&every2));
    OK(MPI_Win_fence(0, win));
    OK(MPI_Accumulate(src, BIG / 2, MPI_DOUBLE, t, 0, BIG / 2, MPI_DOUBLE, MPI_SUM, win));
    OK(MPI_Put(src, BIG / 4, MPI_DOUBLE, t, BIG / 2, 1, every2, win));
    OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
    for (int i = 0; i < BIG / 2; i++)
        CHECK(mem[i] == bval(prev, i, 1) + bval(prev, i, 2), "long accumulate [%d] = %.17g", i, mem[i]);
    for (int i = 0; i < BIG / 2; i++) {
        double want = i % 2 == 0 ? bval(prev, i / 2, 2) : bval(prev, BIG / 2 + i, 1);
        CHECK(mem[BIG / 2 + i] == want, "strided put [%d] = %.17g, want %.17g", BIG / 2 + i, mem[BIG / 2 + i], want);
    }
    OK(MPI_Type_free(&every2));
    OK(MPI_Win_free(&win));
    free(src);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm node;
    OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node));
    int ns;
    MPI_Comm_size(node, &ns);

    if (argc > 1 && strcmp(argv[1], "abort") == 0) {
        int *mine;
        MPI_Win win;
        OK(MPI_Win_allocate_shared(1 << 20, 1, MPI_INFO_NULL, node, &mine, &win));
        mine[0] = 1;
        char from[256];
        mapped_from(mine, from, sizeof from);
        CHECK(strstr(from, "memfd:") != NULL, "the shared window is backed by %s, want an anonymous memory file", from);
        OK(MPI_Barrier(MPI_COMM_WORLD));
        if (rank == 0)
            MPI_Abort(MPI_COMM_WORLD, 7);
        OK(MPI_Barrier(MPI_COMM_WORLD)); /* the others wait here until the job ends */
        printf("not reached %d\n", rank);
        return 0;
    }

    if (argc > 1) {
        long long buf[4];
        MPI_Win win;
        int *mine;
        MPI_Count big = strcmp(argv[1], "bigput") == 0 ? (MPI_Count)INT_MAX + 1 : (MPI_Count)1 << 48;
        if (strcmp(argv[1], "world") == 0)
            MPI_Win_allocate_shared(64, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &mine, &win);
        if (strcmp(argv[1], "dispunit") == 0)
            MPI_Win_create_c(buf, sizeof buf, (MPI_Aint)INT_MAX + 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
        OK(MPI_Win_create(buf, sizeof buf, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
        OK(MPI_Win_fence(0, win));
        if (rank == 0 && strcmp(argv[1], "bigput") == 0)
            MPI_Put_c(buf, big, MPI_BYTE, 1 % size, 0, big, MPI_BYTE, win);
        if (rank == 0 && strcmp(argv[1], "bigget") == 0)
            MPI_Get_c(buf, big, MPI_BYTE, 1 % size, 0, big, MPI_BYTE, win);
        OK(MPI_Win_fence(0, win));
        printf("not reached %d\n", rank);
        OK(MPI_Win_free(&win));
        MPI_Finalize();
        return 0;
    }

    attributes();
    shared(node, 0);
    shared(node, 1);
    shared_empty(node);
    if (ns == size) {
        shared(MPI_COMM_WORLD, 0); /* one node: the world shares memory */
    } else {
        /* Several nodes: every rank gets the same refusal. */
        MPI_Win win;
        int *mine;
        OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
        FAILS(MPI_Win_allocate_shared(64, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &mine, &win), MPI_ERR_RMA_SHARED);
        OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
    }
    query_other();
    large();
    bulk();
    OK(MPI_Comm_free(&node));
    MPI_Finalize();
    printf("rmashared ok %d\n", rank);
    return 0;
}
