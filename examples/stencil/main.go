// Command stencil is a 1-D halo-exchange stencil: each rank owns a block of a
// periodic array, computes (about -work of arithmetic per iteration), then
// exchanges halos with both neighbours with Isend/Irecv/Waitall. At the end
// rank 0 checks a checksum against a serial computation and prints timings.
// With -ops N each iteration computes N multiply-adds instead of -work of
// time: a fixed amount of work, so that time a rank is stopped (gang
// scheduling; bench/gang) does not count as work done.
//
//	bcsrun -n 4 stencil [-iters N] [-halo BYTES] [-work 1ms | -ops N]
package main

import (
	"flag"
	"fmt"
	"math"
	"os"
	"time"

	mpi "github.com/bcsmpi/bcsmpi/mpiapi"
)

func main() {
	iters := flag.Int("iters", 200, "iterations")
	haloBytes := flag.Int("halo", 64<<10, "halo size in bytes (float64s)")
	work := flag.Duration("work", time.Millisecond, "compute time per iteration")
	ops := flag.Int("ops", 0, "multiply-adds per iteration instead of -work (0: -work)")
	flag.Parse()
	if err := mpi.Init(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	w := mpi.World()
	me, n := w.Rank(), w.Size()
	check := func(err error) {
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			mpi.Abort(w, 1)
		}
	}
	h := *haloBytes / 8
	local := 4 * h
	u := make([]float64, local+2*h) // [left halo | owned | right halo]
	next := make([]float64, len(u))
	for i := 0; i < local; i++ {
		g := me*local + i
		u[h+i] = math.Sin(float64(g))
	}
	sendL, sendR := make([]float64, h), make([]float64, h)
	recvL, recvR := make([]float64, h), make([]float64, h)
	left, right := (me+n-1)%n, (me+1)%n

	var comp, comm time.Duration
	t0 := time.Now()
	for it := 0; it < *iters; it++ {
		c0 := time.Now()
		if *ops > 0 {
			spin(*ops)
		} else {
			busy(*work)
		}
		comp += time.Since(c0)

		m0 := time.Now()
		copy(sendL, u[h:2*h])
		copy(sendR, u[local:local+h])
		var rs []*mpi.Request
		for _, op := range []func() (*mpi.Request, error){
			func() (*mpi.Request, error) { return mpi.Irecv(w, recvL, left, 1) },
			func() (*mpi.Request, error) { return mpi.Irecv(w, recvR, right, 0) },
			func() (*mpi.Request, error) { return mpi.Isend(w, sendL, left, 0) },
			func() (*mpi.Request, error) { return mpi.Isend(w, sendR, right, 1) },
		} {
			r, err := op()
			check(err)
			rs = append(rs, r)
		}
		check(mpi.Waitall(rs...))
		comm += time.Since(m0)
		copy(u[:h], recvL)
		copy(u[h+local:], recvR)
		for i := h; i < h+local; i++ {
			next[i] = 0.25*u[i-1] + 0.5*u[i] + 0.25*u[i+1]
		}
		u, next = next, u
	}
	wall := time.Since(t0)

	// Gather checksums on rank 0 and compare with a serial run.
	sum := []float64{0}
	for i := h; i < h+local; i++ {
		sum[0] += u[i]
	}
	if me != 0 {
		check(mpi.Send(w, sum, 0, 99))
	} else {
		total := sum[0]
		part := []float64{0}
		for r := 1; r < n; r++ {
			_, err := mpi.Recv(w, part, r, 99)
			check(err)
			total += part[0]
		}
		want := serial(n*local, *iters)
		if math.Abs(total-want) > 1e-6*math.Max(1, math.Abs(want)) {
			check(fmt.Errorf("checksum %.12g, serial %.12g", total, want))
		}
		fmt.Printf("stencil: %d ranks, %d iterations, %d-byte halos: wall %.3f s (%.3f ms/iter; compute %.3f ms/iter, communication %.3f ms/iter), checksum ok\n",
			n, *iters, h*8, wall.Seconds(), wall.Seconds()*1e3/float64(*iters),
			comp.Seconds()*1e3/float64(*iters), comm.Seconds()*1e3/float64(*iters))
	}
	check(mpi.Finalize())
}

//lint:ignore U1000 written so that the compiler keeps busy's arithmetic
var sink float64

// busy computes for d of wall-clock time (time-based rather than a calibrated
// loop count, so that runs are comparable on a shared machine).
func busy(d time.Duration) {
	x := 1.0
	for t0 := time.Now(); time.Since(t0) < d; {
		for i := 0; i < 1000; i++ {
			x = x*1.0000001 + 1e-9
		}
	}
	sink += x
}

// spin computes n multiply-adds.
func spin(n int) {
	x := 1.0
	for range n {
		x = x*1.0000001 + 1e-9
	}
	sink += x
}

func serial(total, iters int) float64 {
	u := make([]float64, total)
	nx := make([]float64, total)
	for i := range u {
		u[i] = math.Sin(float64(i))
	}
	for it := 0; it < iters; it++ {
		for i := range u {
			nx[i] = 0.25*u[(i+total-1)%total] + 0.5*u[i] + 0.25*u[(i+1)%total]
		}
		u, nx = nx, u
	}
	s := 0.0
	for _, v := range u {
		s += v
	}
	return s
}
