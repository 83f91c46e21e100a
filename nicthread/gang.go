package nicthread

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bcsmpi/bcsmpi/internal/clock"
	"github.com/bcsmpi/bcsmpi/internal/proto"
	"github.com/bcsmpi/bcsmpi/internal/unix"
	"github.com/bcsmpi/bcsmpi/strobe"
)

// Gated is implemented by the Nodes that carry the gang's per-slice decision
// to their agents: Gate(run) is called before every DEM of a job in a gang,
// and each of the job's agents applies it at that strobe (Agent.Gate).
// LocalNodes calls its agents directly; RemoteNodes sends it in the slice's
// MsgDEM (Code proto.DEMStopped), so agents on other hosts switch at the
// same strobe as this one.
type Gated interface {
	Gate(run bool)
}

// Gate applies the decision to every agent, on the strobe thread.
func (l *LocalNodes) Gate(run bool) {
	for _, a := range l.Agents {
		a.Gate(run)
	}
}

// Gate sets the Code of the next MsgDEM.
func (r *RemoteNodes) Gate(run bool) {
	if run {
		r.gate = 0
	} else {
		r.gate = proto.DEMStopped
	}
}

// GangConfig configures a gang master.
type GangConfig struct {
	Slice  time.Duration // the time slice every job of the gang runs with
	Spin   time.Duration // as MasterConfig.Spin
	FIFO   bool          // try SCHED_FIFO for the strobe thread
	Matrix strobe.GangConfig
	// OnSlice, if set, sees each slice's decision on the strobe thread: the
	// name of the job that runs ("" if none) and whether that is a switch.
	OnSlice func(running string, switched bool)
}

// ErrGangClosed is the error of a job still in the gang when it is closed,
// and of a Join after Close.
var ErrGangClosed = errors.New("nicthread: the gang is closed")

// Gang is one strobe thread that drives several jobs' Nodes slice by slice
// and time-shares their ranks with a gang matrix (strobe.Gang; see doc.go,
// "Gang"). Jobs join (Join) and leave (their stop channel, an error) at
// any slice boundary. Each job keeps its own strobe.Master — its slice
// numbers, lateness, synchronisation counts and OnSlice/OnDEM hooks — and
// its own failure domain: a node error stops that job alone, exactly as
// RunMaster would. Safe for concurrent use.
type Gang struct {
	cfg    GangConfig
	mu     sync.Mutex
	jobs   []*GangJob // admitted; appended and removed by the strobe thread, under mu
	queue  []*GangJob // joined, admitted at the next slice boundary
	closed bool
	nextID int
	wake   chan struct{}
	quit   chan struct{}
	done   chan struct{}
	fifo   atomic.Bool

	matrix *strobe.Gang // strobe thread only
}

// GangJob is a job's membership of a gang.
type GangJob struct {
	Name   string
	id     int
	cfg    MasterConfig
	nodes  Nodes
	stop   <-chan struct{}
	joined time.Time

	// strobe thread only
	m      *strobe.Master
	k      proto.SliceID
	phase  strobe.Phase
	arrive func(proto.NodeID) error
	retry  func() // m.Retry, made once: a method value per call would allocate
	now    func() clock.Time
	rec    strobe.SliceRecord
	st     MasterStats
	ran    bool

	slot    atomic.Int32 // -1 until admitted
	running atomic.Bool
	nRun    atomic.Uint64
	nAlive  atomic.Uint64

	done chan struct{}
	err  error
}

// NewGang validates cfg and starts the strobe thread, idle until a job joins.
func NewGang(cfg GangConfig) (*Gang, error) {
	cfg.Matrix = cfg.Matrix.Defaults()
	if err := cfg.Matrix.Validate(); err != nil {
		return nil, err
	}
	if err := (strobe.Config{Slice: cfg.Slice, Nodes: 1}).Validate(); err != nil {
		return nil, err
	}
	g := &Gang{cfg: cfg, wake: make(chan struct{}, 1), quit: make(chan struct{}), done: make(chan struct{}),
		matrix: strobe.NewGang(cfg.Matrix)}
	go g.run()
	return g, nil
}

// Config returns the gang's configuration (defaults filled).
func (g *Gang) Config() GangConfig { return g.cfg }

