package main

import (
	"fmt"
	"strconv"
	"strings"
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

// A send of doubles received as ints of the same byte length is
// MPI_ERR_TYPE, fatal under the default handler, with a message naming
// both sides' element types and the sender.
func TestTypeSignatureMismatchFatal(t *testing.T) {
	exe := compile(t, "bcscc", "testdata/wcoll.c")
	r := bcsrun(t, "-n", "2", exe, "sigfatal")
	want := "rank 1: MPI_Recv: MPI_ERR_TYPE: type signature mismatch with the matching send of rank 0 (tag 40): this receive's elements are int32, its elements are float64"
	if r.code == 0 || !strings.Contains(r.stderr, want) || strings.Contains(r.stdout, "not reached 1") {
		t.Fatalf("exit %d, want stderr containing %q\nstdout:\n%s\nstderr:\n%s", r.code, want, r.stdout, r.stderr)
	}
}
