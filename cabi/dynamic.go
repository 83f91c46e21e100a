package main

/*
#include "shim.h"
*/
import "C"

// Dynamic processes (shim_dynamic.c). A bcsrun job's processes are fixed
// at launch: no process has a parent, and none can be spawned, connected
// or joined. MPI_Comm_get_parent answers MPI_COMM_NULL; the spawn, port,
// name-service and join calls fail through the error handler of their
// communicator (of MPI_COMM_WORLD when they have none) with the class the
// standard gives that failure, and say why.

const (
	errName    = 38 // MPI_ERR_NAME
	errPort    = 43 // MPI_ERR_PORT
	errService = 51 // MPI_ERR_SERVICE
	errSpawn   = 53 // MPI_ERR_SPAWN
)

// bcs_dynamic raises call's failure: which is 0 spawn, 1 port, 2 name
// lookup, 3 publish/unpublish, 4 join.
//
//export bcs_dynamic
func bcs_dynamic(commH C.uintptr_t, call *C.char, which C.int) C.int {
	name := C.GoString(call)
	if rc := enter(name); rc != 0 {
		return rc
	}
	ci := 0
	if commH != 0 {
		var rc C.int
		if ci, rc = comm(name, uintptr(commH)); rc != 0 {
			return rc
		}
	}
	class, what := errSpawn, "processes cannot be spawned"
	switch which {
	case 1:
		class, what = errPort, "there are no ports to open, accept on or connect to"
	case 2:
		class, what = errName, "there is no name service, so no name is published"
	case 3:
		class, what = errService, "there is no name service to publish in"
	case 4:
		class, what = errUnsupported, "processes cannot join over a socket"
	}
	return fail(ci, name, class, "bcsmpi does not support dynamic processes: a bcsrun job's processes are fixed at launch, so %s", what)
}

//export bcs_comm_get_parent
func bcs_comm_get_parent(parent *C.uintptr_t) C.int {
	const call = "MPI_Comm_get_parent"
	if rc := enter(call); rc != 0 {
		return rc
	}
	if parent == nil {
		return fail(0, call, errArg, "parent = NULL")
	}
	*parent = hCommNull // no bcsrun process was spawned
	return 0
}

// bcs_comm_disconnect is MPI_Comm_disconnect: on the communicators bcsmpi
// has (none is connected to another job) a collective free.
//
//export bcs_comm_disconnect
func bcs_comm_disconnect(h *C.uintptr_t) C.int {
	const call = "MPI_Comm_disconnect"
	if h == nil {
		return fail(0, call, errArg, "comm = NULL")
	}
	if uintptr(*h) == hCommWorld || uintptr(*h) == hCommSelf {
		ci, _ := comm(call, uintptr(*h))
		return fail(ci, call, errComm, "comm = %s is predefined and cannot be disconnected", describe(uintptr(*h)))
	}
	return bcs_comm_free(h)
}

// bcs_spawn_root reports whether the caller is rank root of communicator
// h (0 when h is not a live communicator: the call's own check raises
// that); it raises nothing.
//
//export bcs_spawn_root
func bcs_spawn_root(h C.uintptr_t, root C.int) C.int {
	i := -1
	switch uintptr(h) {
	case hCommWorld:
		i = 0
	case hCommSelf:
		i = 1
	default:
		if kind, j, gen := splitHandle(uintptr(h)); kind == kindComm && j < len(comms) && comms[j].live && comms[j].gen == gen {
			i = j
		}
	}
	if i >= 0 && i < len(comms) && commRank(i) == int(root) {
		return 1
	}
	return 0
}
