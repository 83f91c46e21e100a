// The C half of libmpi_abi: what cgo cannot do from Go. Every PMPI_X is
// defined here and MPI_X is a weak alias of it, so a profiling library can
// define MPI_X and reach the implementation through PMPI_X. Each PMPI_X
// checks the fork guard, serves the cheap queries itself (world rank and
// size, Wtime, datatype sizes and names, Get_count, version strings) and
// hands everything else to the Go exports (bcs_*) with handles as integers.

#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "shim.h"
#include "_cgo_export.h"

int bcs_initialized, bcs_finalized, bcs_world_rank, bcs_world_size = 1;
int bcs_thread_level;
static pthread_t bcs_main_thread;
static volatile int bcs_forked;
static struct timespec bcs_t0;

// The predefined datatypes, indexed by handle - 0x200. A handle with two
// names (MPI_LONG_LONG_INT = MPI_LONG_LONG, MPI_C_COMPLEX = MPI_C_FLOAT_COMPLEX)
// is named as MPICH and Open MPI name it, the older name.
struct bcs_type bcs_types[BCS_NTYPES] = {
#define T(h, n, s, e, k) [(h) - 0x200] = {n, s, e, k}
    T(0x201, "MPI_AINT", 8, 8, BCS_I64), T(0x202, "MPI_COUNT", 8, 8, BCS_I64),
    T(0x203, "MPI_OFFSET", 8, 8, BCS_I64), T(0x207, "MPI_PACKED", 1, 1, BCS_U8),
    T(0x208, "MPI_SHORT", 2, 2, BCS_I16), T(0x209, "MPI_INT", 4, 4, BCS_I32),
    T(0x20a, "MPI_LONG", 8, 8, BCS_I64), T(0x20b, "MPI_LONG_LONG_INT", 8, 8, BCS_I64),
    T(0x20c, "MPI_UNSIGNED_SHORT", 2, 2, BCS_U16), T(0x20d, "MPI_UNSIGNED", 4, 4, BCS_U32),
    T(0x20e, "MPI_UNSIGNED_LONG", 8, 8, BCS_U64), T(0x20f, "MPI_UNSIGNED_LONG_LONG", 8, 8, BCS_U64),
    T(0x210, "MPI_FLOAT", 4, 4, BCS_F32), T(0x212, "MPI_C_COMPLEX", 8, 8, BCS_NONE),
    T(0x213, "MPI_CXX_FLOAT_COMPLEX", 8, 8, BCS_NONE), T(0x214, "MPI_DOUBLE", 8, 8, BCS_F64),
    T(0x216, "MPI_C_DOUBLE_COMPLEX", 16, 16, BCS_NONE), T(0x217, "MPI_CXX_DOUBLE_COMPLEX", 16, 16, BCS_NONE),
    T(0x218, "MPI_LOGICAL", 4, 4, BCS_I32), T(0x219, "MPI_INTEGER", 4, 4, BCS_I32),
    T(0x21a, "MPI_REAL", 4, 4, BCS_F32), T(0x21b, "MPI_COMPLEX", 8, 8, BCS_NONE),
    T(0x21c, "MPI_DOUBLE_PRECISION", 8, 8, BCS_F64), T(0x21d, "MPI_DOUBLE_COMPLEX", 16, 16, BCS_NONE),
    T(0x21e, "MPI_CHARACTER", 1, 1, BCS_U8), T(0x220, "MPI_LONG_DOUBLE", 16, 16, BCS_NONE),
    T(0x224, "MPI_C_LONG_DOUBLE_COMPLEX", 32, 32, BCS_NONE),
    T(0x225, "MPI_CXX_LONG_DOUBLE_COMPLEX", 32, 32, BCS_NONE),
    T(0x228, "MPI_FLOAT_INT", 8, 8, BCS_F32I), T(0x229, "MPI_DOUBLE_INT", 12, 16, BCS_F64I),
    T(0x22a, "MPI_LONG_INT", 12, 16, BCS_I64I), T(0x22b, "MPI_2INT", 8, 8, BCS_I32I),
    T(0x22c, "MPI_SHORT_INT", 6, 8, BCS_I16I), T(0x22d, "MPI_LONG_DOUBLE_INT", 20, 32, BCS_NONE),
    T(0x230, "MPI_2REAL", 8, 8, BCS_NONE), T(0x231, "MPI_2DOUBLE_PRECISION", 16, 16, BCS_NONE),
    T(0x232, "MPI_2INTEGER", 8, 8, BCS_I32I), T(0x238, "MPI_C_BOOL", 1, 1, BCS_U8),
    T(0x239, "MPI_CXX_BOOL", 1, 1, BCS_U8), T(0x23c, "MPI_WCHAR", 4, 4, BCS_I32),
    T(0x240, "MPI_INT8_T", 1, 1, BCS_I8), T(0x241, "MPI_UINT8_T", 1, 1, BCS_U8),
    T(0x243, "MPI_CHAR", 1, 1, BCS_I8), T(0x244, "MPI_SIGNED_CHAR", 1, 1, BCS_I8),
    T(0x245, "MPI_UNSIGNED_CHAR", 1, 1, BCS_U8), T(0x247, "MPI_BYTE", 1, 1, BCS_U8),
    T(0x248, "MPI_INT16_T", 2, 2, BCS_I16), T(0x249, "MPI_UINT16_T", 2, 2, BCS_U16),
    T(0x250, "MPI_INT32_T", 4, 4, BCS_I32), T(0x251, "MPI_UINT32_T", 4, 4, BCS_U32),
    T(0x258, "MPI_INT64_T", 8, 8, BCS_I64), T(0x259, "MPI_UINT64_T", 8, 8, BCS_U64),
    T(0x2c0, "MPI_LOGICAL1", 1, 1, BCS_I8), T(0x2c1, "MPI_INTEGER1", 1, 1, BCS_I8),
    T(0x2c8, "MPI_LOGICAL2", 2, 2, BCS_I16), T(0x2c9, "MPI_INTEGER2", 2, 2, BCS_I16),
    T(0x2ca, "MPI_REAL2", 2, 2, BCS_NONE), T(0x2d0, "MPI_LOGICAL4", 4, 4, BCS_I32),
    T(0x2d1, "MPI_INTEGER4", 4, 4, BCS_I32), T(0x2d2, "MPI_REAL4", 4, 4, BCS_F32),
    T(0x2d3, "MPI_COMPLEX4", 4, 4, BCS_NONE), T(0x2d8, "MPI_LOGICAL8", 8, 8, BCS_I64),
    T(0x2d9, "MPI_INTEGER8", 8, 8, BCS_I64), T(0x2da, "MPI_REAL8", 8, 8, BCS_F64),
    T(0x2db, "MPI_COMPLEX8", 8, 8, BCS_NONE), T(0x2e0, "MPI_LOGICAL16", 16, 16, BCS_NONE),
    T(0x2e1, "MPI_INTEGER16", 16, 16, BCS_NONE), T(0x2e2, "MPI_REAL16", 16, 16, BCS_NONE),
    T(0x2e3, "MPI_COMPLEX16", 16, 16, BCS_NONE), T(0x2eb, "MPI_COMPLEX32", 32, 32, BCS_NONE),
#undef T
};

const struct bcs_type *bcs_type_of(uintptr_t h) {
    if (h <= 0x200 || h >= 0x200 + BCS_NTYPES || bcs_types[h - 0x200].name == NULL)
        return NULL;
    return &bcs_types[h - 0x200];
}

// The standard's error classes, by number.
static const char *const bcs_class_names[] = {
    "MPI_SUCCESS", "MPI_ERR_BUFFER", "MPI_ERR_COUNT", "MPI_ERR_TYPE", "MPI_ERR_TAG",
    "MPI_ERR_COMM", "MPI_ERR_RANK", "MPI_ERR_REQUEST", "MPI_ERR_ROOT", "MPI_ERR_GROUP",
    "MPI_ERR_OP", "MPI_ERR_TOPOLOGY", "MPI_ERR_DIMS", "MPI_ERR_ARG", "MPI_ERR_UNKNOWN",
    "MPI_ERR_TRUNCATE", "MPI_ERR_OTHER", "MPI_ERR_INTERN", "MPI_ERR_PENDING",
    "MPI_ERR_IN_STATUS", "MPI_ERR_ACCESS", "MPI_ERR_AMODE", "MPI_ERR_ASSERT",
    "MPI_ERR_BAD_FILE", "MPI_ERR_BASE", "MPI_ERR_CONVERSION", "MPI_ERR_DISP",
    "MPI_ERR_DUP_DATAREP", "MPI_ERR_FILE_EXISTS", "MPI_ERR_FILE_IN_USE", "MPI_ERR_FILE",
    "MPI_ERR_INFO_KEY", "MPI_ERR_INFO_NOKEY", "MPI_ERR_INFO_VALUE", "MPI_ERR_INFO",
    "MPI_ERR_IO", "MPI_ERR_KEYVAL", "MPI_ERR_LOCKTYPE", "MPI_ERR_NAME", "MPI_ERR_NO_MEM",
    "MPI_ERR_NOT_SAME", "MPI_ERR_NO_SPACE", "MPI_ERR_NO_SUCH_FILE", "MPI_ERR_PORT",
    "MPI_ERR_QUOTA", "MPI_ERR_READ_ONLY", "MPI_ERR_RMA_ATTACH", "MPI_ERR_RMA_CONFLICT",
    "MPI_ERR_RMA_RANGE", "MPI_ERR_RMA_SHARED", "MPI_ERR_RMA_SYNC", "MPI_ERR_SERVICE",
    "MPI_ERR_SIZE", "MPI_ERR_SPAWN", "MPI_ERR_UNSUPPORTED_DATAREP",
    "MPI_ERR_UNSUPPORTED_OPERATION", "MPI_ERR_WIN", "MPI_ERR_RMA_FLAVOR",
    "MPI_ERR_PROC_ABORTED", "MPI_ERR_VALUE_TOO_LARGE", "MPI_ERR_SESSION",
    "MPI_ERR_ERRHANDLER", "MPI_ERR_ABI",
};
#define BCS_NCLASSES ((int)(sizeof bcs_class_names / sizeof bcs_class_names[0]))

const char *bcs_class_name(int c) {
    return c >= 0 && c < BCS_NCLASSES ? bcs_class_names[c] : NULL;
}

void bcs_flush(void) { fflush(NULL); }

// ---- Go inside a C process ----

static void bcs_child_after_fork(void) { bcs_forked = 1; }

__attribute__((constructor)) static void bcs_load(void) {
    clock_gettime(CLOCK_MONOTONIC, &bcs_t0);
    pthread_atfork(NULL, NULL, bcs_child_after_fork);
}

// A process with a Go runtime may fork only to exec: the child has none of
// the runtime's threads, so it must not call into Go.
static int bcs_forked_error(const char *call) {
    fprintf(stderr, "bcsmpi: %s called in a forked child (pid %d) of an MPI process; "
                    "a process running bcsmpi may fork only to exec\n", call, (int)getpid());
    return MPI_ERR_OTHER;
}
#define GUARD(call) do { if (bcs_forked) return bcs_forked_error(call); } while (0); BCS_LOCKED

// ---- The call lock (shim.h; doc.go, "Threads") ----

int bcs_mt, bcs_mt_waiters;
static pthread_mutex_t bcs_mt_mu = PTHREAD_MUTEX_INITIALIZER;
static __thread int bcs_mt_depth; // this thread's holds (0: it does not hold the lock)

int bcs_mt_lock(void) {
    if (bcs_mt_depth++ == 0) {
        pthread_mutex_lock(&bcs_mt_mu);
    }
    return 1;
}

void bcs_mt_unlock(void) {
    if (--bcs_mt_depth == 0) {
        if (bcs_mt_waiters > 0)
            bcs_mt_kick(); // mpiapi.Kick: a waiter may wait for what this call did
        pthread_mutex_unlock(&bcs_mt_mu);
    }
}

// bcs_mt_release lets go of every hold of this thread while it sleeps in a
// blocked call; bcs_mt_reacquire takes them back (mpiapi threads.go).
int bcs_mt_release(void) {
    int d = bcs_mt_depth;
    if (d > 0) {
        bcs_mt_depth = 0;
        pthread_mutex_unlock(&bcs_mt_mu);
    }
    return d;
}

void bcs_mt_reacquire(int depth) {
    if (depth > 0) {
        pthread_mutex_lock(&bcs_mt_mu);
        bcs_mt_depth = depth;
    }
}

