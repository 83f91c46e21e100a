/* rmavm: one-sided operations on windows of MPI_Win_create and
 * MPI_Win_allocate, which an origin on the target's node carries out
 * itself (process_vm_readv/writev, cabi/rmadirect.go) once the target's
 * exposure is certain, and sends to the target otherwise. Each check
 * aborts naming the line; prints "rmavm ok <rank>". Run on 2 to 7 ranks,
 * on one node or several (then some targets are reached directly and some
 * through requests, on the same window).
 *
 *   ring:    under lock_all, each rank Puts to its right neighbour and Gets
 *            the value back, with flushes, ITER times (direct after the
 *            first flush); every 7th Put goes through a resized target
 *            datatype, every 10th moves three blocks of a vector (one
 *            system call of three ranges) and gets them back, contiguous
 *            and through the vector, every 10th a block of 256 ints
 *            (over the inline size); after the epoch
 *            each rank checks what its left neighbour left in its memory.
 *   shared:  every rank adds 1 to one element of rank 0 SHOPS times under a
 *            shared lock, all at once (Fetch_and_op, Get_accumulate,
 *            Accumulate; direct, under the target's accumulate lock, where
 *            rank 0 shares the node): a total short of every rank's adds,
 *            or a fetched value not above the last, is an update lost.
 *   excl:    every rank runs EPOCHS exclusive-lock epochs on rank 0, each a
 *            Fetch_and_op and a flush (which confirms the lock), then
 *            Fetch_and_op, Compare_and_swap, Get_accumulate, Accumulate and
 *            Get on one counter, each result checked against the count the
 *            lock keeps to itself: increments lost or seen twice if a
 *            direct read-modify-write ran outside the lock.
 *   fence, pscw: Put and Get in fence and post-start-complete-wait epochs.
 *   slices N: rank 0 alone, N Put+flush and N Get+flush under lock_all, N
 *            Fetch_and_op+flush under an exclusive lock, against rank 1,
 *            and N empty lock_all epochs (an unlock with nothing to
 *            complete does not wait for its acknowledgement)
 *            (the Go test counts the job's slices: a request's round trip
 *            costs at least 2).
 *
 * The windows: Win_create of the program's array with disp_unit
 * sizeof(int), and Win_allocate with disp_unit 1 (byte displacements).
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ITER 300
#define EPOCHS 10
#define K 2000
#define SHOPS 20000
#define WN 2048 /* ints in each window */
#define BLK 256 /* the block ring moves, at 64 + BLK * rank */
#define VEC 1856 /* the vectors ring moves, at VEC + 16 * rank */

static int rank, size, unit;

