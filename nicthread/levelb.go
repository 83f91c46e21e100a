package nicthread

import (
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/bcsmpi/bcsmpi/internal/core"
	"github.com/bcsmpi/bcsmpi/internal/plan"
	"github.com/bcsmpi/bcsmpi/internal/proto"
	"github.com/bcsmpi/bcsmpi/internal/replay"
	"github.com/bcsmpi/bcsmpi/internal/shm"
)

// Replaying a slice log (Level B, package internal/replay; AgentConfig.Slices).
//
// The recorded run's slices are replayed as virtual slices, in order, with
// the recorded slice numbers: virtual slice v runs its DEM, MSM and TX only
// in a real slice in which every rank has contributed exactly the number of
// descriptors the recording exchanged for it in v. Each agent drains each
// rank's ring up to that count (later posts wait in the ring for their own
// virtual slice), and sends its batch only when all its ranks are complete;
// every node sees every batch at MSM and checks the counts of every rank, so
// all nodes decide alike whether v runs in this real slice or waits (a real
// slice in which it waits does nothing: no scheduling, no transfer, no
// completion). The core, the scheduler and the data frames see only virtual
// slice numbers; the region's slice, which ranks stamp their posts with,
// stays the real one, and a drained descriptor's PostSlice becomes v-1
// (rule 1 for the virtual slice; nothing else reads it; v >= 1, since
// replay.ParseSlices refuses a busy slice 0 and slice numbers that wrap).
//
// Since every virtual slice exchanges the recorded batches, the plans are
// the recorded plans, and the completions are published at the same virtual
// slices. At MSM each node compares each rank's descriptors with the
// recorded hash, then the plan with the recorded plan hash: the first
// difference stops the job, naming the slice and, for descriptors, the rank
// and its calls. A rank that has posted fewer descriptors than recorded for
// v and can post no more before v runs — blocked in a call with every
// completion published to it seen, finalized, or exited, and every
// descriptor it posted drained (one posted in the real slice being drained
// is drained in the next: a rank that posts and blocks, as Iprobe does,
// between the agent's SetSlice and its status read is not stuck) — is a
// divergence too, naming the slice, the rank and the call it is blocked in. It cannot
// be a wait for something the replay has yet to give: in the recording the
// rank posted those descriptors having seen only completions published
// before v, and the replay has published the same ones.
//
// After the last recorded slice the agents run freely (one virtual slice per
// real slice, everything posted drained).
type levelB struct {
	log     *replay.Slices
	entry   int    // index in log.List of the current slice
	off     uint64 // slice within an idle run
	v       proto.SliceID
	cur     replay.Slice // the current slice (Counts: the recorded ones)
	free    bool         // past the recording
	started bool         // core.DEM(v) has run
	skip    bool         // this real slice's MSM decided that v waits
	need    []uint64     // per local block: descriptors still to drain for v
	pend    []proto.Descriptor
	count   []uint64 // per world rank: descriptors in the exchange (MSM)
	hash    []uint64
	nodeOf  []proto.NodeID
	matched uint64 // recorded slices run and checked
	busy    uint64 // of which busy (not idle)
}

func newLevelB(log *replay.Slices, blocks int, nodeOf []proto.NodeID) *levelB {
	return &levelB{log: log, need: make([]uint64, blocks), count: make([]uint64, len(nodeOf)), hash: make([]uint64, len(nodeOf)), nodeOf: nodeOf}
}

// Replayed is the number of recorded slices the agent has run and found as
// recorded (a job replaying a slice log), and how many of them were busy
// (descriptors or a non-empty plan). Call it after the agent stopped.
func (a *Agent) Replayed() (slices, busy uint64) {
	if a.lb == nil {
		return 0, 0
	}
	return a.lb.matched, a.lb.busy
}

// errHold stops a drain at the rank's recorded count.
var errHold = errors.New("nicthread: held for a later virtual slice")

