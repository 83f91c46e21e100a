package nicthread

import (
	"encoding/binary"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/bcsmpi/bcsmpi/internal/check"
	"github.com/bcsmpi/bcsmpi/internal/proto"
	"github.com/bcsmpi/bcsmpi/internal/shm"
	"github.com/bcsmpi/bcsmpi/internal/unix"
	"github.com/bcsmpi/bcsmpi/scheduler"
)

// The agent's part of the opt-in checks (BCS_CHECK; see package
// internal/check). An agent with no check selected has a.chk == nil, and
// each hook in the copy paths is one branch on it.
//
// Flow (FlowChecker's idea, online): every chunk of the plan is summed
// (CRC-32C) at its source — the bytes the agent read from the sender, the
// inline copy or the staging area — and at its destination, after the
// write: the agent reads the receiver's bytes back (a chunk within the
// node, or a data frame from another node, whose source sum travels in the
// frame's Count word), or, for a pull order, the receiving rank sums what it
// copied and the agent reads the sender's bytes itself. It also counts, per
// plan entry, the moves made from this node and the frames that arrived
// here; at the end of the slice every entry this node sources must have
// moved once and every entry from another node must have arrived once. A
// difference is a runtime bug: the job aborts with a report naming the
// slice, the plan entry (its index and chunk) and the nodes. Under buffers,
// a rank that modifies a send buffer while a chunk of it is read by the
// receiver (pull orders) makes the two reads differ: that is reported as a
// flow violation too, naming the chunk; the buffer check at the send's
// completion names the request.
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
	arrived []atomic.Uint32 // per plan entry: frames arrived here (reader goroutines)
	back    []byte          // read-back and pre-write buffer of the TX goroutine
	sums    []uint32        // pre-write sums of the TX goroutine
	rxMu    sync.Mutex      // the reader goroutines share rxBack and rxSums
	rxBack  []byte
	rxSums  []uint32
	sends   map[inlineKey]uint32 // the request slot of each local rendezvous send, until its last chunk
	pullSrc []uint32             // source sums of the pull order being served (flow)
}

// copyFault, when set (tests only), is called by the agent for every chunk
// it copies or sends, after the source sum, with the bytes about to be
// written: it may change them, and returns how many times to write them
// (1 normally; 0 skips the chunk, 2 moves it twice).
var copyFault func(k proto.SliceID, i int, c *proto.Chunk, data []byte) int

func newChecks(m check.Mode, budget uint64) *checks {
	if !m.On() {
		return nil
	}
	n := budget + check.BlockSize
	nb := check.Blocks(int(n)) + 1
	return &checks{mode: m, sends: make(map[inlineKey]uint32), pullSrc: make([]uint32, 0, shm.PullMax), back: make([]byte, n), rxBack: make([]byte, n), sums: make([]uint32, 0, nb), rxSums: make([]uint32, 0, nb)}
}

