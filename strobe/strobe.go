package strobe

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/bcsmpi/bcsmpi/internal/clock"
	"github.com/bcsmpi/bcsmpi/internal/proto"
)

// Phase is a microphase that needs global synchronisation.
type Phase uint8

const (
	PhaseIdle Phase = iota // between the end of a slice and the next strobe
	PhaseDEM               // descriptor exchange
	PhaseMSM               // message scheduling
	PhaseTX                // transmission (p2p, barrier/broadcast, reduce)
)

func (p Phase) String() string {
	return [...]string{"idle", "DEM", "MSM", "TX"}[p]
}

// Config is the strobe configuration.
type Config struct {
	Slice time.Duration // time slice length, 50µs .. 100ms
	Nodes int           // number of agents, 1 .. 4096
}

// Validate reports the first out-of-range field.
func (c Config) Validate() error {
	if c.Slice < 50*time.Microsecond || c.Slice > 100*time.Millisecond {
		return fmt.Errorf("strobe: timeslice = %v, want 50µs .. 100ms", c.Slice)
	}
	if c.Nodes < 1 || c.Nodes > 4096 {
		return fmt.Errorf("strobe: nodes = %d, want 1 .. 4096", c.Nodes)
	}
	return nil
}

// ErrProtocol is matched by every error about a message out of order.
var ErrProtocol = errors.New("strobe: protocol violation")

// ProtocolError says which node sent what out of order.
type ProtocolError struct {
	Node proto.NodeID
	What string
}

func (e *ProtocolError) Error() string {
	return fmt.Sprintf("strobe: protocol violation by node %d: %s", e.Node, e.What)
}
func (e *ProtocolError) Is(t error) bool { return t == ErrProtocol }

// SliceRecord is what the master measured for one slice (global EMDS metrics).
type SliceRecord struct {
	Slice   proto.SliceID
	Start   clock.Time    // when the strobe was issued
	Late    time.Duration // Start minus the due time
	Skipped uint64        // slices skipped just before this one
	GETTS   time.Duration // elapsed time since the previous strobe
	GTDEM   time.Duration // strobe → every node done with DEM
	GTMSM   time.Duration // strobe → every node done with MSM
	GTTS    time.Duration // strobe → every node done with the slice
	USRDEM  uint64        // sync polls that found DEM unfinished
	USRMSM  uint64
	USRTS   uint64
}

// Master is the master's schedule and synchroniser.
type Master struct {
	cfg       Config
	t0        clock.Time
	next      proto.SliceID // next slice to start
	phase     Phase
	arrived   []bool
	nArrived  int
	rec       SliceRecord
	prevStart clock.Time
	started   bool
	skipped   uint64
}

// NewMaster returns a master whose slice 0 is due at t0.
func NewMaster(cfg Config, t0 clock.Time) *Master {
	return &Master{cfg: cfg, t0: t0, arrived: make([]bool, cfg.Nodes)}
}

// Due returns the next slice and the time its strobe is due.
func (m *Master) Due() (proto.SliceID, clock.Time) {
	return m.next, m.t0 + clock.Time(int64(m.next)*int64(m.cfg.Slice))
}

// Skipped is the number of slices skipped so far.
func (m *Master) Skipped() uint64 { return m.skipped }

// Phase is the microphase the master is synchronising.
func (m *Master) Phase() Phase { return m.phase }

// Strobe starts the next slice at now (which must be at or after its due
// time). If whole slices have passed, it skips ahead to the slice whose window
// contains now. It returns the slice started.
func (m *Master) Strobe(now clock.Time) proto.SliceID {
	if m.phase != PhaseIdle {
		panic(fmt.Sprintf("strobe: Strobe called in phase %v; the previous slice has not finished", m.phase))
	}
	k, due := m.Due()
	if now < due {
		panic(fmt.Sprintf("strobe: Strobe at %d before slice %d is due at %d", now, k, due))
	}
	var skipped uint64
	if cur := proto.SliceID(int64(now-m.t0) / int64(m.cfg.Slice)); cur > k {
		skipped = uint64(cur - k)
		k = cur
		due = m.t0 + clock.Time(int64(k)*int64(m.cfg.Slice))
	}
	m.skipped += skipped
	m.rec = SliceRecord{Slice: k, Start: now, Late: time.Duration(now - due), Skipped: skipped}
	if m.started {
		m.rec.GETTS = time.Duration(now - m.prevStart)
	}
	m.started, m.prevStart = true, now
	m.next = k + 1
	m.beginPhase(PhaseDEM)
	return k
}