// NONNULL refuses a NULL output argument (MPI_ERR_ARG through comm's error
// handler) before the call does anything: writing through it would crash
// the process, or leave a posted request nobody can complete.
// The error path takes the call lock (recursive): a NONNULL may come before
// the call's own GUARD, and bcs_null_arg runs Go (review: MPI_Type_size(t,
// NULL) ran the handler unlocked under MPI_THREAD_MULTIPLE). bcs_null_arg
// makes the check every call makes first (MPI initialised, not finalised;
// errors.go enter) before it refuses the argument, so a call before
// MPI_Init or after MPI_Finalize says so whatever its arguments, as the
// calls checked in Go do (and MPICH).
#define NONNULL(comm, call, arg) do { if ((arg) == NULL) { BCS_LOCKED; return bcs_null_arg(H(comm), call, #arg " = NULL"); } } while (0)
// NONNULL0 is NONNULL for the calls a program may make before MPI_Init or
// after MPI_Finalize: there the NULL argument is MPI_ERR_ARG returned.
#define NONNULL0(call, arg)                                                               \
    do {                                                                                  \
        if ((arg) == NULL) {                                                              \
            if (!bcs_initialized || bcs_finalized)                                        \
                return MPI_ERR_ARG;                                                       \
            BCS_LOCKED;                                                                   \
            return bcs_error(H(MPI_COMM_WORLD), call, MPI_ERR_ARG, #arg " = NULL");       \
        }                                                                                 \
    } while (0)

// Go's runtime needs its signal handlers to run on the alternate signal
// stack; a handler the program installed without SA_ONSTACK crashes the
// process when the signal lands on a Go thread. Re-install them with it.
void bcs_fix_sigonstack(void) {
    for (int sig = 1; sig < NSIG; sig++) {
        if (sig == SIGKILL || sig == SIGSTOP)
            continue;
        struct sigaction sa;
        if (sigaction(sig, NULL, &sa) != 0)
            continue;
        if (sa.sa_handler == SIG_DFL || sa.sa_handler == SIG_IGN || (sa.sa_flags & SA_ONSTACK))
            continue;
        sa.sa_flags |= SA_ONSTACK;
        sigaction(sig, &sa, NULL);
    }
}

#define H(x) ((uintptr_t)(x))

// ---- Environment ----

static int bcs_init_common(int required, int *provided) {
    GUARD("MPI_Init");
    int rc = bcs_init(required);
    if (rc != MPI_SUCCESS)
        return rc;
    bcs_main_thread = pthread_self();
    bcs_initialized = 1;
    bcs_fix_sigonstack();
    if (provided)
        *provided = bcs_thread_level;
    return MPI_SUCCESS;
}

int PMPI_Init(int *argc, char ***argv) {
    (void)argc, (void)argv;
    return bcs_init_common(MPI_THREAD_SINGLE, NULL);
}

int PMPI_Init_thread(int *argc, char ***argv, int required, int *provided) {
    (void)argc, (void)argv;
    return bcs_init_common(required, provided);
}

int PMPI_Initialized(int *flag) { NONNULL0("MPI_Initialized", flag); *flag = bcs_initialized; return MPI_SUCCESS; }
int PMPI_Finalized(int *flag) { NONNULL0("MPI_Finalized", flag); *flag = bcs_finalized; return MPI_SUCCESS; }

int PMPI_Finalize(void) {
    GUARD("MPI_Finalize");
    fflush(NULL);
    int rc = bcs_attrs_finalize(); // MPI_COMM_SELF's attributes go first (attr.go)
    if (rc != MPI_SUCCESS)
        return rc;
    rc = bcs_finalize();
    if (rc == MPI_SUCCESS) {
        bcs_finalized = 1;
        bcs_fix_sigonstack();
    }
    return rc;
}

int PMPI_Query_thread(int *provided) { NONNULL0("MPI_Query_thread", provided); *provided = bcs_thread_level; return MPI_SUCCESS; }

int PMPI_Is_thread_main(int *flag) {
    *flag = bcs_initialized && pthread_equal(pthread_self(), bcs_main_thread);
    return MPI_SUCCESS;
}

int PMPI_Abort(MPI_Comm comm, int errorcode) {
    GUARD("MPI_Abort");
    fflush(NULL);
    bcs_abort(H(comm), errorcode);
    return MPI_SUCCESS; // not reached
}

int PMPI_Get_version(int *version, int *subversion) {
    NONNULL0("MPI_Get_version", version);
    NONNULL0("MPI_Get_version", subversion);
    *version = MPI_VERSION;
    *subversion = MPI_SUBVERSION;
    return MPI_SUCCESS;
}

int PMPI_Abi_get_version(int *abi_major, int *abi_minor) {
    NONNULL0("MPI_Abi_get_version", abi_major);
    NONNULL0("MPI_Abi_get_version", abi_minor);
    *abi_major = MPI_ABI_VERSION;
    *abi_minor = MPI_ABI_SUBVERSION;
    return MPI_SUCCESS;
}

static int bcs_copy_string(const char *s, char *out, int max, int *len) {
    int n = (int)strlen(s);
    if (n > max - 1)
        n = max - 1;
    memcpy(out, s, (size_t)n);
    out[n] = 0;
    *len = n;
    return MPI_SUCCESS;
}

int PMPI_Get_library_version(char *version, int *resultlen) {
    NONNULL0("MPI_Get_library_version", version);
    NONNULL0("MPI_Get_library_version", resultlen);
    return bcs_copy_string("bcsmpi (MPI 5.0 standard ABI 1.0, libmpi_abi.so.1)", version,
                           MPI_MAX_LIBRARY_VERSION_STRING, resultlen);
}

int PMPI_Get_processor_name(char *name, int *resultlen) {
    NONNULL0("MPI_Get_processor_name", name);
    NONNULL0("MPI_Get_processor_name", resultlen);
    char host[MPI_MAX_PROCESSOR_NAME];
    if (gethostname(host, sizeof host) != 0)
        strcpy(host, "localhost");
    host[sizeof host - 1] = 0;
    return bcs_copy_string(host, name, MPI_MAX_PROCESSOR_NAME, resultlen);
}

double PMPI_Wtime(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)(t.tv_sec - bcs_t0.tv_sec) + 1e-9 * (double)(t.tv_nsec - bcs_t0.tv_nsec);
}

double PMPI_Wtick(void) { return 1e-9; }

int bcs_user_error(int code, int *class, const char **text); // shim_large.c

int PMPI_Error_class(int errorcode, int *errorclass) {
    NONNULL0("MPI_Error_class", errorclass);
    BCS_LOCKED;
    if (bcs_user_error(errorcode, errorclass, NULL))
        return MPI_SUCCESS;
    if (bcs_class_name(errorcode) == NULL)
        return bcs_error(H(MPI_COMM_WORLD), "MPI_Error_class", MPI_ERR_ARG, "errorcode is not an error class or code of bcsmpi");
    *errorclass = errorcode;
    return MPI_SUCCESS;
}

int PMPI_Error_string(int errorcode, char *string, int *resultlen) {
    NONNULL0("MPI_Error_string", string);
    NONNULL0("MPI_Error_string", resultlen);
    BCS_LOCKED;
    const char *text;
    if (bcs_user_error(errorcode, NULL, &text))
        return bcs_copy_string(text, string, MPI_MAX_ERROR_STRING, resultlen);
    const char *name = bcs_class_name(errorcode);
    if (name == NULL)
        return bcs_error(H(MPI_COMM_WORLD), "MPI_Error_string", MPI_ERR_ARG, "errorcode is not an error class or code of bcsmpi");
    return bcs_copy_string(name, string, MPI_MAX_ERROR_STRING, resultlen);
}

// ---- Communicators ----

int PMPI_Comm_rank(MPI_Comm comm, int *rank) {
    if (comm == MPI_COMM_WORLD && rank != NULL && bcs_initialized && !bcs_finalized) {
        *rank = bcs_world_rank;
        return MPI_SUCCESS;
    }
    GUARD("MPI_Comm_rank");
    NONNULL(comm, "MPI_Comm_rank", rank);
    return bcs_comm_rank(H(comm), rank);
}

int PMPI_Comm_size(MPI_Comm comm, int *size) {
    if (comm == MPI_COMM_WORLD && size != NULL && bcs_initialized && !bcs_finalized) {
        *size = bcs_world_size;
        return MPI_SUCCESS;
    }
    GUARD("MPI_Comm_size");
    NONNULL(comm, "MPI_Comm_size", size);
    return bcs_comm_size(H(comm), size);
}

int PMPI_Comm_dup(MPI_Comm comm, MPI_Comm *newcomm) {
    GUARD("MPI_Comm_dup");
    return bcs_comm_dup(H(comm), (uintptr_t *)newcomm); // newcomm = NULL checked there (dupArgs)
}

int PMPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm) {
    GUARD("MPI_Comm_split");
    NONNULL(comm, "MPI_Comm_split", newcomm);
    return bcs_comm_split(H(comm), color, key, (uintptr_t *)newcomm);
}

int PMPI_Comm_free(MPI_Comm *comm) {
    GUARD("MPI_Comm_free");
    return bcs_comm_free((uintptr_t *)comm);
}

int PMPI_Comm_set_name(MPI_Comm comm, const char *comm_name) {
    GUARD("MPI_Comm_set_name");
    return bcs_comm_set_name(H(comm), (char *)comm_name);
}

int PMPI_Comm_get_name(MPI_Comm comm, char *comm_name, int *resultlen) {
    GUARD("MPI_Comm_get_name");
    NONNULL(comm, "MPI_Comm_get_name", comm_name);
    NONNULL(comm, "MPI_Comm_get_name", resultlen);
    return bcs_comm_get_name(H(comm), comm_name, resultlen);
}

int PMPI_Comm_compare(MPI_Comm comm1, MPI_Comm comm2, int *result) {
    GUARD("MPI_Comm_compare");
    NONNULL(comm1, "MPI_Comm_compare", result);
    return bcs_comm_compare(H(comm1), H(comm2), result);
}

// Values of the predefined attributes: Comm_get_attr hands out their addresses.
static int bcs_attr_tag_ub = (1 << 30) - 1, bcs_attr_host = MPI_PROC_NULL,
           bcs_attr_io = MPI_ANY_SOURCE, bcs_attr_wtime_is_global = 0,
           bcs_attr_universe_size, bcs_attr_lastusedcode = MPI_ERR_LASTCODE;
void bcs_set_lastusedcode(int code) { bcs_attr_lastusedcode = code; } // MPI_Add_error_class/code

int PMPI_Comm_get_attr(MPI_Comm comm, int comm_keyval, void *attribute_val, int *flag) {
    GUARD("MPI_Comm_get_attr");
    NONNULL(comm, "MPI_Comm_get_attr", attribute_val);
    NONNULL(comm, "MPI_Comm_get_attr", flag);
    int size, rc = bcs_comm_size(H(comm), &size); // validates comm
    if (rc != MPI_SUCCESS)
        return rc;
    int *v = NULL;
    switch (comm_keyval) {
    case MPI_TAG_UB: v = &bcs_attr_tag_ub; break;
    case MPI_HOST: v = &bcs_attr_host; break;
    case MPI_IO: v = &bcs_attr_io; break;
    case MPI_WTIME_IS_GLOBAL: v = &bcs_attr_wtime_is_global; break;
    case MPI_UNIVERSE_SIZE: bcs_attr_universe_size = bcs_world_size; v = &bcs_attr_universe_size; break;
    case MPI_LASTUSEDCODE: v = &bcs_attr_lastusedcode; break;
    case MPI_APPNUM: break;
    default: // a user keyval (attr.go)
        return bcs_comm_get_attr(H(comm), comm_keyval, (void **)attribute_val, flag);
    }
    *flag = v != NULL;
    if (v != NULL)
        *(int **)attribute_val = v;
    return MPI_SUCCESS;
}

int PMPI_Comm_set_errhandler(MPI_Comm comm, MPI_Errhandler errhandler) {
    GUARD("MPI_Comm_set_errhandler");
    return bcs_comm_set_errhandler(H(comm), H(errhandler));
}

int PMPI_Comm_get_errhandler(MPI_Comm comm, MPI_Errhandler *errhandler) {
    GUARD("MPI_Comm_get_errhandler");
    NONNULL(comm, "MPI_Comm_get_errhandler", errhandler);
    return bcs_comm_get_errhandler(H(comm), (uintptr_t *)errhandler);
}

int PMPI_Errhandler_free(MPI_Errhandler *errhandler) {
    GUARD("MPI_Errhandler_free");
    NONNULL0("MPI_Errhandler_free", errhandler); // callable before MPI_Init
    return bcs_errhandler_free((uintptr_t *)errhandler);
}

int PMPI_Comm_create_errhandler(MPI_Comm_errhandler_function *comm_errhandler_fn, MPI_Errhandler *errhandler) {
    GUARD("MPI_Comm_create_errhandler");
    return bcs_comm_create_errhandler((void *)comm_errhandler_fn, (uintptr_t *)errhandler);
}

int PMPI_Comm_call_errhandler(MPI_Comm comm, int errorcode) {
    GUARD("MPI_Comm_call_errhandler");
    return bcs_comm_call_errhandler(H(comm), errorcode);
}

// bcs_call_errhandler calls a user error handler (Go cannot call C function
// pointers).
void bcs_call_errhandler(void *fn, uintptr_t comm, int code) {
    MPI_Comm c = (MPI_Comm)comm;
    ((MPI_Comm_errhandler_function *)fn)(&c, &code);
}

// ---- Datatypes ----
// Predefined datatypes are answered here from bcs_types; derived ones
// (datatype.go) in Go. Each constructor hands Go its arguments laid out as
// MPI_Type_get_contents returns them (integers, addresses, large counts,
// datatypes), so the envelope and contents are the constructor's record.

#define DT_GUARD(call) GUARD(call)
#define DT_NOMEM(call) bcs_error(H(MPI_COMM_WORLD), (char *)(call), MPI_ERR_NO_MEM, "no memory for the constructor's arguments")

static int bcs_dt_create(const char *call, int combiner, int large, int ni, const int *ints, int na, const MPI_Aint *aints,
                         int nc, const MPI_Count *counts, int nt, const MPI_Datatype *types, MPI_Datatype *newtype) {
    DT_GUARD(call);
    return bcs_type_create(combiner, large, ni, (int *)ints, na, (MPI_Aint *)aints, nc, (MPI_Count *)counts, nt,
                           (uintptr_t *)types, (uintptr_t *)newtype);
}

