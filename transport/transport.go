// Package transport carries control and data frames between the master and the
// agents of a job over TCP. Endpoint 0 is the master; endpoint 1+n is node n.
//
// Every endpoint listens; every endpoint dials every other endpoint once and
// uses that connection only to send, so each ordered pair (a→b) has one
// connection and frames from a to b arrive in the order a sent them. Inbound
// connections are served by one goroutine each, which decodes frames and calls
// the endpoint's Handler; the Handler sees a Msg whose Payload is valid only
// during the call. Peers marked direct are not served by a goroutine: their
// frames are read by the owner with Recv, which saves two goroutine hand-offs
// per control frame (they dominated the cost of a slice).
//
// The single-node embedded case does not use this package: the master calls
// its one agent directly.
//
// A Mesh is safe for concurrent use: Send may be called from any goroutine
// (sends to one peer are serialised). Send blocks while the peer's
// connection takes nothing, unless SetSendTimeout bounds it (the agents
// across hosts: a cut link or a partition must not hang a sender).
//
// An agent's endpoint uses a mesh through the Link interface, so tests can
// wrap it: transport/transporttest holds the fault-injecting wrappers, which
// production builds do not link (see internal/launch on the bcsfault tag).
package transport

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bcsmpi/bcsmpi/internal/proto"
)

// Handler receives one decoded frame from endpoint from.
type Handler func(from int, m *proto.Msg) error

// Link is what an agent's endpoint uses of a mesh (nicthread.AgentEndpoint
// sends and reads through it). *Mesh is the one production implementation;
// tests wrap it to inject faults (package transport/transporttest, linked
// into bcsrun and bcsd only by the bcsfault build tag, see internal/launch).
type Link interface {
	Send(to int, msg *proto.Msg) error
	Recv(from int, msg *proto.Msg, timeout time.Duration) error
	Done() <-chan struct{}
	Errors() <-chan error
}

var _ Link = (*Mesh)(nil)

// inbound is a connection from a "direct" peer, whose frames the owner reads
// itself with Recv (no reader goroutine, no hand-off): the master reads its
// agents' control frames this way, and an agent its master's.
type inbound struct {
	conn net.Conn
	r    *bufio.Reader
	buf  []byte
}

type peer struct {
	mu   sync.Mutex
	conn net.Conn
	w    *bufio.Writer
	buf  []byte
}

// Mesh is one endpoint's connections.
type Mesh struct {
	self    int
	ln      net.Listener
	peers   []*peer
	h       Handler
	wg      sync.WaitGroup
	mu      sync.Mutex
	in      []net.Conn
	direct  []bool
	rx      []*inbound // direct peers' connections, by endpoint
	errs    chan error
	close   sync.Once
	secret  []byte
	refused atomic.Int64
	closed  chan struct{}
	sendTO  time.Duration // SetSendTimeout
	alive   time.Duration // SetDirectKeepAlive
}

// Listen opens the endpoint's listener (addr like "127.0.0.1:0": loopback
// unless told otherwise). Peers must prove they know secret (see auth.go).
func Listen(addr string, secret []byte) (*Mesh, error) {
	if len(secret) < 16 {
		return nil, fmt.Errorf("transport: secret of %d bytes, want at least 16", len(secret))
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("transport: listen on %s: %w", addr, err)
	}
	return &Mesh{ln: ln, errs: make(chan error, 1), secret: secret, closed: make(chan struct{})}, nil
}

// Done is closed when the mesh is closed.
func (m *Mesh) Done() <-chan struct{} { return m.closed }

// Refused counts inbound connections refused by the handshake.
func (m *Mesh) Refused() int64 { return m.refused.Load() }

// Addr is the listening address to give the other endpoints.
func (m *Mesh) Addr() string { return m.ln.Addr().String() }

// Errors delivers the first error of a reader (a peer closed, a bad frame).
func (m *Mesh) Errors() <-chan error { return m.errs }

