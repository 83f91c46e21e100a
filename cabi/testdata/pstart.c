/* Persistent collectives of several kinds on one communicator, each rank
 * starting them in an order of its own that changes every round: they match
 * in the order of their initialization calls (MPI 4.0 section 6.13), which
 * is the same on every rank, never in the order of their starts.
 *
 * World: a barrier, a gather to the last rank, an alltoall and a reduction
 * (MPI_MAX to rank 0); a periodic ring (MPI_Cart_create) with a neighbour
 * allgather and a neighbour alltoall. Each rank shuffles the start order
 * with a generator seeded by its rank and the round, starts with one
 * MPI_Startall or one MPI_Start each, and completes with MPI_Waitall, an
 * MPI_Testall loop or MPI_Wait one by one in another shuffled order. Every
 * third round the gather is started twice (its second start after its first
 * completed): even ranks before the others' starts, odd ranks after them,
 * so the k-th start of it on one rank meets the k-th elsewhere.
 * An intercommunicator (even and odd world ranks) runs an allreduce, a
 * broadcast and a barrier, started in opposite orders by its two groups. A
 * duplicate carrying mpi_assert_strict_persistent_collective_ordering =
 * true starts its requests in one order everywhere, as the key promises.
 * Every result is checked.
 *
 * With the argument "root" or "count", the second persistent initialization
 * differs between rank 0 and the others: the job must fail naming both. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 5
#define ROUNDS 9
#define NREQ 6

static int errs;

static void check(const char *what, int round, int i, long got, long want) {
    if (got != want) {
        if (errs < 10)
            fprintf(stderr, "%s round %d [%d]: got %ld, want %ld\n", what, round, i, got, want);
        errs++;
    }
}

/* shuffle puts a permutation of 0..n-1 into p, from seed. */
static void shuffle(int *p, int n, unsigned seed) {
    for (int i = 0; i < n; i++)
        p[i] = i;
    for (int i = n - 1; i > 0; i--) {
        seed = seed * 1103515245u + 12345u;
        int j = (int)((seed >> 16) % (unsigned)(i + 1));
        int t = p[i];
        p[i] = p[j];
        p[j] = t;
    }
}

/* complete finishes the n requests in r: MPI_Waitall, an MPI_Testall loop,
 * or MPI_Wait on each in the order of perm. */
static void complete(int how, MPI_Request *r, int n, const int *perm) {
    switch (how) {
    case 0:
        MPI_Waitall(n, r, MPI_STATUSES_IGNORE);
        break;
    case 1: {
        int flag = 0;
        while (!flag)
            MPI_Testall(n, r, &flag, MPI_STATUSES_IGNORE);
        break;
    }
    default:
        for (int k = 0; k < n; k++)
            MPI_Wait(&r[perm[k]], MPI_STATUS_IGNORE);
    }
}

static long gval(int rank, int round, int start, int i) { return 10000 * start + 100 * rank + 10 * round + i; }

/* checkGather checks, on the gather's root (the last rank), what its
 * start-th start of the round gathered. */
static void checkGather(int rank, int size, int round, int start, const long *rg) {
    if (rank != size - 1)
        return;
    for (int p = 0; p < size; p++)
        for (int i = 0; i < N; i++)
            check(start ? "gather second start" : "gather", round, p * N + i, rg[p * N + i], gval(p, round, start, i));
}

