package main

/*
#include "shim.h"
*/
import "C"

import (
	"unsafe"

	"github.com/bcsmpi/bcsmpi/mpiapi"
)

// ops maps the predefined operation handles to mpiapi's operations.
var ops = map[uintptr]*mpiapi.Op{
	0x21: mpiapi.Sum, 0x22: mpiapi.Min, 0x23: mpiapi.Max, 0x24: mpiapi.Prod,
	0x28: mpiapi.Band, 0x29: mpiapi.Bor, 0x2a: mpiapi.Bxor,
	0x30: mpiapi.Land, 0x31: mpiapi.Lor, 0x32: mpiapi.Lxor,
	0x38: mpiapi.Minloc, 0x39: mpiapi.Maxloc,
}

// dtype is a resolved predefined datatype.
type dtype struct {
	h      uintptr
	name   string
	size   int
	extent int
	kind   int
}

// datatype resolves a datatype handle; what names the argument.
func datatype(ci int, call, what string, h uintptr) (dtype, C.int) {
	t := C.bcs_type_of(C.uintptr_t(h))
	if t == nil {
		if h == hTypeNull {
			return dtype{}, fail(ci, call, errType, "%s = MPI_DATATYPE_NULL, want a datatype such as MPI_INT", what)
		}
		return dtype{}, fail(ci, call, errType, "%s = %s is not a predefined datatype (derived datatypes are not implemented yet)", what, describe(h))
	}
	return dtype{h: h, name: C.GoString(t.name), size: int(t.size), extent: int(t.extent), kind: int(t.kind)}, 0
}

// buffer checks a (buf, count, datatype) triple and returns the bytes it spans.
func buffer(ci int, call, what string, p unsafe.Pointer, count C.int, t dtype) ([]byte, C.int) {
	if count < 0 {
		return nil, fail(ci, call, errCount, "count = %d, want >= 0", int(count))
	}
	if uintptr(p) == hInPlace {
		return nil, fail(ci, call, errBuffer, "%s = MPI_IN_PLACE is not allowed here", what)
	}
	if p == nil {
		if count > 0 {
			return nil, fail(ci, call, errBuffer, "%s = NULL with count = %d", what, int(count))
		}
		return nil, 0
	}
	return unsafe.Slice((*byte)(p), int(count)*t.extent), 0
}

// collective runs the collectives of one element type: the predefined
// datatype's elements are handed to mpiapi as a []T over the C buffer, so
// the runtime checks element types and counts across members and reduces
// with the type's arithmetic.
type collective interface {
	bcast(c *mpiapi.Comm, buf unsafe.Pointer, n, root int) error
	reduce(c *mpiapi.Comm, send, recv unsafe.Pointer, n int, op *mpiapi.Op, root int, all bool) error
	blocks(which int, c *mpiapi.Comm, send, recv unsafe.Pointer, sendLen, recvLen, root int) error
}

type elems[T mpiapi.Elem] struct{}

func slice[T any](p unsafe.Pointer, n int) []T {
	if p == nil {
		return nil
	}
	return unsafe.Slice((*T)(p), n)
}

func (elems[T]) bcast(c *mpiapi.Comm, buf unsafe.Pointer, n, root int) error {
	return mpiapi.Bcast(c, slice[T](buf, n), root)
}

func (elems[T]) reduce(c *mpiapi.Comm, send, recv unsafe.Pointer, n int, op *mpiapi.Op, root int, all bool) error {
	s, r := slice[T](send, n), slice[T](recv, n)
	if all {
		return mpiapi.Allreduce(c, s, r, op)
	}
	return mpiapi.Reduce(c, s, r, op, root)
}

func (elems[T]) blocks(which int, c *mpiapi.Comm, send, recv unsafe.Pointer, sendLen, recvLen, root int) error {
	s, r := slice[T](send, sendLen), slice[T](recv, recvLen)
	switch which {
	case C.BCS_GATHER:
		return mpiapi.Gather(c, s, r, root)
	case C.BCS_SCATTER:
		return mpiapi.Scatter(c, s, r, root)
	case C.BCS_ALLGATHER:
		return mpiapi.Allgather(c, s, r)
	default:
		return mpiapi.Alltoall(c, s, r)
	}
}

// kinds maps an element kind (shim.h) to its collectives.
var kinds = [C.BCS_NKINDS]collective{
	C.BCS_I8: elems[int8]{}, C.BCS_U8: elems[uint8]{}, C.BCS_I16: elems[int16]{}, C.BCS_U16: elems[uint16]{},
	C.BCS_I32: elems[int32]{}, C.BCS_U32: elems[uint32]{}, C.BCS_I64: elems[int64]{}, C.BCS_U64: elems[uint64]{},
	C.BCS_F32: elems[float32]{}, C.BCS_F64: elems[float64]{},
	C.BCS_F32I: elems[mpiapi.ValIdx[float32]]{}, C.BCS_F64I: elems[mpiapi.ValIdx[float64]]{},
	C.BCS_I32I: elems[mpiapi.ValIdx[int32]]{}, C.BCS_I64I: elems[mpiapi.ValIdx[int64]]{},
}

// collectiveOf is the collective implementation of t, or an error.
func collectiveOf(ci int, call string, t dtype) (collective, C.int) {
	if k := kinds[t.kind]; k != nil {
		return k, 0
	}
	return nil, fail(ci, call, errType, "datatype %s is not supported in collectives yet (point-to-point only)", t.name)
}
