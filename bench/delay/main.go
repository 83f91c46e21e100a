// Command delay is a rank program measuring the delay of a blocking
// Send/Recv pair in slices: ranks 0 and 1 wake together, each waits a random
// fraction of a slice (so posts are uniform over the slice, as in the paper's
// model), then rank 0 sends and rank 1 receives; each reports the time from
// its post to its return, in slices. Rank 0 prints the mean over both.
//
//	bcsrun -n 2 [--restart early] delay [-iters 400]
package main

import (
	"flag"
	"fmt"
	"math/rand"
	"os"
	"slices"
	"strconv"
	"time"

	mpi "github.com/bcsmpi/bcsmpi/mpiapi"
)

func main() {
	iters := flag.Int("iters", 400, "measured pairs")
	flag.Parse()
	if err := mpi.Init(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	w := mpi.World()
	ns, _ := strconv.Atoi(os.Getenv("BCS_TIMESLICE_NS"))
	slice := time.Duration(ns)
	rng := rand.New(rand.NewSource(int64(w.Rank()) + 1))
	var d []float64
	buf := []byte{0}
	for i := 0; i < *iters; i++ {
		// Re-align: a zero-byte exchange makes both ranks wake at the same strobe.
		mpi.Sendrecv(w, buf[:0], 1-w.Rank(), 1, buf[:0], 1-w.Rank(), 1)
		pause := time.Duration(rng.Float64() * float64(slice))
		for t := time.Now(); time.Since(t) < pause; {
		}
		t0 := time.Now()
		var err error
		if w.Rank() == 0 {
			err = mpi.Send(w, buf, 1, 0)
		} else {
			_, err = mpi.Recv(w, buf, 0, 0)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			mpi.Abort(w, 1)
		}
		d = append(d, float64(time.Since(t0))/float64(slice))
	}
	other := make([]float64, len(d))
	if w.Rank() == 1 {
		mpi.Send(w, d, 0, 2)
	} else {
		mpi.Recv(w, other, 1, 2)
		all := append(d, other...)
		slices.Sort(all)
		sum := 0.0
		for _, x := range all {
			sum += x
		}
		fmt.Printf("delay: %d blocking calls, slice %v: mean %.3f slices, p50 %.3f, p99 %.3f\n", len(all), slice, sum/float64(len(all)), all[len(all)/2], all[len(all)*99/100])
	}
	mpi.Finalize()
}
