package main

/*
#include "shim.h"
*/
import "C"

import (
	"bytes"
	"fmt"
	"math"
	"math/bits"
	"unsafe"

	"github.com/bcsmpi/bcsmpi/internal/reduce"
	"github.com/bcsmpi/bcsmpi/mds"
	"github.com/bcsmpi/bcsmpi/mpiapi"
)

// The operations (Put, Get, Accumulate, Get_accumulate, Fetch_and_op,
// Compare_and_swap and their request-based forms) and the target side.
//
// A request to another member is one message on the window's stream
// (tagHdr): a 64-byte header, the target layout (the target datatype's
// compiled segments, which the target cannot look up: datatype handles are
// local) and the origin's packed data. When it is longer than hdrMax the
// header goes alone, flagged, and the rest follows on tagBody. Results come
// back on tagResult, into a receive the origin posted when it issued the
// operation, straight into its buffer when the result datatype is
// contiguous. A target applies requests one at a time, in the order each
// origin issued them, in its own thread: so every accumulate is atomic as a
// whole with respect to every other accumulate (and to everything else the
// target applies), which is more than the standard's per-element
// atomicity. An operation on the caller's own window is applied at once,
// in the same way.

// Operation codes of the header.
const (
	opPut = iota + 1
	opGet
	opAcc
	opGetAcc
	opCAS
	opLock   // excl: exclusive; the target holds the origin's later requests until it grants it
	opUnlock // answered with opAck
	opFlush  // answered with opAck
	opAck
	opPost // MPI_Win_post, target to origin
	opDone // MPI_Win_complete, origin to target
	opErr  // a target refused a request: class in red, text in the data
)

// Reductions other than reduce's.
const (
	redReplace = 100
	redNoOp    = 101
)

// elemC is the element type of an accumulate on a predefined type with no
// Go element type (long double, the complex types, MPI_LONG_DOUBLE_INT,
// MPI_2REAL, MPI_2DOUBLE_PRECISION): the header's ctype names the
// predefined datatype, and the target reduces with shim_ops.c's C function
// for it (bcs_builtin_op), as the two-sided reductions do.
const elemC = 0xff

// header is a request's fixed part.
//
//	0 op, 1 excl, 2 red, 3 elem (reduce.Type, or elemC), 4 body follows,
//	5 split (the header message carries the layout, the body only the data),
//	6 ctype (uint16: elemC's predefined datatype handle)
//	8 disp, 16 count, 24 extent, 32 wire, 40 nseg, 48 data bytes (int64s)
type header struct {
	op, excl, red, elem uint8
	body, split         bool
	ctype               uint16
	disp, count         int64
	extent, wire        int64
	nseg, data          int64
}

const hdrSize = 64

func (h header) encode(b []byte) {
	b[0], b[1], b[2], b[3] = h.op, h.excl, h.red, h.elem
	b[4], b[5] = 0, 0
	if h.body {
		b[4] = 1
	}
	if h.split {
		b[5] = 1
	}
	le.PutUint16(b[6:], h.ctype)
	for i, v := range [...]int64{h.disp, h.count, h.extent, h.wire, h.nseg, h.data} {
		le.PutUint64(b[8+8*i:], uint64(v))
	}
}

func decodeHeader(b []byte) (header, bool) {
	if len(b) < hdrSize {
		return header{}, false
	}
	h := header{op: b[0], excl: b[1], red: b[2], elem: b[3], body: b[4] == 1, split: b[5] == 1, ctype: le.Uint16(b[6:])}
	v := [6]int64{}
	for i := range v {
		v[i] = int64(le.Uint64(b[8+8*i:]))
	}
	h.disp, h.count, h.extent, h.wire, h.nseg, h.data = v[0], v[1], v[2], v[3], v[4], v[5]
	return h, true
}

// The predefined operations as reduce's.
var redOps = map[uintptr]uint8{
	0x21: uint8(reduce.Sum), 0x22: uint8(reduce.Min), 0x23: uint8(reduce.Max), 0x24: uint8(reduce.Prod),
	0x28: uint8(reduce.Band), 0x29: uint8(reduce.Bor), 0x2a: uint8(reduce.Bxor),
	0x30: uint8(reduce.Land), 0x31: uint8(reduce.Lor), 0x32: uint8(reduce.Lxor),
	0x38: uint8(reduce.Minloc), 0x39: uint8(reduce.Maxloc),
	0x3c: redReplace, 0x3d: redNoOp,
}

// Which operation bcs_rma performs (shim's order).
const (
	rmaPut = iota
	rmaGet
	rmaAcc
	rmaGetAcc
	rmaFetchOp
	rmaCAS
)

// rmaPrims are the MMDS primitives of the operations (shim's order; plain
// and request forms).
var rmaPrims = [...][2]mds.Prim{
	{mds.Put, mds.Rput}, {mds.Get, mds.Rget}, {mds.Accumulate, mds.Raccumulate},
	{mds.GetAccumulate, mds.RgetAccumulate}, {mds.FetchAndOp, 0}, {mds.CompareAndSwap, 0},
}

var rmaCalls = [...][2]string{
	{"MPI_Put", "MPI_Rput"}, {"MPI_Get", "MPI_Rget"}, {"MPI_Accumulate", "MPI_Raccumulate"},
	{"MPI_Get_accumulate", "MPI_Rget_accumulate"}, {"MPI_Fetch_and_op", ""}, {"MPI_Compare_and_swap", ""},
}

// rmaBuf is a checked (buffer, count, datatype) of the origin side.
type rmaBuf struct {
	p     unsafe.Pointer
	count int
	t     dtype
	bytes int64
}

func (w *window) rmaBuf(call, what string, p unsafe.Pointer, count C.MPI_Count, h C.uintptr_t) (rmaBuf, C.int) {
	if count < 0 {
		return rmaBuf{}, w.fail(call, errCount, "%s_count = %d, want >= 0", what, int64(count))
	}
	t, rc := datatype(w.ci, call, what+"_datatype", uintptr(h))
	if rc != 0 {
		return rmaBuf{}, rc
	}
	n, e := t.info.countBytes(what+"_count", int64(count))
	if e != nil {
		return rmaBuf{}, w.fail(call, e.class, "%s", e.msg)
	}
	if p == nil && n > 0 && !t.bottom() {
		return rmaBuf{}, w.fail(call, errBuffer, "%s_addr = NULL with %s_count = %d", what, what, int64(count))
	}
	return rmaBuf{p: p, count: int(count), t: t, bytes: n}, 0
}