// DT_ARGS_MAX bounds a constructor's count of blocks and ndims, so that
// the arguments laid out for Go (at most 4 per block or dimension, plus 4)
// fit an int; a larger value is refused with class, naming it, before any
// array is read.
#define DT_ARGS_MAX ((INT_MAX - 4) / 4)

static int bcs_dt_big(const char *call, const char *what, long long v, int class) {
    char msg[160];
    snprintf(msg, sizeof msg, "%s = %lld, want <= %d (bcsmpi's bound on a constructor's blocks or dimensions)", what, v,
             DT_ARGS_MAX);
    return bcs_error(H(MPI_COMM_WORLD), (char *)call, class, msg);
}

#define DT_BIG(call, what, v, class) \
    do { if ((long long)(v) > DT_ARGS_MAX) { DT_GUARD(call); return bcs_dt_big(call, what, (long long)(v), class); } } while (0)

// bcs_dt_ints lays out count, then up to three int arrays (NULL: skipped,
// n < 0: a single value v) in one malloc'd array of ni ints.
static int *bcs_dt_ints(int count, const int *a, int an, const int *b, int bn, const int *c, int cn, int *ni) {
    if (count < 0 || an < 0 || bn < 0 || cn < 0)
        return NULL;
    long long nl = 1LL + (a ? an : 0) + (b ? bn : 0) + (c ? cn : 0);
    if (nl > INT_MAX) // the callers refuse counts above DT_ARGS_MAX first
        return NULL;
    int n = (int)nl;
    int *v = malloc(sizeof(int) * (size_t)n);
    if (v == NULL)
        return NULL;
    int k = 0;
    v[k++] = count;
    if (a) { memcpy(v + k, a, sizeof(int) * (size_t)an); k += an; }
    if (b) { memcpy(v + k, b, sizeof(int) * (size_t)bn); k += bn; }
    if (c) { memcpy(v + k, c, sizeof(int) * (size_t)cn); k += cn; }
    *ni = n;
    return v;
}

static MPI_Count *bcs_dt_counts(MPI_Count count, const MPI_Count *a, MPI_Count an, const MPI_Count *b, MPI_Count bn, int *nc) {
    if (count < 0 || an < 0 || bn < 0 || an > DT_ARGS_MAX || bn > DT_ARGS_MAX)
        return NULL;
    MPI_Count n = 1 + (a ? an : 0) + (b ? bn : 0);
    MPI_Count *v = malloc(sizeof(MPI_Count) * (size_t)n);
    if (v == NULL)
        return NULL;
    int k = 0;
    v[k++] = count;
    if (a) { memcpy(v + k, a, sizeof(MPI_Count) * (size_t)an); k += (int)an; }
    if (b) { memcpy(v + k, b, sizeof(MPI_Count) * (size_t)bn); k += (int)bn; }
    *nc = (int)n;
    return v;
}

static int bcs_dt_negative(const char *call, MPI_Count count) {
    char msg[96];
    snprintf(msg, sizeof msg, "count = %lld, want >= 0", (long long)count);
    return bcs_error(H(MPI_COMM_WORLD), (char *)call, MPI_ERR_COUNT, msg);
}

int PMPI_Type_contiguous(int count, MPI_Datatype oldtype, MPI_Datatype *newtype) {
    return bcs_dt_create("MPI_Type_contiguous", MPI_COMBINER_CONTIGUOUS, 0, 1, &count, 0, NULL, 0, NULL, 1, &oldtype, newtype);
}

int PMPI_Type_vector(int count, int blocklength, int stride, MPI_Datatype oldtype, MPI_Datatype *newtype) {
    int v[3] = {count, blocklength, stride};
    return bcs_dt_create("MPI_Type_vector", MPI_COMBINER_VECTOR, 0, 3, v, 0, NULL, 0, NULL, 1, &oldtype, newtype);
}

int PMPI_Type_create_hvector(int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype, MPI_Datatype *newtype) {
    int v[2] = {count, blocklength};
    return bcs_dt_create("MPI_Type_create_hvector", MPI_COMBINER_HVECTOR, 0, 2, v, 1, &stride, 0, NULL, 1, &oldtype, newtype);
}

// count arrays of ints or addresses: a negative count is refused before
// the arrays are read.
#define DT_COUNT(call, count) do { if ((count) < 0) { DT_GUARD(call); return bcs_dt_negative(call, count); } } while (0)

int PMPI_Type_indexed(int count, const int array_of_blocklengths[], const int array_of_displacements[], MPI_Datatype oldtype,
                      MPI_Datatype *newtype) {
    DT_COUNT("MPI_Type_indexed", count);
    DT_BIG("MPI_Type_indexed", "count", count, MPI_ERR_COUNT);
    int ni, *v = bcs_dt_ints(count, array_of_blocklengths, count, array_of_displacements, count, NULL, 0, &ni);
    if (v == NULL)
        return DT_NOMEM("MPI_Type_indexed");
    int rc = bcs_dt_create("MPI_Type_indexed", MPI_COMBINER_INDEXED, 0, ni, v, 0, NULL, 0, NULL, 1, &oldtype, newtype);
    free(v);
    return rc;
}

int PMPI_Type_create_hindexed(int count, const int array_of_blocklengths[], const MPI_Aint array_of_displacements[],
                              MPI_Datatype oldtype, MPI_Datatype *newtype) {
    DT_COUNT("MPI_Type_create_hindexed", count);
    DT_BIG("MPI_Type_create_hindexed", "count", count, MPI_ERR_COUNT);
    int ni, *v = bcs_dt_ints(count, array_of_blocklengths, count, NULL, 0, NULL, 0, &ni);
    if (v == NULL)
        return DT_NOMEM("MPI_Type_create_hindexed");
    int rc = bcs_dt_create("MPI_Type_create_hindexed", MPI_COMBINER_HINDEXED, 0, ni, v, count, array_of_displacements, 0, NULL,
                           1, &oldtype, newtype);
    free(v);
    return rc;
}

int PMPI_Type_create_indexed_block(int count, int blocklength, const int array_of_displacements[], MPI_Datatype oldtype,
                                   MPI_Datatype *newtype) {
    DT_COUNT("MPI_Type_create_indexed_block", count);
    DT_BIG("MPI_Type_create_indexed_block", "count", count, MPI_ERR_COUNT);
    int ni, *v = bcs_dt_ints(count, &blocklength, 1, array_of_displacements, count, NULL, 0, &ni);
    if (v == NULL)
        return DT_NOMEM("MPI_Type_create_indexed_block");
    int rc = bcs_dt_create("MPI_Type_create_indexed_block", MPI_COMBINER_INDEXED_BLOCK, 0, ni, v, 0, NULL, 0, NULL, 1,
                           &oldtype, newtype);
    free(v);
    return rc;
}

int PMPI_Type_create_hindexed_block(int count, int blocklength, const MPI_Aint array_of_displacements[], MPI_Datatype oldtype,
                                    MPI_Datatype *newtype) {
    DT_COUNT("MPI_Type_create_hindexed_block", count);
    int v[2] = {count, blocklength};
    return bcs_dt_create("MPI_Type_create_hindexed_block", MPI_COMBINER_HINDEXED_BLOCK, 0, 2, v, count, array_of_displacements,
                         0, NULL, 1, &oldtype, newtype);
}

int PMPI_Type_create_struct(int count, const int array_of_blocklengths[], const MPI_Aint array_of_displacements[],
                            const MPI_Datatype array_of_types[], MPI_Datatype *newtype) {
    DT_COUNT("MPI_Type_create_struct", count);
    DT_BIG("MPI_Type_create_struct", "count", count, MPI_ERR_COUNT);
    int ni, *v = bcs_dt_ints(count, array_of_blocklengths, count, NULL, 0, NULL, 0, &ni);
    if (v == NULL)
        return DT_NOMEM("MPI_Type_create_struct");
    int rc = bcs_dt_create("MPI_Type_create_struct", MPI_COMBINER_STRUCT, 0, ni, v, count, array_of_displacements, 0, NULL,
                           count, array_of_types, newtype);
    free(v);
    return rc;
}

int PMPI_Type_create_subarray(int ndims, const int array_of_sizes[], const int array_of_subsizes[], const int array_of_starts[],
                              int order, MPI_Datatype oldtype, MPI_Datatype *newtype) {
    if (ndims <= 0) {
        DT_GUARD("MPI_Type_create_subarray");
        return bcs_error(H(MPI_COMM_WORLD), "MPI_Type_create_subarray", MPI_ERR_ARG, "ndims <= 0, want >= 1");
    }
    DT_BIG("MPI_Type_create_subarray", "ndims", ndims, MPI_ERR_ARG);
    int ni, *v = bcs_dt_ints(ndims, array_of_sizes, ndims, array_of_subsizes, ndims, array_of_starts, ndims, &ni);
    if (v == NULL)
        return DT_NOMEM("MPI_Type_create_subarray");
    int *w = realloc(v, sizeof(int) * (size_t)(ni + 1));
    if (w == NULL) {
        free(v);
        return DT_NOMEM("MPI_Type_create_subarray");
    }
    w[ni] = order;
    int rc = bcs_dt_create("MPI_Type_create_subarray", MPI_COMBINER_SUBARRAY, 0, ni + 1, w, 0, NULL, 0, NULL, 1, &oldtype, newtype);
    free(w);
    return rc;
}

static int bcs_dt_darray(const char *call, int size, int rank, int ndims, const int *gsizes, const MPI_Count *cgsizes,
                         const int distribs[], const int dargs[], const int psizes[], int order, MPI_Datatype oldtype,
                         MPI_Datatype *newtype) {
    if (ndims <= 0) {
        DT_GUARD(call);
        return bcs_error(H(MPI_COMM_WORLD), (char *)call, MPI_ERR_ARG, "ndims <= 0, want >= 1");
    }
    DT_BIG(call, "ndims", ndims, MPI_ERR_ARG);
    int nd = ndims, ni = gsizes ? 4 * nd + 4 : 3 * nd + 4, *v = malloc(sizeof(int) * (size_t)ni), k = 0;
    if (v == NULL)
        return DT_NOMEM(call);
    v[k++] = size, v[k++] = rank, v[k++] = ndims;
    if (gsizes) {
        memcpy(v + k, gsizes, sizeof(int) * (size_t)nd);
        k += nd;
    }
    memcpy(v + k, distribs, sizeof(int) * (size_t)nd), k += nd;
    memcpy(v + k, dargs, sizeof(int) * (size_t)nd), k += nd;
    memcpy(v + k, psizes, sizeof(int) * (size_t)nd), k += nd;
    v[k++] = order;
    int rc = bcs_dt_create(call, MPI_COMBINER_DARRAY, gsizes == NULL, ni, v, 0, NULL, gsizes ? 0 : nd, cgsizes, 1, &oldtype,
                           newtype);
    free(v);
    return rc;
}

int PMPI_Type_create_darray(int size, int rank, int ndims, const int array_of_gsizes[], const int array_of_distribs[],
                            const int array_of_dargs[], const int array_of_psizes[], int order, MPI_Datatype oldtype,
                            MPI_Datatype *newtype) {
    return bcs_dt_darray("MPI_Type_create_darray", size, rank, ndims, array_of_gsizes, NULL, array_of_distribs, array_of_dargs,
                         array_of_psizes, order, oldtype, newtype);
}

int PMPI_Type_create_darray_c(int size, int rank, int ndims, const MPI_Count array_of_gsizes[], const int array_of_distribs[],
                              const int array_of_dargs[], const int array_of_psizes[], int order, MPI_Datatype oldtype,
                              MPI_Datatype *newtype) {
    return bcs_dt_darray("MPI_Type_create_darray_c", size, rank, ndims, NULL, array_of_gsizes, array_of_distribs,
                         array_of_dargs, array_of_psizes, order, oldtype, newtype);
}

int PMPI_Type_create_resized(MPI_Datatype oldtype, MPI_Aint lb, MPI_Aint extent, MPI_Datatype *newtype) {
    MPI_Aint a[2] = {lb, extent};
    return bcs_dt_create("MPI_Type_create_resized", MPI_COMBINER_RESIZED, 0, 0, NULL, 2, a, 0, NULL, 1, &oldtype, newtype);
}

int PMPI_Type_dup(MPI_Datatype oldtype, MPI_Datatype *newtype) {
    return bcs_dt_create("MPI_Type_dup", MPI_COMBINER_DUP, 0, 0, NULL, 0, NULL, 0, NULL, 1, &oldtype, newtype);
}

// The large-count constructors: every count, length and displacement is in
// the large counts.
int PMPI_Type_contiguous_c(MPI_Count count, MPI_Datatype oldtype, MPI_Datatype *newtype) {
    return bcs_dt_create("MPI_Type_contiguous_c", MPI_COMBINER_CONTIGUOUS, 1, 0, NULL, 0, NULL, 1, &count, 1, &oldtype, newtype);
}

int PMPI_Type_vector_c(MPI_Count count, MPI_Count blocklength, MPI_Count stride, MPI_Datatype oldtype, MPI_Datatype *newtype) {
    MPI_Count v[3] = {count, blocklength, stride};
    return bcs_dt_create("MPI_Type_vector_c", MPI_COMBINER_VECTOR, 1, 0, NULL, 0, NULL, 3, v, 1, &oldtype, newtype);
}

int PMPI_Type_create_hvector_c(MPI_Count count, MPI_Count blocklength, MPI_Count stride, MPI_Datatype oldtype,
                               MPI_Datatype *newtype) {
    MPI_Count v[3] = {count, blocklength, stride};
    return bcs_dt_create("MPI_Type_create_hvector_c", MPI_COMBINER_HVECTOR, 1, 0, NULL, 0, NULL, 3, v, 1, &oldtype, newtype);
}

