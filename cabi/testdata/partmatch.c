/* partmatch: partitioned operations match only each other, the k-th
 * MPI_Psend_init of an envelope with the peer's k-th MPI_Precv_init,
 * whatever order their starts come in, for every start (MPI 5.0 §4.2).
 * Two ranks (rank 0 sends, rank 1 receives); argv[1]: ints per buffer (a
 * multiple of 8; default 16), or "deadlock". Prints "partmatch ok <rank>". */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, n = 16;

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

static void fill(int *b, int base) {
    for (int i = 0; i < n; i++) b[i] = base + i;
}

static void expect(const int *b, int base, const char *what) {
    for (int i = 0; i < n; i++)
        CHECK(b[i] == base + i, "%s[%d] = %d, want %d", what, i, b[i], base + i);
}

static int class_of(int rc) {
    int c;
    MPI_Error_class(rc, &c);
    return c;
}

/* A plain send posted before a partitioned one with the same envelope is
 * not taken by the Precv_init. */
static void plain_before(MPI_Comm comm) {
    int *plain = calloc(n, sizeof(int)), *part = calloc(n, sizeof(int));
    MPI_Request r, pr;
    if (rank == 0) {
        fill(plain, 100);
        fill(part, 200);
        OK(MPI_Isend(plain, n, MPI_INT, 1, 5, comm, &pr));
        OK(MPI_Psend_init(part, 4, n / 4, MPI_INT, 1, 5, comm, MPI_INFO_NULL, &r));
        OK(MPI_Start(&r));
        OK(MPI_Pready_range(0, 3, r));
        OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
        OK(MPI_Wait(&pr, MPI_STATUS_IGNORE));
    } else {
        MPI_Status st;
        int got;
        memset(part, 0, n * sizeof(int));
        OK(MPI_Precv_init(part, 1, n, MPI_INT, 0, 5, comm, MPI_INFO_NULL, &r));
        OK(MPI_Start(&r));
        OK(MPI_Wait(&r, &st));
        expect(part, 200, "Precv_init after a plain send");
        OK(MPI_Get_count(&st, MPI_INT, &got));
        CHECK(st.MPI_SOURCE == 0 && st.MPI_TAG == 5 && got == n, "status source %d tag %d count %d", st.MPI_SOURCE, st.MPI_TAG, got);
        OK(MPI_Recv(plain, n, MPI_INT, 0, 5, comm, MPI_STATUS_IGNORE));
        expect(plain, 100, "plain Recv after the Precv_init");
    }
    OK(MPI_Request_free(&r));
    free(plain);
    free(part);
}

/* A plain receive posted before a partitioned message arrives does not take
 * it, and neither does a wildcard probe: over two starts of one pair. */
static void plain_recv_first(MPI_Comm comm) {
    int *plain = calloc(n, sizeof(int)), *part = calloc(n, sizeof(int));
    MPI_Request r, pr;
    if (rank == 0) {
        OK(MPI_Psend_init(part, 2, n / 2, MPI_INT, 1, 6, comm, MPI_INFO_NULL, &r));
        OK(MPI_Barrier(comm));
        for (int k = 0; k < 2; k++) {
            fill(part, 300 + k);
            fill(plain, 400 + k);
            OK(MPI_Start(&r));
            OK(MPI_Pready_list(2, (int[]){1, 0}, r)); /* the partitioned message goes first */
            OK(MPI_Send(plain, n, MPI_INT, 1, k == 0 ? 6 : 12, comm));
            if (k == 0) OK(MPI_Barrier(comm)); /* the receiver has probed */
            OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
        }
    } else {
        MPI_Status st;
        int flag;
        OK(MPI_Precv_init(part, 4, n / 4, MPI_INT, 0, 6, comm, MPI_INFO_NULL, &r));
        OK(MPI_Irecv(plain, n, MPI_INT, 0, 6, comm, &pr));
        OK(MPI_Barrier(comm));
        OK(MPI_Wait(&pr, MPI_STATUS_IGNORE));
        expect(plain, 400, "plain Irecv posted before a partitioned message");
        /* The partitioned message came first and waits for its pair; a
         * wildcard Iprobe does not see it. */
        OK(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &flag, &st));
        CHECK(!flag, "MPI_Iprobe found a message (source %d tag %d)", st.MPI_SOURCE, st.MPI_TAG);
        OK(MPI_Barrier(comm));
        OK(MPI_Start(&r));
        OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
        expect(part, 300, "Precv_init, first start");
        /* Second start: the blocking wildcard probe finds the plain message
         * (tag 12), not the partitioned one posted before it (tag 6). */
        OK(MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &st));
        CHECK(st.MPI_TAG == 12, "MPI_Probe found tag %d, want the plain message's 12", st.MPI_TAG);
        OK(MPI_Recv(plain, n, MPI_INT, 0, 12, comm, MPI_STATUS_IGNORE));
        expect(plain, 401, "plain Recv after the probe");
        OK(MPI_Start(&r));
        OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
        expect(part, 301, "Precv_init, second start");
    }
    OK(MPI_Request_free(&r));
    free(plain);
    free(part);
}

