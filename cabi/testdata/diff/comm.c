/* comm: communicators, groups, attributes, error handlers, info and the
 * environment; self-checking on any number of ranks. */
#include "dt.h"

static int copies, deletes;

static int copy_fn(MPI_Comm c, int key, void *extra, void *in, void *out, int *flag) {
    (void)c; (void)key;
    copies++;
    CHECK(extra == (void *)&copies, "copy extra state %p", extra);
    *(void **)out = (void *)((intptr_t)in + 1);
    *flag = 1;
    return MPI_SUCCESS;
}

static int delete_fn(MPI_Comm c, int key, void *val, void *extra) {
    (void)c; (void)key; (void)val; (void)extra;
    deletes++;
    return MPI_SUCCESS;
}

static void dup_split(void) {
    MPI_Comm d, s, s2;
    int res;
    OK(MPI_Comm_dup(MPI_COMM_WORLD, &d));
    OK(MPI_Comm_compare(MPI_COMM_WORLD, d, &res));
    CHECK(res == MPI_CONGRUENT, "compare dup %d", res);
    OK(MPI_Comm_compare(d, d, &res));
    CHECK(res == MPI_IDENT, "compare self %d", res);
    OK(MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &s));
    OK(MPI_Comm_compare(MPI_COMM_WORLD, s, &res));
    CHECK(res == (size == 1 ? MPI_CONGRUENT : MPI_SIMILAR), "compare reversed %d", res);
    int r;
    MPI_Comm_rank(s, &r);
    CHECK(r == size - 1 - rank, "split rank %d", r);
    OK(MPI_Comm_split(MPI_COMM_WORLD, rank % 2 ? MPI_UNDEFINED : 1, 0, &s2));
    if (rank % 2) CHECK(s2 == MPI_COMM_NULL, "undefined color gave a communicator");
    else {
        int n;
        MPI_Comm_size(s2, &n);
        CHECK(n == (size + 1) / 2, "split size %d", n);
        MPI_Comm_rank(s2, &r);
        CHECK(r == rank / 2, "split rank %d", r);
        OK(MPI_Comm_compare(MPI_COMM_WORLD, s2, &res));
        CHECK(res == (size == 1 ? MPI_CONGRUENT : MPI_UNEQUAL), "compare subset %d", res);
        OK(MPI_Comm_free(&s2));
        CHECK(s2 == MPI_COMM_NULL, "comm free");
    }
    OK(MPI_Comm_free(&s));
    MPI_Comm t;
    OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &t));
    int tn;
    MPI_Comm_size(t, &tn);
    CHECK(tn >= 1 && tn <= size, "split_type size %d", tn);
    OK(MPI_Comm_free(&t));
    OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_UNDEFINED, rank, MPI_INFO_NULL, &t));
    CHECK(t == MPI_COMM_NULL, "split_type undefined");
    /* Idup. */
    MPI_Request rq;
    MPI_Comm id;
    OK(MPI_Comm_idup(d, &id, &rq));
    OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    OK(MPI_Comm_compare(d, id, &res));
    CHECK(res == MPI_CONGRUENT, "idup compare %d", res);
    int x = rank, y;
    OK(MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, id));
    CHECK(y == size * (size - 1) / 2, "idup allreduce");
    OK(MPI_Comm_free(&id));
    /* Create from a group of the even ranks. */
    MPI_Group wg, eg;
    OK(MPI_Comm_group(MPI_COMM_WORLD, &wg));
    int ranges[1][3] = {{0, size - 1, 2}};
    OK(MPI_Group_range_incl(wg, 1, ranges, &eg));
    MPI_Comm ec;
    OK(MPI_Comm_create(d, eg, &ec));
    if (rank % 2) CHECK(ec == MPI_COMM_NULL, "create gave odd rank a communicator");
    else {
        MPI_Comm_rank(ec, &r);
        CHECK(r == rank / 2, "create rank %d", r);
        OK(MPI_Comm_free(&ec));
    }
    OK(MPI_Group_free(&eg));
    OK(MPI_Group_free(&wg));
    /* Names. */
    char name[MPI_MAX_OBJECT_NAME];
    int len;
    OK(MPI_Comm_get_name(MPI_COMM_WORLD, name, &len));
    CHECK(strcmp(name, "MPI_COMM_WORLD") == 0 && len == 14, "world name %s %d", name, len);
    OK(MPI_Comm_get_name(MPI_COMM_SELF, name, &len));
    CHECK(strcmp(name, "MPI_COMM_SELF") == 0, "self name %s", name);
    OK(MPI_Comm_get_name(d, name, &len));
    CHECK(len == 0 && name[0] == 0, "dup name '%s' %d", name, len);
    OK(MPI_Comm_set_name(d, "my comm"));
    OK(MPI_Comm_get_name(d, name, &len));
    CHECK(strcmp(name, "my comm") == 0 && len == 7, "set name %s", name);
    int flag;
    OK(MPI_Comm_test_inter(d, &flag));
    CHECK(!flag, "test_inter %d", flag);
    OK(MPI_Comm_free(&d));
}

