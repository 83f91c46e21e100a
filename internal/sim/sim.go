package sim

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/bcsmpi/bcsmpi/internal/clock"
	"github.com/bcsmpi/bcsmpi/internal/core"
	"github.com/bcsmpi/bcsmpi/internal/proto"
	"github.com/bcsmpi/bcsmpi/strobe"
)

// Config describes a simulated job and its machine. Durations are simulated
// time.
type Config struct {
	Nodes        int // 1 ..
	RanksPerNode int // 1 ..; rank r lives on node r / RanksPerNode
	// Cores is how many nodes run a full core.Node (a replica of the
	// scheduler) and have their plans compared, slice by slice, with each
	// other; 0 means every node. The other nodes are agents without a
	// scheduler: they carry out the plan of the first replica. Every node
	// computes the same plan from the same all-gathered DEM set, so at
	// 10,000 nodes running every replica would only repeat one computation
	// 10,000 times (and hold 10,000 copies of the matching state); the
	// tests run every replica at hundreds to thousands of nodes.
	Cores          int
	Sched          core.SchedConfig
	Restart        core.Restart
	DeadlockSlices uint64 // core.Config.DeadlockSlices (0: off)
	DeadlockWarn   bool
	Workload       Workload
	Inject         Injector // nil: no fault

	Slice       time.Duration // slice length (default 500µs)
	Latency     time.Duration // one way, master <-> node (default 5µs)
	Jitter      time.Duration // added to each message, uniform in 0 .. Jitter (default 2µs)
	PerDesc     time.Duration // DEM and MSM cost per descriptor (default 20ns)
	Bandwidth   uint64        // bytes per µs a node's link moves, in plus out (default 10000: 10 GB/s)
	NodeTimeout time.Duration // a node's DEM or MSM report (default 1s, as bcsrun)
	TXTimeout   time.Duration // added for the TX report (default 1s)
}

func (c *Config) defaults() {
	if c.Slice == 0 {
		c.Slice = 500 * time.Microsecond
	}
	if c.Latency == 0 {
		c.Latency = 5 * time.Microsecond
	}
	if c.Jitter == 0 {
		c.Jitter = 2 * time.Microsecond
	}
	if c.PerDesc == 0 {
		c.PerDesc = 20 * time.Nanosecond
	}
	if c.Bandwidth == 0 {
		c.Bandwidth = 10000
	}
	if c.NodeTimeout == 0 {
		c.NodeTimeout = time.Second
	}
	if c.TXTimeout == 0 {
		c.TXTimeout = time.Second
	}
	if c.Sched == (core.SchedConfig{}) {
		c.Sched = core.SchedConfig{BytesPerSliceMax: 64 << 10, ChunksPerSliceMax: 1024}
	}
	if c.Workload == (Workload{}) {
		c.Workload = DefaultWorkload
	}
}

// Validate reports the first bad field.
func (c Config) Validate() error {
	switch {
	case c.Nodes < 1 || c.Nodes > 1<<20:
		return fmt.Errorf("sim: nodes = %d, want 1 .. %d", c.Nodes, 1<<20)
	case c.RanksPerNode < 1 || c.RanksPerNode > 1<<10:
		return fmt.Errorf("sim: ranks_per_node = %d, want 1 .. %d", c.RanksPerNode, 1<<10)
	case c.Cores < 0 || c.Cores > c.Nodes:
		return fmt.Errorf("sim: cores = %d, want 0 (every node) .. %d", c.Cores, c.Nodes)
	case c.Slice <= 0 || c.Latency < 0 || c.Jitter < 0 || c.PerDesc < 0 || c.NodeTimeout <= 0 || c.TXTimeout <= 0:
		return fmt.Errorf("sim: durations must be positive: slice %v, latency %v, jitter %v, per_desc %v, node_timeout %v, tx_timeout %v",
			c.Slice, c.Latency, c.Jitter, c.PerDesc, c.NodeTimeout, c.TXTimeout)
	}
	if err := c.Sched.Validate(); err != nil {
		return err
	}
	return c.Workload.validate()
}

// JobError is what aborts a simulated job, as the master reports it: a node
// that stopped answering, a refused descriptor, a collective mismatch, a
// fatal deadlock (Deadlock set).
type JobError struct {
	Slice    proto.SliceID
	Node     proto.NodeID // -1: not one node's fault
	Why      string
	Deadlock *core.DeadlockError
}

func (e *JobError) Error() string {
	if e.Node >= 0 {
		return fmt.Sprintf("sim: slice %d: node %d %s", e.Slice, e.Node, e.Why)
	}
	return fmt.Sprintf("sim: slice %d: %s", e.Slice, e.Why)
}

