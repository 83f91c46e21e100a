// PMPI_X of one-sided communication (rma.go, rmaops.go, rmasync.go), with
// MPI_X a weak alias, as in shim.c.

#include <stddef.h>

#include "shim.h"
#include "_cgo_export.h"

int bcs_guard(const char *call);
#define GUARD(call) do { int g_ = bcs_guard(call); if (g_ != MPI_SUCCESS) return g_; } while (0); BCS_LOCKED
#define H(x) ((uintptr_t)(x))
#define REQ(call, request)                                                                   \
    do {                                                                                     \
        if ((request) == NULL)                                                               \
            return bcs_error(H(MPI_COMM_WORLD), call, MPI_ERR_ARG, "request = NULL");        \
    } while (0)

enum { RMA_PUT, RMA_GET, RMA_ACC, RMA_GETACC, RMA_FETCHOP, RMA_CAS };

// ---- Windows ----

int PMPI_Win_create(void *base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, MPI_Win *win) {
    GUARD("MPI_Win_create");
    return bcs_win_create(MPI_WIN_FLAVOR_CREATE, base, size, disp_unit, H(info), H(comm), NULL, (uintptr_t *)win, 0);
}

int PMPI_Win_allocate(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr, MPI_Win *win) {
    GUARD("MPI_Win_allocate");
    return bcs_win_create(MPI_WIN_FLAVOR_ALLOCATE, NULL, size, disp_unit, H(info), H(comm), (void **)baseptr,
                          (uintptr_t *)win, 0);
}

int PMPI_Win_create_dynamic(MPI_Info info, MPI_Comm comm, MPI_Win *win) {
    GUARD("MPI_Win_create_dynamic");
    return bcs_win_create(MPI_WIN_FLAVOR_DYNAMIC, NULL, 0, 1, H(info), H(comm), NULL, (uintptr_t *)win, 0);
}

int PMPI_Win_attach(MPI_Win win, void *base, MPI_Aint size) {
    GUARD("MPI_Win_attach");
    return bcs_win_attach(H(win), base, size, 0);
}

int PMPI_Win_detach(MPI_Win win, const void *base) {
    GUARD("MPI_Win_detach");
    return bcs_win_attach(H(win), (void *)base, 0, 1);
}

int PMPI_Win_free(MPI_Win *win) {
    GUARD("MPI_Win_free");
    return bcs_win_free((uintptr_t *)win);
}

int PMPI_Win_get_attr(MPI_Win win, int win_keyval, void *attribute_val, int *flag) {
    GUARD("MPI_Win_get_attr");
    return bcs_win_get_attr(H(win), win_keyval, (void **)attribute_val, flag);
}

int PMPI_Win_get_group(MPI_Win win, MPI_Group *group) {
    GUARD("MPI_Win_get_group");
    if (group == NULL)
        return bcs_error(H(MPI_COMM_WORLD), "MPI_Win_get_group", MPI_ERR_ARG, "group = NULL");
    return bcs_win_get_group(H(win), (uintptr_t *)group);
}

int PMPI_Win_set_name(MPI_Win win, const char *win_name) {
    GUARD("MPI_Win_set_name");
    return bcs_win_set_name(H(win), (char *)win_name);
}

int PMPI_Win_get_name(MPI_Win win, char *win_name, int *resultlen) {
    GUARD("MPI_Win_get_name");
    return bcs_win_get_name(H(win), win_name, resultlen);
}

int PMPI_Win_set_errhandler(MPI_Win win, MPI_Errhandler errhandler) {
    GUARD("MPI_Win_set_errhandler");
    return bcs_win_set_errhandler(H(win), H(errhandler));
}

int PMPI_Win_get_errhandler(MPI_Win win, MPI_Errhandler *errhandler) {
    GUARD("MPI_Win_get_errhandler");
    if (errhandler == NULL)
        return bcs_error(H(MPI_COMM_WORLD), "MPI_Win_get_errhandler", MPI_ERR_ARG, "errhandler = NULL");
    return bcs_win_get_errhandler(H(win), (uintptr_t *)errhandler);
}

// A window error handler has the shape of a communicator's (a pointer to
// the object's handle and to the code), so it is called the same way.
int PMPI_Win_create_errhandler(MPI_Win_errhandler_function *fn, MPI_Errhandler *errhandler) {
    GUARD("MPI_Win_create_errhandler");
    if (errhandler == NULL)
        return bcs_error(H(MPI_COMM_WORLD), "MPI_Win_create_errhandler", MPI_ERR_ARG, "errhandler = NULL");
    return bcs_comm_create_errhandler((void *)fn, (uintptr_t *)errhandler);
}

