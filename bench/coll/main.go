// Command coll measures collectives on the runtime.
//
// Latency (-mode latency): every member wakes at the same strobe (a
// barrier), waits a random fraction of a slice (posts uniform over the
// slice, as in the paper's model), then calls Barrier or an Allreduce of 8
// float64. Rank 0 prints, in slices over all members and iterations, the
// time from each member's own post to its return, and from the last
// member's post to each return (the runtime's part: a collective cannot
// start before its last member arrives; with more ranks than cores the late
// arrivals are the processes waiting for a core).
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
	p := w.Size()
	for _, name := range []string{"Barrier", "Allreduce(8 x float64)"} {
		// Wall-clock post and return times (comparable across the job's
		// processes on one host).
		post, ret := make([]int64, iters), make([]int64, iters)
		for i := range post {
			check(mpi.Barrier(w)) // everyone wakes at the same strobe
			pause := time.Duration(rng.Float64() * float64(slice))
			for t := time.Now(); time.Since(t) < pause; {
			}
			post[i] = time.Now().UnixNano()
			if name == "Barrier" {
				check(mpi.Barrier(w))
			} else {
				check(mpi.Allreduce(w, in, out, mpi.Sum))
			}
			ret[i] = time.Now().UnixNano()
		}
		var posts, rets []int64
		if w.Rank() == 0 {
			posts, rets = make([]int64, iters*p), make([]int64, iters*p)
		}
		check(mpi.Gather(w, post, posts, 0))
		check(mpi.Gather(w, ret, rets, 0))
		if w.Rank() == 0 {
			var own, last []float64
			for i := range iters {
				lastPost := int64(0)
				for r := range p {
					lastPost = max(lastPost, posts[r*iters+i])
				}
				for r := range p {
					own = append(own, float64(rets[r*iters+i]-posts[r*iters+i])/float64(slice))
					last = append(last, float64(rets[r*iters+i]-lastPost)/float64(slice))
				}
			}
			fmt.Printf("%-24s %d ranks: from own post: mean %.2f slices, p50 %.2f, p99 %.2f; from the last member's post: mean %.2f, p50 %.2f, p99 %.2f (%d calls, slice %v)\n",
				name, p, mean(own), pct(own, 50), pct(own, 99), mean(last), pct(last, 50), pct(last, 99), len(own), slice)
		}
	}
}

func mean(v []float64) float64 {
	s := 0.0
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}

func pct(v []float64, q int) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)*q/100]
}

func bandwidth(size, count int) {
	n := size / 8
	src, dst := make([]float64, n), make([]float64, n)
	scratch := make([]float64, n)
	for i := range src {
		src[i] = float64(i + w.Rank())
	}
	copy(dst, src) // fault the pages in
	copy(scratch, src)
	// memcpy is timed between the collective calls, in the same process, and
	// its median taken: the host's memory bandwidth drifts during a run.
	var memcpy []float64
	timeCopy := func() {
		t0 := time.Now()
		copy(scratch, src)
		memcpy = append(memcpy, float64(size)/time.Since(t0).Seconds())
	}
	for _, name := range []string{"Bcast", "Allreduce"} {
		check(mpi.Barrier(w))
		var el time.Duration
		for range count {
			timeCopy()
			check(mpi.Barrier(w))
			t0 := time.Now()
			if name == "Bcast" {
				check(mpi.Bcast(w, src, 0))
			} else {
				check(mpi.Allreduce(w, src, dst, mpi.Sum))
			}
			el += time.Since(t0)
		}
		if w.Rank() == 0 {
			bw := float64(size) * float64(count) / el.Seconds()
			mc := pct(memcpy, 50)
			fmt.Printf("%-9s %d ranks, %d MiB: %.1f ms per call, %.0f MB/s, memcpy %.0f MB/s (median of %d), ratio %.3f\n", name, w.Size(), size>>20,
				float64(el.Microseconds())/1000/float64(count), bw/1e6, mc/1e6, len(memcpy), bw/mc)
		}
	}
}
