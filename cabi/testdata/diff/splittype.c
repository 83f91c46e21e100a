/* splittype: every MPI_Comm_split_type type, with and without info;
 * self-checking. argv[1] is the number of logical nodes of the job. */
#include "dt.h"

static int members(MPI_Comm c) {
    int n = 0;
    if (c != MPI_COMM_NULL) MPI_Comm_size(c, &n);
    return n;
}

int main(int argc, char **argv) {
    start(&argc, &argv);
    int nodes = argc > 1 ? atoi(argv[1]) : 1;
    MPI_Comm shared, c;
    MPI_Info in;
    OK(MPI_Info_create(&in));
    OK(MPI_Info_set(in, "some_hint", "true"));
    /* A hint the call does not use is no error. */
    OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, in, &shared));
    int ns = members(shared);
    CHECK(ns >= 1 && ns <= size && (nodes > 1 || ns == size), "shared size %d", ns);
    /* HW_GUIDED with mpi_shared_memory is MPI_COMM_TYPE_SHARED. */
    OK(MPI_Info_set(in, "mpi_hw_resource_type", "mpi_shared_memory"));
    OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_GUIDED, rank, in, &c));
    int res = -1;
    if (c != MPI_COMM_NULL) OK(MPI_Comm_compare(c, shared, &res));
    CHECK(res == MPI_CONGRUENT, "hw_guided mpi_shared_memory compare %d", res);
    if (c != MPI_COMM_NULL) OK(MPI_Comm_free(&c));
    /* An unknown resource type, or none, gives MPI_COMM_NULL. */
    OK(MPI_Info_set(in, "mpi_hw_resource_type", "no such resource"));
    OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_GUIDED, rank, in, &c));
    CHECK(c == MPI_COMM_NULL, "hw_guided unknown resource gave a communicator");
    OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_GUIDED, rank, MPI_INFO_NULL, &c));
    CHECK(c == MPI_COMM_NULL, "hw_guided without info gave a communicator");
    /* HW_UNGUIDED: a strict subset, or MPI_COMM_NULL. */
    OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_UNGUIDED, rank, MPI_INFO_NULL, &c));
    int nu = members(c);
    CHECK(c == MPI_COMM_NULL || nu < size, "hw_unguided size %d of %d", nu, size);
    if (c != MPI_COMM_NULL) OK(MPI_Comm_free(&c));
    OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_UNDEFINED, rank, MPI_INFO_NULL, &c));
    CHECK(c == MPI_COMM_NULL, "undefined gave a communicator");
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    int rc = MPI_Comm_split_type(MPI_COMM_WORLD, 12345, rank, MPI_INFO_NULL, &c), cls = -1;
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_ARG, "unknown split type class %d", cls);
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
    OK(MPI_Info_free(&in));
    OK(MPI_Comm_free(&shared));
    return finish("splittype");
}