int PMPI_Win_call_errhandler(MPI_Win win, int errorcode) {
    GUARD("MPI_Win_call_errhandler");
    return bcs_win_call_errhandler(H(win), errorcode);
}

int PMPI_Win_get_info(MPI_Win win, MPI_Info *info_used) {
    GUARD("MPI_Win_get_info");
    if (info_used == NULL)
        return bcs_error(H(MPI_COMM_WORLD), "MPI_Win_get_info", MPI_ERR_ARG, "info_used = NULL");
    return bcs_win_info(H(win), 0, (uintptr_t *)info_used);
}

int PMPI_Win_set_info(MPI_Win win, MPI_Info info) {
    GUARD("MPI_Win_set_info");
    uintptr_t h = H(info);
    return bcs_win_info(H(win), 1, &h);
}

// ---- Operations ----

int PMPI_Put(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
             MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win) {
    GUARD("MPI_Put");
    return bcs_rma(RMA_PUT, (void *)origin_addr, origin_count, H(origin_datatype), NULL, NULL, 0, 0, target_rank,
                   target_disp, target_count, H(target_datatype), 0, H(win), NULL, 0);
}

int PMPI_Get(void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
             MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win) {
    GUARD("MPI_Get");
    return bcs_rma(RMA_GET, origin_addr, origin_count, H(origin_datatype), NULL, NULL, 0, 0, target_rank,
                   target_disp, target_count, H(target_datatype), 0, H(win), NULL, 0);
}

int PMPI_Accumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
                    MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win) {
    GUARD("MPI_Accumulate");
    return bcs_rma(RMA_ACC, (void *)origin_addr, origin_count, H(origin_datatype), NULL, NULL, 0, 0, target_rank,
                   target_disp, target_count, H(target_datatype), H(op), H(win), NULL, 0);
}

int PMPI_Get_accumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, void *result_addr,
                        int result_count, MPI_Datatype result_datatype, int target_rank, MPI_Aint target_disp,
                        int target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win) {
    GUARD("MPI_Get_accumulate");
    return bcs_rma(RMA_GETACC, (void *)origin_addr, origin_count, H(origin_datatype), NULL, result_addr,
                   result_count, H(result_datatype), target_rank, target_disp, target_count, H(target_datatype),
                   H(op), H(win), NULL, 0);
}

int PMPI_Fetch_and_op(const void *origin_addr, void *result_addr, MPI_Datatype datatype, int target_rank,
                      MPI_Aint target_disp, MPI_Op op, MPI_Win win) {
    GUARD("MPI_Fetch_and_op");
    return bcs_rma(RMA_FETCHOP, (void *)origin_addr, 1, H(datatype), NULL, result_addr, 1, H(datatype), target_rank,
                   target_disp, 1, H(datatype), H(op), H(win), NULL, 0);
}

int PMPI_Compare_and_swap(const void *origin_addr, const void *compare_addr, void *result_addr,
                          MPI_Datatype datatype, int target_rank, MPI_Aint target_disp, MPI_Win win) {
    GUARD("MPI_Compare_and_swap");
    return bcs_rma(RMA_CAS, (void *)origin_addr, 1, H(datatype), (void *)compare_addr, result_addr, 1, H(datatype),
                   target_rank, target_disp, 1, H(datatype), 0, H(win), NULL, 0);
}

int PMPI_Rput(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
              MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win,
              MPI_Request *request) {
    GUARD("MPI_Rput");
    REQ("MPI_Rput", request);
    return bcs_rma(RMA_PUT, (void *)origin_addr, origin_count, H(origin_datatype), NULL, NULL, 0, 0, target_rank,
                   target_disp, target_count, H(target_datatype), 0, H(win), (uintptr_t *)request, 0);
}

int PMPI_Rget(void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
              MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win,
              MPI_Request *request) {
    GUARD("MPI_Rget");
    REQ("MPI_Rget", request);
    return bcs_rma(RMA_GET, origin_addr, origin_count, H(origin_datatype), NULL, NULL, 0, 0, target_rank,
                   target_disp, target_count, H(target_datatype), 0, H(win), (uintptr_t *)request, 0);
}

