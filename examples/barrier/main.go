// Command barrier is the benchmark of the paper's §3.3: every rank computes
// for -compute (1.9 ms), then calls MPI_Barrier, -iters (10,000) times. With
// 250 µs slices a correct runtime strobes every 250 µs and schedules one
// barrier every 9 slices (1.9 ms of compute ends in the 8th slice after the
// wake-up; the barrier is exchanged and completed in the next; ranks wake at
// the strobe after that).
//
//	BCS_MDS=main,elan BCS_EMDS_FIRST=7500 BCS_EMDS_SLICES=5000 \
//	  bcsrun -n 2 --timeslice 250us barrier
//	bcsplot getts bcs-mds/latest; bcsplot ncoll bcs-mds/latest --node 0
package main

import (
	"flag"
	"fmt"
	"os"
	"time"

	mpi "github.com/bcsmpi/bcsmpi/mpiapi"
)

func main() {
	iters := flag.Int("iters", 10000, "iterations")
	compute := flag.Duration("compute", 1900*time.Microsecond, "computation between barriers")
	flag.Parse()
	if err := mpi.Init(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	w := mpi.World()
	t0 := time.Now()
	for i := 0; i < *iters; i++ {
		for s := time.Now(); time.Since(s) < *compute; {
		}
		if err := mpi.Barrier(w); err != nil {
			fmt.Fprintln(os.Stderr, err)
			mpi.Abort(w, 1)
		}
	}
	if w.Rank() == 0 {
		per := time.Since(t0) / time.Duration(*iters)
		fmt.Printf("barrier: %d iterations of %v compute + MPI_Barrier: %v per iteration\n", *iters, *compute, per)
	}
	if err := mpi.Finalize(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