/* Two partitioned pairs of one envelope pair in initialization order, over
 * several starts, whatever order either side starts and readies them in;
 * the two sides partition differently. */
static void init_order(MPI_Comm comm, int rounds) {
    int *a = calloc(n, sizeof(int)), *b = calloc(n, sizeof(int));
    MPI_Request r[2];
    if (rank == 0) {
        OK(MPI_Psend_init(a, 4, n / 4, MPI_INT, 1, 7, comm, MPI_INFO_NULL, &r[0]));
        OK(MPI_Psend_init(b, 8, n / 8, MPI_INT, 1, 7, comm, MPI_INFO_NULL, &r[1]));
        for (int k = 0; k < rounds; k++) {
            fill(a, 1000 * k + 10);
            fill(b, 1000 * k + 500);
            int first = k % 2 == 0; /* even rounds: the second pair first */
            OK(MPI_Start(&r[first]));
            OK(MPI_Pready_range(0, first ? 7 : 3, r[first]));
            OK(MPI_Start(&r[!first]));
            for (int p = first ? 3 : 7; p >= 0; p--) OK(MPI_Pready(p, r[!first]));
            OK(MPI_Waitall(2, r, MPI_STATUSES_IGNORE));
        }
    } else {
        OK(MPI_Precv_init(a, 2, n / 2, MPI_INT, 0, 7, comm, MPI_INFO_NULL, &r[0]));
        OK(MPI_Precv_init(b, 1, n, MPI_INT, 0, 7, comm, MPI_INFO_NULL, &r[1]));
        for (int k = 0; k < rounds; k++) {
            memset(a, 0, n * sizeof(int));
            memset(b, 0, n * sizeof(int));
            int first = k % 3 == 1; /* some rounds: the second pair first */
            OK(MPI_Start(&r[first]));
            OK(MPI_Start(&r[!first]));
            OK(MPI_Wait(&r[1], MPI_STATUS_IGNORE));
            OK(MPI_Wait(&r[0], MPI_STATUS_IGNORE));
            expect(a, 1000 * k + 10, "first Precv_init");
            expect(b, 1000 * k + 500, "second Precv_init");
        }
    }
    OK(MPI_Request_free(&r[0]));
    OK(MPI_Request_free(&r[1]));
    free(a);
    free(b);
}

/* The two buffers must be the same size: a shorter send completes the
 * receive with MPI_ERR_OTHER, a longer one with MPI_ERR_TRUNCATE; a
 * Precv_init with a wildcard is refused. comm returns errors. */
static void sizes(MPI_Comm comm) {
    int *buf = calloc(n, sizeof(int));
    MPI_Request r;
    int rc;
    if (rank == 0) {
        fill(buf, 0);
        OK(MPI_Psend_init(buf, 2, n / 4, MPI_INT, 1, 8, comm, MPI_INFO_NULL, &r)); /* n/2 ints */
        OK(MPI_Start(&r));
        OK(MPI_Pready_range(0, 1, r));
        OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
        OK(MPI_Request_free(&r));
        OK(MPI_Psend_init(buf, 1, n, MPI_INT, 1, 8, comm, MPI_INFO_NULL, &r)); /* n ints */
        OK(MPI_Start(&r));
        OK(MPI_Pready(0, r));
        OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
        OK(MPI_Request_free(&r));
    } else {
        OK(MPI_Precv_init(buf, 1, n, MPI_INT, 0, 8, comm, MPI_INFO_NULL, &r));
        OK(MPI_Start(&r));
        rc = MPI_Wait(&r, MPI_STATUS_IGNORE);
        CHECK(class_of(rc) == MPI_ERR_OTHER, "a shorter partitioned send: Wait returned class %d, want MPI_ERR_OTHER", class_of(rc));
        OK(MPI_Request_free(&r));
        OK(MPI_Precv_init(buf, 2, n / 4, MPI_INT, 0, 8, comm, MPI_INFO_NULL, &r));
        OK(MPI_Start(&r));
        rc = MPI_Wait(&r, MPI_STATUS_IGNORE);
        CHECK(class_of(rc) == MPI_ERR_TRUNCATE, "a longer partitioned send: Wait returned class %d, want MPI_ERR_TRUNCATE", class_of(rc));
        OK(MPI_Request_free(&r));
        rc = MPI_Precv_init(buf, 1, n, MPI_INT, MPI_ANY_SOURCE, 8, comm, MPI_INFO_NULL, &r);
        CHECK(class_of(rc) == MPI_ERR_RANK, "Precv_init with MPI_ANY_SOURCE returned class %d", class_of(rc));
        rc = MPI_Precv_init(buf, 1, n, MPI_INT, 0, MPI_ANY_TAG, comm, MPI_INFO_NULL, &r);
        CHECK(class_of(rc) == MPI_ERR_TAG, "Precv_init with MPI_ANY_TAG returned class %d", class_of(rc));
    }
    free(buf);
}