static void attributes(void) {
    int key, key2;
    copies = deletes = 0;
    OK(MPI_Comm_create_keyval(copy_fn, delete_fn, &key, &copies));
    OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &key2, NULL));
    MPI_Comm d;
    OK(MPI_Comm_dup(MPI_COMM_WORLD, &d));
    OK(MPI_Comm_set_attr(d, key, (void *)100));
    OK(MPI_Comm_set_attr(d, key2, (void *)200));
    void *v;
    int flag;
    OK(MPI_Comm_get_attr(d, key, &v, &flag));
    CHECK(flag && v == (void *)100, "get attr %p", v);
    OK(MPI_Comm_set_attr(d, key, (void *)101));
    CHECK(deletes == 1, "replace did not delete: %d", deletes);
    MPI_Comm d2;
    OK(MPI_Comm_dup(d, &d2));
    CHECK(copies == 1, "copies %d", copies);
    OK(MPI_Comm_get_attr(d2, key, &v, &flag));
    CHECK(flag && v == (void *)102, "copied attr %p", v);
    OK(MPI_Comm_get_attr(d2, key2, &v, &flag));
    CHECK(!flag, "null copy fn copied");
    OK(MPI_Comm_delete_attr(d2, key));
    CHECK(deletes == 2, "delete_attr deletes %d", deletes);
    OK(MPI_Comm_get_attr(d2, key, &v, &flag));
    CHECK(!flag, "deleted attr still there");
    OK(MPI_Comm_free(&d));
    CHECK(deletes == 3, "comm free deletes %d", deletes);
    OK(MPI_Comm_free(&d2));
    OK(MPI_Comm_free_keyval(&key));
    CHECK(key == MPI_KEYVAL_INVALID, "free keyval");
    OK(MPI_Comm_free_keyval(&key2));
    /* Predefined attributes. */
    int *p;
    OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &p, &flag));
    CHECK(flag && *p >= 32767, "tag ub");
    OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_WTIME_IS_GLOBAL, &p, &flag));
    CHECK(!flag || *p == 0 || *p == 1, "wtime global");
    OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &p, &flag));
    CHECK(!flag || *p == 0, "appnum");
    OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_UNIVERSE_SIZE, &p, &flag));
    CHECK(!flag || *p >= 1, "universe size %d", flag ? *p : -1);
    OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_IO, &p, &flag));
    CHECK(flag, "MPI_IO attribute not set");
    OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_HOST, &p, &flag));
    /* Deprecated forms. */
    int k3;
    OK(MPI_Keyval_create(MPI_NULL_COPY_FN, MPI_NULL_DELETE_FN, &k3, NULL));
    OK(MPI_Attr_put(MPI_COMM_WORLD, k3, (void *)7));
    OK(MPI_Attr_get(MPI_COMM_WORLD, k3, &v, &flag));
    CHECK(flag && v == (void *)7, "attr_get");
    OK(MPI_Attr_delete(MPI_COMM_WORLD, k3));
    OK(MPI_Keyval_free(&k3));
    /* MPI_COMM_DUP_FN. */
    int k4;
    OK(MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, &k4, NULL));
    OK(MPI_Comm_set_attr(MPI_COMM_WORLD, k4, (void *)55));
    OK(MPI_Comm_dup(MPI_COMM_WORLD, &d));
    OK(MPI_Comm_get_attr(d, k4, &v, &flag));
    CHECK(flag && v == (void *)55, "dup fn copy %p", v);
    OK(MPI_Comm_free(&d));
    OK(MPI_Comm_delete_attr(MPI_COMM_WORLD, k4));
    OK(MPI_Comm_free_keyval(&k4));
}

