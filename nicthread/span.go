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
	if !sp.posted && !a.paused && !a.noPull[sp.l] && sp.c.Len-sp.off >= pullMin {
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
			sp.on = false
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
				sp.off, sp.on = sp.c.Len, false
				return true, nil
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
// bounce buffer.
func (a *Agent) spanCopy(k proto.SliceID, n uint64) error {
	sp := &a.sp
	for n > 0 {
		m := min(n, uint64(len(a.bounce)))
		c := &a.piece // not a local: its address would move it to the heap
		*c = sp.c
		c.SrcAddr, c.DstAddr, c.Off, c.Len, c.Span = c.SrcAddr+sp.off, c.DstAddr+sp.off, c.Off+sp.off, m, 0
		if err := a.move(k, -1, c); err != nil { // -1: not counted (spanStart counted the entry); checked piece by piece (moveChecked)
			return err
		}
		a.stats.Bytes -= m // counted when the span started
		sp.off += m
		n -= m
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
// same source (the sender is still in its send: the span completes in its
// last slice) into its own buffer before it can see the receive complete,
// and its late result is not read (the next order has another number and
// is posted only once the rank offers again).
func (a *Agent) spanSettle() {
	sp := &a.sp
	if !sp.on || !sp.posted {
		return
	}
	if spanSettling != nil {
		spanSettling()
	}
	done, err := a.spanResult(sp.end, true, settleBound(a), true)
	if done || err != nil { // an error (the rank exited, a bad result) is the span's last slice's to report
		return
	}
	sp.posted = false
	a.pullSt.Stopped++
	if a.chk != nil && a.chk.deferSums() {
		// The receiver, continued, finishes its copy and stores its sum:
		// compared then, as far as it copied (flow.go, flowSpan). Its
		// source sum is taken now, while the send is in flight.
		_ = a.flowSpan(1, true) // an error here (an unreadable sender) is found again by the agent's own copy of the rest
	}
}
