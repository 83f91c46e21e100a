/* opcategory: the predefined operations are defined on the standard's
 * type categories only (MPI 5.0 §6.9.2): MPI_BYTE takes MPI_BAND, MPI_BOR
 * and MPI_BXOR, the logical types (MPI_C_BOOL, ...) MPI_LAND, MPI_LOR and
 * MPI_LXOR; any other predefined operation on them is MPI_ERR_OP, in the
 * collectives, MPI_Reduce_local and on derived types of them. And
 * MPI_Reduce_local refuses aliased buffers (MPI_ERR_BUFFER; under bcsmpi
 * overlapping ones too, as its collectives do).
 * Under MPI_ERRORS_RETURN; prints "opcategory ok <rank>". (The same
 * program passes under MPICH: mpicc.mpich testdata/opcategory.c &&
 * mpiexec.mpich -n 2 ./a.out.) */
#include <mpi.h>
#include <stdbool.h>
#include <stdio.h>

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

#define CLASS(call, want)                                                          \
    do {                                                                           \
        int rc_ = (call), c_ = -1;                                                 \
        MPI_Error_class(rc_, &c_);                                                 \
        CHECK(c_ == (want), "%s: class %d, want %d (%s)", #call, c_, want, #want); \
    } while (0)

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

    unsigned char b[4] = {1, 2, 4, (unsigned char)(8 << rank)}, r[4];
    /* The errors are found before any communication, on every member. */
    CLASS(MPI_Allreduce(b, r, 4, MPI_BYTE, MPI_MAX, MPI_COMM_WORLD), MPI_ERR_OP);
    CLASS(MPI_Reduce(b, r, 4, MPI_BYTE, MPI_SUM, 0, MPI_COMM_WORLD), MPI_ERR_OP);
    CLASS(MPI_Reduce_local(b, r, 4, MPI_BYTE, MPI_MIN), MPI_ERR_OP);
    MPI_Datatype bytes;
    MPI_Type_contiguous(2, MPI_BYTE, &bytes);
    MPI_Type_commit(&bytes);
    CLASS(MPI_Allreduce(b, r, 2, bytes, MPI_PROD, MPI_COMM_WORLD), MPI_ERR_OP);
    /* The bitwise operations are defined on MPI_BYTE (and, in bcsmpi, on
     * derived types of it; MPICH refuses predefined operations there). */
    unsigned char want = 0;
    for (int i = 0; i < size; i++)
        want |= (unsigned char)(8 << i);
#ifdef BCSMPI_MPI_H
    CLASS(MPI_Allreduce(b, r, 2, bytes, MPI_BOR, MPI_COMM_WORLD), MPI_SUCCESS);
    CHECK(r[0] == 1 && r[3] == want, "BOR on 2 x (2 x MPI_BYTE): %d %d, want 1 %d", r[0], r[3], want);
#endif
    CLASS(MPI_Allreduce(b, r, 4, MPI_BYTE, MPI_BOR, MPI_COMM_WORLD), MPI_SUCCESS);
    CHECK(r[0] == 1 && r[3] == want, "BOR on MPI_BYTE: %d %d, want 1 %d", r[0], r[3], want);
    CLASS(MPI_Allreduce(b, r, 4, MPI_BYTE, MPI_BXOR, MPI_COMM_WORLD), MPI_SUCCESS);
    MPI_Type_free(&bytes);

    bool t[2] = {true, rank == 0}, u[2];
    CLASS(MPI_Allreduce(t, u, 2, MPI_C_BOOL, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_OP);
    CLASS(MPI_Allreduce(t, u, 2, MPI_C_BOOL, MPI_BAND, MPI_COMM_WORLD), MPI_ERR_OP);
    CLASS(MPI_Allreduce(t, u, 2, MPI_C_BOOL, MPI_LAND, MPI_COMM_WORLD), MPI_SUCCESS);
    CHECK(u[0] && u[1] == (size == 1), "LAND on MPI_C_BOOL: %d %d", u[0], u[1]);
    CLASS(MPI_Allreduce(t, u, 2, MPI_C_BOOL, MPI_LOR, MPI_COMM_WORLD), MPI_SUCCESS);
    CHECK(u[0] && u[1], "LOR on MPI_C_BOOL: %d %d", u[0], u[1]);
    /* Integers keep every arithmetic and bitwise operation. */
    unsigned char c = (unsigned char)(rank + 1), d = 0;
    CLASS(MPI_Allreduce(&c, &d, 1, MPI_UNSIGNED_CHAR, MPI_MAX, MPI_COMM_WORLD), MPI_SUCCESS);
    CHECK(d == size, "MAX on MPI_UNSIGNED_CHAR: %d", d);

    /* MPI_Reduce_local: aliased and overlapping buffers. */
    int v[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    CLASS(MPI_Reduce_local(v, v, 4, MPI_INT, MPI_SUM), MPI_ERR_BUFFER);
#ifdef BCSMPI_MPI_H /* MPICH refuses equal buffers only */
    CLASS(MPI_Reduce_local(v, v + 2, 4, MPI_INT, MPI_SUM), MPI_ERR_BUFFER);
#endif
    CLASS(MPI_Reduce_local(v, v + 4, 4, MPI_INT, MPI_SUM), MPI_SUCCESS);
    CHECK(v[4] == 6 && v[7] == 12, "Reduce_local: %d %d", v[4], v[7]);
    CLASS(MPI_Reduce_local(v, v, 0, MPI_INT, MPI_SUM), MPI_SUCCESS); /* nothing to alias */
    CLASS(MPI_Reduce_local(MPI_IN_PLACE, v, 4, MPI_INT, MPI_SUM), MPI_ERR_BUFFER);

    printf("opcategory ok %d\n", rank);
    MPI_Finalize();
    return 0;
}
