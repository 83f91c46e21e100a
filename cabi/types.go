package main

/*
#include <stdlib.h>
#include "shim.h"
*/
import "C"

import (
	"unsafe"

	"github.com/bcsmpi/bcsmpi/internal/reduce"
	"github.com/bcsmpi/bcsmpi/mpiapi"
)

// ops maps the predefined operation handles to mpiapi's operations.
var ops = map[uintptr]*mpiapi.Op{
	0x21: mpiapi.Sum, 0x22: mpiapi.Min, 0x23: mpiapi.Max, 0x24: mpiapi.Prod,
	0x28: mpiapi.Band, 0x29: mpiapi.Bor, 0x2a: mpiapi.Bxor,
	0x30: mpiapi.Land, 0x31: mpiapi.Lor, 0x32: mpiapi.Lxor,
	0x38: mpiapi.Minloc, 0x39: mpiapi.Maxloc,
}

// dtype is a committed datatype as the calls that move data see it: items
// of extent bytes in the caller's buffer, moved by the runtime as per
// elements of kind (a runtime element type, sigOfKind). A type whose basic
// elements are all of one kind moves as that kind, so the runtime still
// checks element types and counts across the members of a collective and
// reduces with the type's arithmetic; any other type moves as its packed
// bytes (C.BCS_U8, per = its wire bytes).
type dtype struct {
	h      uintptr
	name   string
	info   *dtInfo
	extent int
	kind   int
	per    int
	pairs  bool // a reduction's view of pairs in the runtime's layout (pairs.go: pairView)
}

// datatype resolves a datatype handle for a call that moves data: it must
// be committed; what names the argument.
func datatype(ci int, call, what string, h uintptr) (dtype, C.int) {
	t, rc := committedType(ci, call, what, h)
	if rc != 0 {
		return dtype{}, rc
	}
	d := dtype{h: h, name: t.describe(), info: t, extent: int(t.extent()), kind: t.kind, per: int(t.elems)}
	if d.kind == C.BCS_NONE || sigOfKind[d.kind] == 0 {
		d.kind, d.per = C.BCS_U8, int(t.wire)
	}
	return d, 0
}

// bottom reports whether a NULL buffer is MPI_BOTTOM for t: a derived
// type whose displacements are absolute addresses.
func (t dtype) bottom() bool { return !t.info.predefined() && t.info.trueLB != 0 }

// buffer checks a (buf, count, datatype) triple of a point-to-point call and
// sets the bytes the runtime moves: the caller's buffer itself when the type
// is contiguous, else a pack buffer, packed now for a send and unpacked
// by drain when a receive completes.
func (a *p2p) buffer(call, what string, p unsafe.Pointer, count C.int, t dtype, recv bool) C.int {
	return a.buffer64(call, what, p, int64(count), t, recv)
}

// buffer64 is buffer with a large count (the _c forms): a count beyond
// INT_MAX moves where its bytes are within bcsmpi's bound (countBytes).
func (a *p2p) buffer64(call, what string, p unsafe.Pointer, count int64, t dtype, recv bool) C.int {
	ci := a.ci
	if count < 0 {
		return fail(ci, call, errCount, "count = %d, want >= 0", count)
	}
	if uintptr(p) == hInPlace {
		return fail(ci, call, errBuffer, "%s = MPI_IN_PLACE is not allowed here", what)
	}
	nb, e := t.info.countBytes("count", count)
	if e != nil {
		return fail(ci, call, e.class, "%s", e.msg)
	}
	n := int(nb)
	if p == nil && n > 0 && !t.bottom() {
		return fail(ci, call, errBuffer, "%s = NULL with count = %d", what, count)
	}
	a.t, a.user, a.count, a.recv = t, p, int(count), recv
	switch {
	case n == 0:
		a.buf = nil
	case t.info.contig:
		a.buf = unsafe.Slice((*byte)(unsafe.Add(p, t.info.trueLB)), n)
	default:
		a.buf, a.packed = takePack(n), true
		a.fill()
	}
	return 0
}

// Pack buffers of point-to-point calls are reused: a call takes one and
// gives it back when it completes (a persistent request keeps its own), so
// a loop of sends with a non-contiguous datatype allocates nothing once
// warm. At most packBufsMax buffers of at most packBufBytesMax bytes are kept.
const (
	packBufsMax     = 16
	packBufBytesMax = 16 << 20
)

