package nicthread

import (
	"errors"
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
	"github.com/bcsmpi/bcsmpi/transport/transporttest"
)

// tcpJob is a job of two nodes whose agents the master drives over
// loopback TCP (RemoteNodes), node 1's link wrapped by wrap (nil: as is).
type tcpJob struct {
	remote *RemoteNodes
	meshes []*transport.Mesh
	link1  transport.Link
	served chan error
	ended  int // agents' ends taken from served already
	mu     sync.Mutex
	ran    []bool // node 0's SliceStats.Ran, slice by slice
	runs   []bool // node 0's OnRun calls: its ranks continued (true) or stopped
}

func newTCPJob(t *testing.T, nodeTimeout time.Duration, wrap func(transport.Link) transport.Link) *tcpJob {
	t.Helper()
	g := shm.Geometry{Ranks: 1, RingSlots: 8, ReqMax: 16, InlineMax: 64}
	secret := transport.NewSecret()
	j := &tcpJob{served: make(chan error, 2)}
	addrs := make([]string, 3)
	for i := range addrs {
		m, err := transport.Listen("127.0.0.1:0", secret)
		if err != nil {
			t.Fatal(err)
		}
		j.meshes, addrs[i] = append(j.meshes, m), m.Addr()
	}
	j.remote = NewRemoteNodes(j.meshes[0], 2, nodeTimeout, time.Second)
	eps := make([]*AgentEndpoint, 2)
	for i := range eps {
		region, err := shm.Init(make([]byte, g.Size()), g)
		if err != nil {
			t.Fatal(err)
		}
		cfg := AgentConfig{Node: proto.NodeID(i), NodeOf: []proto.NodeID{0, 1}, Sched: core.DefaultSchedConfig, Region: region, DeadlockSlices: 100000}
		var link transport.Link = j.meshes[i+1]
		if i == 0 {
			cfg.OnSlice = func(s *SliceStats) {
				j.mu.Lock()
				j.ran = append(j.ran, s.Ran)
				j.mu.Unlock()
			}
			cfg.OnRun = func(run bool) {
				j.mu.Lock()
				j.runs = append(j.runs, run)
				j.mu.Unlock()
			}
		} else if wrap != nil {
			link = wrap(link)
		}
		if i == 1 {
			j.link1 = link
		}
		eps[i] = NewAgentEndpoint(NewAgent(cfg), link, time.Second)
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
	for _, ep := range eps {
		go func() { j.served <- ep.Serve() }()
	}
	return j
}

// close tears the job down: every mesh closed, both agents ended.
func (j *tcpJob) close() {
	for _, m := range j.meshes {
		m.Close()
	}
	for range 2 - j.ended {
		<-j.served
	}
}

// waitFor waits until cond holds; the minute is a hang guard, not a
// threshold.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(time.Minute); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("%s: not within a minute", what)
		}
	}
}

// runsOn waits until j has run in n slices more than it had.
func (j *tcpJob) runsOn(t *testing.T, n int) {
	t.Helper()
	n0, _ := j.slicesRun()
	waitFor(t, "the job runs on", func() bool { m, _ := j.slicesRun(); return m >= n0+n })
}

// node0 returns node 0's OnRun calls so far.
func (j *tcpJob) node0() []bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	return append([]bool(nil), j.runs...)
}

// stoppedAfterRunning reports whether node 0 ran in a slice (an agent
// starts with its ranks running) and its last OnRun call stopped them.
func (j *tcpJob) stoppedAfterRunning() bool {
	n, _ := j.slicesRun()
	runs := j.node0()
	return n > 0 && len(runs) > 0 && !runs[len(runs)-1]
}

func (j *tcpJob) slicesRun() (n, of int) {
	j.mu.Lock()
	defer j.mu.Unlock()
	return countTrue(j.ran), len(j.ran)
}

