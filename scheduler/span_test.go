package scheduler

import (
	"fmt"
	"strings"
	"testing"

	"github.com/bcsmpi/bcsmpi/internal/proto"
	"github.com/bcsmpi/bcsmpi/internal/reduce"
)

// TestSpans follows transfers slice by slice under a 2000-byte budget with
// spans of 3000 bytes per slice, at most 3 slices: what each slice's plan
// holds (chunks with their span, completions, the transfers in flight).
func TestSpans(t *testing.T) {
	cfg := Config{BytesPerSliceMax: 2000, ChunksPerSliceMax: 100, PullBytesPerSlice: 3000, SpanSlicesMax: 3}
	blocked := func(ranks ...proto.Rank) []uint8 {
		st := make([]uint8, 4)
		for _, r := range ranks {
			st[r] = 5 // MPI_Wait
		}
		return st
	}
	woken := func(r proto.Rank) []uint8 { st := make([]uint8, 4); st[r] = proto.StatusWoken | 5; return st }
	noPull := func(st []uint8, r proto.Rank) []uint8 { st[r] |= proto.StatusNoPull; return st }
	type step struct {
		descs  []proto.Descriptor
		status []uint8
	}
	// warm: an 8000-byte span of SpanSlicesMax slices from r0 to r1 (x1,
	// request 9) in slices 1 to 3, judged on time in slice 4: node 0's
	// spans may be doubled.
	warm := func() []step {
		return []step{{[]proto.Descriptor{send(0, 1, 0, 9, 8000), recv(1, 0, 0, 9, 8000)}, blocked(1)}, {nil, blocked(1)}, {nil, blocked(1)}}
	}
	cases := []struct {
		name   string
		cfg    Config
		nodeOf []proto.NodeID
		steps  []step
		want   []string              // per slice, from slice 1
		at     map[int]proto.SliceID // step index → its slice number (otherwise the one after the last step's)
	}{
		{
			name:  "a blocked receiver gets the rest as one span; the transfer completes in its last slice",
			steps: []step{{[]proto.Descriptor{send(0, 1, 0, 1, 8000), recv(1, 0, 0, 1, 8000)}, blocked(1)}, {nil, blocked(1)}, {nil, blocked(1)}},
			want: []string{
				"chunk x1 r0->r1 off=0 len=8000 span=3 | spanning 1",
				"| spanning 1",
				"done r0 req=1 send count=8000\ndone r1 req=1 recv src=0 tag=0 count=8000 | spanning 1",
			},
		},
		{
			name:  "a woken receiver is still in its call: a span",
			steps: []step{{[]proto.Descriptor{send(0, 1, 0, 1, 5000), recv(1, 0, 0, 1, 5000)}, woken(1)}, {nil, nil}},
			want:  []string{"chunk x1 r0->r1 off=0 len=5000 span=2 | spanning 1", "done r0 req=1 send count=5000\ndone r1 req=1 recv src=0 tag=0 count=5000 | spanning 1"},
		},
		{
			name: "a running receiver gets chunks; a span once it blocks, the first lasting at least two slices",
			steps: []step{
				{[]proto.Descriptor{send(0, 1, 0, 1, 7000), recv(1, 0, 0, 1, 7000)}, blocked()},
				{nil, blocked(1)}, {nil, blocked(1)},
			},
			want: []string{
				"chunk x1 r0->r1 off=0 len=2000 | spanning 0",
				"chunk x1 r0->r1 off=2000 len=5000 span=2 | spanning 1",
				"done r0 req=1 send count=7000\ndone r1 req=1 recv src=0 tag=0 count=7000 | spanning 1",
			},
		},
		{
			name: "no more than chunks would move in as many slices: chunks",
			steps: []step{
				{[]proto.Descriptor{send(0, 1, 0, 1, 4000), recv(1, 0, 0, 1, 4000)}, blocked(1)},
				{nil, blocked(1)},
			},
			want: []string{
				"chunk x1 r0->r1 off=0 len=2000 | spanning 0",
				"chunk x1 r0->r1 off=2000 len=2000\ndone r0 req=1 send count=4000\ndone r1 req=1 recv src=0 tag=0 count=4000 | spanning 0",
			},
		},
		{
			name:  "no larger than the budget: a chunk, no span",
			steps: []step{{[]proto.Descriptor{send(0, 1, 0, 1, 2000), recv(1, 0, 0, 1, 2000)}, blocked(1)}},
			want:  []string{"chunk x1 r0->r1 off=0 len=2000\ndone r0 req=1 send count=2000\ndone r1 req=1 recv src=0 tag=0 count=2000 | spanning 0"},
		},
		{
			name:   "longer than SpanSlicesMax slices' worth, another transfer on the node: a span, then the rest",
			nodeOf: []proto.NodeID{0, 0, 0, 1},
			steps: []step{
				{[]proto.Descriptor{send(0, 1, 0, 1, 10000), recv(1, 0, 0, 1, 10000), send(2, 3, 0, 1, 100), recv(3, 2, 0, 1, 100)}, blocked(1)},
				{nil, blocked(1)}, {nil, blocked(1)}, {nil, blocked(1)},
			},
			want: []string{
				"chunk x1 r0->r1 off=0 len=9000 span=3 | spanning 1",
				"| spanning 1",
				"| spanning 1",
				"chunk x1 r0->r1 off=9000 len=1000\nchunk x2 r2->r3 off=0 len=100 n0->n1\ndone r0 req=1 send count=10000\ndone r1 req=1 recv src=0 tag=0 count=10000\ndone r2 req=1 send count=100\ndone r3 req=1 recv src=2 tag=0 count=100 | spanning 0",
			},
		},
		{
			// The first span of a node is not doubled: no span there has yet
			// shown that the receiver's copy keeps up with the plan's rate.
			name: "alone on its node, but no span there has kept up yet: SpanSlicesMax slices at most",
			steps: []step{
				{[]proto.Descriptor{send(0, 1, 0, 1, 10000), recv(1, 0, 0, 1, 10000)}, blocked(1)},
				{nil, blocked(1)}, {nil, blocked(1)}, {nil, blocked(1)},
			},
			want: []string{
				"chunk x1 r0->r1 off=0 len=9000 span=3 | spanning 1",
				"| spanning 1",
				"| spanning 1",
				"chunk x1 r0->r1 off=9000 len=1000\ndone r0 req=1 send count=10000\ndone r1 req=1 recv src=0 tag=0 count=10000 | spanning 0",
			},
		},
		{
			// warm: x1's span ended in slice 3, slice 4 began on time.
			name: "alone on its node, its last span kept up: the whole message in one span, up to twice SpanSlicesMax slices",
			steps: append(warm(), []step{
				{[]proto.Descriptor{send(0, 1, 0, 1, 10000), recv(1, 0, 0, 1, 10000)}, blocked(1)},
				{nil, blocked(1)}, {nil, blocked(1)}, {nil, blocked(1)},
			}...),
			want: []string{
				"chunk x1 r0->r1 off=0 len=8000 span=3 | spanning 1",
				"| spanning 1",
				"done r0 req=9 send count=8000\ndone r1 req=9 recv src=0 tag=0 count=8000 | spanning 1",
				"chunk x2 r0->r1 off=0 len=10000 span=4 | spanning 1",
				"| spanning 1",
				"| spanning 1",
				"done r0 req=1 send count=10000\ndone r1 req=1 recv src=0 tag=0 count=10000 | spanning 1",
			},
		},
		{
			// The reviewer's case: x2's span ends in slice 7 and x3's begins
			// there; x2, done in that slice, does not count against x3 being
			// alone on the node, so x3 too moves in one span of 4 slices, not
			// a span of 3 and a 1000-byte chunk in slice 10.
			name: "two messages between the same ranks, back to back: each in one span, up to twice SpanSlicesMax slices",
			steps: append(warm(), []step{
				{[]proto.Descriptor{send(0, 1, 0, 1, 10000), send(0, 1, 0, 2, 10000), recv(1, 0, 0, 1, 10000), recv(1, 0, 0, 2, 10000)}, blocked(1)},
				{nil, blocked(1)}, {nil, blocked(1)}, {nil, blocked(1)}, {nil, blocked(1)}, {nil, blocked(1)}, {nil, blocked(1)},
			}...),
			want: []string{
				"chunk x1 r0->r1 off=0 len=8000 span=3 | spanning 1",
				"| spanning 1",
				"done r0 req=9 send count=8000\ndone r1 req=9 recv src=0 tag=0 count=8000 | spanning 1",
				"chunk x2 r0->r1 off=0 len=10000 span=4 | spanning 1",
				"| spanning 1",
				"| spanning 1",
				"chunk x3 r0->r1 off=0 len=10000 span=4\ndone r0 req=1 send count=10000\ndone r1 req=1 recv src=0 tag=0 count=10000 | spanning 2",
				"| spanning 1",
				"| spanning 1",
				"done r0 req=2 send count=10000\ndone r1 req=2 recv src=0 tag=0 count=10000 | spanning 1",
			},
		},
		{
			// x2's span (x3 of another pair waits beside it: no doubling)
			// ends in slice 6 without a chunk; x3's span begins there, and
			// x2, done in that slice, does not count: x3 is alone on the node.
			name: "a transfer of another rank pair that completes in the slice does not count: the next one is alone on the node",
			steps: append(warm(), []step{
				{[]proto.Descriptor{send(0, 1, 0, 1, 8000), recv(1, 0, 0, 1, 8000), send(2, 3, 0, 1, 10000), recv(3, 2, 0, 1, 10000)}, blocked(1, 3)},
				{nil, blocked(1, 3)}, {nil, blocked(1, 3)}, {nil, blocked(1, 3)}, {nil, blocked(1, 3)}, {nil, blocked(1, 3)},
			}...),
			want: []string{
				"chunk x1 r0->r1 off=0 len=8000 span=3 | spanning 1",
				"| spanning 1",
				"done r0 req=9 send count=8000\ndone r1 req=9 recv src=0 tag=0 count=8000 | spanning 1",
				"chunk x2 r0->r1 off=0 len=8000 span=3 | spanning 1",
				"| spanning 1",
				"chunk x3 r2->r3 off=0 len=10000 span=4\ndone r0 req=1 send count=8000\ndone r1 req=1 recv src=0 tag=0 count=8000 | spanning 2",
				"| spanning 1",
				"| spanning 1",
				"done r2 req=1 send count=10000\ndone r3 req=1 recv src=2 tag=0 count=10000 | spanning 1",
			},
		},
		{
			name: "alone on its node, longer than twice SpanSlicesMax slices' worth: a span of 6, then the rest",
			steps: append(warm(), []step{
				{[]proto.Descriptor{send(0, 1, 0, 1, 20000), recv(1, 0, 0, 1, 20000)}, blocked(1)},
				{nil, blocked(1)}, {nil, blocked(1)}, {nil, blocked(1)}, {nil, blocked(1)}, {nil, blocked(1)}, {nil, blocked(1)},
			}...),
			want: []string{
				"chunk x1 r0->r1 off=0 len=8000 span=3 | spanning 1",
				"| spanning 1",
				"done r0 req=9 send count=8000\ndone r1 req=9 recv src=0 tag=0 count=8000 | spanning 1",
				"chunk x2 r0->r1 off=0 len=18000 span=6 | spanning 1",
				"| spanning 1", "| spanning 1", "| spanning 1", "| spanning 1", "| spanning 1",
				"chunk x2 r0->r1 off=18000 len=2000\ndone r0 req=1 send count=20000\ndone r1 req=1 recv src=0 tag=0 count=20000 | spanning 0",
			},
		},
		{
			// x2's doubled span (slices 4..7) overran: slice 8 is skipped, so
			// x3's span, matched in slice 9, is not doubled. x3's span
			// (slices 9..11) ends on time: x4, matched in slice 13, is.
			name: "a slice skipped after a node's span: no doubling there until a span keeps up",
			at:   map[int]proto.SliceID{7: 9},
			steps: append(warm(), []step{
				{[]proto.Descriptor{send(0, 1, 0, 1, 10000), recv(1, 0, 0, 1, 10000)}, blocked(1)},
				{nil, blocked(1)}, {nil, blocked(1)}, {nil, blocked(1)},
				{[]proto.Descriptor{send(0, 1, 0, 2, 10000), recv(1, 0, 0, 2, 10000)}, blocked(1)},
				{nil, blocked(1)}, {nil, blocked(1)}, {nil, blocked(1)},
				{[]proto.Descriptor{send(0, 1, 0, 3, 10000), recv(1, 0, 0, 3, 10000)}, blocked(1)},
			}...),
			want: []string{
				"chunk x1 r0->r1 off=0 len=8000 span=3 | spanning 1",
				"| spanning 1",
				"done r0 req=9 send count=8000\ndone r1 req=9 recv src=0 tag=0 count=8000 | spanning 1",
				"chunk x2 r0->r1 off=0 len=10000 span=4 | spanning 1",
				"| spanning 1",
				"| spanning 1",
				"done r0 req=1 send count=10000\ndone r1 req=1 recv src=0 tag=0 count=10000 | spanning 1",
				"chunk x3 r0->r1 off=0 len=9000 span=3 | spanning 1",
				"| spanning 1",
				"| spanning 1",
				"chunk x3 r0->r1 off=9000 len=1000\ndone r0 req=2 send count=10000\ndone r1 req=2 recv src=0 tag=0 count=10000 | spanning 0",
				"chunk x4 r0->r1 off=0 len=10000 span=4 | spanning 1",
			},
		},
		{
			// x1's span of 2 slices ends on time in slice 2; x2, matched in
			// slice 3, is alone, but its span is not doubled.
			name: "a span shorter than SpanSlicesMax that kept up earns no doubling",
			steps: []step{
				{[]proto.Descriptor{send(0, 1, 0, 9, 5000), recv(1, 0, 0, 9, 5000)}, blocked(1)},
				{nil, blocked(1)},
				{[]proto.Descriptor{send(0, 1, 0, 1, 10000), recv(1, 0, 0, 1, 10000)}, blocked(1)},
			},
			want: []string{
				"chunk x1 r0->r1 off=0 len=5000 span=2 | spanning 1",
				"done r0 req=9 send count=5000\ndone r1 req=9 recv src=0 tag=0 count=5000 | spanning 1",
				"chunk x2 r0->r1 off=0 len=9000 span=3 | spanning 1",
			},
		},
		{
			name:   "the span holds its node's budget: a transfer between the node's other ranks waits, another node's goes on",
			nodeOf: []proto.NodeID{0, 0, 0, 1},
			steps: []step{
				{[]proto.Descriptor{send(0, 1, 0, 1, 5000), recv(1, 0, 0, 1, 5000), send(2, 0, 0, 1, 10)}, blocked(0, 1)},
				{[]proto.Descriptor{recv(0, 2, 0, 2, 10), send(3, 3, 0, 1, 10), recv(3, 3, 0, 2, 10)}, blocked(0, 1)},
				{nil, blocked(0)},
			},
			want: []string{
				"chunk x1 r0->r1 off=0 len=5000 span=2 | spanning 1",
				"chunk x3 r3->r3 off=0 len=10\ndone r0 req=1 send count=5000\ndone r1 req=1 recv src=0 tag=0 count=5000\ndone r3 req=1 send count=10\ndone r3 req=2 recv src=3 tag=0 count=10 | spanning 1",
				"chunk x2 r2->r0 off=0 len=10\ndone r2 req=1 send count=10\ndone r0 req=2 recv src=2 tag=0 count=10 | spanning 0",
			},
		},
		{
			name: "back to back: the next transfer's span begins in the slice the first one's ends",
			steps: []step{
				{[]proto.Descriptor{send(0, 1, 0, 1, 8000), send(0, 1, 0, 2, 8000), recv(1, 0, 0, 1, 8000), recv(1, 0, 0, 2, 8000)}, blocked(1)},
				{nil, blocked(1)}, {nil, blocked(1)}, {nil, blocked(1)}, {nil, blocked(1)},
			},
			want: []string{
				"chunk x1 r0->r1 off=0 len=8000 span=3 | spanning 1",
				"| spanning 1",
				"chunk x2 r0->r1 off=0 len=8000 span=3\ndone r0 req=1 send count=8000\ndone r1 req=1 recv src=0 tag=0 count=8000 | spanning 2",
				"| spanning 1",
				"done r0 req=2 send count=8000\ndone r1 req=2 recv src=0 tag=0 count=8000 | spanning 1",
			},
		},
		{
			// The reviewer's case: a 100-byte transfer between nodes, matched
			// while a span holds node 0, goes in the slice after the span; the
			// two larger transfers of node 0 matched after it follow it.
			name:   "no back-to-back span over an older transfer refused the node's budget",
			nodeOf: []proto.NodeID{0, 0, 0, 1},
			steps: []step{
				{[]proto.Descriptor{send(0, 1, 0, 1, 8000), recv(1, 0, 0, 1, 8000)}, blocked(0, 1, 2, 3)},
				{[]proto.Descriptor{send(2, 3, 0, 1, 100), recv(3, 2, 0, 1, 100)}, blocked(0, 1, 2, 3)},
				{[]proto.Descriptor{send(0, 1, 0, 2, 8000), recv(1, 0, 0, 2, 8000), send(2, 0, 0, 2, 8000), recv(0, 2, 0, 2, 8000)}, blocked(0, 1, 2, 3)},
				{nil, blocked(0, 1, 2, 3)}, {nil, blocked(0, 1, 2, 3)},
			},
			want: []string{
				"chunk x1 r0->r1 off=0 len=8000 span=3 | spanning 1",
				"| spanning 1",
				"done r0 req=1 send count=8000\ndone r1 req=1 recv src=0 tag=0 count=8000 | spanning 1",
				"chunk x2 r2->r3 off=0 len=100 n0->n1\nchunk x3 r2->r0 off=0 len=1900\ndone r2 req=1 send count=100\ndone r3 req=1 recv src=2 tag=0 count=100 | spanning 0",
				"chunk x3 r2->r0 off=1900 len=6100 span=3 | spanning 1",
			},
		},
		{
			// Chunks, not spans, while the gather (ready in slice 2) has bytes
			// to move on node 0: no back-to-back span in slice 2, none later.
			name:   "no span while a collective on the node has bytes to move",
			nodeOf: []proto.NodeID{0, 0, 0, 1},
			steps: []step{
				{[]proto.Descriptor{send(0, 1, 0, 1, 5000), recv(1, 0, 0, 1, 5000)}, blocked(0, 1)},
				{append(gatherAll(4, 0, 1000), send(0, 1, 0, 2, 5000), recv(1, 0, 0, 2, 5000)), blocked(0, 1, 2, 3)},
				{nil, blocked(0, 1, 2, 3)}, {nil, blocked(0, 1, 2, 3)}, {nil, blocked(0, 1, 2, 3)},
			},
			want: []string{
				"chunk x1 r0->r1 off=0 len=5000 span=2 | spanning 1",
				"done r0 req=1 send count=5000\ndone r1 req=1 recv src=0 tag=0 count=5000 | spanning 1",
				"chunk x2 r0->r1 off=0 len=2000 | spanning 0",
				"chunk x2 r0->r1 off=2000 len=2000 | spanning 0",
				"chunk x2 r0->r1 off=4000 len=1000\ncoll chunk stage0 r0->r0 len=1000\ndone r0 req=2 send count=5000\ndone r1 req=2 recv src=0 tag=0 count=5000 | spanning 0",
			},
		},
		{
			name:  "a blocked receiver that serves no pull orders (status bit): chunks",
			steps: []step{{[]proto.Descriptor{send(0, 1, 0, 1, 5000), recv(1, 0, 0, 1, 5000)}, noPull(blocked(1), 1)}, {nil, noPull(blocked(1), 1)}},
			want:  []string{"chunk x1 r0->r1 off=0 len=2000 | spanning 0", "chunk x1 r0->r1 off=2000 len=2000 | spanning 0"},
		},
		{
			name:   "between nodes: chunks, no span",
			nodeOf: []proto.NodeID{0, 1, 0, 1},
			steps:  []step{{[]proto.Descriptor{send(0, 1, 0, 1, 3000), recv(1, 0, 0, 1, 3000)}, blocked(1)}, {nil, blocked(1)}},
			want:   []string{"chunk x1 r0->r1 off=0 len=2000 n0->n1 | spanning 0", "chunk x1 r0->r1 off=2000 len=1000 n0->n1\ndone r0 req=1 send count=3000\ndone r1 req=1 recv src=0 tag=0 count=3000 | spanning 0"},
		},
		{
			name:  "blind: a span whatever the status (a recorded or replayed job)",
			cfg:   Config{BytesPerSliceMax: 2000, ChunksPerSliceMax: 100, PullBytesPerSlice: 3000, SpanSlicesMax: 3, SpanBlind: true},
			steps: []step{{[]proto.Descriptor{send(0, 1, 0, 1, 5000), recv(1, 0, 0, 1, 5000)}, nil}, {nil, nil}},
			want:  []string{"chunk x1 r0->r1 off=0 len=5000 span=2 | spanning 1", "done r0 req=1 send count=5000\ndone r1 req=1 recv src=0 tag=0 count=5000 | spanning 1"},
		},
		{
			name:  "off (PullBytesPerSlice 0): chunks",
			cfg:   Config{BytesPerSliceMax: 2000, ChunksPerSliceMax: 100},
			steps: []step{{[]proto.Descriptor{send(0, 1, 0, 1, 3000), recv(1, 0, 0, 1, 3000)}, blocked(1)}, {nil, blocked(1)}},
			want:  []string{"chunk x1 r0->r1 off=0 len=2000 | spanning 0", "chunk x1 r0->r1 off=2000 len=1000\ndone r0 req=1 send count=3000\ndone r1 req=1 recv src=0 tag=0 count=3000 | spanning 0"},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cf, nodeOf := cfg, c.nodeOf
			if c.cfg.BytesPerSliceMax != 0 {
				cf = c.cfg
			}
			if nodeOf == nil {
				nodeOf = []proto.NodeID{0, 0, 0, 0}
			}
			if err := cf.Validate(); err != nil {
				t.Fatal(err)
			}
			s := New(cf, nodeOf)
			k := proto.SliceID(0)
			for i, st := range c.steps {
				k++
				if at, ok := c.at[i]; ok {
					k = at
				}
				s.SetStatus(st.status)
				p := s.Schedule(k, st.descs)
				if p.Err != nil {
					t.Fatalf("slice %d: %v", k, p.Err)
				}
				got := strings.TrimPrefix(fmt.Sprintf("%s | spanning %d", describe(p), p.Spanning), " ")
				if got != c.want[i] {
					t.Errorf("slice %d:\n%s\nwant:\n%s", k, got, c.want[i])
				}
			}
		})
	}
}

