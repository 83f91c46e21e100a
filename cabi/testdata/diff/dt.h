/* dt.h: checks shared by the differential test programs of testdata/diff.
 * A failed check prints what failed and counts; finish() prints
 * "<name> ok <rank>" only when every check on the rank held. */
#include <mpi.h>
#include <stddef.h>
#include <stdint.h>
#include <wchar.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size, errs;

#define CHECK(cond, ...)                                                   \
    do {                                                                   \
        if (!(cond)) {                                                     \
            errs++;                                                        \
            printf("FAIL rank %d line %d: %s: ", rank, __LINE__, #cond);  \
            printf(__VA_ARGS__);                                           \
            printf("\n");                                                  \
            fflush(stdout);                                                \
        }                                                                  \
    } while (0)

#define OK(call)                                                           \
    do {                                                                   \
        int rc_ = (call);                                                  \
        CHECK(rc_ == MPI_SUCCESS, "%s returned %d", #call, rc_);          \
    } while (0)

static inline void start(int *argc, char ***argv) {
    MPI_Init(argc, argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
}

static inline int finish(const char *name) {
    int all = 0;
    MPI_Allreduce(&errs, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (errs == 0)
        printf("%s ok %d\n", name, rank);
    fflush(stdout);
    MPI_Finalize();
    return all ? 1 : 0;
}
