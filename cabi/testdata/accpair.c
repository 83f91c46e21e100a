/* accpair: accumulate calls on derived datatypes made of one predefined
 * pair type (MPI 5.0 §12.3.4: every basic component the same predefined
 * datatype; the pair types count as predefined for MINLOC and MAXLOC):
 * contiguous and vector types of MPI_DOUBLE_INT, MPI_2INT and
 * MPI_LONG_DOUBLE_INT with MPI_MAXLOC, MPI_MINLOC, MPI_REPLACE and
 * MPI_NO_OP, through MPI_Accumulate, MPI_Get_accumulate and MPI_Raccumulate;
 * an op not defined on pairs (MPI_SUM) is still MPI_ERR_OP, and a struct
 * of a double and an int (not a pair type) MPI_ERR_TYPE. Any number of
 * ranks: each accumulates into its right neighbour's window. Prints
 * "accpair ok <rank>". */
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

#define N 20 /* items per window */

typedef struct { double v; int i; } dint;
typedef struct { int v; int i; } iint;
typedef struct { long double v; int i; } ldint;

static int class_of(int rc) {
    int c;
    MPI_Error_class(rc, &c);
    return c;
}

/* vector(4 blocks of 3, stride 5) of DOUBLE_INT, MAXLOC then MINLOC,
 * with Accumulate; then Get_accumulate of a contiguous type with MAXLOC
 * (fetching the old values) and MPI_NO_OP; then REPLACE. */