// TestSpanConfig: the span keys' ranges.
func TestSpanConfig(t *testing.T) {
	for _, c := range []struct {
		cfg  Config
		want string
	}{
		{Config{BytesPerSliceMax: 2000, ChunksPerSliceMax: 1, PullBytesPerSlice: 1999, SpanSlicesMax: 4}, "pull bytes per slice = 1999, want 0 (no spans) or 2000 (bytes_per_slice_max) .. 4294967296"},
		{Config{BytesPerSliceMax: 2000, ChunksPerSliceMax: 1, PullBytesPerSlice: 2000, SpanSlicesMax: 1}, "span_slices_max = 1, want 2 .. 64"},
		{Config{BytesPerSliceMax: 2000, ChunksPerSliceMax: 1, PullBytesPerSlice: 2000, SpanSlicesMax: 65}, "span_slices_max = 65, want 2 .. 64"},
		{Config{BytesPerSliceMax: 2000, ChunksPerSliceMax: 1, PullBytesPerSlice: 3000, SpanSlicesMax: 64}, ""},
	} {
		err := c.cfg.Validate()
		if (err == nil) != (c.want == "") || (err != nil && !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%+v: %v, want %q", c.cfg, err, c.want)
		}
	}
}

// gatherAll: an MPI_Gather to root 0 of n bytes from each of ranks ranks
// (world communicator).
func gatherAll(ranks int, root proto.Rank, n uint64) []proto.Descriptor {
	var ds []proto.Descriptor
	for r := range ranks {
		ds = append(ds, proto.Descriptor{Kind: proto.KindColl, Coll: proto.CollGather, Rank: proto.Rank(r), Peer: root, DType: uint8(reduce.Uint8), Len: n, Seq: 10, Req: 10, CollSeq: 1, Addr: 0x1000, RAddr: 0x8000})
	}
	return ds
}

