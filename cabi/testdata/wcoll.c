/* wcoll: MPI_Alltoallw/Ialltoallw with a datatype per peer (vectors and
 * contiguous, byte displacements, MPI_IN_PLACE), MPI_Request_get_status and
 * its array forms, MPI_Comm_create_group, graph, distributed-graph and
 * Cartesian topologies and the neighbourhood collectives on each (blocking
 * and non-blocking, derived types), point-to-point type signatures. Prints "wcoll ok <rank>". */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
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

/* Rank r sends j+1 ints r*1000+j*10+k to j: to an even j contiguous, to an
 * odd j as one column (stride 2) of a vector type, each from its own row of
 * sbuf at a byte displacement. It receives r+1 ints from each i: from an
 * even i as MPI_INT, from an odd i as one contiguous type of r+1 ints. */
static void alltoallw(int nonblocking) {
    int W = 2 * (size + 1);
    int *sbuf = calloc((size_t)size * W, sizeof(int)), *rbuf = malloc((size_t)size * W * sizeof(int));
    int *sc = malloc(size * sizeof(int)), *sd = malloc(size * sizeof(int));
    int *rc = malloc(size * sizeof(int)), *rd = malloc(size * sizeof(int));
    MPI_Datatype *st = malloc(size * sizeof(MPI_Datatype)), *rt = malloc(size * sizeof(MPI_Datatype));
    for (int i = 0; i < size * W; i++)
        rbuf[i] = -1;
    MPI_Datatype mine;
    OK(MPI_Type_contiguous(rank + 1, MPI_INT, &mine));
    OK(MPI_Type_commit(&mine));
    for (int j = 0; j < size; j++) {
        int n = j + 1;
        sd[j] = j * W * (int)sizeof(int);
        rd[j] = j * W * (int)sizeof(int);
        if (j % 2 == 0) {
            for (int k = 0; k < n; k++)
                sbuf[j * W + k] = rank * 1000 + j * 10 + k;
            sc[j] = n;
            st[j] = MPI_INT;
            rc[j] = rank + 1;
            rt[j] = MPI_INT;
        } else {
            for (int k = 0; k < n; k++)
                sbuf[j * W + 2 * k] = rank * 1000 + j * 10 + k;
            OK(MPI_Type_vector(n, 1, 2, MPI_INT, &st[j]));
            OK(MPI_Type_commit(&st[j]));
            sc[j] = 1;
            rc[j] = 1;
            rt[j] = mine;
        }
    }
    if (nonblocking) {
        MPI_Request req;
        OK(MPI_Ialltoallw(sbuf, sc, sd, st, rbuf, rc, rd, rt, MPI_COMM_WORLD, &req));
        OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
        CHECK(req == MPI_REQUEST_NULL, "request not freed");
    } else {
        OK(MPI_Alltoallw(sbuf, sc, sd, st, rbuf, rc, rd, rt, MPI_COMM_WORLD));
    }
    for (int i = 0; i < size; i++) {
        for (int k = 0; k < rank + 1; k++)
            CHECK(rbuf[i * W + k] == i * 1000 + rank * 10 + k, "from %d item %d: got %d", i, k, rbuf[i * W + k]);
        CHECK(rbuf[i * W + rank + 1] == -1, "from %d: wrote past the block", i);
    }
    for (int j = 1; j < size; j += 2)
        OK(MPI_Type_free(&st[j]));
    OK(MPI_Type_free(&mine));

    /* In place: 2 ints to and from everyone, from and into recvbuf. */
    for (int j = 0; j < size; j++) {
        rbuf[2 * j] = rank * 1000 + j * 10;
        rbuf[2 * j + 1] = rank * 1000 + j * 10 + 1;
        rc[j] = 2;
        rd[j] = 2 * j * (int)sizeof(int);
        rt[j] = MPI_INT;
    }
    OK(MPI_Alltoallw(MPI_IN_PLACE, NULL, NULL, NULL, rbuf, rc, rd, rt, MPI_COMM_WORLD));
    for (int i = 0; i < size; i++)
        for (int k = 0; k < 2; k++)
            CHECK(rbuf[2 * i + k] == i * 1000 + rank * 10 + k, "in place from %d: got %d", i, rbuf[2 * i + k]);
    /* The large-count form: one int to and from everyone. */
    MPI_Count *cc = malloc(size * sizeof(MPI_Count));
    MPI_Aint *sa = malloc(size * sizeof(MPI_Aint)), *ra = malloc(size * sizeof(MPI_Aint));
    for (int j = 0; j < size; j++) {
        cc[j] = 1;
        sa[j] = ra[j] = j * (MPI_Aint)sizeof(int);
        sbuf[j] = rank * 100 + j;
        rbuf[j] = -1;
        rt[j] = MPI_INT;
    }
    if (nonblocking) {
        MPI_Request req;
        OK(MPI_Ialltoallw_c(sbuf, cc, sa, rt, rbuf, cc, ra, rt, MPI_COMM_WORLD, &req));
        OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    } else {
        OK(MPI_Alltoallw_c(sbuf, cc, sa, rt, rbuf, cc, ra, rt, MPI_COMM_WORLD));
    }
    for (int i = 0; i < size; i++)
        CHECK(rbuf[i] == i * 100 + rank, "_c from %d: got %d", i, rbuf[i]);
    free(cc), free(sa), free(ra);
    free(sbuf), free(rbuf), free(sc), free(sd), free(rc), free(rd), free(st), free(rt);
}

