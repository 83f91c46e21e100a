/* mprobemt: matched probes (MPI_Mprobe, MPI_Improbe) and matched receives
 * (MPI_Mrecv, MPI_Imrecv) from several threads at once under
 * MPI_THREAD_MULTIPLE. Every rank runs NT sender threads, which send to the
 * right neighbour, and NT receiver threads, which take what the left
 * neighbour sends; the two sets run at the same time.
 *   1. own tags: receiver thread t probes for tag t only (from the left
 *      neighbour or MPI_ANY_SOURCE), and receives with the four pairings
 *      Mprobe+Mrecv, Improbe+Imrecv, Mprobe+Imrecv, Improbe+Mrecv, in turn.
 *      Messages of one sender thread and tag arrive in order, so message i
 *      of thread t must be the i-th that receiver t gets. Sizes: empty,
 *      small, and a large one (LARGE ints, more than a slice moves) every
 *      fourth.
 *   2. claims: every receiver thread probes for MPI_ANY_SOURCE and
 *      MPI_ANY_TAG on a duplicate, so all of them race for the same
 *      messages; each matched message belongs to the thread that probed
 *      it. Every message (tags distinct) must be received exactly once,
 *      with its own contents.
 * Each receive checks the probe's status (source, tag, MPI_Get_count), the
 * receive's status, that the message handle is MPI_MESSAGE_NULL after the
 * receive, and every element. One thread also probes MPI_PROC_NULL
 * (MPI_MESSAGE_NO_PROC). Run: ./mprobemt; it prints "mprobemt ok <rank>". */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef NT
#define NT 4
#endif
#ifndef ITERS
#define ITERS 16
#endif
#ifndef LARGE
#define LARGE (1 << 18) /* ints: 1 MiB */
#endif

static int rank, size, left, right;
static MPI_Comm claims; /* phase 2's communicator */
static int seen[NT * ITERS];
static pthread_mutex_t seen_mu = PTHREAD_MUTEX_INITIALIZER;

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

static int count_of(int t, int i) {
    if (i % 4 == 3)
        return LARGE + t; /* a different length per thread */
    if (i % 4 == 0)
        return 0;
    return 1 + t * 3 + i;
}

static int value(int src, int tag, int i, int k) { return src * 1000003 + tag * 10007 + i * 101 + k; }

static void run(void *(*fn)(void *), int n) {
    pthread_t th[2 * NT];
    for (long t = 0; t < n; t++)
        CHECK(pthread_create(&th[t], NULL, fn, (void *)t) == 0, "pthread_create");
    for (int t = 0; t < n; t++)
        pthread_join(th[t], NULL);
}

/* probe_recv takes one message matching (src, tag) on comm with the pairing
 * mode picks; it returns the received count and fills st with the probe's
 * status (source and tag of the message). */
static int probe_recv(int mode, int src, int tag, MPI_Comm comm, int *buf, int cap, MPI_Status *pst) {
    MPI_Message msg = MPI_MESSAGE_NULL;
    MPI_Status rst;
    int flag = 0, n = -1, m = -1;
    if (mode == 0 || mode == 2) {
        OK(MPI_Mprobe(src, tag, comm, &msg, pst));
    } else {
        while (!flag)
            OK(MPI_Improbe(src, tag, comm, &flag, &msg, pst));
    }
    CHECK(msg != MPI_MESSAGE_NULL && msg != MPI_MESSAGE_NO_PROC, "probe (mode %d) gave no message", mode);
    OK(MPI_Get_count(pst, MPI_INT, &n));
    CHECK(n >= 0 && n <= cap, "probed count %d (capacity %d)", n, cap);
    if (mode == 0 || mode == 3) {
        OK(MPI_Mrecv(buf, n, MPI_INT, &msg, &rst));
    } else {
        MPI_Request req;
        OK(MPI_Imrecv(buf, n, MPI_INT, &msg, &req));
        CHECK(msg == MPI_MESSAGE_NULL, "MPI_Imrecv left the message handle set");
        OK(MPI_Wait(&req, &rst));
    }
    CHECK(msg == MPI_MESSAGE_NULL, "the message handle is not MPI_MESSAGE_NULL after the receive");
    OK(MPI_Get_count(&rst, MPI_INT, &m));
    CHECK(m == n && rst.MPI_SOURCE == pst->MPI_SOURCE && rst.MPI_TAG == pst->MPI_TAG,
          "receive status count %d source %d tag %d, probe said %d, %d, %d", m, rst.MPI_SOURCE, rst.MPI_TAG, n,
          pst->MPI_SOURCE, pst->MPI_TAG);
    return n;
}

/* ---- 1. own tags ---- */

static void *own_send(void *arg) {
    int t = (int)(long)arg;
    int *buf = malloc(sizeof(int) * (LARGE + NT));
    for (int i = 0; i < ITERS; i++) {
        int n = count_of(t, i);
        for (int k = 0; k < n; k++)
            buf[k] = value(rank, t, i, k);
        OK(MPI_Send(buf, n, MPI_INT, right, t, MPI_COMM_WORLD));
    }
    free(buf);
    return NULL;
}