static void double_int(int right, int left) {
    dint *win_buf, org[N], res[N];
    MPI_Win win;
    MPI_Datatype vec, con;
    OK(MPI_Alloc_mem(N * sizeof(dint), MPI_INFO_NULL, &win_buf));
    for (int k = 0; k < N; k++) win_buf[k] = (dint){10.0, -1};
    OK(MPI_Type_vector(4, 3, 5, MPI_DOUBLE_INT, &vec));
    OK(MPI_Type_commit(&vec));
    OK(MPI_Type_contiguous(N, MPI_DOUBLE_INT, &con));
    OK(MPI_Type_commit(&con));
    OK(MPI_Win_create(win_buf, N * sizeof(dint), sizeof(dint), MPI_INFO_NULL, MPI_COMM_WORLD, &win));

    for (int k = 0; k < N; k++) org[k] = (dint){k % 2 ? 20.0 : 5.0, rank * 100 + k};
    OK(MPI_Win_fence(0, win));
    OK(MPI_Accumulate(org, 1, vec, right, 0, 1, vec, MPI_MAXLOC, win));
    OK(MPI_Win_fence(0, win));
    for (int k = 0; k < N; k++) {
        int in = k % 5 < 3 && k < 20;
        dint want = in && k % 2 ? (dint){20.0, left * 100 + k} : (dint){10.0, -1};
        CHECK(win_buf[k].v == want.v && win_buf[k].i == want.i, "MAXLOC vector [%d] = (%g, %d), want (%g, %d)", k, win_buf[k].v, win_buf[k].i, want.v, want.i);
    }
    OK(MPI_Barrier(MPI_COMM_WORLD)); /* checked before the next epoch writes here */
    OK(MPI_Accumulate(org, 1, vec, right, 0, 1, vec, MPI_MINLOC, win));
    OK(MPI_Win_fence(0, win));
    for (int k = 0; k < N; k++) {
        int in = k % 5 < 3;
        dint want = !in ? (dint){10.0, -1} : k % 2 ? (dint){20.0, left * 100 + k} : (dint){5.0, left * 100 + k};
        CHECK(win_buf[k].v == want.v && win_buf[k].i == want.i, "MINLOC vector [%d] = (%g, %d), want (%g, %d)", k, win_buf[k].v, win_buf[k].i, want.v, want.i);
    }
    /* Equal values: MAXLOC keeps the lower index. */
    for (int k = 0; k < N; k++) org[k] = (dint){20.0, -5};
    OK(MPI_Barrier(MPI_COMM_WORLD)); /* checked before the next epoch writes here */
    OK(MPI_Get_accumulate(org, 1, con, res, N, MPI_DOUBLE_INT, right, 0, 1, con, MPI_MAXLOC, win));
    OK(MPI_Win_fence(0, win));
    for (int k = 0; k < N; k++) {
        int in = k % 5 < 3;
        /* the target's values: what this rank accumulated into it */
        dint old = !in ? (dint){10.0, -1} : k % 2 ? (dint){20.0, rank * 100 + k} : (dint){5.0, rank * 100 + k};
        CHECK(res[k].v == old.v && res[k].i == old.i, "Get_accumulate result [%d] = (%g, %d), want (%g, %d)", k, res[k].v, res[k].i, old.v, old.i);
        CHECK(win_buf[k].v == 20.0 && win_buf[k].i == -5, "MAXLOC contiguous [%d] = (%g, %d), want (20, -5)", k, win_buf[k].v, win_buf[k].i);
    }
    memset(res, 0, sizeof res);
    OK(MPI_Barrier(MPI_COMM_WORLD)); /* checked before the next epoch writes here */
    OK(MPI_Get_accumulate(NULL, 0, MPI_DOUBLE_INT, res, 1, con, right, 0, 1, con, MPI_NO_OP, win));
    OK(MPI_Win_fence(0, win));
    for (int k = 0; k < N; k++)
        CHECK(res[k].v == 20.0 && res[k].i == -5, "NO_OP result [%d] = (%g, %d)", k, res[k].v, res[k].i);
    for (int k = 0; k < N; k++) org[k] = (dint){-1.5, k};
    MPI_Request req;
    OK(MPI_Barrier(MPI_COMM_WORLD)); /* checked before the next epoch writes here */
    OK(MPI_Win_lock_all(0, win));
    OK(MPI_Raccumulate(org, 1, vec, right, 0, 1, vec, MPI_REPLACE, win, &req));
    OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    OK(MPI_Win_unlock_all(win));
    OK(MPI_Barrier(MPI_COMM_WORLD));
    OK(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win));
    for (int k = 0; k < N; k++) {
        int in = k % 5 < 3;
        dint want = in ? (dint){-1.5, k} : (dint){20.0, -5};
        CHECK(win_buf[k].v == want.v && win_buf[k].i == want.i, "REPLACE vector [%d] = (%g, %d), want (%g, %d)", k, win_buf[k].v, win_buf[k].i, want.v, want.i);
    }
    OK(MPI_Win_unlock(rank, win));
    OK(MPI_Barrier(MPI_COMM_WORLD));

    /* Not allowed: MPI_SUM on pairs (MPI_ERR_OP); a struct of a double and
     * an int is not a pair type, its basic components differ (MPI_ERR_TYPE). */
    MPI_Datatype st;
    int bl[2] = {1, 1};
    MPI_Aint disp[2] = {0, sizeof(double)};
    MPI_Datatype ts[2] = {MPI_DOUBLE, MPI_INT};
    OK(MPI_Type_create_struct(2, bl, disp, ts, &st));
    OK(MPI_Type_commit(&st));
    OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    OK(MPI_Win_fence(0, win));
    int rc = MPI_Accumulate(org, 1, vec, right, 0, 1, vec, MPI_SUM, win);
    CHECK(class_of(rc) == MPI_ERR_OP, "MPI_SUM on a vector of MPI_DOUBLE_INT: class %d, want MPI_ERR_OP", class_of(rc));
    rc = MPI_Accumulate(org, 1, st, right, 0, 1, st, MPI_MAXLOC, win);
    CHECK(class_of(rc) == MPI_ERR_TYPE, "MPI_MAXLOC on a struct of double and int: class %d, want MPI_ERR_TYPE", class_of(rc));
    OK(MPI_Win_fence(0, win));
    OK(MPI_Type_free(&st));

    OK(MPI_Win_free(&win));
    OK(MPI_Type_free(&vec));
    OK(MPI_Type_free(&con));
    OK(MPI_Free_mem(win_buf));
}

/* A contiguous type of MPI_2INT with MINLOC, origin and target described
 * differently (the same basic components). */