// pack is the buffer's data packed.
func (b rmaBuf) pack() []byte {
	out := make([]byte, b.bytes)
	if b.bytes > 0 {
		b.t.info.pack(out, b.p, b.count)
	}
	return out
}

// cElem is the predefined datatype every basic element of t is, when that
// type has no Go element type (see elemC), or nil.
func cElem(t dtype) *dtInfo {
	if p := t.info.pair; p != nil && p.pairKind == C.BCS_NONE {
		// MPI_LONG_DOUBLE_INT and the Fortran pairs, or a derived type made
		// of one of them (its basic components are that predefined pair,
		// as the standard counts them for MINLOC and MAXLOC): parts of two
		// types, reduced in C per packed pair (reduceC).
		return p
	}
	if t.info.kind != C.BCS_NONE {
		return nil
	}
	var b *dtInfo
	for _, r := range t.info.sig {
		if r.basic == nil || r.basic.kind != C.BCS_NONE || (b != nil && r.basic != b) {
			return nil
		}
		b = r.basic
	}
	return b
}

// opOfRed is the operation handle of each reduction code (redOps inverted).
var opOfRed = func() map[uint8]uintptr {
	m := map[uint8]uintptr{}
	for h, r := range redOps {
		m[r] = h
	}
	return m
}()

// elemOf is the reduce type of a datatype whose basic elements are all of
// one kind, or of pairs of one pair type with a runtime element type (moved
// packed; the target converts, pairs.go), or 0.
func elemOf(t dtype) reduce.Type {
	if p := t.info.pair; p != nil {
		if v, ok := t.pairView(); ok {
			return sigOfKind[v.kind]
		}
		return 0
	}
	if k := t.info.kind; k > 0 && k < len(sigOfKind) {
		return sigOfKind[k]
	}
	return 0
}

// bcs_rma issues one operation. compare is Compare_and_swap's; result the
// result buffer of the fetching operations (Get's is origin); req, when
// not nil, receives a request (the R forms); mode C.BCS_LARGE: the _c
// form called (the int forms pass their counts as MPI_Count).
//
//export bcs_rma
func bcs_rma(which C.int, origin unsafe.Pointer, ocount C.MPI_Count, otype C.uintptr_t,
	compare unsafe.Pointer, result unsafe.Pointer, rcount C.MPI_Count, rtype C.uintptr_t,
	target C.int, disp C.MPI_Aint, tcount C.MPI_Count, ttype C.uintptr_t, opH C.uintptr_t,
	winH C.uintptr_t, req *C.uintptr_t, mode C.int) C.int {
	// The MMDS records the call as its own primitive, with the bytes the
	// target datatype covers; not the messages it is made of.
	t0 := mpiapi.BeginCall(false)
	rmaBytes = 0
	rc := rma(which, origin, ocount, otype, compare, result, rcount, rtype, target, disp, tcount, ttype, opH, winH, req, mode)
	mpiapi.EndCall(rmaPrims[which][b2i(req != nil)], t0, rmaBytes, false)
	return rc
}

// rmaBytes is what the operation bcs_rma issues moves, for the MMDS.
var rmaBytes int64

