/* dtedge: datatype edge cases that real programs reach (found running
 * MPICH's datatype tests against bcsmpi); each check states the standard's
 * answer. Prints "dtedge ok <rank>" on success. */
#include <mpi.h>
#include <stdio.h>
#include <stdint.h>
#include <string.h>

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

/* emptyStruct: MPI_Type_create_struct with count 0 (its arrays NULL) is
 * a valid empty type: size and extent 0, decodable, usable to move no
 * data, and a harmless member of other types. It was MPI_ERR_INTERN. */
static void emptyStruct(void) {
    MPI_Datatype e, ec, c, s;
    int size, ni, na, nt, comb;
    MPI_Aint lb, ext;
    OK(MPI_Type_create_struct(0, NULL, NULL, NULL, &e));
    OK(MPI_Type_commit(&e));
    OK(MPI_Type_size(e, &size));
    CHECK(size == 0, "size %d", size);
    OK(MPI_Type_get_extent(e, &lb, &ext));
    CHECK(lb == 0 && ext == 0, "lb %ld extent %ld", (long)lb, (long)ext);
    OK(MPI_Type_get_true_extent(e, &lb, &ext));
    CHECK(ext == 0, "true extent %ld", (long)ext);
    OK(MPI_Type_get_envelope(e, &ni, &na, &nt, &comb));
    CHECK(comb == MPI_COMBINER_STRUCT && ni == 1 && na == 0 && nt == 0, "envelope %d %d %d combiner %d", ni, na, nt, comb);
    int ints[1] = {-1};
    OK(MPI_Type_get_contents(e, 1, 0, 0, ints, NULL, NULL));
    CHECK(ints[0] == 0, "count %d", ints[0]);

    OK(MPI_Type_create_struct_c(0, NULL, NULL, NULL, &ec));
    OK(MPI_Type_size(ec, &size));
    CHECK(size == 0, "_c size %d", size);
    MPI_Type_free(&ec);

    /* moves no data, and a receive of it reports zero elements */
    int size_w;
    MPI_Comm_size(MPI_COMM_WORLD, &size_w);
    int to = (rank + 1) % size_w, from = (rank + size_w - 1) % size_w, count = -1, buf = 7;
    MPI_Status st;
    OK(MPI_Sendrecv(&buf, 5, e, to, 1, &buf, 5, e, from, 1, MPI_COMM_WORLD, &st));
    OK(MPI_Get_count(&st, e, &count));
    CHECK(count == 0, "count %d", count);
    CHECK(buf == 7, "buffer touched: %d", buf);

    /* a member of a contiguous and of a struct beside an int */
    OK(MPI_Type_contiguous(4, e, &c));
    OK(MPI_Type_commit(&c));
    OK(MPI_Type_size(c, &size));
    CHECK(size == 0, "contiguous of empty: size %d", size);
    int bl[2] = {1, 1};
    MPI_Aint d[2] = {0, 0};
    MPI_Datatype ty[2] = {e, MPI_INT};
    OK(MPI_Type_create_struct(2, bl, d, ty, &s));
    OK(MPI_Type_commit(&s));
    OK(MPI_Type_size(s, &size));
    OK(MPI_Type_get_extent(s, &lb, &ext));
    CHECK(size == 4 && lb == 0 && ext == 4, "struct {empty, int}: size %d lb %ld extent %ld", size, (long)lb, (long)ext);
    int in[3] = {10, 20, 30}, out[3] = {0, 0, 0}, pos = 0;
    char packed[64];
    OK(MPI_Pack(in, 3, s, packed, sizeof packed, &pos, MPI_COMM_WORLD));
    CHECK(pos == 12, "packed %d bytes", pos);
    pos = 0;
    OK(MPI_Unpack(packed, 12, &pos, out, 3, s, MPI_COMM_WORLD));
    CHECK(out[0] == 10 && out[1] == 20 && out[2] == 30, "unpacked %d %d %d", out[0], out[1], out[2]);
    MPI_Type_free(&s);
    MPI_Type_free(&c);
    MPI_Type_free(&e);
}

