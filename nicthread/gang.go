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

// Canceller is implemented by the Nodes whose slice can be cut short from
// another goroutine: after Cancel, the DEM, MSM or TX under way, and every
// later one, returns ErrSliceCancelled at once. The gang cancels the slice
// of a held job whose stop is closed, and of every busy job as it closes
// (doc.go, "A late job is held"), so that neither waits for a silent host's
// node_timeout. RemoteNodes implements it.
type Canceller interface {
	Cancel()
}

// Holder is implemented by the Nodes whose agents can be told, outside the
// slice's exchange, that the gang holds the job in slice k (the slice under
// way, strobed already): Hold stops the job's ranks on every node that
// still reads its frames, through slice k's DEM (whose decision, sent
// before the hold, may reach a node after it) and until a later slice's
// decision (Gated) says the job runs, so that a held job's ranks do not compete for
// the cores with the job the gang runs meanwhile (doc.go, "A late job is
// held"). It is called on the strobe thread while the job's worker owns the
// Nodes: it must be safe from another goroutine, must not wait for a node,
// and its frames must reach each node before the next DEM's.
// RemoteNodes implements it.
type Holder interface {
	Hold(k proto.SliceID)
}

// ErrSliceCancelled is the error of a slice cut short by Canceller.Cancel.
// The gang reports the job as stopped, not failed.
var ErrSliceCancelled = errors.New("nicthread: the slice was cancelled (the job was stopped)")

// GangConfig configures a gang master.
type GangConfig struct {
	Slice  time.Duration // the time slice every job of the gang runs with
	Spin   time.Duration // as MasterConfig.Spin
	FIFO   bool          // try SCHED_FIFO for the strobe thread
	Matrix strobe.GangConfig
	// Hold bounds how long past a strobe's due time the strobe thread
	// waits for a job whose previous slice is still under way (a job with
	// nodes on other hosts) before it strobes the other jobs without it
	// (0: DefaultHold). See doc.go, "A late job is held".
	Hold time.Duration
	// OnSlice, if set, sees each slice's decision on the strobe thread: the
	// name of the job that runs ("" if none) and whether that is a switch.
	OnSlice func(running string, switched bool)
}

// DefaultHold is GangConfig.Hold's default: 100 ms, and at least two
// slices. Long enough that a remote job's ordinary lateness (a busy host:
// its agents wait for a CPU while the running job's ranks spin) stretches
// the slices as a lone job's master would, rather than costing the job its
// turns (a held job's turn passes to the running one, whose ranks then
// keep the CPU: too short a hold feeds on itself on a loaded machine, as
// 10 ms did on a 2-core host with three jobs); short next to node_timeout
// (default 5 s), which a silent host would otherwise impose on every job of
// the gang.
func DefaultHold(slice time.Duration) time.Duration { return max(100*time.Millisecond, 2*slice) }

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

	finished chan *GangJob // a worker's slice has ended (capacity MPL: one slice per job at most)
	workers  sync.WaitGroup
	timer    *time.Timer // strobe thread only
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
	due    clock.Time // the job's next strobe, read when its slice was strobed

	// A job whose Nodes are not LocalNodes runs its slices on its own
	// goroutine (work), so that one that waits for a silent host does not
	// hold the strobe thread. busy and held are the strobe thread's; while
	// busy, the worker owns m, k, phase, rec, st and the Nodes.
	work   chan clock.Time // a slice to run (its strobe time); closed when the job leaves
	busy   bool
	held   bool
	cut    bool    // its slice was cancelled (Canceller): it leaves as stopped when the slice ends
	sErr   error   // the slice's outcome (the worker's, read after finished)
	status []uint8 // the slice's DEM status and exchanged count, for the matrix
	nDesc  int
	exit   struct {
		err  error
		code int32
		why  string
	}

	slot    atomic.Int32 // -1 until admitted
	running atomic.Bool  // its ranks run in the current slice (not while held)
	isHeld  atomic.Bool  // held, for Status and Held
	fifo    atomic.Bool  // its worker got SCHED_FIFO
	nRun    atomic.Uint64
	nAlive  atomic.Uint64
	nGiven  atomic.Uint64 // decisions: slices of its quantum lent to another job (strobe.Gang.Given)
	nIn     atomic.Uint64 // decisions: switches into the job (stopped → runs)
	nOut    atomic.Uint64 // and out of it (runs → stopped)
	gated   bool          // strobe thread: the last decision its nodes were strobed with (true before the first: its ranks start running)

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
	if cfg.Hold == 0 {
		cfg.Hold = DefaultHold(cfg.Slice)
	}
	if cfg.Hold < 0 {
		return nil, fmt.Errorf("nicthread: gang hold = %v, want > 0 (0: the default, %v)", cfg.Hold, DefaultHold(cfg.Slice))
	}
	g := &Gang{cfg: cfg, wake: make(chan struct{}, 1), quit: make(chan struct{}), done: make(chan struct{}),
		matrix: strobe.NewGang(cfg.Matrix), finished: make(chan *GangJob, cfg.Matrix.MPL)}
	g.timer = time.NewTimer(time.Hour)
	g.timer.Stop()
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
	j := &GangJob{Name: name, id: g.nextID, cfg: cfg, nodes: nodes, stop: stop, joined: time.Now(), done: make(chan struct{}), gated: true}
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

