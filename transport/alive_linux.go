package transport

import (
	"net"
	"syscall"
	"time"
)

// tcpUserTimeout is TCP_USER_TIMEOUT (tcp(7)), which package syscall does
// not name.
const tcpUserTimeout = 0x12

// userTimeout sets TCP_USER_TIMEOUT on c: with keepalive on, the kernel
// ends the connection once nothing has come from the peer for d and a
// probe is unanswered (keepalive's own count is then not used).
func userTimeout(c *net.TCPConn, d time.Duration) error {
	rc, err := c.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	if err := rc.Control(func(fd uintptr) {
		serr = syscall.SetsockoptInt(int(fd), syscall.IPPROTO_TCP, tcpUserTimeout, int(d.Milliseconds()))
	}); err != nil {
		return err
	}
	return serr
}
