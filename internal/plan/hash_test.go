package plan

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/bcsmpi/bcsmpi/internal/proto"
	"github.com/bcsmpi/bcsmpi/internal/reduce"
)

// randPlan fills every field Hash reads, or may read, with random values.
func randPlan(r *rand.Rand) *Plan {
	desc := func() proto.Descriptor {
		return proto.Descriptor{Kind: proto.Kind(r.IntN(8)), Coll: proto.Coll(r.IntN(16)), Op: uint8(r.IntN(8)), DType: uint8(r.IntN(16)),
			Rank: proto.Rank(r.IntN(64)), Peer: proto.Rank(r.IntN(64) - 2), Tag: int32(r.IntN(100) - 1), Seq: r.Uint64(),
			Req: r.Uint32(), CollSeq: r.Uint32(), Comm: proto.CommID(r.IntN(1000)), Addr: r.Uint64(), Len: r.Uint64(), RAddr: r.Uint64(),
			Inline: r.IntN(2) == 0, InPlace: r.IntN(2) == 0, PostSlice: proto.SliceID(r.Uint64())}
	}
	p := &Plan{Slice: proto.SliceID(r.Uint64()), Waiting: r.IntN(9), Pending: r.IntN(9), Unexpected: r.IntN(9), Collectives: r.IntN(9)}
	for range r.IntN(4) {
		p.Matches = append(p.Matches, Match{Xfer: r.Uint64(), Send: desc(), Recv: desc()})
	}
	for range r.IntN(4) {
		p.Chunks = append(p.Chunks, proto.Chunk{Xfer: r.Uint64(), Src: proto.Rank(r.IntN(64)), Dst: proto.Rank(r.IntN(64)),
			SrcNode: proto.NodeID(r.IntN(8)), DstNode: proto.NodeID(r.IntN(8)), SendSeq: r.Uint64(), SrcAddr: r.Uint64(), DstAddr: r.Uint64(),
			Off: r.Uint64(), Len: r.Uint64(), Stage: uint8(r.IntN(2)), Inline: r.IntN(2) == 0, Last: r.IntN(2) == 0, SrcAcc: r.IntN(2) == 0, DstAcc: r.IntN(2) == 0})
	}
	for range r.IntN(3) {
		p.Folds = append(p.Folds, Fold{Node: proto.NodeID(r.IntN(8)), Op: reduce.Op(r.IntN(8)), Type: reduce.Type(r.IntN(8)), Mode: reduce.Mode(r.IntN(3)),
			Base: r.Uint64(), Stride: r.Uint64(), Seg: r.Uint64(), N: r.IntN(64)})
	}
	for range r.IntN(4) {
		p.Completions = append(p.Completions, proto.Completion{Rank: proto.Rank(r.IntN(64)), Req: r.Uint32(), Kind: proto.Kind(r.IntN(8)),
			Source: proto.Rank(r.IntN(64)), Tag: int32(r.IntN(100)), Count: r.Uint64(), Found: r.IntN(2) == 0, Err: proto.Err(r.IntN(5))})
	}
	for range r.IntN(3) {
		w := Write{Rank: proto.Rank(r.IntN(64)), Addr: r.Uint64()}
		for range r.IntN(5) {
			w.Data = append(w.Data, byte(r.IntN(256)))
		}
		p.Writes = append(p.Writes, w)
	}
	if r.IntN(4) == 0 {
		p.Err = errors.New("mismatch")
	}
	return p
}

// TestHashKeepsTheFormerValues checks Hash against the two functions it
// replaced, copied below as they were: the slice log's (nicthread.PlanHash,
// stored in recordings) and the simulator's (internal/sim's hashPlan, with
// and without slices). A recording made before the change replays after it.
func TestHashKeepsTheFormerValues(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 2000 {
		p := randPlan(r)
		if got, want := Fold32(Hash(p, HashOptions{})), oldLogHash(p); got != want {
			t.Fatalf("plan %d, slice log: Hash %#x, was %#x", i, got, want)
		}
		for _, s := range []bool{false, true} {
			if got, want := Hash(p, HashOptions{Addresses: true, Slices: s}), oldSimHash(p, s); got != want {
				t.Fatalf("plan %d, simulator (slices %v): Hash %#x, was %#x", i, s, got, want)
			}
		}
		d := p.Matches
		if len(d) > 0 {
			if got, want := HashDescriptor(0, d[0].Send, HashOptions{}), oldDescHash(0, d[0].Send); got != want {
				t.Fatalf("plan %d, descriptor: %#x, was %#x", i, got, want)
			}
		}
	}
}

