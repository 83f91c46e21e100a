/* checkmap: buffers that run into unmapped memory under BCS_CHECK=buffers
 * (the count describes more bytes than the buffer holds). Each rank maps
 * two pages and unmaps the second; a buffer of both pages must be refused
 * with MPI_ERR_BUFFER, not fault inside the check: rank 0's MPI_Send under
 * MPI_ERRORS_RETURN (the class is printed), then, after a correct message,
 * rank 1's MPI_Irecv under the default fatal handler ends the job. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    long page = sysconf(_SC_PAGESIZE);
    char *two = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (two == MAP_FAILED || munmap(two + page, page) != 0) {
        printf("mmap failed\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    memset(two, rank + 1, page);
    if (rank == 0) {
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        int rc = MPI_Send(two, 2 * page, MPI_BYTE, 1, 1, MPI_COMM_WORLD), cls = -1;
        MPI_Error_class(rc, &cls);
        printf("send: class %s\n", cls == MPI_ERR_BUFFER ? "MPI_ERR_BUFFER" : "other");
        fflush(stdout);
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
        MPI_Send(two, page, MPI_BYTE, 1, 2, MPI_COMM_WORLD);
    } else {
        MPI_Recv(two, page, MPI_BYTE, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        printf("received %s\n", two[0] == 1 && two[page - 1] == 1 ? "ok" : "wrong");
        fflush(stdout);
        MPI_Request r;
        MPI_Irecv(two, 2 * page, MPI_BYTE, 0, 3, MPI_COMM_WORLD, &r);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
    }
    printf("not reported %d\n", rank);
    MPI_Finalize();
    return 0;
}
