package main

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"unsafe"
)

// Property test of the datatype layout: random nested types are compiled
// (build, compile) and checked against a naive typemap computed from the
// constructor arguments by the standard's definitions: size, true bounds,
// number of elements, MPI_Get_elements on every prefix, and pack and unpack
// byte for byte. The seed is printed and the failing type described.

type tmEntry struct {
	off   int64
	basic *dtInfo
}

// naive is the typemap of one item of t, from the standard's definitions.
func naive(t *dtInfo) []tmEntry {
	if pp, ok := pairParts[t.h]; ok && t.predefined() { // a pair type: its two parts
		return []tmEntry{{0, predefinedType(pp.v)}, {pp.off, predefinedType(pp.i)}}
	}
	if t.predefined() {
		return []tmEntry{{0, t}}
	}
	v := t.values()
	shifted := func(out []tmEntry, o *dtInfo, d int64) []tmEntry {
		for _, e := range naive(o) {
			out = append(out, tmEntry{e.off + d, e.basic})
		}
		return out
	}
	rep := func(out []tmEntry, o *dtInfo, n, d int64) []tmEntry {
		for k := int64(0); k < n; k++ {
			out = shifted(out, o, d+k*o.extent())
		}
		return out
	}
	old := t.types[0]
	var out []tmEntry
	switch t.combiner {
	case combDup, combResized:
		return naive(old)
	case combContiguous:
		return rep(out, old, v[0], 0)
	case combVector:
		for i := int64(0); i < v[0]; i++ {
			out = rep(out, old, v[1], i*v[2]*old.extent())
		}
	case combHvector:
		for i := int64(0); i < v[0]; i++ {
			out = rep(out, old, v[1], i*v[2])
		}
	case combIndexed:
		for i := int64(0); i < v[0]; i++ {
			out = rep(out, old, v[1+i], v[1+v[0]+i]*old.extent())
		}
	case combHindexed:
		for i := int64(0); i < v[0]; i++ {
			out = rep(out, old, v[1+i], v[1+v[0]+i])
		}
	case combIndexedBlock:
		for i := int64(0); i < v[0]; i++ {
			out = rep(out, old, v[1], v[2+i]*old.extent())
		}
	case combStruct:
		for i := int64(0); i < v[0]; i++ {
			out = rep(out, t.types[i], v[1+i], v[1+v[0]+i])
		}
	case combSubarray: // C order only in the generator
		nd := v[0]
		sizes, subs, starts := v[1:1+nd], v[1+nd:1+2*nd], v[1+2*nd:1+3*nd]
		idx := make([]int64, nd)
		for {
			lin := int64(0)
			for d := int64(0); d < nd; d++ {
				lin = lin*sizes[d] + starts[d] + idx[d]
			}
			out = shifted(out, old, lin*old.extent())
			d := nd - 1
			for d >= 0 {
				idx[d]++
				if idx[d] < subs[d] {
					break
				}
				idx[d] = 0
				d--
			}
			if d < 0 {
				return out
			}
		}
	}
	return out
}

type gen struct {
	r     *rand.Rand
	basic []*dtInfo
}

func (g *gen) n(lo, hi int) int64 { return int64(lo + g.r.IntN(hi-lo+1)) }

// typ makes a random type of at most depth levels; desc describes it.
func (g *gen) typ(depth int) (*dtInfo, string) {
	if depth == 0 || g.r.IntN(4) == 0 {
		b := g.basic[g.r.IntN(len(g.basic))]
		return b, b.name
	}
	old, od := g.typ(depth - 1)
	t := &dtInfo{types: []*dtInfo{old}}
	switch g.r.IntN(9) {
	case 0:
		t.combiner, t.ints = combContiguous, []int32{int32(g.n(0, 4))}
	case 1:
		t.combiner, t.ints = combVector, []int32{int32(g.n(0, 4)), int32(g.n(0, 3)), int32(g.n(-4, 6))}
	case 2:
		t.combiner, t.ints, t.aints = combHvector, []int32{int32(g.n(0, 4)), int32(g.n(0, 3))}, []int64{g.n(-40, 60)}
	case 3:
		c := g.n(0, 4)
		t.combiner, t.ints = combIndexed, []int32{int32(c)}
		var ds []int32
		for range c {
			t.ints = append(t.ints, int32(g.n(0, 3)))
			ds = append(ds, int32(g.n(-3, 8)))
		}
		t.ints = append(t.ints, ds...)
	case 4:
		c := g.n(0, 4)
		t.combiner, t.ints = combHindexed, []int32{int32(c)}
		for range c {
			t.ints = append(t.ints, int32(g.n(0, 3)))
			t.aints = append(t.aints, g.n(-30, 80))
		}
	case 5:
		c := g.n(0, 4)
		t.combiner, t.ints = combIndexedBlock, []int32{int32(c), int32(g.n(0, 3))}
		for range c {
			t.ints = append(t.ints, int32(g.n(-2, 8)))
		}
	case 6:
		c := g.n(1, 3)
		t.combiner, t.ints, t.types = combStruct, []int32{int32(c)}, nil
		var parts []string
		for range c {
			o, d := g.typ(depth - 1)
			t.types = append(t.types, o)
			t.ints = append(t.ints, int32(g.n(0, 3)))
			t.aints = append(t.aints, g.n(-16, 64))
			parts = append(parts, d)
		}
		t.build()
		return t, fmt.Sprintf("struct(%v, %v, [%s])", t.ints, t.aints, strings.Join(parts, ", "))
	case 7:
		t.combiner, t.aints = combResized, []int64{g.n(-8, 8), g.n(0, 40)}
	case 8:
		nd := g.n(1, 3)
		t.combiner, t.ints = combSubarray, []int32{int32(nd)}
		var sizes, subs, starts []int32
		for range nd {
			s := g.n(1, 4)
			sub := g.n(1, int(s))
			sizes, subs, starts = append(sizes, int32(s)), append(subs, int32(sub)), append(starts, int32(g.n(0, int(s-sub))))
		}
		t.ints = append(append(append(append(t.ints, sizes...), subs...), starts...), orderC)
	}
	if e := t.build(); e != nil {
		panic(fmt.Sprintf("build %d %v %v: %s", t.combiner, t.ints, t.aints, e.msg))
	}
	return t, fmt.Sprintf("%s(%v, %v, %s)", combinerNames[t.combiner], t.ints, t.aints, od)
}

