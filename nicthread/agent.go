package nicthread

import (
	"errors"
	"fmt"
	"net"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bcsmpi/bcsmpi/internal/check"
	"github.com/bcsmpi/bcsmpi/internal/core"
	"github.com/bcsmpi/bcsmpi/internal/proto"
	"github.com/bcsmpi/bcsmpi/internal/reduce"
	"github.com/bcsmpi/bcsmpi/internal/replay"
	"github.com/bcsmpi/bcsmpi/internal/shm"
	"github.com/bcsmpi/bcsmpi/internal/unix"
)

// ErrJob is matched by every error that must abort the job.
var ErrJob = errors.New("nicthread: job failed")

// JobError names the rank (or -1) and says why the job must abort.
type JobError struct {
	Node proto.NodeID
	Rank proto.Rank
	Why  string
}

func (e *JobError) Error() string {
	if e.Node < 0 && e.Rank < 0 { // about the whole job (a deadlock)
		return e.Why
	}
	if e.Rank >= 0 {
		return fmt.Sprintf("rank %d (node %d): %s", e.Rank, e.Node, e.Why)
	}
	return fmt.Sprintf("node %d: %s", e.Node, e.Why)
}
func (e *JobError) Is(t error) bool { return t == ErrJob }

type inlineKey struct {
	rank proto.Rank
	seq  uint64
}

// SliceStats are an agent's local measurements of one slice (EMDS local metrics).
type SliceStats struct {
	Slice    proto.SliceID
	Start    time.Duration // local time the strobe was handled, since the agent started
	LETTS    time.Duration // since the previous strobe handled here
	LTDEM    time.Duration // drain time
	LTMSM    time.Duration
	LTTS     time.Duration // strobe → end of TX
	NP2PDEM  uint32
	NP2PMSM  uint32
	NCOLLDEM uint32
	NCOLLMSM uint32
	BPTS     uint32 // ranks asleep in a blocking call at the strobe
	Bytes    uint64 // bytes this node sent or copied locally
	// LTR are the agent's internal routines (emds documents them): 0 drain
	// rings, 1 publish completions, 2 intra-node copies, 3 sends to other
	// nodes, 4 wait for other nodes' chunks.
	LTR [5]time.Duration
	// Gang scheduling (Gate): Ran is false in a slice the node's ranks of
	// this job were stopped for another job; Switch is what stopping or
	// continuing them cost at this slice's strobe (0: no switch).
	Ran    bool
	Switch time.Duration
}

