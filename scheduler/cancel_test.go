package scheduler

import (
	"strings"
	"testing"

	"github.com/bcsmpi/bcsmpi/internal/proto"
)

func cancelOf(t proto.Descriptor, seq uint64) proto.Descriptor {
	c := proto.Descriptor{Kind: proto.KindCancel, Rank: t.Rank, Comm: t.Comm, Req: t.Req, Seq: seq}
	c.SetWithdraws(proto.CancelRecv)
	if t.Kind == proto.KindSend {
		c.SetWithdraws(proto.CancelSend)
		c.Peer = t.Peer
	}
	return c
}

func TestCancel(t *testing.T) {
	cfg := Config{BytesPerSliceMax: 1 << 20, ChunksPerSliceMax: 100}
	type step []proto.Descriptor
	r1 := recv(1, 0, 5, 1, 8)
	s1 := send(0, 1, 5, 1, 8)
	cases := []struct {
		name  string
		steps []step
		want  []string
	}{
		{
			name:  "an unmatched receive is withdrawn; a later send is unexpected",
			steps: []step{{r1}, {cancelOf(r1, 2)}, {s1}},
			want:  []string{"", "done r1 req=1 recv src=-1 tag=-1 count=0 err=cancelled", ""},
		},
		{
			name:  "a receive and its cancel in one slice",
			steps: []step{{r1, cancelOf(r1, 2)}},
			want:  []string{"done r1 req=1 recv src=-1 tag=-1 count=0 err=cancelled"},
		},
		{
			name:  "a receive matched in the cancel's slice completes normally",
			steps: []step{{r1}, {s1, cancelOf(r1, 2)}},
			want:  []string{"", "chunk x1 r0->r1 off=0 len=8\ndone r0 req=1 send count=8\ndone r1 req=1 recv src=0 tag=5 count=8"},
		},
		{
			name: "a cancel never withdraws a newer request in the same slot",
			// r1 (req 1) completed; the rank reused req 1 for seq 3, posted after the cancel (seq 2).
			steps: []step{{r1, s1}, {cancelOf(r1, 2), recv(1, 0, 6, 3, 8)}},
			want: []string{"chunk x1 r0->r1 off=0 len=8\ndone r0 req=1 send count=8\ndone r1 req=1 recv src=0 tag=5 count=8",
				""},
		},
		{
			name:  "an unmatched unbuffered send is withdrawn",
			steps: []step{{s1}, {cancelOf(s1, 2)}, {r1}},
			want:  []string{"", "done r0 req=1 send count=0 err=cancelled", ""},
		},
		{
			name:  "a buffered send is never withdrawn",
			steps: []step{{func() proto.Descriptor { d := s1; d.Inline = true; return d }()}, {cancelOf(s1, 2)}, {r1}},
			want: []string{"done r0 req=1 send count=8", "",
				"chunk x1 r0->r1 off=0 len=8 inline\ndone r1 req=1 recv src=0 tag=5 count=8"},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := New(cfg, []proto.NodeID{0, 0})
			for i, st := range c.steps {
				for _, d := range st {
					if err := CheckDescriptor(d, 2); err != nil {
						t.Fatalf("CheckDescriptor(%s): %v", d.Describe(), err)
					}
				}
				p := s.Schedule(proto.SliceID(i+1), st)
				if p.Err != nil {
					t.Fatalf("step %d: %v", i, p.Err)
				}
				if got := describe(p); got != c.want[i] {
					t.Fatalf("step %d:\ngot:\n%s\nwant:\n%s", i, got, c.want[i])
				}
			}
			if c.name == "an unmatched receive is withdrawn; a later send is unexpected" && s.plan.Unexpected != 1 {
				t.Fatalf("the send after the cancel: %d unexpected, want 1", s.plan.Unexpected)
			}
		})
	}
}

func TestCheckCancel(t *testing.T) {
	for _, d := range []proto.Descriptor{
		{Kind: proto.KindCancel, Tag: 2},
		{Kind: proto.KindCancel, Tag: proto.CancelSend, Peer: 5},
	} {
		err := CheckDescriptor(d, 2)
		if err == nil || !strings.Contains(err.Error(), "cancel") {
			t.Fatalf("CheckDescriptor(%+v) = %v, want an error about the cancel", d, err)
		}
	}
}

// TestCancelHeldWildcard: in deterministic mode a cancelled ANY_SOURCE
// receive (held for logical time) is withdrawn and stops being held, so a
// later receive for the same message is matched at once.
func TestCancelHeldWildcard(t *testing.T) {
	s := New(Config{BytesPerSliceMax: 1 << 20, ChunksPerSliceMax: 16, Deterministic: true}, make([]proto.NodeID, 2))
	status := []uint8{proto.StatusRunning, proto.StatusRunning}
	w := recv(1, proto.AnySource, 5, 1, 8)
	s.SetView(status, false)
	if p := s.Schedule(1, []proto.Descriptor{w}); len(p.Completions) != 0 {
		t.Fatalf("the wildcard completed at once: %s", describe(p))
	}
	s.SetView(status, false)
	p := s.Schedule(2, []proto.Descriptor{cancelOf(w, 2)})
	if got := describe(p); got != "done r1 req=1 recv src=-1 tag=-1 count=0 err=cancelled" {
		t.Fatalf("cancel of a held wildcard: %q", got)
	}
	if n := s.det.heldN[key{0, 1}]; n != 0 {
		t.Fatalf("held count %d after the cancel, want 0", n)
	}
	// A receive from rank 0 is not held behind the withdrawn wildcard.
	s.SetView(status, false)
	p = s.Schedule(3, []proto.Descriptor{send(0, 1, 5, 1, 8), recv(1, 0, 5, 3, 8)})
	if len(p.Matches) != 1 {
		t.Fatalf("a specific receive after the cancelled wildcard: %s", describe(p))
	}
}
