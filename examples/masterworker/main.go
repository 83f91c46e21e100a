// Command masterworker is a wildcard-heavy task farm: rank 0 hands out
// -tasks tasks, receives each result with MPI_Recv(MPI_ANY_SOURCE) and
// sends the worker that returned it the next task; a task computes for
// between 1x and 3x -work. Rank 0 checks the sum of the results and prints
// the wall time and a digest of which worker ran which task: the same digest
// in every run under bcsrun --deterministic, a different one in most runs
// without it.
//
//	bcsrun -n 8 masterworker [-tasks N] [-work 200us]
package main

import (
	"flag"
	"fmt"
	"hash/fnv"
	"os"
	"time"

	mpi "github.com/bcsmpi/bcsmpi/mpiapi"
)

const (
	tagTask   = 1
	tagResult = 2
	tagStop   = 3
)

func main() {
	tasks := flag.Int("tasks", 400, "tasks")
	work := flag.Duration("work", 200*time.Microsecond, "base compute time of a task")
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
	if n < 2 {
		check(fmt.Errorf("masterworker needs 2 ranks or more, got %d", n))
	}
	if me != 0 {
		for {
			task := []int64{0}
			st, err := mpi.Recv(w, task, 0, mpi.AnyTag)
			check(err)
			if st.Tag == tagStop {
				break
			}
			busy(*work * time.Duration(1+task[0]%3))
			check(mpi.Send(w, []int64{task[0], task[0] * task[0]}, 0, tagResult))
		}
		check(mpi.Finalize())
		return
	}
	t0 := time.Now()
	next := int64(0)
	for r := 1; r < n && next < int64(*tasks); r++ {
		check(mpi.Send(w, []int64{next}, r, tagTask))
		next++
	}
	out := next
	digest := fnv.New64a()
	var sum int64
	for out > 0 {
		res := make([]int64, 2)
		st, err := mpi.Recv(w, res, mpi.AnySource, tagResult)
		check(err)
		out--
		sum += res[1]
		fmt.Fprintf(digest, "%d:%d ", res[0], st.Source)
		if next < int64(*tasks) {
			check(mpi.Send(w, []int64{next}, st.Source, tagTask))
			next++
			out++
		}
	}
	wall := time.Since(t0)
	for r := 1; r < n; r++ {
		check(mpi.Send(w, []int64{0}, r, tagStop))
	}
	var want int64
	for i := int64(0); i < int64(*tasks); i++ {
		want += i * i
	}
	if sum != want {
		check(fmt.Errorf("sum of results %d, want %d", sum, want))
	}
	fmt.Printf("masterworker: %d ranks, %d tasks: wall %.3f s (%.1f tasks/s), schedule digest %016x\n",
		n, *tasks, wall.Seconds(), float64(*tasks)/wall.Seconds(), digest.Sum64())
	check(mpi.Finalize())
}

//lint:ignore U1000 written so that the compiler keeps busy's arithmetic
var sink float64

// busy computes for d of wall-clock time.
func busy(d time.Duration) {
	x := 1.0
	for t0 := time.Now(); time.Since(t0) < d; {
		for i := 0; i < 1000; i++ {
			x = x*1.0000001 + 1e-9
		}
	}
	sink += x
}