// Values lays the stats out in the order of emds.LocalMetrics.
func (s *SliceStats) Values(out []int64) []int64 {
	return append(out[:0], int64(s.LETTS), int64(s.LTDEM), int64(s.LTMSM), int64(s.LTTS),
		int64(s.NP2PDEM), int64(s.NP2PMSM), int64(s.NCOLLDEM), int64(s.NCOLLMSM), int64(s.BPTS),
		int64(s.LTR[0]), int64(s.LTR[1]), int64(s.LTR[2]), int64(s.LTR[3]), int64(s.LTR[4]), b2i(s.Ran), int64(s.Switch))
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// Agent is one node's runtime. DEM, MSM and TX must be called from one
// goroutine, in order; OnData may be called from another goroutine during TX.
type Agent struct {
	node    proto.NodeID
	core    *core.Node
	region  *shm.Region
	blocks  []*shm.RankBlock
	localOf []int        // world rank → local block index, -1 if remote
	rankOf  []proto.Rank // local block index → world rank: the agent's own table (validate.go)
	size    int

	// Per block, the agent's own record of the rank (see validate.go).
	spawned   []atomic.Int64 // the process the launcher started (Spawned), 0 until told
	pids      []atomic.Int64 // the process that attached, once verified; read by OnData too
	lastSeq   []uint64
	lastPost  []proto.SliceID
	lastState []uint32

	// Pull orders (see doc.go), per local block, preallocated.
	pulls    [][]shm.Pull         // this slice's order for the block
	pullIdx  [][]int32            // the plan's chunk index of each entry
	pullSeq  []uint32             // number of the block's last order
	pullNext []int                // pullable chunks of the block met so far in the TX loop
	posted   []int                // blocks an order was posted to in this slice (each rank was offering)
	took     []bool               // per block: in posted
	noPull   []bool               // the rank left an order unfinished once: the agent copies for it
	spanNow  func() time.Duration // spanResult's clock (tests); nil: a.now
	pullAt   time.Duration        // when the last order of this slice was posted
	pullSt   PullStats
	sp       span  // the span in flight on this node (span.go)
	spanErr  error // a finding at a span's end within spanSettle, for the next TX
	// Span orders whose receiver was stopped mid-copy (spanSettle), until
	// their done word shows the copy ended, and the completions of their
	// senders held back meanwhile (span.go, holdBack).
	stoppedOrds []stoppedOrder
	heldBack    []proto.Completion
	pubBuf      []proto.Completion

	inline     map[inlineKey][]byte
	freeInline [][]byte
	bounce     []byte      // bounce buffer: a point-to-point chunk read from its sender, on its way to the receiver or the wire
	piece      proto.Chunk // the piece of a chunk larger than bounce that move copies (movePieces, spanCopy)
	batch      []proto.Descriptor
	status     []uint8       // this node's ranks, world-rank order (see proto.DescribeStatus)
	exited     []atomic.Bool // per local rank: its process has exited (RankExited)
	woken      []bool
	// eagerMatched: per local block, the rank's eager sends
	// (proto.Descriptor.Eager) matched so far, the agent's own count, which
	// it stores in the block's eager-matched word (noteEager).
	eagerMatched []uint64
	onWarn       func(string)

	acc     []byte // collective staging area (core.SchedConfig.StagingSize)
	foldTmp []byte
	plan    atomic.Pointer[core.Plan]
	pending [proto.Stages]atomic.Int64 // per stage, inbound chunks of this slice not yet written
	expect  [proto.Stages]int64        // per stage, inbound chunks of this slice (one token on arrived when all are in)
	arrived [proto.Stages]chan struct{}
	dataErr atomic.Pointer[error]
	send    func(node proto.NodeID, m *proto.Msg) error
	connect func(node proto.NodeID)
	dataMsg proto.Msg

	// Peer silence (AgentConfig.PeerTimeout): per stage and source node,
	// inbound chunks not yet written; per node, when its last data frame
	// arrived (a.now()). owed and lastFrom have one entry per node of
	// NodeOf (max + 1): they are indexed only by a chunk's SrcNode, which
	// the scheduler takes from NodeOf for a rank core.CheckDescriptor
	// admitted (a descriptor from any node naming a rank outside the job
	// fails MSM first), and by OnData's from once it equals that SrcNode:
	// never out of range (TestOutOfRangeNodeIsAJobError).
	peerTimeout time.Duration
	quiet       func(proto.NodeID) time.Duration // AgentConfig.Quiet
	hosts       []string
	owed        [proto.Stages][]atomic.Int64
	owedN       [proto.Stages][]int64 // msm's scratch
	lastFrom    []atomic.Int64
	peerTick    *time.Timer // await's, reused

	chk *checks // the opt-in checks (flow.go); nil: none

	t0, lastStrobe time.Duration
	stats          SliceStats
	onSlice        func(*SliceStats)
	onPlan         func(*core.Plan)
	onLog          func(proto.Rank, []byte)
	logDec         []replay.Decoder // per local rank: the records drained so far
	logBuf         []byte

	// Gang scheduling (Gate).
	onRun   func(run bool)
	paused  bool          // the job does not run in this slice
	stopped bool          // the gang's decision for this slice (Gate): the job does not run; SliceStats.Ran
	holdTo  proto.SliceID // a hold (MsgHold) keeps the ranks stopped through the DEM of this slice (gateAt)

	// The master's frames read while TX waits (AgentEndpoint's watcher,
	// await): a hold is applied there, a stop ends the wait.
	onWait    func()        // a wait in TX has lasted waitWatch: read the master's frames meanwhile; nil: nobody can
	interject chan struct{} // cap 1: holdReq or stopReq was set
	holdReq   atomic.Uint64 // the latest held slice read while TX waits, not yet applied (0: none)
	stopReq   atomic.Bool   // the master's stop was read while TX waits
	switchNS  time.Duration // cost of the last Gate that switched, for the next DEM's stats

	// A send to another node that blocks (the node takes nothing: its
	// socket buffer is full) parks TX there. Under gmu (the gate's lock)
	// the watcher may then stop the ranks itself (holdRead): TX takes gmu
	// before it goes on from the send, so the agent's state is the
	// watcher's while inSend. sendTimer, armed at a TX's first send and
	// firing every waitWatch until the TX ends (txWatch), starts the
	// watcher (onWait) when it finds the same send under way twice
	// (sendSeq, seenSeq): a send blocked for waitWatch to twice that.
	gmu       sync.Mutex
	inSend    bool   // under gmu
	sendSeq   uint64 // under gmu: sends so far
	seenSeq   uint64 // under gmu: sendSeq at the timer's last firing
	txWatch   bool   // under gmu: the timer is armed for this TX
	sendTimer *time.Timer
	pullsOut  bool // this slice's pull orders are posted and not yet all served (postPulls .. waitPulls)

	// Recording and replaying the slice log (Level B, levelb.go).
	onExchange func(proto.SliceID, []proto.Descriptor, *core.Plan)
	lb         *levelB // replaying a slice log (levelb.go); nil: not
}

// AgentConfig describes a node.
type AgentConfig struct {
	Node    proto.NodeID
	NodeOf  []proto.NodeID // world rank → node
	Sched   core.SchedConfig
	Restart core.Restart
	Region  *shm.Region // with one block per local rank, in world-rank order
	// Send carries data frames to other nodes (nil with a single node).
	Send func(node proto.NodeID, m *proto.Msg) error
	// Connect, if set, is told in MSM of each node this node's part of the
	// plan sends to, before TX sends anything: the transport's cue to dial a
	// connection not yet made (transport.Mesh.Connect). It must return at
	// once; it is called once per outbound chunk, so it must be cheap when
	// the connection exists.
	Connect func(node proto.NodeID)
	// OnSlice, if set, receives the local measurements of every slice.
	OnSlice func(*SliceStats)
	// OnPlan, if set, sees the plan of every slice after MSM.
	OnPlan func(*core.Plan)
	// Deadlock detection (see core.Config); OnWarn receives the report when
	// DeadlockWarn is set (called on node 0 only).
	DeadlockSlices uint64
	DeadlockWarn   bool
	OnWarn         func(string)
	// Check selects the opt-in checks (BCS_CHECK; flow.go): flow verifies
	// every chunk, buffers compares receive buffers before writing them.
	Check check.Mode
	// OnLog, if set, receives every rank's replay records (a recorded job:
	// the region has a log ring) as the agent drains them at each strobe and
	// in DrainLogs, checked and whole (package internal/replay); the bytes
	// are valid only during the call, which runs inside the slice on the
	// agent's thread: it must copy them and return, no I/O.
	OnLog func(r proto.Rank, records []byte)
	// OnRun, if set, stops (false) or continues (true) this node's ranks when
	// the gang's decision for the job changes (Gate); it runs on the agent's
	// thread at the strobe, before DEM, and must not block.
	OnRun func(run bool)
	// OnExchange, if set, sees every slice's exchanged descriptors and its
	// plan after MSM (recording Level B: levelb.go); same rules as OnLog.
	OnExchange func(k proto.SliceID, all []proto.Descriptor, p *core.Plan)
	// Slices, if set, is a recording's slice log to replay (levelb.go).
	Slices *replay.Slices
	// PeerTimeout, if set and shorter than TX's timeout, bounds how long
	// TX waits for a node that owes this node chunks of the slice and
	// sends none of them (nor any other data frame): the slice fails
	// naming that node, as a cut link or a partition between two agents
	// that both still answer the master would otherwise stall until
	// TX's timeout. The launcher across hosts sets it to node_timeout.
	PeerTimeout time.Duration
	// Quiet, if set, is how long ago bytes last came from node n on the
	// mesh (transport.Mesh.Quiet): a node in the middle of a large data
	// frame, or slow, is not silent though no whole frame has arrived.
	Quiet func(n proto.NodeID) time.Duration
	// Hosts, if set, names each node's host in messages (node n runs on
	// Hosts[n]).
	Hosts []string
}

// NewAgent prepares an agent; the region's rank blocks are assigned to the
// node's ranks in increasing world-rank order. The launcher must report each
// rank's process with Spawned: a block is drained only once the process that
// attached to it has been checked against it.
func NewAgent(cfg AgentConfig) *Agent {
	if cfg.Check.Buffers {
		// The buffer checks compare a receive buffer piece by piece before
		// each write within a slice; a span's copy is not made for them.
		// Under flow alone spans stay: the receiver sums a span as it
		// copies it and the agent compares when it ends (flow.go,
		// flowSpan). The mode is the job's, so every node drops spans
		// alike and computes the same plans.
		cfg.Sched.PullBytesPerSlice = 0
	}
	a := &Agent{
		node: cfg.Node,
		core: core.New(core.Config{Node: cfg.Node, NodeOf: cfg.NodeOf, Sched: cfg.Sched, Restart: cfg.Restart,
			DeadlockSlices: cfg.DeadlockSlices, DeadlockWarn: cfg.DeadlockWarn}),
		onWarn:    cfg.OnWarn,
		region:    cfg.Region,
		localOf:   make([]int, len(cfg.NodeOf)),
		size:      len(cfg.NodeOf),
		inline:    make(map[inlineKey][]byte),
		bounce:    make([]byte, cfg.Sched.BytesPerSliceMax),
		acc:       make([]byte, cfg.Sched.StagingSize(len(cfg.NodeOf))),
		foldTmp:   make([]byte, cfg.Sched.BytesPerSliceMax),
		arrived:   [proto.Stages]chan struct{}{make(chan struct{}, 1), make(chan struct{}, 1), make(chan struct{}, 1)},
		interject: make(chan struct{}, 1),
		send:      cfg.Send,
		connect:   cfg.Connect,
		onSlice:   cfg.OnSlice,
		onPlan:    cfg.OnPlan,
		onLog:     cfg.OnLog,
		onRun:     cfg.OnRun,
		t0:        time.Duration(unix.Now()),
		chk:       newChecks(cfg.Check, cfg.Sched.BytesPerSliceMax, cfg.Region.G.Ranks, cfg.Region.G.ReqMax),

		peerTimeout: cfg.PeerTimeout,
		quiet:       cfg.Quiet,
		hosts:       cfg.Hosts,
	}
	nodes := 0
	for r, n := range cfg.NodeOf {
		if n < 0 {
			panic(fmt.Sprintf("nicthread: NodeOf[%d] = %d: the launcher places every rank on a node 0 or more", r, n))
		}
		nodes = max(nodes, int(n)+1)
	}
	for s := range a.owed {
		a.owed[s], a.owedN[s] = make([]atomic.Int64, nodes), make([]int64, nodes)
	}
	a.lastFrom = make([]atomic.Int64, nodes)
	for r, n := range cfg.NodeOf {
		a.localOf[r] = -1
		if n == cfg.Node {
			b := cfg.Region.Block(len(a.blocks))
			b.SetWorldRank(proto.Rank(r))
			a.localOf[r] = len(a.blocks)
			a.blocks = append(a.blocks, b)
			a.rankOf = append(a.rankOf, proto.Rank(r))
		}
	}
	n := len(a.blocks)
	a.spawned, a.pids = make([]atomic.Int64, n), make([]atomic.Int64, n)
	a.lastSeq, a.lastPost, a.lastState = make([]uint64, n), make([]proto.SliceID, n), make([]uint32, n)
	a.woken = make([]bool, len(a.blocks))
	a.eagerMatched = make([]uint64, len(a.blocks))
	a.pulls, a.pullIdx = make([][]shm.Pull, n), make([][]int32, n)
	for l := range a.pulls {
		a.pulls[l], a.pullIdx[l] = make([]shm.Pull, 0, shm.PullMax), make([]int32, 0, shm.PullMax)
	}
	a.pullSeq, a.pullNext, a.posted, a.took, a.noPull = make([]uint32, n), make([]int, n), make([]int, 0, n), make([]bool, n), make([]bool, n)
	if siblingReadsRefused() {
		// Yama refuses this host's ranks each other's memory: none serves
		// a pull order (the launching host's setting may differ; doc.go).
		for l := range a.noPull {
			a.noPull[l] = true
		}
	}
	a.status = make([]uint8, len(a.blocks))
	a.exited = make([]atomic.Bool, len(a.blocks))
	if a.onLog != nil && cfg.Region.G.LogBytes > 0 {
		a.logDec = make([]replay.Decoder, n)
		for l := range a.logDec {
			a.logDec[l].Ranks, a.logDec[l].CheckOnly = a.size, true
		}
		a.logBuf = make([]byte, 0, cfg.Region.G.LogBytes)
	}
	a.onExchange = cfg.OnExchange
	if cfg.Slices != nil {
		a.lb = newLevelB(cfg.Slices, n, cfg.NodeOf)
	}
	return a
}

// RankExited tells the agent that the process of world rank r has exited (the
// launcher reaped it). Before that, a rank that has not called MPI_Init is
// taken as alive and still starting: it may yet post. Safe for concurrent use.
func (a *Agent) RankExited(r proto.Rank) {
	if r >= 0 && int(r) < len(a.localOf) && a.localOf[r] >= 0 {
		a.exited[a.localOf[r]].Store(true)
	}
}

// rankStatus computes the status byte of local rank i from its control page
// and its process's liveness (proto's Status constants say what each means):
// no MPI state yet is "starting" while the process lives and "exited without
// MPI" once it has exited; a rank blocked in a call is "woken" while a
// completion published to it (wake) is newer than the last one it looked at
// (seen), since it can then go on as soon as it runs. The page is the rank's
// to write: a value out of range fails the job naming the rank and field.
func (a *Agent) rankStatus(i int, b *shm.RankBlock) (uint8, error) {
	switch st := b.State(); st {
	case shm.StateNone:
		if a.exited[i].Load() {
			return proto.StatusNotMPI, nil
		}
		return proto.StatusStarting, nil
	case shm.StateFinalized:
		return proto.StatusFinalized, nil
	case shm.StateInit:
	default:
		return 0, a.fail(a.rankOf[i], "control page: state = %d, want %d (none), %d (init) or %d (finalized)", st, shm.StateNone, shm.StateInit, shm.StateFinalized)
	}
	c := b.Blocked()
	if int(c) >= len(proto.CallNames) {
		return 0, a.fail(a.rankOf[i], "control page: blocked call code = %d, want 0 .. %d", c, len(proto.CallNames)-1)
	}
	if c != 0 && b.Seen() != atomic.LoadUint32(b.Wake()) {
		return proto.StatusWoken | c, nil
	}
	return c, nil
}

// PullStats count the pull orders of an agent (see doc.go).
type PullStats struct {
	Served     uint64 // orders the receiving rank took and finished
	Revoked    uint64 // orders not taken within the grace period: the agent copied
	Unfinished uint64 // orders the rank took but did not finish (the agent finished them; the rank gets no more)
	Bytes      uint64 // bytes the ranks copied themselves
	Spans      uint64 // spans (span.go) this node carried, whoever copied them
	Stopped    uint64 // span orders whose receiver was stopped mid-copy (a gang switch): the agent copied the rest
}

// Pulls is the agent's pull-order count so far. Call it from the goroutine
// that drives the agent, or after it has stopped.
func (a *Agent) Pulls() PullStats { return a.pullSt }

// Node is the agent's node id.
func (a *Agent) Node() proto.NodeID { return a.node }

// Blocks are the rank blocks of the node's ranks, in world-rank order.
func (a *Agent) Blocks() []*shm.RankBlock { return a.blocks }

func (a *Agent) now() time.Duration { return time.Duration(unix.Now()) - a.t0 }

func (a *Agent) fail(r proto.Rank, format string, args ...any) error {
	return &JobError{Node: a.node, Rank: r, Why: fmt.Sprintf(format, args...)}
}

// DEM runs the DEM microphase of slice k on this node (the master's strobe
// begins it) and returns its batch (valid until the next DEM).
func (a *Agent) DEM(k proto.SliceID) ([]proto.Descriptor, error) {
	if a.lb != nil {
		return a.demReplay(k)
	}
	start := a.now()
	a.stats = SliceStats{Slice: k, Start: start, Ran: !a.stopped, Switch: a.switchNS}
	a.switchNS = 0
	if a.lastStrobe != 0 {
		a.stats.LETTS = start - a.lastStrobe
	}
	a.lastStrobe = start
	pub, err := a.core.DEM(k)
	if err != nil {
		return nil, err
	}
	a.publish(pub)
	t1 := a.now()
	a.stats.LTR[1] += t1 - start
	a.region.SetSlice(k)
	a.batch = a.batch[:0]
	for i, b := range a.blocks {
		attached, err := a.checkControl(i)
		if err != nil {
			return nil, err
		}
		if atomic.LoadUint32(b.Sleeping()) != 0 {
			a.stats.BPTS++
		}
		if a.status[i], err = a.rankStatus(i, b); err != nil {
			return nil, err
		}
		if a.noPull[i] && a.status[i] < proto.StatusStarting {
			a.status[i] |= proto.StatusNoPull // every node's scheduler gives it no span (span.go)
		}
		if !attached {
			continue // nothing is drained before the block's process is known
		}
		_, err = b.Drain(k, func(d proto.Descriptor, inl []byte) error {
			if err := a.checkDescriptor(i, k, d); err != nil {
				return err
			}
			if d.Inline {
				a.inline[inlineKey{d.Rank, d.Seq}] = append(a.takeInline(), inl...)
			} else if a.chk != nil {
				a.chk.drained(i, d)
			}
			a.batch = append(a.batch, d)
			return nil
		})
		if err != nil {
			if errors.Is(err, ErrJob) {
				return nil, err
			}
			var fe *shm.FieldError
			if errors.As(err, &fe) {
				return nil, a.violation(i, fe)
			}
			return nil, a.fail(a.rankOf[i], "shared memory: descriptor ring: %v", err)
		}
		if a.logDec != nil {
			if err := a.drainLog(i); err != nil {
				return nil, err
			}
		}
	}
	end := a.now()
	a.stats.LTR[0] = end - t1
	a.stats.LTDEM = end - start
	return a.batch, nil
}

func (a *Agent) takeInline() []byte {
	if n := len(a.freeInline); n > 0 {
		b := a.freeInline[n-1]
		a.freeInline = a.freeInline[:n-1]
		return b[:0]
	}
	return make([]byte, 0, a.region.G.InlineMax)
}

// Status is this node's rank status bytes of the current slice (valid until
// the next DEM), to be sent with the DEM batch.
func (a *Agent) Status() []uint8 { return a.status }

// Unmatched lists the sends no receive ever matched (call after the job).
func (a *Agent) Unmatched() []proto.Descriptor { return a.core.Unmatched() }

// MSM runs the DEM sync result (every node's batch and every rank's status,
// node order) through the scheduler.
func (a *Agent) MSM(k proto.SliceID, all []proto.Descriptor, status []uint8) error {
	if a.lb != nil {
		return a.msmReplay(all, status)
	}
	return a.msm(k, all, status)
}

func (a *Agent) msm(k proto.SliceID, all []proto.Descriptor, status []uint8) error {
	t := a.now()
	if !a.stats.Ran {
		// Deadlock detection counts only slices in which the job ran: no
		// status, no count (core.MSM). The decision is the slice's DEM's,
		// the same on every node of the job, so every replica counts the
		// same slices (a hold, MsgHold, may reach the nodes at different
		// points of the slice: it stops the ranks, not the count).
		status = nil
	}
	p, err := a.core.MSM(k, all, status)
	if err != nil {
		var de *core.DescriptorError
		if errors.As(err, &de) {
			return a.fail(de.D.Rank, "%s", de.Why)
		}
	}
	if se, ok := err.(*core.CollError); ok {
		r := proto.Rank(-1)
		if len(se.Ranks) == 1 {
			r = se.Ranks[0]
		}
		return &JobError{Node: -1, Rank: r, Why: se.Why}
	}
	if dl, ok := err.(*core.DeadlockError); ok {
		if dl.Fatal {
			return &JobError{Node: -1, Rank: -1, Why: dl.Report}
		}
		if a.onWarn != nil && a.node == 0 {
			a.onWarn(dl.Report + "\n(deadlock_action: warn — the job keeps waiting)")
		}
		err = nil
	}
	if err != nil {
		return err
	}
	var n [proto.Stages]int64
	for s := range a.owedN {
		clear(a.owedN[s])
	}
	for i := range p.Chunks {
		if c := &p.Chunks[i]; c.DstNode == a.node && c.SrcNode != a.node {
			n[c.Stage]++
			a.owedN[c.Stage][c.SrcNode]++
		} else if c.SrcNode == a.node && c.DstNode != a.node && a.connect != nil {
			a.connect(c.DstNode)
		}
	}
	a.expect = n
	for s := range n {
		a.pending[s].Store(n[s])
		for src, o := range a.owedN[s] {
			a.owed[s][src].Store(o)
		}
	}
	if a.chk != nil {
		a.chk.reset(p)
	}
	a.plan.Store(p)
	if a.onPlan != nil {
		a.onPlan(p)
	}
	if a.onExchange != nil {
		a.onExchange(k, all, p)
	}
	st := a.core.Stats()
	a.stats.NP2PDEM, a.stats.NP2PMSM = st.NP2PDEM, st.NP2PMSM
	a.stats.NCOLLDEM, a.stats.NCOLLMSM = st.NCOLLDEM, st.NCOLLMSM
	a.stats.LTMSM = a.now() - t
	return nil
}

// TX moves this node's part of the plan of slice k and waits for the chunks
// other nodes send to it. timeout bounds that wait.
func (a *Agent) TX(k proto.SliceID, timeout time.Duration) error {
	var err error
	if a.lb != nil {
		err = a.txReplay(timeout)
	} else {
		err = a.tx(k, timeout)
	}
	if a.sendTimer != nil {
		a.endSendWatch()
	}
	return err
}

func (a *Agent) tx(k proto.SliceID, timeout time.Duration) error {
	if err := a.core.TX(k); err != nil {
		return err
	}
	if a.chk != nil && a.chk.deferSums() { // flow.go: the sums of the last slices' pull orders, those stored
		if err := a.verifyPulls(); err != nil {
			return err
		}
	}
	p := a.plan.Load()
	t4 := time.Duration(0)
	for stage := uint8(0); stage < proto.Stages; stage++ {
		if stage == 1 {
			a.fold(p) // the reduce microphase: stage 0 brought the contributions
		}
		if err := a.sendStage(k, p, stage, timeout); err != nil {
			return err
		}
		t := a.now()
		if a.expect[stage] > 0 {
			if err := a.await(k, stage, timeout); err != nil {
				return err
			}
		}
		t4 += a.now() - t
		if e := a.dataErr.Load(); e != nil {
			return *e
		}
	}
	for _, w := range p.Writes {
		if l := a.localOf[w.Rank]; l >= 0 {
			if err := unix.WriteTo(a.pid(w.Rank), w.Data, w.Addr); err != nil {
				return a.fail(w.Rank, "writing a new communicator's member list: %v", err)
			}
		}
	}
	a.stats.LTR[4] = t4
	if a.chk != nil {
		if err := a.flowEnd(k, p); err != nil {
			return err
		}
	}
	t5 := a.now()
	pub, err := a.core.EndSlice(k)
	if err != nil {
		return err
	}
	a.noteEager(p)
	a.publish(pub)
	a.wake() // a rank whose eager sends were matched, when no completion woke it
	a.stats.LTR[1] += a.now() - t5
	for i := range p.Chunks {
		if c := &p.Chunks[i]; c.Inline && c.Last && c.SrcNode == a.node {
			key := inlineKey{c.Src, c.SendSeq}
			a.freeInline = append(a.freeInline, a.inline[key])
			delete(a.inline, key)
		}
	}
	for _, x := range p.Matches { // a zero-length buffered send moves no chunk
		if x.Send.Inline && x.Send.Len == 0 && a.localOf[x.Send.Rank] >= 0 {
			delete(a.inline, inlineKey{x.Send.Rank, x.Send.Seq})
		}
	}
	for _, d := range p.Consumed { // taken by a receive of another type signature: moves nothing
		key := inlineKey{d.Rank, d.Seq}
		if b, ok := a.inline[key]; ok && a.localOf[d.Rank] >= 0 {
			a.freeInline = append(a.freeInline, b)
			delete(a.inline, key)
		}
	}
	a.stats.LTTS = a.now() - a.stats.Start
	if a.onSlice != nil {
		a.onSlice(&a.stats)
	}
	return nil
}

// sendStage moves this node's outbound chunks of one stage: copies within
// the node, data frames to other nodes. Large point-to-point copies within
// the node go to the receiving ranks as pull orders where they take them.
func (a *Agent) sendStage(k proto.SliceID, p *core.Plan, stage uint8, timeout time.Duration) error {
	if stage == 0 {
		if a.sp.on && k >= a.sp.end { // the span ends here (or ended in a skipped slice): finish it before the next begins
			if err := a.spanStep(k, timeout); err != nil {
				return err
			}
		}
		for i := range p.Chunks {
			if c := &p.Chunks[i]; c.Span != 0 && c.SrcNode == a.node {
				a.spanStart(k, i, c)
			}
		}
		a.postPulls(p)
	}
	for l := range a.pullNext {
		a.pullNext[l] = 0
	}
	for i := range p.Chunks {
		c := &p.Chunks[i]
		if c.SrcNode != a.node || c.Stage != stage || c.Span != 0 {
			continue
		}
		if stage == 0 && a.pullable(c) {
			l := a.localOf[c.Dst]
			a.pullNext[l]++
			if a.took[l] && a.pullNext[l] <= len(a.pulls[l]) {
				a.stats.Bytes += c.Len // the receiver copies it
				continue
			}
		}
		if err := a.move(k, i, c); err != nil {
			return err
		}
	}
	if stage == 0 {
		if err := a.spanStep(k, timeout); err != nil {
			return err
		}
		return a.waitPulls(k, p, timeout)
	}
	return nil
}

// pullMin is the smallest chunk handed to its receiver: below it the wake-up
// of the receiving rank costs more than the agent's second copy. The
// scheduler counts chunks from this size at the pull rate (its
// Config.PullChunkMin, which configs sets to the same shm.PullMin).
const pullMin = shm.PullMin

// pullGrace bounds how long after posting the orders the agent, once its own
// copies are done, waits for a rank to take its order before revoking it and
// copying itself: a few wake-ups of a sleeping thread. Measured with bench/bw
// on the loaded 2-core host: at 50 µs a third to a half of the orders were
// revoked, at 200 µs almost none. A variable for tests, which play the
// receiving rank on a loaded host; never changed while an agent runs.
var pullGrace = 200 * time.Microsecond

// pullable says whether chunk c may be copied by its receiver: a
// point-to-point chunk between two ranks of this node, from the sender's
// buffer (not an inline copy), large enough, to a rank that has not failed
// an order before.
func (a *Agent) pullable(c *proto.Chunk) bool {
	return c.Xfer != 0 && c.Span == 0 && !c.Inline && !c.SrcAcc && !c.DstAcc && c.SrcNode == a.node && c.DstNode == a.node &&
		c.Len >= pullMin && !a.noPull[a.localOf[c.Dst]] && !a.paused // a stopped rank serves no order
}

// postPulls gathers the slice's pullable chunks per receiving rank (at most
// shm.PullMax each; the rest the agent copies) and posts each rank's order
// if the rank is in a blocking call, waking it.
func (a *Agent) postPulls(p *core.Plan) {
	a.posted = a.posted[:0]
	for l := range a.pulls {
		a.pulls[l], a.pullIdx[l], a.took[l] = a.pulls[l][:0], a.pullIdx[l][:0], false
	}
	some := false
	for i := range p.Chunks {
		c := &p.Chunks[i]
		if c.Stage != 0 || !a.pullable(c) {
			continue
		}
		l := a.localOf[c.Dst]
		if len(a.pulls[l]) < shm.PullMax {
			a.pulls[l] = append(a.pulls[l], shm.Pull{PID: int32(a.pid(c.Src)), Req: c.RecvReq, SrcAddr: c.SrcAddr, DstAddr: c.DstAddr, Len: c.Len})
			a.pullIdx[l] = append(a.pullIdx[l], int32(i))
			some = true
		}
	}
	if !some {
		return
	}
	for l, ps := range a.pulls {
		if len(ps) == 0 {
			continue
		}
		if a.stoppedCopying(l) {
			continue // a span's order still copied by the rank, stopped meanwhile (span.go): the agent copies
		}
		a.pullSeq[l]++
		b := a.blocks[l]
		if !b.PostPull(a.pullSeq[l], ps) {
			continue // not in a blocking call: the agent copies
		}
		a.posted, a.took[l], a.pullAt, a.pullsOut = append(a.posted, l), true, a.now(), true
		atomic.AddUint32(b.Wake(), 1)
		if atomic.LoadUint32(b.Sleeping()) != 0 {
			unix.FutexWake(b.Wake(), 1)
		}
	}
}

// waitPulls waits until every posted order is served and copies what a
// receiver left undone (after which that rank gets no more orders).
func (a *Agent) waitPulls(k proto.SliceID, p *core.Plan, timeout time.Duration) error {
	if len(a.posted) == 0 {
		return nil
	}
	defer func() { a.pullsOut = false }() // served, copied here, or the slice failed
	t0 := a.now()
	deadline := t0 + timeout
	for _, l := range a.posted {
		b, seq, n := a.blocks[l], a.pullSeq[l], len(a.pulls[l])
		at := a.pullAt
		if a.chk != nil && a.chk.deferSums() && a.chk.pend[l].on {
			// Flow alone: the rank stores its last order's sums (flow.go)
			// before it takes this one; it is not late while it sums.
			if err := a.waitSums(l, timeout); err != nil {
				return err
			}
			at = max(at, a.now())
		}
		for b.PullPosted() && a.now() < at+pullGrace {
			runtime.Gosched()
		}
		if b.RevokePull() { // not taken in time: copy it here
			a.pullSt.Revoked++
			for _, i := range a.pullIdx[l] {
				if err := a.move(k, int(i), &p.Chunks[i]); err != nil {
					return err
				}
			}
			continue
		}
		if a.chk != nil && a.chk.mode.Flow {
			if a.chk.deferSums() && a.chk.pend[l].on { // taken: the rank stored its last order's sums first (flow.go)
				if err := a.verifyPull(l, timeout); err != nil {
					return err
				}
			}
			if err := a.pullSources(k, p, l); err != nil { // while the rank copies
				return err
			}
		}
		for {
			old := atomic.LoadUint32(b.PullDone())
			done, copied, err := b.PullResult(seq, n)
			if err != nil {
				return a.violation(l, err.(*shm.FieldError))
			}
			if done {
				for _, e := range a.pulls[l][:copied] {
					a.pullSt.Bytes += e.Len
				}
				if a.chk != nil {
					if err := a.flowPulls(k, p, l, copied); err != nil {
						return err
					}
				}
				a.pullSt.Served++
				if copied < n {
					a.pullSt.Served--
					a.pullSt.Unfinished++
					a.noPull[l] = true
					for _, i := range a.pullIdx[l][copied:] {
						if err := a.move(k, int(i), &p.Chunks[i]); err != nil {
							return err
						}
					}
				}
				break
			}
			if a.exited[l].Load() {
				return a.fail(a.rankOf[l], "process exited while copying its pull order of slice %d", k)
			}
			now := a.now()
			if now >= deadline {
				return a.fail(a.rankOf[l], "slice %d: its pull order of %d chunks was not served within %v", k, n, timeout)
			}
			unix.FutexWait(b.PullDone(), old, min(deadline-now, time.Millisecond))
		}
	}
	a.stats.LTR[2] += a.now() - t0
	return nil
}

// move copies chunk i of the plan (c) within the node or sends it to its node.
func (a *Agent) move(k proto.SliceID, i int, c *proto.Chunk) error {
	if c.Len > uint64(len(a.bounce)) && !c.Inline && !c.SrcAcc && !c.DstAcc {
		return a.movePieces(k, i, c)
	}
	t0 := a.now()
	routine := 3
	if c.DstNode == a.node {
		routine = 2
	}
	var data []byte
	switch {
	case c.Inline:
		pl := a.inline[inlineKey{c.Src, c.SendSeq}]
		data = pl[c.Off : c.Off+c.Len]
	case c.SrcAcc:
		data = a.acc[c.SrcAddr:][:c.Len]
	case c.DstAcc && c.DstNode == a.node: // a contribution read straight into the staging area
		data = a.acc[c.DstAddr:][:c.Len]
		if err := unix.ReadFrom(a.pid(c.Src), data, c.SrcAddr); err != nil {
			return a.moveErr(c.Src, c, "reading the send buffer", err)
		}
		if a.chk != nil {
			a.chk.moved[i]++
		}
		a.stats.Bytes += c.Len
		a.stats.LTR[routine] += a.now() - t0
		return nil
	default:
		data = a.bounce[:c.Len]
		if a.chk != nil || copyFault != nil { // read piece by piece there
			err := a.moveChecked(k, i, c, data, true)
			a.stats.LTR[routine] += a.now() - t0
			return err
		}
		if err := unix.ReadFrom(a.pid(c.Src), data, c.SrcAddr); err != nil {
			return a.moveErr(c.Src, c, "reading the send buffer", err)
		}
	}
	if a.chk != nil || copyFault != nil {
		err := a.moveChecked(k, i, c, data, false)
		a.stats.LTR[routine] += a.now() - t0
		return err
	}
	a.stats.Bytes += c.Len
	if c.DstNode == a.node {
		if err := unix.WriteTo(a.pid(c.Dst), data, c.DstAddr); err != nil {
			return a.moveErr(c.Dst, c, "writing the receive buffer", err)
		}
	} else {
		a.dataMsg = proto.Msg{Type: proto.MsgData, Slice: k, Node: a.node, Index: uint32(i), Payload: data}
		if err := a.sendData(c.DstNode, &a.dataMsg); err != nil {
			return a.sendErr(k, c, err)
		}
	}
	a.stats.LTR[routine] += a.now() - t0
	return nil
}

// movePieces copies chunk i (c), larger than the bounce buffer, in pieces
// that fit it: a pulled chunk (up to the pull rate's bytes, above the
// budget the buffer is sized for, scheduler doc.go "Pulled chunks") whose
// receiver did not take or finish its order. Such chunks are within the
// node, and a job under the buffer checks has none (its scheduler counts
// every chunk at its size). Under flow alone each piece is checked as it
// is copied (moveChecked) and counted on its own: a piece not moved once
// is a flow violation naming it, and the entry counts as moved once when
// every piece did.
func (a *Agent) movePieces(k proto.SliceID, i int, c *proto.Chunk) error {
	if c.SrcNode != a.node || c.DstNode != a.node || (a.chk != nil && a.chk.mode.Buffers) {
		panic(fmt.Sprintf("nicthread: slice %d: chunk %s of %d bytes, more than the %d-byte bounce buffer, is not a pulled chunk within the node of a job without buffer checks", k, c.Describe(), c.Len, len(a.bounce)))
	}
	counted := a.chk != nil && i >= 0
	for off, piece := uint64(0), 1; off < c.Len; piece++ {
		m := min(c.Len-off, uint64(len(a.bounce)))
		p := &a.piece // not a local: its address would move it to the heap
		*p = *c
		p.SrcAddr, p.DstAddr, p.Off, p.Len = c.SrcAddr+off, c.DstAddr+off, c.Off+off, m
		var before uint32
		if counted {
			before = a.chk.moved[i]
		}
		if err := a.move(k, i, p); err != nil {
			return err
		}
		if counted {
			if n := a.chk.moved[i] - before; n != 1 {
				return a.flowErr(k, i, c, "its piece %d (%d bytes at offset %d of the message, copied by the agent) moved %d times by its source node, want once", piece, m, p.Off, n)
			}
			a.chk.moved[i] = before
		}
		off += m
	}
	if counted {
		a.chk.moved[i]++ // every piece moved once: the entry did
	}
	return nil
}

// fold runs this node's reductions of the slice (the reduce microphase).
func (a *Agent) fold(p *core.Plan) {
	for _, f := range p.Folds {
		if f.Node == a.node {
			reduce.Fold(f.Op, f.Type, f.Mode, a.acc, f.Base, f.Stride, f.Seg, f.N, a.foldTmp)
		}
	}
}

// pid is the process of local rank r as the agent verified it when it
// attached (validate.go), never the pid word the rank can rewrite.
func (a *Agent) pid(r proto.Rank) int { return int(a.pids[a.localOf[r]].Load()) }

func (a *Agent) moveErr(r proto.Rank, c *proto.Chunk, what string, err error) error {
	if errors.Is(err, unix.ErrProcessGone) {
		return a.fail(r, "process exited while %s of %s", what, c.Describe())
	}
	return a.fail(r, "%s of %s: %v", what, c.Describe(), err)
}

// OnData writes one inbound data frame into its receiver. Safe to call from a
// transport reader goroutine while TX runs.
func (a *Agent) OnData(from proto.NodeID, m *proto.Msg) error {
	p := a.plan.Load()
	if p == nil || m.Slice != p.Slice || int(m.Index) >= len(p.Chunks) {
		return a.fail(-1, "data frame for slice %d chunk %d from node %d matches no scheduled chunk", m.Slice, m.Index, from)
	}
	c := &p.Chunks[m.Index]
	if c.DstNode != a.node || c.SrcNode != from || uint64(len(m.Payload)) != c.Len {
		return a.fail(-1, "data frame from node %d does not fit %s", from, c.Describe())
	}
	if a.chk != nil {
		if err := a.arriveChecked(int(m.Index), c, m); err != nil {
			a.dataErr.CompareAndSwap(nil, &err)
			if a.chk.arrived[m.Index].Load() > 1 {
				return nil // a duplicate: the chunk was counted when it first arrived
			}
		}
	} else if c.DstAcc {
		copy(a.acc[c.DstAddr:][:c.Len], m.Payload)
	} else if err := unix.WriteTo(a.pid(c.Dst), m.Payload, c.DstAddr); err != nil {
		e := a.moveErr(c.Dst, c, "writing the receive buffer", err)
		a.dataErr.Store(&e)
	}
	if a.peerTimeout > 0 {
		a.owed[c.Stage][from].Add(-1)
		a.lastFrom[from].Store(int64(a.now()))
	}
	if a.pending[c.Stage].Add(-1) == 0 {
		a.arrived[c.Stage] <- struct{}{}
	}
	return nil
}

// await waits until every chunk of stage the plan sends to this node has
// arrived, at most timeout; with a PeerTimeout shorter than that, a node
// that owes chunks and has sent no data frame for PeerTimeout (counted
// from the start of the wait at the earliest) fails the slice, named
// (the error is this node's: it is the one that saw the silence).
//
// A wait that lasts waitWatch has the master's frames read meanwhile
// (onWait: AgentEndpoint's watcher), so that a gang's hold (MsgHold) stops
// the ranks here, at once, and not when the wait ends, and a stop
// (MsgStop) ends the wait (errMasterStopped). The data still owed keeps
// arriving into the stopped ranks' memory; the wait goes on, past timeout
// (up to timeout plus the larger of PeerTimeout and MasterSilence): a held
// job is the master's to end, at its node_timeout, naming the host that
// went silent, which this node's "did not arrive" could not name.
func (a *Agent) await(k proto.SliceID, stage uint8, timeout time.Duration) error {
	select {
	case <-a.arrived[stage]:
		return nil
	default:
	}
	start := a.now()
	limit := timeout // longer once a hold is applied during the wait
	peer := a.peerTimeout > 0 && a.peerTimeout < timeout
	step := max(a.peerTimeout/8, time.Millisecond)
	watch := a.onWait != nil
	next := func(now time.Duration) time.Duration { // until the timer's next tick
		d := start + limit - now
		if peer {
			d = min(d, step)
		}
		if watch {
			d = min(d, start+waitWatch-now)
		}
		return max(d, 0)
	}
	if a.peerTick == nil {
		a.peerTick = time.NewTimer(next(start))
	} else {
		a.peerTick.Reset(next(start)) // no stale tick since Go 1.23
	}
	tick := a.peerTick
	defer tick.Stop()
	for {
		select {
		case <-a.arrived[stage]:
			return nil
		case <-a.interject:
			held := a.holdReq.Load() != 0
			if err := a.interjected(); err != nil {
				return err
			}
			if held && timeout == limit {
				// The job is held: the master ends it at its
				// node_timeout naming the silent host, unless the data
				// comes first; this wait gives up only after that.
				limit = timeout + max(a.peerTimeout, MasterSilence)
			}
			continue
		case <-tick.C:
		}
		now := a.now()
		if watch && now-start >= waitWatch {
			watch = false
			a.onWait()
		}
		if now-start >= limit {
			return a.fail(-1, "slice %d: %d chunks from other nodes did not arrive within %v", k, a.pending[stage].Load(), limit)
		}
		if err := a.peerSilent(k, stage, now, start, peer); err != nil {
			return err
		}
		tick.Reset(next(now))
	}
}

// peerSilent is await's check, when peer is on: a node that owes chunks of
// stage and sent no data frame for PeerTimeout fails the slice.
func (a *Agent) peerSilent(k proto.SliceID, stage uint8, now, start time.Duration, peer bool) error {
	if !peer {
		return nil
	}
	for src := range a.owed[stage] {
		n := a.owed[stage][src].Load()
		if n <= 0 {
			continue
		}
		silent := now - max(start, time.Duration(a.lastFrom[src].Load()))
		if a.quiet != nil {
			silent = min(silent, a.quiet(proto.NodeID(src)))
		}
		if silent >= a.peerTimeout {
			chunks := "chunks"
			if n == 1 {
				chunks = "chunk"
			}
			return a.fail(-1, "%s awaited %d %s of slice %d from %s, which sent it no data for %v (node_timeout): the link between %s and %s is down, or the network is partitioned between them",
				a.nodeName(a.node), n, chunks, k, a.nodeName(proto.NodeID(src)), a.peerTimeout, a.hostName(a.node), a.hostName(proto.NodeID(src)))
		}
	}
	return nil
}

// waitWatch is how long a wait in TX lasts before the master's frames are
// read meanwhile (await, onWait). Below it no wait pays for the watcher (a
// goroutine, and one hand-off of the master's next frame); a gang holds a
// job only DefaultHold (100 ms at least) past its strobe, so by then the
// watcher reads.
const waitWatch = time.Millisecond

// errMasterStopped ends a wait in TX when the master's stop was read
// meanwhile (await): the job is over, nothing more is to move.
var errMasterStopped = errors.New("nicthread: the master stopped the job while this node transmitted")

// holdSoon and stopSoon are the watcher's (AgentEndpoint): they record a
// hold of slice h, or the master's stop, read while TX waits, and wake the
// wait (await), which applies it. Safe from any goroutine.
func (a *Agent) holdSoon(h proto.SliceID) {
	for {
		old := a.holdReq.Load()
		if uint64(h) <= old || a.holdReq.CompareAndSwap(old, uint64(h)) {
			break
		}
	}
	a.wakeInterject()
}

func (a *Agent) stopSoon() {
	a.stopReq.Store(true)
	a.wakeInterject()
}

func (a *Agent) wakeInterject() {
	select {
	case a.interject <- struct{}{}:
	default:
	}
}

// interjected applies what the master's frames read while TX waited say: a
// hold stops the ranks now (hold), a stop ends the wait. Same goroutine as
// TX.
func (a *Agent) interjected() error {
	if h := a.holdReq.Swap(0); h != 0 {
		a.hold(proto.SliceID(h))
	}
	if a.stopReq.Load() {
		return errMasterStopped
	}
	return nil
}

// sendData sends a data frame to another node. Where a watcher can read
// the master's frames (onWait), a send that blocks starts it (sendWatch),
// and while the send blocks a hold the watcher reads stops the ranks at
// once (holdRead). The cost on a send that does not block: the gate's lock
// taken twice (and, on a TX's first send, the timer armed).
func (a *Agent) sendData(node proto.NodeID, m *proto.Msg) error {
	if a.onWait == nil {
		return a.send(node, m)
	}
	a.gmu.Lock()
	a.inSend = true
	a.sendSeq++
	if !a.txWatch {
		a.txWatch = true
		if a.sendTimer == nil { // under gmu: sendWatch reads it there
			a.sendTimer = time.AfterFunc(waitWatch, a.sendWatch)
		} else {
			a.sendTimer.Reset(waitWatch)
		}
	}
	a.gmu.Unlock()
	err := a.send(node, m)
	a.gmu.Lock() // after a hold the watcher applied (holdRead)
	a.inSend = false
	a.gmu.Unlock()
	return err
}

// sendWatch is the send timer's (its own goroutine): a send under way at
// this firing and the last one, the same (sendSeq), has blocked at least
// waitWatch: start the watcher. It fires again until the TX ends.
func (a *Agent) sendWatch() {
	a.gmu.Lock()
	if !a.txWatch {
		a.gmu.Unlock()
		return
	}
	if a.inSend && a.sendSeq == a.seenSeq {
		a.onWait()
	}
	a.seenSeq = a.sendSeq
	a.sendTimer.Reset(waitWatch)
	a.gmu.Unlock()
}

// endSendWatch disarms the send timer at the end of a TX (TX's goroutine).
// A firing already under way finds txWatch off and stops there.
func (a *Agent) endSendWatch() {
	a.gmu.Lock()
	armed := a.txWatch
	a.txWatch = false
	a.gmu.Unlock()
	if armed {
		a.sendTimer.Stop()
	}
}

// holdRead is a hold of slice h read by the watcher. While TX is parked in
// a send to another node and no pull order is outstanding, the watcher
// stops the ranks itself, under the gate's lock (TX waits for it to go on
// from the send). A rank with a pull order (or a span) to serve is not
// stopped from here: a stopped rank serves none, and settling it is TX's
// (gate, spanSettle); TX's next wait or its end applies the hold then
// (holdSoon), as it does for a hold read while it waits for data.
func (a *Agent) holdRead(h proto.SliceID) {
	a.gmu.Lock()
	if a.inSend && !a.pullsOut && !(a.sp.on && a.sp.posted) {
		a.hold(h)
		a.gmu.Unlock()
		return
	}
	a.gmu.Unlock()
	a.holdSoon(h)
}

// sendErr is the slice's error for a data frame to another node that
// could not be sent: with a PeerTimeout, a send that timed out (the node
// took nothing for PeerTimeout: the transport's send timeout) names it.
func (a *Agent) sendErr(k proto.SliceID, c *proto.Chunk, err error) error {
	var ne net.Error
	if a.peerTimeout > 0 && errors.As(err, &ne) && ne.Timeout() {
		return a.fail(-1, "%s took none of the data %s sent it for %v (node_timeout) in slice %d (%s: %v): the link between %s and %s is down, or the network is partitioned between them",
			a.nodeName(c.DstNode), a.nodeName(a.node), a.peerTimeout, k, c.Describe(), err, a.hostName(a.node), a.hostName(c.DstNode))
	}
	return a.fail(-1, "sending %s: %v", c.Describe(), err)
}

// nodeName is "node n" and its host, if known (AgentConfig.Hosts).
func (a *Agent) nodeName(n proto.NodeID) string {
	if int(n) < len(a.hosts) && a.hosts[n] != "" {
		return fmt.Sprintf("node %d (host %s)", n, a.hosts[n])
	}
	return fmt.Sprintf("node %d", n)
}

// hostName is node n's host, or "node n" where hosts are not known.
func (a *Agent) hostName(n proto.NodeID) string {
	if int(n) < len(a.hosts) && a.hosts[n] != "" {
		return "host " + a.hosts[n]
	}
	return fmt.Sprintf("node %d", n)
}

// publish writes completions into the ranks' records and wakes each rank
// once. The completions of the sender of a span whose receiver was stopped
// mid-copy wait until the receiver's copy has ended (span.go, holdBack).
func (a *Agent) publish(cs []proto.Completion) {
	if len(a.stoppedOrds) > 0 || len(a.heldBack) > 0 {
		cs = a.holdBack(cs)
	}
	if len(cs) == 0 {
		return
	}
	for _, c := range cs {
		l := a.localOf[c.Rank]
		if c.Kind == proto.KindRelease { // deterministic mode: no request slot
			a.blocks[l].BumpRelease()
		} else {
			a.blocks[l].Complete(c)
		}
		a.woken[l] = true
	}
	a.wake()
}

// noteEager counts this slice's matches of the node's ranks' eager sends
// (proto.Descriptor.Eager) into their eager-matched words, and marks those
// ranks to be woken: a rank blocked in a send because it has eager_max of
// them unmatched (package mpiapi, eager.go) waits for this word, as for a
// completion (so the seen word and deadlock detection treat it as one).
// Every node's plan holds every match (and every send a receive consumed
// with a type error, Consumed), so the sender's node counts it in
// the slice it is matched, whichever node the receiver is on.
func (a *Agent) noteEager(p *core.Plan) {
	for _, x := range p.Matches {
		a.eagerTaken(x.Send)
	}
	for _, d := range p.Consumed { // a receive took it, with a type error: it is no longer unmatched
		a.eagerTaken(d)
	}
}

// eagerTaken counts send d in its rank's eager-matched word if it is an
// eager send of a local rank.
func (a *Agent) eagerTaken(d proto.Descriptor) {
	if !d.Eager || !d.Inline {
		return
	}
	if l := a.localOf[d.Rank]; l >= 0 {
		a.eagerMatched[l]++
		a.blocks[l].SetEagerMatched(a.eagerMatched[l])
		a.woken[l] = true
	}
}

// wake bumps the wake word of every rank marked woken, and wakes it if it sleeps.
func (a *Agent) wake() {
	for l, w := range a.woken {
		if !w {
			continue
		}
		a.woken[l] = false
		b := a.blocks[l]
		atomic.AddUint32(b.Wake(), 1)
		if atomic.LoadUint32(b.Sleeping()) != 0 {
			unix.FutexWake(b.Wake(), 1)
		}
	}
}

// Abort marks the region aborting and wakes every rank so blocked calls notice.
func (a *Agent) Abort() {
	a.region.SetAborting()
	for _, b := range a.blocks {
		atomic.AddUint32(b.Wake(), 1)
		unix.FutexWake(b.Wake(), 1)
	}
}

// Gate applies the gang's decision for the slice about to start: whether the
// job runs in it. Call it before DEM, every slice or only on a change; on a
// change it calls OnRun (stopping or continuing the node's ranks) and times
// it for the slice's stats. In a slice the job does not run, its data still
// moves (buffered coscheduling), but no pull order is posted (a stopped rank
// cannot serve one) and its slice does not count towards deadlock detection.
// Same goroutine as DEM.
func (a *Agent) Gate(run bool) {
	a.stopped = !run
	a.gate(run)
}

// gateAt is Gate for slice k's DEM (AgentEndpoint): a hold of slice k or
// later (hold) keeps the ranks stopped although the decision is to run,
// while SliceStats.Ran still follows the decision, which every node of the
// job has alike.
func (a *Agent) gateAt(k proto.SliceID, run bool) {
	a.stopped = !run
	a.gate(run && k > a.holdTo)
}

// hold stops the node's ranks because the gang holds the job in slice h
// (MsgHold, RemoteNodes.Hold): they stay stopped through slice h's DEM,
// whose frame may reach this node after the hold's although the master
// sent it first, and until a later DEM says the job runs.
func (a *Agent) hold(h proto.SliceID) {
	a.holdTo = max(a.holdTo, h)
	a.gate(false)
}

// gate stops or continues the node's ranks.
func (a *Agent) gate(run bool) {
	if run == !a.paused {
		return
	}
	t := a.now()
	if !run {
		a.spanSettle() // span.go: a receiver copying a span finishes before it stops, or the agent takes the copy over
	}
	if a.onRun != nil {
		a.onRun(run)
	}
	a.paused = !run
	a.switchNS = max(a.now()-t, 1)
}

// Paused reports whether the job is descheduled in the current slice.
func (a *Agent) Paused() bool { return a.paused }
