package mpiapi

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/bcsmpi/bcsmpi/internal/reduce"
)

// TestCoreIsTheGenericAPI runs bad calls through the generic API and
// through the byte-level core with the same buffers as bytes: both must
// fail with the same class and the very same message (one implementation),
// and the valid twins must post through both.
func TestCoreIsTheGenericAPI(t *testing.T) {
	f := make([]float64, 8)
	b := bytesView(f)
	const f64 = reduce.Float64
	at := func(i, j int) []byte { return b[i*8 : j*8] } // f[i:j] as bytes
	drop := func(_ *Request, err error) error { return err }
	stat := func(_ Status, err error) error { return err }
	for _, tc := range []struct {
		name          string
		generic, core func() error
		class         Class // 0: both must succeed
	}{
		{"isend dest", func() error { return drop(Isend(World(), f, 2, 0)) }, func() error { return drop(IsendBytes(World(), b, f64, 2, 0)) }, ErrRank},
		{"irecv tag", func() error { return drop(Irecv(World(), f, 1, -5)) }, func() error { return drop(IrecvBytes(World(), b, f64, 1, -5)) }, ErrTag},
		{"ssend nil comm", func() error { return Ssend(nil, f, 1, 0) }, func() error { return SsendBytes(nil, b, f64, 1, 0) }, ErrComm},
		{"sendrecv dest", func() error { return stat(Sendrecv(World(), f[:1], 7, 0, f[1:2], 1, 0)) },
			func() error { return stat(SendrecvBytes(World(), at(0, 1), f64, 7, 0, at(1, 2), f64, 1, 0)) }, ErrRank},
		{"bcast root", func() error { return drop(Ibcast(World(), f, 2)) }, func() error { return drop(IbcastBytes(World(), b, f64, 2)) }, ErrRoot},
		{"gather recv short", func() error { return drop(Igather(World(), f[:2], f[2:5], 0)) },
			func() error { return drop(IgatherBytes(World(), at(0, 2), at(2, 5), f64, 0)) }, ErrCount},
		{"scatter overlap", func() error { return drop(Iscatter(World(), f[:4], f[1:3], 0)) },
			func() error { return drop(IscatterBytes(World(), at(0, 4), at(1, 3), f64, 0)) }, ErrBuffer},
		{"allgather", func() error { return drop(Iallgather(World(), f[:2], f[2:7])) },
			func() error { return drop(IallgatherBytes(World(), at(0, 2), at(2, 7), f64)) }, ErrCount},
		{"alltoall not multiple", func() error { return drop(Ialltoall(World(), f[:3], f[3:6])) },
			func() error { return drop(IalltoallBytes(World(), at(0, 3), at(3, 6), f64)) }, ErrCount},
		{"gatherv does not fit", func() error { return drop(Igatherv(World(), f[:1], f[4:8], []int{1, 2}, []int{0, 3}, 0)) },
			func() error {
				return drop(IgathervBytes(World(), at(0, 1), at(4, 8), f64, []int{1, 2}, []int{0, 3}, 0))
			}, ErrCount},
		{"scatterv counts", func() error { return drop(Iscatterv(World(), f[:4], []int{1}, []int{0, 1}, f[4:5], 0)) },
			func() error { return drop(IscattervBytes(World(), at(0, 4), []int{1}, []int{0, 1}, at(4, 5), f64, 0)) }, ErrCount},
		{"allgatherv overlap", func() error { return drop(Iallgatherv(World(), f[1:2], f[:4], []int{1, 1}, []int{2, 3})) },
			func() error {
				return drop(IallgathervBytes(World(), at(1, 2), at(0, 4), f64, []int{1, 1}, []int{2, 3}))
			}, ErrBuffer},
		{"alltoallv overlap", func() error {
			return drop(Ialltoallv(World(), f[:4], []int{1, 1}, []int{0, 1}, f[2:6], []int{1, 1}, []int{0, 1}))
		},
			func() error {
				return drop(IalltoallvBytes(World(), at(0, 4), []int{1, 1}, []int{0, 1}, at(2, 6), f64, []int{1, 1}, []int{0, 1}))
			}, ErrBuffer},
		{"allreduce counts", func() error { return drop(Iallreduce(World(), f[:4], f[4:7], Sum)) },
			func() error { return drop(IallreduceBytes(World(), at(0, 4), at(4, 7), f64, Sum)) }, ErrCount},
		{"reduce op on type", func() error { return drop(Ireduce(World(), f[:1], f[1:2], Band, 0)) },
			func() error { return drop(IreduceBytes(World(), at(0, 1), at(1, 2), f64, Band, 0)) }, ErrOp},
		{"scan nil op", func() error { return drop(Iscan(World(), f[:1], f[1:2], nil)) },
			func() error { return drop(IscanBytes(World(), at(0, 1), at(1, 2), f64, nil)) }, ErrOp},
		{"reduce_scatter sum", func() error { return ReduceScatter(World(), f[:4], f[4:6], []int{2, 1}, Sum) },
			func() error { return ReduceScatterBytes(World(), at(0, 4), at(4, 6), f64, []int{2, 1}, Sum) }, ErrCount},
		{"ok isend", func() error { return drop(Isend(World(), f, 1, 0)) }, func() error { return drop(IsendBytes(World(), b, f64, 1, 0)) }, 0},
		{"ok iallreduce in place", func() error { return drop(Iallreduce(World(), f[:4], f[:4], Sum)) },
			func() error { return drop(IallreduceBytes(World(), at(0, 4), at(0, 4), f64, Sum)) }, 0},
		{"ok igather", func() error { return drop(Igather(World(), f[:2], f[2:6], 0)) },
			func() error { return drop(IgatherBytes(World(), at(0, 2), at(2, 6), f64, 0)) }, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var msgs [2]string
			for i, call := range []func() error{tc.generic, tc.core} {
				fakeRank(t)
				err := call()
				if tc.class == 0 {
					if err != nil {
						t.Fatalf("valid call failed: %v", err)
					}
					continue
				}
				if !errors.Is(err, tc.class) {
					t.Fatalf("error %v is not %v", err, tc.class)
				}
				msgs[i] = err.Error()
			}
			if msgs[0] != msgs[1] {
				t.Errorf("the generic call and the core disagree:\n generic: %s\n core:    %s", msgs[0], msgs[1])
			}
		})
	}
}

