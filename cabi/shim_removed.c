// The MPI-1 functions removed in MPI-3.0 that old programs still call
// (mpi.h, "removed in MPI-3.0"): each PMPI_X calls the profiling name of its
// replacement, so a tool that intercepts the replacement does not see the
// call twice, and MPI_X is a weak alias, as in shim.c. An error is raised by
// the replacement and names it (MPI_Type_create_struct for MPI_Type_struct).

#include "shim.h"

int PMPI_Address(void *location, MPI_Aint *address) { return PMPI_Get_address(location, address); }

int PMPI_Type_struct(int count, int array_of_blocklengths[], MPI_Aint array_of_displacements[],
                     MPI_Datatype array_of_types[], MPI_Datatype *newtype) {
    return PMPI_Type_create_struct(count, array_of_blocklengths, array_of_displacements, array_of_types, newtype);
}

int PMPI_Type_hindexed(int count, int array_of_blocklengths[], MPI_Aint array_of_displacements[],
                       MPI_Datatype oldtype, MPI_Datatype *newtype) {
    return PMPI_Type_create_hindexed(count, array_of_blocklengths, array_of_displacements, oldtype, newtype);
}

int PMPI_Type_hvector(int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype, MPI_Datatype *newtype) {
    return PMPI_Type_create_hvector(count, blocklength, stride, oldtype, newtype);
}

int PMPI_Type_extent(MPI_Datatype datatype, MPI_Aint *extent) {
    MPI_Aint lb;
    return PMPI_Type_get_extent(datatype, &lb, extent);
}

// Type_lb and Type_ub are the lower and upper bounds of the type map,
// markers included: the lb and lb + extent of MPI_Type_get_extent.
int PMPI_Type_lb(MPI_Datatype datatype, MPI_Aint *displacement) {
    MPI_Aint extent;
    return PMPI_Type_get_extent(datatype, displacement, &extent);
}

int PMPI_Type_ub(MPI_Datatype datatype, MPI_Aint *displacement) {
    MPI_Aint lb, extent;
    /* a NULL displacement reaches Type_get_extent, which refuses it
     * (MPI_ERR_ARG); it was written through */
    int rc = PMPI_Type_get_extent(datatype, &lb, displacement ? &extent : (MPI_Aint *)0);
    if (rc == MPI_SUCCESS)
        *displacement = lb + extent;
    return rc;
}

int PMPI_Errhandler_create(MPI_Handler_function *function, MPI_Errhandler *errhandler) {
    return PMPI_Comm_create_errhandler((MPI_Comm_errhandler_function *)function, errhandler);
}

int PMPI_Errhandler_get(MPI_Comm comm, MPI_Errhandler *errhandler) { return PMPI_Comm_get_errhandler(comm, errhandler); }

int PMPI_Errhandler_set(MPI_Comm comm, MPI_Errhandler errhandler) { return PMPI_Comm_set_errhandler(comm, errhandler); }

#define W(name) _Pragma(BCS_STR(weak MPI_##name = PMPI_##name))
#define BCS_STR(x) #x
W(Address) W(Type_struct) W(Type_hindexed) W(Type_hvector) W(Type_extent) W(Type_lb) W(Type_ub)
W(Errhandler_create) W(Errhandler_get) W(Errhandler_set)
