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
// collectives with the datatype's Go element type (types.go); on a local
// communicator (one process) they are copies. Each entry serves the
// blocking call and, when out is not nil, the non-blocking one.

var collNames = [C.BCS_NCOLLS][2]string{
	C.BCS_BARRIER: {"MPI_Barrier", "MPI_Ibarrier"}, C.BCS_BCAST: {"MPI_Bcast", "MPI_Ibcast"},
	C.BCS_REDUCE: {"MPI_Reduce", "MPI_Ireduce"}, C.BCS_ALLREDUCE: {"MPI_Allreduce", "MPI_Iallreduce"},
	C.BCS_SCAN: {"MPI_Scan", "MPI_Iscan"}, C.BCS_EXSCAN: {"MPI_Exscan", "MPI_Iexscan"},
	C.BCS_REDUCE_SCATTER:       {"MPI_Reduce_scatter", "MPI_Ireduce_scatter"},
	C.BCS_REDUCE_SCATTER_BLOCK: {"MPI_Reduce_scatter_block", "MPI_Ireduce_scatter_block"},
	C.BCS_GATHER:               {"MPI_Gather", "MPI_Igather"}, C.BCS_SCATTER: {"MPI_Scatter", "MPI_Iscatter"},
	C.BCS_ALLGATHER: {"MPI_Allgather", "MPI_Iallgather"}, C.BCS_ALLTOALL: {"MPI_Alltoall", "MPI_Ialltoall"},
	C.BCS_GATHERV: {"MPI_Gatherv", "MPI_Igatherv"}, C.BCS_SCATTERV: {"MPI_Scatterv", "MPI_Iscatterv"},
	C.BCS_ALLGATHERV: {"MPI_Allgatherv", "MPI_Iallgatherv"}, C.BCS_ALLTOALLV: {"MPI_Alltoallv", "MPI_Ialltoallv"},
}

// collCall is one collective call being checked.
type collCall struct {
	name       string
	ci         int
	size, rank int
	a          collArgs
	out        *C.uintptr_t
}

func newCollCall(which C.int, h C.uintptr_t, out *C.uintptr_t) (*collCall, C.int) {
	nb := 0
	if out != nil {
		nb = 1
	}
	k := &collCall{name: collNames[which][nb], out: out, size: 1}
	k.a.which, k.a.nb = int(which), out != nil
	if rc := enter(k.name); rc != 0 {
		return nil, rc
	}
	ci, rc := comm(k.name, uintptr(h))
	if rc != 0 {
		return nil, rc
	}
	k.ci, k.a.c = ci, comms[ci].c
	if k.a.c != nil {
		k.size, k.rank = k.a.c.Size(), k.a.c.Rank()
	}
	return k, 0
}

func (k *collCall) fail(class int, format string, a ...any) C.int {
	return fail(k.ci, k.name, class, format, a...)
}

func (k *collCall) root(root C.int) C.int {
	if root < 0 || int(root) >= k.size {
		return k.fail(errRoot, "root = %d, want 0..%d", int(root), k.size-1)
	}
	k.a.root = int(root)
	return 0
}

func (k *collCall) count(what string, n C.int) C.int {
	if n < 0 {
		return k.fail(errCount, "%s = %d, want >= 0", what, int(n))
	}
	return 0
}

// nonNull refuses a NULL buffer that must hold n > 0 elements.
func (k *collCall) nonNull(what string, p unsafe.Pointer, n int) C.int {
	if p == nil && n > 0 {
		return k.fail(errBuffer, "%s = NULL with count = %d", what, n)
	}
	return 0
}

func (k *collCall) datatype(what string, h C.uintptr_t) (dtype, C.int) {
	return datatype(k.ci, k.name, what, uintptr(h))
}

// ints reads size counts or displacements from C; counts must be >= 0.
func (k *collCall) ints(what string, p *C.int, counts bool) ([]int, C.int) {
	if p == nil {
		return nil, k.fail(errArg, "%s = NULL", what)
	}
	out := make([]int, k.size)
	for i, v := range unsafe.Slice(p, k.size) {
		if v < 0 {
			if counts {
				return nil, k.fail(errCount, "%s[%d] = %d, want >= 0", what, i, int(v))
			}
			return nil, k.fail(errArg, "%s[%d] = %d, want >= 0 (bcsmpi takes no negative displacements yet)", what, i, int(v))
		}
		out[i] = int(v)
	}
	return out, 0
}

// span is the elements a (counts, displs) buffer covers.
func span(counts, displs []int) int {
	n := 0
	for i, c := range counts {
		if c > 0 {
			n = max(n, displs[i]+c)
		}
	}
	return n
}