// TestCoreChecksItsBuffers: the checks only the byte-level entry points can
// fail, an element type that is not the runtime's and a buffer that is not
// a whole number of elements, refuse the call before it takes a request
// slot.
func TestCoreChecksItsBuffers(t *testing.T) {
	b := make([]byte, 12)
	drop := func(_ *Request, err error) error { return err }
	for _, tc := range []struct {
		name  string
		call  func() error
		class Class
		want  string
	}{
		{"isend type", func() error { return drop(IsendBytes(World(), b, 0, 1, 0)) }, ErrType, "element type type(0) is not one of the runtime's element types"},
		{"irecv partial element", func() error { return drop(IrecvBytes(World(), b, reduce.Float64, 1, 0)) }, ErrCount, "len(buf) = 12 bytes is not a whole number of float64 elements (8 bytes each)"},
		{"bcast type", func() error { return BcastBytes(World(), b, 99, 0) }, ErrType, "type(99)"},
		{"allreduce recv partial", func() error { return AllreduceBytes(World(), b[:8], b[:6], reduce.Int64, Sum) }, ErrCount, "len(recv) = 6 bytes is not a whole number of int64 elements"},
		{"alltoallv send partial", func() error {
			return AlltoallvBytes(World(), b[:3], []int{0, 0}, []int{0, 0}, b[4:], reduce.Int16, []int{0, 0}, []int{0, 0})
		}, ErrCount, "len(send) = 3 bytes is not a whole number of int16 elements"},
		{"mrecv type", func() error { _, err := MrecvBytes(&Message{}, b, 0); return err }, ErrType, "type(0)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := fakeRank(t)
			free := len(p.free)
			err := tc.call()
			if !errors.Is(err, tc.class) || !strings.Contains(fmtErr(err), tc.want) {
				t.Fatalf("error %v: want %v saying %q", err, tc.class, tc.want)
			}
			if len(p.free) != free {
				t.Errorf("a rejected call took %d request slots", free-len(p.free))
			}
		})
	}
}

func fmtErr(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// TestUserOpOnBytes: NewOp's function runs on the core's byte blocks as
// elements (a prefix fold of int32 sums, and a ValIdx operation), and an
// operation made on bytes has the identity and element name of the one
// made with the matching Go type, so Go and C members agree.
func TestUserOpOnBytes(t *testing.T) {
	fakeRank(t)
	sum := NewOp("sum32", func(in, inout []int32) {
		for i := range in {
			inout[i] += in[i]
		}
	}, true)
	blocks := aligned(3 * 2 * 4) // 3 members, 2 int32 each
	vals := elemsView[int32](blocks)
	copy(vals, []int32{1, 10, 2, 20, 3, 30})
	foldUser(sum.user, blocks, 3, 2*4, true)
	if want := []int32{1, 10, 3, 30, 6, 60}; !equalInts(vals, want) {
		t.Errorf("prefix fold = %v, want %v", vals, want)
	}

	byBytes := NewOpBytes("sum32", reduce.Int32, func(in, inout []byte) {}, true)
	if byBytes.id != sum.id || byBytes.elem != "int32" {
		t.Errorf("NewOpBytes: identity %d, elements %q; NewOp[int32]: identity %d, elements %q", byBytes.id, byBytes.elem, sum.id, sum.elem)
	}
	pair := NewOp("loc", func(in, inout []ValIdx[float64]) {}, false)
	pairBytes := NewOpBytes("loc", reduce.Float64Int, func(in, inout []byte) {}, false)
	if pair.id != pairBytes.id || pairBytes.elem != "mpiapi.ValIdx[float64]" {
		t.Errorf("pair operations: NewOp %d %q, NewOpBytes %d %q", pair.id, pair.elem, pairBytes.id, pairBytes.elem)
	}
	// Go types of one element code are one element type (checkOp accepts
	// NewOp[int] on int64 elements), so their operations are one operation.
	type meters int64
	byInt := NewOp("sum64", func(in, inout []int) {}, true)
	byNamed := NewOp("sum64", func(in, inout []meters) {}, true)
	byInt64 := NewOpBytes("sum64", reduce.Int64, func(in, inout []byte) {}, true)
	if (byInt.id != byInt64.id && strconv.IntSize == 64) || byNamed.id != byInt64.id || byInt.elem != "int" {
		t.Errorf("NewOp[int] %d (%q), NewOp[meters] %d, NewOpBytes(Int64) %d: want one identity, named int", byInt.id, byInt.elem, byNamed.id, byInt64.id)
	}
	if _, err := checkOp(self, "MPI_Reduce", sum, reduce.Int32); err != nil {
		t.Errorf("checkOp on its own type: %v", err)
	}
	if _, err := checkOp(self, "MPI_Reduce", sum, reduce.Float32); err == nil || !strings.Contains(err.Error(), "defined on int32 elements, not float32") {
		t.Errorf("checkOp on another type: %v", err)
	}
}

func equalInts(a, b []int32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
