/* suite: Tier 0 semantics of bcsmpi's C ABI, on any number of ranks.
 * Prints "suite ok <rank>" on success; on a failed check prints what
 * failed and aborts the job. Run: ./suite [multiple]: with "multiple" it
 * asks for MPI_THREAD_MULTIPLE (every call then takes the call lock) and
 * skips the one check that differs there (a receive nobody can match on
 * MPI_COMM_SELF waits for another thread instead of failing). */
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size, multiple;

#define CHECK(cond, ...)                                                  \
    do {                                                                  \
        if (!(cond)) {                                                    \
            printf("FAIL rank %d line %d: %s: ", rank, __LINE__, #cond); \
            printf(__VA_ARGS__);                                          \
            printf("\n");                                                 \
            fflush(stdout);                                               \
            MPI_Abort(MPI_COMM_WORLD, 3);                                 \
        }                                                                 \
    } while (0)

#define OK(call) CHECK((call) == MPI_SUCCESS, "%s", #call)

static void on_usr1(int sig) { (void)sig; }

static void environment(void) {
    int v, sv, flag, len;
    OK(MPI_Get_version(&v, &sv));
    CHECK(v == 5 && sv == 0, "version %d.%d", v, sv);
    char name[MPI_MAX_OBJECT_NAME];
    OK(MPI_Type_get_name(MPI_CHAR, name, &len));
    CHECK(strcmp(name, "MPI_CHAR") == 0 && len == 8, "name %s len %d", name, len);
    OK(MPI_Type_get_name(MPI_DOUBLE_INT, name, &len));
    CHECK(strcmp(name, "MPI_DOUBLE_INT") == 0, "name %s", name);
    int sz;
    OK(MPI_Type_size(MPI_DOUBLE, &sz));
    CHECK(sz == 8, "size %d", sz);
    OK(MPI_Type_size(MPI_DOUBLE_INT, &sz));
    CHECK(sz == 12, "size of MPI_DOUBLE_INT %d", sz);
    int *tag_ub;
    OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &tag_ub, &flag));
    CHECK(flag && *tag_ub >= 32767, "tag_ub flag %d", flag);
    OK(MPI_Initialized(&flag));
    CHECK(flag == 1, "initialized %d", flag);
    OK(MPI_Finalized(&flag));
    CHECK(flag == 0, "finalized %d", flag);
    OK(MPI_Query_thread(&v));
    CHECK(v == (multiple ? MPI_THREAD_MULTIPLE : MPI_THREAD_SERIALIZED), "thread level %d", v);
    char s[MPI_MAX_ERROR_STRING];
    OK(MPI_Error_string(MPI_ERR_RANK, s, &len));
    CHECK(strcmp(s, "MPI_ERR_RANK") == 0, "error string %s", s);
    double t0 = MPI_Wtime(), t1 = MPI_Wtime();
    CHECK(t1 >= t0 && MPI_Wtick() > 0, "wtime %g %g", t0, t1);
    /* The handler installed before MPI_Init got SA_ONSTACK there. */
    struct sigaction sa;
    sigaction(SIGUSR1, NULL, &sa);
    CHECK(sa.sa_flags & SA_ONSTACK, "SIGUSR1 handler flags %#x lack SA_ONSTACK", sa.sa_flags);
}

static void pingpong(void) {
    if (size < 2)
        return;
    double buf[100];
    for (int round = 0; round < 3; round++) {
        if (rank == 0) {
            for (int i = 0; i < 100; i++)
                buf[i] = round * 1000 + i;
            OK(MPI_Send(buf, 100, MPI_DOUBLE, 1, 7, MPI_COMM_WORLD));
            MPI_Status st;
            OK(MPI_Recv(buf, 100, MPI_DOUBLE, 1, 8, MPI_COMM_WORLD, &st));
            int n;
            OK(MPI_Get_count(&st, MPI_DOUBLE, &n));
            CHECK(n == 100 && st.MPI_SOURCE == 1 && st.MPI_TAG == 8, "count %d source %d tag %d", n, st.MPI_SOURCE, st.MPI_TAG);
            for (int i = 0; i < 100; i++)
                CHECK(buf[i] == -(round * 1000 + i), "buf[%d] = %g", i, buf[i]);
        } else if (rank == 1) {
            OK(MPI_Recv(buf, 100, MPI_DOUBLE, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            for (int i = 0; i < 100; i++)
                buf[i] = -buf[i];
            OK(MPI_Send(buf, 100, MPI_DOUBLE, 0, 8, MPI_COMM_WORLD));
        }
    }
}

/* Every other rank sends its rank with tag = rank to rank 0, which receives
 * with wildcards, probing first; on a communicator of their own, so that no
 * later message matches. */
static void wildcards(void) {
    MPI_Comm comm;
    OK(MPI_Comm_dup(MPI_COMM_WORLD, &comm));
    if (rank != 0) {
        int v[2] = {rank, rank * rank};
        OK(MPI_Send(v, 2, MPI_INT, 0, rank, comm));
        OK(MPI_Comm_free(&comm));
        return;
    }
    int seen[64] = {0};
    for (int k = 1; k < size; k++) {
        MPI_Status st;
        OK(MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &st));
        int n;
        OK(MPI_Get_count(&st, MPI_INT, &n));
        CHECK(n == 2 && st.MPI_TAG == st.MPI_SOURCE, "probe count %d source %d tag %d", n, st.MPI_SOURCE, st.MPI_TAG);
        int v[2];
        OK(MPI_Recv(v, 2, MPI_INT, st.MPI_SOURCE, MPI_ANY_TAG, comm, &st));
        CHECK(v[0] == st.MPI_SOURCE && v[1] == v[0] * v[0] && !seen[v[0]], "got %d %d from %d", v[0], v[1], st.MPI_SOURCE);
        seen[v[0]] = 1;
    }
    int flag;
    MPI_Status st;
    OK(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &flag, &st));
    CHECK(!flag, "a message is left over from %d", st.MPI_SOURCE);
    OK(MPI_Comm_free(&comm));
}

/* A ring: Irecv from the left, Isend to the right, with a null request in
 * the array; then Waitany and Test on a second round. */
