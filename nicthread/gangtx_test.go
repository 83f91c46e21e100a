package nicthread

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bcsmpi/bcsmpi/internal/core"
	"github.com/bcsmpi/bcsmpi/internal/proto"
	"github.com/bcsmpi/bcsmpi/internal/shm"
	"github.com/bcsmpi/bcsmpi/strobe"
	"github.com/bcsmpi/bcsmpi/transport"
)

// txLate withholds from its agent the master's MsgTX of the slice whose
// exchange (MsgMSM) brought the last of the job's two descriptors (the
// slice that matches rank 1's send with rank 0's receive) until release is
// closed: the agent has exchanged and scheduled the slice but does not
// transmit (a host that stalls in TX; its peer waits for its data).
// release nil: never (a host that stays silent; at the teardown the agent
// gets a stop and ends quietly).
type txLate struct {
	transport.Link
	release chan struct{}
	seen    int // descriptors exchanged so far (Recv's goroutine only)
	late    atomic.Bool
}

func (d *txLate) Recv(from int, m *proto.Msg, timeout time.Duration) error {
	if err := d.Link.Recv(from, m, timeout); err != nil {
		return err
	}
	if from == 0 && m.Type == proto.MsgMSM {
		d.seen += len(m.Descs)
	}
	if from != 0 || m.Type != proto.MsgTX || d.seen < 2 || !d.late.CompareAndSwap(false, true) {
		return nil
	}
	select {
	case <-d.release:
	case <-d.Link.Done():
		*m = proto.Msg{Type: proto.MsgStop}
	}
	return nil
}

// txJobLink, when set, wraps node i's link of the next newTXJob (after
// txLate on node 1); tests set it and reset it.
var txJobLink func(i int, l transport.Link) transport.Link

// txJob is a job of two nodes (rank 0 on node 0, host ha; rank 1 on node
// 1, host hb) whose agents the master drives over loopback TCP, played by
// this process; node 1's link is a txLate. Node 0 has a PeerTimeout (its
// node_timeout) whose silence counts only once silenceOn is set (Quiet),
// so a test decides when the abort may come.
type txJob struct {
	remote    *RemoteNodes
	meshes    []*transport.Mesh
	nodes     []*testNode
	late      *txLate
	served    [2]chan error
	silenceOn atomic.Bool
	ran       atomic.Bool // node 0 has run a slice (SliceStats.Ran)
	src, dst  []byte

	mu     sync.Mutex
	events []string // node 0's: its OnRun calls ("stop in TX", "stop", "continue") and its Serve's end ("end: ...")
}

func newTXJob(t *testing.T, peerTimeout time.Duration, release chan struct{}) *txJob {
	t.Helper()
	return newTXJobWith(t, peerTimeout, release, nil)
}

// sendStall blocks node 0's data frames to node 1 (endpoint 2) until
// release is closed (or the link closes): a send that blocks because
// node 1 takes nothing, its socket buffer full.
type sendStall struct {
	transport.Link
	release chan struct{}
	blocked atomic.Bool
}

func (s *sendStall) Send(to int, m *proto.Msg) error {
	if to == 2 && m.Type == proto.MsgData {
		s.blocked.Store(true)
		select {
		case <-s.release:
		case <-s.Link.Done():
		}
		s.blocked.Store(false)
	}
	return s.Link.Send(to, m)
}

