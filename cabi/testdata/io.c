/* io: MPI-IO. Every file lives in the directory argv[1] and is deleted
 * before the program ends. Checks: open/close/delete and the access-mode
 * rules and error classes (under the default file handler,
 * MPI_ERRORS_RETURN); explicit offsets, individual file pointers, seek and
 * get_byte_offset; the members writing interleaved blocks through a vector
 * filetype, read back contiguously and through the view; derived memory
 * datatypes; shared file pointers (write_shared: each record exactly once;
 * write_ordered/read_ordered: rank order); nonblocking and split
 * collective forms; the _c forms; sizes, atomicity, views and
 * MPI_Get_count/Get_elements from the statuses; file error handlers;
 * MPI_MODE_DELETE_ON_CLOSE, MPI_MODE_APPEND and MPI_MODE_SEQUENTIAL; a
 * 2-D array decomposed over the members written and read through
 * subarray memory and file types; under bcsmpi, one member's error in a
 * collective (a bad split _end, a NULL argument to MPI_File_open, an
 * offset beyond the bound) fails every member, and MPI_File_open's errors
 * go to MPI_FILE_NULL's handler. Prints "io ok <rank>".
 *
 * Mode argv[2] == "nosame": rank 0 passes another amode to MPI_File_open
 * under MPI_ERRORS_ARE_FATAL set on MPI_FILE_NULL, so the job must end
 * naming MPI_ERR_NOT_SAME. Mode "open": a file left open at MPI_Finalize. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int rank, size;
static char dir[900];

/* Checks of what the standard makes erroneous but MPICH does not detect
 * run under bcsmpi alone (the program runs under MPICH too, to confirm
 * the rest). */
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

