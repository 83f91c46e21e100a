/* pairtype: the predefined value-index pair types (MPI_FLOAT_INT, ...,
 * MPI_2INTEGER) are, for every call that moves data, the struct of their
 * two parts: typemap {(value, 0), (index, offset)}, size the parts' sum,
 * extent the C struct's (padding included). Checks, per pair type: size,
 * extent, true extent; MPI_Pack_size, MPI_Pack and MPI_Unpack (also
 * unpacked as a struct of the parts); sends received as a struct of the
 * same two parts and the reverse, and as MPI_PACKED; MPI_Get_count and
 * MPI_Get_elements (a partial pair); collectives whose members use the pair
 * type and the struct; MINLOC and MAXLOC with Reduce, Allreduce (in place,
 * nonblocking, on a contiguous type of pairs) and Reduce_local, ties broken
 * by the lower index; an MPI_Accumulate with MPI_MAXLOC. Self-checking. */
#include "dt.h"

/* parts makes the struct {V at 0, I at off} of extent ext (resized if its
 * padding is not that). */
static MPI_Datatype parts(MPI_Datatype v, MPI_Datatype i, MPI_Aint off, MPI_Aint ext) {
    int bl[2] = {1, 1};
    MPI_Aint d[2] = {0, off};
    MPI_Datatype ts[2] = {v, i}, s, r;
    MPI_Aint l, e;
    OK(MPI_Type_create_struct(2, bl, d, ts, &s));
    OK(MPI_Type_get_extent(s, &l, &e));
    if (l == 0 && e == ext) { /* padded as the C struct is (MPICH 4.0 miscounts elements of the resized type) */
        OK(MPI_Type_commit(&s));
        return s;
    }
    OK(MPI_Type_create_resized(s, 0, ext, &r));
    OK(MPI_Type_commit(&r));
    OK(MPI_Type_free(&s));
    return r;
}

/* The reference implementations miscount the basic elements of pair
 * types (two each): MPICH 4.0 divides by zero in MPI_Get_elements after a
 * receive of MPI_FLOAT_INT, counts 10 elements for 5 set with
 * MPI_Status_set_elements on MPI_DOUBLE_INT and refuses a partial pair
 * (MPI_ERR_TRUNCATE); Open MPI 4.1 counts one element per MPI_FLOAT_INT.
 * Neither takes MINLOC on a derived type of pairs, which bcsmpi does (as
 * MPICH takes MPI_SUM on a contiguous type of doubles). Those checks run
 * under bcsmpi only. */
#if defined(MPICH_VERSION) || defined(OPEN_MPI)
#define REFERENCE 1
#else
#define REFERENCE 0
#endif

/* partner is the rank this one exchanges with: its neighbour, or itself. */
static int partner(void) { return (rank ^ 1) < size ? rank ^ 1 : rank; }

/* PAIR defines the checks of one pair type DT of value type V (an MPI
 * type MV) and index type I (MI). DERIVED: also reduce a contiguous type
 * of two pairs (bcsmpi takes MINLOC on derived types of the pair types
 * with a runtime element type). */
