// Package reduce holds the element types and reduction operations the
// runtime applies in the reduce microphase, and the kernels that apply them.
// It is pure: agents call Apply on their staging buffers, mpiapi maps Go
// types to Type codes, tests use the same codes for their references.
//
// Every kernel computes acc[i] = acc[i] op in[i] element by element. A
// reduction over the members of a communicator is the left fold
// ((s0 op s1) op s2) ... in communicator rank order, whatever slice each
// member posted in: that fixed order is what makes floating-point results
// bit-identical from run to run.
package reduce

import (
	"fmt"
	"unsafe"
)

// Type is an element type.
type Type uint8

const (
	Int8 Type = iota + 1
	Int16
	Int32
	Int64
	Uint8
	Uint16
	Uint32
	Uint64
	Float32
	Float64
	// Value–index pairs for MINLOC and MAXLOC: a value followed by an int32
	// index, laid out as Go lays out struct{ Val T; Idx int32 }.
	Float32Int
	Float64Int
	Int32Int
	Int64Int
	Int16Int // appended: the codes above are fixed
	typeEnd
)

var typeNames = [...]string{"", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
	"float32", "float64", "float32-int pair", "float64-int pair", "int32-int pair", "int64-int pair", "int16-int pair"}

var typeSizes = [...]int{0, 1, 2, 4, 8, 1, 2, 4, 8, 4, 8, 8, 16, 8, 16, 8}

func (t Type) String() string {
	if t.Valid() {
		return typeNames[t]
	}
	return fmt.Sprintf("type(%d)", uint8(t))
}

// Valid reports whether t is a known type.
func (t Type) Valid() bool { return t >= 1 && t < typeEnd }

// Size is the size of one element in bytes.
func (t Type) Size() int {
	if !t.Valid() {
		return 0
	}
	return typeSizes[t]
}

// Pair reports whether t is a value–index pair.
func (t Type) Pair() bool { return t >= Float32Int && t < typeEnd }

// Integer reports whether t is an integer type.
func (t Type) Integer() bool { return t >= Int8 && t <= Uint64 }

// Op is a reduction operation.
type Op uint8

const (
	Sum Op = iota + 1
	Prod
	Min
	Max
	Land
	Lor
	Lxor
	Band
	Bor
	Bxor
	Minloc
	Maxloc
	opEnd
)

var opNames = [...]string{"", "MPI_SUM", "MPI_PROD", "MPI_MIN", "MPI_MAX", "MPI_LAND", "MPI_LOR", "MPI_LXOR",
	"MPI_BAND", "MPI_BOR", "MPI_BXOR", "MPI_MINLOC", "MPI_MAXLOC"}

func (o Op) String() string {
	if o >= 1 && o < opEnd {
		return opNames[o]
	}
	return fmt.Sprintf("op(%d)", uint8(o))
}

// Check reports whether op applies to t, with an error naming both and what
// would be valid.
func Check(op Op, t Type) error {
	if !t.Valid() {
		return fmt.Errorf("element type %d unknown", uint8(t))
	}
	switch {
	case op >= Sum && op <= Max:
		if t.Pair() {
			return fmt.Errorf("%s does not apply to %s elements; use MPI_MINLOC or MPI_MAXLOC", op, t)
		}
	case op >= Land && op <= Bxor:
		if !t.Integer() {
			return fmt.Errorf("%s does not apply to %s elements; want an integer type", op, t)
		}
	case op == Minloc || op == Maxloc:
		if !t.Pair() {
			return fmt.Errorf("%s does not apply to %s elements; want value-index pairs (mpiapi.ValIdx)", op, t)
		}
	default:
		return fmt.Errorf("operation %d unknown", uint8(op))
	}
	return nil
}

func view[T any](b []byte) []T {
	var z T
	n := len(b) / int(unsafe.Sizeof(z))
	if n == 0 {
		return nil
	}
	return unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(b))), n)
}

