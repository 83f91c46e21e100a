package transport

import (
	"bytes"
	"errors"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/bcsmpi/bcsmpi/internal/proto"
)

type collector struct {
	mu   sync.Mutex
	got  []string
	cond chan struct{}
}

func (c *collector) handler(from int, m *proto.Msg) error {
	c.mu.Lock()
	c.got = append(c.got, string(m.Payload))
	c.mu.Unlock()
	c.cond <- struct{}{}
	return nil
}

func startMesh(t *testing.T, secret []byte, n int, beforeStart func(addrs []string)) ([]*Mesh, []*collector) {
	t.Helper()
	ms := make([]*Mesh, n)
	addrs := make([]string, n)
	for i := range ms {
		m, err := Listen("127.0.0.1:0", secret)
		if err != nil {
			t.Fatal(err)
		}
		ms[i], addrs[i] = m, m.Addr()
	}
	if beforeStart != nil {
		beforeStart(addrs)
	}
	cs := make([]*collector, n)
	errs := make(chan error, n)
	for i, m := range ms {
		cs[i] = &collector{cond: make(chan struct{}, 16)}
		go func() { errs <- m.Start(i, addrs, cs[i].handler, nil) }()
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
	return ms, cs
}

func TestMeshDelivers(t *testing.T) {
	ms, cs := startMesh(t, NewSecret(), 3, nil)
	if err := ms[0].Send(2, &proto.Msg{Type: proto.MsgData, Payload: []byte("from 0")}); err != nil {
		t.Fatal(err)
	}
	if err := ms[1].Send(2, &proto.Msg{Type: proto.MsgData, Payload: bytes.Repeat([]byte("x"), 1<<20)}); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		select {
		case <-cs[2].cond:
		case <-time.After(5 * time.Second):
			t.Fatal("frame not delivered")
		}
	}
	// The listener is closed once every peer has connected.
	if _, err := net.DialTimeout("tcp", ms[2].Addr(), time.Second); err == nil {
		t.Fatal("endpoint still listening after every peer had connected")
	}
}

// Connections that do not know the job's secret, or do not speak the
// handshake, are refused; the job's own peers still connect.
func TestHandshakeRefusesStrangers(t *testing.T) {
	var wg sync.WaitGroup
	outcome := make(chan error, 3)
	ms, _ := startMesh(t, NewSecret(), 2, func(addrs []string) {
		// The strangers connect before the mesh starts; the listener stays
		// open while endpoint 0 has not connected (it never sends here).
		var conns [3]net.Conn
		for i := range conns {
			c, err := net.Dial("tcp", addrs[1])
			if err != nil {
				t.Fatal(err)
			}
			conns[i] = c
		}
		wg.Add(3)
		go func() { // another job's peer: right protocol, wrong secret
			defer wg.Done()
			defer conns[0].Close()
			outcome <- dialHandshake(conns[0], NewSecret(), 0, 1, time.Time{})
		}()
		go func() { // garbage: an oversized frame instead of a hello
			defer wg.Done()
			c := conns[1]
			defer c.Close()
			io.ReadFull(c, make([]byte, len(authMagic)+nonceLen))
			c.Write([]byte{byte(proto.MsgData), 0xff, 0xff, 0xff, 0x7f})
			io.Copy(io.Discard, c) // returns when the endpoint closes the connection
		}()
		go func() { // a replay: a hello computed for another challenge
			defer wg.Done()
			c := conns[2]
			defer c.Close()
			io.ReadFull(c, make([]byte, len(authMagic)+nonceLen))
			hello := proto.Msg{Type: proto.MsgHello, Node: 0, Index: 1, Payload: make([]byte, nonceLen+macLen)}
			c.Write(proto.AppendFrame(nil, &hello))
			io.Copy(io.Discard, c)
		}()
	})
	wg.Wait() // each stranger returns when the endpoint closes its connection
	if err := <-outcome; !errors.Is(err, ErrAuth) {
		t.Fatalf("wrong-secret peer: err = %v, want ErrAuth", err)
	}
	if got := ms[1].Refused(); got != 3 {
		t.Fatalf("endpoint 1 refused %d connections, want 3", got)
	}
}

// recorder keeps everything written to a connection.
type recorder struct {
	net.Conn
	mu  sync.Mutex
	out bytes.Buffer
}

func (r *recorder) Write(b []byte) (int, error) {
	r.mu.Lock()
	r.out.Write(b)
	r.mu.Unlock()
	return r.Conn.Write(b)
}

