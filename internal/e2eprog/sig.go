package main

import (
	"errors"
	"fmt"
	"os"

	mpi "github.com/bcsmpi/bcsmpi/mpiapi"
)

// typeMismatch: rank 0 sends 4 float64s (32 bytes) synchronously, rank 1
// receives 8 int32s (32 bytes): a type signature mismatch (MPI_ERR_TYPE) on
// both sides. Under the fatal handler (rank 0's send then a buffered
// standard one, which completed when exchanged) rank 1's report ends the job; with
// ret, both ranks check the class, then a []float64 into []byte is accepted.
func typeMismatch(ret bool) {
	if ret {
		mpi.SetErrhandler(mpi.ErrorsReturn)
	}
	var err error
	switch w.Rank() {
	case 0: // fatal: a buffered send, so that only the receive fails
		if ret {
			err = mpi.Ssend(w, []float64{1, 2, 3, 4}, 1, 0)
		} else {
			err = mpi.Send(w, []float64{1, 2, 3, 4}, 1, 0)
		}
	case 1:
		_, err = mpi.Recv(w, make([]int32, 8), 0, 0)
	}
	if !ret {
		return
	}
	if w.Rank() < 2 && !errors.Is(err, mpi.ErrType) {
		fmt.Printf("rank %d: got %v, want MPI_ERR_TYPE\n", w.Rank(), err)
		os.Exit(4)
	}
	switch w.Rank() {
	case 0:
		check(mpi.Send(w, []float64{1.5}, 1, 1))
	case 1:
		b := make([]byte, 8)
		_, err := mpi.Recv(w, b, 0, 1)
		check(err)
	}
	fmt.Printf("typemismatch ok %d\n", w.Rank())
}

// mprims: the primitives the MMDS names on their own: rank 0 Ssends and
// Issends to rank 1, which takes the first with Mprobe and Mrecv and the
// second with Improbe and Imrecv.
func mprims() {
	switch w.Rank() {
	case 0:
		check(mpi.Ssend(w, []int32{1, 2}, 1, 5))
		r, err := mpi.Issend(w, []int32{3, 4}, 1, 6)
		check(err)
		_, err = mpi.Wait(r)
		check(err)
	case 1:
		buf := make([]int32, 2)
		m, _, err := mpi.Mprobe(w, 0, 5)
		check(err)
		_, err = mpi.Mrecv(m, buf)
		check(err)
		for {
			m, ok, _, err := mpi.Improbe(w, 0, 6)
			check(err)
			if ok {
				r, err := mpi.Imrecv(m, buf)
				check(err)
				_, err = mpi.Wait(r)
				check(err)
				break
			}
		}
		if buf[0] != 3 || buf[1] != 4 {
			fmt.Printf("rank 1: got %v, want [3 4]\n", buf)
			os.Exit(4)
		}
	}
	fmt.Printf("mprims ok %d\n", w.Rank())
}