// newTXJobWith is newTXJob with node 0's link wrapped in stall (nil: not);
// node 0's OnRun then says "stop in send" for a stop while stall blocks.
func newTXJobWith(t *testing.T, peerTimeout time.Duration, release chan struct{}, stall *sendStall) *txJob {
	t.Helper()
	secret := transport.NewSecret()
	j := &txJob{served: [2]chan error{make(chan error, 1), make(chan error, 1)}}
	addrs := make([]string, 3)
	for i := range addrs {
		m, err := transport.Listen("127.0.0.1:0", secret)
		if err != nil {
			t.Fatal(err)
		}
		j.meshes, addrs[i] = append(j.meshes, m), m.Addr()
	}
	// The master's node_timeout is ten minutes: the abort is node 0's.
	j.remote = NewRemoteNodes(j.meshes[0], 2, 10*time.Minute, time.Second)
	nodeOf := []proto.NodeID{0, 1}
	eps := make([]*AgentEndpoint, 2)
	for i := range eps {
		tn := newTestNode(t, proto.NodeID(i), nodeOf, func(to proto.NodeID, m *proto.Msg) error { return eps[i].Send(to, m) })
		tn.attach(t, 0, os.Getpid(), os.Getpid())
		tn.a.hosts = []string{"ha", "hb"}
		var link transport.Link = j.meshes[i+1]
		if i == 0 {
			a := tn.a
			a.peerTimeout = peerTimeout
			a.quiet = func(proto.NodeID) time.Duration {
				if j.silenceOn.Load() {
					return time.Hour
				}
				return 0
			}
			a.onSlice = func(s *SliceStats) {
				if s.Ran {
					j.ran.Store(true)
				}
			}
			a.onRun = func(run bool) {
				ev := "continue"
				if !run {
					ev = "stop"
					if a.pending[0].Load() > 0 { // the slice's data still owed: inside TX's wait
						ev = "stop in TX"
					}
					if stall != nil && stall.blocked.Load() {
						ev = "stop in send"
					}
				}
				j.event(ev)
			}
			if stall != nil {
				stall.Link = link
				link = stall
			}
		} else {
			j.late = &txLate{Link: link, release: release}
			link = j.late
		}
		j.nodes = append(j.nodes, tn)
		// TX's own timeout is 20 s: without a prompt hold node 0 waits
		// that long, then fails before it has stopped its ranks.
		if txJobLink != nil {
			link = txJobLink(i, link)
		}
		eps[i] = NewAgentEndpoint(tn.a, link, txJobTXTimeout)
	}
	errs := make(chan error, 3)
	go func() { errs <- j.meshes[0].Start(0, addrs, j.remote.Handler, j.remote.Direct()) }()
	for i, ep := range eps {
		go func() { errs <- j.meshes[i+1].Start(i+1, addrs, ep.Handler, ep.Direct()) }()
	}
	for range 3 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	for i, ep := range eps {
		go func() {
			err := ep.Serve()
			if i == 0 {
				j.event(fmt.Sprintf("end: %v", err))
			}
			j.served[i] <- err
		}()
	}
	return j
}

// post has rank 1 (node 1) send rank 0 (node 0) a message once node 0 has
// run a slice: the job runs in the gang from then on (alone in it), so it
// runs in the slice that matches the message, in whose TX node 0 waits for
// node 1's data frame.
func (j *txJob) post(t *testing.T) {
	t.Helper()
	waitFor(t, "the job runs", j.ran.Load)
	j.src, j.dst = message(4096), make([]byte, 4096)
	j.nodes[1].rank[0].Post(proto.Descriptor{Kind: proto.KindSend, Rank: 1, Peer: 0, Tag: 7, Req: 0, Seq: 1, Addr: addrOf(j.src), Len: uint64(len(j.src))}, nil)
	j.nodes[0].rank[0].Post(proto.Descriptor{Kind: proto.KindRecv, Rank: 0, Peer: 1, Tag: 7, Req: 0, Seq: 1, Addr: addrOf(j.dst), Len: uint64(len(j.dst))}, nil)
}

// stoppedInTX waits until node 0 has stopped its ranks inside the
// stalled TX, or its agent has ended, and returns node 0's events from that
// stop on. Earlier events are a hold of a slice that was merely slow (the
// first, which dials, on a loaded host), and its release.
func (j *txJob) stoppedInTX(t *testing.T) []string {
	t.Helper()
	var ev []string
	waitFor(t, "node 0 stops its ranks in TX or ends", func() bool {
		ev = j.node0()
		for i, e := range ev {
			if e == "stop in TX" || strings.HasPrefix(e, "end: ") {
				ev = ev[i:]
				return true
			}
		}
		return false
	})
	if ev[0] != "stop in TX" {
		t.Fatalf("node 0's events %q; want its ranks stopped while its TX still waited for node 1's data, before its agent ended", j.node0())
	}
	return ev
}

func (j *txJob) event(ev string) {
	j.mu.Lock()
	j.events = append(j.events, ev)
	j.mu.Unlock()
}

func (j *txJob) node0() []string {
	j.mu.Lock()
	defer j.mu.Unlock()
	return append([]string(nil), j.events...)
}