// sameKind checks that the send and receive types are one element type.
func (k *collCall) sameKind(st, rt dtype) C.int {
	if kinds[st.kind] != kinds[rt.kind] || st.kind == C.BCS_NONE {
		return k.fail(errType, "sendtype %s and recvtype %s differ; bcsmpi needs the same predefined element type on both sides for now", st.name, rt.name)
	}
	return 0
}

// start runs the checked call: through the element type's collectives on a
// communicator of the runtime, or as local, the copies of a one-process
// communicator.
func (k *collCall) start(t dtype, local func()) C.int {
	var impl collective
	if k.a.which != C.BCS_BARRIER {
		var rc C.int
		if impl, rc = collectiveOf(k.ci, k.name, t); rc != 0 {
			return rc
		}
	}
	if k.a.c == nil {
		if local != nil {
			local()
		}
		if k.out != nil {
			*k.out = C.uintptr_t(newReq(nil, &localReq{ci: k.ci, done: true, source: mpiapi.AnySource, rtag: mpiapi.AnyTag}, k.ci))
		}
		return 0
	}
	var r *mpiapi.Request
	var err error
	if impl == nil {
		if k.a.nb {
			r, err = mpiapi.Ibarrier(k.a.c)
		} else {
			err = mpiapi.Barrier(k.a.c)
		}
	} else {
		r, err = impl.run(&k.a)
	}
	if err != nil {
		return failErr(k.ci, err)
	}
	if k.out != nil {
		*k.out = C.uintptr_t(newReq(r, nil, k.ci))
	}
	return 0
}

// copyElems copies n elements of t from src to dst (a no-op in place).
func copyElems(dst, src unsafe.Pointer, n int, t dtype) {
	if dst != src && n > 0 {
		copy(unsafe.Slice((*byte)(dst), n*t.extent), unsafe.Slice((*byte)(src), n*t.extent))
	}
}

func at(p unsafe.Pointer, i int, t dtype) unsafe.Pointer { return unsafe.Add(p, i*t.extent) }

//export bcs_barrier
func bcs_barrier(h C.uintptr_t, out *C.uintptr_t) C.int {
	k, rc := newCollCall(C.BCS_BARRIER, h, out)
	if rc != 0 {
		return rc
	}
	return k.start(dtype{}, nil)
}

//export bcs_bcast
func bcs_bcast(buf unsafe.Pointer, n C.int, dt C.uintptr_t, root C.int, h C.uintptr_t, out *C.uintptr_t) C.int {
	k, rc := newCollCall(C.BCS_BCAST, h, out)
	if rc != 0 {
		return rc
	}
	t, rc := k.datatype("datatype", dt)
	if rc != 0 {
		return rc
	}
	if rc := k.count("count", n); rc != 0 {
		return rc
	}
	if rc := k.root(root); rc != 0 {
		return rc
	}
	if rc := k.nonNull("buffer", buf, int(n)); rc != 0 {
		return rc
	}
	k.a.send, k.a.sendLen = buf, int(n)
	return k.start(t, nil)
}

// bcs_reduce is Reduce, Allreduce, Scan, Exscan, Reduce_scatter_block (n is
// the count of each member's block) and Reduce_scatter (counts).
//
//export bcs_reduce
func bcs_reduce(which C.int, send, recv unsafe.Pointer, n C.int, counts *C.int, dt, op C.uintptr_t, root C.int, h C.uintptr_t, out *C.uintptr_t) C.int {
	k, rc := newCollCall(which, h, out)
	if rc != 0 {
		return rc
	}
	t, rc := k.datatype("datatype", dt)
	if rc != 0 {
		return rc
	}
	o, rc := operation(k.ci, k.name, uintptr(op), t)
	if rc != 0 {
		return rc
	}
	k.a.op = o
	isRoot := true
	sendLen, recvLen := int(n), int(n)
	switch which {
	case C.BCS_REDUCE:
		if rc := k.root(root); rc != 0 {
			return rc
		}
		isRoot = k.rank == int(root)
	case C.BCS_REDUCE_SCATTER, C.BCS_REDUCE_SCATTER_BLOCK:
		if which == C.BCS_REDUCE_SCATTER {
			if k.a.counts, rc = k.ints("recvcounts", counts, true); rc != 0 {
				return rc
			}
		} else {
			if rc := k.count("recvcount", n); rc != 0 {
				return rc
			}
			k.a.counts = make([]int, k.size)
			for i := range k.a.counts {
				k.a.counts[i] = int(n)
			}
		}
		sendLen = 0
		for _, c := range k.a.counts {
			sendLen += c
		}
		recvLen = k.a.counts[k.rank]
	}
	if which != C.BCS_REDUCE_SCATTER {
		if rc := k.count("count", n); rc != 0 {
			return rc
		}
	}
	if uintptr(send) == hInPlace {
		if !isRoot {
			return k.fail(errBuffer, "sendbuf = MPI_IN_PLACE is only allowed at the root")
		}
		send = recv
	}
	if !isRoot {
		recv = nil
	} else if uintptr(recv) == hInPlace {
		return k.fail(errBuffer, "recvbuf = MPI_IN_PLACE is not allowed")
	}
	if rc := k.nonNull("sendbuf", send, sendLen); rc != 0 {
		return rc
	}
	if isRoot && (which != C.BCS_EXSCAN || k.rank > 0) { // Exscan leaves member 0's recvbuf alone
		if rc := k.nonNull("recvbuf", recv, recvLen); rc != 0 {
			return rc
		}
	}
	k.a.send, k.a.recv, k.a.sendLen, k.a.recvLen = send, recv, sendLen, recvLen
	return k.start(t, func() {
		if which != C.BCS_EXSCAN {
			copyElems(recv, send, recvLen, t)
		}
	})
}

