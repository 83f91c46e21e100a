/* rma: one-sided communication. Windows (create, allocate, dynamic) and
 * their attributes; Put, Get, Accumulate, Get_accumulate, Fetch_and_op,
 * Compare_and_swap and the request forms, with basic and derived datatypes;
 * every synchronisation mode (fence, post-start-complete-wait, lock and
 * unlock, lock_all and flushes); passive target against a target blocked
 * in MPI_Barrier and in MPI_Recv; atomicity of Fetch_and_op on one counter;
 * error classes. Values are checked bit for bit. Prints "rma ok <rank>".
 *
 * Modes (argv[1]): none: everything above; "range": an out-of-range put
 * under the default (fatal) handler; "sync": a put outside any epoch,
 * fatal; "nofree": a window never freed; "freeopen": MPI_Win_free after a
 * put with no closing fence, fatal. */
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

/* A value with all its bits meaningful: rank r, slot i, round k. */
static double val(int r, int i, int k) { return (r + 1) * 1000.0 + i + k / 7.0; }

static int same(double a, double b) { return memcmp(&a, &b, sizeof a) == 0; }

#define N 16

static void attributes(void) {
    double buf[N];
    MPI_Win win;
    OK(MPI_Win_create(buf, sizeof buf, sizeof(double), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    void *base;
    MPI_Aint *wsize;
    int *unit, *flavor, *model, flag;
    OK(MPI_Win_get_attr(win, MPI_WIN_BASE, &base, &flag));
    CHECK(flag && base == buf, "base %p, want %p", base, (void *)buf);
    OK(MPI_Win_get_attr(win, MPI_WIN_SIZE, &wsize, &flag));
    CHECK(flag && *wsize == (MPI_Aint)sizeof buf, "size %ld", (long)*wsize);
    OK(MPI_Win_get_attr(win, MPI_WIN_DISP_UNIT, &unit, &flag));
    CHECK(flag && *unit == sizeof(double), "disp_unit %d", *unit);
    OK(MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, &flavor, &flag));
    CHECK(flag && *flavor == MPI_WIN_FLAVOR_CREATE, "flavor %d", *flavor);
    OK(MPI_Win_get_attr(win, MPI_WIN_MODEL, &model, &flag));
    CHECK(flag && *model == MPI_WIN_UNIFIED, "model %d", *model);
    MPI_Group g, wg;
    int cmp;
    OK(MPI_Win_get_group(win, &g));
    OK(MPI_Comm_group(MPI_COMM_WORLD, &wg));
    OK(MPI_Group_compare(g, wg, &cmp));
    CHECK(cmp == MPI_IDENT, "group compare %d", cmp);
    OK(MPI_Group_free(&g));
    OK(MPI_Group_free(&wg));
    char name[MPI_MAX_OBJECT_NAME];
    int len;
    OK(MPI_Win_get_name(win, name, &len));
    CHECK(len == 0, "name %s", name);
    OK(MPI_Win_set_name(win, "halo"));
    OK(MPI_Win_get_name(win, name, &len));
    CHECK(len == 4 && strcmp(name, "halo") == 0, "name %s", name);
    MPI_Info info;
    OK(MPI_Win_get_info(win, &info));
    OK(MPI_Info_free(&info));
    OK(MPI_Win_free(&win));
    CHECK(win == MPI_WIN_NULL, "win not reset");

    double *mem;
    OK(MPI_Win_allocate(N * sizeof(double), sizeof(double), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
    OK(MPI_Win_get_attr(win, MPI_WIN_BASE, &base, &flag));
    CHECK(base == mem, "allocate base %p, want %p", base, (void *)mem);
    OK(MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, &flavor, &flag));
    CHECK(*flavor == MPI_WIN_FLAVOR_ALLOCATE, "flavor %d", *flavor);
    for (int i = 0; i < N; i++)
        mem[i] = -1;
    OK(MPI_Win_fence(0, win));
    /* Everyone puts its slice into rank 0's memory. */
    double mine = val(rank, 0, 1);
    OK(MPI_Put(&mine, 1, MPI_DOUBLE, 0, rank % N, 1, MPI_DOUBLE, win));
    OK(MPI_Win_fence(0, win));
    if (rank == 0)
        for (int r = 0; r < size && r < N; r++)
            CHECK(same(mem[r], val(r, 0, 1)), "allocate: slot %d = %.17g", r, mem[r]);
    OK(MPI_Win_free(&win));
}

/* Fence: a ring of puts (basic and derived types) and gets. */
static void fence(void) {
    double buf[N], got[N];
    MPI_Win win;
    for (int i = 0; i < N; i++)
        buf[i] = val(rank, i, 0);
    OK(MPI_Win_create(buf, sizeof buf, sizeof(double), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    OK(MPI_Win_fence(MPI_MODE_NOPRECEDE, win));
    /* Get the previous rank's first 4 values before anyone writes. */
    OK(MPI_Get(got, 4, MPI_DOUBLE, prev, 0, 4, MPI_DOUBLE, win));
    OK(MPI_Win_fence(0, win));
    for (int i = 0; i < 4; i++)
        CHECK(same(got[i], val(prev, i, 0)), "fence get %d = %.17g", i, got[i]);
    /* Put 4 doubles into the next rank's odd slots 1, 3, 5, 7 (a vector on
     * the target), and 2 doubles from our even slots (a vector on the
     * origin) into its slots 12, 13. */
    MPI_Datatype odd, even2;
    OK(MPI_Type_vector(4, 1, 2, MPI_DOUBLE, &odd));
    OK(MPI_Type_commit(&odd));
    OK(MPI_Type_vector(2, 1, 2, MPI_DOUBLE, &even2));
    OK(MPI_Type_commit(&even2));
    double src[4] = {val(rank, 100, 1), val(rank, 101, 1), val(rank, 102, 1), val(rank, 103, 1)};
    double evensrc[4] = {val(rank, 200, 1), 0, val(rank, 202, 1), 0};
    OK(MPI_Put(src, 4, MPI_DOUBLE, next, 1, 1, odd, win));
    OK(MPI_Put(evensrc, 1, even2, next, 12, 2, MPI_DOUBLE, win));
    OK(MPI_Win_fence(0, win));
    for (int i = 0; i < N; i++) {
        double want = val(rank, i, 0);
        if (i >= 1 && i <= 7 && i % 2 == 1)
            want = val(prev, 100 + (i - 1) / 2, 1);
        if (i == 12)
            want = val(prev, 200, 1);
        if (i == 13)
            want = val(prev, 202, 1);
        CHECK(same(buf[i], want), "fence put: slot %d = %.17g, want %.17g", i, buf[i], want);
    }
    /* Get with a derived origin type: the next rank's slots 1, 3, 5, 7 into
     * our own odd slots of got. */
    for (int i = 0; i < N; i++)
        got[i] = -1;
    OK(MPI_Get(got + 1, 1, odd, next, 1, 1, odd, win));
    OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
    for (int i = 0; i < 8; i++) {
        double want = i % 2 ? val(rank, 100 + (i - 1) / 2, 1) : -1;
        CHECK(same(got[i], want), "fence derived get: slot %d = %.17g, want %.17g", i, got[i], want);
    }
    OK(MPI_Type_free(&odd));
    OK(MPI_Type_free(&even2));
    OK(MPI_Win_free(&win));
}

/* Post-start-complete-wait: everyone exposes to everyone and writes its
 * rank's slot in every window. */
static void pscw(void) {
    int *buf = malloc(size * sizeof(int));
    MPI_Win win;
    for (int i = 0; i < size; i++)
        buf[i] = -1;
    OK(MPI_Win_create(buf, size * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    MPI_Group g;
    OK(MPI_Win_get_group(win, &g));
    for (int round = 0; round < 3; round++) {
        OK(MPI_Win_post(g, 0, win));
        OK(MPI_Win_start(g, 0, win));
        for (int t = 0; t < size; t++) {
            int v = rank * 100 + t * 10 + round;
            OK(MPI_Put(&v, 1, MPI_INT, t, rank, 1, MPI_INT, win));
        }
        OK(MPI_Win_complete(win));
        if (round == 1) {
            int flag = 0;
            while (!flag)
                OK(MPI_Win_test(win, &flag));
        } else {
            OK(MPI_Win_wait(win));
        }
        for (int o = 0; o < size; o++)
            CHECK(buf[o] == o * 100 + rank * 10 + round, "pscw round %d: slot %d = %d", round, o, buf[o]);
    }
    OK(MPI_Group_free(&g));
    OK(MPI_Win_free(&win));
    free(buf);
}

/* Locks: exclusive read-modify-write of every rank's counter by every rank
 * (Get, then Put, under the lock: a lost update would show), and shared
 * accumulates. */
static void locks(void) {
    long *buf = calloc(2, sizeof(long));
    MPI_Win win;
    OK(MPI_Win_create(buf, 2 * sizeof(long), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    OK(MPI_Barrier(MPI_COMM_WORLD));
    for (int k = 0; k < 3; k++)
        for (int i = 0; i < size; i++) {
            int t = (rank + i) % size;
            long v;
            OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t, 0, win));
            OK(MPI_Get(&v, 1, MPI_LONG, t, 0, 1, MPI_LONG, win));
            OK(MPI_Win_flush(t, win));
            v += rank + 1;
            OK(MPI_Put(&v, 1, MPI_LONG, t, 0, 1, MPI_LONG, win));
            OK(MPI_Win_unlock(t, win));
            long one = 1;
            OK(MPI_Win_lock(MPI_LOCK_SHARED, t, 0, win));
            OK(MPI_Accumulate(&one, 1, MPI_LONG, t, 1, 1, MPI_LONG, MPI_SUM, win));
            OK(MPI_Win_unlock(t, win));
        }
    OK(MPI_Barrier(MPI_COMM_WORLD));
    long want = 3L * size * (size + 1) / 2;
    OK(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win));
    CHECK(buf[0] == want, "exclusive read-modify-write: %ld, want %ld", buf[0], want);
    CHECK(buf[1] == 3L * size, "shared accumulate: %ld, want %ld", buf[1], 3L * size);
    OK(MPI_Win_unlock(rank, win));
    OK(MPI_Win_free(&win));
    free(buf);
}

/* lock_all with flushes, request-based operations, Get_accumulate with
 * MPI_NO_OP and MPI_REPLACE, Compare_and_swap. */
static void lockall(void) {
    int64_t *buf = calloc(8, sizeof(int64_t));
    MPI_Win win;
    OK(MPI_Win_create(buf, 8 * sizeof(int64_t), sizeof(int64_t), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    OK(MPI_Win_lock_all(0, win));
    int t = (rank + 1) % size;
    int64_t v = 1000 + rank, got = -1;
    OK(MPI_Put(&v, 1, MPI_INT64_T, t, 2, 1, MPI_INT64_T, win));
    OK(MPI_Win_flush(t, win));
    OK(MPI_Get(&got, 1, MPI_INT64_T, t, 2, 1, MPI_INT64_T, win));
    OK(MPI_Win_flush_local(t, win));
    CHECK(got == v, "put-flush-get: %lld, want %lld", (long long)got, (long long)v);
    MPI_Request rq[2];
    int64_t w2 = 2000 + rank, got2 = -1;
    OK(MPI_Rput(&w2, 1, MPI_INT64_T, t, 3, 1, MPI_INT64_T, win, &rq[0]));
    OK(MPI_Wait(&rq[0], MPI_STATUS_IGNORE));
    OK(MPI_Win_flush_all(win));
    OK(MPI_Rget(&got2, 1, MPI_INT64_T, t, 3, 1, MPI_INT64_T, win, &rq[1]));
    OK(MPI_Wait(&rq[1], MPI_STATUS_IGNORE));
    CHECK(got2 == w2, "rput-rget: %lld, want %lld", (long long)got2, (long long)w2);
    int64_t old = -1, neu = 3000 + rank;
    OK(MPI_Get_accumulate(NULL, 0, MPI_INT64_T, &old, 1, MPI_INT64_T, t, 3, 1, MPI_INT64_T, MPI_NO_OP, win));
    OK(MPI_Get_accumulate(&neu, 1, MPI_INT64_T, &old, 1, MPI_INT64_T, t, 3, 1, MPI_INT64_T, MPI_REPLACE, win));
    OK(MPI_Win_flush(t, win));
    CHECK(old == w2, "get_accumulate replace fetched %lld, want %lld", (long long)old, (long long)w2);
    OK(MPI_Fetch_and_op(NULL, &old, MPI_INT64_T, t, 3, MPI_NO_OP, win));
    OK(MPI_Win_flush_local_all(win));
    CHECK(old == neu, "fetch no_op %lld, want %lld", (long long)old, (long long)neu);
    OK(MPI_Win_unlock_all(win));
    OK(MPI_Barrier(MPI_COMM_WORLD));

    /* Compare_and_swap: everyone tries to swap rank 0's slot 4 from 0 to
     * its rank + 1; exactly one succeeds. */
    OK(MPI_Win_lock_all(MPI_MODE_NOCHECK, win));
    int64_t cmp = 0, mine = rank + 1, prior = -1;
    OK(MPI_Compare_and_swap(&mine, &cmp, &prior, MPI_INT64_T, 0, 4, win));
    OK(MPI_Win_flush(0, win));
    OK(MPI_Win_unlock_all(win));
    int won = prior == 0, winners;
    OK(MPI_Allreduce(&won, &winners, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    CHECK(winners == 1, "%d ranks won the compare-and-swap", winners);
    if (rank == 0) {
        OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
        CHECK(buf[4] >= 1 && buf[4] <= size, "swapped value %lld", (long long)buf[4]);
        OK(MPI_Win_unlock(0, win));
    }
    OK(MPI_Win_free(&win));
    free(buf);
}

/* Atomicity: every rank adds 1 K times to rank 0's counter with
 * Fetch_and_op; the final value is exact and every fetched value is
 * distinct. */
static void counter(void) {
    enum { K = 20 };
    long *ctr;
    MPI_Win win;
    OK(MPI_Win_allocate(sizeof(long), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &ctr, &win));
    *ctr = 0;
    OK(MPI_Barrier(MPI_COMM_WORLD));
    long fetched[K], one = 1;
    OK(MPI_Win_lock_all(0, win));
    for (int k = 0; k < K; k++) {
        OK(MPI_Fetch_and_op(&one, &fetched[k], MPI_LONG, 0, 0, MPI_SUM, win));
        OK(MPI_Win_flush(0, win));
    }
    OK(MPI_Win_unlock_all(win));
    long *all = malloc(sizeof(long) * K * size);
    OK(MPI_Gather(fetched, K, MPI_LONG, all, K, MPI_LONG, 0, MPI_COMM_WORLD));
    OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) {
        CHECK(*ctr == (long)K * size, "counter %ld, want %ld", *ctr, (long)K * size);
        char *seen = calloc(K * size, 1);
        for (int i = 0; i < K * size; i++) {
            CHECK(all[i] >= 0 && all[i] < K * size, "fetched %ld out of range", all[i]);
            CHECK(!seen[all[i]], "fetched %ld twice", all[i]);
            seen[all[i]] = 1;
        }
        free(seen);
    }
    free(all);
    OK(MPI_Win_free(&win));
}

/* Passive target against a target that sits in MPI_Barrier, then in
 * MPI_Recv: without progress inside those calls, this hangs. */
static void passive(void) {
    int buf[4] = {0, 0, 0, 0};
    MPI_Win win;
    OK(MPI_Win_create(buf, sizeof buf, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    int target = size - 1;
    if (rank != target) {
        int v = 10 + rank, got = -1;
        OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, target, 0, win));
        OK(MPI_Accumulate(&v, 1, MPI_INT, target, 0, 1, MPI_INT, MPI_SUM, win));
        OK(MPI_Win_unlock(target, win));
        OK(MPI_Win_lock(MPI_LOCK_SHARED, target, 0, win));
        OK(MPI_Get(&got, 1, MPI_INT, target, 0, 1, MPI_INT, win));
        OK(MPI_Win_unlock(target, win));
        CHECK(got >= v, "get after accumulate: %d", got);
    }
    OK(MPI_Barrier(MPI_COMM_WORLD)); /* the target waits here from the start */
    int sum = 0;
    for (int r = 0; r < size - 1; r++)
        sum += 10 + r;
    if (rank == target)
        CHECK(buf[0] == sum, "accumulated %d, want %d", buf[0], sum);

    /* The target blocks in MPI_Recv from rank 0, which first locks,
     * writes and reads back the target's window. */
    if (size > 1) {
        if (rank == target) {
            int msg;
            OK(MPI_Recv(&msg, 1, MPI_INT, 0, 77, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            CHECK(msg == 4242 && buf[1] == 4242, "recv %d, window %d", msg, buf[1]);
        } else if (rank == 0) {
            int v = 4242, got = 0;
            OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, target, 0, win));
            OK(MPI_Put(&v, 1, MPI_INT, target, 1, 1, MPI_INT, win));
            OK(MPI_Win_flush(target, win));
            OK(MPI_Get(&got, 1, MPI_INT, target, 1, 1, MPI_INT, win));
            OK(MPI_Win_unlock(target, win));
            CHECK(got == v, "read back %d", got);
            OK(MPI_Send(&v, 1, MPI_INT, target, 77, MPI_COMM_WORLD));
        }
    }
    /* The target blocks in MPI_Wait on a receive from rank 0. */
    if (size > 1) {
        if (rank == target) {
            int msg;
            MPI_Request rq;
            OK(MPI_Irecv(&msg, 1, MPI_INT, 0, 78, MPI_COMM_WORLD, &rq));
            OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
            CHECK(msg == 99 && buf[2] == 99, "wait: recv %d, window %d", msg, buf[2]);
        } else if (rank == 0) {
            int v = 99;
            OK(MPI_Win_lock(MPI_LOCK_SHARED, target, 0, win));
            OK(MPI_Accumulate(&v, 1, MPI_INT, target, 2, 1, MPI_INT, MPI_REPLACE, win));
            OK(MPI_Win_unlock(target, win));
            OK(MPI_Send(&v, 1, MPI_INT, target, 78, MPI_COMM_WORLD));
        }
    }
    OK(MPI_Win_free(&win));
}

/* A dynamic window: each rank attaches an array and publishes its
 * address; the next rank writes into it. */
static void dynamic(void) {
    MPI_Win win;
    int arr[4] = {0, 0, 0, 0};
    OK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    OK(MPI_Win_attach(win, arr, sizeof arr));
    MPI_Aint mine, *addrs = malloc(size * sizeof(MPI_Aint));
    OK(MPI_Get_address(arr, &mine));
    OK(MPI_Allgather(&mine, 1, MPI_AINT, addrs, 1, MPI_AINT, MPI_COMM_WORLD));
    int next = (rank + 1) % size, v[2] = {rank * 3 + 1, rank * 3 + 2};
    OK(MPI_Win_fence(0, win));
    OK(MPI_Put(v, 2, MPI_INT, next, MPI_Aint_add(addrs[next], sizeof(int)), 2, MPI_INT, win));
    OK(MPI_Win_fence(0, win));
    int prev = (rank + size - 1) % size;
    CHECK(arr[0] == 0 && arr[1] == prev * 3 + 1 && arr[2] == prev * 3 + 2 && arr[3] == 0, "dynamic: %d %d %d %d",
          arr[0], arr[1], arr[2], arr[3]);
    /* Outside the attached region: the target refuses, the origin's next
     * synchronisation reports MPI_ERR_RMA_RANGE. */
    OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    /* (A put to the caller's own window is refused at once.) */
    int rc = MPI_Put(v, 2, MPI_INT, next, MPI_Aint_add(addrs[next], 3 * sizeof(int)), 2, MPI_INT, win), cls;
    int rc2 = MPI_Win_fence(0, win);
    CHECK(rc == MPI_SUCCESS || rc2 == MPI_SUCCESS, "put %d and fence %d both failed", rc, rc2);
    MPI_Error_class(rc != MPI_SUCCESS ? rc : rc2, &cls);
    CHECK(cls == MPI_ERR_RMA_RANGE, "dynamic out of region: %d %d", rc, rc2);
    CHECK(arr[3] == 0, "the refused put wrote %d", arr[3]);
    OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
    OK(MPI_Win_detach(win, arr));
    OK(MPI_Win_free(&win));
    free(addrs);
}

/* Large transfers (requests and results longer than one header message):
 * a put of a strided column into the next rank, a get back, an
 * accumulate and a get_accumulate of 20000 doubles, under lock_all. */
static void large(void) {
    enum { M = 20000 };
    double *win_mem, *src = malloc(2 * M * sizeof(double)), *got = malloc(M * sizeof(double));
    MPI_Win win;
    OK(MPI_Win_allocate(2 * M * sizeof(double), sizeof(double), MPI_INFO_NULL, MPI_COMM_WORLD, &win_mem, &win));
    for (int i = 0; i < 2 * M; i++)
        win_mem[i] = 0;
    for (int i = 0; i < 2 * M; i++)
        src[i] = val(rank, i, 3);
    MPI_Datatype every2;
    OK(MPI_Type_vector(M, 1, 2, MPI_DOUBLE, &every2));
    OK(MPI_Type_commit(&every2));
    OK(MPI_Barrier(MPI_COMM_WORLD));
    int t = (rank + 1) % size, prev = (rank + size - 1) % size;
    OK(MPI_Win_lock_all(0, win));
    /* src's even elements into the target's odd slots. */
    OK(MPI_Put(src, 1, every2, t, 1, 1, every2, win));
    OK(MPI_Win_flush(t, win));
    OK(MPI_Get(got, M, MPI_DOUBLE, t, 1, 1, every2, win));
    OK(MPI_Win_flush(t, win));
    for (int i = 0; i < M; i++)
        CHECK(same(got[i], src[2 * i]), "large get %d = %.17g", i, got[i]);
    /* Add src's first M elements to the target's even slots, fetching
     * what was there (zeros) first. */
    OK(MPI_Get_accumulate(src, M, MPI_DOUBLE, got, M, MPI_DOUBLE, t, 0, 1, every2, MPI_SUM, win));
    OK(MPI_Win_flush(t, win));
    for (int i = 0; i < M; i++)
        CHECK(got[i] == 0, "large get_accumulate fetched %d = %.17g", i, got[i]);
    OK(MPI_Accumulate(src, M, MPI_DOUBLE, t, 0, 1, every2, MPI_SUM, win));
    OK(MPI_Win_unlock_all(win));
    OK(MPI_Barrier(MPI_COMM_WORLD));
    OK(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win));
    for (int i = 0; i < M; i++) {
        double even = val(prev, i, 3) + val(prev, i, 3);
        CHECK(same(win_mem[2 * i], even), "large accumulate slot %d = %.17g, want %.17g", 2 * i, win_mem[2 * i], even);
        CHECK(same(win_mem[2 * i + 1], val(prev, 2 * i, 3)), "large put slot %d = %.17g", 2 * i + 1, win_mem[2 * i + 1]);
    }
    OK(MPI_Win_unlock(rank, win));
    OK(MPI_Type_free(&every2));
    OK(MPI_Win_free(&win));
    free(src);
    free(got);
}

/* A window on MPI_COMM_SELF: every operation is local. */
static void self(void) {
    int buf[2] = {5, 0}, got = 0;
    MPI_Win win;
    OK(MPI_Win_create(buf, sizeof buf, sizeof(int), MPI_INFO_NULL, MPI_COMM_SELF, &win));
    OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
    int two = 2;
    OK(MPI_Accumulate(&two, 1, MPI_INT, 0, 0, 1, MPI_INT, MPI_PROD, win));
    OK(MPI_Get(&got, 1, MPI_INT, 0, 0, 1, MPI_INT, win));
    OK(MPI_Win_unlock(0, win));
    CHECK(buf[0] == 10 && got == 10, "self: %d %d", buf[0], got);
    OK(MPI_Win_fence(0, win));
    OK(MPI_Put(&two, 1, MPI_INT, 0, 1, 1, MPI_INT, win));
    OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
    CHECK(buf[1] == 2, "self fence: %d", buf[1]);
    /* MPI_MAXLOC on value-index pairs. */
    struct { int v, i; } pair[2] = {{3, 7}, {0, 0}}, in = {5, 1};
    MPI_Win pw;
    OK(MPI_Win_create(pair, sizeof pair, sizeof pair[0], MPI_INFO_NULL, MPI_COMM_SELF, &pw));
    OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, pw));
    OK(MPI_Accumulate(&in, 1, MPI_2INT, 0, 0, 1, MPI_2INT, MPI_MAXLOC, pw));
    OK(MPI_Win_unlock(0, pw));
    CHECK(pair[0].v == 5 && pair[0].i == 1, "maxloc: (%d, %d)", pair[0].v, pair[0].i);
    OK(MPI_Win_free(&pw));
    OK(MPI_Win_free(&win));
}

static void expect(int rc, int want, const char *what) {
    int cls;
    MPI_Error_class(rc, &cls);
    CHECK(cls == want, "%s: class %d, want %d", what, cls, want);
}

static int handled, handled_code;
static MPI_Win handled_win;

static void on_error(MPI_Win *win, int *code, ...) {
    handled++;
    handled_code = *code;
    handled_win = *win;
}

static void errors(void) {
    int buf[4] = {0}, v = 1;
    MPI_Win win;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    expect(MPI_Win_fence(0, MPI_WIN_NULL), MPI_ERR_WIN, "fence on MPI_WIN_NULL");
    expect(MPI_Put(&v, 1, MPI_INT, 0, 0, 1, MPI_INT, (MPI_Win)MPI_COMM_WORLD), MPI_ERR_WIN, "put on a communicator");
    expect(MPI_Win_create(buf, -4, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win), MPI_ERR_SIZE, "negative size");
    expect(MPI_Win_create(buf, 16, 0, MPI_INFO_NULL, MPI_COMM_WORLD, &win), MPI_ERR_DISP, "zero disp_unit");
    OK(MPI_Win_create(buf, sizeof buf, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    MPI_Errhandler eh;
    OK(MPI_Win_get_errhandler(win, &eh));
    CHECK(eh == MPI_ERRORS_RETURN, "errhandler not kept");
    expect(MPI_Put(&v, 1, MPI_INT, 0, 0, 1, MPI_INT, win), MPI_ERR_RMA_SYNC, "put outside an epoch");
    expect(MPI_Win_unlock(0, win), MPI_ERR_RMA_SYNC, "unlock without lock");
    expect(MPI_Win_complete(win), MPI_ERR_RMA_SYNC, "complete without start");
    expect(MPI_Win_wait(win), MPI_ERR_RMA_SYNC, "wait without post");
    expect(MPI_Win_flush(0, win), MPI_ERR_RMA_SYNC, "flush without lock");
    expect(MPI_Win_lock(12345, 0, 0, win), MPI_ERR_LOCKTYPE, "bad lock type");
    expect(MPI_Win_fence(1, win), MPI_ERR_ASSERT, "bad assert");
    OK(MPI_Win_fence(0, win));
    expect(MPI_Put(&v, 1, MPI_INT, size, 0, 1, MPI_INT, win), MPI_ERR_RANK, "target rank = size");
    expect(MPI_Put(&v, 1, MPI_INT, 0, 4, 1, MPI_INT, win), MPI_ERR_RMA_RANGE, "displacement past the end");
    expect(MPI_Put(&v, 1, MPI_INT, 0, -1, 1, MPI_INT, win), MPI_ERR_RMA_RANGE, "negative displacement");
    expect(MPI_Put(&v, 1, MPI_INT, 0, 0, 1, MPI_DOUBLE, win), MPI_ERR_TYPE, "int into a double");
    expect(MPI_Accumulate(&v, 1, MPI_INT, 0, 0, 1, MPI_INT, MPI_MAXLOC, win), MPI_ERR_OP, "MAXLOC on ints");
    MPI_Datatype mixed;
    int bl[2] = {1, 1};
    MPI_Aint dis[2] = {0, 4};
    MPI_Datatype ts[2] = {MPI_INT, MPI_FLOAT};
    OK(MPI_Type_create_struct(2, bl, dis, ts, &mixed));
    OK(MPI_Type_commit(&mixed));
    expect(MPI_Accumulate(buf, 1, mixed, 0, 0, 1, mixed, MPI_SUM, win), MPI_ERR_TYPE, "sum on a struct of int and float");
    OK(MPI_Type_free(&mixed));
    MPI_Datatype unc;
    OK(MPI_Type_contiguous(2, MPI_INT, &unc));
    expect(MPI_Put(&v, 2, MPI_INT, 0, 0, 1, unc, win), MPI_ERR_TYPE, "uncommitted target type");
    OK(MPI_Type_free(&unc));
    /* A user error handler sees the window and the code. */
    MPI_Errhandler mine;
    OK(MPI_Win_create_errhandler(on_error, &mine));
    OK(MPI_Win_set_errhandler(win, mine));
    int rc = MPI_Put(&v, 1, MPI_INT, 0, 100, 1, MPI_INT, win);
    CHECK(handled == 1 && handled_win == win && handled_code == rc, "user handler: %d calls, code %d, rc %d", handled,
          handled_code, rc);
    expect(rc, MPI_ERR_RMA_RANGE, "range under a user handler");
    OK(MPI_Errhandler_free(&mine));
    OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    OK(MPI_Win_fence(0, win));
    /* Operations issued in a fence epoch are completed only by the next
     * fence: neither another epoch nor MPI_Win_free may follow them. */
    OK(MPI_Put(&v, 1, MPI_INT, 0, 0, 1, MPI_INT, win));
    expect(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win), MPI_ERR_RMA_SYNC, "lock after a put in a fence epoch");
    expect(MPI_Win_lock_all(0, win), MPI_ERR_RMA_SYNC, "lock_all after a put in a fence epoch");
    expect(MPI_Win_free(&win), MPI_ERR_RMA_SYNC, "free after a put in a fence epoch");
    CHECK(win != MPI_WIN_NULL, "a refused MPI_Win_free freed the window");
    OK(MPI_Win_fence(0, win));
    /* A fence epoch with nothing issued may be left for a lock. */
    OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
    OK(MPI_Win_unlock(0, win));
    OK(MPI_Win_fence(0, win));
    OK(MPI_Win_free(&win));
    expect(MPI_Win_free(&win), MPI_ERR_WIN, "double free");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc > 1 && strcmp(argv[1], "nofree") == 0) {
        int buf[4];
        MPI_Win win;
        OK(MPI_Win_create(buf, sizeof buf, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
        OK(MPI_Win_set_name(win, "kept"));
        printf("nofree ok %d\n", rank);
        MPI_Finalize();
        return 0;
    }
    if (argc > 1) {
        int buf[4], v = 1;
        MPI_Win win;
        OK(MPI_Win_create(buf, sizeof buf, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
        if (strcmp(argv[1], "range") == 0) {
            OK(MPI_Win_fence(0, win));
            if (rank == 0)
                MPI_Put(&v, 1, MPI_INT, size - 1, 7, 1, MPI_INT, win);
        } else if (strcmp(argv[1], "freeopen") == 0) {
            OK(MPI_Win_fence(0, win));
            if (rank == 0)
                OK(MPI_Put(&v, 1, MPI_INT, size - 1, 0, 1, MPI_INT, win));
            MPI_Win_free(&win);
        } else if (rank == 0) {
            MPI_Put(&v, 1, MPI_INT, 0, 0, 1, MPI_INT, win);
        }
        printf("not reached %d\n", rank);
        MPI_Finalize();
        return 0;
    }
    attributes();
    fence();
    pscw();
    locks();
    lockall();
    counter();
    passive();
    dynamic();
    large();
    self();
    errors();
    printf("rma ok %d\n", rank);
    MPI_Finalize();
    return 0;
}
