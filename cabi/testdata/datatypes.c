/* datatypes: derived datatypes of bcsmpi's C ABI on any number of ranks:
 * every constructor against a hand-computed layout, pack/unpack round
 * trips, point-to-point and collectives with derived types on both sides
 * and mixed, and the errors of bad datatypes. Prints "datatypes ok <rank>"
 * on success; a failed check prints what failed and aborts the job. */
#include <mpi.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size;

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

/* layout checks a type's size, extent and true extent. */
static void layout(MPI_Datatype t, int sz, MPI_Aint lb, MPI_Aint ext, MPI_Aint tlb, MPI_Aint text, int line) {
    int s;
    MPI_Aint l, e, tl, te;
    OK(MPI_Type_size(t, &s));
    OK(MPI_Type_get_extent(t, &l, &e));
    OK(MPI_Type_get_true_extent(t, &tl, &te));
    CHECK(s == sz && l == lb && e == ext && tl == tlb && te == text,
          "line %d: size %d lb %ld extent %ld true lb %ld true extent %ld, want %d %ld %ld %ld %ld", line, s, (long)l,
          (long)e, (long)tl, (long)te, sz, (long)lb, (long)ext, (long)tlb, (long)text);
    MPI_Count cs, cl, ce;
    OK(MPI_Type_size_c(t, &cs));
    OK(MPI_Type_get_extent_c(t, &cl, &ce));
    CHECK(cs == sz && cl == lb && ce == ext, "line %d: _c forms %lld %lld %lld", line, (long long)cs, (long long)cl,
          (long long)ce);
}

/* envelope checks a type's envelope. */
static void envelope(MPI_Datatype t, int ni, int na, int nd, int comb, int line) {
    int i, a, d, c;
    OK(MPI_Type_get_envelope(t, &i, &a, &d, &c));
    CHECK(i == ni && a == na && d == nd && c == comb, "line %d: envelope %d %d %d %d, want %d %d %d %d", line, i, a, d, c,
          ni, na, nd, comb);
}

