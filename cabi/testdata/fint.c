// MPI_Fint and the handle conversions MPI_<handle>_c2f/_f2c that mpi.h
// keeps for C programs passing handles as integers (LAMMPS' library
// interface): a round trip gives the same handle, and a communicator
// rebuilt from its MPI_Fint works. Each rank prints "fint ok <rank>" when
// every check passed.
#include <mpi.h>
#include <stdio.h>

static int fails, rank;
#define CHECK(cond, what)                                          \
    do {                                                           \
        if (!(cond)) {                                             \
            fprintf(stderr, "rank %d: %s failed\n", rank, what);   \
            fails++;                                               \
        }                                                          \
    } while (0)

int main(int argc, char **argv) {
    int size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(sizeof(MPI_Fint) == sizeof(int), "sizeof(MPI_Fint) == sizeof(int)");

    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Fint fdup = MPI_Comm_c2f(dup);
    MPI_Comm back = MPI_Comm_f2c(fdup);
    CHECK(back == dup, "Comm_f2c(Comm_c2f(dup)) == dup");
    CHECK(MPI_Comm_f2c(MPI_Comm_c2f(MPI_COMM_WORLD)) == MPI_COMM_WORLD, "COMM_WORLD round trip");
    CHECK(MPI_Comm_f2c(MPI_Comm_c2f(MPI_COMM_NULL)) == MPI_COMM_NULL, "COMM_NULL round trip");
    int sum = 0;
    MPI_Allreduce(&rank, &sum, 1, MPI_Type_f2c(MPI_Type_c2f(MPI_INT)),
                  MPI_Op_f2c(MPI_Op_c2f(MPI_SUM)), back);
    CHECK(sum == size * (size - 1) / 2, "Allreduce on the converted communicator, type and op");

    MPI_Group g;
    MPI_Comm_group(dup, &g);
    CHECK(MPI_Group_f2c(MPI_Group_c2f(g)) == g, "Group round trip");
    MPI_Info info;
    MPI_Info_create(&info);
    CHECK(MPI_Info_f2c(MPI_Info_c2f(info)) == info, "Info round trip");
    CHECK(MPI_Errhandler_f2c(MPI_Errhandler_c2f(MPI_ERRORS_RETURN)) == MPI_ERRORS_RETURN,
          "Errhandler round trip");
    MPI_Request req;
    MPI_Irecv(&sum, 1, MPI_INT, rank, 7, dup, &req);
    CHECK(MPI_Request_f2c(MPI_Request_c2f(req)) == req, "Request round trip");
    MPI_Send(&rank, 1, MPI_INT, rank, 7, dup);
    MPI_Request r2 = MPI_Request_f2c(MPI_Request_c2f(req));
    MPI_Wait(&r2, MPI_STATUS_IGNORE);
    CHECK(sum == rank, "Wait on the converted request");
    CHECK(MPI_Request_f2c(MPI_Request_c2f(MPI_REQUEST_NULL)) == MPI_REQUEST_NULL, "REQUEST_NULL round trip");
    CHECK(MPI_Win_f2c(MPI_Win_c2f(MPI_WIN_NULL)) == MPI_WIN_NULL, "WIN_NULL round trip");
    CHECK(MPI_File_f2c(MPI_File_c2f(MPI_FILE_NULL)) == MPI_FILE_NULL, "FILE_NULL round trip");
    CHECK(MPI_Message_f2c(MPI_Message_c2f(MPI_MESSAGE_NULL)) == MPI_MESSAGE_NULL, "MESSAGE_NULL round trip");
    /* the PMPI_ twins, which profiling layers and MPICH's tests call */
    CHECK(PMPI_Message_f2c(PMPI_Message_c2f(MPI_MESSAGE_NULL)) == MPI_MESSAGE_NULL, "PMPI MESSAGE_NULL round trip");
    CHECK(PMPI_Comm_f2c(PMPI_Comm_c2f(dup)) == dup, "PMPI Comm round trip");
    CHECK(PMPI_Type_c2f(MPI_INT) == MPI_Type_c2f(MPI_INT), "PMPI_Type_c2f agrees with MPI_Type_c2f");

    MPI_Info_free(&info);
    MPI_Group_free(&g);
    MPI_Comm_free(&dup);
    if (fails == 0)
        printf("fint ok %d\n", rank);
    MPI_Finalize();
    return fails != 0;
}