func (m *Master) beginPhase(p Phase) {
	m.phase = p
	clear(m.arrived)
	m.nArrived = 0
}

// Arrive records that node finished microphase p of slice k at now. It
// returns true when every node has finished p; the master then moves on to the
// next microphase (or to idle after TX).
func (m *Master) Arrive(node proto.NodeID, p Phase, k proto.SliceID, now clock.Time) (bool, error) {
	if node < 0 || int(node) >= len(m.arrived) {
		return false, &ProtocolError{node, fmt.Sprintf("node id not in 0..%d", len(m.arrived)-1)}
	}
	if p != m.phase || k != m.rec.Slice {
		return false, &ProtocolError{node, fmt.Sprintf("reported %v of slice %d while the master is in %v of slice %d", p, k, m.phase, m.rec.Slice)}
	}
	if m.arrived[node] {
		return false, &ProtocolError{node, fmt.Sprintf("reported %v of slice %d twice", p, k)}
	}
	m.arrived[node] = true
	m.nArrived++
	if m.nArrived < len(m.arrived) {
		return false, nil
	}
	d := time.Duration(now - m.rec.Start)
	switch p {
	case PhaseDEM:
		m.rec.GTDEM = d
		m.beginPhase(PhaseMSM)
	case PhaseMSM:
		m.rec.GTMSM = d
		m.beginPhase(PhaseTX)
	case PhaseTX:
		m.rec.GTTS = d
		m.beginPhase(PhaseIdle)
	}
	return true, nil
}

// Retry counts one sync poll that found the current microphase unfinished.
func (m *Master) Retry() {
	switch m.phase {
	case PhaseDEM:
		m.rec.USRDEM++
	case PhaseMSM:
		m.rec.USRMSM++
	case PhaseTX:
		m.rec.USRTS++
	}
}

// Record is the measurement of the current (or just finished) slice.
func (m *Master) Record() SliceRecord { return m.rec }

// Follower is an agent's view of the slice protocol: it accepts the master's
// messages only in order.
type Follower struct {
	node    proto.NodeID
	slice   proto.SliceID
	phase   Phase
	started bool
}

// NewFollower returns the follower of node.
func NewFollower(node proto.NodeID) *Follower { return &Follower{node: node} }

// Slice is the current slice, Phase the microphase being worked on.
func (f *Follower) Slice() proto.SliceID { return f.slice }
func (f *Follower) Phase() Phase         { return f.phase }

// Step checks that the master may now move this node into phase p of slice k.
func (f *Follower) Step(p Phase, k proto.SliceID) error {
	ok := false
	switch p {
	case PhaseDEM:
		ok = f.phase == PhaseIdle && (!f.started || k > f.slice)
	case PhaseMSM:
		ok = f.phase == PhaseDEM && k == f.slice
	case PhaseTX:
		ok = f.phase == PhaseMSM && k == f.slice
	case PhaseIdle:
		ok = f.phase == PhaseTX && k == f.slice
	}
	if !ok {
		return &ProtocolError{f.node, fmt.Sprintf("told %v of slice %d while in %v of slice %d", p, k, f.phase, f.slice)}
	}
	f.phase, f.slice, f.started = p, k, true
	return nil
}

// SpinEstimator decides how long before a strobe the master stops sleeping
// and starts busy-waiting. clock_nanosleep wakes late by a host-dependent
// amount (a few µs on bare metal, tens of µs on a busy VM); spinning for the
// 95th percentile of the oversleeps of the last 64 strobes (the 4th largest),
// plus a margin, keeps the strobe on time while spinning no longer than the
// host needs; the largest value would make every slice pay for one stall. The
// result never exceeds the configured maximum.
type SpinEstimator struct {
	max, margin time.Duration
	seen        [64]time.Duration
	sorted      [64]time.Duration
	n           int
}

// NewSpinEstimator bounds the spin to max (and starts there).
func NewSpinEstimator(max time.Duration) *SpinEstimator {
	e := &SpinEstimator{max: max, margin: 5 * time.Microsecond}
	for i := range e.seen {
		e.seen[i] = max
	}
	return e
}

// Observe records how late a sleep woke relative to its target.
func (e *SpinEstimator) Observe(oversleep time.Duration) {
	e.seen[e.n%len(e.seen)] = max(oversleep, 0)
	e.n++
}

// Spin is how long to busy-wait before the next strobe.
func (e *SpinEstimator) Spin() time.Duration {
	e.sorted = e.seen
	slices.Sort(e.sorted[:])
	return min(e.sorted[len(e.sorted)-4]+e.margin, e.max)
}
