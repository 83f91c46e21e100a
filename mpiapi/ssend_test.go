package mpiapi

import (
	"testing"

	"github.com/bcsmpi/bcsmpi/internal/proto"
)

// posted drains what the rank posted so far (the test plays the agent).
func posted(t *testing.T, p *process) []proto.Descriptor {
	t.Helper()
	var ds []proto.Descriptor
	if _, err := p.blk.Drain(p.region.Slice()+1, func(d proto.Descriptor, _ []byte) error {
		ds = append(ds, d)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return ds
}

// TestIssendIsNeverInline: a standard send small enough to be buffered goes
// inline (it completes when exchanged); a synchronous one of the same size
// does not, so it completes only once matched.
func TestIssendIsNeverInline(t *testing.T) {
	p := fakeRank(t)
	buf := make([]byte, 8)
	if _, err := Isend(World(), buf, 1, 3); err != nil {
		t.Fatal(err)
	}
	r, err := Issend(World(), buf, 1, 4)
	if err != nil {
		t.Fatal(err)
	}
	ds := posted(t, p)
	if len(ds) != 2 || ds[0].Kind != proto.KindSend || ds[1].Kind != proto.KindSend {
		t.Fatalf("posted %v, want two sends", ds)
	}
	if !ds[0].Inline {
		t.Fatalf("the standard send of 8 bytes is not inline (inline_max 64): the scenario needs it buffered")
	}
	if ds[1].Inline || ds[1].Tag != 4 || ds[1].Req != r.slot {
		t.Fatalf("the synchronous send posted %s (inline %v), want a non-inline send with tag 4 in slot %d", ds[1].Describe(), ds[1].Inline, r.slot)
	}
	if r.call != "MPI_Issend" {
		t.Fatalf("the request's call is %q, want MPI_Issend", r.call)
	}
}

// TestCancel: Cancel posts a KindCancel naming the request's slot (and, for
// a send, its destination); a completion with ErrCancelled completes the
// request without an error and Status.Cancelled says so; a request that
// completed first is not cancelled and nothing is posted.
func TestCancel(t *testing.T) {
	p := fakeRank(t)
	r := irecvT(t, 5)
	s, err := Isend(World(), make([]byte, 100), 1, 6) // over inline_max: unbuffered
	if err != nil {
		t.Fatal(err)
	}
	posted(t, p)
	if err := r.Cancel(); err != nil {
		t.Fatal(err)
	}
	if err := r.Cancel(); err != nil { // a second cancel posts nothing more
		t.Fatal(err)
	}
	if err := s.Cancel(); err != nil {
		t.Fatal(err)
	}
	ds := posted(t, p)
	if len(ds) != 2 {
		t.Fatalf("posted %d descriptors, want 2 cancels", len(ds))
	}
	if d := ds[0]; d.Kind != proto.KindCancel || d.Req != r.slot || d.Withdraws() != proto.CancelRecv {
		t.Fatalf("posted %s, want a cancel of the receive in slot %d", d.Describe(), r.slot)
	}
	if d := ds[1]; d.Kind != proto.KindCancel || d.Req != s.slot || d.Withdraws() != proto.CancelSend || d.Peer != 1 {
		t.Fatalf("posted %s, want a cancel of the send in slot %d to rank 1", d.Describe(), s.slot)
	}
	p.blk.Complete(proto.Completion{Req: r.slot, Kind: proto.KindRecv, Source: proto.AnySource, Tag: proto.AnyTag, Err: proto.ErrCancelled})
	st, err := Wait(r)
	if err != nil || !st.Cancelled() {
		t.Fatalf("Wait(cancelled) = %+v, %v; want cancelled and no error", st, err)
	}
	// The send was matched first: it completes normally, not cancelled.
	p.blk.Complete(proto.Completion{Req: s.slot, Kind: proto.KindSend, Source: 1, Tag: 6, Count: 100})
	if st, err := Wait(s); err != nil || st.Cancelled() {
		t.Fatalf("Wait(matched send) = %+v, %v; want not cancelled", st, err)
	}
	// A completed request: Cancel finds it done and posts nothing.
	q := irecvT(t, 7)
	posted(t, p)
	complete(p, q, 7, 8)
	if err := q.Cancel(); err != nil {
		t.Fatal(err)
	}
	if ds := posted(t, p); len(ds) != 0 {
		t.Fatalf("cancelling a completed request posted %v", ds)
	}
	if st, err := Wait(q); err != nil || st.Cancelled() || st.Bytes() != 8 {
		t.Fatalf("Wait = %+v, %v; want 8 bytes, not cancelled", st, err)
	}
	if err := q.Cancel(); !isRequestErr(err) {
		t.Fatalf("Cancel(stale) = %v, want MPI_ERR_REQUEST", err)
	}
}