// Switches returns the gang's switches into the job (its ranks stopped in
// its previous strobed slice, run in this one) and out of it (the
// reverse), counted from the decisions its nodes were strobed with: a job
// starts running, so a first slice in which it does not run is a switch
// out. Given is how many slices of its quanta the matrix lent to another
// job because its ranks were all blocked (work-conserving,
// strobe.Gang.Given). Safe at any time.
func (j *GangJob) Switches() (in, out uint64) { return j.nIn.Load(), j.nOut.Load() }

// Given: see Switches.
func (j *GangJob) Given() uint64 { return j.nGiven.Load() }

// Held reports whether the job is held now (its slice late past the
// gang's hold: doc.go, "A late job is held"); safe at any time.
func (j *GangJob) Held() bool { return j.isHeld.Load() }

// GangJobStatus is one job's line of Gang.Status.
type GangJobStatus struct {
	Name        string
	Slot        int  // row of the gang matrix; -1 while waiting for the next slice boundary
	Running     bool // its ranks run in the current slice (false while held)
	Held        bool // its slice is late past the gang's hold: passed over until it ends
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
			out = append(out, GangJobStatus{Name: j.Name, Slot: int(j.slot.Load()), Running: j.running.Load(), Held: j.Held(), SlicesRun: ran, SlicesAlive: alive, Joined: j.joined})
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

// leave ends job j (not busy): it stops its nodes and wakes its waiter.
// A job with a worker is stopped by the worker, so that the strobe thread
// never waits on a send to its hosts.
func (g *Gang) leave(j *GangJob, err error, code int32, why string) {
	if j.m != nil {
		j.st.Skipped = j.m.Skipped()
	}
	j.st.FIFO = g.fifo.Load()
	if j.work != nil { // its master's work ran on its worker
		j.st.FIFO = j.fifo.Load()
	}
	j.err = err
	j.running.Store(false)
	j.isHeld.Store(false)
	g.matrix.Leave(j.id)
	g.mu.Lock()
	for i, x := range g.jobs {
		if x == j {
			g.jobs = append(g.jobs[:i], g.jobs[i+1:]...)
			break
		}
	}
	g.mu.Unlock()
	j.exit.err, j.exit.code, j.exit.why = err, code, why
	if j.work != nil {
		close(j.work) // the worker stops the nodes and closes done
		return
	}
	j.stopNodes()
	close(j.done)
}

// stopNodes tells j's nodes to stop, with its exit.
func (j *GangJob) stopNodes() {
	if j.exit.err != nil {
		j.nodes.Stop(1, j.exit.err.Error())
	} else {
		j.nodes.Stop(j.exit.code, j.exit.why)
	}
}

// worker runs j's slices, strobed at the times the strobe thread sends,
// until it leaves; then it stops j's nodes and closes done. It is the job's
// master thread: with the gang's FIFO on it runs SCHED_FIFO, as the strobe
// thread does, so that collecting its nodes' reports does not wait for a
// CPU behind the ranks that spin on this host.
func (g *Gang) worker(j *GangJob) {
	defer g.workers.Done()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if g.cfg.FIFO {
		if ok := unix.SetFIFO(10) == nil; ok {
			j.fifo.Store(true)
			defer unix.SetNormal()
		}
	}
	for range j.work {
		j.sErr = g.runSlice(j)
		g.finished <- j
	}
	j.stopNodes()
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
		if _, local := j.nodes.(*LocalNodes); !local {
			j.work = make(chan clock.Time, 1)
			g.workers.Add(1)
			go g.worker(j)
		}
		g.jobs = append(g.jobs, j)
	}
	g.queue = g.queue[:0]
}

