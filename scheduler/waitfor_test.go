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
