package transport

import (
	"bufio"
	"context"
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
	Connect(to int)
	Recv(from int, msg *proto.Msg, timeout time.Duration) error
	Done() <-chan struct{}
	Errors() <-chan error
}

var _ Link = (*Mesh)(nil)

const (
	// StartTimeout bounds how long Start waits for the direct peers to dial in.
	StartTimeout = 10 * time.Second
	// DialTimeout bounds the TCP connect of a lazy dial; the handshake that
	// follows has its own bound (5 s, auth.go). A Send waiting for a lazy
	// dial waits at most the sum.
	DialTimeout = 5 * time.Second
	// handshakesSpare is how many inbound handshakes may run beyond one per
	// peer (and one more per peer for strays) before further connections are
	// refused unread.
	handshakesSpare = 16
)

// inbound is a connection from a "direct" peer, whose frames the owner reads
// itself with Recv (no reader goroutine, no hand-off): the master reads its
// agents' control frames this way, and an agent its master's.
type inbound struct {
	conn net.Conn
	r    *bufio.Reader
	buf  []byte
}

// peer is the sending side of this endpoint's connection to another one.
type peer struct {
	addr string
	once sync.Once     // starts the dial
	done chan struct{} // closed when the dial has ended: conn or err is set
	up   atomic.Bool   // the dial succeeded (Send's and Connect's fast path)
	conn net.Conn
	err  error // the dial's failure, returned by every later Send

	mu  sync.Mutex // serialises sends
	w   *bufio.Writer
	buf []byte
}

// Mesh is one endpoint's connections.
type Mesh struct {
	self    int
	ln      net.Listener
	peers   []*peer // by endpoint; nil for self
	h       Handler
	direct  []bool
	rx      []*inbound // direct peers' connections, by endpoint
	errs    chan error
	secret  []byte
	refused atomic.Int64
	stopRx  atomic.Bool  // Interrupt was called: every Recv fails
	dialled atomic.Int64 // outbound connections established
	taken   atomic.Int64 // inbound connections admitted
	ctx     context.Context
	cancel  context.CancelFunc
	close   sync.Once
	closed  chan struct{}
	ready   chan struct{} // closed when every direct peer has dialled in
	wg      sync.WaitGroup

	mu         sync.Mutex
	shut       bool                  // Close has begun: no new goroutine, no new connection
	conns      map[net.Conn]struct{} // every open connection, in or out, handshaking or not
	seen       []bool                // peers admitted, by endpoint
	nseen      int
	directLeft int // direct peers not yet admitted
	handshakes int // inbound handshakes running
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
	ctx, cancel := context.WithCancel(context.Background())
	return &Mesh{ln: ln, errs: make(chan error, 1), secret: secret, closed: make(chan struct{}), ready: make(chan struct{}),
		ctx: ctx, cancel: cancel, conns: make(map[net.Conn]struct{})}, nil
}

// Done is closed when the mesh is closed.
func (m *Mesh) Done() <-chan struct{} { return m.closed }

// Refused counts inbound connections refused by the handshake.
func (m *Mesh) Refused() int64 { return m.refused.Load() }

// Connections counts the authenticated connections this endpoint dialled
// (one per peer it has sent to or connected) and admitted (one per peer that
// did so to it), open or since closed by Close.
func (m *Mesh) Connections() (dialled, accepted int) {
	return int(m.dialled.Load()), int(m.taken.Load())
}

// Addr is the listening address to give the other endpoints.
func (m *Mesh) Addr() string { return m.ln.Addr().String() }

// Errors delivers the first error of a reader (a peer closed, a bad frame).
func (m *Mesh) Errors() <-chan error { return m.errs }

// Start makes endpoint self of the mesh whose endpoints listen at addrs: it
// dials the endpoints marked in direct (may be nil), waits until each of
// them has dialled in (at most StartTimeout), and serves inbound connections
// with h until Close. Frames from direct peers are not served: the owner
// reads them with Recv, from one goroutine per peer. Every other peer is
// lazy: connected by Connect or the first Send to it.
func (m *Mesh) Start(self int, addrs []string, h Handler, direct []bool) error {
	if self < 0 || self >= len(addrs) {
		return fmt.Errorf("transport: endpoint %d of a mesh of %d endpoints (0..%d)", self, len(addrs), len(addrs)-1)
	}
	m.self, m.h = self, h
	m.peers = make([]*peer, len(addrs))
	for i, a := range addrs {
		if i != self {
			m.peers[i] = &peer{addr: a, done: make(chan struct{})}
		}
	}
	m.direct = make([]bool, len(addrs))
	copy(m.direct, direct)
	m.direct[self] = false
	m.rx = make([]*inbound, len(addrs))
	m.mu.Lock()
	m.seen = make([]bool, len(addrs))
	for _, d := range m.direct {
		if d {
			m.directLeft++
		}
	}
	if m.directLeft == 0 {
		close(m.ready)
	}
	m.mu.Unlock()
	if !m.spawn(m.acceptLoop) {
		return errClosed
	}
	for i, d := range m.direct {
		if d {
			m.startDial(i, true)
		}
	}
	for i, d := range m.direct {
		if d {
			<-m.peers[i].done // a dial ends by itself, or at Close
			if err := m.peers[i].err; err != nil {
				m.Close()
				return err
			}
		}
	}
	t := time.NewTimer(StartTimeout)
	defer t.Stop()
	select {
	case <-m.ready:
		return nil
	case <-m.closed:
		return errClosed
	case <-t.C:
		m.Close()
		return fmt.Errorf("transport: endpoint %d: not every direct peer connected within %v", self, StartTimeout)
	}
}

