/* p2pstd: point-to-point behaviours that MPICH's test suite expects and
 * bcsmpi got wrong, one section per defect, self-checking on any number
 * of ranks (each rank talks to itself and to its neighbours). */
#include "dt.h"

#define MARK 12345 /* a value no call of this program returns as an error code */

/* Calls returning one status leave its MPI_ERROR as the program set it
 * (Open MPI does everywhere, MPICH 4.0 everywhere but Probe, Iprobe and
 * Sendrecv_replace; the return code is the error); Waitall, which
 * fills an array, sets each to MPI_SUCCESS. */
static void status_error_field(void) {
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    int out = rank, in = -1, flag = 0, idx = -1;
    MPI_Status st;
    MPI_Request r[2];
    MPI_Message m;

#define FRESH() (memset(&st, 0, sizeof st), st.MPI_ERROR = MARK)
#define KEPT(what) CHECK(st.MPI_ERROR == MARK, "%s: MPI_ERROR = %d, want it left at %d", what, st.MPI_ERROR, MARK)

    FRESH();
    OK(MPI_Sendrecv(&out, 1, MPI_INT, next, 1, &in, 1, MPI_INT, prev, 1, MPI_COMM_WORLD, &st));
    KEPT("MPI_Sendrecv");
    CHECK(in == prev && st.MPI_SOURCE == prev && st.MPI_TAG == 1, "Sendrecv got %d from %d tag %d", in, st.MPI_SOURCE, st.MPI_TAG);

    FRESH();
    in = out;
    OK(MPI_Sendrecv_replace(&in, 1, MPI_INT, next, 2, prev, 2, MPI_COMM_WORLD, &st));
    KEPT("MPI_Sendrecv_replace");

    OK(MPI_Isend(&out, 1, MPI_INT, next, 3, MPI_COMM_WORLD, &r[0]));
    FRESH();
    OK(MPI_Probe(prev, 3, MPI_COMM_WORLD, &st));
    KEPT("MPI_Probe");
    FRESH();
    while (!flag)
        OK(MPI_Iprobe(prev, 3, MPI_COMM_WORLD, &flag, &st));
    KEPT("MPI_Iprobe");
    FRESH();
    OK(MPI_Recv(&in, 1, MPI_INT, prev, 3, MPI_COMM_WORLD, &st));
    KEPT("MPI_Recv");
    FRESH();
    OK(MPI_Wait(&r[0], &st));
    KEPT("MPI_Wait");

    OK(MPI_Isend(&out, 1, MPI_INT, next, 4, MPI_COMM_WORLD, &r[0]));
    FRESH();
    OK(MPI_Mprobe(prev, 4, MPI_COMM_WORLD, &m, &st));
    KEPT("MPI_Mprobe");
    FRESH();
    OK(MPI_Mrecv(&in, 1, MPI_INT, &m, &st));
    KEPT("MPI_Mrecv");
    CHECK(in == prev && m == MPI_MESSAGE_NULL, "Mrecv got %d", in);
    flag = 0;
    FRESH();
    while (!flag)
        OK(MPI_Test(&r[0], &flag, &st));
    KEPT("MPI_Test");

    OK(MPI_Isend(&out, 1, MPI_INT, next, 5, MPI_COMM_WORLD, &r[0]));
    OK(MPI_Irecv(&in, 1, MPI_INT, prev, 5, MPI_COMM_WORLD, &r[1]));
    FRESH();
    OK(MPI_Waitany(2, r, &idx, &st));
    KEPT("MPI_Waitany");
    flag = 0;
    FRESH();
    while (!flag)
        OK(MPI_Testany(2, r, &idx, &flag, &st));
    KEPT("MPI_Testany");

    /* MPI_PROC_NULL: the status says source MPI_PROC_NULL, tag MPI_ANY_TAG,
     * count 0, and still leaves MPI_ERROR. */
    FRESH();
    OK(MPI_Recv(&in, 1, MPI_INT, MPI_PROC_NULL, 6, MPI_COMM_WORLD, &st));
    KEPT("MPI_Recv from MPI_PROC_NULL");
    int c = -1;
    OK(MPI_Get_count(&st, MPI_INT, &c));
    CHECK(st.MPI_SOURCE == MPI_PROC_NULL && st.MPI_TAG == MPI_ANY_TAG && c == 0, "PROC_NULL status %d %d %d", st.MPI_SOURCE, st.MPI_TAG, c);
    FRESH();
    OK(MPI_Mprobe(MPI_PROC_NULL, 6, MPI_COMM_WORLD, &m, &st));
    KEPT("MPI_Mprobe of MPI_PROC_NULL");
    CHECK(m == MPI_MESSAGE_NO_PROC, "Mprobe of MPI_PROC_NULL: message %p", (void *)m);
    FRESH();
    OK(MPI_Mrecv(&in, 1, MPI_INT, &m, &st));
    KEPT("MPI_Mrecv of MPI_MESSAGE_NO_PROC");

    /* The array form sets every MPI_ERROR. */
    MPI_Status sts[2];
    sts[0].MPI_ERROR = sts[1].MPI_ERROR = MARK;
    OK(MPI_Isend(&out, 1, MPI_INT, next, 7, MPI_COMM_WORLD, &r[0]));
    OK(MPI_Irecv(&in, 1, MPI_INT, prev, 7, MPI_COMM_WORLD, &r[1]));
    OK(MPI_Waitall(2, r, sts));
    CHECK(sts[0].MPI_ERROR == MPI_SUCCESS && sts[1].MPI_ERROR == MPI_SUCCESS, "Waitall errors %d %d", sts[0].MPI_ERROR, sts[1].MPI_ERROR);
#undef FRESH
#undef KEPT
}

int main(int argc, char **argv) {
    start(&argc, &argv);
    status_error_field();
    return finish("p2pstd");
}
