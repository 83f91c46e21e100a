package core

import (
	"fmt"
	"strings"

	"github.com/bcsmpi/bcsmpi/internal/proto"
	"github.com/bcsmpi/bcsmpi/scheduler"
	"github.com/bcsmpi/bcsmpi/strobe"
)

// Restart says when a rank whose operation completed is woken (docs/design.md §3 rule 5).
type Restart uint8

const (
	// RestartSlice wakes at the strobe after the slice the operation completed in
	// (the paper's model: 1.5 slices of delay on average).
	RestartSlice Restart = iota
	// RestartEarly wakes at the end of the transmission phase of that slice.
	RestartEarly
)

// ParseRestart reads "slice" or "early".
func ParseRestart(s string) (Restart, error) {
	switch s {
	case "slice", "":
		return RestartSlice, nil
	case "early":
		return RestartEarly, nil
	}
	return 0, fmt.Errorf("core: restart policy %q, want \"slice\" or \"early\"", s)
}

func (r Restart) String() string {
	if r == RestartEarly {
		return "early"
	}
	return "slice"
}

// Config describes one node of a job.
type Config struct {
	Node    proto.NodeID
	NodeOf  []proto.NodeID // world rank → node
	Sched   SchedConfig
	Restart Restart
	// DeadlockSlices is the guard of deadlock detection (see detect): a job
	// is declared deadlocked only when no rank can make progress, judged from
	// the posted state, in this many consecutive slices (at least 2 are
	// used). 0 turns detection off.
	DeadlockSlices uint64
	// DeadlockWarn reports a deadlock and keeps waiting instead of failing.
	DeadlockWarn bool
}

// Stats are the per-slice local counters of the node (EMDS local metrics).
type Stats struct {
	NP2PDEM  uint32 // descriptors of this node's ranks exchanged in DEM
	NP2PMSM  uint32 // chunks and completions scheduled in MSM that touch this node
	NCOLLDEM uint32 // collective descriptors of this node's ranks exchanged in DEM
	NCOLLMSM uint32 // collectives completed in MSM
}

// Node is one node's protocol state.
type Node struct {
	cfg     Config
	f       *strobe.Follower
	sch     *scheduler.Scheduler
	plan    *Plan
	local   []bool
	held    []proto.Completion // completed, not yet published
	publish []proto.Completion
	stats   Stats
	descs   []proto.Descriptor
	status  []uint8
	idle    uint64
	waiting []bool // detect's scratch: ranks with an incomplete operation
	// releases counts the KindRelease completions of deterministic mode.
	releases uint64
}

// DetStats are deterministic mode's counters (scheduler.DetStats) and the
// number of Test-family calls released at quiescent points.
func (n *Node) DetStats() (DetStats, uint64) { return n.sch.DetStats(), n.releases }

// New returns the state machine of node cfg.Node.
func New(cfg Config) *Node {
	n := &Node{cfg: cfg, f: strobe.NewFollower(cfg.Node), sch: scheduler.New(cfg.Sched, cfg.NodeOf), local: make([]bool, len(cfg.NodeOf)), waiting: make([]bool, len(cfg.NodeOf))}
	for r, nd := range cfg.NodeOf {
		n.local[r] = nd == cfg.Node
	}
	return n
}

// Local reports whether rank r lives on this node.
func (n *Node) Local(r proto.Rank) bool { return r >= 0 && int(r) < len(n.local) && n.local[r] }

// Slice is the current slice.
func (n *Node) Slice() proto.SliceID { return n.f.Slice() }

// Stats are the counters of the current slice.
func (n *Node) Stats() Stats { return n.stats }

// DEM begins slice k (its descriptor exchange microphase) and returns the
// completions to publish now. The returned slice is valid until the next call.
func (n *Node) DEM(k proto.SliceID) ([]proto.Completion, error) {
	if err := n.f.Step(strobe.PhaseDEM, k); err != nil {
		return nil, err
	}
	n.stats = Stats{}
	n.publish = n.publish[:0]
	if n.cfg.Restart == RestartSlice {
		n.publish = append(n.publish, n.held...)
		n.held = n.held[:0]
	}
	return n.publish, nil
}

// DescriptorError is a descriptor the runtime refuses; it names the rank.
type DescriptorError struct {
	Slice proto.SliceID
	D     proto.Descriptor
	Why   string
}

func (e *DescriptorError) Error() string {
	return fmt.Sprintf("core: slice %d: descriptor %s from rank %d refused: %s", e.Slice, e.D.Describe(), e.D.Rank, e.Why)
}