static void ring(void) {
    int left = (rank + size - 1) % size, right = (rank + 1) % size;
    long out[4], in[4];
    for (int i = 0; i < 4; i++)
        out[i] = rank * 10 + i;
    MPI_Request rq[3] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    MPI_Status st[3];
    OK(MPI_Irecv(in, 4, MPI_LONG, left, 1, MPI_COMM_WORLD, &rq[0]));
    OK(MPI_Isend(out, 4, MPI_LONG, right, 1, MPI_COMM_WORLD, &rq[2]));
    OK(MPI_Waitall(3, rq, st));
    for (int i = 0; i < 3; i++)
        CHECK(rq[i] == MPI_REQUEST_NULL, "rq[%d] not null after Waitall", i);
    CHECK(st[0].MPI_SOURCE == left && st[0].MPI_TAG == 1, "source %d", st[0].MPI_SOURCE);
    for (int i = 0; i < 4; i++)
        CHECK(in[i] == left * 10 + i, "in[%d] = %ld", i, in[i]);

    OK(MPI_Irecv(in, 4, MPI_LONG, left, 2, MPI_COMM_WORLD, &rq[1]));
    OK(MPI_Isend(out, 4, MPI_LONG, right, 2, MPI_COMM_WORLD, &rq[0]));
    int done = 0, idx;
    for (int k = 0; k < 2; k++) {
        OK(MPI_Waitany(3, rq, &idx, &st[0]));
        CHECK(idx == 0 || idx == 1, "waitany index %d", idx);
        CHECK(rq[idx] == MPI_REQUEST_NULL, "rq[%d] not null after Waitany", idx);
        done |= 1 << idx;
    }
    CHECK(done == 3, "done %d", done);
    OK(MPI_Waitany(3, rq, &idx, &st[0]));
    CHECK(idx == MPI_UNDEFINED, "waitany on null requests gave %d", idx);

    int flag = 0;
    OK(MPI_Irecv(in, 4, MPI_LONG, left, 3, MPI_COMM_WORLD, &rq[0]));
    OK(MPI_Isend(out, 4, MPI_LONG, right, 3, MPI_COMM_WORLD, &rq[1]));
    while (!flag)
        OK(MPI_Testall(2, rq, &flag, MPI_STATUSES_IGNORE));
    CHECK(rq[0] == MPI_REQUEST_NULL && rq[1] == MPI_REQUEST_NULL, "requests not null after Testall");
    OK(MPI_Sendrecv(out, 4, MPI_LONG, right, 4, in, 4, MPI_LONG, left, 4, MPI_COMM_WORLD, &st[0]));
    CHECK(in[3] == left * 10 + 3 && st[0].MPI_SOURCE == left, "sendrecv got %ld from %d", in[3], st[0].MPI_SOURCE);

    /* MPI_PROC_NULL completes at once with the null status. */
    OK(MPI_Recv(in, 4, MPI_LONG, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &st[0]));
    int n;
    OK(MPI_Get_count(&st[0], MPI_LONG, &n));
    CHECK(st[0].MPI_SOURCE == MPI_PROC_NULL && st[0].MPI_TAG == MPI_ANY_TAG && n == 0, "proc null status %d %d %d", st[0].MPI_SOURCE, st[0].MPI_TAG, n);
    OK(MPI_Isend(out, 4, MPI_LONG, MPI_PROC_NULL, 0, MPI_COMM_SELF, &rq[0]));
    OK(MPI_Test(&rq[0], &flag, &st[0]));
    CHECK(flag && rq[0] == MPI_REQUEST_NULL, "proc null send on MPI_COMM_SELF: flag %d", flag);
}

/* Everyone sends to everyone; the receives complete through Waitsome, the
 * sends through Testany. */
static void some(void) {
    int in[64], out = 100 + rank, idx[64], outcount, got = 0, flag, index;
    MPI_Request rr[64], sr[64];
    MPI_Status st[64];
    for (int k = 0; k < size; k++) {
        in[k] = -1;
        OK(MPI_Irecv(&in[k], 1, MPI_INT, k, 66, MPI_COMM_WORLD, &rr[k]));
    }
    for (int k = 0; k < size; k++)
        OK(MPI_Isend(&out, 1, MPI_INT, k, 66, MPI_COMM_WORLD, &sr[k]));
    while (got < size) {
        OK(MPI_Waitsome(size, rr, &outcount, idx, st));
        CHECK(outcount >= 1 && outcount <= size - got, "waitsome outcount %d", outcount);
        for (int j = 0; j < outcount; j++) {
            CHECK(rr[idx[j]] == MPI_REQUEST_NULL && st[j].MPI_SOURCE == idx[j] && in[idx[j]] == 100 + idx[j],
                  "waitsome: index %d source %d value %d", idx[j], st[j].MPI_SOURCE, in[idx[j]]);
        }
        got += outcount;
    }
    OK(MPI_Waitsome(size, rr, &outcount, idx, st));
    CHECK(outcount == MPI_UNDEFINED, "waitsome on null requests: %d", outcount);
    for (int sent = 0; sent < size;) {
        OK(MPI_Testany(size, sr, &index, &flag, MPI_STATUS_IGNORE));
        if (flag) {
            CHECK(index >= 0 && index < size && sr[index] == MPI_REQUEST_NULL, "testany index %d", index);
            sent++;
        }
    }
    OK(MPI_Testany(size, sr, &index, &flag, MPI_STATUS_IGNORE));
    CHECK(flag && index == MPI_UNDEFINED, "testany on null requests: flag %d index %d", flag, index);
    OK(MPI_Testsome(size, sr, &outcount, idx, st));
    CHECK(outcount == MPI_UNDEFINED, "testsome on null requests: %d", outcount);
}

