package main

import (
	"strconv"
	"strings"
	"testing"
)

// TestRMAEdge runs testdata/rmaedge.c, the one-sided corner cases a
// conformance suite found wrong (see the file's comment), on 2 ranks of one
// node and 3 ranks over 2 nodes.
func TestRMAEdge(t *testing.T) {
	exe := compile(t, "bcscc", "testdata/rmaedge.c")
	for _, c := range []struct{ ranks, nodes int }{{2, 1}, {3, 2}} {
		t.Run("n"+strconv.Itoa(c.ranks)+"-nodes"+strconv.Itoa(c.nodes), func(t *testing.T) {
			okRanks(t, bcsrun(t, "-n", strconv.Itoa(c.ranks), "--nodes", strconv.Itoa(c.nodes), exe), "rmaedge", c.ranks)
		})
	}
	// A window whose creation ran out of request slots leaves nothing
	// behind: no window or communicator reported at MPI_Finalize.
	t.Run("slots", func(t *testing.T) {
		r := bcsrun(t, "-n", "2", exe, "slots")
		okRanks(t, r, "rmaedge", 2)
		for _, bad := range []string{"never freed", "not released"} {
			if strings.Contains(r.stderr, bad) {
				t.Fatalf("the failed MPI_Win_create left something behind:\n%s", r.stderr)
			}
		}
	})
}

// TestRMADynamic runs testdata/rmadyn.c: dynamic windows at absolute
// addresses, accesses spanning regions attached back to back, memory
// attached and detached during and between epochs (a Put or a Get to
// detached memory raises MPI_ERR_RMA_RANGE at its flush; the Get's flush
// used to wait forever for a result the target never sent), on 2 ranks of
// one node, 2 over 2 nodes and 3 over 2 nodes.
func TestRMADynamic(t *testing.T) {
	exe := compile(t, "bcscc", "testdata/rmadyn.c")
	for _, c := range []struct{ ranks, nodes int }{{2, 1}, {2, 2}, {3, 2}} {
		t.Run("n"+strconv.Itoa(c.ranks)+"-nodes"+strconv.Itoa(c.nodes), func(t *testing.T) {
			okRanks(t, bcsrun(t, "-n", strconv.Itoa(c.ranks), "--nodes", strconv.Itoa(c.nodes), exe), "rmadyn", c.ranks)
		})
	}
}
