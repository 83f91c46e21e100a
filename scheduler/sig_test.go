package scheduler

import (
	"strings"
	"testing"

	"github.com/bcsmpi/bcsmpi/internal/proto"
	"github.com/bcsmpi/bcsmpi/internal/reduce"
)

func typed(d proto.Descriptor, t reduce.Type) proto.Descriptor {
	d.DType = uint8(t)
	return d
}

// A send and a receive of different element types fail together with
// ErrType, each naming the other's type, and move nothing; bytes and
// unchecked descriptors match anything; a shorter message of the same type
// is accepted (a prefix).
func TestTypeSignatures(t *testing.T) {
	cfg := Config{BytesPerSliceMax: 1 << 20, ChunksPerSliceMax: 100}
	cases := []struct {
		name       string
		send, recv proto.Descriptor
		want       string
	}{
		{"float64 into int32 of the same length",
			typed(send(0, 1, 5, 1, 32), reduce.Float64), typed(recv(1, 0, 5, 1, 32), reduce.Int32),
			"done r0 req=1 send count=0 err=type signature mismatch\ndone r1 req=1 recv src=0 tag=5 count=32 err=type signature mismatch"},
		{"same type, shorter message",
			typed(send(0, 1, 5, 1, 16), reduce.Float64), typed(recv(1, 0, 5, 1, 32), reduce.Float64),
			"chunk x1 r0->r1 off=0 len=16\ndone r0 req=1 send count=16\ndone r1 req=1 recv src=0 tag=5 count=16"},
		{"bytes receive takes doubles",
			typed(send(0, 1, 5, 1, 16), reduce.Float64), typed(recv(1, 0, 5, 1, 16), reduce.Uint8),
			"chunk x1 r0->r1 off=0 len=16\ndone r0 req=1 send count=16\ndone r1 req=1 recv src=0 tag=5 count=16"},
		{"unchecked send",
			send(0, 1, 5, 1, 16), typed(recv(1, 0, 5, 1, 16), reduce.Int32),
			"chunk x1 r0->r1 off=0 len=16\ndone r0 req=1 send count=16\ndone r1 req=1 recv src=0 tag=5 count=16"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := New(cfg, []proto.NodeID{0, 0})
			p := s.Schedule(1, []proto.Descriptor{c.send, c.recv})
			if got := describe(p); got != c.want {
				t.Fatalf("got:\n%s\nwant:\n%s", got, c.want)
			}
			for _, comp := range p.Completions {
				if comp.Err == proto.ErrType {
					other := c.send.DType
					if comp.Kind == proto.KindSend {
						other = c.recv.DType
					}
					if comp.PeerType != other {
						t.Errorf("%s: peer type %d, want %d", comp.Describe(), comp.PeerType, other)
					}
				}
			}
		})
	}
	// A buffered (inline) send completed when exchanged: only the receive fails.
	s := New(cfg, []proto.NodeID{0, 0})
	in := typed(send(0, 1, 5, 1, 8), reduce.Float64)
	in.Inline = true
	p := s.Schedule(1, []proto.Descriptor{in, typed(recv(1, 0, 5, 1, 8), reduce.Int64)})
	if got := describe(p); !strings.HasSuffix(got, "done r1 req=1 recv src=0 tag=5 count=8 err=type signature mismatch") || strings.Contains(got, "r0 req=1 send count=0 err") {
		t.Fatalf("inline send: %s", got)
	}
	// No Match names it, so the plan lists it as consumed: its agent frees
	// the inline copy and counts an eager send as matched (eager_max).
	if len(p.Matches) != 0 || len(p.Consumed) != 1 || p.Consumed[0] != in {
		t.Fatalf("inline send: matches %v, consumed %v; want none and the send", p.Matches, p.Consumed)
	}
	if p := s.Schedule(2, nil); len(p.Consumed) != 0 {
		t.Fatalf("next slice: consumed %v, want none", p.Consumed)
	}
	s = New(cfg, []proto.NodeID{0, 0})
	p = s.Schedule(1, []proto.Descriptor{typed(send(0, 1, 5, 1, 8), reduce.Float64), typed(recv(1, 0, 5, 1, 8), reduce.Int64)})
	if len(p.Consumed) != 0 {
		t.Fatalf("unbuffered send: consumed %v, want none (its own completion reports the error)", p.Consumed)
	}
}

func TestCheckSignature(t *testing.T) {
	for _, c := range []struct {
		d    proto.Descriptor
		want string
	}{
		{typed(send(0, 1, 0, 1, 8), reduce.Type(200)), "not an element type"},
		{typed(recv(1, 0, 0, 1, 6), reduce.Float64), "not a whole number of float64 elements"},
	} {
		err := CheckDescriptor(c.d, 2)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error containing %q", c.d.Describe(), err, c.want)
		}
	}
	if err := CheckDescriptor(typed(send(0, 1, 0, 1, 16), reduce.Float64), 2); err != nil {
		t.Errorf("a typed send: %v", err)
	}
}