/* predefinedNames: a predefined datatype may be renamed (MPI_Type_set_name
 * refused it with MPI_ERR_TYPE, fatal by default); the new name is what
 * MPI_Type_get_name returns, other types keep theirs, and a name is cut
 * to MPI_MAX_OBJECT_NAME-1 characters. */
static void predefinedNames(void) {
    char name[MPI_MAX_OBJECT_NAME], longname[2 * MPI_MAX_OBJECT_NAME];
    int len;
    OK(MPI_Type_set_name(MPI_INT, "int"));
    OK(MPI_Type_get_name(MPI_INT, name, &len));
    CHECK(strcmp(name, "int") == 0 && len == 3, "MPI_INT renamed: got %s (%d)", name, len);
    OK(MPI_Type_get_name(MPI_DOUBLE, name, &len));
    CHECK(strcmp(name, "MPI_DOUBLE") == 0, "MPI_DOUBLE: got %s", name);
    memset(longname, 'x', sizeof longname - 1);
    longname[sizeof longname - 1] = 0;
    OK(MPI_Type_set_name(MPI_DOUBLE_INT, longname));
    OK(MPI_Type_get_name(MPI_DOUBLE_INT, name, &len));
    CHECK(len == MPI_MAX_OBJECT_NAME - 1 && (int)strlen(name) == len, "long name: length %d", len);
    OK(MPI_Type_set_name(MPI_INT, "MPI_INT"));
    OK(MPI_Type_get_name(MPI_INT, name, &len));
    CHECK(strcmp(name, "MPI_INT") == 0, "MPI_INT renamed back: got %s", name);
    /* a NULL name is an argument error, returned under MPI_ERRORS_RETURN */
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int rc = MPI_Type_set_name(MPI_INT, NULL), cls = -1;
    if (rc != MPI_SUCCESS)
        MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_ARG, "MPI_Type_set_name(MPI_INT, NULL): rc %d class %d", rc, cls);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

/* zeroBlocks: a block of no items contributes nothing, its displacement
 * included: (h)indexed and struct blocks of length 0 at displacements far
 * past bcsmpi's bound were refused (MPI_ERR_ARG), and a vector of 2^40
 * empty blocks was walked block by block at commit. */
static void zeroBlocks(void) {
    MPI_Datatype t, s, v;
    MPI_Aint lb, ext;
    int size;
    int len[3] = {0, 4, 0};
    MPI_Aint far[3] = {INT64_MAX, 8, INT64_MAX};
    OK(MPI_Type_create_hindexed(3, len, far, MPI_INT, &t));
    OK(MPI_Type_commit(&t));
    OK(MPI_Type_get_extent(t, &lb, &ext));
    CHECK(lb == 8 && ext == 16, "hindexed: lb %ld extent %ld, want 8 16", (long)lb, (long)ext);
    int in[10], out[10], pos = 0;
    char packed[64];
    for (int i = 0; i < 10; i++)
        in[i] = i + 1, out[i] = 0;
    OK(MPI_Pack(in, 1, t, packed, sizeof packed, &pos, MPI_COMM_WORLD));
    CHECK(pos == 16, "packed %d bytes", pos);
    pos = 0;
    OK(MPI_Unpack(packed, 16, &pos, out, 1, t, MPI_COMM_WORLD));
    for (int i = 0; i < 10; i++)
        CHECK(out[i] == (i >= 2 && i < 6 ? i + 1 : 0), "unpacked [%d] = %d", i, out[i]);

    int ilen[3] = {0, 4, 0}, idisp[3] = {INT32_MAX, 2, INT32_MAX};
    MPI_Datatype ti;
    OK(MPI_Type_indexed(3, ilen, idisp, MPI_INT, &ti));
    OK(MPI_Type_get_extent(ti, &lb, &ext));
    CHECK(lb == 8 && ext == 16, "indexed: lb %ld extent %ld, want 8 16", (long)lb, (long)ext);
    MPI_Type_free(&ti);

    int sl[2] = {0, 1};
    MPI_Aint sd[2] = {INT64_MIN + 1, 4};
    MPI_Datatype st[2] = {MPI_DOUBLE, MPI_INT};
    OK(MPI_Type_create_struct(2, sl, sd, st, &s));
    OK(MPI_Type_get_extent(s, &lb, &ext));
    OK(MPI_Type_size(s, &size));
    CHECK(size == 4 && lb == 4, "struct: size %d lb %ld", size, (long)lb);
    MPI_Type_free(&s);

    OK(MPI_Type_create_hvector_c((MPI_Count)1 << 40, 0, (MPI_Count)1 << 62, MPI_INT, &v));
    OK(MPI_Type_commit(&v));
    OK(MPI_Type_size(v, &size));
    CHECK(size == 0, "empty hvector: size %d", size);
    MPI_Type_free(&v);
    OK(MPI_Type_vector_c((MPI_Count)1 << 40, 0, 1, MPI_INT, &v));
    OK(MPI_Type_commit(&v));
    MPI_Type_free(&v);
    MPI_Type_free(&t);
}

