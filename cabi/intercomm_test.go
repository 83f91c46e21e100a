package main

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
)

// TestIntercomm runs testdata/intercomm.c: communicators of strict subsets
// (MPI_Comm_create_group called by the group only, MPI_Comm_create with
// disjoint groups), sessions, intercommunicators and the dynamic-process
// answers, on odd and even sizes, one node and several, and as a singleton.
func TestIntercomm(t *testing.T) {
	exe := compile(t, "bcscc", "testdata/intercomm.c")
	t.Run("singleton", func(t *testing.T) { okRanks(t, run(t, exe), "intercomm", 1) })
	for _, c := range []struct{ ranks, nodes int }{{2, 1}, {5, 1}, {4, 2}} {
		t.Run(fmt.Sprintf("n%d-nodes%d", c.ranks, c.nodes), func(t *testing.T) {
			okRanks(t, bcsrun(t, "-n", strconv.Itoa(c.ranks), "--nodes", strconv.Itoa(c.nodes), exe), "intercomm", c.ranks)
		})
	}
	// The sessions model without MPI_Init (three sessions one after the
	// other), and a session that outlives MPI_Finalize.
	for _, part := range []string{"sessions-only", "outlive"} {
		t.Run(part+"-singleton", func(t *testing.T) { okRanks(t, run(t, exe, part), "intercomm", 1) })
		t.Run(part+"-n3", func(t *testing.T) { okRanks(t, bcsrun(t, "-n", "3", exe, part), "intercomm", 3) })
	}
	// A member that never enters MPI_Comm_create_group: the others wait
	// in it, and the deadlock detector says so rather than hanging (the MMDS
	// has no primitive of its own for it: the status names MPI_Comm_create).
	t.Run("group-missing", func(t *testing.T) {
		t.Setenv("BCS_DEADLOCK_SLICES", "50")
		r := bcsrun(t, "-n", "3", exe, "group-missing")
		for _, w := range []string{
			"deadlock: every MPI rank has been blocked",
			"rank 0 (in MPI_Comm_create): waits in MPI_Comm_create_group(group of 3, rank 0 in it, tag 4)",
			"rank 2 (finalized)",
		} {
			if r.code == 0 || !strings.Contains(r.stderr, w) {
				t.Errorf("exit %d, stderr lacks %q:\n%s", r.code, w, r.stderr)
			}
		}
	})
	// Overlapping groups: the message names the world ranks in both.
	t.Run("overlap-fatal", func(t *testing.T) {
		r := bcsrun(t, "-n", "1", exe, "overlap-fatal")
		want := "MPI_Intercomm_create_from_groups: MPI_ERR_GROUP: local_group and remote_group overlap (world ranks [0] in both"
		if r.code == 0 || !strings.Contains(r.stderr, want) {
			t.Fatalf("exit %d, stderr lacks %q:\nstdout:\n%s\nstderr:\n%s", r.code, want, r.stdout, r.stderr)
		}
	})
	// MPI_Comm_spawn under MPI_ERRORS_ARE_FATAL ends the job, saying why.
	t.Run("spawn-fatal", func(t *testing.T) {
		r := bcsrun(t, "-n", "2", exe, "spawn-fatal")
		want := "MPI_Comm_spawn: MPI_ERR_SPAWN: bcsmpi does not support dynamic processes"
		if r.code == 0 || !strings.Contains(r.stderr, want) {
			t.Fatalf("exit %d, stderr lacks %q:\nstdout:\n%s\nstderr:\n%s", r.code, want, r.stdout, r.stderr)
		}
	})
}
