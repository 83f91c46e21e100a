// The large-count forms (MPI_X_c: MPI_Count counts, MPI_Aint displacements)
// of point-to-point calls and collectives, the persistent collectives
// (MPI_X_init, MPI_X_init_c; persist.go) and MPI_Bsend_init, with MPI_X a
// weak alias of PMPI_X as in shim.c. Each calls the Go entry that the int
// form calls, with its variant in the mode (BCS_LARGE, BCS_PERSIST): one
// implementation takes MPI_Count, and the int forms pass their ints to it.
// A count beyond INT_MAX moves where its bytes are within bcsmpi's bound
// (2^47 bytes in one call); a larger one is MPI_ERR_COUNT naming it.
//
// The collective part (after "Collectives") was written by a script from a
// table of the families' parameter lists; edit it by hand like the rest.

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shim.h"
#include "_cgo_export.h"

int bcs_guard(const char *call); // shim.c
#define GUARD(call) do { int g_ = bcs_guard(call); if (g_ != MPI_SUCCESS) return g_; } while (0); BCS_LOCKED
#define NONNULL(comm, call, arg) do { if ((arg) == NULL) { BCS_LOCKED; return bcs_null_arg(H(comm), call, #arg " = NULL"); } } while (0)
#define H(x) ((uintptr_t)(x))
#define R(request) ((uintptr_t *)(request))
#define REQ(call, comm, request)                                                      \
    do {                                                                              \
        if ((request) == NULL)                                                        \
            return bcs_error(H(comm), call, MPI_ERR_ARG, "request = NULL");           \
    } while (0)
// The info of a persistent collective is checked, its hints not used.
#define INFO(call, comm, info)                                                        \
    do {                                                                              \
        int n_, rc_;                                                                  \
        if ((info) != MPI_INFO_NULL && (rc_ = PMPI_Info_get_nkeys((info), &n_)) != MPI_SUCCESS) \
            return rc_;                                                               \
    } while (0)

// As wcoll.go numbers its exchanges (shim_abi11b.c has the same).
enum { W_ALLTOALLW, W_ALLGATHER, W_ALLGATHERV, W_ALLTOALL, W_ALLTOALLV, W_NALLTOALLW };

// A non-NULL pointer tells bcs_wcoll that the displacements are MPI_Aints.
static const MPI_Aint bcs_no_aints[1];
#define AINTS(p) ((MPI_Aint *)((p) ? (p) : bcs_no_aints))

// ---- Point to point ----

int PMPI_Send_c(const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm) {
    GUARD("MPI_Send_c");
    return bcs_send((void *)buf, count, H(datatype), dest, tag, H(comm), BCS_LARGE);
}

// A ready send may be a standard send (see MPI_Rsend).
int PMPI_Rsend_c(const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm) {
    GUARD("MPI_Rsend_c");
    return bcs_send((void *)buf, count, H(datatype), dest, tag, H(comm), BCS_LARGE);
}

int PMPI_Recv_c(void *buf, MPI_Count count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm, MPI_Status *status) {
    GUARD("MPI_Recv_c");
    return bcs_recv(buf, count, H(datatype), source, tag, H(comm), status, BCS_LARGE);
}

int PMPI_Isend_c(const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                 MPI_Request *request) {
    GUARD("MPI_Isend_c");
    REQ("MPI_Isend_c", comm, request);
    return bcs_isend((void *)buf, count, H(datatype), dest, tag, H(comm), R(request), BCS_LARGE);
}

int PMPI_Irsend_c(const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                  MPI_Request *request) {
    GUARD("MPI_Irsend_c");
    REQ("MPI_Irsend_c", comm, request);
    return bcs_isend((void *)buf, count, H(datatype), dest, tag, H(comm), R(request), BCS_LARGE);
}

int PMPI_Irecv_c(void *buf, MPI_Count count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
                 MPI_Request *request) {
    GUARD("MPI_Irecv_c");
    REQ("MPI_Irecv_c", comm, request);
    return bcs_irecv(buf, count, H(datatype), source, tag, H(comm), R(request), BCS_LARGE);
}

int PMPI_Sendrecv_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, int dest, int sendtag,
                    void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm,
                    MPI_Status *status) {
    GUARD("MPI_Sendrecv_c");
    return bcs_sendrecv((void *)sendbuf, sendcount, H(sendtype), dest, sendtag, recvbuf, recvcount, H(recvtype), source,
                        recvtag, H(comm), status, BCS_LARGE);
}

int PMPI_Sendrecv_replace_c(void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int sendtag, int source,
                            int recvtag, MPI_Comm comm, MPI_Status *status) {
    GUARD("MPI_Sendrecv_replace_c");
    return bcs_sendrecv_replace(buf, count, H(datatype), dest, sendtag, source, recvtag, H(comm), status, BCS_LARGE);
}

int PMPI_Bsend_c(const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm) {
    GUARD("MPI_Bsend_c");
    return bcs_bsend((void *)buf, count, H(datatype), dest, tag, H(comm), NULL, BCS_LARGE);
}

int PMPI_Ibsend_c(const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                  MPI_Request *request) {
    GUARD("MPI_Ibsend_c");
    REQ("MPI_Ibsend_c", comm, request);
    return bcs_bsend((void *)buf, count, H(datatype), dest, tag, H(comm), R(request), BCS_LARGE);
}

int PMPI_Ssend_c(const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm) {
    GUARD("MPI_Ssend_c");
    return bcs_ssend((void *)buf, count, H(datatype), dest, tag, H(comm), NULL, BCS_LARGE);
}

int PMPI_Issend_c(const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                  MPI_Request *request) {
    GUARD("MPI_Issend_c");
    REQ("MPI_Issend_c", comm, request);
    return bcs_ssend((void *)buf, count, H(datatype), dest, tag, H(comm), R(request), BCS_LARGE);
}

int PMPI_Send_init_c(const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                     MPI_Request *request) {
    GUARD("MPI_Send_init_c");
    return bcs_send_init((void *)buf, count, H(datatype), dest, tag, H(comm), R(request), BCS_LARGE);
}

int PMPI_Rsend_init_c(const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                      MPI_Request *request) {
    GUARD("MPI_Rsend_init_c");
    return bcs_send_init((void *)buf, count, H(datatype), dest, tag, H(comm), R(request), BCS_LARGE);
}

int PMPI_Ssend_init_c(const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                      MPI_Request *request) {
    GUARD("MPI_Ssend_init_c");
    return bcs_ssend_init((void *)buf, count, H(datatype), dest, tag, H(comm), R(request), BCS_LARGE);
}

int PMPI_Recv_init_c(void *buf, MPI_Count count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
                     MPI_Request *request) {
    GUARD("MPI_Recv_init_c");
    return bcs_recv_init(buf, count, H(datatype), source, tag, H(comm), R(request), BCS_LARGE);
}

int PMPI_Bsend_init(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                    MPI_Request *request) {
    GUARD("MPI_Bsend_init");
    return bcs_bsend_init((void *)buf, count, H(datatype), dest, tag, H(comm), R(request), 0);
}

int PMPI_Bsend_init_c(const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                      MPI_Request *request) {
    GUARD("MPI_Bsend_init_c");
    return bcs_bsend_init((void *)buf, count, H(datatype), dest, tag, H(comm), R(request), BCS_LARGE);
}

int PMPI_Buffer_attach_c(void *buffer, MPI_Count size) {
    GUARD("MPI_Buffer_attach_c");
    return bcs_buffer_attach(buffer, size, BCS_LARGE);
}

int PMPI_Buffer_detach_c(void *buffer_addr, MPI_Count *size) {
    GUARD("MPI_Buffer_detach_c");
    return bcs_buffer_detach((void **)buffer_addr, size, BCS_LARGE);
}

int PMPI_Mrecv_c(void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Message *message, MPI_Status *status) {
    GUARD("MPI_Mrecv_c");
    return bcs_mrecv(buf, count, H(datatype), (uintptr_t *)message, status, NULL, BCS_LARGE);
}

int PMPI_Imrecv_c(void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Message *message, MPI_Request *request) {
    GUARD("MPI_Imrecv_c");
    REQ("MPI_Imrecv_c", MPI_COMM_WORLD, request);
    return bcs_mrecv(buf, count, H(datatype), (uintptr_t *)message, NULL, R(request), BCS_LARGE);
}

#define WP(name) _Pragma(BCS_PSTR(weak MPI_##name = PMPI_##name))
#define BCS_PSTR(x) #x
WP(Send_c) WP(Rsend_c) WP(Recv_c) WP(Isend_c) WP(Irsend_c) WP(Irecv_c) WP(Sendrecv_c) WP(Sendrecv_replace_c)
WP(Bsend_c) WP(Ibsend_c) WP(Ssend_c) WP(Issend_c) WP(Send_init_c) WP(Rsend_init_c) WP(Ssend_init_c) WP(Recv_init_c)
WP(Bsend_init) WP(Bsend_init_c) WP(Buffer_attach_c) WP(Buffer_detach_c) WP(Mrecv_c) WP(Imrecv_c)

// ---- Collectives ----

int PMPI_Barrier_init(MPI_Comm comm, MPI_Info info, MPI_Request *request) {
    GUARD("MPI_Barrier_init");
    REQ("MPI_Barrier_init", comm, request);
    INFO("MPI_Barrier_init", comm, info);
    return bcs_barrier(H(comm), R(request), BCS_PERSIST);
}

int PMPI_Bcast_c(void *buffer, MPI_Count count, MPI_Datatype datatype, int root, MPI_Comm comm) {
    GUARD("MPI_Bcast_c");
    return bcs_bcast(buffer, count, H(datatype), root, H(comm), NULL, BCS_LARGE);
}

