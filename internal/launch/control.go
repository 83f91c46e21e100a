package launch

import (
	"bufio"
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/bcsmpi/bcsmpi/mds"
)

// The control connection: one TCP connection from each bcsd to bcsrun,
// under Slurm (bcsrun listens, VarControl says where) and over ssh (the PMI
// port, with its own first line). bcsd dials and proves it knows the job's
// secret, bcsrun proves it back (ctlHello, ctlProof), then both exchange
// frames: a type byte, a 4-byte big-endian length, at most maxFrame bytes.
//
// bcsd → bcsrun:
//
//	'H' {"host":…}           the host's name, first
//	'V' hostVerdict           this host ended the job (a failing rank, a runtime error)
//	'S' hostStats             node 0: the master's slices (at the end)
//	'F' name-len(2) name data a piece of one of the host's MDS files, in order
//	'Z' hostDone              everything is sent: the host's code and its files' sizes
//	'C' (empty)               node 0 over ssh: one piece of standard input was taken
//
// bcsrun → bcsd:
//
//	'A' (empty)  end the job: another host failed (or bcsrun was told to stop)
//	'I' data     node 0 over ssh: a piece of bcsrun's standard input for rank 0
//	'E' (empty)  that input ended
//	'R' (empty)  bcsrun has what it needs from every host: exit now
//
// bcsd waits for 'R' before it exits, so that under Slurm its exit (srun
// --kill-on-bad-exit ends the step on a non-zero one) never cuts off another
// host that is still sending its MDS data.

// VarControl is bcsrun's control address for the bcsds under Slurm:
// host:port, or :port (what bcsrun sets): bcsd then dials
// SLURM_LAUNCH_NODE_IPADDR, srun's host.
const VarControl = "BCSD_CONTROL"

const (
	maxFrame      = 1 << 20
	stdinChunk    = 64 << 10
	stdinWindow   = 4       // pieces of input in flight to node 0
	maxMDSFile    = 1 << 30 // one MDS file a host sends
	ctlHelloWord  = "bcsctl"
	ctlHelloLimit = 300
)

// hostVerdict is how a host ended the job.
type hostVerdict struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	// Secondary marks a consequence of a failure elsewhere ("the master
	// stopped the job"): a primary verdict from another host replaces it.
	Secondary bool `json:"secondary,omitempty"`
}

// hostStats is the master's count of slices (node 0).
type hostStats struct {
	Slices  uint64 `json:"slices"`
	Skipped uint64 `json:"skipped"`
	FIFO    bool   `json:"fifo"`
	// In a gang (the master a place in node 0's host's bcsd): the slices
	// the job ran in and was strobed in; 0 outside a gang.
	Ran   uint64 `json:"ran,omitempty"`
	Alive uint64 `json:"alive,omitempty"`
	// FirstSlice is when the first slice ended, in ns since the Unix
	// epoch by node 0's host's clock (0: none).
	FirstSlice int64 `json:"first_slice_ns,omitempty"`
}

// hostDone ends a host's part.
type hostDone struct {
	Code   int              `json:"code"`
	Files  map[string]int64 `json:"files"` // the MDS files sent, with their sizes
	Memory int64            `json:"emds_memory_bytes"`
	// Kernel is the host's kernel monitor (mds: kernel): "on", or "off: "
	// and why; "" without it.
	Kernel string `json:"kernel,omitempty"`
	// Problem says why the host's MDS data is not all there ("" if it is).
	Problem string `json:"problem,omitempty"`
}

func writeFrame(w io.Writer, typ byte, p []byte) error {
	if len(p) > maxFrame {
		return fmt.Errorf("control frame of %d bytes, at most %d", len(p), maxFrame)
	}
	b := make([]byte, 5+len(p))
	b[0] = typ
	binary.BigEndian.PutUint32(b[1:5], uint32(len(p)))
	copy(b[5:], p)
	_, err := w.Write(b)
	return err
}

func readFrame(r *bufio.Reader) (byte, []byte, error) {
	var h [5]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return 0, nil, err
	}
	n := binary.BigEndian.Uint32(h[1:])
	if n > maxFrame {
		return 0, nil, fmt.Errorf("control frame %q of %d bytes, at most %d", h[0], n, maxFrame)
	}
	p := make([]byte, n)
	if _, err := io.ReadFull(r, p); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return 0, nil, err
	}
	return h[0], p, nil
}