static void world(void) {
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int dims[1] = {size}, periods[1] = {1};
    MPI_Comm ring;
    MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &ring);
    int left, right;
    MPI_Cart_shift(ring, 0, 1, &left, &right);

    long sg[N], *rg = malloc(sizeof(long) * N * size);
    int *sa = malloc(sizeof(int) * size), *ra = malloc(sizeof(int) * size);
    long sr[N], rr[N];
    int sn, rn[2], st[2], rt[2];
    MPI_Request r[NREQ];
    /* the initialization order, the same on every rank */
    MPI_Barrier_init(MPI_COMM_WORLD, MPI_INFO_NULL, &r[0]);
    MPI_Gather_init(sg, N, MPI_LONG, rg, N, MPI_LONG, size - 1, MPI_COMM_WORLD, MPI_INFO_NULL, &r[1]);
    MPI_Alltoall_init(sa, 1, MPI_INT, ra, 1, MPI_INT, MPI_COMM_WORLD, MPI_INFO_NULL, &r[2]);
    MPI_Reduce_init(sr, rr, N, MPI_LONG, MPI_MAX, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &r[3]);
    MPI_Neighbor_allgather_init(&sn, 1, MPI_INT, rn, 1, MPI_INT, ring, MPI_INFO_NULL, &r[4]);
    MPI_Neighbor_alltoall_init(st, 1, MPI_INT, rt, 1, MPI_INT, ring, MPI_INFO_NULL, &r[5]);

    for (int round = 0; round < ROUNDS; round++) {
        int twice = round % 3 == 2;
        for (int i = 0; i < N; i++) {
            sg[i] = gval(rank, round, 0, i);
            sr[i] = rank == (round % size) ? 1000 + round + i : rank - i;
            rr[i] = -1;
        }
        for (int i = 0; i < N * size; i++)
            rg[i] = -1;
        for (int j = 0; j < size; j++) {
            sa[j] = 1000 * rank + 10 * j + round;
            ra[j] = -1;
        }
        sn = 7 * rank + round;
        st[0] = 100 * rank + 2 * round;     /* to the left neighbour */
        st[1] = 100 * rank + 2 * round + 1; /* to the right */
        rn[0] = rn[1] = rt[0] = rt[1] = -1;

        int order[NREQ], wait[NREQ];
        shuffle(order, NREQ, (unsigned)(rank * 7919 + round * 104729 + 1));
        shuffle(wait, NREQ, (unsigned)(rank * 31 + round * 17 + 3));
        if (twice && rank % 2 == 0) { /* the gather's first start, before the others */
            MPI_Start(&r[1]);
            MPI_Wait(&r[1], MPI_STATUS_IGNORE);
            checkGather(rank, size, round, 0, rg);
            for (int i = 0; i < N; i++)
                sg[i] = gval(rank, round, 1, i);
        }
        if ((rank + round) % 2 == 0) {
            MPI_Request s[NREQ];
            for (int k = 0; k < NREQ; k++)
                s[k] = r[order[k]];
            MPI_Startall(NREQ, s); /* copies: r[] still names the requests */
        } else {
            for (int k = 0; k < NREQ; k++)
                MPI_Start(&r[order[k]]);
        }
        if (twice && rank % 2 == 1) { /* the gather's second start, after the others */
            MPI_Wait(&r[1], MPI_STATUS_IGNORE);
            checkGather(rank, size, round, 0, rg);
            for (int i = 0; i < N; i++)
                sg[i] = gval(rank, round, 1, i);
            MPI_Start(&r[1]);
        }
        complete((rank + round) % 3, r, NREQ, wait);

        checkGather(rank, size, round, twice, rg);
        for (int j = 0; j < size; j++)
            check("alltoall", round, j, ra[j], 1000 * j + 10 * rank + round);
        if (rank == 0)
            for (int i = 0; i < N; i++) {
                long want = 1000 + round + i; /* round % size's, the largest */
                check("reduce max", round, i, rr[i], want);
            }
        check("neighbour allgather left", round, 0, rn[0], 7 * left + round);
        check("neighbour allgather right", round, 1, rn[1], 7 * right + round);
        check("neighbour alltoall left", round, 0, rt[0], 100 * left + 2 * round + 1);
        check("neighbour alltoall right", round, 1, rt[1], 100 * right + 2 * round);
    }
    for (int k = 0; k < NREQ; k++)
        MPI_Request_free(&r[k]);
    MPI_Comm_free(&ring);
    free(rg);
    free(sa);
    free(ra);
}

/* inter runs persistent collectives on an intercommunicator between the
 * even and the odd world ranks, its two groups starting them in opposite
 * orders. */