static void groups(void) {
    MPI_Group w, a, b, u, in, df, e;
    OK(MPI_Comm_group(MPI_COMM_WORLD, &w));
    int n, r, res;
    OK(MPI_Group_size(w, &n));
    OK(MPI_Group_rank(w, &r));
    CHECK(n == size && r == rank, "world group %d %d", n, r);
    int odd[8], no = 0;
    for (int q = 1; q < size; q += 2) odd[no++] = q;
    OK(MPI_Group_incl(w, no, odd, &a));
    OK(MPI_Group_excl(w, no, odd, &b));
    OK(MPI_Group_rank(a, &r));
    CHECK(r == (rank % 2 ? rank / 2 : MPI_UNDEFINED), "incl rank %d", r);
    OK(MPI_Group_size(b, &n));
    CHECK(n == size - no, "excl size %d", n);
    OK(MPI_Group_union(a, b, &u));
    OK(MPI_Group_size(u, &n));
    CHECK(n == size, "union size %d", n);
    OK(MPI_Group_compare(u, w, &res));
    CHECK(res == (size <= 2 && no == 0 ? MPI_IDENT : (size == 1 ? MPI_IDENT : MPI_SIMILAR)) || (size == 2 && res == MPI_SIMILAR), "union compare %d", res);
    OK(MPI_Group_intersection(a, w, &in));
    OK(MPI_Group_compare(in, a, &res));
    CHECK(res == MPI_IDENT, "intersection compare %d", res);
    OK(MPI_Group_difference(w, a, &df));
    OK(MPI_Group_compare(df, b, &res));
    CHECK(res == MPI_IDENT, "difference compare %d", res);
    OK(MPI_Group_free(&in));
    OK(MPI_Group_intersection(a, b, &in));
    CHECK(in == MPI_GROUP_EMPTY, "empty intersection is not MPI_GROUP_EMPTY");
    OK(MPI_Group_size(in, &n));
    CHECK(n == 0, "empty size %d", n);
    if (in != MPI_GROUP_EMPTY) OK(MPI_Group_free(&in));
    /* translate_ranks */
    int from[8], to[8];
    for (int q = 0; q < size; q++) from[q] = q;
    OK(MPI_Group_translate_ranks(w, size, from, a, to));
    for (int q = 0; q < size; q++) CHECK(to[q] == (q % 2 ? q / 2 : MPI_UNDEFINED), "translate %d -> %d", q, to[q]);
    from[0] = MPI_PROC_NULL;
    OK(MPI_Group_translate_ranks(w, 1, from, a, to));
    CHECK(no == 0 || to[0] == MPI_PROC_NULL, "translate proc null %d", to[0]);
    /* range_excl and reversed range_incl. */
    int rg[1][3] = {{size - 1, 0, -1}};
    OK(MPI_Group_range_incl(w, 1, rg, &e));
    OK(MPI_Group_rank(e, &r));
    CHECK(r == size - 1 - rank, "reversed range rank %d", r);
    OK(MPI_Group_compare(e, w, &res));
    CHECK(res == (size == 1 ? MPI_IDENT : MPI_SIMILAR), "reversed compare %d", res);
    OK(MPI_Group_free(&e));
    int rx[1][3] = {{0, size - 1, 3}};
    OK(MPI_Group_range_excl(w, 1, rx, &e));
    OK(MPI_Group_size(e, &n));
    CHECK(n == size - (size + 2) / 3, "range_excl size %d", n);
    OK(MPI_Group_free(&e));
    OK(MPI_Group_incl(w, 0, NULL, &e));
    CHECK(e == MPI_GROUP_EMPTY, "incl of none is not MPI_GROUP_EMPTY");
    OK(MPI_Group_compare(MPI_GROUP_EMPTY, MPI_GROUP_EMPTY, &res));
    CHECK(res == MPI_IDENT, "empty compare %d", res);
    OK(MPI_Group_free(&a));
    OK(MPI_Group_free(&b));
    OK(MPI_Group_free(&u));
    OK(MPI_Group_free(&df));
    OK(MPI_Group_free(&w));
    CHECK(w == MPI_GROUP_NULL, "group free");
    /* Group of MPI_COMM_SELF. */
    OK(MPI_Comm_group(MPI_COMM_SELF, &w));
    OK(MPI_Group_size(w, &n));
    CHECK(n == 1, "self group size");
    OK(MPI_Group_free(&w));
}

