/* stress: handle churn and lifetimes: thousands of communicators, types,
 * requests, keyvals; attributes outliving their keyvals; MPI_BOTTOM;
 * self-checking. */
#include "dt.h"

static int dels;
static int del_fn(MPI_Comm c, int k, void *v, void *x) {
    (void)c; (void)k; (void)x;
    dels += (int)(intptr_t)v;
    return MPI_SUCCESS;
}
static int tdels;
static int tdel_fn(MPI_Datatype t, int k, void *v, void *x) {
    (void)t; (void)k; (void)x;
    tdels += (int)(intptr_t)v;
    return MPI_SUCCESS;
}
static int tcopy_fn(MPI_Datatype t, int k, void *x, void *in, void *out, int *flag) {
    (void)t; (void)k; (void)x;
    *(void **)out = (void *)((intptr_t)in * 10);
    *flag = 1;
    return MPI_SUCCESS;
}

static void churn(void) {
    for (int i = 0; i < 300; i++) {
        MPI_Comm d;
        OK(MPI_Comm_dup(MPI_COMM_WORLD, &d));
        if (i % 50 == 0) {
            int s;
            OK(MPI_Allreduce(&i, &s, 1, MPI_INT, MPI_SUM, d));
            CHECK(s == i * size, "allreduce on dup %d", i);
        }
        OK(MPI_Comm_free(&d));
    }
    for (int i = 0; i < 5000; i++) {
        MPI_Datatype t;
        OK(MPI_Type_contiguous(i % 7 + 1, MPI_INT, &t));
        OK(MPI_Type_commit(&t));
        OK(MPI_Type_free(&t));
    }
    for (int i = 0; i < 3000; i++) {
        MPI_Request r;
        int x = i, y;
        OK(MPI_Irecv(&y, 1, MPI_INT, rank, 0, MPI_COMM_WORLD, &r));
        OK(MPI_Send(&x, 1, MPI_INT, rank, 0, MPI_COMM_WORLD));
        OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
        if (y != i) { CHECK(0, "self message %d: %d", i, y); break; }
    }
    for (int i = 0; i < 2000; i++) {
        MPI_Group g;
        OK(MPI_Comm_group(MPI_COMM_WORLD, &g));
        OK(MPI_Group_free(&g));
        MPI_Info in;
        OK(MPI_Info_create(&in));
        OK(MPI_Info_free(&in));
        int k;
        OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &k, NULL));
        OK(MPI_Comm_free_keyval(&k));
    }
    /* 200 outstanding requests to self, completed by Waitall. */
    enum { N = 200 };
    MPI_Request rq[2 * N];
    int in[N], out[N];
    for (int i = 0; i < N; i++) {
        out[i] = i * 3;
        OK(MPI_Irecv(&in[i], 1, MPI_INT, MPI_ANY_SOURCE, i, MPI_COMM_WORLD, &rq[i]));
    }
    for (int i = N - 1; i >= 0; i--) OK(MPI_Isend(&out[i], 1, MPI_INT, rank, i, MPI_COMM_WORLD, &rq[N + i]));
    OK(MPI_Waitall(2 * N, rq, MPI_STATUSES_IGNORE));
    for (int i = 0; i < N; i++) if (in[i] != i * 3) { CHECK(0, "outstanding %d: %d", i, in[i]); break; }
}