// MSM schedules slice k from every node's descriptors exchanged in slice k
// (node order) and every rank's status byte (nil: unknown, no deadlock
// detection). The plan is valid until the next MSM. It returns a
// *DescriptorError for a descriptor the runtime refuses, and a
// *DeadlockError (with the plan) when the job has been stuck for
// DeadlockSlices slices.
func (n *Node) MSM(k proto.SliceID, all []proto.Descriptor, status []uint8) (*Plan, error) {
	if status != nil && len(status) != len(n.local) {
		return nil, fmt.Errorf("core: slice %d: %d rank statuses for %d ranks", k, len(status), len(n.local))
	}
	for r, s := range status {
		if err := proto.CheckStatus(s); err != nil {
			return nil, fmt.Errorf("core: slice %d: rank %d: %w", k, r, err)
		}
	}
	n.status = status
	if err := n.f.Step(strobe.PhaseMSM, k); err != nil {
		return nil, err
	}
	for _, d := range all {
		if err := scheduler.CheckDescriptor(d, len(n.local)); err != nil {
			return nil, &DescriptorError{k, d, err.Error()}
		}
		if d.PostSlice >= k {
			// Rule 1 is guaranteed by how agents drain rings; seeing this is a bug.
			panic(fmt.Sprintf("core: rule 1 broken: descriptor %s posted in slice %d exchanged in slice %d", d.Describe(), d.PostSlice, k))
		}
		if n.local[d.Rank] {
			if d.IsColl() {
				n.stats.NCOLLDEM++
			} else {
				n.stats.NP2PDEM++
			}
		}
	}
	n.descs = all
	exchanged := len(n.descs)
	force := false
	if n.cfg.Sched.Deterministic {
		// Quiescent: the previous slice and this one exchanged, moved and
		// completed nothing, and no rank can progress (the facts deadlock
		// detection uses, see detect): the state is the same whatever the
		// timing was, so answering held wildcards from it is deterministic.
		force = n.status != nil && n.idle >= 1 && exchanged == 0 && n.noneCanProgress()
		n.sch.SetView(n.status, force)
	}
	n.sch.SetStatus(n.status) // spans go to blocked receivers (scheduler doc.go)
	n.plan = n.sch.Schedule(k, n.descs)
	n.descs = nil
	if n.plan.Err != nil {
		return nil, n.plan.Err
	}
	if force && len(n.plan.Completions) == 0 && len(n.plan.Chunks) == 0 {
		// Nothing held could be answered: release the ranks waiting in a
		// Test-family call, which return with what has completed.
		for r, st := range n.status {
			if proto.Settling(st) {
				n.plan.Completions = append(n.plan.Completions, proto.Completion{Rank: proto.Rank(r), Kind: proto.KindRelease})
				n.releases++
			}
		}
	}
	dl := n.detect(k, exchanged)
	n.stats.NCOLLMSM = uint32(n.plan.Collectives)
	for _, c := range n.plan.Chunks {
		if c.Xfer != 0 && (n.local[c.Src] || n.local[c.Dst]) {
			n.stats.NP2PMSM++
		}
	}
	for _, c := range n.plan.Completions {
		if n.local[c.Rank] {
			n.held = append(n.held, c)
		}
	}
	if dl != nil {
		return n.plan, dl
	}
	return n.plan, nil
}

// DeadlockError describes a deadlocked job: what every rank is blocked in,
// what it waits for, and a cycle of the wait-for graph if there is one.
type DeadlockError struct {
	Slice  proto.SliceID
	Slices uint64 // consecutive stuck slices
	Fatal  bool   // false: report and keep waiting
	Report string
}

func (e *DeadlockError) Error() string { return e.Report }

// minGuard is the smallest guard detect uses: a descriptor posted during slice
// k is exchanged in slice k+1, so one quiet slice can still hide a post made
// just before its rank blocked; two consecutive quiet slices cannot.
const minGuard = 2