int PMPI_Ibcast_c(void *buffer, MPI_Count count, MPI_Datatype datatype, int root, MPI_Comm comm, MPI_Request *request) {
    GUARD("MPI_Ibcast_c");
    REQ("MPI_Ibcast_c", comm, request);
    return bcs_bcast(buffer, count, H(datatype), root, H(comm), R(request), BCS_LARGE);
}

int PMPI_Bcast_init(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm, MPI_Info info, MPI_Request *request) {
    GUARD("MPI_Bcast_init");
    REQ("MPI_Bcast_init", comm, request);
    INFO("MPI_Bcast_init", comm, info);
    return bcs_bcast(buffer, count, H(datatype), root, H(comm), R(request), BCS_PERSIST);
}

int PMPI_Bcast_init_c(void *buffer, MPI_Count count, MPI_Datatype datatype, int root, MPI_Comm comm, MPI_Info info, MPI_Request *request) {
    GUARD("MPI_Bcast_init_c");
    REQ("MPI_Bcast_init_c", comm, request);
    INFO("MPI_Bcast_init_c", comm, info);
    return bcs_bcast(buffer, count, H(datatype), root, H(comm), R(request), BCS_PERSIST | BCS_LARGE);
}

int PMPI_Reduce_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm) {
    GUARD("MPI_Reduce_c");
    return bcs_reduce(BCS_REDUCE, (void *)sendbuf, recvbuf, count, NULL, H(datatype), H(op), root, H(comm), NULL, BCS_LARGE);
}

int PMPI_Ireduce_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm, MPI_Request *request) {
    GUARD("MPI_Ireduce_c");
    REQ("MPI_Ireduce_c", comm, request);
    return bcs_reduce(BCS_REDUCE, (void *)sendbuf, recvbuf, count, NULL, H(datatype), H(op), root, H(comm), R(request), BCS_LARGE);
}

int PMPI_Reduce_init(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm, MPI_Info info, MPI_Request *request) {
    GUARD("MPI_Reduce_init");
    REQ("MPI_Reduce_init", comm, request);
    INFO("MPI_Reduce_init", comm, info);
    return bcs_reduce(BCS_REDUCE, (void *)sendbuf, recvbuf, count, NULL, H(datatype), H(op), root, H(comm), R(request), BCS_PERSIST);
}

int PMPI_Reduce_init_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm, MPI_Info info, MPI_Request *request) {
    GUARD("MPI_Reduce_init_c");
    REQ("MPI_Reduce_init_c", comm, request);
    INFO("MPI_Reduce_init_c", comm, info);
    return bcs_reduce(BCS_REDUCE, (void *)sendbuf, recvbuf, count, NULL, H(datatype), H(op), root, H(comm), R(request), BCS_PERSIST | BCS_LARGE);
}

int PMPI_Allreduce_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
    GUARD("MPI_Allreduce_c");
    return bcs_reduce(BCS_ALLREDUCE, (void *)sendbuf, recvbuf, count, NULL, H(datatype), H(op), 0, H(comm), NULL, BCS_LARGE);
}

int PMPI_Iallreduce_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request) {
    GUARD("MPI_Iallreduce_c");
    REQ("MPI_Iallreduce_c", comm, request);
    return bcs_reduce(BCS_ALLREDUCE, (void *)sendbuf, recvbuf, count, NULL, H(datatype), H(op), 0, H(comm), R(request), BCS_LARGE);
}

int PMPI_Allreduce_init(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *request) {
    GUARD("MPI_Allreduce_init");
    REQ("MPI_Allreduce_init", comm, request);
    INFO("MPI_Allreduce_init", comm, info);
    return bcs_reduce(BCS_ALLREDUCE, (void *)sendbuf, recvbuf, count, NULL, H(datatype), H(op), 0, H(comm), R(request), BCS_PERSIST);
}

int PMPI_Allreduce_init_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *request) {
    GUARD("MPI_Allreduce_init_c");
    REQ("MPI_Allreduce_init_c", comm, request);
    INFO("MPI_Allreduce_init_c", comm, info);
    return bcs_reduce(BCS_ALLREDUCE, (void *)sendbuf, recvbuf, count, NULL, H(datatype), H(op), 0, H(comm), R(request), BCS_PERSIST | BCS_LARGE);
}

int PMPI_Scan_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
    GUARD("MPI_Scan_c");
    return bcs_reduce(BCS_SCAN, (void *)sendbuf, recvbuf, count, NULL, H(datatype), H(op), 0, H(comm), NULL, BCS_LARGE);
}

int PMPI_Iscan_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request) {
    GUARD("MPI_Iscan_c");
    REQ("MPI_Iscan_c", comm, request);
    return bcs_reduce(BCS_SCAN, (void *)sendbuf, recvbuf, count, NULL, H(datatype), H(op), 0, H(comm), R(request), BCS_LARGE);
}

int PMPI_Scan_init(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *request) {
    GUARD("MPI_Scan_init");
    REQ("MPI_Scan_init", comm, request);
    INFO("MPI_Scan_init", comm, info);
    return bcs_reduce(BCS_SCAN, (void *)sendbuf, recvbuf, count, NULL, H(datatype), H(op), 0, H(comm), R(request), BCS_PERSIST);
}

int PMPI_Scan_init_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *request) {
    GUARD("MPI_Scan_init_c");
    REQ("MPI_Scan_init_c", comm, request);
    INFO("MPI_Scan_init_c", comm, info);
    return bcs_reduce(BCS_SCAN, (void *)sendbuf, recvbuf, count, NULL, H(datatype), H(op), 0, H(comm), R(request), BCS_PERSIST | BCS_LARGE);
}

int PMPI_Exscan_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
    GUARD("MPI_Exscan_c");
    return bcs_reduce(BCS_EXSCAN, (void *)sendbuf, recvbuf, count, NULL, H(datatype), H(op), 0, H(comm), NULL, BCS_LARGE);
}

int PMPI_Iexscan_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request) {
    GUARD("MPI_Iexscan_c");
    REQ("MPI_Iexscan_c", comm, request);
    return bcs_reduce(BCS_EXSCAN, (void *)sendbuf, recvbuf, count, NULL, H(datatype), H(op), 0, H(comm), R(request), BCS_LARGE);
}

int PMPI_Exscan_init(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *request) {
    GUARD("MPI_Exscan_init");
    REQ("MPI_Exscan_init", comm, request);
    INFO("MPI_Exscan_init", comm, info);
    return bcs_reduce(BCS_EXSCAN, (void *)sendbuf, recvbuf, count, NULL, H(datatype), H(op), 0, H(comm), R(request), BCS_PERSIST);
}

int PMPI_Exscan_init_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *request) {
    GUARD("MPI_Exscan_init_c");
    REQ("MPI_Exscan_init_c", comm, request);
    INFO("MPI_Exscan_init_c", comm, info);
    return bcs_reduce(BCS_EXSCAN, (void *)sendbuf, recvbuf, count, NULL, H(datatype), H(op), 0, H(comm), R(request), BCS_PERSIST | BCS_LARGE);
}

int PMPI_Reduce_scatter_block_c(const void *sendbuf, void *recvbuf, MPI_Count recvcount, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
    GUARD("MPI_Reduce_scatter_block_c");
    return bcs_reduce(BCS_REDUCE_SCATTER_BLOCK, (void *)sendbuf, recvbuf, recvcount, NULL, H(datatype), H(op), 0, H(comm), NULL, BCS_LARGE);
}

int PMPI_Ireduce_scatter_block_c(const void *sendbuf, void *recvbuf, MPI_Count recvcount, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request) {
    GUARD("MPI_Ireduce_scatter_block_c");
    REQ("MPI_Ireduce_scatter_block_c", comm, request);
    return bcs_reduce(BCS_REDUCE_SCATTER_BLOCK, (void *)sendbuf, recvbuf, recvcount, NULL, H(datatype), H(op), 0, H(comm), R(request), BCS_LARGE);
}

int PMPI_Reduce_scatter_block_init(const void *sendbuf, void *recvbuf, int recvcount, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *request) {
    GUARD("MPI_Reduce_scatter_block_init");
    REQ("MPI_Reduce_scatter_block_init", comm, request);
    INFO("MPI_Reduce_scatter_block_init", comm, info);
    return bcs_reduce(BCS_REDUCE_SCATTER_BLOCK, (void *)sendbuf, recvbuf, recvcount, NULL, H(datatype), H(op), 0, H(comm), R(request), BCS_PERSIST);
}

int PMPI_Reduce_scatter_block_init_c(const void *sendbuf, void *recvbuf, MPI_Count recvcount, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *request) {
    GUARD("MPI_Reduce_scatter_block_init_c");
    REQ("MPI_Reduce_scatter_block_init_c", comm, request);
    INFO("MPI_Reduce_scatter_block_init_c", comm, info);
    return bcs_reduce(BCS_REDUCE_SCATTER_BLOCK, (void *)sendbuf, recvbuf, recvcount, NULL, H(datatype), H(op), 0, H(comm), R(request), BCS_PERSIST | BCS_LARGE);
}

int PMPI_Reduce_scatter_c(const void *sendbuf, void *recvbuf, const MPI_Count recvcounts[], MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
    GUARD("MPI_Reduce_scatter_c");
    return bcs_reduce(BCS_REDUCE_SCATTER, (void *)sendbuf, recvbuf, 0, (void *)recvcounts, H(datatype), H(op), 0, H(comm), NULL, BCS_LARGE);
}

int PMPI_Ireduce_scatter_c(const void *sendbuf, void *recvbuf, const MPI_Count recvcounts[], MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request) {
    GUARD("MPI_Ireduce_scatter_c");
    REQ("MPI_Ireduce_scatter_c", comm, request);
    return bcs_reduce(BCS_REDUCE_SCATTER, (void *)sendbuf, recvbuf, 0, (void *)recvcounts, H(datatype), H(op), 0, H(comm), R(request), BCS_LARGE);
}

