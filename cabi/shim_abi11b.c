// PMPI_X of Alltoallw, the graph and distributed-graph topologies, the
// neighbourhood collectives, MPI_Comm_create_group and
// MPI_Request_get_status* (wcoll.go, graph.go, getstatus.go), with MPI_X a
// weak alias, as in shim.c.

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

#include "shim.h"
#include "_cgo_export.h"

int bcs_guard(const char *call);
#define GUARD(call) do { int g_ = bcs_guard(call); if (g_ != MPI_SUCCESS) return g_; } while (0); BCS_LOCKED
#define H(x) ((uintptr_t)(x))
#define REQ(call, comm, request)                                                      \
    do {                                                                              \
        if ((request) == NULL)                                                        \
            return bcs_null_arg(H(comm), call, "request = NULL");                     \
    } while (0)

enum { W_ALLTOALLW, W_ALLGATHER, W_ALLGATHERV, W_ALLTOALL, W_ALLTOALLV, W_NALLTOALLW };

// ---- Alltoallw ----

int PMPI_Alltoallw(const void *sendbuf, const int sendcounts[], const int sdispls[], const MPI_Datatype sendtypes[],
                   void *recvbuf, const int recvcounts[], const int rdispls[], const MPI_Datatype recvtypes[],
                   MPI_Comm comm) {
    GUARD("MPI_Alltoallw");
    return bcs_wcoll(W_ALLTOALLW, (void *)sendbuf, 0, (int *)sendcounts, (int *)sdispls, NULL, 0,
                     (uintptr_t *)sendtypes, recvbuf, 0, (int *)recvcounts, (int *)rdispls, NULL, 0,
                     (uintptr_t *)recvtypes, H(comm), NULL, 0);
}

int PMPI_Ialltoallw(const void *sendbuf, const int sendcounts[], const int sdispls[], const MPI_Datatype sendtypes[],
                    void *recvbuf, const int recvcounts[], const int rdispls[], const MPI_Datatype recvtypes[],
                    MPI_Comm comm, MPI_Request *request) {
    GUARD("MPI_Ialltoallw");
    REQ("MPI_Ialltoallw", comm, request);
    return bcs_wcoll(W_ALLTOALLW, (void *)sendbuf, 0, (int *)sendcounts, (int *)sdispls, NULL, 0,
                     (uintptr_t *)sendtypes, recvbuf, 0, (int *)recvcounts, (int *)rdispls, NULL, 0,
                     (uintptr_t *)recvtypes, H(comm), (uintptr_t *)request, 0);
}

// ---- Neighbourhood collectives ----

#define NB_BLOCKS(name, which, req, ...)                                                                       \
    int PMPI_##name(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,   \
                    MPI_Datatype recvtype, MPI_Comm comm __VA_ARGS__) {                                        \
        GUARD("MPI_" #name);                                                                                   \
        uintptr_t *r = req;                                                                                    \
        if (r == (uintptr_t *)1)                                                                               \
            return bcs_null_arg(H(comm), "MPI_" #name, "request = NULL");                                      \
        return bcs_wcoll(which, (void *)sendbuf, sendcount, NULL, NULL, NULL, H(sendtype), NULL, recvbuf,      \
                         recvcount, NULL, NULL, NULL, H(recvtype), NULL, H(comm), r, 0);                          \
    }
#define RQ (request ? (uintptr_t *)request : (uintptr_t *)1)
NB_BLOCKS(Neighbor_allgather, W_ALLGATHER, NULL)
NB_BLOCKS(Ineighbor_allgather, W_ALLGATHER, RQ, , MPI_Request *request)
NB_BLOCKS(Neighbor_alltoall, W_ALLTOALL, NULL)
NB_BLOCKS(Ineighbor_alltoall, W_ALLTOALL, RQ, , MPI_Request *request)

int PMPI_Neighbor_allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                             const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm) {
    GUARD("MPI_Neighbor_allgatherv");
    return bcs_wcoll(W_ALLGATHERV, (void *)sendbuf, sendcount, NULL, NULL, NULL, H(sendtype), NULL, recvbuf, 0,
                     (int *)recvcounts, (int *)displs, NULL, H(recvtype), NULL, H(comm), NULL, 0);
}

int PMPI_Ineighbor_allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                              const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm,
                              MPI_Request *request) {
    GUARD("MPI_Ineighbor_allgatherv");
    REQ("MPI_Ineighbor_allgatherv", comm, request);
    return bcs_wcoll(W_ALLGATHERV, (void *)sendbuf, sendcount, NULL, NULL, NULL, H(sendtype), NULL, recvbuf, 0,
                     (int *)recvcounts, (int *)displs, NULL, H(recvtype), NULL, H(comm), (uintptr_t *)request, 0);
}

