package main

import (
	"fmt"
	"strconv"
	"testing"
)

// TestWcoll runs testdata/wcoll.c: Alltoallw and Ialltoallw with a datatype
// per peer, MPI_Request_get_status and its array forms,
// MPI_Comm_create_group, graph, distributed-graph and Cartesian topologies
// with the neighbourhood collectives; as a singleton and on 1, 3 and 4
// ranks (2 logical nodes).
func TestWcoll(t *testing.T) {
	exe := compile(t, "bcscc", "testdata/wcoll.c")
	t.Run("singleton", func(t *testing.T) { okRanks(t, run(t, exe), "wcoll", 1) })
	for _, c := range []struct{ ranks, nodes int }{{1, 1}, {3, 1}, {4, 2}} {
		t.Run(fmt.Sprintf("n%d-nodes%d", c.ranks, c.nodes), func(t *testing.T) {
			okRanks(t, bcsrun(t, "-n", strconv.Itoa(c.ranks), "--nodes", strconv.Itoa(c.nodes), exe), "wcoll", c.ranks)
		})
	}
}