func ctlMAC(secret []byte, what, job string, node int, nonce string) string {
	h := hmac.New(sha256.New, secret)
	fmt.Fprintf(h, "%s %s %d %s", what, job, node, nonce)
	return hex.EncodeToString(h.Sum(nil))
}

// ctlHello is bcsd's first line on its control connection.
func ctlHello(secret []byte, job string, node int, nonce string) string {
	return fmt.Sprintf("%s %d %s %s\n", ctlHelloWord, node, nonce, ctlMAC(secret, "bcs-ctl", job, node, nonce))
}

// ctlProof is bcsrun's answer: it knows the secret too.
func ctlProof(secret []byte, job string, node int, nonce string) string {
	return "ok " + ctlMAC(secret, "bcs-ctl-ok", job, node, nonce) + "\n"
}

// readLine reads one line of at most limit bytes, one byte at a time (what
// follows is not consumed).
func readLine(r io.Reader, limit int) (string, error) {
	var line []byte
	b := make([]byte, 1)
	for len(line) < limit {
		if _, err := r.Read(b); err != nil {
			return "", err
		}
		if b[0] == '\n' {
			return string(line), nil
		}
		line = append(line, b[0])
	}
	return "", fmt.Errorf("no newline in the first %d bytes", limit)
}

// ---- bcsd's side ----

// hostControl is a bcsd's control connection to bcsrun.
type hostControl struct {
	conn    net.Conn
	r       *bufio.Reader
	wmu     sync.Mutex
	abort   chan struct{} // closed on 'A'
	release chan struct{} // closed on 'R' or when the connection ends
	gone    chan struct{} // closed when the connection ends before 'R' (bcsrun gone)
	// Standard input for rank 0 (node 0 over ssh): pieces, then nil at its end.
	input chan []byte
	once  struct{ abort, release sync.Once }
}

// controlAddr resolves VarControl's ":port" to srun's host.
func controlAddr(addr string) string {
	if strings.HasPrefix(addr, ":") {
		if l := os.Getenv("SLURM_LAUNCH_NODE_IPADDR"); l != "" {
			return net.JoinHostPort(l, addr[1:])
		}
	}
	return addr
}

// dialControl connects node's bcsd to bcsrun at addr.
func dialControl(addr string, secret []byte, job string, node int, host string) (*hostControl, error) {
	addr = controlAddr(addr)
	conn, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		return nil, fmt.Errorf("connecting to bcsrun's control port %s (set the address key if bcsrun's host is reached through another interface): %w", addr, err)
	}
	var nb [16]byte
	rand.Read(nb[:])
	nonce := hex.EncodeToString(nb[:])
	conn.SetDeadline(time.Now().Add(30 * time.Second))
	r := bufio.NewReader(conn)
	_, err = io.WriteString(conn, ctlHello(secret, job, node, nonce))
	var line string
	if err == nil {
		line, err = readLine(r, ctlHelloLimit)
	}
	if err == nil && !hmac.Equal([]byte(line+"\n"), []byte(ctlProof(secret, job, node, nonce))) {
		err = fmt.Errorf("the answer %.40q does not prove the job's secret", line)
	}
	if err != nil {
		conn.Close()
		return nil, fmt.Errorf("bcsrun's control port %s: %w", addr, err)
	}
	conn.SetDeadline(time.Time{})
	h := &hostControl{conn: conn, r: r, abort: make(chan struct{}), release: make(chan struct{}), gone: make(chan struct{}), input: make(chan []byte, stdinWindow+1)}
	if err := h.sendJSON('H', map[string]string{"host": host}); err != nil {
		conn.Close()
		return nil, fmt.Errorf("bcsrun's control port %s: %w", addr, err)
	}
	go h.read()
	return h, nil
}

func (h *hostControl) read() {
	defer h.once.release.Do(func() { close(h.release) })
	for {
		typ, p, err := readFrame(h.r)
		if err != nil {
			close(h.gone)
			return
		}
		switch typ {
		case 'A':
			h.once.abort.Do(func() { close(h.abort) })
		case 'R':
			return
		case 'I':
			select { // bcsrun sends at most stdinWindow unacknowledged pieces
			case h.input <- p:
			default:
				return // a bcsrun that ignores the window: a broken conversation
			}
		case 'E':
			select {
			case h.input <- nil:
			default:
				return
			}
		}
	}
}

func (h *hostControl) send(typ byte, p []byte) error {
	h.wmu.Lock()
	defer h.wmu.Unlock()
	h.conn.SetWriteDeadline(time.Now().Add(30 * time.Second))
	return writeFrame(h.conn, typ, p)
}