static void two_int(int right, int left) {
    iint win_buf[N], org[N];
    MPI_Win win;
    MPI_Datatype con;
    for (int k = 0; k < N; k++) win_buf[k] = (iint){50, -1};
    OK(MPI_Type_contiguous(N / 2, MPI_2INT, &con));
    OK(MPI_Type_commit(&con));
    OK(MPI_Win_create(win_buf, sizeof win_buf, sizeof(iint), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    for (int k = 0; k < N; k++) org[k] = (iint){k < 10 ? 40 : 60, rank};
    OK(MPI_Win_fence(0, win));
    OK(MPI_Accumulate(org, N, MPI_2INT, right, 0, 2, con, MPI_MINLOC, win));
    OK(MPI_Win_fence(0, win));
    for (int k = 0; k < N; k++) {
        iint want = k < 10 ? (iint){40, left} : (iint){50, -1};
        CHECK(win_buf[k].v == want.v && win_buf[k].i == want.i, "MINLOC 2INT [%d] = (%d, %d), want (%d, %d)", k, win_buf[k].v, win_buf[k].i, want.v, want.i);
    }
    OK(MPI_Win_free(&win));
    OK(MPI_Type_free(&con));
}

/* MPICH's rma/acc_pairtype case: a vector of MPI_LONG_DOUBLE_INT (a pair
 * reduced by a C function) with MAXLOC, then REPLACE on a contiguous one. */
static void long_double_int(int right, int left) {
    ldint *win_buf, org[N];
    MPI_Win win;
    MPI_Datatype vec, con;
    OK(MPI_Alloc_mem(N * sizeof(ldint), MPI_INFO_NULL, &win_buf));
    for (int k = 0; k < N; k++) win_buf[k] = (ldint){0.0L, 0};
    OK(MPI_Type_vector(4, 3, 5, MPI_LONG_DOUBLE_INT, &vec));
    OK(MPI_Type_commit(&vec));
    OK(MPI_Type_contiguous(2, MPI_LONG_DOUBLE_INT, &con));
    OK(MPI_Type_commit(&con));
    OK(MPI_Win_create(win_buf, N * sizeof(ldint), sizeof(ldint), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    for (int k = 0; k < N; k++) org[k] = (ldint){1.0L + k, rank * 100 + k};
    OK(MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win));
    OK(MPI_Accumulate(org, 1, vec, right, 0, 1, vec, MPI_MAXLOC, win));
    OK(MPI_Win_unlock(right, win));
    OK(MPI_Barrier(MPI_COMM_WORLD));
    OK(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win));
    for (int k = 0; k < N; k++) {
        ldint want = k % 5 < 3 ? (ldint){1.0L + k, left * 100 + k} : (ldint){0.0L, 0};
        CHECK(win_buf[k].v == want.v && win_buf[k].i == want.i, "MAXLOC LONG_DOUBLE_INT vector [%d] = (%Lg, %d), want (%Lg, %d)", k, win_buf[k].v, win_buf[k].i, want.v, want.i);
    }
    OK(MPI_Win_unlock(rank, win));
    OK(MPI_Barrier(MPI_COMM_WORLD));
    OK(MPI_Win_fence(0, win));
    OK(MPI_Accumulate(org, 1, con, right, 18, 1, con, MPI_REPLACE, win));
    OK(MPI_Win_fence(0, win));
    for (int k = 18; k < N; k++)
        CHECK(win_buf[k].v == 1.0L + k - 18 && win_buf[k].i == left * 100 + k - 18, "REPLACE LONG_DOUBLE_INT [%d] = (%Lg, %d)", k, win_buf[k].v, win_buf[k].i);
    OK(MPI_Win_free(&win));
    OK(MPI_Type_free(&vec));
    OK(MPI_Type_free(&con));
    OK(MPI_Free_mem(win_buf));
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    double_int(right, left);
    two_int(right, left);
    long_double_int(right, left);
    printf("accpair ok %d\n", rank);
    MPI_Finalize();
    return 0;
}
