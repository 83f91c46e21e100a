package scheduler

import (
	"fmt"
	"math/rand"
	"slices"
	"strings"
	"testing"

	"github.com/bcsmpi/bcsmpi/internal/plan"
	"github.com/bcsmpi/bcsmpi/internal/proto"
)

func send(rank, dst proto.Rank, tag int32, seq, n uint64) proto.Descriptor {
	return proto.Descriptor{Kind: proto.KindSend, Rank: rank, Peer: dst, Tag: tag, Seq: seq, Req: uint32(seq), Len: n}
}

func recv(rank, src proto.Rank, tag int32, seq, n uint64) proto.Descriptor {
	return proto.Descriptor{Kind: proto.KindRecv, Rank: rank, Peer: src, Tag: tag, Seq: seq, Req: uint32(seq), Len: n}
}

// pair makes d a partitioned send or receive of pair number k.
func pair(d proto.Descriptor, k uint32) proto.Descriptor {
	d.SetPair(k)
	return d
}

func describe(p *plan.Plan) string {
	var lines []string
	for _, c := range p.Chunks {
		lines = append(lines, c.Describe())
	}
	for _, c := range p.Completions {
		lines = append(lines, c.Describe())
	}
	return strings.Join(lines, "\n")
}

func TestMatchingRules(t *testing.T) {
	big := Config{BytesPerSliceMax: 1 << 20, ChunksPerSliceMax: 100}
	type step []proto.Descriptor
	cases := []struct {
		name  string
		steps []step
		want  []string // one per step
	}{
		{
			name:  "non-overtaking: two sends same tag match two receives in order",
			steps: []step{{send(0, 1, 5, 1, 10), send(0, 1, 5, 2, 20), recv(1, 0, 5, 1, 100), recv(1, 0, 5, 2, 100)}},
			want: []string{"chunk x1 r0->r1 off=0 len=10\nchunk x2 r0->r1 off=0 len=20\n" +
				"done r0 req=1 send count=10\ndone r1 req=1 recv src=0 tag=5 count=10\n" +
				"done r0 req=2 send count=20\ndone r1 req=2 recv src=0 tag=5 count=20"},
		},
		{
			name:  "wildcard source picks the lowest source rank in the same slice",
			steps: []step{{send(2, 0, 1, 1, 4), send(1, 0, 1, 1, 4), recv(0, proto.AnySource, 1, 1, 4)}},
			want:  []string{"chunk x1 r1->r0 off=0 len=4\ndone r1 req=1 send count=4\ndone r0 req=1 recv src=1 tag=1 count=4"},
		},
		{
			name: "wildcard prefers the earlier slice over the lower rank",
			steps: []step{
				{send(2, 0, 1, 1, 4)},
				{send(1, 0, 1, 1, 4), recv(0, proto.AnySource, proto.AnyTag, 1, 4)},
			},
			want: []string{"", "chunk x1 r2->r0 off=0 len=4\ndone r2 req=1 send count=4\ndone r0 req=1 recv src=2 tag=1 count=4"},
		},
		{
			name:  "tag selects past an earlier message",
			steps: []step{{send(0, 1, 1, 1, 1), send(0, 1, 2, 2, 2), recv(1, 0, 2, 1, 8)}},
			want:  []string{"chunk x1 r0->r1 off=0 len=2\ndone r0 req=2 send count=2\ndone r1 req=1 recv src=0 tag=2 count=2"},
		},
		{
			name:  "truncation: the receive completes with an error, the send completes",
			steps: []step{{send(0, 1, 0, 1, 100), recv(1, 0, 0, 1, 60)}},
			want:  []string{"chunk x1 r0->r1 off=0 len=60\ndone r0 req=1 send count=60\ndone r1 req=1 recv src=0 tag=0 count=60 err=truncated"},
		},
		{
			name:  "zero-length message completes without a chunk",
			steps: []step{{send(0, 1, 0, 1, 0), recv(1, 0, 0, 1, 0)}},
			want:  []string{"done r0 req=1 send count=0\ndone r1 req=1 recv src=0 tag=0 count=0"},
		},
		{
			name: "receive posted first matches a later send",
			steps: []step{
				{recv(1, 0, 3, 1, 8)},
				{send(0, 1, 3, 1, 8)},
			},
			want: []string{"", "chunk x1 r0->r1 off=0 len=8\ndone r0 req=1 send count=8\ndone r1 req=1 recv src=0 tag=3 count=8"},
		},
		{
			name: "partitioned: a plain send does not match a partitioned receive, nor a partitioned send a plain receive",
			steps: []step{
				{send(0, 1, 5, 1, 8), pair(recv(1, 0, 5, 1, 16), 1)},
				{pair(send(0, 1, 5, 2, 16), 1), recv(1, 0, 5, 2, 8)},
			},
			want: []string{"", "chunk x1 r0->r1 off=0 len=16\nchunk x2 r0->r1 off=0 len=8\n" +
				"done r0 req=2 send count=16\ndone r1 req=1 recv src=0 tag=5 count=16\n" +
				"done r0 req=1 send count=8\ndone r1 req=2 recv src=0 tag=5 count=8"},
		},
		{
			name: "partitioned: pairs match by pair number, not post order; a wildcard probe passes them by",
			steps: []step{
				{pair(send(0, 1, 7, 1, 20), 2), pair(send(0, 1, 7, 2, 10), 1),
					{Kind: proto.KindIprobe, Rank: 1, Peer: proto.AnySource, Tag: proto.AnyTag, Seq: 1, Req: 9}},
				{pair(recv(1, 0, 7, 2, 10), 1), pair(recv(1, 0, 7, 3, 20), 2)},
			},
			want: []string{"done r1 req=9 iprobe none",
				"chunk x1 r0->r1 off=0 len=10\nchunk x2 r0->r1 off=0 len=20\n" +
					"done r0 req=2 send count=10\ndone r1 req=2 recv src=0 tag=7 count=10\n" +
					"done r0 req=1 send count=20\ndone r1 req=3 recv src=0 tag=7 count=20"},
		},
		{
			name: "iprobe says no, then probe waits and completes without consuming",
			steps: []step{
				{{Kind: proto.KindIprobe, Rank: 1, Peer: 0, Tag: proto.AnyTag, Seq: 1, Req: 7}},
				{{Kind: proto.KindProbe, Rank: 1, Peer: proto.AnySource, Tag: 4, Seq: 2, Req: 8}},
				{send(0, 1, 4, 1, 16)},
				{recv(1, 0, 4, 3, 16)},
			},
			want: []string{
				"done r1 req=7 iprobe none",
				"",
				"done r1 req=8 probe src=0 tag=4 count=16",
				"chunk x1 r0->r1 off=0 len=16\ndone r0 req=1 send count=16\ndone r1 req=3 recv src=0 tag=4 count=16",
			},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := New(big, []proto.NodeID{0, 0, 0})
			for i, st := range c.steps {
				got := describe(s.Schedule(proto.SliceID(i+1), st))
				if got != c.want[i] {
					t.Errorf("slice %d:\n got:\n%s\nwant:\n%s", i+1, got, c.want[i])
				}
			}
		})
	}
}

