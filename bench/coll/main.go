// Command coll measures collectives on the runtime.
//
// Latency (-mode latency): every member wakes at the same strobe (a
// barrier), waits a random fraction of a slice (posts uniform over the
// slice, as in the paper's model), then calls Barrier or an Allreduce of 8
// float64; each reports post-to-return time in slices; rank 0 prints mean,
// p50 and p99 over all members and iterations.
//
// Bandwidth (-mode bw): -count calls of Bcast and of Allreduce(SUM) on
// -size bytes of float64; rank 0 prints bytes per second of the vector and
// the ratio to a memcpy of the same size timed in the same process and run.
//
//	bcsrun -n 4 [--nodes 2] coll -mode latency
//	bcsrun -n 2 coll -mode bw -size 16777216
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

var w *mpi.Comm

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		mpi.Abort(w, 1)
	}
}

func main() {
	mode := flag.String("mode", "latency", "latency or bw")
	iters := flag.Int("iters", 300, "latency: measured calls per collective")
	size := flag.Int("size", 16<<20, "bw: bytes per call")
	count := flag.Int("count", 8, "bw: calls per collective")
	flag.Parse()
	check(mpi.Init())
	w = mpi.World()
	switch *mode {
	case "latency":
		latency(*iters)
	case "bw":
		bandwidth(*size, *count)
	default:
		fmt.Fprintf(os.Stderr, "coll: -mode %q, want latency or bw\n", *mode)
		mpi.Abort(w, 2)
	}
	check(mpi.Finalize())
}

func latency(iters int) {
	ns, _ := strconv.Atoi(os.Getenv("BCS_TIMESLICE_NS"))
	slice := time.Duration(ns)
	rng := rand.New(rand.NewSource(int64(w.Rank()) + 1))
	in, out := make([]float64, 8), make([]float64, 8)
	for _, name := range []string{"Barrier", "Allreduce(8 x float64)"} {
		d := make([]float64, iters)
		for i := range d {
			check(mpi.Barrier(w)) // everyone wakes at the same strobe
			pause := time.Duration(rng.Float64() * float64(slice))
			for t := time.Now(); time.Since(t) < pause; {
			}
			t0 := time.Now()
			if name == "Barrier" {
				check(mpi.Barrier(w))
			} else {
				check(mpi.Allreduce(w, in, out, mpi.Sum))
			}
			d[i] = float64(time.Since(t0)) / float64(slice)
		}
		var all []float64
		if w.Rank() == 0 {
			all = make([]float64, iters*w.Size())
		}
		check(mpi.Gather(w, d, all, 0))
		if w.Rank() == 0 {
			slices.Sort(all)
			sum := 0.0
			for _, x := range all {
				sum += x
			}
			fmt.Printf("%-24s %d ranks: mean %.2f slices, p50 %.2f, p99 %.2f (%d calls, slice %v)\n", name, w.Size(),
				sum/float64(len(all)), all[len(all)/2], all[len(all)*99/100], len(all), slice)
		}
	}
}

func bandwidth(size, count int) {
	n := size / 8
	src, dst := make([]float64, n), make([]float64, n)
	for i := range src {
		src[i] = float64(i + w.Rank())
	}
	copy(dst, src) // fault the pages in
	t0 := time.Now()
	for range count {
		copy(dst, src)
	}
	memcpy := float64(size) * float64(count) / time.Since(t0).Seconds()
	for _, name := range []string{"Bcast", "Allreduce"} {
		check(mpi.Barrier(w))
		t0 := time.Now()
		for range count {
			if name == "Bcast" {
				check(mpi.Bcast(w, src, 0))
			} else {
				check(mpi.Allreduce(w, src, dst, mpi.Sum))
			}
		}
		el := time.Since(t0)
		if w.Rank() == 0 {
			bw := float64(size) * float64(count) / el.Seconds()
			fmt.Printf("%-9s %d ranks, %d MiB: %.1f ms per call, %.0f MB/s, memcpy %.0f MB/s, ratio %.3f\n", name, w.Size(), size>>20,
				float64(el.Microseconds())/1000/float64(count), bw/1e6, memcpy/1e6, bw/memcpy)
		}
	}
}