int PMPI_Reduce_scatter_init(const void *sendbuf, void *recvbuf, const int recvcounts[], MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *request) {
    GUARD("MPI_Reduce_scatter_init");
    REQ("MPI_Reduce_scatter_init", comm, request);
    INFO("MPI_Reduce_scatter_init", comm, info);
    return bcs_reduce(BCS_REDUCE_SCATTER, (void *)sendbuf, recvbuf, 0, (void *)recvcounts, H(datatype), H(op), 0, H(comm), R(request), BCS_PERSIST);
}

int PMPI_Reduce_scatter_init_c(const void *sendbuf, void *recvbuf, const MPI_Count recvcounts[], MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *request) {
    GUARD("MPI_Reduce_scatter_init_c");
    REQ("MPI_Reduce_scatter_init_c", comm, request);
    INFO("MPI_Reduce_scatter_init_c", comm, info);
    return bcs_reduce(BCS_REDUCE_SCATTER, (void *)sendbuf, recvbuf, 0, (void *)recvcounts, H(datatype), H(op), 0, H(comm), R(request), BCS_PERSIST | BCS_LARGE);
}

int PMPI_Gather_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
    GUARD("MPI_Gather_c");
    return bcs_blocks(BCS_GATHER, (void *)sendbuf, sendcount, H(sendtype), recvbuf, recvcount, H(recvtype), root, H(comm), NULL, BCS_LARGE);
}

int PMPI_Igather_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request) {
    GUARD("MPI_Igather_c");
    REQ("MPI_Igather_c", comm, request);
    return bcs_blocks(BCS_GATHER, (void *)sendbuf, sendcount, H(sendtype), recvbuf, recvcount, H(recvtype), root, H(comm), R(request), BCS_LARGE);
}

int PMPI_Gather_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info, MPI_Request *request) {
    GUARD("MPI_Gather_init");
    REQ("MPI_Gather_init", comm, request);
    INFO("MPI_Gather_init", comm, info);
    return bcs_blocks(BCS_GATHER, (void *)sendbuf, sendcount, H(sendtype), recvbuf, recvcount, H(recvtype), root, H(comm), R(request), BCS_PERSIST);
}

int PMPI_Gather_init_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info, MPI_Request *request) {
    GUARD("MPI_Gather_init_c");
    REQ("MPI_Gather_init_c", comm, request);
    INFO("MPI_Gather_init_c", comm, info);
    return bcs_blocks(BCS_GATHER, (void *)sendbuf, sendcount, H(sendtype), recvbuf, recvcount, H(recvtype), root, H(comm), R(request), BCS_PERSIST | BCS_LARGE);
}

int PMPI_Scatter_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
    GUARD("MPI_Scatter_c");
    return bcs_blocks(BCS_SCATTER, (void *)sendbuf, sendcount, H(sendtype), recvbuf, recvcount, H(recvtype), root, H(comm), NULL, BCS_LARGE);
}

int PMPI_Iscatter_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request) {
    GUARD("MPI_Iscatter_c");
    REQ("MPI_Iscatter_c", comm, request);
    return bcs_blocks(BCS_SCATTER, (void *)sendbuf, sendcount, H(sendtype), recvbuf, recvcount, H(recvtype), root, H(comm), R(request), BCS_LARGE);
}

int PMPI_Scatter_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info, MPI_Request *request) {
    GUARD("MPI_Scatter_init");
    REQ("MPI_Scatter_init", comm, request);
    INFO("MPI_Scatter_init", comm, info);
    return bcs_blocks(BCS_SCATTER, (void *)sendbuf, sendcount, H(sendtype), recvbuf, recvcount, H(recvtype), root, H(comm), R(request), BCS_PERSIST);
}

int PMPI_Scatter_init_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info, MPI_Request *request) {
    GUARD("MPI_Scatter_init_c");
    REQ("MPI_Scatter_init_c", comm, request);
    INFO("MPI_Scatter_init_c", comm, info);
    return bcs_blocks(BCS_SCATTER, (void *)sendbuf, sendcount, H(sendtype), recvbuf, recvcount, H(recvtype), root, H(comm), R(request), BCS_PERSIST | BCS_LARGE);
}

int PMPI_Allgather_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
    GUARD("MPI_Allgather_c");
    return bcs_blocks(BCS_ALLGATHER, (void *)sendbuf, sendcount, H(sendtype), recvbuf, recvcount, H(recvtype), 0, H(comm), NULL, BCS_LARGE);
}

int PMPI_Iallgather_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request) {
    GUARD("MPI_Iallgather_c");
    REQ("MPI_Iallgather_c", comm, request);
    return bcs_blocks(BCS_ALLGATHER, (void *)sendbuf, sendcount, H(sendtype), recvbuf, recvcount, H(recvtype), 0, H(comm), R(request), BCS_LARGE);
}

int PMPI_Allgather_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, MPI_Request *request) {
    GUARD("MPI_Allgather_init");
    REQ("MPI_Allgather_init", comm, request);
    INFO("MPI_Allgather_init", comm, info);
    return bcs_blocks(BCS_ALLGATHER, (void *)sendbuf, sendcount, H(sendtype), recvbuf, recvcount, H(recvtype), 0, H(comm), R(request), BCS_PERSIST);
}

int PMPI_Allgather_init_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, MPI_Request *request) {
    GUARD("MPI_Allgather_init_c");
    REQ("MPI_Allgather_init_c", comm, request);
    INFO("MPI_Allgather_init_c", comm, info);
    return bcs_blocks(BCS_ALLGATHER, (void *)sendbuf, sendcount, H(sendtype), recvbuf, recvcount, H(recvtype), 0, H(comm), R(request), BCS_PERSIST | BCS_LARGE);
}

int PMPI_Alltoall_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
    GUARD("MPI_Alltoall_c");
    return bcs_blocks(BCS_ALLTOALL, (void *)sendbuf, sendcount, H(sendtype), recvbuf, recvcount, H(recvtype), 0, H(comm), NULL, BCS_LARGE);
}

int PMPI_Ialltoall_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request) {
    GUARD("MPI_Ialltoall_c");
    REQ("MPI_Ialltoall_c", comm, request);
    return bcs_blocks(BCS_ALLTOALL, (void *)sendbuf, sendcount, H(sendtype), recvbuf, recvcount, H(recvtype), 0, H(comm), R(request), BCS_LARGE);
}

int PMPI_Alltoall_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, MPI_Request *request) {
    GUARD("MPI_Alltoall_init");
    REQ("MPI_Alltoall_init", comm, request);
    INFO("MPI_Alltoall_init", comm, info);
    return bcs_blocks(BCS_ALLTOALL, (void *)sendbuf, sendcount, H(sendtype), recvbuf, recvcount, H(recvtype), 0, H(comm), R(request), BCS_PERSIST);
}

int PMPI_Alltoall_init_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, MPI_Request *request) {
    GUARD("MPI_Alltoall_init_c");
    REQ("MPI_Alltoall_init_c", comm, request);
    INFO("MPI_Alltoall_init_c", comm, info);
    return bcs_blocks(BCS_ALLTOALL, (void *)sendbuf, sendcount, H(sendtype), recvbuf, recvcount, H(recvtype), 0, H(comm), R(request), BCS_PERSIST | BCS_LARGE);
}

int PMPI_Gatherv_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype, int root, MPI_Comm comm) {
    GUARD("MPI_Gatherv_c");
    return bcs_vblocks(BCS_GATHERV, (void *)sendbuf, sendcount, NULL, NULL, H(sendtype), recvbuf, 0, (void *)recvcounts, (void *)displs, H(recvtype), root, H(comm), NULL, BCS_LARGE);
}

int PMPI_Igatherv_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request) {
    GUARD("MPI_Igatherv_c");
    REQ("MPI_Igatherv_c", comm, request);
    return bcs_vblocks(BCS_GATHERV, (void *)sendbuf, sendcount, NULL, NULL, H(sendtype), recvbuf, 0, (void *)recvcounts, (void *)displs, H(recvtype), root, H(comm), R(request), BCS_LARGE);
}

int PMPI_Gatherv_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info, MPI_Request *request) {
    GUARD("MPI_Gatherv_init");
    REQ("MPI_Gatherv_init", comm, request);
    INFO("MPI_Gatherv_init", comm, info);
    return bcs_vblocks(BCS_GATHERV, (void *)sendbuf, sendcount, NULL, NULL, H(sendtype), recvbuf, 0, (void *)recvcounts, (void *)displs, H(recvtype), root, H(comm), R(request), BCS_PERSIST);
}

int PMPI_Gatherv_init_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info, MPI_Request *request) {
    GUARD("MPI_Gatherv_init_c");
    REQ("MPI_Gatherv_init_c", comm, request);
    INFO("MPI_Gatherv_init_c", comm, info);
    return bcs_vblocks(BCS_GATHERV, (void *)sendbuf, sendcount, NULL, NULL, H(sendtype), recvbuf, 0, (void *)recvcounts, (void *)displs, H(recvtype), root, H(comm), R(request), BCS_PERSIST | BCS_LARGE);
}

int PMPI_Allgatherv_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype, MPI_Comm comm) {
    GUARD("MPI_Allgatherv_c");
    return bcs_vblocks(BCS_ALLGATHERV, (void *)sendbuf, sendcount, NULL, NULL, H(sendtype), recvbuf, 0, (void *)recvcounts, (void *)displs, H(recvtype), 0, H(comm), NULL, BCS_LARGE);
}

