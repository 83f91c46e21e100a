package scheduler

import (
	"testing"

	"github.com/bcsmpi/bcsmpi/internal/proto"
)

// dup is rank r's blocking MPI_Comm_dup of comm asking for a grant
// (mpiapi), carrying lives.
func (g *commRig) dup(r int, comm proto.CommID, lives uint32) proto.Descriptor {
	d := g.coll(r, comm, proto.CollSplit)
	d.SetSplit(0, int32(r))
	d.SetLives(lives)
	d.SetDupGrant()
	return d
}

// TestDupGrant: a duplicate every member asked a grant for reserves the
// ids after its own for its parent's next duplicates (4, then doubling, up
// to dupGrantMax), the same on every member; ids handed out later come
// after the reserved ones; a local duplicate's id, first named by a
// descriptor, is a communicator of the parent's members (messages match on
// it, apart from the parent's).
func TestDupGrant(t *testing.T) {
	g := newCommRig(t, DefaultConfig, 3)
	next := proto.CommID(1)
	for i, want := range []uint32{4, 8, 16, 32, 64, 128, 256, 512, 1024, 1024} {
		got := g.run(g.dup(0, 0, 2), g.dup(1, 0, 2), g.dup(2, 0, 2))
		for r := range proto.Rank(3) {
			c := got[r]
			if len(c) != 1 || c[0].Err != proto.ErrNone || c[0].NewComm() != next || c[0].NewCommDups() != want {
				t.Fatalf("dup %d, rank %d: %+v (id %d, grant %d), want id %d with a grant of %d", i, r, c, c[0].NewComm(), c[0].NewCommDups(), next, want)
			}
		}
		next += 1 + proto.CommID(want)
	}
	// A Split after the grants takes the next id past them.
	got := g.run(g.split(0, 0, 3), g.split(1, 0, 3), g.split(2, 1, 3))
	if c := got[2]; len(c) != 1 || c[0].NewComm() != next+1 || c[0].NewCommDups() != 0 {
		t.Fatalf("split: rank 2 %+v, want id %d with no grant", c, next+1)
	}
	if c := got[0]; c[0].NewComm() != next || c[0].NewCommDups() != 0 {
		t.Fatalf("split: rank 0 %+v, want id %d with no grant", c, next)
	}
	// Id 2 is the world's first local duplicate: a send on it meets a
	// receive on it, not one on the world posted before.
	local := proto.CommID(2)
	send := g.next(0, proto.Descriptor{Kind: proto.KindSend, Comm: local, Peer: 1, Tag: 5, Len: 8, Addr: 0x10})
	onWorld := g.next(1, proto.Descriptor{Kind: proto.KindRecv, Comm: 0, Peer: 0, Tag: 5, Len: 8, Addr: 0x20})
	recv := g.next(1, proto.Descriptor{Kind: proto.KindRecv, Comm: local, Peer: 0, Tag: 5, Len: 8, Addr: 0x30})
	done := map[uint32]bool{}
	for _, got := range []map[proto.Rank][]proto.Completion{g.run(send, onWorld, recv), g.run(), g.run()} {
		for _, c := range got[1] {
			done[c.Req] = true
		}
	}
	if !done[recv.Req] || done[onWorld.Req] {
		t.Fatalf("completed on rank 1: %v; want the receive on the local duplicate (req %d), not the world's (req %d)", done, recv.Req, onWorld.Req)
	}
	if m := g.s.CommMembers(local); len(m) != 3 {
		t.Fatalf("local duplicate %d: members %v, want the world's", local, m)
	}
	// An id between grants that no grant holds is refused.
	if g.s.comm(next+5) != nil {
		t.Fatalf("id %d (never handed out) resolved to a communicator", next+5)
	}
}

// TestDupGrantBounded: the grant never takes the member with the most
// live communicators past proto.CommsMax; no grant when a member did not
// ask (MPI_Comm_idup) or when the Split is no duplicate.
func TestDupGrantBounded(t *testing.T) {
	g := newCommRig(t, DefaultConfig, 2)
	got := g.run(g.dup(0, 0, 3), g.dup(1, 0, proto.CommsMax-2))
	if c := got[0]; c[0].NewCommDups() != 2 {
		t.Fatalf("near the bound: grant %d, want 2", c[0].NewCommDups())
	}
	got = g.run(g.dup(0, 0, 4), g.dup(1, 0, proto.CommsMax))
	if c := got[1]; c[0].Err != proto.ErrNone || c[0].NewCommDups() != 0 {
		t.Fatalf("at the bound: %+v, want made with no grant", c)
	}
	idup := g.coll(1, 0, proto.CollSplit)
	idup.SetSplit(0, 1)
	idup.SetLives(5)
	got = g.run(g.dup(0, 0, 5), idup)
	if c := got[0]; c[0].Err != proto.ErrNone || c[0].NewCommDups() != 0 {
		t.Fatalf("one member did not ask: %+v, want made with no grant", c)
	}
	a, b := g.dup(0, 0, 6), g.dup(1, 0, 6)
	b.SetSplit(0, -1) // rank 1 first: not the parent's order
	got = g.run(a, b)
	if c := got[0]; c[0].Err != proto.ErrNone || c[0].NewCommRank() != 1 || c[0].NewCommDups() != 0 {
		t.Fatalf("reordered: %+v, want made with no grant", c)
	}
}
