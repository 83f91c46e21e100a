package nicthread

import (
	"fmt"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/bcsmpi/bcsmpi/internal/proto"
	"github.com/bcsmpi/bcsmpi/internal/shm"
	"github.com/bcsmpi/bcsmpi/internal/unix"
)

// span is the agent's record of a span in flight on its node (doc.go,
// "Spans"): the plan's chunk (copied: plans are reused), its last slice, and
// who copies what. The scheduler gives a node at most one span at a time
// (the span holds the node's budget), so one record is enough.
type span struct {
	on     bool
	l      int // receiving block
	c      proto.Chunk
	end    proto.SliceID // the slice by whose end the chunk must be in place (or the first after it: a late strobe skips slice numbers)
	posted bool          // an order for [off, Len) was taken by the receiver
	at     time.Duration // when it was posted (a.now)
	seq    uint32
	off    uint64 // bytes from the chunk's start not in the order: the agent copied them
	// Under the flow check: the plan entry of the chunk (index i of slice
	// k0's plan), for the counts and the reports (flow.go, flowSpan).
	i  int
	k0 proto.SliceID
	// checked: the bytes of the chunk checked so far, the agent's shares
	// as it copied them and the receiver's order once done; they must
	// add up to the chunk's length when the span ends (spanEnd).
	checked uint64
}

// spanStart takes the span chunk c of slice k's plan (this node is its
// source and destination).
func (a *Agent) spanStart(k proto.SliceID, i int, c *proto.Chunk) {
	if a.sp.on { // the scheduler holds the node's budget until a span ends
		panic(fmt.Sprintf("nicthread: slice %d: a span (%s) was scheduled on a node whose span (%s, last slice %d, posted %v, %d bytes by the agent) is still in flight", k, c.Describe(), a.sp.c.Describe(), a.sp.end, a.sp.posted, a.sp.off))
	}
	a.sp = span{on: true, l: a.localOf[c.Dst], c: *c, end: k + proto.SliceID(c.Span) - 1, i: i, k0: k}
	if a.chk != nil { // flow.go: the entry moves once, as one span; its bytes are checked as they move
		a.chk.moved[i]++
	}
	a.pullSt.Spans++
	a.stats.Bytes += c.Len
}

// spanStep advances the span in flight in slice k's TX: it posts the rest
// to the receiver if the receiver offers and has not taken it yet, and
// otherwise copies the slice's share itself (the rest divided by the slices
// left); in the span's last slice it waits for the receiver's copy, so the
// chunk is in place when the slice ends.
func (a *Agent) spanStep(k proto.SliceID, timeout time.Duration) error {
	sp := &a.sp
	if !sp.on {
		return nil
	}
	t0 := a.now()
	defer func() { a.stats.LTR[2] += a.now() - t0 }()
	b := a.blocks[sp.l]
	if !sp.posted && !a.paused && !a.noPull[sp.l] && sp.c.Len-sp.off >= pullMin && !a.stoppedCopying(sp.l) {
		c := &sp.c
		if a.chk != nil && a.chk.deferSums() && a.chk.pend[sp.l].on {
			// Flow alone: the rank stores its last order's sums before it
			// takes this one (flow.go); it is compared once taken.
			if err := a.waitSums(sp.l, timeout); err != nil {
				return err
			}
		}
		a.pullSeq[sp.l]++
		sp.seq = a.pullSeq[sp.l]
		e := shm.Pull{PID: int32(a.pid(c.Src)), Req: c.RecvReq, SrcAddr: c.SrcAddr + sp.off, DstAddr: c.DstAddr + sp.off, Len: c.Len - sp.off}
		a.pulls[sp.l] = append(a.pulls[sp.l][:0], e)
		if b.PostPull(sp.seq, a.pulls[sp.l]) {
			at := a.now()
			atomic.AddUint32(b.Wake(), 1)
			if atomic.LoadUint32(b.Sleeping()) != 0 {
				unix.FutexWake(b.Wake(), 1)
			}
			for b.PullPosted() && a.now() < at+pullGrace {
				runtime.Gosched()
			}
			if b.RevokePull() {
				a.pullSt.Revoked++
			} else {
				sp.posted, sp.at = true, at
				if a.chk != nil && a.chk.deferSums() && a.chk.pend[sp.l].on {
					if err := a.verifyPull(sp.l, timeout); err != nil {
						return err
					}
				}
			}
		}
	}
	if err := a.spanErr; err != nil { // found by spanSettle
		a.spanErr = nil
		return err
	}
	if sp.posted {
		done, err := a.spanResult(k, k >= sp.end, timeout, false) // >=: the master may skip slice numbers
		if err != nil || !done {
			return err
		}
	}
	if !sp.posted && sp.on { // the agent copies: this slice's share, all that is left at the end
		left := sp.c.Len - sp.off
		n := left
		if k < sp.end {
			n = (left + uint64(sp.end-k)) / uint64(sp.end-k+1)
		}
		if err := a.spanCopy(k, n); err != nil {
			return err
		}
		if sp.off == sp.c.Len {
			if err := a.spanEnd(); err != nil {
				return err
			}
		}
	}
	if sp.on && k >= sp.end {
		panic("nicthread: a span's last slice ends with its chunk not in place")
	}
	return nil
}

