// PMPI_T_* (the tool information interface, mpit.go), with MPI_T_X a weak
// alias, as in shim.c. MPI_T functions return their MPI_T error code and
// never call an error handler. A forked child (no Go runtime) gets
// MPI_T_ERR_NOT_INITIALIZED from every one of them and MPI_T_ERR_CANNOT_INIT
// from MPI_T_init_thread.

#include <stdint.h>

#include "shim.h"
#include "_cgo_export.h"

int bcs_forked_child(void);
#define TG(rc) do { if (bcs_forked_child()) return (rc); } while (0); BCS_LOCKED
#define TGUARD TG(MPI_T_ERR_NOT_INITIALIZED)
#define H(x) ((uintptr_t)(x))

int PMPI_T_init_thread(int required, int *provided) {
    TG(MPI_T_ERR_CANNOT_INIT);
    return bcs_t_init_thread(required, provided);
}
int PMPI_T_finalize(void) { TGUARD; return bcs_t_finalize(); }

int PMPI_T_cvar_get_num(int *n) { TGUARD; return bcs_t_get_num(0, n); }
int PMPI_T_pvar_get_num(int *n) { TGUARD; return bcs_t_get_num(1, n); }
int PMPI_T_category_get_num(int *n) { TGUARD; return bcs_t_get_num(2, n); }
int PMPI_T_event_get_num(int *n) { TGUARD; return bcs_t_get_num(3, n); }
int PMPI_T_source_get_num(int *n) { TGUARD; return bcs_t_get_num(4, n); }

int PMPI_T_cvar_get_info(int cvar_index, char *name, int *name_len, int *verbosity, MPI_Datatype *datatype,
                         MPI_T_enum *enumtype, char *desc, int *desc_len, int *bind, int *scope) {
    TGUARD;
    return bcs_t_cvar_get_info(cvar_index, name, name_len, verbosity, (uintptr_t *)datatype, (uintptr_t *)enumtype,
                               desc, desc_len, bind, scope);
}
int PMPI_T_cvar_get_index(const char *name, int *cvar_index) {
    TGUARD;
    return bcs_t_get_index(0, (char *)name, 0, cvar_index);
}
int PMPI_T_cvar_handle_alloc(int cvar_index, void *obj_handle, MPI_T_cvar_handle *handle, int *count) {
    TGUARD;
    return bcs_t_cvar_handle_alloc(cvar_index, obj_handle, (uintptr_t *)handle, count);
}
int PMPI_T_cvar_handle_free(MPI_T_cvar_handle *handle) { TGUARD; return bcs_t_cvar_handle_free((uintptr_t *)handle); }
int PMPI_T_cvar_read(MPI_T_cvar_handle handle, void *buf) { TGUARD; return bcs_t_cvar_read(H(handle), buf); }
int PMPI_T_cvar_write(MPI_T_cvar_handle handle, const void *buf) {
    TGUARD;
    return bcs_t_cvar_write(H(handle), (void *)buf);
}

int PMPI_T_enum_get_info(MPI_T_enum enumtype, int *num, char *name, int *name_len) {
    TGUARD;
    return bcs_t_enum_get_info(H(enumtype), num, name, name_len);
}
int PMPI_T_enum_get_item(MPI_T_enum enumtype, int indx, int *value, char *name, int *name_len) {
    TGUARD;
    return bcs_t_enum_get_item(H(enumtype), indx, value, name, name_len);
}