static void constructors(void) {
    MPI_Datatype t, u;
    int ints[16];
    MPI_Aint addrs[8];
    MPI_Datatype types[8];

    OK(MPI_Type_contiguous(3, MPI_INT, &t));
    layout(t, 12, 0, 12, 0, 12, __LINE__);
    envelope(t, 1, 0, 1, MPI_COMBINER_CONTIGUOUS, __LINE__);
    OK(MPI_Type_get_contents(t, 16, 8, 8, ints, addrs, types));
    CHECK(ints[0] == 3 && types[0] == MPI_INT, "contents %d", ints[0]);
    OK(MPI_Type_free(&t));
    CHECK(t == MPI_DATATYPE_NULL, "Type_free did not null the handle");

    OK(MPI_Type_vector(3, 2, 4, MPI_DOUBLE, &t)); /* blocks at 0, 32, 64 of 16 bytes */
    layout(t, 48, 0, 80, 0, 80, __LINE__);
    envelope(t, 3, 0, 1, MPI_COMBINER_VECTOR, __LINE__);
    OK(MPI_Type_get_contents(t, 16, 8, 8, ints, addrs, types));
    CHECK(ints[0] == 3 && ints[1] == 2 && ints[2] == 4 && types[0] == MPI_DOUBLE, "contents %d %d %d", ints[0], ints[1], ints[2]);
    OK(MPI_Type_dup(t, &u));
    layout(u, 48, 0, 80, 0, 80, __LINE__);
    envelope(u, 0, 0, 1, MPI_COMBINER_DUP, __LINE__);
    OK(MPI_Type_get_contents(u, 0, 0, 1, ints, addrs, types));
    envelope(types[0], 3, 0, 1, MPI_COMBINER_VECTOR, __LINE__); /* a new handle to the vector */
    OK(MPI_Type_free(&types[0]));
    OK(MPI_Type_free(&u));
    OK(MPI_Type_free(&t));

    OK(MPI_Type_create_hvector(2, 3, 100, MPI_INT, &t));
    layout(t, 24, 0, 112, 0, 112, __LINE__);
    envelope(t, 2, 1, 1, MPI_COMBINER_HVECTOR, __LINE__);
    OK(MPI_Type_get_contents(t, 16, 8, 8, ints, addrs, types));
    CHECK(ints[0] == 2 && ints[1] == 3 && addrs[0] == 100, "contents %d %d %ld", ints[0], ints[1], (long)addrs[0]);
    OK(MPI_Type_free(&t));

    int bl[3] = {2, 1, 3}, di[3] = {4, 0, 8};
    OK(MPI_Type_indexed(3, bl, di, MPI_INT, &t)); /* ints 4-5, 0, 8-10 */
    layout(t, 24, 0, 44, 0, 44, __LINE__);
    envelope(t, 7, 0, 1, MPI_COMBINER_INDEXED, __LINE__);
    OK(MPI_Type_get_contents(t, 16, 8, 8, ints, addrs, types));
    CHECK(ints[0] == 3 && ints[1] == 2 && ints[3] == 3 && ints[4] == 4 && ints[6] == 8, "contents");
    OK(MPI_Type_free(&t));

    int hbl[2] = {1, 2};
    MPI_Aint hd[2] = {-8, 16};
    OK(MPI_Type_create_hindexed(2, hbl, hd, MPI_DOUBLE, &t)); /* negative displacement */
    layout(t, 24, -8, 40, -8, 40, __LINE__);
    envelope(t, 3, 2, 1, MPI_COMBINER_HINDEXED, __LINE__);
    OK(MPI_Type_free(&t));

    int bd[3] = {0, 5, 10};
    OK(MPI_Type_create_indexed_block(3, 2, bd, MPI_SHORT, &t));
    layout(t, 12, 0, 24, 0, 24, __LINE__);
    envelope(t, 5, 0, 1, MPI_COMBINER_INDEXED_BLOCK, __LINE__);
    OK(MPI_Type_free(&t));

    MPI_Aint hbd[2] = {0, 12};
    OK(MPI_Type_create_hindexed_block(2, 1, hbd, MPI_INT, &t));
    layout(t, 8, 0, 16, 0, 16, __LINE__);
    envelope(t, 2, 2, 1, MPI_COMBINER_HINDEXED_BLOCK, __LINE__);
    OK(MPI_Type_free(&t));

    /* a C struct: padded to its strictest member, as the compiler pads it */
    struct s { int a; double b; char c; };
    int sbl[3] = {1, 1, 1};
    MPI_Aint sd[3] = {offsetof(struct s, a), offsetof(struct s, b), offsetof(struct s, c)};
    MPI_Datatype st[3] = {MPI_INT, MPI_DOUBLE, MPI_CHAR};
    OK(MPI_Type_create_struct(3, sbl, sd, st, &t));
    layout(t, 13, 0, (MPI_Aint)sizeof(struct s), 0, 17, __LINE__);
    envelope(t, 4, 3, 3, MPI_COMBINER_STRUCT, __LINE__);
    OK(MPI_Type_get_contents(t, 16, 8, 8, ints, addrs, types));
    CHECK(addrs[1] == 8 && types[1] == MPI_DOUBLE && types[2] == MPI_CHAR, "contents");
    OK(MPI_Type_free(&t));

    /* subarray: rows 1-2, columns 2-4 of a 4x6 int array */
    int sizes[2] = {4, 6}, subs[2] = {2, 3}, starts[2] = {1, 2};
    OK(MPI_Type_create_subarray(2, sizes, subs, starts, MPI_ORDER_C, MPI_INT, &t));
    layout(t, 24, 0, 96, 32, 36, __LINE__);
    envelope(t, 8, 0, 1, MPI_COMBINER_SUBARRAY, __LINE__);
    OK(MPI_Type_get_contents(t, 16, 8, 8, ints, addrs, types));
    CHECK(ints[0] == 2 && ints[1] == 4 && ints[3] == 2 && ints[6] == 2 && ints[7] == MPI_ORDER_C && types[0] == MPI_INT,
          "contents");
    OK(MPI_Type_free(&t));
    /* Fortran order: dimension 0 varies fastest */
    OK(MPI_Type_create_subarray(2, sizes, subs, starts, MPI_ORDER_FORTRAN, MPI_INT, &t));
    layout(t, 24, 0, 96, 36, 40, __LINE__);
    OK(MPI_Type_free(&t));

    /* distributed arrays, checked by packing a global array numbered 0.. */
    int seq[24], got[24], pos;
    for (int i = 0; i < 24; i++)
        seq[i] = i;
    int gs[2] = {4, 6}, dist[2] = {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_BLOCK},
        dargs[2] = {MPI_DISTRIBUTE_DFLT_DARG, MPI_DISTRIBUTE_DFLT_DARG}, ps[2] = {2, 2};
    OK(MPI_Type_create_darray(4, 3, 2, gs, dist, dargs, ps, MPI_ORDER_C, MPI_INT, &t)); /* rows 2-3, columns 3-5 */
    layout(t, 24, 0, 96, 60, 36, __LINE__);
    envelope(t, 12, 0, 1, MPI_COMBINER_DARRAY, __LINE__);
    OK(MPI_Type_commit(&t));
    pos = 0;
    OK(MPI_Pack(seq, 1, t, got, sizeof got, &pos, MPI_COMM_SELF));
    int want3[6] = {15, 16, 17, 21, 22, 23};
    CHECK(pos == 24 && memcmp(got, want3, sizeof want3) == 0, "darray C block: %d %d %d %d %d %d", got[0], got[1], got[2], got[3],
          got[4], got[5]);
    OK(MPI_Type_free(&t));
    OK(MPI_Type_create_darray(4, 1, 2, gs, dist, dargs, ps, MPI_ORDER_FORTRAN, MPI_INT, &t)); /* (0-1, 3-5), dimension 0 fastest */
    OK(MPI_Type_commit(&t));
    pos = 0;
    OK(MPI_Pack(seq, 1, t, got, sizeof got, &pos, MPI_COMM_SELF));
    int want1[6] = {12, 13, 16, 17, 20, 21};
    CHECK(pos == 24 && memcmp(got, want1, sizeof want1) == 0, "darray Fortran block: %d %d %d %d %d %d", got[0], got[1], got[2],
          got[3], got[4], got[5]);
    OK(MPI_Type_free(&t));
    int g1[1] = {10}, cyc[1] = {MPI_DISTRIBUTE_CYCLIC}, two[1] = {2}, p3[1] = {3};
    OK(MPI_Type_create_darray(3, 1, 1, g1, cyc, two, p3, MPI_ORDER_C, MPI_INT, &t)); /* blocks of 2 dealt to 3 */
    layout(t, 16, 0, 40, 8, 32, __LINE__);
    OK(MPI_Type_commit(&t));
    pos = 0;
    OK(MPI_Pack(seq, 1, t, got, sizeof got, &pos, MPI_COMM_SELF));
    CHECK(pos == 16 && got[0] == 2 && got[1] == 3 && got[2] == 8 && got[3] == 9, "darray cyclic: %d %d %d %d", got[0], got[1],
          got[2], got[3]);
    OK(MPI_Type_get_contents(t, 16, 8, 8, ints, addrs, types));
    CHECK(ints[0] == 3 && ints[1] == 1 && ints[3] == 10 && ints[4] == MPI_DISTRIBUTE_CYCLIC && ints[5] == 2 && ints[6] == 3 &&
              ints[7] == MPI_ORDER_C,
          "darray contents");
    OK(MPI_Type_free(&t));

    OK(MPI_Type_create_resized(MPI_INT, -4, 16, &t));
    layout(t, 4, -4, 16, 0, 4, __LINE__);
    envelope(t, 0, 2, 1, MPI_COMBINER_RESIZED, __LINE__);
    OK(MPI_Type_free(&t));

    /* nested: a vector of 2 resized ints, freed child, and the parent lives on */
    OK(MPI_Type_create_resized(MPI_INT, 0, 12, &u));
    OK(MPI_Type_contiguous(3, u, &t));
    OK(MPI_Type_free(&u));
    OK(MPI_Type_commit(&t));
    layout(t, 12, 0, 36, 0, 28, __LINE__);
    OK(MPI_Type_free(&t));

    /* large-count constructors and their envelope */
    MPI_Count cbl[2] = {1, 2}, cd[2] = {0, 3};
    OK(MPI_Type_indexed_c(2, cbl, cd, MPI_INT, &t));
    layout(t, 12, 0, 20, 0, 20, __LINE__);
    MPI_Count ni, na, nc, nd;
    int comb;
    OK(MPI_Type_get_envelope_c(t, &ni, &na, &nc, &nd, &comb));
    CHECK(ni == 0 && na == 0 && nc == 5 && nd == 1 && comb == MPI_COMBINER_INDEXED, "envelope_c %lld %lld %lld %lld %d",
          (long long)ni, (long long)na, (long long)nc, (long long)nd, comb);
    MPI_Count lc[8];
    OK(MPI_Type_get_contents_c(t, 0, 0, 8, 1, ints, addrs, lc, types));
    CHECK(lc[0] == 2 && lc[2] == 2 && lc[4] == 3, "contents_c");
    OK(MPI_Type_free(&t));

    /* predefined */
    envelope(MPI_INT, 0, 0, 0, MPI_COMBINER_NAMED, __LINE__);
    layout(MPI_DOUBLE_INT, 12, 0, 16, 0, 12, __LINE__);

    /* names, and a derived handle as an int and back */
    OK(MPI_Type_contiguous(2, MPI_INT, &t));
    CHECK(MPI_Type_fromint(MPI_Type_toint(t)) == t, "Type_fromint(Type_toint(t)) != t");
    char name[MPI_MAX_OBJECT_NAME];
    int len;
    OK(MPI_Type_get_name(t, name, &len));
    CHECK(len == 0, "derived type name %s", name);
    OK(MPI_Type_set_name(t, "pair"));
    OK(MPI_Type_get_name(t, name, &len));
    CHECK(strcmp(name, "pair") == 0 && len == 4, "name %s", name);
    OK(MPI_Type_free(&t));
}

