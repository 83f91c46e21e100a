// PMPI_X of MPI-IO (file.go), with MPI_X a weak alias, as in shim.c. Every
// read and write goes to one Go entry, bcs_file_io, with bits saying which
// call it is (file.go: ioWrite 1, ioAt 2, ioShared 4, ioOrdered 8, ioAll 16,
// ioNB 32, ioBegin 64, ioLarge 128); the int and _c forms differ only in
// the type of their count.

#include <stddef.h>

#include "shim.h"
#include "_cgo_export.h"

int bcs_guard(const char *call);
#define GUARD(call) do { int g_ = bcs_guard(call); if (g_ != MPI_SUCCESS) return g_; } while (0); BCS_LOCKED
#define H(x) ((uintptr_t)(x))

// ---- Opening, closing, deleting ----

int PMPI_File_open(MPI_Comm comm, const char *filename, int amode, MPI_Info info, MPI_File *fh) {
    GUARD("MPI_File_open");
    return bcs_file_open(H(comm), (char *)filename, amode, H(info), (uintptr_t *)fh);
}

int PMPI_File_close(MPI_File *fh) {
    GUARD("MPI_File_close");
    return bcs_file_close((uintptr_t *)fh);
}

int PMPI_File_delete(const char *filename, MPI_Info info) {
    GUARD("MPI_File_delete");
    return bcs_file_delete((char *)filename, H(info));
}

// ---- Size, sync, queries and settings ----

int PMPI_File_get_size(MPI_File fh, MPI_Offset *size) {
    GUARD("MPI_File_get_size");
    return bcs_file_get_size(H(fh), size);
}

int PMPI_File_set_size(MPI_File fh, MPI_Offset size) {
    GUARD("MPI_File_set_size");
    return bcs_file_resize(H(fh), size, 0);
}

int PMPI_File_preallocate(MPI_File fh, MPI_Offset size) {
    GUARD("MPI_File_preallocate");
    return bcs_file_resize(H(fh), size, 1);
}

int PMPI_File_sync(MPI_File fh) {
    GUARD("MPI_File_sync");
    return bcs_file_sync(H(fh));
}

int PMPI_File_get_amode(MPI_File fh, int *amode) {
    GUARD("MPI_File_get_amode");
    return bcs_file_query(0, H(fh), amode);
}

int PMPI_File_get_group(MPI_File fh, MPI_Group *group) {
    GUARD("MPI_File_get_group");
    return bcs_file_query(1, H(fh), group);
}

int PMPI_File_get_info(MPI_File fh, MPI_Info *info_used) {
    GUARD("MPI_File_get_info");
    return bcs_file_query(2, H(fh), info_used);
}

int PMPI_File_get_atomicity(MPI_File fh, int *flag) {
    GUARD("MPI_File_get_atomicity");
    return bcs_file_query(3, H(fh), flag);
}

int PMPI_File_get_errhandler(MPI_File file, MPI_Errhandler *errhandler) {
    GUARD("MPI_File_get_errhandler");
    return bcs_file_query(4, H(file), errhandler);
}

int PMPI_File_set_info(MPI_File fh, MPI_Info info) {
    GUARD("MPI_File_set_info");
    return bcs_file_set_info(H(fh), H(info));
}

int PMPI_File_set_atomicity(MPI_File fh, int flag) {
    GUARD("MPI_File_set_atomicity");
    return bcs_file_set_atomicity(H(fh), flag);
}

int PMPI_File_set_errhandler(MPI_File file, MPI_Errhandler errhandler) {
    GUARD("MPI_File_set_errhandler");
    return bcs_file_set_errhandler(H(file), H(errhandler));
}

// A file error handler has the shape of a communicator's (a pointer to the
// object's handle and to the code), so it is kept and called the same way.
int PMPI_File_create_errhandler(MPI_File_errhandler_function *fn, MPI_Errhandler *errhandler) {
    GUARD("MPI_File_create_errhandler");
    if (errhandler == NULL)
        return bcs_error(H(MPI_COMM_WORLD), "MPI_File_create_errhandler", MPI_ERR_ARG, "errhandler = NULL");
    return bcs_comm_create_errhandler((void *)fn, (uintptr_t *)errhandler);
}