int PMPI_T_pvar_get_info(int pvar_index, char *name, int *name_len, int *verbosity, int *var_class,
                         MPI_Datatype *datatype, MPI_T_enum *enumtype, char *desc, int *desc_len, int *bind,
                         int *readonly, int *continuous, int *atomic) {
    TGUARD;
    return bcs_t_pvar_get_info(pvar_index, name, name_len, verbosity, var_class, (uintptr_t *)datatype,
                               (uintptr_t *)enumtype, desc, desc_len, bind, readonly, continuous, atomic);
}
int PMPI_T_pvar_get_index(const char *name, int var_class, int *pvar_index) {
    TGUARD;
    return bcs_t_get_index(1, (char *)name, var_class, pvar_index);
}
int PMPI_T_pvar_session_create(MPI_T_pvar_session *session) {
    TGUARD;
    return bcs_t_pvar_session_create((uintptr_t *)session);
}
int PMPI_T_pvar_session_free(MPI_T_pvar_session *session) {
    TGUARD;
    return bcs_t_pvar_session_free((uintptr_t *)session);
}
int PMPI_T_pvar_handle_alloc(MPI_T_pvar_session session, int pvar_index, void *obj_handle, MPI_T_pvar_handle *handle,
                             int *count) {
    TGUARD;
    return bcs_t_pvar_handle_alloc(H(session), pvar_index, obj_handle, (uintptr_t *)handle, count);
}
int PMPI_T_pvar_handle_free(MPI_T_pvar_session session, MPI_T_pvar_handle *handle) {
    TGUARD;
    return bcs_t_pvar_handle_free(H(session), (uintptr_t *)handle);
}
int PMPI_T_pvar_start(MPI_T_pvar_session session, MPI_T_pvar_handle handle) {
    TGUARD;
    return bcs_t_pvar_start(H(session), H(handle));
}
int PMPI_T_pvar_stop(MPI_T_pvar_session session, MPI_T_pvar_handle handle) {
    TGUARD;
    return bcs_t_pvar_stop(H(session), H(handle));
}
int PMPI_T_pvar_reset(MPI_T_pvar_session session, MPI_T_pvar_handle handle) {
    TGUARD;
    return bcs_t_pvar_reset(H(session), H(handle));
}
int PMPI_T_pvar_read(MPI_T_pvar_session session, MPI_T_pvar_handle handle, void *buf) {
    TGUARD;
    return bcs_t_pvar_read(H(session), H(handle), buf);
}
int PMPI_T_pvar_write(MPI_T_pvar_session session, MPI_T_pvar_handle handle, const void *buf) {
    TGUARD;
    return bcs_t_pvar_write(H(session), H(handle), (void *)buf);
}
int PMPI_T_pvar_readreset(MPI_T_pvar_session session, MPI_T_pvar_handle handle, void *buf) {
    TGUARD;
    return bcs_t_pvar_readreset(H(session), H(handle), buf);
}

int PMPI_T_category_get_info(int cat_index, char *name, int *name_len, char *desc, int *desc_len, int *num_cvars,
                             int *num_pvars, int *num_categories) {
    TGUARD;
    return bcs_t_category_get_info(cat_index, name, name_len, desc, desc_len, num_cvars, num_pvars, num_categories);
}
int PMPI_T_category_get_index(const char *name, int *cat_index) {
    TGUARD;
    return bcs_t_get_index(2, (char *)name, 0, cat_index);
}
int PMPI_T_category_get_cvars(int cat_index, int len, int indices[]) {
    TGUARD;
    return bcs_t_category_list(0, cat_index, len, indices);
}
int PMPI_T_category_get_pvars(int cat_index, int len, int indices[]) {
    TGUARD;
    return bcs_t_category_list(1, cat_index, len, indices);
}
int PMPI_T_category_get_categories(int cat_index, int len, int indices[]) {
    TGUARD;
    return bcs_t_category_list(2, cat_index, len, indices);
}
int PMPI_T_category_get_events(int cat_index, int len, int indices[]) {
    TGUARD;
    return bcs_t_category_list(3, cat_index, len, indices);
}
int PMPI_T_category_get_num_events(int cat_index, int *num_events) {
    TGUARD;
    return bcs_t_category_get_num_events(cat_index, num_events);
}
int PMPI_T_category_changed(int *update_number) { TGUARD; return bcs_t_category_changed(update_number); }

int PMPI_T_source_get_info(int source_index, char *name, int *name_len, char *desc, int *desc_len,
                           MPI_T_source_order *ordering, MPI_Count *ticks_per_second, MPI_Count *max_ticks,
                           MPI_Info *info) {
    TGUARD;
    int order = 0;
    int rc = bcs_t_source_get_info(source_index, name, name_len, desc, desc_len, &order, (int64_t *)ticks_per_second,
                                   (int64_t *)max_ticks, (uintptr_t *)info);
    if (rc == MPI_SUCCESS && ordering != NULL)
        *ordering = (MPI_T_source_order)order;
    return rc;
}
int PMPI_T_source_get_timestamp(int source_index, MPI_Count *timestamp) {
    TGUARD;
    return bcs_t_source_get_timestamp(source_index, (int64_t *)timestamp);
}