static void packing(void) {
    /* a 3x4 double matrix; the vector is its column 1 */
    double m[12], out[12];
    for (int i = 0; i < 12; i++)
        m[i] = i + 0.5;
    MPI_Datatype col;
    OK(MPI_Type_vector(3, 1, 4, MPI_DOUBLE, &col));
    OK(MPI_Type_commit(&col));
    int need;
    OK(MPI_Pack_size(2, col, MPI_COMM_WORLD, &need));
    CHECK(need == 48, "pack size %d", need);
    char buf[64];
    int pos = 0;
    OK(MPI_Pack(m + 1, 1, col, buf, sizeof buf, &pos, MPI_COMM_WORLD));
    CHECK(pos == 24, "position %d", pos);
    int seven = 7;
    OK(MPI_Pack(&seven, 1, MPI_INT, buf, sizeof buf, &pos, MPI_COMM_WORLD));
    CHECK(pos == 28, "position %d", pos);
    double packed[3];
    memcpy(packed, buf, 24);
    CHECK(packed[0] == 1.5 && packed[1] == 5.5 && packed[2] == 9.5, "packed %g %g %g", packed[0], packed[1], packed[2]);
    for (int i = 0; i < 12; i++)
        out[i] = -1;
    pos = 0;
    OK(MPI_Unpack(buf, 28, &pos, out + 2, 1, col, MPI_COMM_WORLD));
    int got;
    OK(MPI_Unpack(buf, 28, &pos, &got, 1, MPI_INT, MPI_COMM_WORLD));
    CHECK(pos == 28 && got == 7, "pos %d got %d", pos, got);
    for (int i = 0; i < 12; i++) {
        double want = i % 4 == 2 ? (i / 4) * 4 + 1.5 : -1;
        CHECK(out[i] == want, "out[%d] = %g, want %g", i, out[i], want);
    }
    /* a struct with a hole, packed and unpacked through MPI_PACKED */
    struct s { char c; double d; int i; } in[2] = {{'a', 1.25, 10}, {'b', 2.5, 20}}, back[2];
    int bl[3] = {1, 1, 1};
    MPI_Aint d[3] = {offsetof(struct s, c), offsetof(struct s, d), offsetof(struct s, i)};
    MPI_Datatype ty[3] = {MPI_CHAR, MPI_DOUBLE, MPI_INT}, st;
    OK(MPI_Type_create_struct(3, bl, d, ty, &st));
    OK(MPI_Type_commit(&st));
    OK(MPI_Pack_size(2, st, MPI_COMM_WORLD, &need));
    CHECK(need == 26, "pack size %d", need);
    pos = 0;
    OK(MPI_Pack(in, 2, st, buf, sizeof buf, &pos, MPI_COMM_WORLD));
    memset(back, 0, sizeof back);
    int p2 = 0;
    OK(MPI_Unpack(buf, pos, &p2, back, 2, st, MPI_COMM_WORLD));
    for (int i = 0; i < 2; i++)
        CHECK(back[i].c == in[i].c && back[i].d == in[i].d && back[i].i == in[i].i, "struct %d", i);
    /* too small an output buffer */
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    pos = 0;
    int rc = MPI_Pack(in, 2, st, buf, 20, &pos, MPI_COMM_WORLD);
    int cls;
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_TRUNCATE && pos == 0, "pack overflow: class %d pos %d", cls, pos);
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
    OK(MPI_Type_free(&st));
    OK(MPI_Type_free(&col));
}

