/* isendrecv_fail: MPI_Isendrecv whose receive is refused after its send
 * was posted (the request table is full: run with BCS_REQUESTS_MAX=16).
 * The send goes on, and its pack buffer (a non-contiguous type) must not
 * be handed to a later packed send while it is in flight: rank 1 receives
 * the first send's data only after rank 0 has packed a second one with
 * other data. Two ranks; prints "isendrecvfail ok <rank>". */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static int rank;

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

enum { N = 4096, SMALL = 64 }; /* N ints: far above inline_max */

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    if (rank == 0) {
        MPI_Datatype col; /* every other int: packed */
        OK(MPI_Type_vector(N, 1, 2, MPI_INT, &col));
        OK(MPI_Type_commit(&col));
        int *a = malloc(2 * N * sizeof(int)), one = 1, k = 0, rc, rin = 0;
        MPI_Request small[SMALL], q = MPI_REQUEST_NULL;
        /* Fill the request table, then give one slot back. */
        for (;;) {
            CHECK(k < SMALL, "the request table held %d sends: run with BCS_REQUESTS_MAX=16", k);
            if (MPI_Isend(&one, 1, MPI_INT, 1, 7, MPI_COMM_WORLD, &small[k]) != MPI_SUCCESS)
                break;
            k++;
        }
        OK(MPI_Wait(&small[--k], MPI_STATUS_IGNORE));
        for (int i = 0; i < 2 * N; i++)
            a[i] = i;
        rc = MPI_Isendrecv(a, 1, col, 1, 1, &rin, 1, MPI_INT, 1, 2, MPI_COMM_WORLD, &q);
        int cls = -1;
        MPI_Error_class(rc, &cls);
        CHECK(cls == MPI_ERR_REQUEST && q == MPI_REQUEST_NULL, "MPI_Isendrecv returned class %d, want MPI_ERR_REQUEST (%d)", cls, MPI_ERR_REQUEST);
        OK(MPI_Waitall(k, small, MPI_STATUSES_IGNORE));
        /* A second packed send with other data, while the first is in flight. */
        for (int i = 0; i < 2 * N; i++)
            a[i] = -i;
        OK(MPI_Isend(a, 1, col, 1, 3, MPI_COMM_WORLD, &q));
        OK(MPI_Send(&k, 1, MPI_INT, 1, 9, MPI_COMM_WORLD));
        OK(MPI_Wait(&q, MPI_STATUS_IGNORE));
        OK(MPI_Type_free(&col));
        free(a);
    } else if (rank == 1) {
        int k, x, *b = malloc(N * sizeof(int));
        OK(MPI_Recv(&k, 1, MPI_INT, 0, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        for (int i = 0; i < k; i++)
            OK(MPI_Recv(&x, 1, MPI_INT, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        OK(MPI_Recv(b, N, MPI_INT, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        for (int i = 0; i < N; i++)
            CHECK(b[i] == 2 * i, "the first send's int %d is %d, want %d (its pack buffer was reused)", i, b[i], 2 * i);
        OK(MPI_Recv(b, N, MPI_INT, 0, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        for (int i = 0; i < N; i++)
            CHECK(b[i] == -2 * i, "the second send's int %d is %d, want %d", i, b[i], -2 * i);
        free(b);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    printf("isendrecvfail ok %d\n", rank);
    MPI_Finalize();
    return 0;
}