// TestPulledChunks: with PullChunkMin set, a chunk of at least that size
// between two ranks of a node whose receiver is blocked costs its node
// BytesPerSliceMax ÷ PullBytesPerSlice of its bytes (2000 ÷ 3000 here), so
// a slice moves up to 3000 bytes of such chunks; any other chunk costs its
// size.
func TestPulledChunks(t *testing.T) {
	cfg := Config{BytesPerSliceMax: 2000, ChunksPerSliceMax: 100, PullBytesPerSlice: 3000, SpanSlicesMax: 3, PullChunkMin: 500}
	blocked := func(ranks ...proto.Rank) []uint8 {
		st := make([]uint8, 4)
		for _, r := range ranks {
			st[r] = 5 // MPI_Wait
		}
		return st
	}
	four := func(n uint64, to proto.Rank) []proto.Descriptor {
		var ds []proto.Descriptor
		for i := range uint64(4) {
			ds = append(ds, send(0, to, 0, i+1, n), recv(to, 0, 0, i+1, n))
		}
		return ds
	}
	cases := []struct {
		name   string
		cfg    Config
		nodeOf []proto.NodeID
		descs  []proto.Descriptor
		status []uint8
		want   []string // per slice, from slice 1
	}{
		{
			name:  "a blocked receiver in the node: 3000 bytes of chunks per slice; the last byte of x3 is below PullChunkMin and costs its size",
			descs: four(1000, 1), status: blocked(1),
			want: []string{
				"chunk x1 r0->r1 off=0 len=1000\nchunk x2 r0->r1 off=0 len=1000\nchunk x3 r0->r1 off=0 len=999\ndone r0 req=1 send count=1000\ndone r1 req=1 recv src=0 tag=0 count=1000\ndone r0 req=2 send count=1000\ndone r1 req=2 recv src=0 tag=0 count=1000",
				"chunk x3 r0->r1 off=999 len=1\nchunk x4 r0->r1 off=0 len=1000\ndone r0 req=3 send count=1000\ndone r1 req=3 recv src=0 tag=0 count=1000\ndone r0 req=4 send count=1000\ndone r1 req=4 recv src=0 tag=0 count=1000",
			},
		},
		{
			name:  "a receiver not in a blocking call: chunks at their size, 2000 bytes per slice",
			descs: four(1000, 1), status: blocked(),
			want: []string{
				"chunk x1 r0->r1 off=0 len=1000\nchunk x2 r0->r1 off=0 len=1000\ndone r0 req=1 send count=1000\ndone r1 req=1 recv src=0 tag=0 count=1000\ndone r0 req=2 send count=1000\ndone r1 req=2 recv src=0 tag=0 count=1000",
				"chunk x3 r0->r1 off=0 len=1000\nchunk x4 r0->r1 off=0 len=1000\ndone r0 req=3 send count=1000\ndone r1 req=3 recv src=0 tag=0 count=1000\ndone r0 req=4 send count=1000\ndone r1 req=4 recv src=0 tag=0 count=1000",
			},
		},
		{
			name:  "chunks below PullChunkMin: at their size",
			descs: four(400, 1)[:6], status: blocked(1),
			want: []string{
				"chunk x1 r0->r1 off=0 len=400\nchunk x2 r0->r1 off=0 len=400\nchunk x3 r0->r1 off=0 len=400\ndone r0 req=1 send count=400\ndone r1 req=1 recv src=0 tag=0 count=400\ndone r0 req=2 send count=400\ndone r1 req=2 recv src=0 tag=0 count=400\ndone r0 req=3 send count=400\ndone r1 req=3 recv src=0 tag=0 count=400",
			},
		},
		{
			name:   "between nodes: at their size",
			nodeOf: []proto.NodeID{0, 1, 0, 1},
			descs:  four(1000, 1), status: blocked(1),
			want: []string{
				"chunk x1 r0->r1 off=0 len=1000 n0->n1\nchunk x2 r0->r1 off=0 len=1000 n0->n1\ndone r0 req=1 send count=1000\ndone r1 req=1 recv src=0 tag=0 count=1000\ndone r0 req=2 send count=1000\ndone r1 req=2 recv src=0 tag=0 count=1000",
				"chunk x3 r0->r1 off=0 len=1000 n0->n1\nchunk x4 r0->r1 off=0 len=1000 n0->n1\ndone r0 req=3 send count=1000\ndone r1 req=3 recv src=0 tag=0 count=1000\ndone r0 req=4 send count=1000\ndone r1 req=4 recv src=0 tag=0 count=1000",
			},
		},
		{
			name:  "PullEntriesMax 2: the third chunk to the rank in a slice costs its size",
			cfg:   Config{BytesPerSliceMax: 2000, ChunksPerSliceMax: 100, PullBytesPerSlice: 3000, SpanSlicesMax: 3, PullChunkMin: 500, PullEntriesMax: 2},
			descs: four(1000, 1), status: blocked(1),
			want: []string{
				"chunk x1 r0->r1 off=0 len=1000\nchunk x2 r0->r1 off=0 len=1000\nchunk x3 r0->r1 off=0 len=666\ndone r0 req=1 send count=1000\ndone r1 req=1 recv src=0 tag=0 count=1000\ndone r0 req=2 send count=1000\ndone r1 req=2 recv src=0 tag=0 count=1000",
				"chunk x3 r0->r1 off=666 len=334\nchunk x4 r0->r1 off=0 len=1000\ndone r0 req=3 send count=1000\ndone r1 req=3 recv src=0 tag=0 count=1000\ndone r0 req=4 send count=1000\ndone r1 req=4 recv src=0 tag=0 count=1000",
			},
		},
		{
			name:  "SpanBlind (a recorded or replayed job, whose receiver may be computing): at their size",
			cfg:   Config{BytesPerSliceMax: 2000, ChunksPerSliceMax: 100, PullBytesPerSlice: 3000, SpanSlicesMax: 3, PullChunkMin: 500, SpanBlind: true},
			descs: four(1000, 1)[:6], status: blocked(),
			want: []string{
				"chunk x1 r0->r1 off=0 len=1000\nchunk x2 r0->r1 off=0 len=1000\ndone r0 req=1 send count=1000\ndone r1 req=1 recv src=0 tag=0 count=1000\ndone r0 req=2 send count=1000\ndone r1 req=2 recv src=0 tag=0 count=1000",
				"chunk x3 r0->r1 off=0 len=1000\ndone r0 req=3 send count=1000\ndone r1 req=3 recv src=0 tag=0 count=1000",
			},
		},
		{
			name:  "PullChunkMin 0: at their size",
			cfg:   Config{BytesPerSliceMax: 2000, ChunksPerSliceMax: 100, PullBytesPerSlice: 3000, SpanSlicesMax: 3},
			descs: four(1000, 1)[:4], status: blocked(1),
			want: []string{
				"chunk x1 r0->r1 off=0 len=1000\nchunk x2 r0->r1 off=0 len=1000\ndone r0 req=1 send count=1000\ndone r1 req=1 recv src=0 tag=0 count=1000\ndone r0 req=2 send count=1000\ndone r1 req=2 recv src=0 tag=0 count=1000",
			},
		},
		{
			name:  "no more than a span would move: 3000 bytes in one slice, the rest in the next, no span",
			descs: []proto.Descriptor{send(0, 1, 0, 1, 4000), recv(1, 0, 0, 1, 4000)}, status: blocked(1),
			want: []string{
				"chunk x1 r0->r1 off=0 len=3000",
				"chunk x1 r0->r1 off=3000 len=1000\ndone r0 req=1 send count=4000\ndone r1 req=1 recv src=0 tag=0 count=4000",
			},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cf, nodeOf := cfg, c.nodeOf
			if c.cfg.BytesPerSliceMax != 0 {
				cf = c.cfg
			}
			if nodeOf == nil {
				nodeOf = []proto.NodeID{0, 0, 0, 0}
			}
			s := New(cf, nodeOf)
			for i, want := range c.want {
				s.SetStatus(c.status)
				var ds []proto.Descriptor
				if i == 0 {
					ds = c.descs
				}
				p := s.Schedule(proto.SliceID(i+1), ds)
				if p.Err != nil {
					t.Fatalf("slice %d: %v", i+1, p.Err)
				}
				if got := describe(p); got != want {
					t.Errorf("slice %d:\n%s\nwant:\n%s", i+1, got, want)
				}
				if i == len(c.want)-1 && p.Waiting != 0 {
					t.Errorf("slice %d: %d transfers still waiting, want none", i+1, p.Waiting)
				}
			}
		})
	}
}

