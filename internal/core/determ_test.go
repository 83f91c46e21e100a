package core

import (
	"errors"
	"testing"

	"github.com/bcsmpi/bcsmpi/internal/proto"
	"github.com/bcsmpi/bcsmpi/scheduler"
)

// detStep runs one slice of node n and returns its plan's completions.
func detStep(t *testing.T, n *Node, k proto.SliceID, descs []proto.Descriptor, st []uint8) ([]proto.Completion, error) {
	t.Helper()
	if _, err := n.DEM(k); err != nil {
		t.Fatal(err)
	}
	p, err := n.MSM(k, descs, st)
	n.TX(k)
	n.EndSlice(k)
	if p == nil {
		return nil, err
	}
	return append([]proto.Completion(nil), p.Completions...), err
}

// TestDeterministicQuiescentPoint: rank 0's wildcard has rank 2's send
// (clock 3) as its candidate, but rank 1 (clock 1) could still post an
// earlier one and rank 1 waits for rank 0: nothing can progress. After two
// quiescent slices the wildcard is answered with what was posted; then a
// rank left waiting in MPI_Test is released; then, with nothing left, the
// deadlock is declared.
func TestDeterministicQuiescentPoint(t *testing.T) {
	sc := scheduler.DefaultConfig
	sc.Deterministic = true
	n := New(Config{Node: 0, NodeOf: []proto.NodeID{0, 0, 0}, Sched: sc, DeadlockSlices: 3})
	recvCode, testCode := proto.CallCode("MPI_Recv"), proto.CallCode("MPI_Test")
	st := []uint8{recvCode, recvCode, proto.StatusFinalized}
	descs := []proto.Descriptor{
		{Kind: proto.KindRecv, Rank: 0, Peer: proto.AnySource, Tag: 7, Seq: 1, Req: 1, Len: 8},
		{Kind: proto.KindRecv, Rank: 1, Peer: 0, Tag: 7, Seq: 1, Req: 1, Len: 8},
		{Kind: proto.KindSend, Rank: 2, Peer: 1, Tag: 1, Seq: 1, Len: 0, Inline: true},
		{Kind: proto.KindSend, Rank: 2, Peer: 1, Tag: 1, Seq: 2, Len: 0, Inline: true},
		{Kind: proto.KindSend, Rank: 2, Peer: 0, Tag: 7, Seq: 3, Req: 3, Len: 8, Inline: true},
	}
	cs, err := detStep(t, n, 1, descs, st)
	if err != nil || len(cs) != 3 { // the three inline sends complete; nothing matches rank 0
		t.Fatalf("slice 1: completions %v, err %v", cs, err)
	}
	var got []proto.Completion
	k := proto.SliceID(2)
	for ; k < 6 && len(got) == 0; k++ {
		if got, err = detStep(t, n, k, nil, st); err != nil {
			t.Fatalf("slice %d: %v", k, err)
		}
	}
	if k != 4 || len(got) != 1 || got[0].Rank != 0 || got[0].Source != 2 {
		t.Fatalf("slice %d: completions %v, want rank 0's wildcard answered with rank 2's send at the second quiescent slice (3)", k-1, got)
	}
	if s, _ := n.DetStats(); s.Forced != 1 {
		t.Fatalf("det stats %+v, want one forced answer", s)
	}
	// Rank 0 now waits in MPI_Test for a receive from rank 1, which waits too.
	st = []uint8{testCode, recvCode, proto.StatusFinalized}
	if _, err := detStep(t, n, k, []proto.Descriptor{{Kind: proto.KindRecv, Rank: 0, Peer: 1, Tag: 7, Seq: 2, Req: 2, Len: 8}}, st); err != nil {
		t.Fatal(err)
	}
	k++
	got = nil
	start := k
	for ; k < start+4 && len(got) == 0; k++ {
		if got, err = detStep(t, n, k, nil, st); err != nil {
			t.Fatalf("slice %d: %v", k, err)
		}
	}
	if len(got) != 1 || got[0].Kind != proto.KindRelease || got[0].Rank != 0 || k != start+2 {
		t.Fatalf("slice %d: completions %v, want rank 0's MPI_Test released at the second quiescent slice", k-1, got)
	}
	if _, rel := n.DetStats(); rel != 1 {
		t.Fatalf("%d releases, want 1", rel)
	}
	// Both ranks now wait in MPI_Recv: a deadlock, reported after 3 slices.
	st = []uint8{recvCode, recvCode, proto.StatusFinalized}
	var dl *DeadlockError
	for i := 0; i < 3; i++ {
		_, err = detStep(t, n, k, nil, st)
		k++
	}
	if !errors.As(err, &dl) {
		t.Fatalf("want a deadlock once nothing is held and no one tests, got %v", err)
	}
}
