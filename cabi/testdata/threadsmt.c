/* threadsmt: MPI from several pthreads at once under MPI_THREAD_MULTIPLE.
 * No thread waits for another's turn: every phase starts NT threads that
 * call MPI concurrently, then joins them, and every result is checked.
 *   1. blocked: a thread blocks in MPI_Recv (on the world, from this rank,
 *      and on MPI_COMM_SELF) and in MPI_Probe while another thread of the
 *      same rank sends the message it waits for.
 *   2. ring: each thread exchanges with the left and right neighbours on a
 *      tag of its own (Irecv, Send, Wait), and pairs ping-pong (rank ^ 1)
 *      on a tag of their own; then the same on per-thread duplicates.
 *   3. requests: each thread posts Irecv and Isend to both neighbours and
 *      completes them with MPI_Waitall, MPI_Waitany or MPI_Testall.
 *   4. collectives: each thread runs Allreduce, Bcast, Allgather and
 *      Barrier on its own duplicate of the world.
 *   5. comms: each thread duplicates, splits and frees communicators (of
 *      its own parent), several times.
 *   6. completion by another thread: one thread tests a receive that
 *      another thread's send completes; one waits on a generalized request
 *      another thread completes (MPI_Grequest_complete), with MPI_Wait,
 *      MPI_Waitany and MPI_Waitsome; one waits on a
 *      partitioned send whose partitions other threads mark ready.
 *   7. sessions: threads start sessions at once, without "thread_level"
 *      or asking for MPI_THREAD_SERIALIZED; each says MPI_THREAD_MULTIPLE.
 * MPI_Query_thread and MPI_Is_thread_main are checked in every thread.
 * Run: ./threadsmt; it needs MPI_THREAD_MULTIPLE and prints
 * "provided <level>" (rank 0) and "threadsmt ok <rank>" (every rank). */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NT 4
#define ITERS 20

static int rank, size, left, right;
static MPI_Comm tcomm[NT];

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

static void run(void *(*fn)(void *), int n) {
    pthread_t th[NT + 2];
    for (long t = 0; t < n; t++)
        CHECK(pthread_create(&th[t], NULL, fn, (void *)t) == 0, "pthread_create");
    for (int t = 0; t < n; t++)
        pthread_join(th[t], NULL);
}

static void check_level(void) {
    int provided, main_;
    OK(MPI_Query_thread(&provided));
    CHECK(provided == MPI_THREAD_MULTIPLE, "MPI_Query_thread gave %d", provided);
    OK(MPI_Is_thread_main(&main_));
    CHECK(!main_, "MPI_Is_thread_main is true in a thread that did not call MPI_Init_thread");
}

/* ---- 1. blocked ---- */

static volatile int posted; /* only a hint: the receiver may not have blocked yet */

static void *blocked(void *arg) {
    long t = (long)arg;
    check_level();
    int v = -1, flag;
    MPI_Status st;
    switch (t) {
    case 0: /* receive from itself on the world */
        posted = 1;
        OK(MPI_Recv(&v, 1, MPI_INT, rank, 11, MPI_COMM_WORLD, &st));
        CHECK(v == 1000 + rank && st.MPI_SOURCE == rank && st.MPI_TAG == 11, "v %d source %d tag %d", v,
              st.MPI_SOURCE, st.MPI_TAG);
        break;
    case 1: /* receive on MPI_COMM_SELF */
        OK(MPI_Recv(&v, 1, MPI_INT, 0, 12, MPI_COMM_SELF, &st));
        CHECK(v == 2000 + rank && st.MPI_TAG == 12, "self: v %d tag %d", v, st.MPI_TAG);
        break;
    case 2: /* probe, then receive, a message from the left neighbour */
        OK(MPI_Probe(left, 13, MPI_COMM_WORLD, &st));
        CHECK(st.MPI_SOURCE == left && st.MPI_TAG == 13, "probe source %d tag %d", st.MPI_SOURCE, st.MPI_TAG);
        OK(MPI_Recv(&v, 1, MPI_INT, left, 13, MPI_COMM_WORLD, &st));
        CHECK(v == 3000 + left, "v %d from %d", v, left);
        break;
    case 3: /* the sender of all three */
        while (!posted)
            ;
        OK(MPI_Iprobe(MPI_ANY_SOURCE, 99, MPI_COMM_WORLD, &flag, &st)); /* nothing sent with tag 99 */
        CHECK(!flag, "Iprobe found a message with tag 99");
        v = 1000 + rank;
        OK(MPI_Send(&v, 1, MPI_INT, rank, 11, MPI_COMM_WORLD));
        v = 2000 + rank;
        OK(MPI_Send(&v, 1, MPI_INT, 0, 12, MPI_COMM_SELF));
        v = 3000 + rank;
        OK(MPI_Send(&v, 1, MPI_INT, right, 13, MPI_COMM_WORLD));
        break;
    }
    return NULL;
}