var errClosed = errors.New("transport: closed")

// spawn runs f in a goroutine of the mesh (Close waits for it), unless the
// mesh is closing.
func (m *Mesh) spawn(f func()) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.shut {
		return false
	}
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		f()
	}()
	return true
}

// track records an open connection for Close; a connection opened while the
// mesh closes is closed at once.
func (m *Mesh) track(c net.Conn) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.shut {
		c.Close()
		return false
	}
	m.conns[c] = struct{}{}
	return true
}

// drop closes a tracked connection.
func (m *Mesh) drop(c net.Conn) {
	m.mu.Lock()
	delete(m.conns, c)
	m.mu.Unlock()
	c.Close()
}

// Connect starts the dial to endpoint to in the background, unless it has
// begun already, and returns at once. Send waits for it. Out-of-range
// endpoints and self are ignored (Send reports them).
func (m *Mesh) Connect(to int) {
	if to < 0 || to >= len(m.peers) || m.peers[to] == nil || m.peers[to].up.Load() {
		return
	}
	m.startDial(to, false)
}

func (m *Mesh) startDial(to int, eager bool) {
	p := m.peers[to]
	p.once.Do(func() {
		if !m.spawn(func() { m.dial(to, p, eager) }) {
			p.err = fmt.Errorf("transport: endpoint %d dialling endpoint %d: %w", m.self, to, errClosed)
			close(p.done)
		}
	})
}

// dial connects and authenticates the connection to peer p (endpoint to). An
// eager dial (Start's) retries for about a second, as the peer's listener
// may be moments away from accepting on a busy host; a lazy one is tried
// once, as the peer has been listening since the job started.
func (m *Mesh) dial(to int, p *peer, eager bool) {
	defer close(p.done)
	c, err := m.connect(p.addr, eager)
	if err == nil {
		if !m.track(c) {
			err = errClosed
		} else if err = dialHandshake(c, m.secret, m.self, to); err != nil {
			m.drop(c)
		}
	}
	if err != nil {
		p.err = fmt.Errorf("transport: endpoint %d dialling endpoint %d at %s: %w", m.self, to, p.addr, err)
		return
	}
	p.conn, p.w = c, bufio.NewWriterSize(c, 256<<10)
	m.dialled.Add(1)
	p.up.Store(true)
}

func (m *Mesh) connect(addr string, eager bool) (net.Conn, error) {
	tries, timeout := 1, DialTimeout
	if eager {
		tries, timeout = 50, time.Second
	}
	d := net.Dialer{Timeout: timeout}
	var err error
	for i := 0; i < tries; i++ {
		var c net.Conn
		if c, err = d.DialContext(m.ctx, "tcp", addr); err == nil {
			c.(*net.TCPConn).SetNoDelay(true)
			return c, nil
		}
		if i+1 < tries {
			select {
			case <-time.After(20 * time.Millisecond):
			case <-m.closed:
				return nil, errClosed
			}
		}
	}
	return nil, err
}

// acceptLoop admits authenticated peers until Close, or until every peer
// has connected (then nothing more may come, and the listener is closed).
// Handshakes run concurrently, so a stray connection that stalls cannot hold
// up the job's own peers; at most two per peer plus handshakesSpare run at
// once, and connections beyond that are closed unread. Refused connections
// are closed and counted.
func (m *Mesh) acceptLoop() {
	backoff := 5 * time.Millisecond
	for {
		c, err := m.ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			select { // out of descriptors or the like: wait, then go on
			case <-time.After(backoff):
				backoff = min(2*backoff, time.Second)
				continue
			case <-m.closed:
				return
			}
		}
		backoff = 5 * time.Millisecond
		c.(*net.TCPConn).SetNoDelay(true)
		m.mu.Lock()
		over := m.handshakes >= 2*len(m.peers)+handshakesSpare
		if !over {
			m.handshakes++
		}
		m.mu.Unlock()
		if over || !m.track(c) {
			m.refused.Add(1)
			c.Close()
			continue
		}
		if !m.spawn(func() { m.handshake(c) }) {
			m.drop(c)
			return
		}
	}
}

