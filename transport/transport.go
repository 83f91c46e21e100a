package transport

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
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
	// follows has its own bound (5 s, auth.go). A dial whose connection the
	// peer closes before its challenge is tried again within the sum, and a
	// Send waiting for a lazy dial waits at most the sum.
	DialTimeout = 5 * time.Second
	// handshakesSpare is how many inbound handshakes may run beyond one per
	// peer (and one more per peer for strays); a connection beyond that
	// closes the oldest one still handshaking.
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
	dmu  sync.Mutex
	cur  *attempt    // the dial running, or the last one; nil before the first
	up   atomic.Bool // a dial succeeded (Send's and Connect's fast path)
	conn net.Conn

	mu  sync.Mutex // serialises sends
	w   *bufio.Writer
	buf []byte
}

// attempt is one dial of a peer.
type attempt struct {
	done  chan struct{} // closed when the dial has ended: the peer's conn or err is set
	err   error         // the dial's failure, returned by every Send waiting for it
	again bool          // the failure may pass (the peer closed before its challenge): the next Send dials again
}

// Mesh is one endpoint's connections.
type Mesh struct {
	self    int
	ln      net.Listener
	peers   []*peer // by endpoint; nil for self
	h       Handler
	direct  []bool
	rx      []*inbound     // direct peers' connections, by endpoint
	rxAt    []atomic.Int64 // by endpoint: when a read last returned bytes from it (since epoch, ns); 0: never
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

	startWithin time.Duration // StartTimeout; tests shorten it
	dialWithin  time.Duration // DialTimeout plus the handshake's bound; tests shorten it

	mu         sync.Mutex
	shut       bool                  // Close has begun: no new goroutine, no new connection
	conns      map[net.Conn]struct{} // every open connection, in or out, handshaking or not
	seen       []bool                // peers admitted, by endpoint
	nseen      int
	directLeft int              // direct peers not yet admitted
	hs         []net.Conn       // inbound connections handshaking, oldest first
	sendTO     time.Duration    // SetSendTimeout
	alive      time.Duration    // SetDirectKeepAlive
	aliveErrs  []KeepAliveError // KeepAliveFailed: at most one per direct peer
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
		ctx: ctx, cancel: cancel, conns: make(map[net.Conn]struct{}), startWithin: StartTimeout, dialWithin: DialTimeout + authTimeout}, nil
}

// Done is closed when the mesh is closed.
func (m *Mesh) Done() <-chan struct{} { return m.closed }

