// Back-pressure of eager sends (eager_max). Run as eagerflood EAGER_MAX N,
// with the job's eager_max set to EAGER_MAX: the limit is then
// L = max(EAGER_MAX, size).
//
// 1. Every rank sends one small message to every other rank with MPI_Send,
//    then receives them: must complete at any eager_max.
// 2. Every rank but 0 floods rank 0 with N small blocking sends (sizes 1 ..
//    960, each buffer overwritten as soon as MPI_Send returns). The first
//    L-1 are followed by a "ready" send: rank 0 receives every sender's
//    ready first, so each sender has exactly L sends unmatched then, and
//    only then does rank 0 receive the data, checking every byte and the
//    order. Each sender then reads the MPI_T variable
//    bcs_eager_unmatched_max (the runtime's count): it must be L, never
//    more, and bcs_eager_unmatched at most L. Every rank reads eager_max
//    back as the control variable bcs_eager_max.
// Prints "eagerflood ok RANK".
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BIG 960 // inline_max by default
#define READY 1000000

static int fails;

static int size_of(int i, int from) { return 1 + (i * 37 + from * 11) % BIG; }

static unsigned char byte_of(int from, int i, int j) { return (unsigned char)(from * 31 + i * 7 + j); }

static void fill(unsigned char *b, int from, int i) {
    for (int j = 0; j < size_of(i, from); j++)
        b[j] = byte_of(from, i, j);
}

static void expect(const char *what, const unsigned char *b, int from, int i, MPI_Status *st, int tag) {
    int count;
    MPI_Get_count(st, MPI_BYTE, &count);
    if (count != size_of(i, from) || st->MPI_SOURCE != from || st->MPI_TAG != tag) {
        printf("%s %d: count %d source %d tag %d, want %d, %d, %d\n", what, i, count, st->MPI_SOURCE, st->MPI_TAG,
               size_of(i, from), from, tag);
        fails++;
        return;
    }
    for (int j = 0; j < count; j++) {
        if (b[j] != byte_of(from, i, j)) {
            printf("%s %d from %d: byte %d is %d, want %d\n", what, i, from, j, b[j], byte_of(from, i, j));
            fails++;
            return;
        }
    }
}

static unsigned long long pvar_read(const char *name, int cls) {
    int idx, count;
    MPI_T_pvar_session s;
    MPI_T_pvar_handle h;
    unsigned long long v = 0;
    if (MPI_T_pvar_get_index(name, cls, &idx) != MPI_SUCCESS || MPI_T_pvar_session_create(&s) != MPI_SUCCESS ||
        MPI_T_pvar_handle_alloc(s, idx, NULL, &h, &count) != MPI_SUCCESS || MPI_T_pvar_read(s, h, &v) != MPI_SUCCESS) {
        printf("MPI_T: cannot read %s\n", name);
        fails++;
        return 0;
    }
    MPI_T_pvar_handle_free(s, &h);
    MPI_T_pvar_session_free(&s);
    return v;
}

static unsigned long long cvar_read(const char *name) {
    int idx, count;
    MPI_T_cvar_handle h;
    unsigned long long v = 0;
    if (MPI_T_cvar_get_index(name, &idx) != MPI_SUCCESS || MPI_T_cvar_handle_alloc(idx, NULL, &h, &count) != MPI_SUCCESS ||
        MPI_T_cvar_read(h, &v) != MPI_SUCCESS) {
        printf("MPI_T: cannot read %s\n", name);
        fails++;
        return 0;
    }
    MPI_T_cvar_handle_free(&h);
    return v;
}

int main(int argc, char **argv) {
    int rank, n, provided;
    if (argc != 3) {
        fprintf(stderr, "usage: eagerflood EAGER_MAX N\n");
        return 2;
    }
    int eager_max = atoi(argv[1]), N = atoi(argv[2]);
    MPI_Init(&argc, &argv);
    MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    int L = eager_max > n ? eager_max : n;
    if (cvar_read("bcs_eager_max") != (unsigned long long)eager_max) {
        printf("rank %d: bcs_eager_max = %llu, want %d\n", rank, cvar_read("bcs_eager_max"), eager_max);
        fails++;
    }
    unsigned char *buf = malloc(BIG);

    // 1. All to all, then receive.
    for (int k = 1; k < n; k++) {
        int to = (rank + k) % n;
        fill(buf, rank, to);
        MPI_Send(buf, size_of(to, rank), MPI_BYTE, to, 7, MPI_COMM_WORLD);
        memset(buf, 0xee, BIG);
    }
    for (int k = 1; k < n; k++) {
        int from = (rank + n - k) % n;
        MPI_Status st;
        MPI_Recv(buf, BIG, MPI_BYTE, from, 7, MPI_COMM_WORLD, &st);
        expect("all-to-all", buf, from, rank, &st, 7);
    }
    MPI_Barrier(MPI_COMM_WORLD); // every message of 1 matched, and its sender told

    // 2. The flood.
    if (rank == 0) {
        for (int from = 1; from < n; from++)
            MPI_Recv(NULL, 0, MPI_BYTE, from, READY, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        for (int i = 0; i < N; i++) {
            for (int from = 1; from < n; from++) {
                MPI_Status st;
                memset(buf, 0, BIG);
                MPI_Recv(buf, BIG, MPI_BYTE, from, i, MPI_COMM_WORLD, &st);
                expect("flood", buf, from, i, &st, i);
            }
        }
    } else {
        for (int i = 0; i < N; i++) {
            if (i == L - 1)
                MPI_Send(NULL, 0, MPI_BYTE, 0, READY, MPI_COMM_WORLD);
            fill(buf, rank, i);
            MPI_Send(buf, size_of(i, rank), MPI_BYTE, 0, i, MPI_COMM_WORLD);
            memset(buf, 0xee, BIG);
        }
        unsigned long long most = pvar_read("bcs_eager_unmatched_max", MPI_T_PVAR_CLASS_HIGHWATERMARK);
        unsigned long long now = pvar_read("bcs_eager_unmatched", MPI_T_PVAR_CLASS_LEVEL);
        if (most != (unsigned long long)L || now > (unsigned long long)L) {
            printf("rank %d: %llu eager sends unmatched at most, %llu now; want %d (eager_max %d, %d ranks), at most %d\n",
                   rank, most, now, L, eager_max, n, L);
            fails++;
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    free(buf);
    MPI_T_finalize();
    MPI_Finalize();
    if (fails == 0)
        printf("eagerflood ok %d\n", rank);
    return fails != 0;
}
