package nicthread

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/bcsmpi/bcsmpi/internal/core"
	"github.com/bcsmpi/bcsmpi/internal/proto"
	"github.com/bcsmpi/bcsmpi/internal/shm"
)

var testGeometry = shm.Geometry{RingSlots: 8, ReqMax: 16, InlineMax: 64}

// testNode is one agent with its region; the test plays its ranks, writing
// into the region through rank-side views of the blocks (rank[l]).
type testNode struct {
	a    *Agent
	mem  []byte
	rank []*shm.RankBlock
}

func newTestNode(t *testing.T, node proto.NodeID, nodeOf []proto.NodeID, send func(proto.NodeID, *proto.Msg) error) *testNode {
	t.Helper()
	g := testGeometry
	for _, n := range nodeOf {
		if n == node {
			g.Ranks++
		}
	}
	mem := make([]byte, g.Size())
	region, err := shm.Init(mem, g)
	if err != nil {
		t.Fatal(err)
	}
	tn := &testNode{a: NewAgent(AgentConfig{Node: node, NodeOf: nodeOf, Sched: core.DefaultSchedConfig, Region: region, Send: send}), mem: mem}
	for l := range g.Ranks {
		tn.rank = append(tn.rank, region.Block(l))
	}
	return tn
}

// attach does what MPI_Init and the launcher do for local block l: the
// launcher reports spawned, the process pid claims the block.
func (tn *testNode) attach(t testing.TB, l, spawned, pid int) {
	t.Helper()
	tn.a.Spawned(tn.a.rankOf[l], spawned)
	if _, ok := tn.rank[l].Claim(pid); !ok {
		t.Fatalf("block %d already claimed", l)
	}
	tn.rank[l].SetState(shm.StateInit)
}

// blockBytes is a copy of local block l's bytes.
func (tn *testNode) blockBytes(l int) []byte {
	g := tn.a.region.G
	size := (g.Size() - shm.HeaderSize) / g.Ranks
	return bytes.Clone(tn.mem[shm.HeaderSize+l*size:][:size])
}

// runSlices drives the nodes through slices 1..n (DEM, MSM, TX; the
// completions of slice k are published at the strobe of k+1) and returns the
// first error.
func runSlices(nodes []*testNode, n proto.SliceID) error { return runSlicesFrom(nodes, 1, n) }

// runSlicesFrom is runSlices for slices from .. to.
func runSlicesFrom(nodes []*testNode, from, to proto.SliceID) error {
	for k := from; k <= to; k++ {
		var all []proto.Descriptor
		var status []uint8
		for _, tn := range nodes {
			batch, err := tn.a.DEM(k)
			if err != nil {
				return err
			}
			all = append(all, batch...)
			status = append(status, tn.a.Status()...)
		}
		for _, tn := range nodes {
			if err := tn.a.MSM(k, all, status); err != nil {
				return err
			}
		}
		errs := make([]error, len(nodes))
		var wg sync.WaitGroup
		for i, tn := range nodes {
			wg.Add(1)
			go func() { defer wg.Done(); errs[i] = tn.a.TX(k, 5*time.Second) }()
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			return err
		}
	}
	return nil
}

// wantViolation checks that err aborts the job naming rank and a message part.
func wantViolation(t *testing.T, err error, rank proto.Rank, want string) {
	t.Helper()
	var je *JobError
	if !errors.As(err, &je) || !errors.Is(err, ErrJob) {
		t.Fatalf("got %v, want a job error naming rank %d and %q", err, rank, want)
	}
	if je.Rank != rank || !strings.Contains(je.Error(), want) {
		t.Fatalf("got %q (rank %d), want rank %d and %q", je.Error(), je.Rank, rank, want)
	}
}

func inlineSend(rank, peer proto.Rank, req uint32, seq uint64) proto.Descriptor {
	return proto.Descriptor{Kind: proto.KindSend, Inline: true, Rank: rank, Peer: peer, Tag: 5, Req: req, Seq: seq, Len: 8}
}

