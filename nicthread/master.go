package nicthread

import (
	"fmt"
	"sync/atomic"
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
	DEM(k proto.SliceID, arrive func(proto.NodeID) error, retry func()) ([]proto.Descriptor, error)
	MSM(k proto.SliceID, all []proto.Descriptor, arrive func(proto.NodeID) error, retry func()) error
	TX(k proto.SliceID, arrive func(proto.NodeID) error, retry func()) error
	Stop(code int32, why string)
}

// MasterConfig configures the strobe driver.
type MasterConfig struct {
	Slice     time.Duration // time slice
	Nodes     int
	Spin      time.Duration // busy-wait before each strobe, after the absolute sleep
	FIFO      bool          // try SCHED_FIFO for the strobe thread
	TXTimeout time.Duration // bound on one slice's transmission
	OnSlice   func(*strobe.SliceRecord)
	MaxSlices uint64 // stop after this many slices (0: no limit); for tests and benches
}

// MasterStats summarises a run of the master.
type MasterStats struct {
	Slices  uint64
	Skipped uint64
	FIFO    bool // SCHED_FIFO was granted
}

// RunMaster strobes until stop is closed, then tells the nodes to stop. It
// returns the first error a node reported, which aborts the job.
func RunMaster(cfg MasterConfig, nodes Nodes, stop <-chan struct{}) (MasterStats, error) {
	defer unix.LockThread()()
	var st MasterStats
	if cfg.FIFO {
		if st.FIFO = unix.SetFIFO(10) == nil; st.FIFO {
			defer unix.SetNormal() // runs before the thread is unlocked
		}
	}
	base := unix.Now()
	now := func() clock.Time { return clock.Time(unix.Now() - base) }
	m := strobe.NewMaster(strobe.Config{Slice: cfg.Slice, Nodes: cfg.Nodes}, now()+clock.Time(cfg.Slice))
	for {
		select {
		case <-stop:
			nodes.Stop(0, "job finished")
			st.Skipped = m.Skipped()
			return st, nil
		default:
		}
		_, due := m.Due()
		if wake := due - clock.Time(cfg.Spin); now() < wake {
			unix.SleepUntil(base + int64(wake))
		}
		for now() < due {
		}
		k := m.Strobe(now())
		phase := strobe.PhaseDEM
		arrive := func(n proto.NodeID) error {
			_, err := m.Arrive(n, phase, k, now())
			return err
		}
		all, err := nodes.DEM(k, arrive, m.Retry)
		if err == nil {
			phase = strobe.PhaseMSM
			err = nodes.MSM(k, all, arrive, m.Retry)
		}
		if err == nil {
			phase = strobe.PhaseTX
			err = nodes.TX(k, arrive, m.Retry)
		}
		if err != nil {
			nodes.Stop(1, err.Error())
			st.Skipped = m.Skipped()
			return st, err
		}
		st.Slices++
		if cfg.OnSlice != nil {
			r := m.Record()
			cfg.OnSlice(&r)
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

func (l *LocalNodes) DEM(k proto.SliceID, arrive func(proto.NodeID) error, _ func()) ([]proto.Descriptor, error) {
	var all []proto.Descriptor
	for _, a := range l.Agents {
		b, err := a.Strobe(k)
		if err != nil {
			return nil, err
		}
		if len(l.Agents) == 1 {
			all = b
		} else {
			all = append(all, b...)
		}
		if err := arrive(a.Node()); err != nil {
			return nil, err
		}
	}
	return all, nil
}

func (l *LocalNodes) MSM(k proto.SliceID, all []proto.Descriptor, arrive func(proto.NodeID) error, _ func()) error {
	for _, a := range l.Agents {
		if err := a.MSM(k, all); err != nil {
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
// endpoint 0 and node n is endpoint n+1.
type RemoteNodes struct {
	mesh    *transport.Mesh
	n       int
	ctl     chan proto.Msg
	batches [][]proto.Descriptor
	all     []proto.Descriptor
	timeout time.Duration
	stopped atomic.Bool
}

// NewRemoteNodes wraps an endpoint-0 mesh that has not been started; Handler
// is what to pass to mesh.Start.
func NewRemoteNodes(mesh *transport.Mesh, nodes int, timeout time.Duration) *RemoteNodes {
	return &RemoteNodes{mesh: mesh, n: nodes, ctl: make(chan proto.Msg, 4*nodes+4), batches: make([][]proto.Descriptor, nodes), timeout: timeout}
}

// Handler queues the agents' control frames for the master loop.
func (r *RemoteNodes) Handler(from int, m *proto.Msg) error {
	if m.Type == proto.MsgData {
		return fmt.Errorf("master received a data frame from endpoint %d", from)
	}
	c := *m
	c.Payload = nil
	c.Node = proto.NodeID(from - 1)
	r.ctl <- c
	return nil
}

func (r *RemoteNodes) broadcast(m *proto.Msg) error {
	for n := 0; n < r.n; n++ {
		if err := r.mesh.Send(n+1, m); err != nil {
			return err
		}
	}
	return nil
}

// collect waits for one frame of type t for slice k from every node.
func (r *RemoteNodes) collect(t proto.MsgType, k proto.SliceID, arrive func(proto.NodeID) error, retry func(), each func(*proto.Msg)) error {
	timer := time.NewTimer(r.timeout)
	defer timer.Stop()
	for got := 0; got < r.n; {
		var m proto.Msg
		select {
		case m = <-r.ctl:
		default:
			retry()
			select {
			case m = <-r.ctl:
			case err := <-r.mesh.Errors():
				return err
			case <-timer.C:
				return &JobError{Node: -1, Rank: -1, Why: fmt.Sprintf("slice %d: %d of %d nodes did not finish %s within %v", k, r.n-got, r.n, t, r.timeout)}
			}
		}
		if m.Type == proto.MsgFail {
			return &JobError{Node: m.Node, Rank: proto.Rank(m.Code), Why: m.Text}
		}
		if m.Type != t || m.Slice != k {
			return &JobError{Node: m.Node, Rank: -1, Why: fmt.Sprintf("sent %s of slice %d while the master waited for %s of slice %d", m.Type, m.Slice, t, k)}
		}
		if err := arrive(m.Node); err != nil {
			return err
		}
		if each != nil {
			each(&m)
		}
		got++
	}
	return nil
}

func (r *RemoteNodes) DEM(k proto.SliceID, arrive func(proto.NodeID) error, retry func()) ([]proto.Descriptor, error) {
	if err := r.broadcast(&proto.Msg{Type: proto.MsgStrobe, Slice: k}); err != nil {
		return nil, err
	}
	err := r.collect(proto.MsgDEM, k, arrive, retry, func(m *proto.Msg) { r.batches[m.Node] = m.Descs })
	if err != nil {
		return nil, err
	}
	r.all = r.all[:0]
	for _, b := range r.batches {
		r.all = append(r.all, b...)
	}
	return r.all, nil
}

func (r *RemoteNodes) MSM(k proto.SliceID, all []proto.Descriptor, arrive func(proto.NodeID) error, retry func()) error {
	if err := r.broadcast(&proto.Msg{Type: proto.MsgDEMAll, Slice: k, Descs: all}); err != nil {
		return err
	}
	return r.collect(proto.MsgMSMDone, k, arrive, retry, nil)
}

func (r *RemoteNodes) TX(k proto.SliceID, arrive func(proto.NodeID) error, retry func()) error {
	if err := r.broadcast(&proto.Msg{Type: proto.MsgTX, Slice: k}); err != nil {
		return err
	}
	return r.collect(proto.MsgSliceDone, k, arrive, retry, nil)
}

func (r *RemoteNodes) Stop(code int32, why string) {
	if r.stopped.CompareAndSwap(false, true) {
		r.broadcast(&proto.Msg{Type: proto.MsgStop, Code: code, Text: why})
	}
}

// AgentEndpoint runs an agent behind a transport mesh (endpoint node+1).
type AgentEndpoint struct {
	A       *Agent
	Mesh    *transport.Mesh
	Timeout time.Duration
	ctl     chan proto.Msg
}

// NewAgentEndpoint prepares the control queue; pass Handler to mesh.Start.
func NewAgentEndpoint(a *Agent, mesh *transport.Mesh, timeout time.Duration) *AgentEndpoint {
	return &AgentEndpoint{A: a, Mesh: mesh, Timeout: timeout, ctl: make(chan proto.Msg, 8)}
}

// Handler writes data frames straight into receivers and queues control frames.
func (e *AgentEndpoint) Handler(from int, m *proto.Msg) error {
	if m.Type == proto.MsgData {
		return e.A.OnData(proto.NodeID(from-1), m)
	}
	c := *m
	c.Payload = nil
	e.ctl <- c
	return nil
}

// Send is the agent's data path to another node.
func (e *AgentEndpoint) Send(node proto.NodeID, m *proto.Msg) error {
	return e.Mesh.Send(int(node)+1, m)
}

// Serve follows the master until it says stop; it returns nil on a normal
// stop, the job error otherwise (after reporting it to the master).
func (e *AgentEndpoint) Serve() error {
	defer unix.LockThread()()
	me := e.A.Node()
	reply := func(m *proto.Msg) error { return e.Mesh.Send(0, m) }
	for {
		var m proto.Msg
		select {
		case m = <-e.ctl:
		case err := <-e.Mesh.Errors():
			return err
		}
		var err error
		switch m.Type {
		case proto.MsgStrobe:
			var b []proto.Descriptor
			if b, err = e.A.Strobe(m.Slice); err == nil {
				err = reply(&proto.Msg{Type: proto.MsgDEM, Slice: m.Slice, Node: me, Descs: b})
			}
		case proto.MsgDEMAll:
			if err = e.A.MSM(m.Slice, m.Descs); err == nil {
				err = reply(&proto.Msg{Type: proto.MsgMSMDone, Slice: m.Slice, Node: me})
			}
		case proto.MsgTX:
			if err = e.A.TX(m.Slice, e.Timeout); err == nil {
				err = reply(&proto.Msg{Type: proto.MsgSliceDone, Slice: m.Slice, Node: me})
			}
		case proto.MsgStop:
			return nil
		default:
			err = fmt.Errorf("agent %d: unexpected %s from the master", me, m.Type)
		}
		if err != nil {
			rank, why := int32(-1), err.Error()
			if je, ok := err.(*JobError); ok {
				rank, why = int32(je.Rank), je.Why
			}
			reply(&proto.Msg{Type: proto.MsgFail, Node: me, Code: rank, Text: why})
			return err
		}
	}
}