func (h *hostControl) sendJSON(typ byte, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return h.send(typ, b)
}

// sendFile sends dir/name in pieces.
func (h *hostControl) sendFile(dir, name string) (int64, error) {
	f, err := os.Open(filepath.Join(dir, name))
	if err != nil {
		return 0, err
	}
	defer f.Close()
	buf := make([]byte, 2+len(name)+maxFrame-2-len(name))
	binary.BigEndian.PutUint16(buf, uint16(len(name)))
	copy(buf[2:], name)
	data := buf[2+len(name):]
	var total int64
	for first := true; ; first = false {
		n, err := io.ReadFull(f, data)
		if n > 0 || first {
			if serr := h.send('F', buf[:2+len(name)+n]); serr != nil {
				return total, serr
			}
			total += int64(n)
		}
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return total, nil
		}
		if err != nil {
			return total, err
		}
	}
}

// feedInput copies the pieces of input bcsrun sends into w (rank 0's
// standard input), acknowledging each, and closes w at the input's end, at
// the connection's end, or when stop is closed. A rank that stopped reading
// (a broken pipe) makes the rest be discarded, still acknowledged.
func (h *hostControl) feedInput(w *os.File, stop <-chan struct{}) {
	defer w.Close()
	broken := false
	for {
		select {
		case p := <-h.input:
			if p == nil {
				return
			}
			if !broken {
				if _, err := w.Write(p); err != nil {
					broken = true
				}
			}
			h.send('C', nil)
		case <-h.release:
			return
		case <-stop:
			return
		}
	}
}

func (h *hostControl) close() { h.conn.Close() }

// ---- bcsrun's side ----

// ctlServer is bcsrun's end of the bcsds' control connections.
type ctlServer struct {
	a      *across
	nodeOf []int // world rank → node
	names  []string
	mon    *monitor  // nil: MDS off
	stdin  *os.File  // forwarded to node 0 (over ssh); nil: /dev/null
	fwdIn  bool      // forward standard input (over ssh)
	stderr io.Writer // for bcsrun's own messages
	bound  time.Duration

	events chan ctlEvent
	quit   chan struct{}
	ran    chan struct{} // run has returned
	wg     sync.WaitGroup

	mu     sync.Mutex
	peers  []*ctlPeer // by node
	closed bool       // finish has begun: no new connection

	// Owned by run until ran is closed.
	verdict  *hostVerdict
	vnode    int
	stats    *hostStats
	done     []bool
	lost     []string // why a host's data did not come back
	kernel   []string // each host's kernel monitor, as its 'Z' said
	memory   int64
	released bool
}

type ctlPeer struct {
	node   int
	conn   net.Conn
	wmu    sync.Mutex
	credit chan struct{}
}

type ctlEvent struct {
	node    int
	kind    byte // 'V', 'S', 'Z', 'L' (the connection ended before 'Z'), 'C' (a host connected)
	verdict hostVerdict
	stats   hostStats
	done    hostDone
	err     error
}

func newCtlServer(a *across, ranks int, names []string, mon *monitor, stdin *os.File, fwdIn bool, stderr io.Writer) *ctlServer {
	nodeOf := NodeOf(ranks, a.hosts, a.cfg.Cyclic(), a.cfg.PPN)
	s := &ctlServer{a: a, names: make([]string, a.hosts), mon: mon, stdin: stdin, fwdIn: fwdIn, stderr: stderr,
		bound:  killWait + a.cfg.NodeTimeout,
		events: make(chan ctlEvent, 4*a.hosts+4), quit: make(chan struct{}), ran: make(chan struct{}),
		peers: make([]*ctlPeer, a.hosts), done: make([]bool, a.hosts), lost: make([]string, a.hosts),
		kernel: make([]string, a.hosts)}
	for _, n := range nodeOf {
		s.nodeOf = append(s.nodeOf, int(n))
	}
	copy(s.names, names)
	go s.run()
	return s
}

func (s *ctlServer) hostName(node int) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.names[node] != "" {
		return fmt.Sprintf("host %s (node %d)", s.names[node], node)
	}
	return fmt.Sprintf("node %d", node)
}

func (s *ctlServer) post(ev ctlEvent) {
	select {
	case s.events <- ev:
	case <-s.quit:
	}
}