// Join adds a job to the gang from the next slice boundary. cfg is the
// job's master configuration (Nodes, OnSlice, OnDEM, MaxSlices; Slice must be
// the gang's, Spin and FIFO are the gang's); nodes drive its agents and
// should implement Gated; closing stop ends the job at a slice boundary,
// as for RunMaster. A job beyond the multiprogramming level is refused with
// an error matching strobe.ErrGangFull.
func (g *Gang) Join(name string, cfg MasterConfig, nodes Nodes, stop <-chan struct{}) (*GangJob, error) {
	if cfg.Slice != g.cfg.Slice {
		return nil, fmt.Errorf("nicthread: job %s: timeslice %v differs from the gang's %v; every job of a gang runs with the gang's timeslice", name, cfg.Slice, g.cfg.Slice)
	}
	if err := (strobe.Config{Slice: cfg.Slice, Nodes: cfg.Nodes}).Validate(); err != nil {
		return nil, err
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return nil, ErrGangClosed
	}
	if n := len(g.jobs) + len(g.queue); n >= g.cfg.Matrix.MPL {
		return nil, fmt.Errorf("job %s: %w", name, &strobe.GangFullError{MPL: g.cfg.Matrix.MPL})
	}
	j := &GangJob{Name: name, id: g.nextID, cfg: cfg, nodes: nodes, stop: stop, joined: time.Now(), done: make(chan struct{})}
	j.slot.Store(-1)
	g.nextID++
	g.queue = append(g.queue, j)
	select {
	case g.wake <- struct{}{}:
	default:
	}
	return j, nil
}

// Done is closed when the job has left the gang.
func (j *GangJob) Done() <-chan struct{} { return j.done }

// Wait waits until the job has left the gang and returns what RunMaster
// would have: its stats and the first error a node reported (nil when it
// was stopped through its stop channel or reached MaxSlices).
func (j *GangJob) Wait() (MasterStats, error) {
	<-j.done
	return j.st, j.err
}

// Counts returns the slices the job ran in and the slices it was strobed in
// (alive); safe at any time.
func (j *GangJob) Counts() (ran, alive uint64) { return j.nRun.Load(), j.nAlive.Load() }

// GangJobStatus is one job's line of Gang.Status.
type GangJobStatus struct {
	Name        string
	Slot        int  // row of the gang matrix; -1 while waiting for the next slice boundary
	Running     bool // its ranks run in the current slice
	SlicesRun   uint64
	SlicesAlive uint64
	Joined      time.Time
}

// Status lists the jobs of the gang in slot order of joining.
func (g *Gang) Status() []GangJobStatus {
	g.mu.Lock()
	defer g.mu.Unlock()
	out := make([]GangJobStatus, 0, len(g.jobs)+len(g.queue))
	for _, l := range [][]*GangJob{g.jobs, g.queue} {
		for _, j := range l {
			ran, alive := j.Counts()
			out = append(out, GangJobStatus{Name: j.Name, Slot: int(j.slot.Load()), Running: j.running.Load(), SlicesRun: ran, SlicesAlive: alive, Joined: j.joined})
		}
	}
	return out
}

// FIFO reports whether the strobe thread got SCHED_FIFO.
func (g *Gang) FIFO() bool { return g.fifo.Load() }

// Close refuses further jobs, stops the jobs still in the gang (their Wait
// returns ErrGangClosed) and ends the strobe thread. Safe to call more than
// once.
func (g *Gang) Close() {
	g.mu.Lock()
	if !g.closed {
		g.closed = true
		close(g.quit)
	}
	g.mu.Unlock()
	<-g.done
}

// leave ends job j: it stops its nodes and wakes its waiter.
func (g *Gang) leave(j *GangJob, err error, code int32, why string) {
	if err != nil {
		j.nodes.Stop(1, err.Error())
	} else {
		j.nodes.Stop(code, why)
	}
	if j.m != nil {
		j.st.Skipped = j.m.Skipped()
	}
	j.st.FIFO = g.fifo.Load()
	j.err = err
	j.running.Store(false)
	g.matrix.Leave(j.id)
	g.mu.Lock()
	for i, x := range g.jobs {
		if x == j {
			g.jobs = append(g.jobs[:i], g.jobs[i+1:]...)
			break
		}
	}
	g.mu.Unlock()
	close(j.done)
}

// admit moves the queued jobs into the matrix; t0 is the due time of the
// slice about to start, which becomes each newcomer's slice 0.
func (g *Gang) admit(t0 clock.Time, now func() clock.Time) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, j := range g.queue {
		slot, err := g.matrix.Join(j.id)
		if err != nil { // Join counted the queue: a broken invariant
			panic(fmt.Sprintf("nicthread: gang admitted job %s beyond its slots: %v", j.Name, err))
		}
		j.slot.Store(int32(slot))
		j.m = strobe.NewMaster(strobe.Config{Slice: g.cfg.Slice, Nodes: j.cfg.Nodes}, t0)
		j.now = now
		j.retry = j.m.Retry
		jj := j
		j.arrive = func(n proto.NodeID) error {
			_, err := jj.m.Arrive(n, jj.phase, jj.k, now())
			return err
		}
		g.jobs = append(g.jobs, j)
	}
	g.queue = g.queue[:0]
}

