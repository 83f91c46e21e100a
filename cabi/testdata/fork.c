/* fork: a forked child that calls MPI gets an error, not a hang or a crash. */
#include <mpi.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0)
        _exit(MPI_Barrier(MPI_COMM_WORLD) == MPI_ERR_OTHER ? 0 : 1);
    int status = 0;
    waitpid(pid, &status, 0);
    printf("child exit %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : 100 + WTERMSIG(status));
    MPI_Finalize();
    return 0;
}