// serve runs one control connection whose first line was line.
func (s *ctlServer) serve(c net.Conn, line string) error {
	f := strings.Fields(line)
	if len(f) != 4 || f[0] != ctlHelloWord {
		return errors.New("not a bcsd")
	}
	node, err := strconv.Atoi(f[1])
	if err != nil || node < 0 || node >= s.a.hosts {
		return fmt.Errorf("node %q, want 0..%d", f[1], s.a.hosts-1)
	}
	if !hmac.Equal([]byte(ctlHello(s.a.secret, s.a.jobID, node, f[2])), []byte(line+"\n")) {
		return fmt.Errorf("node %d: wrong proof of the job's secret", node)
	}
	p := &ctlPeer{node: node, conn: c, credit: make(chan struct{}, stdinWindow)}
	// The proof is the connection's first bytes: a frame for this peer
	// (another host's failure broadcasts 'A' as soon as the peer is
	// listed) waits on p.wmu until it is written.
	p.wmu.Lock()
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		p.wmu.Unlock()
		return fmt.Errorf("node %d: the job has ended", node)
	}
	if s.peers[node] != nil {
		s.mu.Unlock()
		p.wmu.Unlock()
		return fmt.Errorf("%w: node %d's control connection made twice", errJobNode, node)
	}
	s.peers[node] = p
	s.wg.Add(1)
	s.mu.Unlock()
	c.SetWriteDeadline(time.Now().Add(10 * time.Second))
	_, err = io.WriteString(c, ctlProof(s.a.secret, s.a.jobID, node, f[2]))
	p.wmu.Unlock()
	if err != nil {
		s.post(ctlEvent{node: node, kind: 'L', err: err})
		s.wg.Done()
		return nil
	}
	s.post(ctlEvent{node: node, kind: 'C'}) // a host that comes after the job's failure is told at once
	go func() { defer s.wg.Done(); s.read(p) }()
	if node == 0 && s.fwdIn {
		// Not waited for: a read of a terminal that never ends must not
		// hold the job's end (the goroutine ends with the connection, or
		// with bcsrun).
		go s.forwardInput(p)
	}
	return nil
}

func (p *ctlPeer) send(typ byte, b []byte) error {
	p.wmu.Lock()
	defer p.wmu.Unlock()
	p.conn.SetWriteDeadline(time.Now().Add(10 * time.Second))
	return writeFrame(p.conn, typ, b)
}

// forwardInput sends bcsrun's standard input to node 0, stdinWindow
// pieces ahead of what it took, then its end.
func (s *ctlServer) forwardInput(p *ctlPeer) {
	for range stdinWindow {
		p.credit <- struct{}{}
	}
	if s.stdin == nil {
		p.send('E', nil)
		return
	}
	buf := make([]byte, stdinChunk)
	for {
		select {
		case <-p.credit:
		case <-s.quit:
			return
		}
		n, err := s.stdin.Read(buf)
		if n > 0 {
			if p.send('I', buf[:n]) != nil {
				return
			}
		} else {
			p.credit <- struct{}{} // not used
		}
		if err != nil {
			p.send('E', nil)
			return
		}
	}
}

// read takes one bcsd's frames until its 'Z' and the connection's end.
func (s *ctlServer) read(p *ctlPeer) {
	defer p.conn.Close() // a refused host hears it at once
	r := bufio.NewReader(p.conn)
	rcv := &mdsReceiver{s: s, node: p.node}
	defer rcv.abandon()
	zed := false
	for {
		typ, b, err := readFrame(r)
		if err != nil {
			if !zed {
				if err == io.EOF {
					err = errors.New("its bcsd ended without saying how its part of the job went")
				}
				s.post(ctlEvent{node: p.node, kind: 'L', err: err})
			}
			return
		}
		var ev ctlEvent
		ev.node = p.node
		switch typ {
		case 'H':
			var h struct{ Host string }
			if json.Unmarshal(b, &h) == nil && h.Host != "" {
				s.mu.Lock()
				if s.names[p.node] == "" {
					s.names[p.node] = h.Host
				}
				s.mu.Unlock()
			}
			continue
		case 'C':
			select {
			case p.credit <- struct{}{}:
			default:
			}
			continue
		case 'F':
			if err := rcv.piece(b); err != nil {
				s.post(ctlEvent{node: p.node, kind: 'L', err: err})
				return
			}
			continue
		case 'V':
			ev.kind = 'V'
			err = json.Unmarshal(b, &ev.verdict)
		case 'S':
			ev.kind = 'S'
			err = json.Unmarshal(b, &ev.stats)
		case 'Z':
			ev.kind = 'Z'
			if err = json.Unmarshal(b, &ev.done); err == nil {
				if prob := rcv.commit(ev.done.Files); prob != "" && ev.done.Problem == "" {
					ev.done.Problem = prob
				}
				zed = true
			}
		default:
			err = fmt.Errorf("unknown control frame %q", typ)
		}
		if err != nil {
			s.post(ctlEvent{node: p.node, kind: 'L', err: fmt.Errorf("a malformed control message: %v", err)})
			return
		}
		s.post(ev)
	}
}