int PMPI_File_call_errhandler(MPI_File fh, int errorcode) {
    GUARD("MPI_File_call_errhandler");
    return bcs_file_call_errhandler(H(fh), errorcode);
}

// User data representations (datarep.go): the functions are kept as
// pointers and called through bcs_call_datarep_*; MPI_CONVERSION_FN_NULL
// (and its _C form) is NULL.
int PMPI_Register_datarep(const char *datarep, MPI_Datarep_conversion_function *read_conversion_fn,
                          MPI_Datarep_conversion_function *write_conversion_fn,
                          MPI_Datarep_extent_function *dtype_file_extent_fn, void *extra_state) {
    GUARD("MPI_Register_datarep");
    return bcs_register_datarep((char *)datarep, (void *)read_conversion_fn, (void *)write_conversion_fn,
                                (void *)dtype_file_extent_fn, extra_state, 0);
}

int PMPI_Register_datarep_c(const char *datarep, MPI_Datarep_conversion_function_c *read_conversion_fn,
                            MPI_Datarep_conversion_function_c *write_conversion_fn,
                            MPI_Datarep_extent_function *dtype_file_extent_fn, void *extra_state) {
    GUARD("MPI_Register_datarep_c");
    return bcs_register_datarep((char *)datarep, (void *)read_conversion_fn, (void *)write_conversion_fn,
                                (void *)dtype_file_extent_fn, extra_state, 1);
}

int bcs_call_datarep_extent(void *fn, uintptr_t datatype, MPI_Aint *extent, void *extra_state) {
    return ((MPI_Datarep_extent_function *)fn)((MPI_Datatype)datatype, extent, extra_state);
}

// count fits an int: a chunk holds at most convChunk elements (datarep.go).
int bcs_call_datarep_conv(void *fn, int large, void *userbuf, uintptr_t datatype, MPI_Count count, void *filebuf,
                          MPI_Offset position, void *extra_state) {
    if (large)
        return ((MPI_Datarep_conversion_function_c *)fn)(userbuf, (MPI_Datatype)datatype, count, filebuf, position,
                                                         extra_state);
    return ((MPI_Datarep_conversion_function *)fn)(userbuf, (MPI_Datatype)datatype, (int)count, filebuf, position,
                                                   extra_state);
}

// ---- Views and file pointers ----

int PMPI_File_set_view(MPI_File fh, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype filetype,
                       const char *datarep, MPI_Info info) {
    GUARD("MPI_File_set_view");
    return bcs_file_set_view(H(fh), disp, H(etype), H(filetype), (char *)datarep, H(info));
}

int PMPI_File_get_view(MPI_File fh, MPI_Offset *disp, MPI_Datatype *etype, MPI_Datatype *filetype, char *datarep) {
    GUARD("MPI_File_get_view");
    return bcs_file_get_view(H(fh), disp, (uintptr_t *)etype, (uintptr_t *)filetype, datarep);
}

int PMPI_File_get_type_extent(MPI_File fh, MPI_Datatype datatype, MPI_Aint *extent) {
    GUARD("MPI_File_get_type_extent");
    MPI_Count e = 0;
    int rc = bcs_file_get_type_extent(H(fh), H(datatype), extent == NULL ? NULL : &e, 0);
    if (rc == MPI_SUCCESS)
        *extent = (MPI_Aint)e;
    return rc;
}

int PMPI_File_get_type_extent_c(MPI_File fh, MPI_Datatype datatype, MPI_Count *extent) {
    GUARD("MPI_File_get_type_extent_c");
    return bcs_file_get_type_extent(H(fh), H(datatype), extent, 1);
}

int PMPI_File_seek(MPI_File fh, MPI_Offset offset, int whence) {
    GUARD("MPI_File_seek");
    return bcs_file_seek(H(fh), offset, whence, 0);
}

