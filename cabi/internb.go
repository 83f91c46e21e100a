package main

/*
#include "shim.h"
*/
import "C"

import (
	"fmt"
	"unsafe"
)

// The intercommunicator collectives that are not composed of blocking steps
// (inter.go): the non-blocking and persistent forms of every collective,
// and the v-forms (Gatherv, Scatterv, Allgatherv, Alltoallv, Alltoallw) and
// Reduce_scatter(_block) in all their forms. Each is one Alltoallw over
// coll, the hidden duplicate of the union of both groups (wcoll.go):
// every member says what it sends to and receives from each member of the
// remote group, and nothing moves within a group (zero counts). No member
// needs an argument only another member knows (the root's group does not
// know which of its members is the root), the runtime progresses the
// exchange like any non-blocking collective of the union, and every member
// of both groups calls it, in the order they call the intercommunicator's
// collectives, as the standard requires. Non-blocking Barrier is
// MPI_Ibarrier of the union.
//
// The reductions gather the remote group's input vectors: the root
// (Reduce), every member (Allreduce) or every member's segment of every
// remote vector (Reduce_scatter, Reduce_scatter_block, which send whole
// vectors: a sender does not know the receivers' counts) arrive in a
// scratch buffer, and the caller reduces them locally, in the remote
// group's rank order (v0 op v1 op ... , so a non-commutative operation is
// applied as the standard says), when the request completes (or on return
// from a blocking call). This costs memory and messages proportional to the
// remote group's size, not the bandwidth-optimal trees of an
// intracommunicator.

// interInts reads n entries of a C array of counts or displacements: ints,
// or in the large-count forms MPI_Count or MPI_Aint.
func (k *interCall) interInts(what string, p unsafe.Pointer, n int, counts bool) ([]int64, C.int) {
	if n > 0 && p == nil {
		return nil, fail(k.ci, k.name, errArg, "%s = NULL", what)
	}
	v := make([]int64, n)
	for i := range v {
		if k.mode&C.BCS_LARGE != 0 {
			v[i] = *(*int64)(unsafe.Add(p, 8*i))
		} else {
			v[i] = int64(*(*C.int)(unsafe.Add(p, 4*i)))
		}
		if counts && v[i] < 0 {
			return nil, fail(k.ci, k.name, errCount, "%s[%d] = %d, want >= 0", what, i, v[i])
		}
	}
	return v, 0
}

// same is n copies of v.
func same(v int64, n int) []int64 {
	s := make([]int64, n)
	for i := range s {
		s[i] = v
	}
	return s
}

// steps is 0, v, 2v, ... (n entries): the displacements of n blocks of v items.
func steps(v int64, n int) []int64 {
	s := make([]int64, n)
	for i := range s {
		s[i] = int64(i) * v
	}
	return s
}

