package launch

import (
	"testing"

	"github.com/bcsmpi/bcsmpi/internal/core"
	"github.com/bcsmpi/bcsmpi/internal/proto"
)

// --record DIR[,slices|,calls]: only a known level after the last comma is
// one; a directory may hold commas.
func TestRecordSpec(t *testing.T) {
	for _, c := range []struct {
		spec   string
		dflt   bool
		dir    string
		slices bool
	}{
		{"rec", false, "rec", false},
		{"rec", true, "rec", true},
		{"rec,slices", false, "rec", true},
		{"rec,calls", true, "rec", false},
		{"a,b/rec,slices", false, "a,b/rec", true},
		{"a,b", false, "a,b", false},
		{"rec,slice", false, "rec,slice", false},
	} {
		if dir, slices := recordSpec(c.spec, c.dflt); dir != c.dir || slices != c.slices {
			t.Errorf("recordSpec(%q, %v) = %q, %v; want %q, %v", c.spec, c.dflt, dir, slices, c.dir, c.slices)
		}
	}
}

// BenchmarkOnExchange: the slice log's cost per slice on node 0's agent
// thread: a slice of 8 ranks each exchanging 4 descriptors, and a plan of 16
// matches and chunks (a busy slice of a small job); and an idle slice.
func BenchmarkOnExchange(b *testing.B) {
	r := &recording{count: make([]uint64, 8), hash: make([]uint64, 8)}
	var all []proto.Descriptor
	p := &core.Plan{}
	for i := 0; i < 32; i++ {
		d := proto.Descriptor{Kind: proto.KindSend, Rank: proto.Rank(i % 8), Peer: proto.Rank((i + 1) % 8), Tag: 5, Seq: uint64(i), Len: 4096}
		all = append(all, d)
		if i%2 == 0 {
			p.Matches = append(p.Matches, core.Match{Xfer: uint64(i), Send: d, Recv: d})
			p.Chunks = append(p.Chunks, proto.Chunk{Xfer: uint64(i), Src: d.Rank, Dst: d.Peer, Len: 4096, Last: true})
		}
	}
	b.Run("busy", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			r.onExchange(proto.SliceID(i+1), all, p)
			if len(r.spend) > 1<<20 {
				r.spend = r.spend[:0]
			}
		}
	})
	empty := &core.Plan{}
	b.Run("idle", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			r.onExchange(proto.SliceID(i+1), nil, empty)
		}
	})
}