int PMPI_File_seek_shared(MPI_File fh, MPI_Offset offset, int whence) {
    GUARD("MPI_File_seek_shared");
    return bcs_file_seek(H(fh), offset, whence, 1);
}

int PMPI_File_get_position(MPI_File fh, MPI_Offset *offset) {
    GUARD("MPI_File_get_position");
    return bcs_file_get_position(H(fh), offset, 0);
}

int PMPI_File_get_position_shared(MPI_File fh, MPI_Offset *offset) {
    GUARD("MPI_File_get_position_shared");
    return bcs_file_get_position(H(fh), offset, 1);
}

int PMPI_File_get_byte_offset(MPI_File fh, MPI_Offset offset, MPI_Offset *disp) {
    GUARD("MPI_File_get_byte_offset");
    return bcs_file_get_byte_offset(H(fh), offset, disp);
}

// ---- Data access (generated once by a script from the list of calls; edit freely) ----

int PMPI_File_read_at(MPI_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype datatype, MPI_Status *status) {
    GUARD("MPI_File_read_at");
    return bcs_file_io(2, H(fh), offset, (void *)buf, count, H(datatype), status, NULL);
}

int PMPI_File_read_at_all(MPI_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype datatype, MPI_Status *status) {
    GUARD("MPI_File_read_at_all");
    return bcs_file_io(18, H(fh), offset, (void *)buf, count, H(datatype), status, NULL);
}

int PMPI_File_read(MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Status *status) {
    GUARD("MPI_File_read");
    return bcs_file_io(0, H(fh), 0, (void *)buf, count, H(datatype), status, NULL);
}

int PMPI_File_read_all(MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Status *status) {
    GUARD("MPI_File_read_all");
    return bcs_file_io(16, H(fh), 0, (void *)buf, count, H(datatype), status, NULL);
}

int PMPI_File_read_shared(MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Status *status) {
    GUARD("MPI_File_read_shared");
    return bcs_file_io(4, H(fh), 0, (void *)buf, count, H(datatype), status, NULL);
}

int PMPI_File_read_ordered(MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Status *status) {
    GUARD("MPI_File_read_ordered");
    return bcs_file_io(8, H(fh), 0, (void *)buf, count, H(datatype), status, NULL);
}

int PMPI_File_iread_at(MPI_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype datatype, MPI_Request *request) {
    GUARD("MPI_File_iread_at");
    return bcs_file_io(34, H(fh), offset, (void *)buf, count, H(datatype), NULL, (uintptr_t *)request);
}

int PMPI_File_iread_at_all(MPI_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype datatype, MPI_Request *request) {
    GUARD("MPI_File_iread_at_all");
    return bcs_file_io(50, H(fh), offset, (void *)buf, count, H(datatype), NULL, (uintptr_t *)request);
}

int PMPI_File_iread(MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Request *request) {
    GUARD("MPI_File_iread");
    return bcs_file_io(32, H(fh), 0, (void *)buf, count, H(datatype), NULL, (uintptr_t *)request);
}

int PMPI_File_iread_all(MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Request *request) {
    GUARD("MPI_File_iread_all");
    return bcs_file_io(48, H(fh), 0, (void *)buf, count, H(datatype), NULL, (uintptr_t *)request);
}

int PMPI_File_iread_shared(MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Request *request) {
    GUARD("MPI_File_iread_shared");
    return bcs_file_io(36, H(fh), 0, (void *)buf, count, H(datatype), NULL, (uintptr_t *)request);
}

int PMPI_File_read_at_all_begin(MPI_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype datatype) {
    GUARD("MPI_File_read_at_all_begin");
    return bcs_file_io(82, H(fh), offset, (void *)buf, count, H(datatype), NULL, NULL);
}

int PMPI_File_read_all_begin(MPI_File fh, void *buf, int count, MPI_Datatype datatype) {
    GUARD("MPI_File_read_all_begin");
    return bcs_file_io(80, H(fh), 0, (void *)buf, count, H(datatype), NULL, NULL);
}