// exchange is the exchange over coll: sc[j] items of st at sd[j] (items)
// to remote rank j, rc[j] items of rt at rd[j] from remote rank j (nil:
// nothing that way). It runs as an Alltoallw (wcoll.go: packed and moved as
// bytes, so members whose sides move nothing need no matching types), with
// zero counts of MPI_BYTE within the group; a side that moves nothing does
// not look at its type, which need not be significant.
func (k *interCall) exchange(send unsafe.Pointer, st C.uintptr_t, sc, sd []int64, recv unsafe.Pointer, rt C.uintptr_t, rc, rd []int64) C.int {
	n := len(k.ic.lranks) + len(k.ic.rranks)
	usc, urc := make([]int64, n), make([]int64, n)
	usd, urd := make([]C.MPI_Aint, n), make([]C.MPI_Aint, n)
	ust, urt := make([]C.uintptr_t, n), make([]C.uintptr_t, n)
	for j := range n {
		ust[j], urt[j] = hByteType, hByteType
	}
	side := func(what string, t C.uintptr_t, c, d []int64, uc []int64, ud []C.MPI_Aint, ut []C.uintptr_t) C.int {
		moves := false
		for _, v := range c {
			moves = moves || v != 0
		}
		if !moves {
			return 0
		}
		dt, rc := k.typ(what, t)
		if rc != 0 {
			return rc
		}
		for j, v := range c {
			u := k.ic.roff + j
			uc[u], ud[u], ut[u] = v, C.MPI_Aint(d[j]*int64(dt.extent)), t
		}
		return 0
	}
	if rc := side("sendtype", st, sc, sd, usc, usd, ust); rc != 0 {
		return rc
	}
	if rc := side("recvtype", rt, rc, rd, urc, urd, urt); rc != 0 {
		return rc
	}
	if k.checkOnly() { // a persistent collective's init: the arguments and datatypes are good
		return 0
	}
	p := func(s []int64) unsafe.Pointer { return unsafe.Pointer(&s[0]) }
	return wcoll(k.name, k.ci, wAlltoallw, send, 0, p(usc), nil, &usd[0], 0, &ust[0], recv, 0, p(urc), nil, &urd[0], 0, &urt[0], k.union, k.out, C.BCS_LARGE)
}

const hByteType = 0x247 // MPI_BYTE

// nonBlocking reports whether the call is a non-blocking one (or a start of
// a persistent one), which runs as one exchange.
func (k *interCall) nonBlocking() bool { return k.out != nil }

// checkOnly reports whether the call only checks the arguments of a
// persistent collective's init.
func (k *interCall) checkOnly() bool { return k.out == nil && k.mode&C.BCS_RUN != 0 }

// noInPlace refuses MPI_IN_PLACE, which an intercommunicator collective
// does not take.
func (k *interCall) noInPlace(send, recv unsafe.Pointer) C.int {
	if uintptr(send) == hInPlace || uintptr(recv) == hInPlace {
		return fail(k.ci, k.name, errBuffer, "MPI_IN_PLACE is not allowed on an intercommunicator")
	}
	return 0
}

// blocksNB is Bcast (send = recv = buf), Gather, Scatter, Allgather and
// Alltoall as one exchange.
func (k *interCall) blocksNB(which C.int, send unsafe.Pointer, scount C.MPI_Count, stype C.uintptr_t,
	recv unsafe.Pointer, rcount C.MPI_Count, rtype C.uintptr_t, root C.int) C.int {
	rn := len(k.ic.rranks)
	sn, rcn := int64(scount), int64(rcount)
	switch which {
	case C.BCS_BCAST, C.BCS_GATHER, C.BCS_SCATTER:
		isRoot, idle, rc := k.rootRole(root)
		if rc != 0 {
			return rc
		}
		if idle {
			return k.exchange(nil, stype, nil, nil, nil, rtype, nil, nil)
		}
		from := func(n int64) ([]int64, []int64) { // n items from the remote root
			c := make([]int64, rn)
			c[root] = n
			return c, make([]int64, rn)
		}
		switch which {
		case C.BCS_BCAST:
			if isRoot {
				return k.exchange(send, stype, same(sn, rn), make([]int64, rn), nil, rtype, nil, nil)
			}
			c, d := from(rcn)
			return k.exchange(nil, stype, nil, nil, recv, rtype, c, d)
		case C.BCS_GATHER:
			if isRoot {
				return k.exchange(nil, stype, nil, nil, recv, rtype, same(rcn, rn), steps(rcn, rn))
			}
			c, d := from(sn)
			return k.exchange(send, stype, c, d, nil, rtype, nil, nil)
		default: // Scatter
			if isRoot {
				return k.exchange(send, stype, same(sn, rn), steps(sn, rn), nil, rtype, nil, nil)
			}
			c, d := from(rcn)
			return k.exchange(nil, stype, nil, nil, recv, rtype, c, d)
		}
	case C.BCS_ALLGATHER:
		return k.exchange(send, stype, same(sn, rn), make([]int64, rn), recv, rtype, same(rcn, rn), steps(rcn, rn))
	case C.BCS_ALLTOALL:
		return k.exchange(send, stype, same(sn, rn), steps(sn, rn), recv, rtype, same(rcn, rn), steps(rcn, rn))
	}
	return fail(k.ci, k.name, errUnsupported, "this collective on an intercommunicator is not implemented by bcsmpi")
}