// Apply computes acc = acc op in, element-wise. Both must hold the same
// whole number of elements and be aligned for t; Check(op, t) must be nil.
func Apply(op Op, t Type, acc, in []byte) {
	if len(acc) != len(in) || len(acc)%t.Size() != 0 {
		panic(fmt.Sprintf("reduce: %s on %d and %d bytes of %s", op, len(acc), len(in), t))
	}
	switch t {
	case Int8:
		ints(op, view[int8](acc), view[int8](in))
	case Int16:
		ints(op, view[int16](acc), view[int16](in))
	case Int32:
		ints(op, view[int32](acc), view[int32](in))
	case Int64:
		ints(op, view[int64](acc), view[int64](in))
	case Uint8:
		ints(op, view[uint8](acc), view[uint8](in))
	case Uint16:
		ints(op, view[uint16](acc), view[uint16](in))
	case Uint32:
		ints(op, view[uint32](acc), view[uint32](in))
	case Uint64:
		ints(op, view[uint64](acc), view[uint64](in))
	case Float32:
		arith(op, view[float32](acc), view[float32](in))
	case Float64:
		arith(op, view[float64](acc), view[float64](in))
	case Float32Int:
		loc(op, view[Pair[float32]](acc), view[Pair[float32]](in))
	case Float64Int:
		loc(op, view[Pair[float64]](acc), view[Pair[float64]](in))
	case Int32Int:
		loc(op, view[Pair[int32]](acc), view[Pair[int32]](in))
	case Int64Int:
		loc(op, view[Pair[int64]](acc), view[Pair[int64]](in))
	case Int16Int:
		loc(op, view[Pair[int16]](acc), view[Pair[int16]](in))
	default:
		panic(fmt.Sprintf("reduce: type %s", t))
	}
}

type number interface {
	~int8 | ~int16 | ~int32 | ~int64 | ~uint8 | ~uint16 | ~uint32 | ~uint64 | ~float32 | ~float64
}

type integer interface {
	~int8 | ~int16 | ~int32 | ~int64 | ~uint8 | ~uint16 | ~uint32 | ~uint64
}

// Pair is the layout of a value–index element (mpiapi.ValIdx has the same).
type Pair[T number] struct {
	Val T
	Idx int32
}

func arith[T number](op Op, a, b []T) {
	b = b[:len(a)]
	switch op {
	case Sum:
		for i := range a {
			a[i] += b[i]
		}
	case Prod:
		for i := range a {
			a[i] *= b[i]
		}
	case Min:
		for i := range a {
			if b[i] < a[i] {
				a[i] = b[i]
			}
		}
	case Max:
		for i := range a {
			if b[i] > a[i] {
				a[i] = b[i]
			}
		}
	default:
		panic(fmt.Sprintf("reduce: %s on arithmetic type", op))
	}
}

func truth[T integer](v bool) T {
	if v {
		return 1
	}
	return 0
}

func ints[T integer](op Op, a, b []T) {
	b = b[:len(a)]
	switch op {
	case Land:
		for i := range a {
			a[i] = truth[T](a[i] != 0 && b[i] != 0)
		}
	case Lor:
		for i := range a {
			a[i] = truth[T](a[i] != 0 || b[i] != 0)
		}
	case Lxor:
		for i := range a {
			a[i] = truth[T]((a[i] != 0) != (b[i] != 0))
		}
	case Band:
		for i := range a {
			a[i] &= b[i]
		}
	case Bor:
		for i := range a {
			a[i] |= b[i]
		}
	case Bxor:
		for i := range a {
			a[i] ^= b[i]
		}
	default:
		arith(op, a, b)
	}
}

func loc[T number](op Op, a, b []Pair[T]) {
	b = b[:len(a)]
	switch op {
	case Minloc:
		for i := range a {
			if b[i].Val < a[i].Val || (b[i].Val == a[i].Val && b[i].Idx < a[i].Idx) {
				a[i] = b[i]
			}
		}
	case Maxloc:
		for i := range a {
			if b[i].Val > a[i].Val || (b[i].Val == a[i].Val && b[i].Idx < a[i].Idx) {
				a[i] = b[i]
			}
		}
	default:
		panic(fmt.Sprintf("reduce: %s on pairs", op))
	}
}

// Mode says what a Fold leaves in its slots.
type Mode uint8

const (
	// Total folds every slot into slot 0.
	Total Mode = iota
	// Prefix leaves in slot i the fold of slots 0..i (an inclusive scan).
	Prefix
)

// Fold reduces n slots of seg bytes each, laid out stride bytes apart in buf
// from base, in slot order: Total leaves s0 op s1 op ... in slot 0; Prefix
// leaves the fold of slots 0..i in slot i, computed as (fold 0..i-1) op s_i
// exactly as Total would. tmp must hold seg bytes (Prefix only).
func Fold(op Op, t Type, mode Mode, buf []byte, base, stride, seg uint64, n int, tmp []byte) {
	acc := buf[base:][:seg]
	for i := 1; i < n; i++ {
		in := buf[base+uint64(i)*stride:][:seg]
		if mode == Total {
			Apply(op, t, acc, in)
			continue
		}
		tmp = tmp[:seg]
		copy(tmp, in)
		copy(in, acc)
		Apply(op, t, in, tmp)
		acc = in
	}
}