// run is the strobe thread.
func (g *Gang) run() {
	defer close(g.done)
	defer g.workers.Wait() // every job's nodes stopped before Close returns
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
	snapshot := func() {
		g.mu.Lock()
		jobs = append(jobs[:0], g.jobs...)
		g.mu.Unlock()
	}
	for {
		select {
		case <-g.quit:
			g.closeAll()
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
		g.drain()
		snapshot()
		if len(jobs) == 0 {
			continue
		}
		direct := true
		for _, j := range jobs {
			if j.work != nil {
				direct = false
			}
		}
		wake := due - clock.Time(spin.Spin())
		// The workers' slices end meanwhile: take each as it comes.
		for g.busy(jobs, false) && now() < wake {
			g.await(time.Duration(wake - now()))
		}
		if now() < wake {
			if direct && wake-now() < clock.Time(5*time.Millisecond) {
				unix.SleepUntilHoldingP(base + int64(wake))
			} else {
				unix.SleepUntil(base + int64(wake))
			}
			spin.Observe(time.Duration(now() - wake))
		}
		for now() < due {
		}
		// A job whose slice is still under way is waited for up to Hold
		// past the strobe's due time, then held: strobed no more, passed
		// over by the matrix, until its slice ends (doc.go).
		for limit := due + clock.Time(g.cfg.Hold); g.busy(jobs, true) && now() < limit; {
			g.await(time.Duration(limit - now()))
		}
		// Jobs leave at the slice boundary (a busy one once its slice has
		// ended: its worker owns its nodes until then).
		// A busy job whose stop is closed (held, or about to be) has its
		// slice cancelled if its Nodes can: it leaves, as stopped, when the
		// worker returns, instead of at its silent node's timeout.
		snapshot()
		for _, j := range jobs {
			select {
			case <-j.stop:
			default:
				continue
			}
			if j.busy {
				g.cancel(j)
				continue
			}
			g.leave(j, nil, 0, "job finished")
		}
		snapshot()
		if len(jobs) == 0 {
			continue
		}
		for _, j := range jobs {
			if j.held != j.busy {
				j.held = j.busy
				g.matrix.Hold(j.id, j.held)
				j.isHeld.Store(j.held)
				if j.held { // its turn passes on; its nodes that still answer stop its ranks (doc.go)
					j.running.Store(false)
					if h, ok := j.nodes.(Holder); ok && j.ran { // j.ran: the decision its nodes have
						h.Hold(j.k) // the slice under way: the strobe thread set j.k when it strobed it
					}
				}
			}
		}
		id, switched := g.matrix.Slice()
		owner := g.matrix.Owner()
		name := ""
		// Stop the outgoing job before continuing the incoming one. A held
		// job's ranks were stopped when it was held (Holder).
		for pass := 0; pass < 2; pass++ {
			for _, j := range jobs {
				run := j.id == id
				if run {
					name = j.Name
				}
				if run == (pass == 1) && !j.busy {
					j.ran = run
					j.running.Store(run)
					if run != j.gated {
						j.gated = run
						if run {
							j.nIn.Add(1)
						} else {
							j.nOut.Add(1)
						}
					}
					if !run && j.id == owner {
						j.nGiven.Add(1)
					}
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
		due = 0
		for _, j := range jobs {
			if j.busy {
				continue
			}
			j.k = j.m.Strobe(t)
			_, j.due = j.m.Due()
			due = max(due, j.due)
			if j.work != nil {
				j.busy = true
				j.work <- t
				continue
			}
			j.sErr = g.runSlice(j)
			g.sliceEnded(j)
		}
		if due == 0 { // none strobed (every job held)
			due = t + clock.Time(g.cfg.Slice)
		}
	}
}

// cancel cuts busy job j's slice short, once, if its Nodes can (Canceller);
// otherwise its slice ends within its nodes' timeouts.
func (g *Gang) cancel(j *GangJob) {
	if c, ok := j.nodes.(Canceller); ok && !j.cut {
		j.cut = true
		c.Cancel()
	}
}

// busy reports whether a job of jobs has a slice under way (and, with
// unheld, one that is not held yet).
func (g *Gang) busy(jobs []*GangJob, unheld bool) bool {
	for _, j := range jobs {
		if j.busy && !(unheld && j.held) {
			return true
		}
	}
	return false
}

// await waits up to d for a worker's slice to end, and takes it.
func (g *Gang) await(d time.Duration) {
	g.timer.Reset(d)
	select {
	case j := <-g.finished:
		g.timer.Stop()
		j.busy = false
		g.sliceEnded(j)
	case <-g.timer.C:
	}
}

// drain takes the workers' slices that have ended, without waiting.
func (g *Gang) drain() {
	for {
		select {
		case j := <-g.finished:
			j.busy = false
			g.sliceEnded(j)
		default:
			return
		}
	}
}

// sliceEnded takes job j's slice's outcome (j.sErr): the matrix observes
// it, or the job leaves.
func (g *Gang) sliceEnded(j *GangJob) {
	if j.cut && (j.sErr == nil || errors.Is(j.sErr, ErrSliceCancelled)) {
		g.leave(j, nil, 0, "job finished") // stopped: its stop was closed
		return
	}
	if j.sErr != nil {
		g.leave(j, j.sErr, 1, "")
		return
	}
	g.matrix.Observe(j.id, j.status, j.nDesc)
	if j.cfg.MaxSlices > 0 && j.st.Slices >= j.cfg.MaxSlices {
		g.leave(j, nil, 0, "slice limit")
	}
}

// closeAll ends every job as the gang closes: a busy one once its slice
// has ended (within its nodes' timeouts), with that slice's error if it
// failed.
func (g *Gang) closeAll() {
	g.mu.Lock()
	g.jobs = append(g.jobs, g.queue...) // never admitted: stopped all the same
	g.queue = nil
	all := append([]*GangJob(nil), g.jobs...)
	g.mu.Unlock()
	for _, j := range all {
		if j.busy {
			g.cancel(j)
		}
	}
	for g.busy(all, false) {
		j := <-g.finished
		j.busy = false
	}
	for _, j := range all {
		err := ErrGangClosed
		if j.sErr != nil && !errors.Is(j.sErr, ErrSliceCancelled) {
			err = j.sErr
		}
		g.leave(j, err, 1, "")
	}
}

// runSlice runs one slice of job j, strobed already (j.k), on the strobe
// thread or j's worker.
func (g *Gang) runSlice(j *GangJob) error {
	j.phase = strobe.PhaseDEM
	all, status, err := j.nodes.DEM(j.k, j.arrive, j.retry)
	if err == nil {
		j.status, j.nDesc = append(j.status[:0], status...), len(all)
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
