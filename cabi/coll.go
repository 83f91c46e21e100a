package main

/*
#include "shim.h"
*/
import "C"

import (
	"errors"
	"unsafe"

	"github.com/bcsmpi/bcsmpi/mpiapi"
)

// Collectives on a communicator of the runtime go to mpiapi's byte-level
// core as bytes of the runtime element type of the datatype's kind
// (types.go); on a local communicator (one process) they are copies. Each entry serves the
// blocking call and, when out is not nil, the non-blocking one.
//
// Each entry checks its arguments in items of the caller's datatypes, then
// lowers them to the element space of the runtime (lower): counts and
// displacements become elements of one kind, and the buffer of a
// non-contiguous datatype becomes a pack buffer that mirrors the caller's
// items packed (item i at i * wire bytes), packed before the call where it
// is read and unpacked, block by block, when the call completes where it is
// written. The send and receive types may differ (a column vector sent, a
// row received) as long as they move elements of one kind and the counts
// in elements agree.

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

// collName names a collective by its variant: blocking or non-blocking
// (nb), persistent (mode has C.BCS_PERSIST: MPI_X_init), large-count
// (C.BCS_LARGE: MPI_X_c). The names are made once (collVariants).
func collName(which int, nb bool, mode C.int) string {
	v := int(mode & (C.BCS_LARGE | C.BCS_PERSIST))
	if nb && mode&C.BCS_PERSIST == 0 {
		v |= 4
	}
	return collVariants[which][v]
}

var collVariants = func() (t [C.BCS_NCOLLS][8]string) {
	for w, n := range collNames {
		for v := range 8 {
			name := n[0]
			switch {
			case v&C.BCS_PERSIST != 0:
				name += "_init"
			case v&4 != 0:
				name = n[1]
			}
			if v&C.BCS_LARGE != 0 {
				name += "_c"
			}
			t[w][v] = name
		}
	}
	return t
}()

// collCall is one collective call being checked.
type collCall struct {
	name       string
	mode       C.int // C.BCS_LARGE, C.BCS_PERSIST, C.BCS_RUN
	ci         int
	errCI      int  // the slot whose error handler takes the errors: ci, or an intercommunicator's (wcoll)
	renamed    bool // run for another call (an intercommunicator's, wcoll): mpiapi's errors get its name
	size, rank int
	a          collArgs
	out        *C.uintptr_t
	post       []func() // unpacks of packed receive buffers, run at completion
}

func newCollCall(which C.int, h C.uintptr_t, out *C.uintptr_t, mode C.int) (*collCall, C.int) {
	persist := mode&C.BCS_PERSIST != 0
	k := &collCall{name: collName(int(which), out != nil, mode), out: out, size: 1, mode: mode}
	k.a.which, k.a.nb = int(which), out != nil || persist
	if rc := enter(k.name); rc != 0 {
		return nil, rc
	}
	ci, rc := comm(k.name, uintptr(h))
	if rc != 0 {
		return nil, rc
	}
	k.ci, k.errCI, k.a.c = ci, ci, comms[ci].c
	if comms[ci].inter != nil {
		return nil, k.fail(errUnsupported, "%s on an intercommunicator is not implemented by bcsmpi", k.name)
	}
	if k.a.c != nil {
		k.size, k.rank = k.a.c.Size(), k.a.c.Rank()
	}
	return k, 0
}

func (k *collCall) fail(class int, format string, a ...any) C.int {
	return fail(k.errCI, k.name, class, format, a...)
}

// failErr raises an error of mpiapi; a renamed call's names the user's call.
func (k *collCall) failErr(err error) C.int {
	var e *mpiapi.Error
	if k.renamed && errors.As(err, &e) {
		c := *e
		c.Call = k.name
		err = &c
	}
	return failErr(k.errCI, err)
}

func (k *collCall) root(root C.int) C.int {
	if root < 0 || int(root) >= k.size {
		return k.fail(errRoot, "root = %d, want 0..%d", int(root), k.size-1)
	}
	k.a.root = int(root)
	return 0
}