int PMPI_File_read_ordered_begin(MPI_File fh, void *buf, int count, MPI_Datatype datatype) {
    GUARD("MPI_File_read_ordered_begin");
    return bcs_file_io(72, H(fh), 0, (void *)buf, count, H(datatype), NULL, NULL);
}

int PMPI_File_read_at_c(MPI_File fh, MPI_Offset offset, void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Status *status) {
    GUARD("MPI_File_read_at_c");
    return bcs_file_io(130, H(fh), offset, (void *)buf, count, H(datatype), status, NULL);
}

int PMPI_File_read_at_all_c(MPI_File fh, MPI_Offset offset, void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Status *status) {
    GUARD("MPI_File_read_at_all_c");
    return bcs_file_io(146, H(fh), offset, (void *)buf, count, H(datatype), status, NULL);
}

int PMPI_File_read_c(MPI_File fh, void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Status *status) {
    GUARD("MPI_File_read_c");
    return bcs_file_io(128, H(fh), 0, (void *)buf, count, H(datatype), status, NULL);
}

int PMPI_File_read_all_c(MPI_File fh, void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Status *status) {
    GUARD("MPI_File_read_all_c");
    return bcs_file_io(144, H(fh), 0, (void *)buf, count, H(datatype), status, NULL);
}

int PMPI_File_read_shared_c(MPI_File fh, void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Status *status) {
    GUARD("MPI_File_read_shared_c");
    return bcs_file_io(132, H(fh), 0, (void *)buf, count, H(datatype), status, NULL);
}

int PMPI_File_read_ordered_c(MPI_File fh, void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Status *status) {
    GUARD("MPI_File_read_ordered_c");
    return bcs_file_io(136, H(fh), 0, (void *)buf, count, H(datatype), status, NULL);
}

int PMPI_File_iread_at_c(MPI_File fh, MPI_Offset offset, void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Request *request) {
    GUARD("MPI_File_iread_at_c");
    return bcs_file_io(162, H(fh), offset, (void *)buf, count, H(datatype), NULL, (uintptr_t *)request);
}

int PMPI_File_iread_at_all_c(MPI_File fh, MPI_Offset offset, void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Request *request) {
    GUARD("MPI_File_iread_at_all_c");
    return bcs_file_io(178, H(fh), offset, (void *)buf, count, H(datatype), NULL, (uintptr_t *)request);
}

int PMPI_File_iread_c(MPI_File fh, void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Request *request) {
    GUARD("MPI_File_iread_c");
    return bcs_file_io(160, H(fh), 0, (void *)buf, count, H(datatype), NULL, (uintptr_t *)request);
}

int PMPI_File_iread_all_c(MPI_File fh, void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Request *request) {
    GUARD("MPI_File_iread_all_c");
    return bcs_file_io(176, H(fh), 0, (void *)buf, count, H(datatype), NULL, (uintptr_t *)request);
}

int PMPI_File_iread_shared_c(MPI_File fh, void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Request *request) {
    GUARD("MPI_File_iread_shared_c");
    return bcs_file_io(164, H(fh), 0, (void *)buf, count, H(datatype), NULL, (uintptr_t *)request);
}

int PMPI_File_read_at_all_begin_c(MPI_File fh, MPI_Offset offset, void *buf, MPI_Count count, MPI_Datatype datatype) {
    GUARD("MPI_File_read_at_all_begin_c");
    return bcs_file_io(210, H(fh), offset, (void *)buf, count, H(datatype), NULL, NULL);
}

int PMPI_File_read_all_begin_c(MPI_File fh, void *buf, MPI_Count count, MPI_Datatype datatype) {
    GUARD("MPI_File_read_all_begin_c");
    return bcs_file_io(208, H(fh), 0, (void *)buf, count, H(datatype), NULL, NULL);
}

int PMPI_File_read_ordered_begin_c(MPI_File fh, void *buf, MPI_Count count, MPI_Datatype datatype) {
    GUARD("MPI_File_read_ordered_begin_c");
    return bcs_file_io(200, H(fh), 0, (void *)buf, count, H(datatype), NULL, NULL);
}