/* pointtopoint: rank 0 and its peer (itself on one rank) exchange data with
 * derived types on both sides and mixed. */
static void pointtopoint(MPI_Comm comm) {
    int me, n;
    OK(MPI_Comm_rank(comm, &me));
    OK(MPI_Comm_size(comm, &n));
    int peer = n > 1 ? 1 : 0;
    if (me > 1)
        return;
    MPI_Datatype col, pair, every2, sub, idx, st;
    OK(MPI_Type_vector(4, 1, 5, MPI_INT, &col)); /* column of a 4x5 int matrix */
    OK(MPI_Type_commit(&col));
    OK(MPI_Type_contiguous(2, MPI_INT, &pair));
    OK(MPI_Type_commit(&pair));
    OK(MPI_Type_create_resized(MPI_INT, 0, 8, &every2)); /* every other int */
    OK(MPI_Type_commit(&every2));
    int sizes[2] = {4, 5}, subs[2] = {2, 2}, starts[2] = {1, 3};
    OK(MPI_Type_create_subarray(2, sizes, subs, starts, MPI_ORDER_C, MPI_INT, &sub));
    OK(MPI_Type_commit(&sub));
    int bl[2] = {1, 2}, di[2] = {3, 0};
    OK(MPI_Type_indexed(2, bl, di, MPI_INT, &idx)); /* int 3, then ints 0-1 */
    OK(MPI_Type_commit(&idx));
    struct rec { short s; double d; } recs[3] = {{1, 1.5}, {2, 2.5}, {3, 3.5}}, rrecs[3];
    int sbl[2] = {1, 1};
    MPI_Aint sd[2] = {offsetof(struct rec, s), offsetof(struct rec, d)};
    MPI_Datatype sty[2] = {MPI_SHORT, MPI_DOUBLE};
    OK(MPI_Type_create_struct(2, sbl, sd, sty, &st));
    OK(MPI_Type_commit(&st));

    int m[20], r[20];
    for (int i = 0; i < 20; i++)
        m[i] = 100 + i;
    MPI_Status status;
    int count;
    if (me == 0) {
        MPI_Request q[6];
        OK(MPI_Isend(m + 2, 1, col, peer, 1, comm, &q[0]));    /* column 2: 2 7 12 17 */
        OK(MPI_Isend(m, 4, MPI_INT, peer, 2, comm, &q[1]));    /* into a column */
        OK(MPI_Isend(m, 5, every2, peer, 3, comm, &q[2]));     /* 100 102 ... 108 */
        OK(MPI_Isend(m, 1, sub, peer, 4, comm, &q[3]));        /* 108 109 113 114 */
        OK(MPI_Isend(m, 2, idx, peer, 5, comm, &q[4]));        /* 103 100 101 107 104 105 */
        OK(MPI_Isend(recs, 3, st, peer, 6, comm, &q[5]));
        if (peer != 0)
            OK(MPI_Waitall(6, q, MPI_STATUSES_IGNORE));
        else
            for (int k = 0; k < 6; k++)
                OK(MPI_Request_free(&q[k]));
        int four[4] = {41, 42, 43, 44};
        MPI_Request q4;
        OK(MPI_Isend(four, 4, MPI_INT, peer, 10, comm, &q4));
        if (peer != 0)
            OK(MPI_Wait(&q4, MPI_STATUS_IGNORE));
        else
            OK(MPI_Request_free(&q4));
    }
    if (me == peer) {
        for (int i = 0; i < 20; i++)
            r[i] = -1;
        OK(MPI_Recv(r, 4, MPI_INT, 0, 1, comm, &status)); /* vector sent, contiguous received */
        CHECK(r[0] == 102 && r[1] == 107 && r[2] == 112 && r[3] == 117 && r[4] == -1, "column %d %d %d %d", r[0], r[1], r[2], r[3]);
        OK(MPI_Get_count(&status, MPI_INT, &count));
        CHECK(count == 4, "count %d", count);
        for (int i = 0; i < 20; i++)
            r[i] = -1;
        MPI_Request q;
        OK(MPI_Irecv(r + 1, 1, col, 0, 2, comm, &q)); /* contiguous sent, vector received (unpacked at Wait) */
        OK(MPI_Wait(&q, &status));
        for (int i = 0; i < 20; i++) {
            int want = i % 5 == 1 ? 100 + i / 5 : -1;
            CHECK(r[i] == want, "r[%d] = %d, want %d", i, r[i], want);
        }
        OK(MPI_Get_count(&status, col, &count));
        CHECK(count == 1, "count %d", count);
        OK(MPI_Get_elements(&status, col, &count));
        CHECK(count == 4, "elements %d", count);
        for (int i = 0; i < 20; i++)
            r[i] = -1;
        OK(MPI_Recv(r, 5, MPI_INT, 0, 3, comm, &status));
        for (int i = 0; i < 5; i++)
            CHECK(r[i] == 100 + 2 * i, "every other r[%d] = %d", i, r[i]);
        OK(MPI_Get_count(&status, pair, &count)); /* 5 ints are not whole pairs */
        CHECK(count == MPI_UNDEFINED, "count of pairs %d", count);
        OK(MPI_Get_elements(&status, pair, &count));
        CHECK(count == 5, "elements %d", count);
        MPI_Status made;
        OK(MPI_Status_set_elements(&made, pair, 3)); /* one pair and a half */
        OK(MPI_Get_count(&made, pair, &count));
        CHECK(count == MPI_UNDEFINED, "count after set_elements 3: %d", count);
        OK(MPI_Get_elements(&made, MPI_INT, &count));
        CHECK(count == 3, "elements after set_elements 3: %d", count);
        for (int i = 0; i < 20; i++)
            r[i] = -1;
        OK(MPI_Recv(r, 1, sub, 0, 4, comm, &status)); /* subarray both sides */
        for (int i = 0; i < 20; i++) {
            int want = (i / 5 == 1 || i / 5 == 2) && i % 5 >= 3 ? 100 + i : -1;
            CHECK(r[i] == want, "sub r[%d] = %d, want %d", i, r[i], want);
        }
        for (int i = 0; i < 20; i++)
            r[i] = -1;
        OK(MPI_Recv(r, 2, idx, 0, 5, comm, &status)); /* indexed both sides: same layout */
        int wantidx[8] = {100, 101, -1, 103, 104, 105, -1, 107};
        for (int i = 0; i < 8; i++)
            CHECK(r[i] == wantidx[i], "idx r[%d] = %d, want %d", i, r[i], wantidx[i]);
        memset(rrecs, 0, sizeof rrecs);
        OK(MPI_Recv(rrecs, 3, st, 0, 6, comm, &status));
        for (int i = 0; i < 3; i++)
            CHECK(rrecs[i].s == recs[i].s && rrecs[i].d == recs[i].d, "rec %d: %d %g", i, rrecs[i].s, rrecs[i].d);
        OK(MPI_Get_count(&status, st, &count));
        CHECK(count == 3, "count of records %d", count);
        /* a matched probe, then the matched receive into a column */
        MPI_Message msg;
        OK(MPI_Mprobe(0, 10, comm, &msg, &status));
        OK(MPI_Get_count(&status, col, &count));
        CHECK(count == 1, "probed count of columns %d", count);
        for (int i = 0; i < 20; i++)
            r[i] = -1;
        OK(MPI_Mrecv(r + 2, 1, col, &msg, &status));
        CHECK(r[2] == 41 && r[7] == 42 && r[12] == 43 && r[17] == 44 && r[3] == -1, "mrecv column %d %d %d %d", r[2], r[7], r[12],
              r[17]);
    }
    /* Sendrecv_replace through a vector; a persistent receive through one */
    if (n == 1 || me <= 1) {
        int other = n > 1 ? 1 - me : 0;
        for (int i = 0; i < 20; i++)
            m[i] = me * 1000 + i;
        OK(MPI_Sendrecv_replace(m + 1, 1, col, other, 7, other, 7, comm, &status));
        for (int i = 0; i < 20; i++) {
            int want = i % 5 == 1 ? other * 1000 + i : me * 1000 + i;
            CHECK(m[i] == want, "replace m[%d] = %d, want %d", i, m[i], want);
        }
        MPI_Request pr;
        for (int i = 0; i < 20; i++)
            r[i] = -1;
        OK(MPI_Recv_init(r, 1, col, other, 8, comm, &pr));
        for (int round = 0; round < 2; round++) {
            int v[4] = {round, round + 1, round + 2, round + 3};
            OK(MPI_Start(&pr));
            OK(MPI_Send(v, 4, MPI_INT, other, 8, comm));
            OK(MPI_Wait(&pr, MPI_STATUS_IGNORE));
            CHECK(r[0] == round && r[5] == round + 1 && r[15] == round + 3 && r[1] == -1, "persistent round %d", round);
        }
        OK(MPI_Request_free(&pr));
    }
    /* a halo exchange loop through column types, both directions in flight:
     * pack buffers are reused between iterations, never while in use */
    if (n > 1) {
        int other = 1 - me;
        for (int it = 0; it < 50; it++) {
            int out[20], in[20];
            for (int i = 0; i < 20; i++)
                out[i] = it * 1000 + me * 100 + i, in[i] = -1;
            MPI_Request q[4];
            OK(MPI_Irecv(in, 1, col, other, 20, comm, &q[0]));
            OK(MPI_Irecv(in + 4, 1, col, other, 21, comm, &q[1]));
            OK(MPI_Isend(out, 1, col, other, 20, comm, &q[2]));
            OK(MPI_Isend(out + 4, 1, col, other, 21, comm, &q[3]));
            OK(MPI_Waitall(4, q, MPI_STATUSES_IGNORE));
            for (int i = 0; i < 20; i++) {
                int want = i % 5 == 0 || i % 5 == 4 ? it * 1000 + other * 100 + i : -1;
                CHECK(in[i] == want, "halo iteration %d: in[%d] = %d, want %d", it, i, in[i], want);
            }
        }
    }
    /* a message longer than the receive's type signature: MPI_ERR_TRUNCATE */
    OK(MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN));
    if (me == 0) {
        int six[6] = {1, 2, 3, 4, 5, 6};
        MPI_Request q;
        OK(MPI_Isend(six, 6, MPI_INT, peer, 9, comm, &q));
        if (peer != 0)
            OK(MPI_Wait(&q, MPI_STATUS_IGNORE));
        else
            OK(MPI_Request_free(&q));
    }
    if (me == peer) {
        for (int i = 0; i < 20; i++)
            r[i] = -1;
        int rc = MPI_Recv(r, 1, col, 0, 9, comm, &status), cls;
        MPI_Error_class(rc, &cls);
        CHECK(cls == MPI_ERR_TRUNCATE, "class %d, want MPI_ERR_TRUNCATE", cls);
        CHECK(r[0] == 1 && r[5] == 2 && r[10] == 3 && r[15] == 4 && r[1] == -1, "truncated data %d %d %d %d", r[0], r[5], r[10], r[15]);
    }
    OK(MPI_Comm_set_errhandler(comm, MPI_ERRORS_ARE_FATAL));
    MPI_Type_free(&col);
    MPI_Type_free(&pair);
    MPI_Type_free(&every2);
    MPI_Type_free(&sub);
    MPI_Type_free(&idx);
    MPI_Type_free(&st);
}