/* Persistent requests around the ring, Sendrecv_replace, a ready send. */
static void persistent(void) {
    int left = (rank + size - 1) % size, right = (rank + 1) % size;
    int out, in = -1;
    MPI_Request rq[2];
    MPI_Status st[2];
    OK(MPI_Recv_init(&in, 1, MPI_INT, left, 88, MPI_COMM_WORLD, &rq[0]));
    OK(MPI_Send_init(&out, 1, MPI_INT, right, 88, MPI_COMM_WORLD, &rq[1]));
    OK(MPI_Wait(&rq[0], &st[0])); /* inactive: returns at once */
    CHECK(rq[0] != MPI_REQUEST_NULL && st[0].MPI_SOURCE == MPI_ANY_SOURCE, "wait on an inactive persistent request");
    for (int it = 0; it < 3; it++) {
        out = 1000 * it + rank;
        OK(MPI_Startall(2, rq));
        OK(MPI_Waitall(2, rq, st));
        CHECK(rq[0] != MPI_REQUEST_NULL && rq[1] != MPI_REQUEST_NULL, "persistent handles nulled");
        CHECK(in == 1000 * it + left && st[0].MPI_SOURCE == left, "persistent round %d: got %d", it, in);
    }
    OK(MPI_Start(&rq[0]));
    out = 7;
    OK(MPI_Start(&rq[1]));
    int flag = 0;
    while (!flag)
        OK(MPI_Test(&rq[0], &flag, &st[0]));
    OK(MPI_Wait(&rq[1], MPI_STATUS_IGNORE));
    CHECK(in == 7, "persistent after Start: %d", in);
    OK(MPI_Request_free(&rq[0]));
    OK(MPI_Request_free(&rq[1]));

    int v = rank;
    OK(MPI_Sendrecv_replace(&v, 1, MPI_INT, right, 89, left, 89, MPI_COMM_WORLD, &st[0]));
    CHECK(v == left && st[0].MPI_SOURCE == left, "sendrecv_replace got %d", v);

    OK(MPI_Irecv(&in, 1, MPI_INT, left, 90, MPI_COMM_WORLD, &rq[0]));
    OK(MPI_Barrier(MPI_COMM_WORLD));
    out = -rank;
    OK(MPI_Rsend(&out, 1, MPI_INT, right, 90, MPI_COMM_WORLD));
    OK(MPI_Wait(&rq[0], MPI_STATUS_IGNORE));
    CHECK(in == -left, "rsend delivered %d", in);

    MPI_Aint a0, a1;
    double arr[4];
    OK(MPI_Get_address(&arr[0], &a0));
    OK(MPI_Get_address(&arr[3], &a1));
    CHECK(MPI_Aint_diff(a1, a0) == 3 * sizeof(double) && MPI_Aint_add(a0, 24) == a1, "address arithmetic");
}

/* Buffered sends: everyone sends a large message to the right before
 * receiving from the left, which needs the buffering. */
