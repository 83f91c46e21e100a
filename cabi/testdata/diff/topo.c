/* topo: Cartesian, graph and distributed-graph topologies and the
 * neighbourhood collectives; self-checking on any number of ranks. */
#include "dt.h"

/* best_split: of the non-increasing factorisations of n into k factors
 * (each <= cap), the one whose largest and smallest differ least; ties to
 * the one whose factors, read from the smallest up, are larger where they
 * first differ (17 3 2 1 before 17 6 1 1; 14 14 9 8 7 before 14 12 12 7 7);
 * by exhaustive search. f holds the factors so far. */
static void best_split(int n, int k, int cap, int *f, int depth, int *best, int *bspread) {
    if (k == 0) {
        if (n != 1) return;
        int spread = f[0] - f[depth - 1], up = 0;
        for (int i = depth - 1; i >= 0 && up == 0 && spread == *bspread; i--)
            up = f[i] - best[i];
        if (spread < *bspread || (spread == *bspread && up > 0)) {
            *bspread = spread;
            for (int i = 0; i < depth; i++) best[i] = f[i];
        }
        return;
    }
    for (int x = 1; x <= cap; x++) {
        if (n % x) continue;
        f[depth] = x;
        best_split(n / x, k - 1, x, f, depth + 1, best, bspread);
    }
}

/* MPI_Dims_create sets the dimensions "as close to each other as possible":
 * every n up to 300 over 1 to 4 dimensions against the exhaustive search. */
static void dims_balanced(void) {
    for (int k = 1; k <= 4; k++)
        for (int n = 1; n <= 300; n++) {
            int d[4] = {0, 0, 0, 0}, f[4], best[4], bspread = n + 1;
            OK(MPI_Dims_create(n, k, d));
            best_split(n, k, n, f, 0, best, &bspread);
            int same = 1;
            for (int i = 0; i < k; i++) same &= d[i] == best[i];
            CHECK(same, "dims %d/%d: got %d %d %d %d, want %d %d %d %d", n, k, d[0], k > 1 ? d[1] : 0,
                  k > 2 ? d[2] : 0, k > 3 ? d[3] : 0, best[0], k > 1 ? best[1] : 0, k > 2 ? best[2] : 0,
                  k > 3 ? best[3] : 0);
        }
}

static void dims(void) {
    int d[3] = {0, 0, 0};
    OK(MPI_Dims_create(12, 2, d));
    CHECK(d[0] == 4 && d[1] == 3, "dims 12/2: %d %d", d[0], d[1]);
    d[0] = 0; d[1] = 0; d[2] = 0;
    OK(MPI_Dims_create(30, 3, d));
    CHECK(d[0] == 5 && d[1] == 3 && d[2] == 2, "dims 30/3: %d %d %d", d[0], d[1], d[2]);
    d[0] = 0; d[1] = 2; d[2] = 0;
    OK(MPI_Dims_create(16, 3, d));
    CHECK(d[0] == 4 && d[1] == 2 && d[2] == 2, "dims 16 with fixed: %d %d %d", d[0], d[1], d[2]);
    d[0] = 0; d[1] = 0;
    OK(MPI_Dims_create(7, 2, d));
    CHECK(d[0] == 7 && d[1] == 1, "dims 7/2: %d %d", d[0], d[1]);
    d[0] = 0;
    OK(MPI_Dims_create(1, 1, d));
    CHECK(d[0] == 1, "dims 1");
    d[0] = 0; d[1] = 0;
    OK(MPI_Dims_create(72, 2, d)); /* not the 12 x 6 of placing prime factors largest first */
    CHECK(d[0] == 9 && d[1] == 8, "dims 72/2: %d %d", d[0], d[1]);
    d[0] = 0; d[1] = 0; d[2] = 0;
    OK(MPI_Dims_create(360, 3, d)); /* 9 x 8 x 5 is as spread; 10 x 6 x 6 has the larger minimum */
    CHECK(d[0] == 10 && d[1] == 6 && d[2] == 6, "dims 360/3: %d %d %d", d[0], d[1], d[2]);
    dims_balanced();
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    d[0] = 3; d[1] = 0;
    int rc = MPI_Dims_create(10, 2, d), cls = -1;
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_DIMS, "dims 10 with 3 fixed class %d", cls);
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
}