// TestMulDiv: a×b÷c without overflow, rounded down and up.
func TestMulDiv(t *testing.T) {
	for _, c := range []struct{ a, b, c, down, up uint64 }{
		{1000, 3000, 2000, 1500, 1500},
		{1000, 2000, 3000, 666, 667},
		{1 << 32, 1 << 32, 1 << 32, 1 << 32, 1 << 32},
		{1<<32 - 1, 1 << 32, 3, (1<<32 - 1) / 3 << 32, ((1<<32-1)<<32 + 2) / 3},
	} {
		if got := mulDiv(c.a, c.b, c.c, false); got != c.down {
			t.Errorf("mulDiv(%d, %d, %d) = %d, want %d", c.a, c.b, c.c, got, c.down)
		}
		if got := mulDiv(c.a, c.b, c.c, true); got != c.up {
			t.Errorf("mulDiv(%d, %d, %d, up) = %d, want %d", c.a, c.b, c.c, got, c.up)
		}
	}
}

// BenchmarkScheduleManyActive: MSM of one slice with 1984 transfers active
// on 64 nodes (31 per node, all between the node's two ranks, each
// receiver blocked), spans of at most 2 slices, so that every node's
// next span is decided in every slice (soleOn). Compare ns/op before and
// after a change to the span rule; allocs/op must stay 0.
func BenchmarkScheduleManyActive(b *testing.B) {
	const nodes, perNode = 64, 31
	nodeOf := make([]proto.NodeID, 2*nodes)
	status := make([]uint8, 2*nodes)
	for r := range nodeOf {
		nodeOf[r] = proto.NodeID(r / 2)
		status[r] = 5 // MPI_Wait
	}
	s := New(Config{BytesPerSliceMax: 1 << 20, ChunksPerSliceMax: 1024, PullBytesPerSlice: 3 << 19, SpanSlicesMax: 2}, nodeOf)
	var ds []proto.Descriptor
	for n := range nodes {
		for i := range uint64(perNode) {
			src, dst := proto.Rank(2*n), proto.Rank(2*n+1)
			ds = append(ds, send(src, dst, 0, i+1, 1<<60), recv(dst, src, 0, i+1, 1<<60))
		}
	}
	s.SetStatus(status)
	if p := s.Schedule(1, ds); p.Err != nil || p.Waiting != nodes*perNode {
		b.Fatalf("slice 1: err %v, %d waiting, want %d", p.Err, p.Waiting, nodes*perNode)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		s.SetStatus(status)
		s.Schedule(proto.SliceID(i+2), nil)
	}
}
