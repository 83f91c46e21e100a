package nicthread

import (
	"encoding/binary"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bcsmpi/bcsmpi/internal/check"
	"github.com/bcsmpi/bcsmpi/internal/core"
	"github.com/bcsmpi/bcsmpi/internal/proto"
	"github.com/bcsmpi/bcsmpi/internal/shm"
	"github.com/bcsmpi/bcsmpi/internal/unix"
)

// The agent's part of the opt-in checks (BCS_CHECK; see package
// internal/check). An agent with no check selected has a.chk == nil, and
// each hook in the copy paths is one branch on it.
//
// Flow (FlowChecker's idea, online): every chunk of the plan is summed
// (CRC-32) at its source — the bytes the agent read from the sender, the
// inline copy or the staging area — and at its destination, after the
// write: the agent reads the receiver's bytes back (a chunk within the
// node, or a data frame from another node, whose source sum travels in the
// frame's Count word), or, for a pull order, the receiving rank sums what it
// copied and the agent takes the source's sum: from the send buffer's block
// sums in its check header where the send has one (postSource; under
// buffers taken at post, under flow alone right after the post for a large
// send), else by reading the sender's bytes itself; under flow alone the
// rank stores its sums after reporting the order done and the agent
// compares later (verifyPulls, verifyPull; a span's order too, flowSpan).
// It also counts, per
// plan entry, the moves made from this node and the frames that arrived
// here; at the end of the slice every entry this node sources must have
// moved once and every entry from another node must have arrived once. A
// difference is a runtime bug: the job aborts with a report naming the
// slice, the plan entry (its index and chunk) and the nodes. Under flow
// alone, a rank that modifies a send buffer while a chunk of it is read by
// the receiver (pull orders) makes the two reads differ: that is reported
// as a flow violation too, naming the chunk; the buffer check at the send's
// completion names the request. Under buffers,flow the difference from the
// post is the program's, recorded for the sender (pullDiffersFromPost).
//
// Buffers: before the agent writes a point-to-point chunk into a receive
// buffer (within the node, or from a data frame), it compares the blocks
// of the buffer that start inside the chunk with their sums at post, which
// it reads from the receiving rank through the check header named in the
// request's completion record (internal/shm, check words), and records the
// blocks the program wrote there; the rank reports them at completion.
type checks struct {
	mode    check.Mode
	moved   []uint32        // per plan entry: moves from this node (TX goroutine)
	shares  uint32          // moves of a span's shares by the agent (spanCopy counts each; TX goroutine)
	arrived []atomic.Uint32 // per plan entry: frames arrived here (reader goroutines)
	back    []byte          // read-back and pre-write buffer of the TX goroutine
	raw     []byte          // header sums as read, TX goroutine
	sums    []uint32        // receive buffer sums at post, TX goroutine
	ssums   []uint32        // send buffer sums at post, TX goroutine
	rxMu    sync.Mutex      // the reader goroutines share rxBack, rxRaw and rxSums
	rxBack  []byte
	rxRaw   []byte
	rxSums  []uint32
	sends   map[inlineKey]uint32 // the request slot of each local rendezvous send, until it completes
	// sendSeq[l][req] is 1 + the Seq of local rank l's rendezvous send in
	// request slot req (0: none), so that the send's entry in sends is
	// removed when its completion is in a plan, whatever ended it (its last
	// chunk, a zero-length match, a cancel).
	sendSeq [][]uint64
	pullSrc []uint32 // source sums of the pull order being served (flow)
	// pend[l]: under flow alone, local rank l's last served pull order,
	// whose sums the rank stores after reporting it done; the agent
	// compares them at its next TX, or when the rank takes its next order
	// (verifyPulls, verifyPull).
	pend []pendPull
	// pullPost[j]: pullSrc[j] was taken from the send buffer's block sums
	// at post (postSource), not from a read of the sender's bytes.
	pullPost []bool
	// srcRead counts the bytes the agent read from senders only to sum them
	// (sumSource, postSource's partial blocks): the flow check's own passes
	// over send buffers, which tests bound.
	srcRead uint64
	// colls[l] are the request slots of local rank l's active collectives
	// (drained, not yet completed in a plan), whose written buffer may have
	// a check header (a nonblocking collective's, see package mpiapi):
	// collView finds the one a chunk writes into. Shared by the TX and the
	// reader goroutines.
	collMu sync.Mutex
	colls  [][]uint32
	// repMu orders the findings written into completion records
	// (ReportWritten): a collective's receive buffer is written by the TX
	// goroutine and by reader goroutines at once.
	repMu sync.Mutex
}

// pendPull is a served pull order whose destination sums are still to be
// compared (flow alone): its slice, its number, and, per entry the rank
// copied, the plan entry, a copy of its chunk (plans are reused) and the
// source sum.
type pendPull struct {
	on  bool
	k   proto.SliceID
	seq uint32
	idx []int32
	cs  []proto.Chunk
	src []uint32
	// stopped: a span's order whose receiver was stopped mid-copy
	// (spanSettle); copied: how many entries it copied, read from the
	// order's done word once it shows the copy ended (settleStopped), -1
	// while unknown.
	stopped bool
	copied  int
}