/* synonymNames: a handle with two names answers with the one MPICH and
 * Open MPI give (MPICH's typename test accepts only that one), and a
 * user's name on it is seen through both spellings. */
static void synonymNames(void) {
    char name[MPI_MAX_OBJECT_NAME];
    int len;
    OK(MPI_Type_get_name(MPI_LONG_LONG, name, &len));
    CHECK(strcmp(name, "MPI_LONG_LONG_INT") == 0 && len == 17, "MPI_LONG_LONG: got %s (%d)", name, len);
    OK(MPI_Type_get_name(MPI_C_FLOAT_COMPLEX, name, &len));
    CHECK(strcmp(name, "MPI_C_COMPLEX") == 0 && len == 13, "MPI_C_FLOAT_COMPLEX: got %s (%d)", name, len);
    OK(MPI_Type_get_name(MPI_UNSIGNED_LONG_LONG, name, &len));
    CHECK(strcmp(name, "MPI_UNSIGNED_LONG_LONG") == 0, "MPI_UNSIGNED_LONG_LONG: got %s", name);
    OK(MPI_Type_set_name(MPI_LONG_LONG, "ll"));
    OK(MPI_Type_get_name(MPI_LONG_LONG_INT, name, &len));
    CHECK(strcmp(name, "ll") == 0, "renamed MPI_LONG_LONG_INT: got %s", name);
    OK(MPI_Type_set_name(MPI_LONG_LONG, "MPI_LONG_LONG_INT"));
    /* the name is no key: external32 still converts the pair's parts */
    float in[2] = {1.5f, -2.25f}, out[2] = {0, 0};
    char buf[16];
    MPI_Aint pos = 0, size = 0;
    OK(MPI_Pack_external_size("external32", 1, MPI_C_FLOAT_COMPLEX, &size));
    CHECK(size == 8, "external32 size of MPI_C_FLOAT_COMPLEX %ld", (long)size);
    OK(MPI_Pack_external("external32", in, 1, MPI_C_FLOAT_COMPLEX, buf, sizeof buf, &pos));
    CHECK(pos == 8 && (unsigned char)buf[0] == 0x3f && (unsigned char)buf[4] == 0xc0,
          "external32 of MPI_C_FLOAT_COMPLEX: pos %ld bytes %02x %02x", (long)pos, (unsigned char)buf[0],
          (unsigned char)buf[4]);
    pos = 0;
    OK(MPI_Unpack_external("external32", buf, 8, &pos, out, 1, MPI_C_FLOAT_COMPLEX));
    CHECK(out[0] == in[0] && out[1] == in[1], "external32 round trip %g %g", out[0], out[1]);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    emptyStruct();
    predefinedNames();
    zeroBlocks();
    synonymNames();
    printf("dtedge ok %d\n", rank);
    MPI_Finalize();
    return 0;
}