// TestHashOptionsLeaveOut checks that each option covers what it says: a
// plan that differs only in addresses (or only in slice numbers) hashes
// alike without the option and differently with it.
func TestHashOptionsLeaveOut(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for i := range 500 {
		p := randPlan(r)
		if len(p.Matches) == 0 {
			continue
		}
		q := *p
		q.Matches = append([]Match(nil), p.Matches...)
		q.Matches[0].Send.Addr++
		if Hash(p, HashOptions{}) != Hash(&q, HashOptions{}) {
			t.Fatalf("plan %d: an address changed the hash without Addresses", i)
		}
		if Hash(p, HashOptions{Addresses: true}) == Hash(&q, HashOptions{Addresses: true}) {
			t.Fatalf("plan %d: an address did not change the hash with Addresses", i)
		}
		q.Matches[0].Send.Addr--
		q.Slice++
		if Hash(p, HashOptions{Addresses: true}) != Hash(&q, HashOptions{Addresses: true}) {
			t.Fatalf("plan %d: the slice number changed the hash without Slices", i)
		}
		if Hash(p, HashOptions{Slices: true}) == Hash(&q, HashOptions{Slices: true}) {
			t.Fatalf("plan %d: the slice number did not change the hash with Slices", i)
		}
	}
}

// The former functions, verbatim but for their hasher's name.

type oldHasher uint64

func (h *oldHasher) u64(x uint64) { *h = (*h ^ oldHasher(x)) * fnvPrime }
func (h *oldHasher) b(x bool) {
	if x {
		h.u64(1)
	} else {
		h.u64(0)
	}
}
func (h oldHasher) fold() uint32 { return uint32(h) ^ uint32(h>>32) }

func (h *oldHasher) desc(d proto.Descriptor) {
	h.u64(uint64(d.Kind)<<56 | uint64(d.Coll)<<48 | uint64(d.Op)<<40 | uint64(d.DType)<<32 | uint64(uint32(d.Rank)))
	h.u64(uint64(uint32(d.Peer))<<32 | uint64(uint32(d.Tag)))
	h.u64(d.Seq)
	h.u64(uint64(d.CollSeq))
	h.u64(uint64(d.Comm))
	h.u64(d.Len)
	h.b(d.Inline)
	h.b(d.InPlace)
}

func oldDescHash(h uint64, d proto.Descriptor) uint64 {
	if h == 0 {
		h = fnvOffset
	}
	x := oldHasher(h)
	x.desc(d)
	return uint64(x)
}

func oldLogHash(p *Plan) uint32 {
	h := oldHasher(fnvOffset)
	for _, m := range p.Matches {
		h.u64(m.Xfer)
		h.desc(m.Send)
		h.desc(m.Recv)
	}
	for _, c := range p.Chunks {
		h.u64(c.Xfer)
		h.u64(uint64(uint32(c.Src))<<32 | uint64(uint32(c.Dst)))
		h.u64(uint64(uint32(c.SrcNode))<<32 | uint64(uint32(c.DstNode)))
		h.u64(c.SendSeq)
		h.u64(c.Off)
		h.u64(c.Len)
		h.u64(uint64(c.Stage))
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
		h.u64(uint64(uint32(c.Rank)))
		h.u64(uint64(c.Kind)<<32 | uint64(c.Err))
		h.u64(uint64(uint32(c.Source))<<32 | uint64(uint32(c.Tag)))
		h.u64(c.Count)
		h.b(c.Found)
	}
	for _, w := range p.Writes {
		h.u64(uint64(uint32(w.Rank)))
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
	return h.fold()
}

func oldSimHash(p *Plan, withSlices bool) uint64 {
	h := oldHasher(fnvOffset)
	if withSlices {
		h.u64(uint64(p.Slice))
	}
	desc := func(d proto.Descriptor) {
		h.u64(uint64(d.Kind)<<56 | uint64(d.Coll)<<48 | uint64(d.Op)<<40 | uint64(d.DType)<<32 | uint64(uint32(d.Rank)))
		h.u64(uint64(uint32(d.Peer))<<32 | uint64(uint32(d.Tag)))
		h.u64(d.Seq)
		h.u64(uint64(d.Req)<<32 | uint64(d.CollSeq))
		h.u64(uint64(d.Comm))
		h.u64(d.Addr)
		h.u64(d.Len)
		h.u64(d.RAddr)
		h.b(d.Inline)
		h.b(d.InPlace)
		if withSlices {
			h.u64(uint64(d.PostSlice))
		}
	}
	for _, m := range p.Matches {
		h.u64(m.Xfer)
		desc(m.Send)
		desc(m.Recv)
	}
	for _, c := range p.Chunks {
		h.u64(c.Xfer)
		h.u64(uint64(uint32(c.Src))<<32 | uint64(uint32(c.Dst)))
		h.u64(uint64(uint32(c.SrcNode))<<32 | uint64(uint32(c.DstNode)))
		h.u64(c.SendSeq)
		h.u64(c.SrcAddr)
		h.u64(c.DstAddr)
		h.u64(c.Off)
		h.u64(c.Len)
		h.u64(uint64(c.Stage))
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
		h.u64(uint64(uint32(c.Rank))<<32 | uint64(c.Req))
		h.u64(uint64(c.Kind)<<32 | uint64(c.Err))
		h.u64(uint64(uint32(c.Source))<<32 | uint64(uint32(c.Tag)))
		h.u64(c.Count)
		h.b(c.Found)
	}
	for _, w := range p.Writes {
		h.u64(uint64(uint32(w.Rank)))
		h.u64(w.Addr)
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