func rma(which C.int, origin unsafe.Pointer, ocount C.MPI_Count, otype C.uintptr_t,
	compare unsafe.Pointer, result unsafe.Pointer, rcount C.MPI_Count, rtype C.uintptr_t,
	target C.int, disp C.MPI_Aint, tcount C.MPI_Count, ttype C.uintptr_t, opH C.uintptr_t,
	winH C.uintptr_t, req *C.uintptr_t, mode C.int) C.int {
	call := rmaCalls[which][0]
	if req != nil {
		call = rmaCalls[which][1]
	}
	if mode&C.BCS_LARGE != 0 {
		call += "_c"
	}
	w, rc := win(call, winH)
	if rc != 0 {
		return rc
	}
	if target == C.MPI_PROC_NULL {
		if req != nil {
			*req = C.uintptr_t(newReq(nil, &localReq{ci: w.ci, done: true, source: mpiapi.AnySource, rtag: mpiapi.AnyTag}, w.ci))
		}
		return 0
	}
	if target < 0 || int(target) >= w.size {
		return w.fail(call, errRank, "target_rank = %d, want 0..%d or MPI_PROC_NULL", int(target), w.size-1)
	}
	t := int(target)
	if rc := w.access(call, t); rc != 0 {
		return rc
	}
	h := header{disp: int64(disp), count: int64(tcount)}
	var o, res rmaBuf
	fetch := which != rmaPut && which != rmaAcc
	// The target side, and the origin's buffers.
	tt, rc := w.rmaBuf(call, "target", unsafe.Pointer(w), tcount, ttype) // any non-NULL address: the target's memory is checked below
	if rc != 0 {
		return rc
	}
	switch which {
	case rmaGet:
		if res, rc = w.rmaBuf(call, "origin", origin, ocount, otype); rc != 0 {
			return rc
		}
	case rmaFetchOp, rmaCAS:
		// One element of datatype at each of origin, compare, result and the target.
		if res, rc = w.rmaBuf(call, "result", result, 1, ttype); rc != 0 {
			return rc
		}
		o = res
		o.p = origin
		if !tt.t.info.predefined() {
			return w.fail(call, errType, "datatype = %s, want a predefined datatype", tt.t.name)
		}
		if origin == nil && (which == rmaCAS || uintptr(opH) != 0x3d) {
			return w.fail(call, errBuffer, "origin_addr = NULL (only MPI_Fetch_and_op with MPI_NO_OP may omit it)")
		}
		if which == rmaCAS && compare == nil {
			return w.fail(call, errBuffer, "compare_addr = NULL")
		}
	default:
		// MPI_Get_accumulate with MPI_NO_OP ignores origin_addr,
		// origin_count and origin_datatype (MPI-4.1 section 12.3.4): NULL,
		// any count and MPI_DATATYPE_NULL are all accepted.
		if which != rmaGetAcc || uintptr(opH) != 0x3d {
			if o, rc = w.rmaBuf(call, "origin", origin, ocount, otype); rc != 0 {
				return rc
			}
		}
		if which == rmaGetAcc {
			if res, rc = w.rmaBuf(call, "result", result, rcount, rtype); rc != 0 {
				return rc
			}
		}
	}
	switch which {
	case rmaPut:
		h.op = opPut
	case rmaGet:
		h.op = opGet
	case rmaAcc, rmaGetAcc, rmaFetchOp:
		h.op = opAcc
		if fetch {
			h.op = opGetAcc
		}
		red, ok := redOps[uintptr(opH)]
		if !ok {
			return w.fail(call, errOp, "op = %s, want a predefined operation, MPI_REPLACE or MPI_NO_OP (user operations cannot be used in accumulate calls)", describe(uintptr(opH)))
		}
		h.red = red
	case rmaCAS:
		h.op = opCAS
		if e := elemOf(tt.t); e == 0 || !(e.Integer()) {
			return w.fail(call, errType, "datatype = %s, want a predefined integer, logical or byte datatype", tt.t.name)
		}
	}
	// An operation that moves nothing (zero counts, or datatypes of no
	// bytes, on every side) is complete as it is: no signature to match, no
	// element type to reduce, nothing to send.
	if tt.bytes == 0 && o.bytes == 0 && res.bytes == 0 && which != rmaFetchOp && which != rmaCAS {
		if req != nil {
			*req = C.uintptr_t(newReq(nil, &localReq{ci: w.ci, done: true, source: mpiapi.AnySource, rtag: mpiapi.AnyTag}, w.ci))
		}
		return 0
	}
	// Type signatures: what moves must be as long on both sides, and the
	// accumulate calls need basic elements of one kind, the same on every
	// side.
	if h.op != opGetAcc || h.red != redNoOp {
		if which != rmaGet && which != rmaFetchOp && which != rmaCAS && o.bytes != tt.bytes {
			return w.fail(call, errType, "the origin moves %d bytes (%d of %s), the target %d (%d of %s): their type signatures must match", o.bytes, o.count, o.t.name, tt.bytes, tt.count, tt.t.name)
		}
	}
	if fetch && res.bytes != tt.bytes {
		return w.fail(call, errType, "the result buffer holds %d bytes (%d of %s), the target %d (%d of %s): their type signatures must match", res.bytes, res.count, res.t.name, tt.bytes, tt.count, tt.t.name)
	}
	if h.op == opAcc || h.op == opGetAcc {
		e := elemOf(tt.t)
		ce := cElem(tt.t) // long double, complex, the pairs of shim_ops.c
		reducing := h.red != redReplace && h.red != redNoOp
		switch {
		case e == 0 && ce == nil && reducing:
			return w.fail(call, errType, "target_datatype = %s: an accumulate needs basic elements of one predefined integer, floating-point or pair type", tt.t.name)
		case h.red != redNoOp && which != rmaFetchOp && (elemOf(o.t) != e || cElem(o.t) != ce):
			return w.fail(call, errType, "origin_datatype = %s and target_datatype = %s have different basic elements; an accumulate needs the same predefined type on both sides", o.t.name, tt.t.name)
		case which == rmaGetAcc && (elemOf(res.t) != e || cElem(res.t) != ce):
			return w.fail(call, errType, "result_datatype = %s and target_datatype = %s have different basic elements", res.t.name, tt.t.name)
		}
		switch {
		case e == 0 && reducing:
			if C.bcs_builtin_op(C.uintptr_t(ce.h), C.uintptr_t(opH)) == nil {
				return w.fail(call, errOp, "op = %s is not defined on %s (the standard defines MPI_SUM and MPI_PROD on complex types, MPI_SUM, MPI_PROD, MPI_MIN and MPI_MAX on floating point, MPI_MINLOC and MPI_MAXLOC on pairs)", describe(uintptr(opH)), ce.name)
			}
			h.elem, h.ctype = elemC, uint16(ce.h)
		case h.red < redReplace:
			if err := reduce.Check(reduce.Op(h.red), e); err != nil {
				return w.fail(call, errOp, "op = %s on %s: %v", describe(uintptr(opH)), tt.t.name, err)
			}
			h.elem = uint8(e)
		default:
			h.elem = uint8(e)
		}
	}
	if h.op == opGetAcc && h.red == redNoOp {
		o = rmaBuf{}
	}
	// The target range (a dynamic window's target checks it).
	if rc := w.inRange(call, t, h.disp, tt); rc != 0 {
		return rc
	}
	rmaBytes = tt.bytes
	if w.fence {
		w.fenceOps++ // completed by the next fence (fenceDone)
	}
	var data []byte
	direct := false // data is the program's buffer, sent as it is (see send)
	switch {
	case h.op == opCAS:
		data = append(o.pack(), (rmaBuf{p: compare, count: 1, t: o.t, bytes: o.bytes}).pack()...)
	case h.op == opGet:
	case o.bytes > 0 && o.t.info.contig && t != w.rank:
		// No copy here: send copies a short request into its message, and
		// sends a long one straight from the buffer (not for the request
		// forms, whose request is complete at once).
		data = unsafe.Slice((*byte)(unsafe.Add(o.p, o.t.info.trueLB)), o.bytes)
		direct = req == nil
	default:
		data = o.pack()
	}
	if done, rc := w.direct(call, t, h, tt.t.info, data, res, req); done { // rmadirect.go
		return rc
	}
	if t == w.rank {
		// The caller's own window: applied now.
		w.peers[t].dirty = true
		class, msg := w.apply(t, h, tt.t.info, data, func(b []byte) {
			if res.bytes > 0 {
				res.t.info.unpack(res.p, b, res.count)
			}
		})
		if class != 0 {
			return w.fail(call, class, "%s", msg)
		}
		if req != nil {
			*req = C.uintptr_t(newReq(nil, &localReq{ci: w.ci, done: true, source: mpiapi.AnySource, rtag: mpiapi.AnyTag}, w.ci))
		}
		return 0
	}
	// A message over the inline size holds a request slot until the target
	// takes it (post), as a result to come or a direct body does. The
	// target side's messages (results, inside rmaProgress) are not
	// throttled: they answer requests their origins throttled.
	big := int64(hdrSize+32*len(tt.t.info.segs)+len(data)) > inlineMax()
	if fetch || h.op == opGet || direct || big {
		if rc := w.throttle(call); rc != 0 {
			return rc
		}
	}
	p := &w.peers[t]
	if fetch || h.op == opGet {
		r, rc := w.postResult(call, t, res, req != nil)
		if rc != 0 {
			return rc
		}
		if req != nil {
			*req = C.uintptr_t(newReq(r.r, nil, w.ci))
			if r.done != nil {
				done := r.done
				setUnpack(*req, func(int) { done() })
				r.done = nil
			}
		}
		p.results = append(p.results, r)
		inFlight++
	} else if req != nil {
		*req = C.uintptr_t(newReq(nil, &localReq{ci: w.ci, done: true, source: mpiapi.AnySource, rtag: mpiapi.AnyTag}, w.ci))
	}
	if !fetch {
		// A fetching operation's result leaves the target after the
		// operation took effect there: waiting for it completes it
		// remotely too, so a flush needs no acknowledgement for it.
		p.dirty = true
	}
	if direct {
		return w.sendDirect(t, h, tt.t.info, data)
	}
	return w.send(t, h, tt.t.info, data)
}