/* MPI_Request_get_status leaves the request active; Wait then completes it. */
static void get_status(MPI_Comm comm) {
    int me, n, flag = 0, out = -1, x = 0, v = 42 + rank;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &n);
    MPI_Status st;
    MPI_Request r[2];
    OK(MPI_Irecv(&x, 1, MPI_INT, me, 7, comm, &r[0]));
    OK(MPI_Request_get_status(r[0], &flag, &st));
    CHECK(flag == 0, "get_status says an unmatched receive finished");
    OK(MPI_Isend(&v, 1, MPI_INT, me, 7, comm, &r[1]));
    while (!flag)
        OK(MPI_Request_get_status(r[0], &flag, &st));
    CHECK(st.MPI_SOURCE == me && st.MPI_TAG == 7, "status source %d tag %d", st.MPI_SOURCE, st.MPI_TAG);
    CHECK(x == v, "received %d, want %d", x, v);
    CHECK(r[0] != MPI_REQUEST_NULL, "get_status freed the request");
    OK(MPI_Request_get_status(r[0], &flag, MPI_STATUS_IGNORE)); /* again: still there */
    CHECK(flag == 1, "second get_status");
    int all = 0;
    while (!all)
        OK(MPI_Request_get_status_all(2, r, &all, MPI_STATUSES_IGNORE));
    int idx = -1;
    OK(MPI_Request_get_status_any(2, r, &idx, &flag, &st));
    CHECK(flag == 1 && (idx == 0 || idx == 1), "any: flag %d index %d", flag, idx);
    int indices[2];
    MPI_Status sts[2];
    OK(MPI_Request_get_status_some(2, r, &out, indices, sts));
    CHECK(out == 2, "some: outcount %d", out);
    CHECK(r[0] != MPI_REQUEST_NULL && r[1] != MPI_REQUEST_NULL, "the array forms freed requests");
    OK(MPI_Waitall(2, r, MPI_STATUSES_IGNORE));
    CHECK(r[0] == MPI_REQUEST_NULL && r[1] == MPI_REQUEST_NULL, "Waitall left requests");
    /* A null request: flag true, empty status; no active ones: undefined. */
    OK(MPI_Request_get_status(MPI_REQUEST_NULL, &flag, &st));
    CHECK(flag == 1 && st.MPI_SOURCE == MPI_ANY_SOURCE && st.MPI_TAG == MPI_ANY_TAG, "null request");
    OK(MPI_Request_get_status_some(2, r, &out, indices, sts));
    CHECK(out == MPI_UNDEFINED, "some of nulls: %d", out);
    OK(MPI_Request_get_status_any(2, r, &idx, &flag, &st));
    CHECK(flag == 1 && idx == MPI_UNDEFINED, "any of nulls: flag %d index %d", flag, idx);
    /* A derived receive type is unpacked when get_status first sees it. */
    double col[6] = {0}, src[3] = {1.5, 2.5, 3.5};
    MPI_Datatype vec;
    OK(MPI_Type_vector(3, 1, 2, MPI_DOUBLE, &vec));
    OK(MPI_Type_commit(&vec));
    OK(MPI_Irecv(col, 1, vec, me, 8, comm, &r[0]));
    OK(MPI_Send(src, 3, MPI_DOUBLE, me, 8, comm));
    flag = 0;
    while (!flag)
        OK(MPI_Request_get_status(r[0], &flag, MPI_STATUS_IGNORE));
    CHECK(col[0] == 1.5 && col[2] == 2.5 && col[4] == 3.5 && col[1] == 0, "unpacked %g %g %g", col[0], col[2], col[4]);
    OK(MPI_Wait(&r[0], MPI_STATUS_IGNORE));
    OK(MPI_Type_free(&vec));
}

