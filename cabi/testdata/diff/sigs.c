/* sigs: collectives whose members pass different datatypes of one type
 * signature (the standard requires only the signatures to match);
 * self-checking. */
#include "dt.h"

int main(int argc, char **argv) {
    start(&argc, &argv);
    MPI_Datatype c4, v2, rs;
    OK(MPI_Type_contiguous(4, MPI_INT, &c4));
    OK(MPI_Type_commit(&c4));
    OK(MPI_Type_vector(2, 1, 2, MPI_INT, &v2));
    OK(MPI_Type_commit(&v2));
    OK(MPI_Type_create_resized(MPI_INT, 0, 3 * sizeof(int), &rs));
    OK(MPI_Type_commit(&rs));
    /* Bcast: the root sends 1 of contiguous(4); odd ranks receive 4 ints,
     * even ranks 2 vectors. */
    for (int root = 0; root < size; root++) {
        int b[8] = {-1, -1, -1, -1, -1, -1, -1, -1};
        if (rank == root) {
            for (int i = 0; i < 4; i++) b[i] = root * 10 + i;
            OK(MPI_Bcast(b, 1, c4, root, MPI_COMM_WORLD));
        } else if (rank % 2) {
            OK(MPI_Bcast(b, 4, MPI_INT, root, MPI_COMM_WORLD));
            for (int i = 0; i < 4; i++) CHECK(b[i] == root * 10 + i, "bcast ints root %d i %d: %d", root, i, b[i]);
        } else {
            OK(MPI_Bcast(b, 2, v2, root, MPI_COMM_WORLD));
            int want[8] = {root * 10, -1, root * 10 + 1, root * 10 + 2, -1, root * 10 + 3, -1, -1};
            /* vector(2,1,2) has extent 3 ints: items at 0 and 3, elements at 0,2,3,5 */
            for (int i = 0; i < 8; i++) CHECK(b[i] == want[i], "bcast vectors root %d b[%d] = %d", root, i, b[i]);
        }
    }
    /* Gather: each sends 4 ints, the root receives contiguous(4) items. */
    int mine[4], *all = malloc(4 * size * sizeof(int));
    for (int i = 0; i < 4; i++) mine[i] = rank * 10 + i;
    OK(MPI_Gather(mine, 4, MPI_INT, all, 1, c4, 0, MPI_COMM_WORLD));
    if (rank == 0)
        for (int q = 0; q < size; q++) for (int i = 0; i < 4; i++) CHECK(all[q * 4 + i] == q * 10 + i, "gather q %d i %d", q, i);
    /* Allgather: send 1 contiguous(4), receive 4 ints per rank. */
    OK(MPI_Allgather(mine, 1, c4, all, 4, MPI_INT, MPI_COMM_WORLD));
    for (int q = 0; q < size; q++) for (int i = 0; i < 4; i++) CHECK(all[q * 4 + i] == q * 10 + i, "allgather q %d i %d", q, i);
    /* Scatter with a resized type: the root's items are every third int. */
    int *src = malloc(3 * size * sizeof(int)), got = -1;
    for (int i = 0; i < 3 * size; i++) src[i] = i;
    OK(MPI_Scatter(src, 1, rs, &got, 1, MPI_INT, size - 1, MPI_COMM_WORLD));
    CHECK(got == 3 * rank, "resized scatter %d", got);
    /* Alltoall: send ints, receive into a resized type (every third). */
    int *s2 = malloc(size * sizeof(int)), *r2 = malloc(3 * size * sizeof(int));
    for (int q = 0; q < size; q++) s2[q] = rank * 100 + q;
    for (int i = 0; i < 3 * size; i++) r2[i] = -1;
    OK(MPI_Alltoall(s2, 1, MPI_INT, r2, 1, rs, MPI_COMM_WORLD));
    for (int q = 0; q < size; q++) CHECK(r2[3 * q] == q * 100 + rank && (3 * q + 1 >= 3 * size || r2[3 * q + 1] == -1), "alltoall resized q %d: %d", q, r2[3 * q]);
    /* Reduce with a vector type on every rank (Open MPI reduces it element
     * by element; MPICH 4.0 refuses predefined operations on derived types). */
    int m[6] = {rank, 0, rank, rank, 0, rank}, red[6] = {0};
    OK(MPI_Allreduce(m, red, 2, v2, MPI_SUM, MPI_COMM_WORLD));
    int e = size * (size - 1) / 2;
    CHECK(red[0] == e && red[2] == e && red[3] == e && red[5] == e && red[1] == 0 && red[4] == 0, "vector allreduce %d %d %d %d %d %d", red[0], red[1], red[2], red[3], red[4], red[5]);
    free(all); free(src); free(s2); free(r2);
    OK(MPI_Type_free(&c4));
    OK(MPI_Type_free(&v2));
    OK(MPI_Type_free(&rs));
    return finish("sigs");
}
