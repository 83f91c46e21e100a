/* rmadyn: dynamic windows (MPI_Win_create_dynamic + MPI_Win_attach), with
 * target_disp an absolute address from MPI_Get_address. Every check aborts
 * naming the line on a mismatch; prints "rmadyn ok <rank>". Needs 2 or more
 * ranks; each rank works on the next one's memory.
 *
 *   - Two regions attached back to back (one array's halves) and a third
 *     elsewhere: Put, Accumulate, Get_accumulate, Fetch_and_op and
 *     Compare_and_swap at absolute addresses in each, and Put, Accumulate
 *     and Get that span the two adjacent regions in one operation (these
 *     failed with MPI_ERR_RMA_RANGE: the target looked for one region
 *     holding the whole access).
 *   - Memory attached inside a lock_all epoch, its address sent while the
 *     epoch is open, then accessed in the same epoch.
 *   - A fence epoch on the dynamic window.
 *   - Memory detached between epochs and during one: a Put or a Get to
 *     it, or one running from an attached region into it, is
 *     MPI_ERR_RMA_RANGE (the window's handler is MPI_ERRORS_RETURN; the
 *     Get's flush used to wait forever for its result), and the window
 *     still works afterwards. So is a Get_accumulate there, also one of N
 *     ints whose data travels after its header (the target refuses it from
 *     its queue of requests waiting for their data).
 *   - An access of no bytes (a count of 0, or items of a datatype with no
 *     data) at an address no region holds succeeds, as under MPICH. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 1024 /* ints per region */

static int rank, size, next, prev;
static int pair[2 * N]; /* regions A = pair[0..N) and B = pair[N..2N), adjacent */

#define CHECK(c)                                                                   \
    do {                                                                           \
        if (!(c)) {                                                                \
            fprintf(stderr, "rmadyn: rank %d: line %d: %s\n", rank, __LINE__, #c); \
            MPI_Abort(MPI_COMM_WORLD, 1);                                          \
        }                                                                          \
    } while (0)

/* addrs returns every rank's address of p. */
static MPI_Aint *addrs(void *p)
{
    MPI_Aint *a = malloc(size * sizeof(MPI_Aint));
    MPI_Get_address(p, &a[rank]);
    MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, a, 1, MPI_AINT, MPI_COMM_WORLD);
    return a;
}

/* expectRange issues a put, then a get, of n ints at address a of next, and
 * checks that each or its flush reports MPI_ERR_RMA_RANGE. */
static void expectRange(MPI_Win win, MPI_Aint a, int n)
{
    int *v = calloc(n, sizeof(int)), class = MPI_SUCCESS;
    int rc = MPI_Put(v, n, MPI_INT, next, a, n, MPI_INT, win);
    if (rc == MPI_SUCCESS)
        rc = MPI_Win_flush(next, win);
    CHECK(rc != MPI_SUCCESS);
    MPI_Error_class(rc, &class);
    CHECK(class == MPI_ERR_RMA_RANGE);
    /* a fetching operation too: its result never comes, the error does */
    rc = MPI_Get(v, n, MPI_INT, next, a, n, MPI_INT, win);
    if (rc == MPI_SUCCESS)
        rc = MPI_Win_flush(next, win);
    CHECK(rc != MPI_SUCCESS);
    MPI_Error_class(rc, &class);
    CHECK(class == MPI_ERR_RMA_RANGE);
    rc = MPI_Get_accumulate(v, n, MPI_INT, v, n, MPI_INT, next, a, n, MPI_INT, MPI_SUM, win);
    if (rc == MPI_SUCCESS)
        rc = MPI_Win_flush(next, win);
    CHECK(rc != MPI_SUCCESS);
    MPI_Error_class(rc, &class);
    CHECK(class == MPI_ERR_RMA_RANGE);
    free(v);
}

/* expectEmptyOK issues accesses of no bytes at address a of next: each and
 * its flush succeed. */