// Start connects endpoint self to every address in addrs (its own is
// skipped), then serves inbound frames with h until Close. Frames from the
// endpoints marked in direct (may be nil) are not served: the owner reads
// them with Recv, from one goroutine per peer.
func (m *Mesh) Start(self int, addrs []string, h Handler, direct []bool) error {
	m.self, m.h = self, h
	m.peers = make([]*peer, len(addrs))
	m.direct = make([]bool, len(addrs))
	copy(m.direct, direct)
	m.rx = make([]*inbound, len(addrs))
	acceptDone := make(chan error, 1)
	go func() { acceptDone <- m.accept(len(addrs) - 1) }()
	for i, a := range addrs {
		if i == self {
			continue
		}
		c, err := dial(a)
		if err != nil {
			m.Close()
			return fmt.Errorf("transport: endpoint %d dialling endpoint %d at %s: %w", self, i, a, err)
		}
		if err := dialHandshake(c, m.secret, self, i); err != nil {
			c.Close()
			m.Close()
			return fmt.Errorf("transport: endpoint %d: %w", self, err)
		}
		m.peers[i] = &peer{conn: c, w: bufio.NewWriterSize(c, 256<<10)}
	}
	select {
	case err := <-acceptDone:
		if err != nil {
			m.Close()
			return err
		}
	case <-time.After(10 * time.Second):
		m.Close()
		return fmt.Errorf("transport: endpoint %d: not every peer connected within 10s", self)
	}
	return nil
}