static int bcs_dt_create_c(const char *call, int combiner, MPI_Count count, const MPI_Count *a, MPI_Count an,
                           const MPI_Count *b, MPI_Count bn, int nt, const MPI_Datatype *types, MPI_Datatype *newtype) {
    BCS_LOCKED;
    DT_COUNT(call, count);
    DT_BIG(call, "count", count, MPI_ERR_COUNT);
    int nc;
    MPI_Count *v = bcs_dt_counts(count, a, an, b, bn, &nc);
    if (v == NULL)
        return DT_NOMEM(call);
    int rc = bcs_dt_create(call, combiner, 1, 0, NULL, 0, NULL, nc, v, nt, types, newtype);
    free(v);
    return rc;
}

int PMPI_Type_indexed_c(MPI_Count count, const MPI_Count array_of_blocklengths[], const MPI_Count array_of_displacements[],
                        MPI_Datatype oldtype, MPI_Datatype *newtype) {
    return bcs_dt_create_c("MPI_Type_indexed_c", MPI_COMBINER_INDEXED, count, array_of_blocklengths, count,
                           array_of_displacements, count, 1, &oldtype, newtype);
}

int PMPI_Type_create_hindexed_c(MPI_Count count, const MPI_Count array_of_blocklengths[], const MPI_Count array_of_displacements[],
                                MPI_Datatype oldtype, MPI_Datatype *newtype) {
    return bcs_dt_create_c("MPI_Type_create_hindexed_c", MPI_COMBINER_HINDEXED, count, array_of_blocklengths, count,
                           array_of_displacements, count, 1, &oldtype, newtype);
}

int PMPI_Type_create_indexed_block_c(MPI_Count count, MPI_Count blocklength, const MPI_Count array_of_displacements[],
                                     MPI_Datatype oldtype, MPI_Datatype *newtype) {
    return bcs_dt_create_c("MPI_Type_create_indexed_block_c", MPI_COMBINER_INDEXED_BLOCK, count, &blocklength, 1,
                           array_of_displacements, count, 1, &oldtype, newtype);
}

int PMPI_Type_create_hindexed_block_c(MPI_Count count, MPI_Count blocklength, const MPI_Count array_of_displacements[],
                                      MPI_Datatype oldtype, MPI_Datatype *newtype) {
    return bcs_dt_create_c("MPI_Type_create_hindexed_block_c", MPI_COMBINER_HINDEXED_BLOCK, count, &blocklength, 1,
                           array_of_displacements, count, 1, &oldtype, newtype);
}

int PMPI_Type_create_struct_c(MPI_Count count, const MPI_Count array_of_blocklengths[], const MPI_Count array_of_displacements[],
                              const MPI_Datatype array_of_types[], MPI_Datatype *newtype) {
    if (count > 0x7fffffff) {
        DT_GUARD("MPI_Type_create_struct_c");
        return bcs_error(H(MPI_COMM_WORLD), "MPI_Type_create_struct_c", MPI_ERR_COUNT, "count > 2^31-1 datatypes");
    }
    return bcs_dt_create_c("MPI_Type_create_struct_c", MPI_COMBINER_STRUCT, count, array_of_blocklengths, count,
                           array_of_displacements, count, (int)count, array_of_types, newtype);
}

int PMPI_Type_create_subarray_c(int ndims, const MPI_Count array_of_sizes[], const MPI_Count array_of_subsizes[],
                                const MPI_Count array_of_starts[], int order, MPI_Datatype oldtype, MPI_Datatype *newtype) {
    const char *call = "MPI_Type_create_subarray_c";
    if (ndims <= 0) {
        DT_GUARD(call);
        return bcs_error(H(MPI_COMM_WORLD), (char *)call, MPI_ERR_ARG, "ndims <= 0, want >= 1");
    }
    DT_BIG(call, "ndims", ndims, MPI_ERR_ARG);
    MPI_Count *v = malloc(sizeof(MPI_Count) * 3 * (size_t)ndims);
    if (v == NULL)
        return DT_NOMEM(call);
    memcpy(v, array_of_sizes, sizeof(MPI_Count) * (size_t)ndims);
    memcpy(v + ndims, array_of_subsizes, sizeof(MPI_Count) * (size_t)ndims);
    memcpy(v + 2 * ndims, array_of_starts, sizeof(MPI_Count) * (size_t)ndims);
    int ints[2] = {ndims, order};
    int rc = bcs_dt_create(call, MPI_COMBINER_SUBARRAY, 1, 2, ints, 0, NULL, 3 * ndims, v, 1, &oldtype, newtype);
    free(v);
    return rc;
}

int PMPI_Type_create_resized_c(MPI_Datatype oldtype, MPI_Count lb, MPI_Count extent, MPI_Datatype *newtype) {
    MPI_Count v[2] = {lb, extent};
    return bcs_dt_create("MPI_Type_create_resized_c", MPI_COMBINER_RESIZED, 1, 0, NULL, 0, NULL, 2, v, 1, &oldtype, newtype);
}

int PMPI_Type_commit(MPI_Datatype *datatype) {
    GUARD("MPI_Type_commit");
    return bcs_type_commit((uintptr_t *)datatype);
}

int PMPI_Type_free(MPI_Datatype *datatype) {
    GUARD("MPI_Type_free");
    return bcs_type_free((uintptr_t *)datatype);
}

// bcs_dt_scalars answers the size and extents of any datatype: a
// predefined one here, between MPI_Init and MPI_Finalize (outside them Go
// checks the call, as for any datatype: a session may be live).
static int bcs_dt_scalars(const char *call, MPI_Datatype datatype, MPI_Count *size, MPI_Count *lb, MPI_Count *extent,
                          MPI_Count *tlb, MPI_Count *textent) {
    const struct bcs_type *t = bcs_type_of(H(datatype));
    if (t != NULL && bcs_initialized && !bcs_finalized) {
        *size = t->size, *lb = 0, *extent = t->extent, *tlb = 0;
        *textent = t->extent;
        if (t->size != t->extent && datatype != MPI_SHORT_INT)
            *textent = t->size; // the pair types' data ends before their padding
        return MPI_SUCCESS;
    }
    GUARD(call);
    return bcs_type_extent((char *)call, H(datatype), size, lb, extent, tlb, textent);
}

#define DT_SCALARS(call, datatype) \
    MPI_Count s_, lb_, ext_, tlb_, text_; \
    int rc_ = bcs_dt_scalars(call, datatype, &s_, &lb_, &ext_, &tlb_, &text_); \
    if (rc_ != MPI_SUCCESS) \
        return rc_

int PMPI_Type_size(MPI_Datatype datatype, int *size) {
    NONNULL(MPI_COMM_WORLD, "MPI_Type_size", size);
    DT_SCALARS("MPI_Type_size", datatype);
    *size = s_ > 0x7fffffff ? MPI_UNDEFINED : (int)s_;
    return MPI_SUCCESS;
}

int PMPI_Type_size_c(MPI_Datatype datatype, MPI_Count *size) {
    NONNULL(MPI_COMM_WORLD, "MPI_Type_size_c", size);
    DT_SCALARS("MPI_Type_size_c", datatype);
    *size = s_;
    return MPI_SUCCESS;
}

int PMPI_Type_size_x(MPI_Datatype datatype, MPI_Count *size) {
    NONNULL(MPI_COMM_WORLD, "MPI_Type_size_x", size);
    DT_SCALARS("MPI_Type_size_x", datatype);
    *size = s_;
    return MPI_SUCCESS;
}

int PMPI_Type_get_extent(MPI_Datatype datatype, MPI_Aint *lb, MPI_Aint *extent) {
    NONNULL(MPI_COMM_WORLD, "MPI_Type_get_extent", lb);
    NONNULL(MPI_COMM_WORLD, "MPI_Type_get_extent", extent);
    DT_SCALARS("MPI_Type_get_extent", datatype);
    *lb = (MPI_Aint)lb_, *extent = (MPI_Aint)ext_;
    return MPI_SUCCESS;
}

int PMPI_Type_get_extent_c(MPI_Datatype datatype, MPI_Count *lb, MPI_Count *extent) {
    NONNULL(MPI_COMM_WORLD, "MPI_Type_get_extent_c", lb);
    NONNULL(MPI_COMM_WORLD, "MPI_Type_get_extent_c", extent);
    DT_SCALARS("MPI_Type_get_extent_c", datatype);
    *lb = lb_, *extent = ext_;
    return MPI_SUCCESS;
}

int PMPI_Type_get_extent_x(MPI_Datatype datatype, MPI_Count *lb, MPI_Count *extent) {
    NONNULL(MPI_COMM_WORLD, "MPI_Type_get_extent_x", lb);
    NONNULL(MPI_COMM_WORLD, "MPI_Type_get_extent_x", extent);
    DT_SCALARS("MPI_Type_get_extent_x", datatype);
    *lb = lb_, *extent = ext_;
    return MPI_SUCCESS;
}

int PMPI_Type_get_true_extent(MPI_Datatype datatype, MPI_Aint *true_lb, MPI_Aint *true_extent) {
    NONNULL(MPI_COMM_WORLD, "MPI_Type_get_true_extent", true_lb);
    NONNULL(MPI_COMM_WORLD, "MPI_Type_get_true_extent", true_extent);
    DT_SCALARS("MPI_Type_get_true_extent", datatype);
    *true_lb = (MPI_Aint)tlb_, *true_extent = (MPI_Aint)text_;
    return MPI_SUCCESS;
}

int PMPI_Type_get_true_extent_c(MPI_Datatype datatype, MPI_Count *true_lb, MPI_Count *true_extent) {
    NONNULL(MPI_COMM_WORLD, "MPI_Type_get_true_extent_c", true_lb);
    NONNULL(MPI_COMM_WORLD, "MPI_Type_get_true_extent_c", true_extent);
    DT_SCALARS("MPI_Type_get_true_extent_c", datatype);
    *true_lb = tlb_, *true_extent = text_;
    return MPI_SUCCESS;
}

int PMPI_Type_get_true_extent_x(MPI_Datatype datatype, MPI_Count *true_lb, MPI_Count *true_extent) {
    NONNULL(MPI_COMM_WORLD, "MPI_Type_get_true_extent_x", true_lb);
    NONNULL(MPI_COMM_WORLD, "MPI_Type_get_true_extent_x", true_extent);
    DT_SCALARS("MPI_Type_get_true_extent_x", datatype);
    *true_lb = tlb_, *true_extent = text_;
    return MPI_SUCCESS;
}

/* The names a program gave predefined datatypes: the standard lets
 * MPI_Type_set_name rename them (MPICH and Open MPI do); error messages
 * keep their MPI names. Indexed as bcs_types; bounded by it. */
static char bcs_type_names[BCS_NTYPES][MPI_MAX_OBJECT_NAME];
static unsigned char bcs_type_named[BCS_NTYPES];
static pthread_mutex_t bcs_type_names_mu = PTHREAD_MUTEX_INITIALIZER;

int PMPI_Type_get_name(MPI_Datatype datatype, char *type_name, int *resultlen) {
    NONNULL0("MPI_Type_get_name", type_name);
    NONNULL0("MPI_Type_get_name", resultlen);
    const struct bcs_type *t = bcs_type_of(H(datatype));
    if (t != NULL) {
        size_t i = (size_t)(t - bcs_types);
        int rc;
        pthread_mutex_lock(&bcs_type_names_mu);
        rc = bcs_copy_string(bcs_type_named[i] ? bcs_type_names[i] : t->name, type_name, MPI_MAX_OBJECT_NAME, resultlen);
        pthread_mutex_unlock(&bcs_type_names_mu);
        return rc;
    }
    GUARD("MPI_Type_get_name");
    return bcs_type_get_name(H(datatype), type_name, resultlen);
}

int PMPI_Type_set_name(MPI_Datatype datatype, const char *type_name) {
    GUARD("MPI_Type_set_name");
    const struct bcs_type *t = bcs_type_of(H(datatype));
    if (t != NULL && type_name != NULL) {
        size_t i = (size_t)(t - bcs_types);
        int len;
        pthread_mutex_lock(&bcs_type_names_mu);
        bcs_copy_string(type_name, bcs_type_names[i], MPI_MAX_OBJECT_NAME, &len);
        bcs_type_named[i] = 1;
        pthread_mutex_unlock(&bcs_type_names_mu);
        return MPI_SUCCESS;
    }
    return bcs_type_set_name(H(datatype), (char *)type_name);
}

int PMPI_Type_get_envelope(MPI_Datatype datatype, int *num_integers, int *num_addresses, int *num_datatypes, int *combiner) {
    GUARD("MPI_Type_get_envelope");
    NONNULL(MPI_COMM_WORLD, "MPI_Type_get_envelope", num_integers);
    NONNULL(MPI_COMM_WORLD, "MPI_Type_get_envelope", num_addresses);
    NONNULL(MPI_COMM_WORLD, "MPI_Type_get_envelope", num_datatypes);
    NONNULL(MPI_COMM_WORLD, "MPI_Type_get_envelope", combiner);
    MPI_Count ni, na, nt, comb;
    int rc = bcs_type_envelope(H(datatype), &ni, &na, NULL, &nt, &comb);
    if (rc == MPI_SUCCESS)
        *num_integers = (int)ni, *num_addresses = (int)na, *num_datatypes = (int)nt, *combiner = (int)comb;
    return rc;
}

