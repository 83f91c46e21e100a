package transport

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bcsmpi/bcsmpi/internal/proto"
)

// openFDs returns what this test process's open descriptors refer to
// ("socket:[inode]", paths), as a set: descriptors other tests' meshes
// close meanwhile (their goroutines end after they return) and numbers
// reused are told apart from the ones this test opens.
func openFDs(t *testing.T) map[string]bool {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("no /proc/self/fd: %v", err)
	}
	open := map[string]bool{}
	for _, e := range ents {
		if l, err := os.Readlink("/proc/self/fd/" + e.Name()); err == nil {
			open[l] = true // ReadDir's own descriptor is gone by now: Readlink fails
		}
	}
	return open
}

// opened counts the descriptors in now that were not open in before.
func opened(before, now map[string]bool) int {
	n := 0
	for l := range now {
		if !before[l] {
			n++
		}
	}
	return n
}

// ring is a job's shape: endpoint 0 the master, direct with every agent;
// agent i (endpoint i, 1..n) sends frames only to agent i+1 (n to 1).
type ring struct {
	ms   []*Mesh
	mu   sync.Mutex
	got  [][]uint64 // per endpoint, the sequence numbers received, in order
	from [][]int
	in   chan struct{}
}

func startRing(t *testing.T, agents int) *ring {
	t.Helper()
	n := agents + 1
	r := &ring{ms: make([]*Mesh, n), got: make([][]uint64, n), from: make([][]int, n), in: make(chan struct{}, 1<<16)}
	addrs := make([]string, n)
	secret := NewSecret()
	for i := range r.ms {
		m, err := Listen("127.0.0.1:0", secret)
		if err != nil {
			t.Fatal(err)
		}
		r.ms[i], addrs[i] = m, m.Addr()
	}
	t.Cleanup(r.close)
	all := make([]bool, n)
	for i := 1; i < n; i++ {
		all[i] = true
	}
	errs := make(chan error, n)
	for i, m := range r.ms {
		direct := []bool{true}
		if i == 0 {
			direct = all
		}
		h := func(from int, msg *proto.Msg) error {
			r.mu.Lock()
			r.got[i] = append(r.got[i], binary.LittleEndian.Uint64(msg.Payload))
			r.from[i] = append(r.from[i], from)
			r.mu.Unlock()
			r.in <- struct{}{}
			return nil
		}
		go func() { errs <- m.Start(i, addrs, h, direct) }()
	}
	for range r.ms {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	return r
}

func (r *ring) close() {
	for _, m := range r.ms {
		m.Close()
	}
}

func (r *ring) next(i int) int { return i%(len(r.ms)-1) + 1 }

// Only neighbours exchange data: each agent connects to the master and to the
// one agent it sends to, not to every endpoint, and frames arrive in order
// although the first of them waited for the dial.
func TestLazyMeshConnectsOnlyWhatIsUsed(t *testing.T) {
	const agents, frames = 32, 200
	l, err := net.Listen("tcp", "127.0.0.1:0") // the runtime's poller, before the count
	if err != nil {
		t.Fatal(err)
	}
	l.Close()
	before := openFDs(t)
	r := startRing(t, agents)
	for i := 1; i <= agents; i++ {
		if d, a := r.ms[i].Connections(); d != 1 || a != 1 {
			t.Fatalf("agent endpoint %d after Start: %d dialled, %d accepted, want 1 and 1 (the master only)", i, d, a)
		}
	}
	var wg sync.WaitGroup
	sendErrs := make(chan error, agents)
	for i := 1; i <= agents; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			to := r.next(i)
			if i%2 == 0 {
				r.ms[i].Connect(to) // half of them as the agent does in MSM, half by the first Send
			}
			var seq [8]byte
			for k := range uint64(frames) {
				binary.LittleEndian.PutUint64(seq[:], k)
				if err := r.ms[i].Send(to, &proto.Msg{Type: proto.MsgData, Payload: seq[:]}); err != nil {
					sendErrs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(sendErrs)
	for err := range sendErrs {
		t.Fatal(err)
	}
	for range agents * frames {
		select {
		case <-r.in:
		case <-r.ms[0].Done():
			t.Fatal("closed")
		case <-time.After(30 * time.Second): // a bound on a hang, not a measurement
			t.Fatal("frames lost")
		}
	}
	r.mu.Lock()
	for i := 1; i <= agents; i++ {
		prev := (i+agents-2)%agents + 1
		if len(r.got[i]) != frames {
			t.Fatalf("agent endpoint %d got %d frames, want %d", i, len(r.got[i]), frames)
		}
		for k, s := range r.got[i] {
			if s != uint64(k) || r.from[i][k] != prev {
				t.Fatalf("agent endpoint %d: frame %d is #%d from endpoint %d, want #%d from endpoint %d (order lost)", i, k, s, r.from[i][k], k, prev)
			}
		}
	}
	r.mu.Unlock()
	if d, a := r.ms[0].Connections(); d != agents || a != agents {
		t.Fatalf("master: %d dialled, %d accepted, want %d each", d, a, agents)
	}
	conns := 0
	for i := 1; i <= agents; i++ {
		d, a := r.ms[i].Connections()
		if d != 2 || a != 2 {
			t.Fatalf("agent endpoint %d: %d dialled, %d accepted, want 2 and 2 (the master and one neighbour each way)", i, d, a)
		}
		conns += d
	}
	conns += agents // the master's
	// Both ends of each connection are in this process, plus the listeners
	// still open (every agent's: not all its peers connected). A full mesh
	// would hold 2·33·32 connection ends.
	if got, want := opened(before, openFDs(t)), 2*conns+agents; got != want {
		t.Fatalf("%d descriptors opened, want %d (%d connections, %d listeners)", got, want, conns, agents)
	}
	r.close()
	if got := opened(before, openFDs(t)); got != 0 {
		t.Fatalf("%d descriptors the meshes opened are still open after Close: something was left open", got)
	}
}

// A lazily dialled connection is authenticated like an eager one: a peer of
// another job (other secret) is refused in both directions, the refusal is
// sticky, and a stranger dialling in while the listener is open is refused.
func TestLazyDialRefusesWrongSecret(t *testing.T) {
	a, err := Listen("127.0.0.1:0", NewSecret())
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := Listen("127.0.0.1:0", NewSecret()) // another job's endpoint at the address a expects
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	addrs := []string{a.Addr(), b.Addr()}
	none := func(from int, m *proto.Msg) error { return fmt.Errorf("frame from %d delivered", from) }
	if err := a.Start(0, addrs, none, nil); err != nil {
		t.Fatal(err)
	}
	if err := b.Start(1, addrs, none, nil); err != nil {
		t.Fatal(err)
	}
	msg := &proto.Msg{Type: proto.MsgData, Payload: []byte("secret data")}
	if err := a.Send(1, msg); !errors.Is(err, ErrAuth) {
		t.Fatalf("a → b: err = %v, want ErrAuth", err)
	}
	if err := b.Send(0, msg); !errors.Is(err, ErrAuth) {
		t.Fatalf("b → a: err = %v, want ErrAuth", err)
	}
	if err := a.Send(1, msg); !errors.Is(err, ErrAuth) {
		t.Fatalf("a → b again: err = %v, want the first refusal", err)
	}
	if a.Refused() != 1 || b.Refused() != 1 {
		t.Fatalf("refused: a %d, b %d, want 1 each (the second Send must not dial again)", a.Refused(), b.Refused())
	}
	c, err := net.Dial("tcp", a.Addr())
	if err != nil {
		t.Fatalf("a stopped listening while its peer was not connected: %v", err)
	}
	defer c.Close()
	if err := dialHandshake(c, NewSecret(), 1, 0, time.Time{}); !errors.Is(err, ErrAuth) {
		t.Fatalf("stranger: err = %v, want ErrAuth", err)
	}
	if a.Refused() != 2 {
		t.Fatalf("a refused %d connections, want 2", a.Refused())
	}
	for _, m := range []*Mesh{a, b} {
		if d, acc := m.Connections(); d != 0 || acc != 0 {
			t.Fatalf("%d dialled, %d accepted after refusals only, want none", d, acc)
		}
	}
}

// A lazy dial to an endpoint that has gone fails the Send at once, and a
// lazily accepted connection whose peer closes is reported on Errors.
func TestLazyPeerGone(t *testing.T) {
	r := startRing(t, 3)
	var seq [8]byte
	if err := r.ms[1].Send(2, &proto.Msg{Type: proto.MsgData, Payload: seq[:]}); err != nil {
		t.Fatal(err)
	}
	<-r.in
	r.ms[1].Close()
	select {
	case err := <-r.ms[2].Errors():
		if !strings.Contains(err.Error(), "from endpoint 1:") {
			t.Fatalf("endpoint 2 reported %q, want an error naming endpoint 1 (its peer that closed)", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("endpoint 2 did not report its lazily connected peer's end")
	}
	r.ms[3].Close() // endpoint 2 has never dialled it
	if err := r.ms[2].Send(3, &proto.Msg{Type: proto.MsgData, Payload: seq[:]}); err == nil {
		t.Fatal("a Send to a closed endpoint succeeded")
	}
}

// Strangers that connect and say nothing hold at most the bounded number of
// handshakes: each connection beyond it closes the oldest one still
// handshaking (after its challenge, as every connection gets one), and the
// closed ones are counted as refused. Once the strangers are gone a lazy dial
// of the job's own gets in.
func TestLazyListenerBoundsHandshakes(t *testing.T) {
	ms, cs := startMesh(t, NewSecret(), 2, nil)
	bound := ms[1].handshakeBound()
	if bound != 2*1+handshakesSpare {
		t.Fatalf("handshake bound of a 2-endpoint mesh is %d, want %d (two per peer plus %d)", bound, 2+handshakesSpare, handshakesSpare)
	}
	const extra = 5
	var strays []net.Conn
	defer func() {
		for _, c := range strays {
			c.Close()
		}
	}()
	for range bound + extra {
		c, err := net.Dial("tcp", ms[1].Addr())
		if err != nil {
			t.Fatal(err)
		}
		strays = append(strays, c)
	}
	waitFor := func(what string, ok func() bool) {
		t.Helper()
		for deadline := time.Now().Add(30 * time.Second); !ok(); time.Sleep(time.Millisecond) { // a bound on a hang
			if time.Now().After(deadline) {
				t.Fatalf("%s: refused %d, handshaking %d", what, ms[1].Refused(), ms[1].handshaking())
			}
		}
	}
	for i, c := range strays {
		c.SetReadDeadline(time.Now().Add(30 * time.Second)) // a bound on a hang
		// The oldest are closed for the newcomers, told so (busyMagic) before
		// or after the challenge, or within it.
		if i < extra {
			got, err := io.ReadAll(c)
			busy := bytes.Index(got, []byte(busyMagic))
			if err != nil || busy < 0 || (len(got) != len(busyMagic) && len(got) != len(busyMagic)+len(authMagic)+nonceLen) {
				t.Fatalf("stranger %d of %d (among the oldest %d): read %q, then %v; want %q with or without the challenge, then EOF (closed for a newer one)", i, bound+extra, extra, got, err, busyMagic)
			}
			continue
		}
		var ch [len(authMagic) + nonceLen]byte
		if n, err := io.ReadFull(c, ch[:]); err != nil {
			t.Fatalf("stranger %d: %v after %d bytes, want the challenge", i, err, n)
		}
	}
	waitFor("the oldest strangers refused", func() bool { return ms[1].Refused() == extra && ms[1].handshaking() == bound })
	for _, c := range strays {
		c.Close()
	}
	strays = nil
	waitFor("every stranger", func() bool { return ms[1].Refused() == int64(bound+extra) && ms[1].handshaking() == 0 })
	if err := ms[0].Send(1, &proto.Msg{Type: proto.MsgData, Payload: []byte("mine")}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-cs[1].cond:
	case <-time.After(30 * time.Second):
		t.Fatal("frame not delivered")
	}
}

// Strangers that fill an endpoint's handshake bound with idle connections do
// not kill the job's lazy dial to it: the oldest of them gives way to the
// newcomer, and the dial goes through (the reviewer's scenario: any local user
// can open connections to a job's listener).
func TestLazyDialSurvivesStrangersAtTheBound(t *testing.T) {
	ms, cs := startMesh(t, NewSecret(), 3, nil)
	var strays []net.Conn
	defer func() {
		for _, c := range strays {
			c.Close()
		}
	}()
	bound := ms[2].handshakeBound()
	for range max(22, bound) { // 22: the reviewer's count, the bound before it was two per peer
		c, err := net.Dial("tcp", ms[2].Addr())
		if err != nil {
			t.Fatal(err)
		}
		strays = append(strays, c)
	}
	for deadline := time.Now().Add(30 * time.Second); ms[2].handshaking() < bound; time.Sleep(time.Millisecond) { // a bound on a hang
		if time.Now().After(deadline) {
			t.Fatalf("strangers hold %d handshakes of endpoint 2, want %d", ms[2].handshaking(), bound)
		}
	}
	if err := ms[0].Send(2, &proto.Msg{Type: proto.MsgData, Payload: []byte("mine")}); err != nil {
		t.Fatalf("lazy dial with the handshake bound full of strangers: %v", err)
	}
	select {
	case <-cs[2].cond:
	case <-time.After(30 * time.Second): // a bound on a hang
		t.Fatal("frame not delivered")
	}
	if err := ms[1].Send(2, &proto.Msg{Type: proto.MsgData, Payload: []byte("mine too")}); err != nil {
		t.Fatalf("second lazy dial with strangers still connected: %v", err)
	}
}

// A connection accepted while the mesh closes is closed without being counted
// as refused, and gives its handshake slot back.
func TestAcceptDuringCloseIsNoRefusal(t *testing.T) {
	ms, _ := startMesh(t, NewSecret(), 2, nil)
	m := ms[1]
	m.Close()
	a, b := net.Pipe() // as if Accept had returned it just before Close
	defer b.Close()
	m.admit(a)
	if _, err := b.Read(make([]byte, 1)); err != io.EOF {
		t.Fatalf("the connection accepted during Close: read %v, want EOF (closed)", err)
	}
	if running := m.handshaking(); m.Refused() != 0 || running != 0 {
		t.Fatalf("after a connection accepted during Close: refused %d, handshakes running %d, want 0 and 0", m.Refused(), m.handshaking())
	}
}

// A dial whose peer closes the connection before its challenge (its handshake
// bound full) is tried again, and if that lasts past the dial's time limit the
// Send fails saying so, but the failure is not sticky: the next Send dials
// again. A wrong secret stays a refusal (TestLazyDialRefusesWrongSecret).
func TestLazyDialRetriesEarlyClose(t *testing.T) {
	secret := NewSecret()
	m, err := Listen("127.0.0.1:0", secret)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	m.dialWithin = 2 * time.Second // the time the failing Send below takes
	// Endpoints 1 and 2 are fakes: they close the first connections unread,
	// then answer the handshake and pass on the first frame.
	type fake struct {
		ln     net.Listener
		mu     sync.Mutex
		closes int // connections still to close unread; -1: every one
		seen   int
		got    chan string
	}
	fakes := []*fake{{closes: 3}, {closes: -1}}
	addrs := []string{m.Addr()}
	var wg sync.WaitGroup
	for i, f := range fakes {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		f.ln, f.got = ln, make(chan string, 1)
		addrs = append(addrs, ln.Addr().String())
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				f.mu.Lock()
				f.seen++
				unread := f.closes != 0
				if f.closes > 0 {
					f.closes--
				}
				f.mu.Unlock()
				if unread {
					c.Close()
					continue
				}
				if _, r, err := acceptHandshake(c, secret, i+1, 3, nil); err != nil {
					f.got <- err.Error()
				} else {
					var buf []byte
					var msg proto.Msg
					if err := proto.ReadFrame(r, &buf, &msg); err != nil {
						f.got <- err.Error()
					} else {
						f.got <- string(msg.Payload)
					}
				}
				c.Close()
			}
		}()
	}
	defer wg.Wait()
	defer func() {
		for _, f := range fakes {
			f.ln.Close()
		}
	}()
	if err := m.Start(0, addrs, func(int, *proto.Msg) error { return nil }, nil); err != nil {
		t.Fatal(err)
	}
	if err := m.Send(1, &proto.Msg{Type: proto.MsgData, Payload: []byte("to 1")}); err != nil {
		t.Fatalf("dial to an endpoint that closed its first 3 connections before the challenge: %v", err)
	}
	if got := <-fakes[0].got; got != "to 1" {
		t.Fatalf("endpoint 1 got %q, want the frame", got)
	}
	if fakes[0].seen != 4 {
		t.Fatalf("endpoint 1 saw %d connections, want 4 (3 closed before the challenge, then the one that got in)", fakes[0].seen)
	}
	err = m.Send(2, &proto.Msg{Type: proto.MsgData, Payload: []byte("to 2")})
	if !errors.Is(err, errEarlyClose) || errors.Is(err, ErrAuth) || !strings.Contains(err.Error(), "closed the connection before its challenge") ||
		!strings.Contains(err.Error(), "handshake bound") || !strings.Contains(err.Error(), "endpoint 2") {
		t.Fatalf("dial to an endpoint that closes every connection before its challenge: err = %v, want one naming endpoint 2, the early close and the handshake bound, not ErrAuth", err)
	}
	fakes[1].mu.Lock()
	tries := fakes[1].seen
	fakes[1].closes = 0
	fakes[1].mu.Unlock()
	if err := m.Send(2, &proto.Msg{Type: proto.MsgData, Payload: []byte("to 2")}); err != nil {
		t.Fatalf("the failure to dial endpoint 2 stuck after its connections were answered: %v (after %d tries)", err, tries)
	}
	if got := <-fakes[1].got; got != "to 2" {
		t.Fatalf("endpoint 2 got %q, want the frame", got)
	}
	t.Logf("endpoint 2 closed %d connections before its challenge: %v", tries, err)
}

// Start names the direct peers that did not dial in.
func TestStartNamesMissingDirectPeers(t *testing.T) {
	secret := NewSecret()
	ms := make([]*Mesh, 3)
	addrs := make([]string, 3)
	for i := range ms {
		m, err := Listen("127.0.0.1:0", secret)
		if err != nil {
			t.Fatal(err)
		}
		defer m.Close()
		ms[i], addrs[i] = m, m.Addr()
	}
	none := func(int, *proto.Msg) error { return nil }
	for i := 1; i < 3; i++ { // they accept endpoint 0's dial but, not marking it direct, never dial it
		if err := ms[i].Start(i, addrs, none, nil); err != nil {
			t.Fatal(err)
		}
	}
	ms[0].startWithin = 100 * time.Millisecond // neither ever comes: any wait would do
	err := ms[0].Start(0, addrs, none, []bool{false, true, true})
	if err == nil || !strings.Contains(err.Error(), "endpoints [1 2] did not connect") || !strings.Contains(err.Error(), "endpoint 0") {
		t.Fatalf("Start with direct peers 1 and 2 never dialling in: %v, want an error naming endpoint 0 and the missing endpoints 1 and 2", err)
	}
}

// A connection displaced at the handshake bound after its challenge (a flood
// of newer ones) is told so, and the dialer tries again rather than taking it
// for a refusal (what a wrong secret gets, TestLazyDialRefusesWrongSecret).
func TestLazyDialRetriesDisplaced(t *testing.T) {
	ms, _ := startMesh(t, NewSecret(), 2, nil)
	bound := ms[1].handshakeBound()
	mine, err := net.Dial("tcp", ms[1].Addr()) // endpoint 0's, by hand: challenge first, hello later
	if err != nil {
		t.Fatal(err)
	}
	defer mine.Close()
	mine.SetReadDeadline(time.Now().Add(30 * time.Second)) // a bound on a hang
	var ch [len(authMagic) + nonceLen]byte
	if _, err := io.ReadFull(mine, ch[:]); err != nil {
		t.Fatal(err)
	}
	var strays []net.Conn
	defer func() {
		for _, c := range strays {
			c.Close()
		}
	}()
	for range bound { // the last of them displaces mine, the oldest
		c, err := net.Dial("tcp", ms[1].Addr())
		if err != nil {
			t.Fatal(err)
		}
		strays = append(strays, c)
	}
	// What the dialer then reads instead of the proof.
	if got, err := io.ReadAll(mine); err != nil || string(got) != busyMagic {
		t.Fatalf("displaced after its challenge: read %q, %v; want %q then EOF", got, err, busyMagic)
	}
	// And what dialHandshake makes of it.
	a, b := net.Pipe()
	defer a.Close()
	go func() {
		defer b.Close()
		b.Write(ch[:])
		var hdr [5]byte // the hello; then the acceptor gives way
		io.ReadFull(b, hdr[:])
		io.ReadFull(b, make([]byte, binary.LittleEndian.Uint32(hdr[1:])))
		b.Write([]byte(busyMagic))
	}()
	err = dialHandshake(a, NewSecret(), 0, 1, time.Time{})
	if !turnedAway(err) || errors.Is(err, ErrAuth) {
		t.Fatalf("dialHandshake told busy after its hello: %v, want errDisplaced (tried again), not ErrAuth", err)
	}
}

// Interrupt ends a Recv that waits on a silent direct peer at once (its
// timeout is ten minutes), and every later Recv with ErrInterrupted; the
// master can still send.
func TestInterruptEndsRecv(t *testing.T) {
	r := startRing(t, 2)
	got := make(chan error, 1)
	go func() {
		var m proto.Msg
		got <- r.ms[0].Recv(1, &m, 10*time.Minute)
	}()
	r.ms[0].Interrupt()
	select {
	case err := <-got:
		if err == nil {
			t.Fatal("the interrupted Recv returned a frame; none was sent")
		}
	case <-time.After(time.Minute): // a hang guard: the Recv's timeout is ten minutes
		t.Fatal("Interrupt did not end the Recv under way")
	}
	var m proto.Msg
	if err := r.ms[0].Recv(2, &m, 10*time.Minute); !errors.Is(err, ErrInterrupted) {
		t.Fatalf("a Recv after Interrupt: %v; want ErrInterrupted", err)
	}
	if err := r.ms[0].Send(1, &proto.Msg{Type: proto.MsgStop}); err != nil {
		t.Fatalf("a Send after Interrupt: %v", err)
	}
	if err := r.ms[1].Recv(0, &m, time.Minute); err != nil || m.Type != proto.MsgStop {
		t.Fatalf("the agent read %v %v; want the MsgStop sent after Interrupt", m.Type, err)
	}
}

// Quiet counts from an endpoint's admission and from every read of its
// bytes; an endpoint that never connected is quiet for ever.
func TestQuietFollowsReads(t *testing.T) {
	r := startRing(t, 3)
	if q := r.ms[1].Quiet(3); q != math.MaxInt64 {
		t.Fatalf("Quiet of an endpoint that never connected: %v, want the largest Duration", q)
	}
	if q := r.ms[1].Quiet(99); q != math.MaxInt64 {
		t.Fatalf("Quiet of endpoint 99 of 4: %v, want the largest Duration", q)
	}
	if err := r.ms[3].Send(1, &proto.Msg{Type: proto.MsgData, Payload: make([]byte, 8)}); err != nil {
		t.Fatal(err)
	}
	<-r.in                                                                                                              // served: admitted, and its bytes read
	for deadline := time.Now().Add(30 * time.Second); r.ms[1].Quiet(3) == math.MaxInt64; time.Sleep(time.Millisecond) { // a bound on a hang
		if time.Now().After(deadline) {
			t.Fatal("endpoint 1 never admitted endpoint 3")
		}
	}
	before := r.ms[1].Quiet(3)
	time.Sleep(time.Millisecond) // Quiet grows while nothing comes
	if after := r.ms[1].Quiet(3); after <= before {
		t.Fatalf("Quiet went from %v to %v with nothing read, want it to grow", before, after)
	}
}
