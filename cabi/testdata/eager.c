// Blocking sends of at most inline_max bytes return at their post (eager
// sends). Every rank sends a stream of small messages round a ring with
// MPI_Send, writing each buffer again as soon as the call returns (legal:
// the call's return gives the buffer back), and only then receives its
// neighbour's stream into the same buffer, checking every byte; then
// MPI_Rsend to a receive posted before a barrier; a send on a duplicate
// freed as soon as the send returns; then the last rank's
// final messages, sent just before its MPI_Finalize, are received by rank 0
// after it has done everything else: MPI_Finalize must deliver them.
// Prints "eager ok RANK".
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define M 400     // messages per rank in the ring stream
#define LAST 16   // messages sent just before MPI_Finalize
#define BIG 960   // inline_max by default

static int fails;

static void fill(unsigned char *b, int n, int from, int i) {
    for (int j = 0; j < n; j++)
        b[j] = (unsigned char)(from * 31 + i * 7 + j);
}

static void expect(const char *what, const unsigned char *b, int n, int from, int i, MPI_Status *st, int tag) {
    int count;
    MPI_Get_count(st, MPI_BYTE, &count);
    if (count != n || st->MPI_SOURCE != from || st->MPI_TAG != tag) {
        printf("%s %d: count %d source %d tag %d, want %d, %d, %d\n", what, i, count, st->MPI_SOURCE, st->MPI_TAG, n, from, tag);
        fails++;
        return;
    }
    for (int j = 0; j < n; j++) {
        if (b[j] != (unsigned char)(from * 31 + i * 7 + j)) {
            printf("%s %d from %d: byte %d is %d, want %d\n", what, i, from, j, b[j], (unsigned char)(from * 31 + i * 7 + j));
            fails++;
            return;
        }
    }
}

static int size_of(int i) { return 1 + (i * 37) % BIG; } // 1 .. 960

int main(int argc, char **argv) {
    int rank, n;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    int next = (rank + 1) % n, prev = (rank + n - 1) % n;
    unsigned char *buf = malloc(BIG), *in = malloc(BIG);

    // Everyone sends, then receives: legal in practice for small messages.
    for (int i = 0; i < M; i++) {
        fill(buf, size_of(i), rank, i);
        MPI_Send(buf, size_of(i), MPI_BYTE, next, i, MPI_COMM_WORLD);
        memset(buf, 0xee, BIG); // the buffer is the program's again
    }
    for (int i = 0; i < M; i++) { // into the buffer the sends used: it is free again
        MPI_Status st;
        memset(buf, 0, BIG);
        MPI_Recv(buf, BIG, MPI_BYTE, prev, i, MPI_COMM_WORLD, &st);
        expect("ring", buf, size_of(i), prev, i, &st, i);
    }

    // A ready send to a receive posted before the barrier.
    MPI_Request r;
    MPI_Irecv(in, BIG, MPI_BYTE, prev, 5000, MPI_COMM_WORLD, &r);
    MPI_Barrier(MPI_COMM_WORLD);
    fill(buf, 100, rank, 5000);
    MPI_Rsend(buf, 100, MPI_BYTE, next, 5000, MPI_COMM_WORLD);
    memset(buf, 0xee, BIG);
    MPI_Status st;
    MPI_Wait(&r, &st);
    expect("rsend", in, 100, prev, 5000, &st, 5000);

    // A send on a communicator freed right after it returns: the message
    // still arrives (pending operations complete normally, MPI 5.0 §7.4.3).
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    if (rank == 0 && n > 1) {
        fill(buf, 50, rank, 5500);
        MPI_Send(buf, 50, MPI_BYTE, n - 1, 5500, dup);
        memset(buf, 0xee, BIG);
    } else if (rank == n - 1 && n > 1) {
        memset(in, 0, BIG);
        MPI_Recv(in, BIG, MPI_BYTE, 0, 5500, dup, &st);
        expect("freed comm", in, 50, 0, 5500, &st, 5500);
    }
    MPI_Comm_free(&dup);

    // The last rank's final sends, then at once MPI_Finalize.
    if (rank == n - 1 && n > 1) {
        for (int i = 0; i < LAST; i++) {
            fill(buf, size_of(i), rank, 6000 + i);
            MPI_Send(buf, size_of(i), MPI_BYTE, 0, 6000 + i, MPI_COMM_WORLD);
            memset(buf, 0xee, BIG);
        }
    }
    if (rank == 0 && n > 1) {
        for (int i = 0; i < LAST; i++) {
            memset(in, 0, BIG);
            MPI_Recv(in, BIG, MPI_BYTE, n - 1, 6000 + i, MPI_COMM_WORLD, &st);
            expect("last", in, size_of(i), n - 1, 6000 + i, &st, 6000 + i);
        }
    }
    free(buf);
    free(in);
    if (fails == 0)
        printf("eager ok %d\n", rank);
    MPI_Finalize();
    return fails != 0;
}