int PMPI_Raccumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
                     MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win,
                     MPI_Request *request) {
    GUARD("MPI_Raccumulate");
    REQ("MPI_Raccumulate", request);
    return bcs_rma(RMA_ACC, (void *)origin_addr, origin_count, H(origin_datatype), NULL, NULL, 0, 0, target_rank,
                   target_disp, target_count, H(target_datatype), H(op), H(win), (uintptr_t *)request, 0);
}

int PMPI_Rget_accumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, void *result_addr,
                         int result_count, MPI_Datatype result_datatype, int target_rank, MPI_Aint target_disp,
                         int target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win,
                         MPI_Request *request) {
    GUARD("MPI_Rget_accumulate");
    REQ("MPI_Rget_accumulate", request);
    return bcs_rma(RMA_GETACC, (void *)origin_addr, origin_count, H(origin_datatype), NULL, result_addr,
                   result_count, H(result_datatype), target_rank, target_disp, target_count, H(target_datatype),
                   H(op), H(win), (uintptr_t *)request, 0);
}

// ---- Synchronisation ----

int PMPI_Win_fence(int assert, MPI_Win win) {
    GUARD("MPI_Win_fence");
    return bcs_win_fence(assert, H(win));
}

int PMPI_Win_lock(int lock_type, int rank, int assert, MPI_Win win) {
    GUARD("MPI_Win_lock");
    return bcs_win_lock(lock_type, rank, assert, H(win));
}

int PMPI_Win_unlock(int rank, MPI_Win win) {
    GUARD("MPI_Win_unlock");
    return bcs_win_unlock(rank, H(win));
}

int PMPI_Win_lock_all(int assert, MPI_Win win) {
    GUARD("MPI_Win_lock_all");
    return bcs_win_lock_all(assert, H(win));
}

int PMPI_Win_unlock_all(MPI_Win win) {
    GUARD("MPI_Win_unlock_all");
    return bcs_win_unlock_all(H(win));
}

int PMPI_Win_flush(int rank, MPI_Win win) {
    GUARD("MPI_Win_flush");
    return bcs_win_flush(rank, H(win), 0, 0);
}

int PMPI_Win_flush_all(MPI_Win win) {
    GUARD("MPI_Win_flush_all");
    return bcs_win_flush(0, H(win), 0, 1);
}

int PMPI_Win_flush_local(int rank, MPI_Win win) {
    GUARD("MPI_Win_flush_local");
    return bcs_win_flush(rank, H(win), 1, 0);
}

int PMPI_Win_flush_local_all(MPI_Win win) {
    GUARD("MPI_Win_flush_local_all");
    return bcs_win_flush(0, H(win), 1, 1);
}

// The fence orders the caller's loads and stores to a shared window
// against the other members' (rmashared.go).
int PMPI_Win_sync(MPI_Win win) {
    GUARD("MPI_Win_sync");
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    return bcs_win_sync(H(win));
}

int PMPI_Win_post(MPI_Group group, int assert, MPI_Win win) {
    GUARD("MPI_Win_post");
    return bcs_win_post(H(group), assert, H(win));
}

int PMPI_Win_start(MPI_Group group, int assert, MPI_Win win) {
    GUARD("MPI_Win_start");
    return bcs_win_start(H(group), assert, H(win));
}

int PMPI_Win_complete(MPI_Win win) {
    GUARD("MPI_Win_complete");
    return bcs_win_complete(H(win));
}

int PMPI_Win_wait(MPI_Win win) {
    GUARD("MPI_Win_wait");
    return bcs_win_wait(H(win), 0, NULL);
}

int PMPI_Win_test(MPI_Win win, int *flag) {
    GUARD("MPI_Win_test");
    if (flag == NULL)
        return bcs_error(H(MPI_COMM_WORLD), "MPI_Win_test", MPI_ERR_ARG, "flag = NULL");
    return bcs_win_wait(H(win), 1, flag);
}

// ---- Shared-memory windows (rmashared.go) ----

int PMPI_Win_allocate_shared(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr,
                             MPI_Win *win) {
    GUARD("MPI_Win_allocate_shared");
    return bcs_win_create(MPI_WIN_FLAVOR_SHARED, NULL, size, disp_unit, H(info), H(comm), (void **)baseptr,
                          (uintptr_t *)win, 0);
}

int PMPI_Win_shared_query(MPI_Win win, int rank, MPI_Aint *size, int *disp_unit, void *baseptr) {
    GUARD("MPI_Win_shared_query");
    return bcs_win_shared_query(H(win), rank, size, disp_unit, NULL, (void **)baseptr, 0);
}