static void lifetimes(void) {
    /* An attribute whose keyval is freed keeps working until its
     * communicator is freed, which calls the delete function. */
    int k;
    dels = 0;
    OK(MPI_Comm_create_keyval(MPI_COMM_DUP_FN, del_fn, &k, NULL));
    MPI_Comm d, d2;
    OK(MPI_Comm_dup(MPI_COMM_WORLD, &d));
    OK(MPI_Comm_set_attr(d, k, (void *)5));
    int kk = k;
    OK(MPI_Comm_free_keyval(&k));
    CHECK(k == MPI_KEYVAL_INVALID, "keyval not invalidated");
    void *v;
    int flag;
    OK(MPI_Comm_get_attr(d, kk, &v, &flag));
    CHECK(flag && v == (void *)5, "attr after keyval free flag %d", flag);
    OK(MPI_Comm_dup(d, &d2));
    OK(MPI_Comm_get_attr(d2, kk, &v, &flag));
    CHECK(flag && v == (void *)5, "attr copied after keyval free flag %d", flag);
    OK(MPI_Comm_free(&d));
    OK(MPI_Comm_free(&d2));
    CHECK(dels == 10, "delete calls sum %d", dels);
    /* Type attributes. */
    int tk;
    tdels = 0;
    OK(MPI_Type_create_keyval(tcopy_fn, tdel_fn, &tk, NULL));
    MPI_Datatype t, t2;
    OK(MPI_Type_contiguous(2, MPI_INT, &t));
    OK(MPI_Type_set_attr(t, tk, (void *)3));
    OK(MPI_Type_dup(t, &t2));
    OK(MPI_Type_get_attr(t2, tk, &v, &flag));
    CHECK(flag && v == (void *)30, "type attr copy %p", v);
    OK(MPI_Type_free(&t));
    OK(MPI_Type_free(&t2));
    CHECK(tdels == 33, "type delete sum %d", tdels);
    OK(MPI_Type_free_keyval(&tk));
    /* A type freed while a request using it is pending still completes. */
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    int src[6] = {1, 2, 3, 4, 5, 6}, dst[6] = {0};
    MPI_Datatype vt;
    OK(MPI_Type_vector(3, 1, 2, MPI_INT, &vt));
    OK(MPI_Type_commit(&vt));
    MPI_Request r[2];
    OK(MPI_Irecv(dst, 1, vt, prev, 5, MPI_COMM_WORLD, &r[0]));
    OK(MPI_Isend(src, 1, vt, next, 5, MPI_COMM_WORLD, &r[1]));
    OK(MPI_Type_free(&vt));
    OK(MPI_Waitall(2, r, MPI_STATUSES_IGNORE));
    CHECK(dst[0] == 1 && dst[2] == 3 && dst[4] == 5 && dst[1] == 0, "freed-type transfer %d %d %d", dst[0], dst[2], dst[4]);
    /* A communicator freed with a pending request. */
    MPI_Comm c;
    OK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
    int x = rank, y = -1;
    OK(MPI_Irecv(&y, 1, MPI_INT, prev, 6, c, &r[0]));
    OK(MPI_Isend(&x, 1, MPI_INT, next, 6, c, &r[1]));
    OK(MPI_Comm_free(&c));
    OK(MPI_Waitall(2, r, MPI_STATUSES_IGNORE));
    CHECK(y == prev, "freed-comm transfer %d", y);
}

static void bottom(void) {
    /* A struct of absolute addresses used with MPI_BOTTOM. */
    int a = rank;
    double b = rank * 0.5;
    MPI_Aint ad[2];
    OK(MPI_Get_address(&a, &ad[0]));
    OK(MPI_Get_address(&b, &ad[1]));
    int bl[2] = {1, 1};
    MPI_Datatype ty[2] = {MPI_INT, MPI_DOUBLE}, t;
    OK(MPI_Type_create_struct(2, bl, ad, ty, &t));
    OK(MPI_Type_commit(&t));
    OK(MPI_Bcast(MPI_BOTTOM, 1, t, 0, MPI_COMM_WORLD));
    CHECK(a == 0 && b == 0.0, "bottom bcast %d %g", a, b);
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    a = rank; b = rank * 0.5;
    OK(MPI_Sendrecv_replace(MPI_BOTTOM, 1, t, next, 7, prev, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK(a == prev && b == prev * 0.5, "bottom sendrecv_replace %d %g", a, b);
    OK(MPI_Type_free(&t));
}

static void selfattr(void) {
    /* Attributes on MPI_COMM_SELF are deleted at the start of Finalize. */
    int k;
    OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, del_fn, &k, NULL));
    OK(MPI_Comm_set_attr(MPI_COMM_SELF, k, (void *)1000));
    dels = 0;
}

int main(int argc, char **argv) {
    start(&argc, &argv);
    churn();
    lifetimes();
    bottom();
    int all = 0;
    MPI_Allreduce(&errs, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    selfattr();
    MPI_Finalize();
    CHECK(dels == 1000, "MPI_COMM_SELF attribute not deleted at Finalize: %d", dels);
    if (errs == 0) printf("stress ok %d\n", rank);
    return all || errs;
}