// deferSums says whether a pull order's destination sums are compared
// later rather than when the order is done: under flow alone, where
// the receiving rank sums each piece as it copies it and stores the sums
// after reporting the order done (package mpiapi, flowCopy and pullSums),
// so that spans keep their single order. Under buffers,flow the
// rank sums each piece as it copies it (it compares the piece before the
// write anyway), and the agent compares in the same slice, while it can
// still read the sender to tell a program's modification from a runtime
// bug (pullDiffersFromPost).
func (x *checks) deferSums() bool { return x.mode.Flow && !x.mode.Buffers }

// copyFault, when set (tests only), is called by the agent for every chunk
// it copies or sends, after the source sum of its first piece, with that
// piece's bytes about to be written (the whole chunk when it is at most
// check.PieceSize): it may change them, and returns how many times to write
// the chunk (1 normally; 0 skips the chunk, 2 moves it twice).
var copyFault func(k proto.SliceID, i int, c *proto.Chunk, data []byte) int

func newChecks(m check.Mode, budget uint64, ranks, reqMax int) *checks {
	if !m.On() {
		return nil
	}
	sendSeq := make([][]uint64, ranks)
	for l := range sendSeq {
		sendSeq[l] = make([]uint64, reqMax)
	}
	nb := check.Blocks(int(budget)) + 2    // the blocks a chunk reaches
	n := check.PieceSize + check.BlockSize // a piece and the block it ends in
	return &checks{mode: m, sends: make(map[inlineKey]uint32), sendSeq: sendSeq, pend: make([]pendPull, ranks), pullSrc: make([]uint32, 0, shm.PullMax), pullPost: make([]bool, 0, shm.PullMax), colls: make([][]uint32, ranks),
		back: make([]byte, n), raw: make([]byte, 4*nb), sums: make([]uint32, 0, nb), ssums: make([]uint32, 0, nb),
		rxBack: make([]byte, n), rxRaw: make([]byte, 4*nb), rxSums: make([]uint32, 0, nb)}
}

// drained notes descriptor d of local rank l (not inline), drained in the
// exchange: a rendezvous send, whose buffer the agent compares as it reads
// it, or a collective, whose written buffer it compares before writing it.
func (x *checks) drained(l int, d proto.Descriptor) {
	switch d.Kind {
	case proto.KindSend:
		x.sends[inlineKey{d.Rank, d.Seq}] = d.Req
		x.sendSeq[l][d.Req] = d.Seq + 1
	case proto.KindColl:
		if x.mode.Buffers {
			x.collMu.Lock()
			x.colls[l] = append(x.colls[l], d.Req)
			x.collMu.Unlock()
		}
	}
}

// collDone forgets local rank l's collective in request slot req (its
// completion is in a plan).
func (x *checks) collDone(l int, req uint32) {
	x.collMu.Lock()
	defer x.collMu.Unlock()
	cs := x.colls[l]
	for j, r := range cs {
		if r == req {
			x.colls[l] = append(cs[:j], cs[j+1:]...)
			return
		}
	}
}

// reset prepares the counts for plan p (before the plan is published).
func (x *checks) reset(p *core.Plan) {
	n := len(p.Chunks)
	if cap(x.moved) < n {
		x.moved = make([]uint32, n)
		x.arrived = make([]atomic.Uint32, n)
	}
	x.moved = x.moved[:n]
	clear(x.moved)
	x.arrived = x.arrived[:n]
	for i := range x.arrived {
		x.arrived[i].Store(0)
	}
}

// recvTouchedNote qualifies a difference found by reading back what the
// agent wrote: the receiving program may have written there meanwhile.
const recvTouchedNote = "; unless the receiving program wrote its receive buffer while the message was in flight (MPI forbids it; --check buffers tells the two apart and names the call)"

func (a *Agent) flowErr(k proto.SliceID, i int, c *proto.Chunk, format string, args ...any) error {
	return &JobError{Node: a.node, Rank: -1, Why: fmt.Sprintf("flow check: runtime bug in slice %d, plan entry %d (%s, node %d -> node %d): %s",
		k, i, c.Describe(), c.SrcNode, c.DstNode, fmt.Sprintf(format, args...))}
}

// pullSources takes the source sum of each entry of block l's pull order,
// which the rank has taken (flow check), while the rank copies them. Where
// the send has a check header (every send under buffers; a send of at
// least check.FlowSumMin bytes under flow alone, whose sums the sender
// takes after posting it), the send buffer's block sums are the source:
// the sum of the blocks wholly inside the chunk is combined from them
// (postSource), and only the bytes of the chunk's partial blocks at its
// ends, and of blocks the sender has not summed yet, are read, so the flow
// check adds no pass over the send buffer on the agent's side; the sum is
// compared with the rank's (flowPulls, verifyPulls), and the sender read
// again only if they differ. Without a header, the agent reads the
// sender's bytes itself, piece by piece into a buffer that stays in the
// cache (measured: reading them after the rank's copy instead, when they
// might still be cached, made the slices longer).
func (a *Agent) pullSources(k proto.SliceID, p *core.Plan, l int) error {
	x := a.chk
	x.pullSrc, x.pullPost = x.pullSrc[:0], x.pullPost[:0]
	for _, i := range a.pullIdx[l] {
		s, post, err := a.spanSource(&p.Chunks[i])
		if err != nil {
			return err
		}
		x.pullSrc, x.pullPost = append(x.pullSrc, s), append(x.pullPost, post)
	}
	return nil
}