static void bsend(void) {
    enum { N = 30000 };
    int left = (rank + size - 1) % size, right = (rank + 1) % size, bsize = 2 * (N * 4 + MPI_BSEND_OVERHEAD);
    int *msg = malloc(N * sizeof(int)), *in = malloc(N * sizeof(int));
    char *space = malloc(bsize);
    for (int i = 0; i < N; i++)
        msg[i] = rank * N + i;
    OK(MPI_Buffer_attach(space, bsize));
    OK(MPI_Bsend(msg, N, MPI_INT, right, 92, MPI_COMM_WORLD));
    msg[0] = -1; /* the message was copied out */
    OK(MPI_Recv(in, N, MPI_INT, left, 92, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK(in[0] == left * N && in[N - 1] == left * N + N - 1, "bsend delivered %d", in[0]);
    MPI_Request rq;
    OK(MPI_Ibsend(msg, N, MPI_INT, right, 93, MPI_COMM_WORLD, &rq));
    OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    OK(MPI_Recv(in, N, MPI_INT, left, 93, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK(in[0] == -1, "ibsend delivered %d", in[0]);
    void *back;
    int bs;
    OK(MPI_Buffer_detach(&back, &bs));
    CHECK(back == space && bs == bsize, "detach gave %p %d", back, bs);
    if (size > 1) { /* a message larger than the buffer */
        OK(MPI_Buffer_attach(space, 100));
        OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
        int rc = MPI_Bsend(msg, N, MPI_INT, right, 94, MPI_COMM_WORLD);
        CHECK(rc == MPI_ERR_BUFFER, "bsend into a small buffer gave %d", rc);
        OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
        OK(MPI_Buffer_detach(&back, &bs));
    }
    free(msg), free(in), free(space);
}

static void collectives(MPI_Comm comm) {
    int r, n;
    OK(MPI_Comm_rank(comm, &r));
    OK(MPI_Comm_size(comm, &n));
    OK(MPI_Barrier(comm));

    double x[3] = {r, r * 2.0, -r}, sum[3], max[3];
    OK(MPI_Allreduce(x, sum, 3, MPI_DOUBLE, MPI_SUM, comm));
    OK(MPI_Allreduce(x, max, 3, MPI_DOUBLE, MPI_MAX, comm));
    double s = n * (n - 1) / 2.0;
    CHECK(sum[0] == s && sum[1] == 2 * s && sum[2] == -s, "allreduce sum %g %g %g", sum[0], sum[1], sum[2]);
    CHECK(max[0] == n - 1 && max[2] == 0, "allreduce max %g %g", max[0], max[2]);
    int ip[2] = {1, r};
    OK(MPI_Allreduce(MPI_IN_PLACE, ip, 2, MPI_INT, MPI_SUM, comm));
    CHECK(ip[0] == n && ip[1] == (int)s, "in place allreduce %d %d", ip[0], ip[1]);

    struct { double v; int i; } mine = {(r * 7) % n, r}, best;
    OK(MPI_Allreduce(&mine, &best, 1, MPI_DOUBLE_INT, MPI_MAXLOC, comm));
    int want = 0;
    for (int k = 0; k < n; k++)
        if ((k * 7) % n > (want * 7) % n)
            want = k;
    CHECK(best.i == want && best.v == (want * 7) % n, "maxloc %g at %d, want at %d", best.v, best.i, want);

    for (int root = 0; root < n; root += 2) {
        int b[5];
        for (int k = 0; k < 5; k++)
            b[k] = r == root ? 100 * root + k : -1;
        OK(MPI_Bcast(b, 5, MPI_INT, root, comm));
        for (int k = 0; k < 5; k++)
            CHECK(b[k] == 100 * root + k, "bcast from %d: b[%d] = %d", root, k, b[k]);

        long red = r + 1, rsum = -1;
        OK(MPI_Reduce(&red, &rsum, 1, MPI_LONG, MPI_SUM, root, comm));
        if (r == root)
            CHECK(rsum == (long)n * (n + 1) / 2, "reduce to %d: %ld", root, rsum);

        short mineg[2] = {(short)r, (short)(r * 3)}, all[2 * 64];
        OK(MPI_Gather(mineg, 2, MPI_SHORT, all, 2, MPI_SHORT, root, comm));
        if (r == root)
            for (int k = 0; k < n; k++)
                CHECK(all[2 * k] == k && all[2 * k + 1] == 3 * k, "gather to %d: block %d = %d %d", root, k, all[2 * k], all[2 * k + 1]);

        float sc[64], got = -1;
        for (int k = 0; k < n; k++)
            sc[k] = root + k / 4.0f;
        OK(MPI_Scatter(sc, 1, MPI_FLOAT, &got, 1, MPI_FLOAT, root, comm));
        CHECK(got == root + r / 4.0f, "scatter from %d: got %g", root, got);
    }
    unsigned ag[64];
    unsigned me = 1000u + (unsigned)r;
    OK(MPI_Allgather(&me, 1, MPI_UNSIGNED, ag, 1, MPI_UNSIGNED, comm));
    for (int k = 0; k < n; k++)
        CHECK(ag[k] == 1000u + (unsigned)k, "allgather[%d] = %u", k, ag[k]);
    ag[r] = 5000u + (unsigned)r;
    OK(MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, ag, 1, MPI_UNSIGNED, comm));
    for (int k = 0; k < n; k++)
        CHECK(ag[k] == 5000u + (unsigned)k, "in place allgather[%d] = %u", k, ag[k]);

    long long a2a[64], b2b[64];
    for (int k = 0; k < n; k++)
        a2a[k] = 100LL * r + k;
    OK(MPI_Alltoall(a2a, 1, MPI_LONG_LONG, b2b, 1, MPI_LONG_LONG, comm));
    for (int k = 0; k < n; k++)
        CHECK(b2b[k] == 100LL * k + r, "alltoall[%d] = %lld", k, b2b[k]);
}

/* Scans, reduce-scatters, the v-variants and the non-blocking collectives,
 * each against a reference computed here. */
static void morecollectives(MPI_Comm comm) {
    int r, n;
    OK(MPI_Comm_rank(comm, &r));
    OK(MPI_Comm_size(comm, &n));

    int x = r + 1, pre = -1, ex = -7;
    OK(MPI_Scan(&x, &pre, 1, MPI_INT, MPI_SUM, comm));
    CHECK(pre == (r + 1) * (r + 2) / 2, "scan %d", pre);
    OK(MPI_Exscan(&x, &ex, 1, MPI_INT, MPI_SUM, comm));
    CHECK(r == 0 ? ex == -7 : ex == r * (r + 1) / 2, "exscan %d", ex);

    /* Reduce_scatter_block: block i of the sum goes to member i. */
    double rsb_in[2 * 64], rsb_out[2];
    for (int k = 0; k < 2 * n; k++)
        rsb_in[k] = k + 100 * r;
    OK(MPI_Reduce_scatter_block(rsb_in, rsb_out, 2, MPI_DOUBLE, MPI_SUM, comm));
    for (int j = 0; j < 2; j++) {
        double want = n * (2 * r + j) + 100.0 * n * (n - 1) / 2;
        CHECK(rsb_out[j] == want, "reduce_scatter_block[%d] = %g, want %g", j, rsb_out[j], want);
    }
    /* Reduce_scatter with counts i+1, in place. */
    int counts[64], total = 0, base = 0;
    for (int k = 0; k < n; k++) {
        counts[k] = k + 1;
        if (k < r)
            base += k + 1;
        total += k + 1;
    }
    long rs[64 * 65 / 2];
    for (int k = 0; k < total; k++)
        rs[k] = k * (r + 1);
    OK(MPI_Reduce_scatter(MPI_IN_PLACE, rs, counts, MPI_LONG, MPI_SUM, comm));
    for (int j = 0; j <= r; j++)
        CHECK(rs[j] == (long)(base + j) * n * (n + 1) / 2, "reduce_scatter[%d] = %ld", j, rs[j]);

    /* Gatherv / Allgatherv / Scatterv: member k contributes k+1 ints, placed with a gap. */
    int displs[64], mine[64], all[64 * 66], got[64];
    for (int k = 0, d = 0; k < n; k++) {
        displs[k] = d;
        d += counts[k] + 1;
    }
    for (int j = 0; j <= r; j++)
        mine[j] = 1000 * r + j;
    for (int root = 0; root < n; root += 3) {
        memset(all, 0xff, sizeof all);
        OK(MPI_Gatherv(mine, r + 1, MPI_INT, all, counts, displs, MPI_INT, root, comm));
        if (r == root)
            for (int k = 0; k < n; k++)
                for (int j = 0; j <= k; j++)
                    CHECK(all[displs[k] + j] == 1000 * k + j, "gatherv to %d: all[%d] = %d", root, displs[k] + j, all[displs[k] + j]);
        memset(got, 0, sizeof got);
        OK(MPI_Scatterv(all, counts, displs, MPI_INT, got, r + 1, MPI_INT, root, comm));
        if (r == root || root == 0)
            for (int j = 0; j <= r; j++)
                CHECK(r != root || got[j] == 1000 * r + j, "scatterv from %d: got[%d] = %d", root, j, got[j]);
    }
    memset(all, 0xff, sizeof all);
    OK(MPI_Allgatherv(mine, r + 1, MPI_INT, all, counts, displs, MPI_INT, comm));
    for (int k = 0; k < n; k++)
        for (int j = 0; j <= k; j++)
            CHECK(all[displs[k] + j] == 1000 * k + j, "allgatherv: all[%d] = %d", displs[k] + j, all[displs[k] + j]);

    /* Alltoallv: member r sends j+1 values to member j. */
    int sc[64], sd[64], rc_[64], rd[64], sbuf[64 * 65], rbuf[64 * 65];
    for (int k = 0, d = 0, e = 0; k < n; k++) {
        sc[k] = k + 1, sd[k] = d, d += k + 1;
        rc_[k] = r + 1, rd[k] = e, e += r + 1;
        for (int j = 0; j < sc[k]; j++)
            sbuf[sd[k] + j] = 10000 * r + 100 * k + j;
    }
    OK(MPI_Alltoallv(sbuf, sc, sd, MPI_INT, rbuf, rc_, rd, MPI_INT, comm));
    for (int k = 0; k < n; k++)
        for (int j = 0; j <= r; j++)
            CHECK(rbuf[rd[k] + j] == 10000 * k + 100 * r + j, "alltoallv from %d: %d", k, rbuf[rd[k] + j]);

    /* Non-blocking collectives overlapped, completed together with point-to-point. */
    MPI_Request rq[5];
    double isum[4], ione[4] = {1, 2, 3, r};
    int ib[3] = {r, r, r};
    OK(MPI_Ibarrier(comm, &rq[0]));
    OK(MPI_Iallreduce(ione, isum, 4, MPI_DOUBLE, MPI_SUM, comm, &rq[1]));
    OK(MPI_Ibcast(ib, 3, MPI_INT, n - 1, comm, &rq[2]));
    int token = r, back = -1;
    OK(MPI_Irecv(&back, 1, MPI_INT, (r + n - 1) % n, 77, comm, &rq[3]));
    OK(MPI_Isend(&token, 1, MPI_INT, (r + 1) % n, 77, comm, &rq[4]));
    OK(MPI_Waitall(5, rq, MPI_STATUSES_IGNORE));
    CHECK(isum[0] == n && isum[2] == 3 * n && isum[3] == n * (n - 1) / 2.0, "iallreduce %g %g %g", isum[0], isum[2], isum[3]);
    CHECK(ib[0] == n - 1 && ib[2] == n - 1, "ibcast %d", ib[0]);
    CHECK(back == (r + n - 1) % n, "token %d", back);
    unsigned short g[64], mineg = (unsigned short)(7 * r);
    OK(MPI_Iallgather(&mineg, 1, MPI_UNSIGNED_SHORT, g, 1, MPI_UNSIGNED_SHORT, comm, &rq[0]));
    int flag = 0;
    while (!flag)
        OK(MPI_Test(&rq[0], &flag, MPI_STATUS_IGNORE));
    for (int k = 0; k < n; k++)
        CHECK(g[k] == 7 * k, "iallgather[%d] = %d", k, g[k]);
}

/* digits: a ∘ b = 10a + b, associative and not commutative, so the result
 * shows the order: the fold of 1, 2, 3 in rank order is 123. */
static void digits(void *in, void *inout, int *len, MPI_Datatype *type) {
    long *a = in, *b = inout;
    CHECK(*type == MPI_LONG, "user op called with type %p", (void *)*type);
    for (int i = 0; i < *len; i++)
        b[i] = 10 * a[i] + b[i];
}

static void user_ops(MPI_Comm comm) {
    int r, n, commute;
    OK(MPI_Comm_rank(comm, &r));
    OK(MPI_Comm_size(comm, &n));
    MPI_Op op;
    OK(MPI_Op_create(digits, 0, &op));
    OK(MPI_Op_commutative(op, &commute));
    CHECK(!commute, "commutative %d", commute);
    long x[2] = {r + 1, 1}, y[2] = {-1, -1}, want = 0, ones = 0;
    for (int k = 0; k < n; k++)
        want = 10 * want + k + 1, ones = 10 * ones + 1;
    OK(MPI_Allreduce(x, y, 2, MPI_LONG, op, comm));
    CHECK(y[0] == want && y[1] == ones, "allreduce with a user op: %ld %ld, want %ld %ld", y[0], y[1], want, ones);
    y[0] = -1;
    OK(MPI_Reduce(x, y, 2, MPI_LONG, op, n - 1, comm));
    CHECK(r != n - 1 || y[0] == want, "reduce with a user op: %ld", y[0]);
    MPI_Request rq;
    y[0] = -1;
    OK(MPI_Iallreduce(x, y, 2, MPI_LONG, op, comm, &rq));
    OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    CHECK(y[0] == want, "iallreduce with a user op: %ld", y[0]);
    OK(MPI_Op_free(&op));
    CHECK(op == MPI_OP_NULL, "op not null after free");
}

/* Cartesian topologies: a periodic x non-periodic grid over the world. */
static void topology(void) {
    int d12[2] = {0, 0}, d8[2] = {0, 2}, d6[3] = {0, 0, 0};
    OK(MPI_Dims_create(12, 2, d12));
    OK(MPI_Dims_create(8, 2, d8));
    OK(MPI_Dims_create(6, 3, d6));
    CHECK(d12[0] == 4 && d12[1] == 3 && d8[0] == 4 && d8[1] == 2 && d6[0] == 3 && d6[1] == 2 && d6[2] == 1,
          "dims_create: 12 -> %dx%d, 8 -> %dx%d, 6 -> %dx%dx%d", d12[0], d12[1], d8[0], d8[1], d6[0], d6[1], d6[2]);
    int dims[2] = {0, 0}, periods[2] = {1, 0}, status;
    OK(MPI_Dims_create(size, 2, dims));
    CHECK(dims[0] * dims[1] == size && dims[0] >= dims[1], "dims_create(%d) = %dx%d", size, dims[0], dims[1]);
    MPI_Comm grid, row;
    OK(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 1, &grid));
    OK(MPI_Topo_test(grid, &status));
    CHECK(status == MPI_CART, "topo_test of a grid: %d", status);
    OK(MPI_Topo_test(MPI_COMM_WORLD, &status));
    CHECK(status == MPI_UNDEFINED, "topo_test of the world: %d", status);
    int gr, nd, gd[2], gp[2], gc[2], back;
    OK(MPI_Comm_rank(grid, &gr));
    OK(MPI_Cartdim_get(grid, &nd));
    OK(MPI_Cart_get(grid, 2, gd, gp, gc));
    CHECK(nd == 2 && gd[0] == dims[0] && gd[1] == dims[1] && gp[0] == 1 && gp[1] == 0, "cart_get");
    CHECK(gc[0] == gr / dims[1] && gc[1] == gr % dims[1], "coords %d,%d of rank %d (row-major)", gc[0], gc[1], gr);
    OK(MPI_Cart_rank(grid, gc, &back));
    CHECK(back == gr, "cart_rank(coords(%d)) = %d", gr, back);
    int c2[2];
    OK(MPI_Cart_coords(grid, size - 1, 2, c2));
    CHECK(c2[0] == dims[0] - 1 && c2[1] == dims[1] - 1, "coords of the last rank %d,%d", c2[0], c2[1]);
    int src, dst;
    OK(MPI_Cart_shift(grid, 0, 1, &src, &dst));
    int want_src = ((gc[0] + dims[0] - 1) % dims[0]) * dims[1] + gc[1], want_dst = ((gc[0] + 1) % dims[0]) * dims[1] + gc[1];
    CHECK(src == want_src && dst == want_dst, "periodic shift: %d %d, want %d %d", src, dst, want_src, want_dst);
    int v = gr, got = -5;
    OK(MPI_Sendrecv(&v, 1, MPI_INT, dst, 91, &got, 1, MPI_INT, src, 91, grid, MPI_STATUS_IGNORE));
    CHECK(got == src, "exchange along dimension 0 got %d from %d", got, src);
    OK(MPI_Cart_shift(grid, 1, 1, &src, &dst));
    CHECK(src == (gc[1] == 0 ? MPI_PROC_NULL : gr - 1) && dst == (gc[1] == dims[1] - 1 ? MPI_PROC_NULL : gr + 1),
          "non-periodic shift: %d %d", src, dst);
    int keep[2] = {0, 1};
    OK(MPI_Cart_sub(grid, keep, &row));
    int rr, rs, sum;
    OK(MPI_Comm_rank(row, &rr));
    OK(MPI_Comm_size(row, &rs));
    OK(MPI_Allreduce(&gc[0], &sum, 1, MPI_INT, MPI_SUM, row));
    CHECK(rs == dims[1] && rr == gc[1] && sum == dims[1] * gc[0], "row: size %d rank %d sum %d", rs, rr, sum);
    OK(MPI_Comm_free(&row));
    OK(MPI_Comm_free(&grid));
    /* MPI_COMM_TYPE_SHARED: the ranks on this rank's (logical) node. */
    const char *env = getenv("BCS_NODE");
    int mynode = env ? atoi(env) : 0, nodes[64], same = 0, ns, lo, hi;
    MPI_Comm shm;
    OK(MPI_Allgather(&mynode, 1, MPI_INT, nodes, 1, MPI_INT, MPI_COMM_WORLD));
    for (int k = 0; k < size; k++)
        same += nodes[k] == mynode;
    OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &shm));
    OK(MPI_Comm_size(shm, &ns));
    OK(MPI_Allreduce(&mynode, &lo, 1, MPI_INT, MPI_MIN, shm));
    OK(MPI_Allreduce(&mynode, &hi, 1, MPI_INT, MPI_MAX, shm));
    CHECK(ns == same && lo == mynode && hi == mynode, "shared communicator of node %d: size %d, want %d", mynode, ns, same);
    OK(MPI_Comm_free(&shm));
    if (size > 1) {
        int line = size - 1, p0 = 0;
        MPI_Comm part;
        OK(MPI_Cart_create(MPI_COMM_WORLD, 1, &line, &p0, 0, &part));
        CHECK((rank == size - 1) == (part == MPI_COMM_NULL), "a grid smaller than the world");
        if (part != MPI_COMM_NULL)
            OK(MPI_Comm_free(&part));
    }
}

