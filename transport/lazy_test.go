package transport

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/bcsmpi/bcsmpi/internal/proto"
)

// openFDs counts this test process's open descriptors.
func openFDs(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("no /proc/self/fd: %v", err)
	}
	return len(ents) - 1 // ReadDir's own descriptor
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
	if got, want := openFDs(t)-before, 2*conns+agents; got != want {
		t.Fatalf("%d descriptors opened, want %d (%d connections, %d listeners)", got, want, conns, agents)
	}
	r.close()
	if got := openFDs(t); got != before {
		t.Fatalf("%d descriptors open after Close, %d before the meshes: something was left open", got, before)
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
	if err := dialHandshake(c, NewSecret(), 1, 0); !errors.Is(err, ErrAuth) {
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
		t.Logf("reported: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("endpoint 2 did not report its lazily connected peer's end")
	}
	r.ms[3].Close() // endpoint 2 has never dialled it
	if err := r.ms[2].Send(3, &proto.Msg{Type: proto.MsgData, Payload: seq[:]}); err == nil {
		t.Fatal("a Send to a closed endpoint succeeded")
	}
}

// Strangers that connect and say nothing hold at most the bounded number of
// handshakes; the connections beyond it are closed unread and counted, and
// once the strangers are gone a lazy dial of the job's own gets in.
func TestLazyListenerBoundsHandshakes(t *testing.T) {
	ms, cs := startMesh(t, NewSecret(), 2, nil)
	bound := 2*2 + handshakesSpare
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
				t.Fatalf("%s: refused %d", what, ms[1].Refused())
			}
		}
	}
	unread := 0 // connections closed without the challenge
	for _, c := range strays {
		c.SetReadDeadline(time.Now().Add(30 * time.Second)) // a bound on a hang
		var ch [len(authMagic) + nonceLen]byte
		if n, err := io.ReadFull(c, ch[:]); err == io.EOF && n == 0 {
			unread++
		} else if err != nil {
			t.Fatalf("a stranger within the bound: %v after %d bytes, want the challenge", err, n)
		}
	}
	if unread != extra || ms[1].Refused() < extra {
		t.Fatalf("%d of %d silent strangers closed unread (refused %d), want the %d over the bound of %d", unread, bound+extra, ms[1].Refused(), extra, bound)
	}
	for _, c := range strays {
		c.Close()
	}
	strays = nil
	waitFor("every stranger", func() bool { return ms[1].Refused() == int64(bound+extra) })
	if err := ms[0].Send(1, &proto.Msg{Type: proto.MsgData, Payload: []byte("mine")}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-cs[1].cond:
	case <-time.After(30 * time.Second):
		t.Fatal("frame not delivered")
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
