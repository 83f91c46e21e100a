package main

/*
#include "shim.h"
*/
import "C"

import (
	"fmt"
	"iter"
	"math"
	"unsafe"
)

// Derived datatypes.
//
// A datatype is a tree: each derived type records the arguments of the
// constructor that made it, exactly as MPI_Type_get_contents returns them
// (integers, addresses, large counts, datatypes), and keeps its children by
// pointer, so freeing a child's handle leaves its parents intact. Scalars
// (size, lb/ub, true lb/ub, number of basic elements) are computed at
// construction; the layout is compiled at MPI_Type_commit.
//
// Glossary.
//   - Item: one element of the datatype in a buffer; item i starts at
//     buf + i*extent.
//   - Typemap: the (offset, basic type) pairs of one item, in order.
//   - Segment: n runs of len bytes at off, off+stride, ... (seg). The
//     compiled layout is the typemap flattened into segments, adjacent runs
//     merged and regular runs folded into one strided segment.
//   - Wire bytes: what one item occupies packed: the sum of its basic
//     elements' extents, which is its size.
//   - Pair type: a predefined value-index type (MPI_DOUBLE_INT, ...,
//     MPI_2INTEGER). For every call that moves data it is the struct of
//     its two parts (pairParts): typemap {(value, 0), (index, off)}, two
//     basic elements, packed in its size (MPI_DOUBLE_INT in 12 bytes, its
//     extent 16), so it matches any type of the same signature. Only
//     MPI_MINLOC and MPI_MAXLOC know it as a pair (dtInfo.pair, pairs.go).
//   - Signature: the sequence of basic types, run-length encoded (sigRun);
//     MPI_Get_elements walks it.
//
// Moving data: a committed type whose layout is one run of wire bytes that
// equals its extent is contiguous, and its buffers go to the runtime with no
// copy. Any other type is packed into a pack buffer before a send and
// unpacked from one when a receive completes (types.go).
//
// Rejected: a tree walk (MPICH's dataloops) at every pack. The flattened
// segments are simpler and as fast for the layouts programs use; their
// number is bounded (maxSegs), and a type beyond it is refused at commit.

// maxSegs bounds the compiled layout and signature of one type.
const maxSegs = 1 << 20

// Bounds on the scalars of a type, checked at construction so that no sum
// or product of them wraps: its size, wire bytes, basic elements, extent
// and true extent are at most maxTypeBytes (128 TiB, beyond any buffer),
// its bounds and displacements at most maxTypeBound in magnitude. The
// calls that move count items check count times the wire bytes and the
// extent against maxTypeBytes too (countBytes), so offsets, packed sizes
// and element counts within one call fit an int64 with room to spare.
const (
	maxTypeBytes = int64(1) << 47
	maxTypeBound = int64(1) << 60
)

// mulCheck is a*b, and whether it did not overflow.
func mulCheck(a, b int64) (int64, bool) {
	if a == 0 || b == 0 {
		return 0, true
	}
	p := a * b
	if p/b != a || (a == -1 && b == math.MinInt64) || (b == -1 && a == math.MinInt64) {
		return 0, false
	}
	return p, true
}

// within is |x| <= bound.
func within(x, bound int64) bool { return x >= -bound && x <= bound }

// countBytes checks that count items of t fit one call: count times its
// wire bytes and count times its extent are at most maxTypeBytes. It
// returns the packed bytes, or an error naming what (the count argument)
// and the bound.
func (t *dtInfo) countBytes(what string, count int64) (int64, *typeError) {
	w, okW := mulCheck(count, t.wire)
	e, okE := mulCheck(count, t.extent())
	if !okW || !okE || w > maxTypeBytes || !within(e, maxTypeBytes) {
		return 0, badArg(errCount, "%s = %d of %s (%d packed bytes, extent %d each) is more than bcsmpi's bound of %d bytes in one call", what, count, t.describe(), t.wire, t.extent(), maxTypeBytes)
	}
	return w, nil
}

// kindType is the handle kind of derived datatypes (handles.go).
const kindType = 8

// The combiners of the standard ABI (mpi.h).
const (
	combNamed         = 101
	combDup           = 102
	combContiguous    = 103
	combVector        = 104
	combHvector       = 105
	combIndexed       = 106
	combHindexed      = 107
	combIndexedBlock  = 108
	combHindexedBlock = 109
	combStruct        = 110
	combSubarray      = 111
	combDarray        = 112
	combF90Integer    = 113
	combF90Real       = 114
	combF90Complex    = 115
	combResized       = 116
)

var combinerNames = map[int]string{
	combDup: "MPI_Type_dup", combContiguous: "MPI_Type_contiguous", combVector: "MPI_Type_vector",
	combHvector: "MPI_Type_create_hvector", combIndexed: "MPI_Type_indexed", combHindexed: "MPI_Type_create_hindexed",
	combIndexedBlock: "MPI_Type_create_indexed_block", combHindexedBlock: "MPI_Type_create_hindexed_block",
	combStruct: "MPI_Type_create_struct", combSubarray: "MPI_Type_create_subarray", combResized: "MPI_Type_create_resized",
	combDarray: "MPI_Type_create_darray", combF90Integer: "MPI_Type_create_f90_integer",
	combF90Real: "MPI_Type_create_f90_real", combF90Complex: "MPI_Type_create_f90_complex",
}

type seg struct{ off, len, n, stride int64 }

type sigRun struct {
	basic *dtInfo
	n     int64
}

// dtInfo is a datatype, predefined or derived. It is immutable once made,
// except for committed and the layout compiled at commit.
type dtInfo struct {
	h        uintptr // predefined: the handle; derived: 0
	name     string
	combiner int
	large    bool // made by a _c constructor
	ints     []int32
	aints    []int64
	counts   []int64
	types    []*dtInfo

	size           int64 // MPI_Type_size
	wire           int64 // packed bytes per item
	elems          int64 // basic elements per item
	lb, ub         int64
	trueLB, trueUB int64
	align          int64   // alignment of the strictest basic type (MPI_Type_create_struct pads to it)
	kind           int     // C.BCS_* of every basic element, or C.BCS_NONE if they differ
	basicKind      int     // predefined: its element kind
	pair           *dtInfo // the predefined pair type all its items are made of, or nil
	pairKind       int     // a predefined pair type: the runtime's element kind of its pairs (C.BCS_F64I, ...), or C.BCS_NONE

	committed bool
	segs      []seg // compiled at commit
	sig       []sigRun
	contig    bool // segs is one run of wire bytes at trueLB, and wire == extent
}

func (t *dtInfo) extent() int64 { return t.ub - t.lb }

func (t *dtInfo) predefined() bool { return t.combiner == combNamed }

// f90 tells a type returned by MPI_Type_create_f90_*: laid out as the named
// type it stands for (types[0]), not freeable, with the F90 combiner and the
// call's p and r as its envelope and contents (abimisc.go).
func (t *dtInfo) f90() bool {
	return t.combiner == combF90Integer || t.combiner == combF90Real || t.combiner == combF90Complex
}

// describeType names a datatype for a message.
func (t *dtInfo) describe() string {
	if t.predefined() {
		return t.name
	}
	if t.name != "" {
		return fmt.Sprintf("%q (a derived datatype)", t.name)
	}
	return fmt.Sprintf("a derived datatype made by %s", combinerNames[t.combiner])
}

// ---- predefined datatypes ----

var predefinedInfo [C.BCS_NTYPES]*dtInfo

// kindSize is the bytes of one element of each kind.
var kindSize = [C.BCS_NKINDS]int64{
	C.BCS_I8: 1, C.BCS_U8: 1, C.BCS_I16: 2, C.BCS_U16: 2, C.BCS_I32: 4, C.BCS_U32: 4, C.BCS_I64: 8, C.BCS_U64: 8,
	C.BCS_F32: 4, C.BCS_F64: 8, C.BCS_F32I: 8, C.BCS_F64I: 16, C.BCS_I32I: 8, C.BCS_I64I: 16, C.BCS_I16I: 8,
}

