package main

import (
	"strings"
	"testing"
)

// TestDeterministicC: a C program with a wildcard race (random sleeps in
// the senders, MPI_ANY_SOURCE receives, MPI_Iprobe, MPI_Testany) prints the
// same outcome in every run under bcsrun --deterministic, on one node and
// two: the C ABI needs nothing of its own for deterministic mode.
func TestDeterministicC(t *testing.T) {
	exe := compile(t, "bcscc", "testdata/race.c")
	seen := map[string]int{}
	for i, nodes := range []string{"1", "2", "1", "2"} {
		r := bcsrun(t, "-n", "5", "--nodes", nodes, "--deterministic", exe)
		if r.code != 0 || !strings.HasPrefix(r.stdout, "outcome:") {
			t.Fatalf("run %d: exit %d\nstdout:\n%s\nstderr:\n%s", i, r.code, r.stdout, r.stderr)
		}
		seen[r.stdout]++
	}
	if len(seen) != 1 {
		t.Fatalf("deterministic mode gave %d outcomes: %v", len(seen), seen)
	}
}