// sendDirect sends a request whose data is the program's contiguous
// buffer. A long one goes as a header message holding the layout and a
// body of the data alone, sent from the buffer with no copy: the body's
// send stays in the peer's sends until it completes, and the calls that
// complete operations locally (flush_local, and every one that completes
// them remotely) wait for it. A short one, or one whose layout does not
// fit a header message, is copied into one message (send).
func (w *window) sendDirect(t int, h header, tt *dtInfo, data []byte) C.int {
	nseg := int64(len(tt.segs))
	if hdrSize+32*nseg+int64(len(data)) <= hdrMax || hdrSize+32*nseg > hdrMax {
		return w.send(t, h, tt, data)
	}
	h.extent, h.wire, h.nseg, h.data = tt.extent(), tt.wire, nseg, int64(len(data))
	h.body, h.split = true, true
	msg := make([]byte, hdrSize+32*nseg)
	putSegs(msg[hdrSize:], tt)
	h.encode(msg)
	if rc := w.post(t, tagHdr, msg); rc != 0 {
		return rc
	}
	q, err := mpiapi.IsendBytes(w.c, data, reduce.Uint8, t, tagBody)
	if err != nil {
		return w.failErr(err)
	}
	w.peers[t].sends = append(w.peers[t].sends, q)
	inFlight++
	return 0
}

// inFlight counts the requests the operations hold (every window's
// results to come, bodies being sent from the program's buffers, and
// copied messages over the inline size being sent, see post): each holds
// one of the rank's request slots. At inFlightMax an operation that
// needs another waits, serving requests meanwhile, until half of them have
// completed, so that an epoch of any number of Gets or long Puts does not
// exhaust the slots (a target serves them whenever it is in an MPI call,
// as a flush would need).
var inFlight int

const inFlightMax = 1024

func (w *window) throttle(call string) C.int {
	if inFlight < inFlightMax {
		return 0
	}
	return w.wait(call, func() bool { return inFlight < inFlightMax/2 })
}

// putSegs writes the segments of tt (32 bytes each) into b.
func putSegs(b []byte, tt *dtInfo) {
	for i, s := range tt.segs {
		e := b[32*i:]
		le.PutUint64(e, uint64(s.off))
		le.PutUint64(e[8:], uint64(s.len))
		le.PutUint64(e[16:], uint64(s.n))
		le.PutUint64(e[24:], uint64(s.stride))
	}
}

// postResult posts the receive of a result from target t into res.
func (w *window) postResult(call string, t int, res rmaBuf, shared bool) (rmaResult, C.int) {
	var buf []byte
	r := rmaResult{shared: shared, want: res.bytes}
	switch {
	case res.bytes == 0:
	case res.t.info.contig:
		buf = unsafe.Slice((*byte)(unsafe.Add(res.p, res.t.info.trueLB)), res.bytes)
	default:
		buf = takePack(int(res.bytes))
		r.pack = buf
		r.done = func() {
			res.t.info.unpack(res.p, buf, res.count)
			givePack(buf)
		}
	}
	q, err := mpiapi.IrecvBytes(w.c, buf, reduce.Uint8, t, tagResult)
	if err != nil {
		return r, w.failErr(err)
	}
	r.r = q
	return r, 0
}

// send sends a request (header, the target layout tt, data) to rank t.
func (w *window) send(t int, h header, tt *dtInfo, data []byte) C.int {
	if tt != nil {
		h.extent, h.wire, h.nseg = tt.extent(), tt.wire, int64(len(tt.segs))
	}
	h.data = int64(len(data))
	n := hdrSize + 32*h.nseg + h.data
	msg := make([]byte, n)
	if tt != nil {
		putSegs(msg[hdrSize:], tt)
	}
	copy(msg[hdrSize+32*h.nseg:], data)
	if n > hdrMax {
		h.body = true
	}
	h.encode(msg)
	if !h.body {
		return w.post(t, tagHdr, msg)
	}
	if rc := w.post(t, tagHdr, msg[:hdrSize:hdrSize]); rc != 0 {
		return rc
	}
	return w.post(t, tagBody, msg[hdrSize:])
}

