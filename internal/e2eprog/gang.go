package main

import (
	"fmt"
	"os"
	"strconv"
	"time"

	mpi "github.com/bcsmpi/bcsmpi/mpiapi"
)

// gangwork ITERS [STOPFILE]: the gang tests' CPU-bound job. Each iteration
// computes for 2 ms, passes a word naming the job's size, the sender and
// the iteration to the right neighbour (checked on receipt: a message of
// another job, or of another iteration, fails), and checks an Allreduce of
// rank-specific values. With STOPFILE it goes on after ITERS iterations
// until rank 0 sees the file (rank 0's decision is broadcast each
// iteration), so that a test can keep the job running while others come
// and go. Rank 0 prints "gangwork ok: N ranks, I iterations".
func gangwork(args []string) {
	iters, err := strconv.Atoi(args[0])
	if err != nil || iters < 1 {
		fail("gangwork %q: want a number of iterations >= 1", args[0])
	}
	stopFile := ""
	if len(args) > 1 {
		stopFile = args[1]
	}
	me, n := w.Rank(), w.Size()
	right, left := (me+1)%n, (me+n-1)%n
	it := 0
	for ; ; it++ {
		if it >= iters {
			if stopFile == "" {
				break
			}
			flag := []int32{0}
			if me == 0 {
				if _, err := os.Stat(stopFile); err == nil {
					flag[0] = 1
				}
			}
			check(mpi.Bcast(w, flag, 0))
			if flag[0] == 1 {
				break
			}
		}
		for s := time.Now(); time.Since(s) < 2*time.Millisecond; {
		}
		word := func(rank int) int64 { return int64(n)<<40 | int64(rank)<<20 | int64(it) }
		recv := []int64{0}
		_, err := mpi.Sendrecv(w, []int64{word(me)}, right, 7, recv, left, 7)
		check(err)
		if recv[0] != word(left) {
			fail("gangwork iteration %d: got %#x from rank %d, want %#x", it, recv[0], left, word(left))
		}
		sum := []int64{0}
		check(mpi.Allreduce(w, []int64{int64(me+1) * int64(it+1)}, sum, mpi.Sum))
		if want := int64(n*(n+1)/2) * int64(it+1); sum[0] != want {
			fail("gangwork iteration %d: Allreduce gave %d, want %d", it, sum[0], want)
		}
	}
	if me == 0 {
		fmt.Printf("gangwork ok: %d ranks, %d iterations\n", n, it)
	}
}
