package mpiapi

import (
	"strings"
	"testing"
)

// TestProgressRunsInBlockingWaits: a blocking wait runs the progress
// function set with SetProgress, which here plays a layer that completes
// the awaited request itself (as cabi's one-sided targets serve requests
// from inside MPI_Wait), and never re-enters it from within itself.
func TestProgressRunsInBlockingWaits(t *testing.T) {
	p := fakeRank(t)
	r := irecvT(t, 3)
	calls, nested := 0, 0
	SetProgress(func() {
		calls++
		if calls == 1 {
			complete(p, r, 3, 8)
		}
		p.progress() // a nested call must not run the function again
	})
	t.Cleanup(func() { SetProgress(nil) })
	p.progress()
	nested = calls
	if nested != 1 {
		t.Fatalf("progress ran %d times for one call, want 1 (no re-entry)", nested)
	}
	calls = 0
	r2 := irecvT(t, 4)
	SetProgress(func() {
		calls++
		if calls == 2 {
			complete(p, r2, 4, 8)
		}
	})
	if st, err := Wait(r2); err != nil || st.Tag != 4 {
		t.Fatalf("Wait = %+v, %v", st, err)
	}
	if calls < 2 {
		t.Fatalf("the progress function ran %d times in Wait, want at least 2", calls)
	}
	// Block waits for a condition of the layer's own.
	n := 0
	SetProgress(func() { n++ })
	if err := Block("MPI_Win_lock", func() bool { return n >= 3 }); err != nil {
		t.Fatal(err)
	}
	if n < 3 {
		t.Fatalf("Block returned after %d progress calls, want its condition (3)", n)
	}
	// Poll with retire completes r (completed by the first progress call
	// above) without the Test family's bookkeeping, and retires it.
	if done, st, err := Poll(r, true); !done || err != nil || st.Tag != 3 {
		t.Fatalf("Poll = %v, %+v, %v; want complete with tag 3", done, st, err)
	}
	if _, err := Wait(r); err == nil || !strings.Contains(err.Error(), "stale") {
		t.Fatalf("Wait after Poll(retire) = %v, want a stale-request error", err)
	}
	r3 := irecvT(t, 5)
	if done, _, _ := Poll(r3, false); done {
		t.Fatal("Poll reports a pending request complete")
	}
	if done, _, _ := Poll(nil, false); !done {
		t.Fatal("Poll(nil) is not complete")
	}
}