// sendView is the check header of the send that chunk c is part of (a
// local rendezvous send), read for the chunk: ok false if there is none.
// partial: the header may not have every block of the chunk summed yet (a
// send under flow alone, summed after its post); only the sums in place
// are read.
func (a *Agent) sendView(c *proto.Chunk, partial bool) (view, bool) {
	x := a.chk
	req, ok := x.sends[inlineKey{c.Src, c.SendSeq}]
	if !ok || c.Len == 0 || c.Xfer == 0 {
		return view{}, false
	}
	return a.readView(c.Src, req, c.SrcAddr, c.Len, x.raw, x.ssums, partial)
}

// postSource is the sum of pull chunk c as the send buffer held it at
// post: the block sums at post of the blocks wholly inside the chunk (read
// from the sender's check header), and the sum of the bytes of the partial
// blocks at the chunk's ends (read from the sender now), combined in order
// (check.Combine). Under flow alone the sender takes its block sums after
// posting the send (package mpiapi, flowSums): the blocks it has not
// summed yet are read from the sender and summed here. ok false: the send
// has no header the agent can read.
func (a *Agent) postSource(c *proto.Chunk) (sum uint32, ok bool, err error) {
	v, ok := a.sendView(c, true)
	if !ok {
		return 0, false, nil
	}
	end := int(c.SrcAddr-v.base) + int(c.Len)
	for pos := int(c.SrcAddr - v.base); pos < end; {
		b := pos / check.BlockSize
		from, to := b*check.BlockSize, min((b+1)*check.BlockSize, int(v.n))
		if b-v.b0 >= len(v.sums) { // not summed yet: read the rest (every later block too)
			n := min(end-pos, len(a.chk.back))
			part := a.chk.back[:n]
			if err := unix.ReadFrom(a.pid(c.Src), part, v.base+uint64(pos)); err != nil {
				return 0, false, a.moveErr(c.Src, c, "reading the send buffer", err)
			}
			a.chk.srcRead += uint64(n)
			sum = check.Update(sum, part)
			pos += n
			continue
		}
		if from == pos && to <= end { // a whole block: its sum at post
			sum = check.Combine(sum, v.sums[b-v.b0], to-from)
			pos = to
			continue
		}
		n := min(to, end) - pos
		part := a.chk.back[:n]
		if err := unix.ReadFrom(a.pid(c.Src), part, v.base+uint64(pos)); err != nil {
			return 0, false, a.moveErr(c.Src, c, "reading the send buffer", err)
		}
		a.chk.srcRead += uint64(n)
		sum = check.Update(sum, part)
		pos += n
	}
	return sum, true, nil
}

// sumSource reads chunk c's bytes from the sender, piece by piece, and
// returns their sum.
func (a *Agent) sumSource(c *proto.Chunk) (uint32, error) {
	var s uint32
	for off := 0; off < int(c.Len); {
		n := min(check.PieceSize, int(c.Len)-off)
		b := a.chk.back[:n]
		if err := unix.ReadFrom(a.pid(c.Src), b, c.SrcAddr+uint64(off)); err != nil {
			return 0, a.moveErr(c.Src, c, "reading the send buffer", err)
		}
		a.chk.srcRead += uint64(n)
		s = check.Update(s, b)
		off += n
	}
	return s, nil
}

// rereadSource reads pull chunk c's bytes from the sender again, in pieces
// that start at the send buffer's block boundaries, compares the blocks
// wholly inside each piece with their sums at post (v; checkRead records a
// difference for the sender to report) and returns the chunk's sum now and
// whether a block differed from the post.
func (a *Agent) rereadSource(k proto.SliceID, c *proto.Chunk, v *view) (sum uint32, modified bool, err error) {
	skew := int(c.SrcAddr-v.base) % check.BlockSize
	for off := 0; off < int(c.Len); {
		n := min(check.PieceSize-skew, int(c.Len)-off)
		skew = 0
		b := a.chk.back[:n]
		if err := unix.ReadFrom(a.pid(c.Src), b, c.SrcAddr+uint64(off)); err != nil {
			return 0, false, a.moveErr(c.Src, c, "reading the send buffer", err)
		}
		a.chk.srcRead += uint64(n)
		if a.checkRead(k, v, int(c.SrcAddr-v.base)+off, b, &sum) {
			modified = true
		}
		off += n
	}
	return sum, modified, nil
}

// sendModified reports a program that changed its send buffer while the
// message was in flight: the bytes differ between two reads of the sender.
func (a *Agent) sendModified(k proto.SliceID, c *proto.Chunk) error {
	return &JobError{Node: a.node, Rank: c.Src, Why: fmt.Sprintf("flow check: rank %d modified its send buffer while its message to rank %d was in flight (slice %d, %d bytes at offset %d of the message): MPI forbids touching a send buffer before its request completes; --check buffers names the call",
		c.Src, c.Dst, k, c.Len, c.Off)}
}

