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
	ws := s.Waits()
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
		for _, w := range s.Waits() {
			want[w.Rank] = true
			sawMoving = sawMoving || w.Why == "moving"
		}
		got := make([]bool, 5)
		s.Incomplete(got)
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
// returned at its post; its rank may be waiting in a later send until one
// is matched, mpiapi's eager_max) is an unfinished operation of its sender,
// though it completed; another buffered send is not. Once matched, neither.
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
	ws := s.Waits()
	want := "its eager sends to rank 1 (MPI_Send of at most inline_max bytes, returned at their post) wait for matching receives; past max(eager_max, size) of them a send waits for one"
	if len(ws) != 1 || ws[0].Rank != 0 || ws[0].Why != "eager" || DescribeWait(ws[0]) != want {
		t.Fatalf("waits %+v, want rank 0's eager send: %q", ws, want)
	}
	got := make([]bool, 3)
	s.Incomplete(got)
	if !slices.Equal(got, []bool{true, false, false}) {
		t.Fatalf("Incomplete %v, want rank 0 only", got)
	}
	if edges := s.WaitsFor(ws); !slices.Equal(edges[0], []proto.Rank{1}) {
		t.Fatalf("edges %v, want 0 -> 1", edges)
	}
	s.Schedule(2, []proto.Descriptor{recv(1, 0, 4, 1, 8)})
	clear(got)
	s.Incomplete(got)
	if ws := s.Waits(); len(ws) != 0 || slices.Contains(got, true) {
		t.Fatalf("after the match: waits %+v, Incomplete %v; want none", ws, got)
	}
}
