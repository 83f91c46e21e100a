/* nullargs: a NULL output argument is MPI_ERR_ARG through the error
 * handler (MPICH says so too), never a crash, and posts nothing;
 * self-checking on any number of ranks. */
#include "dt.h"

int main(int argc, char **argv) {
    start(&argc, &argv);
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    int x[4] = {0};
    MPI_Status st;
    MPI_Request r;
    MPI_Request nulls[1] = {MPI_REQUEST_NULL};
    MPI_Group wg;
    OK(MPI_Comm_group(MPI_COMM_WORLD, &wg));
    int idx[1], cnt;
    for (int i = 0; i < 23; i++) {
        int rc = MPI_SUCCESS;
        switch (i) {
        case 0: rc = MPI_Isend(x, 1, MPI_INT, rank, 0, MPI_COMM_WORLD, NULL); break;
        case 1: rc = MPI_Irecv(x, 1, MPI_INT, rank, 0, MPI_COMM_WORLD, NULL); break;
        case 2: rc = MPI_Irsend(x, 1, MPI_INT, rank, 0, MPI_COMM_WORLD, NULL); break;
        case 3: rc = MPI_Wait(NULL, &st); break;
        case 4: rc = MPI_Test(NULL, x, &st); break;
        case 5:
            OK(MPI_Irecv(x, 1, MPI_INT, rank, 0, MPI_COMM_WORLD, &r));
            rc = MPI_Test(&r, NULL, &st);
            OK(MPI_Cancel(&r));
            OK(MPI_Wait(&r, &st));
            break;
        case 6: rc = MPI_Comm_dup(MPI_COMM_WORLD, NULL); break;
        case 7: rc = MPI_Comm_split(MPI_COMM_WORLD, 0, 0, NULL); break;
        case 8: rc = MPI_Comm_rank(MPI_COMM_WORLD, NULL); break;
        case 9: rc = MPI_Comm_size(MPI_COMM_WORLD, NULL); break;
        case 10: rc = MPI_Iprobe(0, 0, MPI_COMM_WORLD, NULL, &st); break;
        case 11: rc = MPI_Comm_group(MPI_COMM_WORLD, NULL); break;
        case 12: rc = MPI_Type_size(MPI_INT, NULL); break;
        case 13: rc = MPI_Comm_idup(MPI_COMM_WORLD, NULL, &r); break;
        case 14: rc = MPI_Group_size(MPI_GROUP_EMPTY, NULL); break;
        case 15: rc = MPI_Comm_rank(MPI_COMM_SELF, NULL); break;
        case 16: rc = MPI_Waitany(1, nulls, NULL, &st); break;
        case 17: rc = MPI_Testany(1, nulls, idx, NULL, &st); break;
        case 18: rc = MPI_Testany(1, nulls, NULL, x, &st); break;
        case 19: rc = MPI_Testall(1, nulls, NULL, MPI_STATUSES_IGNORE); break;
        case 20: rc = MPI_Testsome(1, nulls, NULL, idx, MPI_STATUSES_IGNORE); break;
        case 21: rc = MPI_Waitsome(1, nulls, &cnt, NULL, MPI_STATUSES_IGNORE); break;
        case 22: rc = MPI_Comm_create(MPI_COMM_WORLD, wg, NULL); break;
        }
        int cls = -1;
        MPI_Error_class(rc, &cls);
        CHECK(cls == MPI_ERR_ARG, "case %d: class %d", i, cls);
    }
    OK(MPI_Group_free(&wg));
    /* Nothing was posted: no message is waiting. */
    int flag = 1;
    OK(MPI_Barrier(MPI_COMM_WORLD));
    OK(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st));
    CHECK(!flag, "a NULL-request send was posted");
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
    return finish("nullargs");
}
