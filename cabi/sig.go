package main

/*
#include "shim.h"
*/
import "C"

import (
	"github.com/bcsmpi/bcsmpi/internal/reduce"
	"github.com/bcsmpi/bcsmpi/mpiapi"
)

// Point-to-point type signatures: a send or receive whose datatype's basic
// elements are all of one kind (a predefined type, or a derived type of
// one kind: a vector of MPI_DOUBLE) carries that kind's element type in
// its descriptor, so MSM reports a send of doubles matched with a receive
// of ints as MPI_ERR_TYPE on both sides (package scheduler, sig.go), and
// accepts a vector of 4 doubles received as 4 contiguous doubles. A type
// of several kinds (a struct of an int and a double) is not checked; one
// of one-byte unsigned elements (MPI_BYTE, MPI_PACKED, MPI_UNSIGNED_CHAR,
// MPI_UINT8_T) is bytes and matches anything. C types of one size and
// kind share an element type (MPI_INT and MPI_INT32_T, MPI_LONG and
// MPI_INT64_T match each other). The message of a receive shorter than the
// receive is accepted (its signature is a prefix).

var sigOfKind = [C.BCS_NKINDS]reduce.Type{
	C.BCS_I8: reduce.Int8, C.BCS_U8: reduce.Uint8, C.BCS_I16: reduce.Int16, C.BCS_U16: reduce.Uint16,
	C.BCS_I32: reduce.Int32, C.BCS_U32: reduce.Uint32, C.BCS_I64: reduce.Int64, C.BCS_U64: reduce.Uint64,
	C.BCS_F32: reduce.Float32, C.BCS_F64: reduce.Float64,
	C.BCS_F32I: reduce.Float32Int, C.BCS_F64I: reduce.Float64Int, C.BCS_I32I: reduce.Int32Int, C.BCS_I64I: reduce.Int64Int,
	C.BCS_I16I: reduce.Int16Int,
}

// sig is the type signature of a checked call's datatype (0: unchecked).
func (a *p2p) sig() reduce.Type {
	if a.t.info == nil || a.t.kind < 0 || a.t.kind >= len(sigOfKind) {
		return 0
	}
	return sigOfKind[a.t.kind]
}

// sign gives the next post of the call the signature of send (the send's
// side) and recv; either may be nil.
func sign(send, recv *p2p) {
	var s, r reduce.Type
	if send != nil {
		s = send.sig()
	}
	if recv != nil {
		r = recv.sig()
	}
	mpiapi.SetSignatures(s, r)
}
