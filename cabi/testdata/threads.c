/* threads: MPI from several pthreads taking turns (MPI_THREAD_SERIALIZED
 * use, whatever the level provided; threadsmt.c makes concurrent calls). The main
 * thread and NT workers take turns (a mutex and a turn counter, the same
 * order on every rank), so each turn is made by the same thread on every
 * rank and every call is a matched one. A turn does: a ring Sendrecv on the
 * world with a tag of its own; an Allreduce and a Barrier on the thread's
 * own duplicate of the world; a matched probe of a message to itself; and
 * one step of a three-turn exchange whose requests pass between threads
 * (Irecv from the left neighbour and from itself in one turn, the Isends in
 * the next, Waitall in the third: a request started in one thread is
 * completed in another), with a large message (far above inline sizes)
 * among them. Some turns create and free a communicator. Every result is
 * checked, and so are MPI_Query_thread and MPI_Is_thread_main in every
 * thread. Then 16 threads, one after another, each make one turn and exit.
 * Run: ./threads [serialized|multiple] (the level asked for; default
 * serialized). The program needs MPI_THREAD_SERIALIZED or more; rank 0
 * prints "provided <level>" and "session <level>" (the "thread_level" of a
 * session that asked for MPI_THREAD_MULTIPLE), "env <level>" (MPI_INFO_ENV's
 * "thread_level", "(none)" without one), every rank
 * "threads ok <rank>". */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size, level;

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

enum { NT = 4, ROUNDS = 12, BIG = 1 << 16 };

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int turn;            /* the turn now made; thread turn % (NT+1) makes it */
static MPI_Comm comms[NT + 1]; /* each thread's duplicate of the world */

/* The three-turn exchange: its requests and buffers outlive a turn. */
static MPI_Request xreq[5];
static int xleft, xself, xright_out, xself_out, *xbig_in, *xbig_out, xturn;

static int left(void) { return (rank + size - 1) % size; }
static int right(void) { return (rank + 1) % size; }

static void exchange(int t) {
    int tag = 100 + xturn % 1000, biginit = xturn * 7;
    switch (turn % 3) {
    case 0: /* post the receives */
        xturn = turn;
        tag = 100 + xturn % 1000;
        xleft = xself = -1;
        OK(MPI_Irecv(&xleft, 1, MPI_INT, left(), tag, MPI_COMM_WORLD, &xreq[0]));
        OK(MPI_Irecv(&xself, 1, MPI_INT, rank, tag + 1000, MPI_COMM_WORLD, &xreq[1]));
        OK(MPI_Irecv(xbig_in, BIG, MPI_INT, left(), tag + 2000, MPI_COMM_WORLD, &xreq[2]));
        break;
    case 1: /* another thread sends */
        xright_out = rank * 1000 + xturn;
        xself_out = -rank - xturn;
        for (int i = 0; i < BIG; i++)
            xbig_out[i] = biginit + rank + i;
        OK(MPI_Isend(&xright_out, 1, MPI_INT, right(), tag, MPI_COMM_WORLD, &xreq[3]));
        OK(MPI_Isend(&xself_out, 1, MPI_INT, rank, tag + 1000, MPI_COMM_WORLD, &xreq[4]));
        OK(MPI_Send(xbig_out, BIG, MPI_INT, right(), tag + 2000, MPI_COMM_WORLD));
        break;
    case 2: { /* a third one completes all of them */
        MPI_Status st[5];
        OK(MPI_Waitall(5, xreq, st));
        CHECK(xleft == left() * 1000 + xturn, "thread %d: exchange from the left %d, want %d", t, xleft, left() * 1000 + xturn);
        CHECK(xself == -rank - xturn, "thread %d: exchange with itself %d, want %d", t, xself, -rank - xturn);
        CHECK(st[1].MPI_SOURCE == rank && st[1].MPI_TAG == tag + 1000, "thread %d: self status source %d tag %d", t, st[1].MPI_SOURCE, st[1].MPI_TAG);
        for (int i = 0; i < BIG; i++)
            CHECK(xbig_in[i] == biginit + left() + i, "thread %d: big[%d] = %d, want %d", t, i, xbig_in[i], biginit + left() + i);
        for (int i = 0; i < 5; i++)
            CHECK(xreq[i] == MPI_REQUEST_NULL, "thread %d: request %d not retired", t, i);
        break;
    }
    }
}

