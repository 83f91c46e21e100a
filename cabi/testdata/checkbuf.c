/* checkbuf: breaks MPI's buffer rules for BCS_CHECK=buffers: a send buffer
 * modified before its MPI_Wait (rank 0, MPI_ERRORS_RETURN: the error class
 * must be MPI_ERR_BUFFER), then two outstanding receives into overlapping
 * memory (rank 1, the default fatal handler aborts the job). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define N (1 << 17) /* 1 MiB of doubles: several chunks */

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    double *buf = calloc(N, sizeof(double));
    if (rank == 0) {
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        MPI_Request r;
        MPI_Isend(buf, N, MPI_DOUBLE, 1, 7, MPI_COMM_WORLD, &r);
        buf[N / 2] = 42.0;
        int rc = MPI_Wait(&r, MPI_STATUS_IGNORE), cls = -1, len = 0;
        char text[MPI_MAX_ERROR_STRING];
        MPI_Error_class(rc, &cls);
        MPI_Error_string(rc, text, &len);
        printf("wait: class %s: %s\n", cls == MPI_ERR_BUFFER ? "MPI_ERR_BUFFER" : "other", text);
        fflush(stdout);
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
        MPI_Send(&rank, 1, MPI_INT, 1, 9, MPI_COMM_WORLD); /* printed: rank 1 may end the job now */
        MPI_Send(buf, 100, MPI_DOUBLE, 1, 1, MPI_COMM_WORLD);
        MPI_Send(buf, 100, MPI_DOUBLE, 1, 2, MPI_COMM_WORLD);
    } else {
        int go;
        MPI_Recv(buf, N, MPI_DOUBLE, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Recv(&go, 1, MPI_INT, 0, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Request r[2];
        MPI_Irecv(buf, 100, MPI_DOUBLE, 0, 1, MPI_COMM_WORLD, &r[0]);
        MPI_Irecv(buf + 50, 100, MPI_DOUBLE, 0, 2, MPI_COMM_WORLD, &r[1]);
        MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
    }
    printf("not reported %d\n", rank);
    free(buf);
    MPI_Finalize();
    return 0;
}