func (s *ctlServer) broadcast(typ byte) {
	s.mu.Lock()
	ps := append([]*ctlPeer(nil), s.peers...)
	s.mu.Unlock()
	for _, p := range ps {
		if p != nil {
			p.send(typ, nil) // a host gone is 'L' on its reader
		}
	}
}

// run keeps the job's state across hosts: the first failure ends the job on
// every host ('A'); once every host sent its part or is gone (or bound
// after the failure), every bcsd may exit ('R').
func (s *ctlServer) run() {
	defer close(s.ran)
	var giveUp <-chan time.Time
	fail := func(v hostVerdict, node int) {
		switch {
		case s.verdict == nil:
			s.verdict, s.vnode = &v, node
			s.broadcast('A')
			giveUp = time.After(s.bound)
		case s.verdict.Secondary && !v.Secondary:
			s.verdict, s.vnode = &v, node
		}
	}
	for {
		select {
		case ev := <-s.events:
			switch ev.kind {
			case 'Q':
				return
			case 'V':
				fail(ev.verdict, ev.node)
			case 'C':
				if s.verdict != nil { // failed before this host was listed: the broadcast missed it
					s.mu.Lock()
					p := s.peers[ev.node]
					s.mu.Unlock()
					p.send('A', nil)
				}
			case 'S':
				st := ev.stats
				s.stats = &st
			case 'Z':
				s.done[ev.node] = true
				s.memory += ev.done.Memory
				s.kernel[ev.node] = ev.done.Kernel
				if ev.done.Problem != "" {
					s.lost[ev.node] = ev.done.Problem
				}
				if ev.done.Code != 0 {
					fail(hostVerdict{Code: ev.done.Code, Message: fmt.Sprintf("bcsrun: the job failed on %s (status %d)", s.hostName(ev.node), ev.done.Code), Secondary: true}, ev.node)
				}
			case 'L':
				if s.done[ev.node] || s.lost[ev.node] != "" {
					break
				}
				s.lost[ev.node] = ev.err.Error()
				if s.verdict == nil {
					msg := fmt.Sprintf("bcsrun: %s: %v; job aborted", s.hostName(ev.node), ev.err)
					fmt.Fprintln(s.stderr, msg)
					fail(hostVerdict{Code: 1, Message: msg, Secondary: true}, ev.node)
				}
			}
		case <-giveUp:
			giveUp = nil
			for n := range s.done {
				if !s.done[n] && s.lost[n] == "" {
					s.lost[n] = fmt.Sprintf("its bcsd did not send its data within %v of the job's failure", s.bound)
				}
			}
		}
		if !s.released {
			settled := true
			for n := range s.done {
				settled = settled && (s.done[n] || s.lost[n] != "")
			}
			if settled {
				s.released = true
				s.broadcast('R')
			}
		}
	}
}

// stop ends the job on every host (bcsrun was told to stop), as a host's
// failure does; it reports whether every host is connected (else the
// caller must stop the others another way).
func (s *ctlServer) stop(msg string) bool {
	s.mu.Lock()
	all := !s.closed
	for _, p := range s.peers {
		all = all && p != nil
	}
	s.mu.Unlock()
	s.post(ctlEvent{kind: 'V', node: -1, verdict: hostVerdict{Code: 1, Message: msg}})
	return all
}

// ctlResult is what the bcsds said, once the job has ended on every host.
type ctlResult struct {
	verdict *hostVerdict
	stats   *hostStats
	missing []string // one line per host whose MDS data is missing
	kernel  []string // each host's kernel monitor (mds: kernel): "on", "off: why", "" (no word)
	memory  int64
	// unclean names the hosts whose bcsd connected but never said it was
	// done ('Z', sent once its MDS staging directory is removed): with the
	// MDS on, bcsrun removes what they left (cleanStaging). A host whose
	// name never came is not listed.
	unclean []string
}

