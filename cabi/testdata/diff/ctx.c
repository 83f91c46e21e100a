/* ctx: message isolation between communicators, the largest tag, ordering
 * across wildcard and specific receives, Iprobe/Improbe loops; self-checking. */
#include "dt.h"

static void isolation(void) {
    MPI_Comm d, s;
    OK(MPI_Comm_dup(MPI_COMM_WORLD, &d));
    OK(MPI_Comm_split(MPI_COMM_WORLD, 0, rank, &s)); /* congruent to world */
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    int a = 1, b = 2, c = 3, x[3] = {0, 0, 0};
    /* Same source and tag on three communicators, received in reverse. */
    OK(MPI_Send(&a, 1, MPI_INT, next, 5, MPI_COMM_WORLD));
    OK(MPI_Send(&b, 1, MPI_INT, next, 5, d));
    OK(MPI_Send(&c, 1, MPI_INT, next, 5, s));
    MPI_Status st;
    OK(MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, s, &st));
    CHECK(st.MPI_SOURCE == prev && st.MPI_TAG == 5, "probe on split");
    OK(MPI_Recv(&x[2], 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, s, &st));
    OK(MPI_Recv(&x[1], 1, MPI_INT, prev, 5, d, &st));
    OK(MPI_Recv(&x[0], 1, MPI_INT, MPI_ANY_SOURCE, 5, MPI_COMM_WORLD, &st));
    CHECK(x[0] == 1 && x[1] == 2 && x[2] == 3, "isolation %d %d %d", x[0], x[1], x[2]);
    /* The largest tag. */
    int *ub, flag;
    OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &flag));
    int tag = *ub;
    OK(MPI_Sendrecv(&a, 1, MPI_INT, next, tag, &x[0], 1, MPI_INT, prev, tag, d, &st));
    CHECK(st.MPI_TAG == tag, "tag_ub tag %d", st.MPI_TAG);
    /* A wildcard receive posted before a specific one takes the first message. */
    if (size >= 2) {
        if (rank == 0) {
            for (int i = 0; i < 4; i++) OK(MPI_Send(&i, 1, MPI_INT, 1, 9, d));
        } else if (rank == 1) {
            MPI_Request r[4];
            int v[4];
            OK(MPI_Irecv(&v[0], 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, d, &r[0]));
            OK(MPI_Irecv(&v[1], 1, MPI_INT, 0, 9, d, &r[1]));
            OK(MPI_Irecv(&v[2], 1, MPI_INT, MPI_ANY_SOURCE, 9, d, &r[2]));
            OK(MPI_Irecv(&v[3], 1, MPI_INT, 0, MPI_ANY_TAG, d, &r[3]));
            OK(MPI_Waitall(4, r, MPI_STATUSES_IGNORE));
            for (int i = 0; i < 4; i++) CHECK(v[i] == i, "posted order v[%d] = %d", i, v[i]);
        }
    }
    /* Improbe loop. */
    if (size >= 2) {
        if (rank == 1) {
            double dv = 3.25;
            OK(MPI_Ssend(&dv, 1, MPI_DOUBLE, 0, 11, d));
        } else if (rank == 0) {
            int f = 0, guard = 0;
            MPI_Message m;
            while (!f && guard++ < 100000000) OK(MPI_Improbe(1, 11, d, &f, &m, &st));
            CHECK(f, "improbe never found");
            double dv;
            MPI_Request r;
            OK(MPI_Imrecv(&dv, 1, MPI_DOUBLE, &m, &r));
            OK(MPI_Wait(&r, &st));
            CHECK(dv == 3.25 && st.MPI_SOURCE == 1 && st.MPI_TAG == 11, "imrecv %g", dv);
            /* The matched message is gone. */
            OK(MPI_Iprobe(1, 11, d, &f, &st));
            CHECK(!f, "message still probed after mrecv");
        }
    }
    OK(MPI_Comm_free(&d));
    OK(MPI_Comm_free(&s));
}

static void selfcomm(void) {
    /* Point-to-point on MPI_COMM_SELF. */
    int a = 4, b = 0;
    MPI_Request r;
    OK(MPI_Isend(&a, 1, MPI_INT, 0, 1, MPI_COMM_SELF, &r));
    MPI_Status st;
    OK(MPI_Recv(&b, 1, MPI_INT, 0, 1, MPI_COMM_SELF, &st));
    OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    CHECK(b == 4 && st.MPI_SOURCE == 0, "self p2p");
    int f;
    OK(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_SELF, &f, &st));
    CHECK(!f, "self iprobe found a message");
    OK(MPI_Sendrecv(&a, 1, MPI_INT, 0, 2, &b, 1, MPI_INT, 0, 2, MPI_COMM_SELF, &st));
    int sz, rk;
    MPI_Comm_size(MPI_COMM_SELF, &sz);
    MPI_Comm_rank(MPI_COMM_SELF, &rk);
    CHECK(sz == 1 && rk == 0, "self size %d rank %d", sz, rk);
    MPI_Comm d;
    OK(MPI_Comm_dup(MPI_COMM_SELF, &d));
    int g[1];
    OK(MPI_Allgather(&rank, 1, MPI_INT, g, 1, MPI_INT, d));
    CHECK(g[0] == rank, "self dup allgather");
    OK(MPI_Comm_free(&d));
}

int main(int argc, char **argv) {
    start(&argc, &argv);
    isolation();
    selfcomm();
    return finish("ctx");
}