static void communicators(void) {
    MPI_Comm dup, half;
    OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    int res;
    OK(MPI_Comm_compare(MPI_COMM_WORLD, dup, &res));
    CHECK(res == MPI_CONGRUENT, "compare world dup = %d", res);
    char cname[MPI_MAX_OBJECT_NAME];
    int clen;
    OK(MPI_Comm_get_name(MPI_COMM_WORLD, cname, &clen));
    CHECK(strcmp(cname, "MPI_COMM_WORLD") == 0 && clen == 14, "world's name %s", cname);
    OK(MPI_Comm_get_name(dup, cname, &clen));
    CHECK(clen == 0 && cname[0] == 0, "a new communicator's name %s", cname);
    OK(MPI_Comm_set_name(dup, "the duplicate"));
    OK(MPI_Comm_get_name(dup, cname, &clen));
    CHECK(strcmp(cname, "the duplicate") == 0 && clen == 13, "name after set: %s", cname);
    collectives(dup);
    morecollectives(dup);
    user_ops(dup);
    OK(MPI_Comm_split(MPI_COMM_WORLD, rank % 2, -rank, &half));
    int hr, hs;
    OK(MPI_Comm_rank(half, &hr));
    OK(MPI_Comm_size(half, &hs));
    CHECK(hs == (size + 1 - rank % 2) / 2, "half size %d", hs);
    CHECK(hr == hs - 1 - rank / 2, "half rank %d (keys reverse the order)", hr);
    collectives(half);
    morecollectives(half);
    collectives(MPI_COMM_SELF);
    morecollectives(MPI_COMM_SELF);
    user_ops(MPI_COMM_SELF);
    user_ops(half);
    OK(MPI_Comm_free(&dup));
    OK(MPI_Comm_free(&half));
    CHECK(dup == MPI_COMM_NULL && half == MPI_COMM_NULL, "freed handles not null");
    MPI_Comm none;
    OK(MPI_Comm_split(MPI_COMM_WORLD, rank == 0 ? 0 : MPI_UNDEFINED, 0, &none));
    CHECK((rank == 0) == (none != MPI_COMM_NULL), "split with MPI_UNDEFINED");
    if (none != MPI_COMM_NULL)
        OK(MPI_Comm_free(&none));
}