// Stats count what a run did.
type Stats struct {
	Slices      uint64 // slices run (strobes)
	Skipped     uint64 // slice numbers the master skipped (late slices)
	Late        uint64 // strobes issued after their due time
	Retries     uint64 // master sync polls that found a node not done (USRDEM+USRMSM+USRTS)
	Descriptors uint64 // exchanged in DEM
	Matches     uint64 // point-to-point transfers matched
	Chunks      uint64
	Bytes       uint64
	Completions uint64
	Collectives uint64
	Deadlocks   uint64 // deadlock reports (DeadlockWarn keeps the job going)
	Finalized   int    // ranks that called MPI_Finalize
	Exited      int    // ranks that exited without MPI_Init
}

// Sim is a deterministic simulation of a BCS-MPI job: a master, Nodes
// agents with their ranks, and a network, all advanced by Step in one
// goroutine. The same Config and seed give the same run, bit for bit. Not
// safe for concurrent use.
type Sim struct {
	cfg    Config
	rng    *rand.Rand
	wseed  uint64
	inj    Injector
	master *strobe.Master
	now    clock.Time
	k      proto.SliceID

	nodeOf  []proto.NodeID
	ranks   []*rank
	queue   [][]proto.Descriptor // per node: posted during the current slice
	batch   [][]proto.Descriptor // per node: drained at the strobe
	all     []proto.Descriptor
	status  []uint8
	held    [][]proto.Completion // per node: completed, not yet published
	acc     [][]byte             // per node staging areas, grown on demand
	foldTmp []byte
	bytes   []uint64 // per node, this slice
	silent  []bool

	cores   []*core.Node         // replicas, by ascending node
	pubs    [][]proto.Completion // per replica: what its core published last
	coreAt  []int                // node -> index in cores, or -1
	program []round
	scratch []proto.Rank

	xfers map[uint64]*xferState
	links map[link][]*xferState
	colls map[collKey]*collRec
	reqs  map[reqKey]collKey

	sumCache map[sumKey]*sumEntry

	finalized int
	stats     Stats
	trace     hasher // everything, timing included
	content   hasher // plans without slice numbers, statuses, completions
	err       error
	done      bool

	// Gang scheduling (gang.go): paused while the gang runs another job in
	// this slice; gateSeen[n] lists the slices node n applied a change in.
	paused   bool
	gateSeen [][]GateChange
}

type collKey struct {
	comm proto.CommID
	seq  uint32
}

type reqKey struct {
	rank proto.Rank
	req  uint32
}

// collRec follows one collective call: the last slice a member's
// descriptor was exchanged in, and the slice it completed in.
type collRec struct {
	lastDEM, done proto.SliceID
	posted, left  int
}

// New returns a simulation of cfg. rng decides the workload, the network's
// jitter and which nodes run replicas; nothing else is random.
func New(cfg Config, rng *rand.Rand) (*Sim, error) {
	cfg.defaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	s := &Sim{cfg: cfg, rng: rng, wseed: rng.Uint64(), inj: cfg.Inject,
		xfers: map[uint64]*xferState{}, links: map[link][]*xferState{}, colls: map[collKey]*collRec{}, reqs: map[reqKey]collKey{}, sumCache: map[sumKey]*sumEntry{},
		trace: fnvOffset, content: fnvOffset}
	if s.inj == nil {
		s.inj = Injectors(nil)
	}
	R := cfg.Nodes * cfg.RanksPerNode
	s.nodeOf = make([]proto.NodeID, R)
	_, _, _, _, list := s.addrs()
	mem := list + 4*uint64(max(cfg.Workload.Group, (R+s.strideFor(R)-1)/s.strideFor(R)))
	s.ranks = make([]*rank, R)
	block := make([]byte, uint64(R)*mem) // one allocation for every rank's memory
	for r := range s.ranks {
		s.nodeOf[r] = proto.NodeID(r / cfg.RanksPerNode)
		s.ranks[r] = &rank{id: proto.Rank(r), mem: block[uint64(r)*mem : uint64(r+1)*mem : uint64(r+1)*mem]}
	}
	s.queue = make([][]proto.Descriptor, cfg.Nodes)
	s.batch = make([][]proto.Descriptor, cfg.Nodes)
	s.held = make([][]proto.Completion, cfg.Nodes)
	s.acc = make([][]byte, cfg.Nodes)
	s.bytes = make([]uint64, cfg.Nodes)
	s.silent = make([]bool, cfg.Nodes)
	s.status = make([]uint8, R)
	s.coreAt = make([]int, cfg.Nodes)
	for i := range s.coreAt {
		s.coreAt[i] = -1
	}
	var picked []int
	if cfg.Cores == 0 || cfg.Cores == cfg.Nodes {
		for n := range cfg.Nodes {
			picked = append(picked, n)
		}
	} else {
		picked = append(picked, 0)
		if cfg.Cores > 1 {
			picked = append(picked, cfg.Nodes-1)
		}
		for len(picked) < cfg.Cores {
			if n := rng.IntN(cfg.Nodes); !slices.Contains(picked, n) {
				picked = append(picked, n)
			}
		}
		slices.Sort(picked)
	}
	for _, n := range picked {
		s.coreAt[n] = len(s.cores)
		s.cores = append(s.cores, core.New(core.Config{Node: proto.NodeID(n), NodeOf: s.nodeOf, Sched: cfg.Sched, Restart: cfg.Restart,
			DeadlockSlices: cfg.DeadlockSlices, DeadlockWarn: cfg.DeadlockWarn}))
	}
	s.pubs = make([][]proto.Completion, len(s.cores))
	s.master = strobe.NewMaster(strobe.Config{Slice: cfg.Slice, Nodes: cfg.Nodes}, clock.Time(cfg.Slice))
	return s, nil
}