/* ---- 2. ring and ping-pong ---- */

static int use_dup;

static void *ring(void *arg) {
    long t = (long)arg;
    MPI_Comm c = use_dup ? tcomm[t] : MPI_COMM_WORLD;
    int tag = use_dup ? 0 : 100 + (int)t;
    int partner = rank ^ 1;
    for (int i = 0; i < ITERS; i++) {
        int out[8], in[8];
        for (int k = 0; k < 8; k++)
            out[k] = rank * 100000 + (int)t * 1000 + i * 10 + k;
        MPI_Request r;
        MPI_Status st;
        OK(MPI_Irecv(in, 8, MPI_INT, left, tag, c, &r));
        OK(MPI_Send(out, 8, MPI_INT, right, tag, c));
        OK(MPI_Wait(&r, &st));
        for (int k = 0; k < 8; k++)
            CHECK(in[k] == left * 100000 + (int)t * 1000 + i * 10 + k, "ring thread %ld iter %d: in[%d] = %d", t, i,
                  k, in[k]);
        CHECK(st.MPI_SOURCE == left && st.MPI_TAG == tag, "ring status source %d tag %d", st.MPI_SOURCE,
              st.MPI_TAG);
        if (partner < size) { /* ping-pong */
            int v = i;
            if (rank < partner) {
                OK(MPI_Send(&v, 1, MPI_INT, partner, tag + 50, c));
                OK(MPI_Recv(&v, 1, MPI_INT, partner, tag + 50, c, MPI_STATUS_IGNORE));
                CHECK(v == i + 1 + (int)t, "pong %d, want %d", v, i + 1 + (int)t);
            } else {
                OK(MPI_Recv(&v, 1, MPI_INT, partner, tag + 50, c, MPI_STATUS_IGNORE));
                CHECK(v == i, "ping %d, want %d", v, i);
                v = i + 1 + (int)t;
                OK(MPI_Send(&v, 1, MPI_INT, partner, tag + 50, c));
            }
        }
    }
    return NULL;
}

/* ---- 3. requests ---- */

#define BIG 20000 /* ints: far above the inline size */

static void *requests(void *arg) {
    long t = (long)arg;
    int tag = 200 + (int)t;
    int *sl = malloc(BIG * sizeof(int)), *sr = malloc(BIG * sizeof(int));
    int *rl = malloc(BIG * sizeof(int)), *rr = malloc(BIG * sizeof(int));
    for (int i = 0; i < ITERS / 4; i++) {
        for (int k = 0; k < BIG; k++)
            sl[k] = sr[k] = rank * 7 + (int)t * 3 + i + k;
        MPI_Request r[4];
        OK(MPI_Irecv(rl, BIG, MPI_INT, left, tag, MPI_COMM_WORLD, &r[0]));
        OK(MPI_Irecv(rr, BIG, MPI_INT, right, tag + 10, MPI_COMM_WORLD, &r[1]));
        OK(MPI_Isend(sr, BIG, MPI_INT, right, tag, MPI_COMM_WORLD, &r[2]));
        OK(MPI_Isend(sl, BIG, MPI_INT, left, tag + 10, MPI_COMM_WORLD, &r[3]));
        switch ((t + i) % 3) {
        case 0:
            OK(MPI_Waitall(4, r, MPI_STATUSES_IGNORE));
            break;
        case 1:
            for (int n = 0; n < 4; n++) {
                int idx;
                OK(MPI_Waitany(4, r, &idx, MPI_STATUS_IGNORE));
                CHECK(idx >= 0 && idx < 4 && r[idx] == MPI_REQUEST_NULL, "Waitany index %d", idx);
            }
            break;
        default: {
            int flag = 0;
            while (!flag)
                OK(MPI_Testall(4, r, &flag, MPI_STATUSES_IGNORE));
        }
        }
        for (int k = 0; k < BIG; k++) {
            CHECK(rl[k] == left * 7 + (int)t * 3 + i + k, "thread %ld from left: [%d] = %d", t, k, rl[k]);
            CHECK(rr[k] == right * 7 + (int)t * 3 + i + k, "thread %ld from right: [%d] = %d", t, k, rr[k]);
        }
    }
    free(sl), free(sr), free(rl), free(rr);
    return NULL;
}

/* ---- 4. collectives ---- */

