/* dtype: derived datatypes: constructors, envelope and contents, extents,
 * resizing, pack/unpack, Get_elements, and moving them; self-checking. */
#include "dt.h"

static void envelope(MPI_Datatype t, int ni, int na, int nd, int comb, const char *what) {
    int i, a, d, c;
    OK(MPI_Type_get_envelope(t, &i, &a, &d, &c));
    CHECK(i == ni && a == na && d == nd && c == comb, "%s envelope %d %d %d %d want %d %d %d %d", what, i, a, d, c, ni, na, nd, comb);
}

static void extents(MPI_Datatype t, MPI_Aint lb, MPI_Aint ext, MPI_Aint tlb, MPI_Aint text, int sz, const char *what) {
    MPI_Aint l, e, tl, te;
    int s;
    OK(MPI_Type_get_extent(t, &l, &e));
    OK(MPI_Type_get_true_extent(t, &tl, &te));
    OK(MPI_Type_size(t, &s));
    CHECK(l == lb && e == ext && tl == tlb && te == text && s == sz, "%s: lb %ld ext %ld tlb %ld text %ld size %d, want %ld %ld %ld %ld %d",
          what, (long)l, (long)e, (long)tl, (long)te, s, (long)lb, (long)ext, (long)tlb, (long)text, sz);
}

