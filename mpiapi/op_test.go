package mpiapi

import (
	"testing"
	"unsafe"

	"github.com/bcsmpi/bcsmpi/internal/reduce"
)

type celsius float64 // a named type keeps its underlying element type

// TestTypeOf: every buffer element type maps to the runtime type of the same
// size and kind.
func TestTypeOf(t *testing.T) {
	check := func(name string, got reduce.Type, want reduce.Type, size uintptr) {
		t.Helper()
		if got != want || uintptr(got.Size()) != size {
			t.Errorf("%s: %v (size %d), want %v (size %d)", name, got, got.Size(), want, size)
		}
	}
	check("int8", typeOf[int8](), reduce.Int8, 1)
	check("uint16", typeOf[uint16](), reduce.Uint16, 2)
	check("int", typeOf[int](), reduce.Int64, unsafe.Sizeof(int(0)))
	check("uint", typeOf[uint](), reduce.Uint64, unsafe.Sizeof(uint(0)))
	check("uint32", typeOf[uint32](), reduce.Uint32, 4)
	check("float32", typeOf[float32](), reduce.Float32, 4)
	check("celsius", typeOf[celsius](), reduce.Float64, 8)
	check("ValIdx[float64]", typeOf[ValIdx[float64]](), reduce.Float64Int, unsafe.Sizeof(ValIdx[float64]{}))
	check("ValIdx[int32]", typeOf[ValIdx[int32]](), reduce.Int32Int, unsafe.Sizeof(ValIdx[int32]{}))
}

func addF(in, inout []float64) {
	for i := range in {
		inout[i] += in[i]
	}
}

func mulF(in, inout []float64) {
	for i := range in {
		inout[i] *= in[i]
	}
}

// TestOpIdentity: user operations made alike — in any number and order, from
// any function value — have one identity; a different name, element type or
// commutativity gives another.
func TestOpIdentity(t *testing.T) {
	saved := userOps
	userOps = map[*Op]struct{}{}
	t.Cleanup(func() { userOps = saved })
	scaled := func(k float64) func(in, inout []float64) {
		return func(in, inout []float64) {
			for i := range in {
				inout[i] += k * in[i]
			}
		}
	}
	a := NewOp("sum", addF, true)
	NewOp("other", mulF, true) // made in between: no effect on identities
	same := []*Op{NewOp("sum", addF, true)}
	if a.id == 0 || same[0].id != a.id {
		t.Errorf("alike operations: ids %#x and %#x, want equal and non-zero", a.id, same[0].id)
	}
	if c1, c2 := NewOp("scaled", scaled(2), true), NewOp("scaled", scaled(3), true); c1.id != c2.id {
		t.Errorf("closures of one literal (the compiler may copy it per call site): ids %#x and %#x, want equal", c1.id, c2.id)
	}
	for name, o := range map[string]*Op{
		"name":          NewOp("product", mulF, true),
		"element type":  NewOp("sum", func(in, inout []float32) {}, true),
		"commutativity": NewOp("sum", addF, false),
	} {
		if o.id == a.id {
			t.Errorf("another %s: id %#x, the same as the original's", name, o.id)
		}
	}
	if len(userOps) != 8 {
		t.Errorf("%d live user operations, want 8", len(userOps))
	}
}
