package main

import (
	"fmt"
	"strconv"
	"testing"
)

// TestSuiteB runs testdata/suiteb.c: regressions for defects a
// conformance suite's one-sided, communicator and attribute tests found
// (see the sections in its header comment), on 1 node and across 2.
func TestSuiteB(t *testing.T) {
	exe := compile(t, "bcscc", "testdata/suiteb.c")
	t.Run("singleton", func(t *testing.T) { okRanks(t, run(t, exe), "suiteb", 1) })
	for _, c := range []struct{ ranks, nodes int }{{2, 1}, {4, 1}, {4, 2}} {
		t.Run(fmt.Sprintf("n%d-nodes%d", c.ranks, c.nodes), func(t *testing.T) {
			okRanks(t, bcsrun(t, "-n", strconv.Itoa(c.ranks), "--nodes", strconv.Itoa(c.nodes), exe), "suiteb", c.ranks)
		})
	}
}
