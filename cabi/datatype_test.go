package main

import (
	"fmt"
	"strconv"
	"testing"
)

// TestDatatypes runs testdata/datatypes.c: every constructor against a
// hand-computed layout, pack/unpack round trips, point-to-point and
// collectives with derived types on both sides and mixed, and the errors of
// uncommitted and freed types; as a singleton, on one rank and on several
// ranks over one and several logical nodes.
func TestDatatypes(t *testing.T) {
	exe := compile(t, "bcscc", "testdata/datatypes.c")
	t.Run("singleton", func(t *testing.T) { okRanks(t, run(t, exe), "datatypes", 1) })
	for _, c := range []struct{ ranks, nodes int }{{1, 1}, {3, 1}, {4, 2}} {
		t.Run(fmt.Sprintf("n%d-nodes%d", c.ranks, c.nodes), func(t *testing.T) {
			okRanks(t, bcsrun(t, "-n", strconv.Itoa(c.ranks), "--nodes", strconv.Itoa(c.nodes), exe), "datatypes", c.ranks)
		})
	}
}