#define PAIR(NAME, V, I, DT, MV, MI, DERIVED)                                                                  \
    static void NAME(void) {                                                                               \
        typedef struct { V v; I i; } P;                                                                    \
        typedef struct { V a; I b; V c; } P3;                                                              \
        const char *nm = #DT;                                                                              \
        int sz = -1;                                                                                       \
        MPI_Aint lb = -1, ext = -1, tlb = -1, text = -1;                                                   \
        OK(MPI_Type_size(DT, &sz));                                                                        \
        OK(MPI_Type_get_extent(DT, &lb, &ext));                                                            \
        OK(MPI_Type_get_true_extent(DT, &tlb, &text));                                                     \
        CHECK(sz == (int)(sizeof(V) + sizeof(I)), "%s size %d, want %d", nm, sz, (int)(sizeof(V) + sizeof(I))); \
        CHECK(lb == 0 && ext == (MPI_Aint)sizeof(P), "%s lb %ld extent %ld, want 0 %d", nm, (long)lb, (long)ext, (int)sizeof(P)); \
        CHECK(tlb == 0 && text == (MPI_Aint)(offsetof(P, i) + sizeof(I)), "%s true lb %ld extent %ld", nm, (long)tlb, (long)text); \
        MPI_Datatype S = parts(MV, MI, offsetof(P, i), sizeof(P));                                         \
        /* pack and unpack */                                                                              \
        P a[3], b[3], c[3];                                                                                \
        memset(a, 0x5a, sizeof a);                                                                         \
        for (int j = 0; j < 3; j++) a[j].v = (V)(rank * 10 + j + 1), a[j].i = (I)(100 + rank - j);         \
        int psz = -1, pos = 0;                                                                             \
        OK(MPI_Pack_size(3, DT, MPI_COMM_WORLD, &psz));                                                    \
        CHECK(psz >= 3 * sz, "%s pack size %d < %d", nm, psz, 3 * sz);                                     \
        char pk[3 * sizeof(P3) + 64];                                                                      \
        OK(MPI_Pack(a, 3, DT, pk, sizeof pk, &pos, MPI_COMM_WORLD));                                       \
        CHECK(pos == 3 * sz, "%s packed %d bytes, want %d", nm, pos, 3 * sz);                              \
        memset(b, 0, sizeof b), memset(c, 0, sizeof c);                                                    \
        int upos = 0;                                                                                      \
        OK(MPI_Unpack(pk, pos, &upos, b, 3, DT, MPI_COMM_WORLD));                                          \
        CHECK(upos == pos, "%s unpacked %d bytes of %d", nm, upos, pos);                                   \
        upos = 0;                                                                                          \
        OK(MPI_Unpack(pk, pos, &upos, c, 3, S, MPI_COMM_WORLD));                                           \
        for (int j = 0; j < 3; j++) {                                                                      \
            CHECK(b[j].v == a[j].v && b[j].i == a[j].i, "%s pack round trip item %d", nm, j);              \
            CHECK(c[j].v == a[j].v && c[j].i == a[j].i, "%s unpacked as a struct item %d", nm, j);         \
        }                                                                                                  \
        /* point to point: pair -> struct, struct -> pair, pair -> MPI_PACKED */                          \
        int q = partner(), n = -1;                                                                         \
        MPI_Status st;                                                                                     \
        for (int way = 0; way < 2; way++) {                                                                \
            memset(b, 0, sizeof b);                                                                        \
            OK(MPI_Sendrecv(a, 3, way ? S : DT, q, 7, b, 3, way ? DT : S, q, 7, MPI_COMM_WORLD, &st));     \
            for (int j = 0; j < 3; j++)                                                                    \
                CHECK(b[j].v == (V)(q * 10 + j + 1) && b[j].i == (I)(100 + q - j), "%s sent as %s item %d", nm, way ? "struct" : "pair", j); \
            OK(MPI_Get_count(&st, way ? DT : S, &n));                                                      \
            CHECK(n == 3, "%s get_count %d, want 3", nm, n);                                               \
            if (!REFERENCE) {                                                              \
                OK(MPI_Get_elements(&st, way ? DT : S, &n));                                               \
                CHECK(n == 6, "%s get_elements %d, want 6", nm, n);                                        \
            }                                                                                              \
        }                                                                                                  \
        OK(MPI_Sendrecv(a, 3, DT, q, 8, pk, sizeof pk, MPI_PACKED, q, 8, MPI_COMM_WORLD, &st));            \
        OK(MPI_Get_count(&st, MPI_PACKED, &n));                                                            \
        CHECK(n == 3 * sz, "%s received as MPI_PACKED: %d bytes, want %d", nm, n, 3 * sz);                 \
        memset(b, 0, sizeof b), upos = 0;                                                                  \
        OK(MPI_Unpack(pk, n, &upos, b, 3, DT, MPI_COMM_WORLD));                                            \
        for (int j = 0; j < 3; j++)                                                                        \
            CHECK(b[j].v == (V)(q * 10 + j + 1) && b[j].i == (I)(100 + q - j), "%s via MPI_PACKED item %d", nm, j); \
        memset(b, 0, sizeof b);                                                                            \
        OK(MPI_Sendrecv(a, 2, DT, 0, 9, b, 3, S, 0, 9, MPI_COMM_SELF, &st));                               \
        CHECK(b[1].v == a[1].v && b[1].i == a[1].i && b[2].v == 0, "%s to itself as a struct", nm);       \
        /* a partial pair: value, index, value */                                                          \
        if (!REFERENCE) {                                                                                  \
            P3 x = {(V)1, (I)2, (V)3};                                                                     \
            int bl[3] = {1, 1, 1};                                                                         \
            MPI_Aint d[3] = {0, offsetof(P3, b), offsetof(P3, c)};                                         \
            MPI_Datatype ts[3] = {MV, MI, MV}, s3;                                                         \
            OK(MPI_Type_create_struct(3, bl, d, ts, &s3));                                                 \
            OK(MPI_Type_commit(&s3));                                                                      \
            memset(b, 0, sizeof b);                                                                        \
            OK(MPI_Sendrecv(&x, 1, s3, q, 10, b, 2, DT, q, 10, MPI_COMM_WORLD, &st));                      \
            CHECK(b[0].v == (V)1 && b[0].i == (I)2 && b[1].v == (V)3, "%s partial pair data", nm);        \
            OK(MPI_Get_elements(&st, DT, &n));                                                             \
            CHECK(n == 3, "%s partial get_elements %d, want 3", nm, n);                                    \
            OK(MPI_Get_count(&st, DT, &n));                                                                \
            CHECK(n == MPI_UNDEFINED, "%s partial get_count %d, want MPI_UNDEFINED", nm, n);               \
            OK(MPI_Type_free(&s3));                                                                        \
            MPI_Status ss;                                                                                 \
            OK(MPI_Status_set_elements(&ss, DT, 5));                                                       \
            OK(MPI_Get_elements(&ss, DT, &n));                                                             \
            CHECK(n == 5, "%s set_elements 5: get_elements %d", nm, n);                                    \
            OK(MPI_Get_count(&ss, DT, &n));                                                                \
            CHECK(n == MPI_UNDEFINED, "%s set_elements 5: get_count %d", nm, n); \
        }                                                                                                  \
        /* collectives whose members use the pair type and the struct */                                   \
        memset(b, 0, sizeof b);                                                                            \
        if (rank == 0) memcpy(b, a, sizeof b);                                                             \
        OK(MPI_Bcast(b, 3, rank == 0 ? DT : S, 0, MPI_COMM_WORLD));                                        \
        for (int j = 0; j < 3; j++)                                                                        \
            CHECK(b[j].v == (V)(j + 1) && b[j].i == (I)(100 - j), "%s bcast item %d", nm, j);             \
        {                                                                                                  \
            P *g = calloc((size_t)size, sizeof(P));                                                        \
            OK(MPI_Gather(a, 1, S, g, 1, DT, size - 1, MPI_COMM_WORLD));                                   \
            if (rank == size - 1)                                                                          \
                for (int r = 0; r < size; r++)                                                             \
                    CHECK(g[r].v == (V)(r * 10 + 1) && g[r].i == (I)(100 + r), "%s gather from %d", nm, r); \
            free(g);                                                                                       \
        }                                                                                                  \
        /* MINLOC and MAXLOC; the lower index wins a tie (indices fall as ranks rise) */                 \
        {                                                                                                  \
            P in[2], mn[2], mx[2];                                                                         \
            memset(in, 0, sizeof in);                                                                      \
            in[0].v = (V)(rank % 2), in[0].i = (I)(size - rank);                                           \
            in[1].v = (V)(rank == size / 2 ? 7 : 3), in[1].i = (I)(rank + 5);                              \
            int even = (size - 1) - (size - 1) % 2, odd = size > 1 ? (size - 1) - size % 2 : 0;            \
            P wmn[2] = {{(V)0, (I)(size - even)}, {(V)(size > 1 ? 3 : 7), (I)5}};                          \
            P wmx[2] = {{(V)(size > 1), (I)(size - odd)}, {(V)7, (I)(size / 2 + 5)}};                      \
            for (int k = 0; k < 5; k++) {                                                                  \
                memset(mn, 0, sizeof mn), memset(mx, 0, sizeof mx);                                        \
                int root = size - 1, rec = k == 0 ? rank == root : 1;                                      \
                MPI_Request rq[2];                                                                         \
                switch (k) {                                                                               \
                case 0:                                                                                    \
                    OK(MPI_Reduce(in, mn, 2, DT, MPI_MINLOC, root, MPI_COMM_WORLD));                       \
                    OK(MPI_Reduce(in, mx, 2, DT, MPI_MAXLOC, root, MPI_COMM_WORLD));                       \
                    break;                                                                                 \
                case 1:                                                                                    \
                    OK(MPI_Allreduce(in, mn, 2, DT, MPI_MINLOC, MPI_COMM_WORLD));                          \
                    OK(MPI_Allreduce(in, mx, 2, DT, MPI_MAXLOC, MPI_COMM_WORLD));                          \
                    break;                                                                                 \
                case 2:                                                                                    \
                    memcpy(mn, in, sizeof in), memcpy(mx, in, sizeof in);                                  \
                    OK(MPI_Allreduce(MPI_IN_PLACE, mn, 2, DT, MPI_MINLOC, MPI_COMM_WORLD));                \
                    OK(MPI_Allreduce(MPI_IN_PLACE, mx, 2, DT, MPI_MAXLOC, MPI_COMM_WORLD));                \
                    break;                                                                                 \
                case 3:                                                                                    \
                    OK(MPI_Iallreduce(in, mn, 2, DT, MPI_MINLOC, MPI_COMM_WORLD, &rq[0]));                 \
                    OK(MPI_Iallreduce(in, mx, 2, DT, MPI_MAXLOC, MPI_COMM_WORLD, &rq[1]));                 \
                    OK(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));                                           \
                    break;                                                                                 \
                case 4:                                                                                    \
                    if (!(DERIVED && !REFERENCE)) {                                                       \
                        memcpy(mn, wmn, sizeof mn), memcpy(mx, wmx, sizeof mx);                            \
                        break;                                                                             \
                    }                                                                                      \
                    MPI_Datatype two;                                                                      \
                    OK(MPI_Type_contiguous(2, DT, &two));                                                  \
                    OK(MPI_Type_commit(&two));                                                             \
                    OK(MPI_Allreduce(in, mn, 1, two, MPI_MINLOC, MPI_COMM_WORLD));                         \
                    OK(MPI_Allreduce(in, mx, 1, two, MPI_MAXLOC, MPI_COMM_WORLD));                         \
                    OK(MPI_Type_free(&two));                                                               \
                    break;                                                                                 \
                }                                                                                          \
                for (int j = 0; j < 2 && rec; j++) {                                                       \
                    CHECK(mn[j].v == wmn[j].v && mn[j].i == wmn[j].i, "%s minloc (form %d) item %d: %g %g, want %g %g", nm, k, j, (double)mn[j].v, (double)mn[j].i, (double)wmn[j].v, (double)wmn[j].i); \
                    CHECK(mx[j].v == wmx[j].v && mx[j].i == wmx[j].i, "%s maxloc (form %d) item %d: %g %g, want %g %g", nm, k, j, (double)mx[j].v, (double)mx[j].i, (double)wmx[j].v, (double)wmx[j].i); \
                }                                                                                          \
            }                                                                                              \
            P li[3] = {{(V)1, (I)5}, {(V)2, (I)1}, {(V)3, (I)3}};                                          \
            P lo[3] = {{(V)1, (I)4}, {(V)2, (I)2}, {(V)0, (I)9}};                                          \
            P lm[3];                                                                                       \
            memcpy(lm, lo, sizeof lm);                                                                     \
            OK(MPI_Reduce_local(li, lm, 3, DT, MPI_MINLOC));                                               \
            CHECK(lm[0].i == (I)4 && lm[1].i == (I)1 && lm[2].v == (V)0 && lm[2].i == (I)9, "%s reduce_local minloc", nm); \
            memcpy(lm, lo, sizeof lm);                                                                     \
            OK(MPI_Reduce_local(li, lm, 3, DT, MPI_MAXLOC));                                               \
            CHECK(lm[0].i == (I)4 && lm[1].i == (I)1 && lm[2].v == (V)3 && lm[2].i == (I)3, "%s reduce_local maxloc", nm); \
        }                                                                                                  \
        OK(MPI_Type_free(&S));                                                                             \
    }