// orderC is MPI_ORDER_C (test files cannot use cgo).
const orderC = 12

func TestLayoutAgainstNaiveTypemap(t *testing.T) {
	seed := uint64(rand.Int64())
	t.Logf("seed %d", seed)
	g := &gen{r: rand.New(rand.NewPCG(seed, 1))}
	for _, h := range []uintptr{0x209, 0x214, 0x243, 0x208, 0x22b, 0x229, 0x22c} { // INT, DOUBLE, CHAR, SHORT, 2INT, DOUBLE_INT, SHORT_INT
		g.basic = append(g.basic, predefinedType(h))
	}
	for i := 0; i < 3000; i++ {
		typ, desc := g.typ(3)
		if !typ.compile() {
			t.Fatalf("seed %d: %s: compile failed", seed, desc)
		}
		tm := naive(typ)
		fail := func(format string, a ...any) {
			t.Fatalf("seed %d, type %d: %s\ntypemap %v\nsegs %v\n%s", seed, i, desc, tm, typ.segs, fmt.Sprintf(format, a...))
		}
		var size, wire, tlo, thi int64
		for k, e := range tm {
			size += e.basic.size
			wire += e.basic.wire
			if k == 0 || e.off < tlo {
				tlo = e.off
			}
			if k == 0 || e.off+e.basic.extent() > thi {
				thi = e.off + e.basic.extent()
			}
		}
		if typ.size != size || typ.wire != wire || typ.elems != int64(len(tm)) {
			fail("size %d wire %d elems %d, want %d %d %d", typ.size, typ.wire, typ.elems, size, wire, len(tm))
		}
		if len(tm) > 0 && (typ.trueLB != tlo || typ.trueUB != thi) {
			fail("true bounds [%d, %d), want [%d, %d)", typ.trueLB, typ.trueUB, tlo, thi)
		}
		// Prefixes of the packed form: MPI_Get_elements.
		var pos int64
		for k, e := range tm {
			if got := typ.elements(pos); got != int64(k) {
				fail("elements(%d) = %d, want %d", pos, got, k)
			}
			if e.basic.wire > 1 {
				if got := typ.elements(pos + 1); got != -1 {
					fail("elements(%d) = %d, want -1 (inside an element)", pos+1, got)
				}
			}
			pos += e.basic.wire
		}
		// Pack and unpack count items against the typemap.
		count := int(g.n(1, 3))
		lo, hi := typ.span(count)
		lo, hi = min(lo, 0), max(hi, 0) // the buffer's address is inside it
		buf := make([]byte, hi-lo+1)
		for k := range buf {
			buf[k] = byte(g.r.IntN(256))
		}
		base := unsafe.Pointer(&buf[-lo])
		var want []byte
		for c := 0; c < count; c++ {
			for _, e := range tm {
				o := -lo + int64(c)*typ.extent() + e.off
				want = append(want, buf[o:o+e.basic.wire]...)
			}
		}
		got := make([]byte, len(want))
		if n := typ.pack(got, base, count); n != len(want) || !bytes.Equal(got, want) {
			fail("pack of %d items: %d bytes %x, want %d bytes %x", count, n, got, len(want), want)
		}
		back := make([]byte, len(buf))
		if n := typ.unpack(unsafe.Pointer(&back[-lo]), got, count); n != len(got) {
			fail("unpack read %d bytes, want %d", n, len(got))
		}
		again := make([]byte, len(want))
		typ.pack(again, unsafe.Pointer(&back[-lo]), count)
		if !bytes.Equal(again, want) && !overlaps(tm, typ.extent(), count) {
			fail("pack(unpack(x)) = %x, want %x", again, want)
		}
	}
}

// overlaps reports whether two elements of count items share a byte (an
// unpack into such a type is erroneous in MPI, so its result is not checked).
func overlaps(tm []tmEntry, ext int64, count int) bool {
	seen := map[int64]bool{}
	for c := 0; c < count; c++ {
		for _, e := range tm {
			for b := int64(0); b < e.basic.wire; b++ {
				o := int64(c)*ext + e.off + b
				if seen[o] {
					return true
				}
				seen[o] = true
			}
		}
	}
	return false
}

// BenchmarkPackVector packs a column of doubles (every other one of 2^20),
// the packed copy a non-contiguous send makes.
func BenchmarkPackVector(b *testing.B) {
	const n = 1 << 19
	vec := &dtInfo{combiner: combVector, ints: []int32{n, 1, 2}, types: []*dtInfo{predefinedType(0x214)}}
	if e := vec.build(); e != nil || !vec.compile() {
		b.Fatal("vector type")
	}
	src := make([]float64, 2*n)
	dst := make([]byte, n*8)
	b.SetBytes(n * 8)
	for b.Loop() {
		vec.pack(dst, unsafe.Pointer(&src[0]), 1)
	}
}