int PMPI_Iallgatherv_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request) {
    GUARD("MPI_Iallgatherv_c");
    REQ("MPI_Iallgatherv_c", comm, request);
    return bcs_vblocks(BCS_ALLGATHERV, (void *)sendbuf, sendcount, NULL, NULL, H(sendtype), recvbuf, 0, (void *)recvcounts, (void *)displs, H(recvtype), 0, H(comm), R(request), BCS_LARGE);
}

int PMPI_Allgatherv_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, MPI_Request *request) {
    GUARD("MPI_Allgatherv_init");
    REQ("MPI_Allgatherv_init", comm, request);
    INFO("MPI_Allgatherv_init", comm, info);
    return bcs_vblocks(BCS_ALLGATHERV, (void *)sendbuf, sendcount, NULL, NULL, H(sendtype), recvbuf, 0, (void *)recvcounts, (void *)displs, H(recvtype), 0, H(comm), R(request), BCS_PERSIST);
}

int PMPI_Allgatherv_init_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, MPI_Request *request) {
    GUARD("MPI_Allgatherv_init_c");
    REQ("MPI_Allgatherv_init_c", comm, request);
    INFO("MPI_Allgatherv_init_c", comm, info);
    return bcs_vblocks(BCS_ALLGATHERV, (void *)sendbuf, sendcount, NULL, NULL, H(sendtype), recvbuf, 0, (void *)recvcounts, (void *)displs, H(recvtype), 0, H(comm), R(request), BCS_PERSIST | BCS_LARGE);
}

int PMPI_Scatterv_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint displs[], MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
    GUARD("MPI_Scatterv_c");
    return bcs_vblocks(BCS_SCATTERV, (void *)sendbuf, 0, (void *)sendcounts, (void *)displs, H(sendtype), recvbuf, recvcount, NULL, NULL, H(recvtype), root, H(comm), NULL, BCS_LARGE);
}

int PMPI_Iscatterv_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint displs[], MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request) {
    GUARD("MPI_Iscatterv_c");
    REQ("MPI_Iscatterv_c", comm, request);
    return bcs_vblocks(BCS_SCATTERV, (void *)sendbuf, 0, (void *)sendcounts, (void *)displs, H(sendtype), recvbuf, recvcount, NULL, NULL, H(recvtype), root, H(comm), R(request), BCS_LARGE);
}

int PMPI_Scatterv_init(const void *sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info, MPI_Request *request) {
    GUARD("MPI_Scatterv_init");
    REQ("MPI_Scatterv_init", comm, request);
    INFO("MPI_Scatterv_init", comm, info);
    return bcs_vblocks(BCS_SCATTERV, (void *)sendbuf, 0, (void *)sendcounts, (void *)displs, H(sendtype), recvbuf, recvcount, NULL, NULL, H(recvtype), root, H(comm), R(request), BCS_PERSIST);
}

int PMPI_Scatterv_init_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint displs[], MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info, MPI_Request *request) {
    GUARD("MPI_Scatterv_init_c");
    REQ("MPI_Scatterv_init_c", comm, request);
    INFO("MPI_Scatterv_init_c", comm, info);
    return bcs_vblocks(BCS_SCATTERV, (void *)sendbuf, 0, (void *)sendcounts, (void *)displs, H(sendtype), recvbuf, recvcount, NULL, NULL, H(recvtype), root, H(comm), R(request), BCS_PERSIST | BCS_LARGE);
}

int PMPI_Alltoallv_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[], MPI_Datatype sendtype, void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint rdispls[], MPI_Datatype recvtype, MPI_Comm comm) {
    GUARD("MPI_Alltoallv_c");
    return bcs_vblocks(BCS_ALLTOALLV, (void *)sendbuf, 0, (void *)sendcounts, (void *)sdispls, H(sendtype), recvbuf, 0, (void *)recvcounts, (void *)rdispls, H(recvtype), 0, H(comm), NULL, BCS_LARGE);
}

int PMPI_Ialltoallv_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[], MPI_Datatype sendtype, void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint rdispls[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request) {
    GUARD("MPI_Ialltoallv_c");
    REQ("MPI_Ialltoallv_c", comm, request);
    return bcs_vblocks(BCS_ALLTOALLV, (void *)sendbuf, 0, (void *)sendcounts, (void *)sdispls, H(sendtype), recvbuf, 0, (void *)recvcounts, (void *)rdispls, H(recvtype), 0, H(comm), R(request), BCS_LARGE);
}

int PMPI_Alltoallv_init(const void *sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, MPI_Request *request) {
    GUARD("MPI_Alltoallv_init");
    REQ("MPI_Alltoallv_init", comm, request);
    INFO("MPI_Alltoallv_init", comm, info);
    return bcs_vblocks(BCS_ALLTOALLV, (void *)sendbuf, 0, (void *)sendcounts, (void *)sdispls, H(sendtype), recvbuf, 0, (void *)recvcounts, (void *)rdispls, H(recvtype), 0, H(comm), R(request), BCS_PERSIST);
}

int PMPI_Alltoallv_init_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[], MPI_Datatype sendtype, void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint rdispls[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, MPI_Request *request) {
    GUARD("MPI_Alltoallv_init_c");
    REQ("MPI_Alltoallv_init_c", comm, request);
    INFO("MPI_Alltoallv_init_c", comm, info);
    return bcs_vblocks(BCS_ALLTOALLV, (void *)sendbuf, 0, (void *)sendcounts, (void *)sdispls, H(sendtype), recvbuf, 0, (void *)recvcounts, (void *)rdispls, H(recvtype), 0, H(comm), R(request), BCS_PERSIST | BCS_LARGE);
}

int PMPI_Alltoallw_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[], const MPI_Datatype sendtypes[], void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm) {
    GUARD("MPI_Alltoallw_c");
    return bcs_wcoll(W_ALLTOALLW, (void *)sendbuf, 0, (void *)sendcounts, (void *)sdispls, NULL, 0, (uintptr_t *)sendtypes, recvbuf, 0, (void *)recvcounts, (void *)rdispls, NULL, 0, (uintptr_t *)recvtypes, H(comm), NULL, BCS_LARGE);
}

int PMPI_Ialltoallw_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[], const MPI_Datatype sendtypes[], void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Request *request) {
    GUARD("MPI_Ialltoallw_c");
    REQ("MPI_Ialltoallw_c", comm, request);
    return bcs_wcoll(W_ALLTOALLW, (void *)sendbuf, 0, (void *)sendcounts, (void *)sdispls, NULL, 0, (uintptr_t *)sendtypes, recvbuf, 0, (void *)recvcounts, (void *)rdispls, NULL, 0, (uintptr_t *)recvtypes, H(comm), R(request), BCS_LARGE);
}

int PMPI_Alltoallw_init(const void *sendbuf, const int sendcounts[], const int sdispls[], const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[], const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Info info, MPI_Request *request) {
    GUARD("MPI_Alltoallw_init");
    REQ("MPI_Alltoallw_init", comm, request);
    INFO("MPI_Alltoallw_init", comm, info);
    return bcs_wcoll(W_ALLTOALLW, (void *)sendbuf, 0, (void *)sendcounts, (void *)sdispls, NULL, 0, (uintptr_t *)sendtypes, recvbuf, 0, (void *)recvcounts, (void *)rdispls, NULL, 0, (uintptr_t *)recvtypes, H(comm), R(request), BCS_PERSIST);
}

int PMPI_Alltoallw_init_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[], const MPI_Datatype sendtypes[], void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Info info, MPI_Request *request) {
    GUARD("MPI_Alltoallw_init_c");
    REQ("MPI_Alltoallw_init_c", comm, request);
    INFO("MPI_Alltoallw_init_c", comm, info);
    return bcs_wcoll(W_ALLTOALLW, (void *)sendbuf, 0, (void *)sendcounts, (void *)sdispls, NULL, 0, (uintptr_t *)sendtypes, recvbuf, 0, (void *)recvcounts, (void *)rdispls, NULL, 0, (uintptr_t *)recvtypes, H(comm), R(request), BCS_PERSIST | BCS_LARGE);
}

int PMPI_Neighbor_allgather_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
    GUARD("MPI_Neighbor_allgather_c");
    return bcs_wcoll(W_ALLGATHER, (void *)sendbuf, sendcount, NULL, NULL, NULL, H(sendtype), NULL, recvbuf, recvcount, NULL, NULL, NULL, H(recvtype), NULL, H(comm), NULL, BCS_LARGE);
}

int PMPI_Ineighbor_allgather_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request) {
    GUARD("MPI_Ineighbor_allgather_c");
    REQ("MPI_Ineighbor_allgather_c", comm, request);
    return bcs_wcoll(W_ALLGATHER, (void *)sendbuf, sendcount, NULL, NULL, NULL, H(sendtype), NULL, recvbuf, recvcount, NULL, NULL, NULL, H(recvtype), NULL, H(comm), R(request), BCS_LARGE);
}

int PMPI_Neighbor_allgather_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, MPI_Request *request) {
    GUARD("MPI_Neighbor_allgather_init");
    REQ("MPI_Neighbor_allgather_init", comm, request);
    INFO("MPI_Neighbor_allgather_init", comm, info);
    return bcs_wcoll(W_ALLGATHER, (void *)sendbuf, sendcount, NULL, NULL, NULL, H(sendtype), NULL, recvbuf, recvcount, NULL, NULL, NULL, H(recvtype), NULL, H(comm), R(request), BCS_PERSIST);
}

