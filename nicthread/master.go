package nicthread

import (
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/bcsmpi/bcsmpi/internal/clock"
	"github.com/bcsmpi/bcsmpi/internal/proto"
	"github.com/bcsmpi/bcsmpi/internal/unix"
	"github.com/bcsmpi/bcsmpi/strobe"
	"github.com/bcsmpi/bcsmpi/transport"
)

// Nodes is how the master drives the agents through one slice. Each method
// calls arrive(node) as each node reports the microphase finished, and
// retry() each time it finds the microphase not yet finished everywhere.
type Nodes interface {
	DEM(k proto.SliceID, arrive func(proto.NodeID) error, retry func()) ([]proto.Descriptor, []uint8, error)
	MSM(k proto.SliceID, all []proto.Descriptor, status []uint8, arrive func(proto.NodeID) error, retry func()) error
	TX(k proto.SliceID, arrive func(proto.NodeID) error, retry func()) error
	Stop(code int32, why string)
}

// MasterConfig configures the strobe driver.
type MasterConfig struct {
	Slice     time.Duration // time slice
	Nodes     int
	Spin      time.Duration // upper bound of the busy-wait before each strobe (see strobe.SpinEstimator)
	FIFO      bool          // try SCHED_FIFO for the strobe thread
	TXTimeout time.Duration // bound on one slice's transmission
	OnSlice   func(*strobe.SliceRecord)
	OnDEM     func([]proto.Descriptor) // every slice's exchanged descriptors (communication matrix)
	MaxSlices uint64                   // stop after this many slices (0: no limit); for tests and benches
}

// MasterStats summarises a run of the master.
type MasterStats struct {
	Slices  uint64
	Skipped uint64
	FIFO    bool // SCHED_FIFO was granted
	// FirstSlice is when the first slice ended on every node (the wall
	// clock, read once); zero if none did.
	FirstSlice time.Time
	// Late is the sum, LateMax the largest, of the strobes' lateness (the
	// strobe's time minus its slice's due time, SliceRecord.Late): what a
	// smaller strobe_spin costs in accuracy.
	Late, LateMax time.Duration
}

// RunMaster strobes until stop is closed, then tells the nodes to stop. It
// returns the first error a node reported, which aborts the job.
func RunMaster(cfg MasterConfig, nodes Nodes, stop <-chan struct{}) (MasterStats, error) {
	var st MasterStats
	// Lock the strobe thread (and make it SCHED_FIFO) only when the nodes are
	// driven by direct calls. With a transport every frame the master waits
	// for arrives through Go's netpoller, and waking a goroutine locked to its
	// thread costs extra thread hand-offs per frame (measured with 2 logical
	// nodes, idle: 1477 → 1910 of 2000 slices on time, 0.96 → 0.39 CPU-s/s).
	_, direct := nodes.(*LocalNodes)
	if direct {
		defer unix.LockThread()()
	}
	if cfg.FIFO && direct {
		if st.FIFO = unix.SetFIFO(10) == nil; st.FIFO {
			defer unix.SetNormal() // runs before the thread is unlocked
		}
	}
	base := unix.Now()
	now := func() clock.Time { return clock.Time(unix.Now() - base) }
	m := strobe.NewMaster(strobe.Config{Slice: cfg.Slice, Nodes: cfg.Nodes}, now()+clock.Time(cfg.Slice))
	spin := strobe.NewSpinEstimator(cfg.Spin)
	var k proto.SliceID
	var phase strobe.Phase
	arrive := func(n proto.NodeID) error { // made once for the run: no allocation per slice
		_, err := m.Arrive(n, phase, k, now())
		return err
	}
	retry := m.Retry
	var rec strobe.SliceRecord
	for {
		select {
		case <-stop:
			nodes.Stop(0, "job finished")
			st.Skipped = m.Skipped()
			return st, nil
		default:
		}
		_, due := m.Due()
		if wake := due - clock.Time(spin.Spin()); now() < wake {
			if direct && wake-now() < clock.Time(5*time.Millisecond) {
				unix.SleepUntilHoldingP(base + int64(wake))
			} else {
				unix.SleepUntil(base + int64(wake))
			}
			spin.Observe(time.Duration(now() - wake))
		}
		for now() < due {
		}
		k = m.Strobe(now())
		late := m.Record().Late
		st.Late += late
		st.LateMax = max(st.LateMax, late)
		phase = strobe.PhaseDEM
		all, status, err := nodes.DEM(k, arrive, retry)
		if err == nil && cfg.OnDEM != nil {
			cfg.OnDEM(all)
		}
		if err == nil {
			phase = strobe.PhaseMSM
			err = nodes.MSM(k, all, status, arrive, retry)
		}
		if err == nil {
			phase = strobe.PhaseTX
			err = nodes.TX(k, arrive, retry)
		}
		if err != nil {
			nodes.Stop(1, err.Error())
			st.Skipped = m.Skipped()
			return st, err
		}
		st.Slices++
		if st.Slices == 1 {
			st.FirstSlice = time.Now()
		}
		if cfg.OnSlice != nil {
			rec = m.Record()
			cfg.OnSlice(&rec)
		}
		if cfg.MaxSlices > 0 && st.Slices >= cfg.MaxSlices {
			nodes.Stop(0, "slice limit")
			st.Skipped = m.Skipped()
			return st, nil
		}
	}
}