// close tears the job down: every mesh closed, both agents ended.
func (j *txJob) close() {
	for _, m := range j.meshes {
		m.Close()
	}
	for _, c := range j.served {
		if c != nil {
			<-c
		}
	}
}

// served0 takes node 0's Serve's result, once it has ended.
func (j *txJob) served0(t *testing.T) error {
	t.Helper()
	var err error
	waitFor(t, "node 0's agent ends", func() bool {
		select {
		case err = <-j.served[0]:
			j.served[0] = nil
			return true
		default:
			return false
		}
	})
	return err
}

// A gang's hold reaches an agent that waits inside TX at once, not when its
// wait ends. Node 1 stalls in the TX of the slice that matches its rank's
// send with node 0's receive, so its job's master waits for its report and
// the gang holds the job (100 ms past the strobe); node 0 waits in that TX
// for node 1's data frame. Node 0 stops its ranks while it still waits
// (the data still owed), not when its TX ends (20 s later, its own
// timeout: before the master's frames were read while TX waits, the hold
// was read only then). The hold does not end the slice's data movement:
// when node 1 comes back, its frame arrives into the stopped rank's buffer,
// the slice ends, the job is released and node 0's ranks are continued when
// its turn comes; the message is intact.
// txJobTXTimeout is the agents' TX timeout in the next newTXJob.
var txJobTXTimeout = 20 * time.Second

// A held job's node waiting in TX does not give up at its TX timeout: the
// master ends a held job at its node_timeout, naming the silent host; data
// that comes after the TX timeout but before that completes the slice.
// (Before, node 0 failed with "chunks from other nodes did not arrive",
// which named neither node 1 nor its host.)
func TestGangHeldTXWaitOutlastsTXTimeout(t *testing.T) {
	gang, err := NewGang(GangConfig{Slice: gangSlice, Matrix: strobe.GangConfig{MPL: 2, Quantum: 3}})
	if err != nil {
		t.Fatal(err)
	}
	defer gang.Close()
	const txTimeout = 200 * time.Millisecond
	txJobTXTimeout = txTimeout
	release := make(chan struct{})
	j := newTXJob(t, 10*time.Minute, release)
	txJobTXTimeout = 20 * time.Second
	defer j.close()
	stop := make(chan struct{})
	jl, err := gang.Join("late", MasterConfig{Slice: gangSlice, Nodes: 2}, j.remote, stop)
	if err != nil {
		t.Fatal(err)
	}
	j.post(t)
	j.stoppedInTX(t)
	time.Sleep(3 * txTimeout) // past node 0's TX timeout, held
	if ev := j.node0(); strings.HasPrefix(ev[len(ev)-1], "end: ") {
		t.Fatalf("node 0's events %q: its held TX wait gave up at its TX timeout (%v)", ev, txTimeout)
	}
	close(release) // node 1 transmits: the slice ends, the job is released
	waitFor(t, "the receive completes", func() bool { return j.nodes[0].rank[0].Done(0) })
	if string(j.dst) != string(j.src) {
		t.Errorf("the message arrived damaged")
	}
	close(stop)
	if _, err := jl.Wait(); err != nil {
		t.Fatalf("the job: %v; want its end, nil", err)
	}
	if err := j.served0(t); err != nil {
		t.Fatalf("node 0: %v; want nil (stopped)", err)
	}
}

func TestGangHoldStopsRanksWaitingInTX(t *testing.T) {
	gang, err := NewGang(GangConfig{Slice: gangSlice, Matrix: strobe.GangConfig{MPL: 2, Quantum: 3}})
	if err != nil {
		t.Fatal(err)
	}
	defer gang.Close()
	release := make(chan struct{})
	j := newTXJob(t, 10*time.Minute, release)
	defer j.close()
	stop := make(chan struct{})
	jl, err := gang.Join("late", MasterConfig{Slice: gangSlice, Nodes: 2}, j.remote, stop)
	if err != nil {
		t.Fatal(err)
	}
	j.post(t)
	j.stoppedInTX(t)
	if !jl.Held() {
		t.Errorf("node 0 stopped its ranks in TX while its job is not held")
	}
	if j.nodes[0].rank[0].Done(0) {
		t.Fatalf("the receive completed before node 1 sent its data")
	}

	close(release) // node 1 transmits: the slice ends, the job is released
	waitFor(t, "the released job's node 0 continues its ranks", func() bool {
		ev := j.stoppedInTX(t)
		return ev[len(ev)-1] == "continue"
	})
	if ev := j.stoppedInTX(t); len(ev) != 2 {
		t.Errorf("node 0's events from the stop in TX %q; want [stop in TX, continue]", ev)
	}
	waitFor(t, "the receive completes", func() bool { return j.nodes[0].rank[0].Done(0) })
	if string(j.dst) != string(j.src) {
		t.Errorf("the message arrived damaged")
	}
	close(stop)
	if st, err := jl.Wait(); err != nil || st.Slices < 2 {
		t.Fatalf("the job: %d slices, %v; want its end, nil", st.Slices, err)
	}
	if err := j.served0(t); err != nil {
		t.Fatalf("node 0: %v; want nil (stopped)", err)
	}
}