// finish is called once every bcsd has ended (srun or every ssh returned):
// it reads what is left on the connections (bounded: a host cut off never
// closes its end), stops, and says what the hosts said.
func (s *ctlServer) finish() ctlResult {
	s.mu.Lock()
	s.closed = true
	ps := append([]*ctlPeer(nil), s.peers...)
	s.mu.Unlock()
	for _, p := range ps {
		if p != nil {
			p.conn.SetReadDeadline(time.Now().Add(2 * time.Second))
		}
	}
	s.wg.Wait()                     // the readers post their last events before they return
	s.events <- ctlEvent{kind: 'Q'} // after those: run takes them all, then stops
	<-s.ran
	close(s.quit)
	for _, p := range ps {
		if p != nil {
			p.conn.Close()
		}
	}
	res := ctlResult{verdict: s.verdict, stats: s.stats, memory: s.memory, kernel: s.kernel}
	s.mu.Lock()
	for n, p := range s.peers {
		if p != nil && !s.done[n] && s.names[n] != "" {
			res.unclean = append(res.unclean, s.names[n])
		}
	}
	s.mu.Unlock()
	for n := range s.done {
		why := s.lost[n]
		if !s.done[n] && why == "" {
			why = "its bcsd never reported (it did not start, or could not reach bcsrun)"
		}
		if why != "" {
			res.missing = append(res.missing, fmt.Sprintf("%s: MDS data missing: %s", s.hostName(n), why))
		}
	}
	return res
}

// mdsReceiver writes one host's MDS files into the job's directory: each
// into a temporary file, renamed into place when the host's 'Z' confirms
// its size.
type mdsReceiver struct {
	s       *ctlServer
	node    int
	name    string   // the file being received
	f       *os.File // its temporary file
	size    int64
	pending map[string]*os.File // received whole, awaiting 'Z'
	sizes   map[string]int64
}

// fileOf says whether name is one of node's files (own): its ranks' MMDS
// files, its EMDS file, and from node 0 the master's EMDS and the
// communication matrix; and which part of the MDS writes it (part: "main",
// "elan" or "kernel", as in BCS_MDS).
func (r *mdsReceiver) fileOf(name string) (part string, own bool) {
	switch name {
	case "emds-global.csv", "comm-matrix.csv":
		return "elan", r.node == 0
	case fmt.Sprintf("emds-node%d.csv", r.node):
		return "elan", true
	case "emds-kernel-master.csv":
		return "kernel", r.node == 0
	}
	if rest, ok := strings.CutPrefix(name, "emds-kernel-"); ok {
		for _, f := range []string{"runtime", "interferers", "wakehist", "ids", "cost"} {
			if rest == fmt.Sprintf("%s-node%d.csv", f, r.node) {
				return "kernel", true
			}
		}
		num, ok := strings.CutPrefix(rest, "rank")
		num, ok2 := strings.CutSuffix(num, ".csv")
		return "kernel", ok && ok2 && r.ownRank(num)
	}
	rest, ok := strings.CutPrefix(name, "mmds-rank")
	if !ok {
		return "", false
	}
	for _, suf := range []string{"-dist.csv", ".csv", ".hlog"} {
		if num, ok := strings.CutSuffix(rest, suf); ok {
			return "main", r.ownRank(num)
		}
	}
	return "", false
}

// refuse says why node may not send a file of that name, or nil: it must be
// one of the node's files (fileOf), of a part of the MDS the job asked for
// (a bcsd whose files the job's BCS_MDS does not explain is refused, as a
// foreign name is).
func (r *mdsReceiver) refuse(name string) error {
	part, own := r.fileOf(name)
	if !own {
		return fmt.Errorf("it sent an MDS file named %q, not one of its node's (mmds-rankR.csv, .hlog, -dist.csv and emds-kernel-rankR.csv of its ranks, emds-node%d.csv, emds-kernel-*-node%d.csv, and from node 0 emds-global.csv, emds-kernel-master.csv and comm-matrix.csv)", name, r.node, r.node)
	}
	mode := r.s.mon.mode
	if have := map[string]bool{"main": mode.Main, "elan": mode.Elan, "kernel": mode.Kernel}[part]; !have {
		return fmt.Errorf("it sent MDS file %s, written by the MDS's %s part, but the job's MDS is %q (BCS_MDS without %s)", name, part, mode.String(), part)
	}
	return nil
}