// ---- Window attributes (winattr.go) ----

int PMPI_Win_create_keyval(MPI_Win_copy_attr_function *win_copy_attr_fn,
                           MPI_Win_delete_attr_function *win_delete_attr_fn, int *win_keyval, void *extra_state) {
    GUARD("MPI_Win_create_keyval");
    return bcs_win_create_keyval((void *)win_copy_attr_fn, (void *)win_delete_attr_fn, win_keyval, extra_state);
}

int PMPI_Win_free_keyval(int *win_keyval) {
    GUARD("MPI_Win_free_keyval");
    return bcs_win_free_keyval(win_keyval);
}

int PMPI_Win_set_attr(MPI_Win win, int win_keyval, void *attribute_val) {
    GUARD("MPI_Win_set_attr");
    return bcs_win_set_attr(H(win), win_keyval, attribute_val);
}

int PMPI_Win_delete_attr(MPI_Win win, int win_keyval) {
    GUARD("MPI_Win_delete_attr");
    return bcs_win_delete_attr(H(win), win_keyval);
}

// ---- Large-count forms: the int forms' code with MPI_Count counts ----

int PMPI_Win_create_c(void *base, MPI_Aint size, MPI_Aint disp_unit, MPI_Info info, MPI_Comm comm, MPI_Win *win) {
    GUARD("MPI_Win_create_c");
    return bcs_win_create(MPI_WIN_FLAVOR_CREATE, base, size, disp_unit, H(info), H(comm), NULL, (uintptr_t *)win,
                          BCS_LARGE);
}

int PMPI_Win_allocate_c(MPI_Aint size, MPI_Aint disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr,
                        MPI_Win *win) {
    GUARD("MPI_Win_allocate_c");
    return bcs_win_create(MPI_WIN_FLAVOR_ALLOCATE, NULL, size, disp_unit, H(info), H(comm), (void **)baseptr,
                          (uintptr_t *)win, BCS_LARGE);
}

int PMPI_Win_allocate_shared_c(MPI_Aint size, MPI_Aint disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr,
                               MPI_Win *win) {
    GUARD("MPI_Win_allocate_shared_c");
    return bcs_win_create(MPI_WIN_FLAVOR_SHARED, NULL, size, disp_unit, H(info), H(comm), (void **)baseptr,
                          (uintptr_t *)win, BCS_LARGE);
}

int PMPI_Win_shared_query_c(MPI_Win win, int rank, MPI_Aint *size, MPI_Aint *disp_unit, void *baseptr) {
    GUARD("MPI_Win_shared_query_c");
    return bcs_win_shared_query(H(win), rank, size, NULL, disp_unit, (void **)baseptr, BCS_LARGE);
}

int PMPI_Put_c(const void *origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype, int target_rank,
               MPI_Aint target_disp, MPI_Count target_count, MPI_Datatype target_datatype, MPI_Win win) {
    GUARD("MPI_Put_c");
    return bcs_rma(RMA_PUT, (void *)origin_addr, origin_count, H(origin_datatype), NULL, NULL, 0, 0, target_rank,
                   target_disp, target_count, H(target_datatype), 0, H(win), NULL, BCS_LARGE);
}

int PMPI_Get_c(void *origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype, int target_rank,
               MPI_Aint target_disp, MPI_Count target_count, MPI_Datatype target_datatype, MPI_Win win) {
    GUARD("MPI_Get_c");
    return bcs_rma(RMA_GET, origin_addr, origin_count, H(origin_datatype), NULL, NULL, 0, 0, target_rank,
                   target_disp, target_count, H(target_datatype), 0, H(win), NULL, BCS_LARGE);
}

int PMPI_Accumulate_c(const void *origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype,
                      int target_rank, MPI_Aint target_disp, MPI_Count target_count, MPI_Datatype target_datatype,
                      MPI_Op op, MPI_Win win) {
    GUARD("MPI_Accumulate_c");
    return bcs_rma(RMA_ACC, (void *)origin_addr, origin_count, H(origin_datatype), NULL, NULL, 0, 0, target_rank,
                   target_disp, target_count, H(target_datatype), H(op), H(win), NULL, BCS_LARGE);
}

