package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestPartitionedMatching runs testdata/partmatch.c: partitioned operations
// match only each other, in the order of their initialization calls, for
// every start; plain sends, receives and wildcard probes of the same
// envelope pass them by; buffers of different sizes and wildcards are
// errors. Small (inline) and large messages, one node and two, and under
// --deterministic and --record (a run with wildcard probes recorded).
func TestPartitionedMatching(t *testing.T) {
	exe := compile(t, "bcscc", "testdata/partmatch.c")
	for _, c := range []struct {
		name string
		args []string
	}{
		{"small", []string{"-n", "2", exe}},
		{"large", []string{"-n", "2", exe, "4096"}},
		{"nodes2", []string{"-n", "2", "--nodes", "2", exe, "4096"}},
		{"deterministic", []string{"-n", "2", "--nodes", "2", "--deterministic", exe}},
		{"record", []string{"-n", "2", "--record", filepath.Join(t.TempDir(), "rec"), exe, "64"}},
	} {
		t.Run(c.name, func(t *testing.T) { okRanks(t, bcsrun(t, c.args...), "partmatch", 2) })
	}
}

// A partitioned receive waiting for a send whose partition is never marked
// ready, while the sender waits for the receiver, is a deadlock the
// runtime reports, naming the partitioned pair.
func TestPartitionedDeadlock(t *testing.T) {
	t.Setenv("BCS_DEADLOCK_SLICES", "50")
	exe := compile(t, "bcscc", "testdata/partmatch.c")
	r := bcsrun(t, "-n", "2", exe, "deadlock")
	if r.code == 0 || strings.Contains(r.stdout, "not reached") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	for _, w := range []string{
		"deadlock: every MPI rank has been blocked",
		"rank 0 (in MPI_Recv): waits for a message from rank 1 (tag 4)",
		"rank 1 (in MPI_Wait): waits for a message from rank 0 (tag 3, partitioned pair 1)",
		"wait-for cycle: 0 -> 1 -> 0",
	} {
		if !strings.Contains(r.stderr, w) {
			t.Errorf("stderr lacks %q:\n%s", w, r.stderr)
		}
	}
}