// post sends msg to t and lets it go (the request keeps msg alive). A
// message up to the inline size is copied into the target's ring and its
// request completes at once; a longer one holds a request slot until the
// target takes it, so an origin's request is kept in the peer's posted
// list, counted in inFlight and retired by pollResults (the caller
// throttles, see send). A target's result is freed at once like a short
// message: its origin has the receive for it posted, so it completes
// without this side polling (the target may serve thousands of them from
// inside one fence, where nothing polls its posted lists).
func (w *window) post(t, tag int, msg []byte) C.int {
	if postHook != nil {
		postHook(t, tag, msg)
		return 0
	}
	q, err := mpiapi.IsendBytes(w.c, msg, reduce.Uint8, t, tag)
	if err != nil {
		return w.failErr(err)
	}
	if tag == tagResult || int64(len(msg)) <= inlineMax() {
		return w.failErr(q.Free())
	}
	w.peers[t].posted = append(w.peers[t].posted, q)
	inFlight++
	return 0
}

// postHook, set by unit tests only, takes what post would send.
var postHook func(t, tag int, msg []byte)

// inlineMax is the size up to which a send is copied into the target's
// ring at once (shm.Geometry.InlineMax).
func inlineMax() int64 {
	if g, ok := mpiapi.Geometry(); ok {
		return int64(g.InlineMax)
	}
	return 0
}

// control sends a message with no layout or data.
func (w *window) control(t int, op uint8, excl bool) C.int {
	h := header{op: op}
	if excl {
		h.excl = 1
	}
	return w.send(t, h, nil, nil)
}

// access checks that an access epoch to t is open.
func (w *window) access(call string, t int) C.int {
	if w.fence || w.locks[t] != lockNone {
		return 0
	}
	if w.started {
		for _, r := range w.startGroup {
			if r == t {
				return 0
			}
		}
	}
	return w.fail(call, errRMASync, "no access epoch to rank %d is open on this window; open one with MPI_Win_fence, MPI_Win_start (with a group that holds it), MPI_Win_lock or MPI_Win_lock_all", t)
}

// inRange checks, for a window whose size the origin knows, that count
// items of the target datatype at target_disp lie inside rank t's window.
func (w *window) inRange(call string, t int, disp int64, tt rmaBuf) C.int {
	if w.sizes[t] < 0 || tt.count == 0 {
		return 0
	}
	lo, hi := tt.t.info.span(tt.count)
	off, ok := mulCheck(disp, w.units[t])
	if ok && within(off, maxTypeBound) && off+lo >= 0 && off+hi <= w.sizes[t] {
		return 0
	}
	return w.fail(call, errRMARange, "target_disp = %d (disp_unit %d) with target_count = %d of %s touches bytes [%d, %d) of rank %d's window, which has %d bytes",
		disp, w.units[t], tt.count, tt.t.name, off+lo, off+hi, t, w.sizes[t])
}

// ---- the target side ----

// rmaProgress serves every window's incoming requests and completes its
// results. It runs at the start of every call of this library and inside
// every blocking wait of mpiapi (mpiapi.SetProgress); it never blocks.
func rmaProgress() {
	if inRMAProgress {
		return
	}
	inRMAProgress = true
	mpiapi.Quiet(true) // the MMDS records the program's calls, not this
	for _, w := range wins {
		if w.live && w.c != nil && !w.closing {
			w.progress()
		}
	}
	mpiapi.Quiet(false)
	inRMAProgress = false
}

var inRMAProgress bool

func (w *window) progress() {
	for again := true; again; {
		w.regrant = false
		for r := range w.peers {
			if r == w.rank {
				continue
			}
			w.drain(r)
			w.pollResults(r)
		}
		again = w.regrant // a lock was granted to an origin drained before
	}
}

// drain serves the requests from rank r that have arrived, in order. Each
// header taken reposts its receive at once; a request with a body waits in
// the peer's queue for it (its body receive posted at once too, so the
// bodies of several requests arrive together), and so do the requests
// behind it, as everything while the peer's lock request waits.
func (w *window) drain(r int) {
	p := &w.peers[r]
	for len(p.ring) > 0 && p.ring[p.head] != nil { // nil: withdrawn (MPI_Win_free) or failed
		j := p.head
		done, st, err := mpiapi.Poll(p.ring[j], true)
		if !done {
			break
		}
		if st.Cancelled() {
			p.ring[j] = nil
			break
		}
		buf := p.bufs[j][:min(st.Bytes(), hdrMax)]
		h, ok := decodeHeader(buf)
		it := queued{h: h}
		switch {
		case err != nil:
			it.h = header{} // not read: whether it fetches is unknown
			it.class, it.msg = errOther, fmt.Sprintf("a request from rank %d failed: %v", r, err)
		case !ok:
			it.h = header{}
			it.class, it.msg = errIntern, fmt.Sprintf("a request from rank %d has %d bytes, fewer than a header's %d", r, len(buf), hdrSize)
		case h.body:
			n, ok := h.rest()
			if !ok || h.split && int64(len(buf)) != hdrSize+32*h.nseg {
				it.class, it.msg = errIntern, fmt.Sprintf("a request from rank %d announces a body of %d segments and %d bytes", r, h.nseg, h.data)
				break
			}
			into := []byte(nil)
			if h.split {
				// The layout came with the header; the body is the data.
				segs := buf[hdrSize:]
				if h.op == opPut && !p.held && allDirect(p.queue) {
					into = w.directTarget(h, segs) // the window's memory
					it.direct = into != nil
				}
				if into == nil {
					it.rest = make([]byte, n)
					copy(it.rest, segs)
					into = it.rest[32*h.nseg:]
				}
			} else {
				it.rest = make([]byte, n)
				into = it.rest
			}
			if it.body, err = mpiapi.IrecvBytes(w.c, into, reduce.Uint8, r, tagBody); err != nil {
				it.class, it.msg = errOther, fmt.Sprintf("cannot receive the body of a request from rank %d: %v", r, err)
			}
		case len(p.queue) == 0 && !p.held:
			w.serve(r, h, buf[hdrSize:]) // the common case: nothing waits before it
			it.served = true
		default:
			it.rest = bytes.Clone(buf[hdrSize:])
		}
		if !it.served {
			p.queue = append(p.queue, it)
		}
		q, err := mpiapi.IrecvBytes(w.c, p.bufs[j], reduce.Uint8, r, tagHdr)
		if err != nil {
			p.ring[j] = nil
			w.refuse(r, errOther, fmt.Sprintf("cannot receive requests from rank %d: %v", r, err))
			break
		}
		p.ring[j] = q
		p.head = (j + 1) % len(p.ring)
	}
	for len(p.queue) > 0 && !p.held {
		it := &p.queue[0]
		if it.body != nil {
			done, st, err := mpiapi.Poll(it.body, true)
			if !done {
				return
			}
			it.body = nil
			switch {
			case err != nil:
				it.class, it.msg = errOther, fmt.Sprintf("the body of a request from rank %d failed: %v", r, err)
			case it.direct && int64(st.Bytes()) != it.h.data:
				it.class, it.msg = errType, fmt.Sprintf("a put from rank %d announced %d bytes and sent %d", r, it.h.data, st.Bytes())
			case it.direct:
				// Received straight into the window: applied.
				p.queue[0] = queued{}
				p.queue = p.queue[1:]
				continue
			case it.h.split: // the layout, then the data received
				it.rest = it.rest[:min(32*int(it.h.nseg)+st.Bytes(), len(it.rest))]
			default:
				it.rest = it.rest[:min(st.Bytes(), len(it.rest))]
			}
		}
		h, rest, class, msg := it.h, it.rest, it.class, it.msg
		p.queue[0] = queued{}
		p.queue = p.queue[1:]
		if class != 0 {
			w.refuseFetch(r, h, class, msg)
			continue
		}
		w.serve(r, h, rest)
	}
}

