/* dtvector: vectors and hvectors of very many blocks are built and
 * committed in time independent of their count (each used to be walked
 * block by block: a vector of 2^36 blocks never finished), their scalars
 * are exact, and the strided layout that replaced the walk packs the same
 * bytes as the definition. Prints "dtvector ok <rank>" on success. */
#include <mpi.h>
#include <stdio.h>
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

/* huge: scalars of vectors too large to walk. */
static void huge(void) {
    MPI_Datatype quad, v, hv, r;
    MPI_Count n = (MPI_Count)1 << 36, size, lb, ext, tlb, text;
    OK(MPI_Type_contiguous(4, MPI_INT, &quad));
    OK(MPI_Type_vector_c(n, 1, 3, quad, &v));
    OK(MPI_Type_commit(&v));
    OK(MPI_Type_size_c(v, &size));
    CHECK(size == 16 * n, "size %lld, want %lld", (long long)size, (long long)(16 * n));
    OK(MPI_Type_get_extent_c(v, &lb, &ext));
    CHECK(lb == 0 && ext == 48 * (n - 1) + 16, "lb %lld extent %lld", (long long)lb, (long long)ext);
    OK(MPI_Type_get_true_extent_c(v, &tlb, &text));
    CHECK(tlb == 0 && text == ext, "true lb %lld extent %lld", (long long)tlb, (long long)text);
    int isize;
    OK(MPI_Type_size(v, &isize));
    CHECK(isize == MPI_UNDEFINED, "MPI_Type_size %d, want MPI_UNDEFINED", isize);

    /* negative stride: the first block is the highest */
    OK(MPI_Type_create_hvector_c(n, 2, -64, MPI_DOUBLE, &hv));
    OK(MPI_Type_commit(&hv));
    OK(MPI_Type_get_extent_c(hv, &lb, &ext));
    CHECK(lb == -64 * (n - 1) && ext == 64 * (n - 1) + 16, "hvector lb %lld extent %lld", (long long)lb, (long long)ext);
    OK(MPI_Type_size_c(hv, &size));
    CHECK(size == 16 * n, "hvector size %lld", (long long)size);

    /* resized huge vector, as a program would shape a column */
    OK(MPI_Type_create_resized_c(v, 0, 16, &r));
    OK(MPI_Type_commit(&r));
    MPI_Count pack;
    OK(MPI_Pack_size_c(2, r, MPI_COMM_WORLD, &pack));
    CHECK(pack >= 32 * n, "pack size %lld", (long long)pack);
    MPI_Type_free(&r);
    MPI_Type_free(&hv);
    MPI_Type_free(&v);
    MPI_Type_free(&quad);
}

/* layout: the strided layout packs what the definition says, for block
 * types that are one run, several runs, and padded. */
