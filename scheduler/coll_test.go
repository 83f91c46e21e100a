package scheduler

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/bcsmpi/bcsmpi/internal/plan"
	"github.com/bcsmpi/bcsmpi/internal/proto"
	"github.com/bcsmpi/bcsmpi/internal/reduce"
)

// sim executes plans the way agents do, over simulated rank memories and
// node staging areas, so collectives can be checked end to end in the pure
// scheduler: every byte moved, every fold in order, every budget kept.
type sim struct {
	t      *testing.T
	s      *Scheduler
	cfg    Config
	nodeOf []proto.NodeID
	mem    [][]byte // per rank
	acc    [][]byte // per node
	done   map[[2]int]proto.SliceID
	slice  proto.SliceID
}

const (
	sendAt = 0       // send buffers at offset 0 of each rank's memory
	recvAt = 2 << 20 // receive buffers at 2 MiB
	memLen = 4 << 20
)

func newSim(t *testing.T, ranks, nodes int, cfg Config) *sim {
	nodeOf := make([]proto.NodeID, ranks)
	for r := range nodeOf {
		nodeOf[r] = proto.NodeID(r * nodes / ranks)
	}
	m := &sim{t: t, s: New(cfg, nodeOf), cfg: cfg, nodeOf: nodeOf, done: map[[2]int]proto.SliceID{}}
	for range ranks {
		m.mem = append(m.mem, make([]byte, memLen))
	}
	for range nodes {
		m.acc = append(m.acc, make([]byte, cfg.StagingSize(ranks)))
	}
	return m
}

func (m *sim) step(k proto.SliceID, descs []proto.Descriptor) *plan.Plan {
	p := m.s.Schedule(k, descs)
	if p.Err != nil {
		m.t.Fatalf("slice %d: %v", k, p.Err)
	}
	used := make([]uint64, len(m.acc))
	for _, c := range p.Chunks {
		used[c.SrcNode] += c.Len
		if c.DstNode != c.SrcNode {
			used[c.DstNode] += c.Len
		}
	}
	for n, u := range used {
		// Only the one-element progress rule (at most 2 chunks of one
		// element per member) may exceed the budget.
		if u > m.cfg.BytesPerSliceMax+16*uint64(2*len(m.mem)) {
			m.t.Fatalf("slice %d: node %d moved %d bytes, budget %d", k, n, u, m.cfg.BytesPerSliceMax)
		}
	}
	for stage := uint8(0); stage < proto.Stages; stage++ {
		if stage == 1 {
			tmp := make([]byte, m.cfg.BytesPerSliceMax+16)
			for _, f := range p.Folds {
				reduce.Fold(f.Op, f.Type, f.Mode, m.acc[f.Node], f.Base, f.Stride, f.Seg, f.N, tmp)
			}
		}
		for _, c := range p.Chunks {
			if c.Stage != stage {
				continue
			}
			var src, dst []byte
			if c.SrcAcc {
				src = m.acc[c.SrcNode][c.SrcAddr:][:c.Len]
			} else {
				src = m.mem[c.Src][c.SrcAddr:][:c.Len]
			}
			if c.DstAcc {
				dst = m.acc[c.DstNode][c.DstAddr:][:c.Len]
			} else {
				dst = m.mem[c.Dst][c.DstAddr:][:c.Len]
			}
			copy(dst, src)
		}
	}
	for _, w := range p.Writes {
		copy(m.mem[w.Rank][w.Addr:], w.Data)
	}
	for _, c := range p.Completions {
		m.done[[2]int{int(c.Rank), int(c.Req)}] = k
	}
	return p
}

func putF(b []byte, v []float64) {
	for i, x := range v {
		binary.LittleEndian.PutUint64(b[8*i:], math.Float64bits(x))
	}
}

func getF(b []byte, n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = math.Float64frombits(binary.LittleEndian.Uint64(b[8*i:]))
	}
	return out
}