static void *colls(void *arg) {
    long t = (long)arg;
    MPI_Comm c = tcomm[t];
    for (int i = 0; i < ITERS / 2; i++) {
        int v = rank + (int)t + i, sum = 0;
        OK(MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, c));
        CHECK(sum == size * (size - 1) / 2 + size * ((int)t + i), "Allreduce %d", sum);
        int b = rank == i % size ? 77 * (int)t + i : -1;
        OK(MPI_Bcast(&b, 1, MPI_INT, i % size, c));
        CHECK(b == 77 * (int)t + i, "Bcast %d", b);
        int *all = malloc(size * sizeof(int));
        OK(MPI_Allgather(&v, 1, MPI_INT, all, 1, MPI_INT, c));
        for (int k = 0; k < size; k++)
            CHECK(all[k] == k + (int)t + i, "Allgather[%d] = %d", k, all[k]);
        free(all);
        OK(MPI_Barrier(c));
    }
    return NULL;
}

/* ---- 5. communicators ---- */

static void *comms(void *arg) {
    long t = (long)arg;
    for (int i = 0; i < 4; i++) {
        MPI_Comm d, s;
        OK(MPI_Comm_dup(tcomm[t], &d));
        OK(MPI_Comm_split(d, rank % 2, -rank, &s));
        int n, r;
        OK(MPI_Comm_size(s, &n));
        OK(MPI_Comm_rank(s, &r));
        CHECK(n == (size + 1 - rank % 2) / 2, "split size %d", n);
        int v = 1, sum = 0;
        OK(MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, s));
        CHECK(sum == n, "Allreduce on the split gave %d, want %d", sum, n);
        OK(MPI_Comm_free(&s));
        OK(MPI_Comm_free(&d));
        CHECK(d == MPI_COMM_NULL && s == MPI_COMM_NULL, "freed handles not nulled");
    }
    return NULL;
}

/* ---- 6. completion by another thread ---- */

static MPI_Request shared_req, greq, greq_copy, preq;
static int wait_form;
static volatile int started;
static int got = -1;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;

static int gq(void *x, MPI_Status *st) {
    (void)x;
    MPI_Status_set_elements(st, MPI_BYTE, 0);
    MPI_Status_set_cancelled(st, 0);
    st->MPI_SOURCE = MPI_UNDEFINED;
    st->MPI_TAG = MPI_UNDEFINED;
    return MPI_SUCCESS;
}
static int gf(void *x) { (void)x; return MPI_SUCCESS; }
static int gc(void *x, int c) { (void)x, (void)c; return MPI_SUCCESS; }

static int pbuf[NT * 16];

static void *other(void *arg) {
    long t = (long)arg;
    int flag = 0;
    switch (t) {
    case 0: /* tests the receive thread 1's send completes */
        while (!flag)
            OK(MPI_Test(&shared_req, &flag, MPI_STATUS_IGNORE));
        CHECK(got == 4000 + rank && shared_req == MPI_REQUEST_NULL, "got %d", got);
        break;
    case 1: {
        int v = 4000 + rank;
        OK(MPI_Send(&v, 1, MPI_INT, rank, 14, MPI_COMM_WORLD));
        /* then completes the generalized request thread 2 waits on */
        while (!started)
            ;
        OK(MPI_Grequest_complete(greq_copy));
        break;
    }
    case 2:
        pthread_mutex_lock(&mu);
        started = 1;
        pthread_mutex_unlock(&mu);
        OK(MPI_Wait(&greq, MPI_STATUS_IGNORE));
        CHECK(greq == MPI_REQUEST_NULL, "generalized request not freed");
        break;
    default: /* threads 3..: wait on the partitioned send; the others mark its partitions */
        OK(MPI_Pready((int)t - 3, preq));
        break;
    }
    return NULL;
}

/* one thread waits on a generalized request with MPI_Waitany or
 * MPI_Waitsome (wait_form 0, 1) while another completes it */
static void *greqpair(void *arg) {
    if ((long)arg == 1) {
        while (!started)
            ;
        OK(MPI_Grequest_complete(greq_copy));
        return NULL;
    }
    pthread_mutex_lock(&mu);
    started = 1;
    pthread_mutex_unlock(&mu);
    int idx = -1, n = -1;
    if (wait_form == 0) {
        OK(MPI_Waitany(1, &greq, &idx, MPI_STATUS_IGNORE));
        CHECK(idx == 0, "Waitany index %d", idx);
    } else {
        OK(MPI_Waitsome(1, &greq, &n, &idx, MPI_STATUSES_IGNORE));
        CHECK(n == 1 && idx == 0, "Waitsome outcount %d index %d", n, idx);
    }
    CHECK(greq == MPI_REQUEST_NULL, "generalized request not freed");
    return NULL;
}

