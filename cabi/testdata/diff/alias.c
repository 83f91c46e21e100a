/* alias: a collective given overlapping send and receive buffers without
 * MPI_IN_PLACE is MPI_ERR_BUFFER through the error handler (MPI 5.0; MPICH
 * says "Buffers must not be aliased"), naming the call, on the rank that
 * passed them, and posts nothing (the message, under MPI_ERRORS_ARE_FATAL:
 * argument fatal; on an intercommunicator, through its own handler:
 * argument inter, and its message naming the user's call: inter fatal): blocking, non-blocking, persistent, v, w
 * and neighbourhood forms, on MPI_COMM_WORLD (every rank passes them) and
 * the rooted ones on MPI_COMM_SELF. Zero-size buffers, disjoint blocks of
 * one array and MPI_IN_PLACE are not aliasing. Self-checking on any number
 * of ranks. */
#include "dt.h"

static void expect(int rc, const char *call, int line) {
    int cls = -1, len = 0;
    char msg[MPI_MAX_ERROR_STRING] = "";
    MPI_Error_class(rc, &cls);
    if (rc != MPI_SUCCESS)
        MPI_Error_string(rc, msg, &len);
    CHECK(cls == MPI_ERR_BUFFER, "line %d: %s: class %d (%s)", line, call, cls, msg);
}
#define EXPECT(call, args) expect(call args, #call, __LINE__)