// A host that goes silent (its agent stops answering, no connection
// error: a cut link) stalls only its own job. The other job of the gang,
// also over TCP, runs all of its slices to its end while the silent job's
// master still waits for the silent node's report (its node_timeout is
// ten minutes); the silent job is held meanwhile, so the other job runs in
// every slice after the hold. Closing the silent job's master endpoint
// (its teardown) ends its slice with the node's loss, and it leaves alone.
func TestGangSilentHostStallsOnlyItsJob(t *testing.T) {
	gang, err := NewGang(GangConfig{Slice: gangSlice, Matrix: strobe.GangConfig{MPL: 2, Quantum: 3}})
	if err != nil {
		t.Fatal(err)
	}
	defer gang.Close()
	silent := newTCPJob(t, 10*time.Minute, func(l transport.Link) transport.Link { return transporttest.Stall(l, 20) })
	defer silent.close()
	ok := newTCPJob(t, time.Minute, nil)
	defer ok.close()
	okStop := make(chan struct{})
	js, err := gang.Join("silent", MasterConfig{Slice: gangSlice, Nodes: 2}, silent.remote, nil)
	if err != nil {
		t.Fatal(err)
	}
	jo, err := gang.Join("ok", MasterConfig{Slice: gangSlice, Nodes: 2}, ok.remote, okStop)
	if err != nil {
		t.Fatal(err)
	}
	// Once the silent node has stalled, the other job runs in 200 slices
	// more, and in every slice once the silent job is held.
	waitFor(t, "the silent node stalls", func() bool { return transporttest.Stalled(silent.link1) })
	ok.runsOn(t, 200)
	ok.mu.Lock()
	last := ok.ran[len(ok.ran)-100:]
	ok.mu.Unlock()
	if n := countTrue(last); n != len(last) {
		t.Errorf("the other job ran in %d of its last %d slices; want all, the silent job held", n, len(last))
	}
	select {
	case <-js.Done():
		t.Fatalf("the silent job left before its node's timeout or teardown")
	default:
	}
	close(okStop)
	if st, err := jo.Wait(); err != nil || st.Slices == 0 {
		t.Fatalf("the other job: %d slices, %v; want its end, nil", st.Slices, err)
	}
	select {
	case <-js.Done():
		t.Fatalf("the silent job left before its node's timeout or teardown")
	default:
	}
	silent.meshes[0].Close() // the master's endpoint: its wait for node 1 ends
	_, err = js.Wait()
	var je *JobError
	if !errors.As(err, &je) || je.Node != 1 || !strings.Contains(err.Error(), "while the master waited for its DEM report") {
		t.Fatalf("the silent job: %v; want node 1 lost while the master waited for its DEM report", err)
	}
}

// A silent node's job is aborted at its node_timeout, naming the node and
// what the master waited for, while the other job goes on: it runs more
// slices after the abort and ends well. The node stalls from the job's
// first slice and the node_timeout is 2 s: node 0's healthy reports, which
// the same timeout covers, would need a pause of seconds (not a GC's or a
// busy machine's) to make the abort name the wrong node.
func TestGangSilentHostAbortsItsJobAtNodeTimeout(t *testing.T) {
	gang, err := NewGang(GangConfig{Slice: gangSlice, Matrix: strobe.GangConfig{MPL: 2, Quantum: 3}})
	if err != nil {
		t.Fatal(err)
	}
	defer gang.Close()
	const timeout = 2 * time.Second
	silent := newTCPJob(t, timeout, func(l transport.Link) transport.Link { return transporttest.Stall(l, 1) })
	defer silent.close()
	ok := newTCPJob(t, time.Minute, nil)
	defer ok.close()
	okStop := make(chan struct{})
	js, err := gang.Join("silent", MasterConfig{Slice: gangSlice, Nodes: 2}, silent.remote, nil)
	if err != nil {
		t.Fatal(err)
	}
	jo, err := gang.Join("ok", MasterConfig{Slice: gangSlice, Nodes: 2}, ok.remote, okStop)
	if err != nil {
		t.Fatal(err)
	}
	_, err = js.Wait()
	var je *JobError
	if !errors.As(err, &je) || je.Node != 1 || !strings.Contains(err.Error(), "stopped answering: no DEM report for slice ") || !strings.Contains(err.Error(), "within 2s (node_timeout)") {
		t.Fatalf("the silent job: %v; want node 1 stopped answering within its node_timeout", err)
	}
	ok.runsOn(t, 50)
	close(okStop)
	if _, err := jo.Wait(); err != nil {
		t.Fatalf("the other job: %v", err)
	}
}