static void constructors(void) {
    MPI_Datatype t, u;
    envelope(MPI_INT, 0, 0, 0, MPI_COMBINER_NAMED, "int");
    OK(MPI_Type_contiguous(3, MPI_INT, &t));
    envelope(t, 1, 0, 1, MPI_COMBINER_CONTIGUOUS, "contiguous");
    extents(t, 0, 12, 0, 12, 12, "contiguous");
    int ints[8];
    MPI_Aint addrs[8];
    MPI_Datatype types[8];
    OK(MPI_Type_get_contents(t, 8, 8, 8, ints, addrs, types));
    CHECK(ints[0] == 3 && types[0] == MPI_INT, "contiguous contents");
    /* vector */
    OK(MPI_Type_vector(3, 2, 4, MPI_DOUBLE, &u));
    envelope(u, 3, 0, 1, MPI_COMBINER_VECTOR, "vector");
    extents(u, 0, 80, 0, 80, 48, "vector");
    OK(MPI_Type_get_contents(u, 8, 8, 8, ints, addrs, types));
    CHECK(ints[0] == 3 && ints[1] == 2 && ints[2] == 4 && types[0] == MPI_DOUBLE, "vector contents");
    OK(MPI_Type_free(&u));
    /* negative stride */
    OK(MPI_Type_vector(3, 1, -2, MPI_INT, &u));
    extents(u, -16, 20, -16, 20, 12, "negative stride vector");
    OK(MPI_Type_free(&u));
    OK(MPI_Type_create_hvector(2, 1, 100, t, &u));
    envelope(u, 2, 1, 1, MPI_COMBINER_HVECTOR, "hvector");
    extents(u, 0, 112, 0, 112, 24, "hvector");
    OK(MPI_Type_get_contents(u, 8, 8, 8, ints, addrs, types));
    CHECK(ints[0] == 2 && ints[1] == 1 && addrs[0] == 100, "hvector contents");
    int cmb, ni, na, nd;
    OK(MPI_Type_get_envelope(types[0], &ni, &na, &nd, &cmb));
    CHECK(cmb == MPI_COMBINER_CONTIGUOUS, "child combiner %d", cmb);
    OK(MPI_Type_free(&types[0]));
    OK(MPI_Type_free(&u));
    /* indexed */
    int bl[3] = {2, 1, 3}, dp[3] = {5, 0, 10};
    OK(MPI_Type_indexed(3, bl, dp, MPI_INT, &u));
    envelope(u, 7, 0, 1, MPI_COMBINER_INDEXED, "indexed");
    extents(u, 0, 52, 0, 52, 24, "indexed");
    OK(MPI_Type_free(&u));
    MPI_Aint hd[3] = {20, 0, 40};
    OK(MPI_Type_create_hindexed(3, bl, hd, MPI_INT, &u));
    envelope(u, 4, 3, 1, MPI_COMBINER_HINDEXED, "hindexed");
    extents(u, 0, 52, 0, 52, 24, "hindexed");
    OK(MPI_Type_free(&u));
    OK(MPI_Type_create_indexed_block(3, 2, dp, MPI_SHORT, &u));
    envelope(u, 5, 0, 1, MPI_COMBINER_INDEXED_BLOCK, "indexed_block");
    extents(u, 0, 24, 0, 24, 12, "indexed_block");
    OK(MPI_Type_free(&u));
    OK(MPI_Type_create_hindexed_block(3, 2, hd, MPI_SHORT, &u));
    envelope(u, 2, 3, 1, MPI_COMBINER_HINDEXED_BLOCK, "hindexed_block");
    extents(u, 0, 44, 0, 44, 12, "hindexed_block");
    OK(MPI_Type_free(&u));
    /* struct: padding to the strictest alignment */
    int sbl[3] = {1, 1, 1};
    MPI_Aint sd[3] = {0, 8, 16};
    MPI_Datatype st[3] = {MPI_INT, MPI_DOUBLE, MPI_CHAR};
    OK(MPI_Type_create_struct(3, sbl, sd, st, &u));
    envelope(u, 4, 3, 3, MPI_COMBINER_STRUCT, "struct");
    extents(u, 0, 24, 0, 17, 13, "struct");
    OK(MPI_Type_get_contents(u, 8, 8, 8, ints, addrs, types));
    CHECK(ints[0] == 3 && ints[1] == 1 && addrs[1] == 8 && types[1] == MPI_DOUBLE && types[2] == MPI_CHAR, "struct contents");
    OK(MPI_Type_free(&u));
    /* resized */
    OK(MPI_Type_create_resized(t, -4, 20, &u));
    envelope(u, 0, 2, 1, MPI_COMBINER_RESIZED, "resized");
    extents(u, -4, 20, 0, 12, 12, "resized");
    MPI_Datatype v;
    OK(MPI_Type_contiguous(2, u, &v));
    extents(v, -4, 40, 0, 32, 24, "contiguous of resized");
    OK(MPI_Type_free(&v));
    OK(MPI_Type_free(&u));
    /* dup */
    OK(MPI_Type_dup(t, &u));
    envelope(u, 0, 0, 1, MPI_COMBINER_DUP, "dup");
    extents(u, 0, 12, 0, 12, 12, "dup");
    OK(MPI_Type_free(&u));
    /* subarray, C order: a 2x3 block at (1,2) of a 4x6 array of ints. */
    int sizes[2] = {4, 6}, subs[2] = {2, 3}, starts[2] = {1, 2};
    OK(MPI_Type_create_subarray(2, sizes, subs, starts, MPI_ORDER_C, MPI_INT, &u));
    envelope(u, 8, 0, 1, MPI_COMBINER_SUBARRAY, "subarray");
    extents(u, 0, 96, 32, 36, 24, "subarray");
    OK(MPI_Type_commit(&u));
    int arr[4][6], packed[6], pos = 0;
    for (int i = 0; i < 4; i++) for (int j = 0; j < 6; j++) arr[i][j] = i * 10 + j;
    OK(MPI_Pack(arr, 1, u, packed, sizeof packed, &pos, MPI_COMM_WORLD));
    CHECK(pos == 24, "pack pos %d", pos);
    int want[6] = {12, 13, 14, 22, 23, 24};
    CHECK(!memcmp(packed, want, sizeof want), "subarray pack %d %d %d %d %d %d", packed[0], packed[1], packed[2], packed[3], packed[4], packed[5]);
    OK(MPI_Type_free(&u));
    /* Fortran order */
    OK(MPI_Type_create_subarray(2, sizes, subs, starts, MPI_ORDER_FORTRAN, MPI_INT, &u));
    OK(MPI_Type_commit(&u));
    pos = 0;
    OK(MPI_Pack(arr, 1, u, packed, sizeof packed, &pos, MPI_COMM_WORLD));
    /* Fortran: dim 0 (size 4) fastest: elements at i + 4*j, i in 1..2, j in 2..4 */
    int *flat = &arr[0][0];
    int wantf[6] = {flat[1 + 4 * 2], flat[2 + 4 * 2], flat[1 + 4 * 3], flat[2 + 4 * 3], flat[1 + 4 * 4], flat[2 + 4 * 4]};
    CHECK(!memcmp(packed, wantf, sizeof wantf), "fortran subarray pack %d %d %d", packed[0], packed[1], packed[2]);
    OK(MPI_Type_free(&u));
    /* darray: block distribution of 8 ints over 2 processes, I am process 1. */
    int gs[1] = {8}, distr[1] = {MPI_DISTRIBUTE_BLOCK}, dargs[1] = {MPI_DISTRIBUTE_DFLT_DARG}, ps[1] = {2};
    OK(MPI_Type_create_darray(2, 1, 1, gs, distr, dargs, ps, MPI_ORDER_C, MPI_INT, &u));
    envelope(u, 4 * 1 + 4, 0, 1, MPI_COMBINER_DARRAY, "darray");
    extents(u, 0, 32, 16, 16, 16, "darray");
    OK(MPI_Type_free(&u));
    /* cyclic(2) of 10 over 3, process 0 owns 0,1,6,7 */
    int gs2[1] = {10}, dc[1] = {MPI_DISTRIBUTE_CYCLIC}, da2[1] = {2}, ps3[1] = {3};
    OK(MPI_Type_create_darray(3, 0, 1, gs2, dc, da2, ps3, MPI_ORDER_C, MPI_INT, &u));
    OK(MPI_Type_commit(&u));
    int ten[10], got[4];
    for (int i = 0; i < 10; i++) ten[i] = i;
    pos = 0;
    OK(MPI_Pack(ten, 1, u, got, sizeof got, &pos, MPI_COMM_WORLD));
    CHECK(pos == 16 && got[0] == 0 && got[1] == 1 && got[2] == 6 && got[3] == 7, "cyclic darray pos %d: %d %d %d %d", pos, got[0], got[1], got[2], got[3]);
    extents(u, 0, 40, 0, 32, 16, "cyclic darray");
    OK(MPI_Type_free(&u));
    OK(MPI_Type_free(&t));
}

