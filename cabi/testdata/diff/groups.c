/* groups: the order of the group constructors' results (MPI 5.0 7.3.2),
 * checked by translating every rank to the world group; self-checking on
 * any number of ranks (needs none of them to communicate). With argument
 * "overlap" it makes an erroneous MPI_Group_range_incl call first. */
#include "dt.h"

static int n;
static MPI_Group world;

/* expect checks g holds exactly the world ranks want[0..k-1], in order. */
static void expect(MPI_Group g, const int *want, int k, const char *what) {
    int gs;
    OK(MPI_Group_size(g, &gs));
    CHECK(gs == k, "%s size %d want %d", what, gs, k);
    if (gs != k) return;
    int from[64], to[64];
    for (int i = 0; i < k; i++) from[i] = i;
    OK(MPI_Group_translate_ranks(g, k, from, world, to));
    for (int i = 0; i < k; i++) CHECK(to[i] == want[i], "%s [%d] = world %d, want %d", what, i, to[i], want[i]);
}

int main(int argc, char **argv) {
    start(&argc, &argv);
    n = size;
    OK(MPI_Comm_group(MPI_COMM_WORLD, &world));
    if (argc > 1 && !strcmp(argv[1], "overlap")) {
        /* Erroneous: rank 0 is in both ranges (the fatal handler names
         * the call). */
        int rg[2][3] = {{0, 0, 1}, {0, 0, 1}};
        MPI_Group bad;
        MPI_Group_range_incl(world, 2, rg, &bad);
    }
    MPI_Group a, b, u, x, d, e;
    int rev[64], evens[64], ne = 0;
    for (int i = 0; i < n; i++) rev[i] = n - 1 - i;
    for (int i = 0; i < n; i += 2) evens[ne++] = i;
    OK(MPI_Group_incl(world, n, rev, &a));
    expect(a, rev, n, "incl reversed");
    OK(MPI_Group_incl(world, ne, evens, &b));
    /* union: a's ranks, then b's not in a (none here). */
    OK(MPI_Group_union(b, a, &u));
    int want[64], k = 0;
    for (int i = 0; i < ne; i++) want[k++] = evens[i];
    for (int i = 0; i < n; i++) if (rev[i] % 2) want[k++] = rev[i];
    expect(u, want, k, "union(evens, reversed)");
    /* intersection: ordered as in the first group. */
    OK(MPI_Group_intersection(a, b, &x));
    k = 0;
    for (int i = 0; i < n; i++) if (rev[i] % 2 == 0) want[k++] = rev[i];
    expect(x, want, k, "intersection(reversed, evens)");
    /* difference: a's ranks not in b, in a's order. */
    OK(MPI_Group_difference(a, b, &d));
    k = 0;
    for (int i = 0; i < n; i++) if (rev[i] % 2) want[k++] = rev[i];
    expect(d, want, k, "difference(reversed, evens)");
    /* excl keeps the order of what remains. */
    int ex[1] = {0};
    OK(MPI_Group_excl(a, 1, ex, &e));
    expect(e, rev + 1, n - 1, "excl first of reversed");
    OK(MPI_Group_free(&e));
    /* range_incl with two ranges, one descending: the first half up, the
     * second half down. */
    if (n >= 2) {
        int rg[2][3] = {{0, n / 2 - 1, 1}, {n - 1, n / 2, -1}};
        OK(MPI_Group_range_incl(world, 2, rg, &e));
        k = 0;
        for (int i = 0; i < n / 2; i++) want[k++] = i;
        for (int i = n - 1; i >= n / 2; i--) want[k++] = i;
        expect(e, want, k, "range_incl two ranges");
        OK(MPI_Group_free(&e));
    }
    /* A stride past INT_MAX: (1, 1, INT_MAX) is rank 1 alone, and
     * (n-1, 0, INT_MIN) rank n-1 alone (the next step would overflow). */
    if (n >= 2) {
        int rg[2][3] = {{1, 1, 2147483647}, {n - 1, 0, -2147483647 - 1}};
        OK(MPI_Group_range_incl(world, 1, rg, &e));
        want[0] = 1;
        expect(e, want, 1, "range_incl with stride INT_MAX");
        OK(MPI_Group_free(&e));
        OK(MPI_Group_range_incl(world, 1, rg + 1, &e));
        want[0] = n - 1;
        expect(e, want, 1, "range_incl with stride INT_MIN");
        OK(MPI_Group_free(&e));
    }
    /* range_excl leaves the rest in order. */
    int rx[1][3] = {{n - 1, 0, -2}};
    OK(MPI_Group_range_excl(a, 1, rx, &e));
    k = 0;
    for (int i = 0; i < n; i++) if ((n - 1 - i) % 2) want[k++] = rev[i];
    expect(e, want, k, "range_excl of reversed");
    OK(MPI_Group_free(&e));
    /* compare */
    int res;
    OK(MPI_Group_compare(a, world, &res));
    CHECK(res == (n == 1 ? MPI_IDENT : MPI_SIMILAR), "compare reversed %d", res);
    OK(MPI_Group_compare(b, world, &res));
    CHECK(res == (n <= 1 ? MPI_IDENT : MPI_UNEQUAL), "compare evens %d", res);
    /* translate to a group that lacks some ranks */
    int from[64], to[64];
    for (int i = 0; i < n; i++) from[i] = i;
    OK(MPI_Group_translate_ranks(world, n, from, b, to));
    for (int i = 0; i < n; i++) CHECK(to[i] == (i % 2 ? MPI_UNDEFINED : i / 2), "translate %d -> %d", i, to[i]);
    OK(MPI_Group_translate_ranks(a, n, from, b, to));
    for (int i = 0; i < n; i++) CHECK(to[i] == (rev[i] % 2 ? MPI_UNDEFINED : rev[i] / 2), "translate reversed %d -> %d", i, to[i]);
    OK(MPI_Group_free(&a));
    OK(MPI_Group_free(&b));
    OK(MPI_Group_free(&u));
    OK(MPI_Group_free(&x));
    OK(MPI_Group_free(&d));
    OK(MPI_Group_free(&world));
    return finish("groups");
}
