package main

import (
	"strings"
	"testing"
)

// TestStaleRequestHandle: a request handle used after the call that
// completed it is MPI_ERR_REQUEST (fatal by default), even when a new request
// has taken its completion slot.
func TestStaleRequestHandle(t *testing.T) {
	r := bcsrun(t, "-n", "2", "./e2eprog", "stalereq")
	want := []string{"bcsmpi: rank 0: MPI_Test: MPI_ERR_REQUEST: request #", "(MPI_Irecv) is stale: MPI_Wait completed and released it"}
	if r.code != 1 {
		t.Fatalf("exit %d, want 1\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	for _, w := range want {
		if !strings.Contains(r.stderr, w) {
			t.Errorf("stderr lacks %q:\n%s", w, r.stderr)
		}
	}
}

// TestWaitanyTwice: a second Waitany over the same slice returns the other
// request, not the slot an unrelated request reused; a third, and one over
// nothing, return MPI_UNDEFINED.
func TestWaitanyTwice(t *testing.T) {
	r := bcsrun(t, "-n", "2", "./e2eprog", "waitany")
	if r.code != 0 || !strings.Contains(r.stdout, "waitany ok") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
}

// TestUserOperationMismatch: members of one Allreduce passing different user
// operations abort the job with a collective-mismatch report naming both
// ranks, instead of every member silently getting the root's result.
func TestUserOperationMismatch(t *testing.T) {
	t.Setenv("BCS_DEADLOCK_SLICES", "50")
	r := bcsrun(t, "-n", "3", "--nodes", "2", "./e2eprog", "collmismatch", "userop")
	if r.code != 1 {
		t.Fatalf("exit %d, want 1\nstderr:\n%s", r.code, r.stderr)
	}
	// Which member the report names first depends on which descriptor reached
	// the scheduler first; it always names rank 2, the one that disagrees.
	for _, w := range []string{"collective mismatch on MPI_COMM_WORLD, collective call #1: ",
		"MPI_Allreduce(user operation 0x", "rank 2 called MPI_Allreduce(user operation 0x", "(different operations)"} {
		if !strings.Contains(r.stderr, w) {
			t.Errorf("stderr lacks %q:\n%s", w, r.stderr)
		}
	}
}

// TestLeakReport: what was not released by the end of the job is one report
// naming each resource: a warning by default, an error that fails the job
// under leak_check: error, nothing under leak_check: off.
func TestLeakReport(t *testing.T) {
	items := []string{
		"\n  rank 0: user operation \"leaky\" (on float64 elements) was never freed",
		"\n  rank 0: communicator 1 (2 ranks, made by MPI_Comm_dup) was never freed",
		"\n  rank 1: communicator 1 (2 ranks, made by MPI_Comm_dup) was never freed",
		", MPI_Irecv from rank 1, tag 9, was still pending\n",
		"\n  message rank 0 -> rank 1, tag 3, 4 bytes: sent but never received\n",
	}
	cases := []struct {
		mode string
		code int
		head string // "" : no report
	}{
		{"", 0, "bcsmpi: warning: 6 resource(s) were not released by the end of the job (leak_check: error fails the job, off silences this):\n"},
		{"error", 1, "bcsmpi: error: 6 resource(s) were not released by the end of the job (leak_check: error):\n"},
		{"off", 0, ""},
	}
	for _, c := range cases {
		t.Run("leak_check="+c.mode, func(t *testing.T) {
			if c.mode != "" {
				t.Setenv("BCS_LEAK_CHECK", c.mode)
			}
			r := bcsrun(t, "-n", "2", "./e2eprog", "leaks")
			if r.code != c.code {
				t.Fatalf("exit %d, want %d\nstderr:\n%s", r.code, c.code, r.stderr)
			}
			if c.head == "" {
				if strings.Contains(r.stderr, "not released") {
					t.Fatalf("leak_check: off printed a report:\n%s", r.stderr)
				}
				return
			}
			for _, w := range append([]string{c.head}, items...) {
				if !strings.Contains(r.stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, r.stderr)
				}
			}
		})
	}
}