var payload = []byte("12345678")

// A request slot past requests_max used to panic bcsrun (index out of range
// in RankBlock.Complete) or, just past the end, write the completion into
// the next rank's block. Now the job aborts naming the rank and the field,
// and the next block is untouched.
func TestReqPastRequestsMaxAbortsJob(t *testing.T) {
	g := testGeometry
	g.Ranks = 2
	intoNext := uint32((blockBase(g, 1) - blockBase(g, 0) - 4096 - g.RingSlots*g.SlotSize()) / shm.CompSize) // lands on rank 1's pid word
	for _, req := range []uint32{uint32(g.ReqMax), intoNext, 1 << 31} {
		tn := newTestNode(t, 0, []proto.NodeID{0, 0}, nil)
		me := os.Getpid()
		tn.attach(t, 0, me, me)
		next := tn.blockBytes(1)
		tn.rank[0].Post(inlineSend(0, 1, req, 1), payload)
		err := runSlices([]*testNode{tn}, 3)
		wantViolation(t, err, 0, "descriptor req = ")
		if !bytes.Equal(tn.blockBytes(1), next) {
			t.Errorf("req %d: rank 1's block was written", req)
		}
	}
}

// A rank that writes another rank's number into its control page used to
// post as that rank: its message arrived as from the impersonated rank.
func TestImpersonationWithinNode(t *testing.T) {
	tn := newTestNode(t, 0, []proto.NodeID{0, 0}, nil)
	me := os.Getpid()
	tn.attach(t, 0, me, me)
	tn.attach(t, 1, me, me)
	tn.rank[0].SetWorldRank(1)
	tn.rank[0].Post(inlineSend(1, 1, 0, 1), payload) // "rank 1" sends to rank 1
	buf := make([]byte, 8)
	tn.rank[1].Post(proto.Descriptor{Kind: proto.KindRecv, Rank: 1, Peer: proto.AnySource, Tag: 5, Req: 0, Seq: 1, Addr: addrOf(buf), Len: 8}, nil)
	err := runSlices([]*testNode{tn}, 3)
	wantViolation(t, err, 0, "control page world_rank = 1, want 0")
	if tn.rank[1].Done(0) || !bytes.Equal(buf, make([]byte, 8)) {
		t.Fatalf("rank 1 received the impersonated message: %q", buf)
	}
}

// The same across nodes used to panic the impersonated rank's agent (slice
// bounds out of range in sendStage: the inline payload is on the other node).
func TestImpersonationAcrossNodes(t *testing.T) {
	nodeOf := []proto.NodeID{0, 1}
	var nodes []*testNode
	send := func(to proto.NodeID, m *proto.Msg) error { return nodes[to].a.OnData(m.Node, m) }
	nodes = []*testNode{newTestNode(t, 0, nodeOf, send), newTestNode(t, 1, nodeOf, send)}
	me := os.Getpid()
	nodes[0].attach(t, 0, me, me)
	nodes[1].attach(t, 0, me, me)
	nodes[0].rank[0].SetWorldRank(1)
	nodes[0].rank[0].Post(inlineSend(1, 1, 0, 1), payload)
	buf := make([]byte, 8)
	nodes[1].rank[0].Post(proto.Descriptor{Kind: proto.KindRecv, Rank: 1, Peer: proto.AnySource, Tag: 5, Req: 0, Seq: 1, Addr: addrOf(buf), Len: 8}, nil)
	err := runSlices(nodes, 3)
	wantViolation(t, err, 0, "control page world_rank = 1, want 0")
	if nodes[1].rank[0].Done(0) {
		t.Fatal("rank 1 received the impersonated message")
	}
}