int PMPI_Get_accumulate_c(const void *origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype,
                          void *result_addr, MPI_Count result_count, MPI_Datatype result_datatype, int target_rank,
                          MPI_Aint target_disp, MPI_Count target_count, MPI_Datatype target_datatype, MPI_Op op,
                          MPI_Win win) {
    GUARD("MPI_Get_accumulate_c");
    return bcs_rma(RMA_GETACC, (void *)origin_addr, origin_count, H(origin_datatype), NULL, result_addr,
                   result_count, H(result_datatype), target_rank, target_disp, target_count, H(target_datatype),
                   H(op), H(win), NULL, BCS_LARGE);
}

int PMPI_Rput_c(const void *origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype, int target_rank,
                MPI_Aint target_disp, MPI_Count target_count, MPI_Datatype target_datatype, MPI_Win win,
                MPI_Request *request) {
    GUARD("MPI_Rput_c");
    REQ("MPI_Rput_c", request);
    return bcs_rma(RMA_PUT, (void *)origin_addr, origin_count, H(origin_datatype), NULL, NULL, 0, 0, target_rank,
                   target_disp, target_count, H(target_datatype), 0, H(win), (uintptr_t *)request, BCS_LARGE);
}

int PMPI_Rget_c(void *origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype, int target_rank,
                MPI_Aint target_disp, MPI_Count target_count, MPI_Datatype target_datatype, MPI_Win win,
                MPI_Request *request) {
    GUARD("MPI_Rget_c");
    REQ("MPI_Rget_c", request);
    return bcs_rma(RMA_GET, origin_addr, origin_count, H(origin_datatype), NULL, NULL, 0, 0, target_rank,
                   target_disp, target_count, H(target_datatype), 0, H(win), (uintptr_t *)request, BCS_LARGE);
}

int PMPI_Raccumulate_c(const void *origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype,
                       int target_rank, MPI_Aint target_disp, MPI_Count target_count, MPI_Datatype target_datatype,
                       MPI_Op op, MPI_Win win, MPI_Request *request) {
    GUARD("MPI_Raccumulate_c");
    REQ("MPI_Raccumulate_c", request);
    return bcs_rma(RMA_ACC, (void *)origin_addr, origin_count, H(origin_datatype), NULL, NULL, 0, 0, target_rank,
                   target_disp, target_count, H(target_datatype), H(op), H(win), (uintptr_t *)request, BCS_LARGE);
}

int PMPI_Rget_accumulate_c(const void *origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype,
                           void *result_addr, MPI_Count result_count, MPI_Datatype result_datatype, int target_rank,
                           MPI_Aint target_disp, MPI_Count target_count, MPI_Datatype target_datatype, MPI_Op op,
                           MPI_Win win, MPI_Request *request) {
    GUARD("MPI_Rget_accumulate_c");
    REQ("MPI_Rget_accumulate_c", request);
    return bcs_rma(RMA_GETACC, (void *)origin_addr, origin_count, H(origin_datatype), NULL, result_addr,
                   result_count, H(result_datatype), target_rank, target_disp, target_count, H(target_datatype),
                   H(op), H(win), (uintptr_t *)request, BCS_LARGE);
}

#define W(name) _Pragma(BCS_STR(weak MPI_##name = PMPI_##name))
#define BCS_STR(x) #x
W(Win_create) W(Win_allocate) W(Win_create_dynamic) W(Win_attach) W(Win_detach) W(Win_free)
W(Win_get_attr) W(Win_get_group) W(Win_set_name) W(Win_get_name) W(Win_set_errhandler) W(Win_get_errhandler)
W(Win_create_errhandler) W(Win_call_errhandler) W(Win_get_info) W(Win_set_info)
W(Put) W(Get) W(Accumulate) W(Get_accumulate) W(Fetch_and_op) W(Compare_and_swap)
W(Rput) W(Rget) W(Raccumulate) W(Rget_accumulate)
W(Win_fence) W(Win_lock) W(Win_unlock) W(Win_lock_all) W(Win_unlock_all)
W(Win_flush) W(Win_flush_all) W(Win_flush_local) W(Win_flush_local_all) W(Win_sync)
W(Win_post) W(Win_start) W(Win_complete) W(Win_wait) W(Win_test)
W(Win_allocate_shared) W(Win_shared_query)
W(Win_create_keyval) W(Win_free_keyval) W(Win_set_attr) W(Win_delete_attr)
W(Win_create_c) W(Win_allocate_c) W(Win_allocate_shared_c) W(Win_shared_query_c)
W(Put_c) W(Get_c) W(Accumulate_c) W(Get_accumulate_c) W(Rput_c) W(Rget_c) W(Raccumulate_c) W(Rget_accumulate_c)