static void expectEmptyOK(MPI_Win win, MPI_Aint a)
{
    int v[4] = {7, 7, 7, 7};
    MPI_Datatype none;
    MPI_Type_contiguous(0, MPI_INT, &none);
    MPI_Type_commit(&none);
    CHECK(MPI_Get(v, 0, MPI_INT, next, a, 0, MPI_INT, win) == MPI_SUCCESS);
    CHECK(MPI_Put(v, 0, MPI_INT, next, a, 0, MPI_INT, win) == MPI_SUCCESS);
    CHECK(MPI_Get(v, 3, none, next, a, 3, none, win) == MPI_SUCCESS);
    CHECK(MPI_Put(v, 3, none, next, a, 3, none, win) == MPI_SUCCESS);
    CHECK(MPI_Win_flush(next, win) == MPI_SUCCESS);
    CHECK(v[0] == 7 && v[3] == 7);
    MPI_Type_free(&none);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(size >= 2);
    next = (rank + 1) % size;
    prev = (rank + size - 1) % size;

    MPI_Win win;
    MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    MPI_Win_attach(win, &pair[0], N * sizeof(int));
    MPI_Win_attach(win, &pair[N], N * sizeof(int));
    int *third = calloc(N, sizeof(int));
    MPI_Win_attach(win, third, N * sizeof(int));
    MPI_Aint *A = addrs(&pair[0]), *B = addrs(&pair[N]), *T = addrs(third);
    int src[2 * N], got[2 * N], res[2 * N];

    /* Passive target: each kind of operation at absolute addresses, in
     * each region, and spanning A and B. */
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock_all(0, win);
    for (int i = 0; i < 2 * N; i++)
        src[i] = 1000 * rank + i;
    int span = N; /* A's last half and B's first half, from A + N/2 */
    MPI_Aint mid = A[next] + (N / 2) * sizeof(int);
    CHECK(MPI_Put(src, span, MPI_INT, next, mid, span, MPI_INT, win) == MPI_SUCCESS);
    CHECK(MPI_Win_flush(next, win) == MPI_SUCCESS);
    CHECK(MPI_Get(got, span, MPI_INT, next, mid, span, MPI_INT, win) == MPI_SUCCESS);
    CHECK(MPI_Win_flush(next, win) == MPI_SUCCESS);
    for (int i = 0; i < span; i++)
        CHECK(got[i] == 1000 * rank + i);
    /* Accumulate across the boundary adds; Get_accumulate fetches. */
    CHECK(MPI_Accumulate(src, span, MPI_INT, next, mid, span, MPI_INT, MPI_SUM, win) == MPI_SUCCESS);
    CHECK(MPI_Get_accumulate(src, span, MPI_INT, res, span, MPI_INT, next, mid, span, MPI_INT, MPI_SUM, win) == MPI_SUCCESS);
    CHECK(MPI_Win_flush(next, win) == MPI_SUCCESS);
    for (int i = 0; i < span; i++)
        CHECK(res[i] == 2 * (1000 * rank + i));
    CHECK(MPI_Get(got, 2 * N, MPI_INT, next, A[next], 2 * N, MPI_INT, win) == MPI_SUCCESS);
    CHECK(MPI_Win_flush(next, win) == MPI_SUCCESS);
    for (int i = 0; i < 2 * N; i++) {
        int want = i < N / 2 ? 0 : 3 * (1000 * rank + i - N / 2);
        if (i >= N / 2 + span)
            want = 0;
        CHECK(got[i] == want);
    }
    /* Atomics at the start of B and in the third region. */
    int one = 1, old = -1, cmp = 0, swap = 77 + rank;
    CHECK(MPI_Fetch_and_op(&one, &old, MPI_INT, next, T[next] + 5 * sizeof(int), MPI_SUM, win) == MPI_SUCCESS);
    CHECK(MPI_Win_flush(next, win) == MPI_SUCCESS);
    CHECK(old == 0);
    CHECK(MPI_Compare_and_swap(&swap, &cmp, &old, MPI_INT, next, T[next], win) == MPI_SUCCESS);
    CHECK(MPI_Win_flush(next, win) == MPI_SUCCESS);
    CHECK(old == 0);
    CHECK(MPI_Fetch_and_op(NULL, &old, MPI_INT, next, B[next] + (N - 1) * sizeof(int), MPI_NO_OP, win) == MPI_SUCCESS);
    CHECK(MPI_Win_flush(next, win) == MPI_SUCCESS);
    CHECK(old == 0);
    MPI_Win_unlock_all(win);
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK(third[0] == 77 + prev && third[5] == 1);
    CHECK(pair[N / 2] == 3 * 1000 * prev && pair[N + N - 1] == 0);

    /* Memory attached inside the epoch, then used in it. */
    MPI_Win_lock_all(0, win);
    int *late = calloc(N, sizeof(int));
    MPI_Win_attach(win, late, N * sizeof(int));
    MPI_Aint *L = addrs(late); /* a collective inside the epoch: everyone has attached */
    CHECK(MPI_Put(src, N, MPI_INT, next, L[next], N, MPI_INT, win) == MPI_SUCCESS);
    CHECK(MPI_Accumulate(&one, 1, MPI_INT, next, L[next] + 3 * sizeof(int), 1, MPI_INT, MPI_SUM, win) == MPI_SUCCESS);
    CHECK(MPI_Win_flush(next, win) == MPI_SUCCESS);
    CHECK(MPI_Get(got, N, MPI_INT, next, L[next], N, MPI_INT, win) == MPI_SUCCESS);
    CHECK(MPI_Win_flush(next, win) == MPI_SUCCESS);
    for (int i = 0; i < N; i++)
        CHECK(got[i] == 1000 * rank + i + (i == 3));
    /* Detached during the epoch (everyone is done with it: the barrier),
     * then an access to it is refused, and the window still works. */
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_detach(win, late);
    MPI_Barrier(MPI_COMM_WORLD);
    expectRange(win, L[next], 1);
    CHECK(MPI_Put(&one, 1, MPI_INT, next, T[next] + 9 * sizeof(int), 1, MPI_INT, win) == MPI_SUCCESS);
    CHECK(MPI_Win_flush(next, win) == MPI_SUCCESS);
    MPI_Win_unlock_all(win);
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK(late[0] == 1000 * prev && late[3] == 1000 * prev + 4 && third[9] == 1);
    free(late);

    /* Active target on the dynamic window. */
    MPI_Win_fence(0, win);
    CHECK(MPI_Put(src, N, MPI_INT, next, B[next], N, MPI_INT, win) == MPI_SUCCESS);
    MPI_Win_fence(0, win);
    for (int i = 0; i < N; i++)
        CHECK(pair[N + i] == 1000 * prev + i);
    MPI_Win_fence(MPI_MODE_NOSUCCEED, win);

    /* B detached between epochs: A alone still works; an access into B, or
     * from A running into B, is MPI_ERR_RMA_RANGE. */
    MPI_Win_detach(win, &pair[N]);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, next, 0, win);
    CHECK(MPI_Put(src, N, MPI_INT, next, A[next], N, MPI_INT, win) == MPI_SUCCESS);
    CHECK(MPI_Win_flush(next, win) == MPI_SUCCESS);
    expectRange(win, B[next], 1);
    expectRange(win, A[next] + (N - 1) * sizeof(int), 2);
    expectRange(win, B[next], N);
    expectEmptyOK(win, B[next]);
    expectEmptyOK(win, 16);
    MPI_Win_unlock(next, win);
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = 0; i < N; i++)
        CHECK(pair[i] == 1000 * prev + i);

    MPI_Win_detach(win, &pair[0]);
    MPI_Win_detach(win, third);
    MPI_Win_free(&win);
    free(third);
    free(A);
    free(B);
    free(T);
    free(L);
    printf("rmadyn ok %d\n", rank);
    MPI_Finalize();
    return 0;
}