static void inter(void) {
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int color = rank % 2;
    MPI_Comm local, ic;
    MPI_Comm_split(MPI_COMM_WORLD, color, rank, &local);
    MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, 1 - color, 5, &ic);
    int lrank;
    MPI_Comm_rank(local, &lrank);
    int in, sum, b;
    int root = color == 0 ? (lrank == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
    MPI_Request r[3];
    MPI_Allreduce_init(&in, &sum, 1, MPI_INT, MPI_SUM, ic, MPI_INFO_NULL, &r[0]);
    MPI_Bcast_init(&b, 1, MPI_INT, root, ic, MPI_INFO_NULL, &r[1]);
    MPI_Barrier_init(ic, MPI_INFO_NULL, &r[2]);
    for (int round = 0; round < 4; round++) {
        in = rank + round;
        sum = -1;
        b = color == 0 && lrank == 0 ? 500 + round : -1;
        if (color == 0) {
            MPI_Startall(3, r);
        } else {
            for (int k = 2; k >= 0; k--)
                MPI_Start(&r[k]);
        }
        complete(round % 2, r, 3, NULL);
        long want = 0; /* the other group's world ranks, plus round each */
        for (int p = 1 - color; p < size; p += 2)
            want += p + round;
        check("intercomm allreduce", round, 0, sum, want);
        if (color == 1)
            check("intercomm bcast", round, 0, b, 500 + round);
    }
    for (int k = 0; k < 3; k++)
        MPI_Request_free(&r[k]);
    MPI_Comm_free(&ic);
    MPI_Comm_free(&local);
}

/* strict starts persistent collectives in one order on every rank, on a
 * duplicate whose info asserts that they are. */
static void strict(void) {
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "mpi_assert_strict_persistent_collective_ordering", "true");
    MPI_Comm c;
    MPI_Comm_dup_with_info(MPI_COMM_WORLD, info, &c);
    MPI_Info_free(&info);
    int v, s, all;
    MPI_Request r[2];
    MPI_Bcast_init(&v, 1, MPI_INT, size - 1, c, MPI_INFO_NULL, &r[0]);
    MPI_Allreduce_init(&s, &all, 1, MPI_INT, MPI_SUM, c, MPI_INFO_NULL, &r[1]);
    for (int round = 0; round < 3; round++) {
        v = rank == size - 1 ? 40 + round : -1;
        s = rank * round;
        MPI_Startall(2, r);
        MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
        check("strict bcast", round, 0, v, 40 + round);
        check("strict allreduce", round, 0, all, (long)round * size * (size - 1) / 2);
    }
    MPI_Request_free(&r[0]);
    MPI_Request_free(&r[1]);
    MPI_Comm_free(&c);
}

/* mismatch makes the second persistent initialization disagree between
 * rank 0 and the others (what = "root": a broadcast's root; "count": an
 * allreduce's count), after a barrier's that agrees, and starts them in
 * opposite orders: the runtime must report the mismatch naming both calls. */
static void mismatch(const char *what) {
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    long a[4] = {0}, b[4];
    MPI_Request r[2];
    MPI_Barrier_init(MPI_COMM_WORLD, MPI_INFO_NULL, &r[0]);
    if (strcmp(what, "root") == 0)
        MPI_Bcast_init(a, 4, MPI_LONG, rank == 0 ? 0 : 1, MPI_COMM_WORLD, MPI_INFO_NULL, &r[1]);
    else
        MPI_Allreduce_init(a, b, rank == 0 ? 4 : 3, MPI_LONG, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &r[1]);
    if (rank == 0) {
        MPI_Start(&r[1]);
        MPI_Start(&r[0]);
    } else {
        MPI_Startall(2, r);
    }
    MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
    printf("not reached %d\n", rank);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size < 2) {
        fprintf(stderr, "pstart needs at least 2 processes\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (argc > 1) {
        mismatch(argv[1]);
        MPI_Finalize();
        return 0;
    }
    world();
    inter();
    strict();
    if (errs)
        fprintf(stderr, "rank %d: %d errors\n", rank, errs);
    else
        printf("pstart ok %d\n", rank);
    MPI_Finalize();
    return errs != 0;
}