func TestChunkingOverSlices(t *testing.T) {
	// Two nodes, budget 1000 bytes per node per slice: a 2500-byte message takes
	// three slices; a small message matched later waits behind it, never overtakes.
	s := New(Config{BytesPerSliceMax: 1000, ChunksPerSliceMax: 10}, []proto.NodeID{0, 1})
	p := s.Schedule(1, []proto.Descriptor{send(0, 1, 0, 1, 2500), recv(1, 0, 0, 1, 2500)})
	if got := describe(p); got != "chunk x1 r0->r1 off=0 len=1000 n0->n1" {
		t.Fatalf("slice 1: %s", got)
	}
	p = s.Schedule(2, []proto.Descriptor{send(0, 1, 0, 2, 10), recv(1, 0, 0, 2, 10)})
	if got := describe(p); got != "chunk x1 r0->r1 off=1000 len=1000 n0->n1" || p.Waiting != 2 {
		t.Fatalf("slice 2 (waiting %d): %s", p.Waiting, got)
	}
	p = s.Schedule(3, nil)
	want := "chunk x1 r0->r1 off=2000 len=500 n0->n1\nchunk x2 r0->r1 off=0 len=10 n0->n1\n" +
		"done r0 req=1 send count=2500\ndone r1 req=1 recv src=0 tag=0 count=2500\n" +
		"done r0 req=2 send count=10\ndone r1 req=2 recv src=0 tag=0 count=10"
	if got := describe(p); got != want || p.Waiting != 0 {
		t.Fatalf("slice 3 (waiting %d):\n%s\nwant\n%s", p.Waiting, got, want)
	}
}