int main(int argc, char **argv) {
    start(&argc, &argv);
    MPI_Comm w = MPI_COMM_WORLD, s = MPI_COMM_SELF;
    if (argc > 1 && strcmp(argv[1], "inter") == 0) { /* on an intercommunicator */
        MPI_Comm local, ic;
        int x[64] = {0};
        MPI_Comm_split(w, rank % 2, rank, &local);
        MPI_Intercomm_create(local, 0, w, rank % 2 ? 0 : 1, 7, &ic);
        MPI_Request q;
        if (argc > 2) { /* fatal: the message names MPI_Ialltoall */
            MPI_Ialltoall(x, 1, MPI_INT, x, 1, MPI_INT, ic, &q);
            printf("not reached %d\n", rank);
        } else { /* the intercommunicator's handler takes it, not the world's */
            MPI_Comm_set_errhandler(ic, MPI_ERRORS_RETURN);
            int cls = -1;
            /* (the non-blocking forms run as the exchange over the union) */
            MPI_Error_class(MPI_Ialltoall(x, 1, MPI_INT, x, 1, MPI_INT, ic, &q), &cls);
            CHECK(cls == MPI_ERR_BUFFER, "intercommunicator MPI_Ialltoall: class %d", cls);
            MPI_Error_class(MPI_Iallgather(x, 1, MPI_INT, x, 1, MPI_INT, ic, &q), &cls);
            CHECK(cls == MPI_ERR_BUFFER, "intercommunicator MPI_Iallgather: class %d", cls);
            MPI_Comm_free(&ic);
        }
        MPI_Comm_free(&local);
        return finish("alias");
    }
    if (argc > 1 && strcmp(argv[1], "fatal") == 0) { /* the message */
        int x[2] = {0};
        MPI_Request q;
        MPI_Iallgather(x, 1, MPI_INT, x, 1, MPI_INT, w, &q);
        printf("not reached %d\n", rank);
        MPI_Finalize();
        return 0;
    }
    OK(MPI_Comm_set_errhandler(w, MPI_ERRORS_RETURN));
    OK(MPI_Comm_set_errhandler(s, MPI_ERRORS_RETURN));
    int n = 4 * size + 8;
    int *b = calloc(n, sizeof(int));
    int *cnt = malloc(size * sizeof(int)), *dsp = malloc(size * sizeof(int));
    MPI_Datatype *ty = malloc(size * sizeof(MPI_Datatype)), vec;
    for (int i = 0; i < size; i++)
        cnt[i] = 1, dsp[i] = i, ty[i] = MPI_INT;
    int wd[64];
    for (int i = 0; i < size && i < 64; i++)
        wd[i] = i * (int)sizeof(int);
    MPI_Request r = MPI_REQUEST_NULL;
    MPI_Info in = MPI_INFO_NULL;

    /* Every rank passes aliased buffers on MPI_COMM_WORLD. */
    EXPECT(MPI_Allreduce, (b, b, 1, MPI_INT, MPI_SUM, w));
    EXPECT(MPI_Iallreduce, (b, b, 1, MPI_INT, MPI_SUM, w, &r));
    EXPECT(MPI_Allreduce_init, (b, b, 1, MPI_INT, MPI_SUM, w, in, &r));
    EXPECT(MPI_Scan, (b, b, 1, MPI_INT, MPI_SUM, w));
    EXPECT(MPI_Iexscan, (b, b, 1, MPI_INT, MPI_SUM, w, &r));
    EXPECT(MPI_Reduce_scatter_block, (b, b, 1, MPI_INT, MPI_SUM, w));
    EXPECT(MPI_Ireduce_scatter, (b, b, cnt, MPI_INT, MPI_SUM, w, &r));
    EXPECT(MPI_Allgather, (b, 1, MPI_INT, b, 1, MPI_INT, w));
    EXPECT(MPI_Allgather, (b + size - 1, 1, MPI_INT, b, 1, MPI_INT, w)); /* partial */
    EXPECT(MPI_Iallgather, (b, 1, MPI_INT, b, 1, MPI_INT, w, &r));
    EXPECT(MPI_Allgather_init, (b, 1, MPI_INT, b, 1, MPI_INT, w, in, &r));
    EXPECT(MPI_Alltoall, (b, 1, MPI_INT, b, 1, MPI_INT, w));
    EXPECT(MPI_Ialltoall, (b, 1, MPI_INT, b, 1, MPI_INT, w, &r));
    EXPECT(MPI_Allgatherv, (b, 1, MPI_INT, b, cnt, dsp, MPI_INT, w));
    EXPECT(MPI_Iallgatherv, (b, 1, MPI_INT, b, cnt, dsp, MPI_INT, w, &r));
    EXPECT(MPI_Alltoallv, (b, cnt, dsp, MPI_INT, b, cnt, dsp, MPI_INT, w));
    EXPECT(MPI_Ialltoallv, (b, cnt, dsp, MPI_INT, b, cnt, dsp, MPI_INT, w, &r));
    EXPECT(MPI_Alltoallv_init, (b, cnt, dsp, MPI_INT, b, cnt, dsp, MPI_INT, w, in, &r));
    if (size <= 64) {
        EXPECT(MPI_Alltoallw, (b, cnt, wd, ty, b, cnt, wd, ty, w));
        EXPECT(MPI_Ialltoallw, (b, cnt, wd, ty, b, cnt, wd, ty, w, &r));
        EXPECT(MPI_Alltoallw_init, (b, cnt, wd, ty, b, cnt, wd, ty, w, in, &r));
    }
    /* A derived type: a vector at b touches b[0] and b[2]; two ints at b+1
     * touch b[1] and b[2]. */
    OK(MPI_Type_vector(2, 1, 2, MPI_INT, &vec));
    OK(MPI_Type_commit(&vec));
    EXPECT(MPI_Allgather, (b, 1, vec, b + 1, 2, MPI_INT, w));
    /* Neighbourhood collectives on a periodic ring. */
    MPI_Comm ring;
    int dims[1] = {size}, per[1] = {1};
    OK(MPI_Cart_create(w, 1, dims, per, 0, &ring));
    OK(MPI_Comm_set_errhandler(ring, MPI_ERRORS_RETURN));
    EXPECT(MPI_Neighbor_allgather, (b, 1, MPI_INT, b, 1, MPI_INT, ring));
    EXPECT(MPI_Ineighbor_alltoall, (b, 1, MPI_INT, b, 1, MPI_INT, ring, &r));
    EXPECT(MPI_Neighbor_alltoallv_init, (b, cnt, dsp, MPI_INT, b, cnt, dsp, MPI_INT, ring, in, &r));

    /* The rooted ones on MPI_COMM_SELF (the root's buffers are aliased). */
    EXPECT(MPI_Reduce, (b, b, 1, MPI_INT, MPI_SUM, 0, s));
    EXPECT(MPI_Ireduce, (b, b, 1, MPI_INT, MPI_SUM, 0, s, &r));
    EXPECT(MPI_Reduce_init, (b, b, 1, MPI_INT, MPI_SUM, 0, s, in, &r));
    EXPECT(MPI_Gather, (b, 1, MPI_INT, b, 1, MPI_INT, 0, s));
    EXPECT(MPI_Igather, (b, 1, MPI_INT, b, 1, MPI_INT, 0, s, &r));
    EXPECT(MPI_Scatter, (b, 1, MPI_INT, b, 1, MPI_INT, 0, s));
    EXPECT(MPI_Gatherv, (b, 1, MPI_INT, b, cnt, dsp, MPI_INT, 0, s));
    EXPECT(MPI_Iscatterv, (b, cnt, dsp, MPI_INT, b, 1, MPI_INT, 0, s, &r));
    EXPECT(MPI_Allreduce, (b, b, 1, MPI_INT, MPI_SUM, s));
    CHECK(r == MPI_REQUEST_NULL, "a failed call made a request");

    /* Not aliasing: zero-size buffers, disjoint blocks of one array, and
     * MPI_IN_PLACE. */
    OK(MPI_Allreduce(b, b, 0, MPI_INT, MPI_SUM, w));
    OK(MPI_Allgather(b, 0, MPI_INT, b, 0, MPI_INT, w));
    for (int i = 0; i < size; i++)
        b[i] = rank * 100 + i, b[size + i] = -1, dsp[i] = i;
    OK(MPI_Alltoallv(b, cnt, dsp, MPI_INT, b + size, cnt, dsp, MPI_INT, w));
    for (int i = 0; i < size; i++)
        CHECK(b[size + i] == i * 100 + rank, "alltoallv of disjoint blocks: b[%d] = %d, want %d", size + i, b[size + i], i * 100 + rank);
    b[0] = rank;
    OK(MPI_Allreduce(MPI_IN_PLACE, b, 1, MPI_INT, MPI_SUM, w));
    CHECK(b[0] == size * (size - 1) / 2, "allreduce in place: %d, want %d", b[0], size * (size - 1) / 2);
    /* Nothing was posted by the failed calls: the collectives above matched
     * (a stray posted one would be a mismatch), and a barrier completes. */
    OK(MPI_Barrier(w));
    OK(MPI_Comm_free(&ring));
    OK(MPI_Type_free(&vec));
    free(b), free(cnt), free(dsp), free(ty);
    return finish("alias");
}
