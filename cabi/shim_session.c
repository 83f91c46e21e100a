// PMPI_X of sessions (session.go) and MPI_Comm_create_from_group, with
// MPI_X a weak alias, as in shim.c. MPI_Session_init is defined here: it
// links only now that sessions work (configure scripts probe it).

#include <stdlib.h>

#include "shim.h"
#include "_cgo_export.h"

int bcs_guard(const char *call);
#define GUARD(call) do { int g_ = bcs_guard(call); if (g_ != MPI_SUCCESS) return g_; } while (0); BCS_LOCKED
#define H(x) ((uintptr_t)(x))

static void bcs_exit_hook(void) { bcs_session_exit(); }

// bcs_register_exit arranges for a process whose sessions have all ended
// to detach from the job at exit (session.go).
void bcs_register_exit(void) {
    static int done;
    if (!done) {
        done = 1;
        atexit(bcs_exit_hook);
    }
}

int PMPI_Session_init(MPI_Info info, MPI_Errhandler errhandler, MPI_Session *session) {
    GUARD("MPI_Session_init");
    return bcs_session_init(H(info), H(errhandler), (uintptr_t *)session);
}

int PMPI_Session_finalize(MPI_Session *session) {
    GUARD("MPI_Session_finalize");
    return bcs_session_finalize((uintptr_t *)session);
}

int PMPI_Session_get_num_psets(MPI_Session session, MPI_Info info, int *npset_names) {
    GUARD("MPI_Session_get_num_psets");
    return bcs_session_get_num_psets(H(session), H(info), npset_names);
}

int PMPI_Session_get_nth_pset(MPI_Session session, MPI_Info info, int n, int *pset_len, char *pset_name) {
    GUARD("MPI_Session_get_nth_pset");
    return bcs_session_get_nth_pset(H(session), H(info), n, pset_len, pset_name);
}

int PMPI_Session_get_pset_info(MPI_Session session, const char *pset_name, MPI_Info *info) {
    GUARD("MPI_Session_get_pset_info");
    return bcs_session_get_pset_info(H(session), (char *)pset_name, (uintptr_t *)info);
}

int PMPI_Session_get_info(MPI_Session session, MPI_Info *info_used) {
    GUARD("MPI_Session_get_info");
    return bcs_session_get_info(H(session), (uintptr_t *)info_used);
}

int PMPI_Group_from_session_pset(MPI_Session session, const char *pset_name, MPI_Group *newgroup) {
    GUARD("MPI_Group_from_session_pset");
    return bcs_group_from_session_pset(H(session), (char *)pset_name, (uintptr_t *)newgroup);
}

int PMPI_Comm_create_from_group(MPI_Group group, const char *stringtag, MPI_Info info, MPI_Errhandler errhandler,
                                MPI_Comm *newcomm) {
    GUARD("MPI_Comm_create_from_group");
    return bcs_comm_create_from_group(H(group), (char *)stringtag, H(info), H(errhandler), (uintptr_t *)newcomm);
}

int PMPI_Session_create_errhandler(MPI_Session_errhandler_function *session_errhandler_fn, MPI_Errhandler *errhandler) {
    GUARD("MPI_Session_create_errhandler");
    // A session handler is called as a communicator's is: with a pointer
    // to the handle and to the code.
    return bcs_comm_create_errhandler((void *)session_errhandler_fn, (uintptr_t *)errhandler);
}

int PMPI_Session_set_errhandler(MPI_Session session, MPI_Errhandler errhandler) {
    GUARD("MPI_Session_set_errhandler");
    return bcs_session_set_errhandler(H(session), H(errhandler));
}

int PMPI_Session_get_errhandler(MPI_Session session, MPI_Errhandler *errhandler) {
    GUARD("MPI_Session_get_errhandler");
    return bcs_session_get_errhandler(H(session), (uintptr_t *)errhandler);
}

int PMPI_Session_call_errhandler(MPI_Session session, int errorcode) {
    GUARD("MPI_Session_call_errhandler");
    return bcs_session_call_errhandler(H(session), errorcode);
}

int PMPI_Session_attach_buffer(MPI_Session session, void *buffer, int size) {
    GUARD("MPI_Session_attach_buffer");
    return bcs_session_attach_buffer(H(session), buffer, size, 0);
}

int PMPI_Session_attach_buffer_c(MPI_Session session, void *buffer, MPI_Count size) {
    GUARD("MPI_Session_attach_buffer_c");
    return bcs_session_attach_buffer(H(session), buffer, size, BCS_LARGE);
}

int PMPI_Session_detach_buffer(MPI_Session session, void *buffer_addr, int *size) {
    GUARD("MPI_Session_detach_buffer");
    MPI_Count n;
    int rc = bcs_session_detach_buffer(H(session), (void **)buffer_addr, size ? &n : NULL, 0);
    if (rc == MPI_SUCCESS)
        *size = (int)n; // at most INT_MAX: a larger buffer is refused
    return rc;
}

int PMPI_Session_detach_buffer_c(MPI_Session session, void *buffer_addr, MPI_Count *size) {
    GUARD("MPI_Session_detach_buffer_c");
    return bcs_session_detach_buffer(H(session), (void **)buffer_addr, size, BCS_LARGE);
}

int PMPI_Session_flush_buffer(MPI_Session session) {
    GUARD("MPI_Session_flush_buffer");
    return bcs_session_flush_buffer(H(session), NULL);
}

int PMPI_Session_iflush_buffer(MPI_Session session, MPI_Request *request) {
    GUARD("MPI_Session_iflush_buffer");
    if (request == NULL)
        return bcs_error(H(MPI_COMM_WORLD), "MPI_Session_iflush_buffer", MPI_ERR_ARG, "request = NULL");
    return bcs_session_flush_buffer(H(session), (uintptr_t *)request);
}

#define W(name) _Pragma(BCS_STR(weak MPI_##name = PMPI_##name))
#define BCS_STR(x) #x
W(Session_init) W(Session_finalize) W(Session_get_num_psets) W(Session_get_nth_pset) W(Session_get_pset_info)
W(Session_get_info) W(Group_from_session_pset) W(Comm_create_from_group) W(Session_create_errhandler)
W(Session_set_errhandler) W(Session_get_errhandler) W(Session_call_errhandler) W(Session_attach_buffer)
W(Session_attach_buffer_c) W(Session_detach_buffer) W(Session_detach_buffer_c) W(Session_flush_buffer)
W(Session_iflush_buffer)
