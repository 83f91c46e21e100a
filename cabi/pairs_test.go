package main

import (
	"encoding/binary"
	"math"
	"testing"
	"unsafe"

	"github.com/bcsmpi/bcsmpi/internal/reduce"
	"github.com/bcsmpi/bcsmpi/mpiapi"
)

// packedDoubleInts packs (value, index) pairs as MPI_DOUBLE_INT's parts:
// 8 bytes of double, 4 of int, no padding.
func packedDoubleInts(vs []float64, is []int32) []byte {
	b := make([]byte, 0, 12*len(vs))
	for k := range vs {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(vs[k]))
		b = binary.LittleEndian.AppendUint32(b, uint32(is[k]))
	}
	return b
}

// The runtime's layout of each pair type is mpiapi.ValIdx's: the index
// where Go puts it.
func TestPairLayoutIsValIdx(t *testing.T) {
	for _, c := range []struct {
		e         reduce.Type
		size, idx uintptr
	}{
		{reduce.Float32Int, unsafe.Sizeof(mpiapi.ValIdx[float32]{}), unsafe.Offsetof(mpiapi.ValIdx[float32]{}.Idx)},
		{reduce.Float64Int, unsafe.Sizeof(mpiapi.ValIdx[float64]{}), unsafe.Offsetof(mpiapi.ValIdx[float64]{}.Idx)},
		{reduce.Int32Int, unsafe.Sizeof(mpiapi.ValIdx[int32]{}), unsafe.Offsetof(mpiapi.ValIdx[int32]{}.Idx)},
		{reduce.Int64Int, unsafe.Sizeof(mpiapi.ValIdx[int64]{}), unsafe.Offsetof(mpiapi.ValIdx[int64]{}.Idx)},
		{reduce.Int16Int, unsafe.Sizeof(mpiapi.ValIdx[int16]{}), unsafe.Offsetof(mpiapi.ValIdx[int16]{}.Idx)},
	} {
		if int(c.size) != c.e.Size() || int(c.idx) != pairIndexOffset(c.e) {
			t.Errorf("%s: ValIdx is %d bytes with the index at %d; pairs.go says %d and %d", c.e, c.size, c.idx, c.e.Size(), pairIndexOffset(c.e))
		}
	}
}

func TestExpandCompressPairs(t *testing.T) {
	packed := packedDoubleInts([]float64{1.5, -2}, []int32{7, -3})
	g := aligned(2 * reduce.Float64Int.Size())
	expandPairs(reduce.Float64Int, g, packed)
	vi := unsafe.Slice((*mpiapi.ValIdx[float64])(unsafe.Pointer(&g[0])), 2)
	if vi[0] != (mpiapi.ValIdx[float64]{Val: 1.5, Idx: 7}) || vi[1] != (mpiapi.ValIdx[float64]{Val: -2, Idx: -3}) {
		t.Fatalf("expanded %+v", vi)
	}
	back := make([]byte, len(packed))
	compressPairs(reduce.Float64Int, back, g)
	if string(back) != string(packed) {
		t.Fatalf("compressed % x, want % x", back, packed)
	}
}

// applyPacked reduces packed pairs; of equal values the lower index wins.
func TestApplyPackedPairs(t *testing.T) {
	for _, c := range []struct {
		op   reduce.Op
		want []int32
	}{
		{reduce.Minloc, []int32{2, 4, 5}},
		{reduce.Maxloc, []int32{2, 1, 5}},
	} {
		acc := packedDoubleInts([]float64{1, 3, 0}, []int32{2, 4, 5})
		in := packedDoubleInts([]float64{1, 5, 0}, []int32{3, 1, 6}) // a tie, a larger value, a tie with a larger index
		in = append(make([]byte, 1), in...)[1:]                      // misaligned, as a message's payload may be
		if !applyPacked(c.op, reduce.Float64Int, acc, in) {
			t.Fatalf("%s: refused whole pairs", c.op)
		}
		for k, w := range c.want {
			if got := int32(binary.LittleEndian.Uint32(acc[12*k+8:])); got != w {
				t.Errorf("%s: pair %d index %d, want %d", c.op, k, got, w)
			}
		}
	}
	if applyPacked(reduce.Minloc, reduce.Float64Int, make([]byte, 16), make([]byte, 16)) {
		t.Error("16 bytes taken as whole packed MPI_DOUBLE_INTs (12 each)")
	}
}
