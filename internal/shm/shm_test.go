package shm

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/bcsmpi/bcsmpi/internal/proto"
)

func newRegion(t *testing.T, g Geometry) *Region {
	t.Helper()
	if err := g.Validate(); err != nil {
		t.Fatal(err)
	}
	mem := make([]byte, g.Size())
	r, err := Init(mem, g)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Attach(mem); err != nil {
		t.Fatal(err)
	}
	return r
}

func TestGeometryValidate(t *testing.T) {
	bad := []Geometry{
		{Ranks: 0, RingSlots: 8, ReqMax: 16},
		{Ranks: 1, RingSlots: 12, ReqMax: 16},
		{Ranks: 1, RingSlots: 8, ReqMax: 1},
		{Ranks: 1, RingSlots: 8, ReqMax: 16, InlineMax: 100},
	}
	for _, g := range bad {
		if g.Validate() == nil {
			t.Errorf("%+v accepted", g)
		}
	}
}

func TestAttachRejectsGarbage(t *testing.T) {
	if _, err := Attach(make([]byte, HeaderSize)); err == nil {
		t.Fatal("zeroed region attached")
	}
}

// Rule 1 at the ring: descriptors posted in slice k are not drained in slice k,
// and the ring keeps post order across a concurrent producer.
func TestRingOrderAndSliceCut(t *testing.T) {
	g := Geometry{Ranks: 1, RingSlots: 8, ReqMax: 16, InlineMax: 64}
	r := newRegion(t, g)
	b := r.Block(0)
	const total = 1000
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // the rank: posts in "slice" seq/10, spinning when the ring is full
		defer wg.Done()
		for seq := uint64(1); seq <= total; seq++ {
			d := proto.Descriptor{Kind: proto.KindSend, Inline: true, Seq: seq, PostSlice: proto.SliceID(seq / 10), Len: 8}
			payload := []byte{byte(seq), 1, 2, 3, 4, 5, 6, 7}
			for !b.Post(d, payload) {
			}
		}
	}()
	next := uint64(1)
	for k := proto.SliceID(1); next <= total; k++ {
		_, err := b.Drain(k, func(d proto.Descriptor, inl []byte) error {
			if d.PostSlice >= k {
				t.Errorf("slice %d drained descriptor posted in slice %d", k, d.PostSlice)
			}
			if d.Seq != next || inl[0] != byte(d.Seq) {
				t.Errorf("got seq %d payload %d, want %d", d.Seq, inl[0], next)
			}
			next++
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if k > 1e7 {
			t.Fatal("ring never drained")
		}
	}
	wg.Wait()
}

func TestCompletionRoundTrip(t *testing.T) {
	r := newRegion(t, Geometry{Ranks: 2, RingSlots: 8, ReqMax: 16})
	b := r.Block(1)
	b.ClearCompletion(5)
	if b.Done(5) {
		t.Fatal("cleared record reads done")
	}
	c := proto.Completion{Req: 5, Kind: proto.KindRecv, Source: 3, Tag: 9, Count: 1 << 33, Err: proto.ErrTruncate}
	b.Complete(c)
	if !b.Done(5) || b.Completion(5) != c {
		t.Fatalf("got %+v", b.Completion(5))
	}
	// A type mismatch carries the other side's element type (version 8).
	c = proto.Completion{Req: 6, Kind: proto.KindSend, Source: 1, Tag: 2, Err: proto.ErrType, PeerType: 3}
	b.Complete(c)
	if b.Completion(6) != c {
		t.Fatalf("got %+v, want %+v", b.Completion(6), c)
	}
}

// A block is claimed once: a second process gets the holder's pid.
func TestClaimOnce(t *testing.T) {
	b := newRegion(t, Geometry{Ranks: 1, RingSlots: 8, ReqMax: 16}).Block(0)
	if h, ok := b.Claim(100); !ok || h != 100 || b.PID() != 100 {
		t.Fatalf("first claim: holder %d ok %v pid %d", h, ok, b.PID())
	}
	if h, ok := b.Claim(200); ok || h != 100 || b.PID() != 100 {
		t.Fatalf("second claim: holder %d ok %v pid %d, want refused with holder 100", h, ok, b.PID())
	}
}

// Drain reads from the agent's own tail: a head too far ahead is refused
// naming the field, and rewinding the shared tail re-reads nothing.
func TestDrainOwnTail(t *testing.T) {
	g := Geometry{Ranks: 1, RingSlots: 8, ReqMax: 16}
	r := newRegion(t, g)
	rank, agent := r.Block(0), r.Block(0)
	rank.Post(proto.Descriptor{Kind: proto.KindRecv, Seq: 1}, nil)
	count := func() (int, error) { return agent.Drain(1, func(proto.Descriptor, []byte) error { return nil }) }
	if n, err := count(); n != 1 || err != nil {
		t.Fatalf("drained %d, %v; want 1", n, err)
	}
	*r.u64(HeaderSize + 128) = 0 // the rank rewinds the tail
	if n, err := count(); n != 0 || err != nil {
		t.Fatalf("after a rewound tail drained %d, %v; want 0", n, err)
	}
	*r.u64(HeaderSize + 64) = 100 // and pushes the head far ahead
	_, err := count()
	var fe *FieldError
	if !errors.As(err, &fe) || fe.Field != "ring head" {
		t.Fatalf("got %v, want a ring head FieldError", err)
	}
}

// A completion for a slot past the table is a caller's bug: it panics with
// a sentence instead of writing into the next block.
func TestCompleteOutsideTablePanics(t *testing.T) {
	r := newRegion(t, Geometry{Ranks: 2, RingSlots: 8, ReqMax: 16})
	defer func() {
		if p := recover(); p == nil || !strings.Contains(fmt.Sprint(p), "request slot 16 of a table of 16") {
			t.Fatalf("recovered %v", p)
		}
	}()
	r.Block(0).Complete(proto.Completion{Req: 16})
}

// TestDeterministicFlagAndRelease: the header carries deterministic mode to
// the ranks; unknown flag bits are refused; the release word counts.
func TestDeterministicFlagAndRelease(t *testing.T) {
	g := Geometry{Ranks: 1, RingSlots: 8, ReqMax: 16, Deterministic: true}
	r := newRegion(t, g)
	a, err := Attach(r.Mem)
	if err != nil || !a.G.Deterministic {
		t.Fatalf("attach: %+v, %v; want deterministic", a, err)
	}
	b := a.Block(0)
	b.BumpRelease()
	if b.Release() != 1 || r.Block(0).Release() != 1 {
		t.Fatalf("release %d, want 1", b.Release())
	}
	r.Mem[36] |= 2
	if _, err := Attach(r.Mem); err == nil || !strings.Contains(err.Error(), "flags 0x3") {
		t.Fatalf("unknown flag accepted: %v", err)
	}
	g.Deterministic = false
	if a, err := Attach(newRegion(t, g).Mem); err != nil || a.G.Deterministic {
		t.Fatalf("attach: %+v, %v; want not deterministic", a, err)
	}
}
