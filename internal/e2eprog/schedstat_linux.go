//go:build linux

package main

import (
	"bytes"
	"fmt"
	"os"
	"runtime"
	"strconv"

	"github.com/bcsmpi/bcsmpi/internal/unix"
)

// schedSnap is the kernel's own accounting of this process's threads at one
// instant, summed over the threads: on-CPU time (schedstat's
// sum_exec_runtime, the calling thread's by its CPU-time clock, which
// counts its current run too), run-queue wait (schedstat's run_delay, the
// waits that have ended), involuntary switches (status'
// nonvoluntary_ctxt_switches), and how many other threads were runnable but
// not running (their open waits are not in run_delay yet).
type schedSnap struct {
	at, on, runq, nivcsw int64
	steal                int64 // every CPU's steal time so far, ns (/proc/stat: 10 ms ticks)
	waiting              int
	tids                 map[int]bool
}

// takeSched reads /proc/self/task/*: the caller pins the process to one CPU
// (the kernel monitor's tests do), so no other thread of it runs meanwhile
// and their figures are settled.
func takeSched() (schedSnap, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	self := unix.Gettid()
	s := schedSnap{tids: map[int]bool{}}
	ents, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return s, err
	}
	for _, e := range ents {
		tid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		dir := "/proc/self/task/" + e.Name() + "/"
		ss, err1 := os.ReadFile(dir + "schedstat")
		st, err2 := os.ReadFile(dir + "status")
		if err1 != nil || err2 != nil {
			continue // exited meanwhile
		}
		var on, delay int64
		if _, err := fmt.Sscan(string(ss), &on, &delay); err != nil {
			return s, fmt.Errorf("%sschedstat %q: %v", dir, ss, err)
		}
		niv := int64(-1)
		running := false
		for line := range bytes.Lines(st) {
			if v, ok := bytes.CutPrefix(line, []byte("nonvoluntary_ctxt_switches:")); ok {
				niv, err = strconv.ParseInt(string(bytes.TrimSpace(v)), 10, 64)
				if err != nil {
					return s, fmt.Errorf("%sstatus: %q: %v", dir, line, err)
				}
			}
			if v, ok := bytes.CutPrefix(line, []byte("State:")); ok {
				running = bytes.HasPrefix(bytes.TrimSpace(v), []byte("R"))
			}
		}
		if niv < 0 {
			return s, fmt.Errorf("%sstatus has no nonvoluntary_ctxt_switches", dir)
		}
		if tid == self {
			on = unix.ThreadCPUTime()
			s.at = unix.Now()
		} else if running {
			s.waiting++
		}
		s.tids[tid] = true
		s.on += on
		s.runq += delay
		s.nivcsw += niv
	}
	if s.at == 0 {
		return s, fmt.Errorf("thread %d not in /proc/self/task", self)
	}
	s.steal, err = stealNS()
	return s, err
}

// stealNS is the steal time of every CPU so far (/proc/stat's "cpu" line,
// its eighth figure, in USER_HZ ticks: 100 a second on Linux): the time a
// hypervisor ran something else on the vCPUs. The kernel's sums of a
// thread's time on CPU leave it out (rq_clock_task, with
// CONFIG_PARAVIRT_TIME_ACCOUNTING); the monitor's timestamps do not.
func stealNS() (int64, error) {
	raw, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, err
	}
	line, _, _ := bytes.Cut(raw, []byte("\n"))
	f := bytes.Fields(line)
	if len(f) < 9 || string(f[0]) != "cpu" {
		return 0, fmt.Errorf("/proc/stat: first line %q, want cpu and at least 8 figures", line)
	}
	ticks, err := strconv.ParseInt(string(f[8]), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("/proc/stat: steal %q: %v", f[8], err)
	}
	return ticks * 10_000_000, nil
}