func (k *collCall) count(what string, n C.MPI_Count) C.int {
	if n < 0 {
		return k.fail(errCount, "%s = %d, want >= 0", what, int64(n))
	}
	if int64(n) > maxTypeBytes {
		return k.fail(errCount, "%s = %d, want at most %d (bcsmpi's bound on the items of one call)", what, int64(n), int64(maxTypeBytes))
	}
	return 0
}

// fits refuses n items of t (what names the count) whose bytes or span
// exceed bcsmpi's bound (countBytes), so that no element count, offset or
// pack buffer size of the call overflows.
func (k *collCall) fits(what string, n int, t dtype) C.int {
	if _, e := t.info.countBytes(what, int64(n)); e != nil {
		return k.fail(e.class, "%s", e.msg)
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
	return datatype(k.errCI, k.name, what, uintptr(h))
}

// ints reads size counts or displacements from C (ints, or MPI_Count and
// MPI_Aint in the large-count forms); counts must be >= 0.
func (k *collCall) ints(what string, p unsafe.Pointer, counts bool) ([]int, C.int) {
	if p == nil {
		return nil, k.fail(errArg, "%s = NULL", what)
	}
	out := make([]int, k.size)
	for i := range out {
		v := k.at(p, i)
		if v > maxTypeBytes {
			return nil, k.fail(errCount, "%s[%d] = %d, want at most %d (bcsmpi's bound on the items of one call)", what, i, v, int64(maxTypeBytes))
		}
		if v < 0 {
			if counts {
				return nil, k.fail(errCount, "%s[%d] = %d, want >= 0", what, i, v)
			}
			return nil, k.fail(errArg, "%s[%d] = %d, want >= 0 (bcsmpi takes no negative displacements yet)", what, i, v)
		}
		out[i] = int(v)
	}
	return out, 0
}

// at reads entry i of a C array of counts or displacements: an int, or in
// the large-count forms an MPI_Count or MPI_Aint (both 64 bits).
func (k *collCall) at(p unsafe.Pointer, i int) int64 {
	if k.mode&C.BCS_LARGE != 0 {
		return *(*int64)(unsafe.Add(p, 8*i))
	}
	return int64(*(*C.int)(unsafe.Add(p, 4*i)))
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

// sameKind checks that the send and receive types move elements of one kind.
func (k *collCall) sameKind(st, rt dtype) C.int {
	if st.kind != rt.kind {
		return k.fail(errType, "sendtype %s and recvtype %s have different type signatures (bcsmpi needs their basic elements to be of one type, or both to be moved as bytes)", st.name, rt.name)
	}
	return 0
}

// item is a run of n items of a buffer starting at item first.
type item struct{ first, n int }

// lower lowers a buffer of span items of t at p to the element space of the
// runtime: p itself (at its true lower bound) when t is contiguous, else a
// pack buffer; the runs of in are packed now, those of out unpacked at
// completion. A NULL p stays NULL unless t is a derived type with absolute
// displacements (MPI_BOTTOM).
func (k *collCall) lower(p unsafe.Pointer, t dtype, span int, in, out []item) unsafe.Pointer {
	if t.info == nil || span == 0 || p == nil && !t.bottom() {
		return p
	}
	if t.pairs {
		return k.lowerPairs(p, t, span, in, out)
	}
	if t.info.contig {
		return unsafe.Add(p, t.info.trueLB)
	}
	wire := int(t.info.wire)
	buf := make([]uint64, (span*wire+7)/8) // 8-aligned for the runtime's element types
	if len(buf) == 0 {
		return p
	}
	b := unsafe.Slice((*byte)(unsafe.Pointer(&buf[0])), span*wire)
	for _, r := range in {
		t.info.pack(b[r.first*wire:(r.first+r.n)*wire], at(p, r.first, t.extent), r.n)
	}
	if out != nil {
		k.post = append(k.post, func() {
			for _, r := range out {
				t.info.unpack(at(p, r.first, t.extent), b[r.first*wire:(r.first+r.n)*wire], r.n)
			}
		})
	}
	return unsafe.Pointer(&buf[0])
}

// lowerPairs is lower for a reduction with MPI_MINLOC or MPI_MAXLOC of a
// pair type's view (pairs.go): the buffer of the predefined pair type is
// the caller's (its layout is the runtime's); that of a derived type is a
// pack buffer of its items' pairs in the runtime's layout, expanded from
// their packed form now (in) and compressed and unpacked at completion
// (out).
func (k *collCall) lowerPairs(p unsafe.Pointer, t dtype, span int, in, out []item) unsafe.Pointer {
	if t.info.predefined() {
		return p
	}
	e := sigOfKind[t.kind]
	wire, gs := int(t.info.wire), t.per*e.Size()
	g := aligned(span * gs)
	if len(g) == 0 {
		return p
	}
	for _, r := range in {
		packed := make([]byte, r.n*wire)
		t.info.pack(packed, at(p, r.first, t.extent), r.n)
		expandPairs(e, g[r.first*gs:(r.first+r.n)*gs], packed)
	}
	if out != nil {
		k.post = append(k.post, func() {
			for _, r := range out {
				packed := make([]byte, r.n*wire)
				compressPairs(e, packed, g[r.first*gs:(r.first+r.n)*gs])
				t.info.unpack(at(p, r.first, t.extent), packed, r.n)
			}
		})
	}
	return unsafe.Pointer(unsafe.SliceData(g))
}

// whole is the one run of a buffer of n items.
func whole(n int) []item { return []item{{0, n}} }

// when is r if b, else nil.
func when(b bool, r []item) []item {
	if b {
		return r
	}
	return nil
}

// runsOf lists the runs of a (counts, displs) buffer.
func runsOf(counts, displs []int) []item {
	r := make([]item, 0, len(counts))
	for i, c := range counts {
		if c > 0 {
			r = append(r, item{displs[i], c})
		}
	}
	return r
}

func scaled(xs []int, per int) []int {
	if xs == nil {
		return nil
	}
	out := make([]int, len(xs))
	for i, x := range xs {
		out[i] = x * per
	}
	return out
}

// finish runs the unpacks of a completed call.
func (k *collCall) finish() {
	for _, f := range k.post {
		f()
	}
}

// start runs the checked call, lowered to elements of kind: through
// mpiapi's byte-level core on a communicator of the runtime (collArgs.run),
// or as local, the copies of a one-process communicator.
func (k *collCall) start(kind int, local func()) C.int {
	if k.mode&C.BCS_PERSIST != 0 && k.out == nil {
		return 0 // MPI_X_init: checked; persist.go makes the request
	}
	if k.a.which != C.BCS_BARRIER {
		k.a.t, k.a.es = sigOfKind[kind], int(kindSize[kind])
	}
	if k.a.c == nil {
		if local != nil {
			local()
		}
		k.finish()
		if k.out != nil {
			*k.out = C.uintptr_t(newReq(nil, &localReq{ci: k.ci, done: true, source: mpiapi.AnySource, rtag: mpiapi.AnyTag}, k.ci))
		}
		return 0
	}
	var r *mpiapi.Request
	var err error
	if k.a.which == C.BCS_BARRIER {
		if k.a.nb {
			r, err = mpiapi.Ibarrier(k.a.c)
		} else {
			err = mpiapi.Barrier(k.a.c)
		}
	} else {
		r, err = k.a.run()
	}
	if err != nil {
		return k.failErr(err)
	}
	if k.out != nil {
		*k.out = C.uintptr_t(newReq(r, nil, k.ci))
		if len(k.post) > 0 {
			setUnpack(*k.out, func(int) { k.finish() })
		}
	} else {
		k.finish()
	}
	return 0
}

// copyElems copies n elements of es bytes from src to dst (a no-op in place).
func copyElems(dst, src unsafe.Pointer, n, es int) {
	if dst != src && n > 0 {
		copy(unsafe.Slice((*byte)(dst), n*es), unsafe.Slice((*byte)(src), n*es))
	}
}

// at is item (or element) i of a buffer of es-byte items.
func at(p unsafe.Pointer, i, es int) unsafe.Pointer { return unsafe.Add(p, i*es) }

//export bcs_barrier
func bcs_barrier(h C.uintptr_t, out *C.uintptr_t, mode C.int) C.int {
	if isInit(mode) {
		return persistColl(C.BCS_BARRIER, h, out, mode, func(o *C.uintptr_t, m C.int) C.int { return bcs_barrier(h, o, m) })
	}
	if ci, ic := interOf(h); ic != nil {
		return interBarrier(ci, ic, out, mode) // inter.go
	}
	k, rc := newCollCall(C.BCS_BARRIER, h, out, mode)
	if rc != 0 {
		return rc
	}
	return k.start(C.BCS_NONE, nil)
}

//export bcs_bcast
func bcs_bcast(buf unsafe.Pointer, n C.MPI_Count, dt C.uintptr_t, root C.int, h C.uintptr_t, out *C.uintptr_t, mode C.int) C.int {
	if isInit(mode) {
		return persistColl(C.BCS_BCAST, h, out, mode, func(o *C.uintptr_t, m C.int) C.int { return bcs_bcast(buf, n, dt, root, h, o, m) })
	}
	if ci, ic := interOf(h); ic != nil {
		return interBcast(ci, ic, buf, n, dt, root, out, mode)
	}
	k, rc := newCollCall(C.BCS_BCAST, h, out, mode)
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
	if rc := k.fits("count", int(n), t); rc != 0 {
		return rc
	}
	if rc := k.root(root); rc != 0 {
		return rc
	}
	isRoot := k.rank == int(root)
	p := k.lower(buf, t, int(n), when(isRoot, whole(int(n))), when(!isRoot, whole(int(n))))
	if rc := k.nonNull("buffer", p, int(n)); rc != 0 {
		return rc
	}
	k.a.send, k.a.sendLen = p, int(n)*t.per
	return k.start(t.kind, nil)
}

// bcs_reduce is Reduce, Allreduce, Scan, Exscan, Reduce_scatter_block (n is
// the count of each member's block) and Reduce_scatter (counts).
//
//export bcs_reduce
func bcs_reduce(which C.int, send, recv unsafe.Pointer, n C.MPI_Count, counts unsafe.Pointer, dt, op C.uintptr_t, root C.int, h C.uintptr_t, out *C.uintptr_t, mode C.int) C.int {
	if isInit(mode) {
		return persistColl(which, h, out, mode, func(o *C.uintptr_t, m C.int) C.int {
			return bcs_reduce(which, send, recv, n, counts, dt, op, root, h, o, m)
		})
	}
	if ci, ic := interOf(h); ic != nil {
		return interReduce(ci, ic, which, send, recv, n, counts, dt, op, root, out, mode) // inter.go
	}
	k, rc := newCollCall(which, h, out, mode)
	if rc != 0 {
		return rc
	}
	t, rc := k.datatype("datatype", dt)
	if rc != 0 {
		return rc
	}
	if isLoc(uintptr(op)) { // pairs reduce in the runtime's layout (pairs.go)
		if v, ok := t.pairView(); ok {
			t = v
		}
	}
	o, rc := resolveOp(k.errCI, k.name, uintptr(op), t, mode&C.BCS_RUN != 0 && out != nil) // a start, not the init's checks
	if rc != 0 {
		return rc
	}
	k.a.op = o
	isRoot := true
	sendLen, recvLen := int(n), int(n) // items
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
		k.a.counts = scaled(k.a.counts, t.per)
	}
	if which != C.BCS_REDUCE_SCATTER {
		if rc := k.count("count", n); rc != 0 {
			return rc
		}
	}
	if rc := k.fits("count", max(sendLen, recvLen), t); rc != 0 {
		return rc
	}
	inPlace := uintptr(send) == hInPlace
	if inPlace && !isRoot {
		return k.fail(errBuffer, "sendbuf = MPI_IN_PLACE is only allowed at the root")
	}
	if !isRoot {
		recv = nil
	} else if uintptr(recv) == hInPlace {
		return k.fail(errBuffer, "recvbuf = MPI_IN_PLACE is not allowed")
	}
	if !inPlace && isRoot {
		if rc := k.aliased(send, t, whole(sendLen), recv, t, whole(recvLen)); rc != 0 {
			return rc
		}
	}
	// Exscan leaves member 0's recvbuf alone.
	recvWritten := isRoot && (which != C.BCS_EXSCAN || k.rank > 0)
	var sp, rp unsafe.Pointer
	recvOut := when(recvWritten, whole(recvLen))
	switch {
	case inPlace && (which == C.BCS_REDUCE_SCATTER || which == C.BCS_REDUCE_SCATTER_BLOCK):
		// the whole vector is in recvbuf; the result is its first block
		sp = k.lower(recv, t, sendLen, whole(sendLen), recvOut)
		rp = sp
	case inPlace:
		rp = k.lower(recv, t, recvLen, whole(recvLen), recvOut)
		sp = rp
	default:
		if isRoot {
			rp = k.lower(recv, t, recvLen, nil, recvOut)
		}
		sp = k.lower(send, t, sendLen, whole(sendLen), nil)
	}
	if rc := k.nonNull("sendbuf", sp, sendLen); rc != 0 {
		return rc
	}
	if recvWritten {
		if rc := k.nonNull("recvbuf", rp, recvLen); rc != 0 {
			return rc
		}
	}
	es := int(kindSize[t.kind])
	k.a.send, k.a.recv, k.a.sendLen, k.a.recvLen = sp, rp, sendLen*t.per, recvLen*t.per
	return k.start(t.kind, func() {
		if which != C.BCS_EXSCAN {
			copyElems(rp, sp, recvLen*t.per, es)
		}
	})
}

// blockKind is the element kind and the per-member block length in elements
// of a collective whose members send blocks of scount items of st and
// receive blocks of rcount items of rt (where significant).
func (k *collCall) blockKind(st, rt dtype, scount, rcount int, sendSig, recvSig bool) (kind, n int, rc C.int) {
	switch {
	case sendSig && recvSig:
		if rc := k.sameKind(st, rt); rc != 0 {
			return 0, 0, rc
		}
		if scount*st.per != rcount*rt.per {
			return 0, 0, k.fail(errCount, "sendcount = %d of %s and recvcount = %d of %s are %d and %d basic elements; bcsmpi needs them equal", scount, st.name, rcount, rt.name, scount*st.per, rcount*rt.per)
		}
		return st.kind, scount * st.per, 0
	case sendSig:
		return st.kind, scount * st.per, 0
	}
	return rt.kind, rcount * rt.per, 0
}

// bcs_blocks is Gather, Scatter, Allgather and Alltoall: blocks of n
// elements, one per member. mpiapi needs one element type on both sides, so
// the send and receive types must move elements of one kind and the counts
// in elements must be equal where both sides are significant.
//
//export bcs_blocks
func bcs_blocks(which C.int, send unsafe.Pointer, scount C.MPI_Count, stype C.uintptr_t,
	recv unsafe.Pointer, rcount C.MPI_Count, rtype C.uintptr_t, root C.int, h C.uintptr_t, out *C.uintptr_t, mode C.int) C.int {
	if isInit(mode) {
		return persistColl(which, h, out, mode, func(o *C.uintptr_t, m C.int) C.int {
			return bcs_blocks(which, send, scount, stype, recv, rcount, rtype, root, h, o, m)
		})
	}
	if ci, ic := interOf(h); ic != nil {
		return interBlocks(ci, ic, which, send, scount, stype, recv, rcount, rtype, root, out, mode) // inter.go
	}
	k, rc := newCollCall(which, h, out, mode)
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
	sendSig, recvSig := sendUsed && !sendInPlace, recvUsed && !recvInPlace
	if sendSig {
		if st, rc = k.datatype("sendtype", stype); rc != 0 {
			return rc
		}
		if rc := k.count("sendcount", scount); rc != 0 {
			return rc
		}
		if rc := k.fits("sendcount times the group size", k.size*int(scount), st); rc != 0 {
			return rc
		}
	}
	if recvSig {
		if rt, rc = k.datatype("recvtype", rtype); rc != 0 {
			return rc
		}
		if rc := k.count("recvcount", rcount); rc != 0 {
			return rc
		}
		if rc := k.fits("recvcount times the group size", k.size*int(rcount), rt); rc != 0 {
			return rc
		}
	}
	kind, n, rc := k.blockKind(st, rt, int(scount), int(rcount), sendSig, recvSig)
	if rc != 0 {
		return rc
	}
	es, P := int(kindSize[kind]), k.size
	ns, nr := int(scount), int(rcount) // items
	if sendSig && recvSig {
		sr, rr := whole(ns), whole(P*nr)
		switch which {
		case C.BCS_SCATTER:
			sr, rr = whole(P*ns), whole(nr)
		case C.BCS_ALLTOALL:
			sr = whole(P * ns)
		}
		if rc := k.aliased(send, st, sr, recv, rt, rr); rc != 0 {
			return rc
		}
	}
	var sp, rp unsafe.Pointer
	sendLen, recvLen := n, n
	switch which {
	case C.BCS_GATHER, C.BCS_ALLGATHER:
		recvLen = P * n
		if recvUsed {
			rp = k.lower(recv, rt, P*nr, when(sendInPlace, whole(P*nr)), whole(P*nr))
		}
		if sendInPlace {
			sp = at(rp, k.rank*n, es)
		} else {
			sp = k.lower(send, st, ns, whole(ns), nil)
		}
	case C.BCS_SCATTER:
		sendLen = P * n
		if sendUsed {
			sp = k.lower(send, st, P*ns, whole(P*ns), nil)
		}
		if recvInPlace {
			rp = at(sp, k.rank*n, es)
		} else {
			rp = k.lower(recv, rt, nr, nil, whole(nr))
		}
	case C.BCS_ALLTOALL:
		sendLen, recvLen = P*n, P*n
		rp = k.lower(recv, rt, P*nr, when(sendInPlace, whole(P*nr)), whole(P*nr))
		if sendInPlace {
			sp = rp
		} else {
			sp = k.lower(send, st, P*ns, whole(P*ns), nil)
		}
	}
	if rc := k.buffers(&sp, &rp, sendLen, recvLen, sendUsed, recvUsed); rc != 0 {
		return rc
	}
	return k.start(kind, func() { copyElems(rp, sp, n, es) })
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
func bcs_vblocks(which C.int, send unsafe.Pointer, scount C.MPI_Count, scounts, sdispls unsafe.Pointer, stype C.uintptr_t,
	recv unsafe.Pointer, rcount C.MPI_Count, rcounts, rdispls unsafe.Pointer, rtype C.uintptr_t, root C.int, h C.uintptr_t, out *C.uintptr_t, mode C.int) C.int {
	if isInit(mode) {
		return persistColl(which, h, out, mode, func(o *C.uintptr_t, m C.int) C.int {
			return bcs_vblocks(which, send, scount, scounts, sdispls, stype, recv, rcount, rcounts, rdispls, rtype, root, h, o, m)
		})
	}
	if ci, ic := interOf(h); ic != nil {
		return interV(ci, ic, which, send, scount, scounts, sdispls, stype, recv, rcount, rcounts, rdispls, rtype, root, out, mode) // internb.go
	}
	k, rc := newCollCall(which, h, out, mode)
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
	// In items of the caller's types: the single counts, the v-counts and
	// displacements, the spans.
	var sc, sd, rc_, rd []int
	sendSpan, recvSpan := int(scount), int(rcount)
	sendSig, recvSig := sendUsed && !sendInPlace, recvUsed && !recvInPlace
	if sendSig {
		if st, rc = k.datatype("sendtype", stype); rc != 0 {
			return rc
		}
		if sendV {
			if sc, rc = k.ints("sendcounts", scounts, true); rc != 0 {
				return rc
			}
			if sd, rc = k.ints("sdispls", sdispls, false); rc != 0 {
				return rc
			}
			sendSpan = span(sc, sd)
		} else if rc := k.count("sendcount", scount); rc != 0 {
			return rc
		}
		if rc := k.fits("sendcount (the span of sendcounts and sdispls)", sendSpan, st); rc != 0 {
			return rc
		}
	}
	if recvSig {
		if rt, rc = k.datatype("recvtype", rtype); rc != 0 {
			return rc
		}
		if recvV {
			if rc_, rc = k.ints("recvcounts", rcounts, true); rc != 0 {
				return rc
			}
			if rd, rc = k.ints("rdispls", rdispls, false); rc != 0 {
				return rc
			}
			recvSpan = span(rc_, rd)
		} else if rc := k.count("recvcount", rcount); rc != 0 {
			return rc
		}
		if rc := k.fits("recvcount (the span of recvcounts and rdispls)", recvSpan, rt); rc != 0 {
			return rc
		}
	}
	var kind int
	switch {
	case sendSig && recvSig:
		if rc := k.sameKind(st, rt); rc != 0 {
			return rc
		}
		kind = st.kind
	case sendSig:
		kind = st.kind
	default:
		kind = rt.kind
	}
	if sendSig && recvSig {
		sr, rr := whole(sendSpan), whole(recvSpan)
		if sendV {
			sr = runsOf(sc, sd)
		}
		if recvV {
			rr = runsOf(rc_, rd)
		}
		if rc := k.aliased(send, st, sr, recv, rt, rr); rc != 0 {
			return rc
		}
	}
	es := int(kindSize[kind])
	var sp, rp unsafe.Pointer
	var sendLen, recvLen int // elements
	switch which {
	case C.BCS_GATHERV, C.BCS_ALLGATHERV:
		if recvUsed {
			rp = k.lower(recv, rt, recvSpan, when(sendInPlace, runsOf(rc_, rd)), runsOf(rc_, rd))
			k.a.counts, k.a.displs, recvLen = scaled(rc_, rt.per), scaled(rd, rt.per), recvSpan*rt.per
		}
		if sendInPlace {
			sp, sendLen = at(rp, k.a.displs[k.rank], es), k.a.counts[k.rank]
		} else {
			sp, sendLen = k.lower(send, st, sendSpan, whole(sendSpan), nil), sendSpan*st.per
		}
	case C.BCS_SCATTERV:
		if sendUsed { // mpiapi's Scatterv takes the send side's counts
			sp = k.lower(send, st, sendSpan, runsOf(sc, sd), nil)
			k.a.counts, k.a.displs, sendLen = scaled(sc, st.per), scaled(sd, st.per), sendSpan*st.per
		}
		if recvInPlace {
			rp, recvLen = at(sp, k.a.displs[k.rank], es), k.a.counts[k.rank]
		} else {
			rp, recvLen = k.lower(recv, rt, recvSpan, nil, whole(recvSpan)), recvSpan*rt.per
		}
	case C.BCS_ALLTOALLV:
		rp = k.lower(recv, rt, recvSpan, when(sendInPlace, runsOf(rc_, rd)), runsOf(rc_, rd))
		k.a.counts, k.a.displs, recvLen = scaled(rc_, rt.per), scaled(rd, rt.per), recvSpan*rt.per
		if sendInPlace { // mpiapi has no in-place Alltoallv: send from a copy
			k.a.scounts, k.a.sdispls, sendLen = k.a.counts, k.a.displs, recvLen
			cp := make([]uint64, (recvLen*es+7)/8)
			if len(cp) > 0 {
				copy(unsafe.Slice((*byte)(unsafe.Pointer(&cp[0])), recvLen*es), unsafe.Slice((*byte)(rp), recvLen*es))
				sp = unsafe.Pointer(&cp[0])
			}
		} else {
			sp = k.lower(send, st, sendSpan, runsOf(sc, sd), nil)
			k.a.scounts, k.a.sdispls, sendLen = scaled(sc, st.per), scaled(sd, st.per), sendSpan*st.per
		}
	}
	if rc := k.buffers(&sp, &rp, sendLen, recvLen, sendUsed, recvUsed); rc != 0 {
		return rc
	}
	return k.start(kind, func() {
		switch which {
		case C.BCS_GATHERV, C.BCS_ALLGATHERV:
			copyElems(at(rp, k.a.displs[0], es), sp, min(sendLen, k.a.counts[0]), es)
		case C.BCS_SCATTERV:
			copyElems(rp, at(sp, k.a.displs[0], es), min(recvLen, k.a.counts[0]), es)
		case C.BCS_ALLTOALLV:
			copyElems(at(rp, k.a.displs[0], es), at(sp, k.a.sdispls[0], es), min(k.a.scounts[0], k.a.counts[0]), es)
		}
	})
}