int PMPI_File_read_at_all_end(MPI_File fh, void *buf, MPI_Status *status) {
    GUARD("MPI_File_read_at_all_end");
    return bcs_file_end(2, H(fh), (void *)buf, status);
}

int PMPI_File_read_all_end(MPI_File fh, void *buf, MPI_Status *status) {
    GUARD("MPI_File_read_all_end");
    return bcs_file_end(0, H(fh), (void *)buf, status);
}

int PMPI_File_read_ordered_end(MPI_File fh, void *buf, MPI_Status *status) {
    GUARD("MPI_File_read_ordered_end");
    return bcs_file_end(8, H(fh), (void *)buf, status);
}

int PMPI_File_write_at(MPI_File fh, MPI_Offset offset, const void *buf, int count, MPI_Datatype datatype, MPI_Status *status) {
    GUARD("MPI_File_write_at");
    return bcs_file_io(3, H(fh), offset, (void *)buf, count, H(datatype), status, NULL);
}

int PMPI_File_write_at_all(MPI_File fh, MPI_Offset offset, const void *buf, int count, MPI_Datatype datatype, MPI_Status *status) {
    GUARD("MPI_File_write_at_all");
    return bcs_file_io(19, H(fh), offset, (void *)buf, count, H(datatype), status, NULL);
}

int PMPI_File_write(MPI_File fh, const void *buf, int count, MPI_Datatype datatype, MPI_Status *status) {
    GUARD("MPI_File_write");
    return bcs_file_io(1, H(fh), 0, (void *)buf, count, H(datatype), status, NULL);
}

int PMPI_File_write_all(MPI_File fh, const void *buf, int count, MPI_Datatype datatype, MPI_Status *status) {
    GUARD("MPI_File_write_all");
    return bcs_file_io(17, H(fh), 0, (void *)buf, count, H(datatype), status, NULL);
}

int PMPI_File_write_shared(MPI_File fh, const void *buf, int count, MPI_Datatype datatype, MPI_Status *status) {
    GUARD("MPI_File_write_shared");
    return bcs_file_io(5, H(fh), 0, (void *)buf, count, H(datatype), status, NULL);
}

int PMPI_File_write_ordered(MPI_File fh, const void *buf, int count, MPI_Datatype datatype, MPI_Status *status) {
    GUARD("MPI_File_write_ordered");
    return bcs_file_io(9, H(fh), 0, (void *)buf, count, H(datatype), status, NULL);
}

int PMPI_File_iwrite_at(MPI_File fh, MPI_Offset offset, const void *buf, int count, MPI_Datatype datatype, MPI_Request *request) {
    GUARD("MPI_File_iwrite_at");
    return bcs_file_io(35, H(fh), offset, (void *)buf, count, H(datatype), NULL, (uintptr_t *)request);
}

int PMPI_File_iwrite_at_all(MPI_File fh, MPI_Offset offset, const void *buf, int count, MPI_Datatype datatype, MPI_Request *request) {
    GUARD("MPI_File_iwrite_at_all");
    return bcs_file_io(51, H(fh), offset, (void *)buf, count, H(datatype), NULL, (uintptr_t *)request);
}

int PMPI_File_iwrite(MPI_File fh, const void *buf, int count, MPI_Datatype datatype, MPI_Request *request) {
    GUARD("MPI_File_iwrite");
    return bcs_file_io(33, H(fh), 0, (void *)buf, count, H(datatype), NULL, (uintptr_t *)request);
}

int PMPI_File_iwrite_all(MPI_File fh, const void *buf, int count, MPI_Datatype datatype, MPI_Request *request) {
    GUARD("MPI_File_iwrite_all");
    return bcs_file_io(49, H(fh), 0, (void *)buf, count, H(datatype), NULL, (uintptr_t *)request);
}

int PMPI_File_iwrite_shared(MPI_File fh, const void *buf, int count, MPI_Datatype datatype, MPI_Request *request) {
    GUARD("MPI_File_iwrite_shared");
    return bcs_file_io(37, H(fh), 0, (void *)buf, count, H(datatype), NULL, (uintptr_t *)request);
}