func (s *Sim) strideFor(R int) int { return max(1, R/s.cfg.Workload.Strided) }

// Replicas lists the nodes that run a full core.Node.
func (s *Sim) Replicas() []proto.NodeID {
	var ns []proto.NodeID
	for n, i := range s.coreAt {
		if i >= 0 {
			ns = append(ns, proto.NodeID(n))
		}
	}
	return ns
}

func (s *Sim) inject(p Point, e *Effect) { s.inj.Inject(p, e) }

// Done reports whether the job is over: every rank finalized or exited, or
// an error stopped it (Err).
func (s *Sim) Done() bool { return s.done }

// Err is the error that stopped the job, if any.
func (s *Sim) Err() error { return s.err }

// Stats are the counters so far.
func (s *Sim) Stats() Stats {
	st := s.stats
	st.Finalized, st.Exited = s.finalized, 0
	for _, rk := range s.ranks {
		if rk.state == sExited {
			st.Exited++
		}
	}
	return st
}

// TraceHash digests the whole run so far: every plan (identical on every
// replica), every status byte, every completion and every slice's timing. Two
// runs with the same Config, injectors and seed have the same TraceHash.
func (s *Sim) TraceHash() uint64 { return uint64(s.trace) }

// ContentHash digests what was decided and delivered, without slice numbers
// and timing: faults that only delay (a slow node, a slow link) change the
// TraceHash but not the ContentHash.
func (s *Sim) ContentHash() uint64 { return uint64(s.content) }

// Slice is the last slice run.
func (s *Sim) Slice() proto.SliceID { return s.k }

// Run steps until the job is done or maxSlices slices have run; it returns
// the error that stopped the job.
func (s *Sim) Run(maxSlices int) error {
	for i := 0; i < maxSlices && !s.done; i++ {
		s.Step()
	}
	return s.err
}

func (s *Sim) fail(err error) {
	if s.err == nil {
		s.err = err
	}
	s.done = true
}

// lat is one message's one-way latency.
func (s *Sim) lat() clock.Time {
	return clock.Time(s.cfg.Latency) + clock.Time(s.rng.Int64N(int64(s.cfg.Jitter)+1))
}

// collect is the master waiting for every node's report of microphase ph,
// in node order, as nicthread's RemoteNodes does: ready(n) is when node n
// would have finished it, counted from the broadcast at s.now; a report not
// yet there is a sync retry; one later than limit ends the job.
func (s *Sim) collect(ph strobe.Phase, name string, limit time.Duration, ready func(n int) clock.Time) error {
	mt := s.now
	for n := range s.cfg.Nodes {
		e := Effect{RecvFrom: -1}
		s.inject(Point{Op: OpReport, Slice: s.k, Phase: name, Node: proto.NodeID(n)}, &e)
		s.silent[n] = s.silent[n] || e.Silent
		at := ready(n) + clock.Time(e.Delay)
		if s.silent[n] || at-mt > clock.Time(limit) {
			s.now = mt + clock.Time(limit)
			return &JobError{Slice: s.k, Node: proto.NodeID(n), Why: fmt.Sprintf("stopped answering: no %s report for slice %d within %v (node_timeout)", name, s.k, limit)}
		}
		if at > mt {
			s.master.Retry()
			mt = at
		}
		if _, err := s.master.Arrive(proto.NodeID(n), ph, s.k, mt); err != nil {
			panic(fmt.Sprintf("sim: the master refused node %d's %s: %v", n, name, err))
		}
	}
	s.now = mt
	return nil
}

