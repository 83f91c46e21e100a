package main

import (
	"path/filepath"
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