int PMPI_Type_get_envelope_c(MPI_Datatype datatype, MPI_Count *num_integers, MPI_Count *num_addresses,
                             MPI_Count *num_large_counts, MPI_Count *num_datatypes, int *combiner) {
    GUARD("MPI_Type_get_envelope_c");
    NONNULL(MPI_COMM_WORLD, "MPI_Type_get_envelope_c", num_integers);
    NONNULL(MPI_COMM_WORLD, "MPI_Type_get_envelope_c", num_addresses);
    NONNULL(MPI_COMM_WORLD, "MPI_Type_get_envelope_c", num_large_counts);
    NONNULL(MPI_COMM_WORLD, "MPI_Type_get_envelope_c", num_datatypes);
    NONNULL(MPI_COMM_WORLD, "MPI_Type_get_envelope_c", combiner);
    MPI_Count comb;
    int rc = bcs_type_envelope(H(datatype), num_integers, num_addresses, num_large_counts, num_datatypes, &comb);
    if (rc == MPI_SUCCESS)
        *combiner = (int)comb;
    return rc;
}

int PMPI_Type_get_contents(MPI_Datatype datatype, int max_integers, int max_addresses, int max_datatypes,
                           int array_of_integers[], MPI_Aint array_of_addresses[], MPI_Datatype array_of_datatypes[]) {
    GUARD("MPI_Type_get_contents");
    return bcs_type_contents(H(datatype), max_integers, max_addresses, 0, max_datatypes, array_of_integers,
                             array_of_addresses, NULL, (uintptr_t *)array_of_datatypes);
}

int PMPI_Type_get_contents_c(MPI_Datatype datatype, MPI_Count max_integers, MPI_Count max_addresses,
                             MPI_Count max_large_counts, MPI_Count max_datatypes, int array_of_integers[],
                             MPI_Aint array_of_addresses[], MPI_Count array_of_large_counts[],
                             MPI_Datatype array_of_datatypes[]) {
    GUARD("MPI_Type_get_contents_c");
    return bcs_type_contents(H(datatype), max_integers, max_addresses, max_large_counts, max_datatypes, array_of_integers,
                             array_of_addresses, array_of_large_counts, (uintptr_t *)array_of_datatypes);
}

// A status carries the packed bytes received; a count is in items of the
// datatype (for a predefined type, its size), MPI_UNDEFINED when the bytes
// are not a whole number. The pair types (two basic elements each, packed
// in their size) are the Go side's (datatype.go).
static int bcs_count(const char *call, const MPI_Status *status, MPI_Datatype datatype, int elements, MPI_Count *count) {
    const struct bcs_type *t = bcs_type_of(H(datatype));
    uintptr_t h = H(datatype);
    int pair = (h >= H(MPI_FLOAT_INT) && h <= H(MPI_LONG_DOUBLE_INT)) || (h >= H(MPI_2REAL) && h <= H(MPI_2INTEGER));
    if (t != NULL && status != NULL && !pair) {
        uint64_t bytes = (uint64_t)(uint32_t)status->MPI_internal[0] | (uint64_t)(uint32_t)status->MPI_internal[1] << 32;
        *count = bytes % (uint64_t)t->extent ? MPI_UNDEFINED : (MPI_Count)(bytes / (uint64_t)t->extent);
        return MPI_SUCCESS;
    }
    GUARD(call);
    return bcs_get_count((char *)call, (MPI_Status *)status, H(datatype), elements, count);
}

static int bcs_count_int(const char *call, const MPI_Status *status, MPI_Datatype datatype, int elements, int *count) {
    MPI_Count n;
    int rc = bcs_count(call, status, datatype, elements, &n);
    if (rc == MPI_SUCCESS)
        *count = n > 0x7fffffff ? MPI_UNDEFINED : (int)n;
    return rc;
}

int PMPI_Get_count(const MPI_Status *status, MPI_Datatype datatype, int *count) {
    NONNULL0("MPI_Get_count", count);
    return bcs_count_int("MPI_Get_count", status, datatype, 0, count);
}

int PMPI_Get_elements(const MPI_Status *status, MPI_Datatype datatype, int *count) {
    NONNULL0("MPI_Get_elements", count);
    return bcs_count_int("MPI_Get_elements", status, datatype, 1, count);
}

int PMPI_Get_count_c(const MPI_Status *status, MPI_Datatype datatype, MPI_Count *count) {
    NONNULL0("MPI_Get_count_c", count);
    return bcs_count("MPI_Get_count_c", status, datatype, 0, count);
}

int PMPI_Get_elements_c(const MPI_Status *status, MPI_Datatype datatype, MPI_Count *count) {
    NONNULL0("MPI_Get_elements_c", count);
    return bcs_count("MPI_Get_elements_c", status, datatype, 1, count);
}

int PMPI_Get_elements_x(const MPI_Status *status, MPI_Datatype datatype, MPI_Count *count) {
    NONNULL0("MPI_Get_elements_x", count);
    return bcs_count("MPI_Get_elements_x", status, datatype, 1, count);
}

int PMPI_Status_set_elements(MPI_Status *status, MPI_Datatype datatype, int count) {
    GUARD("MPI_Status_set_elements");
    return bcs_status_set_elements("MPI_Status_set_elements", status, H(datatype), count);
}

int PMPI_Status_set_elements_c(MPI_Status *status, MPI_Datatype datatype, MPI_Count count) {
    GUARD("MPI_Status_set_elements_c");
    return bcs_status_set_elements("MPI_Status_set_elements_c", status, H(datatype), count);
}

int PMPI_Status_set_elements_x(MPI_Status *status, MPI_Datatype datatype, MPI_Count count) {
    GUARD("MPI_Status_set_elements_x");
    return bcs_status_set_elements("MPI_Status_set_elements_x", status, H(datatype), count);
}

int PMPI_Pack(const void *inbuf, int incount, MPI_Datatype datatype, void *outbuf, int outsize, int *position, MPI_Comm comm) {
    GUARD("MPI_Pack");
    MPI_Count pos = position ? *position : 0;
    int rc = bcs_pack("MPI_Pack", (void *)inbuf, incount, H(datatype), outbuf, outsize, position ? &pos : NULL, H(comm), 0);
    if (rc == MPI_SUCCESS)
        *position = (int)pos;
    return rc;
}

int PMPI_Unpack(const void *inbuf, int insize, int *position, void *outbuf, int outcount, MPI_Datatype datatype, MPI_Comm comm) {
    GUARD("MPI_Unpack");
    MPI_Count pos = position ? *position : 0;
    int rc = bcs_pack("MPI_Unpack", outbuf, outcount, H(datatype), (void *)inbuf, insize, position ? &pos : NULL, H(comm), 1);
    if (rc == MPI_SUCCESS)
        *position = (int)pos;
    return rc;
}

int PMPI_Pack_size(int incount, MPI_Datatype datatype, MPI_Comm comm, int *size) {
    GUARD("MPI_Pack_size");
    NONNULL(comm, "MPI_Pack_size", size);
    MPI_Count n;
    int rc = bcs_pack_size("MPI_Pack_size", incount, H(datatype), H(comm), &n);
    if (rc == MPI_SUCCESS)
        *size = n > 0x7fffffff ? MPI_UNDEFINED : (int)n;
    return rc;
}

int PMPI_Pack_c(const void *inbuf, MPI_Count incount, MPI_Datatype datatype, void *outbuf, MPI_Count outsize,
                MPI_Count *position, MPI_Comm comm) {
    GUARD("MPI_Pack_c");
    return bcs_pack("MPI_Pack_c", (void *)inbuf, incount, H(datatype), outbuf, outsize, position, H(comm), 0);
}

int PMPI_Unpack_c(const void *inbuf, MPI_Count insize, MPI_Count *position, void *outbuf, MPI_Count outcount,
                  MPI_Datatype datatype, MPI_Comm comm) {
    GUARD("MPI_Unpack_c");
    return bcs_pack("MPI_Unpack_c", outbuf, outcount, H(datatype), (void *)inbuf, insize, position, H(comm), 1);
}

int PMPI_Pack_size_c(MPI_Count incount, MPI_Datatype datatype, MPI_Comm comm, MPI_Count *size) {
    GUARD("MPI_Pack_size_c");
    NONNULL(comm, "MPI_Pack_size_c", size);
    return bcs_pack_size("MPI_Pack_size_c", incount, H(datatype), H(comm), size);
}

#define DW(name) _Pragma(BCS_DT_STR(weak MPI_##name = PMPI_##name))
#define BCS_DT_STR(x) #x
DW(Type_contiguous) DW(Type_vector) DW(Type_create_hvector) DW(Type_indexed) DW(Type_create_hindexed)
DW(Type_create_indexed_block) DW(Type_create_hindexed_block) DW(Type_create_struct) DW(Type_create_subarray)
DW(Type_create_resized) DW(Type_dup) DW(Type_create_darray) DW(Type_create_darray_c) DW(Type_contiguous_c) DW(Type_vector_c) DW(Type_create_hvector_c) DW(Type_indexed_c)
DW(Type_create_hindexed_c) DW(Type_create_indexed_block_c) DW(Type_create_hindexed_block_c) DW(Type_create_struct_c)
DW(Type_create_subarray_c) DW(Type_create_resized_c) DW(Type_commit) DW(Type_free)
DW(Type_size_x) DW(Type_get_extent_c) DW(Type_get_extent_x) DW(Type_get_true_extent) DW(Type_get_true_extent_c)
DW(Type_get_true_extent_x) DW(Type_set_name) DW(Type_get_envelope) DW(Type_get_envelope_c) DW(Type_get_contents)
DW(Type_get_contents_c) DW(Get_count_c) DW(Get_elements_c) DW(Get_elements_x)
DW(Status_set_elements) DW(Status_set_elements_c) DW(Status_set_elements_x)
DW(Pack) DW(Unpack) DW(Pack_size) DW(Pack_c) DW(Unpack_c) DW(Pack_size_c)

// ---- Point to point ----

int PMPI_Send(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm) {
    GUARD("MPI_Send");
    return bcs_send((void *)buf, count, H(datatype), dest, tag, H(comm), 0);
}

int PMPI_Recv(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm, MPI_Status *status) {
    GUARD("MPI_Recv");
    return bcs_recv(buf, count, H(datatype), source, tag, H(comm), status, 0);
}

int PMPI_Isend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm, MPI_Request *request) {
    GUARD("MPI_Isend");
    NONNULL(comm, "MPI_Isend", request);
    return bcs_isend((void *)buf, count, H(datatype), dest, tag, H(comm), (uintptr_t *)request, 0);
}

int PMPI_Irecv(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm, MPI_Request *request) {
    GUARD("MPI_Irecv");
    NONNULL(comm, "MPI_Irecv", request);
    return bcs_irecv(buf, count, H(datatype), source, tag, H(comm), (uintptr_t *)request, 0);
}

int PMPI_Sendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
                  void *recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag,
                  MPI_Comm comm, MPI_Status *status) {
    GUARD("MPI_Sendrecv");
    return bcs_sendrecv((void *)sendbuf, sendcount, H(sendtype), dest, sendtag, recvbuf, recvcount,
                        H(recvtype), source, recvtag, H(comm), status, 0);
}

// A ready send may be a standard send: the standard allows it, and the
// runtime gains nothing from knowing the receive is posted.
int PMPI_Rsend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm) {
    GUARD("MPI_Rsend");
    return bcs_send((void *)buf, count, H(datatype), dest, tag, H(comm), 0);
}

int PMPI_Irsend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm, MPI_Request *request) {
    GUARD("MPI_Irsend");
    NONNULL(comm, "MPI_Irsend", request);
    return bcs_isend((void *)buf, count, H(datatype), dest, tag, H(comm), (uintptr_t *)request, 0);
}

int PMPI_Bsend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm) {
    GUARD("MPI_Bsend");
    return bcs_bsend((void *)buf, count, H(datatype), dest, tag, H(comm), NULL, 0);
}

int PMPI_Ibsend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm, MPI_Request *request) {
    GUARD("MPI_Ibsend");
    if (request == NULL)
        return bcs_null_arg(H(comm), "MPI_Ibsend", "request = NULL");
    return bcs_bsend((void *)buf, count, H(datatype), dest, tag, H(comm), (uintptr_t *)request, 0);
}

int PMPI_Buffer_attach(void *buffer, int size) {
    GUARD("MPI_Buffer_attach");
    return bcs_buffer_attach(buffer, size, 0);
}

int PMPI_Buffer_detach(void *buffer_addr, int *size) {
    GUARD("MPI_Buffer_detach");
    MPI_Count n;
    int rc = bcs_buffer_detach((void **)buffer_addr, size ? &n : NULL, 0);
    if (rc == MPI_SUCCESS)
        *size = (int)n; // at most INT_MAX: a larger buffer is refused
    return rc;
}

int PMPI_Sendrecv_replace(void *buf, int count, MPI_Datatype datatype, int dest, int sendtag, int source, int recvtag,
                          MPI_Comm comm, MPI_Status *status) {
    GUARD("MPI_Sendrecv_replace");
    return bcs_sendrecv_replace(buf, count, H(datatype), dest, sendtag, source, recvtag, H(comm), status, 0);
}

int PMPI_Send_init(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm, MPI_Request *request) {
    GUARD("MPI_Send_init");
    return bcs_send_init((void *)buf, count, H(datatype), dest, tag, H(comm), (uintptr_t *)request, 0);
}

int PMPI_Recv_init(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm, MPI_Request *request) {
    GUARD("MPI_Recv_init");
    return bcs_recv_init(buf, count, H(datatype), source, tag, H(comm), (uintptr_t *)request, 0);
}

