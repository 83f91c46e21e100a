// PMPI_X of MPI_Pack_external, MPI_Unpack_external, MPI_Pack_external_size
// (and _c), MPI_Type_create_f90_*, the MPI_Abi_* information calls,
// MPI_Get_hw_resource_info and the non-blocking buffer flushes
// (external32.go, abimisc.go), with MPI_X a weak alias, as in shim.c.

#include <stdint.h>

#include "shim.h"
#include "_cgo_export.h"

int bcs_guard(const char *call);
#define GUARD(call) do { int g_ = bcs_guard(call); if (g_ != MPI_SUCCESS) return g_; } while (0); BCS_LOCKED
#define H(x) ((uintptr_t)(x))

int PMPI_Pack_external(const char *datarep, const void *inbuf, int incount, MPI_Datatype datatype, void *outbuf,
                       MPI_Aint outsize, MPI_Aint *position) {
    GUARD("MPI_Pack_external");
    return bcs_pack_external("MPI_Pack_external", (char *)datarep, (void *)inbuf, incount, H(datatype), outbuf,
                             outsize, (int64_t *)position, 0);
}
int PMPI_Pack_external_c(const char *datarep, const void *inbuf, MPI_Count incount, MPI_Datatype datatype,
                         void *outbuf, MPI_Count outsize, MPI_Count *position) {
    GUARD("MPI_Pack_external_c");
    return bcs_pack_external("MPI_Pack_external_c", (char *)datarep, (void *)inbuf, incount, H(datatype), outbuf,
                             outsize, (int64_t *)position, 0);
}
int PMPI_Unpack_external(const char datarep[], const void *inbuf, MPI_Aint insize, MPI_Aint *position, void *outbuf,
                         int outcount, MPI_Datatype datatype) {
    GUARD("MPI_Unpack_external");
    return bcs_pack_external("MPI_Unpack_external", (char *)datarep, outbuf, outcount, H(datatype), (void *)inbuf,
                             insize, (int64_t *)position, 1);
}
int PMPI_Unpack_external_c(const char datarep[], const void *inbuf, MPI_Count insize, MPI_Count *position,
                           void *outbuf, MPI_Count outcount, MPI_Datatype datatype) {
    GUARD("MPI_Unpack_external_c");
    return bcs_pack_external("MPI_Unpack_external_c", (char *)datarep, outbuf, outcount, H(datatype), (void *)inbuf,
                             insize, (int64_t *)position, 1);
}
int PMPI_Pack_external_size(const char *datarep, int incount, MPI_Datatype datatype, MPI_Aint *size) {
    GUARD("MPI_Pack_external_size");
    return bcs_pack_external_size("MPI_Pack_external_size", (char *)datarep, incount, H(datatype), (int64_t *)size);
}
int PMPI_Pack_external_size_c(const char *datarep, MPI_Count incount, MPI_Datatype datatype, MPI_Count *size) {
    GUARD("MPI_Pack_external_size_c");
    return bcs_pack_external_size("MPI_Pack_external_size_c", (char *)datarep, incount, H(datatype),
                                  (int64_t *)size);
}

int PMPI_Type_create_f90_integer(int r, MPI_Datatype *newtype) {
    GUARD("MPI_Type_create_f90_integer");
    return bcs_type_create_f90(0, 0, r, (uintptr_t *)newtype);
}
int PMPI_Type_create_f90_real(int p, int r, MPI_Datatype *newtype) {
    GUARD("MPI_Type_create_f90_real");
    return bcs_type_create_f90(1, p, r, (uintptr_t *)newtype);
}
int PMPI_Type_create_f90_complex(int p, int r, MPI_Datatype *newtype) {
    GUARD("MPI_Type_create_f90_complex");
    return bcs_type_create_f90(2, p, r, (uintptr_t *)newtype);
}

int PMPI_Abi_get_info(MPI_Info *info) {
    GUARD("MPI_Abi_get_info");
    return bcs_abi_get_info((uintptr_t *)info);
}
int PMPI_Abi_get_fortran_info(MPI_Info *info) {
    GUARD("MPI_Abi_get_fortran_info");
    return bcs_abi_get_fortran_info((uintptr_t *)info);
}
int PMPI_Abi_set_fortran_info(MPI_Info info) {
    GUARD("MPI_Abi_set_fortran_info");
    return bcs_abi_set_fortran_info(H(info));
}
int PMPI_Abi_get_fortran_booleans(int logical_size, void *logical_true, void *logical_false, int *is_set) {
    GUARD("MPI_Abi_get_fortran_booleans");
    return bcs_abi_get_fortran_booleans(logical_size, logical_true, logical_false, is_set);
}
int PMPI_Abi_set_fortran_booleans(int logical_size, void *logical_true, void *logical_false) {
    GUARD("MPI_Abi_set_fortran_booleans");
    return bcs_abi_set_fortran_booleans(logical_size, logical_true, logical_false);
}
int PMPI_Get_hw_resource_info(MPI_Info *hw_info) {
    GUARD("MPI_Get_hw_resource_info");
    return bcs_get_hw_resource_info((uintptr_t *)hw_info);
}
int PMPI_Buffer_iflush(MPI_Request *request) {
    GUARD("MPI_Buffer_iflush");
    return bcs_buffer_iflush(NULL, (uintptr_t *)request);
}
int PMPI_Comm_iflush_buffer(MPI_Comm comm, MPI_Request *request) {
    GUARD("MPI_Comm_iflush_buffer");
    uintptr_t c = H(comm);
    return bcs_buffer_iflush(&c, (uintptr_t *)request);
}

#define W(name) _Pragma(BCS_STR(weak MPI_##name = PMPI_##name))
#define BCS_STR(x) #x
W(Pack_external) W(Pack_external_c) W(Unpack_external) W(Unpack_external_c) W(Pack_external_size)
W(Pack_external_size_c) W(Type_create_f90_integer) W(Type_create_f90_real) W(Type_create_f90_complex)
W(Abi_get_info) W(Abi_get_fortran_info) W(Abi_set_fortran_info) W(Abi_get_fortran_booleans)
W(Abi_set_fortran_booleans) W(Get_hw_resource_info) W(Buffer_iflush) W(Comm_iflush_buffer)