static void sum_recs(void *in, void *inout, int *len, MPI_Datatype *type) {
    (void)type;
    struct rec { short s; double d; } *a = in, *b = inout;
    for (int i = 0; i < *len; i++)
        b[i].s += a[i].s, b[i].d += a[i].d;
}

static void collectives(void) {
    /* Bcast of a matrix column */
    int m[4 * 5];
    MPI_Datatype col, colr;
    OK(MPI_Type_vector(4, 1, 5, MPI_INT, &col));
    OK(MPI_Type_commit(&col));
    for (int i = 0; i < 20; i++)
        m[i] = rank == size - 1 ? 500 + i : -1;
    OK(MPI_Bcast(m + 3, 1, col, size - 1, MPI_COMM_WORLD));
    for (int i = 0; i < 20; i++) {
        int want = i % 5 == 3 || rank == size - 1 ? 500 + i : -1;
        CHECK(m[i] == want, "bcast m[%d] = %d, want %d", i, m[i], want);
    }
    /* Gather: each rank's 4 ints become a column of the root's 4 x size
     * matrix (the receive type is a column resized to one int) */
    int *g = malloc(sizeof(int) * 4 * (size_t)size);
    for (int i = 0; i < 4 * size; i++)
        g[i] = -1;
    MPI_Datatype gcol;
    OK(MPI_Type_vector(4, 1, size, MPI_INT, &gcol));
    OK(MPI_Type_create_resized(gcol, 0, sizeof(int), &colr));
    OK(MPI_Type_commit(&colr));
    int mine[4] = {rank * 10, rank * 10 + 1, rank * 10 + 2, rank * 10 + 3};
    OK(MPI_Gather(mine, 4, MPI_INT, g, 1, colr, 0, MPI_COMM_WORLD));
    if (rank == 0)
        for (int row = 0; row < 4; row++)
            for (int c = 0; c < size; c++)
                CHECK(g[row * size + c] == c * 10 + row, "gather g[%d][%d] = %d", row, c, g[row * size + c]);
    /* and back: Scatter the columns */
    int back[4] = {-1, -1, -1, -1};
    OK(MPI_Scatter(g, 1, colr, back, 4, MPI_INT, 0, MPI_COMM_WORLD));
    for (int j = 0; j < 4; j++) /* column r of the root's matrix is rank r's */
        CHECK(back[j] == rank * 10 + j, "scatter back[%d] = %d", j, back[j]);
    /* the same through Scatterv: one column to each rank */
    int *ones = malloc(sizeof(int) * (size_t)size), *idx = malloc(sizeof(int) * (size_t)size);
    for (int i = 0; i < size; i++)
        ones[i] = 1, idx[i] = i;
    for (int j = 0; j < 4; j++)
        back[j] = -1;
    OK(MPI_Scatterv(g, ones, idx, colr, back, 4, MPI_INT, 0, MPI_COMM_WORLD));
    for (int j = 0; j < 4; j++)
        CHECK(back[j] == rank * 10 + j, "scatterv back[%d] = %d", j, back[j]);
    free(ones), free(idx);
    free(g);
    /* Reduce_scatter_block in place on every other int: item j of every
     * rank is rank + j; rank r gets the sum of items r, and the holes stay */
    MPI_Datatype every2;
    OK(MPI_Type_create_resized(MPI_INT, 0, 2 * sizeof(int), &every2));
    OK(MPI_Type_commit(&every2));
    int *rs = malloc(sizeof(int) * 2 * (size_t)size);
    for (int j = 0; j < size; j++)
        rs[2 * j] = rank + j, rs[2 * j + 1] = -7;
    OK(MPI_Reduce_scatter_block(MPI_IN_PLACE, rs, 1, every2, MPI_SUM, MPI_COMM_WORLD));
    CHECK(rs[0] == size * (size - 1) / 2 + size * rank && rs[1] == -7, "reduce_scatter_block in place: %d %d", rs[0], rs[1]);
    free(rs);
    MPI_Type_free(&every2);
    /* Alltoall of struct records: record j of rank i goes to rank j */
    struct rec { short s; double d; } *out = malloc(sizeof(struct rec) * (size_t)size),
                                      *in = malloc(sizeof(struct rec) * (size_t)size);
    int sbl[2] = {1, 1};
    MPI_Aint sd[2] = {offsetof(struct rec, s), offsetof(struct rec, d)};
    MPI_Datatype sty[2] = {MPI_SHORT, MPI_DOUBLE}, st;
    OK(MPI_Type_create_struct(2, sbl, sd, sty, &st));
    OK(MPI_Type_commit(&st));
    for (int j = 0; j < size; j++)
        out[j].s = (short)(rank * 100 + j), out[j].d = rank + j * 0.25, in[j].s = -1, in[j].d = -1;
    OK(MPI_Alltoall(out, 1, st, in, 1, st, MPI_COMM_WORLD));
    for (int i = 0; i < size; i++)
        CHECK(in[i].s == i * 100 + rank && in[i].d == i + rank * 0.25, "alltoall from %d: %d %g", i, in[i].s, in[i].d);
    /* Allreduce of records with a user operation on the struct type */
    MPI_Op op;
    OK(MPI_Op_create(sum_recs, 1, &op));
    struct rec one = {(short)(rank + 1), rank * 0.5}, tot;
    OK(MPI_Allreduce(&one, &tot, 1, st, op, MPI_COMM_WORLD));
    CHECK(tot.s == size * (size + 1) / 2 && tot.d == 0.25 * size * (size - 1), "user op on struct: %d %g", tot.s, tot.d);
    OK(MPI_Op_free(&op));
    /* Reduce and Allreduce of a column vector with MPI_SUM */
    double dm[24], dr[24];
    MPI_Datatype dcol;
    OK(MPI_Type_vector(3, 1, 4, MPI_DOUBLE, &dcol));
    OK(MPI_Type_commit(&dcol));
    for (int i = 0; i < 24; i++)
        dm[i] = rank + i, dr[i] = -1;
    OK(MPI_Allreduce(dm, dr, 2, dcol, MPI_SUM, MPI_COMM_WORLD)); /* columns 0 and 1 (extent 9 doubles: item 1 at 9) */
    double base = size * (size - 1) / 2.0;
    CHECK(dr[0] == base && dr[4] == base + 4 * size && dr[8] == base + 8 * size, "allreduce column 0: %g %g %g", dr[0], dr[4], dr[8]);
    CHECK(dr[9] == base + 9 * size && dr[1] == -1 && dr[2] == -1, "allreduce column: dr[9] %g dr[1] %g", dr[9], dr[1]);
    OK(MPI_Allreduce(MPI_IN_PLACE, dm, 1, dcol, MPI_MAX, MPI_COMM_WORLD));
    CHECK(dm[0] == size - 1 && dm[4] == size - 1 + 4 && dm[1] == rank + 1, "in-place max %g %g %g", dm[0], dm[4], dm[1]);
    /* Allgatherv with an indexed receive type: rank i contributes i+1
     * pairs of ints, received as indexed blocks (pairs of ints spread out) */
    MPI_Datatype spread0, spread;
    int bl[1] = {2}, di[1] = {1};
    OK(MPI_Type_indexed(1, bl, di, MPI_INT, &spread0)); /* ints 1-2: lb 4, extent 8 */
    layout(spread0, 8, 4, 8, 4, 8, __LINE__);
    OK(MPI_Type_create_resized(spread0, 0, 3 * sizeof(int), &spread)); /* [hole, int, int] */
    OK(MPI_Type_free(&spread0));
    OK(MPI_Type_commit(&spread));
    int *counts = malloc(sizeof(int) * (size_t)size), *displs = malloc(sizeof(int) * (size_t)size), total = 0;
    for (int i = 0; i < size; i++)
        counts[i] = i + 1, displs[i] = total, total += i + 1;
    int *send = malloc(sizeof(int) * 2 * (size_t)(rank + 1));
    for (int k = 0; k < 2 * (rank + 1); k++)
        send[k] = rank * 100 + k;
    int *recv = malloc(sizeof(int) * 3 * (size_t)total);
    for (int k = 0; k < 3 * total; k++)
        recv[k] = -1;
    OK(MPI_Allgatherv(send, 2 * (rank + 1), MPI_INT, recv, counts, displs, spread, MPI_COMM_WORLD));
    for (int i = 0; i < size; i++)
        for (int j = 0; j < counts[i]; j++) {
            int *p = recv + 3 * (displs[i] + j);
            CHECK(p[0] == -1 && p[1] == i * 100 + 2 * j && p[2] == i * 100 + 2 * j + 1, "allgatherv from %d item %d: %d %d %d", i,
                  j, p[0], p[1], p[2]);
        }
    /* non-blocking: Iallgather into the columns of a 4 x size matrix,
     * unpacked when Wait completes it */
    int *ag = malloc(sizeof(int) * 4 * (size_t)size);
    for (int i = 0; i < 4 * size; i++)
        ag[i] = -1;
    MPI_Request q;
    OK(MPI_Iallgather(mine, 4, MPI_INT, ag, 1, colr, MPI_COMM_WORLD, &q));
    OK(MPI_Wait(&q, MPI_STATUS_IGNORE));
    for (int row = 0; row < 4; row++)
        for (int c = 0; c < size; c++)
            CHECK(ag[row * size + c] == c * 10 + row, "iallgather ag[%d][%d] = %d", row, c, ag[row * size + c]);
    free(ag);
    /* MPI_BOTTOM: a struct of absolute addresses of two variables */
    int a = rank == 0 ? 42 : -1;
    double b = rank == 0 ? 4.5 : -1;
    MPI_Aint ad[2];
    OK(MPI_Get_address(&a, &ad[0]));
    OK(MPI_Get_address(&b, &ad[1]));
    int abl[2] = {1, 1};
    MPI_Datatype aty[2] = {MPI_INT, MPI_DOUBLE}, abs;
    OK(MPI_Type_create_struct(2, abl, ad, aty, &abs));
    OK(MPI_Type_commit(&abs));
    OK(MPI_Bcast(MPI_BOTTOM, 1, abs, 0, MPI_COMM_WORLD));
    CHECK(a == 42 && b == 4.5, "bcast from MPI_BOTTOM: %d %g", a, b);
    int a2 = -1;
    double b2 = -1;
    MPI_Aint ad2[2];
    OK(MPI_Get_address(&a2, &ad2[0]));
    OK(MPI_Get_address(&b2, &ad2[1]));
    MPI_Datatype abs2;
    OK(MPI_Type_create_struct(2, abl, ad2, aty, &abs2));
    OK(MPI_Type_commit(&abs2));
    OK(MPI_Sendrecv(MPI_BOTTOM, 1, abs, 0, 3, MPI_BOTTOM, 1, abs2, 0, 3, MPI_COMM_SELF, MPI_STATUS_IGNORE));
    CHECK(a2 == 42 && b2 == 4.5, "sendrecv between MPI_BOTTOM types: %d %g", a2, b2);
    MPI_Type_free(&abs);
    MPI_Type_free(&abs2);
    free(counts), free(displs), free(send), free(recv), free(out), free(in);
    MPI_Type_free(&spread);
    MPI_Type_free(&dcol);
    MPI_Type_free(&st);
    MPI_Type_free(&col);
    MPI_Type_free(&gcol);
    MPI_Type_free(&colr);
}