/* one turn of thread t (0 is the main thread) in round r. */
static void one_turn(int t, int r) {
    int flag, v;
    OK(MPI_Is_thread_main(&flag));
    CHECK(flag == (t == 0), "thread %d: MPI_Is_thread_main says %d", t, flag);
    OK(MPI_Query_thread(&v));
    CHECK(v == level, "thread %d: MPI_Query_thread %d, MPI_Init_thread provided %d", t, v, level);

    /* Ring on the world, a tag per thread and round. */
    int out = rank * 100000 + t * 1000 + r, in = -1, tag = t * 1000 + r;
    MPI_Status st;
    OK(MPI_Sendrecv(&out, 1, MPI_INT, right(), tag, &in, 1, MPI_INT, left(), tag, MPI_COMM_WORLD, &st));
    CHECK(in == left() * 100000 + t * 1000 + r, "thread %d round %d: ring got %d", t, r, in);
    CHECK(st.MPI_SOURCE == left() && st.MPI_TAG == tag, "thread %d: ring status %d/%d", t, st.MPI_SOURCE, st.MPI_TAG);

    /* Collectives on the thread's own communicator. */
    int mine = (rank + 1) * (t + 1) + r, sum = 0;
    OK(MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, comms[t]));
    CHECK(sum == (t + 1) * size * (size + 1) / 2 + size * r, "thread %d round %d: allreduce %d", t, r, sum);
    OK(MPI_Barrier(comms[t]));

    /* A matched probe of a message to itself. */
    MPI_Request sreq;
    MPI_Message msg;
    int selfout = t * 31 + r, selfin = -1, count;
    OK(MPI_Isend(&selfout, 1, MPI_INT, rank, 77, comms[t], &sreq));
    OK(MPI_Mprobe(rank, 77, comms[t], &msg, &st));
    OK(MPI_Get_count(&st, MPI_INT, &count));
    CHECK(count == 1, "thread %d: mprobe count %d", t, count);
    OK(MPI_Mrecv(&selfin, 1, MPI_INT, &msg, &st));
    OK(MPI_Wait(&sreq, MPI_STATUS_IGNORE));
    CHECK(selfin == selfout, "thread %d: self message %d, want %d", t, selfin, selfout);

    /* Now and then, a communicator made and freed by this thread. */
    if (r % 3 == t % 3) {
        MPI_Comm c;
        OK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
        int b = rank == r % size ? 1000 + turn : -1;
        OK(MPI_Bcast(&b, 1, MPI_INT, r % size, c));
        CHECK(b == 1000 + turn, "thread %d: bcast %d, want %d", t, b, 1000 + turn);
        int crank;
        OK(MPI_Comm_rank(c, &crank));
        CHECK(crank == rank, "thread %d: rank %d in the duplicate", t, crank);
        OK(MPI_Comm_free(&c));
    }
    exchange(t);
}

static void *worker(void *arg) {
    int t = (int)(long)arg;
    for (int r = 0; r < ROUNDS; r++) {
        pthread_mutex_lock(&mu);
        while (turn % (NT + 1) != t)
            pthread_cond_wait(&cv, &mu);
        one_turn(t, r);
        turn++;
        pthread_cond_broadcast(&cv);
        pthread_mutex_unlock(&mu);
    }
    return NULL;
}

/* A thread that makes one turn and exits: threads come and go between
 * calls (each one's first call binds it a runtime thread, its exit lets it
 * go). Started and joined one at a time. */
static void *short_lived(void *arg) {
    int k = (int)(long)arg;
    one_turn(1 + k % NT, ROUNDS + k);
    turn++;
    return NULL;
}

int main(int argc, char **argv) {
    int required = MPI_THREAD_SERIALIZED;
    if (argc > 1 && strcmp(argv[1], "multiple") == 0)
        required = MPI_THREAD_MULTIPLE;
    OK(MPI_Init_thread(&argc, &argv, required, &level));
    OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    CHECK(level >= MPI_THREAD_SERIALIZED && level <= required, "provided %d for required %d", level, required);
    if (rank == 0)
        printf("provided %d\n", level);
    xbig_in = malloc(BIG * sizeof(int));
    xbig_out = malloc(BIG * sizeof(int));
    for (int t = 0; t <= NT; t++)
        OK(MPI_Comm_dup(MPI_COMM_WORLD, &comms[t]));

    pthread_t th[NT + 1];
    for (int t = 1; t <= NT; t++)
        CHECK(pthread_create(&th[t], NULL, worker, (void *)(long)t) == 0, "pthread_create");
    worker(0);
    for (int t = 1; t <= NT; t++)
        pthread_join(th[t], NULL);
    CHECK(turn == ROUNDS * (NT + 1), "turns %d", turn);
    for (int k = 0; k < 16; k++) {
        pthread_t one;
        CHECK(pthread_create(&one, NULL, short_lived, (void *)(long)k) == 0, "pthread_create");
        pthread_join(one, NULL);
    }
    /* Finish an exchange left half done. */
    while (turn % 3 != 0) {
        exchange(0);
        turn++;
    }

    for (int t = 0; t <= NT; t++)
        OK(MPI_Comm_free(&comms[t]));
    free(xbig_in);
    free(xbig_out);
    int flag;
    OK(MPI_Is_thread_main(&flag));
    CHECK(flag, "the main thread: MPI_Is_thread_main says %d", flag);

    /* A session asked for MPI_THREAD_MULTIPLE says what it got. */
    MPI_Info info;
    MPI_Session s;
    char val[MPI_MAX_INFO_VAL + 1];
    OK(MPI_Info_create(&info));
    OK(MPI_Info_set(info, "thread_level", "MPI_THREAD_MULTIPLE"));
    OK(MPI_Session_init(info, MPI_ERRORS_RETURN, &s));
    OK(MPI_Info_free(&info));
    OK(MPI_Session_get_info(s, &info));
    int len = sizeof val - 1;
    OK(MPI_Info_get_string(info, "thread_level", &len, val, &flag));
    CHECK(flag, "no thread_level in the session's info");
    if (rank == 0)
        printf("session %s\n", val);
    len = sizeof val - 1;
    OK(MPI_Info_get_string(MPI_INFO_ENV, "thread_level", &len, val, &flag));
    if (rank == 0)
        printf("env %s\n", flag ? val : "(none)");
    OK(MPI_Info_free(&info));
    OK(MPI_Session_finalize(&s));
    printf("threads ok %d\n", rank);
    fflush(stdout);
    OK(MPI_Finalize());
    return 0;
}
