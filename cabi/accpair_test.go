package main

import (
	"strconv"
	"testing"
)

// TestAccumulatePairTypes runs testdata/accpair.c: accumulates on derived
// datatypes of one predefined pair type (contiguous and vector types of
// MPI_DOUBLE_INT, MPI_2INT, MPI_LONG_DOUBLE_INT; MAXLOC, MINLOC, REPLACE,
// NO_OP) are accepted and reduce as the standard says; MPI_SUM on pairs and
// MAXLOC on a struct of a double and an int are refused. One rank (its own
// window), 2 ranks, and 3 over 2 nodes.
func TestAccumulatePairTypes(t *testing.T) {
	exe := compile(t, "bcscc", "testdata/accpair.c")
	t.Run("singleton", func(t *testing.T) { okRanks(t, run(t, exe), "accpair", 1) })
	for _, c := range []struct{ ranks, nodes int }{{2, 1}, {3, 2}} {
		t.Run("n"+strconv.Itoa(c.ranks)+"-nodes"+strconv.Itoa(c.nodes), func(t *testing.T) {
			okRanks(t, bcsrun(t, "-n", strconv.Itoa(c.ranks), "--nodes", strconv.Itoa(c.nodes), exe), "accpair", c.ranks)
		})
	}
}
