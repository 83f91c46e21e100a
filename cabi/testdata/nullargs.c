/* nullargs: a NULL output argument is MPI_ERR_ARG (under
 * MPI_ERRORS_RETURN), never a crash: the query calls of communicators,
 * groups, datatypes, statuses, info, errors, the environment, attributes,
 * operations, topologies, packing, memory and requests. Some once wrote
 * through the NULL pointer (MPICH's errors/datatype *_nullarg tests found
 * the extent and size ones). Calls allowed before MPI_Init return
 * MPI_ERR_ARG there too. Prints "nullargs ok <rank>". */
#include <mpi.h>
#include <stdio.h>

static int rank, fails;

#define ARG(call)                                                                      \
    do {                                                                               \
        int rc_ = (call), c_ = -1;                                                     \
        if (rc_ != MPI_SUCCESS)                                                        \
            MPI_Error_class(rc_, &c_);                                                 \
        if (c_ != MPI_ERR_ARG) {                                                       \
            printf("FAIL rank %d: %s: class %d, want MPI_ERR_ARG\n", rank, #call, c_); \
            fails++;                                                                   \
        }                                                                              \
    } while (0)

int main(int argc, char **argv) {
    int before = MPI_Initialized(NULL), i;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (before != MPI_ERR_ARG) {
        printf("FAIL: MPI_Initialized(NULL) before MPI_Init returned %d\n", before);
        fails++;
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Group g;
    MPI_Comm_group(MPI_COMM_WORLD, &g);
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Status st;
    MPI_Aint a;
    MPI_Count c;
    MPI_Datatype vec;
    MPI_Type_vector(2, 1, 2, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    MPI_Sendrecv(&i, 1, MPI_INT, rank, 0, &i, 1, MPI_INT, rank, 0, MPI_COMM_WORLD, &st);

    ARG(MPI_Comm_compare(MPI_COMM_WORLD, MPI_COMM_SELF, NULL));
    ARG(MPI_Comm_get_name(MPI_COMM_WORLD, NULL, &i));
    ARG(MPI_Comm_get_info(MPI_COMM_WORLD, NULL));
    ARG(MPI_Comm_test_inter(MPI_COMM_WORLD, NULL));
    ARG(MPI_Comm_get_errhandler(MPI_COMM_WORLD, NULL));
    ARG(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &a, NULL));
    ARG(MPI_Topo_test(MPI_COMM_WORLD, NULL));
    ARG(MPI_Group_rank(g, NULL));
    ARG(MPI_Group_compare(g, g, NULL));
    ARG(MPI_Group_incl(g, 0, NULL, NULL));
    ARG(MPI_Group_excl(g, 0, NULL, NULL));
    ARG(MPI_Type_get_name(MPI_INT, NULL, &i));
    ARG(MPI_Type_get_name(vec, NULL, &i));
    ARG(MPI_Type_get_envelope(vec, NULL, &i, &i, &i));
    ARG(MPI_Type_get_envelope_c(vec, &c, &c, &c, &c, NULL));
    ARG(MPI_Type_get_extent(vec, NULL, &a));
    ARG(MPI_Type_get_extent(vec, &a, NULL));
    ARG(MPI_Type_get_extent_c(vec, &c, NULL));
    ARG(MPI_Type_get_extent_x(vec, NULL, &c));
    ARG(MPI_Type_get_true_extent(vec, &a, NULL));
    ARG(MPI_Type_get_true_extent_c(vec, NULL, &c));
    ARG(MPI_Type_get_true_extent_x(vec, &c, NULL));
    ARG(MPI_Type_size_c(vec, NULL));
    ARG(MPI_Type_size_x(vec, NULL));
    ARG(MPI_Type_get_attr(vec, MPI_KEYVAL_INVALID + 1, &a, NULL));
    ARG(MPI_Get_count(&st, MPI_INT, NULL));
    ARG(MPI_Get_count_c(&st, MPI_INT, NULL));
    ARG(MPI_Get_elements(&st, MPI_INT, NULL));
    ARG(MPI_Get_elements_c(&st, MPI_INT, NULL));
    ARG(MPI_Get_elements_x(&st, MPI_INT, NULL));
    ARG(MPI_Info_get_nkeys(info, NULL));
    ARG(MPI_Info_dup(info, NULL));
    ARG(MPI_Error_class(MPI_ERR_ARG, NULL));
    ARG(MPI_Error_string(MPI_ERR_ARG, NULL, &i));
    ARG(MPI_Query_thread(NULL));
    ARG(MPI_Initialized(NULL));
    ARG(MPI_Finalized(NULL));
    ARG(MPI_Get_version(&i, NULL));
    ARG(MPI_Get_processor_name(NULL, &i));
    ARG(MPI_Get_library_version(NULL, &i));
    ARG(MPI_Abi_get_version(NULL, &i));
    ARG(MPI_Op_commutative(MPI_SUM, NULL));
    ARG(MPI_Pack_size(1, MPI_INT, MPI_COMM_WORLD, NULL));
    ARG(MPI_Pack_size_c(1, MPI_INT, MPI_COMM_WORLD, NULL));
    ARG(MPI_Alloc_mem(8, MPI_INFO_NULL, NULL));
    ARG(MPI_Errhandler_free(NULL));
    ARG(MPI_Request_free(NULL));

    MPI_Type_free(&vec);
    MPI_Info_free(&info);
    MPI_Group_free(&g);
    if (fails == 0)
        printf("nullargs ok %d\n", rank);
    MPI_Finalize();
    return fails != 0;
}