static void *pwaiter(void *arg) {
    (void)arg;
    OK(MPI_Wait(&preq, MPI_STATUS_IGNORE));
    return NULL;
}

/* ---- 7. sessions ---- */

/* Sessions started by several threads at once in a process that provides
 * MPI_THREAD_MULTIPLE are as safe, and say so in their "thread_level":
 * without the key, and asking for less. */
static void *sessions(void *arg) {
    long t = (long)arg;
    MPI_Info info = MPI_INFO_NULL, used;
    MPI_Session s;
    char val[MPI_MAX_INFO_VAL + 1];
    int len = sizeof val - 1, flag = 0;
    if (t % 2) {
        OK(MPI_Info_create(&info));
        OK(MPI_Info_set(info, "thread_level", "MPI_THREAD_SERIALIZED"));
    }
    OK(MPI_Session_init(info, MPI_ERRORS_RETURN, &s));
    if (info != MPI_INFO_NULL)
        OK(MPI_Info_free(&info));
    OK(MPI_Session_get_info(s, &used));
    OK(MPI_Info_get_string(used, "thread_level", &len, val, &flag));
    CHECK(flag && strcmp(val, "MPI_THREAD_MULTIPLE") == 0, "thread %ld: session thread_level %s",
          t, flag ? val : "(none)");
    OK(MPI_Info_free(&used));
    OK(MPI_Session_finalize(&s));
    return NULL;
}

int main(int argc, char **argv) {
    int provided;
    OK(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided));
    OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    if (rank == 0)
        printf("provided %d\n", provided);
    CHECK(provided == MPI_THREAD_MULTIPLE, "provided %d, want MPI_THREAD_MULTIPLE", provided);
    int q, m;
    OK(MPI_Query_thread(&q));
    OK(MPI_Is_thread_main(&m));
    CHECK(q == MPI_THREAD_MULTIPLE && m, "Query_thread %d, Is_thread_main %d in the main thread", q, m);
    left = (rank + size - 1) % size;
    right = (rank + 1) % size;
    for (int t = 0; t < NT; t++)
        OK(MPI_Comm_dup(MPI_COMM_WORLD, &tcomm[t]));

    run(blocked, 4);
    use_dup = 0;
    run(ring, NT);
    use_dup = 1;
    run(ring, NT);
    run(requests, NT);
    run(colls, NT);
    run(comms, NT);

    OK(MPI_Irecv(&got, 1, MPI_INT, rank, 14, MPI_COMM_WORLD, &shared_req));
    OK(MPI_Grequest_start(gq, gf, gc, NULL, &greq));
    greq_copy = greq;
    run(other, 3);
    for (wait_form = 0; wait_form < 2; wait_form++) {
        started = 0;
        OK(MPI_Grequest_start(gq, gf, gc, NULL, &greq));
        greq_copy = greq;
        run(greqpair, 2);
    }
    /* partitioned: a send to the right neighbour of NT partitions, marked
     * ready by NT threads while another waits for it */
    int precv_buf[NT * 16];
    MPI_Request rreq;
    for (int k = 0; k < NT * 16; k++)
        pbuf[k] = rank * 1000 + k;
    OK(MPI_Psend_init(pbuf, NT, 16, MPI_INT, right, 15, MPI_COMM_WORLD, MPI_INFO_NULL, &preq));
    OK(MPI_Precv_init(precv_buf, NT, 16, MPI_INT, left, 15, MPI_COMM_WORLD, MPI_INFO_NULL, &rreq));
    OK(MPI_Start(&rreq));
    OK(MPI_Start(&preq));
    pthread_t w;
    CHECK(pthread_create(&w, NULL, pwaiter, NULL) == 0, "pthread_create");
    pthread_t th[NT];
    for (long t = 0; t < NT; t++)
        CHECK(pthread_create(&th[t], NULL, other, (void *)(t + 3)) == 0, "pthread_create");
    for (int t = 0; t < NT; t++)
        pthread_join(th[t], NULL);
    pthread_join(w, NULL);
    OK(MPI_Wait(&rreq, MPI_STATUS_IGNORE));
    for (int k = 0; k < NT * 16; k++)
        CHECK(precv_buf[k] == left * 1000 + k, "partitioned [%d] = %d", k, precv_buf[k]);
    OK(MPI_Request_free(&preq));
    OK(MPI_Request_free(&rreq));

    run(sessions, NT);

    for (int t = 0; t < NT; t++)
        OK(MPI_Comm_free(&tcomm[t]));
    OK(MPI_Barrier(MPI_COMM_WORLD));
    printf("threadsmt ok %d\n", rank);
    OK(MPI_Finalize());
    return 0;
}
