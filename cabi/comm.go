package main

/*
#include "shim.h"
*/
import "C"

import (
	"unsafe"

	"github.com/bcsmpi/bcsmpi/mpiapi"
)

//export bcs_comm_rank
func bcs_comm_rank(h C.uintptr_t, rank *C.int) C.int {
	const call = "MPI_Comm_rank"
	ci, rc := enterComm(call, uintptr(h))
	if rc != 0 {
		return rc
	}
	*rank = C.int(commRank(ci))
	return 0
}

//export bcs_comm_size
func bcs_comm_size(h C.uintptr_t, size *C.int) C.int {
	const call = "MPI_Comm_size"
	ci, rc := enterComm(call, uintptr(h))
	if rc != 0 {
		return rc
	}
	*size = 1
	if ic := comms[ci].inter; ic != nil {
		*size = C.int(len(ic.lranks))
	} else if c := comms[ci].c; c != nil {
		*size = C.int(c.Size())
	}
	return 0
}

//export bcs_comm_dup
func bcs_comm_dup(h C.uintptr_t, out *C.uintptr_t) C.int {
	return commDup("MPI_Comm_dup", h, hInfoNull, out)
}

// bcs_comm_dup_with_info is MPI_Comm_dup_with_info: the hints are checked
// and used by none (bcs_comm_set_info), so the new communicator's hints in
// use are empty and the parent's are untouched.
//
//export bcs_comm_dup_with_info
func bcs_comm_dup_with_info(h, info C.uintptr_t, out *C.uintptr_t) C.int {
	return commDup("MPI_Comm_dup_with_info", h, uintptr(info), out)
}

// The arguments a Dup may get wrong on one member alone (a NULL newcomm or
// request, a freed info) are checked (and the error raised) before the
// duplicate, but the member still takes its duplicate, without copying
// attributes, and releases it on this rank (discardDup, Request.Discard)
// before it returns the error: a member returning early
// would leave its count of the parent's local duplicates one behind the
// others', and its next duplicate would take the id the others gave this
// one, crossing messages on two communicators silently (mpiapi, "Local
// duplicates"). The others' duplicate then has a member that never uses
// it, as when an attribute copy callback fails on one rank.
func dupArgs(call string, ci int, info uintptr, out unsafe.Pointer, outName string) C.int {
	if out == nil {
		return fail(ci, call, errArg, "%s = NULL", outName)
	}
	if info == hInfoNull || info == hInfoEnv {
		return 0
	}
	kind, i, gen := splitHandle(info)
	if kind == kindInfo && i < len(infos) {
		if e := &infos[i]; e.live && e.gen == gen {
			return 0
		}
		return fail(ci, call, errInfo, "info = 0x%x was freed with MPI_Info_free", info)
	}
	return fail(ci, call, errInfo, "info = %s is not an info object", describe(info))
}

func commDup(call string, h C.uintptr_t, info uintptr, out *C.uintptr_t) C.int {
	ci, rc := enterComm(call, uintptr(h))
	if rc != 0 {
		return rc
	}
	argRC := dupArgs(call, ci, info, unsafe.Pointer(out), "newcomm") // raised now, returned once the duplicate is taken and dropped
	e := comms[ci]
	var nc *mpiapi.Comm
	var nh uintptr
	if e.inter != nil {
		if nh, rc = interDup(ci); rc != 0 { // inter.go
			setOut(out, hCommNull)
			return rc
		}
	} else if e.c != nil {
		var err error
		if nc, err = e.c.Dup(); err != nil {
			setOut(out, hCommNull) // refused (proto.CommsMax): no communicator
			return failErr(ci, err)
		}
	}
	if nh == 0 {
		nh = newComm(nc, e.errh)
	}
	if argRC != 0 {
		discardDup(nh)
		setOut(out, hCommNull)
		return argRC
	}
	if rc := copyAttrs(call, ci, nh); rc != 0 { // attr.go
		discardDup(nh)
		*out = hCommNull
		return rc
	}
	_, i, _ := splitHandle(nh) // a duplicate keeps the topology
	if t := carts[ci]; t != nil {
		carts[i] = t
	}
	if g := graphs[ci]; g != nil { // graph.go
		graphs[i] = g
	}
	*out = C.uintptr_t(nh)
	return 0
}

// setOut writes v to *out unless out is NULL.
func setOut(out *C.uintptr_t, v uintptr) {
	if out != nil {
		*out = C.uintptr_t(v)
	}
}

// discardDup releases a duplicate whose attributes could not be copied (a
// copy callback failed on this rank): the attributes already copied to it
// are dropped without their delete callbacks (the program never saw the
// duplicate, so it never held them), and the communicator is released on
// this rank only (the callback may have failed here alone, and a collective
// free would wait for members that succeeded).
func discardDup(nh uintptr) {
	_, i, _ := splitHandle(nh)
	delete(attrs, nh)
	if ic := comms[i].inter; ic != nil {
		for _, j := range []int{ic.local, ic.coll, ic.union} {
			if c := comms[j].c; c != nil {
				c.Forget()
			}
			freeComm(j)
		}
	} else if c := comms[i].c; c != nil {
		c.Forget()
	}
	freeComm(i)
}

