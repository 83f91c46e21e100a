// Command cabi is libmpi_abi.so.1: bcsmpi for unmodified C and C++ MPI
// programs, through the MPI-5.0 standard ABI (MPI 5.0, Chapter 20). It is
// built with
//
//	go build -buildmode=c-shared -ldflags=-extldflags=-Wl,-soname,libmpi_abi.so.1 -o bin/lib/libmpi_abi.so.1 ./cabi
//
// which bcscc and bcscxx (cmd/bcscc, internal/ccwrap) do by themselves on
// their first link, so a newcomer runs
//
//	go build -o bin/ ./cmd/... && bin/bcscc -o hello examples/c/hello.c && bin/bcsrun -n 4 ./hello
//
// # Layers
//
//   - include/mpi.h: bcsmpi's own header with the standard's values: every
//     handle is a pointer to an incomplete struct with the predefined value
//     the standard fixes (MPI_COMM_WORLD is 0x101, MPI_INT 0x209, ...),
//     MPI_Status is 8 ints (MPI_SOURCE, MPI_TAG, MPI_ERROR, 5 internal), and
//     it declares MPI_X and PMPI_X for each function implemented. It compiles
//     as C and C++. abi_table_test.go holds the standard's constants
//     transcribed independently; TestHeaderConstants compares them.
//   - shim.c: every PMPI_X, with MPI_X a weak alias (#pragma weak) so a
//     profiling library interposes as on any MPI. It serves the cheap calls
//     itself (MPI_Comm_rank/size of the world, Wtime, Wtick, Initialized,
//     Finalized, Query_thread, the datatype table, Get_count, version and
//     processor name, error strings and predefined attributes) and passes the
//     rest to the Go exports (bcs_*) with handles as integers.
//   - the Go exports (env.go, comm.go, p2p.go, wait.go, coll.go) validate
//     handles, translate the ABI's sentinels (MPI_ANY_SOURCE -1, MPI_ANY_TAG
//     -2, MPI_PROC_NULL -3) to mpiapi's, and call mpiapi, so argument checks,
//     the MMDS and every collective stay written once. Point-to-point buffers
//     go to mpiapi as bytes; collectives as []T of the datatype's Go element
//     type (types.go), so the runtime still checks element types and counts
//     across members and reduces with the type's arithmetic.
//   - datatype.go: derived datatypes (see Datatypes below).
//
// # Handles
//
// Predefined handles are the standard's values (< 0x400). Handles this
// library makes (communicators, requests, derived datatypes) are
// kind<<48 | generation<<24 | index, never below 0x1000: a null, freed or
// wrong-kind handle is told apart exactly and gets MPI_ERR_COMM,
// MPI_ERR_REQUEST or MPI_ERR_TYPE with a message
// naming it ("comm = MPI_INT (0x209, a datatype) is not a communicator").
// MPI_REQUEST_NULL is accepted in request arrays. A request handle is freed,
// and the caller's handle set to MPI_REQUEST_NULL, as soon as Wait or Test
// sees it complete.
//
// # Datatypes
//
// A derived datatype records its constructor's arguments as
// MPI_Type_get_contents returns them (the shim lays them out so) and keeps
// its children by pointer, so freeing a child leaves its parents intact.
// Size, bounds and true bounds are computed at construction (a struct is
// padded to its strictest member's alignment, as a C compiler pads it); the
// layout is compiled at MPI_Type_commit into segments (n runs of len bytes
// at off, off+stride, ...), adjacent runs merged, plus the run-length
// encoded signature; at most 2^20 of each per type.
//
//   - Moving data: a type whose layout is one run equal to its extent is
//     contiguous and goes to the runtime with no copy. Any other is packed
//     into a staging buffer at post time and, for a receive, unpacked when
//     Wait or Test sees the request complete (blocking calls: on return).
//     Point-to-point staging buffers are reused once their call completes
//     (up to 16 of up to 16 MiB); collectives allocate theirs per call.
//     A basic element moves with its extent, so the pair types
//     (MPI_DOUBLE_INT, ...) carry their padding, as they do contiguously.
//   - Collectives: a type whose basic elements are all of one kind moves as
//     that Go element type (a vector of MPI_DOUBLE as float64s), so the
//     runtime checks element types and counts across members, and
//     predefined operations reduce it; any other type moves as its packed
//     bytes (and only user operations reduce it: the C function sees the
//     items in the type's layout). Send and receive types may differ where
//     they move the same number of elements of one kind (a column vector
//     gathered into rows).
//   - MPI_Get_count divides the bytes received by the type's packed size
//     (MPI_UNDEFINED when not whole); MPI_Get_elements walks the signature.
//     MPI_Pack/Unpack use the same packed form, MPI_Pack_size is exact.
//   - Type signatures are not checked in point-to-point calls: the runtime
//     matches and moves bytes, so a receive whose type signature differs
//     from the send's is only caught when the byte counts disagree
//     (MPI_ERR_TRUNCATE when the message is longer than the receive;
//     MPI_Get_count MPI_UNDEFINED when it is not whole). Carrying a
//     signature hash in the descriptor (NEXT.md 1.6) needs mpiapi, the
//     descriptor and the scheduler's match to take it.
//   - An uncommitted type is refused (MPI_ERR_TYPE) by every call that
//     moves data or packs; a freed one by every call.
//
// # Errors
//
// Each communicator has an error handler: MPI_ERRORS_ARE_FATAL (the default;
// BCS_ERRORS=return makes MPI_ERRORS_RETURN the default), MPI_ERRORS_RETURN
// or MPI_ERRORS_ABORT (treated as fatal); new communicators inherit it. Errors
// found by mpiapi keep their class (mapped to the standard's number by name)
// and message; the fatal handlers flush the program's stdio, print
// "bcsmpi: rank R: MPI_Send: MPI_ERR_RANK: dest = 99, want 0..1 or
// MPI_PROC_NULL (MPI_ERRORS_ARE_FATAL: aborting the job)" and exit 1, and
// bcsrun aborts the job. Errors with no communicator use the world's handler.
// mpiapi's own handler is kept at ErrorsReturn.
//
// # One-process communicators and the singleton
//
// A program started without bcsrun (no BCS_SHM_FD) runs as a singleton: its
// world, like MPI_COMM_SELF in every job, is a local communicator whose
// collectives are copies and whose messages (a process sending to itself)
// are matched here (local.go) without the runtime. A receive or probe there
// that nothing can match is reported as a deadlock (MPI_ERR_OTHER) rather
// than hanging.
//
// # Go inside a C process
//
//   - GOMAXPROCS is set to 1 at MPI_Init unless the environment sets it.
//   - Signal handlers the program installed without SA_ONSTACK are
//     re-installed with it at MPI_Init and MPI_Finalize (the Go runtime
//     needs its alternate stack).
//   - A pthread_atfork child hook marks the library unusable: a forked child
//     that calls MPI gets MPI_ERR_OTHER and a message, never the Go runtime
//     (which the child does not have). The shim's fast paths still answer.
//   - Threads: MPI_Init_thread provides at most MPI_THREAD_FUNNELED and says
//     so; nothing here is safe for concurrent calls.
//   - The library is never unloaded (dlclose of a Go library is not
//     supported).
//
// Measured on the 2-vCPU development machine (bench/cabi/callcost.c): a call
// the shim serves costs 1-30 ns (MPI_Comm_rank of the world 1.2 ns, Wtime
// 28 ns), a call into Go about 70 ns (MPI_Comm_rank of a duplicate), and a
// send to MPI_PROC_NULL through mpiapi about 280 ns.
//
// # Implemented (172 functions, each as MPI_ and PMPI_)
//
//   - Environment: Init, Init_thread, Initialized, Finalized, Finalize,
//     Query_thread, Is_thread_main, Abort, Get_version, Get_library_version,
//     Abi_get_version, Get_processor_name, Wtime, Wtick, Error_string,
//     Error_class, Pcontrol.
//   - Communicators and groups: Comm_rank, Comm_size, Comm_dup, Comm_split,
//     Comm_create, Comm_split_type (MPI_COMM_TYPE_SHARED: the ranks of one
//     logical node), Comm_free, Comm_compare, Comm_group, Comm_get_attr (the
//     predefined attributes), Comm_set_name, Comm_get_name,
//     Group_size/rank/incl/excl/translate_ranks/compare/union/intersection/
//     difference/free.
//   - Error handlers: Comm_set_errhandler, Comm_get_errhandler,
//     Comm_create_errhandler (C functions, called through a shim
//     trampoline), Comm_call_errhandler, Errhandler_free.
//   - Datatypes (datatype.go): Type_contiguous, Type_vector,
//     Type_create_hvector, Type_indexed, Type_create_hindexed,
//     Type_create_indexed_block, Type_create_hindexed_block,
//     Type_create_struct, Type_create_subarray, Type_create_darray,
//     Type_create_resized, Type_dup and their _c forms, Type_commit, Type_free,
//     Type_get_true_extent(_c, _x), Type_get_extent_c/_x, Type_size_x,
//     Type_get_envelope(_c), Type_get_contents(_c), Type_set_name, Pack,
//     Unpack, Pack_size (and _c), Get_count_c, Get_elements_c/_x,
//     Status_set_elements(_c, _x);
//     Type_size, Type_size_c, Type_get_extent,
//     Type_get_name, Get_count, Get_elements, Get_address, Aint_add, Aint_diff.
//   - Point-to-point: Send, Recv, Isend, Irecv, Sendrecv, Sendrecv_replace,
//     Rsend and Irsend (standard sends, which the standard allows), Bsend,
//     Ibsend, Buffer_attach, Buffer_detach (bsend.go), Probe,
//     Iprobe, Send_init, Recv_init, Start, Startall; Wait, Waitall, Waitany,
//     Waitsome, Test, Testall, Testany, Testsome, Request_free.
//   - Collectives, blocking and non-blocking (I...): Barrier, Bcast, Reduce,
//     Allreduce, Scan, Exscan, Reduce_scatter, Reduce_scatter_block, Gather,
//     Scatter, Allgather, Alltoall, Gatherv, Scatterv, Allgatherv, Alltoallv,
//     with MPI_IN_PLACE where the standard allows it; Op_create (C user
//     functions: mpiapi folds in rank order and calls them through the shim),
//     Op_free, Op_commutative.
//   - Cartesian topologies: Dims_create, Cart_create (ranks keep their order),
//     Cart_get, Cartdim_get, Cart_coords, Cart_rank, Cart_shift, Cart_sub,
//     Topo_test.
//
// # Not yet
//
//   - Datatypes: the Fortran (MPI_Type_create_f90_*) and external32 pack
//     forms, point-to-point type signature checks (see Datatypes). Complex,
//     long double and the Fortran pair types move in every call but have no
//     predefined reductions. A receive freed with MPI_Request_free while
//     active is never unpacked from its staging buffer.
//   - Ssend/Issend (mpiapi's small sends complete when exchanged, not when
//     matched), Cancel, Mprobe and
//     matched receives, attributes with user keyvals, other split types,
//     graph topologies, Info, intercommunicators, one-sided, I/O, sessions,
//     the large-count _c variants (but those of the datatype calls), and the stubs for the
//     other functions of the ABI (so a program calling one fails to link
//     rather than failing at run time).
//   - A failed Waitall or Testall returns the first error's class, not
//     MPI_ERR_IN_STATUS with per-request errors. Testany, Waitsome and
//     Testsome are composed of Test and Waitany, which the MMDS records.
//     MPI_Request_free'd requests that are still running are waited for in
//     MPI_Finalize.
//   - A fatal error found in this package (a bad handle) exits without the
//     MMDS dump that mpiapi's own fatal path makes.
//   - prctl(PR_SET_PTRACER) is not called: under bcsrun the agent is an
//     ancestor of every rank.
package main
