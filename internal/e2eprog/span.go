package main

import (
	"fmt"
	"time"

	mpi "github.com/bcsmpi/bcsmpi/mpiapi"
)

// spans: large messages between the ranks of each pair (r, r^1: the same
// node under block placement), sized to cross chunk, span and slice
// boundaries at any budget (odd lengths), every byte checked: a blocking
// Recv (the receiver blocked: spans), an Irecv waited for after some
// computation (the receiver running when the transfer is scheduled: chunks,
// then spans once it waits), both directions at once (Sendrecv), several in
// flight (Waitall), and a receive buffer longer than the message.
func spans() {
	me, n := w.Rank(), w.Size()
	peer := me ^ 1
	if peer >= n {
		fail("spans needs an even number of ranks, have %d", n)
	}
	lo := me < peer
	got := func(buf []byte, src, salt int) {
		want := pattern(src, me, len(buf), salt)
		for i := range buf {
			if buf[i] != want[i] {
				fail("spans: message %d from %d: byte %d of %d = %d, want %d", salt, src, i, len(buf), buf[i], want[i])
			}
		}
	}
	// 1: blocking receive of 9 MiB + 13 bytes.
	const big = 9<<20 + 13
	if lo {
		check(mpi.Send(w, pattern(me, peer, big, 1), peer, 1))
	} else {
		buf := make([]byte, big)
		_, err := mpi.Recv(w, buf, peer, 1)
		check(err)
		got(buf, peer, 1)
	}
	// 2: the receiver computes while the transfer starts, then waits.
	const mid = 5<<20 + 5
	if lo {
		check(mpi.Send(w, pattern(me, peer, mid, 2), peer, 2))
	} else {
		buf := make([]byte, mid)
		r, err := mpi.Irecv(w, buf, peer, 2)
		check(err)
		for t0 := time.Now(); time.Since(t0) < 5*time.Millisecond; {
		}
		_, err = mpi.Wait(r)
		check(err)
		got(buf, peer, 2)
	}
	// 3: both directions at once.
	const both = 3<<20 + 1
	in := make([]byte, both)
	_, err := mpi.Sendrecv(w, pattern(me, peer, both, 3), peer, 3, in, peer, 3)
	check(err)
	got(in, peer, 3)
	// 4: four in flight each way, and a receive buffer longer than its message.
	var reqs []*mpi.Request
	bufs := make([][]byte, 4)
	for i := range bufs {
		bufs[i] = make([]byte, (2<<20+7*i)+64*(i%2))
		r, err := mpi.Irecv(w, bufs[i], peer, 10+i)
		check(err)
		reqs = append(reqs, r)
	}
	for i := range bufs {
		r, err := mpi.Isend(w, pattern(me, peer, 2<<20+7*i, 10+i), peer, 10+i)
		check(err)
		reqs = append(reqs, r)
	}
	check(mpi.Waitall(reqs...))
	for i, b := range bufs {
		got(b[:2<<20+7*i], peer, 10+i)
	}
	check(mpi.Barrier(w))
	if me == 0 {
		fmt.Printf("spans ok: %d ranks\n", n)
	}
}
