package mpiapi

import (
	"errors"
	"strings"
	"testing"
)

// TestArgumentChecks runs every argument check of the Go API in-process, as
// rank 0 of 2 with no agent (fakeRank): each bad call must fail with its MPI
// error class, a message naming the bad value and what would be valid, and
// no side effect (no request slot taken, nothing posted). Each valid twin
// (the "ok" rows) must post, so a check that rejected everything would fail.
func TestArgumentChecks(t *testing.T) {
	f := make([]float64, 8)
	i4 := make([]int32, 4)
	freed := &Comm{id: 9, rank: 0, size: 2, freed: true}
	closedOp := NewOp("myop", func(in, inout []float64) {}, true)
	nop := func(err error) error { return err }
	drop := func(_ *Request, err error) error { return err }
	stat := func(_ Status, err error) error { return err }

	for _, tc := range []struct {
		name  string
		call  func() error
		class Class  // 0: the call must succeed
		want  string // fragment of the message: the bad value and the valid range
	}{
		// Communicators.
		{"nil comm", func() error { return drop(Isend(nil, f, 1, 0)) }, ErrComm, "comm = nil"},
		{"freed comm", func() error { return drop(Isend(freed, f, 1, 0)) }, ErrComm, "communicator 9 was freed"},
		{"null comm", func() error { return drop(Isend(&Comm{}, f, 1, 0)) }, ErrComm, "not initialised"},
		{"free world", func() error { return World().Free() }, ErrComm, "MPI_COMM_WORLD cannot be freed"},

		// Point-to-point ranks and tags.
		{"dest too big", func() error { return drop(Isend(World(), f, 2, 0)) }, ErrRank, "dest = 2, want 0..1 or MPI_PROC_NULL"},
		{"dest negative", func() error { return drop(Isend(World(), f, -7, 0)) }, ErrRank, "dest = -7"},
		{"dest any source", func() error { return drop(Isend(World(), f, AnySource, 0)) }, ErrRank, "or MPI_PROC_NULL"},
		{"source too big", func() error { return drop(Irecv(World(), f, 5, 0)) }, ErrRank, "source = 5, want 0..1, MPI_ANY_SOURCE or MPI_PROC_NULL"},
		{"send tag negative", func() error { return drop(Isend(World(), f, 1, -1)) }, ErrTag, "tag = -1, want 0.."},
		{"send any tag", func() error { return drop(Isend(World(), f, 1, AnyTag)) }, ErrTag, "tag = "},
		{"send tag above ub", func() error { return drop(Isend(World(), f, 1, TagUB+1)) }, ErrTag, "tag = "},
		{"recv tag", func() error { return drop(Irecv(World(), f, 1, -5)) }, ErrTag, "or MPI_ANY_TAG"},
		{"probe rank", func() error { return stat(Probe(World(), 3, 0)) }, ErrRank, "source = 3"},
		{"iprobe tag", func() error { _, _, err := Iprobe(World(), 1, -3); return err }, ErrTag, "tag = -3"},
		{"ok isend", func() error { return drop(Isend(World(), f, 1, TagUB)) }, 0, ""},
		{"ok irecv wildcards", func() error { return drop(Irecv(World(), f, AnySource, AnyTag)) }, 0, ""},
		{"ok proc null", func() error { return nop(Send(World(), f, ProcNull, 0)) }, 0, ""},

		// Roots.
		{"bcast root", func() error { return drop(Ibcast(World(), f, 2)) }, ErrRoot, "root = 2, want 0..1"},
		{"reduce root", func() error { return drop(Ireduce(World(), f, f[:0], Sum, -1)) }, ErrRoot, "root = -1"},
		{"gather root", func() error { return drop(Igather(World(), f[:1], f[:2], 9)) }, ErrRoot, "root = 9"},

		// Counts, in-place and overlap of collectives.
		{"allreduce counts", func() error { return drop(Iallreduce(World(), f[:4], f[4:7], Sum)) }, ErrCount, "len(recv) = 3, want len(send) = 4"},
		{"allreduce overlap", func() error { return drop(Iallreduce(World(), f[:4], f[2:6], Sum)) }, ErrBuffer, "overlap"},
		{"ok allreduce in place", func() error { return drop(Iallreduce(World(), f[:4], f[:4], Sum)) }, 0, ""},
		{"gather recv short", func() error { return drop(Igather(World(), f[:2], make([]float64, 3), 0)) }, ErrCount, "len(recv) = 3 at the root, want size x len(send) = 2 x 2"},
		{"scatter send short", func() error { return drop(Iscatter(World(), make([]float64, 3), f[:2], 0)) }, ErrCount, "len(send) = 3 at the root"},
		{"allgather", func() error { return drop(Iallgather(World(), f[:2], make([]float64, 5))) }, ErrCount, "len(recv) = 5, want size x len(send) = 2 x 2"},
		{"alltoall not multiple", func() error { return drop(Ialltoall(World(), make([]float64, 3), make([]float64, 3))) }, ErrCount, "len(send) = 3 is not a multiple of the communicator size 2"},
		{"gatherv counts length", func() error {
			return drop(Igatherv(World(), f[:1], make([]float64, 4), []int{1}, []int{0, 1}, 0))
		}, ErrCount, "len(recvcounts) = 1 and len(recvdispls) = 2, want the communicator size 2"},
		{"gatherv does not fit", func() error {
			return drop(Igatherv(World(), f[:1], make([]float64, 4), []int{1, 2}, []int{0, 3}, 0))
		}, ErrCount, "recvcounts[1] = 2 at recvdispls[1] = 3 does not fit len(recv) = 4"},
		{"reduce_scatter counts", func() error {
			return nop(ReduceScatter(World(), make([]float64, 4), make([]float64, 2), []int{2, -1}, Sum))
		}, ErrCount, "counts[1] = -1, want >= 0"},
		{"reduce_scatter sum", func() error {
			return nop(ReduceScatter(World(), make([]float64, 4), make([]float64, 2), []int{2, 1}, Sum))
		}, ErrCount, "counts add up to 3, want len(send) = 4"},

		// Operations.
		{"nil op", func() error { return drop(Iallreduce(World(), f[:1], f[1:2], nil)) }, ErrOp, "op = nil"},
		{"op on wrong type", func() error { return drop(Iallreduce(World(), i4[:1], i4[1:2], closedOp)) }, ErrOp, "defined on float64 elements, not int32"},

		// Communicator constructors and groups.
		{"split color", func() error { _, err := World().Split(-5, 0); return err }, ErrArg, "color = -5, want >= 0 or mpiapi.Undefined"},
		{"create nil group", func() error { _, err := World().Create(nil); return err }, ErrGroup, "group = nil"},
		{"incl rank", func() error { _, err := World().Group().Incl([]int{0, 2}); return err }, ErrRank, "ranks[1] = 2, want 0..1"},
		{"incl twice", func() error { _, err := World().Group().Incl([]int{1, 1}); return err }, ErrRank, "ranks[1] = 1 appears twice"},
		{"translate", func() error { _, err := World().Group().TranslateRanks([]int{4}, World().Group()); return err }, ErrRank, "ranks[0] = 4"},

		// Requests.
		{"free nil request", func() error { var r *Request; return r.Free() }, ErrRequest, "MPI_REQUEST_NULL"},
		{"wait zero request", func() error { return stat(Wait(&Request{})) }, ErrRequest, "not started by this process"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := fakeRank(t)
			free := len(p.free)
			err := tc.call()
			if tc.class == 0 {
				if err != nil {
					t.Fatalf("valid call failed: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("succeeded; want %v with %q", tc.class, tc.want)
			}
			if !errors.Is(err, tc.class) {
				t.Errorf("error %q is not %v", err, tc.class)
			}
			var e *Error
			if !errors.As(err, &e) || e.Rank != 0 || !strings.HasPrefix(e.Call, "MPI_") {
				t.Errorf("error %q: want an *Error naming rank 0 and the MPI call", err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not say %q", err, tc.want)
			}
			if len(p.free) != free {
				t.Errorf("a rejected call took %d request slots", free-len(p.free))
			}
		})
	}
}

// TestErrorIdiom: a Class is an error that errors.Is matches through
// wrapping; the older &Error{Class: ...} spelling still matches; Unwrap
// reaches the cause.
func TestErrorIdiom(t *testing.T) {
	cause := errors.New("disk on fire")
	err := error(&Error{Class: ErrTruncate, Rank: 3, Call: "MPI_Recv", Msg: "too long", Err: cause})
	wrapped := errors.Join(errors.New("context"), err)
	for _, tc := range []struct {
		target error
		want   bool
	}{
		{ErrTruncate, true}, {ErrCount, false}, {&Error{Class: ErrTruncate}, true}, {&Error{Class: ErrTag}, false}, {cause, true},
	} {
		if got := errors.Is(wrapped, tc.target); got != tc.want {
			t.Errorf("errors.Is(%v) = %v, want %v", tc.target, got, tc.want)
		}
	}
	if ErrTruncate.Error() != "MPI_ERR_TRUNCATE" {
		t.Errorf("Class.Error = %q", ErrTruncate.Error())
	}
}
