package main

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"

	"github.com/bcsmpi/bcsmpi/internal/unix"
	mpi "github.com/bcsmpi/bcsmpi/mpiapi"
)

// Phases of the kernel monitor's scenarios: each has this many iterations
// of 2 ms of busy computation and a barrier.
const contendIters = 12

// contend: three phases of computation and barriers on the rank's CPU (the
// test pins the rank with taskset). With competitor, a busy process at nice
// -10 is pinned to the same CPU during the second phase only: it starts
// after the phase's first barrier returns and is killed after its last one;
// "competitor <pid> <start> <stop>" is printed at the end, with the times
// (CLOCK_MONOTONIC ns) it was started and killed: the test maps them to
// slices with the kernel monitor's TEND column.
func contend(competitor bool) {
	cpu := os.Getenv("BCS_TEST_CPU")
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
		c = exec.Command("nice", "-n", "-10", "taskset", "-c", cpu, "sh", "-c", "while :; do :; done")
		c.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		start = int64(unix.Now())
		check(c.Start())
	}
	phase()
	if c != nil {
		c.Process.Kill()
		c.Wait()
		stop = int64(unix.Now())
		fmt.Printf("competitor %d %d %d\n", c.Process.Pid, start, stop)
	}
	phase()
}
