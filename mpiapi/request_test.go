package mpiapi

import (
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/bcsmpi/bcsmpi/internal/proto"
	"github.com/bcsmpi/bcsmpi/internal/shm"
)

// fakeRank makes this test process rank 0 of 2 over a region in ordinary
// memory, with no agent: posts go into the ring and stay there, and the test
// plays the agent by writing completion records (complete). The error
// handler returns errors.
func fakeRank(t *testing.T) *process {
	t.Helper()
	return fakeRankG(t, shm.Geometry{Ranks: 1, RingSlots: 256, ReqMax: 16, InlineMax: 64})
}

// fakeRankG is fakeRank with the node geometry g.
func fakeRankG(t *testing.T, g shm.Geometry) *process {
	t.Helper()
	mem := make([]byte, g.Size())
	region, err := shm.Init(mem, g)
	if err != nil {
		t.Fatal(err)
	}
	p := &process{rank: 0, size: 2, region: region, mem: mem, blk: region.Block(0), owner: make([]*Request, g.ReqMax),
		live: map[uint64]*Request{}, comms: map[proto.CommID]*Comm{}}
	for i := g.ReqMax - 1; i >= 0; i-- {
		p.free = append(p.free, uint32(i))
	}
	oldSelf, oldWorld, oldHandler, oldOps := self, world, errhandler, userOps
	self, world, errhandler, userOps = p, Comm{id: 0, rank: 0, size: 2}, ErrorsReturn, map[*Op]struct{}{}
	t.Cleanup(func() { self, world, errhandler, userOps = oldSelf, oldWorld, oldHandler, oldOps })
	return p
}

// complete plays the agent: r's receive matched a message of n bytes from
// rank 1 with tag.
func complete(p *process, r *Request, tag int32, n uint64) {
	p.blk.Complete(proto.Completion{Req: r.slot, Kind: r.kind, Source: 1, Tag: tag, Count: n})
}

