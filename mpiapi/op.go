package mpiapi

import (
	"fmt"
	"hash/fnv"
	"reflect"
	"unsafe"

	"github.com/bcsmpi/bcsmpi/internal/reduce"
)

// ValIdx is a value–index pair, the element of MINLOC and MAXLOC reductions
// (MPI_DOUBLE_INT, MPI_FLOAT_INT, MPI_2INT, MPI_LONG_INT, MPI_SHORT_INT).
type ValIdx[T float32 | float64 | int16 | int32 | int64] struct {
	Val T
	Idx int32
}

// Elem is the element type of a collective buffer: a Numeric type or a
// value–index pair.
type Elem interface {
	Numeric | ValIdx[float32] | ValIdx[float64] | ValIdx[int16] | ValIdx[int32] | ValIdx[int64]
}

var pairTypes = map[reflect.Type]reduce.Type{
	reflect.TypeFor[ValIdx[float32]](): reduce.Float32Int,
	reflect.TypeFor[ValIdx[float64]](): reduce.Float64Int,
	reflect.TypeFor[ValIdx[int32]]():   reduce.Int32Int,
	reflect.TypeFor[ValIdx[int64]]():   reduce.Int64Int,
	reflect.TypeFor[ValIdx[int16]]():   reduce.Int16Int,
}

var kindTypes = map[reflect.Kind]reduce.Type{
	reflect.Int8: reduce.Int8, reflect.Int16: reduce.Int16, reflect.Int32: reduce.Int32, reflect.Int64: reduce.Int64,
	reflect.Uint8: reduce.Uint8, reflect.Uint16: reduce.Uint16, reflect.Uint32: reduce.Uint32, reflect.Uint64: reduce.Uint64,
	reflect.Float32: reduce.Float32, reflect.Float64: reduce.Float64,
}

// typeOf is the runtime's code for T (int and uint by their size).
func typeOf[T Elem]() reduce.Type {
	t := reflect.TypeFor[T]()
	switch k := t.Kind(); k {
	case reflect.Int, reflect.Uint:
		if t.Size() == 4 {
			k += reflect.Int32 - reflect.Int
		} else {
			k += reflect.Int64 - reflect.Int
		}
		return kindTypes[k]
	case reflect.Struct:
		return pairTypes[t]
	default:
		return kindTypes[k]
	}
}

// Op is a reduction operation: one of the predefined ones, or a user
// operation made with NewOp.
type Op struct {
	code    reduce.Op
	name    string
	user    func(in, inout []byte) // user operations: the function (nil once freed)
	t       reduce.Type            // user operations: the element type
	elem    string
	commute bool
	id      uint16 // user operations: the identity MSM compares (see NewOp)
	seq     uint64 // user operations: made by the seq-th NewOp of the process
}

// userOps are the user operations not yet freed; opSeq counts NewOp calls.
var (
	userOps = map[*Op]struct{}{}
	opSeq   uint64
)

// opIdentity is what a user operation is across ranks: a 16-bit FNV-1a hash
// of its name, element type and commutativity. Never 0 (0 marks "no user
// operation" in a descriptor).
//
// Rejected: the function's code address (as an offset, so that it survives
// PIE loading). The compiler copies a function literal into every call site
// it inlines its enclosing function into, so one operation made through a
// helper on two code paths has two addresses: ranks that made it on
// different paths would be reported as disagreeing in a correct program.
func opIdentity(name, elem string, commute bool) uint16 {
	h := fnv.New32a()
	fmt.Fprintf(h, "%s\x00%s\x00%t", name, elem, commute)
	v := h.Sum32()
	id := uint16(v>>16) ^ uint16(v)
	if id == 0 {
		id = 1
	}
	return id
}

func (o *Op) String() string { return o.name }

// The predefined operations. MINLOC and MAXLOC take ValIdx elements and
// break ties by the lower index; the logical operations treat non-zero
// integers as true.
var (
	Sum    = &Op{code: reduce.Sum, name: "MPI_SUM", commute: true}
	Prod   = &Op{code: reduce.Prod, name: "MPI_PROD", commute: true}
	Min    = &Op{code: reduce.Min, name: "MPI_MIN", commute: true}
	Max    = &Op{code: reduce.Max, name: "MPI_MAX", commute: true}
	Land   = &Op{code: reduce.Land, name: "MPI_LAND", commute: true}
	Lor    = &Op{code: reduce.Lor, name: "MPI_LOR", commute: true}
	Lxor   = &Op{code: reduce.Lxor, name: "MPI_LXOR", commute: true}
	Band   = &Op{code: reduce.Band, name: "MPI_BAND", commute: true}
	Bor    = &Op{code: reduce.Bor, name: "MPI_BOR", commute: true}
	Bxor   = &Op{code: reduce.Bxor, name: "MPI_BXOR", commute: true}
	Minloc = &Op{code: reduce.Minloc, name: "MPI_MINLOC", commute: true}
	Maxloc = &Op{code: reduce.Maxloc, name: "MPI_MAXLOC", commute: true}
)