// interV is Gatherv, Scatterv, Allgatherv and Alltoallv on intercommunicator
// slot ci, in every form: the counts and displacements name the remote
// group's members.
func interV(ci int, ic *interComm, which C.int, send unsafe.Pointer, scount C.MPI_Count, scounts, sdispls unsafe.Pointer, stype C.uintptr_t,
	recv unsafe.Pointer, rcount C.MPI_Count, rcounts, rdispls unsafe.Pointer, rtype C.uintptr_t, root C.int, out *C.uintptr_t, mode C.int) C.int {
	k, rc := newInterCall(ci, ic, collName(int(which), out != nil, mode), out, mode)
	if rc != 0 {
		return rc
	}
	if rc := k.noInPlace(send, recv); rc != 0 {
		return rc
	}
	rn := len(ic.rranks)
	counts := func(what string, p unsafe.Pointer, d bool) []int64 {
		if rc != 0 {
			return nil
		}
		var v []int64
		v, rc = k.interInts(what, p, rn, !d)
		return v
	}
	if scount < 0 || rcount < 0 {
		return fail(ci, k.name, errCount, "sendcount = %d, recvcount = %d, want >= 0", int64(scount), int64(rcount))
	}
	var sc, sd, rc_, rd []int64
	switch which {
	case C.BCS_GATHERV, C.BCS_SCATTERV:
		isRoot, idle, rc0 := k.rootRole(root)
		if rc0 != 0 {
			return rc0
		}
		switch {
		case idle:
		case isRoot && which == C.BCS_GATHERV:
			rc_, rd = counts("recvcounts", rcounts, false), counts("displs", rdispls, true)
		case isRoot:
			sc, sd = counts("sendcounts", scounts, false), counts("displs", sdispls, true)
		case which == C.BCS_GATHERV:
			sc, sd = make([]int64, rn), make([]int64, rn)
			sc[root] = int64(scount)
		default:
			rc_, rd = make([]int64, rn), make([]int64, rn)
			rc_[root] = int64(rcount)
		}
	case C.BCS_ALLGATHERV:
		sc, sd = same(int64(scount), rn), make([]int64, rn)
		rc_, rd = counts("recvcounts", rcounts, false), counts("displs", rdispls, true)
	case C.BCS_ALLTOALLV:
		sc, sd = counts("sendcounts", scounts, false), counts("sdispls", sdispls, true)
		rc_, rd = counts("recvcounts", rcounts, false), counts("rdispls", rdispls, true)
	}
	if rc != 0 {
		return rc
	}
	return k.exchange(send, stype, sc, sd, recv, rtype, rc_, rd)
}

