// PMPI_X of intercommunicators (inter.go), with MPI_X a weak alias, as in
// shim.c.

#include "shim.h"
#include "_cgo_export.h"

int bcs_guard(const char *call);
#define GUARD(call) do { int g_ = bcs_guard(call); if (g_ != MPI_SUCCESS) return g_; } while (0); BCS_LOCKED
#define H(x) ((uintptr_t)(x))

int PMPI_Intercomm_create(MPI_Comm local_comm, int local_leader, MPI_Comm peer_comm, int remote_leader, int tag,
                          MPI_Comm *newintercomm) {
    GUARD("MPI_Intercomm_create");
    return bcs_intercomm_create(H(local_comm), local_leader, H(peer_comm), remote_leader, tag,
                                (uintptr_t *)newintercomm);
}

int PMPI_Intercomm_create_from_groups(MPI_Group local_group, int local_leader, MPI_Group remote_group,
                                      int remote_leader, const char *stringtag, MPI_Info info,
                                      MPI_Errhandler errhandler, MPI_Comm *newintercomm) {
    GUARD("MPI_Intercomm_create_from_groups");
    return bcs_intercomm_create_from_groups(H(local_group), local_leader, H(remote_group), remote_leader,
                                            (char *)stringtag, H(info), H(errhandler), (uintptr_t *)newintercomm);
}

int PMPI_Intercomm_merge(MPI_Comm intercomm, int high, MPI_Comm *newintracomm) {
    GUARD("MPI_Intercomm_merge");
    return bcs_intercomm_merge(H(intercomm), high, (uintptr_t *)newintracomm);
}

int PMPI_Comm_remote_size(MPI_Comm comm, int *size) {
    GUARD("MPI_Comm_remote_size");
    if (size == NULL)
        return bcs_error(H(comm), "MPI_Comm_remote_size", MPI_ERR_ARG, "size = NULL");
    return bcs_comm_remote(H(comm), size, NULL);
}

int PMPI_Comm_remote_group(MPI_Comm comm, MPI_Group *group) {
    GUARD("MPI_Comm_remote_group");
    if (group == NULL)
        return bcs_error(H(comm), "MPI_Comm_remote_group", MPI_ERR_ARG, "group = NULL");
    return bcs_comm_remote(H(comm), NULL, (uintptr_t *)group);
}

#define W(name) _Pragma(BCS_STR(weak MPI_##name = PMPI_##name))
#define BCS_STR(x) #x
W(Intercomm_create) W(Intercomm_create_from_groups) W(Intercomm_merge) W(Comm_remote_size) W(Comm_remote_group)