PAIR(float_int, float, int, MPI_FLOAT_INT, MPI_FLOAT, MPI_INT, 1)
PAIR(double_int, double, int, MPI_DOUBLE_INT, MPI_DOUBLE, MPI_INT, 1)
PAIR(long_int, long, int, MPI_LONG_INT, MPI_LONG, MPI_INT, 1)
PAIR(short_int, short, int, MPI_SHORT_INT, MPI_SHORT, MPI_INT, 1)
PAIR(two_int, int, int, MPI_2INT, MPI_INT, MPI_INT, 1)
PAIR(long_double_int, long double, int, MPI_LONG_DOUBLE_INT, MPI_LONG_DOUBLE, MPI_INT, 0)
PAIR(two_real, float, float, MPI_2REAL, MPI_REAL, MPI_REAL, 0)
PAIR(two_double, double, double, MPI_2DOUBLE_PRECISION, MPI_DOUBLE_PRECISION, MPI_DOUBLE_PRECISION, 0)
PAIR(two_integer, int, int, MPI_2INTEGER, MPI_INTEGER, MPI_INTEGER, 1)

/* accumulate: every rank's pair into rank 0's window with MPI_MAXLOC */
static void accumulate(void) {
    struct { double v; int i; } w[2] = {{-1, 99}, {-1, 99}}, mine[2] = {{rank % 2, size - rank}, {rank, rank}};
    MPI_Win win;
    OK(MPI_Win_create(w, sizeof w, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    OK(MPI_Win_fence(0, win));
    OK(MPI_Accumulate(mine, 2, MPI_DOUBLE_INT, 0, 0, 2, MPI_DOUBLE_INT, MPI_MAXLOC, win));
    OK(MPI_Win_fence(0, win));
    OK(MPI_Win_free(&win));
    int odd = size > 1 ? (size - 1) - size % 2 : 0;
    if (rank == 0) {
        CHECK(w[0].v == (size > 1) && w[0].i == size - odd, "accumulate maxloc item 0: %g %d", w[0].v, w[0].i);
        CHECK(w[1].v == size - 1 && w[1].i == size - 1, "accumulate maxloc item 1: %g %d", w[1].v, w[1].i);
    }
}

int main(int argc, char **argv) {
    start(&argc, &argv);
    float_int();
    double_int();
    long_int();
    short_int();
    two_int();
    long_double_int();
    two_real();
    two_double();
    two_integer();
    accumulate();
    return finish("pairtype");
}
