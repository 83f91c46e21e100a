//go:build bcsfault

package launch

import (
	"testing"

	"github.com/bcsmpi/bcsmpi/internal/jobenv"
	"github.com/bcsmpi/bcsmpi/transport"
	"github.com/bcsmpi/bcsmpi/transport/transporttest"
)

// A bcsfault build wraps the named node's link, and only it.
func TestFaultBuildStallsNamedNode(t *testing.T) {
	m, err := transport.Listen("127.0.0.1:0", transport.NewSecret())
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	for _, c := range []struct {
		env     string
		wrapped int // node whose link is wrapped, -1 for none
	}{{"1@5", 1}, {"0@1", 0}, {"", -1}, {"1@0", -1}, {"x", -1}, {"1", -1}} {
		t.Setenv(jobenv.VarFaultStallNode, c.env)
		for node := range 3 {
			l := faultLink(node, m)
			if wrapped := l != transport.Link(m); wrapped != (node == c.wrapped) {
				t.Errorf("%s=%q node %d: wrapped %v (%T)", jobenv.VarFaultStallNode, c.env, node, wrapped, l)
			}
			if transporttest.Stalled(l) {
				t.Errorf("%q node %d: stalled before any frame", c.env, node)
			}
		}
	}
}
