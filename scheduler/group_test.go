package scheduler

import (
	"slices"
	"strings"
	"testing"

	"github.com/bcsmpi/bcsmpi/internal/proto"
)

func groupDesc(rank proto.Rank, seq uint64, group []proto.Rank, tag int32, collSeq uint32) proto.Descriptor {
	d := proto.Descriptor{Kind: proto.KindColl, Coll: proto.CollGroup, Rank: rank, Seq: seq, Req: 7, CollSeq: collSeq, RAddr: 0x200}
	d.SetGroup(tag, int32(slices.Index(group, rank)), len(group), proto.GroupHash(group))
	return d
}

// TestCreateGroupOfAStrictSubset: MPI_Comm_create_group completes once the
// group's members alone have posted, across slices, without the parent's
// other members; two groups with the same tag, and one group with two tags,
// make distinct communicators; the parent's own collectives are unaffected.
func TestCreateGroupOfAStrictSubset(t *testing.T) {
	s := New(DefaultConfig, []proto.NodeID{0, 0, 1, 1, 1})
	a := []proto.Rank{3, 1} // group order, not world order
	b := []proto.Rank{0, 4}
	p := s.Schedule(1, []proto.Descriptor{groupDesc(3, 1, a, 5, 1), groupDesc(0, 1, b, 5, 1)})
	if p.Err != nil || len(p.Completions) != 0 {
		t.Fatalf("half posted: err %v, completions %v", p.Err, p.Completions)
	}
	if ws := s.Waits(nil); len(ws) != 2 || !strings.Contains(DescribeWait(ws[0]), "MPI_Comm_create_group(group of 2, rank 0 in it, tag 5)") {
		t.Fatalf("waits %v", ws)
	}
	mark := make([]bool, 5)
	s.Incomplete(mark, nil)
	if !slices.Equal(mark, []bool{true, false, false, true, false}) {
		t.Fatalf("incomplete %v", mark)
	}
	p = s.Schedule(2, []proto.Descriptor{groupDesc(1, 1, a, 5, 1), groupDesc(4, 1, b, 5, 1)})
	if p.Err != nil || len(p.Completions) != 4 {
		t.Fatalf("err %v, completions %v", p.Err, p.Completions)
	}
	got := map[proto.Rank]proto.Completion{}
	for _, c := range p.Completions {
		got[c.Rank] = c
	}
	if got[1].NewComm() != got[3].NewComm() || got[0].NewComm() != got[4].NewComm() || got[1].NewComm() == got[0].NewComm() {
		t.Fatalf("ids: %v", got)
	}
	if got[3].NewCommRank() != 0 || got[1].NewCommRank() != 1 || got[1].NewCommSize() != 2 {
		t.Fatalf("rank 1: %+v, rank 3: %+v", got[1], got[3])
	}
	if m := s.CommMembers(got[1].NewComm()); !slices.Equal(m, a) {
		t.Fatalf("members %v, want %v", m, a)
	}
	if len(p.Writes) != 4 {
		t.Fatalf("writes %v", p.Writes)
	}
	// A barrier on the new communicator, and one on the world (CollSeq 1:
	// the group creation did not count as a world collective).
	id := got[1].NewComm()
	p = s.Schedule(3, []proto.Descriptor{
		{Kind: proto.KindColl, Coll: proto.CollBarrier, Comm: id, Rank: 1, Seq: 2, CollSeq: 1, Req: 1},
		{Kind: proto.KindColl, Coll: proto.CollBarrier, Comm: id, Rank: 3, Seq: 2, CollSeq: 1, Req: 1},
	})
	if p.Err != nil || p.Collectives != 1 {
		t.Fatalf("barrier on the new communicator: err %v, collectives %d", p.Err, p.Collectives)
	}
	var ds []proto.Descriptor
	for r := range 5 {
		ds = append(ds, proto.Descriptor{Kind: proto.KindColl, Coll: proto.CollBarrier, Rank: proto.Rank(r), Seq: 3, CollSeq: 1, Req: 2})
	}
	if p = s.Schedule(4, ds); p.Err != nil || p.Collectives != 1 {
		t.Fatalf("world barrier: err %v, collectives %d", p.Err, p.Collectives)
	}
}

// TestCreateGroupMismatch: members that name different groups under one
// hash, or claim the same place, are reported, naming the ranks.
func TestCreateGroupMismatch(t *testing.T) {
	s := New(DefaultConfig, []proto.NodeID{0, 0, 0})
	d0 := groupDesc(0, 1, []proto.Rank{0, 1}, 0, 1)
	d2 := groupDesc(2, 1, []proto.Rank{2, 0}, 0, 1) // rank 2 claims place 0 too
	d2.Addr = d0.Addr
	p := s.Schedule(1, []proto.Descriptor{d0, d2})
	if p.Err == nil || !strings.Contains(p.Err.Error(), "ranks 0 and 2 both called MPI_Comm_create_group") {
		t.Fatalf("err = %v", p.Err)
	}
	s = New(DefaultConfig, []proto.NodeID{0, 0, 0})
	d1 := groupDesc(2, 1, []proto.Rank{0, 2}, 0, 1) // the hash names {0, 1}: rank 2 is not in it
	d1.Addr = d0.Addr
	p = s.Schedule(1, []proto.Descriptor{d0, d1})
	if p.Err == nil || !strings.Contains(p.Err.Error(), "named different groups") {
		t.Fatalf("err = %v", p.Err)
	}
	if err := CheckDescriptor(proto.Descriptor{Kind: proto.KindColl, Coll: proto.CollGroup, CollSeq: 1, Peer: 2, Len: 2}, 3); err == nil {
		t.Fatal("rank 2 of a group of 2 accepted")
	}
}