// Step runs one slice: strobe, DEM, MSM, TX, then every rank's code.
func (s *Sim) Step() {
	if s.done {
		return
	}
	_, due := s.master.Due()
	s.now = max(s.now, due)
	s.k = s.master.Strobe(s.now)
	k := s.k
	s.stats.Slices++
	s.gate(k) // the gang's decision, carried by this slice's DEM to every node
	// DEM: publish (restart policy slice), then drain the rings and read
	// the status bytes.
	start := s.now
	for i, c := range s.cores {
		pub, err := c.DEM(k)
		if err != nil {
			panic(fmt.Sprintf("sim: %v", err))
		}
		s.pubs[i] = append(s.pubs[i][:0], pub...)
	}
	s.publish(s.cfg.Restart == core.RestartSlice, "strobe")
	if s.err != nil {
		s.done = true
		return
	}
	s.all = s.all[:0]
	for n := range s.cfg.Nodes {
		s.batch[n], s.queue[n] = s.queue[n], s.batch[n][:0]
		s.all = append(s.all, s.batch[n]...)
	}
	for r, rk := range s.ranks {
		s.status[r] = rk.status()
	}
	for _, d := range s.all {
		if d.Kind == proto.KindColl && d.Coll != proto.CollSplit {
			key := collKey{d.Comm, d.CollSeq}
			c := s.colls[key]
			if c == nil {
				c = &collRec{}
				s.colls[key] = c
			}
			c.lastDEM = k
			c.posted++
			s.reqs[reqKey{d.Rank, d.Req}] = key
		}
	}
	s.stats.Descriptors += uint64(len(s.all))
	perDesc := clock.Time(s.cfg.PerDesc)
	if err := s.collect(strobe.PhaseDEM, "DEM", s.cfg.NodeTimeout, func(n int) clock.Time {
		return start + s.lat() + perDesc*clock.Time(len(s.batch[n])) + s.lat()
	}); err != nil {
		s.fail(err)
		return
	}
	// MSM on every replica; the plans must be identical.
	bcast := s.now
	var plan *core.Plan
	var first uint64
	var dl *core.DeadlockError
	status := s.status
	if s.paused { // as nicthread's Agent: a descheduled slice is not a deadlock slice
		status = nil
	}
	for i, c := range s.cores {
		p, err := c.MSM(k, s.all, status)
		var d *core.DeadlockError
		switch {
		case errors.As(err, &d):
			if i == 0 {
				dl = d
			} else if dl == nil || d.Report != dl.Report {
				s.fail(fmt.Errorf("sim: slice %d: replica %d of %d reported a different deadlock verdict than the first", k, i, len(s.cores)))
				return
			}
		case err != nil:
			var de *core.DescriptorError
			if errors.As(err, &de) {
				s.fail(&JobError{Slice: k, Node: s.nodeOf[de.D.Rank], Why: de.Error()})
				return
			}
			var se *core.CollError
			if !errors.As(err, &se) {
				panic(fmt.Sprintf("sim: %v", err))
			}
			s.fail(&JobError{Slice: k, Node: -1, Why: se.Why})
			return
		case i > 0 && dl != nil:
			s.fail(fmt.Errorf("sim: slice %d: the first replica reported a deadlock, replica %d did not", k, i))
			return
		}
		h := hashPlan(p, true)
		if i == 0 {
			plan, first = p, h
		} else if h != first {
			s.fail(fmt.Errorf("sim: slice %d: node %d planned differently from node %d (plan hash %#x, want %#x)", k, s.Replicas()[i], s.Replicas()[0], h, first))
			return
		}
	}
	if err := s.collect(strobe.PhaseMSM, "MSM", s.cfg.NodeTimeout, func(n int) clock.Time {
		return bcast + s.lat() + perDesc*clock.Time(len(s.all)) + s.lat()
	}); err != nil {
		s.fail(err)
		return
	}
	if dl != nil {
		s.stats.Deadlocks++
		if dl.Fatal {
			s.fail(&JobError{Slice: k, Node: -1, Why: dl.Report, Deadlock: dl})
			return
		}
	}
	if err := s.fairness(plan); err != nil {
		s.fail(err)
		return
	}
	// TX: move the plan's data; every node reports when its link is done.
	for _, c := range s.cores {
		if err := c.TX(k); err != nil {
			panic(fmt.Sprintf("sim: %v", err))
		}
	}
	clear(s.bytes)
	s.execute(plan, s.bytes)
	bcast = s.now
	if err := s.collect(strobe.PhaseTX, "TX", s.cfg.NodeTimeout+s.cfg.TXTimeout, func(n int) clock.Time {
		e := Effect{RecvFrom: -1}
		s.inject(Point{Op: OpLink, Slice: k, Node: proto.NodeID(n)}, &e)
		t := clock.Time(s.bytes[n] * 1000 / s.cfg.Bandwidth) // bytes per µs → ns
		if e.Slowdown > 1 {
			t *= clock.Time(e.Slowdown)
		}
		return bcast + s.lat() + t + s.lat()
	}); err != nil {
		s.fail(err)
		return
	}
	for _, c := range plan.Completions {
		n := s.nodeOf[c.Rank]
		s.held[n] = append(s.held[n], c)
		if c.Kind == proto.KindColl {
			if err := s.collDone(c, k); err != nil {
				s.fail(err)
				return
			}
		}
	}
	for i, c := range s.cores {
		pub, err := c.EndSlice(k)
		if err != nil {
			panic(fmt.Sprintf("sim: %v", err))
		}
		s.pubs[i] = append(s.pubs[i][:0], pub...)
	}
	s.publish(s.cfg.Restart == core.RestartEarly, "end of TX")
	if s.err != nil {
		s.done = true
		return
	}
	s.record(plan)
	// The ranks run for the rest of the slice (unless the gang stopped them).
	for _, rk := range s.ranks {
		if s.paused {
			break
		}
		if err := s.runRank(rk); err != nil {
			s.fail(err)
			return
		}
	}
	if s.finished() {
		s.done = true
	}
}

