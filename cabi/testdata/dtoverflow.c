/* dtoverflow: datatype arguments whose sizes, counts or argument lists
 * overflow are refused with an error class under MPI_ERRORS_RETURN, and
 * the job goes on. Each case, were it accepted, goes on to use what it got
 * the way the bug it guards against would (packing past a buffer, reading
 * far past an array), so a regression crashes or fails a check. Prints
 * "dtoverflow ok <rank>" on success. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

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

/* refused checks that rc is an error of class want and that newtype was
 * not made. */
static void refused(int rc, int want, const char *what, int line) {
    int cls = -1;
    if (rc != MPI_SUCCESS)
        MPI_Error_class(rc, &cls);
    CHECK(cls == want, "line %d: %s returned %d (class %d), want class %d", line, what, rc, cls, want);
}

/* 1. Sizes that overflow: contiguous_c(2^61+1) of a 16-byte-extent double
 * was accepted with size 8; packing one item then wrote 2^61 doubles. */
static void sizes(void) {
    MPI_Datatype r, t;
    OK(MPI_Type_create_resized(MPI_DOUBLE, 0, 16, &r));
    int rc = MPI_Type_contiguous_c(((MPI_Count)1 << 61) + 1, r, &t);
    if (rc == MPI_SUCCESS) { /* the bug: use it as a program would */
        double in[4] = {1, 2, 3, 4};
        char out[8];
        MPI_Count pos = 0;
        OK(MPI_Type_commit(&t));
        MPI_Pack_c(in, 1, t, out, sizeof out, &pos, MPI_COMM_WORLD);
    }
    refused(rc, MPI_ERR_COUNT, "MPI_Type_contiguous_c(2^61+1)", __LINE__);

    /* a vector whose displacements overflow */
    rc = MPI_Type_vector_c((MPI_Count)1 << 40, 1, (MPI_Count)1 << 40, MPI_DOUBLE, &t);
    refused(rc, MPI_ERR_ARG, "MPI_Type_vector_c(2^40, 1, 2^40)", __LINE__);
    /* an hvector whose blocks' total size overflows */
    rc = MPI_Type_create_hvector_c((MPI_Count)1 << 40, (MPI_Count)1 << 30, 8, MPI_DOUBLE, &t);
    refused(rc, MPI_ERR_ARG, "MPI_Type_create_hvector_c(2^40, 2^30, 8)", __LINE__);
    /* a resized type whose upper bound overflows */
    rc = MPI_Type_create_resized_c(MPI_DOUBLE, INT64_MAX - 4, 16, &t);
    refused(rc, MPI_ERR_ARG, "MPI_Type_create_resized_c(lb = INT64_MAX-4)", __LINE__);
    /* an hindexed displacement near INT64_MAX */
    MPI_Count bl = 1, disp = INT64_MAX - 2;
    rc = MPI_Type_create_hindexed_c(1, &bl, &disp, MPI_DOUBLE, &t);
    refused(rc, MPI_ERR_ARG, "MPI_Type_create_hindexed_c(displacement INT64_MAX-2)", __LINE__);
    /* a subarray whose array size overflows */
    MPI_Count sz[2] = {(MPI_Count)1 << 40, (MPI_Count)1 << 40}, sub[2] = {1, 1}, st[2] = {0, 0};
    rc = MPI_Type_create_subarray_c(2, sz, sub, st, MPI_ORDER_C, MPI_DOUBLE, &t);
    refused(rc, MPI_ERR_ARG, "MPI_Type_create_subarray_c(2^40 x 2^40)", __LINE__);

    /* a type in bounds (2^40 bytes), moved in counts whose bytes overflow */
    OK(MPI_Type_contiguous_c((MPI_Count)1 << 40, MPI_BYTE, &t));
    OK(MPI_Type_commit(&t));
    char buf[16];
    rc = MPI_Send(buf, (1 << 24) + 1, t, MPI_PROC_NULL, 0, MPI_COMM_WORLD);
    refused(rc, MPI_ERR_COUNT, "MPI_Send((2^24+1) x 2^40 bytes)", __LINE__);
    rc = MPI_Bcast(buf, (1 << 24) + 1, t, 0, MPI_COMM_WORLD);
    refused(rc, MPI_ERR_COUNT, "MPI_Bcast((2^24+1) x 2^40 bytes)", __LINE__);
    OK(MPI_Type_free(&t));
    OK(MPI_Type_free(&r));
}

/* 2. Argument counts that overflow the shim's int arithmetic: 3*ndims
 * wrapped to 3 and memcpy then read 4*ndims bytes into malloc(12). */
