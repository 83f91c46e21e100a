// Command gotwin is the Go twin of bench/peers/peers.c on mpiapi: the same
// measures, iterations, sizes and output lines, so bench/peers/run.sh can put
// bcsmpi beside Open MPI and MPICH. Keep the two in step.
//
//	gotwin calibrate            (no MPI) loop count of the fixed work for 1 ms
//	bcsrun -n N gotwin all LOOPS
//	bcsrun -n N gotwin stencil LOOPS ITERS
package main

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"time"

	mpi "github.com/bcsmpi/bcsmpi/mpiapi"
)

var t0 = time.Now()

func now() float64 { return time.Since(t0).Seconds() }

//lint:ignore U1000 written so that the compiler keeps the calibrated work
var sink float64

// work is the fixed work: a dependent chain of multiply-adds, loops of them.
func work(loops int) {
	x := 1.0
	for i := 0; i < loops; i++ {
		x = x*1.0000001 + 1e-9
	}
	sink += x
}

func calibrate() int {
	for loops := 1000; ; loops *= 2 {
		s := now()
		work(loops)
		if el := now() - s; el > 0.05 {
			best := el
			for i := 0; i < 5; i++ {
				s = now()
				work(loops)
				best = min(best, now()-s)
			}
			return int(float64(loops) * 1e-3 / best)
		}
	}
}

func median(v []float64) float64 {
	slices.Sort(v)
	return v[len(v)/2]
}

var (
	w      *mpi.Comm
	me, np int
	times  = make([]float64, 1000)
)

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		mpi.Abort(w, 1)
	}
}

func pingpong(buf []byte, iters int, wantMedian bool) float64 {
	peer := 1 - me
	check(mpi.Barrier(w))
	total := now()
	for i := 0; i < iters; i++ {
		s := now()
		switch me {
		case 0:
			check(mpi.Send(w, buf, peer, 1))
			_, err := mpi.Recv(w, buf, peer, 1)
			check(err)
		case 1:
			_, err := mpi.Recv(w, buf, peer, 1)
			check(err)
			check(mpi.Send(w, buf, peer, 1))
		}
		times[i] = (now() - s) / 2
	}
	total = (now() - total) / (2 * float64(iters))
	if wantMedian {
		return median(times[:iters])
	}
	return total
}

func stencil(loops, iters int) {
	h := 64 << 10
	left, right := (me+np-1)%np, (me+1)%np
	sl, sr, rl, rr := make([]byte, h), make([]byte, h), make([]byte, h), make([]byte, h)
	var comp, comm float64
	check(mpi.Barrier(w))
	start := now()
	rs := make([]*mpi.Request, 4)
	for it := 0; it < iters; it++ {
		c0 := now()
		work(loops)
		m0 := now()
		comp += m0 - c0
		var err error
		rs[0], err = mpi.Irecv(w, rl, left, 1)
		check(err)
		rs[1], err = mpi.Irecv(w, rr, right, 0)
		check(err)
		rs[2], err = mpi.Isend(w, sl, left, 0)
		check(err)
		rs[3], err = mpi.Isend(w, sr, right, 1)
		check(err)
		check(mpi.Waitall(rs...))
		comm += now() - m0
	}
	wall := now() - start
	in, out := []float64{comm, comp, wall}, make([]float64, 3)
	check(mpi.Reduce(w, in, out, mpi.Sum, 0))
	if me == 0 {
		d := float64(np * iters)
		fmt.Printf("st_comm_ms %.4f\nst_comp_ms %.4f\nst_wall_ms %.4f\n", out[0]*1e3/d, out[1]*1e3/d, out[2]*1e3/d)
	}
}

func main() {
	if len(os.Args) >= 2 && os.Args[1] == "calibrate" {
		fmt.Println(calibrate())
		return
	}
	if len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: gotwin calibrate | gotwin all LOOPS | gotwin stencil LOOPS ITERS")
		os.Exit(2)
	}
	loops, err := strconv.Atoi(os.Args[2])
	if err != nil {
		fmt.Fprintf(os.Stderr, "gotwin: LOOPS = %q, want a number\n", os.Args[2])
		os.Exit(2)
	}
	if err := mpi.Init(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	w = mpi.World()
	me, np = w.Rank(), w.Size()
	if os.Args[1] == "stencil" {
		iters := 300
		if len(os.Args) > 3 {
			iters, err = strconv.Atoi(os.Args[3])
			check(err)
		}
		stencil(loops, iters)
		check(mpi.Finalize())
		return
	}
	buf := make([]byte, 16<<20)
	for i := range buf {
		buf[i] = 1
	}
	if lat := pingpong(buf[:8], 200, true); me == 0 {
		fmt.Printf("lat_us %.3f\n", lat*1e6)
	}
	for _, s := range []int{8, 1024, 65536, 1 << 20, 16 << 20} {
		iters := 100
		if s >= 16<<20 {
			iters = 4
		} else if s >= 1<<20 {
			iters = 32
		}
		pingpong(buf[:s], 2, false) // warm up
		if t := pingpong(buf[:s], iters, false); me == 0 {
			fmt.Printf("pp_%d_MBps %.4g\n", s, float64(s)/t/1e6)
		}
	}
	// streaming window: 64 x 1 MiB, rank 0 to rank 1, 3 rounds after a warm-up
	{
		n, m := 64, 1<<20
		win := make([]byte, n*m)
		for i := range win {
			win[i] = 2
		}
		rs := make([]*mpi.Request, n)
		var s float64
		for round := 0; round < 4; round++ {
			if round == 1 {
				check(mpi.Barrier(w))
				s = now()
			}
			for i := 0; i < n && me < 2; i++ {
				if me == 0 {
					rs[i], err = mpi.Isend(w, win[i*m:(i+1)*m], 1, i)
				} else {
					rs[i], err = mpi.Irecv(w, win[i*m:(i+1)*m], 0, i)
				}
				check(err)
			}
			if me < 2 {
				check(mpi.Waitall(rs...))
			}
			if me == 1 {
				check(mpi.Send(w, buf[:0], 0, 99))
			}
			if me == 0 {
				_, err := mpi.Recv(w, buf[:0], 1, 99)
				check(err)
			}
		}
		if el := now() - s; me == 0 {
			fmt.Printf("stream_MBps %.1f\n", 3*float64(n*m)/el/1e6)
		}
	}
	check(mpi.Barrier(w))
	for i := 0; i < 200; i++ {
		s := now()
		check(mpi.Barrier(w))
		times[i] = now() - s
	}
	if me == 0 {
		fmt.Printf("barrier_us %.3f\n", median(times[:200])*1e6)
	}
	in, out := []float64{1, 2, 3, 4, 5, 6, 7, 8}, make([]float64, 8)
	for i := 0; i < 200; i++ {
		s := now()
		check(mpi.Allreduce(w, in, out, mpi.Sum))
		times[i] = now() - s
	}
	if me == 0 {
		fmt.Printf("allreduce_us %.3f\n", median(times[:200])*1e6)
	}
	stencil(loops, 300)
	check(mpi.Finalize())
}