static void cart(void) {
    int d[2] = {0, 0}, per[2] = {1, 0};
    OK(MPI_Dims_create(size, 2, d));
    MPI_Comm c;
    OK(MPI_Cart_create(MPI_COMM_WORLD, 2, d, per, 0, &c));
    int st;
    OK(MPI_Topo_test(c, &st));
    CHECK(st == MPI_CART, "topo_test %d", st);
    OK(MPI_Topo_test(MPI_COMM_WORLD, &st));
    CHECK(st == MPI_UNDEFINED, "world topo_test %d", st);
    int nd;
    OK(MPI_Cartdim_get(c, &nd));
    CHECK(nd == 2, "cartdim %d", nd);
    int gd[2], gp[2], gc[2];
    OK(MPI_Cart_get(c, 2, gd, gp, gc));
    CHECK(gd[0] == d[0] && gd[1] == d[1] && gp[0] == 1 && gp[1] == 0, "cart_get");
    int coords[2];
    OK(MPI_Cart_coords(c, rank, 2, coords));
    CHECK(coords[0] == rank / d[1] && coords[1] == rank % d[1], "coords %d %d", coords[0], coords[1]);
    CHECK(gc[0] == coords[0] && gc[1] == coords[1], "cart_get coords");
    int r;
    OK(MPI_Cart_rank(c, coords, &r));
    CHECK(r == rank, "cart_rank %d", r);
    /* Periodic wrap in dimension 0. */
    int cc[2] = {coords[0] + d[0], coords[1]};
    OK(MPI_Cart_rank(c, cc, &r));
    CHECK(r == rank, "periodic cart_rank %d", r);
    cc[0] = -1;
    OK(MPI_Cart_rank(c, cc, &r));
    CHECK(r == (d[0] - 1) * d[1] + coords[1], "periodic -1 cart_rank %d", r);
    int src, dst;
    OK(MPI_Cart_shift(c, 0, 1, &src, &dst));
    CHECK(src == ((coords[0] - 1 + d[0]) % d[0]) * d[1] + coords[1] && dst == ((coords[0] + 1) % d[0]) * d[1] + coords[1], "shift 0: %d %d", src, dst);
    OK(MPI_Cart_shift(c, 1, 1, &src, &dst));
    CHECK(src == (coords[1] == 0 ? MPI_PROC_NULL : rank - 1) && dst == (coords[1] == d[1] - 1 ? MPI_PROC_NULL : rank + 1), "shift 1: %d %d", src, dst);
    OK(MPI_Cart_shift(c, 1, -1, &src, &dst));
    CHECK(dst == (coords[1] == 0 ? MPI_PROC_NULL : rank - 1), "shift 1 -1: %d %d", src, dst);
    /* Sub-grids: keep dimension 1 (rows). */
    int keep[2] = {0, 1};
    MPI_Comm row;
    OK(MPI_Cart_sub(c, keep, &row));
    int rs, rr;
    MPI_Comm_size(row, &rs);
    MPI_Comm_rank(row, &rr);
    CHECK(rs == d[1] && rr == coords[1], "cart_sub size %d rank %d", rs, rr);
    OK(MPI_Cartdim_get(row, &nd));
    CHECK(nd == 1, "sub cartdim %d", nd);
    int sum;
    OK(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, row));
    int e = 0;
    for (int j = 0; j < d[1]; j++) e += coords[0] * d[1] + j;
    CHECK(sum == e, "row sum %d want %d", sum, e);
    OK(MPI_Comm_free(&row));
    keep[0] = 0; keep[1] = 0;
    OK(MPI_Cart_sub(c, keep, &row));
    MPI_Comm_size(row, &rs);
    CHECK(rs == 1, "cart_sub of none size %d", rs);
    OK(MPI_Comm_free(&row));
    /* Neighbour collectives on the grid. Order: dim 0 (-1,+1), dim 1 (-1,+1). */
    int nb[4], sbuf[4], rbuf[4];
    OK(MPI_Cart_shift(c, 0, 1, &nb[0], &nb[1]));
    OK(MPI_Cart_shift(c, 1, 1, &nb[2], &nb[3]));
    for (int i = 0; i < 4; i++) { sbuf[i] = rank * 10 + i; rbuf[i] = -1; }
    OK(MPI_Neighbor_alltoall(sbuf, 1, MPI_INT, rbuf, 1, MPI_INT, c));
    for (int i = 0; i < 4; i++) {
        /* What neighbour i sent towards me is its block i^1. */
        int want = nb[i] == MPI_PROC_NULL ? -1 : nb[i] * 10 + (i ^ 1);
        CHECK(rbuf[i] == want, "neighbor_alltoall i %d: %d want %d", i, rbuf[i], want);
    }
    for (int i = 0; i < 4; i++) rbuf[i] = -1;
    OK(MPI_Neighbor_allgather(&rank, 1, MPI_INT, rbuf, 1, MPI_INT, c));
    for (int i = 0; i < 4; i++) CHECK(rbuf[i] == (nb[i] == MPI_PROC_NULL ? -1 : nb[i]), "neighbor_allgather i %d: %d", i, rbuf[i]);
    MPI_Request rq;
    for (int i = 0; i < 4; i++) rbuf[i] = -1;
    OK(MPI_Ineighbor_allgather(&rank, 1, MPI_INT, rbuf, 1, MPI_INT, c, &rq));
    OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    for (int i = 0; i < 4; i++) CHECK(rbuf[i] == (nb[i] == MPI_PROC_NULL ? -1 : nb[i]), "ineighbor_allgather i %d: %d", i, rbuf[i]);
    OK(MPI_Comm_free(&c));
    /* Cart_create with fewer processes than ranks. */
    int one[1] = {size > 1 ? size - 1 : 1}, p0[1] = {0};
    OK(MPI_Cart_create(MPI_COMM_WORLD, 1, one, p0, 0, &c));
    if (size > 1 && rank == size - 1) CHECK(c == MPI_COMM_NULL, "extra rank got a cart communicator");
    else { CHECK(c != MPI_COMM_NULL, "cart communicator missing"); OK(MPI_Comm_free(&c)); }
    /* Cart_map */
    OK(MPI_Cart_map(MPI_COMM_WORLD, 1, one, p0, &r));
    /* Open MPI gives the extra rank its rank; the standard MPI_UNDEFINED. */
    CHECK(size > 1 && rank == size - 1 ? r == MPI_UNDEFINED : r >= 0 && r < one[0], "cart_map %d", r);
}