/* The same rules on a one-process communicator (no runtime). */
static void self(void) {
    int *plain = calloc(n, sizeof(int)), *part = calloc(n, sizeof(int)), *got = calloc(n, sizeof(int));
    MPI_Request s, r, pr;
    fill(plain, 7000);
    fill(part, 8000);
    memset(got, 0, n * sizeof(int));
    OK(MPI_Isend(plain, n, MPI_INT, 0, 1, MPI_COMM_SELF, &pr));
    OK(MPI_Wait(&pr, MPI_STATUS_IGNORE));
    OK(MPI_Psend_init(part, 2, n / 2, MPI_INT, 0, 1, MPI_COMM_SELF, MPI_INFO_NULL, &s));
    OK(MPI_Precv_init(got, 1, n, MPI_INT, 0, 1, MPI_COMM_SELF, MPI_INFO_NULL, &r));
    OK(MPI_Start(&r));
    OK(MPI_Start(&s));
    OK(MPI_Pready_range(0, 1, s));
    OK(MPI_Wait(&s, MPI_STATUS_IGNORE));
    OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    expect(got, 8000, "Precv_init on MPI_COMM_SELF after a plain send");
    OK(MPI_Recv(got, n, MPI_INT, 0, 1, MPI_COMM_SELF, MPI_STATUS_IGNORE));
    expect(got, 7000, "plain Recv on MPI_COMM_SELF");
    /* A plain receive posted first does not take the partitioned message. */
    fill(part, 9000);
    OK(MPI_Irecv(got, n, MPI_INT, 0, 1, MPI_COMM_SELF, &pr));
    OK(MPI_Start(&s));
    OK(MPI_Pready_range(0, 1, s));
    OK(MPI_Wait(&s, MPI_STATUS_IGNORE));
    OK(MPI_Send(plain, n, MPI_INT, 0, 1, MPI_COMM_SELF));
    OK(MPI_Wait(&pr, MPI_STATUS_IGNORE));
    expect(got, 7000, "plain Irecv on MPI_COMM_SELF posted before a partitioned message");
    OK(MPI_Start(&r));
    OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    expect(got, 9000, "Precv_init on MPI_COMM_SELF, second start");
    OK(MPI_Request_free(&s));
    OK(MPI_Request_free(&r));
    free(plain);
    free(part);
    free(got);
}

int main(int argc, char **argv) {
    int size;
    MPI_Comm dup;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(size == 2, "run with 2 ranks, not %d", size);
    if (argc > 1 && strcmp(argv[1], "deadlock") == 0) {
        /* Rank 0 never readies its partition and waits for rank 1, which
         * waits for the partitioned message: the runtime's deadlock
         * detection reports the cycle (the Go test checks its words). */
        int x = 0;
        MPI_Request r;
        if (rank == 0) {
            OK(MPI_Psend_init(&x, 1, 1, MPI_INT, 1, 3, MPI_COMM_WORLD, MPI_INFO_NULL, &r));
            OK(MPI_Start(&r));
            OK(MPI_Recv(&x, 1, MPI_INT, 1, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        } else {
            OK(MPI_Precv_init(&x, 1, 1, MPI_INT, 0, 3, MPI_COMM_WORLD, MPI_INFO_NULL, &r));
            OK(MPI_Start(&r));
            OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
        }
        printf("not reached\n");
        MPI_Finalize();
        return 0;
    }
    if (argc > 1) n = atoi(argv[1]);
    CHECK(n >= 8 && n % 8 == 0, "ints per buffer %d, want a multiple of 8", n);
    plain_before(MPI_COMM_WORLD);
    plain_recv_first(MPI_COMM_WORLD);
    init_order(MPI_COMM_WORLD, 5);
    OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup)); /* a communicator of its own: its own pairs */
    init_order(dup, 3);
    OK(MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN));
    sizes(dup);
    OK(MPI_Comm_free(&dup));
    self();
    printf("partmatch ok %d\n", rank);
    MPI_Finalize();
    return 0;
}
