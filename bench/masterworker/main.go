// Command masterworker is a wildcard-heavy benchmark: rank 0 hands out
// tasks, each worker computes one (a busy loop of -work) and sends its result
// back, and the master receives every result with MPI_Recv(ANY_SOURCE) and
// answers that worker with its next task. Which worker gets which task
// depends on timing; the output (tasks per worker, and a checksum that
// depends on who computed what) shows it, so a replayed run prints the
// recorded line. Used to measure record and replay (README: Record and
// replay) and deterministic mode.
//
//	bcsrun -n 4 ./masterworker -tasks 2000 -work 100us
package main

import (
	"flag"
	"fmt"
	"os"
	"time"

	mpi "github.com/bcsmpi/bcsmpi/mpiapi"
)

const (
	tagTask   = 1
	tagResult = 2
)

func main() {
	tasks := flag.Int("tasks", 2000, "tasks to hand out")
	work := flag.Duration("work", 100*time.Microsecond, "compute time per task")
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
		fmt.Fprintln(os.Stderr, "masterworker: needs at least 2 ranks")
		mpi.Abort(w, 1)
	}
	t0 := time.Now()
	if me == 0 {
		next, done := 0, 0
		per := make([]int, n)
		var sum uint64
		res := []int64{0, 0}
		for r := 1; r < n; r++ { // a first task for everyone (-1: none left)
			t := int64(-1)
			if next < *tasks {
				t = int64(next)
				next++
			}
			check(mpi.Send(w, []int64{t}, r, tagTask))
		}
		for done < min(*tasks, next) {
			st, err := mpi.Recv(w, res, mpi.AnySource, tagResult)
			check(err)
			done++
			per[st.Source]++
			sum = sum*31 + uint64(res[1])*uint64(st.Source)
			t := int64(-1)
			if next < *tasks {
				t = int64(next)
				next++
			}
			check(mpi.Send(w, []int64{t}, st.Source, tagTask))
		}
		fmt.Printf("masterworker: %d tasks on %d workers in %.3f s; tasks per worker %v; checksum %x\n", done, n-1, time.Since(t0).Seconds(), per[1:], sum)
	} else {
		task := []int64{0}
		for {
			_, err := mpi.Recv(w, task, 0, tagTask)
			check(err)
			if task[0] < 0 {
				break
			}
			end := time.Now().Add(*work)
			x := task[0]
			for time.Now().Before(end) {
				x = x*6364136223846793005 + 1442695040888963407
			}
			check(mpi.Send(w, []int64{task[0], task[0]*7 + 1}, 0, tagResult))
			_ = x
		}
	}
	check(mpi.Finalize())
}
