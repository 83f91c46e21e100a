package plan

import (
	"math"

	"github.com/bcsmpi/bcsmpi/internal/proto"
)

// HashOptions says what of a plan Hash and HashDescriptor digest besides
// what the program decides (its matches, chunks, folds, completions,
// writes and counts).
type HashOptions struct {
	// Addresses includes the addresses in the ranks' memories (descriptors'
	// Addr and RAddr, chunks' SrcAddr and DstAddr, writes' Addr) and the
	// request slots (descriptors' and completions' Req). Leave it out to
	// compare runs whose heap layouts differ, or whose completions were
	// consumed in another order (the slice log of a recording, which a
	// replay checks against).
	Addresses bool
	// Slices includes the slice numbers (the plan's Slice and the
	// descriptors' PostSlice). Leave it out to compare runs that differ
	// only in timing (which slices were skipped, when a rank posted).
	Slices bool
}

// Hash digests p with FNV-1a over 64-bit words: deterministic across
// processes and runs (hash/maphash is not). Every node computes the same
// plan for a slice, so every node's Hash of it is the same. The slice log
// (nicthread.PlanHash) and the simulator's trace (internal/sim) are its two
// users; the value of each option set is part of the recordings' format, so
// changing what a word holds is a format change.
func Hash(p *Plan, o HashOptions) uint64 {
	h := hasher(fnvOffset)
	if o.Slices {
		h.u64(uint64(p.Slice))
	}
	for _, m := range p.Matches {
		h.u64(m.Xfer)
		h.desc(m.Send, o)
		h.desc(m.Recv, o)
	}
	for _, c := range p.Chunks {
		h.u64(c.Xfer)
		h.u64(uint64(uint32(c.Src))<<32 | uint64(uint32(c.Dst)))
		h.u64(uint64(uint32(c.SrcNode))<<32 | uint64(uint32(c.DstNode)))
		h.u64(c.SendSeq)
		if o.Addresses {
			h.u64(c.SrcAddr)
			h.u64(c.DstAddr)
		}
		h.u64(c.Off)
		h.u64(c.Len)
		h.u64(uint64(c.Stage) | uint64(c.Span)<<8)
		h.b(c.Inline)
		h.b(c.Last)
		h.b(c.SrcAcc)
		h.b(c.DstAcc)
	}
	for _, f := range p.Folds {
		h.u64(uint64(uint32(f.Node))<<32 | uint64(f.Op)<<16 | uint64(f.Type)<<8 | uint64(f.Mode))
		h.u64(f.Base)
		h.u64(f.Stride)
		h.u64(f.Seg)
		h.u64(uint64(f.N))
	}
	for _, c := range p.Completions {
		if o.Addresses {
			h.u64(uint64(uint32(c.Rank))<<32 | uint64(c.Req))
		} else {
			h.u64(uint64(uint32(c.Rank)))
		}
		h.u64(uint64(c.Kind)<<32 | uint64(c.Err))
		h.u64(uint64(uint32(c.Source))<<32 | uint64(uint32(c.Tag)))
		h.u64(c.Count)
		h.b(c.Found)
	}
	for _, w := range p.Writes {
		h.u64(uint64(uint32(w.Rank)))
		if o.Addresses {
			h.u64(w.Addr)
		}
		for _, x := range w.Data {
			h.u64(uint64(x))
		}
	}
	h.u64(uint64(p.Waiting))
	h.u64(uint64(p.Pending))
	h.u64(uint64(p.Unexpected))
	h.u64(uint64(p.Collectives))
	if p.Err != nil {
		h.u64(math.MaxUint64)
	}
	return uint64(h)
}

// HashDescriptor continues hash h (0: a new one) with descriptor d, as Hash
// digests the descriptors of its matches.
func HashDescriptor(h uint64, d proto.Descriptor, o HashOptions) uint64 {
	if h == 0 {
		h = fnvOffset
	}
	x := hasher(h)
	x.desc(d, o)
	return uint64(x)
}

// Fold32 is the low 32 bits of a hash folded with its high ones.
func Fold32(h uint64) uint32 { return uint32(h) ^ uint32(h>>32) }

// hasher is FNV-1a over 64-bit words.
type hasher uint64

const fnvOffset, fnvPrime = 14695981039346656037, 1099511628211

func (h *hasher) u64(x uint64) { *h = (*h ^ hasher(x)) * fnvPrime }

func (h *hasher) b(x bool) {
	if x {
		h.u64(1)
	} else {
		h.u64(0)
	}
}

func (h *hasher) desc(d proto.Descriptor, o HashOptions) {
	h.u64(uint64(d.Kind)<<56 | uint64(d.Coll)<<48 | uint64(d.Op)<<40 | uint64(d.DType)<<32 | uint64(uint32(d.Rank)))
	h.u64(uint64(uint32(d.Peer))<<32 | uint64(uint32(d.Tag)))
	h.u64(d.Seq)
	req := uint64(0)
	if o.Addresses {
		req = uint64(d.Req)
	}
	h.u64(req<<32 | uint64(d.CollSeq))
	h.u64(uint64(d.Comm))
	if o.Addresses {
		h.u64(d.Addr)
	}
	h.u64(d.Len)
	if o.Addresses {
		h.u64(d.RAddr)
	}
	h.b(d.Inline)
	h.b(d.InPlace)
	if d.Persist { // a persistent collective's key (hashed only when set: other plans keep their former hashes)
		h.b(true)
	}
	if o.Slices {
		h.u64(uint64(d.PostSlice))
	}
}