// A held job whose stop is closed ends at once, as stopped, not at its
// silent node's timeout (ten minutes here): the gang cancels its slice (the
// master's wait for node 1's report is interrupted), it leaves with no
// error, and its healthy node gets the stop and ends quietly. The other job
// runs on and ends well.
func TestGangHeldJobStopsAtOnce(t *testing.T) {
	gang, err := NewGang(GangConfig{Slice: gangSlice, Matrix: strobe.GangConfig{MPL: 2, Quantum: 3}})
	if err != nil {
		t.Fatal(err)
	}
	defer gang.Close()
	silent := newTCPJob(t, 10*time.Minute, func(l transport.Link) transport.Link { return transporttest.Stall(l, 1) })
	defer silent.close()
	ok := newTCPJob(t, time.Minute, nil)
	defer ok.close()
	silentStop, okStop := make(chan struct{}), make(chan struct{})
	js, err := gang.Join("silent", MasterConfig{Slice: gangSlice, Nodes: 2}, silent.remote, silentStop)
	if err != nil {
		t.Fatal(err)
	}
	jo, err := gang.Join("ok", MasterConfig{Slice: gangSlice, Nodes: 2}, ok.remote, okStop)
	if err != nil {
		t.Fatal(err)
	}
	// Hang guards, not thresholds: the silent job's node_timeout is ten
	// minutes, so an end within one minute is the stop's.
	waitFor(t, "the silent job is held", func() bool {
		for _, s := range gang.Status() {
			if s.Name == "silent" && s.Held {
				if s.Running {
					t.Errorf("the held job is listed as running")
				}
				return true
			}
		}
		return false
	})
	if !js.Held() {
		t.Fatal("Held is false for the job Status lists as held")
	}
	close(silentStop)
	waitFor(t, "the held job leaves on its stop", func() bool {
		select {
		case <-js.Done():
			return true
		default:
			return false
		}
	})
	if _, err := js.Wait(); err != nil {
		t.Fatalf("the stopped job: %v; want nil (stopped, not failed)", err)
	}
	// Node 0's agent got the stop: it ends with nil; node 1 is still stalled.
	var served error
	waitFor(t, "the healthy node ends", func() bool {
		select {
		case served = <-silent.served:
			silent.ended++
			return true
		default:
			return false
		}
	})
	if served != nil {
		t.Fatalf("the stopped job's healthy node: %v; want nil (its stop arrived)", served)
	}
	ok.runsOn(t, 50)
	close(okStop)
	if _, err := jo.Wait(); err != nil {
		t.Fatalf("the other job: %v", err)
	}
}

// Closing the gang while a job is held ends it at once with ErrGangClosed,
// not at its silent node's timeout.
func TestGangCloseCancelsHeldJob(t *testing.T) {
	gang, err := NewGang(GangConfig{Slice: gangSlice, Matrix: strobe.GangConfig{MPL: 2, Quantum: 3}})
	if err != nil {
		t.Fatal(err)
	}
	silent := newTCPJob(t, 10*time.Minute, func(l transport.Link) transport.Link { return transporttest.Stall(l, 1) })
	defer silent.close()
	js, err := gang.Join("silent", MasterConfig{Slice: gangSlice, Nodes: 2}, silent.remote, nil)
	if err != nil {
		t.Fatal(err)
	}
	for end := time.Now().Add(time.Minute); !js.Held(); time.Sleep(time.Millisecond) { // a hang guard
		if time.Now().After(end) {
			t.Fatal("the silent job is not held within a minute")
		}
	}
	closed := make(chan struct{})
	go func() { gang.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(time.Minute): // a hang guard: the node_timeout is ten minutes
		t.Fatal("Gang.Close waited for the held job's node_timeout")
	}
	if _, err := js.Wait(); !errors.Is(err, ErrGangClosed) {
		t.Fatalf("the held job: %v; want ErrGangClosed", err)
	}
}

// delayLink withholds from its agent the master's first frame of a slice
// >= at until release is closed (or the mesh is): a host that goes silent
// and comes back.
type delayLink struct {
	transport.Link
	at      proto.SliceID
	release chan struct{}
	delayed atomic.Bool
}

func (d *delayLink) Recv(from int, m *proto.Msg, timeout time.Duration) error {
	if err := d.Link.Recv(from, m, timeout); err != nil {
		return err
	}
	if from == 0 && m.Slice >= d.at && d.delayed.CompareAndSwap(false, true) {
		select {
		case <-d.release:
		case <-d.Link.Done():
		}
	}
	return nil
}