// contribution is rank r's vector: magnitudes chosen so that the sum depends
// on the order it is taken in.
func contribution(r, n int) []float64 {
	mag := []float64{1e16, 1, -1e16, 3.5, 1e-3, -2.25}
	v := make([]float64, n)
	for i := range v {
		v[i] = mag[(r*5+i)%len(mag)] * float64(1+i%7)
	}
	return v
}

// runColl posts one collective per rank, rank r in slice delay[r], and runs
// slices until every member has completed; it returns the completion slice.
func (m *sim) runColl(mk func(r int) []proto.Descriptor, delay []int, seq uint32) proto.SliceID {
	ranks := len(m.mem)
	last := proto.SliceID(0)
	clear(m.done)
	first := m.slice + 1
	for k := first; k < first+10000; k++ {
		m.slice = k
		var descs []proto.Descriptor
		for r := range ranks {
			if k == first+proto.SliceID(delay[r]) {
				for i, d := range mk(r) {
					d.Rank, d.Seq, d.CollSeq, d.Req, d.PostSlice = proto.Rank(r), uint64(1000*int(k)+i), seq, 7, k-1
					descs = append(descs, d)
				}
			}
		}
		m.step(k, descs)
		all := true
		for r := range ranks {
			s, ok := m.done[[2]int{r, 7}]
			all = all && ok
			last = max(last, s)
		}
		if all {
			if want := first + proto.SliceID(slices.Max(delay)); last < want {
				m.t.Fatalf("completed in slice %d before the last member posted (slice %d)", last, want)
			}
			return last
		}
	}
	m.t.Fatal("collective never completed")
	return 0
}