// A host that stays silent in TX: the answering node stops its ranks at
// the hold, while it waits for the silent node's data, and they stay
// stopped until the job is aborted at node 0's node_timeout (its
// PeerTimeout), which names the silent node and its host. The abort's
// silence counts only from after the stop (Quiet), so the order is the
// test's, not the clock's.
func TestGangHoldInTXThenNodeTimeout(t *testing.T) {
	gang, err := NewGang(GangConfig{Slice: gangSlice, Matrix: strobe.GangConfig{MPL: 2, Quantum: 3}})
	if err != nil {
		t.Fatal(err)
	}
	defer gang.Close()
	j := newTXJob(t, 300*time.Millisecond, nil)
	defer j.close()
	js, err := gang.Join("silent", MasterConfig{Slice: gangSlice, Nodes: 2}, j.remote, nil)
	if err != nil {
		t.Fatal(err)
	}
	j.post(t)
	j.stoppedInTX(t)
	j.silenceOn.Store(true)
	_, err = js.Wait()
	var je *JobError
	if !errors.As(err, &je) || !strings.Contains(err.Error(), "from node 1 (host hb), which sent it no data for 300ms (node_timeout)") {
		t.Fatalf("the job: %v; want it aborted at node_timeout naming node 1 and host hb", err)
	}
	if err := j.served0(t); err == nil {
		t.Fatalf("node 0 ended well; want its TX's failure")
	}
	if ev := j.stoppedInTX(t); len(ev) != 2 || !strings.HasPrefix(ev[1], "end: ") {
		t.Errorf("node 0's events from the stop in TX %q; want [stop in TX, end: ...]: stopped until the abort", ev)
	}
}

// A held job whose node stalls in TX, stopped meanwhile (bcsrun
// interrupted, bcsd stop), ends at once on every node that answers: node
// 0, waiting inside TX for the silent node's data, reads the stop there and
// ends quietly (nil), not at its TX's timeout with an error.
func TestGangStopReachesAgentWaitingInTX(t *testing.T) {
	gang, err := NewGang(GangConfig{Slice: gangSlice, Matrix: strobe.GangConfig{MPL: 2, Quantum: 3}})
	if err != nil {
		t.Fatal(err)
	}
	defer gang.Close()
	j := newTXJob(t, 10*time.Minute, nil)
	defer j.close()
	stop := make(chan struct{})
	js, err := gang.Join("silent", MasterConfig{Slice: gangSlice, Nodes: 2}, j.remote, stop)
	if err != nil {
		t.Fatal(err)
	}
	j.post(t)
	j.stoppedInTX(t)
	close(stop)
	if _, err := js.Wait(); err != nil {
		t.Fatalf("the stopped job: %v; want nil (stopped, not failed)", err)
	}
	if err := j.served0(t); err != nil {
		t.Fatalf("node 0: %v; want nil: the stop read while its TX waited", err)
	}
}