int PMPI_Start(MPI_Request *request) {
    GUARD("MPI_Start");
    return bcs_startall(-1, (uintptr_t *)request); // one request, named MPI_Start
}

int PMPI_Startall(int count, MPI_Request array_of_requests[]) {
    GUARD("MPI_Startall");
    return bcs_startall(count, (uintptr_t *)array_of_requests);
}

int PMPI_Get_address(const void *location, MPI_Aint *address) {
    *address = (MPI_Aint)location;
    return MPI_SUCCESS;
}

MPI_Aint PMPI_Aint_add(MPI_Aint base, MPI_Aint disp) { return base + disp; }
MPI_Aint PMPI_Aint_diff(MPI_Aint addr1, MPI_Aint addr2) { return addr1 - addr2; }

int PMPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status *status) {
    GUARD("MPI_Probe");
    return bcs_probe(source, tag, H(comm), status);
}

int PMPI_Iprobe(int source, int tag, MPI_Comm comm, int *flag, MPI_Status *status) {
    GUARD("MPI_Iprobe");
    NONNULL(comm, "MPI_Iprobe", flag);
    return bcs_iprobe(source, tag, H(comm), flag, status);
}

int PMPI_Wait(MPI_Request *request, MPI_Status *status) {
    GUARD("MPI_Wait");
    NONNULL(MPI_COMM_WORLD, "MPI_Wait", request);
    return bcs_wait((uintptr_t *)request, status);
}

int PMPI_Waitall(int count, MPI_Request array_of_requests[], MPI_Status array_of_statuses[]) {
    GUARD("MPI_Waitall");
    return bcs_waitall(count, (uintptr_t *)array_of_requests, array_of_statuses);
}

int PMPI_Waitany(int count, MPI_Request array_of_requests[], int *index, MPI_Status *status) {
    GUARD("MPI_Waitany");
    NONNULL(MPI_COMM_WORLD, "MPI_Waitany", index);
    return bcs_waitany(count, (uintptr_t *)array_of_requests, index, status);
}

int PMPI_Test(MPI_Request *request, int *flag, MPI_Status *status) {
    GUARD("MPI_Test");
    NONNULL(MPI_COMM_WORLD, "MPI_Test", request);
    NONNULL(MPI_COMM_WORLD, "MPI_Test", flag);
    return bcs_test((uintptr_t *)request, flag, status);
}

int PMPI_Testall(int count, MPI_Request array_of_requests[], int *flag, MPI_Status array_of_statuses[]) {
    GUARD("MPI_Testall");
    NONNULL(MPI_COMM_WORLD, "MPI_Testall", flag);
    return bcs_testall(count, (uintptr_t *)array_of_requests, flag, array_of_statuses);
}

int PMPI_Testany(int count, MPI_Request array_of_requests[], int *index, int *flag, MPI_Status *status) {
    GUARD("MPI_Testany");
    NONNULL(MPI_COMM_WORLD, "MPI_Testany", index);
    NONNULL(MPI_COMM_WORLD, "MPI_Testany", flag);
    return bcs_testany(count, (uintptr_t *)array_of_requests, index, flag, status);
}

int PMPI_Waitsome(int incount, MPI_Request array_of_requests[], int *outcount, int array_of_indices[],
                  MPI_Status array_of_statuses[]) {
    GUARD("MPI_Waitsome");
    NONNULL(MPI_COMM_WORLD, "MPI_Waitsome", outcount);
    if (incount > 0)
        NONNULL(MPI_COMM_WORLD, "MPI_Waitsome", array_of_indices);
    return bcs_waitsome(incount, (uintptr_t *)array_of_requests, outcount, array_of_indices, array_of_statuses);
}

int PMPI_Testsome(int incount, MPI_Request array_of_requests[], int *outcount, int array_of_indices[],
                  MPI_Status array_of_statuses[]) {
    GUARD("MPI_Testsome");
    NONNULL(MPI_COMM_WORLD, "MPI_Testsome", outcount);
    if (incount > 0)
        NONNULL(MPI_COMM_WORLD, "MPI_Testsome", array_of_indices);
    return bcs_testsome(incount, (uintptr_t *)array_of_requests, outcount, array_of_indices, array_of_statuses);
}

int PMPI_Request_free(MPI_Request *request) {
    GUARD("MPI_Request_free");
    NONNULL(MPI_COMM_WORLD, "MPI_Request_free", request);
    return bcs_request_free((uintptr_t *)request);
}

// MPI_Pcontrol is for profiling libraries; bcsmpi itself does nothing.
int PMPI_Pcontrol(const int level, ...) {
    (void)level;
    return MPI_SUCCESS;
}

// ---- Operations ----

int PMPI_Op_create(MPI_User_function *user_fn, int commute, MPI_Op *op) {
    GUARD("MPI_Op_create");
    return bcs_op_create((void *)user_fn, commute, (uintptr_t *)op);
}

int PMPI_Op_free(MPI_Op *op) {
    GUARD("MPI_Op_free");
    return bcs_op_free((uintptr_t *)op);
}

int PMPI_Op_commutative(MPI_Op op, int *commute) {
    GUARD("MPI_Op_commutative");
    NONNULL(MPI_COMM_WORLD, "MPI_Op_commutative", commute);
    return bcs_op_commutative(H(op), commute);
}

// bcs_call_op applies a user operation (Go cannot call C function pointers).
void bcs_call_op(void *fn, void *in, void *inout, int *len, uintptr_t datatype) {
    if (bcs_op_is_large(fn)) { // from MPI_Op_create_c (shim_large.c)
        bcs_call_op_c(fn, in, inout, len, datatype);
        return;
    }
    MPI_Datatype t = (MPI_Datatype)datatype;
    ((MPI_User_function *)fn)(in, inout, len, &t);
}

// bcs_fn_identity writes what a user function is on every rank running
// the same program, wherever ASLR loaded it: its symbol when the dynamic
// symbol table names exactly this address, else its object file's base
// name and its offset in that file. It returns 0 when no loaded file holds
// the address (code made at run time: a JIT's or libffi's trampolines), whose
// address differs on every rank; the caller then names it otherwise.
int bcs_fn_identity(void *fn, char *buf, int n) {
    Dl_info info;
    if (dladdr(fn, &info) && info.dli_fname != NULL) {
        const char *base = strrchr(info.dli_fname, '/');
        base = base ? base + 1 : info.dli_fname;
        if (info.dli_sname != NULL && info.dli_saddr == fn)
            snprintf(buf, n, "%s in %s", info.dli_sname, base);
        else
            snprintf(buf, n, "%s+%#lx", base, (unsigned long)((char *)fn - (char *)info.dli_fbase));
        return 1;
    }
    return 0;
}

// ---- Cartesian topologies ----

int PMPI_Dims_create(int nnodes, int ndims, int dims[]) {
    GUARD("MPI_Dims_create");
    return bcs_dims_create(nnodes, ndims, dims);
}

int PMPI_Cart_create(MPI_Comm comm_old, int ndims, const int dims[], const int periods[], int reorder, MPI_Comm *comm_cart) {
    GUARD("MPI_Cart_create");
    (void)reorder; // ranks keep their order: the standard allows it
    return bcs_cart_create(H(comm_old), ndims, (int *)dims, (int *)periods, (uintptr_t *)comm_cart);
}

int PMPI_Cart_get(MPI_Comm comm, int maxdims, int dims[], int periods[], int coords[]) {
    GUARD("MPI_Cart_get");
    return bcs_cart_get(H(comm), maxdims, dims, periods, coords);
}

int PMPI_Cartdim_get(MPI_Comm comm, int *ndims) {
    GUARD("MPI_Cartdim_get");
    return bcs_cartdim_get(H(comm), ndims);
}

int PMPI_Cart_coords(MPI_Comm comm, int rank, int maxdims, int coords[]) {
    GUARD("MPI_Cart_coords");
    return bcs_cart_coords(H(comm), rank, maxdims, coords);
}

int PMPI_Cart_rank(MPI_Comm comm, const int coords[], int *rank) {
    GUARD("MPI_Cart_rank");
    return bcs_cart_rank(H(comm), (int *)coords, rank);
}

int PMPI_Cart_shift(MPI_Comm comm, int direction, int disp, int *rank_source, int *rank_dest) {
    GUARD("MPI_Cart_shift");
    return bcs_cart_shift(H(comm), direction, disp, rank_source, rank_dest);
}

int PMPI_Cart_sub(MPI_Comm comm, const int remain_dims[], MPI_Comm *newcomm) {
    GUARD("MPI_Cart_sub");
    return bcs_cart_sub(H(comm), (int *)remain_dims, (uintptr_t *)newcomm);
}

int PMPI_Comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info info, MPI_Comm *newcomm) {
    GUARD("MPI_Comm_split_type");
    return bcs_comm_split_type(H(comm), split_type, key, H(info), (uintptr_t *)newcomm);
}

int PMPI_Topo_test(MPI_Comm comm, int *status) {
    GUARD("MPI_Topo_test");
    NONNULL(comm, "MPI_Topo_test", status);
    return bcs_topo_test(H(comm), status);
}

// ---- Groups ----

int PMPI_Comm_group(MPI_Comm comm, MPI_Group *group) {
    GUARD("MPI_Comm_group");
    NONNULL(comm, "MPI_Comm_group", group);
    return bcs_comm_group(H(comm), (uintptr_t *)group);
}

int PMPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm *newcomm) {
    GUARD("MPI_Comm_create");
    NONNULL(comm, "MPI_Comm_create", newcomm);
    return bcs_comm_create(H(comm), H(group), (uintptr_t *)newcomm);
}

int PMPI_Group_size(MPI_Group group, int *size) {
    GUARD("MPI_Group_size");
    NONNULL(MPI_COMM_WORLD, "MPI_Group_size", size);
    return bcs_group_size(H(group), size);
}

int PMPI_Group_rank(MPI_Group group, int *rank) {
    GUARD("MPI_Group_rank");
    NONNULL(MPI_COMM_WORLD, "MPI_Group_rank", rank);
    return bcs_group_rank(H(group), rank);
}

int PMPI_Group_free(MPI_Group *group) {
    GUARD("MPI_Group_free");
    return bcs_group_free((uintptr_t *)group);
}

int PMPI_Group_incl(MPI_Group group, int n, const int ranks[], MPI_Group *newgroup) {
    GUARD("MPI_Group_incl");
    NONNULL(MPI_COMM_WORLD, "MPI_Group_incl", newgroup);
    return bcs_group_incl(H(group), n, (int *)ranks, (uintptr_t *)newgroup, 0);
}

int PMPI_Group_excl(MPI_Group group, int n, const int ranks[], MPI_Group *newgroup) {
    GUARD("MPI_Group_excl");
    NONNULL(MPI_COMM_WORLD, "MPI_Group_excl", newgroup);
    return bcs_group_incl(H(group), n, (int *)ranks, (uintptr_t *)newgroup, 1);
}

int PMPI_Group_translate_ranks(MPI_Group group1, int n, const int ranks1[], MPI_Group group2, int ranks2[]) {
    GUARD("MPI_Group_translate_ranks");
    return bcs_group_translate_ranks(H(group1), n, (int *)ranks1, H(group2), ranks2);
}

int PMPI_Group_compare(MPI_Group group1, MPI_Group group2, int *result) {
    GUARD("MPI_Group_compare");
    NONNULL(MPI_COMM_WORLD, "MPI_Group_compare", result);
    return bcs_group_compare(H(group1), H(group2), result);
}

int PMPI_Group_union(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup) {
    GUARD("MPI_Group_union");
    return bcs_group_setop(0, H(group1), H(group2), (uintptr_t *)newgroup);
}

int PMPI_Group_intersection(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup) {
    GUARD("MPI_Group_intersection");
    return bcs_group_setop(1, H(group1), H(group2), (uintptr_t *)newgroup);
}

int PMPI_Group_difference(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup) {
    GUARD("MPI_Group_difference");
    return bcs_group_setop(2, H(group1), H(group2), (uintptr_t *)newgroup);
}

// ---- Collectives ----
// Each blocking collective passes a NULL request; its non-blocking form
// passes the caller's, checked here.

#define NB_REQ(call, comm, request)                                                   \
    do {                                                                              \
        if ((request) == NULL)                                                        \
            return bcs_null_arg(H(comm), call, "request = NULL");                     \
    } while (0)
#define R(request) ((uintptr_t *)(request))

int PMPI_Barrier(MPI_Comm comm) {
    GUARD("MPI_Barrier");
    return bcs_barrier(H(comm), NULL, 0);
}

int PMPI_Ibarrier(MPI_Comm comm, MPI_Request *request) {
    GUARD("MPI_Ibarrier");
    NB_REQ("MPI_Ibarrier", comm, request);
    return bcs_barrier(H(comm), R(request), 0);
}

int PMPI_Bcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm) {
    GUARD("MPI_Bcast");
    return bcs_bcast(buffer, count, H(datatype), root, H(comm), NULL, 0);
}

int PMPI_Ibcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm, MPI_Request *request) {
    GUARD("MPI_Ibcast");
    NB_REQ("MPI_Ibcast", comm, request);
    return bcs_bcast(buffer, count, H(datatype), root, H(comm), R(request), 0);
}

#define REDUCE(name, which, params, n, counts, root, argsreq, req)                    \
    int PMPI_##name params {                                                          \
        GUARD("MPI_" #name);                                                          \
        argsreq;                                                                      \
        return bcs_reduce(which, (void *)sendbuf, recvbuf, n, (void *)(counts),       \
                          H(datatype), H(op), root, H(comm), req, 0);                 \
    }