// predefinedType is the dtInfo of a predefined handle, or nil.
func predefinedType(h uintptr) *dtInfo {
	ct := C.bcs_type_of(C.uintptr_t(h))
	if ct == nil {
		return nil
	}
	i := h - 0x200
	if t := predefinedInfo[i]; t != nil {
		return t
	}
	name, size, ext, kind := C.GoString(ct.name), int64(ct.size), int64(ct.extent), int(ct.kind)
	align := ext
	switch {
	case kind == C.BCS_NONE && size == ext && ext >= 8 && (name != "MPI_LONG_DOUBLE" && name != "MPI_REAL16" && name != "MPI_INTEGER16" && name != "MPI_LOGICAL16"): // complex: its parts
		align = ext / 2
	case kind == C.BCS_F32I || kind == C.BCS_I32I || kind == C.BCS_I16I:
		align = 4
	case kind == C.BCS_F64I || kind == C.BCS_I64I:
		align = 8
	case h == 0x22c: // MPI_SHORT_INT
		align = 4
	}
	trueUB := size
	if h == 0x22c || size == ext {
		trueUB = ext
	}
	t := &dtInfo{h: h, name: name, combiner: combNamed, size: size, wire: ext, elems: 1, ub: ext, trueUB: trueUB,
		align: min(align, 16), kind: kind, basicKind: kind, committed: true, contig: true}
	t.segs = []seg{{0, ext, 1, 0}}
	t.sig = []sigRun{{t, 1}}
	if pp, ok := pairParts[h]; ok {
		t.asPair(pp)
	}
	predefinedInfo[i] = t
	return t
}

// pairParts are the parts of the predefined pair types: the value and the
// index type, and the index's offset (where a C compiler puts i in
// struct { V v; I i; }, whose size is the pair's extent).
var pairParts = map[uintptr]struct {
	v, i uintptr
	off  int64
}{
	0x228: {0x210, 0x209, 4},  // MPI_FLOAT_INT: MPI_FLOAT, MPI_INT
	0x229: {0x214, 0x209, 8},  // MPI_DOUBLE_INT: MPI_DOUBLE, MPI_INT
	0x22a: {0x20a, 0x209, 8},  // MPI_LONG_INT: MPI_LONG, MPI_INT
	0x22b: {0x209, 0x209, 4},  // MPI_2INT
	0x22c: {0x208, 0x209, 4},  // MPI_SHORT_INT: MPI_SHORT, MPI_INT
	0x22d: {0x220, 0x209, 16}, // MPI_LONG_DOUBLE_INT: MPI_LONG_DOUBLE, MPI_INT
	0x230: {0x21a, 0x21a, 4},  // MPI_2REAL: MPI_REAL twice
	0x231: {0x21c, 0x21c, 8},  // MPI_2DOUBLE_PRECISION
	0x232: {0x219, 0x219, 4},  // MPI_2INTEGER
}

// asPair makes the predefined type t the struct of its parts pp: two basic
// elements packed in its size, a layout of the parts (one run where they
// touch), the element kind of its parts where they share one; the table's
// kind (shim.c) stays as pairKind, the runtime's element type of MINLOC and
// MAXLOC on it.
func (t *dtInfo) asPair(pp struct {
	v, i uintptr
	off  int64
}) {
	v, i := predefinedType(pp.v), predefinedType(pp.i)
	var l segList
	l.add(seg{0, v.wire, 1, 0})
	l.add(seg{pp.off, i.wire, 1, 0})
	l.addSig(v, 1)
	l.addSig(i, 1)
	t.pair, t.pairKind = t, t.kind
	t.kind = v.kind
	if i.kind != v.kind {
		t.kind = C.BCS_NONE
	}
	t.wire, t.elems, t.trueUB = v.wire+i.wire, 2, pp.off+i.wire
	t.segs, t.sig = l.segs, l.sig
	t.contig = len(t.segs) == 1 && t.segs[0].len == t.extent()
	if t.wire != t.size {
		panic(fmt.Sprintf("cabi: %s: parts of %d bytes, size %d", t.name, t.wire, t.size))
	}
}

// ---- handles of derived datatypes ----

type typeSlot struct {
	t    *dtInfo
	gen  uint32
	live bool
}

var (
	typeSlots     []typeSlot
	freeTypeSlots []int
)

func newTypeHandle(t *dtInfo) uintptr {
	var i int
	if n := len(freeTypeSlots); n > 0 {
		i, freeTypeSlots = freeTypeSlots[n-1], freeTypeSlots[:n-1]
	} else {
		i = len(typeSlots)
		typeSlots = append(typeSlots, typeSlot{})
	}
	e := &typeSlots[i]
	e.t, e.live = t, true
	return userHandle(kindType, i, e.gen)
}

// lookupType resolves a datatype handle, committed or not; what names the
// argument in the message.
func lookupType(ci int, call, what string, h uintptr) (*dtInfo, C.int) {
	if t := predefinedType(h); t != nil {
		return t, 0
	}
	if h == hTypeNull {
		return nil, fail(ci, call, errType, "%s = MPI_DATATYPE_NULL, want a datatype such as MPI_INT", what)
	}
	kind, i, gen := splitHandle(h)
	if kind == kindType && i < len(typeSlots) {
		if e := &typeSlots[i]; e.live && e.gen == gen {
			return e.t, 0
		}
		return nil, fail(ci, call, errType, "%s = %s was freed with MPI_Type_free", what, describe(h))
	}
	return nil, fail(ci, call, errType, "%s = %s is not a datatype", what, describe(h))
}

// describeType names a derived datatype's handle for a message.
func describeType(h uintptr) string {
	if _, i, gen := splitHandle(h); i < len(typeSlots) && typeSlots[i].live && typeSlots[i].gen == gen {
		t := typeSlots[i].t
		if t.name != "" {
			return fmt.Sprintf("0x%x (the datatype %q made by %s)", h, t.name, combinerNames[t.combiner])
		}
		return fmt.Sprintf("0x%x (a datatype made by %s)", h, combinerNames[t.combiner])
	}
	return fmt.Sprintf("0x%x (a derived datatype)", h)
}

// committedType is lookupType for a datatype used to move data.
func committedType(ci int, call, what string, h uintptr) (*dtInfo, C.int) {
	t, rc := lookupType(ci, call, what, h)
	if rc != 0 {
		return nil, rc
	}
	if !t.committed {
		return nil, fail(ci, call, errType, "%s = %s is not committed; call MPI_Type_commit before using it to move data", what, describe(h))
	}
	return t, 0
}

// ---- construction ----

// values is the constructor's integer arguments in one list, in the order
// MPI_Type_get_contents lists them: the integers then the addresses, or the
// large counts of a _c constructor (with a subarray's ndims first and its
// order last).
func (t *dtInfo) values() []int64 {
	var v []int64
	switch {
	case !t.large:
		for _, x := range t.ints {
			v = append(v, int64(x))
		}
		v = append(v, t.aints...)
	case t.combiner == combSubarray && len(t.ints) == 2:
		v = append(append(append(v, int64(t.ints[0])), t.counts...), int64(t.ints[1]))
	case t.combiner == combDarray && len(t.ints) >= 3:
		// size, rank, ndims, then the gsizes (large counts), then the rest
		for _, x := range t.ints[:3] {
			v = append(v, int64(x))
		}
		v = append(v, t.counts...)
		for _, x := range t.ints[3:] {
			v = append(v, int64(x))
		}
	default:
		v = append(v, t.counts...)
	}
	return v
}

// typeError is an invalid constructor argument: its class and message.
type typeError struct {
	class int
	msg   string
}

func badArg(class int, format string, a ...any) *typeError {
	return &typeError{class, fmt.Sprintf(format, a...)}
}

