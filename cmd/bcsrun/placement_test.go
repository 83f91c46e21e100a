package main

import (
	"sort"
	"strings"
	"testing"
)

// TestPlacement: --map-by and --ppn place ranks on logical nodes as
// documented (the rank's BCS_NODE), conflicting settings are refused with a
// message naming both, and an MPI program is right under cyclic placement.
func TestPlacement(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want []string // "rank R node N", sorted
	}{
		{[]string{"-n", "5", "--nodes", "2"}, []string{"rank 0 node 0", "rank 1 node 0", "rank 2 node 0", "rank 3 node 1", "rank 4 node 1"}},
		{[]string{"-n", "5", "--nodes", "2", "--map-by", "cyclic"}, []string{"rank 0 node 0", "rank 1 node 1", "rank 2 node 0", "rank 3 node 1", "rank 4 node 0"}},
		{[]string{"-n", "5", "--ppn", "2"}, []string{"rank 0 node 0", "rank 1 node 0", "rank 2 node 1", "rank 3 node 1", "rank 4 node 2"}},
		{[]string{"-n", "4", "--ppn", "2", "--map-by", "node"}, []string{"rank 0 node 0", "rank 1 node 1", "rank 2 node 0", "rank 3 node 1"}},
	} {
		r := bcsrun(t, append(tc.args, "/bin/sh", "-c", `echo "rank $BCS_RANK node $BCS_NODE"`)...)
		lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
		sort.Strings(lines)
		if r.code != 0 || strings.Join(lines, "|") != strings.Join(tc.want, "|") {
			t.Errorf("%v: exit %d, placement %q, want %q\n%s", tc.args, r.code, lines, tc.want, r.stderr)
		}
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-n", "5", "--nodes", "2", "--ppn", "2"}, "--nodes 2 and --ppn 2 disagree: 5 ranks at 2 per node need 3 nodes"},
		{[]string{"-n", "4", "--map-by", "socket"}, `map_by = "socket", want "block" (or slot, core) or "cyclic" (or node)`},
		{[]string{"-n", "4", "--ppn", "-1"}, "ppn = -1, want 0 (all nodes) or 1 .. 4096"},
	} {
		r := bcsrun(t, append(tc.args, "/bin/true")...)
		if r.code == 0 || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q, want an error containing %q", tc.args, r.code, r.stderr, tc.want)
		}
	}
	r := bcsrun(t, "-n", "7", "--nodes", "3", "--map-by", "cyclic", "./e2eprog", "collectives")
	if r.code != 0 || !strings.Contains(r.stdout, "ok") {
		t.Errorf("collectives under cyclic placement: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
}