func TestSecretNeverOnTheWire(t *testing.T) {
	secret := bytes.Repeat([]byte("S3cr"), 8)
	a, b := net.Pipe()
	ra, rb := &recorder{Conn: a}, &recorder{Conn: b}
	done := make(chan error, 1)
	go func() {
		_, _, err := acceptHandshake(rb, secret, 1, 2, nil)
		done <- err
	}()
	if err := dialHandshake(ra, secret, 0, 1, time.Time{}); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	for _, w := range []*bytes.Buffer{&ra.out, &rb.out} {
		if bytes.Contains(w.Bytes(), secret) || bytes.Contains(w.Bytes(), secret[:8]) {
			t.Fatal("the secret appeared on the wire")
		}
	}
}

func TestListenRejectsShortSecret(t *testing.T) {
	if _, err := Listen("127.0.0.1:0", []byte("short")); err == nil {
		t.Fatal("accepted a 5-byte secret")
	}
}

// A peer whose connection takes nothing (its reader is stuck: as a cut
// link or a partition looks to the sender) fails Send with a timeout once
// SetSendTimeout is set, instead of blocking until TCP gives up.
func TestSendTimeoutOnPeerThatTakesNothing(t *testing.T) {
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
	ms[0].SetSendTimeout(200 * time.Millisecond)
	stuck := make(chan struct{})
	handler := func(from int, m *proto.Msg) error { <-stuck; return nil }
	errs := make(chan error, 2)
	for i, m := range ms {
		go func() { errs <- m.Start(i, addrs, handler, nil) }()
	}
	for range ms {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		close(stuck)
		for _, m := range ms {
			m.Close()
		}
	})
	payload := bytes.Repeat([]byte("x"), 1<<20)
	var err error
	// The socket buffers hold some megabytes; 1 GiB is a bound, not a guess.
	for i := 0; i < 1024 && err == nil; i++ {
		err = ms[0].Send(1, &proto.Msg{Type: proto.MsgData, Payload: payload})
	}
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatalf("Send to a peer that takes nothing: %v, want a timeout", err)
	}
}

// deadlineConn records the write deadlines set on a connection.
type deadlineConn struct {
	net.Conn
	mu  sync.Mutex
	set []time.Time
}

func (c *deadlineConn) SetWriteDeadline(t time.Time) error {
	c.mu.Lock()
	c.set = append(c.set, t)
	c.mu.Unlock()
	return c.Conn.SetWriteDeadline(t)
}

// With SetSendTimeout, Send bounds each piece of its frame with a write
// deadline and clears it when it returns, so that no later write on the
// connection meets a stale one.
func TestSendClearsItsWriteDeadline(t *testing.T) {
	ms, cs := startMesh(t, NewSecret(), 2, func([]string) {})
	ms[0].SetSendTimeout(time.Minute)
	if err := ms[0].Send(1, &proto.Msg{Type: proto.MsgData, Payload: []byte("dial")}); err != nil {
		t.Fatal(err)
	}
	<-cs[1].cond
	p := ms[0].peers[1]
	p.mu.Lock()
	dc := &deadlineConn{Conn: p.conn}
	p.conn = dc // the writes still go to the real connection (p.w)
	p.mu.Unlock()
	payload := bytes.Repeat([]byte("x"), 3*sendPiece+5) // several pieces
	if err := ms[0].Send(1, &proto.Msg{Type: proto.MsgData, Payload: payload}); err != nil {
		t.Fatal(err)
	}
	<-cs[1].cond
	dc.mu.Lock()
	defer dc.mu.Unlock()
	if n := len(dc.set); n < 5 || !dc.set[n-1].IsZero() {
		t.Fatalf("write deadlines set %v: want one per piece and the flush, then the zero time last", dc.set)
	}
	for _, d := range dc.set[:len(dc.set)-1] {
		if d.IsZero() {
			t.Fatalf("write deadlines set %v: a piece written with none", dc.set)
		}
	}
}

// An acceptor that may no longer admit the connection (admit displaced it for
// a newer one) does not send its proof, so the dialer is never told it is in.
func TestHandshakeNotKeptSendsNoProof(t *testing.T) {
	secret := NewSecret()
	a, b := net.Pipe()
	defer a.Close()
	done := make(chan error, 1)
	go func() {
		_, _, err := acceptHandshake(b, secret, 1, 2, func() bool { return false })
		b.Close()
		done <- err
	}()
	if err := dialHandshake(a, secret, 0, 1, time.Time{}); err == nil {
		t.Fatal("the dialer was admitted by an acceptor that did not keep the connection")
	}
	if err := <-done; !errors.Is(err, ErrAuth) {
		t.Fatalf("acceptor: err = %v, want ErrAuth (displaced)", err)
	}
}