// Every field a rank writes, one bad value each: the job aborts naming the
// rank of the block (never the rank claimed) and the field.
func TestFieldViolations(t *testing.T) {
	cases := []struct {
		name string
		rank func(b *shm.RankBlock) // what rank 1 writes before slice 1
		want string
	}{
		{"descriptor rank", func(b *shm.RankBlock) { b.Post(inlineSend(0, 0, 0, 1), payload) }, "descriptor rank = 0, want 1"},
		{"seq repeated", func(b *shm.RankBlock) {
			b.Post(inlineSend(1, 0, 0, 1), payload)
			b.Post(inlineSend(1, 0, 1, 1), payload)
		}, "descriptor seq = 1, want more than 1"},
		{"post slice backwards", func(b *shm.RankBlock) {
			d := inlineSend(1, 0, 0, 1)
			d.PostSlice = 1
			b.Post(d, payload)
			d.PostSlice, d.Seq = 0, 2
			b.Post(d, payload)
		}, "descriptor post_slice = 0, want 1 .. 1"},
		{"len wraps", func(b *shm.RankBlock) {
			b.Post(proto.Descriptor{Kind: proto.KindRecv, Rank: 1, Peer: 0, Seq: 1, Addr: 1 << 40, Len: ^uint64(0)}, nil)
		}, "descriptor len = 18446744073709551615"},
		{"inline recv", func(b *shm.RankBlock) {
			b.Post(proto.Descriptor{Kind: proto.KindRecv, Inline: true, Rank: 1, Peer: 0, Seq: 1, Len: 8}, payload)
		}, "descriptor kind (with an inline payload) = recv, want send"},
		{"inline too long", func(b *shm.RankBlock) {
			b.Post(proto.Descriptor{Kind: proto.KindSend, Inline: true, Rank: 1, Peer: 0, Seq: 1, Len: 1 << 20}, nil)
		}, "descriptor len (inline) = 1048576, want 0 .. 64"},
		{"bad peer", func(b *shm.RankBlock) { b.Post(inlineSend(1, 7, 0, 1), payload) }, "send destination 7 not in 0..1"},
		{"state", func(b *shm.RankBlock) { b.SetState(9) }, "control page state = 9"},
		{"blocked", func(b *shm.RankBlock) { b.SetBlocked(250) }, "control page blocked = 250"},
		{"world rank", func(b *shm.RankBlock) { b.SetWorldRank(-3) }, "control page world_rank = -3, want 1"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tn := newTestNode(t, 0, []proto.NodeID{0, 0}, nil)
			me := os.Getpid()
			tn.attach(t, 0, me, me)
			tn.attach(t, 1, me, me)
			c.rank(tn.rank[1])
			wantViolation(t, runSlices([]*testNode{tn}, 3), 1, c.want)
		})
	}
}

// State may only move forward; a finalized rank cannot pretend to run again.
func TestStateNeverGoesBack(t *testing.T) {
	tn := newTestNode(t, 0, []proto.NodeID{0}, nil)
	me := os.Getpid()
	tn.attach(t, 0, me, me)
	tn.rank[0].SetState(shm.StateFinalized)
	if err := runSlices([]*testNode{tn}, 1); err != nil {
		t.Fatal(err)
	}
	tn.rank[0].SetState(shm.StateInit)
	_, err := tn.a.DEM(2)
	wantViolation(t, err, 0, "control page state = 1, want 2 .. 2")
}