static void packing(void) {
    int ps;
    OK(MPI_Pack_size(5, MPI_DOUBLE, MPI_COMM_WORLD, &ps));
    CHECK(ps >= 40, "pack_size %d", ps);
    char buf[256];
    int pos = 0;
    int a[3] = {1, 2, 3};
    double d = 2.5;
    char c[5] = "hey!";
    OK(MPI_Pack(a, 3, MPI_INT, buf, sizeof buf, &pos, MPI_COMM_WORLD));
    OK(MPI_Pack(&d, 1, MPI_DOUBLE, buf, sizeof buf, &pos, MPI_COMM_WORLD));
    OK(MPI_Pack(c, 5, MPI_CHAR, buf, sizeof buf, &pos, MPI_COMM_WORLD));
    int total = pos;
    /* Send the packed buffer and unpack at the receiver. */
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    char in[256];
    MPI_Status st;
    OK(MPI_Sendrecv(buf, total, MPI_PACKED, next, 1, in, sizeof in, MPI_PACKED, prev, 1, MPI_COMM_WORLD, &st));
    int n;
    OK(MPI_Get_count(&st, MPI_PACKED, &n));
    CHECK(n == total, "packed count %d want %d", n, total);
    int a2[3];
    double d2;
    char c2[5];
    pos = 0;
    OK(MPI_Unpack(in, n, &pos, a2, 3, MPI_INT, MPI_COMM_WORLD));
    OK(MPI_Unpack(in, n, &pos, &d2, 1, MPI_DOUBLE, MPI_COMM_WORLD));
    OK(MPI_Unpack(in, n, &pos, c2, 5, MPI_CHAR, MPI_COMM_WORLD));
    CHECK(pos == total && a2[2] == 3 && d2 == 2.5 && !strcmp(c2, "hey!"), "unpack pos %d", pos);
    /* Unpacking past the end is an error (MPICH 4.0 does not say so). */
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    int rc = MPI_Unpack(in, n, &pos, a2, 1, MPI_INT, MPI_COMM_WORLD), cls;
    MPI_Error_class(rc, &cls);
    CHECK(rc != MPI_SUCCESS, "unpack past the end succeeded");
    pos = 0;
    rc = MPI_Pack(a, 3, MPI_INT, buf, 8, &pos, MPI_COMM_WORLD);
    CHECK(rc != MPI_SUCCESS, "pack past the end succeeded");
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
    /* Pack a vector and send it as packed; receive into the vector. */
    double m[4][3], col[4];
    for (int i = 0; i < 4; i++) for (int j = 0; j < 3; j++) m[i][j] = rank + i * 0.1 + j * 0.01;
    MPI_Datatype vt;
    OK(MPI_Type_vector(4, 1, 3, MPI_DOUBLE, &vt));
    OK(MPI_Type_commit(&vt));
    pos = 0;
    OK(MPI_Pack(&m[0][1], 1, vt, buf, sizeof buf, &pos, MPI_COMM_WORLD));
    CHECK(pos == 32, "vector pack pos %d", pos);
    pos = 0;
    OK(MPI_Unpack(buf, 32, &pos, col, 4, MPI_DOUBLE, MPI_COMM_WORLD));
    for (int i = 0; i < 4; i++) CHECK(col[i] == rank + i * 0.1 + 0.01, "vector unpack %d", i);
    OK(MPI_Pack_size(2, vt, MPI_COMM_WORLD, &ps));
    CHECK(ps >= 64, "vector pack_size %d", ps);
    OK(MPI_Type_free(&vt));
}

