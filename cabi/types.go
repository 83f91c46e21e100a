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
	run(a *collArgs) (*mpiapi.Request, error)
	// userOp makes the mpiapi operation that applies the C function fn
	// to elements of datatype dt.
	userOp(name string, fn unsafe.Pointer, dt uintptr, commute bool) *mpiapi.Op
}

func (elems[T]) userOp(name string, fn unsafe.Pointer, dt uintptr, commute bool) *mpiapi.Op {
	return mpiapi.NewOp(name, func(in, inout []T) {
		if len(in) == 0 {
			return
		}
		n := C.int(len(in))
		C.bcs_call_op(fn, unsafe.Pointer(&in[0]), unsafe.Pointer(&inout[0]), &n, C.uintptr_t(dt))
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
	op         *mpiapi.Op
	root       int
	counts     []int // v-variants: the receive (Gatherv, Allgatherv, Alltoallv) or send (Scatterv) counts; Reduce_scatter
	displs     []int
	scounts    []int // Alltoallv
	sdispls    []int
}

type elems[T mpiapi.Elem] struct{}

func slice[T any](p unsafe.Pointer, n int) []T {
	if p == nil {
		return nil
	}
	return unsafe.Slice((*T)(p), n)
}

// blocking adapts a blocking call to run's result.
func blocking(err error) (*mpiapi.Request, error) { return nil, err }

func (elems[T]) run(a *collArgs) (*mpiapi.Request, error) {
	s, r, c, nb := slice[T](a.send, a.sendLen), slice[T](a.recv, a.recvLen), a.c, a.nb
	switch a.which {
	case C.BCS_BCAST:
		if nb {
			return mpiapi.Ibcast(c, s, a.root)
		}
		return blocking(mpiapi.Bcast(c, s, a.root))
	case C.BCS_REDUCE:
		if nb {
			return mpiapi.Ireduce(c, s, r, a.op, a.root)
		}
		return blocking(mpiapi.Reduce(c, s, r, a.op, a.root))
	case C.BCS_ALLREDUCE:
		if nb {
			return mpiapi.Iallreduce(c, s, r, a.op)
		}
		return blocking(mpiapi.Allreduce(c, s, r, a.op))
	case C.BCS_SCAN:
		if nb {
			return mpiapi.Iscan(c, s, r, a.op)
		}
		return blocking(mpiapi.Scan(c, s, r, a.op))
	case C.BCS_EXSCAN:
		if nb {
			return mpiapi.Iexscan(c, s, r, a.op)
		}
		return blocking(mpiapi.Exscan(c, s, r, a.op))
	case C.BCS_REDUCE_SCATTER, C.BCS_REDUCE_SCATTER_BLOCK:
		if nb {
			return mpiapi.IreduceScatter(c, s, r, a.counts, a.op)
		}
		return blocking(mpiapi.ReduceScatter(c, s, r, a.counts, a.op))
	case C.BCS_GATHER:
		if nb {
			return mpiapi.Igather(c, s, r, a.root)
		}
		return blocking(mpiapi.Gather(c, s, r, a.root))
	case C.BCS_SCATTER:
		if nb {
			return mpiapi.Iscatter(c, s, r, a.root)
		}
		return blocking(mpiapi.Scatter(c, s, r, a.root))
	case C.BCS_ALLGATHER:
		if nb {
			return mpiapi.Iallgather(c, s, r)
		}
		return blocking(mpiapi.Allgather(c, s, r))
	case C.BCS_ALLTOALL:
		if nb {
			return mpiapi.Ialltoall(c, s, r)
		}
		return blocking(mpiapi.Alltoall(c, s, r))
	case C.BCS_GATHERV:
		if nb {
			return mpiapi.Igatherv(c, s, r, a.counts, a.displs, a.root)
		}
		return blocking(mpiapi.Gatherv(c, s, r, a.counts, a.displs, a.root))
	case C.BCS_SCATTERV:
		if nb {
			return mpiapi.Iscatterv(c, s, a.counts, a.displs, r, a.root)
		}
		return blocking(mpiapi.Scatterv(c, s, a.counts, a.displs, r, a.root))
	case C.BCS_ALLGATHERV:
		if nb {
			return mpiapi.Iallgatherv(c, s, r, a.counts, a.displs)
		}
		return blocking(mpiapi.Allgatherv(c, s, r, a.counts, a.displs))
	case C.BCS_ALLTOALLV:
		if nb {
			return mpiapi.Ialltoallv(c, s, a.scounts, a.sdispls, r, a.counts, a.displs)
		}
		return blocking(mpiapi.Alltoallv(c, s, a.scounts, a.sdispls, r, a.counts, a.displs))
	}
	panic("cabi: unknown collective")
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
