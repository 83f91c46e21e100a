//go:build !bcsfault

package launch

import "github.com/bcsmpi/bcsmpi/transport"

// faultLink is the identity: a normal build has no fault injection, and
// BCS_FAULT_STALL_NODE is not read.
func faultLink(_ int, l transport.Link) transport.Link { return l }
