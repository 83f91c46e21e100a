/* external: MPI_Pack_external/Unpack_external/Pack_external_size with
 * "external32" (byte images written out by hand from the standard's sizes,
 * big-endian, no padding), MPI_Type_create_f90_*, MPI_Abi_get_info and the
 * Fortran information calls, MPI_Get_hw_resource_info and the non-blocking
 * buffer flushes. Prints "external ok <rank>". */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

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

#define RC(call, want)                                                                   \
    do {                                                                                 \
        int rc_ = (call), cls_;                                                          \
        MPI_Error_class(rc_, &cls_);                                                     \
        CHECK(cls_ == (want), "%s returned class %d, want %d", #call, cls_, (int)(want)); \
    } while (0)
#define OK(call) RC(call, MPI_SUCCESS)

static void hex(const unsigned char *b, int n, char *out) {
    for (int i = 0; i < n; i++)
        sprintf(out + 3 * i, "%02x ", b[i]);
}

/* pack packs count items of t and compares the bytes with want. */
static void pack(const void *in, int count, MPI_Datatype t, const unsigned char *want, int n, const char *what) {
    unsigned char out[256];
    memset(out, 0xAA, sizeof out);
    MPI_Aint sz, pos = 0;
    OK(MPI_Pack_external_size("external32", count, t, &sz));
    CHECK(sz == n, "%s: external32 size %ld, want %d", what, (long)sz, n);
    OK(MPI_Pack_external("external32", in, count, t, out, sizeof out, &pos));
    CHECK(pos == n, "%s: position %ld, want %d", what, (long)pos, n);
    if (memcmp(out, want, n) != 0) {
        char got[800], exp[800];
        hex(out, n, got);
        hex(want, n, exp);
        CHECK(0, "%s: packed %s, want %s", what, got, exp);
    }
    CHECK(out[n] == 0xAA, "%s: wrote past its bytes", what);
    /* The _c form packs the same bytes. */
    unsigned char out2[256];
    MPI_Count pos2 = 0, sz2;
    OK(MPI_Pack_external_size_c("external32", count, t, &sz2));
    OK(MPI_Pack_external_c("external32", in, count, t, out2, sizeof out2, &pos2));
    CHECK(sz2 == n && pos2 == n && memcmp(out2, want, n) == 0, "%s: the _c form differs", what);
}

/* unpack unpacks the bytes into out and checks the position. */
static void unpack(const unsigned char *bytes, int n, void *out, int count, MPI_Datatype t, const char *what) {
    MPI_Aint pos = 0;
    OK(MPI_Unpack_external("external32", bytes, n, &pos, out, count, t));
    CHECK(pos == n, "%s: unpack position %ld, want %d", what, (long)pos, n);
}

static void external32(void) {
    int ints[3] = {1, -2, 0x01020304};
    const unsigned char wi[] = {0, 0, 0, 1, 0xff, 0xff, 0xff, 0xfe, 1, 2, 3, 4};
    pack(ints, 3, MPI_INT, wi, sizeof wi, "MPI_INT");
    int back[3] = {0};
    unpack(wi, sizeof wi, back, 3, MPI_INT, "MPI_INT");
    CHECK(memcmp(back, ints, sizeof ints) == 0, "MPI_INT round trip");

    double d[2] = {1.0, -2.5};
    const unsigned char wd[] = {0x3f, 0xf0, 0, 0, 0, 0, 0, 0, 0xc0, 0x04, 0, 0, 0, 0, 0, 0};
    pack(d, 2, MPI_DOUBLE, wd, sizeof wd, "MPI_DOUBLE");
    float f = 1.5f;
    const unsigned char wf[] = {0x3f, 0xc0, 0, 0};
    pack(&f, 1, MPI_FLOAT, wf, sizeof wf, "MPI_FLOAT");
    short s = 0x1234;
    const unsigned char ws[] = {0x12, 0x34};
    pack(&s, 1, MPI_SHORT, ws, sizeof ws, "MPI_SHORT");

    /* long and unsigned long are 4 bytes in external32. */
    long l[2] = {-3, 70000};
    const unsigned char wl[] = {0xff, 0xff, 0xff, 0xfd, 0x00, 0x01, 0x11, 0x70};
    pack(l, 2, MPI_LONG, wl, sizeof wl, "MPI_LONG");
    long lb[2] = {0, 0};
    unpack(wl, sizeof wl, lb, 2, MPI_LONG, "MPI_LONG");
    CHECK(lb[0] == -3 && lb[1] == 70000, "MPI_LONG back: %ld %ld", lb[0], lb[1]);
    unsigned long ul = 0xdeadbeefUL;
    const unsigned char wul[] = {0xde, 0xad, 0xbe, 0xef};
    pack(&ul, 1, MPI_UNSIGNED_LONG, wul, sizeof wul, "MPI_UNSIGNED_LONG");
    unsigned long ulb = 0;
    unpack(wul, sizeof wul, &ulb, 1, MPI_UNSIGNED_LONG, "MPI_UNSIGNED_LONG");
    CHECK(ulb == 0xdeadbeefUL, "unsigned long back %lx", ulb);
    long big = 1L << 40;
    unsigned char out[64];
    MPI_Aint pos = 0;
    RC(MPI_Pack_external("external32", &big, 1, MPI_LONG, out, sizeof out, &pos), MPI_ERR_CONVERSION);

    /* Pair types lose their padding. */
    struct { double v; int i; } di = {2.0, 7};
    const unsigned char wdi[] = {0x40, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 7};
    pack(&di, 1, MPI_DOUBLE_INT, wdi, sizeof wdi, "MPI_DOUBLE_INT");
    struct { short v; int i; } si = {-1, 5};
    const unsigned char wsi[] = {0xff, 0xff, 0, 0, 0, 5};
    pack(&si, 1, MPI_SHORT_INT, wsi, sizeof wsi, "MPI_SHORT_INT");
    struct { double v; int i; } dib = {0, 0};
    unpack(wdi, sizeof wdi, &dib, 1, MPI_DOUBLE_INT, "MPI_DOUBLE_INT");
    CHECK(dib.v == 2.0 && dib.i == 7, "MPI_DOUBLE_INT back");

    /* long double: IEEE binary128 in external32. */
    long double ld[2] = {1.0L, -2.0L};
    unsigned char wld[32] = {0x3f, 0xff};
    wld[16] = 0xc0;
    pack(ld, 2, MPI_LONG_DOUBLE, wld, sizeof wld, "MPI_LONG_DOUBLE");
    long double ldb[2] = {0, 0};
    unpack(wld, sizeof wld, ldb, 2, MPI_LONG_DOUBLE, "MPI_LONG_DOUBLE");
    CHECK(ldb[0] == 1.0L && ldb[1] == -2.0L, "long double back %Lg %Lg", ldb[0], ldb[1]);
    long double third = 1.0L / 3.0L, thirdb = 0;
    pos = 0;
    OK(MPI_Pack_external("external32", &third, 1, MPI_LONG_DOUBLE, out, sizeof out, &pos));
    unpack(out, 16, &thirdb, 1, MPI_LONG_DOUBLE, "1/3");
    CHECK(thirdb == third, "1/3 does not survive the trip: %La vs %La", thirdb, third);

    /* wchar_t is 2 bytes. */
    wchar_t w = L'A';
    const unsigned char ww[] = {0, 0x41};
    pack(&w, 1, MPI_WCHAR, ww, sizeof ww, "MPI_WCHAR");

    double _Complex z = 1.0 + 2.0 * 1.0i;
    const unsigned char wz[] = {0x3f, 0xf0, 0, 0, 0, 0, 0, 0, 0x40, 0, 0, 0, 0, 0, 0, 0};
    pack(&z, 1, MPI_C_DOUBLE_COMPLEX, wz, sizeof wz, "MPI_C_DOUBLE_COMPLEX");

    /* Derived types go through the layout: a vector picks elements 0 and 2. */
    int v3[3] = {10, 20, 30};
    MPI_Datatype vec;
    OK(MPI_Type_vector(2, 1, 2, MPI_INT, &vec));
    OK(MPI_Type_commit(&vec));
    const unsigned char wv[] = {0, 0, 0, 10, 0, 0, 0, 30};
    pack(v3, 1, vec, wv, sizeof wv, "vector");
    int v3b[3] = {-1, -1, -1};
    unpack(wv, sizeof wv, v3b, 1, vec, "vector");
    CHECK(v3b[0] == 10 && v3b[1] == -1 && v3b[2] == 30, "vector back %d %d %d", v3b[0], v3b[1], v3b[2]);
    OK(MPI_Type_free(&vec));

    /* A struct {char; double} packs in 9 bytes, with no padding. */
    struct { char c; double x; } cs[2] = {{'a', 1.0}, {'b', -2.5}};
    int bl[2] = {1, 1};
    MPI_Aint disp[2] = {0, 8};
    MPI_Datatype types[2] = {MPI_CHAR, MPI_DOUBLE}, st;
    OK(MPI_Type_create_struct(2, bl, disp, types, &st));
    OK(MPI_Type_commit(&st));
    const unsigned char wst[] = {'a', 0x3f, 0xf0, 0, 0, 0, 0, 0, 0, 'b', 0xc0, 0x04, 0, 0, 0, 0, 0, 0};
    pack(cs, 2, st, wst, sizeof wst, "struct");
    OK(MPI_Type_free(&st));

    /* Positions accumulate across calls. */
    pos = 0;
    OK(MPI_Pack_external("external32", &s, 1, MPI_SHORT, out, sizeof out, &pos));
    OK(MPI_Pack_external("external32", &f, 1, MPI_FLOAT, out, sizeof out, &pos));
    CHECK(pos == 6 && out[0] == 0x12 && out[2] == 0x3f && out[3] == 0xc0, "two packs: position %ld", (long)pos);
    short s2 = 0;
    float f2 = 0;
    pos = 0;
    OK(MPI_Unpack_external("external32", out, 6, &pos, &s2, 1, MPI_SHORT));
    OK(MPI_Unpack_external("external32", out, 6, &pos, &f2, 1, MPI_FLOAT));
    CHECK(pos == 6 && s2 == 0x1234 && f2 == 1.5f, "two unpacks");

    /* Errors. */
    pos = 0;
    RC(MPI_Pack_external("external32", ints, 3, MPI_INT, out, 8, &pos), MPI_ERR_TRUNCATE);
    RC(MPI_Pack_external("native", ints, 3, MPI_INT, out, sizeof out, &pos), MPI_ERR_UNSUPPORTED_DATAREP);
    MPI_Aint sz;
    RC(MPI_Pack_external_size("internal", 3, MPI_INT, &sz), MPI_ERR_UNSUPPORTED_DATAREP);
    RC(MPI_Pack_external_size("external32", -1, MPI_INT, &sz), MPI_ERR_COUNT);
    pos = 0;
    RC(MPI_Unpack_external("external32", wi, 8, &pos, back, 3, MPI_INT), MPI_ERR_TRUNCATE);
}

/* kind checks that t, returned by MPI_Type_create_f90_* with the integer
 * arguments args[0..nargs), is what the standard says: combiner
 * MPI_COMBINER_F90_<which> with those arguments as its contents and no
 * datatypes, laid out as the named type named (same size and extent), the
 * same handle for the same call, and not freeable. */
static void kind(MPI_Datatype t, int combiner, const int *args, int nargs, MPI_Datatype named, const char *what) {
    int ni, na, nd, comb, got[2] = {-1, -1};
    MPI_Aint lb, ext, nlb, next;
    int sz, nsz;
    OK(MPI_Type_get_envelope(t, &ni, &na, &nd, &comb));
    CHECK(comb == combiner && ni == nargs && na == 0 && nd == 0, "%s: envelope combiner %d (want %d), ni %d na %d nd %d", what,
          comb, combiner, ni, na, nd);
    OK(MPI_Type_get_contents(t, 2, 0, 0, got, NULL, NULL));
    for (int i = 0; i < nargs; i++)
        CHECK(got[i] == args[i], "%s: contents[%d] = %d, want %d", what, i, got[i], args[i]);
    OK(MPI_Type_size(t, &sz));
    OK(MPI_Type_size(named, &nsz));
    OK(MPI_Type_get_extent(t, &lb, &ext));
    OK(MPI_Type_get_extent(named, &nlb, &next));
    CHECK(sz == nsz && lb == nlb && ext == next, "%s: size %d extent %ld, want the named type's %d %ld", what, sz, (long)ext, nsz,
          (long)next);
    MPI_Datatype again = MPI_DATATYPE_NULL, keep = t;
    if (combiner == MPI_COMBINER_F90_INTEGER)
        OK(MPI_Type_create_f90_integer(args[0], &again));
    else if (combiner == MPI_COMBINER_F90_REAL)
        OK(MPI_Type_create_f90_real(args[0], args[1], &again));
    else
        OK(MPI_Type_create_f90_complex(args[0], args[1], &again));
    CHECK(again == t, "%s: a second call gave another handle", what);
    RC(MPI_Type_free(&keep), MPI_ERR_TYPE);
    CHECK(keep == t, "%s: a refused MPI_Type_free changed the handle", what);
}

static void f90(void) {
    MPI_Datatype t;
    int want[][2] = {{1, 0}, {2, 0}, {4, 1}, {9, 2}, {10, 3}, {18, 3}, {19, 4}, {38, 4}};
    MPI_Datatype ints[] = {MPI_INTEGER1, MPI_INTEGER2, MPI_INTEGER4, MPI_INTEGER8, MPI_INTEGER16};
    char what[64];
    for (int i = 0; i < 8; i++) {
        OK(MPI_Type_create_f90_integer(want[i][0], &t));
        snprintf(what, sizeof what, "f90_integer(%d)", want[i][0]);
        kind(t, MPI_COMBINER_F90_INTEGER, &want[i][0], 1, ints[want[i][1]], what);
    }
    RC(MPI_Type_create_f90_integer(39, &t), MPI_ERR_ARG);
    struct {
        int complex, p, r;
        MPI_Datatype named;
    } reals[] = {
        {0, 6, MPI_UNDEFINED, MPI_REAL4}, {0, 7, MPI_UNDEFINED, MPI_REAL8}, {0, MPI_UNDEFINED, 38, MPI_REAL8},
        {0, 16, 300, MPI_REAL16},         {1, 15, 300, MPI_COMPLEX16},      {1, 3, 3, MPI_COMPLEX8},
    };
    for (int i = 0; i < 6; i++) {
        int pr[2] = {reals[i].p, reals[i].r};
        if (reals[i].complex)
            OK(MPI_Type_create_f90_complex(pr[0], pr[1], &t));
        else
            OK(MPI_Type_create_f90_real(pr[0], pr[1], &t));
        snprintf(what, sizeof what, "f90_%s(%d, %d)", reals[i].complex ? "complex" : "real", pr[0], pr[1]);
        kind(t, reals[i].complex ? MPI_COMBINER_F90_COMPLEX : MPI_COMBINER_F90_REAL, pr, 2, reals[i].named, what);
    }
    RC(MPI_Type_create_f90_real(34, MPI_UNDEFINED, &t), MPI_ERR_ARG);
    RC(MPI_Type_create_f90_real(MPI_UNDEFINED, 5000, &t), MPI_ERR_ARG);
    RC(MPI_Type_create_f90_complex(MPI_UNDEFINED, MPI_UNDEFINED, &t), MPI_ERR_ARG);

    /* Used without a commit, as a predefined type: a reduction, and a
     * message whose receive names the named type (same type signature). */
    MPI_Datatype i4, r8;
    OK(MPI_Type_create_f90_integer(9, &i4));
    OK(MPI_Type_create_f90_real(15, 300, &r8));
    /* A duplicate's contents give the f90 type itself back. */
    MPI_Datatype dup, inner = MPI_DATATYPE_NULL;
    int ni, na, nd, comb;
    OK(MPI_Type_dup(i4, &dup));
    OK(MPI_Type_get_envelope(dup, &ni, &na, &nd, &comb));
    CHECK(comb == MPI_COMBINER_DUP && nd == 1, "dup of f90_integer(9): combiner %d nd %d", comb, nd);
    OK(MPI_Type_get_contents(dup, 0, 0, 1, NULL, NULL, &inner));
    CHECK(inner == i4, "contents of dup(f90_integer(9)) is not the f90 type's handle");
    OK(MPI_Type_free(&dup));
    int v = rank + 1, sum = 0;
    OK(MPI_Allreduce(&v, &sum, 1, i4, MPI_SUM, MPI_COMM_WORLD));
    CHECK(sum == size * (size + 1) / 2, "Allreduce on f90_integer(9): %d", sum);
    double d[2] = {rank + 0.5, -rank}, e[2] = {0, 0};
    OK(MPI_Sendrecv(d, 2, r8, (rank + 1) % size, 5, e, 2, MPI_REAL8, (rank + size - 1) % size, 5, MPI_COMM_WORLD,
                    MPI_STATUS_IGNORE));
    int prev = (rank + size - 1) % size;
    CHECK(e[0] == prev + 0.5 && e[1] == -prev, "f90_real(15, 300) received as MPI_REAL8: %g %g", e[0], e[1]);
}

static void abi(void) {
    MPI_Info info;
    char v[MPI_MAX_INFO_VAL];
    int n, flag;
    OK(MPI_Abi_get_info(&info));
    OK(MPI_Info_get_nkeys(info, &n));
    CHECK(n == 3, "%d ABI keys", n);
    const char *keys[] = {"mpi_aint_size", "mpi_count_size", "mpi_offset_size"};
    int sizes[] = {sizeof(MPI_Aint), sizeof(MPI_Count), sizeof(MPI_Offset)};
    for (int i = 0; i < 3; i++) {
        OK(MPI_Info_get(info, keys[i], sizeof v - 1, v, &flag));
        CHECK(flag && atoi(v) == sizes[i], "%s = %s", keys[i], flag ? v : "(none)");
    }
    OK(MPI_Info_free(&info));

    /* No Fortran until a binding layer says so. */
    OK(MPI_Abi_get_fortran_info(&info));
    CHECK(info == MPI_INFO_NULL, "Fortran info before it is set");
    MPI_Info fi;
    OK(MPI_Info_create(&fi));
    OK(MPI_Info_set(fi, "mpi_logical_size", "4"));
    OK(MPI_Abi_set_fortran_info(fi));
    OK(MPI_Info_free(&fi));
    OK(MPI_Abi_get_fortran_info(&info));
    CHECK(info != MPI_INFO_NULL, "Fortran info after it was set");
    OK(MPI_Info_get(info, "mpi_logical_size", sizeof v - 1, v, &flag));
    CHECK(flag && strcmp(v, "4") == 0, "mpi_logical_size");
    RC(MPI_Abi_set_fortran_info(info), MPI_ERR_ABI);
    OK(MPI_Info_free(&info));

    int t = 7, f = 7, set = 1;
    OK(MPI_Abi_get_fortran_booleans(4, &t, &f, &set));
    CHECK(set == 0, "booleans set before they were");
    int one = 1, zero = 0;
    OK(MPI_Abi_set_fortran_booleans(4, &one, &zero));
    OK(MPI_Abi_get_fortran_booleans(4, &t, &f, &set));
    CHECK(set == 1 && t == 1 && f == 0, "booleans %d %d %d", set, t, f);
    RC(MPI_Abi_set_fortran_booleans(4, &one, &zero), MPI_ERR_ABI);
    RC(MPI_Abi_set_fortran_booleans(3, &one, &zero), MPI_ERR_ARG);

    OK(MPI_Get_hw_resource_info(&info));
    char host[MPI_MAX_PROCESSOR_NAME];
    int len;
    OK(MPI_Get_processor_name(host, &len));
    OK(MPI_Info_get(info, "host", sizeof v - 1, v, &flag));
    CHECK(flag && strcmp(v, host) == 0, "hw host %s, processor %s", flag ? v : "(none)", host);
    OK(MPI_Info_get(info, "ncpus", sizeof v - 1, v, &flag));
    CHECK(flag && atoi(v) > 0, "ncpus");
    OK(MPI_Info_free(&info));
}

static void iflush(void) {
    int bufsize = 4 * (1 << 16) + 4 * MPI_BSEND_OVERHEAD;
    void *buf = malloc(bufsize);
    OK(MPI_Buffer_attach(buf, bufsize));
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    static char big[1 << 16], in[1 << 16];
    memset(big, rank + 1, sizeof big);
    /* Every rank flushes before it receives: the flush must not wait in the
     * call (64 KiB sends complete only once matched). */
    MPI_Request r;
    OK(MPI_Bsend(big, sizeof big, MPI_CHAR, right, 3, MPI_COMM_WORLD));
    OK(MPI_Buffer_iflush(&r));
    int flag;
    OK(MPI_Test(&r, &flag, MPI_STATUS_IGNORE)); /* either answer is right; it must return */
    OK(MPI_Recv(in, sizeof in, MPI_CHAR, left, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    if (flag)
        CHECK(r == MPI_REQUEST_NULL, "a completed test left the request");
    OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    CHECK(r == MPI_REQUEST_NULL && in[0] == left + 1, "iflush");
    OK(MPI_Comm_iflush_buffer(MPI_COMM_WORLD, &r)); /* no communicator buffer: nothing to flush */
    OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    /* A flush request may be freed, and the buffer detached behind it. */
    OK(MPI_Bsend(big, sizeof big, MPI_CHAR, right, 4, MPI_COMM_WORLD));
    OK(MPI_Buffer_iflush(&r));
    OK(MPI_Request_free(&r));
    OK(MPI_Recv(in, sizeof in, MPI_CHAR, left, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    void *b;
    int bs;
    OK(MPI_Buffer_detach(&b, &bs));
    free(buf);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    external32();
    f90();
    abi();
    iflush();
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    /* MPI_T first used after MPI_Finalize still sees what MPI_Init learnt
     * (a job of several ranks runs under bcsrun; a singleton has no region). */
    int provided, idx, rc;
    if (MPI_T_init_thread(MPI_THREAD_SINGLE, &provided) != MPI_SUCCESS) {
        printf("FAIL rank %d: MPI_T_init_thread after MPI_Finalize\n", rank);
        return 1;
    }
    rc = MPI_T_cvar_get_index("bcs_requests_max", &idx);
    if (rc != (size > 1 ? MPI_SUCCESS : MPI_T_ERR_INVALID_NAME)) {
        printf("FAIL rank %d: bcs_requests_max after MPI_Finalize: %d\n", rank, rc);
        return 1;
    }
    MPI_T_finalize();
    printf("external ok %d\n", rank);
    return 0;
}