// detect decides whether the job is deadlocked. A deadlock is a fact about the
// posted state, not a silence: it is declared only when no rank can make
// progress, that is when every rank
//
//   - is finalized or has exited without MPI (proto.StatusInert), or
//   - is blocked in a call, has looked at every completion published to it
//     (proto.StatusBlocked), and has an operation the scheduler holds as not
//     complete (scheduler.Incomplete),
//
// at least one rank is blocked, and the scheduler found nothing to exchange,
// move or complete. Since no rank is running, nothing more can be posted, and
// since the scheduler matched nothing, nothing posted can complete a blocked
// call. A rank that is running, alive but not yet in MPI_Init
// (proto.StatusStarting), or woken with a completion it has not consumed
// (proto.StatusWoken: descheduled, paging, stopped) can still progress, and
// resets the count. The count of such slices is only a guard against what
// a single slice cannot show (a post not yet exchanged, see minGuard); time
// is measured in slices the master ran, never in wall time.
func (n *Node) detect(k proto.SliceID, exchanged int) *DeadlockError {
	if n.status == nil || (n.cfg.DeadlockSlices == 0 && !n.cfg.Sched.Deterministic) {
		return nil
	}
	p := n.plan
	if exchanged > 0 || len(p.Chunks) > 0 || p.Spanning > 0 || len(p.Completions) > 0 || !n.noneCanProgress() {
		n.idle = 0
		return nil
	}
	n.idle++ // deterministic mode counts quiescent slices even with detection off
	if n.cfg.DeadlockSlices == 0 {
		return nil
	}
	guard := max(n.cfg.DeadlockSlices, minGuard)
	if n.idle != guard { // reported once (deadlock_action warn keeps waiting)
		return nil
	}
	ws := n.sch.Waits(n.status)
	isBlocked := make([]bool, len(n.status))
	for r, s := range n.status {
		isBlocked[r] = proto.StatusBlocked(s)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "deadlock: every MPI rank has been blocked for %d slices with nothing to exchange, move or complete\n", n.idle)
	for r, s := range n.status {
		line := fmt.Sprintf("  rank %d (%s)", r, proto.DescribeStatus(s))
		var waits []string
		for _, w := range ws {
			if int(w.Rank) == r {
				waits = append(waits, scheduler.DescribeWait(w))
			}
		}
		for _, w := range collapseWaits(waits) {
			fmt.Fprintf(&b, "%s: %s\n", line, w)
		}
		if len(waits) == 0 {
			fmt.Fprintf(&b, "%s\n", line)
		}
	}
	if c := scheduler.Cycle(n.sch.WaitsFor(ws), isBlocked); c != nil {
		fmt.Fprintf(&b, "  wait-for cycle: %s", scheduler.FormatCycle(c))
	} else {
		b.WriteString("  no wait-for cycle: the ranks wait for ranks that have finalized or exited without calling MPI_Init")
	}
	return &DeadlockError{Slice: k, Slices: n.idle, Fatal: !n.cfg.DeadlockWarn, Report: b.String()}
}

// collapseWaits gives each distinct description once, in the order of its
// first appearance, with the number of waits it stands for when there are
// several: a rank with many identical receives outstanding (a one-sided
// window's header receives, 32 per peer) is named once per peer, not once
// per request.
func collapseWaits(waits []string) []string {
	count := make(map[string]int, len(waits))
	var order []string
	for _, w := range waits {
		if count[w] == 0 {
			order = append(order, w)
		}
		count[w]++
	}
	for i, w := range order {
		if n := count[w]; n > 1 {
			order[i] = fmt.Sprintf("%s, %d requests", w, n)
		}
	}
	return order
}

// noneCanProgress reports whether no rank can make progress: every rank is
// inert, or blocked with an operation the scheduler holds as incomplete, and
// at least one is blocked. A rank whose status says blocked but which has no
// incomplete operation (its call waits on nothing the runtime knows of) is
// not counted as stuck: the posted state does not show it.
func (n *Node) noneCanProgress() bool {
	blocked := false
	for _, s := range n.status {
		switch {
		case proto.StatusBlocked(s):
			blocked = true
		case !proto.StatusInert(s):
			return false
		}
	}
	if !blocked {
		return false
	}
	clear(n.waiting)
	n.sch.Incomplete(n.waiting, n.status)
	for r, s := range n.status {
		if proto.StatusBlocked(s) && !n.waiting[r] {
			return false
		}
	}
	return true
}

// Unmatched lists the sends no receive ever matched.
func (n *Node) Unmatched() []proto.Descriptor { return n.sch.Unmatched() }

// TX starts the transmission phase of slice k.
func (n *Node) TX(k proto.SliceID) error { return n.f.Step(strobe.PhaseTX, k) }

// EndSlice ends slice k and returns the completions to publish now (only under
// the early-restart policy). Valid until the next call.
func (n *Node) EndSlice(k proto.SliceID) ([]proto.Completion, error) {
	if err := n.f.Step(strobe.PhaseIdle, k); err != nil {
		return nil, err
	}
	n.publish = n.publish[:0]
	if n.cfg.Restart == RestartEarly {
		n.publish = append(n.publish, n.held...)
		n.held = n.held[:0]
	}
	return n.publish, nil
}
