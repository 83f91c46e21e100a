package scheduler

import (
	"strings"
	"testing"

	"github.com/bcsmpi/bcsmpi/internal/proto"
)

// TestCommsMaxRefusesTogetherAndFreeMakesRoom: a Split that would take one
// member past proto.CommsMax is refused for every caller, in the same
// slice, naming that member and its count; no communicator is made. A
// communicator whose every member has posted its free leaves the table at
// once (a Split posted after the frees, in the same slice, gets its slot),
// and its id is not handed out again.
func TestCommsMaxRefusesTogetherAndFreeMakesRoom(t *testing.T) {
	const extra = 10
	s := New(DefaultConfig, []proto.NodeID{0, 0, 1})
	seq := make([]uint64, 3) // per rank: descriptor sequence
	cseq := map[proto.CommID][]uint32{0: make([]uint32, 3)}
	slice := proto.SliceID(0)
	desc := func(r int, comm proto.CommID, coll proto.Coll) proto.Descriptor {
		seq[r]++
		cseq[comm][r]++
		return proto.Descriptor{Kind: proto.KindColl, Coll: coll, Comm: comm, Rank: proto.Rank(r), Seq: seq[r], CollSeq: cseq[comm][r], Req: uint32(seq[r]), RAddr: 0x100}
	}
	split := func(colors [3]int32) map[proto.Rank]proto.Completion {
		var ds []proto.Descriptor
		for r := range 3 {
			d := desc(r, 0, proto.CollSplit)
			d.SetSplit(colors[r], int32(r))
			ds = append(ds, d)
		}
		slice++
		p := s.Schedule(slice, ds)
		if p.Err != nil {
			t.Fatalf("slice %d: %v", slice, p.Err)
		}
		got := map[proto.Rank]proto.Completion{}
		for _, c := range p.Completions {
			got[c.Rank] = c
		}
		return got
	}
	u := UndefinedColor
	for range extra { // rank 0 alone joins these
		if c := split([3]int32{0, u, u})[0]; c.Err != proto.ErrNone {
			t.Fatalf("rank 0's own communicator: %+v", c)
		}
	}
	if n := s.LiveComms(0); n != 1+extra {
		t.Fatalf("rank 0 belongs to %d communicators, want %d", n, 1+extra)
	}
	var last proto.CommID
	made := 0
	for {
		got := split([3]int32{0, 0, 0})
		if got[0].Err == proto.ErrTooManyComms {
			for r := range proto.Rank(3) {
				c := got[r]
				if c.Err != proto.ErrTooManyComms || c.Source != 0 || c.Count != proto.CommsMax {
					t.Fatalf("rank %d: %+v, want refused naming rank 0 at %d", r, c, proto.CommsMax)
				}
			}
			break
		}
		for r := range proto.Rank(3) {
			if got[r].Err != proto.ErrNone {
				t.Fatalf("after %d: rank %d refused alone: %+v", made, r, got[r])
			}
		}
		last = got[0].NewComm()
		cseq[last] = make([]uint32, 3)
		made++
		if made > proto.CommsMax {
			t.Fatalf("%d communicators made, never refused", made)
		}
	}
	if made != proto.CommsMax-1-extra || s.LiveComms(0) != proto.CommsMax || s.LiveComms(1) != proto.CommsMax-extra {
		t.Fatalf("made %d, live %d %d, want %d made", made, s.LiveComms(0), s.LiveComms(1), proto.CommsMax-1-extra)
	}
	// Free the last one, then split again, every rank in the same slice.
	var ds []proto.Descriptor
	for r := range 3 {
		ds = append(ds, desc(r, last, proto.CollFree))
		d := desc(r, 0, proto.CollSplit)
		d.SetSplit(0, int32(r))
		ds = append(ds, d)
	}
	slice++
	p := s.Schedule(slice, ds)
	if p.Err != nil {
		t.Fatal(p.Err)
	}
	var fresh proto.CommID
	for _, c := range p.Completions {
		if c.Err != proto.ErrNone {
			t.Fatalf("after a free: %+v", c)
		}
		if c.NewCommSize() == 3 {
			fresh = c.NewComm()
		}
	}
	if fresh <= last || s.CommMembers(last) != nil || s.LiveComms(0) != proto.CommsMax {
		t.Fatalf("new id %d (freed %d), freed members %v, live %d", fresh, last, s.CommMembers(last), s.LiveComms(0))
	}
	slice++
	p = s.Schedule(slice, []proto.Descriptor{{Kind: proto.KindSend, Comm: last, Rank: 0, Peer: 1, Seq: seq[0] + 1, Len: 4}})
	if p.Err == nil || !strings.Contains(p.Err.Error(), "does not exist") {
		t.Fatalf("a send on the freed communicator: %v", p.Err)
	}
}