// run is the strobe thread.
func (g *Gang) run() {
	defer close(g.done)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if g.cfg.FIFO {
		if ok := unix.SetFIFO(10) == nil; ok {
			g.fifo.Store(true)
			defer unix.SetNormal()
		}
	}
	base := unix.Now()
	now := func() clock.Time { return clock.Time(unix.Now() - base) }
	spin := strobe.NewSpinEstimator(g.cfg.Spin)
	var due clock.Time
	idle := true
	var jobs []*GangJob // this slice's, in join order
	for {
		select {
		case <-g.quit:
			g.mu.Lock()
			g.jobs = append(g.jobs, g.queue...) // never admitted: stopped all the same
			g.queue = nil
			all := append([]*GangJob(nil), g.jobs...)
			g.mu.Unlock()
			for _, j := range all {
				g.leave(j, ErrGangClosed, 1, "")
			}
			return
		default:
		}
		g.mu.Lock()
		empty := len(g.jobs) == 0 && len(g.queue) == 0
		g.mu.Unlock()
		if empty {
			idle = true
			select {
			case <-g.wake:
			case <-g.quit:
			}
			continue
		}
		if idle { // a fresh schedule: the first slice is due one slice from now
			due, idle = now()+clock.Time(g.cfg.Slice), false
		}
		g.admit(due, now)
		// Jobs leave at the slice boundary.
		g.mu.Lock()
		jobs = append(jobs[:0], g.jobs...)
		g.mu.Unlock()
		direct := true
		for _, j := range jobs {
			select {
			case <-j.stop:
				g.leave(j, nil, 0, "job finished")
				continue
			default:
			}
			if _, ok := j.nodes.(*LocalNodes); !ok {
				direct = false
			}
		}
		g.mu.Lock()
		jobs = append(jobs[:0], g.jobs...)
		g.mu.Unlock()
		if len(jobs) == 0 {
			continue
		}
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
		id, switched := g.matrix.Slice()
		name := ""
		// Stop the outgoing job before continuing the incoming one.
		for pass := 0; pass < 2; pass++ {
			for _, j := range jobs {
				run := j.id == id
				if run {
					name = j.Name
				}
				if run == (pass == 1) {
					j.ran = run
					j.running.Store(run)
					if gt, ok := j.nodes.(Gated); ok {
						gt.Gate(run)
					}
				}
			}
		}
		if g.cfg.OnSlice != nil {
			g.cfg.OnSlice(name, switched)
		}
		t := now() // one strobe time for every job: their schedules stay aligned
		for _, j := range jobs {
			if err := g.slice(j, t); err != nil {
				g.leave(j, err, 1, "")
				continue
			}
			if j.cfg.MaxSlices > 0 && j.st.Slices >= j.cfg.MaxSlices {
				g.leave(j, nil, 0, "slice limit")
			}
		}
		due = 0
		g.mu.Lock()
		for _, j := range g.jobs {
			if _, d := j.m.Due(); d > due {
				due = d
			}
		}
		g.mu.Unlock()
		if due == 0 {
			due = now() + clock.Time(g.cfg.Slice)
		}
	}
}

// slice runs one slice of job j, strobed at t.
func (g *Gang) slice(j *GangJob, t clock.Time) error {
	j.k = j.m.Strobe(t)
	j.phase = strobe.PhaseDEM
	all, status, err := j.nodes.DEM(j.k, j.arrive, j.retry)
	if err == nil {
		g.matrix.Observe(j.id, status, len(all))
		if j.cfg.OnDEM != nil {
			j.cfg.OnDEM(all)
		}
		j.phase = strobe.PhaseMSM
		err = j.nodes.MSM(j.k, all, status, j.arrive, j.retry)
	}
	if err == nil {
		j.phase = strobe.PhaseTX
		err = j.nodes.TX(j.k, j.arrive, j.retry)
	}
	if err != nil {
		return err
	}
	j.st.Slices++
	j.nAlive.Add(1)
	if j.ran {
		j.nRun.Add(1)
	}
	if j.cfg.OnSlice != nil {
		j.rec = j.m.Record()
		j.cfg.OnSlice(&j.rec)
	}
	return nil
}
