/* replayrace.c: timing-dependent MPI calls against racing senders, for record and
 * replay through the C ABI (replay_test.go). Rank 0 prints every outcome it
 * sees; E2E_DELAY=down:US or random:US makes the senders sleep before each
 * send (down: (size-rank)*US, random: 0..US, seeded per run). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int rank, size, mode, us;

static void pause_(void) {
	int d = 0;
	if (mode == 1)
		d = (size - rank) * us;
	else if (mode == 2)
		d = rand() % (us + 1);
	if (d > 0)
		usleep(d);
}

int main(int argc, char **argv) {
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	const char *e = getenv("E2E_DELAY");
	if (e && strncmp(e, "down:", 5) == 0) {
		mode = 1;
		us = atoi(e + 5);
	} else if (e && strncmp(e, "random:", 7) == 0) {
		mode = 2;
		us = atoi(e + 7);
	}
	srand((unsigned)time(NULL) ^ (unsigned)getpid());
	int k = argc > 1 ? atoi(argv[1]) : 2, v = 0, i;
	MPI_Status st;
	/* 1. wildcard receives */
	if (rank == 0) {
		printf("recv");
		for (i = 0; i < k * (size - 1); i++) {
			MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
			printf(" %d:%d", st.MPI_SOURCE, st.MPI_TAG);
		}
		printf("\n");
	} else {
		for (i = 0; i < k; i++) {
			pause_();
			MPI_Send(&rank, 1, MPI_INT, 0, i, MPI_COMM_WORLD);
		}
	}
	MPI_Barrier(MPI_COMM_WORLD);
	/* 2. Iprobe polled, then the message found */
	if (rank == 0) {
		printf("iprobe");
		for (i = 1; i < size; i++) {
			int flag = 0, misses = 0;
			while (!flag) {
				MPI_Iprobe(MPI_ANY_SOURCE, 50, MPI_COMM_WORLD, &flag, &st);
				misses += !flag;
			}
			MPI_Recv(&v, 1, MPI_INT, st.MPI_SOURCE, 50, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			printf(" %d after %d", st.MPI_SOURCE, misses);
		}
		printf("\n");
	} else {
		pause_();
		MPI_Send(&rank, 1, MPI_INT, 0, 50, MPI_COMM_WORLD);
	}
	MPI_Barrier(MPI_COMM_WORLD);
	/* 3. Testany polled, then Waitsome */
	if (rank == 0) {
		MPI_Request rs[64];
		int bufs[64], left = size - 1, idx, flag, misses = 0, out, ids[64];
		for (i = 1; i < size; i++)
			MPI_Irecv(&bufs[i - 1], 1, MPI_INT, i, 60, MPI_COMM_WORLD, &rs[i - 1]);
		printf("testany");
		while (left > 0) {
			MPI_Testany(size - 1, rs, &idx, &flag, &st);
			if (!flag) {
				misses++;
				continue;
			}
			printf(" %d", idx);
			left--;
			if (left == 0)
				break;
			MPI_Waitsome(size - 1, rs, &out, ids, MPI_STATUSES_IGNORE);
			printf(" waitsome");
			for (i = 0; i < out; i++)
				printf(" %d", ids[i]);
			left -= out;
		}
		printf(" (misses %d)\n", misses);
	} else {
		pause_();
		MPI_Send(&rank, 1, MPI_INT, 0, 60, MPI_COMM_WORLD);
	}
	MPI_Finalize();
	return 0;
}