int PMPI_Neighbor_allgather_init_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, MPI_Request *request) {
    GUARD("MPI_Neighbor_allgather_init_c");
    REQ("MPI_Neighbor_allgather_init_c", comm, request);
    INFO("MPI_Neighbor_allgather_init_c", comm, info);
    return bcs_wcoll(W_ALLGATHER, (void *)sendbuf, sendcount, NULL, NULL, NULL, H(sendtype), NULL, recvbuf, recvcount, NULL, NULL, NULL, H(recvtype), NULL, H(comm), R(request), BCS_PERSIST | BCS_LARGE);
}

int PMPI_Neighbor_alltoall_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
    GUARD("MPI_Neighbor_alltoall_c");
    return bcs_wcoll(W_ALLTOALL, (void *)sendbuf, sendcount, NULL, NULL, NULL, H(sendtype), NULL, recvbuf, recvcount, NULL, NULL, NULL, H(recvtype), NULL, H(comm), NULL, BCS_LARGE);
}

int PMPI_Ineighbor_alltoall_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request) {
    GUARD("MPI_Ineighbor_alltoall_c");
    REQ("MPI_Ineighbor_alltoall_c", comm, request);
    return bcs_wcoll(W_ALLTOALL, (void *)sendbuf, sendcount, NULL, NULL, NULL, H(sendtype), NULL, recvbuf, recvcount, NULL, NULL, NULL, H(recvtype), NULL, H(comm), R(request), BCS_LARGE);
}

int PMPI_Neighbor_alltoall_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, MPI_Request *request) {
    GUARD("MPI_Neighbor_alltoall_init");
    REQ("MPI_Neighbor_alltoall_init", comm, request);
    INFO("MPI_Neighbor_alltoall_init", comm, info);
    return bcs_wcoll(W_ALLTOALL, (void *)sendbuf, sendcount, NULL, NULL, NULL, H(sendtype), NULL, recvbuf, recvcount, NULL, NULL, NULL, H(recvtype), NULL, H(comm), R(request), BCS_PERSIST);
}

int PMPI_Neighbor_alltoall_init_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, MPI_Request *request) {
    GUARD("MPI_Neighbor_alltoall_init_c");
    REQ("MPI_Neighbor_alltoall_init_c", comm, request);
    INFO("MPI_Neighbor_alltoall_init_c", comm, info);
    return bcs_wcoll(W_ALLTOALL, (void *)sendbuf, sendcount, NULL, NULL, NULL, H(sendtype), NULL, recvbuf, recvcount, NULL, NULL, NULL, H(recvtype), NULL, H(comm), R(request), BCS_PERSIST | BCS_LARGE);
}

int PMPI_Neighbor_allgatherv_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype, MPI_Comm comm) {
    GUARD("MPI_Neighbor_allgatherv_c");
    return bcs_wcoll(W_ALLGATHERV, (void *)sendbuf, sendcount, NULL, NULL, NULL, H(sendtype), NULL, recvbuf, 0, (void *)recvcounts, (void *)displs, NULL, H(recvtype), NULL, H(comm), NULL, BCS_LARGE);
}

int PMPI_Ineighbor_allgatherv_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request) {
    GUARD("MPI_Ineighbor_allgatherv_c");
    REQ("MPI_Ineighbor_allgatherv_c", comm, request);
    return bcs_wcoll(W_ALLGATHERV, (void *)sendbuf, sendcount, NULL, NULL, NULL, H(sendtype), NULL, recvbuf, 0, (void *)recvcounts, (void *)displs, NULL, H(recvtype), NULL, H(comm), R(request), BCS_LARGE);
}

int PMPI_Neighbor_allgatherv_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, MPI_Request *request) {
    GUARD("MPI_Neighbor_allgatherv_init");
    REQ("MPI_Neighbor_allgatherv_init", comm, request);
    INFO("MPI_Neighbor_allgatherv_init", comm, info);
    return bcs_wcoll(W_ALLGATHERV, (void *)sendbuf, sendcount, NULL, NULL, NULL, H(sendtype), NULL, recvbuf, 0, (void *)recvcounts, (void *)displs, NULL, H(recvtype), NULL, H(comm), R(request), BCS_PERSIST);
}

int PMPI_Neighbor_allgatherv_init_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, MPI_Request *request) {
    GUARD("MPI_Neighbor_allgatherv_init_c");
    REQ("MPI_Neighbor_allgatherv_init_c", comm, request);
    INFO("MPI_Neighbor_allgatherv_init_c", comm, info);
    return bcs_wcoll(W_ALLGATHERV, (void *)sendbuf, sendcount, NULL, NULL, NULL, H(sendtype), NULL, recvbuf, 0, (void *)recvcounts, (void *)displs, NULL, H(recvtype), NULL, H(comm), R(request), BCS_PERSIST | BCS_LARGE);
}

int PMPI_Neighbor_alltoallv_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[], MPI_Datatype sendtype, void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint rdispls[], MPI_Datatype recvtype, MPI_Comm comm) {
    GUARD("MPI_Neighbor_alltoallv_c");
    return bcs_wcoll(W_ALLTOALLV, (void *)sendbuf, 0, (void *)sendcounts, (void *)sdispls, NULL, H(sendtype), NULL, recvbuf, 0, (void *)recvcounts, (void *)rdispls, NULL, H(recvtype), NULL, H(comm), NULL, BCS_LARGE);
}

int PMPI_Ineighbor_alltoallv_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[], MPI_Datatype sendtype, void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint rdispls[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request) {
    GUARD("MPI_Ineighbor_alltoallv_c");
    REQ("MPI_Ineighbor_alltoallv_c", comm, request);
    return bcs_wcoll(W_ALLTOALLV, (void *)sendbuf, 0, (void *)sendcounts, (void *)sdispls, NULL, H(sendtype), NULL, recvbuf, 0, (void *)recvcounts, (void *)rdispls, NULL, H(recvtype), NULL, H(comm), R(request), BCS_LARGE);
}

int PMPI_Neighbor_alltoallv_init(const void *sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, MPI_Request *request) {
    GUARD("MPI_Neighbor_alltoallv_init");
    REQ("MPI_Neighbor_alltoallv_init", comm, request);
    INFO("MPI_Neighbor_alltoallv_init", comm, info);
    return bcs_wcoll(W_ALLTOALLV, (void *)sendbuf, 0, (void *)sendcounts, (void *)sdispls, NULL, H(sendtype), NULL, recvbuf, 0, (void *)recvcounts, (void *)rdispls, NULL, H(recvtype), NULL, H(comm), R(request), BCS_PERSIST);
}

int PMPI_Neighbor_alltoallv_init_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[], MPI_Datatype sendtype, void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint rdispls[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, MPI_Request *request) {
    GUARD("MPI_Neighbor_alltoallv_init_c");
    REQ("MPI_Neighbor_alltoallv_init_c", comm, request);
    INFO("MPI_Neighbor_alltoallv_init_c", comm, info);
    return bcs_wcoll(W_ALLTOALLV, (void *)sendbuf, 0, (void *)sendcounts, (void *)sdispls, NULL, H(sendtype), NULL, recvbuf, 0, (void *)recvcounts, (void *)rdispls, NULL, H(recvtype), NULL, H(comm), R(request), BCS_PERSIST | BCS_LARGE);
}

int PMPI_Neighbor_alltoallw_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[], const MPI_Datatype sendtypes[], void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm) {
    GUARD("MPI_Neighbor_alltoallw_c");
    return bcs_wcoll(W_NALLTOALLW, (void *)sendbuf, 0, (void *)sendcounts, NULL, AINTS(sdispls), 0, (uintptr_t *)sendtypes, recvbuf, 0, (void *)recvcounts, NULL, AINTS(rdispls), 0, (uintptr_t *)recvtypes, H(comm), NULL, BCS_LARGE);
}

int PMPI_Ineighbor_alltoallw_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[], const MPI_Datatype sendtypes[], void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Request *request) {
    GUARD("MPI_Ineighbor_alltoallw_c");
    REQ("MPI_Ineighbor_alltoallw_c", comm, request);
    return bcs_wcoll(W_NALLTOALLW, (void *)sendbuf, 0, (void *)sendcounts, NULL, AINTS(sdispls), 0, (uintptr_t *)sendtypes, recvbuf, 0, (void *)recvcounts, NULL, AINTS(rdispls), 0, (uintptr_t *)recvtypes, H(comm), R(request), BCS_LARGE);
}

int PMPI_Neighbor_alltoallw_init(const void *sendbuf, const int sendcounts[], const MPI_Aint sdispls[], const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[], const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Info info, MPI_Request *request) {
    GUARD("MPI_Neighbor_alltoallw_init");
    REQ("MPI_Neighbor_alltoallw_init", comm, request);
    INFO("MPI_Neighbor_alltoallw_init", comm, info);
    return bcs_wcoll(W_NALLTOALLW, (void *)sendbuf, 0, (void *)sendcounts, NULL, AINTS(sdispls), 0, (uintptr_t *)sendtypes, recvbuf, 0, (void *)recvcounts, NULL, AINTS(rdispls), 0, (uintptr_t *)recvtypes, H(comm), R(request), BCS_PERSIST);
}

int PMPI_Neighbor_alltoallw_init_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[], const MPI_Datatype sendtypes[], void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Info info, MPI_Request *request) {
    GUARD("MPI_Neighbor_alltoallw_init_c");
    REQ("MPI_Neighbor_alltoallw_init_c", comm, request);
    INFO("MPI_Neighbor_alltoallw_init_c", comm, info);
    return bcs_wcoll(W_NALLTOALLW, (void *)sendbuf, 0, (void *)sendcounts, NULL, AINTS(sdispls), 0, (uintptr_t *)sendtypes, recvbuf, 0, (void *)recvcounts, NULL, AINTS(rdispls), 0, (uintptr_t *)recvtypes, H(comm), R(request), BCS_PERSIST | BCS_LARGE);
}

