package main

/*
#include "shim.h"
*/
import "C"

import (
	"unsafe"

	"github.com/bcsmpi/bcsmpi/mpiapi"
)

// Collectives on a communicator of the runtime go to mpiapi's generic
// collectives with the datatype's Go element type; on a local
// communicator (one process) they are copies.

func collComm(call string, h C.uintptr_t) (int, *mpiapi.Comm, C.int) {
	if rc := enter(call); rc != 0 {
		return -1, nil, rc
	}
	ci, rc := comm(call, uintptr(h))
	if rc != 0 {
		return -1, nil, rc
	}
	return ci, comms[ci].c, 0
}

func checkRoot(ci int, call string, c *mpiapi.Comm, root C.int) C.int {
	size := 1
	if c != nil {
		size = c.Size()
	}
	if root < 0 || int(root) >= size {
		return fail(ci, call, errRoot, "root = %d, want 0..%d", int(root), size-1)
	}
	return 0
}

func count(ci int, call, what string, n C.int) C.int {
	if n < 0 {
		return fail(ci, call, errCount, "%s = %d, want >= 0", what, int(n))
	}
	return 0
}

// nonNull refuses a NULL buffer that must hold n > 0 elements.
func nonNull(ci int, call, what string, p unsafe.Pointer, n int) C.int {
	if p == nil && n > 0 {
		return fail(ci, call, errBuffer, "%s = NULL with count = %d", what, n)
	}
	return 0
}

//export bcs_barrier
func bcs_barrier(h C.uintptr_t) C.int {
	ci, c, rc := collComm("MPI_Barrier", h)
	if rc != 0 || c == nil {
		return rc
	}
	return failErr(ci, mpiapi.Barrier(c))
}

//export bcs_bcast
func bcs_bcast(buf unsafe.Pointer, n C.int, dt C.uintptr_t, root C.int, h C.uintptr_t) C.int {
	const call = "MPI_Bcast"
	ci, c, rc := collComm(call, h)
	if rc != 0 {
		return rc
	}
	t, rc := datatype(ci, call, "datatype", uintptr(dt))
	if rc != 0 {
		return rc
	}
	if rc := count(ci, call, "count", n); rc != 0 {
		return rc
	}
	if rc := checkRoot(ci, call, c, root); rc != 0 {
		return rc
	}
	if rc := nonNull(ci, call, "buffer", buf, int(n)); rc != 0 {
		return rc
	}
	if c == nil {
		return 0
	}
	k, rc := collectiveOf(ci, call, t)
	if rc != 0 {
		return rc
	}
	return failErr(ci, k.bcast(c, buf, int(n), int(root)))
}

func reduce(call string, send, recv unsafe.Pointer, n C.int, dt, op C.uintptr_t, root C.int, h C.uintptr_t, all bool) C.int {
	ci, c, rc := collComm(call, h)
	if rc != 0 {
		return rc
	}
	t, rc := datatype(ci, call, "datatype", uintptr(dt))
	if rc != 0 {
		return rc
	}
	if rc := count(ci, call, "count", n); rc != 0 {
		return rc
	}
	o, ok := ops[uintptr(op)]
	if !ok {
		return fail(ci, call, errOp, "op = %s is not a predefined operation (MPI_SUM, MPI_MAX, ..., MPI_MAXLOC); user operations are not implemented yet", describe(uintptr(op)))
	}
	isRoot := all
	if !all {
		if rc := checkRoot(ci, call, c, root); rc != 0 {
			return rc
		}
		isRoot = c == nil || c.Rank() == int(root)
	}
	if uintptr(send) == hInPlace {
		if !isRoot {
			return fail(ci, call, errBuffer, "sendbuf = MPI_IN_PLACE is only allowed at the root")
		}
		send = recv
	}
	if rc := nonNull(ci, call, "sendbuf", send, int(n)); rc != 0 {
		return rc
	}
	if isRoot {
		if rc := nonNull(ci, call, "recvbuf", recv, int(n)); rc != 0 {
			return rc
		}
	} else {
		recv = nil
	}
	k, rc := collectiveOf(ci, call, t)
	if rc != 0 {
		return rc
	}
	if c == nil {
		pair := t.kind >= C.BCS_F32I
		if loc := o == mpiapi.Minloc || o == mpiapi.Maxloc; loc != pair {
			return fail(ci, call, errOp, "%s does not apply to %s", o, t.name)
		}
		copy(unsafe.Slice((*byte)(recv), int(n)*t.extent), unsafe.Slice((*byte)(send), int(n)*t.extent))
		return 0
	}
	return failErr(ci, k.reduce(c, send, recv, int(n), o, int(root), all))
}

//export bcs_reduce
func bcs_reduce(send, recv unsafe.Pointer, n C.int, dt, op C.uintptr_t, root C.int, h C.uintptr_t) C.int {
	return reduce("MPI_Reduce", send, recv, n, dt, op, root, h, false)
}

