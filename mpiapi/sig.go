package mpiapi

import (
	"github.com/bcsmpi/bcsmpi/internal/proto"
	"github.com/bcsmpi/bcsmpi/internal/reduce"
)

// Type signatures of point-to-point messages (proto.Descriptor's DType on a
// send or receive): a typed slice's is its element type, so a []float64
// sent to a receive of []int32 is MPI_ERR_TYPE on both sides, even when
// the byte lengths agree; a []byte's is bytes, which match anything. MSM
// compares them when it matches (package scheduler, sig.go).

// nextSig holds the signatures SetSignatures gave the next send [0] and
// the next receive [1] posted with a byte buffer.
var nextSig [2]reduce.Type

// SetSignatures gives the next send and the next receive posted with a
// byte buffer (by this goroutine's next point-to-point call) the type
// signature of elements of type send and recv (internal/reduce.Type values;
// 0 leaves them unchecked). It is for a layer above whose buffers are
// bytes of a typed datatype (the C ABI, package cabi); each value is used
// once.
func SetSignatures(send, recv reduce.Type) { nextSig = [2]reduce.Type{send, recv} }

// signature is the type signature of a send (recv false) or receive of a
// buffer of elements of type t, taking the value SetSignatures left for it.
func signature(t reduce.Type, recv bool) uint8 {
	i := 0
	if recv {
		i = 1
	}
	if s := nextSig[i]; s != 0 || t == reduce.Uint8 {
		nextSig[i] = 0
		if t == reduce.Uint8 {
			t = s
			if t == 0 {
				t = reduce.Uint8
			}
		}
	}
	return uint8(t)
}

// typeErr is the error of a request completed with proto.ErrType.
func (p *process) typeErr(r *Request, comp proto.Completion) error {
	peer := int(comp.Source)
	if r.comm != nil {
		peer = r.comm.commRank(comp.Source)
	}
	mine := "this receive's elements are"
	other := "the matching send of rank"
	if r.kind == proto.KindSend {
		mine, other = "this send's elements are", "the matching receive of rank"
	}
	return p.errf(ErrType, r.call, "type signature mismatch with %s %d (tag %d): %s %s, its elements are %s (a message must have the type signature of its receive, or a prefix of it; bytes match anything)",
		other, peer, comp.Tag, mine, sigName(r.sig), sigName(comp.PeerType))
}

func sigName(t uint8) string {
	if t == 0 {
		return "unchecked"
	}
	return reduce.Type(t).String()
}