// Refused counts inbound connections refused by the handshake, or closed
// for a newer one at the handshake bound.
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
	m.rxAt = make([]atomic.Int64, len(addrs))
	for i, a := range addrs {
		if i != self {
			m.peers[i] = &peer{addr: a}
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
		return fmt.Errorf("transport: endpoint %d starting: %w", self, errClosed)
	}
	dials := make([]*attempt, len(addrs))
	for i, d := range m.direct {
		if d {
			dials[i] = m.startDial(i, true)
		}
	}
	for _, a := range dials {
		if a != nil {
			<-a.done // a dial ends by itself, or at Close
			if a.err != nil {
				m.Close()
				return a.err
			}
		}
	}
	t := time.NewTimer(m.startWithin)
	defer t.Stop()
	select {
	case <-m.ready:
		return nil
	case <-m.closed:
		return fmt.Errorf("transport: endpoint %d waiting for its direct peers: %w", self, errClosed)
	case <-t.C:
		m.mu.Lock()
		var missing []int
		for i, d := range m.direct {
			if d && !m.seen[i] {
				missing = append(missing, i)
			}
		}
		m.mu.Unlock()
		m.Close()
		return fmt.Errorf("transport: endpoint %d: direct peer endpoints %v did not connect within %v", self, missing, m.startWithin)
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

// startDial returns the dial of endpoint to: the one running, the one that
// succeeded or failed for good, or a new one if none began yet or the last
// failed in a way that may pass.
func (m *Mesh) startDial(to int, eager bool) *attempt {
	p := m.peers[to]
	p.dmu.Lock()
	defer p.dmu.Unlock()
	if a := p.cur; a != nil {
		select {
		case <-a.done:
			if !a.again {
				return a
			}
		default:
			return a
		}
	}
	a := &attempt{done: make(chan struct{})}
	p.cur = a
	if !m.spawn(func() { m.dial(to, p, a, eager) }) {
		a.err = fmt.Errorf("transport: endpoint %d dialling endpoint %d: %w", m.self, to, errClosed)
		close(a.done)
	}
	return a
}

// dial connects and authenticates the connection to peer p (endpoint to). An
// eager dial (Start's) retries the connect for about a second, as the peer's
// listener may be moments away from accepting on a busy host; a lazy one
// connects once, as the peer has been listening since the job started.
// Either is tried again, with backoff, until dialWithin has passed, while the
// peer closes the connection before its challenge or says it displaced it
// (turnedAway): the peer's handshake bound may be full of strangers
// (acceptLoop), which must not fail the job. That failure is not sticky: the next Send dials again. Any other failure (a
// refused connect, a wrong secret) is.
func (m *Mesh) dial(to int, p *peer, a *attempt, eager bool) {
	defer close(a.done)
	deadline := time.Now().Add(m.dialWithin)
	backoff := 5 * time.Millisecond
	var early error // the last try's errEarlyClose or errDisplaced
	for tries := 1; ; tries++ {
		c, err := m.connect(p.addr, eager, deadline)
		if err == nil {
			if !m.track(c) {
				err = errClosed
			} else if err = dialHandshake(c, m.secret, m.self, to, deadline); err != nil {
				m.drop(c)
			}
		}
		if err == nil {
			p.conn, p.w = c, bufio.NewWriterSize(c, 256<<10)
			m.dialled.Add(1)
			p.up.Store(true)
			return
		}
		if tries > 1 && early != nil && !time.Now().Before(deadline) {
			err = early // a retry ran out of the time left: report why it was retried
		}
		if turnedAway(err) {
			early = err
		}
		if turnedAway(err) && time.Now().Add(backoff).Before(deadline) {
			select {
			case <-time.After(backoff):
				backoff = min(2*backoff, 500*time.Millisecond)
				continue
			case <-m.closed:
				err = errClosed
			}
		}
		if turnedAway(err) {
			a.again = true
			err = fmt.Errorf("%w, %d times in %v (its handshake bound full of strangers?)", err, tries, m.dialWithin)
		}
		a.err = fmt.Errorf("transport: endpoint %d dialling endpoint %d at %s: %w", m.self, to, p.addr, err)
		return
	}
}

// turnedAway reports whether a dial failed because the peer closed the
// connection at its handshake bound (or before its challenge, for any reason):
// no refusal of this endpoint, so it may be tried again.
func turnedAway(err error) bool { return errors.Is(err, errEarlyClose) || errors.Is(err, errDisplaced) }

func (m *Mesh) connect(addr string, eager bool, deadline time.Time) (net.Conn, error) {
	tries, timeout := 1, DialTimeout
	if eager {
		tries, timeout = 50, time.Second
	}
	d := net.Dialer{Timeout: timeout, Deadline: deadline}
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

// handshakeBound is how many inbound handshakes may run at once: two per
// peer (one, and one for a stray) plus handshakesSpare.
func (m *Mesh) handshakeBound() int { return 2*(len(m.peers)-1) + handshakesSpare }

// acceptLoop admits authenticated peers until Close, or until every peer
// has connected (then nothing more may come, and the listener is closed).
// Handshakes run concurrently, so a stray connection that stalls cannot hold
// up the job's own peers; at most handshakeBound run at once, and a
// connection beyond that closes the oldest one still handshaking (a silent
// stranger's, most likely: the job's own peers answer the challenge at once)
// rather than being refused itself, so strangers holding every slot cannot
// keep the job's peers out. Refused connections are closed and counted.
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
		if !m.admit(c) {
			return
		}
	}
}

// admit starts the handshake of an accepted connection, closing the oldest
// one still handshaking if the bound is reached. A connection accepted while
// the mesh closes is closed and not counted as refused; admit then returns
// false.
func (m *Mesh) admit(c net.Conn) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.shut {
		c.Close()
		return false
	}
	if len(m.hs) >= m.handshakeBound() {
		// The oldest gives way. Its dialer, if one of the job's peers, is told
		// so (busyMagic) and tries again; its handshake fails and counts the
		// refusal. The write goes into an empty socket buffer; its deadline
		// only guards against one that is not.
		old := m.hs[0]
		old.SetWriteDeadline(time.Now().Add(10 * time.Millisecond))
		old.Write([]byte(busyMagic))
		old.Close()
		m.hs = append(m.hs[:0], m.hs[1:]...)
	}
	m.hs = append(m.hs, c)
	m.conns[c] = struct{}{}
	m.wg.Add(1) // under mu, not shut: before Close's Wait
	go func() {
		defer m.wg.Done()
		m.handshake(c)
	}()
	return true
}

// handshaking counts the inbound handshakes running.
func (m *Mesh) handshaking() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.hs)
}