func TestCheckDescriptor(t *testing.T) {
	bad := []proto.Descriptor{
		{Kind: proto.KindSend, Rank: 0, Peer: 4},
		{Kind: proto.KindSend, Rank: 0, Peer: 1, Tag: -1},
		{Kind: proto.KindRecv, Rank: 5, Peer: 0},
		{Kind: proto.KindRecv, Rank: 0, Peer: -3},
		{Kind: 9, Rank: 0},
		{Kind: proto.KindRecv, Rank: 0, Peer: proto.AnySource, Tag: 1, CollSeq: 1}, // a partitioned receive with a wildcard
		{Kind: proto.KindRecv, Rank: 0, Peer: 1, Tag: proto.AnyTag, CollSeq: 2},
		{Kind: proto.KindProbe, Rank: 0, Peer: 1, Tag: 1, CollSeq: 1}, // only sends and receives have pairs
	}
	for _, d := range bad {
		if err := CheckDescriptor(d, 4); err == nil {
			t.Errorf("%+v accepted", d)
		}
	}
	if err := CheckDescriptor(recv(1, proto.AnySource, proto.AnyTag, 1, 0), 4); err != nil {
		t.Error(err)
	}
	if err := CheckDescriptor(pair(recv(1, 0, 3, 1, 0), 2), 4); err != nil {
		t.Error(err)
	}
}

// ---- naive reference -------------------------------------------------------

type refOp struct {
	d     proto.Descriptor
	slice proto.SliceID
	done  bool
}

type refXfer struct {
	send, recv proto.Descriptor
	len, moved uint64
}

// reference implements the package's documented rules with flat lists and
// explicit ordering keys instead of per-key queues.
type reference struct {
	cfg    Config
	nodeOf []proto.NodeID
	sends  []*refOp
	recvs  []*refOp // receives and blocking probes
	xfers  []*refXfer
}

func acceptsRef(r, s proto.Descriptor) bool {
	return r.Comm == s.Comm && r.Rank == s.Peer &&
		(r.Peer == proto.AnySource || r.Peer == s.Rank) && (r.Tag == proto.AnyTag || r.Tag == s.Tag) &&
		r.Pair() == s.Pair() // partitioned operations match only their pair
}

