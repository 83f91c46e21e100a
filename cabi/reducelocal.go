package main

/*
#include "shim.h"
*/
import "C"

import (
	"math"
	"unsafe"

	"github.com/bcsmpi/bcsmpi/internal/reduce"
	"github.com/bcsmpi/bcsmpi/mpiapi"
)

// MPI_Reduce_local(_c) applies an operation to two local buffers:
// inoutbuf = inbuf op inoutbuf, item by item. A predefined operation runs
// the runtime's kernels (internal/reduce, the code agents reduce with) on
// the datatype's elements; a user operation is the C function, called once
// on the caller's buffers with the count and datatype. A non-contiguous
// datatype is packed into pack buffers and the result unpacked; MINLOC
// and MAXLOC see a pair type through its view (pairs.go).

// opCodes maps the predefined operation handles to the runtime's codes.
var opCodes = map[uintptr]reduce.Op{
	0x21: reduce.Sum, 0x22: reduce.Min, 0x23: reduce.Max, 0x24: reduce.Prod,
	0x28: reduce.Band, 0x29: reduce.Bor, 0x2a: reduce.Bxor,
	0x30: reduce.Land, 0x31: reduce.Lor, 0x32: reduce.Lxor,
	0x38: reduce.Minloc, 0x39: reduce.Maxloc,
}

//export bcs_reduce_local
func bcs_reduce_local(in, inout unsafe.Pointer, count C.MPI_Count, dt, op C.uintptr_t, mode C.int) C.int {
	call := pick(mode, "MPI_Reduce_local", "MPI_Reduce_local_c")
	if rc := enter(call); rc != 0 {
		return rc
	}
	t, rc := datatype(0, call, "datatype", uintptr(dt))
	if rc != 0 {
		return rc
	}
	if isLoc(uintptr(op)) { // pairs reduce in the runtime's layout (pairs.go)
		if v, ok := t.pairView(); ok {
			t = v
		}
	}
	if count < 0 {
		return fail(0, call, errCount, "count = %d, want >= 0", int64(count))
	}
	nb, e := t.info.countBytes("count", int64(count))
	if e != nil {
		return fail(0, call, e.class, "%s", e.msg)
	}
	if _, rc := operation(0, call, uintptr(op), t); rc != 0 {
		return rc
	}
	for _, b := range [...]struct {
		what string
		p    unsafe.Pointer
	}{{"inbuf", in}, {"inoutbuf", inout}} {
		if uintptr(b.p) == hInPlace {
			return fail(0, call, errBuffer, "%s = MPI_IN_PLACE is not allowed in %s", b.what, call)
		}
		if b.p == nil && nb > 0 && !t.bottom() {
			return fail(0, call, errBuffer, "%s = NULL with count = %d", b.what, int64(count))
		}
	}
	if count == 0 {
		return 0
	}
	// inbuf (IN) must not overlap inoutbuf (INOUT): the standard's rule
	// for arguments (MPI 5.0 §2.5.5); MPICH refuses it too.
	if nb > 0 {
		a, b := bounds(runsAt(nil, in, t, whole(int(count)))), bounds(runsAt(nil, inout, t, whole(int(count))))
		if mpiapi.Overlap(a.lo, a.hi-a.lo, b.lo, b.hi-b.lo) {
			from, to := max(a.lo, b.lo), min(a.hi, b.hi)
			return fail(0, call, errBuffer, "inbuf = %p and inoutbuf = %p are aliased: their data lie in [%#x, %#x) and [%#x, %#x), which share %d bytes at %#x; the two buffers of %s must not overlap", in, inout, a.lo, a.hi, b.lo, b.hi, to-from, from, call)
		}
	}
	return applyLocal(call, t, dt, op, in, inout, count, nb)
}

// applyLocal is inoutbuf = inbuf op inoutbuf for count items of t (nb
// bytes), the handles already checked. It reads no handle table that
// MPI_Op_free or MPI_Type_free clears, so a non-blocking collective's
// completion can run it after the user freed both (internb.go).
func applyLocal(call string, t dtype, dt, op C.uintptr_t, in, inout unsafe.Pointer, count C.MPI_Count, nb int64) C.int {
	code, predefined := opCodes[uintptr(op)]
	var fn unsafe.Pointer // a C function on the caller's buffers
	if !predefined {      // a user operation
		_, i, _ := splitHandle(uintptr(op))
		fn = userOps[i].fn
	} else if !t.pairs && t.info.predefined() && (t.info.kind == C.BCS_NONE || t.info.pair != nil) { // shim_ops.c
		fn = C.bcs_builtin_op(dt, op)
	}
	if fn != nil {
		if count > math.MaxInt32 {
			return fail(0, call, errCount, "count = %d, more than a user function's int len holds", int64(count))
		}
		n := C.int(count)
		C.bcs_call_op(fn, in, inout, &n, dt)
		return 0
	}
	typ := sigOfKind[t.kind]
	if err := reduce.Check(code, typ); err != nil {
		return fail(0, call, errOp, "%v", err)
	}
	n := int(count)
	if t.pairs && t.info.predefined() { // the caller's pairs are in the runtime's layout
		sz := n * typ.Size()
		reduce.Apply(code, typ, unsafe.Slice((*byte)(inout), sz), unsafe.Slice((*byte)(in), sz))
		return 0
	}
	if t.info.contig && !t.pairs {
		a := unsafe.Slice((*byte)(unsafe.Add(inout, t.info.trueLB)), nb)
		b := unsafe.Slice((*byte)(unsafe.Add(in, t.info.trueLB)), nb)
		reduce.Apply(code, typ, a, b)
		return 0
	}
	// Packed: 8-aligned for the kernels.
	words := (nb + 7) / 8
	sa, sb := make([]uint64, words), make([]uint64, words)
	a := unsafe.Slice((*byte)(unsafe.Pointer(&sa[0])), nb)
	b := unsafe.Slice((*byte)(unsafe.Pointer(&sb[0])), nb)
	t.info.pack(a, inout, n)
	t.info.pack(b, in, n)
	applyPacked(code, typ, a, b) // whole elements: nb is count packed items
	t.info.unpack(inout, a, n)
	return 0
}
