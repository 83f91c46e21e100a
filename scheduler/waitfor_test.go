package scheduler

import (
	"slices"
	"strings"
	"testing"

	"github.com/bcsmpi/bcsmpi/internal/proto"
)

func TestWaitForGraph(t *testing.T) {
	s := New(DefaultConfig, []proto.NodeID{0, 0, 0, 0})
	// 0 and 1 receive from each other (a cycle); 2 sends a large message to 3,
	// which is in a barrier nobody else entered.
	s.Schedule(1, []proto.Descriptor{
		recv(0, 1, 0, 1, 8), recv(1, 0, 0, 1, 8),
		send(2, 3, 5, 1, 1<<20),
		{Kind: proto.KindColl, Coll: proto.CollBarrier, CollSeq: 1, Rank: 3, Seq: 1, Req: 1},
	})
	ws := s.Waits(nil)
	var lines []string
	for _, w := range ws {
		lines = append(lines, DescribeWait(w))
	}
	want := []string{
		"waits for a message from rank 1 (tag 0)",
		"waits for a message from rank 0 (tag 0)",
		"its send to rank 3 (tag 5, 1048576 bytes) waits for a matching receive",
		"waits in MPI_Barrier() (call #1 on MPI_COMM_WORLD) for the members that have not entered it",
	}
	if !slices.Equal(lines, want) {
		t.Fatalf("waits:\n%s\nwant:\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
	edges := s.WaitsFor(ws)
	if !slices.Equal(edges[0], []proto.Rank{1}) || !slices.Equal(edges[2], []proto.Rank{3}) || !slices.Equal(edges[3], []proto.Rank{0, 1, 2}) {
		t.Fatalf("edges %v", edges)
	}
	all := []bool{true, true, true, true}
	c := Cycle(edges, all)
	if FormatCycle(c) != "0 -> 1 -> 0" {
		t.Fatalf("cycle %v", c)
	}
	// Without the mutual receive there is still a cycle through the barrier: 2 -> 3 -> 2.
	if c := Cycle(edges, []bool{false, false, true, true}); FormatCycle(c) != "2 -> 3 -> 2" {
		t.Fatalf("cycle among 2,3: %v", c)
	}
	if c := Cycle([][]proto.Rank{{1}, nil}, []bool{true, true}); c != nil {
		t.Fatalf("acyclic graph gave %v", c)
	}
}

// Incomplete marks exactly the ranks Waits names, slice after slice, as
// operations are posted, matched, moved over several slices and completed.
func TestIncompleteMatchesWaits(t *testing.T) {
	s := New(Config{BytesPerSliceMax: 4096, ChunksPerSliceMax: 64}, []proto.NodeID{0, 0, 1, 1, 1})
	inl := send(4, 0, 9, 1, 8)
	inl.Inline = true // a buffered send is complete for its sender
	slicesOf := [][]proto.Descriptor{
		{recv(0, 1, 0, 1, 8), send(2, 3, 5, 1, 10000), inl,
			{Kind: proto.KindColl, Coll: proto.CollBarrier, CollSeq: 1, Rank: 3, Seq: 1, Req: 1}},
		{recv(3, 2, 5, 2, 10000)}, // matches 2's send: moves over three slices
		nil,
		{{Kind: proto.KindColl, Coll: proto.CollBarrier, CollSeq: 1, Rank: 0, Seq: 2, Req: 2},
			{Kind: proto.KindColl, Coll: proto.CollBarrier, CollSeq: 1, Rank: 1, Seq: 1, Req: 1},
			{Kind: proto.KindColl, Coll: proto.CollBarrier, CollSeq: 1, Rank: 2, Seq: 2, Req: 2}},
		{{Kind: proto.KindColl, Coll: proto.CollBarrier, CollSeq: 1, Rank: 4, Seq: 2, Req: 2}},
		nil,
		{send(1, 0, 0, 2, 8)},
		nil,
	}
	sawMoving, sawNone := false, false
	for i, descs := range slicesOf {
		s.Schedule(proto.SliceID(i+1), descs)
		want := make([]bool, 5)
		for _, w := range s.Waits(nil) {
			want[w.Rank] = true
			sawMoving = sawMoving || w.Why == "moving"
		}
		got := make([]bool, 5)
		s.Incomplete(got, nil)
		if !slices.Equal(got, want) {
			t.Fatalf("slice %d: Incomplete %v, Waits name %v", i+1, got, want)
		}
		sawNone = sawNone || !slices.Contains(got, true)
	}
	if !sawMoving || !sawNone {
		t.Fatalf("the scenario did not cover a moving transfer (%v) and a quiet end (%v)", sawMoving, sawNone)
	}
}

// TestEagerSendsAreWaits: an unmatched eager send (a blocking send that
// returned at its post; past mpiapi's eager_max a later send waits until
// one is matched) is an unfinished operation of its sender while the
// sender's status says it waits for that (proto.CallSendMatch), though it
// completed; not while the sender runs or waits in another call (MPI_Recv,
// or MPI_Send for a send's own completion); another buffered send never
// is. Once matched, neither.
func TestEagerSendsAreWaits(t *testing.T) {
	s := New(DefaultConfig, []proto.NodeID{0, 0, 0})
	eager := send(0, 1, 4, 1, 8)
	eager.Inline, eager.Eager = true, true
	buffered := send(2, 1, 5, 1, 8)
	buffered.Inline = true
	p := s.Schedule(1, []proto.Descriptor{eager, buffered})
	if len(p.Completions) != 2 {
		t.Fatalf("%d completions, want both buffered sends complete at their exchange", len(p.Completions))
	}
	got := make([]bool, 3)
	for _, st := range []uint8{proto.StatusRunning, proto.CallCode("MPI_Recv"), proto.CallCode("MPI_Send"),
		proto.StatusWoken | proto.CallSendMatch, proto.StatusFinalized} {
		status := []uint8{st, proto.CallCode("MPI_Recv"), proto.CallSendMatch}
		clear(got)
		s.Incomplete(got, status)
		if ws := s.Waits(status); len(ws) != 0 || slices.Contains(got, true) {
			t.Fatalf("rank 0 %s: waits %+v, Incomplete %v; want none", proto.DescribeStatus(st), ws, got)
		}
	}
	status := []uint8{proto.CallSendMatch, proto.CallCode("MPI_Recv"), proto.CallSendMatch | proto.StatusNoPull}
	ws := s.Waits(status)
	want := "its eager sends to rank 1 (MPI_Send of at most inline_max bytes, returned at their post) wait for matching receives; past max(eager_max, size) of them a send waits for one"
	if len(ws) != 1 || ws[0].Rank != 0 || ws[0].Why != "eager" || DescribeWait(ws[0]) != want {
		t.Fatalf("waits %+v, want rank 0's eager send: %q", ws, want)
	}
	clear(got)
	s.Incomplete(got, status)
	if !slices.Equal(got, []bool{true, false, false}) {
		t.Fatalf("Incomplete %v, want rank 0 only", got)
	}
	if edges := s.WaitsFor(ws); !slices.Equal(edges[0], []proto.Rank{1}) {
		t.Fatalf("edges %v, want 0 -> 1", edges)
	}
	s.Schedule(2, []proto.Descriptor{recv(1, 0, 4, 1, 8)})
	clear(got)
	s.Incomplete(got, status)
	if ws := s.Waits(status); len(ws) != 0 || slices.Contains(got, true) {
		t.Fatalf("after the match: waits %+v, Incomplete %v; want none", ws, got)
	}
}

// TestEagerSendNoFalseCycle: rank 0 sent to rank 1 eagerly long ago and now
// waits in MPI_Recv from rank 2; rank 1 waits in MPI_Recv from rank 0.
// Rank 0 does not wait for rank 1 (its send returned), so the wait-for graph
// has no cycle 0 -> 1 -> 0; the edges are 0 -> 2 and 1 -> 0. Once rank 0 is
// blocked in MPI_Send waiting for a match (proto.CallSendMatch), the edge
// 0 -> 1 is real and so is the cycle.
func TestEagerSendNoFalseCycle(t *testing.T) {
	s := New(DefaultConfig, []proto.NodeID{0, 0, 0})
	eager := send(0, 1, 4, 1, 8)
	eager.Inline, eager.Eager = true, true
	s.Schedule(1, []proto.Descriptor{eager, recv(0, 2, 0, 2, 8), recv(1, 0, 9, 1, 8)})
	recvCode := proto.CallCode("MPI_Recv")
	blocked := []bool{true, true, true}
	status := []uint8{recvCode, recvCode, recvCode}
	edges := s.WaitsFor(s.Waits(status))
	if !slices.Equal(edges[0], []proto.Rank{2}) || !slices.Equal(edges[1], []proto.Rank{0}) {
		t.Fatalf("edges %v, want 0 -> 2 and 1 -> 0", edges)
	}
	if c := Cycle(edges, blocked); c != nil {
		t.Fatalf("cycle %s, want none: rank 0 does not wait for rank 1", FormatCycle(c))
	}
	status[0] = proto.CallSendMatch
	edges = s.WaitsFor(s.Waits(status))
	if c := Cycle(edges, blocked); FormatCycle(c) != "0 -> 1 -> 0" {
		t.Fatalf("rank 0 waiting for a match: cycle %v, want 0 -> 1 -> 0", c)
	}
}