func irecvT(t *testing.T, tag int) *Request {
	t.Helper()
	r, err := Irecv(World(), make([]byte, 8), 1, tag)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func isRequestErr(err error) bool { return errors.Is(err, &Error{Class: ErrRequest}) }

// TestStaleHandle: a request's completion slot is reused by the next request,
// but its handle is not: after Wait, the old handle is stale for Wait, Test
// and the array calls (MPI_ERR_REQUEST), keeps its own status, and does not
// see the new request.
func TestStaleHandle(t *testing.T) {
	p := fakeRank(t)
	old := irecvT(t, 5)
	complete(p, old, 5, 8)
	if st, err := Wait(old); err != nil || st.Tag != 5 || st.Bytes() != 8 {
		t.Fatalf("Wait = %+v, %v; want tag 5, 8 bytes", st, err)
	}
	fresh := irecvT(t, 6)
	if fresh.slot != old.slot {
		t.Fatalf("the new request took slot %d, not the old one's %d: the scenario needs the slot reused", fresh.slot, old.slot)
	}
	if _, _, err := Test(old); !isRequestErr(err) || !strings.Contains(err.Error(), "stale: MPI_Wait completed and released it") {
		t.Errorf("Test(stale) err = %v, want MPI_ERR_REQUEST naming MPI_Wait", err)
	}
	if _, err := Wait(old); !isRequestErr(err) {
		t.Errorf("Wait(stale) err = %v, want MPI_ERR_REQUEST", err)
	}
	for name, call := range map[string]func() error{
		"Waitall": func() error { return Waitall(old) },
		"Waitany": func() error { _, _, err := Waitany(fresh, old); return err },
		"Testany": func() error { _, _, _, err := Testany(old); return err },
		"Testall": func() error { _, err := Testall(old); return err },
		"Testsome": func() error {
			_, _, _, err := Testsome(old)
			return err
		},
		"Free": func() error { return old.Free() },
	} {
		if err := call(); !isRequestErr(err) {
			t.Errorf("%s(stale) err = %v, want MPI_ERR_REQUEST", name, err)
		}
	}
	if old.Status().Tag != 5 {
		t.Errorf("the stale handle's status changed: %+v", old.Status())
	}
	if done, _, err := Test(fresh); done || err != nil {
		t.Errorf("the new request: Test = %v, %v; want still pending", done, err)
	}
	if _, err := Wait(&Request{}); !isRequestErr(err) {
		t.Errorf("Wait(zero Request) err = %v, want MPI_ERR_REQUEST", err)
	}
}

// TestNullRequests: nil is MPI_REQUEST_NULL: Wait and Test return an empty
// status at once; the array calls skip nil entries, and with no active
// request return Undefined (MPI 4.1 §3.7.3, §3.7.5).
func TestNullRequests(t *testing.T) {
	fakeRank(t)
	empty := Status{Source: AnySource, Tag: AnyTag}
	if st, err := Wait(nil); err != nil || st != empty {
		t.Errorf("Wait(nil) = %+v, %v; want the empty status", st, err)
	}
	if done, st, err := Test(nil); !done || err != nil || st != empty {
		t.Errorf("Test(nil) = %v, %+v, %v", done, st, err)
	}
	for _, rs := range [][]*Request{nil, {nil, nil}} {
		if i, st, err := Waitany(rs...); i != Undefined || st != empty || err != nil {
			t.Errorf("Waitany(%d nil) = %d, %+v, %v; want Undefined and the empty status", len(rs), i, st, err)
		}
		if i, flag, st, err := Testany(rs...); i != Undefined || !flag || st != empty || err != nil {
			t.Errorf("Testany(%d nil) = %d, %v, %+v, %v; want Undefined, true, the empty status", len(rs), i, flag, st, err)
		}
		if n, idx, _, err := Waitsome(rs...); n != Undefined || idx != nil || err != nil {
			t.Errorf("Waitsome(%d nil) = %d, %v, %v; want outcount Undefined", len(rs), n, idx, err)
		}
		if n, _, _, err := Testsome(rs...); n != Undefined || err != nil {
			t.Errorf("Testsome(%d nil) = %d, %v; want outcount Undefined", len(rs), n, err)
		}
		if err := Waitall(rs...); err != nil {
			t.Errorf("Waitall(%d nil) = %v", len(rs), err)
		}
		if ok, err := Testall(rs...); !ok || err != nil {
			t.Errorf("Testall(%d nil) = %v, %v; want true", len(rs), ok, err)
		}
	}
	if Undefined != -32766 {
		t.Errorf("Undefined = %d, want -32766 (MPI_UNDEFINED in the MPI-5 ABI)", Undefined)
	}
}

// TestWaitanyTwice: Waitany sets the entry it returns to nil, so a second
// Waitany over the same slice returns the other request even after a new,
// unrelated request has taken the first one's slot; then Undefined.
func TestWaitanyTwice(t *testing.T) {
	p := fakeRank(t)
	a, b := irecvT(t, 1), irecvT(t, 2)
	rs := []*Request{a, b}
	complete(p, a, 1, 8)
	i, st, err := Waitany(rs...)
	if i != 0 || st.Tag != 1 || err != nil || rs[0] != nil || rs[1] != b {
		t.Fatalf("first Waitany = %d, %+v, %v, slice %v; want 0, tag 1, rs[0] = nil", i, st, err, rs)
	}
	unrelated := irecvT(t, 3) // takes a's slot
	complete(p, unrelated, 3, 8)
	complete(p, b, 2, 8)
	if i, st, err := Waitany(rs...); i != 1 || st.Tag != 2 || err != nil {
		t.Fatalf("second Waitany = %d, %+v, %v; want 1 (b, tag 2)", i, st, err)
	}
	if i, _, err := Waitany(rs...); i != Undefined || err != nil {
		t.Fatalf("third Waitany = %d, %v; want Undefined", i, err)
	}
	if st, err := Wait(unrelated); st.Tag != 3 || err != nil {
		t.Fatalf("the unrelated request: %+v, %v", st, err)
	}
}

// TestTestanyWaitsomeTestsome: the remaining families report completed
// requests in index order, retire them and nil their entries; Testall
// changes nothing until every request has completed.
func TestTestanyWaitsomeTestsome(t *testing.T) {
	p := fakeRank(t)
	rs := []*Request{irecvT(t, 0), nil, irecvT(t, 2), irecvT(t, 3)}
	if i, flag, _, err := Testany(rs...); i != Undefined || flag || err != nil {
		t.Fatalf("Testany with nothing complete = %d, %v, %v; want Undefined, false", i, flag, err)
	}
	if n, idx, _, err := Testsome(rs...); n != 0 || len(idx) != 0 || err != nil {
		t.Fatalf("Testsome with nothing complete = %d, %v, %v; want 0", n, idx, err)
	}
	complete(p, rs[3], 3, 8)
	complete(p, rs[2], 2, 8)
	three := rs[3]
	if ok, err := Testall(rs...); ok || err != nil || rs[3] != three {
		t.Fatalf("Testall with one pending = %v, %v; want false and the slice unchanged", ok, err)
	}
	if i, flag, st, err := Testany(rs...); i != 2 || !flag || st.Tag != 2 || err != nil || rs[2] != nil {
		t.Fatalf("Testany = %d, %v, %+v, %v; want index 2", i, flag, st, err)
	}
	complete(p, rs[0], 0, 8)
	n, idx, sts, err := Waitsome(rs...)
	if n != 2 || !slices.Equal(idx, []int{0, 3}) || sts[0].Tag != 0 || sts[1].Tag != 3 || err != nil {
		t.Fatalf("Waitsome = %d, %v, %+v, %v; want 2, [0 3]", n, idx, sts, err)
	}
	if !slices.Equal(rs, []*Request{nil, nil, nil, nil}) {
		t.Fatalf("slice after Waitsome: %v, want all nil", rs)
	}
	if _, _, err := Test(three); !isRequestErr(err) || !strings.Contains(err.Error(), "MPI_Waitsome completed") {
		t.Fatalf("Test of a request Waitsome returned: %v, want stale", err)
	}
	x, y := irecvT(t, 7), irecvT(t, 8)
	all := []*Request{x, y}
	complete(p, x, 7, 8)
	complete(p, y, 8, 8)
	if ok, err := Testall(all...); !ok || err != nil || all[0] != nil || all[1] != nil {
		t.Fatalf("Testall = %v, %v, %v; want true and nil entries", ok, err, all)
	}
	if len(p.live) != 0 || len(p.free) != 16 {
		t.Fatalf("%d live requests, %d free slots; want 0 and 16", len(p.live), len(p.free))
	}
}

// TestRequestFree: a freed request's handle is stale at once; its slot comes
// back when the runtime completes it; collectives cannot be freed.
func TestRequestFree(t *testing.T) {
	p := fakeRank(t)
	r := irecvT(t, 4)
	if err := r.Free(); err != nil {
		t.Fatal(err)
	}
	if _, err := Wait(r); !isRequestErr(err) {
		t.Fatalf("Wait after Free: %v, want MPI_ERR_REQUEST", err)
	}
	if len(p.freed) != 1 || len(p.free) != 15 {
		t.Fatalf("freed %d, free slots %d; want 1 and 15", len(p.freed), len(p.free))
	}
	if got := p.leaks(); len(got) != 1 || !strings.Contains(got[0], "MPI_Irecv from rank 1, tag 4, was freed with MPI_Request_free but had not completed") {
		t.Fatalf("leaks = %q", got)
	}
	complete(p, r, 4, 8)
	irecvT(t, 5) // reaps
	if len(p.freed) != 0 || len(p.free) != 15 {
		t.Fatalf("after completion: freed %d, free slots %d; want 0 and 15", len(p.freed), len(p.free))
	}
	coll := p.track(&Request{call: "MPI_Ibarrier", kind: proto.KindColl, active: true, chain: &chain{}})
	if err := coll.Free(); !isRequestErr(err) || !strings.Contains(err.Error(), "non-blocking collective") {
		t.Fatalf("Free of a collective request: %v", err)
	}
}

// TestLeaks: what the rank did not release, one sentence each.
func TestLeaks(t *testing.T) {
	p := fakeRank(t)
	NewOp("mymax", func(in, inout []float64) {}, true)
	freed := NewOp("gone", func(in, inout []int32) {}, true)
	if err := freed.Free(); err != nil {
		t.Fatal(err)
	}
	p.comms[3] = &Comm{id: 3, size: 2, made: "MPI_Comm_dup"}
	pending := irecvT(t, 9)
	done, err := Isend(World(), []byte{1}, 1, 2)
	if err != nil {
		t.Fatal(err)
	}
	p.blk.Complete(proto.Completion{Req: done.slot, Kind: proto.KindSend, Count: 1})
	want := []string{
		`user operation "mymax" (on float64 elements) was never freed`,
		"communicator 3 (2 ranks, made by MPI_Comm_dup) was never freed",
		"request #" + strconv.Itoa(int(pending.gen)) + ", MPI_Irecv from rank 1, tag 9, was still pending",
		"request #" + strconv.Itoa(int(done.gen)) + ", MPI_Isend to rank 1, tag 2, completed but was never waited for",
	}
	got := p.leaks()
	if len(got) != len(want) {
		t.Fatalf("leaks = %q, want %d lines", got, len(want))
	}
	for i := range want {
		if !strings.Contains(got[i], want[i]) {
			t.Errorf("leak %d = %q, want it to contain %q", i, got[i], want[i])
		}
	}
}