// block is bl consecutive items of type o at byte displacement d; bad
// says why d could not be computed (it overflows). A block of no items
// is never bad: its displacement is ignored, as for the bounds. mult, when above 1,
// says the block stands for mult equal blocks (vectorEnds).
type block struct {
	bl, d int64
	o     *dtInfo
	bad   string
	mult  int64
}

// vectorStride is the byte stride of a vector or hvector made from v.
func (t *dtInfo) vectorStride(v []int64) (int64, bool) {
	if t.combiner == combVector {
		return mulCheck(v[2], t.types[0].extent())
	}
	return v[2], true
}

// vectorEnds stands for the blocks of a vector or hvector by its first
// and last: the blocks are equal and their displacements linear in the
// block number, so the bounds are those of the two ends and the sizes
// count times one block's. build is then O(1) in the count (a vector of
// 2^30 blocks took minutes block by block).
func (t *dtInfo) vectorEnds(v []int64) iter.Seq2[int64, block] {
	return func(yield func(int64, block) bool) {
		count, bl := v[0], v[1]
		if count <= 0 {
			return
		}
		stride, ok := t.vectorStride(v)
		if !yield(0, block{bl: bl, o: t.types[0]}) || count == 1 {
			return
		}
		d, okD := mulCheck(count-1, stride)
		b := block{bl: bl, d: d, o: t.types[0], mult: count - 1}
		if bl != 0 && (!ok || !okD || !within(d, maxTypeBound)) {
			b.bad = fmt.Sprintf("count = %d with stride = %d: the displacement of block %d overflows bcsmpi's bound of %d bytes", count, v[2], count-1, maxTypeBound)
		}
		yield(count-1, b)
	}
}

// blocks lists the blocks of a type made by contiguous, vector, hvector,
// the indexed constructors or struct, from its arguments v (values).
func (t *dtInfo) blocks(v []int64) iter.Seq2[int64, block] {
	return func(yield func(int64, block) bool) {
		count := v[0]
		if len(t.types) == 0 { // an empty structure
			return
		}
		old := t.types[0]
		switch t.combiner {
		case combContiguous:
			yield(0, block{bl: count, o: old})
		case combVector, combHvector:
			bl, stride := v[1], v[2]
			ok := true
			if t.combiner == combVector {
				stride, ok = mulCheck(stride, old.extent())
			}
			for i := int64(0); i < count; i++ {
				d, okD := mulCheck(i, stride)
				b := block{bl, d, old, "", 0}
				if bl != 0 && (!ok || !okD || !within(d, maxTypeBound)) {
					b.bad = fmt.Sprintf("count = %d with stride = %d: the displacement of block %d overflows bcsmpi's bound of %d bytes", count, v[2], i, maxTypeBound)
				}
				if !yield(i, b) || b.bad != "" {
					return
				}
			}
		default:
			perBlock := t.combiner == combIndexed || t.combiner == combHindexed || t.combiner == combStruct
			for i := int64(0); i < count; i++ {
				b := block{o: old}
				if perBlock {
					b.bl, b.d = v[1+i], v[1+count+i]
				} else {
					b.bl, b.d = v[1], v[2+i]
				}
				if t.combiner == combStruct {
					b.o = t.types[i]
				}
				if t.combiner == combIndexed || t.combiner == combIndexedBlock {
					d, ok := mulCheck(b.d, b.o.extent())
					if !ok {
						d = math.MaxInt64
					}
					b.d = d
				}
				if b.bl != 0 && !within(b.d, maxTypeBound) {
					b.bad = fmt.Sprintf("array_of_displacements[%d] = %d: the displacement overflows bcsmpi's bound of %d bytes", i, b.d, maxTypeBound)
					if t.combiner == combIndexed || t.combiner == combIndexedBlock {
						b.bad = fmt.Sprintf("array_of_displacements[%d] = %d items of extent %d: the displacement overflows bcsmpi's bound of %d bytes", i, v[len(v)-int(count)+int(i)], b.o.extent(), maxTypeBound)
					}
				}
				if !yield(i, b) || b.bad != "" {
					return
				}
			}
		}
	}
}

// build checks the arguments of a new type and computes its scalars.
func (t *dtInfo) build() *typeError {
	v := t.values()
	// A structure of no blocks has no datatype argument (the arrays of
	// MPI_Type_create_struct(0, NULL, NULL, NULL, ...) may be NULL): an
	// empty type, size and extent 0.
	emptyStruct := t.combiner == combStruct && len(v) > 0 && v[0] == 0 && len(t.types) == 0
	if len(t.types) == 0 && !emptyStruct {
		return badArg(errIntern, "no datatype argument")
	}
	var old *dtInfo
	if emptyStruct {
		old = &dtInfo{kind: C.BCS_NONE}
	} else {
		old = t.types[0]
	}
	switch t.combiner {
	case combDup, combF90Integer, combF90Real, combF90Complex:
		t.scalarsOf(old)
		return nil
	case combResized:
		if len(v) < 2 {
			return badArg(errIntern, "%d integer arguments, want 2", len(v))
		}
		t.scalarsOf(old)
		if !within(v[0], maxTypeBound) || !within(v[1], maxTypeBytes) {
			return badArg(errArg, "lb = %d and extent = %d, want |lb| <= %d and |extent| <= %d (bcsmpi's bounds)", v[0], v[1], maxTypeBound, maxTypeBytes)
		}
		t.lb, t.ub = v[0], v[0]+v[1]
		return t.bounded()
	case combSubarray:
		return t.buildSubarray(v, old)
	case combDarray:
		return t.buildDarray(v, old)
	case combContiguous, combVector, combHvector, combIndexed, combHindexed, combIndexedBlock, combHindexedBlock, combStruct:
	default:
		return badArg(errIntern, "combiner %d", t.combiner)
	}
	if len(v) < 1 {
		return badArg(errIntern, "no count")
	}
	count := v[0]
	if count < 0 {
		return badArg(errCount, "count = %d, want >= 0", count)
	}
	need := int64(1)
	switch t.combiner {
	case combVector, combHvector:
		need = 3
	case combIndexed, combHindexed, combStruct:
		need = 1 + 2*count
	case combIndexedBlock, combHindexedBlock:
		need = 2 + count
	}
	if int64(len(v)) < need {
		return badArg(errIntern, "%d integer arguments, want %d", len(v), need)
	}
	if t.combiner == combStruct && int64(len(t.types)) != count {
		return badArg(errIntern, "%d datatypes for count %d", len(t.types), count)
	}
	first, firstTrue, kindSet := true, true, false
	t.kind, t.pair = old.kind, nil
	seq := t.blocks(v)
	if t.combiner == combVector || t.combiner == combHvector {
		seq = t.vectorEnds(v)
	}
	for i, b := range seq {
		if b.bl < 0 {
			if t.combiner == combVector || t.combiner == combHvector || t.combiner == combIndexedBlock || t.combiner == combHindexedBlock {
				return badArg(errArg, "blocklength = %d, want >= 0", b.bl)
			}
			if t.combiner != combContiguous {
				return badArg(errArg, "array_of_blocklengths[%d] = %d, want >= 0", i, b.bl)
			}
		}
		if b.bad != "" {
			return badArg(errArg, "%s", b.bad)
		}
		o := b.o
		t.align = max(t.align, o.align)
		if b.bl == 0 {
			continue
		}
		size, okS := mulCheck(b.bl, o.size)
		wire, okW := mulCheck(b.bl, o.wire)
		elems, okE := mulCheck(b.bl, o.elems)
		span, okX := mulCheck(b.bl-1, o.extent())
		if b.mult > 1 {
			var okM1, okM2, okM3 bool
			size, okM1 = mulCheck(size, b.mult)
			wire, okM2 = mulCheck(wire, b.mult)
			elems, okM3 = mulCheck(elems, b.mult)
			okS, okW, okE = okS && okM1, okW && okM2, okE && okM3
		}
		if !okS || !okW || !okE || !okX || !within(span, maxTypeBytes) || !within(b.d, maxTypeBound) ||
			size > maxTypeBytes || wire > maxTypeBytes || elems > maxTypeBytes {
			return t.tooLarge(i, b)
		}
		t.size, t.wire, t.elems = t.size+size, t.wire+wire, t.elems+elems
		if t.size > maxTypeBytes || t.wire > maxTypeBytes || t.elems > maxTypeBytes {
			return t.tooLarge(i, b)
		}
		if o.elems > 0 {
			if !kindSet {
				t.kind, t.pair, kindSet = o.kind, o.pair, true
			} else {
				if t.kind != o.kind {
					t.kind = C.BCS_NONE
				}
				if t.pair != o.pair {
					t.pair = nil
				}
			}
		}
		// An empty block (no basic elements) has no true bounds, and
		// bounds only if it was given some (resized).
		if o.elems > 0 || o.extent() != 0 {
			lo, hi := b.d+o.lb+min(0, span), b.d+o.ub+max(0, span)
			if first {
				t.lb, t.ub, first = lo, hi, false
			} else {
				t.lb, t.ub = min(t.lb, lo), max(t.ub, hi)
			}
		}
		if o.elems > 0 {
			tlo, thi := b.d+o.trueLB+min(0, span), b.d+o.trueUB+max(0, span)
			if firstTrue {
				t.trueLB, t.trueUB, firstTrue = tlo, thi, false
			} else {
				t.trueLB, t.trueUB = min(t.trueLB, tlo), max(t.trueUB, thi)
			}
		}
	}
	// A structure is padded to the alignment of its strictest member, as a
	// C compiler pads a struct (the standard's epsilon).
	if t.combiner == combStruct && t.align > 1 {
		if r := (t.ub - t.lb) % t.align; r != 0 {
			t.ub += t.align - r
		}
	}
	return t.bounded()
}