var packBufs [][]byte

func takePack(n int) []byte {
	for i := len(packBufs) - 1; i >= 0; i-- {
		if b := packBufs[i]; cap(b) >= n {
			packBufs[i] = packBufs[len(packBufs)-1]
			packBufs[len(packBufs)-1] = nil
			packBufs = packBufs[:len(packBufs)-1]
			return b[:n]
		}
	}
	return make([]byte, n)
}

func givePack(b []byte) {
	if cap(b) == 0 || cap(b) > packBufBytesMax {
		return
	}
	if len(packBufs) == packBufsMax { // keep the larger ones
		i := 0
		for k, s := range packBufs {
			if cap(s) < cap(packBufs[i]) {
				i = k
			}
		}
		if cap(packBufs[i]) >= cap(b) {
			return
		}
		packBufs[i] = b
		return
	}
	packBufs = append(packBufs, b)
}

// release gives a pack buffer back once the runtime is done with it (the
// call returned, or its request completed).
func (a *p2p) release() {
	if a.packed && !a.keep {
		givePack(a.buf)
	}
}

// fill packs the data of a send through a pack buffer (at every start of a persistent send).
func (a *p2p) fill() {
	if a.packed && !a.recv {
		a.t.info.pack(a.buf, a.user, a.count)
	}
}

// drain unpacks the n bytes a packed receive got.
func (a *p2p) drain(n int) {
	if a.packed && a.recv {
		a.t.info.unpack(a.user, a.buf[:min(n, len(a.buf))], a.count)
	}
}

// unpacker is what a request does when it completes: nil, or drain (a
// receive) and release the pack buffer.
func (a *p2p) unpacker() func(int) {
	if !a.packed {
		return nil
	}
	return func(n int) {
		a.drain(n)
		a.release()
	}
}

// userOp makes the mpiapi operation that applies the C function fn to
// items of datatype t: a byte-level operation (mpiapi.NewOpBytes) on the
// runtime's elements of t's kind.
func userOp(name string, fn unsafe.Pointer, t dtype, commute bool) *mpiapi.Op {
	es := int(kindSize[t.kind])
	return mpiapi.NewOpBytes(name, sigOfKind[t.kind], func(in, inout []byte) {
		if len(in) == 0 || t.per == 0 {
			return
		}
		n := C.int(len(in) / es / t.per)
		pin, pio := unsafe.Pointer(&in[0]), unsafe.Pointer(&inout[0])
		if t.info.contig && t.info.trueLB == 0 {
			C.bcs_call_op(fn, pin, pio, &n, C.uintptr_t(t.h))
			return
		}
		// The C function sees items in the type's layout: unpack both
		// operands into C memory laid out so, and pack the result back.
		// The memory covers whole items too: a C function may copy an
		// item whole, its padding with it (the pair types' functions
		// do: b[i] = a[i]).
		lo, hi := t.info.span(int(n))
		if ext := t.info.extent(); ext > 0 {
			lo, hi = min(lo, t.info.lb), max(hi, t.info.lb+int64(n)*ext)
		}
		bi, bo := C.malloc(C.size_t(hi-lo)), C.malloc(C.size_t(hi-lo))
		defer C.free(bi)
		defer C.free(bo)
		li, lio := unsafe.Add(bi, -lo), unsafe.Add(bo, -lo)
		t.info.unpack(li, in, int(n))
		t.info.unpack(lio, inout, int(n))
		C.bcs_call_op(fn, li, lio, &n, C.uintptr_t(t.h))
		t.info.pack(inout, lio, int(n))
	}, commute)
}

// collArgs is one collective call, checked and translated: buffers as
// element counts, in-place arguments resolved to mpiapi's convention (the
// send slice aliases the right part of the receive slice).
type collArgs struct {
	which      int // C.BCS_*
	nb         bool
	c          *mpiapi.Comm
	send, recv unsafe.Pointer
	sendLen    int
	recvLen    int
	t          reduce.Type // the runtime's element type of kind (set by start)
	es         int         // its bytes
	op         *mpiapi.Op
	root       int
	counts     []int // v-variants: the receive (Gatherv, Allgatherv, Alltoallv) or send (Scatterv) counts; Reduce_scatter
	displs     []int
	scounts    []int // Alltoallv
	sdispls    []int
}

