//go:build !bcsfault

package launch

import (
	"testing"

	"github.com/bcsmpi/bcsmpi/internal/jobenv"
	"github.com/bcsmpi/bcsmpi/transport"
)

// A default build ignores BCS_FAULT_STALL_NODE: every node's link is the mesh
// itself.
func TestDefaultBuildIgnoresFaultStall(t *testing.T) {
	t.Setenv(jobenv.VarFaultStallNode, "1@1")
	m, err := transport.Listen("127.0.0.1:0", transport.NewSecret())
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	for node := range 3 {
		if l := faultLink(node, m); l != transport.Link(m) {
			t.Fatalf("node %d: link %T, want the mesh itself in a default build", node, l)
		}
	}
}