// queued is a request taken from a peer's stream and not yet served.
type queued struct {
	h      header
	rest   []byte          // layout and data
	body   *mpiapi.Request // the body's receive, until it completes
	class  int             // a request that failed: refused in its turn
	msg    string
	served bool
	direct bool // a put whose body is received straight into the window's memory
}

// allDirect tells whether every request in q is a put received straight
// into the window: a put behind them may be too (puts from one origin are
// not ordered among themselves), but not one behind anything else (a lock
// request, an unlock, an accumulate), which must take effect first.
func allDirect(q []queued) bool {
	for i := range q {
		if !q[i].direct {
			return false
		}
	}
	return true
}

// directTarget is the window memory a put's body may be received into
// straight away: the put's target layout (segs, from its header message)
// is contiguous, lies inside the window and covers the announced data; or
// nil (the body goes through a buffer, and serve checks and applies it).
// The caller makes sure nothing but such puts from the origin waits before
// it (allDirect).
func (w *window) directTarget(h header, segs []byte) []byte {
	if h.data <= 0 {
		return nil
	}
	tt, _ := layout(h, segs)
	if tt == nil || !tt.contig {
		return nil
	}
	if total, ok := mulCheck(h.count, tt.wire); !ok || total != h.data {
		return nil
	}
	addr, class, _ := w.target(h, tt)
	if class != 0 || addr == nil {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Add(addr, tt.trueLB)), h.data)
}

// rest is the bytes of a request after its header, if they are in bounds.
func (h header) rest() (int64, bool) {
	if h.nseg < 0 || h.nseg > maxSegs || h.data < 0 || h.data > maxTypeBytes {
		return 0, false
	}
	return 32*h.nseg + h.data, true
}

// pollResults completes the results from rank r that have arrived.
func (w *window) pollResults(r int) {
	p := &w.peers[r]
	keep := p.results[:0]
	for _, res := range p.results {
		done, st, err := mpiapi.Poll(res.r, !res.shared)
		if done && err == nil && res.want > 0 && st.Count() == 0 {
			p.errs++ // a refusal's empty result: its report is due (refuseFetch)
		}
		switch {
		case !done:
			keep = append(keep, res)
		case err != nil && !res.shared:
			w.deferErr(errOther, err.Error())
		case res.done != nil:
			res.done()
		}
		if done && w.locks[r] != lockNone {
			// Sent after the lock request, which the target granted
			// before serving anything behind it: a direct operation
			// may follow (rmadirect.go).
			p.confirmed = true
		}
	}
	inFlight -= len(p.results) - len(keep)
	clear(p.results[len(keep):])
	p.results = keep
	p.sends = w.retireSends(p.sends)
	p.posted = w.retireSends(p.posted)
}

// retireSends polls the sends qs (each counted in inFlight) and returns
// those still pending; the others give their slot and count back, an
// error being kept for the window's next synchronisation.
func (w *window) retireSends(qs []*mpiapi.Request) []*mpiapi.Request {
	keep := qs[:0]
	for _, q := range qs {
		done, _, err := mpiapi.Poll(q, true)
		switch {
		case !done:
			keep = append(keep, q)
		case err != nil:
			w.deferErr(errOther, err.Error())
		}
	}
	inFlight -= len(qs) - len(keep)
	clear(qs[len(keep):])
	return keep
}

// refuse reports a refused request to its origin (which raises it at its
// next synchronisation call), or keeps it when the origin is this rank.
func (w *window) refuse(origin int, class int, msg string) {
	if origin == w.rank || w.c == nil {
		w.deferErr(class, msg)
		return
	}
	w.send(origin, header{op: opErr, red: uint8(class)}, nil, []byte(msg))
}

func (w *window) deferErr(class int, msg string) {
	if w.deferred == "" {
		w.deferred, w.defClass = msg, class
	}
}