/* Messages to oneself on MPI_COMM_SELF (a local communicator in bcsmpi):
 * buffered sends, posted receives, probes, truncation, and a receive that
 * could never complete reported as an error. */
static void selfmessages(void) {
    int a[3] = {1, 2, 3}, b[3] = {0}, c[3] = {0}, n, flag;
    MPI_Request rq[2];
    MPI_Status st[2];
    OK(MPI_Irecv(b, 3, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_SELF, &rq[0]));
    OK(MPI_Isend(a, 3, MPI_INT, 0, 5, MPI_COMM_SELF, &rq[1]));
    OK(MPI_Waitall(2, rq, st));
    OK(MPI_Get_count(&st[0], MPI_INT, &n));
    CHECK(b[2] == 3 && st[0].MPI_SOURCE == 0 && st[0].MPI_TAG == 5 && n == 3, "self irecv: %d from %d tag %d n %d", b[2], st[0].MPI_SOURCE, st[0].MPI_TAG, n);
    OK(MPI_Send(a, 2, MPI_INT, 0, 6, MPI_COMM_SELF));
    OK(MPI_Send(a + 1, 2, MPI_INT, 0, 7, MPI_COMM_SELF));
    OK(MPI_Iprobe(0, 7, MPI_COMM_SELF, &flag, &st[0]));
    CHECK(flag && st[0].MPI_TAG == 7, "self iprobe flag %d tag %d", flag, st[0].MPI_TAG);
    OK(MPI_Recv(c, 3, MPI_INT, 0, 7, MPI_COMM_SELF, &st[0])); /* out of send order, by tag */
    CHECK(c[0] == 2 && c[1] == 3, "self recv tag 7: %d %d", c[0], c[1]);
    OK(MPI_Recv(c, 3, MPI_INT, 0, MPI_ANY_TAG, MPI_COMM_SELF, &st[0]));
    CHECK(c[0] == 1 && c[1] == 2 && st[0].MPI_TAG == 6, "self recv any tag: %d %d tag %d", c[0], c[1], st[0].MPI_TAG);
    OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    int rc;
    if (!multiple) {
        rc = MPI_Recv(c, 3, MPI_INT, 0, 1, MPI_COMM_SELF, &st[0]);
        CHECK(rc == MPI_ERR_OTHER, "a receive nobody can match gave %d", rc);
    }
    OK(MPI_Send(a, 3, MPI_INT, 0, 8, MPI_COMM_SELF));
    rc = MPI_Recv(c, 1, MPI_INT, 0, 8, MPI_COMM_SELF, &st[0]);
    CHECK(rc == MPI_ERR_TRUNCATE, "self truncation gave %d", rc);
    rc = MPI_Send(a, 1, MPI_INT, 1, 0, MPI_COMM_SELF);
    CHECK(rc == MPI_ERR_RANK, "rank 1 of MPI_COMM_SELF gave %d", rc);
    OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL));
}