// bcs_blocks is Gather, Scatter, Allgather and Alltoall: blocks of n
// elements, one per member. mpiapi needs one element type on both sides, so
// the send and receive types must have the same element kind and the counts
// must be equal where both sides are significant.
//
//export bcs_blocks
func bcs_blocks(which C.int, send unsafe.Pointer, scount C.int, stype C.uintptr_t,
	recv unsafe.Pointer, rcount C.int, rtype C.uintptr_t, root C.int, h C.uintptr_t, out *C.uintptr_t) C.int {
	k, rc := newCollCall(which, h, out)
	if rc != 0 {
		return rc
	}
	rooted := which == C.BCS_GATHER || which == C.BCS_SCATTER
	if rooted {
		if rc := k.root(root); rc != 0 {
			return rc
		}
	}
	isRoot := !rooted || k.rank == int(root)
	sendUsed := which != C.BCS_SCATTER || isRoot
	recvUsed := which != C.BCS_GATHER || isRoot
	sendInPlace, recvInPlace, rc := k.inPlace(send, recv, isRoot)
	if rc != 0 {
		return rc
	}
	var st, rt dtype
	if sendUsed && !sendInPlace {
		if st, rc = k.datatype("sendtype", stype); rc != 0 {
			return rc
		}
		if rc := k.count("sendcount", scount); rc != 0 {
			return rc
		}
	}
	if recvUsed && !recvInPlace {
		if rt, rc = k.datatype("recvtype", rtype); rc != 0 {
			return rc
		}
		if rc := k.count("recvcount", rcount); rc != 0 {
			return rc
		}
	}
	// t and n: the element type and the block length of this member's call.
	t, n := st, int(scount)
	switch {
	case sendInPlace || !sendUsed:
		t, n = rt, int(rcount)
	case recvUsed && !recvInPlace:
		if rc := k.sameKind(st, rt); rc != 0 {
			return rc
		}
		if scount != rcount {
			return k.fail(errCount, "sendcount = %d and recvcount = %d differ; bcsmpi needs equal counts for now", int(scount), int(rcount))
		}
	}
	sendLen, recvLen := n, n
	switch which {
	case C.BCS_GATHER, C.BCS_ALLGATHER:
		recvLen = k.size * n
		if sendInPlace {
			send = at(recv, k.rank*n, t)
		}
	case C.BCS_SCATTER:
		sendLen = k.size * n
		if recvInPlace {
			recv = at(send, k.rank*n, t)
		}
	case C.BCS_ALLTOALL:
		sendLen, recvLen = k.size*n, k.size*n
		if sendInPlace {
			send = recv
		}
	}
	if rc := k.buffers(&send, &recv, sendLen, recvLen, sendUsed, recvUsed); rc != 0 {
		return rc
	}
	return k.start(t, func() { copyElems(recv, send, n, t) })
}

// inPlace checks where MPI_IN_PLACE is given against where it is allowed.
func (k *collCall) inPlace(send, recv unsafe.Pointer, isRoot bool) (sendIn, recvIn bool, rc C.int) {
	sendIn, recvIn = uintptr(send) == hInPlace, uintptr(recv) == hInPlace
	scatter := k.a.which == C.BCS_SCATTER || k.a.which == C.BCS_SCATTERV
	switch {
	case recvIn && !(scatter && isRoot):
		return false, false, k.fail(errBuffer, "recvbuf = MPI_IN_PLACE is only allowed at the root of MPI_Scatter and MPI_Scatterv")
	case sendIn && (scatter || !isRoot):
		return false, false, k.fail(errBuffer, "sendbuf = MPI_IN_PLACE is only allowed at the root of a gather and in allgathers and all-to-alls")
	}
	return sendIn, recvIn, 0
}

