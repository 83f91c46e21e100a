package main

/*
#include "shim.h"
*/
import "C"

import (
	"cmp"
	"slices"
	"strconv"
	"unsafe"
)

// Collectives with a datatype per peer (MPI_Alltoallw) and the
// neighbourhood collectives (MPI_Neighbor_*, MPI_Ineighbor_*) are one
// exchange: each member packs what it sends to every peer into one byte
// buffer, in peer order, the runtime moves it as an Alltoallv of bytes over
// the whole communicator (zero bytes between members that are not
// neighbours), and what arrives is unpacked into the caller's buffers at
// completion (on return, or when Wait or Test completes the request). Every
// member of the communicator calls a neighbourhood collective, as the
// standard requires, so the Alltoallv is a legal collective of the
// communicator and needs no tags of its own: it cannot match a user's
// message. The MMDS records it as MPI_Alltoallv or MPI_Ialltoallv.
//
// Several edges between one pair of members: a graph's or distributed
// graph's k-th edge from i to j carries the k-th block i sends to j (the
// order of the neighbour lists, which both ends see alike). A Cartesian
// communicator's neighbours are the 2*ndims shift partners (source, then
// destination, of MPI_Cart_shift(d, 1) for each d, MPI_PROC_NULL at a
// non-periodic edge); what a member sends to its destination in dimension
// d arrives in the receiver's source block of d, even when both are one
// process (a periodic dimension of size 1 or 2).

// Which exchange bcs_wcoll runs (the C wrappers pass it).
const (
	wAlltoallw = iota
	wNeighborAllgather
	wNeighborAllgatherv
	wNeighborAlltoall
	wNeighborAlltoallv
	wNeighborAlltoallw
	wCount
)

var wNames = [wCount][2]string{
	wAlltoallw:          {"MPI_Alltoallw", "MPI_Ialltoallw"},
	wNeighborAllgather:  {"MPI_Neighbor_allgather", "MPI_Ineighbor_allgather"},
	wNeighborAllgatherv: {"MPI_Neighbor_allgatherv", "MPI_Ineighbor_allgatherv"},
	wNeighborAlltoall:   {"MPI_Neighbor_alltoall", "MPI_Ineighbor_alltoall"},
	wNeighborAlltoallv:  {"MPI_Neighbor_alltoallv", "MPI_Ineighbor_alltoallv"},
	wNeighborAlltoallw:  {"MPI_Neighbor_alltoallw", "MPI_Ineighbor_alltoallw"},
}

// wName names an exchange by its variant, as collName does.
func wName(which int, nb bool, mode C.int) string {
	v := int(mode & (C.BCS_LARGE | C.BCS_PERSIST))
	if nb && mode&C.BCS_PERSIST == 0 {
		v |= 4
	}
	return wVariants[which][v]
}

