/* intercreate: MPI_Comm_create on an intercommunicator (MPI 5.0 §7.4.2):
 * each side passes a subset of its local group; members of the subset get
 * an intercommunicator of the two subsets, ranked as in the group, and
 * everybody gets MPI_COMM_NULL when either subset is empty. The
 * intercommunicator is WORLD's even ranks against its odd ranks.
 * Self-checking on 2 or more ranks (1 rank: nothing to do). */
#include "dt.h"

/* exchange: every local rank sends its rank to every remote rank and
 * checks what it gets. */
static void exchange(MPI_Comm ic, const char *what) {
    int r, rn;
    MPI_Comm_rank(ic, &r);
    MPI_Comm_remote_size(ic, &rn);
    for (int j = 0; j < rn; j++) {
        int got = -1;
        OK(MPI_Sendrecv(&r, 1, MPI_INT, j, 4, &got, 1, MPI_INT, j, 4, ic, MPI_STATUS_IGNORE));
        CHECK(got == j, "%s: got %d from remote %d", what, got, j);
    }
}

int main(int argc, char **argv) {
    start(&argc, &argv);
    if (size < 2)
        return finish("intercreate");
    MPI_Comm half, ic, nc;
    OK(MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half));
    OK(MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, rank % 2 ? 0 : 1, 3, &ic));
    int lr, ln, rn, res;
    MPI_Comm_rank(ic, &lr);
    MPI_Comm_size(ic, &ln);
    MPI_Comm_remote_size(ic, &rn);
    MPI_Group local, g;
    OK(MPI_Comm_group(ic, &local));

    /* The whole local group on both sides: congruent with ic. */
    OK(MPI_Comm_create(ic, local, &nc));
    CHECK(nc != MPI_COMM_NULL, "whole group: MPI_COMM_NULL");
    if (nc != MPI_COMM_NULL) {
        OK(MPI_Comm_compare(ic, nc, &res));
        CHECK(res == MPI_CONGRUENT, "whole group: compare %d, want MPI_CONGRUENT", res);
        int f = 0;
        MPI_Comm_test_inter(nc, &f);
        CHECK(f, "whole group: not an intercommunicator");
        exchange(nc, "whole group");
        OK(MPI_Comm_free(&nc));
    }

    /* Local rank 0 of each side: a 1-by-1 intercommunicator. */
    int zero = 0;
    OK(MPI_Group_incl(local, 1, &zero, &g));
    OK(MPI_Comm_create(ic, g, &nc));
    if (lr == 0) {
        CHECK(nc != MPI_COMM_NULL, "leaders: MPI_COMM_NULL");
        if (nc != MPI_COMM_NULL) {
            int n, m;
            MPI_Comm_size(nc, &n);
            MPI_Comm_remote_size(nc, &m);
            CHECK(n == 1 && m == 1, "leaders: sizes %d %d, want 1 1", n, m);
            exchange(nc, "leaders");
            OK(MPI_Comm_free(&nc));
        }
    } else
        CHECK(nc == MPI_COMM_NULL, "leaders: a non-member got a communicator");
    OK(MPI_Group_free(&g));

    /* Reversed local order on one side: ranks follow the group. */
    int *rev = malloc(sizeof(int) * ln);
    for (int i = 0; i < ln; i++)
        rev[i] = ln - 1 - i;
    OK(MPI_Group_incl(local, ln, rev, &g));
    free(rev);
    OK(MPI_Comm_create(ic, rank % 2 ? g : local, &nc));
    CHECK(nc != MPI_COMM_NULL, "reversed: MPI_COMM_NULL");
    if (nc != MPI_COMM_NULL) {
        int r;
        MPI_Comm_rank(nc, &r);
        CHECK(r == (rank % 2 ? ln - 1 - lr : lr), "reversed: rank %d (local rank %d)", r, lr);
        exchange(nc, "reversed");
        OK(MPI_Comm_free(&nc));
    }
    OK(MPI_Group_free(&g));

    /* One side passes MPI_GROUP_EMPTY: MPI_COMM_NULL everywhere. */
    OK(MPI_Comm_create(ic, rank % 2 ? MPI_GROUP_EMPTY : local, &nc));
    CHECK(nc == MPI_COMM_NULL, "one empty side: got a communicator");

    /* A group naming a process of the remote group is an error (MPICH:
     * MPI_ERR_GROUP; Open MPI 4.1 does not check it and returns success). */
    MPI_Comm_set_errhandler(ic, MPI_ERRORS_RETURN);
    MPI_Group wg, other;
    OK(MPI_Comm_group(MPI_COMM_WORLD, &wg));
    int peer = rank % 2 ? 0 : 1;
    OK(MPI_Group_incl(wg, 1, &peer, &other));
    int rc = MPI_Comm_create(ic, other, &nc), cls = -1;
    MPI_Error_class(rc, &cls);
    CHECK(rc != MPI_SUCCESS && cls == MPI_ERR_GROUP, "remote member: rc %d class %d, want MPI_ERR_GROUP", rc, cls);
    OK(MPI_Group_free(&other));
    OK(MPI_Group_free(&wg));

    OK(MPI_Group_free(&local));
    OK(MPI_Comm_free(&ic));
    OK(MPI_Comm_free(&half));
    (void)rn;
    return finish("intercreate");
}