int PMPI_File_write_at_all_begin(MPI_File fh, MPI_Offset offset, const void *buf, int count, MPI_Datatype datatype) {
    GUARD("MPI_File_write_at_all_begin");
    return bcs_file_io(83, H(fh), offset, (void *)buf, count, H(datatype), NULL, NULL);
}

int PMPI_File_write_all_begin(MPI_File fh, const void *buf, int count, MPI_Datatype datatype) {
    GUARD("MPI_File_write_all_begin");
    return bcs_file_io(81, H(fh), 0, (void *)buf, count, H(datatype), NULL, NULL);
}

int PMPI_File_write_ordered_begin(MPI_File fh, const void *buf, int count, MPI_Datatype datatype) {
    GUARD("MPI_File_write_ordered_begin");
    return bcs_file_io(73, H(fh), 0, (void *)buf, count, H(datatype), NULL, NULL);
}

int PMPI_File_write_at_c(MPI_File fh, MPI_Offset offset, const void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Status *status) {
    GUARD("MPI_File_write_at_c");
    return bcs_file_io(131, H(fh), offset, (void *)buf, count, H(datatype), status, NULL);
}

int PMPI_File_write_at_all_c(MPI_File fh, MPI_Offset offset, const void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Status *status) {
    GUARD("MPI_File_write_at_all_c");
    return bcs_file_io(147, H(fh), offset, (void *)buf, count, H(datatype), status, NULL);
}

int PMPI_File_write_c(MPI_File fh, const void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Status *status) {
    GUARD("MPI_File_write_c");
    return bcs_file_io(129, H(fh), 0, (void *)buf, count, H(datatype), status, NULL);
}

int PMPI_File_write_all_c(MPI_File fh, const void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Status *status) {
    GUARD("MPI_File_write_all_c");
    return bcs_file_io(145, H(fh), 0, (void *)buf, count, H(datatype), status, NULL);
}

int PMPI_File_write_shared_c(MPI_File fh, const void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Status *status) {
    GUARD("MPI_File_write_shared_c");
    return bcs_file_io(133, H(fh), 0, (void *)buf, count, H(datatype), status, NULL);
}

int PMPI_File_write_ordered_c(MPI_File fh, const void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Status *status) {
    GUARD("MPI_File_write_ordered_c");
    return bcs_file_io(137, H(fh), 0, (void *)buf, count, H(datatype), status, NULL);
}

int PMPI_File_iwrite_at_c(MPI_File fh, MPI_Offset offset, const void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Request *request) {
    GUARD("MPI_File_iwrite_at_c");
    return bcs_file_io(163, H(fh), offset, (void *)buf, count, H(datatype), NULL, (uintptr_t *)request);
}

int PMPI_File_iwrite_at_all_c(MPI_File fh, MPI_Offset offset, const void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Request *request) {
    GUARD("MPI_File_iwrite_at_all_c");
    return bcs_file_io(179, H(fh), offset, (void *)buf, count, H(datatype), NULL, (uintptr_t *)request);
}

int PMPI_File_iwrite_c(MPI_File fh, const void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Request *request) {
    GUARD("MPI_File_iwrite_c");
    return bcs_file_io(161, H(fh), 0, (void *)buf, count, H(datatype), NULL, (uintptr_t *)request);
}

int PMPI_File_iwrite_all_c(MPI_File fh, const void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Request *request) {
    GUARD("MPI_File_iwrite_all_c");
    return bcs_file_io(177, H(fh), 0, (void *)buf, count, H(datatype), NULL, (uintptr_t *)request);
}

int PMPI_File_iwrite_shared_c(MPI_File fh, const void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Request *request) {
    GUARD("MPI_File_iwrite_shared_c");
    return bcs_file_io(165, H(fh), 0, (void *)buf, count, H(datatype), NULL, (uintptr_t *)request);
}