#define W(name) _Pragma(BCS_STR(weak MPI_##name = PMPI_##name))
#define BCS_STR(x) #x
W(Barrier_init) W(Bcast_c) W(Ibcast_c) W(Bcast_init) W(Bcast_init_c) W(Reduce_c) W(Ireduce_c) W(Reduce_init)
W(Reduce_init_c) W(Allreduce_c) W(Iallreduce_c) W(Allreduce_init) W(Allreduce_init_c) W(Scan_c) W(Iscan_c)
W(Scan_init) W(Scan_init_c) W(Exscan_c) W(Iexscan_c) W(Exscan_init) W(Exscan_init_c) W(Reduce_scatter_block_c)
W(Ireduce_scatter_block_c) W(Reduce_scatter_block_init) W(Reduce_scatter_block_init_c) W(Reduce_scatter_c)
W(Ireduce_scatter_c) W(Reduce_scatter_init) W(Reduce_scatter_init_c) W(Gather_c) W(Igather_c) W(Gather_init)
W(Gather_init_c) W(Scatter_c) W(Iscatter_c) W(Scatter_init) W(Scatter_init_c) W(Allgather_c) W(Iallgather_c)
W(Allgather_init) W(Allgather_init_c) W(Alltoall_c) W(Ialltoall_c) W(Alltoall_init) W(Alltoall_init_c)
W(Gatherv_c) W(Igatherv_c) W(Gatherv_init) W(Gatherv_init_c) W(Allgatherv_c) W(Iallgatherv_c) W(Allgatherv_init)
W(Allgatherv_init_c) W(Scatterv_c) W(Iscatterv_c) W(Scatterv_init) W(Scatterv_init_c) W(Alltoallv_c)
W(Ialltoallv_c) W(Alltoallv_init) W(Alltoallv_init_c) W(Alltoallw_c) W(Ialltoallw_c) W(Alltoallw_init)
W(Alltoallw_init_c) W(Neighbor_allgather_c) W(Ineighbor_allgather_c) W(Neighbor_allgather_init) W(Neighbor_allgather_init_c)
W(Neighbor_alltoall_c) W(Ineighbor_alltoall_c) W(Neighbor_alltoall_init) W(Neighbor_alltoall_init_c)
W(Neighbor_allgatherv_c) W(Ineighbor_allgatherv_c) W(Neighbor_allgatherv_init) W(Neighbor_allgatherv_init_c)
W(Neighbor_alltoallv_c) W(Ineighbor_alltoallv_c) W(Neighbor_alltoallv_init) W(Neighbor_alltoallv_init_c)
W(Neighbor_alltoallw_c) W(Ineighbor_alltoallw_c) W(Neighbor_alltoallw_init) W(Neighbor_alltoallw_init_c)

// ---- Non-blocking send-receive (isendrecv.go) ----

int PMPI_Isendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag, void *recvbuf,
                   int recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm, MPI_Request *request) {
    GUARD("MPI_Isendrecv");
    REQ("MPI_Isendrecv", comm, request);
    return bcs_isendrecv((void *)sendbuf, sendcount, H(sendtype), dest, sendtag, recvbuf, recvcount, H(recvtype), source,
                         recvtag, H(comm), R(request), 0);
}

int PMPI_Isendrecv_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, int dest, int sendtag,
                     void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm,
                     MPI_Request *request) {
    GUARD("MPI_Isendrecv_c");
    REQ("MPI_Isendrecv_c", comm, request);
    return bcs_isendrecv((void *)sendbuf, sendcount, H(sendtype), dest, sendtag, recvbuf, recvcount, H(recvtype), source,
                         recvtag, H(comm), R(request), BCS_LARGE);
}

int PMPI_Isendrecv_replace(void *buf, int count, MPI_Datatype datatype, int dest, int sendtag, int source, int recvtag,
                           MPI_Comm comm, MPI_Request *request) {
    GUARD("MPI_Isendrecv_replace");
    REQ("MPI_Isendrecv_replace", comm, request);
    return bcs_isendrecv_replace(buf, count, H(datatype), dest, sendtag, source, recvtag, H(comm), R(request), 0);
}

int PMPI_Isendrecv_replace_c(void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int sendtag, int source,
                             int recvtag, MPI_Comm comm, MPI_Request *request) {
    GUARD("MPI_Isendrecv_replace_c");
    REQ("MPI_Isendrecv_replace_c", comm, request);
    return bcs_isendrecv_replace(buf, count, H(datatype), dest, sendtag, source, recvtag, H(comm), R(request), BCS_LARGE);
}

WP(Isendrecv) WP(Isendrecv_c) WP(Isendrecv_replace) WP(Isendrecv_replace_c)

// ---- MPI_Reduce_local (reducelocal.go) and MPI_Op_create_c ----

int PMPI_Reduce_local(const void *inbuf, void *inoutbuf, int count, MPI_Datatype datatype, MPI_Op op) {
    GUARD("MPI_Reduce_local");
    return bcs_reduce_local((void *)inbuf, inoutbuf, count, H(datatype), H(op), 0);
}

int PMPI_Reduce_local_c(const void *inbuf, void *inoutbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op) {
    GUARD("MPI_Reduce_local_c");
    return bcs_reduce_local((void *)inbuf, inoutbuf, count, H(datatype), H(op), BCS_LARGE);
}

// The functions given to MPI_Op_create_c take an MPI_Count length:
// bcs_call_op (shim.c) calls those through bcs_call_op_c. They are few, so
// a list searched in order is enough.
static void **bcs_op_c_fns;
static int bcs_op_c_n, bcs_op_c_cap;

int bcs_op_is_large(void *fn) {
    for (int i = 0; i < bcs_op_c_n; i++)
        if (bcs_op_c_fns[i] == fn)
            return 1;
    return 0;
}

void bcs_call_op_c(void *fn, void *in, void *inout, int *len, uintptr_t datatype) {
    MPI_Datatype t = (MPI_Datatype)datatype;
    MPI_Count n = *len;
    ((MPI_User_function_c *)fn)(in, inout, &n, &t);
}

int PMPI_Op_create_c(MPI_User_function_c *user_fn, int commute, MPI_Op *op) {
    GUARD("MPI_Op_create_c");
    if (user_fn != NULL && !bcs_op_is_large((void *)user_fn)) {
        if (bcs_op_c_n == bcs_op_c_cap) {
            int cap = bcs_op_c_cap ? 2 * bcs_op_c_cap : 8;
            void **v = realloc(bcs_op_c_fns, sizeof(void *) * (size_t)cap);
            if (v == NULL)
                return bcs_error(H(MPI_COMM_WORLD), "MPI_Op_create_c", MPI_ERR_NO_MEM, "no memory for the operation");
            bcs_op_c_fns = v;
            bcs_op_c_cap = cap;
        }
        bcs_op_c_fns[bcs_op_c_n++] = (void *)user_fn;
    }
    return bcs_op_create((void *)user_fn, commute, R(op));
}

WP(Reduce_local) WP(Reduce_local_c) WP(Op_create_c)

// ---- Generalized requests (grequest.go) ----

int bcs_call_gquery(void *fn, void *extra, MPI_Status *st) { return ((MPI_Grequest_query_function *)fn)(extra, st); }
int bcs_call_gfree(void *fn, void *extra) { return ((MPI_Grequest_free_function *)fn)(extra); }
int bcs_call_gcancel(void *fn, void *extra, int complete) {
    return ((MPI_Grequest_cancel_function *)fn)(extra, complete);
}

int PMPI_Grequest_start(MPI_Grequest_query_function *query_fn, MPI_Grequest_free_function *free_fn,
                        MPI_Grequest_cancel_function *cancel_fn, void *extra_state, MPI_Request *request) {
    GUARD("MPI_Grequest_start");
    return bcs_grequest_start((void *)query_fn, (void *)free_fn, (void *)cancel_fn, extra_state, R(request));
}

int PMPI_Grequest_complete(MPI_Request request) {
    GUARD("MPI_Grequest_complete");
    return bcs_grequest_complete(H(request));
}

WP(Grequest_start) WP(Grequest_complete)

// ---- Topology mapping and MPI_Type_match_size ----

// bcs_map is MPI_Cart_map and MPI_Graph_map: ranks keep their order (as in
// MPI_Cart_create), so a process keeps its rank if it is among the first
// n and is MPI_UNDEFINED otherwise.
static int bcs_map(const char *call, MPI_Comm comm, long long n, const char *what, int *newrank) {
    int rank, size, rc = PMPI_Comm_size(comm, &size);
    if (rc != MPI_SUCCESS)
        return rc;
    if ((rc = PMPI_Comm_rank(comm, &rank)) != MPI_SUCCESS)
        return rc;
    char msg[200];
    if (n < 0 || n > size) {
        snprintf(msg, sizeof msg, "%s = %lld, want 0..%d (the communicator's size)", what, n, size);
        return bcs_error(H(comm), (char *)call, MPI_ERR_DIMS, msg);
    }
    if (newrank == NULL)
        return bcs_error(H(comm), (char *)call, MPI_ERR_ARG, "newrank = NULL");
    *newrank = rank < n ? rank : MPI_UNDEFINED;
    return MPI_SUCCESS;
}