static int handler_calls, handler_code;
static void handler(MPI_Comm *c, int *code, ...) {
    (void)c;
    handler_calls++;
    handler_code = *code;
}

static void errors(void) {
    MPI_Comm d;
    OK(MPI_Comm_dup(MPI_COMM_WORLD, &d));
    MPI_Errhandler eh, got;
    OK(MPI_Comm_get_errhandler(d, &got));
    CHECK(got == MPI_ERRORS_ARE_FATAL, "default errhandler");
    OK(MPI_Comm_create_errhandler(handler, &eh));
    OK(MPI_Comm_set_errhandler(d, eh));
    int x = 0;
    int rc = MPI_Send(&x, 1, MPI_INT, size + 5, 0, d);
    CHECK(handler_calls == 1, "handler calls %d", handler_calls);
    int cls;
    OK(MPI_Error_class(handler_code, &cls));
    CHECK(cls == MPI_ERR_RANK && rc == handler_code, "handler code %d rc %d", handler_code, rc);
    OK(MPI_Comm_call_errhandler(d, MPI_ERR_OTHER));
    CHECK(handler_calls == 2 && handler_code == MPI_ERR_OTHER, "call_errhandler");
    /* The dup inherits the handler. */
    MPI_Comm d2;
    OK(MPI_Comm_dup(d, &d2));
    OK(MPI_Comm_get_errhandler(d2, &got));
    CHECK(got == eh, "dup errhandler");
    OK(MPI_Errhandler_free(&got));
    OK(MPI_Errhandler_free(&eh));
    CHECK(eh == MPI_ERRHANDLER_NULL, "errhandler free");
    OK(MPI_Comm_free(&d2));
    OK(MPI_Comm_set_errhandler(d, MPI_ERRORS_RETURN));
    rc = MPI_Bcast(&x, 1, MPI_INT, size, d);
    OK(MPI_Error_class(rc, &cls));
    CHECK(cls == MPI_ERR_ROOT, "bad root class %d", cls);
    rc = MPI_Allreduce(&x, &x, 1, MPI_INT, MPI_OP_NULL, d);
    OK(MPI_Error_class(rc, &cls));
    CHECK(cls == MPI_ERR_OP || cls == MPI_ERR_BUFFER, "null op class %d", cls);
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    rc = MPI_Comm_rank(MPI_COMM_NULL, &x);
    CHECK(rc != MPI_SUCCESS, "rank of null comm succeeded");
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
    OK(MPI_Comm_free(&d));
    /* Error strings and classes. */
    char s[MPI_MAX_ERROR_STRING];
    int len;
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    for (int c = MPI_SUCCESS; c <= MPI_ERR_LASTCODE && c < 80; c++) {
        int k;
        if (MPI_Error_class(c, &k) != MPI_SUCCESS) continue;
        OK(MPI_Error_string(c, s, &len));
        CHECK(len == (int)strlen(s) && len > 0 && len < MPI_MAX_ERROR_STRING, "error string %d len %d", c, len);
    }
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
    OK(MPI_Error_class(MPI_ERR_TRUNCATE, &cls));
    CHECK(cls == MPI_ERR_TRUNCATE, "class of class");
    /* User classes and codes. */
    int nc, ncode, ncode2, *last, flag;
    OK(MPI_Add_error_class(&nc));
    OK(MPI_Add_error_code(nc, &ncode));
    OK(MPI_Add_error_code(nc, &ncode2));
    CHECK(nc > MPI_ERR_LASTCODE && ncode != nc && ncode2 != ncode, "new class %d codes %d %d", nc, ncode, ncode2);
    OK(MPI_Error_class(ncode2, &cls));
    CHECK(cls == nc, "new code class %d", cls);
    OK(MPI_Add_error_string(ncode, "my error"));
    OK(MPI_Error_string(ncode, s, &len));
    CHECK(strcmp(s, "my error") == 0 && len == 8, "user string %s", s);
    /* MPICH 4.0 does not update MPI_LASTUSEDCODE, and lets a predefined
     * code's string be changed. */
    OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &last, &flag));
    CHECK(flag && *last >= ncode2 && *last >= nc, "lastusedcode %d", flag ? *last : -1);
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    rc = MPI_Add_error_string(MPI_ERR_RANK, "no");
    CHECK(rc != MPI_SUCCESS, "changed a predefined error string");
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
}