// tooLarge is the error of block i, whose size, span or displacement
// overflows bcsmpi's bounds: it names the argument that made it.
func (t *dtInfo) tooLarge(i int64, b block) *typeError {
	what, class := fmt.Sprintf("array_of_blocklengths[%d] = %d", i, b.bl), errArg
	switch t.combiner {
	case combContiguous:
		what, class = fmt.Sprintf("count = %d", b.bl), errCount
	case combVector, combHvector, combIndexedBlock, combHindexedBlock:
		what = fmt.Sprintf("blocklength = %d", b.bl)
	}
	return badArg(class, "%s items of %s (size %d, extent %d) at displacement %d: the type would exceed bcsmpi's bound of %d bytes (size, extent) or %d (displacements)",
		what, b.o.describe(), b.o.size, b.o.extent(), b.d, maxTypeBytes, maxTypeBound)
}

// bounded checks a built type's scalars against maxTypeBytes and
// maxTypeBound (the inputs of every sum were in bounds, so none wrapped).
func (t *dtInfo) bounded() *typeError {
	for _, x := range []int64{t.lb, t.ub, t.trueLB, t.trueUB} {
		if !within(x, maxTypeBound) {
			return badArg(errArg, "the type's bounds [%d, %d) exceed bcsmpi's bound of %d bytes", t.lb, t.ub, maxTypeBound)
		}
	}
	if !within(t.extent(), maxTypeBytes) || !within(t.trueUB-t.trueLB, maxTypeBytes) {
		return badArg(errArg, "the type's extent %d (true extent %d) exceeds bcsmpi's bound of %d bytes", t.extent(), t.trueUB-t.trueLB, maxTypeBytes)
	}
	return nil
}

// scalarsOf copies a type's scalars (dup, resized).
func (t *dtInfo) scalarsOf(o *dtInfo) {
	t.size, t.wire, t.elems, t.lb, t.ub, t.trueLB, t.trueUB, t.align, t.kind, t.pair =
		o.size, o.wire, o.elems, o.lb, o.ub, o.trueLB, o.trueUB, o.align, o.kind, o.pair
}

// buildSubarray checks a subarray's arguments; its layout is that of an
// equivalent type made of vectors (subarrayImpl).
func (t *dtInfo) buildSubarray(v []int64, old *dtInfo) *typeError {
	if len(v) < 1 {
		return badArg(errIntern, "no ndims")
	}
	nd := v[0]
	if nd <= 0 {
		return badArg(errArg, "ndims = %d, want >= 1", nd)
	}
	if int64(len(v)) < 3*nd+2 {
		return badArg(errIntern, "%d integer arguments for ndims %d", len(v), nd)
	}
	sizes, subs, starts, order := v[1:1+nd], v[1+nd:1+2*nd], v[1+2*nd:1+3*nd], v[1+3*nd]
	if order != C.MPI_ORDER_C && order != C.MPI_ORDER_FORTRAN {
		return badArg(errArg, "order = %d, want MPI_ORDER_C (%d) or MPI_ORDER_FORTRAN (%d)", order, C.MPI_ORDER_C, C.MPI_ORDER_FORTRAN)
	}
	total := int64(1)
	for d := range nd {
		switch {
		case sizes[d] <= 0:
			return badArg(errArg, "array_of_sizes[%d] = %d, want >= 1", d, sizes[d])
		case subs[d] <= 0 || subs[d] > sizes[d]:
			return badArg(errArg, "array_of_subsizes[%d] = %d, want 1..%d (array_of_sizes[%d])", d, subs[d], sizes[d], d)
		case starts[d] < 0 || starts[d] > sizes[d]-subs[d]:
			return badArg(errArg, "array_of_starts[%d] = %d, want 0..%d (array_of_sizes[%d] - array_of_subsizes[%d])", d, starts[d], sizes[d]-subs[d], d, d)
		}
		var ok bool
		if total, ok = mulCheck(total, sizes[d]); !ok || total > maxTypeBytes {
			return badArg(errArg, "array_of_sizes[%d] = %d: the array would have more than bcsmpi's bound of %d elements", d, sizes[d], maxTypeBytes)
		}
	}
	if n, ok := mulCheck(total, old.extent()); !ok || !within(n, maxTypeBytes) {
		return badArg(errArg, "array_of_sizes: %d elements of extent %d exceed bcsmpi's bound of %d bytes", total, old.extent(), maxTypeBytes)
	}
	// dims from the fastest-varying to the slowest
	dim := func(k int64) int64 {
		if order == C.MPI_ORDER_C {
			return nd - 1 - k
		}
		return k
	}
	ext := old.extent()
	cur := &dtInfo{combiner: combContiguous, large: true, counts: []int64{subs[dim(0)]}, types: []*dtInfo{old}}
	stride, disp := ext, starts[dim(0)]*ext
	for k := int64(1); k < nd; k++ {
		if e := cur.build(); e != nil {
			return e
		}
		stride *= sizes[dim(k-1)]
		disp += starts[dim(k)] * stride
		cur = &dtInfo{combiner: combHvector, large: true, counts: []int64{subs[dim(k)], 1, stride}, types: []*dtInfo{cur}}
	}
	if e := cur.build(); e != nil {
		return e
	}
	placed := &dtInfo{combiner: combHindexed, large: true, counts: []int64{1, 1, disp}, types: []*dtInfo{cur}}
	if e := placed.build(); e != nil {
		return e
	}
	impl := &dtInfo{combiner: combResized, large: true, counts: []int64{0, total * ext}, types: []*dtInfo{placed}}
	if e := impl.build(); e != nil {
		return e
	}
	t.scalarsOf(impl)
	t.types = append(t.types[:1:1], impl) // types[1]: the layout (not reported by get_contents)
	return nil
}

