/* dupfast: communicator duplicates that the runtime grants and the ranks
 * make without it (mpiapi, "Local duplicates"). argv[1] picks the part:
 *  "cross": 90 communicators made by MPI_Comm_dup and MPI_Comm_idup
 *    (through the runtime and locally), MPI_Comm_split and duplicates of
 *    duplicates, with one message
 *    in flight on each, the world and the parent at once, all with the same
 *    tag, receives posted in the reverse order of the sends: each arrives on
 *    its own communicator only.
 *  "churn": 4001 duplicates of one communicator, made and freed in batches
 *    of 200 and then 2000 at once (the Go test counts the runtime's
 *    collective descriptors from the EMDS).
 *  "wild": rank 0 receives with MPI_ANY_SOURCE on 30 duplicates and prints
 *    the sources in the order they matched (for record and replay; with
 *    DUPFAST_JITTER set the senders wait a random while before each send).
 *  "over": rank 0 fills its live communicators (proto.CommsMax) with
 *    splits after the world's duplicate P holds a grant: the granted local
 *    duplicates of P are made on every rank (never refused, rank 0 then
 *    over the bound by at most the grant), and the next duplicate through
 *    the runtime is refused on every rank alike.
 * Prints "dupfast ok <rank>". Self-checking; any size >= 2. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int rank, size;

#define CHECK(cond, ...)                                                    \
    do {                                                                    \
        if (!(cond)) {                                                      \
            fprintf(stderr, "dupfast rank %d: line %d: ", rank, __LINE__); \
            fprintf(stderr, __VA_ARGS__);                                   \
            fprintf(stderr, "\n");                                          \
            MPI_Abort(MPI_COMM_WORLD, 1);                                   \
        }                                                                   \
    } while (0)
#define OK(call) CHECK((call) == MPI_SUCCESS, "%s failed", #call)

#define NC 90

static void cross(void) {
    MPI_Comm p, c[NC + 2];
    OK(MPI_Comm_dup(MPI_COMM_WORLD, &p));
    for (int i = 0; i < NC; i++) {
        if (i % 7 == 3)
            OK(MPI_Comm_split(p, rank % 2, -rank, &c[i]));
        else if (i % 5 == 4)
            OK(MPI_Comm_dup(c[i - 1], &c[i]));
        else if (i % 11 == 6) { /* two at once: nonblocking duplicates */
            MPI_Request r[2];
            OK(MPI_Comm_idup(p, &c[i], &r[0]));
            OK(MPI_Comm_idup(p, &c[i + 1], &r[1]));
            OK(MPI_Waitall(2, r, MPI_STATUSES_IGNORE));
            int cmp;
            OK(MPI_Comm_compare(c[i], c[i + 1], &cmp));
            CHECK(cmp == MPI_CONGRUENT, "two MPI_Comm_idup of one parent compare %d, want MPI_CONGRUENT", cmp);
            i++;
        }
        else
            OK(MPI_Comm_dup(p, &c[i]));
        if (i % 7 != 3) {
            int r;
            OK(MPI_Comm_compare(c[i], i % 5 == 4 ? c[i - 1] : p, &r));
            CHECK(r == MPI_CONGRUENT, "communicator %d compares %d with its parent, want MPI_CONGRUENT", i, r);
        }
    }
    c[NC] = p;
    c[NC + 1] = MPI_COMM_WORLD;
    int got[NC + 2], sent[NC + 2];
    MPI_Request rq[2 * (NC + 2)];
    for (int i = NC + 1; i >= 0; i--) {
        int me, n;
        OK(MPI_Comm_rank(c[i], &me));
        OK(MPI_Comm_size(c[i], &n));
        got[i] = -1;
        OK(MPI_Irecv(&got[i], 1, MPI_INT, (me + n - 1) % n, 7, c[i], &rq[i]));
    }
    for (int i = 0; i < NC + 2; i++) {
        int me, n;
        OK(MPI_Comm_rank(c[i], &me));
        OK(MPI_Comm_size(c[i], &n));
        sent[i] = 1000 * i + me;
        OK(MPI_Isend(&sent[i], 1, MPI_INT, (me + 1) % n, 7, c[i], &rq[NC + 2 + i]));
    }
    OK(MPI_Waitall(2 * (NC + 2), rq, MPI_STATUSES_IGNORE));
    for (int i = 0; i < NC + 2; i++) {
        int me, n;
        OK(MPI_Comm_rank(c[i], &me));
        OK(MPI_Comm_size(c[i], &n));
        CHECK(got[i] == 1000 * i + (me + n - 1) % n, "communicator %d: received %d, want %d", i, got[i], 1000 * i + (me + n - 1) % n);
    }
    for (int i = 0; i <= NC; i++)
        OK(MPI_Comm_free(&c[i]));
}