// Events: bcsmpi raises none, so there is no valid event index, and no
// registration or instance handle can exist.
int PMPI_T_event_get_index(const char *name, int *event_index) {
    TGUARD;
    (void)event_index;
    return bcs_t_event_get_index((char *)name);
}
int PMPI_T_event_get_info(int event_index, char *name, int *name_len, int *verbosity, MPI_Datatype array_of_datatypes[],
                          MPI_Aint array_of_displacements[], int *num_elements, MPI_T_enum *enumtype, MPI_Info *info,
                          char *desc, int *desc_len, int *bind) {
    TGUARD;
    (void)event_index, (void)name, (void)name_len, (void)verbosity, (void)array_of_datatypes;
    (void)array_of_displacements, (void)num_elements, (void)enumtype, (void)info, (void)desc, (void)desc_len, (void)bind;
    return bcs_t_event_index();
}
int PMPI_T_event_handle_alloc(int event_index, void *obj_handle, MPI_Info info,
                              MPI_T_event_registration *event_registration) {
    TGUARD;
    (void)event_index, (void)obj_handle, (void)info, (void)event_registration;
    return bcs_t_event_index();
}
int PMPI_T_event_handle_free(MPI_T_event_registration event_registration, void *user_data,
                             MPI_T_event_free_cb_function free_cb_function) {
    TGUARD;
    (void)event_registration, (void)user_data, (void)free_cb_function;
    return bcs_t_event_handle();
}
int PMPI_T_event_handle_get_info(MPI_T_event_registration event_registration, MPI_Info *info_used) {
    TGUARD;
    (void)event_registration, (void)info_used;
    return bcs_t_event_handle();
}
int PMPI_T_event_handle_set_info(MPI_T_event_registration event_registration, MPI_Info info) {
    TGUARD;
    (void)event_registration, (void)info;
    return bcs_t_event_handle();
}
int PMPI_T_event_register_callback(MPI_T_event_registration event_registration, MPI_T_cb_safety cb_safety,
                                   MPI_Info info, void *user_data, MPI_T_event_cb_function event_cb_function) {
    TGUARD;
    (void)event_registration, (void)cb_safety, (void)info, (void)user_data, (void)event_cb_function;
    return bcs_t_event_handle();
}
int PMPI_T_event_callback_get_info(MPI_T_event_registration event_registration, MPI_T_cb_safety cb_safety,
                                   MPI_Info *info_used) {
    TGUARD;
    (void)event_registration, (void)cb_safety, (void)info_used;
    return bcs_t_event_handle();
}
int PMPI_T_event_callback_set_info(MPI_T_event_registration event_registration, MPI_T_cb_safety cb_safety,
                                   MPI_Info info) {
    TGUARD;
    (void)event_registration, (void)cb_safety, (void)info;
    return bcs_t_event_handle();
}
int PMPI_T_event_set_dropped_handler(MPI_T_event_registration event_registration,
                                     MPI_T_event_dropped_cb_function dropped_cb_function) {
    TGUARD;
    (void)event_registration, (void)dropped_cb_function;
    return bcs_t_event_handle();
}
int PMPI_T_event_read(MPI_T_event_instance event_instance, int element_index, void *buffer) {
    TGUARD;
    (void)event_instance, (void)element_index, (void)buffer;
    return bcs_t_event_handle();
}
int PMPI_T_event_copy(MPI_T_event_instance event_instance, void *buffer) {
    TGUARD;
    (void)event_instance, (void)buffer;
    return bcs_t_event_handle();
}
int PMPI_T_event_get_timestamp(MPI_T_event_instance event_instance, MPI_Count *event_timestamp) {
    TGUARD;
    (void)event_instance, (void)event_timestamp;
    return bcs_t_event_handle();
}
int PMPI_T_event_get_source(MPI_T_event_instance event_instance, int *source_index) {
    TGUARD;
    (void)event_instance, (void)source_index;
    return bcs_t_event_handle();
}

#define W(name) _Pragma(BCS_STR(weak MPI_##name = PMPI_##name))
#define BCS_STR(x) #x
W(T_init_thread) W(T_finalize) W(T_cvar_get_num) W(T_pvar_get_num) W(T_category_get_num) W(T_event_get_num)
W(T_source_get_num) W(T_cvar_get_info) W(T_cvar_get_index) W(T_cvar_handle_alloc) W(T_cvar_handle_free)
W(T_cvar_read) W(T_cvar_write) W(T_enum_get_info) W(T_enum_get_item) W(T_pvar_get_info) W(T_pvar_get_index)
W(T_pvar_session_create) W(T_pvar_session_free) W(T_pvar_handle_alloc) W(T_pvar_handle_free) W(T_pvar_start)
W(T_pvar_stop) W(T_pvar_reset) W(T_pvar_read) W(T_pvar_write) W(T_pvar_readreset) W(T_category_get_info)
W(T_category_get_index) W(T_category_get_cvars) W(T_category_get_pvars) W(T_category_get_categories)
W(T_category_get_events) W(T_category_get_num_events) W(T_category_changed) W(T_source_get_info)
W(T_source_get_timestamp) W(T_event_get_index) W(T_event_get_info) W(T_event_handle_alloc) W(T_event_handle_free)
W(T_event_handle_get_info) W(T_event_handle_set_info) W(T_event_register_callback) W(T_event_callback_get_info)
W(T_event_callback_set_info) W(T_event_set_dropped_handler) W(T_event_read) W(T_event_copy)
W(T_event_get_timestamp) W(T_event_get_source)
