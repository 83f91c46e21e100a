package main

/*
#include "shim.h"
*/
import "C"

import (
	"unsafe"

	"github.com/bcsmpi/bcsmpi/mpiapi"
)

// The aliasing rule of the collectives: the send and receive buffers of a
// collective must not overlap unless MPI_IN_PLACE is given (MPI 5.0, 6.1;
// MPICH: "Buffers must not be aliased"). mpiapi checks it on the slices it
// is given, but the C layer often hands it copies (pack buffers of derived
// types, the one byte buffer of an exchange) or hands it one pointer as
// both buffers, which mpiapi reads as its own in-place idiom; so every
// collective entry of this package checks its caller's buffers itself,
// before it packs, copies or posts anything: an overlap is MPI_ERR_BUFFER
// through the communicator's error handler, naming the call and both
// buffers, on the rank that passed them. As mpiapi's, the test is on each
// buffer's whole extent: from the lowest byte its significant blocks touch
// (the true lower bound of a block's first item) to the highest (the true
// upper bound of a block's last item), so a v or w collective that sends
// from some blocks of one array and receives into others between them is
// refused too (MPICH refuses sendbuf == recvbuf whatever the
// displacements); zero-size blocks touch nothing. The byte test itself is
// mpiapi.Overlap.

// byteRun is a range [lo, hi) of a process's addresses.
type byteRun struct{ lo, hi uint64 }

// runsAt adds to rs the bytes the runs of items of t at p touch. A NULL p
// touches nothing (nonNull refuses it where it must hold items) unless it
// is MPI_BOTTOM for t.
func runsAt(rs []byteRun, p unsafe.Pointer, t dtype, runs []item) []byteRun {
	if t.info == nil || t.info.size == 0 || p == nil && !t.bottom() {
		return rs
	}
	base, ext := int64(uintptr(p)), int64(t.extent)
	for _, r := range runs {
		if r.n <= 0 {
			continue
		}
		a, b := int64(r.first)*ext, int64(r.first+r.n-1)*ext
		rs = append(rs, byteRun{uint64(base + min(a, b) + t.info.trueLB), uint64(base + max(a, b) + t.info.trueUB)})
	}
	return rs
}

// bounds is the one range from the lowest to the highest byte of rs.
func bounds(rs []byteRun) (b byteRun) {
	for i, r := range rs {
		if i == 0 {
			b = r
			continue
		}
		b.lo, b.hi = min(b.lo, r.lo), max(b.hi, r.hi)
	}
	return b
}

// aliased refuses a collective whose send buffer (the runs sr of items of
// st at send) and receive buffer (rr of rt at recv) overlap.
func (k *collCall) aliased(send unsafe.Pointer, st dtype, sr []item, recv unsafe.Pointer, rt dtype, rr []item) C.int {
	return k.aliasedRuns(send, runsAt(nil, send, st, sr), recv, runsAt(nil, recv, rt, rr))
}

// aliasedRuns is aliased for byte runs made by runsAt.
func (k *collCall) aliasedRuns(send unsafe.Pointer, sr []byteRun, recv unsafe.Pointer, rr []byteRun) C.int {
	s, r := bounds(sr), bounds(rr)
	if !mpiapi.Overlap(s.lo, s.hi-s.lo, r.lo, r.hi-r.lo) {
		return 0
	}
	from, to := max(s.lo, r.lo), min(s.hi, r.hi)
	return k.fail(errBuffer, "sendbuf = %p and recvbuf = %p are aliased: the data sent lie in [%#x, %#x) and the data received in [%#x, %#x), which share %d bytes at %#x; the send and receive buffers of a collective must not overlap (MPI_IN_PLACE as sendbuf, where %s allows it, is how to work in place)",
		send, recv, s.lo, s.hi, r.lo, r.hi, to-from, from, k.name)
}