// schedule returns the slice's plan as sorted lines, and its moves in the
// order the chunking rule serves them (match order: doc.go).
func (r *reference) schedule(slice proto.SliceID, descs []proto.Descriptor) (out, moves []string) {
	ds := slices.Clone(descs)
	slices.SortFunc(ds, func(a, b proto.Descriptor) int {
		if a.Rank != b.Rank {
			return int(a.Rank - b.Rank)
		}
		return int(a.Seq) - int(b.Seq)
	})
	for _, d := range ds {
		if d.Kind != proto.KindSend {
			continue
		}
		var best *refOp
		for _, o := range r.recvs { // earliest by (slice, seq) among older ops
			if o.done || o.slice >= slice || !acceptsRef(o.d, d) {
				continue
			}
			if best == nil || o.slice < best.slice || (o.slice == best.slice && o.d.Seq < best.d.Seq) {
				best = o
			}
		}
		if d.Inline {
			out = append(out, proto.Completion{Rank: d.Rank, Req: d.Req, Kind: proto.KindSend, Source: d.Peer, Tag: d.Tag, Count: d.Len}.Describe())
		}
		so := &refOp{d: d, slice: slice}
		r.sends = append(r.sends, so)
		if best != nil {
			best.done = true
			if best.d.Kind == proto.KindProbe {
				out = append(out, proto.Completion{Rank: best.d.Rank, Req: best.d.Req, Kind: best.d.Kind, Source: d.Rank, Tag: d.Tag, Count: d.Len, Found: true}.Describe())
			} else {
				so.done = true
				r.xfers = append(r.xfers, &refXfer{send: d, recv: best.d, len: min(d.Len, best.d.Len)})
			}
		}
	}
	for _, d := range ds {
		if d.Kind == proto.KindSend {
			continue
		}
		var best *refOp
		for _, o := range r.sends { // earliest by (slice, source, seq)
			if o.done || !acceptsRef(d, o.d) {
				continue
			}
			if best == nil || o.slice < best.slice || (o.slice == best.slice && (o.d.Rank < best.d.Rank || (o.d.Rank == best.d.Rank && o.d.Seq < best.d.Seq))) {
				best = o
			}
		}
		switch {
		case best != nil && d.Kind == proto.KindRecv:
			best.done = true
			r.xfers = append(r.xfers, &refXfer{send: best.d, recv: d, len: min(best.d.Len, d.Len)})
		case best != nil:
			out = append(out, proto.Completion{Rank: d.Rank, Req: d.Req, Kind: d.Kind, Source: best.d.Rank, Tag: best.d.Tag, Count: best.d.Len, Found: true}.Describe())
		case d.Kind == proto.KindIprobe:
			out = append(out, proto.Completion{Rank: d.Rank, Req: d.Req, Kind: d.Kind, Source: proto.AnySource, Tag: proto.AnyTag}.Describe())
		default:
			r.recvs = append(r.recvs, &refOp{d: d, slice: slice})
		}
	}
	used := map[proto.NodeID]uint64{}
	cnt := map[proto.NodeID]int{}
	var left []*refXfer
	for _, x := range r.xfers {
		if x.moved < x.len {
			sn, dn := r.nodeOf[x.send.Rank], r.nodeOf[x.recv.Rank]
			avail := min(r.cfg.BytesPerSliceMax-used[sn], r.cfg.BytesPerSliceMax-used[dn])
			if avail == 0 || cnt[sn] >= r.cfg.ChunksPerSliceMax || cnt[dn] >= r.cfg.ChunksPerSliceMax {
				left = append(left, x)
				continue
			}
			n := min(avail, x.len-x.moved)
			out = append(out, fmt.Sprintf("move r%d#%d->r%d#%d off=%d len=%d", x.send.Rank, x.send.Seq, x.recv.Rank, x.recv.Seq, x.moved, n))
			used[sn] += n
			cnt[sn]++
			if sn != dn {
				used[dn] += n
				cnt[dn]++
			}
			x.moved += n
			if x.moved < x.len {
				left = append(left, x)
				continue
			}
		}
		if !x.send.Inline {
			out = append(out, proto.Completion{Rank: x.send.Rank, Req: x.send.Req, Kind: proto.KindSend, Source: x.recv.Rank, Tag: x.send.Tag, Count: x.len}.Describe())
		}
		rc := proto.Completion{Rank: x.recv.Rank, Req: x.recv.Req, Kind: proto.KindRecv, Source: x.send.Rank, Tag: x.send.Tag, Count: x.len}
		if x.send.Len > x.recv.Len {
			rc.Err = proto.ErrTruncate
		}
		out = append(out, rc.Describe())
	}
	r.xfers = left
	for _, l := range out {
		if strings.HasPrefix(l, "move ") {
			moves = append(moves, l)
		}
	}
	slices.Sort(out)
	return out, moves
}

// planLines returns the plan as sorted lines, and its moves in emission
// order.
func planLines(seqs map[uint64][2]uint64, p *plan.Plan) (out, moves []string) {
	seqOf := map[uint64][2]uint64{}
	for _, m := range p.Matches {
		seqOf[m.Xfer] = [2]uint64{m.Send.Seq, m.Recv.Seq}
	}
	for _, c := range p.Chunks {
		sq, ok := seqOf[c.Xfer]
		if !ok {
			sq = seqs[c.Xfer]
		}
		out = append(out, fmt.Sprintf("move r%d#%d->r%d#%d off=%d len=%d", c.Src, sq[0], c.Dst, sq[1], c.Off, c.Len))
	}
	moves = slices.Clone(out)
	for _, c := range p.Completions {
		out = append(out, c.Describe())
	}
	slices.Sort(out)
	return out, moves
}