static void elements(void) {
    /* A struct of 2 ints and 1 double: send 1, get elements 3. */
    struct { int a[2]; double b; } s = {{1, 2}, 3.0}, r;
    int bl[2] = {2, 1};
    MPI_Aint dp[2] = {0, 8};
    MPI_Datatype ty[2] = {MPI_INT, MPI_DOUBLE}, t;
    OK(MPI_Type_create_struct(2, bl, dp, ty, &t));
    OK(MPI_Type_commit(&t));
    MPI_Status st;
    OK(MPI_Sendrecv(&s, 1, t, rank, 3, &r, 1, t, rank, 3, MPI_COMM_WORLD, &st));
    int n;
    OK(MPI_Get_elements(&st, t, &n));
    CHECK(n == 3, "struct elements %d", n);
    OK(MPI_Get_count(&st, t, &n));
    CHECK(n == 1 && r.a[1] == 2 && r.b == 3.0, "struct count %d", n);
    /* Send only 2 ints of it: elements 2, count undefined. */
    OK(MPI_Sendrecv(&s, 2, MPI_INT, rank, 4, &r, 1, t, rank, 4, MPI_COMM_WORLD, &st));
    OK(MPI_Get_elements(&st, t, &n));
    CHECK(n == 2, "partial struct elements %d", n);
    OK(MPI_Get_count(&st, t, &n));
    CHECK(n == MPI_UNDEFINED, "partial struct count %d", n);
    MPI_Count nc;
    OK(MPI_Get_elements_x(&st, t, &nc));
    CHECK(nc == 2, "elements_x %lld", (long long)nc);
    OK(MPI_Type_free(&t));
    /* Status_set_elements. */
    MPI_Status s2;
    OK(MPI_Status_set_elements(&s2, MPI_INT, 5));
    OK(MPI_Get_count(&s2, MPI_INT, &n));
    CHECK(n == 5, "set_elements count %d", n);
    OK(MPI_Get_elements(&s2, MPI_SHORT, &n));
    CHECK(n == 10, "set_elements as shorts %d", n);
    /* Zero size type. */
    MPI_Datatype z;
    OK(MPI_Type_contiguous(0, MPI_INT, &z));
    OK(MPI_Type_commit(&z));
    OK(MPI_Sendrecv(&s, 1, z, rank, 5, &r, 1, z, rank, 5, MPI_COMM_WORLD, &st));
    OK(MPI_Get_count(&st, z, &n));
    CHECK(n == 0, "zero-size type count %d", n);
    OK(MPI_Get_elements(&st, z, &n));
    CHECK(n == 0, "zero-size type elements %d", n);
    OK(MPI_Type_free(&z));
}

static void names(void) {
    char name[MPI_MAX_OBJECT_NAME];
    int len;
    MPI_Datatype t;
    OK(MPI_Type_contiguous(2, MPI_INT, &t));
    OK(MPI_Type_get_name(t, name, &len));
    CHECK(len == 0 && name[0] == 0, "unnamed type '%s'", name);
    OK(MPI_Type_set_name(t, "pair"));
    OK(MPI_Type_get_name(t, name, &len));
    CHECK(!strcmp(name, "pair") && len == 4, "named %s", name);
    OK(MPI_Type_free(&t));
    OK(MPI_Type_get_name(MPI_2INT, name, &len));
    CHECK(!strcmp(name, "MPI_2INT"), "MPI_2INT name %s", name);
    OK(MPI_Type_get_name(MPI_UNSIGNED_LONG_LONG, name, &len));
    CHECK(!strcmp(name, "MPI_UNSIGNED_LONG_LONG"), "ull name %s", name);
    MPI_Aint lb, ext;
    OK(MPI_Type_get_extent(MPI_DOUBLE_INT, &lb, &ext));
    CHECK(ext == 16, "double_int extent %ld", (long)ext);
    OK(MPI_Type_get_extent(MPI_SHORT_INT, &lb, &ext));
    CHECK(ext == 8, "short_int extent %ld", (long)ext);
    OK(MPI_Type_get_extent(MPI_LONG_DOUBLE_INT, &lb, &ext));
    CHECK(ext == 32, "long_double_int extent %ld", (long)ext);
    int sz;
    OK(MPI_Type_size(MPI_C_DOUBLE_COMPLEX, &sz));
    CHECK(sz == 16, "complex size %d", sz);
    OK(MPI_Type_size(MPI_LONG_DOUBLE, &sz));
    CHECK(sz == (int)sizeof(long double), "long double size %d", sz);
    OK(MPI_Type_size(MPI_AINT, &sz));
    CHECK(sz == sizeof(MPI_Aint), "aint size %d", sz);
    OK(MPI_Type_size(MPI_WCHAR, &sz));
    CHECK(sz == sizeof(wchar_t), "wchar size %d", sz);
    OK(MPI_Type_size(MPI_C_BOOL, &sz));
    CHECK(sz == sizeof(_Bool), "bool size %d", sz);
}

