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