int PMPI_Neighbor_alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                            void *recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
                            MPI_Comm comm) {
    GUARD("MPI_Neighbor_alltoallv");
    return bcs_wcoll(W_ALLTOALLV, (void *)sendbuf, 0, (int *)sendcounts, (int *)sdispls, NULL, H(sendtype), NULL,
                     recvbuf, 0, (int *)recvcounts, (int *)rdispls, NULL, H(recvtype), NULL, H(comm), NULL, 0);
}

int PMPI_Ineighbor_alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                             void *recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
                             MPI_Comm comm, MPI_Request *request) {
    GUARD("MPI_Ineighbor_alltoallv");
    REQ("MPI_Ineighbor_alltoallv", comm, request);
    return bcs_wcoll(W_ALLTOALLV, (void *)sendbuf, 0, (int *)sendcounts, (int *)sdispls, NULL, H(sendtype), NULL,
                     recvbuf, 0, (int *)recvcounts, (int *)rdispls, NULL, H(recvtype), NULL, H(comm),
                     (uintptr_t *)request, 0);
}

int PMPI_Neighbor_alltoallw(const void *sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                            const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                            const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm) {
    GUARD("MPI_Neighbor_alltoallw");
    static const MPI_Aint none[1];
    return bcs_wcoll(W_NALLTOALLW, (void *)sendbuf, 0, (int *)sendcounts, NULL,
                     (MPI_Aint *)(sdispls ? sdispls : none), 0, (uintptr_t *)sendtypes, recvbuf, 0,
                     (int *)recvcounts, NULL, (MPI_Aint *)(rdispls ? rdispls : none), 0, (uintptr_t *)recvtypes,
                     H(comm), NULL, 0);
}

int PMPI_Ineighbor_alltoallw(const void *sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                             const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                             const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                             MPI_Request *request) {
    GUARD("MPI_Ineighbor_alltoallw");
    REQ("MPI_Ineighbor_alltoallw", comm, request);
    static const MPI_Aint none[1];
    return bcs_wcoll(W_NALLTOALLW, (void *)sendbuf, 0, (int *)sendcounts, NULL,
                     (MPI_Aint *)(sdispls ? sdispls : none), 0, (uintptr_t *)sendtypes, recvbuf, 0,
                     (int *)recvcounts, NULL, (MPI_Aint *)(rdispls ? rdispls : none), 0, (uintptr_t *)recvtypes,
                     H(comm), (uintptr_t *)request, 0);
}

// ---- Graph and distributed-graph topologies ----

int PMPI_Graph_create(MPI_Comm comm_old, int nnodes, const int indx[], const int edges[], int reorder,
                      MPI_Comm *comm_graph) {
    GUARD("MPI_Graph_create");
    (void)reorder; // ranks keep their order: the standard allows it
    return bcs_graph_create(H(comm_old), nnodes, (int *)indx, (int *)edges, (uintptr_t *)comm_graph);
}

int PMPI_Graphdims_get(MPI_Comm comm, int *nnodes, int *nedges) {
    GUARD("MPI_Graphdims_get");
    return bcs_graphdims_get(H(comm), nnodes, nedges);
}

int PMPI_Graph_get(MPI_Comm comm, int maxindex, int maxedges, int indx[], int edges[]) {
    GUARD("MPI_Graph_get");
    return bcs_graph_get(H(comm), maxindex, maxedges, indx, edges);
}

int PMPI_Graph_neighbors_count(MPI_Comm comm, int rank, int *nneighbors) {
    GUARD("MPI_Graph_neighbors_count");
    int dummy;
    return bcs_graph_neighbors(H(comm), rank, 0, nneighbors ? nneighbors : &dummy, NULL);
}

int PMPI_Graph_neighbors(MPI_Comm comm, int rank, int maxneighbors, int neighbors[]) {
    GUARD("MPI_Graph_neighbors");
    return bcs_graph_neighbors(H(comm), rank, maxneighbors, NULL, neighbors);
}

int PMPI_Dist_graph_create_adjacent(MPI_Comm comm_old, int indegree, const int sources[], const int sourceweights[],
                                    int outdegree, const int destinations[], const int destweights[], MPI_Info info,
                                    int reorder, MPI_Comm *comm_dist_graph) {
    GUARD("MPI_Dist_graph_create_adjacent");
    (void)reorder;
    return bcs_dist_graph_create_adjacent(H(comm_old), indegree, (int *)sources, (int *)sourceweights, outdegree,
                                          (int *)destinations, (int *)destweights, H(info),
                                          (uintptr_t *)comm_dist_graph);
}