static void churn(void) {
    static MPI_Comm c[2000];
    MPI_Comm p;
    OK(MPI_Comm_dup(MPI_COMM_WORLD, &p));
    for (int round = 0; round < 10; round++) {
        for (int i = 0; i < 200; i++)
            OK(MPI_Comm_dup(p, &c[i]));
        for (int i = 0; i < 200; i++)
            OK(MPI_Comm_free(&c[i]));
    }
    for (int i = 0; i < 2000; i++)
        OK(MPI_Comm_dup(p, &c[i]));
    int v = rank, sum = 0;
    OK(MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, c[1999]));
    CHECK(sum == size * (size - 1) / 2, "Allreduce on the last duplicate: %d, want %d", sum, size * (size - 1) / 2);
    for (int i = 0; i < 2000; i++)
        OK(MPI_Comm_free(&c[i]));
    OK(MPI_Comm_free(&p));
}

#define NW 30

static void wild(void) {
    MPI_Comm c[NW];
    for (int i = 0; i < NW; i++)
        OK(MPI_Comm_dup(MPI_COMM_WORLD, &c[i]));
    if (rank == 0) {
        char line[8 * NW * 64] = "";
        for (int i = 0; i < NW; i++) {
            for (int k = 1; k < size; k++) {
                int v;
                MPI_Status st;
                OK(MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, c[i], &st));
                CHECK(v == 100 * i + st.MPI_SOURCE, "communicator %d: received %d from %d, want %d", i, v, st.MPI_SOURCE, 100 * i + st.MPI_SOURCE);
                char s[16];
                snprintf(s, sizeof s, " %d", st.MPI_SOURCE);
                strcat(line, s);
            }
        }
        printf("dupfast sources%s\n", line);
    } else {
        /* The senders wait a random while before each send (DUPFAST_JITTER
         * set), so the order of the matches differs from run to run. */
        unsigned seed = (unsigned)time(NULL) * 31u + (unsigned)rank;
        for (int i = 0; i < NW; i++) {
            if (getenv("DUPFAST_JITTER"))
                usleep(rand_r(&seed) % 1500);
            int v = 100 * i + rank;
            OK(MPI_Send(&v, 1, MPI_INT, 0, i, c[i]));
        }
    }
    for (int i = 0; i < NW; i++)
        OK(MPI_Comm_free(&c[i]));
}

#define LIMIT 4096

static void over(void) {
    static MPI_Comm mine[LIMIT], d[8];
    MPI_Comm p, q;
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    OK(MPI_Comm_dup(MPI_COMM_WORLD, &p)); /* lives: world, p */
    OK(MPI_Comm_dup(p, &q));              /* through the runtime: p gets a grant of 4 */
    /* Rank 0 alone: up to the bound (world, p, q and these). */
    int n = 0;
    for (; n < LIMIT - 3; n++) {
        OK(MPI_Comm_split(MPI_COMM_WORLD, rank == 0 ? 0 : MPI_UNDEFINED, 0, &mine[n]));
        CHECK((mine[n] == MPI_COMM_NULL) == (rank != 0), "split %d", n);
    }
    /* p's grant: made on every rank, rank 0 past the bound. */
    for (int i = 0; i < 4; i++) {
        OK(MPI_Comm_dup(p, &d[i]));
        int v = 1, sum = 0;
        OK(MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, d[i]));
        CHECK(sum == size, "Allreduce on granted duplicate %d: %d, want %d", i, sum, size);
    }
    /* The next one goes through the runtime: refused everywhere. */
    MPI_Comm x = MPI_COMM_WORLD;
    int rc = MPI_Comm_dup(p, &x), cls = -1;
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_OTHER && x == MPI_COMM_NULL, "the duplicate past the bound: rc %d class %d, %s", rc, cls, x == MPI_COMM_NULL ? "MPI_COMM_NULL" : "a communicator");
    for (int i = 0; i < 4; i++)
        OK(MPI_Comm_free(&d[i]));
    for (int i = 0; i < n; i++)
        if (mine[i] != MPI_COMM_NULL)
            OK(MPI_Comm_free(&mine[i]));
    /* Back under the bound: made again. */
    OK(MPI_Comm_dup(p, &x));
    OK(MPI_Comm_free(&x));
    OK(MPI_Comm_free(&q));
    OK(MPI_Comm_free(&p));
}

int main(int argc, char **argv) {
    OK(MPI_Init(&argc, &argv));
    OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    CHECK(argc == 2, "usage: dupfast cross|churn|wild|over");
    if (strcmp(argv[1], "cross") == 0)
        cross();
    else if (strcmp(argv[1], "churn") == 0)
        churn();
    else if (strcmp(argv[1], "wild") == 0)
        wild();
    else if (strcmp(argv[1], "over") == 0)
        over();
    else
        CHECK(0, "unknown part %s", argv[1]);
    OK(MPI_Barrier(MPI_COMM_WORLD));
    printf("dupfast ok %d\n", rank);
    OK(MPI_Finalize());
    return 0;
}