// LocalNodes drives agents living in the master's own thread by direct calls:
// the embedded single-node default has no transport and no hand-off.
type LocalNodes struct {
	Agents    []*Agent
	TXTimeout time.Duration
}

func (l *LocalNodes) DEM(k proto.SliceID, arrive func(proto.NodeID) error, _ func()) ([]proto.Descriptor, []uint8, error) {
	var all []proto.Descriptor
	var status []uint8
	for _, a := range l.Agents {
		b, err := a.DEM(k)
		if err != nil {
			return nil, nil, err
		}
		if len(l.Agents) == 1 {
			all, status = b, a.Status()
		} else {
			all = append(all, b...)
			status = append(status, a.Status()...)
		}
		if err := arrive(a.Node()); err != nil {
			return nil, nil, err
		}
	}
	return all, status, nil
}

func (l *LocalNodes) MSM(k proto.SliceID, all []proto.Descriptor, status []uint8, arrive func(proto.NodeID) error, _ func()) error {
	for _, a := range l.Agents {
		if err := a.MSM(k, all, status); err != nil {
			return err
		}
		if err := arrive(a.Node()); err != nil {
			return err
		}
	}
	return nil
}

func (l *LocalNodes) TX(k proto.SliceID, arrive func(proto.NodeID) error, _ func()) error {
	for _, a := range l.Agents {
		if err := a.TX(k, l.TXTimeout); err != nil {
			return err
		}
		if err := arrive(a.Node()); err != nil {
			return err
		}
	}
	return nil
}

func (l *LocalNodes) Stop(int32, string) {}

// RemoteNodes drives agents over a transport mesh in which the master is
// endpoint 0 and node n is endpoint n+1. The master reads every agent's
// control frames directly (mesh.Start with every peer marked direct).
type RemoteNodes struct {
	mesh    *transport.Mesh
	n       int
	msg     proto.Msg
	batches [][]proto.Descriptor
	status  [][]uint8
	all     []proto.Descriptor
	allSt   []uint8
	timeout time.Duration // a node's DEM and MSM report
	txTime  time.Duration // a node's transmission, on top of timeout
	stopped atomic.Bool
	cancel  atomic.Bool // Cancel was called: the slice under way ends with ErrSliceCancelled
	gate    int32       // MsgDEM's Code: proto.DEMStopped while the gang runs another job (Gate)
	holdMu  sync.Mutex
	holding chan struct{} // closed once the last Hold's frames are sent (or failed); nil before any Hold
}

// NewRemoteNodes wraps an endpoint-0 mesh; start it with Handler and Direct.
// A node that does not report DEM or MSM within nodeTimeout (TX within
// nodeTimeout+txTimeout) has stopped answering, and the job is aborted.
func NewRemoteNodes(mesh *transport.Mesh, nodes int, nodeTimeout, txTimeout time.Duration) *RemoteNodes {
	return &RemoteNodes{mesh: mesh, n: nodes, batches: make([][]proto.Descriptor, nodes), status: make([][]uint8, nodes), timeout: nodeTimeout, txTime: txTimeout}
}

// Direct marks every agent endpoint as read directly by the master.
func (r *RemoteNodes) Direct() []bool {
	d := make([]bool, r.n+1)
	for i := 1; i <= r.n; i++ {
		d[i] = true
	}
	return d
}

// Handler refuses frames on non-direct connections (there are none).
func (r *RemoteNodes) Handler(from int, m *proto.Msg) error {
	return fmt.Errorf("master: unexpected %s frame from endpoint %d", m.Type, from)
}

func (r *RemoteNodes) broadcast(m *proto.Msg) error {
	for n := 0; n < r.n; n++ {
		if err := r.mesh.Send(n+1, m); err != nil {
			return err
		}
	}
	return nil
}

