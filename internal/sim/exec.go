package sim

import (
	"fmt"

	"github.com/bcsmpi/bcsmpi/internal/core"
	"github.com/bcsmpi/bcsmpi/internal/plan"
	"github.com/bcsmpi/bcsmpi/internal/proto"
	"github.com/bcsmpi/bcsmpi/internal/reduce"
)

// execute carries out a plan the way the agents do between them, over the
// simulated rank memories and node staging areas: stage 0 chunks, the folds
// (the reduce microphase), stage 1, stage 2, then the scheduler's writes. It
// adds each node's bytes (in plus out, a local copy once) to bytes.
//
// The interpreter of scheduler/coll_test.go does the same for one scheduler;
// it stays there because the scheduler's own tests cannot import this
// package (sim imports scheduler: an import cycle).
func (s *Sim) execute(p *core.Plan, bytes []uint64) {
	for stage := uint8(0); stage < proto.Stages; stage++ {
		if stage == 1 {
			for _, f := range p.Folds {
				acc := s.staging(f.Node, f.Base+uint64(f.N-1)*f.Stride+f.Seg)
				if need := f.Seg + 16; uint64(len(s.foldTmp)) < need {
					s.foldTmp = make([]byte, need)
				}
				reduce.Fold(f.Op, f.Type, f.Mode, acc, f.Base, f.Stride, f.Seg, f.N, s.foldTmp)
			}
		}
		for i := range p.Chunks {
			c := &p.Chunks[i]
			if c.Stage != stage {
				continue
			}
			var src, dst []byte
			if c.SrcAcc {
				src = s.staging(c.SrcNode, c.SrcAddr+c.Len)[c.SrcAddr:][:c.Len]
			} else {
				src = s.rankMem(c.Src, c.SrcAddr, c.Len, c)
			}
			if c.DstAcc {
				dst = s.staging(c.DstNode, c.DstAddr+c.Len)[c.DstAddr:][:c.Len]
			} else {
				dst = s.rankMem(c.Dst, c.DstAddr, c.Len, c)
			}
			copy(dst, src)
			bytes[c.SrcNode] += c.Len
			if c.DstNode != c.SrcNode {
				bytes[c.DstNode] += c.Len
			}
		}
	}
	for _, w := range p.Writes {
		copy(s.rankMem(w.Rank, w.Addr, uint64(len(w.Data)), nil), w.Data)
	}
}

func (s *Sim) rankMem(r proto.Rank, addr, n uint64, c *proto.Chunk) []byte {
	m := s.ranks[r].mem
	if addr > uint64(len(m)) || n > uint64(len(m))-addr {
		what := "a write"
		if c != nil {
			what = c.Describe()
		}
		panic(fmt.Sprintf("sim: %s addresses bytes %d .. %d of rank %d's %d-byte memory: the plan moved data outside the buffers its descriptors named", what, addr, addr+n, r, len(m)))
	}
	return m[addr : addr+n]
}

// staging is node n's collective staging area, grown on demand to at least
// end bytes (most nodes never fold anything, and StagingSize grows with the
// job's ranks).
func (s *Sim) staging(n proto.NodeID, end uint64) []byte {
	if lim := s.cfg.Sched.StagingSize(len(s.ranks)); end > lim {
		panic(fmt.Sprintf("sim: plan addresses byte %d of node %d's staging area, larger than StagingSize %d", end, n, lim))
	}
	a := s.acc[n]
	if uint64(len(a)) < end {
		a = append(a, make([]byte, end-uint64(len(a)))...)
		s.acc[n] = a
	}
	return a
}

// hasher is FNV-1a over 64-bit words: deterministic across processes, which
// hash/maphash is not (the trace and content hashes).
type hasher uint64

const fnvOffset, fnvPrime = 14695981039346656037, 1099511628211

func (h *hasher) u64(x uint64) { *h = (*h ^ hasher(x)) * fnvPrime }

// hashPlan hashes everything in a plan; withSlices false leaves out slice
// numbers (the plan's and the descriptors' PostSlice), so that two runs that
// differ only in timing (and so in which slice numbers the master skipped)
// hash alike.
func hashPlan(p *core.Plan, withSlices bool) uint64 {
	return plan.Hash(p, plan.HashOptions{Addresses: true, Slices: withSlices})
}

// link is an ordered pair of nodes.
type link struct{ src, dst proto.NodeID }

// xferState is a matched transfer the fairness check follows.
type xferState struct {
	id         uint64
	left       uint64 // bytes still to move
	movedSlice proto.SliceID
}

// fairness checks the scheduler's chunking rule at scale: transfers are
// served in match order, so on one link a transfer matched later moves in a
// slice only if every transfer matched before it on that link, and not yet
// finished, moves in that slice too (it was offered the budget first, and the
// budgets of both its nodes were at least as large then). A transfer is never
// overtaken by a later one, and never starved.
func (s *Sim) fairness(p *core.Plan) error {
	k := p.Slice
	for _, m := range p.Matches {
		n := min(m.Send.Len, m.Recv.Len)
		if n == 0 {
			continue
		}
		l := link{s.nodeOf[m.Send.Rank], s.nodeOf[m.Recv.Rank]}
		x := &xferState{id: m.Xfer, left: n}
		s.xfers[m.Xfer] = x
		s.links[l] = append(s.links[l], x)
	}
	for i := range p.Chunks {
		c := &p.Chunks[i]
		if c.Xfer == 0 {
			continue
		}
		x := s.xfers[c.Xfer]
		if x == nil || c.Len > x.left {
			return fmt.Errorf("sim: slice %d: %s moves more than transfer %d has left", k, c.Describe(), c.Xfer)
		}
		x.left -= c.Len
		x.movedSlice = k
		if (x.left == 0) != c.Last {
			return fmt.Errorf("sim: slice %d: %s: last=%v with %d bytes left", k, c.Describe(), c.Last, x.left)
		}
	}
	var bad error
	for l, xs := range s.links {
		var waiting *xferState
		keep := xs[:0]
		for _, x := range xs {
			if x.movedSlice != k {
				if waiting == nil {
					waiting = x
				}
			} else if waiting != nil && (bad == nil || x.id < badID(bad)) {
				bad = &FairnessError{Slice: k, Link: [2]proto.NodeID{l.src, l.dst}, Waiting: waiting.id, Moved: x.id}
			}
			if x.left > 0 {
				keep = append(keep, x)
			} else {
				delete(s.xfers, x.id)
			}
		}
		if len(keep) == 0 {
			delete(s.links, l)
		} else {
			clear(xs[len(keep):])
			s.links[l] = keep
		}
	}
	return bad
}

func badID(err error) uint64 { return err.(*FairnessError).Moved }

// FairnessError is a transfer that moved while one matched before it on the
// same link waited.
type FairnessError struct {
	Slice          proto.SliceID
	Link           [2]proto.NodeID
	Waiting, Moved uint64
}

func (e *FairnessError) Error() string {
	return fmt.Sprintf("sim: slice %d: on link n%d->n%d transfer x%d moved while x%d, matched before it, waited", e.Slice, e.Link[0], e.Link[1], e.Moved, e.Waiting)
}