// buildDarray checks a distributed array's arguments. Its layout is the
// elements of the global array (gsizes, in order) that process rank of the
// process grid psizes (row-major, as MPI_Cart_create numbers it) owns, in
// the order of the local array: per dimension the owned indices (a block,
// blocks dealt cyclically, or all), nested from the fastest dimension
// outwards as hindexed runs of the inner type resized to one step of the
// dimension.
func (t *dtInfo) buildDarray(v []int64, old *dtInfo) *typeError {
	if len(v) < 3 {
		return badArg(errIntern, "no size, rank, ndims")
	}
	size, rank, nd := v[0], v[1], v[2]
	switch {
	case size <= 0:
		return badArg(errArg, "size = %d, want >= 1", size)
	case rank < 0 || rank >= size:
		return badArg(errRank, "rank = %d, want 0..%d", rank, size-1)
	case nd <= 0:
		return badArg(errArg, "ndims = %d, want >= 1", nd)
	case int64(len(v)) < 4*nd+4:
		return badArg(errIntern, "%d integer arguments for ndims %d", len(v), nd)
	}
	gsizes, distribs, dargs, psizes, order := v[3:3+nd], v[3+nd:3+2*nd], v[3+2*nd:3+3*nd], v[3+3*nd:3+4*nd], v[3+4*nd]
	if order != C.MPI_ORDER_C && order != C.MPI_ORDER_FORTRAN {
		return badArg(errArg, "order = %d, want MPI_ORDER_C (%d) or MPI_ORDER_FORTRAN (%d)", order, C.MPI_ORDER_C, C.MPI_ORDER_FORTRAN)
	}
	procs, elems := int64(1), int64(1)
	for d := range nd {
		if gsizes[d] <= 0 || psizes[d] <= 0 {
			return badArg(errArg, "array_of_gsizes[%d] = %d and array_of_psizes[%d] = %d, want both >= 1", d, gsizes[d], d, psizes[d])
		}
		var okP, okE bool
		procs, okP = mulCheck(procs, psizes[d])
		elems, okE = mulCheck(elems, gsizes[d])
		if !okP || procs > size {
			return badArg(errArg, "array_of_psizes[%d] = %d: the product of array_of_psizes exceeds size = %d", d, psizes[d], size)
		}
		if !okE || elems > maxTypeBytes {
			return badArg(errArg, "array_of_gsizes[%d] = %d: the array would have more than bcsmpi's bound of %d elements", d, gsizes[d], maxTypeBytes)
		}
	}
	if n, ok := mulCheck(elems, old.extent()); !ok || !within(n, maxTypeBytes) {
		return badArg(errArg, "array_of_gsizes: %d elements of extent %d exceed bcsmpi's bound of %d bytes", elems, old.extent(), maxTypeBytes)
	}
	if procs != size {
		return badArg(errArg, "the product of array_of_psizes is %d, want size = %d", procs, size)
	}
	// coordinates of rank in the row-major process grid
	coords := make([]int64, nd)
	for d, r := nd-1, rank; d >= 0; d-- {
		coords[d], r = r%psizes[d], r/psizes[d]
	}
	// owned lists the runs (first index, length) of dimension d this process owns.
	owned := func(d int64) ([]int64, []int64, *typeError) {
		g, p, c, darg := gsizes[d], psizes[d], coords[d], dargs[d]
		var starts, lens []int64
		switch distribs[d] {
		case C.MPI_DISTRIBUTE_NONE:
			if p != 1 {
				return nil, nil, badArg(errArg, "array_of_psizes[%d] = %d with MPI_DISTRIBUTE_NONE, want 1", d, p)
			}
			starts, lens = []int64{0}, []int64{g}
		case C.MPI_DISTRIBUTE_BLOCK:
			b := (g + p - 1) / p
			if darg != C.MPI_DISTRIBUTE_DFLT_DARG {
				if darg <= 0 || darg*p < g {
					return nil, nil, badArg(errArg, "array_of_dargs[%d] = %d, want MPI_DISTRIBUTE_DFLT_DARG or a block of at least %d (array_of_gsizes[%d] / array_of_psizes[%d], rounded up)", d, darg, b, d, d)
				}
				b = darg
			}
			if lo := c * b; lo < g {
				starts, lens = []int64{lo}, []int64{min(b, g-lo)}
			}
		case C.MPI_DISTRIBUTE_CYCLIC:
			b := int64(1)
			if darg != C.MPI_DISTRIBUTE_DFLT_DARG {
				if darg <= 0 {
					return nil, nil, badArg(errArg, "array_of_dargs[%d] = %d, want MPI_DISTRIBUTE_DFLT_DARG or >= 1", d, darg)
				}
				b = darg
			}
			for lo := c * b; lo < g; lo += p * b {
				starts, lens = append(starts, lo), append(lens, min(b, g-lo))
			}
		default:
			return nil, nil, badArg(errArg, "array_of_distribs[%d] = %d, want MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_CYCLIC or MPI_DISTRIBUTE_NONE", d, distribs[d])
		}
		return starts, lens, nil
	}
	dim := func(k int64) int64 { // from the fastest-varying dimension to the slowest
		if order == C.MPI_ORDER_C {
			return nd - 1 - k
		}
		return k
	}
	cur, stride := old, old.extent()
	for k := range nd {
		d := dim(k)
		starts, lens, e := owned(d)
		if e != nil {
			return e
		}
		step := &dtInfo{combiner: combResized, large: true, counts: []int64{0, stride}, types: []*dtInfo{cur}}
		if e := step.build(); e != nil {
			return e
		}
		hi := &dtInfo{combiner: combHindexed, large: true, counts: []int64{int64(len(starts))}, types: []*dtInfo{step}}
		hi.counts = append(hi.counts, lens...)
		for _, st := range starts {
			hi.counts = append(hi.counts, st*stride)
		}
		if e := hi.build(); e != nil {
			return e
		}
		cur, stride = hi, stride*gsizes[d]
	}
	impl := &dtInfo{combiner: combResized, large: true, counts: []int64{0, stride}, types: []*dtInfo{cur}}
	if e := impl.build(); e != nil {
		return e
	}
	t.scalarsOf(impl)
	t.types = append(t.types[:1:1], impl) // types[1]: the layout (not reported by get_contents)
	return nil
}

// ---- layout (compiled at commit) ----

// segList is a layout being flattened. Its products (a segment's len*n,
// an item's i*step) cannot wrap: build bounded every type's wire bytes,
// extent and displacements (maxTypeBytes, maxTypeBound).
type segList struct {
	segs []seg
	sig  []sigRun
	over bool
}

func (l *segList) add(s seg) {
	if s.len == 0 || s.n == 0 {
		return
	}
	if s.n == 1 {
		s.stride = 0
	} else if s.stride == s.len {
		s = seg{s.off, s.len * s.n, 1, 0}
	}
	if k := len(l.segs); k > 0 {
		p := &l.segs[k-1]
		switch {
		case p.n == 1 && s.n == 1 && p.off+p.len == s.off:
			p.len += s.len
			return
		case s.n == 1 && p.len == s.len && p.n == 1 && s.off != p.off:
			p.n, p.stride = 2, s.off-p.off
			return
		case s.n == 1 && p.len == s.len && p.n > 1 && s.off == p.off+p.n*p.stride:
			p.n++
			return
		case s.n > 1 && p.n > 1 && p.len == s.len && p.stride == s.stride && s.off == p.off+p.n*p.stride:
			p.n += s.n
			return
		case s.n > 1 && p.n == 1 && p.len == s.len && s.off-p.off == s.stride:
			p.n, p.stride = s.n+1, s.stride
			return
		}
	}
	if len(l.segs) >= maxSegs {
		l.over = true
		return
	}
	l.segs = append(l.segs, s)
}

func (l *segList) addSig(b *dtInfo, n int64) {
	if n == 0 {
		return
	}
	if k := len(l.sig); k > 0 && l.sig[k-1].basic == b {
		l.sig[k-1].n += n
		return
	}
	if len(l.sig) >= maxSegs {
		l.over = true
		return
	}
	l.sig = append(l.sig, sigRun{b, n})
}

// compile flattens t (memoized on every node of the tree).
func (t *dtInfo) compile() bool {
	if t.segs != nil {
		return true
	}
	var l segList
	t.flatten(&l, 0)
	if l.over {
		return false
	}
	t.segs, t.sig = l.segs, l.sig
	if t.segs == nil {
		t.segs = []seg{}
	}
	if t.sig == nil {
		t.sig = []sigRun{}
	}
	t.contig = len(t.segs) == 0 && t.extent() == 0 ||
		len(t.segs) == 1 && t.segs[0].n == 1 && t.segs[0].len == t.wire && t.wire == t.extent() && t.segs[0].off == t.trueLB
	return true
}

