// PMPI_X of dynamic processes (dynamic.go), with MPI_X a weak alias, as in
// shim.c: MPI_Comm_get_parent answers MPI_COMM_NULL, MPI_Comm_disconnect
// frees, and the rest fail with the class the standard gives the failure.

#include "shim.h"
#include "_cgo_export.h"

int bcs_guard(const char *call);
#define GUARD(call) do { int g_ = bcs_guard(call); if (g_ != MPI_SUCCESS) return g_; } while (0); BCS_LOCKED
#define H(x) ((uintptr_t)(x))

enum { D_SPAWN, D_PORT, D_NAME, D_SERVICE, D_JOIN };

int PMPI_Comm_get_parent(MPI_Comm *parent) {
    GUARD("MPI_Comm_get_parent");
    return bcs_comm_get_parent((uintptr_t *)parent);
}

int PMPI_Comm_disconnect(MPI_Comm *comm) {
    GUARD("MPI_Comm_disconnect");
    return bcs_comm_disconnect((uintptr_t *)comm);
}

int PMPI_Comm_spawn(const char *command, char *argv[], int maxprocs, MPI_Info info, int root, MPI_Comm comm,
                    MPI_Comm *intercomm, int array_of_errcodes[]) {
    (void)command, (void)argv, (void)info;
    GUARD("MPI_Comm_spawn");
    if (intercomm)
        *intercomm = MPI_COMM_NULL;
    /* maxprocs is significant only at root: only root's codes are written. */
    if (array_of_errcodes != MPI_ERRCODES_IGNORE && bcs_spawn_root(H(comm), root))
        for (int i = 0; i < maxprocs; i++)
            array_of_errcodes[i] = MPI_ERR_SPAWN;
    return bcs_dynamic(H(comm), "MPI_Comm_spawn", D_SPAWN);
}

int PMPI_Comm_spawn_multiple(int count, char *array_of_commands[], char **array_of_argv[],
                             const int array_of_maxprocs[], const MPI_Info array_of_info[], int root, MPI_Comm comm,
                             MPI_Comm *intercomm, int array_of_errcodes[]) {
    (void)array_of_commands, (void)array_of_argv, (void)array_of_info;
    GUARD("MPI_Comm_spawn_multiple");
    if (intercomm)
        *intercomm = MPI_COMM_NULL;
    if (array_of_errcodes != MPI_ERRCODES_IGNORE && array_of_maxprocs != NULL && bcs_spawn_root(H(comm), root)) {
        int n = 0;
        for (int i = 0; i < count; i++)
            n += array_of_maxprocs[i] > 0 ? array_of_maxprocs[i] : 0;
        for (int i = 0; i < n; i++)
            array_of_errcodes[i] = MPI_ERR_SPAWN;
    }
    return bcs_dynamic(H(comm), "MPI_Comm_spawn_multiple", D_SPAWN);
}

int PMPI_Open_port(MPI_Info info, char *port_name) {
    (void)info, (void)port_name;
    GUARD("MPI_Open_port");
    return bcs_dynamic(0, "MPI_Open_port", D_PORT);
}

int PMPI_Close_port(const char *port_name) {
    (void)port_name;
    GUARD("MPI_Close_port");
    return bcs_dynamic(0, "MPI_Close_port", D_PORT);
}

int PMPI_Comm_accept(const char *port_name, MPI_Info info, int root, MPI_Comm comm, MPI_Comm *newcomm) {
    (void)port_name, (void)info, (void)root;
    GUARD("MPI_Comm_accept");
    if (newcomm)
        *newcomm = MPI_COMM_NULL;
    return bcs_dynamic(H(comm), "MPI_Comm_accept", D_PORT);
}

int PMPI_Comm_connect(const char *port_name, MPI_Info info, int root, MPI_Comm comm, MPI_Comm *newcomm) {
    (void)port_name, (void)info, (void)root;
    GUARD("MPI_Comm_connect");
    if (newcomm)
        *newcomm = MPI_COMM_NULL;
    return bcs_dynamic(H(comm), "MPI_Comm_connect", D_PORT);
}

int PMPI_Comm_join(int fd, MPI_Comm *intercomm) {
    (void)fd;
    GUARD("MPI_Comm_join");
    if (intercomm)
        *intercomm = MPI_COMM_NULL;
    return bcs_dynamic(0, "MPI_Comm_join", D_JOIN);
}

int PMPI_Publish_name(const char *service_name, MPI_Info info, const char *port_name) {
    (void)service_name, (void)info, (void)port_name;
    GUARD("MPI_Publish_name");
    return bcs_dynamic(0, "MPI_Publish_name", D_SERVICE);
}

int PMPI_Unpublish_name(const char *service_name, MPI_Info info, const char *port_name) {
    (void)service_name, (void)info, (void)port_name;
    GUARD("MPI_Unpublish_name");
    return bcs_dynamic(0, "MPI_Unpublish_name", D_SERVICE);
}

int PMPI_Lookup_name(const char *service_name, MPI_Info info, char *port_name) {
    (void)service_name, (void)info, (void)port_name;
    GUARD("MPI_Lookup_name");
    return bcs_dynamic(0, "MPI_Lookup_name", D_NAME);
}

#define W(name) _Pragma(BCS_STR(weak MPI_##name = PMPI_##name))
#define BCS_STR(x) #x
W(Comm_get_parent) W(Comm_disconnect) W(Comm_spawn) W(Comm_spawn_multiple) W(Open_port) W(Close_port)
W(Comm_accept) W(Comm_connect) W(Comm_join) W(Publish_name) W(Unpublish_name) W(Lookup_name)