static void info(void) {
    MPI_Info i, j;
    OK(MPI_Info_create(&i));
    OK(MPI_Info_set(i, "a", "1"));
    OK(MPI_Info_set(i, "bb", "two"));
    OK(MPI_Info_set(i, "a", "one"));
    int n, flag, len;
    OK(MPI_Info_get_nkeys(i, &n));
    CHECK(n == 2, "nkeys %d", n);
    char k[MPI_MAX_INFO_KEY], v[MPI_MAX_INFO_VAL];
    OK(MPI_Info_get_nthkey(i, 0, k));
    CHECK(strcmp(k, "a") == 0, "nthkey 0 %s", k);
    OK(MPI_Info_get_nthkey(i, 1, k));
    CHECK(strcmp(k, "bb") == 0, "nthkey 1 %s", k);
    OK(MPI_Info_get(i, "a", MPI_MAX_INFO_VAL - 1, v, &flag));
    CHECK(flag && strcmp(v, "one") == 0, "get a %s", v);
    OK(MPI_Info_get_valuelen(i, "bb", &len, &flag));
    CHECK(flag && len == 3, "valuelen %d", len);
    OK(MPI_Info_get(i, "zz", MPI_MAX_INFO_VAL - 1, v, &flag));
    CHECK(!flag, "missing key found");
#if MPI_VERSION >= 4
    int buflen = 2;
    OK(MPI_Info_get_string(i, "bb", &buflen, v, &flag));
    CHECK(flag && buflen == 4 && strcmp(v, "t") == 0, "get_string buflen %d v %s", buflen, v);
#endif
    OK(MPI_Info_dup(i, &j));
    OK(MPI_Info_delete(i, "a"));
    OK(MPI_Info_get_nkeys(i, &n));
    CHECK(n == 1, "after delete %d", n);
    OK(MPI_Info_get_nkeys(j, &n));
    CHECK(n == 2, "dup nkeys %d", n);
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    int rc = MPI_Info_delete(i, "a"), cls;
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_INFO_NOKEY, "delete missing class %d", cls);
    rc = MPI_Info_get_nthkey(i, 5, k);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_ARG, "nthkey out of range class %d", cls);
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
    OK(MPI_Info_free(&i));
    OK(MPI_Info_free(&j));
    CHECK(i == MPI_INFO_NULL, "info free");
    OK(MPI_Info_get_nkeys(MPI_INFO_ENV, &n));
    CHECK(n >= 0, "env nkeys");
}