// spanResult reads the receiver's order; wait: until it is done (the
// span's last slice, or a gang switch), for timeout, after which it fails
// the job (soft: reports not done). done reports whether the span has
// ended or passed back to the agent, which then copies the rest.
//
// The deadline counts only time in which the agent ran: a gap between two
// looks much longer than the wait between them (the job was stopped with
// Ctrl-Z, or the host suspended the process) moves the deadline by the gap,
// since the receiver did not run either; and the order is read once more
// after the deadline before the job fails.
func (a *Agent) spanResult(k proto.SliceID, wait bool, timeout time.Duration, soft bool) (bool, error) {
	sp := &a.sp
	b := a.blocks[sp.l]
	now := a.spanNow
	if now == nil {
		now = a.now
	}
	last := now()
	deadline, final := last+timeout, false
	for {
		old := atomic.LoadUint32(b.PullDone())
		done, copied, err := b.PullResult(sp.seq, 1)
		if err != nil {
			return false, a.violation(sp.l, err.(*shm.FieldError))
		}
		if done {
			sp.posted = false
			if a.chk != nil && a.chk.deferSums() { // flow.go: compared once the rank has stored its sum
				if err := a.flowSpan(copied, false); err != nil {
					return false, err
				}
			}
			if copied == 1 {
				a.pullSt.Served++
				a.pullSt.Bytes += sp.c.Len - sp.off
				if a.chk != nil {
					sp.checked += sp.c.Len - sp.off // compared once the rank stores its sum (flowSpan)
				}
				sp.off = sp.c.Len
				return true, a.spanEnd()
			}
			a.pullSt.Unfinished++
			a.noPull[sp.l] = true // the agent copies the rest (spanStep)
			return true, nil
		}
		if !wait {
			return false, nil
		}
		if a.exited[sp.l].Load() {
			return false, a.fail(a.rankOf[sp.l], "process exited while copying its pull order of slice %d", k)
		}
		t := now()
		if gap := t - last; gap > spanStall {
			deadline += gap // the agent did not run: stopped, or suspended
		}
		if t >= deadline {
			if !final { // read it once more: it may have ended while the agent was not looking
				final, last = true, t
				continue
			}
			if soft {
				return false, nil
			}
			return false, a.fail(a.rankOf[sp.l], "slice %d: its pull order (a span of %d bytes) was not served within %v", k, sp.c.Len-sp.off, timeout)
		}
		unix.FutexWait(b.PullDone(), old, min(deadline-t, time.Millisecond))
		last = t
	}
}

