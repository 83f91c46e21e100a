/* pyext.c: a CPython extension module built with bcscc -shared, loaded the
 * way Python bindings such as mpi4py load their MPI module: Python dlopens
 * it (RTLD_LOCAL), the module is linked against libmpi_abi.so.1 through its
 * run path, it initializes MPI at import with MPI_THREAD_MULTIPLE, sets
 * MPI_ERRORS_RETURN and turns error codes into Python exceptions, releases
 * the interpreter lock around blocking calls, and finalizes MPI from
 * Py_AtExit. Driven by pyext_driver.py (TestPythonExtension). */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <mpi.h>

static PyObject *mpierr(int rc, const char *call) {
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0, cls = -1;
    MPI_Error_class(rc, &cls);
    MPI_Error_string(rc, msg, &len);
    PyErr_Format(PyExc_RuntimeError, "%s: class %d: %s", call, cls, msg);
    return NULL;
}

static void finalize_at_exit(void) {
    int init = 0, fin = 0;
    MPI_Initialized(&init);
    MPI_Finalized(&fin);
    if (init && !fin)
        MPI_Finalize();
}

static PyObject *py_rank(PyObject *self, PyObject *unused) {
    int r = -1;
    int rc = MPI_Comm_rank(MPI_COMM_WORLD, &r);
    return rc == MPI_SUCCESS ? PyLong_FromLong(r) : mpierr(rc, "MPI_Comm_rank");
}

static PyObject *py_size(PyObject *self, PyObject *unused) {
    int n = -1;
    int rc = MPI_Comm_size(MPI_COMM_WORLD, &n);
    return rc == MPI_SUCCESS ? PyLong_FromLong(n) : mpierr(rc, "MPI_Comm_size");
}

static PyObject *py_thread_level(PyObject *self, PyObject *unused) {
    int p = -1;
    MPI_Query_thread(&p);
    return PyLong_FromLong(p == MPI_THREAD_MULTIPLE ? 3 : p == MPI_THREAD_SERIALIZED ? 2
                           : p == MPI_THREAD_FUNNELED ? 1 : 0);
}