// A gang's hold reaches an agent whose TX is blocked sending data to a
// node that takes nothing (a socket buffer full: sendStall), at once, not
// when the send ends (at its node_timeout, the mesh's send timeout, before
// the watcher read the master's frames during a send and stopped the ranks
// from its own goroutine). Rank 0 (node 0) sends rank 1 (node 1) a
// message; node 0's data frame is held back, so node 0 does not end its TX,
// the master waits for its report and the gang holds the job. Node 0 stops
// its ranks while its send still blocks. Released, the frame goes, the
// slice ends, the job is released and node 0's ranks are continued; the
// message arrives intact.
func TestGangHoldStopsRanksBlockedInSend(t *testing.T) {
	gang, err := NewGang(GangConfig{Slice: gangSlice, Matrix: strobe.GangConfig{MPL: 2, Quantum: 3}})
	if err != nil {
		t.Fatal(err)
	}
	defer gang.Close()
	noStall := make(chan struct{})
	close(noStall) // node 1 transmits at once
	stall := &sendStall{release: make(chan struct{})}
	j := newTXJobWith(t, 10*time.Minute, noStall, stall)
	defer j.close()
	stop := make(chan struct{})
	jl, err := gang.Join("blocked", MasterConfig{Slice: gangSlice, Nodes: 2}, j.remote, stop)
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the job runs", j.ran.Load)
	j.src, j.dst = message(4096), make([]byte, 4096)
	j.nodes[0].rank[0].Post(proto.Descriptor{Kind: proto.KindSend, Rank: 0, Peer: 1, Tag: 7, Req: 0, Seq: 1, Addr: addrOf(j.src), Len: uint64(len(j.src))}, nil)
	j.nodes[1].rank[0].Post(proto.Descriptor{Kind: proto.KindRecv, Rank: 1, Peer: 0, Tag: 7, Req: 0, Seq: 1, Addr: addrOf(j.dst), Len: uint64(len(j.dst))}, nil)
	since := func() []string { // node 0's events from its stop in the blocked send
		ev := j.node0()
		for i, e := range ev {
			if e == "stop in send" || strings.HasPrefix(e, "end: ") {
				return ev[i:]
			}
		}
		return nil
	}
	waitFor(t, "node 0 stops its ranks while its send blocks, or ends", func() bool { return since() != nil })
	if ev := since(); ev[0] != "stop in send" {
		t.Fatalf("node 0's events %q; want its ranks stopped while its send to node 1 blocked", j.node0())
	}
	if !jl.Held() || !stall.blocked.Load() {
		t.Errorf("node 0 stopped its ranks: job held %v, send blocked %v; want both", jl.Held(), stall.blocked.Load())
	}
	close(stall.release) // the frame goes: the slice ends, the job is released
	waitFor(t, "the released job's node 0 continues its ranks", func() bool {
		ev := since()
		return ev[len(ev)-1] == "continue"
	})
	if ev := since(); len(ev) != 2 {
		t.Errorf("node 0's events from the stop in the send %q; want [stop in send, continue]", ev)
	}
	waitFor(t, "the receive completes", func() bool { return j.nodes[1].rank[0].Done(0) })
	if string(j.dst) != string(j.src) {
		t.Errorf("the message arrived damaged")
	}
	close(stop)
	if st, err := jl.Wait(); err != nil || st.Slices < 2 {
		t.Fatalf("the job: %d slices, %v; want its end, nil", st.Slices, err)
	}
	if err := j.served0(t); err != nil {
		t.Fatalf("node 0: %v; want nil (stopped)", err)
	}
}

// BenchmarkSendData is what a data frame's send to another node costs the
// agent beyond the send itself where a watcher can read the master's frames
// (the gate's lock twice; the send timer is armed once per TX: "watched"),
// against the plain send ("plain"). Compare the two sub-benchmarks of one run:
//
//	go test -run NONE -bench SendData -count 5 ./nicthread
func BenchmarkSendData(b *testing.B) {
	g := shm.Geometry{Ranks: 1, RingSlots: 8, ReqMax: 16, InlineMax: 64}
	region, err := shm.Init(make([]byte, g.Size()), g)
	if err != nil {
		b.Fatal(err)
	}
	a := NewAgent(AgentConfig{Node: 0, NodeOf: []proto.NodeID{0, 1}, Sched: core.DefaultSchedConfig, Region: region,
		Send: func(proto.NodeID, *proto.Msg) error { return nil }})
	m := &proto.Msg{Type: proto.MsgData}
	for _, watched := range []bool{false, true} {
		name := "plain"
		if watched {
			name, a.onWait = "watched", func() {}
		}
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				if err := a.sendData(1, m); err != nil {
					b.Fatal(err)
				}
			}
		})
		if a.sendTimer != nil {
			a.endSendWatch()
		}
	}
}
