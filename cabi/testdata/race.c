/* A race for deterministic mode: every sender sleeps a random time (seeded
 * from the clock) before each send; rank 0 receives with MPI_ANY_SOURCE,
 * probes with MPI_Iprobe and polls receives with MPI_Testany, and prints one
 * "outcome" line naming every source it matched, every Iprobe answer and
 * every Testany result. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define K 3

int main(int argc, char **argv) {
	int me, n;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &me);
	MPI_Comm_size(MPI_COMM_WORLD, &n);
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	srand((unsigned)(ts.tv_nsec ^ (me * 7919)));
	if (me != 0) {
		for (int i = 0; i < K; i++) {
			usleep(rand() % 1500);
			int msg[2] = {me, i};
			MPI_Send(msg, 2, MPI_INT, 0, 1, MPI_COMM_WORLD);
		}
		usleep(rand() % 1500);
		int msg[2] = {me, 99};
		MPI_Send(msg, 2, MPI_INT, 0, 2, MPI_COMM_WORLD);
		MPI_Finalize();
		return 0;
	}
	char out[4096] = "";
	size_t len = 0;
	for (int i = 0; i < (n - 1) * K; i++) {
		int msg[2];
		MPI_Status st;
		MPI_Recv(msg, 2, MPI_INT, MPI_ANY_SOURCE, 1, MPI_COMM_WORLD, &st);
		if (msg[0] != st.MPI_SOURCE) {
			fprintf(stderr, "message from %d, status says %d\n", msg[0], st.MPI_SOURCE);
			MPI_Abort(MPI_COMM_WORLD, 1);
		}
		int flag;
		MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st);
		len += snprintf(out + len, sizeof out - len, " %d.%d/%d", msg[0], msg[1], flag ? st.MPI_SOURCE : -1);
	}
	MPI_Request rs[64];
	int bufs[64][2];
	for (int s = 1; s < n; s++)
		MPI_Irecv(bufs[s - 1], 2, MPI_INT, MPI_ANY_SOURCE, 2, MPI_COMM_WORLD, &rs[s - 1]);
	for (int left = n - 1; left > 0;) {
		int idx, flag;
		MPI_Status st;
		MPI_Testany(n - 1, rs, &idx, &flag, &st);
		if (!flag)
			continue;
		len += snprintf(out + len, sizeof out - len, " t%d<-%d", idx, st.MPI_SOURCE);
		left--;
	}
	printf("outcome:%s\n", out);
	MPI_Finalize();
	return 0;
}