/* allsum(v): MPI_Allreduce of one long, the interpreter lock released. */
static PyObject *py_allsum(PyObject *self, PyObject *arg) {
    long v = PyLong_AsLong(arg), out = 0;
    int rc;
    if (v == -1 && PyErr_Occurred())
        return NULL;
    Py_BEGIN_ALLOW_THREADS
    rc = MPI_Allreduce(&v, &out, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    Py_END_ALLOW_THREADS
    return rc == MPI_SUCCESS ? PyLong_FromLong(out) : mpierr(rc, "MPI_Allreduce");
}

/* shift(b): send bytes b to the next rank, return what the previous sent. */
static PyObject *py_shift(PyObject *self, PyObject *arg) {
    char *buf;
    Py_ssize_t n;
    int r, size, rc;
    if (PyBytes_AsStringAndSize(arg, &buf, &n) < 0)
        return NULL;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    PyObject *out = PyBytes_FromStringAndSize(NULL, n);
    if (out == NULL)
        return NULL;
    char *dst = PyBytes_AS_STRING(out);
    Py_BEGIN_ALLOW_THREADS
    rc = MPI_Sendrecv(buf, (int)n, MPI_BYTE, (r + 1) % size, 7, dst, (int)n, MPI_BYTE,
                      (r + size - 1) % size, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    Py_END_ALLOW_THREADS
    if (rc != MPI_SUCCESS) {
        Py_DECREF(out);
        return mpierr(rc, "MPI_Sendrecv");
    }
    return out;
}

/* send_to(dest): an MPI_Send of one int to dest; a bad rank must come back
 * as an exception (MPI_ERRORS_RETURN), the job going on. */
static PyObject *py_send_to(PyObject *self, PyObject *arg) {
    int v = 1, rc;
    long dest = PyLong_AsLong(arg);
    if (dest == -1 && PyErr_Occurred())
        return NULL;
    rc = MPI_Send(&v, 1, MPI_INT, (int)dest, 0, MPI_COMM_WORLD);
    return rc == MPI_SUCCESS ? Py_NewRef(Py_None) : mpierr(rc, "MPI_Send");
}

/* psend(b, dest, tag): MPI_Send of bytes b, the interpreter lock released. */
static PyObject *py_psend(PyObject *self, PyObject *args) {
    const char *buf;
    Py_ssize_t n;
    int dest, tag, rc;
    if (!PyArg_ParseTuple(args, "y#ii", &buf, &n, &dest, &tag))
        return NULL;
    Py_BEGIN_ALLOW_THREADS
    rc = MPI_Send(buf, (int)n, MPI_BYTE, dest, tag, MPI_COMM_WORLD);
    Py_END_ALLOW_THREADS
    return rc == MPI_SUCCESS ? Py_NewRef(Py_None) : mpierr(rc, "MPI_Send");
}

/* precv(source, tag): a message of unknown size received as a pickle-based
 * binding receives it: MPI_Mprobe, MPI_Get_count, then MPI_Mrecv of that
 * message. Returns (bytes, source, tag). */
static PyObject *py_precv(PyObject *self, PyObject *args) {
    int source, tag, rc, count = -1;
    MPI_Message msg = MPI_MESSAGE_NULL;
    MPI_Status st;
    if (!PyArg_ParseTuple(args, "ii", &source, &tag))
        return NULL;
    Py_BEGIN_ALLOW_THREADS
    rc = MPI_Mprobe(source, tag, MPI_COMM_WORLD, &msg, &st);
    Py_END_ALLOW_THREADS
    if (rc != MPI_SUCCESS)
        return mpierr(rc, "MPI_Mprobe");
    rc = MPI_Get_count(&st, MPI_BYTE, &count);
    if (rc != MPI_SUCCESS)
        return mpierr(rc, "MPI_Get_count");
    PyObject *out = PyBytes_FromStringAndSize(NULL, count);
    if (out == NULL)
        return NULL;
    char *dst = PyBytes_AS_STRING(out);
    Py_BEGIN_ALLOW_THREADS
    rc = MPI_Mrecv(dst, count, MPI_BYTE, &msg, MPI_STATUS_IGNORE);
    Py_END_ALLOW_THREADS
    if (rc != MPI_SUCCESS) {
        Py_DECREF(out);
        return mpierr(rc, "MPI_Mrecv");
    }
    return Py_BuildValue("(Nii)", out, st.MPI_SOURCE, st.MPI_TAG);
}

static PyObject *py_any_source(PyObject *self, PyObject *unused) {
    return PyLong_FromLong(MPI_ANY_SOURCE);
}

static PyObject *py_err_rank(PyObject *self, PyObject *unused) {
    return PyLong_FromLong(MPI_ERR_RANK);
}

static PyMethodDef methods[] = {
    {"rank", py_rank, METH_NOARGS, NULL},
    {"size", py_size, METH_NOARGS, NULL},
    {"thread_level", py_thread_level, METH_NOARGS, NULL},
    {"allsum", py_allsum, METH_O, NULL},
    {"shift", py_shift, METH_O, NULL},
    {"send_to", py_send_to, METH_O, NULL},
    {"psend", py_psend, METH_VARARGS, NULL},
    {"precv", py_precv, METH_VARARGS, NULL},
    {"any_source", py_any_source, METH_NOARGS, NULL},
    {"err_rank", py_err_rank, METH_NOARGS, NULL},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "pyext", NULL, -1, methods};

PyMODINIT_FUNC PyInit_pyext(void) {
    int init = 0, provided = -1, rc;
    MPI_Initialized(&init);
    if (!init) {
        rc = MPI_Init_thread(NULL, NULL, MPI_THREAD_MULTIPLE, &provided);
        if (rc != MPI_SUCCESS)
            return mpierr(rc, "MPI_Init_thread");
    }
    rc = MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    if (rc != MPI_SUCCESS)
        return mpierr(rc, "MPI_Comm_set_errhandler");
    if (Py_AtExit(finalize_at_exit) < 0)
        return NULL;
    return PyModule_Create(&module);
}
