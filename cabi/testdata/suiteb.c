/* suiteb: corner cases found by running a conformance suite's one-sided,
 * communicator, attribute, info, error-handler and topology tests against
 * bcsmpi, each a regression for a defect fixed then. Every section checks
 * its results and aborts naming the line on a mismatch. Prints
 * "suiteb ok <rank>". argv[1], when given, names the one section to run.
 *
 *   shnull: MPI_Win_shared_query of a member whose segment has size 0
 *           gives size 0 and a NULL base (it used to give an address
 *           inside the neighbouring segment); MPI_PROC_NULL still gives
 *           the lowest rank with memory.
 *   gaccnoop: MPI_Get_accumulate with MPI_NO_OP ignores the origin
 *           arguments: NULL with a nonzero count, and MPI_DATATYPE_NULL
 *           with count 0, both fetch the target (both used to be refused,
 *           MPI_ERR_BUFFER and MPI_ERR_TYPE).
 *   wininfo: MPI_Win_get_info returns the standard's window hints, at
 *           their defaults, then as given at creation and by
 *           MPI_Win_set_info; unknown keys are not returned (it used to
 *           return an empty info).
 *   nullout: a NULL newgroup to MPI_Group_union, _intersection,
 *           _difference, _range_incl, _range_excl and a NULL newcomm to
 *           MPI_Comm_create_group are MPI_ERR_ARG (they used to crash the
 *           rank with a nil dereference). */
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

static void gaccnoop(void)
{
    int *base;
    MPI_Win w;
    MPI_Win_allocate(4 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &w);
    for (int i = 0; i < 4; i++)
        base[i] = 10 * rank + i;
    MPI_Barrier(MPI_COMM_WORLD);
    int t = (rank + 1) % size, got[4] = {-1, -1, -1, -1};
    MPI_Win_lock(MPI_LOCK_SHARED, t, 0, w);
    MPI_Get_accumulate(NULL, 4, MPI_INT, got, 4, MPI_INT, t, 0, 4, MPI_INT, MPI_NO_OP, w);
    MPI_Win_unlock(t, w);
    for (int i = 0; i < 4; i++)
        CHECK(got[i] == 10 * t + i);
    int one = -1;
    MPI_Win_lock_all(0, w);
    MPI_Get_accumulate(NULL, 0, MPI_DATATYPE_NULL, &one, 1, MPI_INT, t, 2, 1, MPI_INT, MPI_NO_OP, w);
    MPI_Win_flush(t, w);
    CHECK(one == 10 * t + 2);
    MPI_Request rq;
    one = -1;
    MPI_Rget_accumulate(NULL, 0, MPI_DATATYPE_NULL, &one, 1, MPI_INT, t, 3, 1, MPI_INT, MPI_NO_OP, w, &rq);
    MPI_Wait(&rq, MPI_STATUS_IGNORE);
    MPI_Win_unlock_all(w);
    CHECK(one == 10 * t + 3);
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = 0; i < 4; i++)
        CHECK(base[i] == 10 * rank + i); /* NO_OP changed nothing */
    MPI_Win_free(&w);
}

static void wantHint(MPI_Win w, const char *key, const char *val)
{
    MPI_Info in;
    char buf[MPI_MAX_INFO_VAL + 1];
    int flag = -1;
    MPI_Win_get_info(w, &in);
    MPI_Info_get(in, key, MPI_MAX_INFO_VAL, buf, &flag);
    MPI_Info_free(&in);
    if (val == NULL) {
        CHECK(flag == 0);
        return;
    }
    if (!flag || strcmp(buf, val) != 0) {
        fprintf(stderr, "suiteb: rank %d: hint %s = %s, want %s\n", rank, key, flag ? buf : "(unset)", val);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

static void setHint(MPI_Win w, const char *key, const char *val)
{
    MPI_Info in;
    MPI_Info_create(&in);
    MPI_Info_set(in, key, val);
    MPI_Win_set_info(w, in);
    MPI_Info_free(&in);
}

static void wininfo(void)
{
    int *base;
    MPI_Win w;
    MPI_Win_allocate(sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &w);
    wantHint(w, "no_locks", "false");
    wantHint(w, "accumulate_ordering", "rar,raw,war,waw");
    wantHint(w, "accumulate_ops", "same_op_no_op");
    wantHint(w, "same_size", "false");
    wantHint(w, "same_disp_unit", "false");
    setHint(w, "accumulate_ordering", "none");
    setHint(w, "suiteb_no_such_key", "1");
    wantHint(w, "accumulate_ordering", "none");
    wantHint(w, "suiteb_no_such_key", NULL);
    setHint(w, "same_size", "true");
    wantHint(w, "same_size", "true");
    wantHint(w, "accumulate_ordering", "none"); /* kept */
    MPI_Win_free(&w);

    MPI_Info in;
    MPI_Info_create(&in);
    MPI_Info_set(in, "no_locks", "true");
    MPI_Info_set(in, "accumulate_ops", "same_op");
    MPI_Win_create(base, 0, 1, in, MPI_COMM_WORLD, &w);
    wantHint(w, "no_locks", "true");
    wantHint(w, "accumulate_ops", "same_op");
    MPI_Win_free(&w);
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Info_set(in, "alloc_shared_noncontig", "true");
    MPI_Win_allocate_shared(sizeof(int), sizeof(int), in, node, &base, &w);
    MPI_Info_free(&in);
    wantHint(w, "alloc_shared_noncontig", "true");
    wantHint(w, "no_locks", "true");
    MPI_Win_free(&w);
    MPI_Win_allocate_shared(sizeof(int), sizeof(int), MPI_INFO_NULL, node, &base, &w);
    wantHint(w, "alloc_shared_noncontig", "false");
    MPI_Win_free(&w);
    MPI_Comm_free(&node);
}

static void wantArg(int rc, int line)
{
    int cls = -1;
    MPI_Error_class(rc, &cls);
    if (cls != MPI_ERR_ARG) {
        fprintf(stderr, "suiteb: rank %d: line %d: error class %d, want MPI_ERR_ARG\n", rank, line, cls);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

static void nullout(void)
{
    MPI_Group g;
    MPI_Comm c;
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
    MPI_Comm_group(c, &g);
    int range[1][3] = {{0, 0, 1}};
    wantArg(MPI_Group_union(g, g, NULL), __LINE__);
    wantArg(MPI_Group_intersection(g, g, NULL), __LINE__);
    wantArg(MPI_Group_difference(g, g, NULL), __LINE__);
    wantArg(MPI_Group_range_incl(g, 1, range, NULL), __LINE__);
    wantArg(MPI_Group_range_excl(g, 1, range, NULL), __LINE__);
    wantArg(MPI_Comm_create_group(c, g, 7, NULL), __LINE__);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    MPI_Group u;
    MPI_Group_union(g, g, &u); /* still works */
    int n = -1;
    MPI_Group_size(u, &n);
    CHECK(n == size);
    MPI_Group_free(&u);
    MPI_Group_free(&g);
    MPI_Comm_free(&c);
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
    SECTION(gaccnoop);
    SECTION(wininfo);
    SECTION(nullout);
    MPI_Barrier(MPI_COMM_WORLD);
    printf("suiteb ok %d\n", rank);
    MPI_Finalize();
    return 0;
}
