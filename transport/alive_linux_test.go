package transport

import (
	"errors"
	"net"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bcsmpi/bcsmpi/internal/proto"
)

// SetDirectKeepAlive turns keepalive on for the connections of direct
// peers, with TCP_USER_TIMEOUT d, and leaves the others alone.
func TestDirectKeepAlive(t *testing.T) {
	secret := NewSecret()
	ms := make([]*Mesh, 3)
	addrs := make([]string, 3)
	for i := range ms {
		m, err := Listen("127.0.0.1:0", secret)
		if err != nil {
			t.Fatal(err)
		}
		ms[i], addrs[i] = m, m.Addr()
	}
	ms[0].SetDirectKeepAlive(3 * time.Second)
	served := make(chan int, 1)
	h := func(from int, m *proto.Msg) error {
		select {
		case served <- from:
		default:
		}
		return nil
	}
	errs := make(chan error, 3)
	for i, m := range ms {
		var direct []bool
		if i == 0 {
			direct = []bool{false, true, false} // endpoint 1 read directly, 2 served
		} else if i == 1 {
			direct = []bool{true, false, false} // the master's direct peer: dials it at Start
		}
		go func() { errs <- m.Start(i, addrs, h, direct) }()
	}
	for range ms {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		for _, m := range ms {
			m.Close()
		}
	})
	// Endpoint 2 is a lazy peer of the master: its first frame connects it,
	// and the master serves that connection (no keepalive).
	if err := ms[2].Send(0, &proto.Msg{Type: proto.MsgData, Payload: []byte("x")}); err != nil {
		t.Fatal(err)
	}
	if from := <-served; from != 2 { // the master serves it: admitted by now
		t.Fatalf("the master served a frame from endpoint %d, want 2", from)
	}
	opt := func(c net.Conn, level, name int) int {
		rc, err := c.(*net.TCPConn).SyscallConn()
		if err != nil {
			t.Fatal(err)
		}
		var v int
		var gerr error
		rc.Control(func(fd uintptr) { v, gerr = syscall.GetsockoptInt(int(fd), level, name) })
		if gerr != nil {
			t.Fatal(gerr)
		}
		return v
	}
	if f := ms[0].KeepAliveFailed(); len(f) > 0 {
		t.Errorf("keepalive failed: %v", f)
	}
	c := ms[0].rx[1].conn
	if ka, ut := opt(c, syscall.SOL_SOCKET, syscall.SO_KEEPALIVE), opt(c, syscall.IPPROTO_TCP, tcpUserTimeout); ka != 1 || ut != 3000 {
		t.Errorf("direct peer's connection: SO_KEEPALIVE %d, TCP_USER_TIMEOUT %d ms; want 1 and 3000", ka, ut)
	}
	ms[0].mu.Lock()
	var in []net.Conn // every open connection, in or out
	for c := range ms[0].conns {
		in = append(in, c)
	}
	ms[0].mu.Unlock()
	for _, c := range in {
		if c != ms[0].rx[1].conn {
			if ut := opt(c, syscall.IPPROTO_TCP, tcpUserTimeout); ut != 0 {
				t.Errorf("a served peer's connection has TCP_USER_TIMEOUT %d ms, want 0", ut)
			}
		}
	}
}

// Socket options the kernel refuses (a keepalive idle time above Linux's
// 32767 s, a user timeout past what an int of milliseconds holds) are not
// ignored: KeepAliveFailed names the direct peer and the kernel's error,
// and the connection is used all the same.
func TestDirectKeepAliveRefused(t *testing.T) {
	secret := NewSecret()
	ms := make([]*Mesh, 2)
	addrs := make([]string, 2)
	for i := range ms {
		m, err := Listen("127.0.0.1:0", secret)
		if err != nil {
			t.Fatal(err)
		}
		ms[i], addrs[i] = m, m.Addr()
	}
	ms[0].SetDirectKeepAlive(30 * 24 * time.Hour)
	errs := make(chan error, 2)
	direct := [][]bool{{false, true}, {true, false}}
	for i, m := range ms {
		go func() { errs <- m.Start(i, addrs, nil, direct[i]) }()
	}
	for range ms {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		for _, m := range ms {
			m.Close()
		}
	})
	f := ms[0].KeepAliveFailed()
	if len(f) != 1 || f[0].Endpoint != 1 || !errors.Is(f[0], syscall.EINVAL) || !strings.Contains(f[0].Error(), "endpoint 1") {
		t.Fatalf("KeepAliveFailed() = %v, want endpoint 1 with EINVAL", f)
	}
	if f := ms[1].KeepAliveFailed(); len(f) > 0 {
		t.Errorf("endpoint 1, without SetDirectKeepAlive: %v", f)
	}
	if err := ms[1].Send(0, &proto.Msg{Type: proto.MsgData, Payload: []byte("x")}); err != nil {
		t.Fatal(err)
	}
	var msg proto.Msg
	if err := ms[0].Recv(1, &msg, time.Minute); err != nil || string(msg.Payload) != "x" {
		t.Fatalf("the connection without keepalive: %q, %v", msg.Payload, err)
	}
}