// flowPulls checks the entries of block l's served pull order that the rank
// copied: each is one move, and the rank's sum of what it copied must match
// the sender's bytes (pullSources).
// Under flow alone the comparison is made later (deferSums; verifyPulls,
// verifyPull): the order is recorded in pend[l], with copies of its chunks.
func (a *Agent) flowPulls(k proto.SliceID, p *core.Plan, l, copied int) error {
	x := a.chk
	if x.deferSums() {
		pd := &x.pend[l]
		pd.on, pd.k, pd.seq, pd.stopped = true, k, a.pullSeq[l], false
		pd.idx, pd.cs, pd.src = pd.idx[:0], pd.cs[:0], pd.src[:0]
		for j, i := range a.pullIdx[l][:copied] {
			x.moved[i]++
			if j < len(x.pullSrc) {
				pd.idx, pd.cs, pd.src = append(pd.idx, i), append(pd.cs, p.Chunks[i]), append(pd.src, x.pullSrc[j])
			}
		}
		return nil
	}
	for j, i := range a.pullIdx[l][:copied] {
		c := &p.Chunks[i]
		a.chk.moved[i]++
		if !a.chk.mode.Flow || j >= len(a.chk.pullSrc) {
			continue
		}
		if src, dst := a.chk.pullSrc[j], a.blocks[l].PullSum(j); src != dst {
			if a.chk.pullPost[j] {
				if err := a.pullDiffersFromPost(k, int(i), c, j, src, dst); err != nil {
					return err
				}
				continue
			}
			// The agent and the rank read the sender at different times:
			// if the sender's bytes changed in between, the program did it.
			if now, err := a.sumSource(c); err == nil && now != src {
				return a.sendModified(k, c)
			}
			return a.flowErr(k, int(i), c, "the %d bytes the receiving rank copied (pull order entry %d) differ from the sender's (CRC-32 %#08x at the source, %#08x at the destination)", c.Len, j, src, dst)
		}
	}
	return nil
}

// flowSpan records the span's order (span.go), done with copied entries
// (0 or 1) or, stopped, taken over by the agent while the receiver may
// still copy, for the deferred comparison (flow alone): the rank sums the
// span as it copies it and stores the sum after reporting the order done,
// and the agent compares it at its next TX or when the rank takes its next
// order (verifyPulls, verifyPull), as for any pull order. The source sum is
// taken now, while the send is in flight (it completes at the end of the
// span's last slice at the earliest): combined from the block sums the
// sender took after posting it (spanSource). The entry was counted once
// when the span started; the agent's shares of it, if any, were checked as
// it copied them (moveChecked, each piece counted: spanCopy), and the
// order covers the rest, so every byte of the chunk is checked once
// (asserted when the span ends: spanEnd).
func (a *Agent) flowSpan(copied int, stopped bool) error {
	x, sp := a.chk, &a.sp
	pd := &x.pend[sp.l]
	pd.on, pd.k, pd.seq, pd.stopped, pd.copied = true, sp.k0, sp.seq, stopped, -1
	pd.idx, pd.cs, pd.src = pd.idx[:0], pd.cs[:0], pd.src[:0]
	if copied != 1 {
		return nil // nothing copied: the rank stores no sum, and the agent copies the rest (moveChecked)
	}
	c := sp.c
	c.SrcAddr, c.DstAddr, c.Off, c.Len = c.SrcAddr+sp.off, c.DstAddr+sp.off, c.Off+sp.off, c.Len-sp.off
	s, _, err := a.spanSource(&c)
	if err != nil {
		return err
	}
	pd.idx, pd.cs, pd.src = append(pd.idx, int32(sp.i)), append(pd.cs, c), append(pd.src, s)
	return nil
}

// spanSource is the source sum of pull chunk c (a span's, or one of a pull
// order's, which may be larger than a budget under flow alone: scheduler
// doc.go, "Pulled chunks"): postSource of its parts of at most a budget
// (the blocks the agent reads a header for at a time), combined
// (check.Combine); post false: the send has no header the agent can read,
// and the chunk was read and summed whole (sumSource).
func (a *Agent) spanSource(c *proto.Chunk) (sum uint32, post bool, err error) {
	step := uint64(max(cap(a.chk.ssums)-2, 1) * check.BlockSize)
	part := *c
	for off := uint64(0); off < c.Len; off += step {
		part.SrcAddr, part.Len = c.SrcAddr+off, min(step, c.Len-off)
		s, ok, err := a.postSource(&part)
		if err != nil {
			return 0, false, err
		}
		if !ok {
			sum, err = a.sumSource(c)
			return sum, false, err
		}
		sum = check.Combine(sum, s, int(part.Len))
	}
	return sum, true, nil
}

var finalizeCode = proto.CallCode("MPI_Finalize")

// waitSums waits, at most timeout, until local rank l has stored the sums
// of its last served pull order (pend[l], flow alone).
func (a *Agent) waitSums(l int, timeout time.Duration) error {
	pd, b := &a.chk.pend[l], a.blocks[l]
	deadline := a.now() + timeout
	for {
		old := atomic.LoadUint32(b.PullSumsDone())
		if old == pd.seq {
			return nil
		}
		if a.exited[l].Load() {
			return a.fail(a.rankOf[l], "process exited before storing the flow check's sums of its pull order of slice %d", pd.k)
		}
		now := a.now()
		if now >= deadline {
			return a.fail(a.rankOf[l], "the flow check's sums of its pull order of slice %d were not stored within %v", pd.k, timeout)
		}
		unix.FutexWait(b.PullSumsDone(), old, min(deadline-now, time.Millisecond))
	}
}