// serve carries out a request from origin (another member).
func (w *window) serve(origin int, h header, rest []byte) {
	if n, ok := h.rest(); !ok || n != int64(len(rest)) {
		w.refuseFetch(origin, h, errIntern, fmt.Sprintf("a request from rank %d has %d bytes after its header, its header says %d segments and %d bytes", origin, len(rest), h.nseg, h.data))
		return
	}
	data := rest[32*h.nseg:]
	switch h.op {
	case opAck:
		p := &w.peers[origin]
		p.acks--
		if p.released > 0 {
			p.released-- // an unlock's not waited for (unlock): before any later lock's grant
			return
		}
		if w.locks[origin] != lockNone {
			p.confirmed = true // behind the lock request: granted
		}
		return
	case opPost:
		w.posts[origin]++
		return
	case opDone:
		w.completes++
		return
	case opErr:
		if h.excl == 1 {
			w.peers[origin].errs-- // its empty result came, or will
		}
		w.deferErr(int(h.red), string(data))
		return
	case opLock:
		if !w.acquire(origin, h.excl == 1) {
			w.peers[origin].held = true // nothing more from origin until granted
		}
		return
	case opUnlock:
		w.control(origin, opAck, false) // before any grant: the origin's unlock is done
		w.release(origin, h.excl == 1)
		return
	case opFlush:
		w.control(origin, opAck, false)
		return
	}
	tt, msg := layout(h, rest[:32*h.nseg])
	if tt == nil {
		w.refuseFetch(origin, h, errIntern, fmt.Sprintf("a request from rank %d: %s", origin, msg))
		return
	}
	class, msg := w.apply(origin, h, tt, data, func(b []byte) {
		w.post(origin, tagResult, b)
	})
	if class != 0 {
		w.refuseFetch(origin, h, class, msg)
	}
}

// refuseFetch refuses request h; a fetching one also gets an empty result,
// so that the origin's receive of it completes and its synchronisation
// call raises the error (it waited for the result forever: a Get outside
// a dynamic window's regions hung its flush). Every refusal of a request
// whose header was read goes through it; a request whose header could not
// be read (h zero) gets no result, since whether it fetches is unknown.
func (w *window) refuseFetch(origin int, h header, class int, msg string) {
	fetching := h.op == opGet || h.op == opGetAcc || h.op == opCAS
	if fetching && origin != w.rank && w.c != nil {
		// The report says an empty result follows (excl 1): the two
		// travel on different streams, so the origin waits for the
		// report when the result comes first (winPeer.errs).
		w.send(origin, header{op: opErr, red: uint8(class), excl: 1}, nil, []byte(msg))
	} else {
		w.refuse(origin, class, msg)
	}
	if fetching {
		w.post(origin, tagResult, nil)
	}
}

// layout rebuilds a target datatype from a request's segments, checking
// that they are within bcsmpi's bounds.
func layout(h header, b []byte) (*dtInfo, string) {
	if h.count < 0 || h.count > maxTypeBytes || !within(h.extent, maxTypeBytes) || h.wire < 0 || h.wire > maxTypeBytes {
		return nil, fmt.Sprintf("count %d, extent %d or wire bytes %d out of bounds", h.count, h.extent, h.wire)
	}
	t := &dtInfo{ub: h.extent, wire: h.wire, segs: make([]seg, h.nseg), committed: true}
	var sum int64
	for i := range t.segs {
		s := seg{int64(le.Uint64(b[32*i:])), int64(le.Uint64(b[32*i+8:])), int64(le.Uint64(b[32*i+16:])), int64(le.Uint64(b[32*i+24:]))}
		if !within(s.off, maxTypeBound) || s.len < 0 || s.len > maxTypeBytes || s.n < 0 || s.n > maxTypeBytes || !within(s.stride, maxTypeBound) {
			return nil, fmt.Sprintf("segment %d (%+v) out of bounds", i, s)
		}
		run, ok := mulCheck(s.len, s.n)
		span, ok2 := mulCheck(max(s.n-1, 0), s.stride)
		if !ok || !ok2 || !within(span, maxTypeBound) {
			return nil, fmt.Sprintf("segment %d (%+v) out of bounds", i, s)
		}
		sum += run
		if sum > maxTypeBytes {
			return nil, "segments longer than bcsmpi's bound"
		}
		t.segs[i] = s
		lo, hi := s.off+min(0, span), s.off+max(0, span)+s.len
		if i == 0 || lo < t.trueLB {
			t.trueLB = lo
		}
		if i == 0 || hi > t.trueUB {
			t.trueUB = hi
		}
	}
	if sum != h.wire {
		return nil, fmt.Sprintf("segments of %d bytes, wire bytes %d", sum, h.wire)
	}
	t.contig = len(t.segs) == 1 && t.segs[0].n == 1 && t.segs[0].len == t.wire && t.wire == t.extent() && t.segs[0].off == t.trueLB
	if total, ok := mulCheck(h.count, h.wire); !ok || total > maxTypeBytes {
		return nil, fmt.Sprintf("%d items of %d bytes out of bounds", h.count, h.wire)
	}
	if span, ok := mulCheck(h.count, h.extent); !ok || !within(span, maxTypeBound) {
		return nil, fmt.Sprintf("%d items of extent %d out of bounds", h.count, h.extent)
	}
	return t, ""
}

// target is the address of count items of tt at disp in this rank's window
// memory, or a class and message when they do not lie inside it.
func (w *window) target(h header, tt *dtInfo) (unsafe.Pointer, int, string) {
	lo, hi := tt.span(int(h.count))
	if h.count == 0 || tt.wire == 0 {
		// Moves no bytes: allowed at any displacement, in every flavor
		// (MPICH does nothing for a transfer of no data; Open MPI for a
		// count of 0), and apply touches nothing.
		return nil, 0, ""
	}
	if w.flavor == flavorDynamic {
		// The address comes from another process: a+lo and a+hi are
		// computed without wrapping, and one that would wrap lies in no
		// region.
		a := uint64(h.disp)
		if inRegion(a, lo, hi, w.regions) {
			return unsafe.Add(unsafe.Pointer(nil), a), 0, "" // an address the program attached
		}
		return nil, errRMARange, fmt.Sprintf("target_disp = 0x%x with %d items touches bytes [%d, %d) from it, which no region attached to rank %d's dynamic window holds", a, h.count, lo, hi, w.rank)
	}
	off, ok := mulCheck(h.disp, w.unit)
	if !ok || !within(off, maxTypeBound) || off+lo < 0 || off+hi > w.bytes {
		return nil, errRMARange, fmt.Sprintf("target_disp = %d (disp_unit %d) with %d items touches bytes [%d, %d) of rank %d's window, which has %d bytes", h.disp, w.unit, h.count, off+lo, off+hi, w.rank, w.bytes)
	}
	return unsafe.Add(w.base, off), 0, ""
}