// repeat appends count items of o, item i at base + i*step.
func (l *segList) repeat(o *dtInfo, count, base, step int64) {
	if count <= 0 || l.over {
		return
	}
	if !o.compile() {
		l.over = true
		return
	}
	if len(o.segs) == 1 && o.segs[0].n == 1 {
		s := o.segs[0]
		l.add(seg{base + s.off, s.len, count, step})
	} else if s := o.segs; len(s) == 1 && step == s[0].n*s[0].stride {
		// a strided run whose next item continues its stride: one run
		l.add(seg{base + s[0].off, s[0].len, s[0].n * count, s[0].stride})
	} else {
		for i := int64(0); i < count && !l.over; i++ {
			for _, s := range o.segs {
				l.add(seg{base + i*step + s.off, s.len, s.n, s.stride})
			}
		}
	}
	if len(o.sig) == 1 {
		l.addSig(o.sig[0].basic, o.sig[0].n*count)
		return
	}
	for i := int64(0); i < count && !l.over; i++ {
		for _, r := range o.sig {
			l.addSig(r.basic, r.n)
		}
	}
}

func (t *dtInfo) flatten(l *segList, base int64) {
	if t.predefined() {
		l.add(seg{base, t.wire, 1, 0})
		l.addSig(t, 1)
		return
	}
	switch t.combiner {
	case combDup, combResized, combF90Integer, combF90Real, combF90Complex:
		l.repeat(t.types[0], 1, base, 0)
	case combSubarray, combDarray:
		l.repeat(t.types[1], 1, base, 0)
	default:
		if t.flattenVector(l, base) {
			return
		}
		for _, b := range t.blocks(t.values()) {
			if l.over {
				return
			}
			l.repeat(b.o, b.bl, base+b.d, b.o.extent())
		}
	}
}

// flattenVector flattens a vector or hvector whose block is one run of
// bytes as a single strided segment, in O(1) of the count, and reports
// whether it did.
func (t *dtInfo) flattenVector(l *segList, base int64) bool {
	if t.combiner != combVector && t.combiner != combHvector {
		return false
	}
	v := t.values()
	count, bl := v[0], v[1]
	if count <= 0 || bl == 0 { // no items: nothing to lay out, whatever the count
		return true
	}
	stride, ok := t.vectorStride(v)
	o := t.types[0]
	if !ok || count < 2 || bl < 0 || !o.compile() {
		return false
	}
	var one segList
	one.repeat(o, bl, 0, o.extent())
	if one.over || len(one.segs) != 1 || len(one.sig) != 1 {
		return false
	}
	s := one.segs[0]
	switch {
	case s.n == 1:
		l.add(seg{base + s.off, s.len, count, stride})
	case s.n*s.stride == stride: // a strided block whose next block continues its stride
		l.add(seg{base + s.off, s.len, s.n * count, s.stride})
	default:
		return false
	}
	l.addSig(one.sig[0].basic, one.sig[0].n*count)
	return true
}

// ---- packing ----

// pack copies count items at src into dst (len(dst) bytes at most, whole
// runs only when it is short) and returns the bytes written.
func (t *dtInfo) pack(dst []byte, src unsafe.Pointer, count int) int {
	return t.move(dst, src, count, true)
}

// unpack copies packed bytes from src into count items at dst, stopping
// when src runs out; it returns the bytes read.
func (t *dtInfo) unpack(dst unsafe.Pointer, src []byte, count int) int {
	return t.move(src, dst, count, false)
}

func (t *dtInfo) move(packed []byte, user unsafe.Pointer, count int, toPacked bool) int {
	pos, ext := 0, t.extent()
	if t.contig && count > 0 && t.wire > 0 {
		// One run: a single copy, not one per item (a count of MPI_BYTEs
		// moved item by item ran at tens of MB/s).
		n := int(min(int64(count)*t.wire, int64(len(packed))))
		u := unsafe.Slice((*byte)(unsafe.Add(user, t.trueLB)), n)
		if toPacked {
			return copy(packed, u)
		}
		return copy(u, packed[:n])
	}
	for i := 0; i < count; i++ {
		base := int64(i) * ext
		for _, s := range t.segs {
			if pos+int(s.len*s.n) <= len(packed) { // the whole segment fits
				moveSeg(packed[pos:pos+int(s.len*s.n)], unsafe.Add(user, base+s.off), s, toPacked)
				pos += int(s.len * s.n)
				continue
			}
			for k := int64(0); k < s.n; k++ {
				n := min(int(s.len), len(packed)-pos)
				if n <= 0 {
					return pos
				}
				u := unsafe.Slice((*byte)(unsafe.Add(user, base+s.off+k*s.stride)), n)
				if toPacked {
					copy(packed[pos:], u)
				} else {
					copy(u, packed[pos:pos+n])
				}
				pos += n
			}
		}
	}
	return pos
}

// moveSeg moves the s.n runs of segment s at user to or from packed, which
// holds exactly s.n*s.len bytes; runs of 4 and 8 bytes (single ints and
// doubles, the common vector and column cases) move as words.
func moveSeg(packed []byte, user unsafe.Pointer, s seg, toPacked bool) {
	p := unsafe.Pointer(unsafe.SliceData(packed))
	switch {
	case s.len == 8 && toPacked:
		for k := int64(0); k < s.n; k++ {
			*(*uint64)(unsafe.Add(p, k*8)) = *(*uint64)(unsafe.Add(user, k*s.stride))
		}
	case s.len == 8:
		for k := int64(0); k < s.n; k++ {
			*(*uint64)(unsafe.Add(user, k*s.stride)) = *(*uint64)(unsafe.Add(p, k*8))
		}
	case s.len == 4 && toPacked:
		for k := int64(0); k < s.n; k++ {
			*(*uint32)(unsafe.Add(p, k*4)) = *(*uint32)(unsafe.Add(user, k*s.stride))
		}
	case s.len == 4:
		for k := int64(0); k < s.n; k++ {
			*(*uint32)(unsafe.Add(user, k*s.stride)) = *(*uint32)(unsafe.Add(p, k*4))
		}
	default:
		for k := int64(0); k < s.n; k++ {
			u := unsafe.Slice((*byte)(unsafe.Add(user, k*s.stride)), s.len)
			b := packed[k*s.len : (k+1)*s.len]
			if toPacked {
				copy(b, u)
			} else {
				copy(u, b)
			}
		}
	}
}

// span is the byte range [lo, hi) that count items touch, relative to the
// buffer's address.
func (t *dtInfo) span(count int) (lo, hi int64) {
	if count <= 0 || t.trueUB <= t.trueLB {
		return 0, 0
	}
	ext := t.extent() * int64(count-1)
	return t.trueLB + min(0, ext), t.trueUB + max(0, ext)
}

// elements is the number of basic elements in the first bytes of packed
// data, or -1 when they end inside a basic element.
func (t *dtInfo) elements(bytes int64) int64 {
	if t.wire == 0 {
		return 0
	}
	whole, rem := bytes/t.wire, bytes%t.wire
	n := whole * t.elems
	for _, r := range t.sig {
		if rem == 0 {
			break
		}
		es := r.basic.wire
		if rem >= r.n*es {
			rem -= r.n * es
			n += r.n
			continue
		}
		n += rem / es
		rem %= es
		break
	}
	if rem != 0 {
		return -1
	}
	return n
}

// ---- exports ----

func typeCall(combiner int, large bool) string {
	name := combinerNames[combiner]
	if large {
		name += "_c"
	}
	return name
}

