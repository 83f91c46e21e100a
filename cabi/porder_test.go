package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestPersistOrder runs testdata/porder.c: persistent collectives (two
// broadcasts with different roots, an allreduce with MPI_SUM and one with a
// user operation) started in different orders on even and odd ranks, over
// several rounds, on MPI_COMM_WORLD and a split of it, with ordinary
// collectives between the starts, match by initialization order; on one
// node and two, and under --deterministic and --record.
func TestPersistOrder(t *testing.T) {
	exe := compile(t, "bcscc", "testdata/porder.c")
	for _, c := range []struct {
		name string
		args []string
	}{
		{"n4", []string{"-n", "4", exe}},
		{"n3", []string{"-n", "3", exe}},
		{"nodes2", []string{"-n", "4", "--nodes", "2", exe}},
		{"deterministic", []string{"-n", "4", "--deterministic", exe}},
		{"record", []string{"-n", "3", "--record", filepath.Join(t.TempDir(), "rec"), exe}},
	} {
		t.Run(c.name, func(t *testing.T) {
			n := 4
			if c.args[1] == "3" {
				n = 3
			}
			okRanks(t, bcsrun(t, c.args...), "porder", n)
		})
	}
}

// TestPersistOrderMismatch: members whose k-th persistent initializations
// differ are a collective mismatch, reported naming both calls.
func TestPersistOrderMismatch(t *testing.T) {
	exe := compile(t, "bcscc", "testdata/porder.c")
	r := bcsrun(t, "-n", "3", exe, "mismatch")
	if r.code == 0 || strings.Contains(r.stdout, "not reached") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	for _, w := range []string{
		"collective mismatch on MPI_COMM_WORLD, persistent collective #1",
		"called MPI_Bcast(root 0, 8 x int64)",
		"called MPI_Allreduce(MPI_SUM, 8 x int64)",
		"every member must initialize the same persistent collectives in the same order",
	} {
		if !strings.Contains(r.stderr, w) {
			t.Errorf("stderr lacks %q:\n%s", w, r.stderr)
		}
	}
}