// stepName names, for messages, the slice step that a done report of type t
// ends: DEM, MSM or TX (internal/core/doc.go's vocabulary).
func stepName(t proto.MsgType) string {
	switch t {
	case proto.MsgDEMDone:
		return "DEM"
	case proto.MsgMSMDone:
		return "MSM"
	case proto.MsgTXDone:
		return "TX"
	}
	return t.String()
}

// collect reads one frame of type t for slice k from every node, in node
// order; a node whose frame is not already buffered counts as a sync retry.
func (r *RemoteNodes) collect(t proto.MsgType, k proto.SliceID, arrive func(proto.NodeID) error, retry func(), each func(*proto.Msg)) error {
	for n := 0; n < r.n; n++ {
		if !r.mesh.Ready(n + 1) {
			retry()
		}
		m := &r.msg
		limit := r.timeout
		if t == proto.MsgTXDone {
			limit += r.txTime
		}
		if err := r.mesh.Recv(n+1, m, limit); err != nil {
			if r.cancel.Load() {
				return ErrSliceCancelled
			}
			var ne net.Error
			if errors.Is(err, syscall.ETIMEDOUT) {
				// The kernel gave up on the connection: the node's host
				// answered no keepalive probe (transport.Mesh.SetDirectKeepAlive).
				return &JobError{Node: proto.NodeID(n), Rank: -1, Why: fmt.Sprintf("stopped answering: its host answered nothing, keepalive probes included, for %v (node_timeout) while the master waited for its %s report for slice %d: the link to it is down", r.timeout, stepName(t), k)}
			}
			if errors.As(err, &ne) && ne.Timeout() {
				return &JobError{Node: proto.NodeID(n), Rank: -1, Why: fmt.Sprintf("stopped answering: no %s report for slice %d within %v (node_timeout)", stepName(t), k, limit)}
			}
			return &JobError{Node: proto.NodeID(n), Rank: -1, Why: fmt.Sprintf("lost in slice %d while the master waited for its %s report: %v", k, stepName(t), err)}
		}
		if m.Type == proto.MsgFail {
			return &JobError{Node: proto.NodeID(n), Rank: proto.Rank(m.Code), Why: m.Text}
		}
		if m.Type != t || m.Slice != k || m.Node != proto.NodeID(n) {
			return &JobError{Node: proto.NodeID(n), Rank: -1, Why: fmt.Sprintf("sent %s of slice %d (as node %d) while the master waited for %s of slice %d", m.Type, m.Slice, m.Node, t, k)}
		}
		if err := arrive(proto.NodeID(n)); err != nil {
			return err
		}
		if each != nil {
			each(m)
		}
	}
	return nil
}

func (r *RemoteNodes) DEM(k proto.SliceID, arrive func(proto.NodeID) error, retry func()) ([]proto.Descriptor, []uint8, error) {
	r.holdMu.Lock()
	held := r.holding
	r.holdMu.Unlock()
	if held != nil {
		<-held // a hold's MsgHold reaches each node before this DEM, whose decision follows it
	}
	if err := r.broadcast(&proto.Msg{Type: proto.MsgDEM, Slice: k, Code: r.gate}); err != nil {
		return nil, nil, err
	}
	err := r.collect(proto.MsgDEMDone, k, arrive, retry, func(m *proto.Msg) {
		r.batches[m.Node] = append(r.batches[m.Node][:0], m.Descs...) // m is reused for the next node
		r.status[m.Node] = append(r.status[m.Node][:0], m.Payload...) // the payload is the reader's buffer
	})
	if err != nil {
		return nil, nil, err
	}
	r.all, r.allSt = r.all[:0], r.allSt[:0]
	for i, b := range r.batches {
		r.all = append(r.all, b...)
		r.allSt = append(r.allSt, r.status[i]...)
	}
	return r.all, r.allSt, nil
}

func (r *RemoteNodes) MSM(k proto.SliceID, all []proto.Descriptor, status []uint8, arrive func(proto.NodeID) error, retry func()) error {
	if err := r.broadcast(&proto.Msg{Type: proto.MsgMSM, Slice: k, Descs: all, Payload: status}); err != nil {
		return err
	}
	return r.collect(proto.MsgMSMDone, k, arrive, retry, nil)
}

func (r *RemoteNodes) TX(k proto.SliceID, arrive func(proto.NodeID) error, retry func()) error {
	if err := r.broadcast(&proto.Msg{Type: proto.MsgTX, Slice: k}); err != nil {
		return err
	}
	return r.collect(proto.MsgTXDone, k, arrive, retry, nil)
}

