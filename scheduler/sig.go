package scheduler

import (
	"fmt"

	"github.com/bcsmpi/bcsmpi/internal/proto"
	"github.com/bcsmpi/bcsmpi/internal/reduce"
)

// Type signatures of point-to-point messages (proto.Descriptor: a send's or
// receive's DType). MSM checks them when it matches a send with a receive:
// both checked (not 0) and neither bytes (reduce.Uint8, which matches
// anything), their element types must be equal. Lengths are not compared
// here: a message shorter than its receive is a prefix of the receive's
// signature, which is legal, and a longer one is truncation, as before. A
// mismatch completes the receive and, unless the agent already completed
// it (a buffered inline send), the send with proto.ErrType, each naming the
// other side's element type; nothing moves. A buffered send is listed in the
// plan's Consumed instead: its agent frees its inline copy and, for an
// eager one, counts it as matched (package mpiapi's eager_max).

// checkSig checks the type signature of a send or receive descriptor.
func checkSig(d proto.Descriptor) error {
	if d.DType == 0 {
		return nil
	}
	t := reduce.Type(d.DType)
	if !t.Valid() {
		return fmt.Errorf("%s type signature %d is not an element type (want 0, unchecked, or an internal/reduce.Type)", d.Kind, d.DType)
	}
	if d.Len%uint64(t.Size()) != 0 {
		return fmt.Errorf("%s of %d bytes is not a whole number of %s elements", d.Kind, d.Len, t)
	}
	return nil
}

// sigMismatch reports whether a send and the receive it matched have
// different checked type signatures.
func sigMismatch(send, recv proto.Descriptor) bool {
	a, b := reduce.Type(send.DType), reduce.Type(recv.DType)
	return a != 0 && b != 0 && a != reduce.Uint8 && b != reduce.Uint8 && a != b
}

// typeMismatch completes a matched pair whose signatures differ.
func (s *Scheduler) typeMismatch(send, recv proto.Descriptor) {
	if send.Inline {
		s.plan.Consumed = append(s.plan.Consumed, send)
	} else {
		s.complete(proto.Completion{Rank: send.Rank, Req: send.Req, Kind: proto.KindSend, Source: recv.Rank,
			Tag: send.Tag, Err: proto.ErrType, PeerType: recv.DType})
	}
	s.complete(proto.Completion{Rank: recv.Rank, Req: recv.Req, Kind: proto.KindRecv, Source: send.Rank,
		Tag: send.Tag, Count: send.Len, Err: proto.ErrType, PeerType: send.DType})
}
