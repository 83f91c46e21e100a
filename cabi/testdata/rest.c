/* rest: the rest of the ABI (abi11): stubs fail with
 * MPI_ERR_UNSUPPORTED_OPERATION under MPI_ERRORS_RETURN, info objects,
 * handle conversion, status accessors, the empty tool interface, user
 * attributes, MPI_ERR_IN_STATUS. Prints "rest ok <rank>". */
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

static void stubs(void) {
    int rc, n;
    rc = MPI_Comm_remote_size(MPI_COMM_WORLD, &n);
    CHECK(rc == MPI_ERR_UNSUPPORTED_OPERATION, "MPI_Comm_remote_size returned %d", rc);
    rc = MPI_Win_fence(0, MPI_WIN_NULL);
    CHECK(rc == MPI_ERR_UNSUPPORTED_OPERATION, "MPI_Win_fence returned %d", rc);
    rc = MPI_Send_c(&n, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
    CHECK(rc == MPI_ERR_UNSUPPORTED_OPERATION, "MPI_Send_c returned %d", rc);
    /* The profiling name fails the same way. */
    rc = PMPI_Graph_neighbors_count(MPI_COMM_WORLD, 0, &n);
    CHECK(rc == MPI_ERR_UNSUPPORTED_OPERATION, "PMPI_Graph_neighbors_count returned %d", rc);
}

static void tools(void) {
    int provided, n;
    OK(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));
    OK(MPI_T_cvar_get_num(&n));
    CHECK(n == 0, "%d cvars", n);
    OK(MPI_T_pvar_get_num(&n));
    CHECK(n == 0, "%d pvars", n);
    int rc = MPI_T_cvar_get_info(0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
    CHECK(rc == MPI_ERR_UNSUPPORTED_OPERATION, "MPI_T_cvar_get_info returned %d", rc);
    OK(MPI_T_finalize());
}

static void infos(void) {
    MPI_Info info, dup;
    char key[MPI_MAX_INFO_KEY], val[MPI_MAX_INFO_VAL];
    int n, flag, len;
    OK(MPI_Info_create(&info));
    OK(MPI_Info_set(info, "alpha", "1"));
    OK(MPI_Info_set(info, "beta", "two"));
    OK(MPI_Info_set(info, "alpha", "one"));
    OK(MPI_Info_get_nkeys(info, &n));
    CHECK(n == 2, "nkeys %d", n);
    OK(MPI_Info_get_nthkey(info, 1, key));
    CHECK(strcmp(key, "beta") == 0, "key 1 = %s", key);
    len = sizeof val;
    OK(MPI_Info_get_string(info, "alpha", &len, val, &flag));
    CHECK(flag && strcmp(val, "one") == 0 && len == 4, "alpha = %s (flag %d, len %d)", val, flag, len);
    len = 2; /* truncated, the full length comes back */
    OK(MPI_Info_get_string(info, "beta", &len, val, &flag));
    CHECK(flag && strcmp(val, "t") == 0 && len == 4, "beta = %s (len %d)", val, len);
    OK(MPI_Info_get_string(info, "gamma", &len, val, &flag));
    CHECK(!flag, "gamma found");
    OK(MPI_Info_dup(info, &dup));
    OK(MPI_Info_delete(info, "alpha"));
    OK(MPI_Info_get_nkeys(info, &n));
    CHECK(n == 1, "nkeys after delete %d", n);
    OK(MPI_Info_get_nkeys(dup, &n));
    CHECK(n == 2, "the duplicate changed: %d keys", n);
    int rc = MPI_Info_delete(info, "alpha");
    CHECK(rc == MPI_ERR_INFO_NOKEY, "deleting a missing key returned %d", rc);
    OK(MPI_Info_free(&dup));
    CHECK(dup == MPI_INFO_NULL, "freed info not MPI_INFO_NULL");
    rc = MPI_Info_get_nkeys(dup, &n);
    CHECK(rc == MPI_ERR_INFO, "MPI_INFO_NULL returned %d", rc);
    MPI_Info stale = info;
    OK(MPI_Info_free(&info));
    rc = MPI_Info_set(stale, "k", "v");
    CHECK(rc == MPI_ERR_INFO, "a freed info returned %d", rc);
    OK(MPI_Info_get_string(MPI_INFO_ENV, "maxprocs", &(int){MPI_MAX_INFO_VAL}, val, &flag));
    CHECK(flag && atoi(val) == size, "MPI_INFO_ENV maxprocs = %s (flag %d)", val, flag);
    rc = MPI_Info_set(MPI_INFO_ENV, "k", "v");
    CHECK(rc == MPI_ERR_INFO, "setting MPI_INFO_ENV returned %d", rc);
    MPI_Comm c;
    OK(MPI_Info_create(&info));
    OK(MPI_Info_set(info, "mpi_assert_no_any_tag", "true"));
    OK(MPI_Comm_dup_with_info(MPI_COMM_WORLD, info, &c));
    OK(MPI_Comm_set_info(c, info));
    OK(MPI_Info_free(&info));
    OK(MPI_Comm_get_info(c, &info));
    OK(MPI_Info_get_nkeys(info, &n));
    OK(MPI_Info_free(&info));
    OK(MPI_Comm_free(&c));
}

static void conversions(void) {
    MPI_Comm c;
    OK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
    int i = MPI_Comm_toint(c);
    CHECK(MPI_Comm_fromint(i) == c, "fromint(toint(c)) != c");
    CHECK(MPI_Comm_toint(MPI_COMM_WORLD) == 0x101, "toint(MPI_COMM_WORLD) = %d", MPI_Comm_toint(MPI_COMM_WORLD));
    CHECK(MPI_Type_fromint(0x209) == MPI_INT, "fromint(0x209) is not MPI_INT");
    OK(MPI_Comm_free(&c));
    MPI_Status st;
    int v;
    OK(MPI_Status_set_source(&st, 7));
    OK(MPI_Status_set_tag(&st, 8));
    OK(MPI_Status_set_error(&st, MPI_ERR_TAG));
    OK(MPI_Status_set_cancelled(&st, 1));
    OK(MPI_Status_get_source(&st, &v));
    CHECK(v == 7 && st.MPI_SOURCE == 7, "source %d", v);
    OK(MPI_Status_get_tag(&st, &v));
    CHECK(v == 8, "tag %d", v);
    OK(MPI_Status_get_error(&st, &v));
    CHECK(v == MPI_ERR_TAG, "error %d", v);
    OK(MPI_Test_cancelled(&st, &v));
    CHECK(v == 1, "cancelled %d", v);
}

int main(int argc, char **argv) {
    OK(MPI_Init(&argc, &argv));
    OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    stubs();
    tools();
    infos();
    conversions();
    OK(MPI_Finalize());
    printf("rest ok %d\n", rank);
    return 0;
}
