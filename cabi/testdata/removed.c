// The MPI-1 functions removed in MPI-3.0 that bcsmpi keeps for old programs
// (HPL's way of sending a panel: MPI_Address of absolute addresses,
// MPI_Type_struct, a send from MPI_BOTTOM). Run on 2 ranks; each rank
// prints "removed ok <rank>" when every check passed.
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static int fails;
#define CHECK(cond, ...)                                  \
    do {                                                  \
        if (!(cond)) {                                    \
            fprintf(stderr, "rank %d: ", rank);           \
            fprintf(stderr, __VA_ARGS__);                 \
            fputc('\n', stderr);                          \
            fails++;                                      \
        }                                                 \
    } while (0)

static int handled, handled_class;
static void handler(MPI_Comm *comm, int *code, ...) {
    (void)comm;
    handled++;
    MPI_Error_class(*code, &handled_class);
}

int main(int argc, char **argv) {
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2) {
        if (rank == 0)
            fprintf(stderr, "run on 2 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }

    // MPI_Address and MPI_Type_struct: two separate arrays in one message,
    // addressed absolutely and sent from MPI_BOTTOM.
    double a[5];
    int b[3];
    for (int i = 0; i < 5; i++)
        a[i] = rank == 0 ? 1.5 * i : -1;
    for (int i = 0; i < 3; i++)
        b[i] = rank == 0 ? 10 + i : -1;
    MPI_Aint disp[2], ga;
    MPI_Address(a, &disp[0]);
    MPI_Address(b, &disp[1]);
    MPI_Get_address(a, &ga);
    CHECK(disp[0] == ga, "MPI_Address %ld, MPI_Get_address %ld", (long)disp[0], (long)ga);
    int len[2] = {5, 3};
    MPI_Datatype types[2] = {MPI_DOUBLE, MPI_INT}, st;
    CHECK(MPI_Type_struct(2, len, disp, types, &st) == MPI_SUCCESS, "MPI_Type_struct failed");
    MPI_Type_commit(&st);
    int tsize;
    MPI_Type_size(st, &tsize);
    CHECK(tsize == 5 * (int)sizeof(double) + 3 * (int)sizeof(int), "struct size %d", tsize);
    if (rank == 0)
        MPI_Send(MPI_BOTTOM, 1, st, 1, 0, MPI_COMM_WORLD);
    else {
        MPI_Recv(MPI_BOTTOM, 1, st, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        for (int i = 0; i < 5; i++)
            CHECK(a[i] == 1.5 * i, "a[%d] = %g, want %g", i, a[i], 1.5 * i);
        for (int i = 0; i < 3; i++)
            CHECK(b[i] == 10 + i, "b[%d] = %d, want %d", i, b[i], 10 + i);
    }
    MPI_Type_free(&st);

    // MPI_Type_hvector, MPI_Type_hindexed, MPI_Type_extent, MPI_Type_lb, MPI_Type_ub.
    MPI_Datatype hv, hi, rs;
    MPI_Aint ext, lb, ub;
    MPI_Type_hvector(3, 2, 4 * sizeof(int), MPI_INT, &hv);
    MPI_Type_commit(&hv);
    MPI_Type_extent(hv, &ext);
    CHECK(ext == 10 * (MPI_Aint)sizeof(int), "hvector extent %ld, want %ld", (long)ext, (long)(10 * sizeof(int)));
    int hlen[2] = {1, 2};
    MPI_Aint hdisp[2] = {2 * sizeof(int), 5 * sizeof(int)};
    MPI_Type_hindexed(2, hlen, hdisp, MPI_INT, &hi);
    MPI_Type_commit(&hi);
    MPI_Type_lb(hi, &lb);
    MPI_Type_ub(hi, &ub);
    CHECK(lb == 2 * (MPI_Aint)sizeof(int) && ub == 7 * (MPI_Aint)sizeof(int), "hindexed lb %ld ub %ld, want %ld %ld",
          (long)lb, (long)ub, (long)(2 * sizeof(int)), (long)(7 * sizeof(int)));
    MPI_Type_create_resized(MPI_INT, -8, 32, &rs);
    MPI_Type_lb(rs, &lb);
    MPI_Type_ub(rs, &ub);
    MPI_Type_extent(rs, &ext);
    CHECK(lb == -8 && ub == 24 && ext == 32, "resized lb %ld ub %ld extent %ld, want -8 24 32", (long)lb, (long)ub,
          (long)ext);
    /* a NULL output is MPI_ERR_ARG under MPI_ERRORS_RETURN (Type_ub wrote
     * through it) */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int ec = MPI_SUCCESS;
    MPI_Error_class(MPI_Type_ub(rs, NULL), &ec);
    CHECK(ec == MPI_ERR_ARG, "MPI_Type_ub(type, NULL): class %d, want MPI_ERR_ARG", ec);
    MPI_Error_class(MPI_Type_lb(rs, NULL), &ec);
    CHECK(ec == MPI_ERR_ARG, "MPI_Type_lb(type, NULL): class %d, want MPI_ERR_ARG", ec);
    MPI_Error_class(MPI_Type_extent(rs, NULL), &ec);
    CHECK(ec == MPI_ERR_ARG, "MPI_Type_extent(type, NULL): class %d, want MPI_ERR_ARG", ec);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    int v[10], w[10];
    for (int i = 0; i < 10; i++) {
        v[i] = rank == 0 ? 100 + i : -1;
        w[i] = rank == 0 ? 200 + i : -1;
    }
    if (rank == 0) {
        MPI_Send(v, 1, hv, 1, 1, MPI_COMM_WORLD);
        MPI_Send(w, 1, hi, 1, 2, MPI_COMM_WORLD);
    } else {
        MPI_Recv(v, 1, hv, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Recv(w, 1, hi, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        for (int i = 0; i < 10; i++) {
            int want = (i % 4) < 2 ? 100 + i : -1;
            CHECK(v[i] == want, "hvector v[%d] = %d, want %d", i, v[i], want);
            want = (i == 2 || i == 5 || i == 6) ? 200 + i : -1;
            CHECK(w[i] == want, "hindexed w[%d] = %d, want %d", i, w[i], want);
        }
    }
    MPI_Type_free(&hv);
    MPI_Type_free(&hi);
    MPI_Type_free(&rs);

    // MPI_Errhandler_create, _set and _get: the handler runs for an error
    // on the communicator and is the one _get returns.
    MPI_Comm c;
    MPI_Errhandler eh, got;
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    MPI_Errhandler_create(handler, &eh);
    MPI_Errhandler_set(c, eh);
    MPI_Errhandler_get(c, &got);
    CHECK(got == eh, "MPI_Errhandler_get returned another handler");
    int x = 0, rc = MPI_Send(&x, 1, MPI_INT, size + 3, 0, c);
    CHECK(rc != MPI_SUCCESS && handled == 1 && handled_class == MPI_ERR_RANK,
          "send to rank %d: rc %d, handler ran %d times with class %d, want MPI_ERR_RANK (%d)", size + 3, rc,
          handled, handled_class, MPI_ERR_RANK);
    MPI_Errhandler_free(&got);
    MPI_Errhandler_free(&eh);
    MPI_Comm_free(&c);

    int all;
    MPI_Allreduce(&fails, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (all == 0)
        printf("removed ok %d\n", rank);
    MPI_Finalize();
    return all != 0;
}