//export bcs_allreduce
func bcs_allreduce(send, recv unsafe.Pointer, n C.int, dt, op C.uintptr_t, h C.uintptr_t) C.int {
	return reduce("MPI_Allreduce", send, recv, n, dt, op, 0, h, true)
}

var blockCalls = [...]string{C.BCS_GATHER: "MPI_Gather", C.BCS_SCATTER: "MPI_Scatter", C.BCS_ALLGATHER: "MPI_Allgather", C.BCS_ALLTOALL: "MPI_Alltoall"}

// bcs_blocks is Gather, Scatter, Allgather and Alltoall: blocks of n
// elements, one per member. mpiapi needs one element type on both sides, so
// the send and receive types must have the same element kind and the counts
// must be equal where both sides are significant.
//
//export bcs_blocks
func bcs_blocks(which C.int, send unsafe.Pointer, scount C.int, stype C.uintptr_t,
	recv unsafe.Pointer, rcount C.int, rtype C.uintptr_t, root C.int, h C.uintptr_t) C.int {
	call := blockCalls[which]
	ci, c, rc := collComm(call, h)
	if rc != 0 {
		return rc
	}
	size, rank := 1, 0
	if c != nil {
		size, rank = c.Size(), c.Rank()
	}
	rooted := which == C.BCS_GATHER || which == C.BCS_SCATTER
	if rooted {
		if rc := checkRoot(ci, call, c, root); rc != 0 {
			return rc
		}
	}
	isRoot := !rooted || rank == int(root)
	// Which sides are significant here, and which one is in place.
	sendUsed := which != C.BCS_SCATTER || isRoot
	recvUsed := which != C.BCS_GATHER || isRoot
	sendInPlace, recvInPlace := uintptr(send) == hInPlace, uintptr(recv) == hInPlace
	switch {
	case recvInPlace && !(which == C.BCS_SCATTER && isRoot):
		return fail(ci, call, errBuffer, "recvbuf = MPI_IN_PLACE is only allowed at the root of MPI_Scatter")
	case sendInPlace && !(isRoot && which != C.BCS_SCATTER):
		return fail(ci, call, errBuffer, "sendbuf = MPI_IN_PLACE is only allowed at the root of MPI_Gather and in MPI_Allgather and MPI_Alltoall")
	}
	var st, rt dtype
	if sendUsed && !sendInPlace {
		if st, rc = datatype(ci, call, "sendtype", uintptr(stype)); rc != 0 {
			return rc
		}
		if rc := count(ci, call, "sendcount", scount); rc != 0 {
			return rc
		}
	}
	if recvUsed && !recvInPlace {
		if rt, rc = datatype(ci, call, "recvtype", uintptr(rtype)); rc != 0 {
			return rc
		}
		if rc := count(ci, call, "recvcount", rcount); rc != 0 {
			return rc
		}
	}
	// t and n: the element type and the block length of this member's call.
	t, n := st, int(scount)
	switch {
	case sendInPlace || !sendUsed:
		t, n = rt, int(rcount)
	case recvUsed && !recvInPlace:
		if kinds[st.kind] != kinds[rt.kind] || st.kind == C.BCS_NONE {
			return fail(ci, call, errType, "sendtype %s and recvtype %s differ; bcsmpi needs the same predefined element type on both sides for now", st.name, rt.name)
		}
		if scount != rcount {
			return fail(ci, call, errCount, "sendcount = %d and recvcount = %d differ; bcsmpi needs equal counts for now", int(scount), int(rcount))
		}
	}
	block := n * t.extent
	sendLen, recvLen := n, n
	switch which {
	case C.BCS_GATHER, C.BCS_ALLGATHER:
		recvLen = size * n
		if sendInPlace {
			send = unsafe.Add(recv, rank*block)
		}
	case C.BCS_SCATTER:
		sendLen = size * n
		if recvInPlace {
			recv = unsafe.Add(send, rank*block)
		}
	case C.BCS_ALLTOALL:
		sendLen, recvLen = size*n, size*n
		if sendInPlace {
			send = recv
		}
	}
	if !sendUsed {
		send = nil
	} else if rc := nonNull(ci, call, "sendbuf", send, sendLen); rc != 0 {
		return rc
	}
	if !recvUsed {
		recv = nil
	} else if rc := nonNull(ci, call, "recvbuf", recv, recvLen); rc != 0 {
		return rc
	}
	k, rc := collectiveOf(ci, call, t)
	if rc != 0 {
		return rc
	}
	if c == nil { // one member: its block goes from send to recv
		if send != recv {
			copy(unsafe.Slice((*byte)(recv), block), unsafe.Slice((*byte)(send), block))
		}
		return 0
	}
	return failErr(ci, k.blocks(int(which), c, send, recv, sendLen, recvLen, int(root)))
}