static void environment(void) {
    int v, sv, len, flag;
    OK(MPI_Get_version(&v, &sv));
    CHECK(v >= 3, "version %d.%d", v, sv);
    char lib[MPI_MAX_LIBRARY_VERSION_STRING], name[MPI_MAX_PROCESSOR_NAME];
    OK(MPI_Get_library_version(lib, &len));
    CHECK(len > 0 && len == (int)strlen(lib), "library version len %d", len);
    OK(MPI_Get_processor_name(name, &len));
    CHECK(len > 0 && len == (int)strlen(name), "processor name len %d", len);
    double t0 = MPI_Wtime();
    CHECK(MPI_Wtick() > 0 && MPI_Wtick() < 1, "wtick %g", MPI_Wtick());
    CHECK(MPI_Wtime() >= t0, "wtime");
    OK(MPI_Initialized(&flag));
    CHECK(flag, "initialized");
    OK(MPI_Is_thread_main(&flag));
    CHECK(flag, "is_thread_main");
    int lvl;
    OK(MPI_Query_thread(&lvl));
    CHECK(lvl >= MPI_THREAD_SINGLE && lvl <= MPI_THREAD_MULTIPLE, "query thread %d", lvl);
    void *mem;
    OK(MPI_Alloc_mem(100, MPI_INFO_NULL, &mem));
    memset(mem, 1, 100);
    OK(MPI_Free_mem(mem));
    MPI_Aint a1, a2;
    int arr[4];
    OK(MPI_Get_address(&arr[0], &a1));
    OK(MPI_Get_address(&arr[3], &a2));
    CHECK(MPI_Aint_diff(a2, a1) == 3 * sizeof(int), "aint diff");
    CHECK(MPI_Aint_add(a1, 8) == a1 + 8, "aint add");
#ifndef MPI_ABI_VERSION /* the standard ABI has X_toint/X_fromint instead */
    /* f2c/c2f round trips. */
    MPI_Fint f = MPI_Comm_c2f(MPI_COMM_WORLD);
    CHECK(MPI_Comm_f2c(f) == MPI_COMM_WORLD, "comm c2f");
    f = MPI_Type_c2f(MPI_DOUBLE);
    CHECK(MPI_Type_f2c(f) == MPI_DOUBLE, "type c2f");
    CHECK(MPI_Op_f2c(MPI_Op_c2f(MPI_SUM)) == MPI_SUM, "op c2f");
    MPI_Comm d;
    OK(MPI_Comm_dup(MPI_COMM_WORLD, &d));
    CHECK(MPI_Comm_f2c(MPI_Comm_c2f(d)) == d, "dup c2f");
    OK(MPI_Comm_free(&d));
    CHECK(MPI_Request_f2c(MPI_Request_c2f(MPI_REQUEST_NULL)) == MPI_REQUEST_NULL, "request null c2f");
#else
    CHECK(MPI_Comm_fromint(MPI_Comm_toint(MPI_COMM_WORLD)) == MPI_COMM_WORLD, "comm toint");
    CHECK(MPI_Type_fromint(MPI_Type_toint(MPI_DOUBLE)) == MPI_DOUBLE, "type toint");
    CHECK(MPI_Op_fromint(MPI_Op_toint(MPI_SUM)) == MPI_SUM, "op toint");
    MPI_Comm d;
    OK(MPI_Comm_dup(MPI_COMM_WORLD, &d));
    CHECK(MPI_Comm_fromint(MPI_Comm_toint(d)) == d, "dup toint");
    OK(MPI_Comm_free(&d));
    CHECK(MPI_Request_fromint(MPI_Request_toint(MPI_REQUEST_NULL)) == MPI_REQUEST_NULL, "request null toint");
#endif
}

int main(int argc, char **argv) {
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(provided >= MPI_THREAD_SINGLE && provided <= MPI_THREAD_SERIALIZED, "provided %d", provided);
    int q;
    OK(MPI_Query_thread(&q));
    CHECK(q == provided, "query %d provided %d", q, provided);
    dup_split();
    attributes();
    groups();
    errors();
    info();
    environment();
    return finish("comm");
}