// interW is MPI_Alltoallw on intercommunicator slot ci, in every form: one
// Alltoallw over coll, with zero counts (and MPI_BYTE) for the local group.
func interW(ci int, ic *interComm, name string, send unsafe.Pointer, scounts, sdispls unsafe.Pointer, sdisplsA *C.MPI_Aint, stypes *C.uintptr_t,
	recv unsafe.Pointer, rcounts, rdispls unsafe.Pointer, rdisplsA *C.MPI_Aint, rtypes *C.uintptr_t, out *C.uintptr_t, mode C.int) C.int {
	k, rc := newInterCall(ci, ic, name, out, mode)
	if rc != 0 {
		return rc
	}
	if rc := k.noInPlace(send, recv); rc != 0 {
		return rc
	}
	rn, n := len(ic.rranks), len(ic.lranks)+len(ic.rranks)
	if rn > 0 && (stypes == nil || rtypes == nil) {
		return fail(ci, name, errArg, "sendtypes or recvtypes = NULL")
	}
	var sc, rcs, sd, rd []int64
	for _, a := range []struct {
		what string
		p    unsafe.Pointer
		aint *C.MPI_Aint // the MPI_Aint displacements of the large-count form
		dst  *[]int64
		d    bool
	}{{"sendcounts", scounts, nil, &sc, false}, {"recvcounts", rcounts, nil, &rcs, false},
		{"sdispls", sdispls, sdisplsA, &sd, true}, {"rdispls", rdispls, rdisplsA, &rd, true}} {
		if a.aint != nil {
			*a.dst = make([]int64, rn)
			for j, v := range unsafe.Slice(a.aint, rn) {
				(*a.dst)[j] = int64(v)
			}
			continue
		}
		if *a.dst, rc = k.interInts(a.what, a.p, rn, !a.d); rc != 0 {
			return rc
		}
	}
	st, rt := unsafe.Slice(stypes, rn), unsafe.Slice(rtypes, rn)
	for j := range rn { // a persistent init checks them too, not only its starts
		if sc[j] != 0 {
			if _, rc := k.typ(fmt.Sprintf("sendtypes[%d]", j), st[j]); rc != 0 {
				return rc
			}
		}
		if rcs[j] != 0 {
			if _, rc := k.typ(fmt.Sprintf("recvtypes[%d]", j), rt[j]); rc != 0 {
				return rc
			}
		}
	}
	if k.checkOnly() {
		return 0
	}
	usc, urc := make([]int64, n), make([]int64, n)
	usd, urd := make([]C.MPI_Aint, n), make([]C.MPI_Aint, n)
	ust, urt := make([]C.uintptr_t, n), make([]C.uintptr_t, n)
	for j := range n {
		ust[j], urt[j] = hByteType, hByteType
	}
	for j := range rn {
		u := ic.roff + j
		usc[u], urc[u] = sc[j], rcs[j]
		usd[u], urd[u] = C.MPI_Aint(sd[j]), C.MPI_Aint(rd[j])
		ust[u], urt[u] = st[j], rt[j]
	}
	p := func(s []int64) unsafe.Pointer { return unsafe.Pointer(&s[0]) }
	return wcoll(k.name, k.ci, wAlltoallw, send, 0, p(usc), nil, &usd[0], 0, &ust[0], recv, 0, p(urc), nil, &urd[0], 0, &urt[0], k.union, out, mode|C.BCS_LARGE)
}