#define CHECK(c)                                                                  \
    do {                                                                          \
        if (!(c)) {                                                               \
            fprintf(stderr, "rmavm: rank %d: line %d: %s\n", rank, __LINE__, #c); \
            MPI_Abort(MPI_COMM_WORLD, 1);                                         \
        }                                                                         \
    } while (0)

/* D is the target displacement of int slot s. */
#define D(s) ((MPI_Aint)(s) * (MPI_Aint)sizeof(int) / unit)

static void ring(MPI_Win win, int *mem)
{
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    static int blk[BLK], back[BLK];
    MPI_Datatype loose; /* one int with an extent of 2: not contiguous */
    MPI_Datatype vec; /* three ints, every other one */
    MPI_Type_create_resized(MPI_INT, 0, 2 * sizeof(int), &loose);
    MPI_Type_commit(&loose);
    MPI_Type_vector(3, 1, 2, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    MPI_Win_lock_all(0, win);
    for (int it = 0; it < ITER; it++) {
        int v = rank * 100000 + it, got = -1;
        if (it % 7 == 3)
            MPI_Put(&v, 1, MPI_INT, right, D(rank), 1, loose, win);
        else
            MPI_Put(&v, 1, MPI_INT, right, D(rank), 1, MPI_INT, win);
        MPI_Win_flush(right, win);
        MPI_Get(&got, 1, MPI_INT, right, D(rank), 1, MPI_INT, win);
        MPI_Win_flush(right, win);
        CHECK(got == v);
        if (it % 10 == 5) { /* three blocks of a vector, and back */
            int three[3] = {v, v + 1, v + 2}, five[5] = {-1, -1, -1, -1, -1}, back3[3] = {-1, -1, -1};
            MPI_Put(three, 3, MPI_INT, right, D(VEC + 16 * rank), 1, vec, win);
            MPI_Win_flush(right, win);
            MPI_Get(five, 5, MPI_INT, right, D(VEC + 16 * rank), 5, MPI_INT, win);
            MPI_Get(back3, 3, MPI_INT, right, D(VEC + 16 * rank), 1, vec, win);
            MPI_Win_flush(right, win);
            CHECK(five[0] == v && five[1] == 0 && five[2] == v + 1 && five[3] == 0 && five[4] == v + 2);
            CHECK(back3[0] == v && back3[1] == v + 1 && back3[2] == v + 2);
        }
        if (it % 10 == 0) {
            for (int i = 0; i < BLK; i++)
                blk[i] = v + i;
            MPI_Put(blk, BLK, MPI_INT, right, D(64 + BLK * rank), BLK, MPI_INT, win);
            MPI_Win_flush(right, win);
            memset(back, 0, sizeof back);
            MPI_Get(back, BLK, MPI_INT, right, D(64 + BLK * rank), BLK, MPI_INT, win);
            MPI_Win_flush(right, win);
            CHECK(memcmp(back, blk, sizeof blk) == 0);
        }
    }
    MPI_Win_unlock_all(win);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win); /* local reads of the window in an epoch */
    CHECK(mem[left] == left * 100000 + ITER - 1);
    for (int i = 0; i < BLK; i++)
        CHECK(mem[64 + BLK * left + i] == left * 100000 + (ITER - 1) / 10 * 10 + i);
    MPI_Win_unlock(rank, win);
    MPI_Type_free(&loose);
    MPI_Type_free(&vec);
    MPI_Barrier(MPI_COMM_WORLD);
}

/* near0 tells whether rank 0 runs on the caller's node. */
static int near0(void)
{
    MPI_Comm node;
    MPI_Group gw, gn;
    int zero = 0, there;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_group(MPI_COMM_WORLD, &gw);
    MPI_Comm_group(node, &gn);
    MPI_Group_translate_ranks(gw, 1, &zero, gn, &there);
    MPI_Group_free(&gw);
    MPI_Group_free(&gn);
    MPI_Comm_free(&node);
    return there != MPI_UNDEFINED;
}

/* sum is the sum of every rank's v. */
static int sum(int v)
{
    int s;
    MPI_Allreduce(&v, &s, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    return s;
}

static void shared(MPI_Win win, int *mem)
{
    int one = 1, r, prev = -1;
    /* Many where rank 0 shares the node (direct, all ranks at once, rank 0
     * on its own memory too), few elsewhere (a request each). */
    int n = near0() ? SHOPS : 50, total = sum(n);
    MPI_Datatype loose; /* one int with an extent of 2: not contiguous */
    MPI_Type_create_resized(MPI_INT, 0, 2 * sizeof(int), &loose);
    MPI_Type_commit(&loose);
    MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
    for (int it = 0; it < n; it++) {
        switch (it % 100) {
        case 0: /* a non-contiguous target layout, then a flush */
            MPI_Accumulate(&one, 1, MPI_INT, 0, D(63), 1, loose, MPI_SUM, win);
            MPI_Win_flush(0, win);
            break;
        case 1:
            MPI_Accumulate(&one, 1, MPI_INT, 0, D(63), 1, MPI_INT, MPI_SUM, win);
            break;
        case 2:
            MPI_Get_accumulate(&one, 1, MPI_INT, &r, 1, MPI_INT, 0, D(63), 1, MPI_INT, MPI_SUM, win);
            MPI_Win_flush(0, win);
            CHECK(r > prev);
            prev = r;
            break;
        default: /* one other rank's increments at most between two of these */
            MPI_Fetch_and_op(&one, &r, MPI_INT, 0, D(63), MPI_SUM, win);
            MPI_Win_flush_local(0, win);
            CHECK(r > prev);
            prev = r;
        }
    }
    MPI_Win_unlock(0, win);
    MPI_Type_free(&loose);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
        CHECK(mem[63] == total);
        MPI_Win_unlock(0, win);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

static void excl(MPI_Win win, int *mem)
{
    int one = 1, r, c, nv;
    /* K operations per epoch where rank 0 shares the caller's node (direct
     * then, and a long epoch makes an overlap certain if the lock did not
     * exclude), 8 elsewhere (a request each). */
    int kk = near0() ? K : 8, kall = sum(kk);
    for (int e = 0; e < EPOCHS; e++) {
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
        MPI_Fetch_and_op(&one, &r, MPI_INT, 0, D(60), MPI_SUM, win);
        MPI_Win_flush(0, win);
        int want = r + 1; /* the counter now, which nobody else can change */
        for (int k = 0; k < kk; k++) {
            MPI_Fetch_and_op(&one, &r, MPI_INT, 0, D(60), MPI_SUM, win);
            MPI_Win_flush(0, win);
            CHECK(r == want);
            want++;
        }
        c = want, nv = want + 1;
        MPI_Compare_and_swap(&nv, &c, &r, MPI_INT, 0, D(60), win);
        MPI_Win_flush(0, win);
        CHECK(r == want);
        want++;
        c = want + 5; /* no match: no swap */
        MPI_Compare_and_swap(&one, &c, &r, MPI_INT, 0, D(60), win);
        MPI_Win_flush(0, win);
        CHECK(r == want);
        MPI_Get_accumulate(&one, 1, MPI_INT, &r, 1, MPI_INT, 0, D(60), 1, MPI_INT, MPI_SUM, win);
        MPI_Win_flush(0, win);
        CHECK(r == want);
        want++;
        MPI_Accumulate(&one, 1, MPI_INT, 0, D(60), 1, MPI_INT, MPI_SUM, win);
        MPI_Win_flush(0, win);
        want++;
        MPI_Get(&r, 1, MPI_INT, 0, D(60), 1, MPI_INT, win);
        MPI_Win_flush(0, win);
        CHECK(r == want);
        MPI_Fetch_and_op(NULL, &r, MPI_INT, 0, D(60), MPI_NO_OP, win);
        MPI_Win_unlock(0, win);
        CHECK(r == want);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    /* per epoch: 1 + kk fetch_and_op, 1 swap, 1 get_accumulate, 1 accumulate */
    if (rank == 0) {
        MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
        CHECK(mem[60] == EPOCHS * (kall + 4 * size));
        MPI_Win_unlock(0, win);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

static void fence(MPI_Win win, int *mem)
{
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    MPI_Win_fence(0, win);
    for (int it = 0; it < 50; it++) {
        int v = rank * 1000 + it, got = -1;
        MPI_Put(&v, 1, MPI_INT, right, D(40), 1, MPI_INT, win);
        MPI_Win_fence(0, win);
        CHECK(mem[40] == left * 1000 + it);
        MPI_Get(&got, 1, MPI_INT, right, D(40), 1, MPI_INT, win);
        MPI_Win_fence(0, win);
        CHECK(got == rank * 1000 + it);
    }
    MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
    MPI_Barrier(MPI_COMM_WORLD);
}

static void pscw(MPI_Win win, int *mem)
{
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    MPI_Group world, gl, gr;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    MPI_Group_incl(world, 1, &left, &gl);
    MPI_Group_incl(world, 1, &right, &gr);
    for (int it = 0; it < 50; it++) {
        int v = rank * 1000 + it + 7;
        MPI_Win_post(gl, 0, win);
        MPI_Win_start(gr, 0, win);
        MPI_Put(&v, 1, MPI_INT, right, D(41), 1, MPI_INT, win);
        MPI_Win_complete(win);
        MPI_Win_wait(win);
        CHECK(mem[41] == left * 1000 + it + 7);
    }
    MPI_Group_free(&gl);
    MPI_Group_free(&gr);
    MPI_Group_free(&world);
    MPI_Barrier(MPI_COMM_WORLD);
}

/* slices: rank 0 against rank 1, n of each pattern. */
static void slices(MPI_Win win, int n)
{
    if (rank == 0) {
        int v, r = -1, one = 1;
        MPI_Win_lock_all(0, win);
        for (int i = 0; i < n; i++) {
            v = i;
            MPI_Put(&v, 1, MPI_INT, 1, D(5), 1, MPI_INT, win);
            MPI_Win_flush(1, win);
        }
        for (int i = 0; i < n; i++) {
            MPI_Get(&r, 1, MPI_INT, 1, D(5), 1, MPI_INT, win);
            MPI_Win_flush(1, win);
            CHECK(r == n - 1);
        }
        MPI_Win_unlock_all(win);
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win);
        for (int i = 0; i < n; i++) {
            MPI_Fetch_and_op(&one, &r, MPI_INT, 1, D(6), MPI_SUM, win);
            MPI_Win_flush(1, win);
            CHECK(r == i);
        }
        MPI_Win_unlock(1, win);
        for (int i = 0; i < n; i++) { /* epochs with nothing to complete */
            MPI_Win_lock_all(0, win);
            MPI_Win_unlock_all(win);
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(size >= 2 && size <= 7);
    int n = argc == 3 && strcmp(argv[1], "slices") == 0 ? atoi(argv[2]) : 0;
    static int own[WN];
    for (int flavor = 0; flavor < 2; flavor++) {
        MPI_Win win;
        int *mem;
        if (flavor == 0) {
            unit = sizeof(int);
            mem = own;
            MPI_Win_create(mem, sizeof own, unit, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
        } else {
            unit = 1;
            MPI_Win_allocate(WN * sizeof(int), unit, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win);
        }
        memset(mem, 0, WN * sizeof(int));
        MPI_Barrier(MPI_COMM_WORLD);
        if (n > 0) {
            slices(win, n);
            MPI_Win_free(&win);
            break;
        }
        ring(win, mem);
        shared(win, mem);
        excl(win, mem);
        fence(win, mem);
        pscw(win, mem);
        MPI_Win_free(&win);
    }
    printf("rmavm ok %d\n", rank);
    MPI_Finalize();
    return 0;
}
