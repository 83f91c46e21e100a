package main

import (
	"fmt"
	"strings"
	"testing"
)

// TestCollectives runs every collective (on the world, a split, a dup and a
// group-created communicator; blocking, in place, non-blocking; predefined
// and user operations) against a naive reference in the rank program, on 1-8
// ranks and 1-4 logical nodes, with zero, odd and multi-slice lengths.
func TestCollectives(t *testing.T) {
	for _, c := range []struct {
		ranks, nodes int
		restart      string
	}{{1, 1, "slice"}, {3, 1, "slice"}, {4, 2, "early"}, {5, 3, "slice"}, {8, 4, "slice"}} {
		t.Run(fmt.Sprintf("n%d_nodes%d_restart_%s", c.ranks, c.nodes, c.restart), func(t *testing.T) {
			r := bcsrun(t, "-n", fmt.Sprint(c.ranks), "--nodes", fmt.Sprint(c.nodes), "--restart", c.restart, "./e2eprog", "collectives")
			if r.code != 0 || !strings.Contains(r.stdout, fmt.Sprintf("collectives ok: %d ranks", c.ranks)) {
				t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
			}
		})
	}
}

// TestCollectivesSmallBudget shrinks the per-slice budget so that every
// collective of 70,001 elements spans dozens of slices: segments of
// reductions and chunks of moves must reassemble exactly.
func TestCollectivesSmallBudget(t *testing.T) {
	t.Setenv("BCS_BYTES_PER_SLICE_MAX", "16384")
	t.Setenv("BCS_CHUNKS_PER_SLICE_MAX", "16")
	r := bcsrun(t, "-n", "3", "--nodes", "2", "./e2eprog", "collectives", "5", "70001")
	if r.code != 0 || !strings.Contains(r.stdout, "collectives ok: 3 ranks") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
}

// TestCollectiveMismatch checks that each kind of disagreement between the
// members of a collective is reported naming the ranks and their calls, and
// that the job fails instead of hanging or computing wrong data.
func TestCollectiveMismatch(t *testing.T) {
	t.Setenv("BCS_DEADLOCK_SLICES", "50")
	// Which two members the report names depends on which descriptors reach
	// the scheduler first; it always names one that disagrees.
	const head = "collective mismatch on MPI_COMM_WORLD, collective call #1: "
	cases := []struct {
		kind string
		want []string
	}{
		{"call", []string{head, "called MPI_Barrier()", "rank 1 called MPI_Bcast(root 0, 8 x float64)", "(different collectives)"}},
		{"root", []string{head, "called MPI_Bcast(root 0, 8 x float64)", "rank 1 called MPI_Bcast(root 1, 8 x float64)", "(different roots)"}},
		{"op", []string{head, "called MPI_Allreduce(MPI_SUM, 8 x float64)", "rank 2 called MPI_Allreduce(MPI_MAX, 8 x float64)", "(different operations)"}},
		{"count", []string{head, "rank 0 called MPI_Allreduce(MPI_SUM, 9 x float64)", "called MPI_Allreduce(MPI_SUM, 8 x float64)", "(different element counts)"}},
		{"type", []string{head, "rank 0 called MPI_Bcast(root 0, 8 x int64)", "called MPI_Bcast(root 0, 8 x float64)", "(different element types)"}},
		{"vcount", []string{"collective mismatch on MPI_COMM_WORLD, collective call #1 (MPI_Gatherv): rank 1 sends 12 bytes to rank 0, which expects 8 bytes"}},
		{"missing", []string{"deadlock:", "rank 1 (in MPI_Barrier): waits in MPI_Barrier() (call #1 on MPI_COMM_WORLD) for the members that have not entered it", "rank 0 (in MPI_Recv): waits for a message from rank 1"}},
	}
	for _, c := range cases {
		t.Run(c.kind, func(t *testing.T) {
			r := bcsrun(t, "-n", "3", "--nodes", "2", "./e2eprog", "collmismatch", c.kind)
			if r.code != 1 {
				t.Fatalf("exit %d, want 1\nstderr:\n%s", r.code, r.stderr)
			}
			for _, w := range c.want {
				if !strings.Contains(r.stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, r.stderr)
				}
			}
		})
	}
}