/* Groups and MPI_Comm_create; MPI_Request_free on a send. */
static void groups(void) {
    MPI_Group world, rev, rest, u, in, diff;
    int gs, gr, res;
    OK(MPI_Comm_group(MPI_COMM_WORLD, &world));
    OK(MPI_Group_size(world, &gs));
    OK(MPI_Group_rank(world, &gr));
    CHECK(gs == size && gr == rank, "world group size %d rank %d", gs, gr);
    int order[64], zero = 0;
    for (int k = 0; k < size; k++)
        order[k] = size - 1 - k;
    OK(MPI_Group_incl(world, size, order, &rev));
    OK(MPI_Group_rank(rev, &gr));
    CHECK(gr == size - 1 - rank, "reversed group rank %d", gr);
    int t[64];
    OK(MPI_Group_translate_ranks(rev, size, order, world, t));
    for (int k = 0; k < size; k++)
        CHECK(t[k] == k, "translate: %d -> %d", order[k], t[k]);
    OK(MPI_Group_compare(world, rev, &res));
    CHECK(res == (size == 1 ? MPI_IDENT : MPI_SIMILAR), "compare world reversed = %d", res);
    OK(MPI_Group_excl(world, 1, &zero, &rest));
    OK(MPI_Group_rank(rest, &gr));
    CHECK(gr == (rank == 0 ? MPI_UNDEFINED : rank - 1), "rank in group without 0: %d", gr);
    OK(MPI_Group_union(rest, rev, &u));
    OK(MPI_Group_intersection(rest, rev, &in));
    OK(MPI_Group_difference(world, rest, &diff));
    int su, si, sd;
    OK(MPI_Group_size(u, &su));
    OK(MPI_Group_size(in, &si));
    OK(MPI_Group_size(diff, &sd));
    CHECK(su == size && si == size - 1 && sd == 1, "union %d intersection %d difference %d", su, si, sd);

    MPI_Comm sub;
    OK(MPI_Comm_create(MPI_COMM_WORLD, rest, &sub));
    CHECK((rank == 0) == (sub == MPI_COMM_NULL), "comm_create: rank %d got %s", rank, sub == MPI_COMM_NULL ? "null" : "a communicator");
    if (sub != MPI_COMM_NULL) {
        int sr, one = 1, cnt;
        OK(MPI_Comm_rank(sub, &sr));
        CHECK(sr == rank - 1, "rank in created communicator %d", sr);
        OK(MPI_Allreduce(&one, &cnt, 1, MPI_INT, MPI_SUM, sub));
        CHECK(cnt == size - 1, "allreduce on created communicator %d", cnt);
        OK(MPI_Comm_free(&sub));
    }
    MPI_Group *all[] = {&world, &rev, &rest, &u, &in, &diff};
    for (int k = 0; k < 6; k++) {
        OK(MPI_Group_free(all[k]));
        CHECK(*all[k] == MPI_GROUP_NULL, "group %d not null after free", k);
    }

    int out = rank, inv = -1;
    MPI_Request s, r;
    OK(MPI_Irecv(&inv, 1, MPI_INT, (rank + size - 1) % size, 55, MPI_COMM_WORLD, &r));
    OK(MPI_Isend(&out, 1, MPI_INT, (rank + 1) % size, 55, MPI_COMM_WORLD, &s));
    OK(MPI_Request_free(&s));
    CHECK(s == MPI_REQUEST_NULL, "request not null after Request_free");
    OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    CHECK(inv == (rank + size - 1) % size, "after Request_free: got %d", inv);
    OK(MPI_Pcontrol(1));
}

static int handled_code = -1;
static MPI_Comm handled_comm = MPI_COMM_NULL;

static void on_error(MPI_Comm *comm, int *code, ...) {
    handled_comm = *comm;
    handled_code = *code;
}

/* A user error handler sees the communicator and the error; the call then
 * returns the error. */
static void user_errhandler(void) {
    MPI_Comm dup;
    MPI_Errhandler eh;
    OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    OK(MPI_Comm_create_errhandler(on_error, &eh));
    OK(MPI_Comm_set_errhandler(dup, eh));
    OK(MPI_Errhandler_free(&eh));
    CHECK(eh == MPI_ERRHANDLER_NULL, "errhandler not null after free");
    int v = 0, rc = MPI_Send(&v, 1, MPI_INT, size, 0, dup);
    CHECK(rc == MPI_ERR_RANK && handled_code == MPI_ERR_RANK && handled_comm == dup,
          "user handler: rc %d, handler saw code %d", rc, handled_code);
    OK(MPI_Comm_call_errhandler(dup, MPI_ERR_OTHER));
    CHECK(handled_code == MPI_ERR_OTHER, "call_errhandler: handler saw %d", handled_code);
    OK(MPI_Comm_free(&dup));
}