// bcs_type_create makes a derived type from its constructor's arguments,
// given as MPI_Type_get_contents returns them.
//
//export bcs_type_create
func bcs_type_create(combiner, large C.int, ni C.int, ints *C.int, na C.int, aints *C.MPI_Aint,
	nc C.int, counts *C.MPI_Count, nt C.int, types *C.uintptr_t, out *C.uintptr_t) C.int {
	call := typeCall(int(combiner), large != 0)
	if rc := enter(call); rc != 0 {
		return rc
	}
	if out == nil {
		return fail(0, call, errArg, "newtype = NULL")
	}
	t := &dtInfo{combiner: int(combiner), large: large != 0}
	for _, x := range unsafe.Slice(ints, int(ni)) {
		t.ints = append(t.ints, int32(x))
	}
	for _, x := range unsafe.Slice(aints, int(na)) {
		t.aints = append(t.aints, int64(x))
	}
	for _, x := range unsafe.Slice(counts, int(nc)) {
		t.counts = append(t.counts, int64(x))
	}
	for k, h := range unsafe.Slice(types, int(nt)) {
		what := "oldtype"
		if combiner == combStruct {
			what = fmt.Sprintf("array_of_types[%d]", k)
		}
		o, rc := lookupType(0, call, what, uintptr(h))
		if rc != 0 {
			return rc
		}
		t.types = append(t.types, o)
	}
	if e := t.build(); e != nil {
		return fail(0, call, e.class, "%s", e.msg)
	}
	if t.combiner == combDup {
		t.committed = t.types[0].committed
		if t.committed && !t.compile() {
			return fail(0, call, errType, "the type has more than %d blocks", maxSegs)
		}
	}
	*out = C.uintptr_t(newTypeHandle(t))
	if t.combiner == combDup { // the attributes' copy callbacks (typeattr.go)
		if rc := copyTypeAttrs(call, uintptr(unsafe.Slice(types, int(nt))[0]), uintptr(*out)); rc != 0 {
			// As MPI_Comm_dup: newtype is MPI_DATATYPE_NULL, and the copies
			// made before the failing callback are dropped without their
			// delete callbacks (the program never saw the duplicate).
			delete(attrs, uintptr(*out))
			freeTypeSlot(uintptr(*out))
			*out = hTypeNull
			return rc
		}
	}
	return 0
}

// freeTypeSlot releases the handle slot of datatype h.
func freeTypeSlot(h uintptr) {
	_, i, _ := splitHandle(h)
	e := &typeSlots[i]
	e.t, e.live = nil, false
	e.gen = (e.gen + 1) & genMask
	freeTypeSlots = append(freeTypeSlots, i)
}

//export bcs_type_commit
func bcs_type_commit(h *C.uintptr_t) C.int {
	const call = "MPI_Type_commit"
	if rc := enter(call); rc != 0 {
		return rc
	}
	if h == nil {
		return fail(0, call, errArg, "datatype = NULL")
	}
	t, rc := lookupType(0, call, "datatype", uintptr(*h))
	if rc != 0 {
		return rc
	}
	if t.committed {
		return 0
	}
	if !t.compile() {
		return fail(0, call, errType, "datatype = %s has more than %d blocks or signature runs; bcsmpi bounds a committed type to that", describe(uintptr(*h)), maxSegs)
	}
	t.committed = true
	return 0
}

//export bcs_type_free
func bcs_type_free(h *C.uintptr_t) C.int {
	const call = "MPI_Type_free"
	if rc := enter(call); rc != 0 {
		return rc
	}
	if h == nil {
		return fail(0, call, errArg, "datatype = NULL")
	}
	t, rc := lookupType(0, call, "datatype", uintptr(*h))
	if rc != 0 {
		return rc
	}
	if t.predefined() {
		return fail(0, call, errType, "datatype = %s is predefined and cannot be freed", t.name)
	}
	if t.f90() {
		return fail(0, call, errType, "datatype = %s was returned by %s: it is predefined and cannot be freed", describe(uintptr(*h)), combinerNames[t.combiner])
	}
	if rc := deleteTypeAttrs(call, uintptr(*h)); rc != 0 { // typeattr.go
		return rc
	}
	freeTypeSlot(uintptr(*h))
	*h = hTypeNull
	return 0
}

// bcs_type_extent serves MPI_Type_size, _get_extent and _get_true_extent
// for derived types (the shim answers for predefined ones).
//
//export bcs_type_extent
func bcs_type_extent(call *C.char, h C.uintptr_t, size, lb, extent, trueLB, trueExtent *C.MPI_Count) C.int {
	name := C.GoString(call)
	if rc := enter(name); rc != 0 {
		return rc
	}
	t, rc := lookupType(0, name, "datatype", uintptr(h))
	if rc != 0 {
		return rc
	}
	*size, *lb, *extent = C.MPI_Count(t.size), C.MPI_Count(t.lb), C.MPI_Count(t.extent())
	*trueLB, *trueExtent = C.MPI_Count(t.trueLB), C.MPI_Count(t.trueUB-t.trueLB)
	return 0
}

//export bcs_type_get_name
func bcs_type_get_name(h C.uintptr_t, out *C.char, n *C.int) C.int {
	const call = "MPI_Type_get_name"
	t, rc := lookupType(0, call, "datatype", uintptr(h))
	if rc != 0 {
		return rc
	}
	s := t.name
	if len(s) > C.MPI_MAX_OBJECT_NAME-1 {
		s = s[:C.MPI_MAX_OBJECT_NAME-1]
	}
	b := unsafe.Slice((*byte)(unsafe.Pointer(out)), len(s)+1)
	copy(b, s)
	b[len(s)] = 0
	*n = C.int(len(s))
	return 0
}

//export bcs_type_set_name
func bcs_type_set_name(h C.uintptr_t, name *C.char) C.int {
	const call = "MPI_Type_set_name"
	t, rc := lookupType(0, call, "datatype", uintptr(h))
	if rc != 0 {
		return rc
	}
	if name == nil {
		return fail(0, call, errArg, "type_name = NULL")
	}
	if t.predefined() { // the shim keeps their names (PMPI_Type_set_name)
		return fail(0, call, errIntern, "datatype = %s is predefined: the shim names it", t.name)
	}
	t.name = C.GoString(name)
	return 0
}

// bcs_type_envelope is MPI_Type_get_envelope (nc == nil) and its _c form.
//
//export bcs_type_envelope
func bcs_type_envelope(h C.uintptr_t, ni, na, nc, nt, combiner *C.MPI_Count) C.int {
	const call = "MPI_Type_get_envelope"
	if rc := enter(call); rc != 0 {
		return rc
	}
	t, rc := lookupType(0, call, "datatype", uintptr(h))
	if rc != 0 {
		return rc
	}
	*combiner = C.MPI_Count(t.combiner)
	if t.predefined() {
		*ni, *na, *nt = 0, 0, 0
		if nc != nil {
			*nc = 0
		}
		return 0
	}
	*ni, *na, *nt = C.MPI_Count(len(t.ints)), C.MPI_Count(len(t.aints)), C.MPI_Count(t.contentTypes())
	if nc != nil {
		*nc = C.MPI_Count(len(t.counts))
	} else if t.large {
		return fail(0, call, errType, "datatype = %s was made by a _c constructor; use MPI_Type_get_envelope_c", describe(uintptr(h)))
	}
	return 0
}

func (t *dtInfo) contentTypes() int {
	if t.combiner == combSubarray || t.combiner == combDarray {
		return 1
	}
	if t.f90() { // its named type is bcsmpi's, not an argument of the call
		return 0
	}
	return len(t.types)
}

