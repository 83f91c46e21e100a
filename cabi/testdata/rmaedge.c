/* rmaedge: one-sided corner cases, each a regression for a defect found by
 * running a conformance suite against bcsmpi. Every section checks its
 * results and aborts naming the line on a mismatch. Prints
 * "rmaedge ok <rank>". Needs 2 or more ranks.
 *
 *   zero:  operations that move nothing (zero counts; datatypes of no
 *          bytes; zero-size origin against a differently typed target)
 *          succeed under MPI_ERRORS_ARE_FATAL, in every form. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size;

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

static void zero(void) {
    int wbuf[8], obuf[8], rbuf[8];
    MPI_Datatype empty, types[4];
    MPI_Win win;
    MPI_Request req;
    for (int i = 0; i < 8; i++)
        wbuf[i] = 100 + rank, obuf[i] = -1, rbuf[i] = -2;
    OK(MPI_Type_contiguous(0, MPI_INT, &empty));
    OK(MPI_Type_commit(&empty));
    types[0] = empty, types[1] = MPI_INT, types[2] = MPI_DOUBLE, types[3] = MPI_SHORT;
    OK(MPI_Win_create(wbuf, sizeof wbuf, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    OK(MPI_Win_fence(0, win));
    int t = (rank + 1) % size;
    for (int a = 0; a < 4; a++)
        for (int b = 0; b < 4; b++) {
            /* zero counts of any types; count 1 of the empty type against count 0 */
            int oc = a == 0 ? 1 : 0, tc = b == 0 ? 2 : 0;
            OK(MPI_Put(obuf, oc, types[a], t, 0, tc, types[b], win));
            OK(MPI_Get(obuf, oc, types[a], t, 0, tc, types[b], win));
            OK(MPI_Accumulate(obuf, oc, types[a], t, 0, tc, types[b], MPI_SUM, win));
            OK(MPI_Accumulate(NULL, 0, types[a], t, 0, tc, types[b], MPI_PROD, win));
            OK(MPI_Get_accumulate(obuf, oc, types[a], rbuf, 0, types[(a + b) % 4], t, 0, tc, types[b], MPI_SUM, win));
            OK(MPI_Get_accumulate(NULL, 0, types[a], NULL, 0, types[b], t, 0, 0, types[(a + 1) % 4], MPI_MAX, win));
            OK(MPI_Rput(obuf, oc, types[a], t, 0, tc, types[b], win, &req));
            OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
            OK(MPI_Rget(obuf, oc, types[a], t, 0, tc, types[b], win, &req));
            OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
            OK(MPI_Raccumulate(obuf, oc, types[a], t, 0, tc, types[b], MPI_BXOR, win, &req));
            OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
            OK(MPI_Rget_accumulate(obuf, oc, types[a], rbuf, 0, types[b], t, 0, tc, types[b], MPI_MIN, win, &req));
            OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
        }
    OK(MPI_Win_fence(0, win));
    for (int i = 0; i < 8; i++) {
        CHECK(wbuf[i] == 100 + rank, "wbuf[%d] = %d, want %d (nothing written)", i, wbuf[i], 100 + rank);
        CHECK(obuf[i] == -1 && rbuf[i] == -2, "origin/result [%d] = %d/%d changed", i, obuf[i], rbuf[i]);
    }
    OK(MPI_Win_free(&win));
    OK(MPI_Type_free(&empty));
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    zero();
    printf("rmaedge ok %d\n", rank);
    MPI_Finalize();
    return 0;
}