// The ring head is bounded by the agent's own tail, and a rank that rewinds
// the shared tail does not make the agent read a slot twice.
func TestRingHeadAndTail(t *testing.T) {
	tn := newTestNode(t, 0, []proto.NodeID{0, 0}, nil)
	me := os.Getpid()
	tn.attach(t, 0, me, me)
	tn.attach(t, 1, me, me)
	tn.rank[0].Post(inlineSend(0, 1, 0, 1), payload)
	buf := make([]byte, 8)
	tn.rank[1].Post(proto.Descriptor{Kind: proto.KindRecv, Rank: 1, Peer: 0, Tag: 5, Req: 3, Seq: 1, Addr: addrOf(buf), Len: 8}, nil)
	if err := runSlices([]*testNode{tn}, 1); err != nil {
		t.Fatal(err)
	}
	rewindTail(tn.mem, tn.a.region.G, 0) // the rank writes the agent's word
	batch, err := tn.a.DEM(2)
	if err != nil || len(batch) != 0 {
		t.Fatalf("after the rank rewound its tail: batch %v, err %v; want nothing drained twice", batch, err)
	}
	if !tn.rank[1].Done(3) || string(buf) != string(payload) {
		t.Fatalf("receive not completed: done %v, buf %q", tn.rank[1].Done(3), buf)
	}
	setHead(tn.mem, tn.a.region.G, 1, 1000)
	if err := tn.a.MSM(2, batch, tn.a.Status()); err != nil {
		t.Fatal(err)
	}
	if err := tn.a.TX(2, time.Second); err != nil {
		t.Fatal(err)
	}
	_, err = tn.a.DEM(3)
	wantViolation(t, err, 1, "ring head = 1000, want 1 .. 9")
}

// Nothing is drained before the launcher has named the rank's process; then
// the process that attached must be it or one it started, and may not change.
func TestAttachMustBeTheSpawnedProcess(t *testing.T) {
	child := exec.Command("sleep", "60")
	if err := child.Start(); err != nil {
		t.Skipf("no sleep to start: %v", err)
	}
	defer func() { child.Process.Kill(); child.Wait() }()
	me, kid := os.Getpid(), child.Process.Pid

	t.Run("not yet reported", func(t *testing.T) {
		tn := newTestNode(t, 0, []proto.NodeID{0}, nil)
		tn.rank[0].Claim(me)
		tn.rank[0].Post(proto.Descriptor{Kind: proto.KindRecv, Rank: 0, Peer: 0, Seq: 1}, nil)
		if batch, err := tn.a.DEM(1); err != nil || len(batch) != 0 {
			t.Fatalf("batch %v, err %v before Spawned; want nothing drained", batch, err)
		}
		tn.a.Spawned(0, me)
		if err := tn.a.MSM(1, nil, tn.a.Status()); err != nil {
			t.Fatal(err)
		}
		if err := tn.a.TX(1, time.Second); err != nil {
			t.Fatal(err)
		}
		if batch, err := tn.a.DEM(2); err != nil || len(batch) != 1 {
			t.Fatalf("batch %v, err %v after Spawned; want the receive", batch, err)
		}
	})
	t.Run("a descendant", func(t *testing.T) {
		tn := newTestNode(t, 0, []proto.NodeID{0}, nil)
		tn.attach(t, 0, me, kid) // `wrapper ./app`: the launcher started us, the child attached
		if _, err := tn.a.DEM(1); err != nil {
			t.Fatal(err)
		}
		if got := tn.a.pid(0); got != kid {
			t.Fatalf("agent uses pid %d, want %d", got, kid)
		}
	})
	t.Run("not a descendant", func(t *testing.T) {
		tn := newTestNode(t, 0, []proto.NodeID{0}, nil)
		tn.attach(t, 0, kid, me) // our parent is not the child
		_, err := tn.a.DEM(1)
		wantViolation(t, err, 0, "control page pid = ")
	})
	t.Run("changed after attach", func(t *testing.T) {
		tn := newTestNode(t, 0, []proto.NodeID{0}, nil)
		tn.attach(t, 0, me, me)
		if err := runSlices([]*testNode{tn}, 1); err != nil {
			t.Fatal(err)
		}
		setPID(tn.mem, tn.a.region.G, 0, kid)
		_, err := tn.a.DEM(2)
		wantViolation(t, err, 0, "control page pid = ")
	})
}

func addrOf(b []byte) uint64 { return uint64(uintptr(unsafe.Pointer(unsafe.SliceData(b)))) }

// Raw writes into a block's control page, as a misbehaving rank makes them
// (offsets from the layout in package shm's doc).
func blockBase(g shm.Geometry, l int) int {
	return shm.HeaderSize + l*(g.Size()-shm.HeaderSize)/g.Ranks
}

