package main

import (
	"strconv"
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
}