#define OK(call)                                                                   \
    do {                                                                           \
        int rc_ = (call);                                                          \
        if (rc_ != MPI_SUCCESS) {                                                  \
            char s_[MPI_MAX_ERROR_STRING];                                         \
            int n_;                                                                \
            MPI_Error_string(rc_, s_, &n_);                                        \
            CHECK(0, "%s returned %d (%s)", #call, rc_, s_);                       \
        }                                                                          \
    } while (0)

static int cls(int rc) {
    int c;
    MPI_Error_class(rc, &c);
    return c;
}

#define FAILS(call, want) \
    do {                                                                                   \
        int rc_ = (call);                                                                  \
        CHECK(rc_ != MPI_SUCCESS && cls(rc_) == (want), "%s: class %d, want %d (%s)", #call, \
              rc_ == MPI_SUCCESS ? 0 : cls(rc_), want, #want);                              \
    } while (0)

static char *path(const char *name) {
    static char p[4][1024];
    static int k;
    k = (k + 1) % 4;
    snprintf(p[k], sizeof p[k], "%s/%s", dir, name);
    return p[k];
}

static int val(int r, int i) { return r * 100000 + i; }

static void errors(void) {
    MPI_File fh;
    MPI_Errhandler eh;
    OK(MPI_File_get_errhandler(MPI_FILE_NULL, &eh));
    CHECK(eh == MPI_ERRORS_RETURN, "MPI_FILE_NULL's handler is not MPI_ERRORS_RETURN");
    FAILS(MPI_File_open(MPI_COMM_WORLD, path("none"), MPI_MODE_RDONLY, MPI_INFO_NULL, &fh), MPI_ERR_NO_SUCH_FILE);
    FAILS(MPI_File_open(MPI_COMM_WORLD, path("x"), MPI_MODE_RDONLY | MPI_MODE_CREATE, MPI_INFO_NULL, &fh),
          MPI_ERR_AMODE);
    FAILS(MPI_File_open(MPI_COMM_WORLD, path("x"), MPI_MODE_CREATE, MPI_INFO_NULL, &fh), MPI_ERR_AMODE);
    FAILS(MPI_File_open(MPI_COMM_WORLD, path("x"), MPI_MODE_RDWR | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh),
          MPI_ERR_AMODE);
    FAILS(MPI_File_open(MPI_COMM_WORLD, path("x"), MPI_MODE_RDWR | MPI_MODE_SEQUENTIAL, MPI_INFO_NULL, &fh),
          MPI_ERR_AMODE);
    /* A different amode on one member: every member fails, and nothing is made. */
    if (size > 1) {
        FAILS(MPI_File_open(MPI_COMM_WORLD, path("x"),
                            MPI_MODE_CREATE | (rank == size - 1 ? MPI_MODE_RDWR : MPI_MODE_WRONLY), MPI_INFO_NULL,
                            &fh),
              MPI_ERR_NOT_SAME);
        CHECK(access(path("x"), F_OK) != 0, "the file x was made");
    }
    /* Names differ: every member fails (MPICH does not check this). */
    if (size > 1 && BCSMPI) {
        char own[32];
        snprintf(own, sizeof own, "x%d", rank);
        FAILS(MPI_File_open(MPI_COMM_WORLD, path(own), MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh),
              MPI_ERR_NOT_SAME);
        CHECK(access(path(own), F_OK) != 0, "the file %s was made", own);
    }
    /* A freed info on one member: every member fails (MPICH does not check). */
    if (BCSMPI) {
        MPI_Info inf, stale;
        OK(MPI_Info_create(&inf));
        stale = inf;
        OK(MPI_Info_free(&inf));
        FAILS(MPI_File_open(MPI_COMM_WORLD, path("x"), MPI_MODE_CREATE | MPI_MODE_WRONLY,
                            rank == 0 ? stale : MPI_INFO_NULL, &fh),
              MPI_ERR_INFO);
        CHECK(access(path("x"), F_OK) != 0, "the file x was made");
    }
    /* EXCL on an existing file. */
    OK(MPI_File_open(MPI_COMM_WORLD, path("e"), MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh));
    OK(MPI_File_close(&fh));
    CHECK(fh == MPI_FILE_NULL, "close did not set MPI_FILE_NULL");
    FAILS(MPI_File_open(MPI_COMM_WORLD, path("e"), MPI_MODE_CREATE | MPI_MODE_EXCL | MPI_MODE_WRONLY,
                        MPI_INFO_NULL, &fh),
          MPI_ERR_FILE_EXISTS);
    /* Reading a write-only file, writing a read-only one. */
    int x = 1;
    MPI_Status st;
    OK(MPI_File_open(MPI_COMM_WORLD, path("e"), MPI_MODE_WRONLY, MPI_INFO_NULL, &fh));
    FAILS(MPI_File_read_at(fh, 0, &x, 1, MPI_INT, &st), MPI_ERR_ACCESS);
    if (BCSMPI) /* MPICH supports "internal" (as native); external32 views: testdata/datarep.c */
        FAILS(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "internal", MPI_INFO_NULL),
              MPI_ERR_UNSUPPORTED_DATAREP);
    FAILS(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "nonsense", MPI_INFO_NULL), MPI_ERR_UNSUPPORTED_DATAREP);
    FAILS(MPI_File_write_at(fh, -1, &x, 1, MPI_INT, &st), MPI_ERR_ARG);
    FAILS(MPI_File_write_at(fh, 0, &x, -1, MPI_INT, &st), MPI_ERR_COUNT);
    FAILS(MPI_File_write_at(fh, 0, &x, 1, MPI_DATATYPE_NULL, &st), MPI_ERR_TYPE);
    FAILS(MPI_File_seek(fh, 0, 12345), MPI_ERR_ARG);
    FAILS(MPI_File_seek(fh, -1, MPI_SEEK_SET), MPI_ERR_ARG);
    FAILS(MPI_File_read_all_end(fh, &x, &st), MPI_ERR_IO);
    OK(MPI_File_close(&fh));
    OK(MPI_File_open(MPI_COMM_WORLD, path("e"), MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
    FAILS(MPI_File_write_at(fh, 0, &x, 1, MPI_INT, &st), MPI_ERR_READ_ONLY);
    FAILS(MPI_File_set_size(fh, 0), MPI_ERR_READ_ONLY);
    OK(MPI_File_close(&fh));
    /* Bad handles go to MPI_FILE_NULL's handler. */
    MPI_Offset sz;
    FAILS(MPI_File_get_size(MPI_FILE_NULL, &sz), MPI_ERR_FILE);
    FAILS(MPI_File_close(&fh), MPI_ERR_FILE);
    if (BCSMPI) { /* user data representations: testdata/datarep.c */
        FAILS(MPI_Register_datarep("mine", NULL, NULL, NULL, NULL), MPI_ERR_ARG); /* no extent function */
        FAILS(MPI_Register_datarep("native", NULL, NULL, NULL, NULL), MPI_ERR_DUP_DATAREP);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        OK(MPI_File_delete(path("e"), MPI_INFO_NULL));
    MPI_Barrier(MPI_COMM_WORLD);
    FAILS(MPI_File_delete(path("e"), MPI_INFO_NULL), MPI_ERR_NO_SUCH_FILE);
}

/* The members write interleaved blocks of B ints through a vector
 * filetype: block k of rank r lands at file block k*size + r. */
#define B 3
#define R 5
static void interleaved(void) {
    MPI_File fh;
    MPI_Datatype vec, ft;
    MPI_Status st;
    int cnt;
    OK(MPI_File_open(MPI_COMM_WORLD, path("vec"), MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE,
                     MPI_INFO_NULL, &fh));
    OK(MPI_Type_vector(R, B, B * size, MPI_INT, &vec));
    OK(MPI_Type_create_resized(vec, 0, (MPI_Aint)(R * B * size * sizeof(int)), &ft));
    OK(MPI_Type_commit(&ft));
    OK(MPI_File_set_view(fh, (MPI_Offset)(rank * B * sizeof(int)), MPI_INT, ft, "native", MPI_INFO_NULL));
    int out[R * B], in[R * B];
    for (int i = 0; i < R * B; i++)
        out[i] = val(rank, i);
    OK(MPI_File_write_all(fh, out, R * B, MPI_INT, &st));
    OK(MPI_Get_count(&st, MPI_INT, &cnt));
    CHECK(cnt == R * B, "write_all count %d", cnt);
    MPI_Offset pos, byte;
    OK(MPI_File_get_position(fh, &pos));
    CHECK(pos == R * B, "position %lld, want %d", (long long)pos, R * B);
    OK(MPI_File_get_byte_offset(fh, B + 1, &byte)); /* etype B+1: block 1, second int */
    CHECK(byte == (MPI_Offset)(((1 * size + rank) * B + 1) * sizeof(int)), "byte offset %lld", (long long)byte);
    MPI_Offset fsz;
    OK(MPI_File_get_size(fh, &fsz));
    CHECK(fsz == (MPI_Offset)(R * B * size * sizeof(int)), "size %lld", (long long)fsz);
    /* Through the view: read_at_all from 0. */
    memset(in, 0, sizeof in);
    OK(MPI_File_read_at_all(fh, 0, in, R * B, MPI_INT, &st));
    for (int i = 0; i < R * B; i++)
        CHECK(in[i] == out[i], "view read [%d] = %d, want %d", i, in[i], out[i]);
    /* Seek back and read with the individual pointer, half at a time. */
    OK(MPI_File_seek(fh, 0, MPI_SEEK_SET));
    memset(in, 0, sizeof in);
    OK(MPI_File_read(fh, in, 7, MPI_INT, &st));
    OK(MPI_File_read(fh, in + 7, R * B - 7, MPI_INT, &st));
    for (int i = 0; i < R * B; i++)
        CHECK(in[i] == out[i], "pointer read [%d] = %d, want %d", i, in[i], out[i]);
    /* Past the end of the view's data: 0 items (ROMIO counts the request
     * for a noncontiguous view past the end). */
    OK(MPI_File_read(fh, in, 4, MPI_INT, &st));
    OK(MPI_Get_count(&st, MPI_INT, &cnt));
    CHECK(cnt == 0 || !BCSMPI, "read at the end gave %d", cnt);
    OK(MPI_File_seek(fh, -2, MPI_SEEK_END));
    OK(MPI_File_get_position(fh, &pos));
    CHECK(pos == R * B - 2, "SEEK_END-2 gave %lld", (long long)pos);
    /* The whole file, contiguously (default view). */
    OK(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    int *all = malloc(sizeof(int) * R * B * size);
    OK(MPI_File_read_at(fh, 0, all, R * B * size, MPI_INT, &st));
    OK(MPI_Get_count(&st, MPI_INT, &cnt));
    CHECK(cnt == R * B * size, "whole read %d", cnt);
    for (int k = 0; k < R; k++)
        for (int r = 0; r < size; r++)
            for (int j = 0; j < B; j++) {
                int got = all[(k * size + r) * B + j], want = val(r, k * B + j);
                CHECK(got == want, "file block %d of rank %d [%d] = %d, want %d", k, r, j, got, want);
            }
    /* A read past the end is short: Get_count and Get_elements say so. */
    OK(MPI_File_read_at(fh, (MPI_Offset)(R * B * size - 2) * sizeof(int), all, 5, MPI_INT, &st));
    OK(MPI_Get_count(&st, MPI_INT, &cnt));
    CHECK(cnt == 2, "short read %d items, want 2", cnt);
    OK(MPI_Get_elements(&st, MPI_INT, &cnt));
    CHECK(cnt == 2, "short read %d elements, want 2", cnt);
    MPI_Datatype pair;
    OK(MPI_Type_contiguous(2, MPI_INT, &pair));
    OK(MPI_Type_commit(&pair));
    OK(MPI_File_read_at(fh, (MPI_Offset)(R * B * size - 3) * sizeof(int), all, 2, pair, &st));
    OK(MPI_Get_count(&st, pair, &cnt));
    CHECK(cnt == MPI_UNDEFINED, "3 ints as pairs: count %d, want MPI_UNDEFINED", cnt);
    OK(MPI_Get_elements(&st, pair, &cnt));
    CHECK(cnt == 3, "3 ints as pairs: %d elements", cnt);
    OK(MPI_Type_free(&pair));
    free(all);
    /* get_view gives the view back; get_type_extent the file extent. */
    MPI_Offset d;
    MPI_Datatype et, gft;
    char rep[MPI_MAX_DATAREP_STRING];
    OK(MPI_File_set_view(fh, 8, MPI_INT, ft, "native", MPI_INFO_NULL));
    OK(MPI_File_get_view(fh, &d, &et, &gft, rep));
    CHECK(d == 8 && et == MPI_INT && strcmp(rep, "native") == 0, "view %lld %s", (long long)d, rep);
    MPI_Aint lb, ext;
    OK(MPI_Type_get_extent(gft, &lb, &ext));
    CHECK(ext == (MPI_Aint)(R * B * size * sizeof(int)), "filetype extent %ld", (long)ext);
    OK(MPI_Type_free(&gft));
    OK(MPI_File_get_type_extent(fh, ft, &ext));
    CHECK(ext == (MPI_Aint)(R * B * size * sizeof(int)), "file type extent %ld", (long)ext);
    OK(MPI_Type_free(&ft));
    OK(MPI_Type_free(&vec));
    OK(MPI_File_close(&fh));
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK(access(path("vec"), F_OK) != 0, "MPI_MODE_DELETE_ON_CLOSE left the file");
}

/* Memory datatypes: every other int of a buffer, written and read back. */
static void memtypes(void) {
    MPI_File fh;
    MPI_Datatype every2;
    MPI_Status st;
    char n[32];
    snprintf(n, sizeof n, "mem%d", rank);
    OK(MPI_File_open(MPI_COMM_SELF, path(n), MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    OK(MPI_Type_vector(6, 1, 2, MPI_INT, &every2));
    OK(MPI_Type_commit(&every2));
    int src[12], dst[6], back[12];
    for (int i = 0; i < 12; i++)
        src[i] = val(rank, i);
    OK(MPI_File_write_at(fh, 0, src, 1, every2, &st));
    OK(MPI_File_read_at(fh, 0, dst, 6, MPI_INT, &st));
    for (int i = 0; i < 6; i++)
        CHECK(dst[i] == src[2 * i], "strided write [%d] = %d, want %d", i, dst[i], src[2 * i]);
    for (int i = 0; i < 12; i++)
        back[i] = -1;
    OK(MPI_File_read_at(fh, 0, back, 1, every2, &st));
    int cnt;
    OK(MPI_Get_count(&st, every2, &cnt));
    CHECK(cnt == 1, "strided read count %d", cnt);
    for (int i = 0; i < 12; i++)
        CHECK(back[i] == (i % 2 == 0 ? src[i] : -1), "strided read [%d] = %d", i, back[i]);
    OK(MPI_Type_free(&every2));
    int amode;
    OK(MPI_File_get_amode(fh, &amode));
    CHECK((amode & MPI_MODE_RDWR) && (amode & MPI_MODE_CREATE), "amode %d", amode);
    OK(MPI_File_close(&fh));
    OK(MPI_File_delete(path(n), MPI_INFO_NULL));
    CHECK(access(path(n), F_OK) != 0, "%s left behind", n);
}

/* The shared file pointer. */
#define REC 4
static void shared(void) {
    MPI_File fh;
    MPI_Status st;
    int rec[REC], cnt;
    OK(MPI_File_open(MPI_COMM_WORLD, path("shared"), MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE,
                     MPI_INFO_NULL, &fh));
    OK(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "native", MPI_INFO_NULL));
    /* Each member appends 3 records in any order: each is there once, whole. */
    for (int k = 0; k < 3; k++) {
        for (int i = 0; i < REC; i++)
            rec[i] = val(rank, k * REC + i);
        OK(MPI_File_write_shared(fh, rec, REC, MPI_INT, &st));
        OK(MPI_Get_count(&st, MPI_INT, &cnt));
        CHECK(cnt == REC, "write_shared count %d", cnt);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Offset pos;
    OK(MPI_File_get_position_shared(fh, &pos));
    /* (ROMIO's shared pointer on this machine's /tmp reads stale values:
     * 49 for 48, or misses increments; its position checks are ours alone.) */
    CHECK(pos == 3 * REC * size || !BCSMPI, "shared position %lld, want %d", (long long)pos, 3 * REC * size);
    int n = 3 * REC * size;
    int *all = malloc(sizeof(int) * n);
    OK(MPI_File_read_at(fh, 0, all, n, MPI_INT, &st));
    int *seen = calloc(size * 3, sizeof(int));
    for (int j = 0; j < 3 * size; j++) {
        int r = all[j * REC] / 100000, k = (all[j * REC] % 100000) / REC;
        CHECK(r >= 0 && r < size && k >= 0 && k < 3, "record %d starts with %d", j, all[j * REC]);
        for (int i = 0; i < REC; i++)
            CHECK(all[j * REC + i] == val(r, k * REC + i), "record %d is torn", j);
        seen[r * 3 + k]++;
    }
    for (int j = 0; j < 3 * size; j++)
        CHECK(seen[j] == 1, "record %d of rank %d seen %d times", j % 3, j / 3, seen[j]);
    free(seen);
    /* Ordered: rank order after the shared records, rank r writing r+1 ints. */
    int mine[64];
    for (int i = 0; i <= rank; i++)
        mine[i] = val(rank, 1000 + i);
    OK(MPI_File_write_ordered(fh, mine, rank + 1, MPI_INT, &st));
    OK(MPI_File_get_position_shared(fh, &pos));
    int tot = size * (size + 1) / 2;
    CHECK(pos == n + tot, "after write_ordered: %lld, want %d", (long long)pos, n + tot);
    int *ord = malloc(sizeof(int) * tot);
    OK(MPI_File_read_at_all(fh, n, ord, tot, MPI_INT, &st));
    for (int r = 0, j = 0; r < size; r++)
        for (int i = 0; i <= r; i++, j++)
            CHECK(ord[j] == val(r, 1000 + i), "ordered [%d] = %d, want %d", j, ord[j], val(r, 1000 + i));
    /* read_ordered from the start of the ordered part reads each member's own. */
    OK(MPI_File_seek_shared(fh, n, MPI_SEEK_SET));
    memset(mine, 0, sizeof mine);
    OK(MPI_File_read_ordered(fh, mine, rank + 1, MPI_INT, &st));
    OK(MPI_Get_count(&st, MPI_INT, &cnt));
    CHECK(cnt == rank + 1, "read_ordered count %d", cnt);
    for (int i = 0; i <= rank; i++)
        CHECK(mine[i] == val(rank, 1000 + i), "read_ordered [%d] = %d", i, mine[i]);
    /* Split ordered and read_shared back to the start. */
    OK(MPI_File_seek_shared(fh, 0, MPI_SEEK_SET));
    OK(MPI_File_write_ordered_begin(fh, mine, rank + 1, MPI_INT));
    OK(MPI_File_write_ordered_end(fh, mine, &st));
    OK(MPI_Get_count(&st, MPI_INT, &cnt));
    CHECK(cnt == rank + 1, "write_ordered_end count %d", cnt);
    OK(MPI_File_read_at_all(fh, 0, ord, tot, MPI_INT, &st));
    for (int r = 0, j = 0; r < size; r++)
        for (int i = 0; i <= r; i++, j++)
            CHECK(ord[j] == val(r, 1000 + i), "ordered split [%d] = %d", j, ord[j]);
    OK(MPI_File_seek_shared(fh, 0, MPI_SEEK_SET));
    if (rank == 0) {
        OK(MPI_File_read_shared(fh, ord, tot, MPI_INT, &st));
        OK(MPI_Get_count(&st, MPI_INT, &cnt));
        CHECK(cnt == tot, "read_shared count %d", cnt);
        CHECK(ord[0] == val(0, 1000), "read_shared [0] = %d", ord[0]);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    OK(MPI_File_get_position_shared(fh, &pos));
    CHECK(pos == tot, "after read_shared %lld", (long long)pos);
    MPI_Barrier(MPI_COMM_WORLD); /* every member has looked before the pointer moves on */
    /* Nonblocking and _c shared-pointer forms: each member writes 2 ints. */
    MPI_Request rq;
    int two[2] = {val(rank, 7), val(rank, 8)}, back[2];
    OK(MPI_File_iwrite_shared(fh, two, 1, MPI_INT, &rq));
    OK(MPI_Wait(&rq, &st));
    OK(MPI_File_write_shared_c(fh, two + 1, (MPI_Count)1, MPI_INT, &st));
    MPI_Barrier(MPI_COMM_WORLD);
    OK(MPI_File_get_position_shared(fh, &pos));
    CHECK(pos == tot + 2 * size || !BCSMPI, "after iwrite_shared %lld, want %d", (long long)pos, tot + 2 * size);
    OK(MPI_File_seek_shared(fh, tot, MPI_SEEK_SET));
    OK(MPI_File_iread_shared(fh, back, 1, MPI_INT, &rq));
    OK(MPI_Wait(&rq, &st));
    OK(MPI_Get_count(&st, MPI_INT, &cnt));
    CHECK(cnt == 1 && back[0] / 100000 < size && (back[0] % 100000 == 7 || back[0] % 100000 == 8),
          "iread_shared %d items, %d", cnt, back[0]);
    MPI_Barrier(MPI_COMM_WORLD);
    OK(MPI_File_seek_shared(fh, 0, MPI_SEEK_END));
    OK(MPI_File_get_position_shared(fh, &pos));
    CHECK(pos == n + tot, "seek_shared to the end %lld, want %d", (long long)pos, n + tot);
    OK(MPI_File_read_ordered_begin_c(fh, back, (MPI_Count)0, MPI_INT));
    OK(MPI_File_read_ordered_end(fh, back, &st));
    free(ord);
    free(all);
    OK(MPI_File_close(&fh));
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK(access(path("shared"), F_OK) != 0, "shared left behind");
}

/* Nonblocking, split collective and _c forms; sizes, atomicity, info,
 * group, append. */
static void forms(void) {
    MPI_File fh;
    MPI_Status st;
    MPI_Request rq[2];
    int a[8], b[8], cnt, flag;
    OK(MPI_File_open(MPI_COMM_WORLD, path("forms"), MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    for (int i = 0; i < 8; i++)
        a[i] = val(rank, i);
    MPI_Offset base = (MPI_Offset)rank * 8 * sizeof(int);
    OK(MPI_File_iwrite_at(fh, base, a, 4, MPI_INT, &rq[0]));
    OK(MPI_File_iwrite_at_all(fh, base + 16, a + 4, 4, MPI_INT, &rq[1]));
    OK(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
    CHECK(rq[0] == MPI_REQUEST_NULL && rq[1] == MPI_REQUEST_NULL, "requests not freed");
    MPI_Barrier(MPI_COMM_WORLD);
    OK(MPI_File_iread_at(fh, base, b, 8, MPI_INT, &rq[0]));
    do
        OK(MPI_Test(&rq[0], &flag, &st));
    while (!flag);
    OK(MPI_Get_count(&st, MPI_INT, &cnt));
    CHECK(cnt == 8, "iread_at count %d", cnt);
    for (int i = 0; i < 8; i++)
        CHECK(b[i] == a[i], "iread_at [%d] = %d", i, b[i]);
    /* Individual pointer, nonblocking. */
    OK(MPI_File_seek(fh, base, MPI_SEEK_SET));
    memset(b, 0, sizeof b);
    OK(MPI_File_iread(fh, b, 2, MPI_INT, &rq[0]));
    OK(MPI_Wait(&rq[0], &st));
    OK(MPI_File_iread_all(fh, b + 2, 2, MPI_INT, &rq[0]));
    OK(MPI_Wait(&rq[0], &st));
    OK(MPI_Get_count(&st, MPI_INT, &cnt));
    CHECK(cnt == 2 && b[0] == a[0] && b[3] == a[3], "iread/iread_all %d %d %d", cnt, b[0], b[3]);
    /* Split collectives. */
    memset(b, 0, sizeof b);
    OK(MPI_File_read_at_all_begin(fh, base, b, 8, MPI_INT));
    FAILS(MPI_File_read_all_begin(fh, b, 8, MPI_INT), MPI_ERR_IO);
    OK(MPI_File_read_at_all_end(fh, b, &st));
    OK(MPI_Get_count(&st, MPI_INT, &cnt));
    CHECK(cnt == 8 && b[7] == a[7], "split read %d %d", cnt, b[7]);
    OK(MPI_File_seek(fh, base, MPI_SEEK_SET));
    OK(MPI_File_write_all_begin(fh, a, 2, MPI_INT));
    OK(MPI_File_write_all_end(fh, a, &st));
    OK(MPI_File_read_all_begin(fh, b, 1, MPI_INT));
    OK(MPI_File_read_all_end(fh, b, &st));
    CHECK(b[0] == a[2], "split read_all after write_all: %d, want %d", b[0], a[2]);
    /* _c forms. */
    MPI_Count cc;
    OK(MPI_File_write_at_c(fh, base, a, (MPI_Count)8, MPI_INT, &st));
    OK(MPI_Get_count_c(&st, MPI_INT, &cc));
    CHECK(cc == 8, "write_at_c count %lld", (long long)cc);
    memset(b, 0, sizeof b);
    OK(MPI_File_read_at_all_c(fh, base, b, (MPI_Count)8, MPI_INT, &st));
    OK(MPI_Get_elements_c(&st, MPI_INT, &cc));
    CHECK(cc == 8 && b[5] == a[5], "read_at_all_c %lld %d", (long long)cc, b[5]);
    MPI_Count ce;
    OK(MPI_File_get_type_extent_c(fh, MPI_DOUBLE, &ce));
    CHECK(ce == 8, "get_type_extent_c %lld", (long long)ce);
    /* Sizes. */
    MPI_Offset sz;
    OK(MPI_File_get_size(fh, &sz));
    CHECK(sz == (MPI_Offset)size * 8 * sizeof(int), "size %lld", (long long)sz);
    OK(MPI_File_preallocate(fh, 4096));
    OK(MPI_File_get_size(fh, &sz));
    CHECK(sz == 4096, "after preallocate %lld", (long long)sz);
    if (BCSMPI && size > 1) /* sizes that differ: every member fails */
        FAILS(MPI_File_set_size(fh, rank == 1 ? 20 : 10), MPI_ERR_NOT_SAME);
    if (BCSMPI) /* a bad size on one member: every member fails */
        FAILS(MPI_File_set_size(fh, rank == size - 1 ? -1 : 10), MPI_ERR_ARG);
    OK(MPI_File_set_size(fh, 10));
    OK(MPI_File_get_size(fh, &sz));
    CHECK(sz == 10, "after set_size %lld", (long long)sz);
    OK(MPI_File_sync(fh));
    /* Atomicity, info, group. */
    OK(MPI_File_get_atomicity(fh, &flag));
    CHECK(flag == 0, "atomicity %d at open", flag);
    OK(MPI_File_set_atomicity(fh, 1));
    OK(MPI_File_get_atomicity(fh, &flag));
    CHECK(flag == 1, "atomicity %d", flag);
    OK(MPI_File_write_at_all(fh, base, a, 8, MPI_INT, &st));
    OK(MPI_File_read_at(fh, base, b, 8, MPI_INT, &st));
    CHECK(b[6] == a[6], "atomic round trip %d", b[6]);
    MPI_Info info;
    int nkeys;
    OK(MPI_File_get_info(fh, &info));
    OK(MPI_Info_get_nkeys(info, &nkeys));
    OK(MPI_Info_free(&info));
    OK(MPI_Info_create(&info));
    OK(MPI_Info_set(info, "access_style", "read_once"));
    OK(MPI_File_set_info(fh, info));
    OK(MPI_Info_free(&info));
    MPI_Group g, wg;
    int cmp;
    OK(MPI_File_get_group(fh, &g));
    OK(MPI_Comm_group(MPI_COMM_WORLD, &wg));
    OK(MPI_Group_compare(g, wg, &cmp));
    CHECK(cmp == MPI_IDENT, "group compare %d", cmp);
    OK(MPI_Group_free(&g));
    OK(MPI_Group_free(&wg));
    OK(MPI_File_close(&fh));
    /* Append: the pointers start at the end. */
    OK(MPI_File_open(MPI_COMM_WORLD, path("forms"), MPI_MODE_WRONLY | MPI_MODE_APPEND | MPI_MODE_DELETE_ON_CLOSE,
                     MPI_INFO_NULL, &fh));
    MPI_Offset pos;
    OK(MPI_File_get_position(fh, &pos));
    CHECK(pos == (MPI_Offset)size * 8 * sizeof(int), "append position %lld", (long long)pos);
    OK(MPI_File_get_position_shared(fh, &pos));
    CHECK(pos == (MPI_Offset)size * 8 * sizeof(int), "append shared position %lld", (long long)pos);
    OK(MPI_File_close(&fh));
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK(access(path("forms"), F_OK) != 0, "forms left behind");
}

/* A 2-D array of doubles decomposed over a grid of members: each writes
 * its block, held with a halo of 1, through a subarray memory type into a
 * subarray filetype of the global array (the pattern of real codes). */
#define GR 7
#define GC 9
static double gval(int i, int j) { return i * 1000.0 + j + 0.25; }
static void subarrays(void) {
    int dims[2] = {0, 0}, coords[2];
    OK(MPI_Dims_create(size, 2, dims));
    coords[0] = rank / dims[1];
    coords[1] = rank % dims[1];
    int gs[2] = {GR, GC}, ls[2], st0[2];
    for (int d = 0; d < 2; d++) {
        int q = gs[d] / dims[d], r = gs[d] % dims[d];
        ls[d] = q + (coords[d] < r);
        st0[d] = coords[d] * q + (coords[d] < r ? coords[d] : r);
    }
    int hs[2] = {ls[0] + 2, ls[1] + 2}, one[2] = {1, 1};
    double *loc = malloc(sizeof(double) * hs[0] * hs[1]);
    for (int i = 0; i < hs[0]; i++)
        for (int j = 0; j < hs[1]; j++)
            loc[i * hs[1] + j] = (i == 0 || j == 0 || i == hs[0] - 1 || j == hs[1] - 1)
                                     ? -1.0
                                     : gval(st0[0] + i - 1, st0[1] + j - 1);
    MPI_Datatype mem, ft;
    OK(MPI_Type_create_subarray(2, hs, ls, one, MPI_ORDER_C, MPI_DOUBLE, &mem));
    OK(MPI_Type_commit(&mem));
    OK(MPI_Type_create_subarray(2, gs, ls, st0, MPI_ORDER_C, MPI_DOUBLE, &ft));
    OK(MPI_Type_commit(&ft));
    MPI_File fh;
    MPI_Status st;
    OK(MPI_File_open(MPI_COMM_WORLD, path("grid"), MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE,
                     MPI_INFO_NULL, &fh));
    OK(MPI_File_set_view(fh, 0, MPI_DOUBLE, ft, "native", MPI_INFO_NULL));
    OK(MPI_File_write_all(fh, loc, 1, mem, &st));
    int cnt;
    OK(MPI_Get_elements(&st, MPI_DOUBLE, &cnt));
    CHECK(cnt == ls[0] * ls[1], "subarray write elements %d, want %d", cnt, ls[0] * ls[1]);
    /* The whole file, contiguously. */
    double *g = malloc(sizeof(double) * (GR + 2) * (GC + 2));
    OK(MPI_File_set_view(fh, 0, MPI_DOUBLE, MPI_DOUBLE, "native", MPI_INFO_NULL));
    OK(MPI_File_read_at_all(fh, 0, g, GR * GC, MPI_DOUBLE, &st));
    for (int i = 0; i < GR; i++)
        for (int j = 0; j < GC; j++)
            CHECK(g[i * GC + j] == gval(i, j), "global [%d][%d] = %g, want %g", i, j, g[i * GC + j], gval(i, j));
    /* Back through the view into a fresh halo'd buffer: the halo stays. */
    OK(MPI_File_set_view(fh, 0, MPI_DOUBLE, ft, "native", MPI_INFO_NULL));
    for (int k = 0; k < hs[0] * hs[1]; k++)
        g[k] = -1.0;
    OK(MPI_File_read_all(fh, g, 1, mem, &st));
    for (int k = 0; k < hs[0] * hs[1]; k++)
        CHECK(g[k] == loc[k], "block read back [%d] = %g, want %g", k, g[k], loc[k]);
    OK(MPI_File_close(&fh));
    OK(MPI_Type_free(&mem));
    OK(MPI_Type_free(&ft));
    free(g);
    free(loc);
}

/* MPI_MODE_SEQUENTIAL: only the shared file pointer. */
static void sequential(void) {
    MPI_File fh;
    MPI_Status st;
    int a[64], x = 0;
    OK(MPI_File_open(MPI_COMM_WORLD, path("seq"),
                     MPI_MODE_CREATE | MPI_MODE_WRONLY | MPI_MODE_SEQUENTIAL | MPI_MODE_DELETE_ON_CLOSE, MPI_INFO_NULL,
                     &fh));
    FAILS(MPI_File_write_at(fh, 0, &x, 1, MPI_INT, &st), MPI_ERR_UNSUPPORTED_OPERATION);
    FAILS(MPI_File_write(fh, &x, 1, MPI_INT, &st), MPI_ERR_UNSUPPORTED_OPERATION);
    for (int i = 0; i <= rank; i++)
        a[i] = val(rank, i);
    OK(MPI_File_write_ordered(fh, a, rank + 1, MPI_INT, &st));
    MPI_Offset pos, d, sz;
    int tot = size * (size + 1) / 2;
    /* The shared pointer may not be asked for (ROMIO refuses it too);
     * a view must start at the shared pointer. */
    FAILS(MPI_File_get_position_shared(fh, &pos), MPI_ERR_UNSUPPORTED_OPERATION);
    OK(MPI_File_get_position(fh, &pos)); /* allowed; its value means nothing here */
    FAILS(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "native", MPI_INFO_NULL), MPI_ERR_ARG);
    OK(MPI_File_set_view(fh, MPI_DISPLACEMENT_CURRENT, MPI_INT, MPI_INT, "native", MPI_INFO_NULL));
    MPI_Datatype et, ft;
    char rep[MPI_MAX_DATAREP_STRING];
    OK(MPI_File_get_view(fh, &d, &et, &ft, rep));
    CHECK(d == (MPI_Offset)(tot * sizeof(int)) && et == MPI_INT && ft == MPI_INT, "view disp %lld", (long long)d);
    if (rank == 0)
        OK(MPI_File_write_shared(fh, a, 1, MPI_INT, &st));
    MPI_Barrier(MPI_COMM_WORLD);
    OK(MPI_File_write_ordered(fh, a, 1, MPI_INT, &st));
    MPI_Barrier(MPI_COMM_WORLD);
    OK(MPI_File_get_size(fh, &sz));
    CHECK(sz == (MPI_Offset)((tot + 1 + size) * sizeof(int)), "sequential size %lld, want %d", (long long)sz, (int)((tot + 1 + size) * sizeof(int)));
    OK(MPI_File_close(&fh));
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK(access(path("seq"), F_OK) != 0, "seq left behind");
}

/* Views whose filetype breaks the standard's rules (displacements
 * nonnegative and nondecreasing, in every access mode) are MPI_ERR_TYPE
 * on a read-only file as on a writable one (the standard names no class;
 * ROMIO answers MPI_ERR_IO and takes a typemap that goes back on a
 * read-only file, so these run under bcsmpi alone); a filetype with holes
 * whose displacements increase is taken. */
static void badviews(void) {
    MPI_File fh;
    OK(MPI_File_open(MPI_COMM_WORLD, path("views"), MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh));
    OK(MPI_File_close(&fh));
    for (int ro = 0; ro < 2; ro++) {
        OK(MPI_File_open(MPI_COMM_WORLD, path("views"), ro ? MPI_MODE_RDONLY : MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
        int bl[2][2] = {{1, 1}, {3, 1}}, dp[3][2] = {{-2, 2}, {3, 0}, {0, 1}};
        for (int c = 0; c < 3 && BCSMPI; c++) { /* negative; decreasing; {0, 4, 8, 4} */
            MPI_Datatype ft;
            OK(MPI_Type_indexed(2, bl[c == 2], dp[c], MPI_INT, &ft));
            OK(MPI_Type_commit(&ft));
            FAILS(MPI_File_set_view(fh, 0, MPI_INT, ft, "native", MPI_INFO_NULL), MPI_ERR_TYPE);
            FAILS(MPI_File_set_view(fh, 0, ft, ft, "native", MPI_INFO_NULL), MPI_ERR_TYPE);
            OK(MPI_Type_free(&ft));
        }
        MPI_Datatype ft;
        int ok[2] = {0, 3};
        OK(MPI_Type_indexed(2, bl[0], ok, MPI_INT, &ft));
        OK(MPI_Type_commit(&ft));
        OK(MPI_File_set_view(fh, 0, MPI_INT, ft, "native", MPI_INFO_NULL));
        OK(MPI_Type_free(&ft));
        OK(MPI_File_close(&fh));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        OK(MPI_File_delete(path("views"), MPI_INFO_NULL));
    MPI_Barrier(MPI_COMM_WORLD);
}

/* File error handlers. */
static int calls, lastcode;
static MPI_File lastfile;
static void handler(MPI_File *f, int *code, ...) {
    calls++;
    lastcode = *code;
    lastfile = *f;
}

static void handlers(void) {
    MPI_File fh;
    MPI_Errhandler eh, got;
    MPI_Status st;
    int x = 0;
    OK(MPI_File_create_errhandler(handler, &eh));
    OK(MPI_File_open(MPI_COMM_WORLD, path("eh"), MPI_MODE_CREATE | MPI_MODE_WRONLY | MPI_MODE_DELETE_ON_CLOSE,
                     MPI_INFO_NULL, &fh));
    OK(MPI_File_get_errhandler(fh, &got));
    CHECK(got == MPI_ERRORS_RETURN, "a new file's handler is not MPI_ERRORS_RETURN");
    OK(MPI_File_set_errhandler(fh, eh));
    int rc = MPI_File_read(fh, &x, 1, MPI_INT, &st);
    CHECK(cls(rc) == MPI_ERR_ACCESS && calls == 1 && cls(lastcode) == MPI_ERR_ACCESS && lastfile == fh,
          "handler: rc %d calls %d code %d", rc, calls, lastcode);
    OK(MPI_File_call_errhandler(fh, MPI_ERR_IO));
    CHECK(calls == 2 && lastcode == MPI_ERR_IO, "call_errhandler: calls %d code %d", calls, lastcode);
    OK(MPI_File_close(&fh));
    /* MPI_FILE_NULL's handler is the default of new files, and handles open. */
    OK(MPI_File_set_errhandler(MPI_FILE_NULL, eh));
    rc = MPI_File_open(MPI_COMM_WORLD, path("none"), MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
    CHECK(cls(rc) == MPI_ERR_NO_SUCH_FILE && calls == 3 && lastfile == MPI_FILE_NULL, "open handler: calls %d",
          calls);
    OK(MPI_File_open(MPI_COMM_WORLD, path("eh"), MPI_MODE_CREATE | MPI_MODE_WRONLY | MPI_MODE_DELETE_ON_CLOSE,
                     MPI_INFO_NULL, &fh));
    OK(MPI_File_get_errhandler(fh, &got));
    CHECK(got == eh, "a new file did not take MPI_FILE_NULL's handler");
    OK(MPI_File_close(&fh));
    OK(MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN));
    OK(MPI_Errhandler_free(&eh));
}

/* Errors of one member in a collective: every member fails together, and
 * the next collective still pairs with the others' (bcsmpi only: the
 * standard leaves an erroneous _end undefined). */
static void collerr(void) {
    MPI_File fh;
    MPI_Status st;
    int x = rank, other = 0, y[8], rc;
    int bad = size - 1 == 0 ? 0 : 1; /* the member that errs */
    if (!BCSMPI)
        return;
    /* MPI_File_open's errors go to MPI_FILE_NULL's handler
     * (MPI_ERRORS_RETURN), not to the communicator's. */
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
    rc = MPI_File_open(MPI_COMM_NULL, path("nf"), MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
    CHECK(cls(rc) == MPI_ERR_COMM, "open on MPI_COMM_NULL: rc %d", rc);
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    /* MPI_File_open with fh or filename NULL on one member fails on all. */
    rc = MPI_File_open(MPI_COMM_WORLD, path("nf"), MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL,
                       rank == bad ? NULL : &fh);
    CHECK(cls(rc) == MPI_ERR_ARG, "open with fh = NULL on rank %d: rc %d", bad, rc);
    rc = MPI_File_open(MPI_COMM_WORLD, rank == bad ? NULL : path("nf"), MPI_MODE_CREATE | MPI_MODE_RDWR,
                       MPI_INFO_NULL, &fh);
    CHECK(cls(rc) == MPI_ERR_BAD_FILE, "open with filename = NULL on rank %d: rc %d", bad, rc);
    CHECK(access(path("nf"), F_OK) != 0, "the file nf was made");
    OK(MPI_File_open(MPI_COMM_WORLD, path("ce"), MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE,
                     MPI_INFO_NULL, &fh));
    /* A split _end with another buffer on one member. */
    OK(MPI_File_write_at_all_begin(fh, rank * (MPI_Offset)sizeof(int), &x, 1, MPI_INT));
    rc = MPI_File_write_at_all_end(fh, rank == bad ? (void *)&other : (void *)&x, &st);
    CHECK(cls(rc) == MPI_ERR_BUFFER, "write_at_all_end with another buffer on rank %d: rc %d", bad, rc);
    /* An ordered _end with no _begin on one member. */
    if (rank != bad)
        OK(MPI_File_write_ordered_begin(fh, &x, 1, MPI_INT));
    rc = MPI_File_write_ordered_end(fh, &x, &st);
    CHECK(cls(rc) == MPI_ERR_IO, "write_ordered_end with no _begin on rank %d: rc %d", bad, rc);
    /* The next collective pairs with the others' and succeeds. */
    OK(MPI_File_write_at_all(fh, rank * (MPI_Offset)sizeof(int), &x, 1, MPI_INT, &st));
    OK(MPI_File_read_at_all(fh, 0, y, size < 8 ? size : 8, MPI_INT, &st));
    for (int i = 0; i < size && i < 8; i++)
        CHECK(y[i] == i, "after the failed _end: [%d] = %d", i, y[i]);
    /* Offsets in etypes whose bytes overflow fail with MPI_ERR_ARG and
     * move nothing (1 << 62 ints are 1 << 64 bytes, 0 when wrapped). */
    int big = -1;
    MPI_Offset pos, off;
    OK(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "native", MPI_INFO_NULL));
    FAILS(MPI_File_write_at(fh, (MPI_Offset)1 << 62, &big, 1, MPI_INT, &st), MPI_ERR_ARG);
    rc = MPI_File_write_at_all(fh, rank == bad ? (MPI_Offset)1 << 62 : rank, rank == bad ? &big : &x, 1, MPI_INT, &st);
    CHECK(cls(rc) == MPI_ERR_ARG, "write_at_all at 1 << 62 on rank %d: rc %d", bad, rc);
    OK(MPI_File_read_at_all(fh, 0, y, size < 8 ? size : 8, MPI_INT, &st));
    for (int i = 0; i < size && i < 8; i++)
        CHECK(y[i] == i, "after writes at 1 << 62: [%d] = %d", i, y[i]);
    FAILS(MPI_File_seek(fh, (MPI_Offset)1 << 62, MPI_SEEK_SET), MPI_ERR_ARG);
    OK(MPI_File_seek(fh, 10, MPI_SEEK_SET));
    FAILS(MPI_File_seek(fh, (MPI_Offset)0x7fffffffffffffffLL, MPI_SEEK_CUR), MPI_ERR_ARG);
    OK(MPI_File_get_position(fh, &pos));
    CHECK(pos == 10, "position %lld after a failed seek, want 10", (long long)pos);
    FAILS(MPI_File_get_byte_offset(fh, (MPI_Offset)1 << 62, &off), MPI_ERR_ARG);
    FAILS(MPI_File_seek_shared(fh, (MPI_Offset)1 << 62, MPI_SEEK_SET), MPI_ERR_ARG);
    /* The members' etypes must have one extent: an int resized to extent
     * 8 (one size, another extent) on one member fails the view on all. */
    MPI_Datatype wide;
    OK(MPI_Type_create_resized(MPI_INT, 0, 8, &wide));
    OK(MPI_Type_commit(&wide));
    rc = MPI_File_set_view(fh, 0, rank == bad ? wide : MPI_INT, rank == bad ? wide : MPI_INT, "native", MPI_INFO_NULL);
    CHECK(size == 1 ? rc == MPI_SUCCESS : cls(rc) == MPI_ERR_NOT_SAME, "etype extents 8 and 4: rc %d", rc);
    OK(MPI_Type_free(&wide));
    OK(MPI_File_close(&fh));
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    CHECK(argc >= 2, "usage: io DIR [mode]");
    snprintf(dir, sizeof dir, "%s", argv[1]);
    if (argc > 2 && strcmp(argv[2], "nosame") == 0) {
        MPI_File fh;
        MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_ARE_FATAL);
        MPI_File_open(MPI_COMM_WORLD, path("ns"), MPI_MODE_CREATE | (rank == 0 ? MPI_MODE_RDWR : MPI_MODE_WRONLY),
                      MPI_INFO_NULL, &fh);
        printf("io nosame returned %d\n", rank);
        MPI_Finalize();
        return 0;
    }
    if (argc > 2 && strcmp(argv[2], "open") == 0) {
        MPI_File fh;
        OK(MPI_File_open(MPI_COMM_WORLD, path("left"), MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE,
                         MPI_INFO_NULL, &fh));
        MPI_Finalize();
        printf("io ok %d\n", rank);
        return 0;
    }
    errors();
    interleaved();
    memtypes();
    shared();
    forms();
    subarrays();
    sequential();
    badviews();
    handlers();
    collerr();
    MPI_Finalize();
    printf("io ok %d\n", rank);
    return 0;
}