func setPID(mem []byte, g shm.Geometry, l, pid int) {
	binary.LittleEndian.PutUint32(mem[blockBase(g, l):], uint32(pid))
}
func setHead(mem []byte, g shm.Geometry, l int, h uint64) {
	binary.LittleEndian.PutUint64(mem[blockBase(g, l)+64:], h)
}
func rewindTail(mem []byte, g shm.Geometry, l int) {
	binary.LittleEndian.PutUint64(mem[blockBase(g, l)+128:], 0)
}

// The per-node tables TX's peer timeout uses (owed, lastFrom: one entry
// per node of NodeOf) are indexed only by a chunk's SrcNode, which the
// scheduler takes from NodeOf for a rank that core.CheckDescriptor has
// admitted. So a descriptor from another node naming a rank or a peer
// outside the job, or a data frame from a node outside it, fails the
// slice with a job error naming it, before any table is indexed: no panic.
func TestOutOfRangeNodeIsAJobError(t *testing.T) {
	nodeOf := []proto.NodeID{0, 1}
	for _, tc := range []struct {
		d    proto.Descriptor
		want string
	}{
		{proto.Descriptor{Kind: proto.KindSend, Rank: 1, Peer: 7, Seq: 1, Len: 8}, "send destination 7 not in 0..1"},
		{proto.Descriptor{Kind: proto.KindSend, Rank: 9, Peer: 0, Seq: 1, Len: 8}, "descriptor rank 9 not in 0..1"},
		{proto.Descriptor{Kind: proto.KindRecv, Rank: 0, Peer: -5, Seq: 1, Len: 8}, "source -5 not in 0..1"},
	} {
		tn := newTestNode(t, 0, nodeOf, func(proto.NodeID, *proto.Msg) error { return nil })
		tn.a.peerTimeout = time.Minute
		if _, err := tn.a.DEM(1); err != nil {
			t.Fatal(err)
		}
		err := tn.a.MSM(1, []proto.Descriptor{tc.d}, nil)
		var je *JobError
		if !errors.As(err, &je) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("MSM with %s from another node: %v, want a job error saying %q", tc.d.Describe(), err, tc.want)
		}
	}
	// A chunk scheduled from node 0 to node 1; a frame for it that says it
	// comes from a node outside the job is refused before owed[from].
	me := os.Getpid()
	var nodes []*testNode
	for n := range 2 {
		tn := newTestNode(t, proto.NodeID(n), nodeOf, func(proto.NodeID, *proto.Msg) error { return nil })
		tn.a.peerTimeout = time.Minute
		tn.attach(t, 0, me, me)
		nodes = append(nodes, tn)
	}
	src, dst := message(100), make([]byte, 100)
	postPair(nodes, src, dst)
	var all []proto.Descriptor
	for _, tn := range nodes {
		b, err := tn.a.DEM(1)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, b...)
	}
	for _, tn := range nodes {
		if err := tn.a.MSM(1, all, nil); err != nil {
			t.Fatal(err)
		}
	}
	p := nodes[1].a.plan.Load()
	if len(p.Chunks) != 1 || p.Chunks[0].SrcNode != 0 || p.Chunks[0].DstNode != 1 {
		t.Fatalf("plan %+v, want one chunk from node 0 to node 1", p.Chunks)
	}
	for _, from := range []proto.NodeID{5, -1} {
		err := nodes[1].a.OnData(from, &proto.Msg{Type: proto.MsgData, Slice: 1, Index: 0, Payload: src})
		if !errors.Is(err, ErrJob) || !strings.Contains(err.Error(), fmt.Sprintf("data frame from node %d does not fit", from)) {
			t.Errorf("a data frame from node %d: %v, want a job error naming it", from, err)
		}
	}
	if n := nodes[1].a.owed[0][0].Load(); n != 1 {
		t.Errorf("node 1 owed %d chunks by node 0 after the refused frames, want 1", n)
	}
}