// reduceNB is Reduce, Allreduce, Reduce_scatter_block (n: each member's
// block) and Reduce_scatter (counts) on an intercommunicator as one
// exchange of whole input vectors and a local reduction (see the top of
// this file); blocking or not.
func (k *interCall) reduceNB(which C.int, send, recv unsafe.Pointer, n C.MPI_Count, counts unsafe.Pointer, dt, op C.uintptr_t, root C.int) C.int {
	t, rc := k.typ("datatype", dt)
	if rc != 0 {
		return rc
	}
	// A persistent collective's start may find its operation freed since
	// the init (allowed): resolveOp keeps it for the start.
	if _, rc := resolveOp(k.ci, k.name, uintptr(op), t, k.mode&C.BCS_RUN != 0 && k.out != nil); rc != 0 {
		return rc
	}
	if n < 0 {
		return fail(k.ci, k.name, errCount, "count = %d, want >= 0", int64(n))
	}
	rn, ln := len(k.ic.rranks), len(k.ic.lranks)
	vec := int64(n) // the length of every input vector
	seg, segAt := int64(n), int64(0)
	switch which {
	case C.BCS_REDUCE_SCATTER_BLOCK:
		vec, segAt = int64(n)*int64(ln), int64(n)*int64(k.lrank)
	case C.BCS_REDUCE_SCATTER:
		c, rc := k.interInts("recvcounts", counts, ln, true)
		if rc != 0 {
			return rc
		}
		vec = 0
		for i, v := range c {
			if i == k.lrank {
				seg, segAt = v, vec
			}
			vec += v
		}
	}
	sendTo, recvFrom := true, true // whole vectors to every remote member, from every one
	var to int
	if which == C.BCS_REDUCE {
		isRoot, idle, rc := k.rootRole(root)
		if rc != 0 {
			return rc
		}
		sendTo, recvFrom, to = !isRoot && !idle, isRoot, int(root)
	}
	// The result lands in recv (the root's, in Reduce): it must be there
	// for a non-empty segment, unless the datatype holds absolute
	// addresses (MPI_BOTTOM).
	if recvFrom && seg > 0 && recv == nil && !t.bottom() && t.info.wire > 0 {
		return fail(k.ci, k.name, errBuffer, "recvbuf = NULL with a result of %d items of %s to receive", seg, t.name)
	}
	if k.checkOnly() {
		return 0
	}
	var sc, sd, rc_, rd []int64
	if sendTo {
		sc, sd = same(vec, rn), make([]int64, rn)
		if which == C.BCS_REDUCE {
			sc = make([]int64, rn)
			sc[to] = vec
		}
	}
	var tmp unsafe.Pointer
	var keep []byte
	if recvFrom && vec > 0 { // whole vectors arrive even for an empty segment: the senders' counts must match
		keep = scratchBytes(t, int(vec)*rn)
		tmp = unsafe.Pointer(&keep[scratchFront(t)])
		rc_, rd = same(vec, rn), steps(vec, rn)
	}
	segBytes, e := t.info.countBytes("count", seg)
	if e != nil {
		return fail(k.ci, k.name, e.class, "%s", e.msg)
	}
	var finish func(int)
	if tmp != nil && seg > 0 {
		finish = func(int) {
			// acc = v0 op (v1 op (... op v[rn-1])): reduce_local(in, inout)
			// is inout = in op inout.
			// The handles may be freed by now (the standard allows it):
			// applyLocal needs neither.
			last := interBlock(tmp, t, rn-1, int(vec))
			for j := rn - 2; j >= 0; j-- {
				in := unsafe.Add(interBlock(tmp, t, j, int(vec)), int(segAt)*t.extent)
				applyLocal(k.name, t, dt, op, in, unsafe.Add(last, int(segAt)*t.extent), C.MPI_Count(seg), segBytes)
			}
			b := make([]byte, int(seg)*int(t.info.wire))
			t.info.pack(b, unsafe.Add(last, int(segAt)*t.extent), int(seg))
			t.info.unpack(recv, b, int(seg))
			_ = keep
		}
	}
	if rc := k.exchange(send, dt, sc, sd, tmp, dt, rc_, rd); rc != 0 {
		return rc
	}
	if finish == nil {
		return 0
	}
	if k.out == nil {
		finish(0)
		return 0
	}
	addUnpack(*k.out, finish)
	return 0
}

// scratchFront and scratchBytes are interScratch's room as a byte slice the
// caller keeps (the request's completion holds it) and the offset of item 0.
func scratchFront(t dtype) int {
	if t.info != nil && t.info.trueLB < 0 {
		return int(-t.info.trueLB)
	}
	return 0
}

func scratchBytes(t dtype, n int) []byte {
	hi := int64(t.extent)
	if t.info != nil {
		hi = t.info.trueUB
	}
	end := int64(scratchFront(t)) + int64(max(n-1, 0))*int64(t.extent) + hi
	return make([]byte, max(end, 1)+8)
}

// addUnpack runs f after what already runs when request h completes.
func addUnpack(h C.uintptr_t, f func(int)) {
	_, i, _ := splitHandle(uintptr(h))
	if g := reqs[i].unpack; g != nil {
		reqs[i].unpack = func(b int) { g(b); f(b) }
		return
	}
	reqs[i].unpack = f
}