REDUCE(Reduce, BCS_REDUCE, (const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm),
       count, NULL, root, , NULL)
REDUCE(Ireduce, BCS_REDUCE, (const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm, MPI_Request *request),
       count, NULL, root, NB_REQ("MPI_Ireduce", comm, request), R(request))
REDUCE(Allreduce, BCS_ALLREDUCE, (const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm),
       count, NULL, 0, , NULL)
REDUCE(Iallreduce, BCS_ALLREDUCE, (const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request),
       count, NULL, 0, NB_REQ("MPI_Iallreduce", comm, request), R(request))
REDUCE(Scan, BCS_SCAN, (const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm),
       count, NULL, 0, , NULL)
REDUCE(Iscan, BCS_SCAN, (const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request),
       count, NULL, 0, NB_REQ("MPI_Iscan", comm, request), R(request))
REDUCE(Exscan, BCS_EXSCAN, (const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm),
       count, NULL, 0, , NULL)
REDUCE(Iexscan, BCS_EXSCAN, (const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request),
       count, NULL, 0, NB_REQ("MPI_Iexscan", comm, request), R(request))
REDUCE(Reduce_scatter_block, BCS_REDUCE_SCATTER_BLOCK, (const void *sendbuf, void *recvbuf, int recvcount, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm),
       recvcount, NULL, 0, , NULL)
REDUCE(Ireduce_scatter_block, BCS_REDUCE_SCATTER_BLOCK, (const void *sendbuf, void *recvbuf, int recvcount, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request),
       recvcount, NULL, 0, NB_REQ("MPI_Ireduce_scatter_block", comm, request), R(request))
REDUCE(Reduce_scatter, BCS_REDUCE_SCATTER, (const void *sendbuf, void *recvbuf, const int recvcounts[], MPI_Datatype datatype, MPI_Op op, MPI_Comm comm),
       0, recvcounts, 0, , NULL)
REDUCE(Ireduce_scatter, BCS_REDUCE_SCATTER, (const void *sendbuf, void *recvbuf, const int recvcounts[], MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request),
       0, recvcounts, 0, NB_REQ("MPI_Ireduce_scatter", comm, request), R(request))

#define BLOCKS(name, which, params, root, argsreq, req)                               \
    int PMPI_##name params {                                                          \
        GUARD("MPI_" #name);                                                          \
        argsreq;                                                                      \
        return bcs_blocks(which, (void *)sendbuf, sendcount, H(sendtype), recvbuf,    \
                          recvcount, H(recvtype), root, H(comm), req, 0);             \
    }
#define BLOCK_PARAMS const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype

BLOCKS(Gather, BCS_GATHER, (BLOCK_PARAMS, int root, MPI_Comm comm), root, , NULL)
BLOCKS(Igather, BCS_GATHER, (BLOCK_PARAMS, int root, MPI_Comm comm, MPI_Request *request), root,
       NB_REQ("MPI_Igather", comm, request), R(request))
BLOCKS(Scatter, BCS_SCATTER, (BLOCK_PARAMS, int root, MPI_Comm comm), root, , NULL)
BLOCKS(Iscatter, BCS_SCATTER, (BLOCK_PARAMS, int root, MPI_Comm comm, MPI_Request *request), root,
       NB_REQ("MPI_Iscatter", comm, request), R(request))
BLOCKS(Allgather, BCS_ALLGATHER, (BLOCK_PARAMS, MPI_Comm comm), 0, , NULL)
BLOCKS(Iallgather, BCS_ALLGATHER, (BLOCK_PARAMS, MPI_Comm comm, MPI_Request *request), 0,
       NB_REQ("MPI_Iallgather", comm, request), R(request))
BLOCKS(Alltoall, BCS_ALLTOALL, (BLOCK_PARAMS, MPI_Comm comm), 0, , NULL)
BLOCKS(Ialltoall, BCS_ALLTOALL, (BLOCK_PARAMS, MPI_Comm comm, MPI_Request *request), 0,
       NB_REQ("MPI_Ialltoall", comm, request), R(request))

#define VBLOCKS(name, which, params, scount, scounts, sdispls, rcount, rcounts, rdispls, root, argsreq, req) \
    int PMPI_##name params {                                                                            \
        GUARD("MPI_" #name);                                                                            \
        argsreq;                                                                                        \
        return bcs_vblocks(which, (void *)sendbuf, scount, (void *)(scounts), (void *)(sdispls),        \
                           H(sendtype), recvbuf, rcount, (void *)(rcounts), (void *)(rdispls),          \
                           H(recvtype), root, H(comm), req, 0);                                         \
    }
#define GATHERV_PARAMS const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, \
                       const int recvcounts[], const int displs[], MPI_Datatype recvtype
#define SCATTERV_PARAMS const void *sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype, \
                        void *recvbuf, int recvcount, MPI_Datatype recvtype
#define ALLTOALLV_PARAMS const void *sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype, \
                         void *recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype

VBLOCKS(Gatherv, BCS_GATHERV, (GATHERV_PARAMS, int root, MPI_Comm comm),
        sendcount, NULL, NULL, 0, recvcounts, displs, root, , NULL)
VBLOCKS(Igatherv, BCS_GATHERV, (GATHERV_PARAMS, int root, MPI_Comm comm, MPI_Request *request),
        sendcount, NULL, NULL, 0, recvcounts, displs, root, NB_REQ("MPI_Igatherv", comm, request), R(request))
VBLOCKS(Scatterv, BCS_SCATTERV, (SCATTERV_PARAMS, int root, MPI_Comm comm),
        0, sendcounts, displs, recvcount, NULL, NULL, root, , NULL)
VBLOCKS(Iscatterv, BCS_SCATTERV, (SCATTERV_PARAMS, int root, MPI_Comm comm, MPI_Request *request),
        0, sendcounts, displs, recvcount, NULL, NULL, root, NB_REQ("MPI_Iscatterv", comm, request), R(request))
VBLOCKS(Allgatherv, BCS_ALLGATHERV, (GATHERV_PARAMS, MPI_Comm comm),
        sendcount, NULL, NULL, 0, recvcounts, displs, 0, , NULL)
VBLOCKS(Iallgatherv, BCS_ALLGATHERV, (GATHERV_PARAMS, MPI_Comm comm, MPI_Request *request),
        sendcount, NULL, NULL, 0, recvcounts, displs, 0, NB_REQ("MPI_Iallgatherv", comm, request), R(request))
VBLOCKS(Alltoallv, BCS_ALLTOALLV, (ALLTOALLV_PARAMS, MPI_Comm comm),
        0, sendcounts, sdispls, 0, recvcounts, rdispls, 0, , NULL)
VBLOCKS(Ialltoallv, BCS_ALLTOALLV, (ALLTOALLV_PARAMS, MPI_Comm comm, MPI_Request *request),
        0, sendcounts, sdispls, 0, recvcounts, rdispls, 0, NB_REQ("MPI_Ialltoallv", comm, request), R(request))

// ---- MPI_X: weak aliases of PMPI_X ----
#define W(name) _Pragma(BCS_STR(weak MPI_##name = PMPI_##name))
#define BCS_STR(x) #x
W(Init) W(Init_thread) W(Initialized) W(Finalized) W(Finalize) W(Query_thread) W(Is_thread_main)
W(Abort) W(Get_version) W(Abi_get_version) W(Get_library_version) W(Get_processor_name)
W(Wtime) W(Wtick) W(Error_class) W(Error_string)
W(Comm_rank) W(Comm_size) W(Comm_dup) W(Comm_split) W(Comm_free) W(Comm_compare) W(Comm_get_attr) W(Comm_set_name) W(Comm_get_name)
W(Comm_set_errhandler) W(Comm_get_errhandler) W(Errhandler_free) W(Comm_create_errhandler) W(Comm_call_errhandler)
W(Type_size) W(Type_size_c) W(Type_get_extent) W(Type_get_name) W(Get_count) W(Get_elements)
W(Send) W(Recv) W(Isend) W(Irecv) W(Sendrecv) W(Probe) W(Iprobe)
W(Rsend) W(Irsend) W(Bsend) W(Ibsend) W(Buffer_attach) W(Buffer_detach) W(Sendrecv_replace) W(Send_init) W(Recv_init) W(Start) W(Startall)
W(Get_address) W(Aint_add) W(Aint_diff)
W(Wait) W(Waitall) W(Waitany) W(Test) W(Testall) W(Testany) W(Waitsome) W(Testsome) W(Request_free) W(Pcontrol)
W(Op_create) W(Op_free) W(Op_commutative)
W(Dims_create) W(Cart_create) W(Cart_get) W(Cartdim_get) W(Cart_coords) W(Cart_rank) W(Cart_shift) W(Cart_sub) W(Topo_test) W(Comm_split_type)
W(Comm_group) W(Comm_create) W(Group_size) W(Group_rank) W(Group_free) W(Group_incl) W(Group_excl)
W(Group_translate_ranks) W(Group_compare) W(Group_union) W(Group_intersection) W(Group_difference)
W(Barrier) W(Ibarrier) W(Bcast) W(Ibcast) W(Reduce) W(Ireduce) W(Allreduce) W(Iallreduce)
W(Scan) W(Iscan) W(Exscan) W(Iexscan) W(Reduce_scatter) W(Ireduce_scatter)
W(Reduce_scatter_block) W(Ireduce_scatter_block)
W(Gather) W(Igather) W(Scatter) W(Iscatter) W(Allgather) W(Iallgather) W(Alltoall) W(Ialltoall)
W(Gatherv) W(Igatherv) W(Scatterv) W(Iscatterv) W(Allgatherv) W(Iallgatherv) W(Alltoallv) W(Ialltoallv)

// ---- The rest of the ABI (abi11): stubs' error path, handle conversion,
// status accessors, an empty tool interface ----

// bcs_unsupported is the body of every stub (shim_stubs.c).
int bcs_unsupported(uintptr_t comm, const char *call) {
    GUARD(call);
    char msg[256];
    snprintf(msg, sizeof msg, "%s is not implemented by bcsmpi (it links so that programs that "
                              "never call it run; see cabi/doc.go for what is implemented)", call);
    return bcs_error(comm, (char *)call, MPI_ERR_UNSUPPORTED_OPERATION, msg);
}

// MPI_T functions never invoke an error handler; they return the class.
int bcs_unsupported_t(const char *call) {
    (void)call;
    return MPI_ERR_UNSUPPORTED_OPERATION;
}

// Handles as ints: predefined handles keep their value; a handle this
// library made becomes kind<<24 | index and comes back with the slot's
// current generation (bcs_fromint).
#define TOINT(T, CT)                                                                \
    int PMPI_##T##_toint(CT h) { return bcs_toint(H(h)); }                          \
    CT PMPI_##T##_fromint(int i) { return (CT)bcs_fromint(i); }
TOINT(Comm, MPI_Comm) TOINT(Errhandler, MPI_Errhandler) TOINT(File, MPI_File) TOINT(Group, MPI_Group)
TOINT(Info, MPI_Info) TOINT(Message, MPI_Message) TOINT(Op, MPI_Op) TOINT(Request, MPI_Request)
TOINT(Session, MPI_Session) TOINT(Type, MPI_Datatype) TOINT(Win, MPI_Win)
#undef TOINT

int PMPI_Status_get_source(const MPI_Status *status, int *source) { *source = status->MPI_SOURCE; return MPI_SUCCESS; }
int PMPI_Status_get_tag(const MPI_Status *status, int *tag) { *tag = status->MPI_TAG; return MPI_SUCCESS; }
int PMPI_Status_get_error(const MPI_Status *status, int *error) { *error = status->MPI_ERROR; return MPI_SUCCESS; }
int PMPI_Status_set_source(MPI_Status *status, int source) { status->MPI_SOURCE = source; return MPI_SUCCESS; }
int PMPI_Status_set_tag(MPI_Status *status, int tag) { status->MPI_TAG = tag; return MPI_SUCCESS; }
int PMPI_Status_set_error(MPI_Status *status, int error) { status->MPI_ERROR = error; return MPI_SUCCESS; }
int PMPI_Status_set_cancelled(MPI_Status *status, int flag) { status->MPI_internal[2] = flag != 0; return MPI_SUCCESS; }
int PMPI_Test_cancelled(const MPI_Status *status, int *flag) { *flag = status->MPI_internal[2] != 0; return MPI_SUCCESS; }

// The tool information interface is in shim_mpit.c and mpit.go.

W(Comm_toint) W(Comm_fromint) W(Errhandler_toint) W(Errhandler_fromint) W(File_toint) W(File_fromint)
W(Group_toint) W(Group_fromint) W(Info_toint) W(Info_fromint) W(Message_toint) W(Message_fromint)
W(Op_toint) W(Op_fromint) W(Request_toint) W(Request_fromint) W(Session_toint) W(Session_fromint)
W(Type_toint) W(Type_fromint) W(Win_toint) W(Win_fromint)
W(Status_get_source) W(Status_get_tag) W(Status_get_error) W(Status_set_source) W(Status_set_tag)
W(Status_set_error) W(Status_set_cancelled) W(Test_cancelled)