// verifyPulls compares, at the start of TX, the destination sums of the
// pull orders served in earlier slices (flow alone, deferSums) that their
// ranks have stored by now; it does not wait for the others. An order not
// compared here is compared when its rank takes its next order (waitPulls:
// a rank stores an order's sums before it takes the next), or at a later
// TX (a rank that gets no more orders; MPI_Finalize waits for it).
func (a *Agent) verifyPulls() error {
	for l := range a.blocks {
		if pd := &a.chk.pend[l]; pd.on && atomic.LoadUint32(a.blocks[l].PullSumsDone()) == pd.seq {
			if err := a.verifyPull(l, 0); err != nil {
				return err
			}
		}
	}
	return nil
}

// verifyPull compares the destination sums of local rank l's last served
// pull order (pend[l]) with their source sums, waiting at most timeout for
// the rank to store them (it does right after reporting the order done).
// A difference names the slice the chunk moved in. If the sender's request
// has not completed, its bytes are read again, as in the same slice: if
// they now differ from the source sum, the program modified its send
// buffer; otherwise (or once the request completed, when the program may
// reuse the buffer) it is a runtime bug, and the report says that a
// program's modification during the copy reads the same. The rank is told
// (shm: pull sums, verified): it waits for that before it stores the sums
// of its next order over these, and at MPI_Finalize.
func (a *Agent) verifyPull(l int, timeout time.Duration) error {
	x := a.chk
	pd := &x.pend[l]
	b := a.blocks[l]
	if err := a.waitSums(l, timeout); err != nil {
		return err
	}
	pd.on = false
	if pd.stopped { // compare what it copied, as its done word said (settleStopped)
		if pd.copied < 0 {
			a.settleStopped() // its sums are stored, so its done word is (mpiapi: FinishPull, then the sums)
		}
		if pd.copied < 0 {
			done := atomic.LoadUint32(b.PullDone())
			return a.fail(a.rankOf[l], "control page: pull order %d (a span of slice %d, its copy stopped by the gang): the flow check's sums stored with done = %d and a copied count the order cannot have, want done %d and 0 or 1 entries copied", pd.seq, pd.k, done, pd.seq)
		}
		pd.cs = pd.cs[:min(pd.copied, len(pd.cs))]
	}
	for j := range pd.cs {
		c := &pd.cs[j]
		src, dst := pd.src[j], b.PullSum(j)
		if src == dst {
			continue
		}
		if _, inFlight := x.sends[inlineKey{c.Src, c.SendSeq}]; inFlight {
			if now, err := a.sumSource(c); err == nil && now != src {
				return a.sendModified(pd.k, c)
			}
		}
		return a.flowErr(pd.k, int(pd.idx[j]), c, "the %d bytes the receiving rank copied (pull order entry %d) differ from the sender's (CRC-32 %#08x at the source, %#08x at the destination); unless the sending program modified its send buffer while the receiver copied it (MPI forbids it; --check buffers tells the two apart and names the call)", c.Len, j, src, dst)
	}
	atomic.StoreUint32(b.PullVerified(), pd.seq)
	unix.FutexWake(b.PullVerified(), 1)
	if b.Blocked() == finalizeCode { // it waits for this
		atomic.AddUint32(b.Wake(), 1)
		unix.FutexWake(b.Wake(), 1)
	}
	return nil
}

// pullDiffersFromPost judges pull order entry j (plan entry i, chunk c),
// whose copy by the receiving rank (sum dst) differs from the send buffer
// at post (sum src, postSource): the agent reads the sender again (the pass
// that a clean chunk does without). If the sender's bytes now equal the
// copy, the copy is right and the program modified its send buffer before
// the copy read it: the blocks that differ from the post are recorded for
// the sender, whose completion reports them (MPI_ERR_BUFFER, naming the
// request; a warning under buffers:warn), as when the agent reads a send
// buffer itself (checkRead). If they differ from the copy and from the
// post, the program is modifying the buffer while the runtime reads it
// (recorded too; if no whole block differs, reported as sendModified). If
// they equal the post but not the copy, the runtime copied wrong — or the
// program modified the buffer and restored it before this read, which the
// sums cannot tell apart: a flow violation whose report says both.
func (a *Agent) pullDiffersFromPost(k proto.SliceID, i int, c *proto.Chunk, j int, src, dst uint32) error {
	v, ok := a.sendView(c, false)
	if !ok {
		return a.flowErr(k, i, c, "the %d bytes the receiving rank copied (pull order entry %d) differ from the send buffer at post (CRC-32 %#08x at the source, %#08x at the destination)", c.Len, j, src, dst)
	}
	now, modified, err := a.rereadSource(k, c, &v)
	if err != nil {
		return err
	}
	switch {
	case now == dst:
		return nil // the copy is right; any block modified since the post is recorded
	case now != src:
		if modified {
			return nil
		}
		return a.sendModified(k, c)
	}
	return a.flowErr(k, i, c, "the %d bytes the receiving rank copied (pull order entry %d) differ from the sender's, which equal its send buffer at post (CRC-32 %#08x at the source, %#08x at the destination); unless the sending program modified its send buffer and restored it while the message was in flight (MPI forbids it)", c.Len, j, src, dst)
}