// begin starts the next virtual slice.
func (lb *levelB) begin(a *Agent) {
	if !lb.free && lb.entry >= len(lb.log.List) {
		lb.free = true
	}
	if lb.free {
		lb.v++
		lb.cur = replay.Slice{ID: uint64(lb.v)}
		return
	}
	e := lb.log.List[lb.entry]
	lb.cur = e
	lb.v = proto.SliceID(e.ID + lb.off)
	for i := range lb.need {
		c, _ := e.CountOf(int(a.rankOf[i]))
		lb.need[i] = c.Count
	}
}

// next moves past the slice that ran.
func (lb *levelB) next() {
	lb.started = false
	lb.pend = lb.pend[:0]
	if lb.free {
		return
	}
	lb.off++
	if lb.off >= lb.log.List[lb.entry].Run {
		lb.entry++
		lb.off = 0
	}
}

func (a *Agent) divergence(r proto.Rank, format string, args ...any) error {
	n := proto.NodeID(-1)
	if r >= 0 {
		n = a.lb.nodeOf[r]
	}
	return &JobError{Node: n, Rank: r, Why: "replay diverged from the recording: " + fmt.Sprintf(format, args...)}
}

// demReplay is DEM while replaying a slice log (real slice k).
func (a *Agent) demReplay(k proto.SliceID) ([]proto.Descriptor, error) {
	lb := a.lb
	start := a.now()
	a.stats = SliceStats{Slice: k, Start: start, Ran: !a.stopped, Switch: a.switchNS}
	a.switchNS = 0
	if a.lastStrobe != 0 {
		a.stats.LETTS = start - a.lastStrobe
	}
	a.lastStrobe = start
	if !lb.started {
		lb.begin(a)
		pub, err := a.core.DEM(lb.v)
		if err != nil {
			return nil, err
		}
		a.publish(pub)
		lb.started = true
	}
	t1 := a.now()
	a.stats.LTR[1] += t1 - start
	a.region.SetSlice(k)
	a.batch = a.batch[:0]
	complete := true
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
		st := a.status[i] // read before the drain: a rank blocked now has posted all it posts before it is woken
		if !attached || (!lb.free && lb.need[i] == 0) {
			if lb.need[i] > 0 {
				complete = false
			}
			continue
		}
		_, err = b.Drain(k, func(d proto.Descriptor, inl []byte) error {
			if !lb.free && lb.need[i] == 0 {
				return errHold
			}
			if err := a.checkDescriptor(i, k, d); err != nil {
				return err
			}
			if d.Inline {
				a.inline[inlineKey{d.Rank, d.Seq}] = append(a.takeInline(), inl...)
			} else if a.chk != nil {
				a.chk.drained(i, d)
			}
			d.PostSlice = lb.v - 1
			lb.pend = append(lb.pend, d)
			if !lb.free {
				lb.need[i]--
			}
			return nil
		})
		if err != nil && err != errHold {
			if errors.Is(err, ErrJob) {
				return nil, err
			}
			var fe *shm.FieldError
			if errors.As(err, &fe) {
				return nil, a.violation(i, fe)
			}
			return nil, a.fail(a.rankOf[i], "shared memory: descriptor ring: %v", err)
		}
		if lb.need[i] > 0 {
			complete = false
			// A rank blocked now may have posted in this real slice (its
			// descriptors carry k: it read the region's slice after
			// SetSlice above) before it blocked: Drain leaves them for the
			// next real slice, and they may be the ones v waits for.
			if (proto.StatusBlocked(st) || proto.StatusInert(st)) && b.Undrained() == 0 {
				c, _ := lb.cur.CountOf(int(a.rankOf[i]))
				return nil, a.divergence(a.rankOf[i], "slice %d: the recording exchanged %d descriptors of this rank in this slice; it posted %d and is %s, so it will post no more before the slice (the program no longer makes the recorded calls)",
					lb.v, c.Count, c.Count-lb.need[i], proto.DescribeStatus(st))
			}
		}
	}
	if complete {
		a.batch = append(a.batch, lb.pend...)
		if lb.free {
			lb.pend = lb.pend[:0]
		}
	}
	end := a.now()
	a.stats.LTR[0] = end - t1
	a.stats.LTDEM = end - start
	return a.batch, nil
}