// TestCollectivesExecuteExactly runs reductions and data-moving collectives
// through the scheduler and a plan interpreter over random placements,
// budgets and posting slices, and checks the results bit for bit against a
// left fold in rank order: the result must not depend on when members post.
func TestCollectivesExecuteExactly(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	for iter := range 120 {
		ranks := 1 + rng.IntN(8)
		nodes := 1 + rng.IntN(min(ranks, 4))
		n := []int{0, 1, 13, 1000, 20000}[rng.IntN(5)]
		cfg := Config{BytesPerSliceMax: uint64(1024 << rng.IntN(8)), ChunksPerSliceMax: 1 + rng.IntN(64)}
		delay := make([]int, ranks)
		for r := range delay {
			delay[r] = rng.IntN(4)
		}
		kinds := []proto.Coll{proto.CollAllreduce, proto.CollReduce, proto.CollScan, proto.CollExscan, proto.CollBcast,
			proto.CollAllgather, proto.CollAlltoall, proto.CollReduceScatter}
		root := rng.IntN(ranks)
		name := fmt.Sprintf("%d_%s+%s_r%d_n%d_len%d_budget%d", iter, kinds[iter%8], kinds[(iter+3)%8], ranks, nodes, n, cfg.BytesPerSliceMax)
		t.Run(name, func(t *testing.T) {
			m := newSim(t, ranks, nodes, cfg)
			// Two different collectives in a row on one scheduler: the second
			// reuses the first one's recycled bookkeeping.
			for rep := range 2 {
				kind := kinds[(iter+3*rep)%8]
				L := uint64(8 * n)
				for r := range ranks {
					putF(m.mem[r][sendAt:], contribution(r, n*max(1, ranks)))
				}
				rs := func(r int) int { // Reduce_scatter block of rank r
					return n/ranks + btoi(r < n%ranks)
				}
				mk := func(r int) []proto.Descriptor {
					d := proto.Descriptor{Kind: proto.KindColl, Coll: kind, Op: uint8(reduce.Sum), DType: uint8(reduce.Float64),
						Addr: sendAt, RAddr: recvAt, Len: L}
					d.SetRoot(proto.Rank(root))
					if kind == proto.CollAllgather || kind == proto.CollAlltoall {
						d.Len = L // one block
					}
					if kind == proto.CollReduceScatter {
						return []proto.Descriptor{proto.Part(proto.PartRecv, proto.Rank(r), recvAt, uint64(8*rs(r))), d}
					}
					return []proto.Descriptor{d}
				}
				m.runColl(mk, delay, uint32(rep+1))
				fold := func(upto int) []float64 {
					acc := contribution(0, n)
					for r := 1; r <= upto; r++ {
						c := contribution(r, n)
						for i := range acc {
							acc[i] += c[i]
						}
					}
					return acc
				}
				for r := range ranks {
					var want []float64
					got := getF(m.mem[r][recvAt:], n)
					switch kind {
					case proto.CollAllreduce:
						want = fold(ranks - 1)
					case proto.CollReduce:
						if r != root {
							continue
						}
						want = fold(ranks - 1)
					case proto.CollScan:
						want = fold(r)
					case proto.CollExscan:
						if r == 0 {
							continue
						}
						want = fold(r - 1)
					case proto.CollBcast:
						want = contribution(root, n)
						got = getF(m.mem[r][sendAt:], n)
					case proto.CollAllgather:
						got = getF(m.mem[r][recvAt:], n*ranks)
						for q := range ranks {
							want = append(want, contribution(q, n)...)
						}
					case proto.CollAlltoall:
						got = getF(m.mem[r][recvAt:], n*ranks)
						for q := range ranks {
							want = append(want, contribution(q, n*ranks)[r*n:(r+1)*n]...)
						}
					case proto.CollReduceScatter:
						start := 0
						for q := range r {
							start += rs(q)
						}
						want = fold(ranks - 1)[start : start+rs(r)]
						got = getF(m.mem[r][recvAt:], rs(r))
					}
					for i := range want {
						if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
							t.Fatalf("%s: rank %d element %d: %v, want %v", kind, r, i, got[i], want[i])
						}
					}
				}
			}
		})
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestMismatchKinds: each kind of disagreement is an Error naming both ranks.
func TestMismatchKinds(t *testing.T) {
	base := proto.Descriptor{Kind: proto.KindColl, Coll: proto.CollReduce, Op: uint8(reduce.Sum), DType: uint8(reduce.Float64), Len: 64, CollSeq: 1}
	for _, c := range []struct {
		name string
		mod  func(*proto.Descriptor)
		want string
	}{
		{"collective", func(d *proto.Descriptor) { d.Coll = proto.CollAllreduce }, "different collectives"},
		{"root", func(d *proto.Descriptor) { d.SetRoot(1) }, "different roots"},
		{"operation", func(d *proto.Descriptor) { d.Op = uint8(reduce.Max) }, "different operations"},
		{"type", func(d *proto.Descriptor) { d.DType = uint8(reduce.Int64) }, "different element types"},
		{"count", func(d *proto.Descriptor) { d.Len = 72 }, "different element counts"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := New(DefaultConfig, []proto.NodeID{0, 0, 1})
			a, b := base, base
			a.Rank, b.Rank, b.Seq = 0, 2, 1
			c.mod(&b)
			if p := s.Schedule(1, []proto.Descriptor{a}); p.Err != nil {
				t.Fatal(p.Err)
			}
			p := s.Schedule(2, []proto.Descriptor{b})
			var e *plan.Error
			if p.Err == nil || !strings.Contains(p.Err.Error(), c.want) || !strings.Contains(p.Err.Error(), "rank 0 called MPI_Reduce") {
				t.Fatalf("err = %v, want a mismatch (%s) naming rank 0's call", p.Err, c.want)
			}
			if e = p.Err.(*plan.Error); !slices.Equal(e.Ranks, []proto.Rank{0, 2}) {
				t.Fatalf("ranks %v, want [0 2]", e.Ranks)
			}
		})
	}
}