// flowEnd checks that every plan entry this node sources moved once and
// every entry from another node arrived once (end of TX).
func (a *Agent) flowEnd(k proto.SliceID, p *core.Plan) error {
	for _, c := range p.Completions {
		if c.Kind == proto.KindColl && int(c.Rank) < len(a.localOf) && a.localOf[c.Rank] >= 0 && a.chk.mode.Buffers {
			a.chk.collDone(a.localOf[c.Rank], c.Req)
			continue
		}
		if c.Kind != proto.KindSend || int(c.Rank) >= len(a.localOf) || a.localOf[c.Rank] < 0 || int(c.Req) >= len(a.chk.sendSeq[a.localOf[c.Rank]]) {
			continue
		}
		if s := &a.chk.sendSeq[a.localOf[c.Rank]][c.Req]; *s != 0 {
			delete(a.chk.sends, inlineKey{c.Rank, *s - 1})
			*s = 0
		}
	}
	for i := range p.Chunks {
		c := &p.Chunks[i]
		if c.SrcNode == a.node && a.chk.moved[i] != 1 {
			return a.flowErr(k, i, c, "moved %d times by its source node, want once", a.chk.moved[i])
		}
		if c.DstNode == a.node && c.SrcNode != a.node {
			if n := a.chk.arrived[i].Load(); n != 1 {
				return a.flowErr(k, i, c, "arrived %d times, want once", n)
			}
		}
	}
	return nil
}

// moveChecked is move with the checks on (or a copy fault set, tests only):
// chunk i (c) is moved piece by piece (check.PieceSize), and each piece is
// read from the sender (read; else data holds the chunk), compared with the
// send buffer's block sums at post (buffers), summed at the source (flow),
// compared before the write with the receive buffer's sums at post
// (buffers), written, and read back and summed at the destination (flow),
// while it is still in the cache. The pieces of a point-to-point send start
// at its buffer's block boundaries, so every block lies in one piece.
func (a *Agent) moveChecked(k proto.SliceID, i int, c *proto.Chunk, data []byte, read bool) error {
	x := a.chk // nil: a copy fault without checks
	flow := x != nil && x.mode.Flow
	local := c.DstNode == a.node
	var sv, dv view
	sok, dok := false, false
	if x != nil && x.mode.Buffers && c.Len > 0 {
		if req, ok := x.sends[inlineKey{c.Src, c.SendSeq}]; ok && read && c.Xfer != 0 {
			sv, sok = a.readView(c.Src, req, c.SrcAddr, c.Len, x.raw, x.ssums, false)
		}
		if local && !c.DstAcc {
			dv, dok = a.destView(c, x.raw, x.sums)
		}
	}
	skew := 0
	if sok {
		skew = int(c.SrcAddr-sv.base) % check.BlockSize
	}
	times := 1
	if c.Len == 0 && copyFault != nil {
		times = copyFault(k, i, c, data)
	}
	var src, dst uint32
	for off := 0; off < int(c.Len); {
		n := min(check.PieceSize-skew, int(c.Len)-off)
		skew = 0
		p := data[off : off+n]
		if read {
			if err := unix.ReadFrom(a.pid(c.Src), p, c.SrcAddr+uint64(off)); err != nil {
				return a.moveErr(c.Src, c, "reading the send buffer", err)
			}
		}
		switch {
		case sok && flow: // one pass for both
			a.checkRead(k, &sv, int(c.SrcAddr-sv.base)+off, p, &src)
		case sok:
			a.checkRead(k, &sv, int(c.SrcAddr-sv.base)+off, p, nil)
		case flow:
			src = check.Update(src, p)
		}
		if off == 0 && copyFault != nil {
			times = copyFault(k, i, c, p)
		}
		if local {
			if dok {
				a.preWrite(k, &dv, int(c.DstAddr-dv.base)+off, n, x.back)
			}
			for range times {
				if err := unix.WriteTo(a.pid(c.Dst), p, c.DstAddr+uint64(off)); err != nil {
					return a.moveErr(c.Dst, c, "writing the receive buffer", err)
				}
			}
			if flow {
				b, err := a.readBack(c, off, n, x.back)
				if err != nil {
					return a.moveErr(c.Dst, c, "reading back the receive buffer", err)
				}
				dst = check.Update(dst, b)
			}
		}
		off += n
	}
	a.stats.Bytes += c.Len
	if !local {
		a.dataMsg = proto.Msg{Type: proto.MsgData, Slice: k, Node: a.node, Index: uint32(i), Count: src, Payload: data}
		for range times {
			if err := a.sendData(c.DstNode, &a.dataMsg); err != nil {
				return a.sendErr(k, c, err)
			}
		}
	}
	if x == nil {
		return nil
	}
	if i >= 0 {
		x.moved[i] += uint32(times)
	} else {
		x.shares += uint32(times) // a span's share (spanCopy)
	}
	if flow && local && dst != src {
		what := ""
		if i < 0 { // a span's share (spanCopy): name the span's entry
			k, i, what = a.sp.k0, a.sp.i, fmt.Sprintf(" (a share of a span copied by the agent, %d bytes at offset %d of the message)", c.Len, c.Off)
		}
		return a.flowErr(k, i, c, "the %d bytes written differ from the bytes read at the source (CRC-32 %#08x at the source, %#08x at the destination)%s%s", c.Len, src, dst, what, recvTouchedNote)
	}
	return nil
}

