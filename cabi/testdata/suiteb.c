/* suiteb: corner cases found by running a conformance suite's one-sided,
 * communicator, attribute, info, error-handler and topology tests against
 * bcsmpi, each a regression for a defect fixed then. Every section checks
 * its results and aborts naming the line on a mismatch. Prints
 * "suiteb ok <rank>". argv[1], when given, names the one section to run.
 *
 *   shnull: MPI_Win_shared_query of a member whose segment has size 0
 *           gives size 0 and a NULL base (it used to give an address
 *           inside the neighbouring segment); MPI_PROC_NULL still gives
 *           the lowest rank with memory. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size;

#define CHECK(c)                                                              \
    do {                                                                      \
        if (!(c)) {                                                           \
            fprintf(stderr, "suiteb: rank %d: %s:%d: check failed: %s\n",     \
                    rank, __FILE__, __LINE__, #c);                            \
            MPI_Abort(MPI_COMM_WORLD, 1);                                     \
        }                                                                     \
    } while (0)

static void shnull(void)
{
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    int nr, nn;
    MPI_Comm_rank(node, &nr);
    MPI_Comm_size(node, &nn);
    for (int noncontig = 0; noncontig < 2; noncontig++) {
        MPI_Info info;
        MPI_Info_create(&info);
        MPI_Info_set(info, "alloc_shared_noncontig", noncontig ? "true" : "false");
        /* odd members have no memory; rank 0 of the node has none either
         * when there are 3 or more, so MPI_PROC_NULL names member 2 */
        int has = nr % 2 == 0 && !(nr == 0 && nn > 2);
        MPI_Aint mine = has ? 4 * (MPI_Aint)sizeof(int) : 0;
        int *base;
        MPI_Win w;
        MPI_Win_allocate_shared(mine, sizeof(int), info, node, &base, &w);
        MPI_Info_free(&info);
        if (has)
            for (int i = 0; i < 4; i++)
                base[i] = 100 * nr + i;
        MPI_Win_fence(0, w);
        for (int r = 0; r < nn; r++) {
            MPI_Aint sz = -1;
            int unit = -1, *p = (int *)&sz;
            MPI_Win_shared_query(w, r, &sz, &unit, &p);
            int rhas = r % 2 == 0 && !(r == 0 && nn > 2);
            CHECK(unit == (int)sizeof(int));
            if (!rhas) {
                CHECK(sz == 0);
                CHECK(p == NULL);
                continue;
            }
            CHECK(sz == 4 * (MPI_Aint)sizeof(int));
            CHECK(p != NULL);
            for (int i = 0; i < 4; i++)
                CHECK(p[i] == 100 * r + i);
        }
        MPI_Aint sz = -1;
        int unit = -1, *p = NULL;
        MPI_Win_shared_query(w, MPI_PROC_NULL, &sz, &unit, &p);
        int low = nn > 2 ? 2 : 0;
        CHECK(sz == 4 * (MPI_Aint)sizeof(int));
        CHECK(p != NULL && p[0] == 100 * low);
        MPI_Win_fence(0, w);
        MPI_Win_free(&w);
    }
    MPI_Comm_free(&node);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *only = argc > 1 ? argv[1] : NULL;
#define SECTION(f)                                                            \
    if (!only || strcmp(only, #f) == 0)                                       \
        f();
    SECTION(shnull);
    MPI_Barrier(MPI_COMM_WORLD);
    printf("suiteb ok %d\n", rank);
    MPI_Finalize();
    return 0;
}