// TestUserOperationMismatch: the Gather that starts a reduction with a user
// operation carries the operation's number and the user's call; members
// that pass different operations are a mismatch naming both ranks and
// rendered as the calls they made, and matching ones run.
func TestUserOperationMismatch(t *testing.T) {
	base := proto.Descriptor{Kind: proto.KindColl, Coll: proto.CollGather, DType: uint8(reduce.Float64), Len: 32, CollSeq: 1,
		UserOp: 0x0a01, UserColl: proto.CollAllreduce}
	for _, c := range []struct {
		name string
		mod  func(*proto.Descriptor)
		want string // "" : no error
	}{
		{"same operation", func(d *proto.Descriptor) {}, ""},
		{"another user operation", func(d *proto.Descriptor) { d.UserOp = 0x0b02 },
			"rank 0 called MPI_Allreduce(user operation 0x0a01, 4 x float64) but rank 2 called MPI_Allreduce(user operation 0x0b02, 4 x float64) (different operations)"},
		{"a predefined operation", func(d *proto.Descriptor) {
			d.Coll, d.UserOp, d.UserColl, d.Op = proto.CollAllreduce, 0, 0, uint8(reduce.Sum)
		}, "rank 2 called MPI_Allreduce(MPI_SUM, 4 x float64) (different operations)"},
		{"a plain Gather", func(d *proto.Descriptor) { d.UserOp, d.UserColl = 0, 0 },
			"rank 2 called MPI_Gather(root 0, 4 x float64) (different collectives)"},
		{"another reduction", func(d *proto.Descriptor) { d.UserColl = proto.CollReduce },
			"rank 2 called MPI_Reduce(root 0, user operation 0x0a01, 4 x float64) (different collectives)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := New(DefaultConfig, []proto.NodeID{0, 0, 1})
			var ds []proto.Descriptor
			for r := range 3 {
				d := base
				d.Rank, d.Seq = proto.Rank(r), 1
				if r == 2 {
					c.mod(&d)
				}
				ds = append(ds, d)
			}
			p := s.Schedule(1, ds)
			if c.want == "" {
				if p.Err != nil {
					t.Fatalf("matching user operations: %v", p.Err)
				}
				return
			}
			if p.Err == nil || !strings.Contains(p.Err.Error(), c.want) {
				t.Fatalf("err = %v, want one containing %q", p.Err, c.want)
			}
			if e := p.Err.(*plan.Error); !slices.Equal(e.Ranks, []proto.Rank{0, 2}) {
				t.Fatalf("ranks %v, want [0 2]", e.Ranks)
			}
		})
	}
}

// TestSplitAndCommunicatorChecks: Split builds the same communicators on
// every node, lists members in (key, rank) order, and a rank may not use a
// communicator it does not belong to.
func TestSplitAndCommunicatorChecks(t *testing.T) {
	nodeOf := []proto.NodeID{0, 0, 1, 1, 1}
	s := New(DefaultConfig, nodeOf)
	var ds []proto.Descriptor
	colors := []int32{1, 0, 1, UndefinedColor, 1}
	keys := []int32{5, 0, 5, 0, -1}
	for r := range 5 {
		d := proto.Descriptor{Kind: proto.KindColl, Coll: proto.CollSplit, Rank: proto.Rank(r), Seq: 1, CollSeq: 1, Req: 3, RAddr: 0x100}
		d.SetSplit(colors[r], keys[r])
		ds = append(ds, d)
	}
	p := s.Schedule(1, ds)
	if p.Err != nil {
		t.Fatal(p.Err)
	}
	got := map[proto.Rank]proto.Completion{}
	for _, c := range p.Completions {
		got[c.Rank] = c
	}
	// color 0: {1} -> comm 1; color 1: keys 5,5,-1 -> ranks 4, 0, 2 -> comm 2.
	if c := got[1]; c.NewComm() != 1 || c.NewCommRank() != 0 || c.NewCommSize() != 1 {
		t.Fatalf("rank 1: %+v", c)
	}
	for r, pos := range map[proto.Rank]int{4: 0, 0: 1, 2: 2} {
		if c := got[r]; c.NewComm() != 2 || c.NewCommRank() != pos || c.NewCommSize() != 3 {
			t.Fatalf("rank %d: %+v, want comm 2 position %d of 3", r, c, pos)
		}
	}
	if got[3].Err != proto.ErrNoComm {
		t.Fatalf("rank 3 (undefined color): %+v", got[3])
	}
	if m := s.CommMembers(2); !slices.Equal(m, []proto.Rank{4, 0, 2}) {
		t.Fatalf("comm 2 members %v", m)
	}
	var list []byte
	for _, w := range p.Writes {
		if w.Rank == 0 {
			list = w.Data
		}
	}
	if len(list) != 12 || binary.LittleEndian.Uint32(list) != 4 {
		t.Fatalf("member list written to rank 0: %v", list)
	}
	// Rank 1 is not in communicator 2.
	p = s.Schedule(2, []proto.Descriptor{{Kind: proto.KindSend, Comm: 2, Rank: 1, Peer: 0, Seq: 2, Len: 4}})
	if p.Err == nil || !strings.Contains(p.Err.Error(), "rank 1 used communicator 2, of which it is not a member") {
		t.Fatalf("err = %v", p.Err)
	}
	p = s.Schedule(3, []proto.Descriptor{{Kind: proto.KindColl, Coll: proto.CollBarrier, Comm: 9, Rank: 0, Seq: 3, CollSeq: 1}})
	if p.Err == nil || !strings.Contains(p.Err.Error(), "communicator 9, which does not exist") {
		t.Fatalf("err = %v", p.Err)
	}
}