static void graph(void) {
    /* A ring with a chord from 0 to every other node. */
    int n = size, index[16], edges[64], ne = 0;
    for (int i = 0; i < n; i++) {
        if (n > 1) { edges[ne++] = (i + 1) % n; if (n > 2) edges[ne++] = (i + n - 1) % n; }
        if (i == 0) for (int j = 2; j < n - 1; j++) edges[ne++] = j;
        else if (i >= 2 && i < n - 1) edges[ne++] = 0;
        index[i] = ne;
    }
    MPI_Comm g;
    OK(MPI_Graph_create(MPI_COMM_WORLD, n, index, edges, 0, &g));
    int st;
    OK(MPI_Topo_test(g, &st));
    CHECK(st == MPI_GRAPH, "graph topo_test %d", st);
    int nn, nedges;
    OK(MPI_Graphdims_get(g, &nn, &nedges));
    CHECK(nn == n && nedges == ne, "graphdims %d %d", nn, nedges);
    int gi[16], ge[64];
    OK(MPI_Graph_get(g, 16, 64, gi, ge));
    for (int i = 0; i < n; i++) CHECK(gi[i] == index[i], "graph_get index %d", i);
    for (int i = 0; i < ne; i++) CHECK(ge[i] == edges[i], "graph_get edge %d", i);
    /* A duplicate keeps the graph (it lost it: MPI_UNDEFINED). */
    MPI_Comm dup;
    OK(MPI_Comm_dup(g, &dup));
    OK(MPI_Topo_test(dup, &st));
    CHECK(st == MPI_GRAPH, "dup of a graph: topo_test %d", st);
    OK(MPI_Graphdims_get(dup, &nn, &nedges));
    CHECK(nn == n && nedges == ne, "dup of a graph: graphdims %d %d", nn, nedges);
    OK(MPI_Comm_free(&dup));
    int cnt, nbrs[16];
    OK(MPI_Graph_neighbors_count(g, rank, &cnt));
    int first = rank == 0 ? 0 : index[rank - 1];
    CHECK(cnt == index[rank] - first, "neighbors_count %d", cnt);
    OK(MPI_Graph_neighbors(g, rank, 16, nbrs));
    for (int i = 0; i < cnt; i++) CHECK(nbrs[i] == edges[first + i], "neighbors %d", i);
    int *rb = malloc((cnt + 1) * sizeof(int));
    OK(MPI_Neighbor_allgather(&rank, 1, MPI_INT, rb, 1, MPI_INT, g));
    for (int i = 0; i < cnt; i++) CHECK(rb[i] == nbrs[i], "graph neighbor_allgather %d: %d", i, rb[i]);
    /* Neighbor_alltoallv: send i+1 ints to neighbour i. */
    int sc[16], sd[16], rc[16], rd[16], sb[256], rbb[256], so = 0, ro = 0;
    for (int i = 0; i < cnt; i++) {
        sc[i] = 1 + (nbrs[i] + rank) % 2; sd[i] = so; so += sc[i];
        rc[i] = sc[i]; rd[i] = ro; ro += rc[i];
        for (int k = 0; k < sc[i]; k++) sb[sd[i] + k] = rank * 100 + nbrs[i] * 10 + k;
    }
    OK(MPI_Neighbor_alltoallv(sb, sc, sd, MPI_INT, rbb, rc, rd, MPI_INT, g));
    for (int i = 0; i < cnt; i++) for (int k = 0; k < rc[i]; k++)
        CHECK(rbb[rd[i] + k] == nbrs[i] * 100 + rank * 10 + k, "graph alltoallv i %d k %d: %d", i, k, rbb[rd[i] + k]);
    free(rb);
    OK(MPI_Comm_free(&g));
}

