/* dupskip: an erroneous program whose rank 1 skips one MPI_Comm_dup of
 * the world that the others make from a grant of local duplicates
 * (mpiapi, "Local duplicates"), then calls MPI_Barrier on the world with
 * the others. The job must fail with a report (rank 1's barrier is a
 * different call number on the world than the others'), never finish:
 * the Go test checks the exit status and the report. Prints "dupskip
 * wrong <rank>" should a barrier return. Any size >= 2. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv) {
    int rank;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm first, skipped = MPI_COMM_NULL;
    MPI_Comm_dup(MPI_COMM_WORLD, &first); /* through the runtime: brings the grant */
    if (rank != 1)
        MPI_Comm_dup(MPI_COMM_WORLD, &skipped); /* local on every rank but 1 */
    MPI_Barrier(MPI_COMM_WORLD);
    printf("dupskip wrong %d\n", rank);
    MPI_Finalize();
    return 0;
}
