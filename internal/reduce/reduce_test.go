package reduce

import (
	"encoding/binary"
	"math"
	"strings"
	"testing"
	"unsafe"
)

func bytesOf[T any](v []T) []byte {
	var z T
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(v))), len(v)*int(unsafe.Sizeof(z)))
}

// TestIntegerOps compares every integer operation with Go's operators.
func TestIntegerOps(t *testing.T) {
	a0 := []int16{0, 1, -5, 7, 300, -32768, 12}
	b0 := []int16{3, 0, -5, 2, -300, 1, 12}
	b2i := func(v bool) int16 {
		if v {
			return 1
		}
		return 0
	}
	for op, f := range map[Op]func(a, b int16) int16{
		Sum: func(a, b int16) int16 { return a + b }, Prod: func(a, b int16) int16 { return a * b },
		Min: func(a, b int16) int16 { return min(a, b) }, Max: func(a, b int16) int16 { return max(a, b) },
		Land: func(a, b int16) int16 { return b2i(a != 0 && b != 0) }, Lor: func(a, b int16) int16 { return b2i(a != 0 || b != 0) },
		Lxor: func(a, b int16) int16 { return b2i((a != 0) != (b != 0)) }, Band: func(a, b int16) int16 { return a & b },
		Bor: func(a, b int16) int16 { return a | b }, Bxor: func(a, b int16) int16 { return a ^ b },
	} {
		if err := Check(op, Int16); err != nil {
			t.Fatal(err)
		}
		a := append([]int16(nil), a0...)
		Apply(op, Int16, bytesOf(a), bytesOf(b0))
		for i := range a {
			if want := f(a0[i], b0[i]); a[i] != want {
				t.Errorf("%s: element %d = %d, want %d", op, i, a[i], want)
			}
		}
	}
}

// TestFloatFoldOrder: Total and Prefix fold left to right in slot order,
// bit for bit like a Go loop, for values whose sum depends on the order.
func TestFloatFoldOrder(t *testing.T) {
	vals := [][]float64{{1e16, 2}, {1, -1e16}, {-1e16, 3.5}, {1, 1e-3}}
	const stride = 16
	buf := make([]byte, stride*len(vals))
	load := func() {
		for i, v := range vals {
			for j, x := range v {
				binary.LittleEndian.PutUint64(buf[i*stride+8*j:], math.Float64bits(x))
			}
		}
	}
	at := func(slot, j int) float64 {
		return math.Float64frombits(binary.LittleEndian.Uint64(buf[slot*stride+8*j:]))
	}
	load()
	Fold(Sum, Float64, Total, buf, 0, stride, 16, len(vals), nil)
	for j := range 2 {
		acc := vals[0][j]
		for _, v := range vals[1:] {
			acc += v[j]
		}
		if got := at(0, j); math.Float64bits(got) != math.Float64bits(acc) {
			t.Errorf("total element %d = %v, want %v", j, got, acc)
		}
	}
	load()
	Fold(Sum, Float64, Prefix, buf, 0, stride, 16, len(vals), make([]byte, 16))
	for j := range 2 {
		acc := vals[0][j]
		for i := range vals {
			if i > 0 {
				acc += vals[i][j]
			}
			if got := at(i, j); math.Float64bits(got) != math.Float64bits(acc) {
				t.Errorf("prefix slot %d element %d = %v, want %v", i, j, got, acc)
			}
		}
	}
	// Min keeps the accumulated value on ties, in slot order: -0 before +0.
	z := []float64{math.Copysign(0, -1), 0}
	Apply(Min, Float64, bytesOf(z[:1]), bytesOf(z[1:]))
	if !math.Signbit(z[0]) {
		t.Error("MIN(-0, +0) replaced the accumulated -0")
	}
}

// TestLocOps: MINLOC and MAXLOC take the extreme value and, on ties, the lower index.
func TestLocOps(t *testing.T) {
	a := []Pair[float64]{{1, 4}, {2, 4}, {5, 9}, {5, 2}}
	b := []Pair[float64]{{1, 3}, {1, 0}, {5, 1}, {7, 8}}
	mn := append([]Pair[float64](nil), a...)
	Apply(Minloc, Float64Int, bytesOf(mn), bytesOf(b))
	if want := []Pair[float64]{{1, 3}, {1, 0}, {5, 1}, {5, 2}}; !equal(mn, want) {
		t.Errorf("MINLOC = %v, want %v", mn, want)
	}
	mx := append([]Pair[float64](nil), a...)
	Apply(Maxloc, Float64Int, bytesOf(mx), bytesOf(b))
	if want := []Pair[float64]{{1, 3}, {2, 4}, {5, 1}, {7, 8}}; !equal(mx, want) {
		t.Errorf("MAXLOC = %v, want %v", mx, want)
	}
	if Float64Int.Size() != int(unsafe.Sizeof(Pair[float64]{})) || Float32Int.Size() != int(unsafe.Sizeof(Pair[float32]{})) ||
		Int64Int.Size() != int(unsafe.Sizeof(Pair[int64]{})) || Int32Int.Size() != int(unsafe.Sizeof(Pair[int32]{})) {
		t.Error("pair sizes differ from Go's layout")
	}
}

func equal[T comparable](a, b []T) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return len(a) == len(b)
}

func TestCheckNamesOpAndType(t *testing.T) {
	for _, c := range []struct {
		op   Op
		t    Type
		want string
	}{
		{Band, Float64, "MPI_BAND does not apply to float64 elements; want an integer type"},
		{Sum, Float64Int, "MPI_SUM does not apply to float64-int pair elements; use MPI_MINLOC or MPI_MAXLOC"},
		{Minloc, Int32, "MPI_MINLOC does not apply to int32 elements; want value-index pairs"},
		{Op(99), Int32, "operation 99 unknown"},
		{Sum, Type(0), "element type 0 unknown"},
	} {
		err := Check(c.op, c.t)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Check(%s, %s) = %v, want %q", c.op, c.t, err, c.want)
		}
	}
}