static void moving(void) {
    /* Indexed type send, different layout receive (same signature). */
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    int src[20], dst[20];
    for (int i = 0; i < 20; i++) { src[i] = rank * 100 + i; dst[i] = -1; }
    int bl[3] = {2, 1, 3}, dp[3] = {5, 0, 10};
    MPI_Datatype it, vt;
    OK(MPI_Type_indexed(3, bl, dp, MPI_INT, &it));
    OK(MPI_Type_commit(&it));
    OK(MPI_Type_vector(3, 2, 3, MPI_INT, &vt));
    OK(MPI_Type_commit(&vt));
    MPI_Request rq[2];
    OK(MPI_Irecv(dst, 1, vt, prev, 9, MPI_COMM_WORLD, &rq[0]));
    OK(MPI_Isend(src, 1, it, next, 9, MPI_COMM_WORLD, &rq[1]));
    OK(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
    int order[6] = {5, 6, 0, 10, 11, 12}, slots[6] = {0, 1, 3, 4, 6, 7};
    for (int k = 0; k < 6; k++) CHECK(dst[slots[k]] == prev * 100 + order[k], "indexed->vector slot %d: %d", slots[k], dst[slots[k]]);
    CHECK(dst[2] == -1 && dst[5] == -1 && dst[8] == -1, "vector gaps written");
    /* Two of the indexed type in one send (extent 13 ints). */
    int big[40], out[12];
    for (int i = 0; i < 40; i++) big[i] = i;
    OK(MPI_Sendrecv(big, 2, it, rank, 8, out, 12, MPI_INT, rank, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    int w2[12] = {5, 6, 0, 10, 11, 12, 18, 19, 13, 23, 24, 25};
    CHECK(!memcmp(out, w2, sizeof w2), "two indexed: %d %d %d %d %d %d %d", out[5], out[6], out[7], out[8], out[9], out[10], out[11]);
    OK(MPI_Type_free(&it));
    OK(MPI_Type_free(&vt));
    /* A struct with a resized extent as an array of records. */
    struct rec { double x; int id; } recs[4], rr[4];
    int rbl[2] = {1, 1};
    MPI_Aint rdp[2] = {0, 8};
    MPI_Datatype rty[2] = {MPI_DOUBLE, MPI_INT}, rt, rt2;
    OK(MPI_Type_create_struct(2, rbl, rdp, rty, &rt));
    OK(MPI_Type_create_resized(rt, 0, sizeof(struct rec), &rt2));
    OK(MPI_Type_commit(&rt2));
    for (int i = 0; i < 4; i++) { recs[i].x = rank + i; recs[i].id = rank * 4 + i; }
    memset(rr, 0, sizeof rr);
    OK(MPI_Sendrecv(recs, 4, rt2, next, 7, rr, 4, rt2, prev, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    for (int i = 0; i < 4; i++) CHECK(rr[i].x == prev + i && rr[i].id == prev * 4 + i, "records %d", i);
    OK(MPI_Type_free(&rt));
    OK(MPI_Type_free(&rt2));
    /* Type_match_size */
    MPI_Datatype mt;
    OK(MPI_Type_match_size(MPI_TYPECLASS_REAL, 8, &mt));
    int sz;
    OK(MPI_Type_size(mt, &sz));
    CHECK(sz == 8, "match_size real 8 -> size %d", sz);
    OK(MPI_Type_match_size(MPI_TYPECLASS_INTEGER, 4, &mt));
    OK(MPI_Type_size(mt, &sz));
    CHECK(sz == 4, "match_size integer 4 -> size %d", sz);
}

int main(int argc, char **argv) {
    start(&argc, &argv);
    constructors();
    packing();
    elements();
    names();
    moving();
    return finish("dtype");
}
