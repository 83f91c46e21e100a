package gangd

import (
	"net"
	"os"
	"syscall"
	"testing"
)

// Accept errors that pass with time (out of descriptors, a client gone
// before its accept) must not stop the daemon and its jobs; others do.
func TestTransientAccept(t *testing.T) {
	for _, c := range []struct {
		err  error
		want bool
	}{
		{&net.OpError{Op: "accept", Err: os.NewSyscallError("accept4", syscall.EMFILE)}, true},
		{&net.OpError{Op: "accept", Err: os.NewSyscallError("accept4", syscall.ENFILE)}, true},
		{&net.OpError{Op: "accept", Err: os.NewSyscallError("accept4", syscall.ECONNABORTED)}, true},
		{&net.OpError{Op: "accept", Err: os.NewSyscallError("accept4", syscall.EBADF)}, false},
		{net.ErrClosed, false},
	} {
		if got := transientAccept(c.err); got != c.want {
			t.Errorf("transientAccept(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}