static void layout(void) {
    int src[400], out[400], back[400];
    for (int i = 0; i < 400; i++)
        src[i] = i + 1;
    struct {
        const char *what;
        int count, bl, stride; /* in ints; stride < 0 runs backwards */
        int inner;             /* 0: int blocks; 1: blocks of vector(2,1,2) */
    } cases[] = {
        {"vector 7x2 stride 5", 7, 2, 5, 0},
        {"vector 9x1 stride 1 (contiguous)", 9, 1, 1, 0},
        {"vector 6x3 stride -4", 6, 3, -4, 0},
        {"vector 5x2 stride 0 (repeats)", 5, 2, 0, 0},
        {"vector 4x2 of vector(2,1,2) stride 9", 4, 2, 9, 1},
    };
    for (unsigned c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        MPI_Datatype in = MPI_INT, t, h;
        int inner_ext = 1; /* in ints */
        if (cases[c].inner) {
            OK(MPI_Type_vector(2, 1, 2, MPI_INT, &in));
            inner_ext = 3;
        }
        OK(MPI_Type_vector(cases[c].count, cases[c].bl, cases[c].stride, in, &t));
        OK(MPI_Type_commit(&t));
        OK(MPI_Type_create_hvector(cases[c].count, cases[c].bl, (MPI_Aint)cases[c].stride * inner_ext * 4, in, &h));
        OK(MPI_Type_commit(&h));
        /* expected packed order, from the definition */
        int want[400], nw = 0, base = 200;
        for (int b = 0; b < cases[c].count; b++)
            for (int k = 0; k < cases[c].bl; k++) {
                int at = base + (b * cases[c].stride + k) * inner_ext;
                if (cases[c].inner) {
                    want[nw++] = src[at];
                    want[nw++] = src[at + 2];
                } else {
                    want[nw++] = src[at];
                }
            }
        MPI_Datatype both[2] = {t, h};
        for (int w = 0; w < 2; w++) {
            int pos = 0, size;
            OK(MPI_Type_size(both[w], &size));
            CHECK(size == nw * 4, "%s: size %d, want %d", cases[c].what, size, nw * 4);
            memset(out, 0, sizeof out);
            OK(MPI_Pack(src + base, 1, both[w], out, sizeof out, &pos, MPI_COMM_WORLD));
            CHECK(pos == nw * 4, "%s: packed %d bytes, want %d", cases[c].what, pos, nw * 4);
            for (int i = 0; i < nw; i++)
                CHECK(out[i] == want[i], "%s (%s): packed[%d] = %d, want %d", cases[c].what, w ? "hvector" : "vector", i, out[i], want[i]);
            /* unpack into a zeroed buffer puts each value back where it was */
            if (cases[c].stride != 0) {
                memset(back, 0, sizeof back);
                pos = 0;
                OK(MPI_Unpack(out, nw * 4, &pos, back + base, 1, both[w], MPI_COMM_WORLD));
                for (int i = 0; i < 400; i++)
                    CHECK(back[i] == 0 || back[i] == src[i], "%s: unpacked [%d] = %d", cases[c].what, i, back[i]);
            }
        }
        MPI_Type_free(&t);
        MPI_Type_free(&h);
        if (cases[c].inner)
            MPI_Type_free(&in);
    }
}

/* sendrecv: a strided vector moves between ranks. */
static void sendrecv(void) {
    int size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    double a[300], b[300];
    MPI_Datatype col;
    OK(MPI_Type_vector(100, 1, 3, MPI_DOUBLE, &col));
    OK(MPI_Type_commit(&col));
    for (int i = 0; i < 300; i++) {
        a[i] = rank * 1000 + i;
        b[i] = -1;
    }
    int to = (rank + 1) % size, from = (rank + size - 1) % size;
    OK(MPI_Sendrecv(a, 1, col, to, 0, b, 1, col, from, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    for (int i = 0; i < 300; i++)
        CHECK(b[i] == (i % 3 == 0 ? from * 1000 + i : -1), "b[%d] = %g", i, b[i]);
    MPI_Type_free(&col);
}

/* A vector of strided blocks whose next block continues the stride (an
 * hvector of 2^28 vectors of 2 ints at stride 2): commit is one run, not a
 * walk over the count; a short one packs every other int. */
static void nested(void) {
    MPI_Datatype in, big, out;
    OK(MPI_Type_vector(2, 1, 2, MPI_INT, &in));
    OK(MPI_Type_create_hvector_c((MPI_Count)1 << 28, 1, 16, in, &big));
    OK(MPI_Type_commit(&big));
    MPI_Count size;
    OK(MPI_Type_size_c(big, &size));
    CHECK(size == (MPI_Count)8 << 28, "nested size %lld", (long long)size);
    OK(MPI_Type_create_hvector(3, 1, 16, in, &out));
    OK(MPI_Type_commit(&out));
    int src[12], packed[6], pos = 0;
    for (int i = 0; i < 12; i++)
        src[i] = i;
    OK(MPI_Pack(src, 1, out, packed, sizeof packed, &pos, MPI_COMM_SELF));
    CHECK(pos == 24, "nested: packed %d bytes, want 24", pos);
    for (int i = 0; i < 6; i++)
        CHECK(packed[i] == 2 * i, "nested: packed[%d] = %d, want %d", i, packed[i], 2 * i);
    MPI_Type_free(&out);
    MPI_Type_free(&big);
    MPI_Type_free(&in);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    huge();
    layout();
    nested();
    sendrecv();
    printf("dtvector ok %d\n", rank);
    MPI_Finalize();
    return 0;
}