static void create_group(void) {
    MPI_Group world, rev, self;
    MPI_Comm c;
    int r, n;
    OK(MPI_Comm_group(MPI_COMM_WORLD, &world));
    int *ranks = malloc(size * sizeof(int));
    for (int i = 0; i < size; i++)
        ranks[i] = size - 1 - i;
    OK(MPI_Group_incl(world, size, ranks, &rev));
    OK(MPI_Comm_create_group(MPI_COMM_WORLD, rev, 5, &c));
    OK(MPI_Comm_rank(c, &r));
    OK(MPI_Comm_size(c, &n));
    CHECK(r == size - 1 - rank && n == size, "reversed: rank %d size %d", r, n);
    int sum = 0;
    OK(MPI_Allreduce(&r, &sum, 1, MPI_INT, MPI_SUM, c));
    CHECK(sum == size * (size - 1) / 2, "sum %d", sum);
    OK(MPI_Comm_free(&c));
    /* Only the caller: called by each rank alone. */
    OK(MPI_Group_incl(world, 1, &rank, &self));
    OK(MPI_Comm_create_group(MPI_COMM_WORLD, self, 6, &c));
    OK(MPI_Comm_size(c, &n));
    CHECK(n == 1, "self group: size %d", n);
    OK(MPI_Comm_free(&c));
    if (size >= 3 && rank < 2) { /* a strict subset of two: the others do not call */
        MPI_Group two;
        int pair[2] = {0, 1};
        OK(MPI_Group_incl(world, 2, pair, &two));
        OK(MPI_Comm_create_group(MPI_COMM_WORLD, two, 7, &c));
        OK(MPI_Comm_size(c, &n));
        CHECK(n == 2, "subset: size %d", n);
        OK(MPI_Comm_free(&c));
        OK(MPI_Group_free(&two));
    }
    OK(MPI_Group_free(&rev));
    OK(MPI_Group_free(&self));
    OK(MPI_Group_free(&world));
    free(ranks);
}

/* expected is the index, in source s's destination list, of the block s
 * sends that lands in my slot k: the m-th edge s -> me, where m counts
 * the slots before k that also come from s. */
static int expected(const int *ins, int k, const int *sdests, int sdeg) {
    int m = 0;
    for (int i = 0; i < k; i++)
        m += ins[i] == ins[k];
    for (int e = 0; e < sdeg; e++)
        if (sdests[e] == rank && m-- == 0)
            return e;
    return -99;
}