// reset prepares the counts for plan p (before the plan is published).
func (x *checks) reset(p *scheduler.Plan) {
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

func (a *Agent) flowErr(k proto.SliceID, i int, c *proto.Chunk, format string, args ...any) error {
	return &JobError{Node: a.node, Rank: -1, Why: fmt.Sprintf("flow check: runtime bug in slice %d, plan entry %d (%s, node %d -> node %d): %s",
		k, i, c.Describe(), c.SrcNode, c.DstNode, fmt.Sprintf(format, args...))}
}

// readBack sums the len(buf) bytes at the destination of chunk c after the
// write: the staging area, or the receiving rank's memory read into buf.
func (a *Agent) readBack(c *proto.Chunk, buf []byte) (uint32, error) {
	if c.DstAcc {
		return check.Sum(a.acc[c.DstAddr:][:c.Len]), nil
	}
	b := buf[:c.Len]
	if err := unix.ReadFrom(a.pid(c.Dst), b, c.DstAddr); err != nil {
		return 0, err
	}
	return check.Sum(b), nil
}

// flowMove is move's check after chunk i (c) was written within the node:
// src is the source sum.
func (a *Agent) flowMove(k proto.SliceID, i int, c *proto.Chunk, src uint32, times int) error {
	a.chk.moved[i] += uint32(times)
	if !a.chk.mode.Flow || c.DstNode != a.node {
		return nil
	}
	dst, err := a.readBack(c, a.chk.back)
	if err != nil {
		return a.moveErr(c.Dst, c, "reading back the receive buffer", err)
	}
	if dst != src {
		return a.flowErr(k, i, c, "the %d bytes written differ from the bytes read at the source (CRC-32C %#08x at the source, %#08x at the destination)", c.Len, src, dst)
	}
	return nil
}

// flowArrive is OnData's check of frame m (plan entry i, chunk c): before
// the write it counts the arrival and compares the payload with the
// source's sum; after it (after true), it reads the destination back.
func (a *Agent) flowArrive(i int, c *proto.Chunk, m *proto.Msg, after bool) error {
	if !after {
		if n := a.chk.arrived[i].Add(1); n != 1 {
			return a.flowErr(m.Slice, i, c, "arrived %d times, want once", n)
		}
		if a.chk.mode.Flow {
			if s := check.Sum(m.Payload); s != m.Count {
				return a.flowErr(m.Slice, i, c, "the %d bytes that arrived differ from the bytes sent (CRC-32C %#08x at the source, %#08x on arrival)", c.Len, m.Count, s)
			}
		}
		return nil
	}
	if !a.chk.mode.Flow {
		return nil
	}
	a.chk.rxMu.Lock()
	defer a.chk.rxMu.Unlock()
	dst, err := a.readBack(c, a.chk.rxBack)
	if err != nil {
		return a.moveErr(c.Dst, c, "reading back the receive buffer", err)
	}
	if dst != m.Count {
		return a.flowErr(m.Slice, i, c, "the %d bytes written differ from the bytes sent (CRC-32C %#08x at the source, %#08x at the destination)", c.Len, m.Count, dst)
	}
	return nil
}

// pullSources sums the sender's bytes of each entry of block l's pull
// order, which the rank has taken: the agent reads them while the rank
// copies them (flow check).
func (a *Agent) pullSources(k proto.SliceID, p *scheduler.Plan, l int) error {
	a.chk.pullSrc = a.chk.pullSrc[:0]
	for _, i := range a.pullIdx[l] {
		c := &p.Chunks[i]
		b := a.chk.back[:c.Len]
		if err := unix.ReadFrom(a.pid(c.Src), b, c.SrcAddr); err != nil {
			return a.moveErr(c.Src, c, "reading the send buffer", err)
		}
		a.chk.pullSrc = append(a.chk.pullSrc, check.Sum(b))
	}
	return nil
}

// flowPulls checks the entries of block l's served pull order that the rank
// copied: each is one move, and the rank's sum of what it copied must match
// the sender's bytes (pullSources).
func (a *Agent) flowPulls(k proto.SliceID, p *scheduler.Plan, l, copied int) error {
	for j, i := range a.pullIdx[l][:copied] {
		c := &p.Chunks[i]
		a.chk.moved[i]++
		if !a.chk.mode.Flow || j >= len(a.chk.pullSrc) {
			continue
		}
		if src, dst := a.chk.pullSrc[j], a.blocks[l].PullSum(j); src != dst {
			return a.flowErr(k, int(i), c, "the %d bytes the receiving rank copied (pull order entry %d) differ from the sender's (CRC-32C %#08x at the source, %#08x at the destination)", c.Len, j, src, dst)
		}
	}
	return nil
}

// flowEnd checks that every plan entry this node sources moved once and
// every entry from another node arrived once (end of TX).
func (a *Agent) flowEnd(k proto.SliceID, p *scheduler.Plan) error {
	for i := range p.Chunks {
		c := &p.Chunks[i]
		if c.Last && c.SrcNode == a.node && c.Xfer != 0 {
			delete(a.chk.sends, inlineKey{c.Src, c.SendSeq})
		}
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

// preWrite compares the blocks of a receive buffer that start inside chunk
// c with their sums at post, just before the agent writes c (buffers
// check), and records a difference in the request's completion record.
// What the rank wrote into its record is input: a header that cannot be
// read, or that does not contain the chunk, disables the comparison for
// this chunk.
func (a *Agent) preWrite(k proto.SliceID, c *proto.Chunk, buf []byte, sums []uint32) {
	if !a.chk.mode.Buffers || c.Xfer == 0 || c.DstAcc || c.Len == 0 {
		return
	}
	l := a.localOf[c.Dst]
	b := a.blocks[l]
	hdr := b.CheckHeader(c.RecvReq)
	if hdr == 0 {
		return
	}
	pid := a.pid(c.Dst)
	var h [16]byte
	if unix.ReadFrom(pid, h[:], hdr) != nil {
		return
	}
	base, n := binary.LittleEndian.Uint64(h[:]), binary.LittleEndian.Uint64(h[8:])
	if c.DstAddr < base || c.Len > n || c.DstAddr-base > n-c.Len {
		return
	}
	off := int(c.DstAddr - base)
	b0, b1 := check.Touched(off, int(c.Len), int(n))
	if b0 > b1 {
		return
	}
	from, to := b0*check.BlockSize, min((b1+1)*check.BlockSize, int(n))
	if to-from > len(buf) || b1-b0+1 > cap(sums) {
		return
	}
	sb := buf[:(b1-b0+1)*4]
	if unix.ReadFrom(pid, sb, hdr+uint64(check.HeaderWords+b0)*4) != nil {
		return
	}
	sums = sums[:0]
	for i := 0; i < len(sb); i += 4 {
		sums = append(sums, binary.LittleEndian.Uint32(sb[i:]))
	}
	data := buf[:to-from]
	if unix.ReadFrom(pid, data, base+uint64(from)) != nil {
		return
	}
	if lo, hi, ok := check.Diff(sums, data, 0); ok {
		b.ReportWritten(c.RecvReq, uint32(b0+lo), uint32(b0+hi), k)
	}
}

// checkRead compares the bytes the agent read for chunk c of a
// point-to-point send (data) with the send buffer's block sums at post
// (buffers check), read from the sending rank through its check header:
// the blocks that lie wholly inside the chunk, so a block that straddles
// two chunks is left to the comparison at the send's completion. A
// difference — the program modified the buffer before the runtime read it,
// even if it restores it before the completion — is recorded in the send's
// completion record, and the rank reports it.
func (a *Agent) checkRead(k proto.SliceID, c *proto.Chunk, data []byte) {
	if !a.chk.mode.Buffers || c.Xfer == 0 || c.Len == 0 {
		return
	}
	req, ok := a.chk.sends[inlineKey{c.Src, c.SendSeq}]
	if !ok {
		return
	}
	b := a.blocks[a.localOf[c.Src]]
	hdr := b.CheckHeader(req)
	if hdr == 0 {
		return
	}
	pid := a.pid(c.Src)
	var h [16]byte
	if unix.ReadFrom(pid, h[:], hdr) != nil {
		return
	}
	base, n := binary.LittleEndian.Uint64(h[:]), binary.LittleEndian.Uint64(h[8:])
	if c.SrcAddr < base || c.Len > n || c.SrcAddr-base > n-c.Len {
		return
	}
	off, end := int(c.SrcAddr-base), int(c.SrcAddr-base+c.Len)
	b0 := (off + check.BlockSize - 1) / check.BlockSize
	b1 := end/check.BlockSize - 1
	if end == int(n) {
		b1 = check.Blocks(int(n)) - 1
	}
	if b0 > b1 || b1-b0+1 > cap(a.chk.sums) {
		return
	}
	sb := a.chk.back[:(b1-b0+1)*4]
	if unix.ReadFrom(pid, sb, hdr+uint64(check.HeaderWords+b0)*4) != nil {
		return
	}
	sums := a.chk.sums[:0]
	for i := 0; i < len(sb); i += 4 {
		sums = append(sums, binary.LittleEndian.Uint32(sb[i:]))
	}
	from := b0*check.BlockSize - off
	if lo, hi, ok := check.Diff(sums, data[from:], 0); ok {
		b.ReportWritten(req, uint32(b0+lo), uint32(b0+hi), k)
	}
}