// TestTrafficOnOneCommunicatorIgnoresAnother: an ANY_SOURCE receive on comm
// 1 does not match a send on the world; barriers on two communicators
// complete independently.
func TestTrafficOnOneCommunicatorIgnoresAnother(t *testing.T) {
	s := New(DefaultConfig, []proto.NodeID{0, 0})
	var ds []proto.Descriptor
	for r := range 2 {
		d := proto.Descriptor{Kind: proto.KindColl, Coll: proto.CollSplit, Rank: proto.Rank(r), Seq: 1, CollSeq: 1, Req: 1}
		d.SetSplit(0, int32(r))
		ds = append(ds, d)
	}
	s.Schedule(1, ds)
	p := s.Schedule(2, []proto.Descriptor{
		{Kind: proto.KindRecv, Comm: 1, Rank: 0, Peer: proto.AnySource, Tag: proto.AnyTag, Seq: 2, Req: 2, Len: 8},
		{Kind: proto.KindSend, Comm: 0, Rank: 1, Peer: 0, Tag: 4, Seq: 2, Req: 2, Len: 8, Inline: true},
		{Kind: proto.KindColl, Coll: proto.CollBarrier, Comm: 1, Rank: 1, Seq: 3, CollSeq: 1, Req: 3},
		{Kind: proto.KindColl, Coll: proto.CollBarrier, Comm: 0, Rank: 0, Seq: 3, CollSeq: 2, Req: 3},
	})
	if p.Err != nil || len(p.Matches) != 0 || p.Collectives != 0 {
		t.Fatalf("err %v, matches %d, collectives %d: traffic crossed communicators", p.Err, len(p.Matches), p.Collectives)
	}
	p = s.Schedule(3, []proto.Descriptor{
		{Kind: proto.KindColl, Coll: proto.CollBarrier, Comm: 1, Rank: 0, Seq: 4, CollSeq: 1, Req: 4},
	})
	if p.Collectives != 1 || len(p.Completions) != 2 || p.Completions[0].Req == 3 && p.Completions[0].Rank == 0 {
		t.Fatalf("comm 1 barrier: collectives %d, completions %v", p.Collectives, p.Completions)
	}
}

// BenchmarkAllreduce is the MSM cost of one 8-double Allreduce over 8 ranks
// on 2 nodes, every member posting in the same slice (the latency case).
func BenchmarkAllreduce(b *testing.B) {
	s := New(DefaultConfig, []proto.NodeID{0, 0, 0, 0, 1, 1, 1, 1})
	descs := make([]proto.Descriptor, 8)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		for r := range descs {
			descs[r] = proto.Descriptor{Kind: proto.KindColl, Coll: proto.CollAllreduce, Op: uint8(reduce.Sum), DType: uint8(reduce.Float64),
				Rank: proto.Rank(r), Seq: uint64(i + 1), CollSeq: uint32(i + 1), Req: 1, Addr: 0x1000, RAddr: 0x2000, Len: 64}
		}
		if p := s.Schedule(proto.SliceID(i+1), descs); p.Collectives != 1 {
			b.Fatalf("collectives %d", p.Collectives)
		}
	}
}

