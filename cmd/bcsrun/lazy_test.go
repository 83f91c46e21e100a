package main

import (
	"fmt"
	"strings"
	"testing"
)

// Connections between nodes are made on first need (transport/doc.go): a job
// whose ranks talk only to their ring neighbours holds O(nodes) sockets in
// bcsrun, not one connection per ordered pair of its endpoints.
func TestLazyConnectionsScaleWithNodes(t *testing.T) {
	const nodes = 16
	r := bcsrun(t, "-n", fmt.Sprint(nodes), "--nodes", fmt.Sprint(nodes), "--timeslice", "500us", "./e2eprog", "neighbourfds")
	var sockets int
	if r.code != 0 || !strings.Contains(r.stdout, "launcher sockets: ") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	if _, err := fmt.Sscanf(r.stdout[strings.Index(r.stdout, "launcher sockets: "):], "launcher sockets: %d", &sockets); err != nil {
		t.Fatalf("%v in %q", err, r.stdout)
	}
	// Per node: both ends of its two connections with the master (4), both
	// ends of its one connection to its ring successor (2), its listener (1:
	// open while not every peer has connected). Every ordered pair of the 17
	// endpoints, as before lazy connections, is 2·17·16 = 544. The lower
	// bound makes sure the count is of the right process.
	t.Logf("%d nodes: bcsrun holds %d sockets", nodes, sockets)
	if sockets < 4*nodes || sockets > 8*nodes {
		t.Fatalf("bcsrun holds %d sockets with %d nodes exchanging with ring neighbours, want %d..%d (7 per node)", sockets, nodes, 4*nodes, 8*nodes)
	}
}