// ownRank says whether num (decimal, as in a file's name) is one of the
// node's ranks.
func (r *mdsReceiver) ownRank(num string) bool {
	rk, err := strconv.Atoi(num)
	return err == nil && strconv.Itoa(rk) == num && rk >= 0 && rk < len(r.s.nodeOf) && r.s.nodeOf[rk] == r.node
}

// kernelStates makes the manifest's "kernel" and "kernel_hosts" of a job
// across hosts from each host's word (states[n], node n on host names[n]):
// "on" when every host ran the monitor; "off: why" when none did and all
// for the same reason; else "off on H1, H2 (kernel_hosts says why)".
// kernel_hosts has one line per host: "host: on", "host: off: why", or
// "host: unknown" where its bcsd never said (its data did not come back).
func kernelStates(states, names []string) (string, []string) {
	lines := make([]string, len(states))
	var off []string
	same := ""
	for n, st := range states {
		name := fmt.Sprintf("node %d", n)
		if n < len(names) && names[n] != "" {
			name = names[n]
		}
		if st == "" {
			st = "unknown (its bcsd did not report)"
		}
		lines[n] = name + ": " + st
		if st != "on" {
			if len(off) == 0 {
				same = st
			} else if st != same {
				same = ""
			}
			off = append(off, name)
		}
	}
	switch {
	case len(off) == 0:
		return "on", lines
	case len(off) == len(states) && strings.HasPrefix(same, "off: "):
		return same, lines
	}
	return "off on " + strings.Join(off, ", ") + " (kernel_hosts says why)", lines
}

func (r *mdsReceiver) piece(b []byte) error {
	m := r.s.mon
	if m == nil || !m.on() {
		return errors.New("it sent MDS data, but the job has none")
	}
	if len(b) < 2 || len(b) < 2+int(binary.BigEndian.Uint16(b)) {
		return errors.New("a malformed MDS file piece")
	}
	nl := int(binary.BigEndian.Uint16(b))
	name, data := string(b[2:2+nl]), b[2+nl:]
	if name != r.name {
		if err := r.refuse(name); err != nil {
			return err
		}
		if r.pending == nil {
			r.pending, r.sizes = map[string]*os.File{}, map[string]int64{}
		}
		if r.pending[name] != nil {
			return fmt.Errorf("it sent MDS file %s twice", name)
		}
		r.closeCur()
		f, err := os.CreateTemp(m.dir, name+".*.tmp")
		if err != nil {
			return fmt.Errorf("bcsrun: MDS file %s: %w", name, err)
		}
		r.name, r.f, r.size = name, f, 0
		r.pending[name] = f
	}
	if r.size+int64(len(data)) > maxMDSFile {
		return fmt.Errorf("MDS file %s is over %d bytes", name, maxMDSFile)
	}
	if _, err := r.f.Write(data); err != nil {
		return fmt.Errorf("bcsrun: MDS file %s: %w", name, err)
	}
	r.size += int64(len(data))
	return nil
}

func (r *mdsReceiver) closeCur() {
	if r.f != nil {
		r.sizes[r.name] = r.size
		r.f.Close()
		r.f = nil
	}
}

// commit renames the files 'Z' names with the size received; it returns a
// problem for those missing or short.
func (r *mdsReceiver) commit(files map[string]int64) string {
	r.closeCur()
	var probs []string
	for name, f := range r.pending {
		want, ok := files[name]
		switch {
		case !ok:
			probs = append(probs, name+" was not confirmed")
			os.Remove(f.Name())
		case want != r.sizes[name]:
			probs = append(probs, fmt.Sprintf("%s: %d of %d bytes", name, r.sizes[name], want))
			os.Remove(f.Name())
		default:
			os.Chmod(f.Name(), r.s.mon.fmode)
			if err := os.Rename(f.Name(), filepath.Join(r.s.mon.dir, name)); err != nil {
				probs = append(probs, err.Error())
				os.Remove(f.Name())
			}
		}
	}
	for name := range files {
		if r.pending[name] == nil {
			probs = append(probs, name+" did not arrive")
		}
	}
	r.pending = nil
	if len(probs) > 0 {
		return "not all of its files arrived whole: " + strings.Join(probs, "; ")
	}
	return ""
}

// abandon removes what was not committed (the connection ended first).
func (r *mdsReceiver) abandon() {
	if r.f != nil {
		r.f.Close()
		r.f = nil
	}
	for _, f := range r.pending {
		os.Remove(f.Name())
	}
	r.pending = nil
}