// bytesAt is the n bytes at p (nil for a NULL p).
func bytesAt(p unsafe.Pointer, n int) []byte {
	if p == nil {
		return nil
	}
	return unsafe.Slice((*byte)(p), n)
}

// run runs a checked collective through mpiapi's byte-level core: the
// buffers as bytes of the runtime's elements of type a.t, the counts and
// displacements in those elements. A blocking call returns a nil request.
func (a *collArgs) run() (r *mpiapi.Request, err error) {
	s, rb, c, nb, t := bytesAt(a.send, a.sendLen*a.es), bytesAt(a.recv, a.recvLen*a.es), a.c, a.nb, a.t
	switch a.which {
	case C.BCS_REDUCE:
		if nb {
			r, err = mpiapi.IreduceBytes(c, s, rb, t, a.op, a.root)
		} else {
			err = mpiapi.ReduceBytes(c, s, rb, t, a.op, a.root)
		}
	case C.BCS_ALLREDUCE:
		if nb {
			r, err = mpiapi.IallreduceBytes(c, s, rb, t, a.op)
		} else {
			err = mpiapi.AllreduceBytes(c, s, rb, t, a.op)
		}
	case C.BCS_SCAN:
		if nb {
			r, err = mpiapi.IscanBytes(c, s, rb, t, a.op)
		} else {
			err = mpiapi.ScanBytes(c, s, rb, t, a.op)
		}
	case C.BCS_EXSCAN:
		if nb {
			r, err = mpiapi.IexscanBytes(c, s, rb, t, a.op)
		} else {
			err = mpiapi.ExscanBytes(c, s, rb, t, a.op)
		}
	case C.BCS_REDUCE_SCATTER, C.BCS_REDUCE_SCATTER_BLOCK:
		if nb {
			r, err = mpiapi.IreduceScatterBytes(c, s, rb, t, a.counts, a.op)
		} else {
			err = mpiapi.ReduceScatterBytes(c, s, rb, t, a.counts, a.op)
		}
	case C.BCS_BCAST:
		if nb {
			r, err = mpiapi.IbcastBytes(c, s, t, a.root)
		} else {
			err = mpiapi.BcastBytes(c, s, t, a.root)
		}
	case C.BCS_GATHER:
		if nb {
			r, err = mpiapi.IgatherBytes(c, s, rb, t, a.root)
		} else {
			err = mpiapi.GatherBytes(c, s, rb, t, a.root)
		}
	case C.BCS_SCATTER:
		if nb {
			r, err = mpiapi.IscatterBytes(c, s, rb, t, a.root)
		} else {
			err = mpiapi.ScatterBytes(c, s, rb, t, a.root)
		}
	case C.BCS_ALLGATHER:
		if nb {
			r, err = mpiapi.IallgatherBytes(c, s, rb, t)
		} else {
			err = mpiapi.AllgatherBytes(c, s, rb, t)
		}
	case C.BCS_ALLTOALL:
		if nb {
			r, err = mpiapi.IalltoallBytes(c, s, rb, t)
		} else {
			err = mpiapi.AlltoallBytes(c, s, rb, t)
		}
	case C.BCS_GATHERV:
		if nb {
			r, err = mpiapi.IgathervBytes(c, s, rb, t, a.counts, a.displs, a.root)
		} else {
			err = mpiapi.GathervBytes(c, s, rb, t, a.counts, a.displs, a.root)
		}
	case C.BCS_SCATTERV:
		if nb {
			r, err = mpiapi.IscattervBytes(c, s, a.counts, a.displs, rb, t, a.root)
		} else {
			err = mpiapi.ScattervBytes(c, s, a.counts, a.displs, rb, t, a.root)
		}
	case C.BCS_ALLGATHERV:
		if nb {
			r, err = mpiapi.IallgathervBytes(c, s, rb, t, a.counts, a.displs)
		} else {
			err = mpiapi.AllgathervBytes(c, s, rb, t, a.counts, a.displs)
		}
	case C.BCS_ALLTOALLV:
		if nb {
			r, err = mpiapi.IalltoallvBytes(c, s, a.scounts, a.sdispls, rb, t, a.counts, a.displs)
		} else {
			err = mpiapi.AlltoallvBytes(c, s, a.scounts, a.sdispls, rb, t, a.counts, a.displs)
		}
	default:
		panic("cabi: unknown collective")
	}
	return r, err
}
