package shm

import (
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
}