int PMPI_Cart_map(MPI_Comm comm, int ndims, const int dims[], const int periods[], int *newrank) {
    GUARD("MPI_Cart_map");
    (void)periods;
    if (ndims < 0 || (ndims > 0 && dims == NULL)) {
        char msg[120];
        snprintf(msg, sizeof msg, "ndims = %d with dims = %p, want ndims >= 0 and dims for each", ndims, (void *)dims);
        return bcs_error(H(comm), "MPI_Cart_map", MPI_ERR_DIMS, msg);
    }
    long long n = 1;
    for (int i = 0; i < ndims; i++) {
        if (dims[i] <= 0) {
            char msg[120];
            snprintf(msg, sizeof msg, "dims[%d] = %d, want > 0", i, dims[i]);
            return bcs_error(H(comm), "MPI_Cart_map", MPI_ERR_DIMS, msg);
        }
        n *= dims[i];
        if (n > INT_MAX)
            break;
    }
    return bcs_map("MPI_Cart_map", comm, n, "the product of dims", newrank);
}

int PMPI_Graph_map(MPI_Comm comm, int nnodes, const int indx[], const int edges[], int *newrank) {
    GUARD("MPI_Graph_map");
    (void)indx, (void)edges;
    return bcs_map("MPI_Graph_map", comm, nnodes, "nnodes", newrank);
}

// MPI_Type_match_size returns the named Fortran type of a class and size.
int PMPI_Type_match_size(int typeclass, int size, MPI_Datatype *datatype) {
    GUARD("MPI_Type_match_size");
    static const struct { int class, size; MPI_Datatype t; } m[] = {
        {MPI_TYPECLASS_INTEGER, 1, MPI_INTEGER1}, {MPI_TYPECLASS_INTEGER, 2, MPI_INTEGER2},
        {MPI_TYPECLASS_INTEGER, 4, MPI_INTEGER4}, {MPI_TYPECLASS_INTEGER, 8, MPI_INTEGER8},
        {MPI_TYPECLASS_INTEGER, 16, MPI_INTEGER16}, {MPI_TYPECLASS_REAL, 2, MPI_REAL2},
        {MPI_TYPECLASS_REAL, 4, MPI_REAL4}, {MPI_TYPECLASS_REAL, 8, MPI_REAL8}, {MPI_TYPECLASS_REAL, 16, MPI_REAL16},
        {MPI_TYPECLASS_COMPLEX, 4, MPI_COMPLEX4}, {MPI_TYPECLASS_COMPLEX, 8, MPI_COMPLEX8},
        {MPI_TYPECLASS_COMPLEX, 16, MPI_COMPLEX16}, {MPI_TYPECLASS_COMPLEX, 32, MPI_COMPLEX32},
    };
    if (datatype == NULL)
        return bcs_error(H(MPI_COMM_WORLD), "MPI_Type_match_size", MPI_ERR_ARG, "datatype = NULL");
    for (size_t i = 0; i < sizeof m / sizeof m[0]; i++)
        if (m[i].class == typeclass && m[i].size == size) {
            *datatype = m[i].t;
            return MPI_SUCCESS;
        }
    char msg[200];
    snprintf(msg, sizeof msg, "typeclass = %d, size = %d: want MPI_TYPECLASS_INTEGER (sizes 1, 2, 4, 8, 16), "
             "MPI_TYPECLASS_REAL (2, 4, 8, 16) or MPI_TYPECLASS_COMPLEX (4, 8, 16, 32)", typeclass, size);
    return bcs_error(H(MPI_COMM_WORLD), "MPI_Type_match_size", MPI_ERR_ARG, msg);
}

WP(Cart_map) WP(Graph_map) WP(Type_match_size)

// ---- Partitioned communication (partition.go) ----

int PMPI_Psend_init(const void *buf, int partitions, MPI_Count count, MPI_Datatype datatype, int dest, int tag,
                    MPI_Comm comm, MPI_Info info, MPI_Request *request) {
    GUARD("MPI_Psend_init");
    INFO("MPI_Psend_init", comm, info);
    return bcs_psend_init((void *)buf, partitions, count, H(datatype), dest, tag, H(comm), R(request), 0);
}

int PMPI_Psend_init_c(const void *buf, int partitions, MPI_Count count, MPI_Datatype datatype, int dest, int tag,
                      MPI_Comm comm, MPI_Info info, MPI_Request *request) {
    GUARD("MPI_Psend_init_c");
    INFO("MPI_Psend_init_c", comm, info);
    return bcs_psend_init((void *)buf, partitions, count, H(datatype), dest, tag, H(comm), R(request), BCS_LARGE);
}

int PMPI_Precv_init(void *buf, int partitions, MPI_Count count, MPI_Datatype datatype, int dest, int tag,
                    MPI_Comm comm, MPI_Info info, MPI_Request *request) {
    GUARD("MPI_Precv_init");
    INFO("MPI_Precv_init", comm, info);
    return bcs_precv_init(buf, partitions, count, H(datatype), dest, tag, H(comm), R(request), 0);
}

int PMPI_Precv_init_c(void *buf, int partitions, MPI_Count count, MPI_Datatype datatype, int source, int tag,
                      MPI_Comm comm, MPI_Info info, MPI_Request *request) {
    GUARD("MPI_Precv_init_c");
    INFO("MPI_Precv_init_c", comm, info);
    return bcs_precv_init(buf, partitions, count, H(datatype), source, tag, H(comm), R(request), BCS_LARGE);
}

int PMPI_Pready(int partition, MPI_Request request) {
    GUARD("MPI_Pready");
    return bcs_pready("MPI_Pready", partition, partition, 0, NULL, H(request));
}

int PMPI_Pready_range(int partition_low, int partition_high, MPI_Request request) {
    GUARD("MPI_Pready_range");
    return bcs_pready("MPI_Pready_range", partition_low, partition_high, 0, NULL, H(request));
}

int PMPI_Pready_list(int length, const int array_of_partitions[], MPI_Request request) {
    GUARD("MPI_Pready_list");
    static int none[1];
    return bcs_pready("MPI_Pready_list", 0, -1, length, (int *)(array_of_partitions ? array_of_partitions : (length > 0 ? NULL : none)),
                      H(request));
}

int PMPI_Parrived(MPI_Request request, int partition, int *flag) {
    GUARD("MPI_Parrived");
    return bcs_parrived(H(request), partition, flag);
}

WP(Psend_init) WP(Psend_init_c) WP(Precv_init) WP(Precv_init_c) WP(Pready) WP(Pready_range) WP(Pready_list)
WP(Parrived)

// ---- User error classes, codes and strings ----
// MPI_Add_error_class and MPI_Add_error_code hand out numbers above
// MPI_ERR_LASTCODE, in order; removing the highest numbers in use makes
// them free again (a program that adds and removes in a loop reuses the
// same numbers instead of growing the table: MPICH's errhan/adderr does it
// 10,000 times). MPI_LASTUSEDCODE follows the largest in use. MPI_Error_class
// and MPI_Error_string (shim.c) answer for them through bcs_user_error. A
// class can be removed once it has no codes (each class counts its live
// codes, so removal does not scan the table); a string only from a class or
// code added here.

struct bcs_uerr {
    int class;  // the class of a code; a class's own number for a class
    int live;
    int ncodes; // a class: its live codes
    char *text; // MPI_Add_error_string's, or NULL
};
static struct bcs_uerr *bcs_uerrs;
static int bcs_nuerrs, bcs_cap_uerrs;
void bcs_set_lastusedcode(int code); // shim.c

static struct bcs_uerr *bcs_uerr_of(int code) {
    int i = code - (MPI_ERR_LASTCODE + 1);
    if (i < 0 || i >= bcs_nuerrs || !bcs_uerrs[i].live)
        return NULL;
    return &bcs_uerrs[i];
}

// bcs_user_error answers MPI_Error_class and MPI_Error_string for a code
// added here: 0 if code is not one.
int bcs_user_error(int code, int *class, const char **text) {
    struct bcs_uerr *e = bcs_uerr_of(code);
    if (e == NULL)
        return 0;
    if (class)
        *class = e->class;
    if (text)
        *text = e->text ? e->text : "";
    return 1;
}

static int bcs_uerr_new(const char *call, int class, int *out) {
    if (out == NULL)
        return bcs_error(H(MPI_COMM_WORLD), (char *)call, MPI_ERR_ARG, "the output argument is NULL");
    if (bcs_nuerrs == bcs_cap_uerrs) {
        int cap = bcs_cap_uerrs ? 2 * bcs_cap_uerrs : 16;
        struct bcs_uerr *v = realloc(bcs_uerrs, sizeof *v * (size_t)cap);
        if (v == NULL)
            return bcs_error(H(MPI_COMM_WORLD), (char *)call, MPI_ERR_NO_MEM, "no memory for the error code");
        bcs_uerrs = v;
        bcs_cap_uerrs = cap;
    }
    if (bcs_nuerrs == INT_MAX - MPI_ERR_LASTCODE - 1)
        return bcs_error(H(MPI_COMM_WORLD), (char *)call, MPI_ERR_NO_MEM, "every error code up to INT_MAX is in use");
    int code = MPI_ERR_LASTCODE + 1 + bcs_nuerrs;
    bcs_uerrs[bcs_nuerrs++] = (struct bcs_uerr){class < 0 ? code : class, 1, 0, NULL};
    if (class >= 0 && class > MPI_ERR_LASTCODE)
        bcs_uerr_of(class)->ncodes++;
    bcs_set_lastusedcode(code);
    *out = code;
    return MPI_SUCCESS;
}

int PMPI_Add_error_class(int *errorclass) {
    GUARD("MPI_Add_error_class");
    return bcs_uerr_new("MPI_Add_error_class", -1, errorclass);
}

int PMPI_Add_error_code(int errorclass, int *errorcode) {
    GUARD("MPI_Add_error_code");
    struct bcs_uerr *e = bcs_uerr_of(errorclass);
    if (bcs_class_name(errorclass) == NULL && (e == NULL || e->class != errorclass)) {
        char msg[160];
        snprintf(msg, sizeof msg, "errorclass = %d is not an error class (a predefined one, or one from MPI_Add_error_class)", errorclass);
        return bcs_error(H(MPI_COMM_WORLD), "MPI_Add_error_code", MPI_ERR_ARG, msg);
    }
    return bcs_uerr_new("MPI_Add_error_code", errorclass, errorcode);
}