// msmReplay is MSM while replaying a slice log: the virtual slice runs if
// every rank's contribution is complete (every node decides alike from the
// exchange), after its descriptors are checked against the recording; its
// plan is then checked too.
func (a *Agent) msmReplay(all []proto.Descriptor, status []uint8) error {
	lb := a.lb
	if lb.free {
		lb.skip = false
		return a.msm(lb.v, all, status)
	}
	for i := range lb.count {
		lb.count[i], lb.hash[i] = 0, 0
	}
	for _, d := range all {
		if d.Rank < 0 || int(d.Rank) >= len(lb.count) {
			return a.msm(lb.v, all, status) // refused there, naming the descriptor
		}
		lb.count[d.Rank]++
		lb.hash[d.Rank] = DescHash(lb.hash[d.Rank], d)
	}
	want := uint64(0)
	for _, c := range lb.cur.Counts {
		want += c.Count
		if lb.count[c.Rank] != c.Count {
			lb.skip = true
			return nil
		}
	}
	if uint64(len(all)) != want {
		lb.skip = true
		return nil
	}
	lb.skip = false
	for _, c := range lb.cur.Counts {
		if Fold32(lb.hash[c.Rank]) != c.Hash {
			var b strings.Builder
			for _, d := range all {
				if int(d.Rank) == c.Rank {
					if b.Len() > 0 {
						b.WriteString(", ")
					}
					b.WriteString(d.Describe())
				}
			}
			return a.divergence(proto.Rank(c.Rank), "slice %d: this rank's %d descriptors differ from the recorded ones (now: %s)", lb.v, c.Count, b.String())
		}
	}
	if err := a.msm(lb.v, all, status); err != nil {
		return err
	}
	p := a.plan.Load()
	if lb.cur.Idle {
		if !PlanEmpty(p) {
			return a.divergence(-1, "slice %d: the recording's plan was empty, this one is not (%d matches, %d chunks, %d completions): the runtime's state differed before this slice", lb.v, len(p.Matches), len(p.Chunks), len(p.Completions))
		}
	} else if h := PlanHash(p); h != lb.cur.Plan {
		return a.divergence(-1, "slice %d: the plan (%d matches, %d chunks, %d completions) differs from the recorded one (hash %#08x, recorded %#08x), though every rank's descriptors are the recorded ones: the runtime's state differed before this slice", lb.v, len(p.Matches), len(p.Chunks), len(p.Completions), h, lb.cur.Plan)
	}
	lb.matched++
	if !lb.cur.Idle {
		lb.busy++
	}
	return nil
}

// txReplay is TX while replaying: nothing in a real slice whose virtual
// slice waits.
func (a *Agent) txReplay(timeout time.Duration) error {
	lb := a.lb
	if lb.skip {
		lb.skip = false
		return nil
	}
	err := a.tx(lb.v, timeout)
	lb.next()
	return err
}

// sliceLogHash is what the slice log hashes of a plan or a descriptor: what
// is the program's, not its addresses (heap layout differs between runs), its
// request slots (which slot a request gets depends on the order completions
// were consumed) or slice numbers (a replay drains by count).
var sliceLogHash = plan.HashOptions{}

// DescHash continues hash h (0: a new one) with descriptor d (the slice
// log's per-rank hash, package internal/replay).
func DescHash(h uint64, d proto.Descriptor) uint64 { return plan.HashDescriptor(h, d, sliceLogHash) }

// Fold32 is the 32-bit form of a DescHash as the log stores it.
func Fold32(h uint64) uint32 { return plan.Fold32(h) }

// PlanHash hashes a plan as the slice log stores it: its matches, chunks, folds,
// completions, writes and counts, without addresses, request slots or slice
// numbers (plan.Hash).
func PlanHash(p *core.Plan) uint32 { return plan.Fold32(plan.Hash(p, sliceLogHash)) }

// PlanEmpty reports whether a plan does nothing (an idle slice).
func PlanEmpty(p *core.Plan) bool {
	return len(p.Matches) == 0 && len(p.Chunks) == 0 && len(p.Folds) == 0 && len(p.Completions) == 0 && len(p.Writes) == 0 && p.Err == nil
}