int PMPI_File_write_at_all_begin_c(MPI_File fh, MPI_Offset offset, const void *buf, MPI_Count count, MPI_Datatype datatype) {
    GUARD("MPI_File_write_at_all_begin_c");
    return bcs_file_io(211, H(fh), offset, (void *)buf, count, H(datatype), NULL, NULL);
}

int PMPI_File_write_all_begin_c(MPI_File fh, const void *buf, MPI_Count count, MPI_Datatype datatype) {
    GUARD("MPI_File_write_all_begin_c");
    return bcs_file_io(209, H(fh), 0, (void *)buf, count, H(datatype), NULL, NULL);
}

int PMPI_File_write_ordered_begin_c(MPI_File fh, const void *buf, MPI_Count count, MPI_Datatype datatype) {
    GUARD("MPI_File_write_ordered_begin_c");
    return bcs_file_io(201, H(fh), 0, (void *)buf, count, H(datatype), NULL, NULL);
}

int PMPI_File_write_at_all_end(MPI_File fh, const void *buf, MPI_Status *status) {
    GUARD("MPI_File_write_at_all_end");
    return bcs_file_end(3, H(fh), (void *)buf, status);
}

int PMPI_File_write_all_end(MPI_File fh, const void *buf, MPI_Status *status) {
    GUARD("MPI_File_write_all_end");
    return bcs_file_end(1, H(fh), (void *)buf, status);
}

int PMPI_File_write_ordered_end(MPI_File fh, const void *buf, MPI_Status *status) {
    GUARD("MPI_File_write_ordered_end");
    return bcs_file_end(9, H(fh), (void *)buf, status);
}

#define W(name) _Pragma(BCS_STR(weak MPI_##name = PMPI_##name))
#define BCS_STR(x) #x
W(File_open) W(File_close) W(File_delete) W(File_get_size) W(File_set_size) W(File_preallocate) W(File_sync)
W(File_get_amode) W(File_get_group) W(File_get_info) W(File_get_atomicity) W(File_get_errhandler)
W(File_set_info) W(File_set_atomicity) W(File_set_errhandler) W(File_create_errhandler) W(File_call_errhandler)
W(Register_datarep) W(Register_datarep_c) W(File_set_view) W(File_get_view) W(File_get_type_extent)
W(File_get_type_extent_c) W(File_seek) W(File_seek_shared) W(File_get_position) W(File_get_position_shared)
W(File_get_byte_offset)
W(File_read_at) W(File_read_at_all) W(File_read) W(File_read_all) W(File_read_shared) W(File_read_ordered)
W(File_iread_at) W(File_iread_at_all) W(File_iread) W(File_iread_all) W(File_iread_shared) W(File_read_at_all_begin)
W(File_read_all_begin) W(File_read_ordered_begin) W(File_read_at_c) W(File_read_at_all_c) W(File_read_c) W(File_read_all_c)
W(File_read_shared_c) W(File_read_ordered_c) W(File_iread_at_c) W(File_iread_at_all_c) W(File_iread_c) W(File_iread_all_c)
W(File_iread_shared_c) W(File_read_at_all_begin_c) W(File_read_all_begin_c) W(File_read_ordered_begin_c) W(File_read_at_all_end) W(File_read_all_end)
W(File_read_ordered_end) W(File_write_at) W(File_write_at_all) W(File_write) W(File_write_all) W(File_write_shared)
W(File_write_ordered) W(File_iwrite_at) W(File_iwrite_at_all) W(File_iwrite) W(File_iwrite_all) W(File_iwrite_shared)
W(File_write_at_all_begin) W(File_write_all_begin) W(File_write_ordered_begin) W(File_write_at_c) W(File_write_at_all_c) W(File_write_c)
W(File_write_all_c) W(File_write_shared_c) W(File_write_ordered_c) W(File_iwrite_at_c) W(File_iwrite_at_all_c) W(File_iwrite_c)
W(File_iwrite_all_c) W(File_iwrite_shared_c) W(File_write_at_all_begin_c) W(File_write_all_begin_c) W(File_write_ordered_begin_c) W(File_write_at_all_end)
W(File_write_all_end) W(File_write_ordered_end)    