// buffers checks the significant buffers and drops the others.
func (k *collCall) buffers(send, recv *unsafe.Pointer, sendLen, recvLen int, sendUsed, recvUsed bool) C.int {
	if !sendUsed {
		*send, sendLen = nil, 0
	} else if rc := k.nonNull("sendbuf", *send, sendLen); rc != 0 {
		return rc
	}
	if !recvUsed {
		*recv, recvLen = nil, 0
	} else if rc := k.nonNull("recvbuf", *recv, recvLen); rc != 0 {
		return rc
	}
	k.a.send, k.a.recv, k.a.sendLen, k.a.recvLen = *send, *recv, sendLen, recvLen
	return 0
}

// bcs_vblocks is Gatherv, Scatterv, Allgatherv and Alltoallv.
//
//export bcs_vblocks
func bcs_vblocks(which C.int, send unsafe.Pointer, scount C.int, scounts, sdispls *C.int, stype C.uintptr_t,
	recv unsafe.Pointer, rcount C.int, rcounts, rdispls *C.int, rtype C.uintptr_t, root C.int, h C.uintptr_t, out *C.uintptr_t) C.int {
	k, rc := newCollCall(which, h, out)
	if rc != 0 {
		return rc
	}
	rooted := which == C.BCS_GATHERV || which == C.BCS_SCATTERV
	if rooted {
		if rc := k.root(root); rc != 0 {
			return rc
		}
	}
	isRoot := !rooted || k.rank == int(root)
	sendUsed := which != C.BCS_SCATTERV || isRoot
	recvUsed := which != C.BCS_GATHERV || isRoot
	sendV := which == C.BCS_SCATTERV || which == C.BCS_ALLTOALLV // the send side has counts
	recvV := which != C.BCS_SCATTERV
	sendInPlace, recvInPlace, rc := k.inPlace(send, recv, isRoot)
	if rc != 0 {
		return rc
	}
	var st, rt dtype
	sendLen, recvLen := int(scount), int(rcount)
	if sendUsed && !sendInPlace {
		if st, rc = k.datatype("sendtype", stype); rc != 0 {
			return rc
		}
		if sendV {
			if k.a.scounts, rc = k.ints("sendcounts", scounts, true); rc != 0 {
				return rc
			}
			if k.a.sdispls, rc = k.ints("sdispls", sdispls, false); rc != 0 {
				return rc
			}
			sendLen = span(k.a.scounts, k.a.sdispls)
		} else if rc := k.count("sendcount", scount); rc != 0 {
			return rc
		}
	}
	if recvUsed && !recvInPlace {
		if rt, rc = k.datatype("recvtype", rtype); rc != 0 {
			return rc
		}
		if recvV {
			if k.a.counts, rc = k.ints("recvcounts", rcounts, true); rc != 0 {
				return rc
			}
			if k.a.displs, rc = k.ints("rdispls", rdispls, false); rc != 0 {
				return rc
			}
			recvLen = span(k.a.counts, k.a.displs)
		} else if rc := k.count("recvcount", rcount); rc != 0 {
			return rc
		}
	}
	t := st
	switch {
	case sendInPlace || !sendUsed:
		t = rt
	case recvUsed && !recvInPlace:
		if rc := k.sameKind(st, rt); rc != 0 {
			return rc
		}
	}
	switch which {
	case C.BCS_GATHERV, C.BCS_ALLGATHERV:
		if sendInPlace {
			send, sendLen = at(recv, k.a.displs[k.rank], t), k.a.counts[k.rank]
		}
	case C.BCS_SCATTERV:
		k.a.counts, k.a.displs = k.a.scounts, k.a.sdispls // mpiapi's Scatterv takes the send side's
		if recvInPlace {
			recv, recvLen = at(send, k.a.sdispls[k.rank], t), k.a.scounts[k.rank]
		}
	case C.BCS_ALLTOALLV:
		if sendInPlace { // mpiapi has no in-place Alltoallv: send from a copy
			k.a.scounts, k.a.sdispls, sendLen = k.a.counts, k.a.displs, recvLen
			cp := make([]byte, recvLen*t.extent)
			copy(cp, unsafe.Slice((*byte)(recv), len(cp)))
			if len(cp) > 0 {
				send = unsafe.Pointer(&cp[0])
			}
		}
	}
	if rc := k.buffers(&send, &recv, sendLen, recvLen, sendUsed, recvUsed); rc != 0 {
		return rc
	}
	return k.start(t, func() {
		switch which {
		case C.BCS_GATHERV, C.BCS_ALLGATHERV:
			copyElems(at(recv, k.a.displs[0], t), send, min(sendLen, k.a.counts[0]), t)
		case C.BCS_SCATTERV:
			copyElems(recv, at(send, k.a.sdispls[0], t), min(recvLen, k.a.scounts[0]), t)
		case C.BCS_ALLTOALLV:
			copyElems(at(recv, k.a.displs[0], t), at(send, k.a.sdispls[0], t), min(k.a.scounts[0], k.a.counts[0]), t)
		}
	})
}
