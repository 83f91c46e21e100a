// Command cg solves A x = b by the conjugate gradient method on a vector
// distributed over the ranks: A is the 1-D Laplacian with a small shift
// (tridiagonal 2+s, -1), b is all ones. Every iteration does one halo
// exchange (Isend/Irecv with both neighbours, one Waitall) and two Allreduce calls for the
// dot products, so it is dominated by allreduce latency, like real Krylov
// solvers at scale.
//
// Rank 0 then repeats the whole solve serially, summing the dot products
// block by block and then in rank order (the order the runtime's reduction
// uses), and checks that the residual history is the same bit for bit: the
// parallel run is deterministic and equals a serial computation.
//
//	bcsrun -n 4 cg -n 100000
package main

import (
	"flag"
	"fmt"
	"math"
	"os"
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

// block is the range of rows rank r of p owns.
func block(n, p, r int) (lo, hi int) {
	q, rem := n/p, n%p
	lo = r*q + min(r, rem)
	hi = lo + q
	if r < rem {
		hi++
	}
	return
}

// solve runs CG on m local unknowns (x = 0, b = 1) until the relative
// residual reaches tol or maxIter iterations. dot is the global dot product;
// halo fills the ghost cells d[0] and d[m+1] of the search direction. It
// returns x, the history of r·r and the final relative residual.
func solve(m, maxIter int, tol, shift float64, dot func(a, b []float64) float64, halo func(d []float64)) ([]float64, []float64, float64) {
	x, r, q := make([]float64, m), make([]float64, m), make([]float64, m)
	d := make([]float64, m+2) // the search direction with one ghost cell at each end
	for i := range r {
		r[i] = 1
		d[i+1] = 1
	}
	rr := dot(r, r)
	b2 := rr
	var history []float64
	for iter := 0; iter < maxIter && math.Sqrt(rr/b2) > tol; iter++ {
		halo(d)
		for i := 0; i < m; i++ {
			q[i] = (2+shift)*d[i+1] - d[i] - d[i+2]
		}
		alpha := rr / dot(d[1:m+1], q)
		for i := 0; i < m; i++ {
			x[i] += alpha * d[i+1]
			r[i] -= alpha * q[i]
		}
		rrNew := dot(r, r)
		beta := rrNew / rr
		rr = rrNew
		for i := 0; i < m; i++ {
			d[i+1] = r[i] + beta*d[i+1]
		}
		history = append(history, rr)
	}
	return x, history, math.Sqrt(rr / b2)
}

func main() {
	n := flag.Int("n", 20000, "unknowns")
	maxIter := flag.Int("iters", 400, "iteration limit")
	tol := flag.Float64("tol", 1e-8, "relative residual to reach")
	shift := flag.Float64("shift", 0.01, "diagonal shift s (conditioning)")
	flag.Parse()
	check(mpi.Init())
	w = mpi.World()
	me, p := w.Rank(), w.Size()
	lo, hi := block(*n, p, me)
	m := hi - lo
	left, right := me-1, me+1
	if left < 0 {
		left = mpi.ProcNull
	}
	if right >= p {
		right = mpi.ProcNull
	}
	dot := func(a, b []float64) float64 {
		out := []float64{0}
		check(mpi.Allreduce(w, []float64{local(a, b, 0, len(a))}, out, mpi.Sum))
		return out[0]
	}
	t0 := time.Now()
	x, history, res := solve(m, *maxIter, *tol, *shift, dot, func(d []float64) { halo(d, m, left, right) })
	elapsed := time.Since(t0)
	iter := len(history)
	xsum := dot(x, make1(m))
	if me == 0 {
		// The serial run: the whole vector in one process, dot products
		// summed per block and then in rank order, as Allreduce does.
		serialDot := func(a, b []float64) float64 {
			total := 0.0
			for k := 0; k < p; k++ {
				lo, hi := block(*n, p, k)
				if s := local(a, b, lo, hi); k == 0 {
					total = s
				} else {
					total += s
				}
			}
			return total
		}
		_, ref, _ := solve(*n, *maxIter, *tol, *shift, serialDot, func([]float64) {})
		same := len(ref) == iter
		for i := 0; same && i < iter; i++ {
			same = math.Float64bits(ref[i]) == math.Float64bits(history[i])
		}
		fmt.Printf("cg: %d unknowns on %d ranks: %d iterations in %v (%.2f ms/iteration, 2 allreduce + 1 halo exchange each), residual %.3g, sum(x) = %.12g\n",
			*n, p, iter, elapsed.Round(time.Millisecond), float64(elapsed.Microseconds())/1000/float64(max(iter, 1)), res, xsum)
		if !same {
			fmt.Println("cg: MISMATCH: the residual history differs from the serial run")
			mpi.Abort(w, 1)
		}
		fmt.Println("cg: residual history identical to the serial run, bit for bit")
	}
	check(mpi.Finalize())
}

// local is the dot product of a[lo:hi] and b[lo:hi], summed left to right.
func local(a, b []float64, lo, hi int) float64 {
	s := 0.0
	for i := lo; i < hi; i++ {
		s += a[i] * b[i]
	}
	return s
}

// halo sends my first interior value of d to the left and my last to the
// right, both directions in flight at once (one exchange, not two).
func halo(d []float64, m, left, right int) {
	var rs []*mpi.Request
	for _, op := range []func() (*mpi.Request, error){
		func() (*mpi.Request, error) { return mpi.Irecv(w, d[m+1:m+2], right, 1) },
		func() (*mpi.Request, error) { return mpi.Irecv(w, d[0:1], left, 2) },
		func() (*mpi.Request, error) { return mpi.Isend(w, d[1:2], left, 1) },
		func() (*mpi.Request, error) { return mpi.Isend(w, d[m:m+1], right, 2) },
	} {
		r, err := op()
		check(err)
		rs = append(rs, r)
	}
	check(mpi.Waitall(rs...))
}

func make1(m int) []float64 {
	v := make([]float64, m)
	for i := range v {
		v[i] = 1
	}
	return v
}
