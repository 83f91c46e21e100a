/* intercomm: communicators made among a subset (MPI_Comm_create_group of
 * a strict subset, MPI_Comm_create with disjoint groups), sessions,
 * intercommunicators and the dynamic-process answers. argv[1] picks the
 * part ("groups", "sessions", "inter", "dynamic"; none: all). Prints
 * "intercomm ok <rank>". Self-checking; needs no particular size, but
 * the subset cases need 3 or more ranks to mean something. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size;
static int bcs; /* running on bcsmpi: check its answers to erroneous calls too */

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

static int class_of(int rc) {
    int cls = -1;
    MPI_Error_class(rc, &cls);
    return cls;
}

/* groups: the parity classes each make a communicator with
 * MPI_Comm_create_group, the other class not calling; the same group
 * twice with one tag; disjoint groups through MPI_Comm_create. */
static void groups(void) {
    MPI_Group world, mine, half;
    MPI_Comm c, c2;
    int r, n, sum;
    OK(MPI_Comm_group(MPI_COMM_WORLD, &world));
    /* My parity class, in reverse world order. */
    int *list = malloc(size * sizeof(int)), k = 0;
    for (int i = size - 1; i >= 0; i--)
        if (i % 2 == rank % 2)
            list[k++] = i;
    OK(MPI_Group_incl(world, k, list, &mine));
    OK(MPI_Comm_create_group(MPI_COMM_WORLD, mine, 3, &c));
    OK(MPI_Comm_size(c, &n));
    OK(MPI_Comm_rank(c, &r));
    CHECK(n == k && list[r] == rank, "parity group: rank %d of %d, want %d", r, n, k);
    OK(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, c));
    int want = 0;
    for (int i = 0; i < k; i++)
        want += list[i];
    CHECK(sum == want, "parity group sum %d, want %d", sum, want);
    /* Point-to-point within it: a ring. */
    int got = -1;
    OK(MPI_Sendrecv(&rank, 1, MPI_INT, (r + 1) % n, 9, &got, 1, MPI_INT, (r + n - 1) % n, 9, c, MPI_STATUS_IGNORE));
    CHECK(got == list[(r + n - 1) % n], "ring got %d", got);
    /* The same group and tag again: a new communicator, congruent. */
    OK(MPI_Comm_create_group(MPI_COMM_WORLD, mine, 3, &c2));
    int res;
    OK(MPI_Comm_compare(c, c2, &res));
    CHECK(res == (n == 1 ? MPI_CONGRUENT : MPI_CONGRUENT), "compare %d", res);
    OK(MPI_Barrier(c2));
    OK(MPI_Comm_free(&c2));
    OK(MPI_Comm_free(&c));
    /* The world's own collectives were not disturbed. */
    OK(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    CHECK(sum == size * (size - 1) / 2, "world sum %d", sum);
    /* From a duplicate, only the first two ranks. */
    MPI_Comm dup;
    OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    if (size >= 2 && rank < 2) {
        MPI_Group two, dg;
        int pair[2] = {1, 0};
        OK(MPI_Comm_group(dup, &dg));
        OK(MPI_Group_incl(dg, 2, pair, &two));
        OK(MPI_Group_free(&dg));
        OK(MPI_Comm_create_group(dup, two, 0, &c));
        OK(MPI_Comm_rank(c, &r));
        CHECK(r == 1 - rank, "pair rank %d", r);
        OK(MPI_Comm_free(&c));
        OK(MPI_Group_free(&two));
    }
    OK(MPI_Barrier(dup));
    /* A caller outside the group is refused. */
    OK(MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN));
    if (bcs && size >= 2) { /* erroneous: MPICH crashes */
        MPI_Group other;
        int o = (rank + 1) % size;
        OK(MPI_Group_incl(world, 1, &o, &other));
        int rc = MPI_Comm_create_group(dup, other, 0, &c);
        CHECK(class_of(rc) == MPI_ERR_GROUP, "outside the group: rc %d", rc);
        OK(MPI_Group_free(&other));
    }
    OK(MPI_Comm_free(&dup));
    /* MPI_Comm_create with disjoint groups: the lower and upper halves. */
    int h = size / 2, lo = rank < h ? 0 : h, hn = rank < h ? h : size - h;
    int range[1][3] = {{lo, lo + hn - 1, 1}};
    OK(MPI_Group_range_incl(world, 1, range, &half));
    OK(MPI_Comm_create(MPI_COMM_WORLD, half, &c));
    CHECK(c != MPI_COMM_NULL, "disjoint halves: MPI_COMM_NULL");
    OK(MPI_Comm_size(c, &n));
    OK(MPI_Comm_rank(c, &r));
    CHECK(n == hn && r == rank - lo, "half: rank %d of %d, want %d of %d", r, n, rank - lo, hn);
    OK(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, c));
    CHECK(sum == hn * lo + hn * (hn - 1) / 2, "half sum %d", sum);
    OK(MPI_Comm_free(&c));
    /* One group leaving out rank 0: rank 0 gets MPI_COMM_NULL. */
    MPI_Group rest;
    int zero = 0;
    OK(MPI_Group_excl(world, 1, &zero, &rest));
    OK(MPI_Comm_create(MPI_COMM_WORLD, rest, &c));
    CHECK((c == MPI_COMM_NULL) == (rank == 0), "without rank 0: null %d", c == MPI_COMM_NULL);
    if (c != MPI_COMM_NULL)
        OK(MPI_Comm_free(&c));
    OK(MPI_Group_free(&rest));
    OK(MPI_Group_free(&half));
    OK(MPI_Group_free(&mine));
    OK(MPI_Group_free(&world));
    free(list);
}

int main(int argc, char **argv) {
    OK(MPI_Init(&argc, &argv));
    OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int len;
    OK(MPI_Get_library_version(lib, &len));
    bcs = strstr(lib, "bcsmpi") != NULL;
    const char *part = argc > 1 ? argv[1] : "all";
    int all = strcmp(part, "all") == 0;
    if (all || strcmp(part, "groups") == 0)
        groups();
    OK(MPI_Barrier(MPI_COMM_WORLD));
    printf("intercomm ok %d\n", rank);
    OK(MPI_Finalize());
    return 0;
}