// spanCopy copies the span's next n bytes itself, in pieces that fit its
// bounce buffer. Under the flow check each piece must move once (counted
// apart from the plan's entries, which spanStart counted) and adds to the
// bytes checked.
func (a *Agent) spanCopy(k proto.SliceID, n uint64) error {
	sp := &a.sp
	for n > 0 {
		m := min(n, uint64(len(a.bounce)))
		c := &a.piece // not a local: its address would move it to the heap
		*c = sp.c
		c.SrcAddr, c.DstAddr, c.Off, c.Len, c.Span = c.SrcAddr+sp.off, c.DstAddr+sp.off, c.Off+sp.off, m, 0
		var before uint32
		if a.chk != nil {
			before = a.chk.shares
		}
		if err := a.move(k, -1, c); err != nil { // -1: not counted (spanStart counted the entry); checked piece by piece (moveChecked)
			return err
		}
		if a.chk != nil {
			if moves := a.chk.shares - before; moves != 1 {
				return a.flowErr(sp.k0, sp.i, &sp.c, "a share of the span (%d bytes at offset %d of the message, copied by the agent in slice %d) moved %d times by its source node, want once", m, c.Off, k, moves)
			}
			sp.checked += m
		}
		a.stats.Bytes -= m // counted when the span started
		sp.off += m
		n -= m
	}
	return nil
}

// spanEnd ends the span in flight. Under the flow check the bytes checked
// (the agent's shares and the receiver's order) must cover the chunk
// exactly: anything else is a runtime bug, named by the span's slice and
// plan entry.
func (a *Agent) spanEnd() error {
	sp := &a.sp
	sp.on = false
	if a.chk != nil && sp.checked != sp.c.Len {
		return a.flowErr(sp.k0, sp.i, &sp.c, "%d bytes checked of its %d when the span ended (the agent's shares, %d bytes, and the receiver's order), want every byte once", sp.checked, sp.c.Len, sp.off)
	}
	return nil
}

// spanStall is the gap between two looks at a span's order beyond which
// spanResult takes the agent as not having run (each wait is at most a
// millisecond).
const spanStall = 100 * time.Millisecond

// siblingReadsRefused is unix.SiblingReadsRefused (a variable for tests):
// where it holds, the node's ranks serve no pull orders (NewAgent).
var siblingReadsRefused = unix.SiblingReadsRefused

// spanSettling, when set (tests only), is called when spanSettle is about
// to wait for a receiver's copy.
var spanSettling func()

// settleBound is how long spanSettle waits (a variable for tests).
var settleBound = (*Agent).settleBound

// settleBound: until the receiver's copy should end, at the rate the
// scheduler assumes — two budgets per slice (the budget is what one copy
// moves in half a slice, AutoBudget), the slice as measured between this
// node's last two strobes — plus one slice, at most 4 slices (10 ms while
// no slice has been measured) and a second.
func (a *Agent) settleBound() time.Duration {
	return settleWait(a.sp.c.Len-a.sp.off, uint64(len(a.bounce)), a.stats.LETTS, a.now()-a.sp.at)
}

// settleWait is settleBound's arithmetic: rem bytes posted since ago, a
// budget of budget bytes, slices of slice (0: unknown).
func settleWait(rem, budget uint64, slice, since time.Duration) time.Duration {
	if slice <= 0 {
		slice = 10 * time.Millisecond / 4
	}
	copyTime := time.Duration(float64(rem) / float64(2*max(budget, 1)) * float64(slice))
	return min(max(copyTime-since, 0)+slice, 4*slice, time.Second)
}

// spanSettle is called before the node's ranks are stopped (Gate): a
// receiver copying the span may finish first, within settleBound (Gate
// runs on the strobe's goroutine, which a gang shares with every job, so
// the wait is short). A copy not done by then is taken over: the agent
// copies the whole rest of the span itself in the following slices, the
// job stopped or not, and no longer waits for the order — the stopped
// receiver, once continued, finishes its copy of the same bytes from the
// same source into its own buffer before it can see the receive complete,
// and its late result is not read (the next order has another number and
// is posted only once that copy has ended, stoppedCopying). The source
// stays unchanged: the span completes in its last slice, but the sender's
// completions are held back until the receiver's copy has ended
// (stoppedOrder, holdBack).
func (a *Agent) spanSettle() {
	sp := &a.sp
	if !sp.on || !sp.posted {
		return
	}
	if spanSettling != nil {
		spanSettling()
	}
	done, err := a.spanResult(sp.end, true, settleBound(a), true)
	if err != nil && !sp.on { // the span ended with a finding (spanEnd): the next TX reports it
		a.spanErr = err
	}
	if done || err != nil { // an error (the rank exited, a bad result) is the span's last slice's to report
		return
	}
	sp.posted = false
	a.pullSt.Stopped++
	a.stoppedOrds = append(a.stoppedOrds, stoppedOrder{l: sp.l, seq: sp.seq, src: sp.c.Src})
	if a.chk != nil && a.chk.deferSums() {
		// The receiver, continued, finishes its copy and stores its sum:
		// compared then, as far as it copied (flow.go, flowSpan). Its
		// source sum is taken now, while the send is in flight.
		_ = a.flowSpan(1, true) // an error here (an unreadable sender) is found again by the agent's own copy of the rest
	}
}