// TestCollectivesDoNotAllocate: once warmed up, a stream of Allreduce and
// Barrier calls is scheduled without allocating (bookkeeping is recycled).
func TestCollectivesDoNotAllocate(t *testing.T) {
	s := New(DefaultConfig, []proto.NodeID{0, 0, 1, 1})
	descs := make([]proto.Descriptor, 8)
	i := 0
	step := func() {
		i++
		for r := range 4 {
			descs[2*r] = proto.Descriptor{Kind: proto.KindColl, Coll: proto.CollAllreduce, Op: uint8(reduce.Max), DType: uint8(reduce.Int32),
				Rank: proto.Rank(r), Seq: uint64(2 * i), CollSeq: uint32(2 * i), Req: 1, Addr: 0x1000, RAddr: 0x2000, Len: 32}
			descs[2*r+1] = proto.Descriptor{Kind: proto.KindColl, Coll: proto.CollBarrier, Rank: proto.Rank(r), Seq: uint64(2*i + 1), CollSeq: uint32(2*i + 1), Req: 2}
		}
		if p := s.Schedule(proto.SliceID(i), descs); p.Collectives != 2 || p.Err != nil {
			t.Fatalf("slice %d: %d collectives, err %v", i, p.Collectives, p.Err)
		}
	}
	for range 10 {
		step()
	}
	if n := testing.AllocsPerRun(200, step); n != 0 {
		t.Fatalf("%.1f allocations per slice with two collectives, want 0", n)
	}
}

// TestPersistentCollectivesMatchByKey: rank 0 posts persistent collectives
// 1 and 2 (init order) and rank 1 posts them the other way round, with an
// ordinary barrier of the same CollSeq number between them: each matches
// its own key, and the barrier is a collective apart. Different calls under
// one key are a mismatch naming the persistent collective.
func TestPersistentCollectivesMatchByKey(t *testing.T) {
	s := New(DefaultConfig, []proto.NodeID{0, 0})
	k1, k2 := proto.PersistKey(1, 1), proto.PersistKey(2, 1)
	bc := func(r proto.Rank, seq uint64, key uint32, root proto.Rank) proto.Descriptor {
		d := proto.Descriptor{Kind: proto.KindColl, Coll: proto.CollBcast, Persist: true, CollSeq: key, Rank: r, Seq: seq, Req: uint32(seq), DType: uint8(reduce.Float64),
			Addr: 0x1000 * uint64(seq), Len: 8}
		d.SetRoot(root)
		return d
	}
	p := s.Schedule(1, []proto.Descriptor{
		bc(0, 1, k1, 0), bc(1, 1, k2, 1),
		{Kind: proto.KindColl, Coll: proto.CollBarrier, CollSeq: k1, Rank: 0, Seq: 2, Req: 2},
		bc(0, 3, k2, 1), bc(1, 3, k1, 0),
		{Kind: proto.KindColl, Coll: proto.CollBarrier, CollSeq: k1, Rank: 1, Seq: 2, Req: 2},
	})
	if p.Err != nil || p.Collectives != 3 {
		t.Fatalf("err %v, collectives %d, want 3", p.Err, p.Collectives)
	}
	p = s.Schedule(2, []proto.Descriptor{
		bc(0, 4, proto.PersistKey(1, 2), 0),
		{Kind: proto.KindColl, Coll: proto.CollBarrier, Persist: true, CollSeq: proto.PersistKey(1, 2), Rank: 1, Seq: 4, Req: 4},
	})
	if p.Err == nil || !strings.Contains(p.Err.Error(), "collective mismatch on MPI_COMM_WORLD, persistent collective #1") ||
		!strings.Contains(p.Err.Error(), "initialize the same persistent collectives in the same order") {
		t.Fatalf("err = %v", p.Err)
	}
}