/* A ring as a graph: neighbours left, right. */
static void graph(void) {
    int *index = malloc(size * sizeof(int)), *edges = malloc(2 * size * sizeof(int));
    for (int r = 0; r < size; r++) {
        index[r] = 2 * (r + 1);
        edges[2 * r] = (r + size - 1) % size;
        edges[2 * r + 1] = (r + 1) % size;
    }
    MPI_Comm g;
    OK(MPI_Graph_create(MPI_COMM_WORLD, size, index, edges, 0, &g));
    int status, nn, ne, cnt, nb[2], gi[64], ge[128];
    OK(MPI_Topo_test(g, &status));
    CHECK(status == MPI_GRAPH, "topo %d", status);
    OK(MPI_Graphdims_get(g, &nn, &ne));
    CHECK(nn == size && ne == 2 * size, "dims %d %d", nn, ne);
    OK(MPI_Graph_get(g, 64, 128, gi, ge));
    for (int r = 0; r < size && r < 64; r++)
        CHECK(gi[r] == index[r] && ge[2 * r] == edges[2 * r] && ge[2 * r + 1] == edges[2 * r + 1], "graph_get %d", r);
    OK(MPI_Graph_neighbors_count(g, rank, &cnt));
    CHECK(cnt == 2, "count %d", cnt);
    OK(MPI_Graph_neighbors(g, rank, 2, nb));
    CHECK(nb[0] == edges[2 * rank] && nb[1] == edges[2 * rank + 1], "neighbours %d %d", nb[0], nb[1]);
    int got[2] = {-1, -1};
    OK(MPI_Neighbor_allgather(&rank, 1, MPI_INT, got, 1, MPI_INT, g));
    CHECK(got[0] == nb[0] && got[1] == nb[1], "allgather %d %d", got[0], got[1]);
    int send[2] = {rank * 100, rank * 100 + 1};
    MPI_Request req;
    OK(MPI_Ineighbor_alltoall(send, 1, MPI_INT, got, 1, MPI_INT, g, &req));
    OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    for (int k = 0; k < 2; k++) {
        int s = nb[k], e = expected(nb, k, &edges[2 * s], 2);
        CHECK(got[k] == s * 100 + e, "alltoall slot %d from %d: got %d want %d", k, s, got[k], s * 100 + e);
    }
    /* Allgatherv into reversed slots. */
    int v[4] = {-1, -1, -1, -1}, rc2[2] = {1, 1}, disp[2] = {3, 0};
    OK(MPI_Neighbor_allgatherv(&rank, 1, MPI_INT, v, rc2, disp, MPI_INT, g));
    CHECK(v[3] == nb[0] && v[0] == nb[1] && v[1] == -1, "allgatherv %d %d", v[3], v[0]);
    OK(MPI_Comm_free(&g));
    free(index), free(edges);
}

/* Sources r+1, r+2; destinations r-1, r-2 (mod size), weighted; then an
 * alltoallv where the block to destination k has k+1 ints, and an
 * alltoallw sending the blocks as a strided vector. */
