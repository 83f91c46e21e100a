// Declarations shared by the C shim (shim.c) and the Go side (cgo preamble).
#ifndef BCSMPI_SHIM_H
#define BCSMPI_SHIM_H

#include <stdint.h>
#include "mpi.h"

// Element kinds: the Go element type a predefined datatype maps to.
enum {
    BCS_NONE, // moves as bytes in point-to-point calls; no collectives yet
    BCS_I8, BCS_U8, BCS_I16, BCS_U16, BCS_I32, BCS_U32, BCS_I64, BCS_U64,
    BCS_F32, BCS_F64,
    BCS_F32I, BCS_F64I, BCS_I32I, BCS_I64I, BCS_I16I, // value-index pairs (MINLOC/MAXLOC)
    BCS_NKINDS
};

struct bcs_type {
    const char *name;
    int size;   // bytes of data (MPI_Type_size)
    int extent; // bytes one element occupies in a buffer
    int kind;
};

#define BCS_NTYPES 0x100
extern struct bcs_type bcs_types[BCS_NTYPES];
const struct bcs_type *bcs_type_of(uintptr_t h);
const char *bcs_class_name(int c);
void bcs_flush(void);
void bcs_fix_sigonstack(void);
void bcs_register_exit(void);
void bcs_call_errhandler(void *fn, uintptr_t comm, int code);
void bcs_call_op(void *fn, void *in, void *inout, int *len, uintptr_t datatype);
int bcs_fn_identity(void *fn, char *buf, int n);
int bcs_op_is_large(void *fn);
void bcs_call_op_c(void *fn, void *in, void *inout, int *len, uintptr_t datatype);
void *bcs_builtin_op(uintptr_t type, uintptr_t op); // shim_ops.c
int bcs_call_datarep_extent(void *fn, uintptr_t datatype, MPI_Aint *extent, void *extra_state); // shim_file.c
int bcs_call_datarep_conv(void *fn, int large, void *userbuf, uintptr_t datatype, MPI_Count count, void *filebuf,
                          MPI_Offset position, void *extra_state);

extern int bcs_initialized, bcs_finalized, bcs_world_rank, bcs_world_size, bcs_thread_level;

// The call lock (MPI_THREAD_MULTIPLE; doc.go, "Threads"): once bcs_mt is set
// (MPI_THREAD_MULTIPLE provided), every call that reaches Go holds one
// process-wide mutex, taken again freely by a thread that holds it (a user
// callback calling MPI) and released by mpiapi while a blocked call sleeps.
// BCS_LOCKED takes it for the rest of the enclosing function. Without
// MULTIPLE it costs one load and a branch at entry and one at return.
extern int bcs_mt, bcs_mt_waiters;
int bcs_mt_lock(void);
void bcs_mt_unlock(void);
int bcs_mt_release(void);
void bcs_mt_reacquire(int depth);
static inline int bcs_mt_enter(void) { return __builtin_expect(bcs_mt, 0) ? bcs_mt_lock() : 0; }
static inline void bcs_mt_exit(int *held) {
    if (__builtin_expect(*held, 0))
        bcs_mt_unlock();
}
#define BCS_LOCKED int bcs_mt_held_ __attribute__((cleanup(bcs_mt_exit), unused)) = bcs_mt_enter()

// The collectives, as the Go entries name them.
enum {
    BCS_BARRIER, BCS_BCAST,
    BCS_REDUCE, BCS_ALLREDUCE, BCS_SCAN, BCS_EXSCAN, BCS_REDUCE_SCATTER, BCS_REDUCE_SCATTER_BLOCK,
    BCS_GATHER, BCS_SCATTER, BCS_ALLGATHER, BCS_ALLTOALL,
    BCS_GATHERV, BCS_SCATTERV, BCS_ALLGATHERV, BCS_ALLTOALLV,
    BCS_NCOLLS
};

// The variant of a call, passed to the Go entries as their mode: the
// large-count form (MPI_X_c: counts are MPI_Count, displacements MPI_Aint);
// a persistent collective (MPI_X_init: checked and made inactive), and its
// start (BCS_RUN: run as the non-blocking collective).
enum { BCS_LARGE = 1, BCS_PERSIST = 2, BCS_RUN = 4 };

#endif