// NewOp makes a user-defined operation (MPI_Op_create) on elements of type
// T: f must set inout[i] = in[i] op inout[i] for every i. The operation must
// be associative; commutative says whether it also commutes (results are
// computed in rank order either way).
//
// User operations run in the rank processes, not in the agents (an agent
// cannot run application code): a reduction with a user operation gathers
// the contributions to one rank through the runtime, folds them there in rank
// order, and distributes the result through the runtime. So it takes a few
// more slices than a predefined operation. In the non-blocking forms the
// fold happens when the request is polled (Wait, Test and their variants), as
// MPI's progress rule allows.
//
// Every member of a reduction must pass the same operation, and the runtime
// checks it for user operations too: an operation's identity is its name,
// element type and commutativity, so operations made alike on different ranks
// match — however many each rank made, in whatever order, on whatever code
// path — and a reduction whose members pass different ones aborts the job
// with a collective-mismatch report naming the ranks. Give different
// operations different names: two with the same name, type and commutativity
// are not told apart. The identity travels as a 16-bit hash, so two different
// ones may also, rarely, look alike (the check then misses); two alike never
// look different. NewOp may be called before Init (for example
// in a package variable).
func NewOp[T Elem](name string, f func(in, inout []T), commutative bool) *Op {
	return newOp(name, reflect.TypeFor[T]().String(), typeOf[T](), func(in, inout []byte) {
		f(elemsView[T](in), elemsView[T](inout))
	}, commutative)
}

// NewOpBytes is NewOp on bytes: f sets inout = in op inout over elements of
// type t held in in and inout (their lengths are equal multiples of
// t.Size(), and both are aligned for t). The operation applies to
// reductions whose elements are of type t; its identity (see NewOp) names
// the element type as NewOp of the matching Go type does.
func NewOpBytes(name string, t reduce.Type, f func(in, inout []byte), commutative bool) *Op {
	return newOp(name, elemName(t), t, f, commutative)
}

func newOp(name, elem string, t reduce.Type, f func(in, inout []byte), commutative bool) *Op {
	opSeq++
	// The identity names the element type by its code (elemName), as the
	// argument check compares it: NewOp[int] and NewOp[int64] (one code),
	// NewOpBytes and a named Go type all agree; elem, the Go type's own
	// name, is for messages.
	o := &Op{name: name, user: f, t: t, elem: elem, commute: commutative, id: opIdentity(name, elemName(t), commutative), seq: opSeq}
	userOps[o] = struct{}{}
	return o
}

// elemName names elements of type t as the Go type of the generic API does.
func elemName(t reduce.Type) string {
	for g, pt := range pairTypes {
		if pt == t {
			return g.String()
		}
	}
	return t.String()
}

// Free releases a user operation (MPI_Op_free). Predefined operations cannot be freed.
func (o *Op) Free() error {
	if o == nil || o.user == nil {
		return fmt.Errorf("mpiapi: MPI_Op_free: only user operations can be freed")
	}
	delete(userOps, o)
	o.user = nil
	o.name += " (freed)"
	return nil
}

// checkOp validates op for elements of type t and returns its user
// function (nil for a predefined operation).
func checkOp(p *process, call string, op *Op, t reduce.Type) (func(in, inout []byte), error) {
	if op == nil {
		return nil, p.errf(ErrOp, call, "op = nil, want an operation such as mpiapi.Sum or one from NewOp")
	}
	if op.code == 0 {
		if op.user == nil {
			return nil, p.errf(ErrOp, call, "operation %s was freed", op.name)
		}
		if op.t != t {
			return nil, p.errf(ErrOp, call, "operation %s is defined on %s elements, not %s", op.name, op.elem, elemName(t))
		}
		return op.user, nil
	}
	if err := reduce.Check(op.code, t); err != nil {
		return nil, p.errf(ErrOp, call, "%v", err)
	}
	return nil, nil
}

// foldUser reduces n blocks of blk bytes of all in rank order with f and
// leaves in block i the fold of blocks 0..i when prefix is set, else the
// total in block 0. all is aligned (aligned), and blk a multiple of the
// element size, so that f may read every block as elements.
func foldUser(f func(in, inout []byte), all []byte, n, blk int, prefix bool) {
	acc := all[:blk]
	tmp := aligned(blk)
	for i := 1; i < n; i++ {
		cur := all[i*blk : (i+1)*blk]
		// MPI's convention: inout = in op inout; so acc op cur is f(acc, cur).
		copy(tmp, cur)
		f(acc, tmp)
		if prefix {
			copy(cur, tmp)
			acc = cur
		} else {
			copy(acc, tmp)
		}
	}
}

func addrOf[T any](buf []T, i int) uint64 {
	if len(buf) == 0 {
		return 0
	}
	var z T
	return uint64(uintptr(unsafe.Pointer(unsafe.SliceData(buf)))) + uint64(i)*uint64(unsafe.Sizeof(z))
}

func sizeOf[T any]() uint64 {
	var z T
	return uint64(unsafe.Sizeof(z))
}

// Overlap reports whether the byte ranges [a, a+an) and [b, b+bn) share
// memory; an empty range shares none. It is the one test of the aliasing
// rule of the collectives (a send and a receive buffer must not overlap
// unless MPI_IN_PLACE is given), here and in the C library (package cabi),
// which checks its callers' buffers before it packs or copies them.
func Overlap(a, an, b, bn uint64) bool {
	return an > 0 && bn > 0 && a < b+bn && b < a+an
}
