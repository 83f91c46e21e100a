//go:build bcsfault

package launch

import (
	"fmt"
	"os"

	"github.com/bcsmpi/bcsmpi/internal/jobenv"
	"github.com/bcsmpi/bcsmpi/internal/proto"
	"github.com/bcsmpi/bcsmpi/transport"
	"github.com/bcsmpi/bcsmpi/transport/transporttest"
)

// faultLink, in a bcsfault build, reads BCS_FAULT_STALL_NODE=node@slice
// (jobenv.VarFaultStallNode) and wraps that node's link with
// transporttest.Stall: its agent stops answering the master from that slice
// on. A malformed value is reported (by node 0's call) and ignored.
func faultLink(node int, l transport.Link) transport.Link {
	v := os.Getenv(jobenv.VarFaultStallNode)
	if v == "" {
		return l
	}
	var at int
	var slice uint64
	if _, err := fmt.Sscanf(v, "%d@%d", &at, &slice); err != nil || slice == 0 {
		if node == 0 {
			fmt.Fprintf(os.Stderr, "bcsrun: %s=%q ignored, want node@slice\n", jobenv.VarFaultStallNode, v)
		}
		return l
	}
	if at != node {
		return l
	}
	return transporttest.Stall(l, proto.SliceID(slice))
}
