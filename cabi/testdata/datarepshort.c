/* datarepshort: a write through a user data representation that the file
 * system cuts short (RLIMIT_FSIZE, with SIGXFSZ ignored, makes pwrite stop
 * at the limit and then fail with EFBIG) fails with MPI_ERR_NO_SPACE, and
 * its status and the individual file pointer agree: both count the whole
 * etypes written. "wide" stores each int in 8 little-endian bytes. Two
 * views: etype MPI_INT, and etype two ints (a partial etype at the limit is
 * in the file but not counted). Run as a singleton; argv[1] is a directory
 * for its files, deleted at close. Prints "datarepshort ok 0". */
#include <mpi.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>

static int rank;

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

#define N 1000

/* conv converts count ints from position (ints tiled over userbuf; the
 * datatypes here are contiguous ints). */
static int conv(int write, void *userbuf, MPI_Datatype dt, int count, void *filebuf, MPI_Offset position) {
    (void)dt;
    int *u = (int *)userbuf + position;
    unsigned char *f = filebuf;
    for (int i = 0; i < count; i++, f += 8) {
        if (write) {
            int64_t v = u[i];
            for (int b = 0; b < 8; b++) f[b] = (unsigned char)((uint64_t)v >> (8 * b));
        } else {
            uint64_t v = 0;
            for (int b = 0; b < 8; b++) v |= (uint64_t)f[b] << (8 * b);
            u[i] = (int)(int64_t)v;
        }
    }
    return MPI_SUCCESS;
}

static int rd(void *u, MPI_Datatype dt, int count, void *f, MPI_Offset pos, void *x) {
    (void)x;
    return conv(0, u, dt, count, f, pos);
}
static int wr(void *u, MPI_Datatype dt, int count, void *f, MPI_Offset pos, void *x) {
    (void)x;
    return conv(1, u, dt, count, f, pos);
}
static int extent_fn(MPI_Datatype dt, MPI_Aint *file_extent, void *extra) {
    (void)extra;
    int s;
    MPI_Type_size(dt, &s);
    *file_extent = dt == MPI_INT ? 8 : s;
    return MPI_SUCCESS;
}

static void limit(rlim_t soft) {
    struct rlimit rl;
    CHECK(getrlimit(RLIMIT_FSIZE, &rl) == 0, "getrlimit");
    rl.rlim_cur = soft;
    CHECK(setrlimit(RLIMIT_FSIZE, &rl) == 0, "setrlimit(RLIMIT_FSIZE, %llu)", (unsigned long long)soft);
}

/* cut writes N ints from the start of a new file through "wide" with the
 * given etype, the file size limited to lim bytes; want_etypes etypes
 * (of ints_per_etype ints) must count as written. */
static void cut(const char *dir, const char *name, MPI_Datatype etype, int ints_per_etype, rlim_t lim, int want_etypes) {
    char path[1000];
    MPI_File fh;
    MPI_Status st;
    MPI_Offset pos, fsize;
    int buf[N], back[N], n, rc, cls;
    for (int i = 0; i < N; i++) buf[i] = i * 3 - 700;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    OK(MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_RDWR | MPI_MODE_CREATE | MPI_MODE_DELETE_ON_CLOSE, MPI_INFO_NULL, &fh));
    OK(MPI_File_set_view(fh, 0, etype, etype, "wide", MPI_INFO_NULL));
    limit(lim);
    memset(&st, 0, sizeof st);
    rc = MPI_File_write(fh, buf, N, MPI_INT, &st); /* files return errors by default */
    limit(RLIM_INFINITY);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_NO_SPACE, "%s: MPI_File_write past RLIMIT_FSIZE returned class %d, want MPI_ERR_NO_SPACE", name, cls);
    OK(MPI_Get_count(&st, MPI_INT, &n));
    OK(MPI_File_get_position(fh, &pos));
    CHECK(n == want_etypes * ints_per_etype, "%s: the status counts %d ints, want %d", name, n, want_etypes * ints_per_etype);
    CHECK(pos == want_etypes, "%s: the individual file pointer is at etype %lld, want %d", name, (long long)pos, want_etypes);
    OK(MPI_File_get_size(fh, &fsize));
    CHECK(fsize == (MPI_Offset)lim, "%s: the file has %lld bytes, want the limit %llu", name, (long long)fsize, (unsigned long long)lim);
    /* What the status counts is in the file; the next write goes on from
     * the pointer and completes the data. */
    OK(MPI_File_write(fh, buf + n, N - n, MPI_INT, &st));
    memset(back, 0, sizeof back);
    OK(MPI_File_read_at(fh, 0, back, N, MPI_INT, &st));
    for (int i = 0; i < N; i++) CHECK(back[i] == buf[i], "%s: int %d read back %d, want %d", name, i, back[i], buf[i]);
    OK(MPI_File_close(&fh));
}

int main(int argc, char **argv) {
    MPI_Datatype two;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    CHECK(argc > 1, "usage: datarepshort DIR");
    signal(SIGXFSZ, SIG_IGN);
    OK(MPI_Register_datarep("wide", rd, wr, extent_fn, NULL));
    /* 4002 bytes: 500 ints of 8 bytes and 2 bytes of the next. */
    cut(argv[1], "ints", MPI_INT, 1, 4002, 500);
    /* 4010 bytes: 501 ints, but 250 etypes of two. */
    OK(MPI_Type_contiguous(2, MPI_INT, &two));
    OK(MPI_Type_commit(&two));
    cut(argv[1], "pairs", two, 2, 4010, 250);
    OK(MPI_Type_free(&two));
    printf("datarepshort ok %d\n", rank);
    MPI_Finalize();
    return 0;
}
