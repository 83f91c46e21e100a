/* create: MPI_Comm_create with disjoint groups (MPI 2.2), with a group
 * that leaves the caller out, and with an empty group; Comm info; groups
 * of the result; self-checking. */
#include "dt.h"

int main(int argc, char **argv) {
    start(&argc, &argv);
    MPI_Group w, g;
    OK(MPI_Comm_group(MPI_COMM_WORLD, &w));
    /* Each parity class passes its own group. */
    int r[1][3] = {{rank % 2, size - 1, 2}};
    if (r[0][0] > size - 1) r[0][1] = r[0][0]; /* one rank: no odd members */
    OK(MPI_Group_range_incl(w, 1, r, &g));
    MPI_Comm c;
    OK(MPI_Comm_create(MPI_COMM_WORLD, g, &c));
    CHECK(c != MPI_COMM_NULL, "disjoint create gave MPI_COMM_NULL");
    if (c != MPI_COMM_NULL) {
        int n, cr, sum;
        MPI_Comm_size(c, &n);
        MPI_Comm_rank(c, &cr);
        CHECK(n == (rank % 2 ? size / 2 : (size + 1) / 2) && cr == rank / 2, "disjoint create size %d rank %d", n, cr);
        OK(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, c));
        int e = 0;
        for (int q = rank % 2; q < size; q += 2) e += q;
        CHECK(sum == e, "disjoint create allreduce %d want %d", sum, e);
        MPI_Group cg;
        int res;
        OK(MPI_Comm_group(c, &cg));
        OK(MPI_Group_compare(cg, g, &res));
        CHECK(res == MPI_IDENT, "group of created comm %d", res);
        OK(MPI_Group_free(&cg));
        OK(MPI_Comm_free(&c));
    }
    OK(MPI_Group_free(&g));
    /* Everyone passes MPI_GROUP_EMPTY. */
    OK(MPI_Comm_create(MPI_COMM_WORLD, MPI_GROUP_EMPTY, &c));
    CHECK(c == MPI_COMM_NULL, "empty group gave a communicator");
    /* Comm info. */
    MPI_Info in, got;
    OK(MPI_Info_create(&in));
    OK(MPI_Info_set(in, "mpi_assert_no_any_tag", "true"));
    OK(MPI_Comm_dup_with_info(MPI_COMM_WORLD, in, &c));
    OK(MPI_Comm_get_info(c, &got));
    int nk;
    OK(MPI_Info_get_nkeys(got, &nk));
    CHECK(nk >= 0, "nkeys");
    OK(MPI_Info_free(&got));
    OK(MPI_Comm_set_info(c, in));
    int x;
    OK(MPI_Allreduce(&rank, &x, 1, MPI_INT, MPI_MAX, c));
    CHECK(x == size - 1, "dup_with_info allreduce");
    OK(MPI_Comm_free(&c));
    OK(MPI_Info_free(&in));
    OK(MPI_Group_free(&w));
    return finish("create");
}