// bcs_uerr_drop forgets a removed entry and frees the numbers at the top
// of the table that are no longer in use.
static void bcs_uerr_drop(struct bcs_uerr *e) {
    free(e->text);
    *e = (struct bcs_uerr){0, 0, 0, NULL};
    while (bcs_nuerrs > 0 && !bcs_uerrs[bcs_nuerrs - 1].live)
        bcs_nuerrs--;
    bcs_set_lastusedcode(MPI_ERR_LASTCODE + bcs_nuerrs); // never below MPI_ERR_LASTCODE (MPI 5.0 §9.5)
}

static int bcs_uerr_bad(const char *call, int code) {
    char msg[200];
    snprintf(msg, sizeof msg, "errorcode = %d is not a live error class or code from MPI_Add_error_class or "
             "MPI_Add_error_code (predefined ones cannot be changed)", code);
    return bcs_error(H(MPI_COMM_WORLD), (char *)call, MPI_ERR_ARG, msg);
}

int PMPI_Add_error_string(int errorcode, const char *string) {
    GUARD("MPI_Add_error_string");
    struct bcs_uerr *e = bcs_uerr_of(errorcode);
    if (e == NULL)
        return bcs_uerr_bad("MPI_Add_error_string", errorcode);
    if (string == NULL || strlen(string) >= MPI_MAX_ERROR_STRING) {
        char msg[160];
        snprintf(msg, sizeof msg, "string is NULL or longer than MPI_MAX_ERROR_STRING - 1 = %d characters", MPI_MAX_ERROR_STRING - 1);
        return bcs_error(H(MPI_COMM_WORLD), "MPI_Add_error_string", MPI_ERR_ARG, msg);
    }
    char *t = strdup(string);
    if (t == NULL)
        return bcs_error(H(MPI_COMM_WORLD), "MPI_Add_error_string", MPI_ERR_NO_MEM, "no memory for the string");
    free(e->text);
    e->text = t;
    return MPI_SUCCESS;
}

int PMPI_Remove_error_string(int errorcode) {
    GUARD("MPI_Remove_error_string");
    struct bcs_uerr *e = bcs_uerr_of(errorcode);
    if (e == NULL)
        return bcs_uerr_bad("MPI_Remove_error_string", errorcode);
    free(e->text);
    e->text = NULL;
    return MPI_SUCCESS;
}

int PMPI_Remove_error_code(int errorcode) {
    GUARD("MPI_Remove_error_code");
    struct bcs_uerr *e = bcs_uerr_of(errorcode);
    if (e == NULL || e->class == errorcode)
        return bcs_uerr_bad("MPI_Remove_error_code", errorcode);
    if (e->class > MPI_ERR_LASTCODE)
        bcs_uerr_of(e->class)->ncodes--;
    bcs_uerr_drop(e);
    return MPI_SUCCESS;
}

int PMPI_Remove_error_class(int errorclass) {
    GUARD("MPI_Remove_error_class");
    struct bcs_uerr *e = bcs_uerr_of(errorclass);
    if (e == NULL || e->class != errorclass)
        return bcs_uerr_bad("MPI_Remove_error_class", errorclass);
    if (e->ncodes > 0)
        for (int i = 0; i < bcs_nuerrs; i++)
            if (bcs_uerrs[i].live && bcs_uerrs[i].class == errorclass && MPI_ERR_LASTCODE + 1 + i != errorclass) {
                char msg[160];
                snprintf(msg, sizeof msg, "error class %d still has error code %d; remove its codes first", errorclass,
                         MPI_ERR_LASTCODE + 1 + i);
                return bcs_error(H(MPI_COMM_WORLD), "MPI_Remove_error_class", MPI_ERR_ARG, msg);
            }
    bcs_uerr_drop(e);
    return MPI_SUCCESS;
}

WP(Add_error_class) WP(Add_error_code) WP(Add_error_string) WP(Remove_error_string) WP(Remove_error_code)
WP(Remove_error_class)

// ---- Attributes on datatypes (typeattr.go); the callbacks go through the
// communicators' trampolines (shim.c): both handles are pointers ----

int PMPI_Type_create_keyval(MPI_Type_copy_attr_function *type_copy_attr_fn,
                            MPI_Type_delete_attr_function *type_delete_attr_fn, int *type_keyval, void *extra_state) {
    GUARD("MPI_Type_create_keyval");
    return bcs_type_create_keyval((void *)type_copy_attr_fn, (void *)type_delete_attr_fn, type_keyval, extra_state);
}

int PMPI_Type_free_keyval(int *type_keyval) {
    GUARD("MPI_Type_free_keyval");
    return bcs_type_free_keyval(type_keyval);
}

int PMPI_Type_set_attr(MPI_Datatype datatype, int type_keyval, void *attribute_val) {
    GUARD("MPI_Type_set_attr");
    return bcs_type_set_attr(H(datatype), type_keyval, attribute_val);
}

int PMPI_Type_get_attr(MPI_Datatype datatype, int type_keyval, void *attribute_val, int *flag) {
    GUARD("MPI_Type_get_attr");
    NONNULL(MPI_COMM_WORLD, "MPI_Type_get_attr", attribute_val);
    NONNULL(MPI_COMM_WORLD, "MPI_Type_get_attr", flag);
    return bcs_type_get_attr(H(datatype), type_keyval, (void **)attribute_val, flag);
}

int PMPI_Type_delete_attr(MPI_Datatype datatype, int type_keyval) {
    GUARD("MPI_Type_delete_attr");
    return bcs_type_delete_attr(H(datatype), type_keyval);
}

WP(Type_create_keyval) WP(Type_free_keyval) WP(Type_set_attr) WP(Type_get_attr) WP(Type_delete_attr)

// ---- Buffers of buffered sends, MPI 4.1 (bsend.go) ----

int PMPI_Buffer_flush(void) {
    GUARD("MPI_Buffer_flush");
    return bcs_buffer_flush(NULL);
}

int PMPI_Comm_flush_buffer(MPI_Comm comm) {
    GUARD("MPI_Comm_flush_buffer");
    uintptr_t c = H(comm);
    return bcs_buffer_flush(&c);
}

int PMPI_Comm_attach_buffer(MPI_Comm comm, void *buffer, int size) {
    GUARD("MPI_Comm_attach_buffer");
    return bcs_comm_attach_buffer(H(comm), buffer, size, 0);
}

int PMPI_Comm_attach_buffer_c(MPI_Comm comm, void *buffer, MPI_Count size) {
    GUARD("MPI_Comm_attach_buffer_c");
    return bcs_comm_attach_buffer(H(comm), buffer, size, BCS_LARGE);
}

int PMPI_Comm_detach_buffer(MPI_Comm comm, void *buffer_addr, int *size) {
    GUARD("MPI_Comm_detach_buffer");
    MPI_Count n;
    int rc = bcs_comm_detach_buffer(H(comm), (void **)buffer_addr, size ? &n : NULL, 0);
    if (rc == MPI_SUCCESS)
        *size = (int)n; // at most INT_MAX: a larger buffer is refused
    return rc;
}

int PMPI_Comm_detach_buffer_c(MPI_Comm comm, void *buffer_addr, MPI_Count *size) {
    GUARD("MPI_Comm_detach_buffer_c");
    return bcs_comm_detach_buffer(H(comm), (void **)buffer_addr, size, BCS_LARGE);
}

WP(Buffer_flush) WP(Comm_flush_buffer) WP(Comm_attach_buffer) WP(Comm_attach_buffer_c) WP(Comm_detach_buffer)
WP(Comm_detach_buffer_c)

// MPI_Type_get_value_index: the predefined value-index pair type of
// value_type and index_type (MINLOC and MAXLOC), or MPI_DATATYPE_NULL when
// there is none.
int PMPI_Type_get_value_index(MPI_Datatype value_type, MPI_Datatype index_type, MPI_Datatype *pair_type) {
    GUARD("MPI_Type_get_value_index");
    static const struct { MPI_Datatype v, i, pair; } m[] = {
        {MPI_FLOAT, MPI_INT, MPI_FLOAT_INT}, {MPI_DOUBLE, MPI_INT, MPI_DOUBLE_INT},
        {MPI_LONG, MPI_INT, MPI_LONG_INT}, {MPI_SHORT, MPI_INT, MPI_SHORT_INT}, {MPI_INT, MPI_INT, MPI_2INT},
        {MPI_LONG_DOUBLE, MPI_INT, MPI_LONG_DOUBLE_INT}, {MPI_REAL, MPI_REAL, MPI_2REAL},
        {MPI_DOUBLE_PRECISION, MPI_DOUBLE_PRECISION, MPI_2DOUBLE_PRECISION}, {MPI_INTEGER, MPI_INTEGER, MPI_2INTEGER},
    };
    int n, rc;
    if ((rc = PMPI_Type_size(value_type, &n)) != MPI_SUCCESS || (rc = PMPI_Type_size(index_type, &n)) != MPI_SUCCESS)
        return rc; // not datatypes: the error names them
    if (pair_type == NULL)
        return bcs_error(H(MPI_COMM_WORLD), "MPI_Type_get_value_index", MPI_ERR_ARG, "pair_type = NULL");
    *pair_type = MPI_DATATYPE_NULL;
    for (size_t k = 0; k < sizeof m / sizeof m[0]; k++)
        if (m[k].v == value_type && m[k].i == index_type)
            *pair_type = m[k].pair;
    return MPI_SUCCESS;
}

WP(Type_get_value_index)