var wVariants = func() (t [wCount][8]string) {
	for w, n := range wNames {
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

// wseg is n items of type t at p, one block of an exchange.
type wseg struct {
	p unsafe.Pointer
	n int
	t dtype
}

func (s wseg) bytes() int { return s.n * int(s.t.info.wire) }

// edge is one block of an exchange: its peer (a rank of the communicator,
// or < 0 for MPI_PROC_NULL), its order among the blocks of that peer, and
// the items.
type edge struct {
	peer, label int
	s           wseg
}

// newNamedColl is newCollCall for a collective outside collNames.
func newNamedColl(name string, h C.uintptr_t, out *C.uintptr_t, mode C.int) (*collCall, C.int) {
	k := &collCall{name: name, out: out, size: 1, mode: mode}
	k.a.which, k.a.nb = C.BCS_ALLTOALLV, out != nil || mode&C.BCS_PERSIST != 0
	if rc := enter(name); rc != 0 {
		return nil, rc
	}
	ci, rc := comm(name, uintptr(h))
	if rc != 0 {
		return nil, rc
	}
	k.ci, k.errCI, k.a.c = ci, ci, comms[ci].c
	if k.a.c != nil {
		k.size, k.rank = k.a.c.Size(), k.a.c.Rank()
	}
	return k, 0
}

// cints reads n C ints (MPI_Counts or MPI_Aints in the large-count
// forms); counts must be >= 0.
func (k *collCall) cints(what string, p unsafe.Pointer, n int, counts bool) ([]int, C.int) {
	if n == 0 {
		return nil, 0
	}
	if p == nil {
		return nil, k.fail(errArg, "%s = NULL with %d entries expected", what, n)
	}
	out := make([]int, n)
	for i := range out {
		v := k.at(p, i)
		if counts && v < 0 {
			return nil, k.fail(errCount, "%s[%d] = %d, want >= 0", what, i, v)
		}
		if v > maxTypeBytes || v < -maxTypeBytes {
			return nil, k.fail(errCount, "%s[%d] = %d, want at most %d in magnitude (bcsmpi's bound on the items of one call)", what, i, v, maxTypeBytes)
		}
		out[i] = int(v)
	}
	return out, 0
}

// block checks one block's buffer and makes it.
func (k *collCall) block(what string, p unsafe.Pointer, n int, t dtype) (wseg, C.int) {
	if n < 0 {
		return wseg{}, k.fail(errCount, "%s count = %d, want >= 0", what, n)
	}
	if rc := k.fits(what+" count", n, t); rc != 0 {
		return wseg{}, rc
	}
	if p == nil && n > 0 && !t.bottom() && t.info.wire > 0 {
		return wseg{}, k.fail(errBuffer, "%s = NULL with count = %d", what, n)
	}
	return wseg{p, n, t}, 0
}

//export bcs_wcoll
func bcs_wcoll(which C.int, send unsafe.Pointer, scount C.MPI_Count, scounts, sdispls unsafe.Pointer, sdisplsA *C.MPI_Aint,
	stype C.uintptr_t, stypes *C.uintptr_t, recv unsafe.Pointer, rcount C.MPI_Count, rcounts, rdispls unsafe.Pointer,
	rdisplsA *C.MPI_Aint, rtype C.uintptr_t, rtypes *C.uintptr_t, h C.uintptr_t, out *C.uintptr_t, mode C.int) C.int {
	name := wName(int(which), out != nil, mode)
	return wcoll(name, -1, which, send, scount, scounts, sdispls, sdisplsA, stype, stypes, recv, rcount, rcounts, rdispls, rdisplsA, rtype, rtypes, h, out, mode)
}

// wcoll is bcs_wcoll for the call name (the user's call: an
// intercommunicator collective runs as an Alltoallw over its hidden union,
// internb.go, and its errors name the user's call, not MPI_Alltoallw_c);
// errCI >= 0 is the communicator slot whose error handler its errors go
// to (the intercommunicator's, not the union's).
func wcoll(name string, errCI int, which C.int, send unsafe.Pointer, scount C.MPI_Count, scounts, sdispls unsafe.Pointer, sdisplsA *C.MPI_Aint,
	stype C.uintptr_t, stypes *C.uintptr_t, recv unsafe.Pointer, rcount C.MPI_Count, rcounts, rdispls unsafe.Pointer,
	rdisplsA *C.MPI_Aint, rtype C.uintptr_t, rtypes *C.uintptr_t, h C.uintptr_t, out *C.uintptr_t, mode C.int) C.int {
	if isInit(mode) {
		return persistNamed(name, h, out, mode, func(o *C.uintptr_t, m C.int) C.int {
			return wcoll(name, errCI, which, send, scount, scounts, sdispls, sdisplsA, stype, stypes, recv, rcount, rcounts, rdispls, rdisplsA, rtype, rtypes, h, o, m)
		})
	}
	if ci, ic := interOf(h); ic != nil && which == wAlltoallw {
		return interW(ci, ic, name, send, scounts, sdispls, sdisplsA, stypes, recv, rcounts, rdispls, rdisplsA, rtypes, out, mode) // internb.go
	}
	k, rc := newNamedColl(name, h, out, mode)
	if rc != 0 {
		return rc
	}
	if errCI >= 0 {
		k.errCI, k.renamed = errCI, true
	}
	for _, c := range [...]struct {
		what string
		n    C.MPI_Count
	}{{"sendcount", scount}, {"recvcount", rcount}} {
		if rc := k.count(c.what, c.n); rc != 0 {
			return rc
		}
	}
	var outs, ins, outLab, inLab []int
	if which == wAlltoallw {
		for j := range k.size {
			outs, ins = append(outs, j), append(ins, j)
		}
		outLab, inLab = make([]int, k.size), make([]int, k.size)
	} else if outs, ins, outLab, inLab, rc = neighbours(k.name, k.ci); rc != 0 {
		return rc
	}
	if uintptr(recv) == hInPlace {
		return k.fail(errBuffer, "recvbuf = MPI_IN_PLACE is not allowed in %s", k.name)
	}
	inPlace := uintptr(send) == hInPlace
	if inPlace && which != wAlltoallw {
		return k.fail(errBuffer, "sendbuf = MPI_IN_PLACE is not allowed in %s", k.name)
	}
	nout, nin := len(outs), len(ins)
	sendE, recvE := make([]edge, nout), make([]edge, nin)
	// The receive side.
	switch which {
	case wNeighborAllgather, wNeighborAlltoall:
		rt, rc := k.datatype("recvtype", rtype)
		if rc != 0 {
			return rc
		}
		for e := range nin {
			if recvE[e].s, rc = k.block("recvbuf", at(recv, e*int(rcount), rt.extent), int(rcount), rt); rc != 0 {
				return rc
			}
		}
	case wNeighborAllgatherv, wNeighborAlltoallv:
		rt, rc := k.datatype("recvtype", rtype)
		if rc != 0 {
			return rc
		}
		cs, rc := k.cints("recvcounts", rcounts, nin, true)
		if rc != 0 {
			return rc
		}
		ds, rc := k.cints("rdispls", rdispls, nin, false)
		if rc != 0 {
			return rc
		}
		for e := range nin {
			if recvE[e].s, rc = k.block("recvbuf", at(recv, ds[e], rt.extent), cs[e], rt); rc != 0 {
				return rc
			}
		}
	default: // the w forms: a type and a byte displacement per block
		cs, rc := k.cints("recvcounts", rcounts, nin, true)
		if rc != 0 {
			return rc
		}
		ds, rc := k.displs("rdispls", rdispls, rdisplsA, nin)
		if rc != 0 {
			return rc
		}
		ts, rc := k.types("recvtypes", rtypes, nin)
		if rc != 0 {
			return rc
		}
		for e := range nin {
			if recvE[e].s, rc = k.block("recvbuf", unsafe.Add(recv, ds[e]), cs[e], ts[e]); rc != 0 {
				return rc
			}
		}
	}
	// The send side.
	switch which {
	case wNeighborAllgather, wNeighborAllgatherv, wNeighborAlltoall:
		st, rc := k.datatype("sendtype", stype)
		if rc != 0 {
			return rc
		}
		for e := range nout {
			p := send
			if which == wNeighborAlltoall {
				p = at(send, e*int(scount), st.extent)
			}
			if sendE[e].s, rc = k.block("sendbuf", p, int(scount), st); rc != 0 {
				return rc
			}
		}
	case wNeighborAlltoallv:
		st, rc := k.datatype("sendtype", stype)
		if rc != 0 {
			return rc
		}
		cs, rc := k.cints("sendcounts", scounts, nout, true)
		if rc != 0 {
			return rc
		}
		ds, rc := k.cints("sdispls", sdispls, nout, false)
		if rc != 0 {
			return rc
		}
		for e := range nout {
			if sendE[e].s, rc = k.block("sendbuf", at(send, ds[e], st.extent), cs[e], st); rc != 0 {
				return rc
			}
		}
	default:
		if inPlace { // Alltoallw: what is sent comes from the receive blocks
			for e := range nout {
				sendE[e].s = recvE[e].s
			}
			break
		}
		cs, rc := k.cints("sendcounts", scounts, nout, true)
		if rc != 0 {
			return rc
		}
		ds, rc := k.displs("sdispls", sdispls, sdisplsA, nout)
		if rc != 0 {
			return rc
		}
		ts, rc := k.types("sendtypes", stypes, nout)
		if rc != 0 {
			return rc
		}
		for e := range nout {
			if sendE[e].s, rc = k.block("sendbuf", unsafe.Add(send, ds[e]), cs[e], ts[e]); rc != 0 {
				return rc
			}
		}
	}
	if !inPlace {
		var sr, rr []byteRun
		for _, e := range sendE {
			sr = runsAt(sr, e.s.p, e.s.t, whole(e.s.n))
		}
		for _, e := range recvE {
			rr = runsAt(rr, e.s.p, e.s.t, whole(e.s.n))
		}
		if rc := k.aliasedRuns(send, sr, recv, rr); rc != 0 {
			return rc
		}
	}
	for e := range sendE {
		sendE[e].peer, sendE[e].label = outs[e], outLab[e]
	}
	for e := range recvE {
		recvE[e].peer, recvE[e].label = ins[e], inLab[e]
	}
	return k.exchange(sendE, recvE)
}

// displs reads n byte displacements, as ints (Alltoallw) or MPI_Aints.
func (k *collCall) displs(what string, p unsafe.Pointer, a *C.MPI_Aint, n int) ([]int, C.int) {
	if a == nil {
		return k.cints(what, p, n, false)
	}
	out := make([]int, n)
	for i, v := range unsafe.Slice(a, n) {
		out[i] = int(v)
	}
	return out, 0
}

// types resolves n datatype handles.
func (k *collCall) types(what string, p *C.uintptr_t, n int) ([]dtype, C.int) {
	if n == 0 {
		return nil, 0
	}
	if p == nil {
		return nil, k.fail(errArg, "%s = NULL with %d entries expected", what, n)
	}
	out := make([]dtype, n)
	for i, h := range unsafe.Slice(p, n) {
		t, rc := k.datatype(what+"["+strconv.Itoa(i)+"]", h)
		if rc != 0 {
			return nil, rc
		}
		out[i] = t
	}
	return out, 0
}

// exchange moves the blocks: each send edge's items to its peer, each
// receive edge's from its peer, as one Alltoallv of bytes; the blocks
// between a pair of members go in label order (stable: list order for equal
// labels). Receive blocks are unpacked at completion.
func (k *collCall) exchange(sendE, recvE []edge) C.int {
	byPeer := func(a, b edge) int { return cmp.Or(cmp.Compare(a.peer, b.peer), cmp.Compare(a.label, b.label)) }
	slices.SortStableFunc(sendE, byPeer)
	slices.SortStableFunc(recvE, byPeer)
	P := k.size
	lay := func(es []edge) (counts, displs []int, total int) {
		counts, displs = make([]int, P), make([]int, P)
		e := 0
		for j := range P {
			for e < len(es) && es[e].peer < j {
				e++ // MPI_PROC_NULL
			}
			displs[j] = total
			for ; e < len(es) && es[e].peer == j; e++ {
				total += es[e].s.bytes()
			}
			counts[j] = total - displs[j]
		}
		return counts, displs, total
	}
	sc, sd, stot := lay(sendE)
	rc_, rd, rtot := lay(recvE)
	sbuf, rbuf := make([]byte, stot), make([]byte, rtot)
	pos := 0
	for _, e := range sendE {
		if e.peer < 0 {
			continue
		}
		n := e.s.bytes()
		e.s.t.info.pack(sbuf[pos:pos+n], e.s.p, e.s.n)
		pos += n
	}
	k.post = append(k.post, func() {
		pos := 0
		for _, e := range recvE {
			if e.peer < 0 {
				continue
			}
			n := e.s.bytes()
			e.s.t.info.unpack(e.s.p, rbuf[pos:pos+n], e.s.n)
			pos += n
		}
	})
	k.a.scounts, k.a.sdispls, k.a.counts, k.a.displs = sc, sd, rc_, rd
	k.a.send, k.a.sendLen, k.a.recv, k.a.recvLen = nil, stot, nil, rtot
	if stot > 0 {
		k.a.send = unsafe.Pointer(&sbuf[0])
	}
	if rtot > 0 {
		k.a.recv = unsafe.Pointer(&rbuf[0])
	}
	if k.a.c == nil && stot != rtot {
		return k.fail(errCount, "sends %d bytes to itself and receives %d; a collective's send and receive type signatures must agree", stot, rtot)
	}
	return k.start(C.BCS_U8, func() { copy(rbuf, sbuf) })
}