static void arguments(void) {
    MPI_Datatype t;
    int a[4] = {4, 4, 4, 4}, d[4] = {1, 1, 1, 1}, z[4] = {0, 0, 0, 0};
    int rc = MPI_Type_create_subarray(0x55555556, a, d, z, MPI_ORDER_C, MPI_INT, &t);
    refused(rc, MPI_ERR_ARG, "MPI_Type_create_subarray(ndims = 0x55555556)", __LINE__);
    int dist[4] = {MPI_DISTRIBUTE_NONE, MPI_DISTRIBUTE_NONE, MPI_DISTRIBUTE_NONE, MPI_DISTRIBUTE_NONE};
    int dargs[4] = {MPI_DISTRIBUTE_DFLT_DARG, MPI_DISTRIBUTE_DFLT_DARG, MPI_DISTRIBUTE_DFLT_DARG, MPI_DISTRIBUTE_DFLT_DARG};
    rc = MPI_Type_create_darray(1, 0, 0x40000000, a, dist, dargs, d, MPI_ORDER_C, MPI_INT, &t);
    refused(rc, MPI_ERR_ARG, "MPI_Type_create_darray(ndims = 0x40000000)", __LINE__);
    MPI_Count ca[4] = {4, 4, 4, 4}, cd[4] = {1, 1, 1, 1}, cz[4] = {0, 0, 0, 0};
    rc = MPI_Type_create_subarray_c(0x40000000, ca, cd, cz, MPI_ORDER_C, MPI_INT, &t);
    refused(rc, MPI_ERR_ARG, "MPI_Type_create_subarray_c(ndims = 0x40000000)", __LINE__);
    /* 1 + 2*count is negative: a count error, not MPI_ERR_NO_MEM */
    rc = MPI_Type_indexed(0x40000000, a, z, MPI_INT, &t);
    refused(rc, MPI_ERR_COUNT, "MPI_Type_indexed(count = 0x40000000)", __LINE__);
    MPI_Count big = (MPI_Count)1 << 62;
    rc = MPI_Type_indexed_c(big, ca, cz, MPI_INT, &t);
    refused(rc, MPI_ERR_COUNT, "MPI_Type_indexed_c(count = 2^62)", __LINE__);
}

/* 3. MPI_Pack and MPI_Unpack with counts whose packed size overflows:
 * 3<<59 doubles gave a negative size (a panic in the rank), 2^61+1 a size
 * of 8 and success. */
static void packing(void) {
    double in[2] = {1, 2};
    char out[64];
    MPI_Count pos = 0;
    int rc = MPI_Pack_c(in, (MPI_Count)3 << 59, MPI_DOUBLE, out, sizeof out, &pos, MPI_COMM_WORLD);
    refused(rc, MPI_ERR_COUNT, "MPI_Pack_c(3<<59 doubles)", __LINE__);
    rc = MPI_Pack_c(in, ((MPI_Count)1 << 61) + 1, MPI_DOUBLE, out, sizeof out, &pos, MPI_COMM_WORLD);
    refused(rc, MPI_ERR_COUNT, "MPI_Pack_c(2^61+1 doubles)", __LINE__);
    CHECK(pos == 0, "position = %lld after refused packs, want 0", (long long)pos);
    rc = MPI_Unpack_c(out, sizeof out, &pos, in, ((MPI_Count)1 << 61) + 1, MPI_DOUBLE, MPI_COMM_WORLD);
    refused(rc, MPI_ERR_COUNT, "MPI_Unpack_c(2^61+1 doubles)", __LINE__);
    CHECK(pos == 0, "position = %lld after a refused unpack, want 0", (long long)pos);
    /* elements whose bytes overflow the status */
    MPI_Status st;
    rc = MPI_Status_set_elements_x(&st, MPI_DOUBLE, (MPI_Count)1 << 62);
    refused(rc, MPI_ERR_COUNT, "MPI_Status_set_elements_x(2^62 doubles)", __LINE__);
    /* the job goes on: a pack in bounds still works */
    OK(MPI_Pack_c(in, 2, MPI_DOUBLE, out, sizeof out, &pos, MPI_COMM_WORLD));
    CHECK(pos == 16 && memcmp(out, in, 16) == 0, "position = %lld after packing 2 doubles, want 16", (long long)pos);
}

int main(int argc, char **argv) {
    OK(MPI_Init(&argc, &argv));
    OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    /* an argument names one part to run (sizes, arguments, packing) */
    const char *only = argc > 1 ? argv[1] : "";
    if (!*only || strcmp(only, "sizes") == 0)
        sizes();
    if (!*only || strcmp(only, "arguments") == 0)
        arguments();
    if (!*only || strcmp(only, "packing") == 0)
        packing();
    OK(MPI_Barrier(MPI_COMM_WORLD));
    printf("dtoverflow ok %d\n", rank);
    OK(MPI_Finalize());
    return 0;
}
