//go:build !linux

package transport

import (
	"net"
	"time"
)

// userTimeout is Linux's TCP_USER_TIMEOUT; elsewhere keepalive's own
// count ends the connection.
func userTimeout(c *net.TCPConn, d time.Duration) error { return nil }
