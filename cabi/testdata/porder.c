/* Persistent collectives match in the order of their initialization calls,
 * not of their starts (MPI 4.0 section 6.13). Every rank initializes, in one
 * order, a broadcast from rank 0, a broadcast from the last rank, an
 * allreduce with MPI_SUM and an allreduce with a user operation (which the
 * runtime runs in two steps), on MPI_COMM_WORLD and on a split of it;
 * even ranks start them in that order, odd ranks in the reverse order
 * (one MPI_Startall, or one MPI_Start each), with a blocking and a
 * non-blocking collective of the communicator between the starts, over
 * several rounds; every result is checked.
 *
 * With the argument "mismatch", rank 0 initializes a broadcast where the
 * others initialize an allreduce: the runtime reports the mismatch, naming
 * both calls, and the job fails. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 8
#define ROUNDS 6

static int errs;

static void check(const char *what, int round, int i, long got, long want) {
    if (got != want) {
        if (errs < 10)
            fprintf(stderr, "%s round %d [%d]: got %ld, want %ld\n", what, round, i, got, want);
        errs++;
    }
}

static void maxabs(void *in, void *inout, int *len, MPI_Datatype *dt) {
    long *a = in, *b = inout;
    (void)dt;
    for (int i = 0; i < *len; i++) {
        long x = a[i] < 0 ? -a[i] : a[i], y = b[i] < 0 ? -b[i] : b[i];
        b[i] = x > y ? x : y;
    }
}

static void rounds(MPI_Comm comm, MPI_Op user, int useAll) {
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    long b0[N], b1[N], sin[N], sout[N], uin[N], uout[N], extra[N];
    MPI_Request r[4];
    MPI_Bcast_init(b0, N, MPI_LONG, 0, comm, MPI_INFO_NULL, &r[0]);
    MPI_Bcast_init(b1, N, MPI_LONG, size - 1, comm, MPI_INFO_NULL, &r[1]);
    MPI_Allreduce_init(sin, sout, N, MPI_LONG, MPI_SUM, comm, MPI_INFO_NULL, &r[2]);
    MPI_Allreduce_init(uin, uout, N, MPI_LONG, user, comm, MPI_INFO_NULL, &r[3]);
    for (int round = 0; round < ROUNDS; round++) {
        for (int i = 0; i < N; i++) {
            b0[i] = rank == 0 ? 1000 * round + i : -1;
            b1[i] = rank == size - 1 ? 2000 * round - i : -1;
            sin[i] = rank * 10 + i + round;
            uin[i] = (rank == round % size ? -1 : 1) * (100 + round + i + 5 * (rank == round % size));
            sout[i] = uout[i] = -7;
        }
        /* an ordinary collective, counted apart from the persistent ones */
        for (int i = 0; i < N; i++)
            extra[i] = rank == 0 ? round * 3 + i : 0;
        MPI_Bcast(extra, N, MPI_LONG, 0, comm);
        for (int i = 0; i < N; i++)
            check("blocking bcast", round, i, extra[i], round * 3 + i);
        MPI_Request nb;
        int sum = rank, total = 0;
        if (rank % 2 == 0) {
            if (useAll) {
                MPI_Startall(4, r);
            } else {
                for (int k = 0; k < 4; k++)
                    MPI_Start(&r[k]);
            }
        } else {
            if (useAll) {
                MPI_Request rev[4] = {r[3], r[2], r[1], r[0]};
                MPI_Startall(4, rev);
            } else {
                for (int k = 3; k >= 0; k--)
                    MPI_Start(&r[k]);
            }
        }
        MPI_Iallreduce(&sum, &total, 1, MPI_INT, MPI_SUM, comm, &nb);
        if (rank % 2 == 0) {
            MPI_Waitall(4, r, MPI_STATUSES_IGNORE);
        } else {
            for (int k = 3; k >= 0; k--)
                MPI_Wait(&r[k], MPI_STATUS_IGNORE);
        }
        MPI_Wait(&nb, MPI_STATUS_IGNORE);
        check("iallreduce", round, 0, total, (long)size * (size - 1) / 2);
        for (int i = 0; i < N; i++) {
            check("bcast root 0", round, i, b0[i], 1000 * round + i);
            check("bcast root last", round, i, b1[i], 2000 * round - i);
            long want = 0, wmax = 105 + round + i; /* round % size's, negated: its absolute value is the largest */
            for (int p = 0; p < size; p++)
                want += p * 10 + i + round;
            if (size == 1) /* one member: its own vector, not folded */
                wmax = -wmax;
            check("allreduce sum", round, i, sout[i], want);
            check("allreduce user", round, i, uout[i], wmax);
        }
    }
    for (int k = 0; k < 4; k++)
        MPI_Request_free(&r[k]);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc > 1 && strcmp(argv[1], "mismatch") == 0) {
        long a[N] = {0}, b[N] = {0};
        MPI_Request r;
        if (rank == 0)
            MPI_Bcast_init(a, N, MPI_LONG, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &r);
        else
            MPI_Allreduce_init(a, b, N, MPI_LONG, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &r);
        MPI_Start(&r);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        printf("not reached %d\n", rank);
        MPI_Finalize();
        return 0;
    }
    MPI_Op user;
    MPI_Op_create(maxabs, 1, &user);
    rounds(MPI_COMM_WORLD, user, 0);
    rounds(MPI_COMM_WORLD, user, 1);
    MPI_Comm half;
    MPI_Comm_split(MPI_COMM_WORLD, rank / 2, -rank, &half);
    rounds(half, user, 1);
    MPI_Comm_free(&half);
    MPI_Op_free(&user);
    if (errs)
        fprintf(stderr, "rank %d: %d errors\n", rank, errs);
    else
        printf("porder ok %d\n", rank);
    MPI_Finalize();
    return errs != 0;
}
