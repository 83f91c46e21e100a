package main

/*
#include "shim.h"
*/
import "C"

import (
	"fmt"
	"unsafe"

	"github.com/bcsmpi/bcsmpi/internal/reduce"
)

// MINLOC and MAXLOC on the pair types.
//
// A pair type moves as the struct of its parts (datatype.go: pairParts):
// packed, an MPI_DOUBLE_INT is its double and its int, 12 bytes. The
// runtime reduces value-index pairs in its own layout instead
// (reduce.Float64Int, mpiapi.ValIdx: the value, then the index, padded as
// the C struct is). So a reduction with
// MPI_MINLOC or MPI_MAXLOC sees its datatype through pairView: the
// runtime's pair elements, per item as many as the item has pairs. The
// buffer of a predefined pair type is already in that layout (C lays out
// struct { double v; int i; } as Go lays out ValIdx[float64]) and goes to
// the runtime as it is; any other (a derived type of pairs) is packed and
// expanded into a pack buffer, and compressed and unpacked back
// (collectives: coll.go lowerPairs; MPI_Reduce_local; an accumulate's
// target applies packed data with applyPacked). Only reductions convert;
// everything else moves packed pairs, so a pair type matches a struct of
// its parts in point-to-point calls and in every collective that does not
// reduce.
//
// Rejected: packing pairs in the runtime's layout (16 bytes per
// MPI_DOUBLE_INT, as bcsmpi did). The packed size then differs from
// MPI_Type_size and from the packed size of a struct of the same
// signature, so MPI_Pack, MPI_Get_elements and any send received as a
// struct misplace data. Rejected too: moving pairs as bytes in reductions
// and reducing them with a Go function folded in the rank process, as a
// user operation is: MINLOC and MAXLOC would lose the runtime's reductions
// (a gather and a broadcast instead of its reduce).
//
// The pair types without a runtime element type (MPI_LONG_DOUBLE_INT,
// MPI_2REAL, MPI_2DOUBLE_PRECISION; pairKind C.BCS_NONE) reduce with the C
// functions of shim_ops.c, on the predefined type only (ops.go).

// pairView is t as the runtime's value-index pairs, for a reduction with
// MPI_MINLOC or MPI_MAXLOC, and whether t has such a view: its items are
// made of one predefined pair type that has a runtime element type.
func (t dtype) pairView() (dtype, bool) {
	p := t.info.pair
	if p == nil || p.pairKind <= C.BCS_NONE || int(p.pairKind) >= len(sigOfKind) || sigOfKind[p.pairKind] == 0 {
		return t, false
	}
	t.kind, t.per, t.pairs = p.pairKind, int(t.info.elems/2), true
	return t, true
}

// isLoc reports whether op is the handle of MPI_MINLOC or MPI_MAXLOC.
func isLoc(op uintptr) bool { return op == 0x38 || op == 0x39 }

// pairValueBytes is the size of the value of a runtime pair type; its
// index (an int32) follows in packed form, and sits at pairIndexOffset in
// the runtime's.
func pairValueBytes(e reduce.Type) int {
	switch e {
	case reduce.Float32Int, reduce.Int32Int:
		return 4
	case reduce.Float64Int, reduce.Int64Int:
		return 8
	case reduce.Int16Int:
		return 2
	}
	panic(fmt.Sprintf("cabi: %s is not a pair type", e))
}

// pairIndexOffset is where the index of a runtime pair sits: after the
// value, aligned to 4 (Go lays out ValIdx[float64] as C lays out
// struct { double v; int i; }: the index at 8, then 4 bytes of padding).
func pairIndexOffset(e reduce.Type) int { return max(pairValueBytes(e), 4) }

// packedPairBytes is the packed size of one pair of type e.
func packedPairBytes(e reduce.Type) int { return pairValueBytes(e) + 4 }

// expandPairs writes the packed pairs of packed into dst in the runtime's
// layout (padding zeroed); dst holds as many pairs.
func expandPairs(e reduce.Type, dst, packed []byte) {
	vb, pb, gb, io := pairValueBytes(e), packedPairBytes(e), e.Size(), pairIndexOffset(e)
	for k := 0; k*pb < len(packed); k++ {
		s, d := packed[k*pb:(k+1)*pb], dst[k*gb:(k+1)*gb]
		clear(d)
		copy(d, s[:vb])
		copy(d[io:io+4], s[vb:])
	}
}

// compressPairs is the reverse of expandPairs: the runtime's pairs of src
// packed into packed.
func compressPairs(e reduce.Type, packed, src []byte) {
	vb, pb, gb, io := pairValueBytes(e), packedPairBytes(e), e.Size(), pairIndexOffset(e)
	for k := 0; k*pb < len(packed); k++ {
		d, s := packed[k*pb:(k+1)*pb], src[k*gb:(k+1)*gb]
		copy(d[:vb], s[:vb])
		copy(d[vb:], s[io:io+4])
	}
}

// aligned is a zeroed buffer of n bytes aligned for every runtime element type.
func aligned(n int) []byte {
	if n == 0 {
		return nil
	}
	w := make([]uint64, (n+7)/8)
	return unsafe.Slice((*byte)(unsafe.Pointer(&w[0])), n)
}

// applyPacked is acc = acc op in on packed data of element type e (pairs
// packed as their parts; reduce.Check(op, e) must hold). It returns false
// when the bytes are not whole elements.
func applyPacked(op reduce.Op, e reduce.Type, acc, in []byte) bool {
	if len(acc) != len(in) {
		return false
	}
	if !e.Pair() {
		if len(acc)%e.Size() != 0 {
			return false
		}
		a, b := acc, in
		if uintptr(unsafe.Pointer(unsafe.SliceData(a)))%8 != 0 {
			a = append(aligned(len(acc))[:0], acc...)
		}
		if uintptr(unsafe.Pointer(unsafe.SliceData(b)))%8 != 0 {
			b = append(aligned(len(in))[:0], in...)
		}
		reduce.Apply(op, e, a, b)
		copy(acc, a)
		return true
	}
	pb := packedPairBytes(e)
	if len(acc)%pb != 0 {
		return false
	}
	n := len(acc) / pb
	a, b := aligned(n*e.Size()), aligned(n*e.Size())
	expandPairs(e, a, acc)
	expandPairs(e, b, in)
	reduce.Apply(op, e, a, b)
	compressPairs(e, acc, a)
	return true
}