// inRegion tells whether the bytes [a+lo, a+hi) are all attached: they lie
// inside the union of regions ([base, end) each), so one access may span
// regions attached back to back (MPICH's test suite expects it; the standard
// does not restrict an access to one region); lo <= hi. An empty range is in
// at any address (target does not ask: an access of no bytes is allowed
// anywhere, in every flavor). The sums are exact:
// a range that would wrap around the address space lies in no region.
func inRegion(a uint64, lo, hi int64, regions [][2]uint64) bool {
	first, ok := addrAdd(a, lo)
	end, ok2 := addrAdd(a, hi)
	if !ok || !ok2 {
		return false
	}
	// Regions do not overlap (MPI_Win_attach refuses it): each step moves
	// first to the end of the region holding it, so at most len(regions)
	// steps.
	for first < end {
		next := first
		for _, r := range regions {
			if first >= r[0] && first < r[1] {
				next = r[1]
				break
			}
		}
		if next == first {
			return false
		}
		first = next
	}
	return true
}

// addrAdd is a+d, and false when it is outside [0, 2^64).
func addrAdd(a uint64, d int64) (uint64, bool) {
	if d >= 0 {
		s, carry := bits.Add64(a, uint64(d), 0)
		return s, carry == 0
	}
	s, borrow := bits.Sub64(a, uint64(-d), 0) // uint64(-d) is |d|, MinInt64 included
	return s, borrow == 0
}

// apply carries out a data operation on this rank's window memory; reply
// receives the result of a fetching one.
func (w *window) apply(origin int, h header, tt *dtInfo, data []byte, reply func([]byte)) (int, string) {
	addr, class, msg := w.target(h, tt)
	if class != 0 {
		return class, msg
	}
	count := int(h.count)
	n := int(h.count * tt.wire)
	if n == 0 && (h.op == opPut || h.op == opGet || h.op == opAcc || h.op == opGetAcc) {
		// No bytes (target returned no address): nothing to touch.
		if len(data) != 0 {
			return errType, fmt.Sprintf("an operation of %d bytes on no bytes of the target", len(data))
		}
		if h.op == opGet || h.op == opGetAcc {
			reply(nil)
		}
		return 0, ""
	}
	switch h.op {
	case opPut:
		if len(data) != n {
			return errType, fmt.Sprintf("a put of %d bytes into %d bytes of the target", len(data), n)
		}
		tt.unpack(addr, data, count)
	case opGet:
		b := make([]byte, n)
		tt.pack(b, addr, count)
		reply(b)
	case opAcc, opGetAcc, opCAS:
		if h.op == opCAS && len(data) != 2*n {
			return errType, fmt.Sprintf("a compare-and-swap of %d bytes on %d bytes of the target", len(data), n)
		}
		var cur []byte
		if h.elem == elemC {
			cur = aligned16(n)
		} else {
			cur = make([]byte, n)
		}
		// Under this rank's accumulate lock, which the node's other ranks
		// take too when they apply one here themselves (rmadirect.go).
		lk := ownAccLock()
		if lk != nil {
			mpiapi.LockWord(lk)
		}
		tt.pack(cur, addr, count)
		var old []byte
		if h.op != opAcc {
			old = bytes.Clone(cur)
		}
		write, class, msg := combine(h, cur, data) // rmadirect.go
		if write && class == 0 {
			tt.unpack(addr, cur, count)
		}
		if lk != nil {
			mpiapi.UnlockWord(lk)
		}
		if h.op != opAcc {
			reply(old)
		}
		if class != 0 {
			return class, msg
		}
	default:
		return errIntern, fmt.Sprintf("request of unknown operation %d from rank %d", h.op, origin)
	}
	return 0, ""
}

// aligned16 is n zero bytes starting on a 16-byte boundary (long double and
// the complex types, for shim_ops.c's functions).
func aligned16(n int) []byte {
	b := make([]byte, n+15)
	off := int((16 - uintptr(unsafe.Pointer(unsafe.SliceData(b)))%16) % 16)
	return b[off : off+n : off+n]
}

// reduceC reduces data into cur, both packed elements of the predefined
// datatype h.ctype, with shim_ops.c's function for h.red (elemC).
func reduceC(h header, cur, data []byte) string {
	bt := predefinedType(uintptr(h.ctype))
	op, ok := opOfRed[h.red]
	var fn unsafe.Pointer
	if bt != nil && ok {
		fn = C.bcs_builtin_op(C.uintptr_t(bt.h), C.uintptr_t(op))
	}
	switch {
	case fn == nil:
		return fmt.Sprintf("operation %d on datatype %#x: no reduction", h.red, h.ctype)
	case bt.wire == 0 || len(cur)%int(bt.wire) != 0 || len(cur)/int(bt.wire) > math.MaxInt32:
		return fmt.Sprintf("an accumulate of %d bytes of %s", len(cur), bt.name)
	}
	n := C.int(len(cur) / int(bt.wire))
	if ext := bt.ub - bt.lb; bt.pair == bt && ext != bt.wire {
		// A pair with padding (MPI_LONG_DOUBLE_INT) moves packed; the C
		// function works on its C layout: expand both, reduce, pack back.
		in, io := aligned16(int(n)*int(ext)), aligned16(int(n)*int(ext))
		bt.unpack(unsafe.Pointer(unsafe.SliceData(in)), data, int(n))
		bt.unpack(unsafe.Pointer(unsafe.SliceData(io)), cur, int(n))
		C.bcs_call_op(fn, unsafe.Pointer(unsafe.SliceData(in)), unsafe.Pointer(unsafe.SliceData(io)), &n, C.uintptr_t(bt.h))
		bt.pack(cur, unsafe.Pointer(unsafe.SliceData(io)), int(n))
		return ""
	}
	in := aligned16(len(data))
	copy(in, data)
	C.bcs_call_op(fn, unsafe.Pointer(unsafe.SliceData(in)), unsafe.Pointer(unsafe.SliceData(cur)), &n, C.uintptr_t(bt.h))
	return ""
}