// readBack reads the n bytes at offset off of chunk c's destination after
// the write: the staging area, or the receiving rank's memory read into buf.
func (a *Agent) readBack(c *proto.Chunk, off, n int, buf []byte) ([]byte, error) {
	if c.DstAcc {
		return a.acc[c.DstAddr+uint64(off):][:n], nil
	}
	b := buf[:n]
	return b, unix.ReadFrom(a.pid(c.Dst), b, c.DstAddr+uint64(off))
}

// arriveChecked is OnData with the checks on: it counts the arrival of
// frame m (plan entry i, chunk c) and writes it piece by piece, each piece
// compared before the write with the receive buffer's sums at post
// (buffers), written, and read back and summed (flow): the destination's
// sum must equal the source's, which the frame carries; on a difference the
// payload is summed too, to tell a frame corrupted on the way from a bad
// write. A duplicate is not written. A failed write is stored in a.dataErr; a check's finding is
// returned.
func (a *Agent) arriveChecked(i int, c *proto.Chunk, m *proto.Msg) error {
	x := a.chk
	if n := x.arrived[i].Add(1); n != 1 {
		return a.flowErr(m.Slice, i, c, "arrived %d times, want once", n)
	}
	x.rxMu.Lock()
	defer x.rxMu.Unlock()
	var dv view
	dok := false
	if x.mode.Buffers && !c.DstAcc && c.Len > 0 {
		dv, dok = a.destView(c, x.rxRaw, x.rxSums)
	}
	var dst uint32
	for off := 0; off < len(m.Payload); {
		n := min(check.PieceSize, len(m.Payload)-off)
		p := m.Payload[off : off+n]
		if dok {
			a.preWrite(m.Slice, &dv, int(c.DstAddr-dv.base)+off, n, x.rxBack)
		}
		if c.DstAcc {
			copy(a.acc[c.DstAddr+uint64(off):][:n], p)
		} else if err := unix.WriteTo(a.pid(c.Dst), p, c.DstAddr+uint64(off)); err != nil {
			e := a.moveErr(c.Dst, c, "writing the receive buffer", err)
			a.dataErr.Store(&e)
			return nil
		}
		if x.mode.Flow {
			b, err := a.readBack(c, off, n, x.rxBack)
			if err != nil {
				return a.moveErr(c.Dst, c, "reading back the receive buffer", err)
			}
			dst = check.Update(dst, b)
		}
		off += n
	}
	if !x.mode.Flow || dst == m.Count {
		return nil
	}
	// Which copy failed: the frame, or the write (the payload is still here).
	if src := check.Sum(m.Payload); src != m.Count {
		return a.flowErr(m.Slice, i, c, "the %d bytes that arrived differ from the bytes sent (CRC-32 %#08x at the source, %#08x on arrival)", c.Len, m.Count, src)
	}
	return a.flowErr(m.Slice, i, c, "the %d bytes written differ from the bytes sent (CRC-32 %#08x at the source, %#08x at the destination)%s", c.Len, m.Count, dst, recvTouchedNote)
}

// view is a rank's check header (internal/shm, check words) as the agent
// reads it for one chunk: the request, the buffer's address and length, and
// the block sums at post of the blocks the chunk reaches (from block b0).
type view struct {
	blk     *shm.RankBlock
	req     uint32
	pid     int
	base, n uint64
	b0      int
	sums    []uint32
	// A collective's receive buffer (destView): only blocks cb0 .. cb1, the
	// ones wholly inside the chunk, are compared before the write. Its
	// chunks are written in any order and by several goroutines at once, so
	// a block that two chunks share may already hold the runtime's bytes of
	// the other one.
	coll     bool
	cb0, cb1 int
}

// destView is the check header of the receive buffer that chunk c writes
// into (a local rank's memory), read for the pre-write comparison: a
// point-to-point receive's, named by the chunk, or that of the rank's
// active collective whose written buffer contains the chunk.
func (a *Agent) destView(c *proto.Chunk, raw []byte, sums []uint32) (view, bool) {
	if c.Xfer != 0 {
		return a.readView(c.Dst, c.RecvReq, c.DstAddr, c.Len, raw, sums, false)
	}
	x := a.chk
	x.collMu.Lock()
	defer x.collMu.Unlock()
	for _, req := range x.colls[a.localOf[c.Dst]] {
		v, ok := a.readView(c.Dst, req, c.DstAddr, c.Len, raw, sums, false)
		if !ok {
			continue
		}
		off, end := int(c.DstAddr-v.base), int(c.DstAddr-v.base+c.Len)
		v.coll, v.cb0, v.cb1 = true, (off+check.BlockSize-1)/check.BlockSize, end/check.BlockSize-1
		if end == int(v.n) {
			v.cb1 = check.Blocks(end) - 1
		}
		return v, true
	}
	return view{}, false
}

