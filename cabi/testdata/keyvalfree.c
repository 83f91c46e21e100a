/* keyvalfree: a keyval freed while attributes still use it (the standard:
 * "it is not erroneous to free an attribute key that is in use, because the
 * actual free does not transpire until after all references ... have been
 * freed") and a keyval freed twice (erroneous: the second free names a key
 * the program already gave up). For communicator, datatype and window
 * keyvals: the delete callback frees the keyval it is called with (the
 * first free, which succeeds and leaves the other object's attribute to be
 * deleted later); the program's own free of the same value afterwards is
 * MPI_ERR_KEYVAL, and so is the callback's when the last attribute goes;
 * the callback runs once per attribute. MPICH ignores the second and later
 * frees (its attr/keyval_double_free* expect that); Open MPI reports errors
 * too (MPI_ERR_OTHER). Prints "keyvalfree ok <rank>". */
#include <mpi.h>
#include <stdio.h>

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
#define OK(call) CHECK((call) == MPI_SUCCESS, "%s failed", #call)

static int cls(int rc) {
    int c;
    MPI_Error_class(rc, &c);
    return c;
}

/* The callbacks record the class each of their frees got. */
static int deletes, frees[4];

static int comm_del(MPI_Comm c, int key, void *v, void *extra) {
    frees[deletes++] = cls(MPI_Comm_free_keyval(&key));
    return MPI_SUCCESS;
}
static int type_del(MPI_Datatype t, int key, void *v, void *extra) {
    frees[deletes++] = cls(MPI_Type_free_keyval(&key));
    return MPI_SUCCESS;
}
static int win_del(MPI_Win w, int key, void *v, void *extra) {
    frees[deletes++] = cls(MPI_Win_free_keyval(&key));
    return MPI_SUCCESS;
}

static void check_frees(const char *what, int again) {
    CHECK(deletes == 2, "%s: %d deletes, want 2", what, deletes);
    CHECK(frees[0] == MPI_SUCCESS, "%s: the first free (in use) got class %d", what, frees[0]);
    CHECK(again == MPI_ERR_KEYVAL, "%s: the program's second free got class %d, want MPI_ERR_KEYVAL", what, again);
    CHECK(frees[1] == MPI_ERR_KEYVAL, "%s: the last callback's free got class %d, want MPI_ERR_KEYVAL", what, frees[1]);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);

    int key, copy;
    MPI_Comm a, b;
    deletes = 0;
    OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, comm_del, &key, NULL));
    copy = key;
    OK(MPI_Comm_dup(MPI_COMM_SELF, &a));
    OK(MPI_Comm_dup(MPI_COMM_SELF, &b));
    OK(MPI_Comm_set_attr(a, key, NULL));
    OK(MPI_Comm_set_attr(b, key, NULL));
    OK(MPI_Comm_free(&a));
    CHECK(deletes == 1, "comm: %d deletes after the first free", deletes);
    int again = cls(MPI_Comm_free_keyval(&copy));
    OK(MPI_Comm_free(&b));
    check_frees("comm", again);

    MPI_Datatype t, u;
    deletes = 0;
    OK(MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, type_del, &key, NULL));
    copy = key;
    OK(MPI_Type_dup(MPI_INT, &t));
    OK(MPI_Type_dup(MPI_INT, &u));
    OK(MPI_Type_set_attr(t, key, NULL));
    OK(MPI_Type_set_attr(u, key, NULL));
    OK(MPI_Type_free(&t));
    again = cls(MPI_Type_free_keyval(&copy));
    OK(MPI_Type_free(&u));
    check_frees("type", again);

    MPI_Win w, v;
    int buf[2];
    deletes = 0;
    OK(MPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, win_del, &key, NULL));
    copy = key;
    OK(MPI_Win_create(&buf[0], sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_SELF, &w));
    OK(MPI_Win_create(&buf[1], sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_SELF, &v));
    MPI_Win_set_errhandler(w, MPI_ERRORS_RETURN);
    MPI_Win_set_errhandler(v, MPI_ERRORS_RETURN);
    OK(MPI_Win_set_attr(w, key, NULL));
    OK(MPI_Win_set_attr(v, key, NULL));
    OK(MPI_Win_free(&w));
    again = cls(MPI_Win_free_keyval(&copy));
    OK(MPI_Win_free(&v));
    check_frees("win", again);

    MPI_Finalize();
    printf("keyvalfree ok %d\n", rank);
    return 0;
}
