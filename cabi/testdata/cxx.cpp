// cxx: a C++ program against bcsmpi's mpi.h (extern "C", handles usable as
// C++ values), run under bcsrun.
#include <mpi.h>

#include <cstdio>
#include <vector>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank = -1, size = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    std::vector<double> mine(4, rank + 0.5), sum(4);
    MPI_Allreduce(mine.data(), sum.data(), 4, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    const MPI_Comm world = MPI_COMM_WORLD;
    MPI_Datatype t = MPI_DOUBLE;
    char name[MPI_MAX_OBJECT_NAME];
    int len = 0;
    MPI_Type_get_name(t, name, &len);
    std::printf("cxx rank %d of %d: sum %g type %s world %s\n", rank, size, sum[3], name,
                world == MPI_COMM_WORLD ? "ok" : "bad");
    MPI_Finalize();
    return 0;
}