// readView reads the check header of request req of local rank r for the
// chunk of length bytes at addr, once per chunk (raw and sums are the
// caller's scratch). What the rank wrote there is input: a header that
// cannot be read, or that does not contain the chunk, gives ok false, and
// the chunk is not compared.
func (a *Agent) readView(r proto.Rank, req uint32, addr, length uint64, raw []byte, sums []uint32, partial bool) (v view, ok bool) {
	v.blk, v.req = a.blocks[a.localOf[r]], req
	hdr := v.blk.CheckHeader(req)
	if hdr == 0 {
		return v, false
	}
	pid := a.pid(r)
	v.pid = pid
	var h [check.HeaderWords * 4]byte
	if unix.ReadFrom(pid, h[:], hdr) != nil {
		return v, false
	}
	v.base, v.n = binary.LittleEndian.Uint64(h[:]), binary.LittleEndian.Uint64(h[8:])
	if v.n > 1<<48 || addr < v.base || length > v.n || addr-v.base > v.n-length {
		return v, false
	}
	summed := check.Summed(h[:])
	if summed > check.Blocks(int(v.n)) {
		return v, false
	}
	off := int(addr - v.base)
	v.b0 = off / check.BlockSize
	nb := (off+int(length)-1)/check.BlockSize - v.b0 + 1
	if nb > cap(sums) || nb*4 > len(raw) {
		return v, false
	}
	if summed < v.b0+nb { // not every block of the chunk summed yet
		if !partial {
			return v, false
		}
		nb = max(summed-v.b0, 0)
	}
	sb := raw[:nb*4]
	if nb > 0 && unix.ReadFrom(pid, sb, hdr+uint64(check.HeaderWords+v.b0)*4) != nil {
		return v, false
	}
	v.sums = sums[:0]
	for i := 0; i < len(sb); i += 4 {
		v.sums = append(v.sums, binary.LittleEndian.Uint32(sb[i:]))
	}
	return v, true
}

// preWrite compares the blocks of a receive buffer (v) that start inside
// bytes [off, off+n) with their sums at post, just before the agent writes
// those bytes (buffers check), and records a difference in the request's
// completion record; buf is scratch for the buffer's bytes.
func (a *Agent) preWrite(k proto.SliceID, v *view, off, n int, buf []byte) {
	b0, b1 := check.Touched(off, n, int(v.n))
	if v.coll {
		b0, b1 = max(b0, v.cb0), min(b1, v.cb1)
	}
	if b0 > b1 {
		return
	}
	from, to := b0*check.BlockSize, min((b1+1)*check.BlockSize, int(v.n))
	if to-from > len(buf) {
		return
	}
	data := buf[:to-from]
	if unix.ReadFrom(v.pid, data, v.base+uint64(from)) != nil {
		return
	}
	if lo, hi, ok := check.Diff(v.sums[b0-v.b0:b1-v.b0+1], data, 0); ok {
		a.chk.repMu.Lock()
		v.blk.ReportWritten(v.req, uint32(b0+lo), uint32(b0+hi), k)
		a.chk.repMu.Unlock()
	}
}

// checkRead compares the bytes p the agent read at offset off of a
// point-to-point send buffer (v) with the buffer's block sums at post
// (buffers check): the blocks that lie wholly inside p (the pieces of a
// chunk start at block boundaries, so these are the blocks wholly inside
// the chunk; a block that straddles two chunks is left to the comparison at
// the send's completion). A difference — the program modified the buffer
// before the runtime read it, even if it restores it before the completion
// — is recorded in the send's completion record, and the rank reports it;
// it returns whether a block differed. With crc non-nil it also continues
// *crc over p (the flow check's source sum), combined from the block sums
// it computed (check.Combine) and the bytes of p outside whole blocks: one
// pass over the piece for both checks.
func (a *Agent) checkRead(k proto.SliceID, v *view, off int, p []byte, crc *uint32) bool {
	end := off + len(p)
	b0 := (off + check.BlockSize - 1) / check.BlockSize
	b1 := end/check.BlockSize - 1
	if end == int(v.n) {
		b1 = check.Blocks(int(v.n)) - 1
	}
	if b0 > b1 {
		if crc != nil {
			*crc = check.Update(*crc, p)
		}
		return false
	}
	if crc != nil {
		*crc = check.Update(*crc, p[:b0*check.BlockSize-off])
	}
	lo, hi := -1, -1
	for b := b0; b <= b1; b++ {
		blk := p[b*check.BlockSize-off : min((b+1)*check.BlockSize, int(v.n))-off]
		s := check.Sum(blk)
		if s != v.sums[b-v.b0] {
			if lo < 0 {
				lo = b
			}
			hi = b
		}
		if crc != nil {
			*crc = check.Combine(*crc, s, len(blk))
		}
	}
	if crc != nil {
		*crc = check.Update(*crc, p[min((b1+1)*check.BlockSize, int(v.n))-off:])
	}
	if lo >= 0 {
		v.blk.ReportWritten(v.req, uint32(lo), uint32(hi), k)
	}
	return lo >= 0
}