static void dist_graph(void) {
    int src[2] = {(rank + 1) % size, (rank + 2) % size}, dst[2] = {(rank + size - 1) % size, (rank + size - 2) % size};
    int sw[2] = {5, 6}, dw[2] = {7, 8};
    MPI_Comm g;
    OK(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, src, sw, 2, dst, dw, MPI_INFO_NULL, 0, &g));
    int status, in, out, weighted, s2[2], w2[2], d2[2], x2[2];
    OK(MPI_Topo_test(g, &status));
    CHECK(status == MPI_DIST_GRAPH, "topo %d", status);
    OK(MPI_Dist_graph_neighbors_count(g, &in, &out, &weighted));
    CHECK(in == 2 && out == 2 && weighted, "counts %d %d %d", in, out, weighted);
    OK(MPI_Dist_graph_neighbors(g, 2, s2, w2, 2, d2, x2));
    CHECK(s2[0] == src[0] && s2[1] == src[1] && w2[1] == 6 && d2[1] == dst[1] && x2[0] == 7, "neighbours");
    int send[3] = {rank * 10, rank * 10 + 1, rank * 10 + 1}, sc[2] = {1, 2}, sd[2] = {0, 1};
    int got[4] = {-1, -1, -1, -1}, rc[2], rd[2] = {0, 2};
    /* The source s's dests are s-1, s-2: I am its block e, of e+1 ints. */
    int es[2];
    for (int k = 0; k < 2; k++) {
        int s = src[k], sdst[2] = {(s + size - 1) % size, (s + size - 2) % size};
        es[k] = expected(src, k, sdst, 2);
        rc[k] = es[k] + 1;
    }
    OK(MPI_Neighbor_alltoallv(send, sc, sd, MPI_INT, got, rc, rd, MPI_INT, g));
    for (int k = 0; k < 2; k++)
        for (int i = 0; i < rc[k]; i++)
            CHECK(got[rd[k] + i] == src[k] * 10 + es[k], "alltoallv slot %d item %d: %d", k, i, got[rd[k] + i]);
    /* w: each block is 2 ints taken with stride 2 (a vector), received
     * contiguous, at byte displacements. */
    int wsend[8], wgot[4] = {-1, -1, -1, -1}, wc[2] = {1, 1}, wrc[2] = {2, 2};
    for (int i = 0; i < 8; i++)
        wsend[i] = rank * 100 + i;
    MPI_Aint wsd[2] = {0, 4 * sizeof(int)}, wrd[2] = {0, 2 * sizeof(int)};
    MPI_Datatype vec, ts[2], tr[2] = {MPI_INT, MPI_INT};
    OK(MPI_Type_vector(2, 1, 2, MPI_INT, &vec));
    OK(MPI_Type_commit(&vec));
    ts[0] = ts[1] = vec;
    MPI_Request req;
    OK(MPI_Ineighbor_alltoallw(wsend, wc, wsd, ts, wgot, wrc, wrd, tr, g, &req));
    OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    for (int k = 0; k < 2; k++)
        for (int i = 0; i < 2; i++)
            CHECK(wgot[2 * k + i] == src[k] * 100 + 4 * es[k] + 2 * i, "alltoallw slot %d item %d: %d", k, i,
                  wgot[2 * k + i]);
    OK(MPI_Type_free(&vec));
    OK(MPI_Comm_free(&g));

    /* Dist_graph_create: rank 0 gives the whole ring r -> r+1. */
    int n = rank == 0 ? size : 0;
    int *srcs = malloc(size * sizeof(int)), *deg = malloc(size * sizeof(int)), *dsts = malloc(size * sizeof(int));
    for (int r = 0; r < size; r++)
        srcs[r] = r, deg[r] = 1, dsts[r] = (r + 1) % size;
    OK(MPI_Dist_graph_create(MPI_COMM_WORLD, n, srcs, deg, dsts, MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &g));
    OK(MPI_Dist_graph_neighbors_count(g, &in, &out, &weighted));
    CHECK(in == 1 && out == 1 && !weighted, "ring counts %d %d %d", in, out, weighted);
    OK(MPI_Dist_graph_neighbors(g, 1, s2, MPI_UNWEIGHTED, 1, d2, MPI_UNWEIGHTED));
    CHECK(s2[0] == (rank + size - 1) % size && d2[0] == (rank + 1) % size, "ring %d %d", s2[0], d2[0]);
    int left = -1;
    OK(MPI_Ineighbor_allgather(&rank, 1, MPI_INT, &left, 1, MPI_INT, g, &req));
    OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    CHECK(left == (rank + size - 1) % size, "ring allgather %d", left);
    OK(MPI_Comm_free(&g));
    free(srcs), free(deg), free(dsts);
}

/* A 2-D grid, periodic in dimension 0 only: what goes to the destination
 * of dimension d arrives in the receiver's source block of d. */
static void cart(void) {
    int dims[2] = {0, 0}, periods[2] = {1, 0};
    OK(MPI_Dims_create(size, 2, dims));
    MPI_Comm c;
    OK(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &c));
    int nb[4];
    for (int d = 0; d < 2; d++)
        OK(MPI_Cart_shift(c, d, 1, &nb[2 * d], &nb[2 * d + 1]));
    int got[4] = {-1, -1, -1, -1}, send[4];
    OK(MPI_Neighbor_allgather(&rank, 1, MPI_INT, got, 1, MPI_INT, c));
    for (int k = 0; k < 4; k++)
        CHECK(got[k] == (nb[k] == MPI_PROC_NULL ? -1 : nb[k]), "cart allgather slot %d: %d (neighbour %d)", k, got[k],
              nb[k]);
    for (int k = 0; k < 4; k++)
        send[k] = rank * 100 + k, got[k] = -1;
    MPI_Request req;
    OK(MPI_Ineighbor_alltoall(send, 1, MPI_INT, got, 1, MPI_INT, c, &req));
    OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    for (int k = 0; k < 4; k++) {
        int want = nb[k] == MPI_PROC_NULL ? -1 : nb[k] * 100 + (k ^ 1);
        CHECK(got[k] == want, "cart alltoall slot %d: %d, want %d", k, got[k], want);
    }
    OK(MPI_Comm_free(&c));
    /* Without a topology: MPI_ERR_TOPOLOGY. */
    int rc = MPI_Neighbor_allgather(&rank, 1, MPI_INT, got, 1, MPI_INT, MPI_COMM_WORLD);
    CHECK(rc == MPI_ERR_TOPOLOGY, "no topology: rc %d", rc);
}