func (m *Mesh) handshake(c net.Conn) {
	from, r, err := acceptHandshake(c, m.secret, m.self, len(m.peers))
	m.mu.Lock()
	defer m.mu.Unlock()
	m.handshakes--
	if err != nil || m.shut || m.seen[from] { // a second connection claiming the same endpoint is refused too
		if !m.shut { // a handshake cut short by Close is no refusal
			m.refused.Add(1)
		}
		delete(m.conns, c)
		c.Close()
		return
	}
	m.seen[from] = true
	m.taken.Add(1)
	if m.nseen++; m.nseen == len(m.peers)-1 {
		m.ln.Close() // everyone is in
	}
	if m.direct[from] {
		m.rx[from] = &inbound{conn: c, r: r}
		if m.directLeft--; m.directLeft == 0 {
			close(m.ready)
		}
		return
	}
	m.wg.Add(1) // under mu, not shut: before Close's Wait
	go func() {
		defer m.wg.Done()
		m.serve(from, r, nil)
	}()
}

func (m *Mesh) serve(from int, r *bufio.Reader, buf []byte) {
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
	if from < 0 || from >= len(m.rx) || m.rx[from] == nil {
		return fmt.Errorf("transport: endpoint %d does not read endpoint %d directly", m.self, from)
	}
	in := m.rx[from]
	if in.r.Buffered() == 0 {
		in.conn.SetReadDeadline(time.Now().Add(timeout))
	}
	if m.stopRx.Load() { // checked after the deadline is set: Interrupt's own comes after it, or the flag is seen
		return fmt.Errorf("transport: endpoint %d reading from endpoint %d: %w", m.self, from, ErrInterrupted)
	}
	if err := proto.ReadFrame(in.r, &in.buf, msg); err != nil {
		return fmt.Errorf("transport: endpoint %d reading from endpoint %d: %w", m.self, from, err)
	}
	return nil
}

// ErrInterrupted is the error of a Recv cut short by Interrupt.
var ErrInterrupted = errors.New("transport: receiving interrupted")

// Interrupt makes a Recv under way on a direct peer's connection fail at
// once, and every later Recv (errors matching ErrInterrupted, or the
// connection's deadline error when a read was already waiting); sends still
// work. It is how a master gives up waiting for its agents' reports (a job
// stopped while one of its hosts is silent) and can still send them its
// stop. A Recv cut short may have read part of a frame: the direct
// connections are not to be read again. Safe to call from any goroutine once
// Start has returned, and more than once.
func (m *Mesh) Interrupt() {
	m.stopRx.Store(true)
	for _, in := range m.rx {
		if in != nil {
			in.conn.SetReadDeadline(time.Unix(1, 0))
		}
	}
}

// Ready reports whether a frame from direct peer from is already buffered.
func (m *Mesh) Ready(from int) bool { return m.rx[from] != nil && m.rx[from].r.Buffered() > 0 }

// Send writes m to endpoint to and flushes it. The first Send to a lazy peer
// not yet connected dials it (or waits for the dial Connect started).
func (m *Mesh) Send(to int, msg *proto.Msg) error {
	if to < 0 || to >= len(m.peers) || m.peers[to] == nil {
		return fmt.Errorf("transport: endpoint %d has no connection to endpoint %d", m.self, to)
	}
	p := m.peers[to]
	if !p.up.Load() {
		m.startDial(to, false)
		select {
		case <-p.done:
		case <-m.closed:
			return fmt.Errorf("transport: endpoint %d sending %s to endpoint %d: %w", m.self, msg.Type, to, errClosed)
		}
		if p.err != nil {
			return p.err
		}
	}
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
	_, err := p.w.Write(p.buf)
	if err == nil && len(payload) > 0 {
		_, err = p.w.Write(payload)
	}
	if err != nil {
		return fmt.Errorf("transport: endpoint %d sending %s to endpoint %d: %w", m.self, msg.Type, to, err)
	}
	if err := p.w.Flush(); err != nil {
		return fmt.Errorf("transport: endpoint %d sending %s to endpoint %d: %w", m.self, msg.Type, to, err)
	}
	return nil
}

// Close closes the listener and every connection, stops the dials and waits
// for the mesh's goroutines.
func (m *Mesh) Close() {
	m.close.Do(func() {
		m.mu.Lock()
		m.shut = true
		conns := m.conns
		m.conns = nil
		m.mu.Unlock()
		close(m.closed)
		m.cancel()
		m.ln.Close()
		for c := range conns {
			c.Close()
		}
	})
	m.wg.Wait()
}
