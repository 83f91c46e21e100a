package main

import (
	"fmt"
	"os"
	"os/exec"
	"time"

	"github.com/bcsmpi/bcsmpi/internal/unix"
	mpi "github.com/bcsmpi/bcsmpi/mpiapi"
)

// Phases of the kernel monitor's scenarios: each has this many iterations
// of 2 ms of busy computation and a barrier.
const contendIters = 12

// HogTime is how long the competitor of contend runs.
const HogTime = 200 * time.Millisecond

// contend: three phases of computation and barriers on the rank's CPU (the
// test pins the rank with taskset, and runs it at SCHED_FIFO 1 so that the
// host's other load does not preempt it). With competitor, after the first
// phase rank 0 starts a busy process (this program's hog) pinned to the same
// CPU at SCHED_FIFO 2, which preempts the rank for HogTime and exits; the
// rank runs the second phase meanwhile, waits for the competitor to end and
// runs the third. "competitor <pid> <start> <stop>" is printed at the end,
// with the times (CLOCK_MONOTONIC ns) it was started and ended: the test
// maps them to slices with the kernel monitor's TEND column.
//
// Both scenarios then print the kernel's own accounting of the rank's
// threads (/proc/self/task/*/schedstat and status) between two instants,
// after MPI_Init and after the last phase, for the test to hold the
// monitor's figures against:
//
//	sched <t0> <t1> <on> <runq> <nivcsw> <waiting0> <waiting1> <vanished>
//
// t0, t1 (CLOCK_MONOTONIC ns) bound the interval; on, runq and nivcsw are
// the differences of the threads' summed on-CPU time, run-queue wait
// (ended waits only) and involuntary switches; waiting0 and waiting1 count
// the threads that were runnable but not running at t0 and t1 (a wait open
// there is not, or not wholly, in runq); vanished counts the threads seen
// at t0 and gone at t1 (their figures are lost).
func contend(competitor bool) {
	cpu := os.Getenv("BCS_TEST_CPU")
	s0 := quietSched()
	phase := func() {
		for range contendIters {
			for s := time.Now(); time.Since(s) < 2*time.Millisecond; {
			}
			check(mpi.Barrier(w))
		}
	}
	phase()
	var c *exec.Cmd
	var start, stop int64
	if competitor && w.Rank() == 0 {
		self, err := os.Executable()
		check(err)
		c = exec.Command("chrt", "-f", "2", "taskset", "-c", cpu, self, "hog", HogTime.String())
		c.SysProcAttr = unix.DieWithParent()
		start = int64(unix.Now())
		check(c.Start())
	}
	phase()
	if c != nil {
		check(c.Wait())
		stop = int64(unix.Now())
		fmt.Printf("competitor %d %d %d\n", c.Process.Pid, start, stop)
	}
	phase()
	s1 := quietSched()
	vanished := 0
	for tid := range s0.tids {
		if !s1.tids[tid] {
			vanished++
		}
	}
	fmt.Printf("sched %d %d %d %d %d %d %d %d %d\n", s0.at, s1.at, s1.on-s0.on, s1.runq-s0.runq, s1.nivcsw-s0.nivcsw, s0.waiting, s1.waiting, vanished, s1.steal-s0.steal)
}

// hog spins for the duration d (a string such as 200ms).
func hog(d string) {
	t, err := time.ParseDuration(d)
	if err != nil || t <= 0 || t > time.Minute {
		fmt.Fprintf(os.Stderr, "hog: duration %q, want 1ns .. 1m\n", d)
		os.Exit(2)
	}
	for s := time.Now(); time.Since(s) < t; {
	}
}

// quietSched takes the kernel's figures at an instant when no other thread
// of the rank waits for the CPU, if it finds one in 50 tries (each after
// blocking for 100 µs, which lets the rank's waiting threads run): the
// test compares run-queue waits only then, and reads waiting0/waiting1.
func quietSched() schedSnap {
	var s schedSnap
	var err error
	for range 50 {
		time.Sleep(100 * time.Microsecond)
		s, err = takeSched()
		check(err)
		if s.waiting == 0 {
			break
		}
	}
	return s
}