static void *own_recv(void *arg) {
    int t = (int)(long)arg;
    int cap = LARGE + NT;
    int *buf = malloc(sizeof(int) * cap);
    for (int i = 0; i < ITERS; i++) {
        MPI_Status st;
        int src = i % 2 ? MPI_ANY_SOURCE : left;
        int n = probe_recv(i % 4, src, t, MPI_COMM_WORLD, buf, cap, &st);
        CHECK(st.MPI_SOURCE == left && st.MPI_TAG == t, "thread %d message %d: source %d tag %d", t, i,
              st.MPI_SOURCE, st.MPI_TAG);
        CHECK(n == count_of(t, i), "thread %d message %d: count %d, want %d", t, i, n, count_of(t, i));
        for (int k = 0; k < n; k++)
            CHECK(buf[k] == value(left, t, i, k), "thread %d message %d element %d: %d, want %d", t, i, k,
                  buf[k], value(left, t, i, k));
    }
    if (t == 0) { /* MPI_PROC_NULL: no message, MPI_MESSAGE_NO_PROC */
        MPI_Message msg = MPI_MESSAGE_NULL;
        MPI_Status st;
        int flag = 0, n = -1;
        OK(MPI_Improbe(MPI_PROC_NULL, 0, MPI_COMM_WORLD, &flag, &msg, &st));
        CHECK(flag && msg == MPI_MESSAGE_NO_PROC && st.MPI_SOURCE == MPI_PROC_NULL,
              "Improbe(MPI_PROC_NULL): flag %d, source %d", flag, st.MPI_SOURCE);
        OK(MPI_Mrecv(buf, 1, MPI_INT, &msg, &st));
        OK(MPI_Get_count(&st, MPI_INT, &n));
        CHECK(msg == MPI_MESSAGE_NULL && n == 0 && st.MPI_SOURCE == MPI_PROC_NULL && st.MPI_TAG == MPI_ANY_TAG,
              "Mrecv(MPI_MESSAGE_NO_PROC): count %d source %d tag %d", n, st.MPI_SOURCE, st.MPI_TAG);
    }
    free(buf);
    return NULL;
}

static void *own(void *arg) {
    long t = (long)arg;
    return t < NT ? own_send((void *)t) : own_recv((void *)(t - NT));
}

/* ---- 2. claims ---- */

static void *claim_send(void *arg) {
    int t = (int)(long)arg;
    int *buf = malloc(sizeof(int) * (LARGE + NT));
    for (int i = 0; i < ITERS; i++) {
        int tag = t * ITERS + i, n = count_of(t, i);
        for (int k = 0; k < n; k++)
            buf[k] = value(rank, tag, 0, k);
        OK(MPI_Send(buf, n, MPI_INT, right, tag, claims));
    }
    free(buf);
    return NULL;
}

static void *claim_recv(void *arg) {
    int t = (int)(long)arg;
    int cap = LARGE + NT;
    int *buf = malloc(sizeof(int) * cap);
    for (int i = 0; i < ITERS; i++) { /* every thread takes ITERS of the NT*ITERS messages */
        MPI_Status st;
        int n = probe_recv((i + t) % 4, MPI_ANY_SOURCE, MPI_ANY_TAG, claims, buf, cap, &st);
        int tag = st.MPI_TAG;
        CHECK(st.MPI_SOURCE == left && tag >= 0 && tag < NT * ITERS, "thread %d: source %d tag %d", t,
              st.MPI_SOURCE, tag);
        CHECK(n == count_of(tag / ITERS, tag % ITERS), "tag %d: count %d, want %d", tag, n,
              count_of(tag / ITERS, tag % ITERS));
        for (int k = 0; k < n; k++)
            CHECK(buf[k] == value(left, tag, 0, k), "tag %d element %d: %d, want %d", tag, k, buf[k],
                  value(left, tag, 0, k));
        pthread_mutex_lock(&seen_mu);
        seen[tag]++;
        pthread_mutex_unlock(&seen_mu);
    }
    free(buf);
    return NULL;
}

static void *claim(void *arg) {
    long t = (long)arg;
    return t < NT ? claim_send((void *)t) : claim_recv((void *)(t - NT));
}

int main(int argc, char **argv) {
    int provided;
    OK(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided));
    OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    CHECK(provided == MPI_THREAD_MULTIPLE, "provided %d, want MPI_THREAD_MULTIPLE", provided);
    left = (rank + size - 1) % size;
    right = (rank + 1) % size;
    OK(MPI_Comm_dup(MPI_COMM_WORLD, &claims));

    run(own, 2 * NT);
    OK(MPI_Barrier(MPI_COMM_WORLD));
    run(claim, 2 * NT);
    for (int tag = 0; tag < NT * ITERS; tag++)
        CHECK(seen[tag] == 1, "tag %d received %d times", tag, seen[tag]);
    /* nothing left over on either communicator */
    int flag = 1;
    MPI_Message msg;
    OK(MPI_Barrier(MPI_COMM_WORLD));
    OK(MPI_Improbe(MPI_ANY_SOURCE, MPI_ANY_TAG, claims, &flag, &msg, MPI_STATUS_IGNORE));
    CHECK(!flag, "a message left over on the duplicate");
    OK(MPI_Improbe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &msg, MPI_STATUS_IGNORE));
    CHECK(!flag, "a message left over on the world");

    OK(MPI_Comm_free(&claims));
    printf("mprobemt ok %d\n", rank);
    fflush(stdout);
    OK(MPI_Finalize());
    return 0;
}