func (m *Mesh) handshake(c net.Conn) {
	unlist := func() bool { // under mu: takes c off the handshaking list; false if admit displaced it
		for i, h := range m.hs {
			if h == c {
				m.hs = append(m.hs[:i], m.hs[i+1:]...)
				return true
			}
		}
		return false
	}
	// Off the list before the proof is written, so that admit cannot close
	// a connection whose dialer has been told it is in.
	sc := &stampConn{Conn: c} // reads stamp rxAt once admitted
	from, r, err := acceptHandshake(sc, m.secret, m.self, len(m.peers), func() bool {
		m.mu.Lock()
		defer m.mu.Unlock()
		return unlist()
	})
	m.mu.Lock()
	defer m.mu.Unlock()
	unlist() // if it failed before keep
	// A second connection claiming the same endpoint is refused too.
	if err != nil || m.shut || m.seen[from] {
		if !m.shut { // a handshake cut short by Close is no refusal
			m.refused.Add(1)
		}
		delete(m.conns, c)
		c.Close()
		return
	}
	m.seen[from] = true
	m.taken.Add(1)
	m.rxAt[from].Store(sinceEpoch())
	sc.at.Store(&m.rxAt[from])
	if m.nseen++; m.nseen == len(m.peers)-1 {
		m.ln.Close() // everyone is in
	}
	if m.direct[from] {
		if m.alive > 0 {
			if err := keepAlive(c.(*net.TCPConn), m.alive); err != nil {
				m.aliveErrs = append(m.aliveErrs, KeepAliveError{Endpoint: from, Err: err})
			}
		}
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
// Start. A connection whose options the kernel refuses is kept without
// them, and KeepAliveFailed names it.
func (m *Mesh) SetDirectKeepAlive(d time.Duration) { m.alive = d }

// keepAlive turns on c's keepalive probes for SetDirectKeepAlive(d).
func keepAlive(c *net.TCPConn, d time.Duration) error {
	return errors.Join(c.SetKeepAliveConfig(net.KeepAliveConfig{Enable: true, Idle: max(d/2, time.Second), Interval: time.Second, Count: 9}),
		userTimeout(c, d))
}

// KeepAliveError is a direct peer's connection on which the kernel refused
// SetDirectKeepAlive's socket options (Err, from setsockopt).
type KeepAliveError struct {
	Endpoint int
	Err      error
}

func (e KeepAliveError) Error() string {
	return fmt.Sprintf("transport: keepalive on the connection from endpoint %d: %v", e.Endpoint, e.Err)
}

func (e KeepAliveError) Unwrap() error { return e.Err }

// KeepAliveFailed lists the direct peers' connections on which
// SetDirectKeepAlive's options could not be set, in admission order (all of
// them are admitted once Start has returned nil). Such a connection is
// used all the same, without probes: a Recv from its peer, cut off, waits
// for its whole timeout. The mesh says it only here, so that its owner
// can warn once: it is not an error of the job.
func (m *Mesh) KeepAliveFailed() []KeepAliveError {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]KeepAliveError(nil), m.aliveErrs...)
}

// Quiet is how long ago a read last returned bytes from endpoint from
// (counted from its admission; a frame still arriving counts as it comes),
// or the largest Duration if from has not connected. An agent tells a
// peer that is slow, or busy sending a large frame, from a silent one by
// it (nicthread, PeerTimeout).
func (m *Mesh) Quiet(from int) time.Duration {
	if from < 0 || from >= len(m.rxAt) {
		return math.MaxInt64
	}
	at := m.rxAt[from].Load()
	if at == 0 {
		return math.MaxInt64
	}
	return time.Duration(sinceEpoch() - at)
}

// epoch is the origin of rxAt's stamps (monotonic).
var epoch = time.Now()

func sinceEpoch() int64 { return int64(time.Since(epoch)) | 1 } // never 0: 0 is "never"

// stampConn is an inbound connection whose reads, once it is admitted
// (at set), stamp when bytes last came from its endpoint (Mesh.Quiet).
type stampConn struct {
	net.Conn
	at atomic.Pointer[atomic.Int64]
}

func (s *stampConn) Read(p []byte) (int, error) {
	n, err := s.Conn.Read(p)
	if n > 0 {
		if at := s.at.Load(); at != nil {
			at.Store(sinceEpoch())
		}
	}
	return n, err
}

// sendPiece is the most Send writes under one deadline (SetSendTimeout),
// so that a slow link that still moves data is not taken for a dead one.
const sendPiece = 256 << 10

// Send writes m to endpoint to and flushes it. The first Send to a lazy peer
// not yet connected dials it (or waits for the dial Connect started). With
// SetSendTimeout, the write deadlines it sets are cleared when it returns.
func (m *Mesh) Send(to int, msg *proto.Msg) error {
	if to < 0 || to >= len(m.peers) || m.peers[to] == nil {
		return fmt.Errorf("transport: endpoint %d has no connection to endpoint %d", m.self, to)
	}
	p := m.peers[to]
	if !p.up.Load() {
		a := m.startDial(to, false)
		select {
		case <-a.done:
		case <-m.closed:
			return fmt.Errorf("transport: endpoint %d sending %s to endpoint %d: %w", m.self, msg.Type, to, errClosed)
		}
		if a.err != nil {
			return a.err
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if m.sendTO > 0 {
		// The connection keeps no deadline of Send's once it returns: a
		// later write on it (another Send sets its own; nothing else
		// writes today) must not fail on a stale one.
		defer p.conn.SetWriteDeadline(time.Time{})
	}
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
