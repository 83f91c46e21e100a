/* datarep: user data representations (MPI_Register_datarep and its _c
 * form, MPI 5.0 §14.5.3). Every file lives in the directory argv[1] and
 * is deleted before the program ends. The representations here hold ints
 * only (other basic types keep their native size): "be32" big-endian in 4
 * bytes, "wide64" big-endian in 8 bytes (sign-extended), "le64c" little-
 * endian in 8 bytes with _c conversion functions, "rawread" with
 * MPI_CONVERSION_FN_NULL for writes, "nullboth" with no conversion at all,
 * "failing" whose write function fails. The conversion functions take any
 * datatype made of ints, tiled over the user's buffer from the position
 * they are given (they use MPI_Pack and MPI_Unpack, so they call MPI
 * themselves), and check that the positions of one access follow each
 * other. Checks: the file's bytes read natively, read-back through the
 * representation, portable (vector) and byte-displacement (hvector)
 * filetypes, MPI_File_get_type_extent and get_view, a strided memory type
 * over several conversion chunks, a read stopping at the end of the file,
 * ordered writes, and the error classes (MPI_ERR_DUP_DATAREP,
 * MPI_ERR_UNSUPPORTED_DATAREP, MPI_ERR_CONVERSION). Prints
 * "datarep ok <rank>"; under bcsmpi also "datarep chunks <n>", the
 * conversion calls of the strided write. (MPICH's ROMIO refuses
 * conversion functions at MPI_Register_datarep, and Open MPI 4 lacks the
 * _c forms, so this program checks bcsmpi alone.) */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size;
static char dir[900];

#ifdef BCSMPI_MPI_H
#define BCSMPI 1
#else
#define BCSMPI 0
#endif

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