// bcs_type_contents is MPI_Type_get_contents and its _c form.
//
//export bcs_type_contents
func bcs_type_contents(h C.uintptr_t, maxI, maxA, maxC, maxT C.MPI_Count, ints *C.int, aints *C.MPI_Aint, counts *C.MPI_Count, types *C.uintptr_t) C.int {
	const call = "MPI_Type_get_contents"
	if rc := enter(call); rc != 0 {
		return rc
	}
	t, rc := lookupType(0, call, "datatype", uintptr(h))
	if rc != 0 {
		return rc
	}
	if t.predefined() {
		return fail(0, call, errType, "datatype = %s is predefined (combiner MPI_COMBINER_NAMED); it has no contents", t.name)
	}
	nt := t.contentTypes()
	switch {
	case int64(maxI) < int64(len(t.ints)):
		return fail(0, call, errArg, "max_integers = %d, want >= %d", int64(maxI), len(t.ints))
	case int64(maxA) < int64(len(t.aints)):
		return fail(0, call, errArg, "max_addresses = %d, want >= %d", int64(maxA), len(t.aints))
	case int64(maxC) < int64(len(t.counts)):
		return fail(0, call, errArg, "max_large_counts = %d, want >= %d", int64(maxC), len(t.counts))
	case int64(maxT) < int64(nt):
		return fail(0, call, errArg, "max_datatypes = %d, want >= %d", int64(maxT), nt)
	}
	for i, x := range t.ints {
		*(*C.int)(unsafe.Add(unsafe.Pointer(ints), i*4)) = C.int(x)
	}
	for i, x := range t.aints {
		*(*C.MPI_Aint)(unsafe.Add(unsafe.Pointer(aints), i*8)) = C.MPI_Aint(x)
	}
	for i, x := range t.counts {
		*(*C.MPI_Count)(unsafe.Add(unsafe.Pointer(counts), i*8)) = C.MPI_Count(x)
	}
	for i, o := range t.types[:nt] {
		// A predefined type is returned as itself; a derived one as a new
		// handle to it, which the caller frees.
		out := o.h
		if o.f90() {
			out = f90Handles[o]
		} else if !o.predefined() {
			out = newTypeHandle(o)
		}
		*(*C.uintptr_t)(unsafe.Add(unsafe.Pointer(types), i*8)) = C.uintptr_t(out)
	}
	return 0
}

// bcs_get_count is MPI_Get_count (elements == 0) and MPI_Get_elements for
// any datatype: the status carries the packed bytes received.
//
//export bcs_get_count
func bcs_get_count(call *C.char, st *C.MPI_Status, h C.uintptr_t, elements C.int, out *C.MPI_Count) C.int {
	name := C.GoString(call)
	if rc := enter(name); rc != 0 {
		return rc
	}
	if st == nil || out == nil {
		return fail(0, name, errArg, "status = NULL (MPI_STATUS_IGNORE), want a status")
	}
	t, rc := committedType(0, name, "datatype", uintptr(h))
	if rc != 0 {
		return rc
	}
	bytes := int64(uint32(st.MPI_internal[0])) | int64(uint32(st.MPI_internal[1]))<<32
	var n int64
	switch {
	case elements != 0:
		n = t.elements(bytes)
	case t.wire == 0:
		n = 0
	case bytes%t.wire != 0:
		n = -1
	default:
		n = bytes / t.wire
	}
	if n < 0 {
		*out = C.MPI_UNDEFINED
	} else {
		*out = C.MPI_Count(n)
	}
	return 0
}

// ---- MPI_Pack, MPI_Unpack, MPI_Pack_size ----

func commSlot(call string, h C.uintptr_t) (int, C.int) {
	return enterComm(call, uintptr(h))
}

// bcs_pack is MPI_Pack (unpack == 0: items at in are packed into out) and
// MPI_Unpack (unpack != 0: packed bytes at out are unpacked into items at
// in); outSize is the packed buffer's size.
//
//export bcs_pack
func bcs_pack(call *C.char, in unsafe.Pointer, count C.MPI_Count, dt C.uintptr_t, out unsafe.Pointer, outSize C.MPI_Count, pos *C.MPI_Count, commH C.uintptr_t, unpack C.int) C.int {
	name := C.GoString(call)
	ci, rc := commSlot(name, commH)
	if rc != 0 {
		return rc
	}
	t, rc := committedType(ci, name, "datatype", uintptr(dt))
	if rc != 0 {
		return rc
	}
	switch {
	case count < 0:
		return fail(ci, name, errCount, "count = %d, want >= 0", int64(count))
	case pos == nil:
		return fail(ci, name, errArg, "position = NULL")
	case outSize < 0:
		return fail(ci, name, errArg, "size = %d, want >= 0", int64(outSize))
	case *pos < 0 || *pos > outSize:
		return fail(ci, name, errArg, "position = %d, want 0..%d (the packed buffer's size)", int64(*pos), int64(outSize))
	}
	what := "incount"
	if unpack != 0 {
		what = "outcount"
	}
	need, e := t.countBytes(what, int64(count))
	if e != nil {
		return fail(ci, name, e.class, "%s", e.msg)
	}
	packed, user := out, in // the C shim passes MPI_Unpack's buffers in this order too
	if need > int64(outSize-*pos) {
		if unpack != 0 {
			return fail(ci, name, errTruncate, "unpacking %d items of %s needs %d bytes; the packed buffer has %d left after position %d", int64(count), t.describe(), need, int64(outSize-*pos), int64(*pos))
		}
		return fail(ci, name, errTruncate, "packing %d items of %s needs %d bytes; the output buffer has %d left after position %d", int64(count), t.describe(), need, int64(outSize-*pos), int64(*pos))
	}
	if need == 0 {
		return 0
	}
	if packed == nil {
		return fail(ci, name, errBuffer, "the packed buffer is NULL with %d bytes to move", need)
	}
	buf := unsafe.Slice((*byte)(unsafe.Add(packed, int64(*pos))), need)
	if unpack != 0 {
		t.unpack(user, buf, int(count))
	} else {
		t.pack(buf, user, int(count))
	}
	*pos += C.MPI_Count(need)
	return 0
}

//export bcs_pack_size
func bcs_pack_size(call *C.char, count C.MPI_Count, dt C.uintptr_t, commH C.uintptr_t, size *C.MPI_Count) C.int {
	name := C.GoString(call)
	ci, rc := commSlot(name, commH)
	if rc != 0 {
		return rc
	}
	t, rc := committedType(ci, name, "datatype", uintptr(dt))
	if rc != 0 {
		return rc
	}
	if count < 0 {
		return fail(ci, name, errCount, "incount = %d, want >= 0", int64(count))
	}
	if t.wire > 0 && int64(count) > math.MaxInt64/t.wire {
		return fail(ci, name, errCount, "incount = %d: the packed size overflows", int64(count))
	}
	*size = C.MPI_Count(int64(count) * t.wire)
	return 0
}

// bcs_status_set_elements is MPI_Status_set_elements: the status says that
// n basic elements of the datatype were received (whole items and a prefix
// of the next one's signature).
//
//export bcs_status_set_elements
func bcs_status_set_elements(call *C.char, st *C.MPI_Status, h C.uintptr_t, n C.MPI_Count) C.int {
	name := C.GoString(call)
	if rc := enter(name); rc != 0 {
		return rc
	}
	if st == nil {
		return fail(0, name, errArg, "status = NULL")
	}
	t, rc := committedType(0, name, "datatype", uintptr(h))
	if rc != 0 {
		return rc
	}
	if n < 0 {
		return fail(0, name, errCount, "count = %d, want >= 0", int64(n))
	}
	var bytes int64
	if k := int64(n); k > 0 {
		if t.elems == 0 {
			return fail(0, name, errCount, "count = %d elements of %s, which has none", k, t.describe())
		}
		var ok bool
		if bytes, ok = mulCheck(k/t.elems, t.wire); !ok || bytes > math.MaxInt64-t.wire {
			return fail(0, name, errCount, "count = %d elements of %s: their bytes overflow", k, t.describe())
		}
		for rem, i := k%t.elems, 0; rem > 0; i++ {
			r := t.sig[i]
			m := min(rem, r.n)
			bytes += m * r.basic.wire
			rem -= m
		}
	}
	st.MPI_internal[0], st.MPI_internal[1] = C.int(uint32(bytes)), C.int(uint32(uint64(bytes)>>32))
	return 0
}