/* Error classes under MPI_ERRORS_RETURN; the job goes on. */
static void errors(void) {
    MPI_Errhandler eh;
    OK(MPI_Comm_get_errhandler(MPI_COMM_WORLD, &eh));
    CHECK(eh == MPI_ERRORS_ARE_FATAL, "default errhandler %p", (void *)eh);
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    int v = 0, rc, cls;
    rc = MPI_Send(&v, 1, MPI_INT, size + 5, 0, MPI_COMM_WORLD);
    OK(MPI_Error_class(rc, &cls));
    CHECK(cls == MPI_ERR_RANK, "invalid rank gave %d", rc);
    rc = MPI_Send(&v, 1, MPI_INT, -2, 0, MPI_COMM_WORLD);
    CHECK(rc == MPI_ERR_RANK, "rank -2 (MPI_ANY_TAG's value) gave %d", rc);
    rc = MPI_Send(&v, 1, MPI_INT, 0, -1, MPI_COMM_WORLD);
    CHECK(rc == MPI_ERR_TAG, "tag -1 gave %d", rc);
    rc = MPI_Send(&v, -1, MPI_INT, 0, 0, MPI_COMM_WORLD);
    CHECK(rc == MPI_ERR_COUNT, "count -1 gave %d", rc);
    rc = MPI_Send(&v, 1, (MPI_Datatype)0x12345, 0, 0, MPI_COMM_WORLD);
    CHECK(rc == MPI_ERR_TYPE, "bad datatype gave %d", rc);
    rc = MPI_Send(&v, 1, MPI_INT, 0, 0, (MPI_Comm)0x7777);
    CHECK(rc == MPI_ERR_COMM, "invalid communicator handle gave %d", rc);
    rc = MPI_Send(&v, 1, MPI_INT, 0, 0, (MPI_Comm)MPI_INT);
    CHECK(rc == MPI_ERR_COMM, "a datatype as communicator gave %d", rc);
    rc = MPI_Barrier(MPI_COMM_NULL);
    CHECK(rc == MPI_ERR_COMM, "MPI_COMM_NULL gave %d", rc);
    rc = MPI_Bcast(&v, 1, MPI_INT, size, MPI_COMM_WORLD);
    CHECK(rc == MPI_ERR_ROOT, "invalid root gave %d", rc);
    rc = MPI_Allreduce(&v, &cls, 1, MPI_INT, MPI_OP_NULL, MPI_COMM_WORLD);
    CHECK(rc == MPI_ERR_OP, "MPI_OP_NULL gave %d", rc);
    MPI_Request bogus = (MPI_Request)0x5555;
    rc = MPI_Wait(&bogus, MPI_STATUS_IGNORE);
    CHECK(rc == MPI_ERR_REQUEST, "bogus request gave %d", rc);
    /* A freed communicator handle: the errhandler was inherited from the world. */
    MPI_Comm dup, stale;
    OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    stale = dup;
    OK(MPI_Comm_free(&dup));
    rc = MPI_Barrier(stale);
    CHECK(rc == MPI_ERR_COMM, "freed communicator gave %d", rc);
    /* Truncation: the receive buffer is shorter than the message. */
    if (size >= 2 && rank < 2) {
        int big[4] = {1, 2, 3, 4}, small[2];
        if (rank == 0) {
            OK(MPI_Send(big, 4, MPI_INT, 1, 99, MPI_COMM_WORLD));
        } else {
            MPI_Status st;
            rc = MPI_Recv(small, 2, MPI_INT, 0, 99, MPI_COMM_WORLD, &st);
            CHECK(rc == MPI_ERR_TRUNCATE, "truncation gave %d", rc);
        }
    }
    MPI_Group g;
    OK(MPI_Comm_group(MPI_COMM_WORLD, &g));
    MPI_Group stale_g = g;
    OK(MPI_Group_free(&g));
    rc = MPI_Group_size(stale_g, &v);
    CHECK(rc == MPI_ERR_GROUP, "freed group gave %d", rc);
    int bad = size;
    rc = MPI_Group_incl(MPI_GROUP_EMPTY, 1, &bad, &g);
    CHECK(rc == MPI_ERR_ARG, "n larger than the group gave %d", rc);
    int d7[2] = {2, 0}, big = size + 1, per = 0;
    rc = MPI_Dims_create(7, 2, d7);
    CHECK(rc == MPI_ERR_DIMS, "dims_create(7) with a fixed 2 gave %d", rc);
    MPI_Comm toobig;
    rc = MPI_Cart_create(MPI_COMM_WORLD, 1, &big, &per, 0, &toobig);
    CHECK(rc == MPI_ERR_DIMS, "a grid larger than the world gave %d", rc);
    int sx, dx;
    rc = MPI_Cart_shift(MPI_COMM_WORLD, 0, 1, &sx, &dx);
    CHECK(rc == MPI_ERR_TOPOLOGY, "cart_shift on the world gave %d", rc);
    rc = MPI_Request_free(&bogus);
    CHECK(rc == MPI_ERR_REQUEST, "Request_free of a bogus request gave %d", rc);
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
}

int main(int argc, char **argv) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_usr1;
    sigaction(SIGUSR1, &sa, NULL); /* no SA_ONSTACK: MPI_Init repairs it */
    int provided;
    multiple = argc > 1 && strcmp(argv[1], "multiple") == 0;
    int want = multiple ? MPI_THREAD_MULTIPLE : MPI_THREAD_SERIALIZED;
    MPI_Init_thread(&argc, &argv, want, &provided);
    CHECK(provided == want, "provided %d, want %d", provided, want);
    OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    environment();
    pingpong();
    wildcards();
    ring();
    some();
    persistent();
    bsend();
    collectives(MPI_COMM_WORLD);
    communicators();
    selfmessages();
    groups();
    topology();
    errors();
    user_errhandler();
    OK(MPI_Barrier(MPI_COMM_WORLD));
    printf("suite ok %d\n", rank);
    OK(MPI_Finalize());
    int flag;
    MPI_Finalized(&flag);
    CHECK(flag, "not finalized");
    return 0;
}