// stoppedOrder is a span's order whose receiver (local rank l) was stopped
// mid-copy (spanSettle): the agent copied the rest of the span, and the
// receiver, once continued, copies its part again from the send buffer of
// rank src. Until the order's done word shows that copy ended, src's
// completions are held back (holdBack): the span's send completes in its
// last slice, and a sender that saw it could rewrite its buffer (as MPI
// allows) under the continued receiver's copy, which would carry the new
// bytes into the receive buffer over the agent's correct copy.
type stoppedOrder struct {
	l   int
	seq uint32
	src proto.Rank
}

// settleStopped drops the stopped orders whose copy has ended: the rank
// stored the order's done word (FinishPull, however much it copied), or its
// process exited (the job fails: nothing is left to protect). Under flow
// alone the count of entries it copied is noted for the order's deferred
// comparison (flow.go, verifyPull), while the done word still holds this
// order: a rank's next order is posted only once its stopped one is
// dropped here (stoppedCopying), so the word is read before any later
// order can overwrite it.
func (a *Agent) settleStopped() {
	keep := a.stoppedOrds[:0]
	for _, o := range a.stoppedOrds {
		b := a.blocks[o.l]
		done, copied, err := b.PullResult(o.seq, 1)
		if err != nil { // a count the order cannot have: the rank's word, refused when its sums are compared
			done, copied = true, -1
		} else if !done && int32(atomic.LoadUint32(b.PullDone())-o.seq) > 0 {
			// A later order's number, which no order had (none was posted
			// since): the rank's word; done, its count unknown.
			done, copied = true, -1
		}
		if !done && !a.exited[o.l].Load() {
			keep = append(keep, o)
			continue
		}
		if x := a.chk; x != nil && done {
			if pd := &x.pend[o.l]; pd.on && pd.stopped && pd.seq == o.seq {
				pd.copied = copied
			}
		}
	}
	clear(a.stoppedOrds[len(keep):])
	a.stoppedOrds = keep
}

// stoppedCopying says whether local rank l may still be copying a span's
// order it was stopped in (settleStopped first): it is posted no order
// until that copy ends (it could not take one anyway, being in that
// order's copy), so that the order's done word is read before a later
// order's replaces it.
func (a *Agent) stoppedCopying(l int) bool {
	if len(a.stoppedOrds) == 0 {
		return false
	}
	a.settleStopped()
	for _, o := range a.stoppedOrds {
		if o.l == l {
			return true
		}
	}
	return false
}

// holdBack is publish's filter while a stopped order is unsettled or
// completions wait: the completions of a rank that is the sender of a
// stopped order still copied (stoppedOrder) are kept, in order, and
// published with the first publish after the receiver's copy ended, ahead
// of that publish's own; every other completion goes out now. It cannot
// hold one forever where the job goes on: a receiver continued finishes
// its copy within its call (package mpiapi, servePull) and stores the done
// word whatever it copied; a receiver that exits drops the order (its
// job fails); one never continued belongs to a job that stays stopped.
func (a *Agent) holdBack(cs []proto.Completion) []proto.Completion {
	a.settleStopped()
	held := func(r proto.Rank) bool {
		for _, o := range a.stoppedOrds {
			if o.src == r {
				return true
			}
		}
		return false
	}
	out := a.pubBuf[:0]
	keep := a.heldBack[:0]
	for _, c := range a.heldBack {
		if held(c.Rank) {
			keep = append(keep, c)
		} else {
			out = append(out, c)
		}
	}
	a.heldBack = keep
	for _, c := range cs {
		if held(c.Rank) {
			a.heldBack = append(a.heldBack, c)
		} else {
			out = append(out, c)
		}
	}
	a.pubBuf = out
	return out
}