static int classof(int rc) {
    int c;
    MPI_Error_class(rc, &c);
    return c;
}

static void errors(void) {
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    MPI_Datatype t, freed;
    int x[4] = {0};
    OK(MPI_Type_contiguous(2, MPI_INT, &t));
    /* uncommitted: communication and packing refuse it */
    CHECK(classof(MPI_Send(x, 1, t, MPI_PROC_NULL, 0, MPI_COMM_WORLD)) == MPI_ERR_TYPE, "send with an uncommitted type");
    int pos = 0;
    char buf[16];
    CHECK(classof(MPI_Pack(x, 1, t, buf, 16, &pos, MPI_COMM_WORLD)) == MPI_ERR_TYPE, "pack with an uncommitted type");
    CHECK(classof(MPI_Bcast(x, 1, t, 0, MPI_COMM_SELF)) == MPI_ERR_TYPE, "bcast with an uncommitted type");
    /* but its queries work */
    int sz;
    OK(MPI_Type_size(t, &sz));
    freed = t;
    OK(MPI_Type_free(&t));
    CHECK(classof(MPI_Type_size(freed, &sz)) == MPI_ERR_TYPE, "size of a freed type");
    CHECK(classof(MPI_Send(x, 1, freed, MPI_PROC_NULL, 0, MPI_COMM_WORLD)) == MPI_ERR_TYPE, "send with a freed type");
    CHECK(classof(MPI_Type_commit(&freed)) == MPI_ERR_TYPE, "commit of a freed type");
    CHECK(classof(MPI_Type_free(&freed)) == MPI_ERR_TYPE, "double free");
    MPI_Datatype mi = MPI_INT;
    CHECK(classof(MPI_Type_free(&mi)) == MPI_ERR_TYPE, "free of MPI_INT");
    int ints[2];
    MPI_Aint addrs[2];
    MPI_Datatype types[2];
    CHECK(classof(MPI_Type_get_contents(MPI_INT, 2, 2, 2, ints, addrs, types)) == MPI_ERR_TYPE, "contents of MPI_INT");
    CHECK(classof(MPI_Type_contiguous(-1, MPI_INT, &t)) == MPI_ERR_COUNT, "negative count");
    CHECK(classof(MPI_Type_vector(2, 1, 1, MPI_DATATYPE_NULL, &t)) == MPI_ERR_TYPE, "null oldtype");
    CHECK(classof(MPI_Type_vector(2, 1, 1, (MPI_Datatype)MPI_COMM_WORLD, &t)) == MPI_ERR_TYPE, "a communicator as oldtype");
    int sizes[1] = {4}, subs[1] = {5}, starts[1] = {0};
    CHECK(classof(MPI_Type_create_subarray(1, sizes, subs, starts, MPI_ORDER_C, MPI_INT, &t)) == MPI_ERR_ARG, "subsize > size");
    int gs[1] = {8}, dist[1] = {MPI_DISTRIBUTE_BLOCK}, darg[1] = {MPI_DISTRIBUTE_DFLT_DARG}, ps[1] = {3};
    CHECK(classof(MPI_Type_create_darray(2, 0, 1, gs, dist, darg, ps, MPI_ORDER_C, MPI_INT, &t)) == MPI_ERR_ARG,
          "psizes product 3 != size 2");
    darg[0] = 2; /* blocks of 2 on 3 processes cannot hold 8 */
    CHECK(classof(MPI_Type_create_darray(3, 0, 1, gs, dist, darg, ps, MPI_ORDER_C, MPI_INT, &t)) == MPI_ERR_ARG, "darg too small");
    OK(MPI_Type_contiguous(2, MPI_INT, &t));
    OK(MPI_Type_commit(&t));
    MPI_Status st;
    memset(&st, 0, sizeof st);
    CHECK(classof(MPI_Type_get_contents(t, 0, 0, 0, ints, addrs, types)) == MPI_ERR_ARG, "max_integers too small");
    OK(MPI_Type_free(&t));
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
    OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL));
}

int main(int argc, char **argv) {
    OK(MPI_Init(&argc, &argv));
    OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    if (argc > 1 && strcmp(argv[1], "uncommitted") == 0) { /* under MPI_ERRORS_ARE_FATAL */
        MPI_Datatype t;
        int x[2] = {0, 0};
        OK(MPI_Type_contiguous(2, MPI_INT, &t));
        MPI_Send(x, 1, t, MPI_PROC_NULL, 0, MPI_COMM_WORLD);
        printf("not reached\n");
        return 0;
    }
    constructors();
    packing();
    pointtopoint(MPI_COMM_WORLD);
    pointtopoint(MPI_COMM_SELF);
    collectives();
    errors();
    OK(MPI_Finalize());
    printf("datatypes ok %d\n", rank);
    return 0;
}