// A held job's ranks stop on the nodes that still answer, and stay stopped
// while the other job runs; when the silent node comes back, the job is
// released and its ranks are continued when its turn comes. The late job
// runs alone at first (its node 0's ranks continued), then node 1 holds
// back the master's DEM of slice 20: the job is held, and node 0, which has
// reported, stops its ranks (MsgHold) although the last decision it got
// was to run (without the hold it would never have been told to stop). The other job then runs in every slice; node 0's ranks stay
// stopped until node 1 answers again and the late job's turn comes.
func TestGangHeldJobsRanksAreStopped(t *testing.T) {
	gang, err := NewGang(GangConfig{Slice: gangSlice, Matrix: strobe.GangConfig{MPL: 2, Quantum: 3}})
	if err != nil {
		t.Fatal(err)
	}
	defer gang.Close()
	release := make(chan struct{})
	late := newTCPJob(t, 10*time.Minute, func(l transport.Link) transport.Link { return &delayLink{Link: l, at: 20, release: release} })
	defer late.close()
	lateStop, okStop := make(chan struct{}), make(chan struct{})
	jl, err := gang.Join("late", MasterConfig{Slice: gangSlice, Nodes: 2}, late.remote, lateStop)
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the late job is held", jl.Held)
	// Held until release is closed: node 0 must stop its ranks meanwhile.
	waitFor(t, "the held job's node 0 stops its ranks", late.stoppedAfterRunning)

	ok := newTCPJob(t, time.Minute, nil)
	defer ok.close()
	jo, err := gang.Join("ok", MasterConfig{Slice: gangSlice, Nodes: 2}, ok.remote, okStop)
	if err != nil {
		t.Fatal(err)
	}
	ok.runsOn(t, 100)
	if n, of := ok.slicesRun(); n != of {
		t.Errorf("the other job ran in %d of its %d slices; want all, the late job held", n, of)
	}
	if !jl.Held() || !late.stoppedAfterRunning() {
		t.Fatalf("while the other job ran: late job held %v, its node 0's OnRun calls %v; want held, stopped last", jl.Held(), late.node0())
	}

	close(release) // node 1 answers again: the late job is released and takes turns
	waitFor(t, "the released job's node 0 continues its ranks", func() bool {
		runs := late.node0()
		return !jl.Held() && len(runs) > 0 && runs[len(runs)-1]
	})
	late.runsOn(t, 10)
	ok.runsOn(t, 10)
	close(lateStop)
	close(okStop)
	for _, j := range []*GangJob{jl, jo} {
		if st, err := j.Wait(); err != nil || st.Slices == 0 {
			t.Errorf("job %s: %d slices, %v; want its end, nil", j.Name, st.Slices, err)
		}
	}
}

// A hold names the slice it holds the job in (MsgHold's Slice): that
// slice's own DEM, which the master broadcast while the hold was sent and
// which says the job runs, may reach a node after the hold; the node then
// keeps its ranks stopped through that DEM, while its SliceStats.Ran
// follows the DEM's decision, as on every other node. The frames are sent
// here in the order that race gives on node 0: slice 2's hold, then slice
// 2's DEM (run); slice 3's DEM (run) continues the ranks.
func TestHoldOutlastsItsSlicesDEM(t *testing.T) {
	j := newTCPJob(t, time.Minute, nil)
	defer j.close()
	arrive := func(proto.NodeID) error { return nil }
	slice := func(k proto.SliceID) {
		t.Helper()
		all, status, err := j.remote.DEM(k, arrive, func() {})
		if err == nil {
			err = j.remote.MSM(k, all, status, arrive, func() {})
		}
		if err == nil {
			err = j.remote.TX(k, arrive, func() {})
		}
		if err != nil {
			t.Fatalf("slice %d: %v", k, err)
		}
	}
	slice(1)
	j.remote.Hold(2) // the next DEM waits until its frames are sent: node 0 reads the hold first
	slice(2)
	if runs := j.node0(); len(runs) != 1 || runs[0] {
		t.Fatalf("after slice 2 (held, its DEM saying run): node 0's OnRun calls %v, want [false] (stopped through the held slice's DEM)", runs)
	}
	slice(3)
	if runs := j.node0(); len(runs) != 2 || !runs[1] {
		t.Fatalf("after slice 3 (its DEM saying run): node 0's OnRun calls %v, want [false true]", runs)
	}
	j.mu.Lock()
	ran := append([]bool(nil), j.ran...)
	j.mu.Unlock()
	if len(ran) != 3 || !ran[0] || !ran[1] || !ran[2] {
		t.Errorf("node 0's SliceStats.Ran %v, want [true true true] (the DEMs' decisions, whatever the hold)", ran)
	}
	j.remote.Stop(0, "test over")
}
