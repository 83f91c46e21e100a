/* onesidedop: MPI_REPLACE (argv[1] "replace", in MPI_Reduce) or MPI_NO_OP
 * ("noop", in MPI_Allreduce) given to a reduction under the default fatal
 * handler: the job must end naming the operation as one-sided only. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int v = 1, r = 0;
    if (argc > 1 && strcmp(argv[1], "replace") == 0)
        MPI_Reduce(&v, &r, 1, MPI_INT, MPI_REPLACE, 0, MPI_COMM_WORLD);
    else
        MPI_Allreduce(&v, &r, 1, MPI_INT, MPI_NO_OP, MPI_COMM_WORLD);
    printf("not reported\n");
    MPI_Finalize();
    return 0;
}