static void distgraph(void) {
    /* Each rank sends to rank+1 and rank+2 (mod size), weights = distance. */
    int outs[2], ins[2], ow[2], iw[2], no = size >= 3 ? 2 : (size == 2 ? 1 : 0);
    for (int i = 0; i < no; i++) {
        outs[i] = (rank + i + 1) % size; ow[i] = i + 1;
        ins[i] = (rank - i - 1 + size) % size; iw[i] = i + 1;
    }
    MPI_Comm g;
    OK(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, no, ins, iw, no, outs, ow, MPI_INFO_NULL, 0, &g));
    int st, indeg, outdeg, weighted;
    OK(MPI_Topo_test(g, &st));
    CHECK(st == MPI_DIST_GRAPH, "dist topo_test %d", st);
    MPI_Comm dup;
    OK(MPI_Comm_dup(g, &dup));
    OK(MPI_Topo_test(dup, &st));
    CHECK(st == MPI_DIST_GRAPH, "dup of a distributed graph: topo_test %d", st);
    OK(MPI_Comm_free(&dup));
    OK(MPI_Dist_graph_neighbors_count(g, &indeg, &outdeg, &weighted));
    CHECK(indeg == no && outdeg == no && weighted, "dist counts %d %d %d", indeg, outdeg, weighted);
    int gs[2], gsw[2], gd[2], gdw[2];
    OK(MPI_Dist_graph_neighbors(g, 2, gs, gsw, 2, gd, gdw));
    for (int i = 0; i < no; i++) CHECK(gs[i] == ins[i] && gsw[i] == iw[i] && gd[i] == outs[i] && gdw[i] == ow[i], "dist neighbors %d", i);
    int sb[2], rb[2] = {-1, -1};
    for (int i = 0; i < no; i++) sb[i] = rank * 10 + i;
    OK(MPI_Neighbor_alltoall(sb, 1, MPI_INT, rb, 1, MPI_INT, g));
    for (int i = 0; i < no; i++) CHECK(rb[i] == ins[i] * 10 + i, "dist alltoall %d: %d", i, rb[i]);
    /* Neighbor_alltoallw with byte displacements. */
    int wc[2] = {1, 1};
    MPI_Aint wsd[2] = {0, sizeof(int)}, wrd[2] = {sizeof(int), 0};
    MPI_Datatype wt[2] = {MPI_INT, MPI_INT};
    rb[0] = rb[1] = -1;
    OK(MPI_Neighbor_alltoallw(sb, wc, wsd, wt, rb, wc, wrd, wt, g));
    for (int i = 0; i < no; i++) CHECK(rb[1 - i] == ins[i] * 10 + i || no < 2, "dist alltoallw %d: %d", i, rb[1 - i]);
    MPI_Request rq;
    OK(MPI_Ineighbor_alltoall(sb, 1, MPI_INT, rb, 1, MPI_INT, g, &rq));
    OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    for (int i = 0; i < no; i++) CHECK(rb[i] == ins[i] * 10 + i, "dist ialltoall %d: %d", i, rb[i]);
    OK(MPI_Comm_free(&g));
    /* Dist_graph_create: rank 0 gives every edge i -> i+1 (a chain). */
    int src[16], deg[16], dst[16];
    int n = 0;
    if (rank == 0)
        for (int i = 0; i + 1 < size; i++) { src[n] = i; deg[n] = 1; dst[n] = i + 1; n++; }
    OK(MPI_Dist_graph_create(MPI_COMM_WORLD, n, src, deg, dst, MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &g));
    OK(MPI_Dist_graph_neighbors_count(g, &indeg, &outdeg, &weighted));
    CHECK(indeg == (rank > 0) && outdeg == (rank + 1 < size) && !weighted, "dist create counts %d %d %d", indeg, outdeg, weighted);
    int x = -1;
    OK(MPI_Neighbor_allgather(&rank, 1, MPI_INT, &x, 1, MPI_INT, g));
    if (rank > 0) CHECK(x == rank - 1, "chain allgather %d", x);
    OK(MPI_Comm_free(&g));
}

int main(int argc, char **argv) {
    start(&argc, &argv);
    dims();
    cart();
    graph();
    distgraph();
    return finish("topo");
}
