package main

import (
	"fmt"

	mpi "github.com/bcsmpi/bcsmpi/mpiapi"
)

// staleRequest: rank 0 waits for a receive, starts another (which takes the
// completed one's slot) and tests the old handle, which must be an
// MPI_ERR_REQUEST error (fatal here) instead of a view of the new request.
func staleRequest() {
	if w.Rank() == 1 {
		check(mpi.Send(w, []int64{1}, 0, 1))
		check(mpi.Send(w, []int64{2}, 0, 2))
		return
	}
	buf := []int64{0}
	old, err := mpi.Irecv(w, buf, 1, 1)
	check(err)
	_, err = mpi.Wait(old)
	check(err)
	fresh, err := mpi.Irecv(w, buf, 1, 2)
	check(err)
	mpi.Test(old) // aborts the job under MPI_ERRORS_ARE_FATAL
	_, err = mpi.Wait(fresh)
	check(err)
	fmt.Println("stale handle accepted")
}

// waitanyTwice: Waitany over the same slice twice, with an unrelated request
// started and completed in between; then over nothing.
func waitanyTwice() {
	if w.Rank() == 1 {
		check(mpi.Send(w, []int64{1}, 0, 1))
		check(mpi.Send(w, []int64{3}, 0, 3))
		_, err := mpi.Recv(w, make([]byte, 1), 0, 4) // rank 0 has waited for tag 3
		check(err)
		check(mpi.Send(w, []int64{2}, 0, 2))
		return
	}
	a, b := []int64{0}, []int64{0}
	ra, err := mpi.Irecv(w, a, 1, 1)
	check(err)
	rb, err := mpi.Irecv(w, b, 1, 2)
	check(err)
	rs := []*mpi.Request{ra, rb}
	i, st, err := mpi.Waitany(rs...)
	check(err)
	if i != 0 || st.Tag != 1 || a[0] != 1 {
		fail("first Waitany: index %d tag %d value %d, want 0, 1, 1", i, st.Tag, a[0])
	}
	c := []int64{0}
	rc, err := mpi.Irecv(w, c, 1, 3) // unrelated; takes the first request's slot
	check(err)
	_, err = mpi.Wait(rc)
	check(err)
	check(mpi.Send(w, []byte{1}, 1, 4))
	i, st, err = mpi.Waitany(rs...)
	check(err)
	if i != 1 || st.Tag != 2 || b[0] != 2 {
		fail("second Waitany: index %d tag %d value %d, want 1, 2, 2", i, st.Tag, b[0])
	}
	if i, _, err = mpi.Waitany(rs...); err != nil || i != mpi.Undefined {
		fail("third Waitany over the same slice: index %d (%v), want MPI_UNDEFINED (%d)", i, err, mpi.Undefined)
	}
	if i, _, err = mpi.Waitany(); err != nil || i != mpi.Undefined {
		fail("Waitany over nothing: index %d (%v), want MPI_UNDEFINED (%d)", i, err, mpi.Undefined)
	}
	fmt.Println("waitany ok")
}

// leaks leaves one of each kind of resource unreleased at MPI_Finalize: a
// communicator and a user operation (every rank), a receive never matched
// and a message never received (rank 0).
func leaks() {
	_, err := w.Dup()
	check(err)
	mpi.NewOp("leaky", func(in, inout []float64) {}, true)
	if w.Rank() == 0 {
		_, err := mpi.Irecv(w, make([]byte, 4), 1, 9)
		check(err)
		check(mpi.Send(w, []byte("lost"), 1, 3))
	}
	check(mpi.Barrier(w))
}