//export bcs_comm_split
func bcs_comm_split(h C.uintptr_t, color, key C.int, out *C.uintptr_t) C.int {
	const call = "MPI_Comm_split"
	ci, rc := enterComm(call, uintptr(h))
	if rc != 0 {
		return rc
	}
	e := comms[ci]
	if e.inter != nil {
		return interSplit(ci, color, key, out) // inter.go
	}
	if e.c == nil { // a local communicator: the only member keeps or drops out
		if color != C.MPI_UNDEFINED && color < 0 {
			return fail(ci, call, errArg, "color = %d, want >= 0 or MPI_UNDEFINED", int(color))
		}
		*out = hCommNull
		if color != C.MPI_UNDEFINED {
			*out = C.uintptr_t(newComm(nil, e.errh))
		}
		return 0
	}
	nc, err := e.c.Split(int(color), int(key))
	if err != nil {
		*out = hCommNull // refused (proto.CommsMax): no communicator
		return failErr(ci, err)
	}
	*out = hCommNull
	if nc != nil {
		*out = C.uintptr_t(newComm(nc, e.errh))
	}
	return 0
}

//export bcs_comm_free
func bcs_comm_free(h *C.uintptr_t) C.int {
	const call = "MPI_Comm_free"
	ci, rc := enterComm(call, uintptr(*h))
	if rc != 0 {
		return rc
	}
	if ci < 2 {
		return fail(ci, call, errComm, "comm = %s is predefined and cannot be freed", describe(uintptr(*h)))
	}
	if rc := deleteAttrs(call, ci); rc != 0 { // attr.go
		return rc
	}
	if comms[ci].inter != nil {
		if rc := interFree(ci); rc != 0 { // inter.go
			return rc
		}
	} else if c := comms[ci].c; c != nil {
		if err := c.Free(); err != nil {
			return failErr(ci, err)
		}
	}
	localDrop(ci)
	forgetTopology(ci)
	delete(commNames, ci)
	freeComm(ci)
	*h = hCommNull
	return 0
}

//export bcs_comm_compare
func bcs_comm_compare(h1, h2 C.uintptr_t, result *C.int) C.int {
	const call = "MPI_Comm_compare"
	a, rc := enterComm(call, uintptr(h1))
	if rc != 0 {
		return rc
	}
	b, rc := comm(call, uintptr(h2))
	if rc != 0 {
		return rc
	}
	ca, cb := comms[a].c, comms[b].c
	ia, ib := comms[a].inter, comms[b].inter
	switch {
	case a == b:
		*result = C.MPI_IDENT
	case ia != nil || ib != nil:
		*result = interCompare(ia, ib)
	case ca == nil && cb == nil:
		*result = C.MPI_CONGRUENT // both hold just this process
	case ca == nil || cb == nil: // one holds just this process: the other must too
		*result = C.MPI_UNEQUAL
		if (ca != nil && ca.Size() == 1) || (cb != nil && cb.Size() == 1) {
			*result = C.MPI_CONGRUENT
		}
	default:
		*result = C.MPI_IDENT + C.int(mpiapi.Compare(ca, cb))
	}
	return 0
}

//export bcs_comm_set_errhandler
func bcs_comm_set_errhandler(h, eh C.uintptr_t) C.int {
	const call = "MPI_Comm_set_errhandler"
	ci, rc := enterComm(call, uintptr(h))
	if rc != 0 {
		return rc
	}
	if !validErrhandler(uintptr(eh)) {
		return fail(ci, call, errArg, "errhandler = %s, want MPI_ERRORS_ARE_FATAL, MPI_ERRORS_RETURN, MPI_ERRORS_ABORT or one from MPI_Comm_create_errhandler", describe(uintptr(eh)))
	}
	comms[ci].errh = uintptr(eh)
	return 0
}

//export bcs_comm_get_errhandler
func bcs_comm_get_errhandler(h C.uintptr_t, eh *C.uintptr_t) C.int {
	const call = "MPI_Comm_get_errhandler"
	ci, rc := enterComm(call, uintptr(h))
	if rc != 0 {
		return rc
	}
	*eh = C.uintptr_t(comms[ci].errh)
	return 0
}

// Communicator names (MPI_Comm_set_name, MPI_Comm_get_name), by slot.
var commNames = map[int]string{}

func commName(ci int) string {
	if n, ok := commNames[ci]; ok {
		return n
	}
	switch ci {
	case 0:
		return "MPI_COMM_WORLD"
	case 1:
		return "MPI_COMM_SELF"
	}
	return ""
}

//export bcs_comm_set_name
func bcs_comm_set_name(h C.uintptr_t, name *C.char) C.int {
	const call = "MPI_Comm_set_name"
	ci, rc := enterComm(call, uintptr(h))
	if rc != 0 {
		return rc
	}
	if name == nil {
		return fail(ci, call, errArg, "comm_name = NULL")
	}
	n := C.GoString(name)
	if len(n) > C.MPI_MAX_OBJECT_NAME-1 {
		n = n[:C.MPI_MAX_OBJECT_NAME-1]
	}
	commNames[ci] = n
	return 0
}

//export bcs_comm_get_name
func bcs_comm_get_name(h C.uintptr_t, out *C.char, resultlen *C.int) C.int {
	const call = "MPI_Comm_get_name"
	ci, rc := enterComm(call, uintptr(h))
	if rc != 0 {
		return rc
	}
	n := commName(ci)
	b := unsafe.Slice((*byte)(unsafe.Pointer(out)), len(n)+1)
	copy(b, n)
	b[len(n)] = 0
	*resultlen = C.int(len(n))
	return 0
}