func (s *Sim) finished() bool {
	for _, rk := range s.ranks {
		if rk.state != sFinalized && rk.state != sExited {
			return false
		}
	}
	return true
}

// publish publishes every node's held completions to its ranks when now is
// set (the restart policy's point), and checks that each replica's core
// published the same ones, in the same order (nothing when now is not set).
func (s *Sim) publish(now bool, where string) {
	for n, h := range s.held {
		if !now {
			h = nil
		}
		if i := s.coreAt[n]; i >= 0 && !slices.Equal(s.pubs[i], h) {
			s.fail(fmt.Errorf("sim: slice %d: at the %s node %d's core published %d completions, the agent model %d", s.k, where, n, len(s.pubs[i]), len(h)))
			return
		}
		if !now {
			continue
		}
		for _, c := range h {
			rk := s.ranks[c.Rank]
			rk.inbox = append(rk.inbox, c)
		}
		s.held[n] = h[:0]
	}
}

// collDone checks that every member of a collective completes in the same
// slice, and not before the slice the last member's descriptor was exchanged.
func (s *Sim) collDone(c proto.Completion, k proto.SliceID) error {
	rq := reqKey{c.Rank, c.Req}
	key, ok := s.reqs[rq]
	if !ok {
		return nil // a split
	}
	delete(s.reqs, rq)
	rec := s.colls[key]
	if rec.done == 0 {
		rec.done = k
		rec.left = rec.posted
	}
	if rec.done != k || k < rec.lastDEM {
		return fmt.Errorf("sim: collective #%d on communicator %d: rank %d completed in slice %d, others in %d, last member exchanged in %d", key.seq, key.comm, c.Rank, k, rec.done, rec.lastDEM)
	}
	if rec.left--; rec.left == 0 {
		delete(s.colls, key)
		s.stats.Collectives++
	}
	return nil
}

// record adds the slice to the hashes and counters.
func (s *Sim) record(p *core.Plan) {
	rec := s.master.Record()
	s.stats.Skipped += rec.Skipped
	if rec.Late > 0 {
		s.stats.Late++
	}
	s.stats.Retries += rec.USRDEM + rec.USRMSM + rec.USRTS
	s.stats.Chunks += uint64(len(p.Chunks))
	s.stats.Matches += uint64(len(p.Matches))
	s.stats.Completions += uint64(len(p.Completions))
	for _, b := range s.bytes {
		s.stats.Bytes += b
	}
	t := &s.trace
	t.u64(uint64(s.k))
	t.u64(uint64(rec.Start))
	t.u64(uint64(rec.GTDEM))
	t.u64(uint64(rec.GTMSM))
	t.u64(uint64(rec.GTTS))
	t.u64(rec.USRDEM<<42 | rec.USRMSM<<21 | rec.USRTS)
	ph := hashPlan(p, true)
	t.u64(ph)
	c := &s.content
	c.u64(hashPlan(p, false))
	for _, st := range s.status {
		t.u64(uint64(st))
		c.u64(uint64(st))
	}
}