func dial(addr string) (net.Conn, error) {
	var err error
	for i := 0; i < 50; i++ {
		var c net.Conn
		if c, err = net.DialTimeout("tcp", addr, time.Second); err == nil {
			c.(*net.TCPConn).SetNoDelay(true)
			return c, nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return nil, err
}

// accept admits n authenticated peers. Handshakes run concurrently, so a
// stray connection that stalls cannot hold up the job's own peers; refused
// connections are closed and counted. The listener is closed once the mesh
// is complete: no socket listens while the job runs.
func (m *Mesh) accept(n int) error {
	type admitted struct {
		from int
		c    net.Conn
		r    *bufio.Reader
	}
	ok := make(chan admitted)
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		for {
			c, err := m.ln.Accept()
			if err != nil {
				return
			}
			c.(*net.TCPConn).SetNoDelay(true)
			go func() {
				from, r, err := acceptHandshake(c, m.secret, m.self, len(m.peers))
				if err != nil {
					m.refused.Add(1)
					c.Close()
					return
				}
				select {
				case ok <- admitted{from, c, r}:
				case <-stop:
					c.Close()
				}
			}()
		}
	}()
	seen := make([]bool, len(m.peers))
	for got := 0; got < n; {
		var a admitted
		select {
		case a = <-ok:
		case <-m.closed:
			return errClosed
		}
		if seen[a.from] { // a second connection claiming the same endpoint
			m.refused.Add(1)
			a.c.Close()
			continue
		}
		seen[a.from] = true
		got++
		m.mu.Lock()
		m.in = append(m.in, a.c)
		m.mu.Unlock()
		if m.direct[a.from] {
			if m.alive > 0 {
				tc := a.c.(*net.TCPConn)
				tc.SetKeepAliveConfig(net.KeepAliveConfig{Enable: true, Idle: max(m.alive/2, time.Second), Interval: time.Second, Count: 9})
				userTimeout(tc, m.alive)
			}
			m.rx[a.from] = &inbound{conn: a.c, r: a.r}
			continue
		}
		m.wg.Add(1)
		go m.serve(a.from, a.r, nil)
	}
	m.ln.Close()
	return nil
}

var errClosed = errors.New("transport: closed")

func (m *Mesh) serve(from int, r *bufio.Reader, buf []byte) {
	defer m.wg.Done()
	var msg proto.Msg
	for {
		if err := proto.ReadFrame(r, &buf, &msg); err != nil {
			m.fail(fmt.Errorf("transport: endpoint %d reading from endpoint %d: %w", m.self, from, err))
			return
		}
		if err := m.h(from, &msg); err != nil {
			m.fail(err)
			return
		}
	}
}

func (m *Mesh) fail(err error) {
	select {
	case m.errs <- err:
	default:
	}
}

// Recv reads the next frame from direct peer from, waiting at most timeout.
// msg.Payload is valid until the next Recv from the same peer. Not safe for
// concurrent use for one peer.
func (m *Mesh) Recv(from int, msg *proto.Msg, timeout time.Duration) error {
	in := m.rx[from]
	if in == nil {
		return fmt.Errorf("transport: endpoint %d does not read endpoint %d directly", m.self, from)
	}
	if in.r.Buffered() == 0 {
		in.conn.SetReadDeadline(time.Now().Add(timeout))
	}
	if err := proto.ReadFrame(in.r, &in.buf, msg); err != nil {
		return fmt.Errorf("transport: endpoint %d reading from endpoint %d: %w", m.self, from, err)
	}
	return nil
}

// Ready reports whether a frame from direct peer from is already buffered.
func (m *Mesh) Ready(from int) bool { return m.rx[from] != nil && m.rx[from].r.Buffered() > 0 }

// SetSendTimeout bounds how long Send waits for a peer to take each piece
// (sendPiece bytes) of a frame: a connection that accepts nothing for d —
// a cut link or a partition, which TCP gives up on only after many
// minutes — fails the Send with a timeout (a net.Error whose Timeout is
// true), and the connection is unusable after. 0, the default: no bound.
// Call before Start.
func (m *Mesh) SetSendTimeout(d time.Duration) { m.sendTO = d }

// SetDirectKeepAlive makes the kernel probe each direct peer's connection
// once it has been quiet for d/2 (at least 1 s: keepalive counts seconds),
// then every second, and end it once nothing, probe answers included, has
// come from the peer for d (TCP_USER_TIMEOUT, on Linux): a Recv from a peer
// whose host is cut off then fails within d and a second, instead of
// waiting for its whole timeout, while a peer that is only busy (its
// kernel answers) is waited for. The master uses it to bound its wait for
// a node's transmission (node_timeout + tx_timeout) by about node_timeout
// where the node is unreachable. 0, the default: no probes. Call before
// Start.
func (m *Mesh) SetDirectKeepAlive(d time.Duration) { m.alive = d }

// sendPiece is the most Send writes under one deadline (SetSendTimeout),
// so that a slow link that still moves data is not taken for a dead one.
const sendPiece = 256 << 10

// Send writes m to endpoint to and flushes it.
func (m *Mesh) Send(to int, msg *proto.Msg) error {
	if to < 0 || to >= len(m.peers) || m.peers[to] == nil {
		return fmt.Errorf("transport: endpoint %d has no connection to endpoint %d", m.self, to)
	}
	p := m.peers[to]
	p.mu.Lock()
	defer p.mu.Unlock()
	payload := msg.Payload
	msg.Payload = nil
	p.buf = proto.AppendFrame(p.buf[:0], msg)
	msg.Payload = payload
	if len(payload) > 0 { // patch the lengths, then write the payload without copying it
		n := len(p.buf) - 5 + len(payload)
		binary.LittleEndian.PutUint32(p.buf[1:], uint32(n))
		binary.LittleEndian.PutUint32(p.buf[len(p.buf)-4:], uint32(len(payload)))
	}
	if m.sendTO > 0 {
		p.conn.SetWriteDeadline(time.Now().Add(m.sendTO))
	}
	_, err := p.w.Write(p.buf)
	for rest := payload; err == nil && len(rest) > 0; {
		n := len(rest)
		if m.sendTO > 0 {
			n = min(n, sendPiece)
			p.conn.SetWriteDeadline(time.Now().Add(m.sendTO))
		}
		_, err = p.w.Write(rest[:n])
		rest = rest[n:]
	}
	if err != nil {
		return fmt.Errorf("transport: endpoint %d sending %s to endpoint %d: %w", m.self, msg.Type, to, err)
	}
	if m.sendTO > 0 {
		p.conn.SetWriteDeadline(time.Now().Add(m.sendTO))
	}
	if err := p.w.Flush(); err != nil {
		return fmt.Errorf("transport: endpoint %d sending %s to endpoint %d: %w", m.self, msg.Type, to, err)
	}
	return nil
}

// Close closes the listener and every connection and waits for the readers.
func (m *Mesh) Close() {
	m.close.Do(func() {
		close(m.closed)
		m.ln.Close()
		for _, p := range m.peers {
			if p != nil {
				p.conn.Close()
			}
		}
		m.mu.Lock()
		for _, c := range m.in {
			c.Close()
		}
		m.mu.Unlock()
	})
	m.wg.Wait()
}