int PMPI_Dist_graph_create(MPI_Comm comm_old, int n, const int sources[], const int degrees[],
                           const int destinations[], const int weights[], MPI_Info info, int reorder,
                           MPI_Comm *comm_dist_graph) {
    GUARD("MPI_Dist_graph_create");
    (void)reorder;
    return bcs_dist_graph_create(H(comm_old), n, (int *)sources, (int *)degrees, (int *)destinations,
                                 (int *)weights, H(info), (uintptr_t *)comm_dist_graph);
}

int PMPI_Dist_graph_neighbors_count(MPI_Comm comm, int *indegree, int *outdegree, int *weighted) {
    GUARD("MPI_Dist_graph_neighbors_count");
    return bcs_dist_graph_neighbors_count(H(comm), indegree, outdegree, weighted);
}

int PMPI_Dist_graph_neighbors(MPI_Comm comm, int maxindegree, int sources[], int sourceweights[], int maxoutdegree,
                              int destinations[], int destweights[]) {
    GUARD("MPI_Dist_graph_neighbors");
    return bcs_dist_graph_neighbors(H(comm), maxindegree, sources, sourceweights, maxoutdegree, destinations,
                                    destweights);
}

// ---- Comm_create_group, Request_get_status ----

int PMPI_Comm_create_group(MPI_Comm comm, MPI_Group group, int tag, MPI_Comm *newcomm) {
    GUARD("MPI_Comm_create_group");
    return bcs_comm_create_group(H(comm), H(group), tag, (uintptr_t *)newcomm);
}

int PMPI_Request_get_status(MPI_Request request, int *flag, MPI_Status *status) {
    GUARD("MPI_Request_get_status");
    if (flag == NULL)
        return bcs_null_arg(H(MPI_COMM_WORLD), "MPI_Request_get_status", "flag = NULL");
    return bcs_request_get_status(H(request), flag, status);
}

int PMPI_Request_get_status_any(int count, const MPI_Request array_of_requests[], int *index, int *flag,
                                MPI_Status *status) {
    GUARD("MPI_Request_get_status_any");
    if (index == NULL || flag == NULL)
        return bcs_error(H(MPI_COMM_WORLD), "MPI_Request_get_status_any", MPI_ERR_ARG, "index or flag = NULL");
    return bcs_request_get_status_n(0, count, (uintptr_t *)array_of_requests, index, flag, status);
}

int PMPI_Request_get_status_all(int count, const MPI_Request array_of_requests[], int *flag,
                                MPI_Status array_of_statuses[]) {
    GUARD("MPI_Request_get_status_all");
    if (flag == NULL)
        return bcs_null_arg(H(MPI_COMM_WORLD), "MPI_Request_get_status_all", "flag = NULL");
    return bcs_request_get_status_n(1, count, (uintptr_t *)array_of_requests, NULL, flag, array_of_statuses);
}

int PMPI_Request_get_status_some(int incount, const MPI_Request array_of_requests[], int *outcount,
                                 int array_of_indices[], MPI_Status array_of_statuses[]) {
    GUARD("MPI_Request_get_status_some");
    if (outcount == NULL || (incount > 0 && array_of_indices == NULL))
        return bcs_error(H(MPI_COMM_WORLD), "MPI_Request_get_status_some", MPI_ERR_ARG,
                         "outcount or array_of_indices = NULL");
    return bcs_request_get_status_n(2, incount, (uintptr_t *)array_of_requests, outcount, array_of_indices,
                                    array_of_statuses);
}

#define W(name) _Pragma(BCS_STR(weak MPI_##name = PMPI_##name))
#define BCS_STR(x) #x
W(Alltoallw) W(Ialltoallw)
W(Neighbor_allgather) W(Ineighbor_allgather) W(Neighbor_allgatherv) W(Ineighbor_allgatherv)
W(Neighbor_alltoall) W(Ineighbor_alltoall) W(Neighbor_alltoallv) W(Ineighbor_alltoallv)
W(Neighbor_alltoallw) W(Ineighbor_alltoallw)
W(Graph_create) W(Graphdims_get) W(Graph_get) W(Graph_neighbors_count) W(Graph_neighbors)
W(Dist_graph_create_adjacent) W(Dist_graph_create) W(Dist_graph_neighbors_count) W(Dist_graph_neighbors)
W(Comm_create_group) W(Request_get_status) W(Request_get_status_any) W(Request_get_status_all)
W(Request_get_status_some)
