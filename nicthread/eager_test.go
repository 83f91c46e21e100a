package nicthread

import (
	"os"
	"testing"

	"github.com/bcsmpi/bcsmpi/internal/proto"
	"github.com/bcsmpi/bcsmpi/internal/reduce"
)

// TestEagerMatchedCountsTypeMismatch: rank 0's eager sends (mpiapi's
// eager_max) are counted in its eager-matched word when a receive matches
// them, and also when a receive of another type signature consumes one
// (the scheduler lists it in the plan's Consumed, with no Match): that send
// is no longer unmatched, and not counting it would leak one of the rank's
// max(eager_max, size) until its Sends waited forever. The consumed send's
// inline copy is freed as a moved one's is.
func TestEagerMatchedCountsTypeMismatch(t *testing.T) {
	tn := newTestNode(t, 0, []proto.NodeID{0, 0}, nil)
	me := os.Getpid()
	tn.attach(t, 0, me, me)
	tn.attach(t, 1, me, me)
	eager := func(tag int32, req uint32, seq uint64) proto.Descriptor {
		return proto.Descriptor{Kind: proto.KindSend, Inline: true, Eager: true, Rank: 0, Peer: 1, Tag: tag, Req: req, Seq: seq, Len: 8, DType: uint8(reduce.Float64)}
	}
	dst := make([]byte, 16)
	recv := func(tag int32, req uint32, seq uint64, typ reduce.Type, buf []byte) proto.Descriptor {
		return proto.Descriptor{Kind: proto.KindRecv, Rank: 1, Peer: 0, Tag: tag, Req: req, Seq: seq, Addr: addrOf(buf), Len: 8, DType: uint8(typ)}
	}
	tn.rank[0].Post(eager(5, 0, 1), payload)
	tn.rank[0].Post(eager(6, 1, 2), payload)
	tn.rank[0].Post(eager(7, 2, 3), payload)                     // never received
	tn.rank[1].Post(recv(5, 0, 1, reduce.Int64, dst[:8]), nil)   // type mismatch: consumes the send
	tn.rank[1].Post(recv(6, 1, 2, reduce.Float64, dst[8:]), nil) // matches
	if err := runSlices([]*testNode{tn}, 4); err != nil {
		t.Fatal(err)
	}
	if got := tn.rank[0].EagerMatched(); got != 2 {
		t.Fatalf("eager-matched word %d, want 2 (one matched, one consumed by a mismatched receive)", got)
	}
	if len(tn.a.inline) != 1 {
		t.Fatalf("%d inline copies kept, want 1 (the send no receive took)", len(tn.a.inline))
	}
	if string(dst[8:]) != string(payload) {
		t.Fatalf("the matched receive got %q, want %q", dst[8:], payload)
	}
}