/* Point-to-point type signatures (through the runtime: 2 ranks or more):
 * doubles into ints of the same byte length is MPI_ERR_TYPE on both sides
 * (a synchronous send, which is never buffered, so the sender hears of
 * it); a vector of 4 doubles into 4 contiguous doubles, doubles into
 * MPI_BYTE and MPI_INT into MPI_INT32_T are accepted. */
static void signatures(void) {
    if (size < 2 || rank > 1)
        return;
    int peer = 1 - rank, rc, cls;
    double d[8] = {1, 2, 3, 4, 5, 6, 7, 8}, got[4] = {0};
    int ints[4];
    MPI_Status st;
    if (rank == 0) {
        rc = MPI_Ssend(d, 2, MPI_DOUBLE, peer, 40, MPI_COMM_WORLD);
        MPI_Error_class(rc, &cls);
        CHECK(cls == MPI_ERR_TYPE, "Ssend of doubles into ints: rc %d class %d", rc, cls);
    } else {
        rc = MPI_Recv(ints, 4, MPI_INT, peer, 40, MPI_COMM_WORLD, &st);
        MPI_Error_class(rc, &cls);
        CHECK(cls == MPI_ERR_TYPE, "Recv of doubles into ints: rc %d class %d", rc, cls);
    }
    MPI_Datatype vec;
    OK(MPI_Type_vector(4, 1, 2, MPI_DOUBLE, &vec));
    OK(MPI_Type_commit(&vec));
    if (rank == 0) {
        OK(MPI_Send(d, 1, vec, peer, 41, MPI_COMM_WORLD));
        OK(MPI_Send(d, 2, MPI_DOUBLE, peer, 42, MPI_COMM_WORLD));
        int x = 7;
        OK(MPI_Send(&x, 1, MPI_INT, peer, 43, MPI_COMM_WORLD));
    } else {
        OK(MPI_Recv(got, 4, MPI_DOUBLE, peer, 41, MPI_COMM_WORLD, &st));
        CHECK(got[0] == 1 && got[1] == 3 && got[2] == 5 && got[3] == 7, "vector: %g %g %g %g", got[0], got[1], got[2],
              got[3]);
        char bytes[16];
        OK(MPI_Recv(bytes, 16, MPI_BYTE, peer, 42, MPI_COMM_WORLD, &st));
        double back[2];
        memcpy(back, bytes, 16);
        CHECK(back[0] == 1 && back[1] == 2, "bytes: %g %g", back[0], back[1]);
        int32_t y = 0;
        OK(MPI_Recv(&y, 1, MPI_INT32_T, peer, 43, MPI_COMM_WORLD, &st));
        CHECK(y == 7, "int32_t: %d", (int)y);
    }
    OK(MPI_Type_free(&vec));
}

int main(int argc, char **argv) {
    OK(MPI_Init(&argc, &argv));
    OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    if (argc > 1 && strcmp(argv[1], "sigfatal") == 0) { /* under MPI_ERRORS_ARE_FATAL: the message */
        double d[2] = {1, 2};
        int ints[4];
        if (rank == 0)
            MPI_Send(d, 2, MPI_DOUBLE, 1, 40, MPI_COMM_WORLD);
        else if (rank == 1)
            MPI_Recv(ints, 4, MPI_INT, 0, 40, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Finalize();
        printf("not reached %d\n", rank);
        return 0;
    }
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    alltoallw(0);
    alltoallw(1);
    get_status(MPI_COMM_WORLD);
    get_status(MPI_COMM_SELF);
    create_group();
    graph();
    dist_graph();
    cart();
    signatures();
    OK(MPI_Finalize());
    printf("wcoll ok %d\n", rank);
    return 0;
}