// Cancel cuts the slice under way short (Canceller): the master's wait
// for its nodes' reports ends at once (transport.Mesh.Interrupt), and that
// DEM, MSM or TX, and every later one, returns ErrSliceCancelled. Stop
// still reaches the nodes that read it. Safe from any goroutine.
func (r *RemoteNodes) Cancel() {
	r.cancel.Store(true)
	r.mesh.Interrupt()
}

// Hold tells every node, outside the slice's exchange, that the gang holds
// the job (Holder) in slice k, the slice under way: each agent stops its
// ranks when it reads the frame, between the slice's steps, and keeps them
// stopped through slice k's DEM and until a later DEM says the job runs.
// The frame names the slice (MsgHold's Slice) because slice k's own DEM,
// broadcast meanwhile, may reach a node after the hold and still say the
// job runs: that node keeps its ranks stopped (its SliceStats.Ran follows
// the DEM, as on every other node, so that deadlock detection counts the
// same slices everywhere). The frames are sent from goroutines, one per
// node, so that a node that takes nothing (the silent one) delays no other
// node's frame and not the caller; the next DEM waits for them, so that
// its decision comes after the hold on every connection. Safe from any
// goroutine, while the slice is under way.
func (r *RemoteNodes) Hold(k proto.SliceID) {
	done := make(chan struct{})
	r.holdMu.Lock()
	prev := r.holding
	r.holding = done
	r.holdMu.Unlock()
	var wg sync.WaitGroup
	for n := 0; n < r.n; n++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if prev != nil {
				<-prev // frames of successive holds in order
			}
			r.mesh.Send(n+1, &proto.Msg{Type: proto.MsgHold, Slice: k}) // an error: the node is lost, which its report's wait says
		}()
	}
	go func() { wg.Wait(); close(done) }()
}

func (r *RemoteNodes) Stop(code int32, why string) {
	if r.stopped.CompareAndSwap(false, true) {
		r.broadcast(&proto.Msg{Type: proto.MsgStop, Code: code, Text: why})
	}
}

// AgentEndpoint runs an agent behind a transport mesh (endpoint node+1). It
// reads the master's frames directly; other agents' data frames are written
// into receivers by the mesh's reader goroutines. It sends and reads through
// Link, a *transport.Mesh in production (tests may wrap it: the endpoint has
// no fault logic of its own).
type AgentEndpoint struct {
	A       *Agent
	Link    transport.Link
	Timeout time.Duration
	in, out proto.Msg // Serve's frames from and to the master

	// The watcher: while TX waits (Agent.await, after waitWatch), a
	// goroutine reads the master's frames in Serve's stead. A hold or a
	// stop it passes to the agent at once (holdSoon, stopSoon); the first
	// frame that is not a hold, or its error, it hands to Serve (watched)
	// and ends. Serve reads no frame itself while one runs (watching).
	watching bool
	watched  chan error
	win      proto.Msg // the watcher's frame; Serve swaps it with in
}

// NewAgentEndpoint wraps an agent; start the link's mesh with Handler and Direct.
func NewAgentEndpoint(a *Agent, link transport.Link, timeout time.Duration) *AgentEndpoint {
	return &AgentEndpoint{A: a, Link: link, Timeout: timeout}
}

// Direct marks the master (endpoint 0) as read directly.
func (e *AgentEndpoint) Direct() []bool { return []bool{true} }

// Handler writes data frames straight into receivers.
func (e *AgentEndpoint) Handler(from int, m *proto.Msg) error {
	if m.Type != proto.MsgData {
		return fmt.Errorf("agent %d: unexpected %s frame from endpoint %d", e.A.Node(), m.Type, from)
	}
	return e.A.OnData(proto.NodeID(from-1), m)
}

// Send is the agent's data path to another node.
func (e *AgentEndpoint) Send(node proto.NodeID, m *proto.Msg) error {
	return e.Link.Send(int(node)+1, m)
}

// Connect starts connecting the data path to another node, if it is not
// connected yet (AgentConfig.Connect); it returns at once.
func (e *AgentEndpoint) Connect(node proto.NodeID) { e.Link.Connect(int(node) + 1) }