#define OK(call)                                                    \
    do {                                                            \
        int rc_ = (call);                                           \
        if (rc_ != MPI_SUCCESS) {                                   \
            char s_[MPI_MAX_ERROR_STRING];                          \
            int n_;                                                 \
            MPI_Error_string(rc_, s_, &n_);                         \
            CHECK(0, "%s returned %d (%s)", #call, rc_, s_);        \
        }                                                           \
    } while (0)

#define CLASS(call, want)                                                         \
    do {                                                                          \
        int rc_ = (call), c_ = -1;                                                \
        if (rc_ != MPI_SUCCESS)                                                   \
            MPI_Error_class(rc_, &c_);                                            \
        CHECK(c_ == (want), "%s: class %d, want %d (%s)", #call, c_, want, #want); \
    } while (0)

/* A representation's state: the width and byte order of a file int, the
 * conversion calls made and where the next one of an access must start. */
struct rep {
    int width, big, fail;
    long calls;
    MPI_Offset next;
    long extent_calls;
};

static struct rep be32 = {4, 1, 0, 0, 0, 0}, wide64 = {8, 1, 0, 0, 0, 0}, le64c = {8, 0, 0, 0, 0, 0},
                  rawread = {4, 1, 0, 0, 0, 0}, nullboth = {4, 0, 0, 0, 0, 0}, failing = {4, 1, 1, 0, 0, 0},
                  nullwide = {8, 1, 0, 0, 0, 0};

static void put(unsigned char *p, int width, int big, int v) {
    int64_t x = v;
    for (int i = 0; i < width; i++) {
        unsigned char b = (unsigned char)((uint64_t)x >> (8 * i));
        p[big ? width - 1 - i : i] = b;
    }
}

static int get(const unsigned char *p, int width, int big) {
    uint64_t x = 0;
    for (int i = 0; i < width; i++)
        x |= (uint64_t)p[big ? width - 1 - i : i] << (8 * i);
    if (width < 8 && (x >> (8 * width - 1)) & 1)
        x |= ~(uint64_t)0 << (8 * width);
    return (int)(int64_t)x;
}

/* conv converts count ints from entry position of dt tiled over userbuf. */
static int conv(int write, void *userbuf, MPI_Datatype dt, MPI_Count count, void *filebuf, MPI_Offset position,
                void *extra) {
    struct rep *r = extra;
    int tsize;
    MPI_Aint lb, ext;
    r->calls++;
    if (r->fail)
        return MPI_ERR_OTHER;
    if (position != 0 && position != r->next) {
        printf("FAIL rank %d: conversion at position %lld, want 0 or %lld\n", rank, (long long)position,
               (long long)r->next);
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
    r->next = position + count;
    MPI_Type_size(dt, &tsize);
    MPI_Type_get_extent(dt, &lb, &ext);
    int per = tsize / 4;
    if (per == 0 || tsize % 4 != 0)
        return MPI_ERR_TYPE;
    MPI_Offset first = position / per, last = (position + count - 1) / per, n = last - first + 1;
    int *tmp = malloc((size_t)(n * tsize));
    int p = 0;
    char *base = (char *)userbuf + first * ext;
    MPI_Pack(base, (int)n, dt, tmp, (int)(n * tsize), &p, MPI_COMM_SELF);
    int *e = tmp + (position - first * per);
    for (MPI_Count i = 0; i < count; i++) {
        unsigned char *f = (unsigned char *)filebuf + i * r->width;
        if (write)
            put(f, r->width, r->big, e[i]);
        else
            e[i] = get(f, r->width, r->big);
    }
    if (!write) {
        p = 0;
        MPI_Unpack(tmp, (int)(n * tsize), &p, base, (int)n, dt, MPI_COMM_SELF);
    }
    free(tmp);
    return MPI_SUCCESS;
}

static int rd(void *u, MPI_Datatype dt, int count, void *f, MPI_Offset pos, void *x) {
    return conv(0, u, dt, count, f, pos, x);
}
static int wr(void *u, MPI_Datatype dt, int count, void *f, MPI_Offset pos, void *x) {
    return conv(1, u, dt, count, f, pos, x);
}
static int rd_c(void *u, MPI_Datatype dt, MPI_Count count, void *f, MPI_Offset pos, void *x) {
    return conv(0, u, dt, count, f, pos, x);
}
static int wr_c(void *u, MPI_Datatype dt, MPI_Count count, void *f, MPI_Offset pos, void *x) {
    return conv(1, u, dt, count, f, pos, x);
}

static int extent_fn(MPI_Datatype dt, MPI_Aint *file_extent, void *extra) {
    struct rep *r = extra;
    int s;
    r->extent_calls++;
    if (dt == MPI_INT) {
        *file_extent = r->width;
        return MPI_SUCCESS;
    }
    MPI_Type_size(dt, &s);
    *file_extent = s;
    return MPI_SUCCESS;
}

static MPI_File open_new(const char *name) {
    char path[1000];
    MPI_File fh;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR | MPI_MODE_CREATE | MPI_MODE_DELETE_ON_CLOSE, MPI_INFO_NULL,
                     &fh));
    return fh;
}

static int val(int r, int i) { return (r + 1) * 100003 * (i % 2 ? -1 : 1) + i * 7; }

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(argc > 1, "usage: datarep DIR");
    snprintf(dir, sizeof dir, "%s", argv[1]);

    /* Registration and its errors (MPI_FILE_NULL's handler returns). */
    OK(MPI_Register_datarep("be32", rd, wr, extent_fn, &be32));
    OK(MPI_Register_datarep("wide64", rd, wr, extent_fn, &wide64));
    OK(MPI_Register_datarep_c("le64c", rd_c, wr_c, extent_fn, &le64c));
    OK(MPI_Register_datarep("rawread", rd, MPI_CONVERSION_FN_NULL, extent_fn, &rawread));
    OK(MPI_Register_datarep_c("nullboth", MPI_CONVERSION_FN_NULL_C, MPI_CONVERSION_FN_NULL_C, extent_fn, &nullboth));
    OK(MPI_Register_datarep("failing", rd, wr, extent_fn, &failing));
    CLASS(MPI_Register_datarep("be32", rd, wr, extent_fn, &be32), MPI_ERR_DUP_DATAREP);
    CLASS(MPI_Register_datarep_c("le64c", rd_c, wr_c, extent_fn, &le64c), MPI_ERR_DUP_DATAREP);
    CLASS(MPI_Register_datarep("native", rd, wr, extent_fn, &be32), MPI_ERR_DUP_DATAREP);
    CLASS(MPI_Register_datarep("external32", rd, wr, extent_fn, &be32), MPI_ERR_DUP_DATAREP);
    if (BCSMPI) {
        OK(MPI_Register_datarep("nullwide", rd, MPI_CONVERSION_FN_NULL, extent_fn, &nullwide));
        CLASS(MPI_Register_datarep(NULL, rd, wr, extent_fn, &be32), MPI_ERR_ARG);
        CLASS(MPI_Register_datarep("noextent", rd, wr, NULL, &be32), MPI_ERR_ARG);
    }

    const int N = 64;
    int vals[64], out[64], other[64];
    for (int i = 0; i < N; i++)
        vals[i] = val(rank, i);
    MPI_Status st;
    int count;
    char name[MPI_MAX_DATAREP_STRING];
    MPI_Datatype et, ft;
    MPI_Offset disp;

    /* 1. be32: contiguous ints, big-endian in the file. */
    MPI_File fh = open_new("be32");
    CLASS(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "nosuch", MPI_INFO_NULL), MPI_ERR_UNSUPPORTED_DATAREP);
    OK(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "be32", MPI_INFO_NULL));
    OK(MPI_File_get_view(fh, &disp, &et, &ft, name));
    CHECK(strcmp(name, "be32") == 0 && disp == 0 && et == MPI_INT && ft == MPI_INT, "get_view: %s %lld", name,
          (long long)disp);
    OK(MPI_File_write_at_all(fh, (MPI_Offset)rank * N, vals, N, MPI_INT, &st));
    MPI_Get_count(&st, MPI_INT, &count);
    CHECK(count == N, "write count %d", count);
    unsigned char raw[64 * 8 * 16];
    OK(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    OK(MPI_File_read_at_all(fh, (MPI_Offset)rank * N * 4, raw, N * 4, MPI_BYTE, &st));
    for (int i = 0; i < N; i++)
        CHECK(get(raw + 4 * i, 4, 1) == vals[i], "be32 raw int %d = %d, want %d", i, get(raw + 4 * i, 4, 1), vals[i]);
    OK(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "be32", MPI_INFO_NULL));
    memset(out, 0, sizeof out);
    OK(MPI_File_read_at_all(fh, (MPI_Offset)rank * N, out, N, MPI_INT, &st));
    MPI_Get_count(&st, MPI_INT, &count);
    CHECK(count == N && memcmp(out, vals, sizeof vals) == 0, "be32 read back: count %d, out[1] %d want %d", count,
          out[1], vals[1]);
    /* Through "rawread", whose writes are native: a native int reads back
     * byte-swapped. */
    OK(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "rawread", MPI_INFO_NULL));
    OK(MPI_File_write_at_all(fh, (MPI_Offset)rank * N, vals, N, MPI_INT, &st));
    OK(MPI_File_read_at_all(fh, (MPI_Offset)rank * N, out, N, MPI_INT, &st));
    for (int i = 0; i < N; i++) {
        unsigned char b[4];
        memcpy(b, &vals[i], 4);
        CHECK(out[i] == get(b, 4, 1), "rawread int %d = %d", i, out[i]);
    }
    /* No conversion either way: native. */
    OK(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "nullboth", MPI_INFO_NULL));
    OK(MPI_File_write_at_all(fh, (MPI_Offset)rank * N, vals, N, MPI_INT, &st));
    OK(MPI_File_read_at_all(fh, (MPI_Offset)rank * N, out, N, MPI_INT, &st));
    CHECK(memcmp(out, vals, sizeof vals) == 0, "nullboth read back");
    /* A failing conversion function. */
    OK(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "failing", MPI_INFO_NULL));
    CLASS(MPI_File_write_at(fh, (MPI_Offset)rank * N, vals, N, MPI_INT, &st), MPI_ERR_CONVERSION);
    CLASS(MPI_File_read_at(fh, (MPI_Offset)rank * N, out, N, MPI_INT, &st), MPI_ERR_CONVERSION);
    if (BCSMPI) { /* native writes cannot fill 8-byte file ints */
        OK(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "nullwide", MPI_INFO_NULL));
        CLASS(MPI_File_write_at(fh, 0, vals, N, MPI_INT, &st), MPI_ERR_CONVERSION);
    }
    OK(MPI_File_close(&fh));

    /* 2. wide64: 8-byte file ints, interleaved by a vector filetype (its
     * stride scales to the file extent) and read back through an hvector
     * filetype of the same file layout (byte strides stay). */
    fh = open_new("wide64");
    MPI_Datatype vec, hvec, pair3;
    MPI_Type_vector(N, 1, size, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    MPI_Type_create_hvector(N, 1, (MPI_Aint)size * 8, MPI_INT, &hvec);
    MPI_Type_commit(&hvec);
    MPI_Type_contiguous(3, MPI_INT, &pair3);
    MPI_Type_commit(&pair3);
    OK(MPI_File_set_view(fh, (MPI_Offset)rank * 8, MPI_INT, vec, "wide64", MPI_INFO_NULL));
    MPI_Aint fext;
    OK(MPI_File_get_type_extent(fh, MPI_INT, &fext));
    CHECK(fext == 8, "file extent of MPI_INT %ld", (long)fext);
    OK(MPI_File_get_type_extent(fh, pair3, &fext));
    CHECK(fext == 24, "file extent of 3 ints %ld", (long)fext);
    OK(MPI_File_get_type_extent(fh, vec, &fext));
    CHECK(fext == (MPI_Aint)((N - 1) * size + 1) * 8, "file extent of the vector %ld", (long)fext);
    OK(MPI_File_get_type_extent(fh, MPI_2INT, &fext));
    CHECK(fext == 16, "file extent of MPI_2INT %ld", (long)fext);
    MPI_Count fextc;
    OK(MPI_File_get_type_extent_c(fh, MPI_DOUBLE, &fextc));
    CHECK(fextc == 8, "file extent of MPI_DOUBLE %lld", (long long)fextc);
    OK(MPI_File_write_all(fh, vals, N, MPI_INT, &st));
    MPI_Offset fsize;
    OK(MPI_File_get_size(fh, &fsize));
    CHECK(fsize == (MPI_Offset)N * size * 8, "file size %lld, want %lld", (long long)fsize, (long long)N * size * 8);
    OK(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    for (int r = 0; r < size; r++) {
        OK(MPI_File_read_at(fh, (MPI_Offset)r * 8, raw, 8, MPI_BYTE, &st));
        CHECK(get(raw, 8, 1) == val(r, 0), "wide64 raw rank %d int 0", r);
        OK(MPI_File_read_at(fh, ((MPI_Offset)(N - 1) * size + r) * 8, raw, 8, MPI_BYTE, &st));
        CHECK(get(raw, 8, 1) == val(r, N - 1), "wide64 raw rank %d int %d = %d", r, N - 1, get(raw, 8, 1));
    }
    OK(MPI_File_set_view(fh, (MPI_Offset)rank * 8, MPI_INT, hvec, "wide64", MPI_INFO_NULL));
    memset(out, 0, sizeof out);
    OK(MPI_File_read_all(fh, out, N, MPI_INT, &st));
    CHECK(memcmp(out, vals, sizeof vals) == 0, "wide64 hvector read back: out[2] %d, want %d", out[2], vals[2]);
    /* The other ranks' data through a contiguous view. */
    int nr = (rank + 1) % size;
    OK(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "wide64", MPI_INFO_NULL));
    for (int i = 0; i < N; i++) {
        OK(MPI_File_read_at(fh, (MPI_Offset)i * size + nr, &other[i], 1, MPI_INT, &st));
        CHECK(other[i] == val(nr, i), "wide64 rank %d int %d = %d", nr, i, other[i]);
    }
    /* A read that stops at the end of the file: 3 ints are left. */
    OK(MPI_File_read_at(fh, (MPI_Offset)N * size - 3, out, 5, MPI_INT, &st));
    MPI_Get_count(&st, MPI_INT, &count);
    CHECK(count == 3 && out[2] == val(size - 1, N - 1), "read at the end: count %d", count);
    OK(MPI_File_close(&fh));

    /* 3. A strided memory type over several conversion chunks; the
     * positions of the calls of one access follow each other (conv). */
    const int M = 100000;
    int *big = malloc(sizeof(int) * 2 * M), *back = malloc(sizeof(int) * M);
    for (int i = 0; i < 2 * M; i++)
        big[i] = i % 2 ? -1 : val(rank, i);
    MPI_Datatype every2;
    MPI_Type_vector(M, 1, 2, MPI_INT, &every2);
    MPI_Type_commit(&every2);
    fh = open_new("chunks");
    OK(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "wide64", MPI_INFO_NULL));
    long before = wide64.calls;
    OK(MPI_File_write_at_all(fh, (MPI_Offset)rank * M, big, 1, every2, &st));
    long chunks = wide64.calls - before;
    MPI_Get_count(&st, every2, &count);
    CHECK(count == 1, "strided write count %d", count);
    OK(MPI_File_read_at_all(fh, (MPI_Offset)rank * M, back, M, MPI_INT, &st));
    for (int i = 0; i < M; i++)
        CHECK(back[i] == big[2 * i], "strided int %d = %d, want %d", i, back[i], big[2 * i]);
    /* and back into the strided type: the odd ints stay */
    memset(big, 0, sizeof(int) * 2 * M);
    for (int i = 0; i < 2 * M; i++)
        big[i] = i % 2 ? -1 : 0;
    OK(MPI_File_read_at_all(fh, (MPI_Offset)rank * M, big, 1, every2, &st));
    for (int i = 0; i < 2 * M; i++)
        CHECK(big[i] == (i % 2 ? -1 : val(rank, i)), "strided read int %d = %d", i, big[i]);
    OK(MPI_File_close(&fh));
    if (BCSMPI) {
        CHECK(chunks > 1, "the %d-int strided write took %ld conversion call(s)", M, chunks);
        printf("datarep chunks %ld\n", chunks);
    }
    free(big);
    free(back);

    /* 4. _c forms: le64c, little-endian 8-byte ints. */
    fh = open_new("le64c");
    OK(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "le64c", MPI_INFO_NULL));
    OK(MPI_File_write_at_c(fh, (MPI_Offset)rank * N, vals, (MPI_Count)N, MPI_INT, &st));
    OK(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    OK(MPI_File_sync(fh));
    OK(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    OK(MPI_File_read_at_c(fh, (MPI_Offset)nr * N * 8, raw, (MPI_Count)N * 8, MPI_BYTE, &st));
    for (int i = 0; i < N; i++)
        CHECK(get(raw + 8 * i, 8, 0) == val(nr, i), "le64c raw rank %d int %d", nr, i);
    OK(MPI_File_close(&fh));

    /* 5. Ordered writes: rank r writes r+1 ints, in rank order. */
    fh = open_new("ordered");
    OK(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "wide64", MPI_INFO_NULL));
    OK(MPI_File_write_ordered(fh, vals, rank + 1, MPI_INT, &st));
    OK(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    OK(MPI_File_sync(fh));
    if (rank == 0) {
        int k = 0;
        for (int r = 0; r < size; r++)
            for (int i = 0; i <= r; i++, k++) {
                OK(MPI_File_read_at(fh, k, out, 1, MPI_INT, &st));
                CHECK(out[0] == val(r, i), "ordered int %d = %d, want %d", k, out[0], val(r, i));
            }
    }
    OK(MPI_File_close(&fh));

    /* 6. "external32" views: the file holds what MPI_Pack_external makes;
     * MPI_LONG takes 4 bytes there; read back through the view. */
    fh = open_new("e32");
    OK(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "external32", MPI_INFO_NULL));
    OK(MPI_File_get_type_extent(fh, MPI_LONG, &fext));
    CHECK(fext == 4, "external32 extent of MPI_LONG %ld", (long)fext);
    struct {
        int i;
        double d;
        long l;
    } rec[4], rback[4];
    MPI_Datatype rect;
    int rbl[3] = {1, 1, 1};
    MPI_Aint rdisp[3] = {0, 8, 16};
    MPI_Datatype rtypes[3] = {MPI_INT, MPI_DOUBLE, MPI_LONG};
    MPI_Type_create_struct(3, rbl, rdisp, rtypes, &rect);
    MPI_Type_commit(&rect);
    for (int i = 0; i < 4; i++) {
        rec[i].i = val(rank, i);
        rec[i].d = 0.5 * val(rank, i);
        rec[i].l = -val(rank, i);
    }
    OK(MPI_File_write_at_all(fh, (MPI_Offset)rank * 4 * 16, rec, 4, rect, &st));
    MPI_Get_count(&st, rect, &count);
    CHECK(count == 4, "external32 write count %d", count);
    unsigned char ref[4 * 16];
    MPI_Aint rpos = 0;
    OK(MPI_Pack_external("external32", rec, 4, rect, ref, sizeof ref, &rpos));
    CHECK(rpos == 4 * 16, "MPI_Pack_external packed %ld bytes", (long)rpos);
    OK(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    OK(MPI_File_read_at_all(fh, (MPI_Offset)rank * 4 * 16, raw, 4 * 16, MPI_BYTE, &st));
    CHECK(memcmp(raw, ref, sizeof ref) == 0, "the external32 file bytes differ from MPI_Pack_external's");
    OK(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "external32", MPI_INFO_NULL));
    memset(rback, 0, sizeof rback);
    OK(MPI_File_read_at_all(fh, (MPI_Offset)rank * 4 * 16, rback, 4, rect, &st));
    for (int i = 0; i < 4; i++)
        CHECK(rback[i].i == rec[i].i && rback[i].d == rec[i].d && rback[i].l == rec[i].l, "external32 record %d", i);
    MPI_Type_free(&rect);
    OK(MPI_File_close(&fh));

    CHECK(wide64.extent_calls > 0 && be32.extent_calls > 0, "extent functions not called");
    MPI_Type_free(&vec);
    MPI_Type_free(&hvec);
    MPI_Type_free(&pair3);
    MPI_Type_free(&every2);
    printf("datarep ok %d\n", rank);
    MPI_Finalize();
    return 0;
}