// controlListen is where bcsrun listens for the bcsds' control connections
// under Slurm: on every address (the address key names the compute hosts'
// interface, which bcsrun's host may not have), and the value of
// VarControl for them, ":port": each bcsd dials srun's host as Slurm saw it
// (SLURM_LAUNCH_NODE_IPADDR), which the hosts reach already (srun's own
// connections come from there).
func controlListen() (net.Listener, string, error) {
	ln, err := net.Listen("tcp", ":0")
	if err != nil {
		return nil, "", fmt.Errorf("control port: %w", err)
	}
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	return ln, ":" + port, nil
}

// accept serves control connections on ln until it is closed; the
// returned channel is closed when it has stopped.
func (s *ctlServer) accept(ln net.Listener) <-chan struct{} {
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				c.SetReadDeadline(time.Now().Add(10 * time.Second))
				line, err := readLine(c, ctlHelloLimit)
				c.SetReadDeadline(time.Time{})
				if err == nil {
					err = s.serve(c, line)
				}
				if err != nil {
					fmt.Fprintf(s.stderr, "bcsrun: control port: refused a connection from %s: %v\n", c.RemoteAddr(), err)
					c.Close()
				}
			}()
		}
	}()
	return stopped
}

// apply makes what the hosts said the job's result: the failing host's
// status and message (not its launcher's), the master's slices, and the
// job's MDS directory completed (mon nil or off: no MDS).
// A job bcsrun was told to stop (signalled) keeps its 128+signal status.
func (cr ctlResult) apply(res *Result, signalled bool, mon *monitor, names []string, stdout, stderr io.Writer) {
	if cr.verdict != nil && !signalled {
		res.ExitCode, res.Message = cr.verdict.Code, cr.verdict.Message
		if res.ExitCode == 0 {
			res.ExitCode = 1
		}
	}
	if cr.stats != nil {
		res.Slices, res.Skipped, res.FIFO = cr.stats.Slices, cr.stats.Skipped, cr.stats.FIFO
		res.SlicesRun, res.SlicesAlive = cr.stats.Slices, cr.stats.Slices
		if cr.stats.FirstSlice != 0 {
			res.FirstSlice = time.Unix(0, cr.stats.FirstSlice)
		}
		if cr.stats.Alive > 0 { // a gang's
			res.Ganged = true
			res.SlicesRun, res.SlicesAlive = cr.stats.Ran, cr.stats.Alive
		}
	}
	if mon != nil && mon.on() {
		if cr.stats != nil && cr.stats.Alive > 0 { // in the gang of node 0's bcsd
			mon.man.Gang = &mds.Gang{SlicesAlive: cr.stats.Alive, SlicesRun: cr.stats.Ran,
				Note: "a job across hosts: the slices only; switches and slices given away are not gathered from the hosts"}
		}
		mon.man.Hosts = names
		mon.man.MissingHosts = cr.missing
		mon.man.MemoryBytes += cr.memory
		if mon.mode.Kernel {
			mon.man.Kernel, mon.man.KernelHosts = kernelStates(cr.kernel, names)
		}
		mon.finish(res, stdout, stderr)
	}
}

// hostNames is every node's host name as known now.
func (s *ctlServer) hostNames() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.names...)
}

// cleanStaging runs `bcsd --cleanup JOB` (RemoveStaging) with each of cmds
// (srun on the hosts, or ssh to each), all at once, each for at most
// killWait, once the job has ended on every host; what failed is a warning
// naming the hosts (hosts[i] is what cmds[i] cleans).
func cleanStaging(cmds []*exec.Cmd, hosts []string, stderr io.Writer) {
	type result struct {
		i   int
		out []byte
		err error
	}
	results := make(chan result, len(cmds))
	for i, cmd := range cmds {
		go func() {
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			err := cmd.Start()
			if err == nil {
				done := make(chan error, 1)
				go func() { done <- cmd.Wait() }()
				select {
				case err = <-done:
				case <-time.After(killWait):
					cmd.Process.Kill()
					<-done
					err = fmt.Errorf("no answer in %v", killWait)
				}
			}
			results <- result{i, out.Bytes(), err}
		}()
	}
	for range cmds {
		r := <-results
		if r.err != nil {
			fmt.Fprintf(stderr, "bcsrun: warning: %s: its bcsd did not remove its MDS staging directory, nor could bcsrun (%s): %v %s\n",
				hosts[r.i], strings.Join(cmds[r.i].Args, " "), r.err, strings.TrimSpace(string(r.out)))
		}
	}
}
