/* mpit: the tool information interface. Control variables show the job's
 * configuration (argv[1]: the expected requests_max, or "single" for a
 * singleton; argv[2]: the expected mds selection), performance variables
 * count this rank's messages and, with the MMDS on, its MPI_Send calls;
 * sessions, handles, start/stop/read/write/reset/readreset, categories,
 * enumerations, the source and the absent events answer as the standard
 * says. Prints "mpit ok <rank>". */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank = -1, size;

#define CHECK(cond, ...)                                                  \
    do {                                                                  \
        if (!(cond)) {                                                    \
            printf("FAIL rank %d line %d: %s: ", rank, __LINE__, #cond); \
            printf(__VA_ARGS__);                                          \
            printf("\n");                                                 \
            fflush(stdout);                                               \
            exit(3);                                                      \
        }                                                                 \
    } while (0)

#define RC(call, want)                                                          \
    do {                                                                        \
        int rc_ = (call);                                                       \
        CHECK(rc_ == (want), "%s returned %d, want %d", #call, rc_, (int)(want)); \
    } while (0)
#define OK(call) RC(call, MPI_SUCCESS)

static int cvar(const char *name) {
    int i;
    OK(MPI_T_cvar_get_index(name, &i));
    return i;
}

static unsigned long long cvar_ull(const char *name) {
    MPI_T_cvar_handle h;
    int count;
    OK(MPI_T_cvar_handle_alloc(cvar(name), NULL, &h, &count));
    CHECK(count == 1, "%s: count %d", name, count);
    unsigned long long v = 0;
    OK(MPI_T_cvar_read(h, &v));
    OK(MPI_T_cvar_handle_free(&h));
    CHECK(h == MPI_T_CVAR_HANDLE_NULL, "handle not nulled");
    return v;
}

static void cvar_str(const char *name, char *out, int n) {
    MPI_T_cvar_handle h;
    int count;
    OK(MPI_T_cvar_handle_alloc(cvar(name), NULL, &h, &count));
    CHECK(count > 0 && count <= n, "%s: count %d", name, count);
    OK(MPI_T_cvar_read(h, out));
    CHECK((int)strlen(out) + 1 == count, "%s: read %zu chars, count %d", name, strlen(out), count);
    OK(MPI_T_cvar_handle_free(&h));
}

/* Every control variable's info is complete and consistent. */
static void check_cvars(void) {
    int n;
    OK(MPI_T_cvar_get_num(&n));
    CHECK(n >= 10, "%d cvars", n);
    for (int i = 0; i < n; i++) {
        char name[128], desc[1024];
        int nl = sizeof name, dl = sizeof desc, verb, bind, scope;
        MPI_Datatype dt;
        MPI_T_enum en;
        OK(MPI_T_cvar_get_info(i, name, &nl, &verb, &dt, &en, desc, &dl, &bind, &scope));
        CHECK(nl == (int)strlen(name) + 1 && nl > 1, "cvar %d name_len %d", i, nl);
        CHECK(dl == (int)strlen(desc) + 1 && dl > 10, "cvar %d desc_len %d", i, dl);
        CHECK(bind == MPI_T_BIND_NO_OBJECT, "cvar %s bind %d", name, bind);
        CHECK(scope == MPI_T_SCOPE_CONSTANT, "cvar %s scope %d", name, scope);
        CHECK(verb >= MPI_T_VERBOSITY_USER_BASIC && verb <= MPI_T_VERBOSITY_MPIDEV_ALL, "verbosity %d", verb);
        CHECK(dt == MPI_INT || dt == MPI_UNSIGNED_LONG_LONG || dt == MPI_CHAR, "cvar %s datatype", name);
        int j;
        OK(MPI_T_cvar_get_index(name, &j));
        CHECK(i == j, "cvar %s: index %d, get_index %d", name, i, j);
        /* Writing is never allowed: these are the job's configuration. */
        MPI_T_cvar_handle h;
        int count;
        OK(MPI_T_cvar_handle_alloc(i, NULL, &h, &count));
        char buf[1024] = {0};
        RC(MPI_T_cvar_write(h, buf), MPI_T_ERR_CVAR_SET_NEVER);
        OK(MPI_T_cvar_handle_free(&h));
        RC(MPI_T_cvar_read(h, buf), MPI_T_ERR_INVALID_HANDLE);
    }
    char name[8];
    int nl = 4;
    OK(MPI_T_cvar_get_info(cvar("bcs_leak_check"), name, &nl, NULL, NULL, NULL, NULL, NULL, NULL, NULL));
    CHECK(strcmp(name, "bcs") == 0 && nl == (int)strlen("bcs_leak_check") + 1, "truncated name %s, len %d", name, nl);
    RC(MPI_T_cvar_get_info(n, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL), MPI_T_ERR_INVALID_INDEX);
    RC(MPI_T_cvar_get_info(-1, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL), MPI_T_ERR_INVALID_INDEX);
    int j;
    RC(MPI_T_cvar_get_index("no_such_variable", &j), MPI_T_ERR_INVALID_NAME);
    MPI_T_cvar_handle h;
    int count;
    RC(MPI_T_cvar_handle_alloc(n, NULL, &h, &count), MPI_T_ERR_INVALID_INDEX);
}

/* The leak_check enumeration names its three values. */
static void check_enum(void) {
    MPI_T_enum en;
    MPI_Datatype dt;
    OK(MPI_T_cvar_get_info(cvar("bcs_leak_check"), NULL, NULL, NULL, &dt, &en, NULL, NULL, NULL, NULL));
    CHECK(dt == MPI_INT && en != MPI_T_ENUM_NULL, "leak_check is not an int enumeration");
    int num, nl = 64, value;
    char name[64];
    OK(MPI_T_enum_get_info(en, &num, name, &nl));
    CHECK(num == 3, "%d items", num);
    const char *want[] = {"warn", "error", "off"};
    for (int i = 0; i < 3; i++) {
        nl = 64;
        OK(MPI_T_enum_get_item(en, i, &value, name, &nl));
        CHECK(value == i && strcmp(name, want[i]) == 0, "item %d: %d %s", i, value, name);
    }
    RC(MPI_T_enum_get_item(en, 3, &value, name, &nl), MPI_T_ERR_INVALID_ITEM);
    RC(MPI_T_enum_get_info(MPI_T_ENUM_NULL, &num, name, &nl), MPI_T_ERR_INVALID_HANDLE);
    /* leak_check is "warn" unless the job says otherwise. */
    CHECK(cvar_ull("bcs_leak_check") == 0, "leak_check not warn"); /* an int read into a zeroed 8 bytes */
    /* a string variable has no enumeration */
    OK(MPI_T_cvar_get_info(cvar("bcs_mds"), NULL, NULL, NULL, &dt, &en, NULL, NULL, NULL, NULL));
    CHECK(dt == MPI_CHAR && en == MPI_T_ENUM_NULL, "bcs_mds is not a plain string");
}

static int pvar(const char *name, int cls) {
    int i;
    OK(MPI_T_pvar_get_index(name, cls, &i));
    return i;
}

static unsigned long long pread(MPI_T_pvar_session s, MPI_T_pvar_handle h) {
    unsigned long long v = 0;
    OK(MPI_T_pvar_read(s, h, &v));
    return v;
}

/* Ring traffic: each rank sends k messages of b bytes to its right
 * neighbour and receives as many from its left. */
static void ring(int k, int b) {
    char *buf = calloc(b, 1), *in = calloc(b, 1);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    for (int i = 0; i < k; i++)
        OK(MPI_Sendrecv(buf, b, MPI_BYTE, right, 7, in, b, MPI_BYTE, left, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    free(buf);
    free(in);
}

static void check_pvars(int mds) {
    int n;
    OK(MPI_T_pvar_get_num(&n));
    CHECK(n >= 5, "%d pvars", n);
    for (int i = 0; i < n; i++) {
        char name[128];
        int nl = sizeof name, verb, cls, bind, ro, cont, atomic, j;
        MPI_Datatype dt;
        MPI_T_enum en;
        OK(MPI_T_pvar_get_info(i, name, &nl, &verb, &cls, &dt, &en, NULL, NULL, &bind, &ro, &cont, &atomic));
        CHECK(dt == MPI_UNSIGNED_LONG_LONG && en == MPI_T_ENUM_NULL && bind == MPI_T_BIND_NO_OBJECT, "pvar %s", name);
        OK(MPI_T_pvar_get_index(name, cls, &j));
        CHECK(i == j, "pvar %s: %d vs %d", name, i, j);
    }
    RC(MPI_T_pvar_get_info(n, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
       MPI_T_ERR_INVALID_INDEX);
    int j;
    RC(MPI_T_pvar_get_index("bcs_msgs_sent", MPI_T_PVAR_CLASS_LEVEL, &j), MPI_T_ERR_INVALID_NAME);

    MPI_T_pvar_session s, s2;
    OK(MPI_T_pvar_session_create(&s));
    OK(MPI_T_pvar_session_create(&s2));
    MPI_T_pvar_handle sent, bytes, recvd, inuse, other;
    int count;
    OK(MPI_T_pvar_handle_alloc(s, pvar("bcs_msgs_sent", MPI_T_PVAR_CLASS_COUNTER), NULL, &sent, &count));
    CHECK(count == 1, "count %d", count);
    OK(MPI_T_pvar_handle_alloc(s, pvar("bcs_bytes_sent", MPI_T_PVAR_CLASS_COUNTER), NULL, &bytes, &count));
    OK(MPI_T_pvar_handle_alloc(s, pvar("bcs_msgs_received", MPI_T_PVAR_CLASS_COUNTER), NULL, &recvd, &count));
    OK(MPI_T_pvar_handle_alloc(s, pvar("bcs_requests_in_use", MPI_T_PVAR_CLASS_LEVEL), NULL, &inuse, &count));
    OK(MPI_T_pvar_handle_alloc(s2, pvar("bcs_msgs_sent", MPI_T_PVAR_CLASS_COUNTER), NULL, &other, &count));

    /* Not started: traffic does not count. */
    ring(2, 10);
    CHECK(pread(s, sent) == 0, "stopped counter read %llu", pread(s, sent));
    /* Started (all handles: the continuous level is skipped). */
    OK(MPI_T_pvar_start(s, MPI_T_PVAR_ALL_HANDLES));
    OK(MPI_T_pvar_start(s2, other));
    int real = size > 1 && mds >= 0; /* a singleton's messages do not go through the runtime */
    ring(3, 100);
    unsigned long long want = real ? 3 : 0;
    CHECK(pread(s, sent) == want, "sent %llu, want %llu", pread(s, sent), want);
    CHECK(pread(s, bytes) == want * 100, "bytes %llu, want %llu", pread(s, bytes), want * 100);
    CHECK(pread(s, recvd) == want, "received %llu, want %llu", pread(s, recvd), want);
    CHECK(pread(s2, other) == want, "other session: %llu", pread(s2, other));
    /* Stopped: the value stays. */
    OK(MPI_T_pvar_stop(s, sent));
    ring(4, 8);
    CHECK(pread(s, sent) == want, "stopped: sent %llu, want %llu", pread(s, sent), want);
    CHECK(pread(s, recvd) == (real ? 7 : 0), "running: received %llu", pread(s, recvd));
    /* readreset returns the value and starts again from zero. */
    unsigned long long v = 0;
    OK(MPI_T_pvar_readreset(s, recvd, &v));
    CHECK(v == (real ? 7 : 0), "readreset gave %llu", v);
    CHECK(pread(s, recvd) == 0, "after readreset %llu", pread(s, recvd));
    ring(1, 8);
    CHECK(pread(s, recvd) == (real ? 1 : 0), "after readreset and traffic %llu", pread(s, recvd));
    /* write and reset (the session's handles only). */
    v = 100;
    OK(MPI_T_pvar_write(s, sent, &v));
    CHECK(pread(s, sent) == 100, "written %llu", pread(s, sent));
    OK(MPI_T_pvar_reset(s, MPI_T_PVAR_ALL_HANDLES));
    CHECK(pread(s, sent) == 0 && pread(s, recvd) == 0, "reset");
    CHECK(pread(s2, other) == (real ? 8 : 0), "the other session was touched: %llu", pread(s2, other));
    OK(MPI_T_pvar_stop(s, MPI_T_PVAR_ALL_HANDLES));

    /* The level variable: continuous and read-only. */
    MPI_Request r;
    int x = 0, y;
    if (size > 1) {
        int before = (int)pread(s, inuse);
        OK(MPI_Irecv(&y, 1, MPI_INT, (rank + size - 1) % size, 9, MPI_COMM_WORLD, &r));
        CHECK((int)pread(s, inuse) == before + 1, "in use %llu, before %d", pread(s, inuse), before);
        OK(MPI_Send(&x, 1, MPI_INT, (rank + 1) % size, 9, MPI_COMM_WORLD));
        OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    }
    RC(MPI_T_pvar_start(s, inuse), MPI_T_ERR_PVAR_NO_STARTSTOP);
    RC(MPI_T_pvar_stop(s, inuse), MPI_T_ERR_PVAR_NO_STARTSTOP);
    RC(MPI_T_pvar_write(s, inuse, &v), MPI_T_ERR_PVAR_NO_WRITE);
    RC(MPI_T_pvar_reset(s, inuse), MPI_T_ERR_PVAR_NO_WRITE);
    RC(MPI_T_pvar_readreset(s, inuse, &v), MPI_T_ERR_PVAR_NO_WRITE);

    /* Bad handles and sessions. */
    RC(MPI_T_pvar_read(s, MPI_T_PVAR_ALL_HANDLES, &v), MPI_T_ERR_INVALID_HANDLE);
    RC(MPI_T_pvar_read(s, other, &v), MPI_T_ERR_INVALID_HANDLE); /* another session's */
    RC(MPI_T_pvar_read(MPI_T_PVAR_SESSION_NULL, sent, &v), MPI_T_ERR_INVALID_SESSION);
    RC(MPI_T_pvar_handle_alloc(s, n, NULL, &other, &count), MPI_T_ERR_INVALID_INDEX);
    OK(MPI_T_pvar_handle_free(s, &bytes));
    CHECK(bytes == MPI_T_PVAR_HANDLE_NULL, "handle not nulled");
    MPI_T_pvar_handle stale = sent;
    OK(MPI_T_pvar_session_free(&s));
    CHECK(s == MPI_T_PVAR_SESSION_NULL, "session not nulled");
    RC(MPI_T_pvar_read(s, stale, &v), MPI_T_ERR_INVALID_SESSION);
    OK(MPI_T_pvar_session_free(&s2));

    /* The MMDS counters exist when this rank records the MMDS. */
    int idx;
    int rc = MPI_T_pvar_get_index("bcs_mmds_MPI_Send_count", MPI_T_PVAR_CLASS_COUNTER, &idx);
    if (mds <= 0) {
        CHECK(rc == MPI_T_ERR_INVALID_NAME, "MMDS counter without the MMDS: %d", rc);
        return;
    }
    OK(rc);
    OK(MPI_T_pvar_session_create(&s));
    MPI_T_pvar_handle calls;
    OK(MPI_T_pvar_handle_alloc(s, idx, NULL, &calls, &count));
    OK(MPI_T_pvar_handle_alloc(s, pvar("bcs_mmds_MPI_Send_bytes", MPI_T_PVAR_CLASS_COUNTER), NULL, &bytes, &count));
    OK(MPI_T_pvar_start(s, MPI_T_PVAR_ALL_HANDLES));
    int buf[25] = {0};
    for (int i = 0; i < 3; i++) {
        if (rank % 2 == 0 && rank + 1 < size)
            OK(MPI_Send(buf, 25, MPI_INT, rank + 1, 5, MPI_COMM_WORLD));
        if (rank % 2 == 1)
            OK(MPI_Recv(buf, 25, MPI_INT, rank - 1, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    }
    unsigned long long wc = rank % 2 == 0 && rank + 1 < size ? 3 : 0;
    CHECK(pread(s, calls) == wc, "MMDS MPI_Send count %llu, want %llu", pread(s, calls), wc);
    CHECK(pread(s, bytes) == wc * 100, "MMDS MPI_Send bytes %llu, want %llu", pread(s, bytes), wc * 100);
    OK(MPI_T_pvar_session_free(&s));
}

static void check_categories(void) {
    int n, ncv, npv;
    OK(MPI_T_category_get_num(&n));
    OK(MPI_T_cvar_get_num(&ncv));
    OK(MPI_T_pvar_get_num(&npv));
    CHECK(n == 4, "%d categories", n);
    int sumc = 0, sump = 0, found = 0, sent = pvar("bcs_msgs_sent", MPI_T_PVAR_CLASS_COUNTER);
    for (int i = 0; i < n; i++) {
        char name[64];
        int nl = sizeof name, nc, np, ncat, j;
        OK(MPI_T_category_get_info(i, name, &nl, NULL, NULL, &nc, &np, &ncat));
        CHECK(ncat == 0, "category %s has %d subcategories", name, ncat);
        OK(MPI_T_category_get_index(name, &j));
        CHECK(i == j, "category %s: %d vs %d", name, i, j);
        int idx[1024];
        CHECK(np <= 1024 && nc <= 1024, "too many");
        OK(MPI_T_category_get_pvars(i, np, idx));
        for (int k = 0; k < np; k++) {
            CHECK(idx[k] >= 0 && idx[k] < npv, "pvar index %d", idx[k]);
            found += idx[k] == sent && strcmp(name, "bcs_p2p") == 0;
        }
        OK(MPI_T_category_get_cvars(i, nc, idx));
        for (int k = 0; k < nc; k++)
            CHECK(idx[k] >= 0 && idx[k] < ncv, "cvar index %d", idx[k]);
        OK(MPI_T_category_get_categories(i, 0, idx));
        int ne;
        OK(MPI_T_category_get_num_events(i, &ne));
        CHECK(ne == 0, "%d events", ne);
        sumc += nc;
        sump += np;
    }
    CHECK(sumc == ncv && sump == npv, "categories hold %d cvars of %d, %d pvars of %d", sumc, ncv, sump, npv);
    CHECK(found == 1, "bcs_msgs_sent not in bcs_p2p");
    RC(MPI_T_category_get_info(n, NULL, NULL, NULL, NULL, NULL, NULL, NULL), MPI_T_ERR_INVALID_INDEX);
    int j;
    RC(MPI_T_category_get_index("nope", &j), MPI_T_ERR_INVALID_NAME);
}

static void check_events_and_source(void) {
    int n, idx;
    OK(MPI_T_event_get_num(&n));
    CHECK(n == 0, "%d events", n);
    RC(MPI_T_event_get_info(0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
       MPI_T_ERR_INVALID_INDEX);
    RC(MPI_T_event_get_index("any", &idx), MPI_T_ERR_INVALID_NAME);
    MPI_T_event_registration reg = NULL;
    RC(MPI_T_event_handle_alloc(0, NULL, MPI_INFO_NULL, &reg), MPI_T_ERR_INVALID_INDEX);
    RC(MPI_T_event_handle_free(reg, NULL, NULL), MPI_T_ERR_INVALID_HANDLE);

    OK(MPI_T_source_get_num(&n));
    CHECK(n == 1, "%d sources", n);
    char name[64];
    int nl = sizeof name;
    MPI_T_source_order order;
    MPI_Count tps, max;
    MPI_Info info;
    OK(MPI_T_source_get_info(0, name, &nl, NULL, NULL, &order, &tps, &max, &info));
    CHECK(order == MPI_T_SOURCE_ORDERED && tps == 1000000000 && max > 0, "source %s", name);
    OK(MPI_Info_free(&info));
    MPI_Count t1, t2;
    OK(MPI_T_source_get_timestamp(0, &t1));
    OK(MPI_T_source_get_timestamp(0, &t2));
    CHECK(t2 >= t1 && t1 >= 0, "timestamps %lld %lld", (long long)t1, (long long)t2);
    RC(MPI_T_source_get_timestamp(1, &t1), MPI_T_ERR_INVALID_INDEX);
}

int main(int argc, char **argv) {
    int single = argc > 1 && strcmp(argv[1], "single") == 0;
    int reqmax = argc > 1 ? atoi(argv[1]) : 0;
    const char *mdsmode = argc > 2 ? argv[2] : "none";
    int provided, n0, n1, stamp0, stamp1;

    RC(MPI_T_cvar_get_num(&n0), MPI_T_ERR_NOT_INITIALIZED);
    /* Nested: two inits need two finalizes. */
    OK(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));
    OK(MPI_T_init_thread(MPI_THREAD_FUNNELED, &provided));
    CHECK(provided == MPI_THREAD_FUNNELED, "provided %d", provided);
    OK(MPI_T_finalize());
    OK(MPI_T_cvar_get_num(&n0));
    OK(MPI_T_category_changed(&stamp0));
    /* Before MPI_Init: the configuration the launcher passed. */
    unsigned long long slice = cvar_ull("bcs_timeslice_ns");
    CHECK(single ? slice == 0 : slice >= 50000, "timeslice %llu ns", slice);
    int j;
    RC(MPI_T_cvar_get_index("bcs_requests_max", &j), MPI_T_ERR_INVALID_NAME);

    OK(MPI_Init(&argc, &argv));
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    OK(MPI_T_cvar_get_num(&n1));
    OK(MPI_T_category_changed(&stamp1));
    if (single) {
        CHECK(n1 == n0 && stamp1 == stamp0, "singleton: %d -> %d cvars", n0, n1);
    } else {
        /* The region's geometry is known now: variables were added. */
        CHECK(n1 > n0 && stamp1 > stamp0, "%d -> %d cvars, stamp %d -> %d", n0, n1, stamp0, stamp1);
        unsigned long long rm = cvar_ull("bcs_requests_max");
        CHECK(rm == (unsigned long long)reqmax, "requests_max %llu, want %d", rm, reqmax);
        CHECK(cvar_ull("bcs_ring_slots") >= 8, "ring_slots");
    }
    char mode[256];
    cvar_str("bcs_mds", mode, sizeof mode);
    CHECK(strcmp(mode, single ? "none" : mdsmode) == 0, "mds = %s, want %s", mode, mdsmode);

    check_cvars();
    check_enum();
    check_pvars(single ? -1 : strcmp(mdsmode, "none") != 0);
    check_categories();
    check_events_and_source();
    OK(MPI_Barrier(MPI_COMM_WORLD));
    OK(MPI_Finalize());

    /* The interface outlives MPI: counters keep their values. */
    MPI_T_pvar_session s;
    MPI_T_pvar_handle h;
    int count;
    OK(MPI_T_pvar_session_create(&s));
    OK(MPI_T_pvar_handle_alloc(s, pvar("bcs_requests_in_use", MPI_T_PVAR_CLASS_LEVEL), NULL, &h, &count));
    CHECK(pread(s, h) == 0, "requests in use after MPI_Finalize");
    OK(MPI_T_finalize());
    RC(MPI_T_pvar_get_num(&n0), MPI_T_ERR_NOT_INITIALIZED);
    RC(MPI_T_finalize(), MPI_T_ERR_NOT_INITIALIZED);
    /* Again: handles of the earlier round are gone. */
    OK(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));
    RC(MPI_T_pvar_session_free(&s), MPI_T_ERR_INVALID_SESSION);
    OK(MPI_T_finalize());
    printf("mpit ok %d\n", rank);
    return 0;
}