// Info objects (info.go).
int PMPI_Info_create(MPI_Info *info) { GUARD("MPI_Info_create"); return bcs_info_create((uintptr_t *)info); }
int PMPI_Info_create_env(int argc, char *argv[], MPI_Info *info) {
    (void)argc, (void)argv;
    GUARD("MPI_Info_create_env");
    return bcs_info_create_env((uintptr_t *)info);
}
int PMPI_Info_set(MPI_Info info, const char *key, const char *value) {
    GUARD("MPI_Info_set");
    return bcs_info_set(H(info), (char *)key, (char *)value);
}
int PMPI_Info_get_string(MPI_Info info, const char *key, int *buflen, char *value, int *flag) {
    GUARD("MPI_Info_get_string");
    if (buflen == NULL)
        return bcs_error(H(MPI_COMM_WORLD), "MPI_Info_get_string", MPI_ERR_ARG, "buflen = NULL");
    return bcs_info_get(H(info), (char *)key, 0, buflen, value, flag);
}
int PMPI_Info_get(MPI_Info info, const char *key, int valuelen, char *value, int *flag) {
    GUARD("MPI_Info_get");
    return bcs_info_get(H(info), (char *)key, valuelen, NULL, value, flag);
}
int PMPI_Info_get_valuelen(MPI_Info info, const char *key, int *valuelen, int *flag) {
    GUARD("MPI_Info_get_valuelen");
    return bcs_info_get_valuelen(H(info), (char *)key, valuelen, flag);
}
int PMPI_Info_delete(MPI_Info info, const char *key) {
    GUARD("MPI_Info_delete");
    return bcs_info_delete(H(info), (char *)key);
}
int PMPI_Info_get_nkeys(MPI_Info info, int *nkeys) { GUARD("MPI_Info_get_nkeys"); NONNULL0("MPI_Info_get_nkeys", nkeys); return bcs_info_get_nkeys(H(info), nkeys); }
int PMPI_Info_get_nthkey(MPI_Info info, int n, char *key) { GUARD("MPI_Info_get_nthkey"); return bcs_info_get_nthkey(H(info), n, key); }
int PMPI_Info_dup(MPI_Info info, MPI_Info *newinfo) { GUARD("MPI_Info_dup"); NONNULL0("MPI_Info_dup", newinfo); return bcs_info_dup(H(info), (uintptr_t *)newinfo); }
int PMPI_Info_free(MPI_Info *info) { GUARD("MPI_Info_free"); return bcs_info_free((uintptr_t *)info); }
int PMPI_Comm_set_info(MPI_Comm comm, MPI_Info info) { GUARD("MPI_Comm_set_info"); return bcs_comm_set_info(H(comm), H(info)); }
int PMPI_Comm_get_info(MPI_Comm comm, MPI_Info *info_used) {
    GUARD("MPI_Comm_get_info");
    NONNULL(comm, "MPI_Comm_get_info", info_used);
    return bcs_comm_get_info(H(comm), (uintptr_t *)info_used);
}
int PMPI_Comm_dup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm) {
    GUARD("MPI_Comm_dup_with_info");
    return bcs_comm_dup_with_info(H(comm), H(info), (uintptr_t *)newcomm); // the arguments checked there (dupArgs)
}
W(Info_create) W(Info_create_env) W(Info_set) W(Info_get_string) W(Info_get) W(Info_get_valuelen) W(Info_delete)
W(Info_get_nkeys) W(Info_get_nthkey) W(Info_dup) W(Info_free) W(Comm_set_info) W(Comm_get_info) W(Comm_dup_with_info)

// Synchronous sends, cancel and matched probes (sync.go).
int PMPI_Ssend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm) {
    GUARD("MPI_Ssend");
    return bcs_ssend((void *)buf, count, H(datatype), dest, tag, H(comm), NULL, 0);
}
int PMPI_Issend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm, MPI_Request *request) {
    GUARD("MPI_Issend");
    if (request == NULL)
        return bcs_null_arg(H(comm), "MPI_Issend", "request = NULL");
    return bcs_ssend((void *)buf, count, H(datatype), dest, tag, H(comm), (uintptr_t *)request, 0);
}
int PMPI_Ssend_init(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                    MPI_Request *request) {
    GUARD("MPI_Ssend_init");
    return bcs_ssend_init((void *)buf, count, H(datatype), dest, tag, H(comm), (uintptr_t *)request, 0);
}
int PMPI_Cancel(MPI_Request *request) { GUARD("MPI_Cancel"); return bcs_cancel((uintptr_t *)request); }
int PMPI_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message *message, MPI_Status *status) {
    GUARD("MPI_Mprobe");
    return bcs_mprobe(source, tag, H(comm), NULL, (uintptr_t *)message, status);
}
int PMPI_Improbe(int source, int tag, MPI_Comm comm, int *flag, MPI_Message *message, MPI_Status *status) {
    GUARD("MPI_Improbe");
    if (flag == NULL)
        return bcs_null_arg(H(comm), "MPI_Improbe", "flag = NULL");
    return bcs_mprobe(source, tag, H(comm), flag, (uintptr_t *)message, status);
}
int PMPI_Mrecv(void *buf, int count, MPI_Datatype datatype, MPI_Message *message, MPI_Status *status) {
    GUARD("MPI_Mrecv");
    return bcs_mrecv(buf, count, H(datatype), (uintptr_t *)message, status, NULL, 0);
}
int PMPI_Imrecv(void *buf, int count, MPI_Datatype datatype, MPI_Message *message, MPI_Request *request) {
    GUARD("MPI_Imrecv");
    if (request == NULL)
        return bcs_null_arg(H(MPI_COMM_WORLD), "MPI_Imrecv", "request = NULL");
    return bcs_mrecv(buf, count, H(datatype), (uintptr_t *)message, NULL, (uintptr_t *)request, 0);
}
W(Ssend) W(Issend) W(Ssend_init) W(Cancel) W(Mprobe) W(Improbe) W(Mrecv) W(Imrecv)

// Attributes with user keyvals (attr.go): the callbacks are called here.
int bcs_call_copy_attr(void *fn, uintptr_t comm, int keyval, void *extra, void *in, void **out, int *flag) {
    return ((MPI_Comm_copy_attr_function *)fn)((MPI_Comm)comm, keyval, extra, in, (void *)out, flag);
}
int bcs_call_delete_attr(void *fn, uintptr_t comm, int keyval, void *val, void *extra) {
    return ((MPI_Comm_delete_attr_function *)fn)((MPI_Comm)comm, keyval, val, extra);
}
int PMPI_Comm_create_keyval(MPI_Comm_copy_attr_function *comm_copy_attr_fn,
                            MPI_Comm_delete_attr_function *comm_delete_attr_fn, int *comm_keyval, void *extra_state) {
    GUARD("MPI_Comm_create_keyval");
    return bcs_comm_create_keyval((void *)comm_copy_attr_fn, (void *)comm_delete_attr_fn, comm_keyval, extra_state);
}
int PMPI_Comm_free_keyval(int *comm_keyval) { GUARD("MPI_Comm_free_keyval"); return bcs_comm_free_keyval(comm_keyval); }
int PMPI_Comm_set_attr(MPI_Comm comm, int comm_keyval, void *attribute_val) {
    GUARD("MPI_Comm_set_attr");
    return bcs_comm_set_attr(H(comm), comm_keyval, attribute_val);
}
int PMPI_Comm_delete_attr(MPI_Comm comm, int comm_keyval) {
    GUARD("MPI_Comm_delete_attr");
    return bcs_comm_delete_attr(H(comm), comm_keyval);
}
// The deprecated names (MPI-1) with the same meaning.
int PMPI_Keyval_create(MPI_Copy_function *copy_fn, MPI_Delete_function *delete_fn, int *keyval, void *extra_state) {
    return PMPI_Comm_create_keyval(copy_fn, delete_fn, keyval, extra_state);
}
int PMPI_Keyval_free(int *keyval) { return PMPI_Comm_free_keyval(keyval); }
int PMPI_Attr_put(MPI_Comm comm, int keyval, void *attribute_val) { return PMPI_Comm_set_attr(comm, keyval, attribute_val); }
int PMPI_Attr_get(MPI_Comm comm, int keyval, void *attribute_val, int *flag) {
    return PMPI_Comm_get_attr(comm, keyval, attribute_val, flag);
}
int PMPI_Attr_delete(MPI_Comm comm, int keyval) { return PMPI_Comm_delete_attr(comm, keyval); }
W(Comm_create_keyval) W(Comm_free_keyval) W(Comm_set_attr) W(Comm_delete_attr)
W(Keyval_create) W(Keyval_free) W(Attr_put) W(Attr_get) W(Attr_delete)

// Small pieces of the rest: memory, ready-mode persistent sends, group
// ranges, intercommunicator queries, non-blocking duplication.
int PMPI_Alloc_mem(MPI_Aint size, MPI_Info info, void *baseptr) {
    GUARD("MPI_Alloc_mem");
    NONNULL(MPI_COMM_WORLD, "MPI_Alloc_mem", baseptr);
    if (size < 0)
        return bcs_error(H(MPI_COMM_WORLD), "MPI_Alloc_mem", MPI_ERR_ARG, "size < 0");
    if (info != MPI_INFO_NULL) {
        int n, rc = PMPI_Info_get_nkeys(info, &n); // checks the handle; the hints are not used
        if (rc != MPI_SUCCESS)
            return rc;
    }
    void *p = malloc(size > 0 ? (size_t)size : 1);
    if (p == NULL)
        return bcs_error(H(MPI_COMM_WORLD), "MPI_Alloc_mem", MPI_ERR_NO_MEM, "malloc failed");
    *(void **)baseptr = p;
    return MPI_SUCCESS;
}
int PMPI_Free_mem(void *base) { free(base); return MPI_SUCCESS; }

// A ready send may be a standard send (see MPI_Rsend).
int PMPI_Rsend_init(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                    MPI_Request *request) {
    GUARD("MPI_Rsend_init");
    return bcs_send_init((void *)buf, count, H(datatype), dest, tag, H(comm), (uintptr_t *)request, 0);
}

int PMPI_Comm_test_inter(MPI_Comm comm, int *flag) {
    GUARD("MPI_Comm_test_inter");
    NONNULL(comm, "MPI_Comm_test_inter", flag);
    return bcs_comm_test_inter(H(comm), flag); // inter.go
}

// Group_range_incl/excl expand the (first, last, stride) triplets into a
// rank list for Group_incl/excl.
static int bcs_group_range(const char *call, MPI_Group group, int n, int ranges[][3], MPI_Group *newgroup, int excl) {
    GUARD(call);
    int size, rc = PMPI_Group_size(group, &size);
    if (rc != MPI_SUCCESS)
        return rc;
    if (n < 0 || (n > 0 && ranges == NULL))
        return bcs_error(H(MPI_COMM_WORLD), (char *)call, MPI_ERR_ARG, "n < 0, or ranges = NULL with n > 0");
    long total = 0;
    for (int i = 0; i < n; i++) {
        int first = ranges[i][0], last = ranges[i][1], stride = ranges[i][2];
        if (stride == 0 || first < 0 || first >= size || last < 0 || last >= size ||
            (stride > 0 && first > last) || (stride < 0 && first < last)) {
            char msg[160];
            snprintf(msg, sizeof msg, "ranges[%d] = (%d, %d, %d): want first and last in 0..%d and a non-zero stride "
                                      "that goes from first to last", i, first, last, stride, size - 1);
            return bcs_error(H(MPI_COMM_WORLD), (char *)call, MPI_ERR_ARG, msg);
        }
        total += (last - first) / stride + 1;
        if (total > size)
            return bcs_error(H(MPI_COMM_WORLD), (char *)call, MPI_ERR_RANK, "the ranges name more ranks than the group has");
    }
    int *ranks = malloc(total > 0 ? (size_t)total * sizeof(int) : sizeof(int));
    if (ranks == NULL)
        return bcs_error(H(MPI_COMM_WORLD), (char *)call, MPI_ERR_NO_MEM, "no memory for the rank list");
    int k = 0;
    for (int i = 0; i < n; i++) { // by count: first + stride may pass INT_MAX
        int first = ranges[i][0], stride = ranges[i][2], cnt = (ranges[i][1] - first) / stride + 1;
        for (int j = 0; j < cnt; j++)
            ranks[k++] = first + j * stride;
    }
    rc = bcs_group_incl(H(group), k, ranks, (uintptr_t *)newgroup, excl | 2); // 2: from ranges
    free(ranks);
    return rc;
}
int PMPI_Group_range_incl(MPI_Group group, int n, int ranges[][3], MPI_Group *newgroup) {
    return bcs_group_range("MPI_Group_range_incl", group, n, ranges, newgroup, 0);
}
int PMPI_Group_range_excl(MPI_Group group, int n, int ranges[][3], MPI_Group *newgroup) {
    return bcs_group_range("MPI_Group_range_excl", group, n, ranges, newgroup, 1);
}

// MPI_Comm_idup starts a nonblocking duplicate; *newcomm is written when
// the request completes (idup.go).
int PMPI_Comm_idup(MPI_Comm comm, MPI_Comm *newcomm, MPI_Request *request) {
    GUARD("MPI_Comm_idup");
    return bcs_comm_idup(H(comm), (uintptr_t *)newcomm, (uintptr_t *)request);
}
int PMPI_Comm_idup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm, MPI_Request *request) {
    GUARD("MPI_Comm_idup_with_info");
    return bcs_comm_idup_with_info(H(comm), H(info), (uintptr_t *)newcomm, (uintptr_t *)request);
}
W(Alloc_mem) W(Free_mem) W(Rsend_init) W(Comm_test_inter) W(Group_range_incl) W(Group_range_excl)
W(Comm_idup) W(Comm_idup_with_info)

// ---- abi11b: the fork guard for shim_abi11b.c ----
int bcs_guard(const char *call) { return bcs_forked ? bcs_forked_error(call) : MPI_SUCCESS; }
int bcs_forked_child(void) { return bcs_forked; }