func TestAgainstReference(t *testing.T) {
	seed := int64(20261122)
	for iter := 0; iter < 300; iter++ {
		rng := rand.New(rand.NewSource(seed + int64(iter)))
		nranks := 1 + rng.Intn(6)
		nnodes := 1 + rng.Intn(3)
		nodeOf := make([]proto.NodeID, nranks)
		for r := range nodeOf {
			nodeOf[r] = proto.NodeID(r * nnodes / nranks)
		}
		cfg := Config{BytesPerSliceMax: uint64(1024 + rng.Intn(3000)), ChunksPerSliceMax: 1 + rng.Intn(4)}
		s := New(cfg, nodeOf)
		seqs := map[uint64][2]uint64{}
		ref := &reference{cfg: cfg, nodeOf: nodeOf}
		seq := make([]uint64, nranks)
		for slice := proto.SliceID(1); slice <= 30; slice++ {
			var descs []proto.Descriptor
			if slice <= 20 {
				for i := rng.Intn(6); i > 0; i-- {
					r := proto.Rank(rng.Intn(nranks))
					seq[r]++
					d := proto.Descriptor{Rank: r, Seq: seq[r], Req: uint32(seq[r]), Tag: int32(rng.Intn(3)), Len: uint64(rng.Intn(4000))}
					if rng.Intn(8) == 0 {
						d.Len = 0
					}
					switch x := rng.Intn(10); {
					case x < 5:
						d.Kind, d.Peer = proto.KindSend, proto.Rank(rng.Intn(nranks))
						d.Inline = d.Len < 200
					default:
						d.Kind, d.Peer = proto.KindRecv, proto.Rank(rng.Intn(nranks))
						if x == 9 {
							d.Kind = proto.KindIprobe
						}
						if rng.Intn(4) == 0 {
							d.Peer = proto.AnySource
						}
						if rng.Intn(4) == 0 {
							d.Tag = proto.AnyTag
						}
					}
					// Some partitioned sends and receives (no wildcards).
					if (d.Kind == proto.KindSend || d.Kind == proto.KindRecv) && d.Peer != proto.AnySource && d.Tag != proto.AnyTag && rng.Intn(4) == 0 {
						d.SetPair(uint32(1 + rng.Intn(2)))
					}
					descs = append(descs, d)
				}
			}
			p := s.Schedule(slice, descs)
			for _, m := range p.Matches {
				seqs[m.Xfer] = [2]uint64{m.Send.Seq, m.Recv.Seq}
			}
			got, gotMoves := planLines(seqs, p)
			want, wantMoves := ref.schedule(slice, descs)
			// Order is part of the contract for chunks (served in match
			// order); the rest of the plan is compared as a set.
			if !slices.Equal(gotMoves, wantMoves) {
				t.Fatalf("iter %d slice %d: chunks emitted in the wrong order\ngot  %q\nwant %q", iter, slice, gotMoves, wantMoves)
			}
			if !slices.Equal(got, want) {
				t.Fatalf("seed %d slice %d (ranks %d nodes %d cfg %+v):\n got %q\nwant %q", seed+int64(iter), slice, nranks, nnodes, cfg, got, want)
			}
		}
	}
}

func BenchmarkSchedule(b *testing.B) {
	s := New(DefaultConfig, []proto.NodeID{0, 0, 1, 1})
	descs := make([]proto.Descriptor, 0, 8)
	seq := uint64(0)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		seq++
		descs = descs[:0]
		for r := proto.Rank(0); r < 4; r++ {
			descs = append(descs, send(r, (r+1)%4, 0, seq*2, 4096), recv(r, (r+3)%4, 0, seq*2+1, 4096))
		}
		s.Schedule(proto.SliceID(i+1), descs)
	}
}
