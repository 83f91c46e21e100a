package main

import (
	"strings"
	"testing"
)

// TestCommLimit runs testdata/commlimit.c: thousands of communicators made
// and freed (more than one process may hold at once, so the freed ones'
// slots must count again), and the bound on live communicators
// (proto.CommsMax): every member of the refused creation is refused at the
// same call with MPI_ERR_OTHER and MPI_COMM_NULL under MPI_ERRORS_RETURN,
// even when only one member is at the limit, and the job goes on; under
// MPI_ERRORS_ARE_FATAL the refusal ends the job naming the rank, the count
// and the limit.
func TestCommLimit(t *testing.T) {
	exe := compile(t, "bcscc", "testdata/commlimit.c")
	t.Run("churn-n3-nodes2", func(t *testing.T) {
		okRanks(t, bcsrun(t, "-n", "3", "--nodes", "2", exe, "churn"), "commlimit", 3)
	})
	t.Run("limit-n3", func(t *testing.T) {
		okRanks(t, bcsrun(t, "-n", "3", exe, "limit"), "commlimit", 3)
	})
	// Review findings: a receive pending across every member's free is
	// matched and cancelled afterwards (the job used to abort: "used
	// communicator 1, which does not exist").
	t.Run("cancel-n2", func(t *testing.T) {
		okRanks(t, bcsrun(t, "-n", "2", exe, "cancel"), "commlimit", 2)
	})
	t.Run("cancel-n2-deterministic", func(t *testing.T) {
		okRanks(t, bcsrun(t, "-n", "2", "--deterministic", exe, "cancel"), "commlimit", 2)
	})
	// An intercommunicator's duplicate refused in one group fails in both;
	// refused intercommunicator creations leak no slot.
	t.Run("inter-n2", func(t *testing.T) {
		okRanks(t, bcsrun(t, "-n", "2", exe, "inter"), "commlimit", 2)
	})
	t.Run("inter-n3", func(t *testing.T) {
		okRanks(t, bcsrun(t, "-n", "3", exe, "inter"), "commlimit", 3)
	})
	t.Run("interleak-n3", func(t *testing.T) {
		okRanks(t, bcsrun(t, "-n", "3", exe, "interleak"), "commlimit", 3)
	})
	t.Run("fatal-n2", func(t *testing.T) {
		r := bcsrun(t, "-n", "2", exe, "fatal")
		want := "MPI_Comm_dup: MPI_ERR_OTHER: too many communicators: world rank 0 belongs to 4096 live communicators (the world included), the limit is 4096 (proto.CommsMax)"
		if r.code == 0 || !strings.Contains(r.stderr, want) || strings.Contains(r.stdout, "never refused") {
			t.Fatalf("exit %d, stderr lacks %q:\nstdout:\n%s\nstderr:\n%s", r.code, want, r.stdout, r.stderr)
		}
	})
}
