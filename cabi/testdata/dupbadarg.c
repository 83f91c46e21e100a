/* dupbadarg: an argument error in a duplicate on one rank alone must not
 * shift that rank's duplicates against the others' (mpiapi, "Local
 * duplicates"). Under MPI_ERRORS_RETURN, after one duplicate of the world
 * (which brings a grant of local duplicates), rank 1 alone calls
 *   MPI_Comm_dup_with_info with a freed info, MPI_Comm_dup with
 *   newcomm = NULL, MPI_Comm_idup_with_info with a freed info and
 *   MPI_Comm_idup with request = NULL,
 * each of which must fail (MPI_ERR_INFO / MPI_ERR_ARG, newcomm left
 * MPI_COMM_NULL), while the other ranks make the same duplicates
 * successfully. Rank 0 then posts a receive from rank 1 on each duplicate
 * rank 1 does not hold; every rank then makes one more duplicate D and
 * the ranks pass a ring of messages on D and on the world, with contents
 * naming sender and communicator. Were rank 1's duplicates one behind,
 * its D would be rank 0's earlier duplicate: its message would land in the
 * earlier receive (found by the content and by MPI_Test_cancelled). Prints
 * "dupbadarg ok <rank>". Self-checking; any size >= 2. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static int rank, size;

#define CHECK(cond, ...)                                                    \
    do {                                                                    \
        if (!(cond)) {                                                      \
            fprintf(stderr, "dupbadarg rank %d: ", rank);                   \
            fprintf(stderr, __VA_ARGS__);                                   \
            fprintf(stderr, "\n");                                          \
            MPI_Abort(MPI_COMM_WORLD, 1);                                   \
        }                                                                   \
    } while (0)

static int errclass(int rc) {
    int c;
    MPI_Error_class(rc, &c);
    return c;
}

/* ring passes one message to the right on c and checks the one from the
 * left: its contents name the sender and the communicator's number. */
static void ring(MPI_Comm c, int which) {
    int out[2] = {rank, which}, in[2] = {-1, -1};
    MPI_Status st;
    int rc = MPI_Sendrecv(out, 2, MPI_INT, (rank + 1) % size, 7, in, 2, MPI_INT,
                          (rank + size - 1) % size, 7, c, &st);
    CHECK(rc == MPI_SUCCESS, "ring %d: rc %d", which, rc);
    CHECK(in[0] == (rank + size - 1) % size && in[1] == which,
          "ring %d: got {%d,%d}, want {%d,%d}", which, in[0], in[1], (rank + size - 1) % size, which);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

    MPI_Comm first;
    CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &first) == MPI_SUCCESS, "first dup");

    MPI_Info freed;
    MPI_Info_create(&freed);
    MPI_Info_free(&freed);
    MPI_Info_create(&freed); /* rank 1: a handle freed below */
    MPI_Info good;
    MPI_Info_create(&good);
    MPI_Info_set(good, "bcs_hint", "1");
    MPI_Info bad = good;
    if (rank == 1) {
        bad = freed;
        MPI_Info_free(&freed);
    }

    enum { NDUP = 4 };
    MPI_Comm d[NDUP];
    int rc;
    /* 0: Comm_dup_with_info with a freed info on rank 1. */
    d[0] = MPI_COMM_WORLD;
    rc = MPI_Comm_dup_with_info(MPI_COMM_WORLD, bad, &d[0]);
    if (rank == 1) {
        CHECK(rc != MPI_SUCCESS && errclass(rc) == MPI_ERR_INFO, "dup_with_info freed info: rc %d", rc);
        CHECK(d[0] == MPI_COMM_NULL, "dup_with_info failed but newcomm is not MPI_COMM_NULL");
    } else
        CHECK(rc == MPI_SUCCESS, "dup_with_info: rc %d", rc);
    /* 1: Comm_dup with newcomm = NULL on rank 1. */
    d[1] = MPI_COMM_NULL;
    rc = MPI_Comm_dup(MPI_COMM_WORLD, rank == 1 ? NULL : &d[1]);
    if (rank == 1)
        CHECK(rc != MPI_SUCCESS && errclass(rc) == MPI_ERR_ARG, "dup newcomm NULL: rc %d", rc);
    else
        CHECK(rc == MPI_SUCCESS, "dup: rc %d", rc);
    /* 2: Comm_idup_with_info with a freed info on rank 1. */
    MPI_Request r = MPI_REQUEST_NULL;
    d[2] = MPI_COMM_WORLD;
    rc = MPI_Comm_idup_with_info(MPI_COMM_WORLD, bad, &d[2], &r);
    if (rank == 1) {
        CHECK(rc != MPI_SUCCESS && errclass(rc) == MPI_ERR_INFO, "idup_with_info freed info: rc %d", rc);
        CHECK(d[2] == MPI_COMM_NULL && r == MPI_REQUEST_NULL, "idup_with_info failed but wrote a handle");
    } else {
        CHECK(rc == MPI_SUCCESS, "idup_with_info: rc %d", rc);
        CHECK(MPI_Wait(&r, MPI_STATUS_IGNORE) == MPI_SUCCESS, "idup_with_info wait");
    }
    /* 3: Comm_idup with request = NULL on rank 1. */
    r = MPI_REQUEST_NULL;
    d[3] = MPI_COMM_NULL;
    rc = MPI_Comm_idup(MPI_COMM_WORLD, &d[3], rank == 1 ? NULL : &r);
    if (rank == 1)
        CHECK(rc != MPI_SUCCESS && errclass(rc) == MPI_ERR_ARG, "idup request NULL: rc %d", rc);
    else {
        CHECK(rc == MPI_SUCCESS, "idup: rc %d", rc);
        CHECK(MPI_Wait(&r, MPI_STATUS_IGNORE) == MPI_SUCCESS, "idup wait");
    }

    /* Rank 0 listens on the duplicates rank 1 does not hold. */
    int stray[NDUP][2];
    MPI_Request listen[NDUP];
    if (rank == 0)
        for (int i = 0; i < NDUP; i++)
            MPI_Irecv(stray[i], 2, MPI_INT, 1, 7, d[i], &listen[i]);

    MPI_Comm last;
    CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &last) == MPI_SUCCESS, "last dup");
    MPI_Comm_set_errhandler(last, MPI_ERRORS_RETURN);
    ring(last, 2);
    ring(MPI_COMM_WORLD, 1);
    ring(first, 3);

    if (rank == 0)
        for (int i = 0; i < NDUP; i++) {
            int flag = 0;
            MPI_Status st;
            MPI_Test(&listen[i], &flag, &st);
            CHECK(!flag, "a message from rank 1 arrived on duplicate %d rank 1 does not hold: {%d,%d}", i,
                  stray[i][0], stray[i][1]);
            MPI_Cancel(&listen[i]);
            MPI_Wait(&listen[i], &st);
            MPI_Test_cancelled(&st, &flag);
            CHECK(flag, "the receive on duplicate %d was not cancelled", i);
        }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Comm_free(&last);
    MPI_Comm_free(&first);
    MPI_Info_free(&good);
    printf("dupbadarg ok %d\n", rank);
    MPI_Finalize();
    return 0;
}
