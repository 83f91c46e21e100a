package main

import (
	"fmt"
	"regexp"
	"strconv"
	"testing"
)

// TestRMAVMDirect runs testdata/rmavm.c: one-sided operations on windows
// of MPI_Win_create and MPI_Win_allocate that an origin on the target's
// node carries out itself (rmadirect.go): Put and Get under lock_all with
// contiguous, non-contiguous and long layouts (paths mixed on one target),
// accumulates under a shared lock (requests: atomic), long read-modify-
// write epochs under exclusive locks on one counter (each result checked
// against the count the lock keeps to itself, so a direct operation
// outside the granted lock is seen), fence and PSCW epochs; on 2, 3 and 4
// ranks of one node and 4 over 2 nodes (direct and request paths on one
// window).
func TestRMAVMDirect(t *testing.T) {
	exe := compile(t, "bcscc", "testdata/rmavm.c")
	for _, c := range []struct{ ranks, nodes int }{{2, 1}, {3, 1}, {4, 1}, {4, 2}} {
		t.Run(fmt.Sprintf("n%d-nodes%d", c.ranks, c.nodes), func(t *testing.T) {
			okRanks(t, bcsrun(t, "-n", strconv.Itoa(c.ranks), "--nodes", strconv.Itoa(c.nodes), exe), "rmavm", c.ranks)
		})
	}
}

// TestRMAVMDirectSlices counts the slices of rmavm.c's "slices" mode: 1000
// each of Put+Win_flush and Get+Win_flush under lock_all,
// Fetch_and_op+Win_flush under an exclusive lock, and empty lock_all
// epochs, from rank 0 to rank 1 of one node. As requests each is a round
// trip, which crosses at least two slice boundaries (a message posted in
// slice k moves in slice k+1, its answer no earlier than k+2): at least
// 8000 slices, about 16000 measured. Direct, only the first of each epoch
// is a request, and an unlock with nothing to complete does not wait: the
// whole job, start and end included, takes under 1500 (about 100 on an
// idle machine).
func TestRMAVMDirectSlices(t *testing.T) {
	exe := compile(t, "bcscc", "testdata/rmavm.c")
	r := bcsrun(t, "-v", "-n", "2", exe, "slices", "1000")
	okRanks(t, r, "rmavm", 2)
	m := regexp.MustCompile(`(\d+) slices of`).FindStringSubmatch(r.stderr)
	if m == nil {
		t.Fatalf("no slice count in bcsrun -v's report:\n%s", r.stderr)
	}
	if n, _ := strconv.Atoi(m[1]); n >= 1500 {
		t.Fatalf("4000 operations and epochs took %d slices, want < 1500 (direct operations and empty epochs cost none)", n)
	}
}
