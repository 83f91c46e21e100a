package mpiapi

import (
	"os/signal"
	"syscall"
	"testing"
)

// A replaying rank holds SIGTERM (holdTerm) only where its action is the
// default: a C program's SIG_IGN or own handler, set before MPI_Init (here
// straight through the kernel, as libc does, unknown to the Go runtime),
// stays in place, so the program behaves under replay as when recorded.
func TestHoldTermKeepsOwnDisposition(t *testing.T) {
	orig, ok := sigaction(syscall.SIGTERM, nil)
	if !ok {
		t.Fatal("rt_sigaction(SIGTERM) failed")
	}
	defer sigaction(syscall.SIGTERM, &orig)
	if !termDefault() {
		t.Fatalf("the test binary's SIGTERM (handler %#x, the Go runtime's) is not taken for the default action", orig.handler())
	}
	for _, c := range []struct {
		name    string
		handler uintptr
		def     bool
	}{
		{"SIG_IGN", sigIGN, false},
		{"SIG_DFL", sigDFL, true},
	} {
		set := orig
		set[0], set[1] = uint64(c.handler), 0
		if _, ok := sigaction(syscall.SIGTERM, &set); !ok {
			t.Fatalf("%s: rt_sigaction failed", c.name)
		}
		if got := termDefault(); got != c.def {
			t.Errorf("%s: termDefault() = %v, want %v", c.name, got, c.def)
		}
		if !c.def {
			(&process{}).holdTerm()
			if now, _ := sigaction(syscall.SIGTERM, nil); now.handler() != c.handler {
				t.Errorf("%s: after holdTerm SIGTERM's handler is %#x, want the program's %#x", c.name, now.handler(), c.handler)
			}
			signal.Reset(syscall.SIGTERM)
		}
		sigaction(syscall.SIGTERM, &orig)
	}
	signal.Ignore(syscall.SIGTERM)
	if termDefault() {
		t.Errorf("SIGTERM ignored through os/signal: termDefault() = true")
	}
	signal.Reset(syscall.SIGTERM)
}
