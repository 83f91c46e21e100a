/* replaywin.c: a recorded or replayed job cannot make a window
 * (replay_test.go). Under MPI_ERRORS_RETURN, MPI_Win_create,
 * MPI_Win_allocate and MPI_Win_create_dynamic each fail with
 * MPI_ERR_UNSUPPORTED_OPERATION and the job goes on; prints
 * "replaywin ok <rank>". With the argument "fatal", MPI_Win_create under
 * MPI_ERRORS_ARE_FATAL ends the job with its message. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

static int rank;

#define REFUSED(call)                                                                     \
    do {                                                                                  \
        int rc_ = (call), cls_ = -1;                                                      \
        MPI_Error_class(rc_, &cls_);                                                      \
        if (cls_ != MPI_ERR_UNSUPPORTED_OPERATION || w != MPI_WIN_NULL) {                 \
            printf("FAIL rank %d: %s returned class %d, want MPI_ERR_UNSUPPORTED_OPERATION\n", rank, #call, cls_); \
            MPI_Abort(MPI_COMM_WORLD, 3);                                                 \
        }                                                                                 \
    } while (0)

int main(int argc, char **argv) {
    int buf[4] = {0}, *mem = NULL;
    MPI_Win w = MPI_WIN_NULL;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (argc > 1 && strcmp(argv[1], "fatal") == 0) {
        MPI_Win_create(buf, sizeof buf, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &w);
        printf("not reached %d\n", rank);
        return 0;
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    REFUSED(MPI_Win_create(buf, sizeof buf, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &w));
    REFUSED(MPI_Win_allocate(sizeof buf, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &w));
    REFUSED(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &w));
    MPI_Barrier(MPI_COMM_WORLD);
    printf("replaywin ok %d\n", rank);
    MPI_Finalize();
    return 0;
}