// recv reads the master's next frame into e.in: from the watcher if one
// runs (it read the frame, or is reading it), else from the link. A hold
// the watcher reads while Serve waits here is applied at once (the ranks
// stop), and the wait goes on; one read before the frame it hands over is
// applied first, so that the frame (the next slice's DEM) is handled after
// it, in the master's order.
func (e *AgentEndpoint) recv() error {
	if !e.watching {
		return e.Link.Recv(0, &e.in, MasterSilence)
	}
	t := time.NewTimer(MasterSilence)
	defer t.Stop()
	for wait := true; wait; {
		select {
		case err := <-e.watched:
			e.watching = false
			if err != nil {
				return err
			}
			wait = false
		case <-e.A.interject:
			e.A.interjected() // a hold; a stop (errMasterStopped) comes as the watcher's frame next
		case <-t.C:
			// The watcher still reads (until the link closes); Serve ends.
			return fmt.Errorf("agent %d: the master sent nothing for %v", e.A.Node(), MasterSilence)
		}
	}
	e.in, e.win = e.win, e.in
	e.A.interjected() // errMasterStopped only with the stop, which is e.in: Serve ends on it
	return nil
}

// watch starts the watcher (Agent.onWait: TX has waited waitWatch, or a
// send has blocked that long). From Serve's goroutine (await), or from the
// agent's send timer under the gate's lock while TX is parked in a send
// (sendWatch): Serve goes on from the send only after taking that lock, so
// it sees watching either way.
func (e *AgentEndpoint) watch() {
	if e.watching {
		return
	}
	if e.watched == nil {
		e.watched = make(chan error, 1)
	}
	e.watching = true
	go func() {
		for {
			// No bound of its own: Serve bounds its wait for the
			// frame (recv) once TX is over; the link's closing ends it.
			if err := e.Link.Recv(0, &e.win, watchForever); err != nil {
				e.watched <- err
				return
			}
			switch e.win.Type {
			case proto.MsgHold:
				e.A.holdRead(e.win.Slice)
				continue
			case proto.MsgStop:
				e.A.stopSoon()
			}
			e.watched <- nil
			return
		}
	}()
}

// watchForever is the watcher's read timeout: none in effect (the job's
// teardown closes the link).
const watchForever time.Duration = 1 << 62

// MasterSilence is how long an agent waits for the master's next frame
// before it gives up on the job.
const MasterSilence = time.Minute

// Serve follows the master until it says stop; it returns nil on a normal
// stop, the job error otherwise (after reporting it to the master).
func (e *AgentEndpoint) Serve() error {
	me := e.A.Node()
	// The frames live in the endpoint: passed through the Link interface, a
	// frame on the stack would escape, one allocation per reply.
	reply := func(m proto.Msg) error { e.out = m; return e.Link.Send(0, &e.out) }
	m := &e.in
	e.A.onWait = e.watch
	for {
		if err := e.recv(); err != nil {
			return err
		}
		var err error
		switch m.Type {
		case proto.MsgDEM:
			e.A.gateAt(m.Slice, m.Code != proto.DEMStopped)
			var b []proto.Descriptor
			if b, err = e.A.DEM(m.Slice); err == nil {
				err = reply(proto.Msg{Type: proto.MsgDEMDone, Slice: m.Slice, Node: me, Descs: b, Payload: e.A.Status()})
			}
		case proto.MsgMSM:
			if err = e.A.MSM(m.Slice, m.Descs, m.Payload); err == nil {
				err = reply(proto.Msg{Type: proto.MsgMSMDone, Slice: m.Slice, Node: me})
			}
		case proto.MsgTX:
			err = e.A.TX(m.Slice, e.Timeout)
			if err == nil {
				err = e.A.interjected() // a hold (or the stop) the watcher read after TX's last wait
			}
			if errors.Is(err, errMasterStopped) {
				return nil // the watcher read the stop: the job is over
			}
			if err == nil {
				err = reply(proto.Msg{Type: proto.MsgTXDone, Slice: m.Slice, Node: me})
			}
		case proto.MsgHold:
			// The gang holds the job (a node of it is late) in slice
			// m.Slice: its ranks stop through that slice's DEM and until a
			// DEM says the job runs (RemoteNodes.Hold).
			e.A.hold(m.Slice)
		case proto.MsgStop:
			return nil
		default:
			err = fmt.Errorf("agent %d: unexpected %s from the master", me, m.Type)
		}
		if err == nil {
			select {
			case err = <-e.Link.Errors(): // a data reader failed
			default:
			}
		}
		if err != nil {
			rank, why := int32(-1), err.Error()
			if je, ok := err.(*JobError); ok {
				rank, why = int32(je.Rank), je.Why
			}
			reply(proto.Msg{Type: proto.MsgFail, Node: me, Code: rank, Text: why})
			return err
		}
	}
}
