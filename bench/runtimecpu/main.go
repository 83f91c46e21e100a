// Command runtimecpu runs a job (bcsrun and its ranks) and reports the CPU
// time each kind of thread took per slice: what the runtime's own threads
// take from ranks that compute (issue 12, item 5).
//
//	runtimecpu [-slice 500us] [-every 20ms] -- bcsrun -n 2 PROGRAM ARGS...
//
// Every -every it reads the CPU time of each thread of the command (bcsrun)
// and of its children (the ranks) from /proc/<pid>/task/<tid>/sched
// (se.sum_exec_runtime, ns; where the kernel lacks it, utime+stime from
// .../stat, in clock ticks). At the end, per process, the thread that used
// the most CPU is its main thread (in bcsrun the strobe thread, which also
// runs the agents of a single node; in a rank the thread that computes and
// waits, its spin included) and the rest are its other threads (the Go
// runtime's: sysmon, GC workers, idle Ps; in bcsrun also the agents' and the
// monitor's goroutines when they leave the strobe thread). CPU time is
// divided by the slices in the process's sampled window (window ÷ slice), so
// a figure is CPU µs per slice; ranks are averaged over the ranks.
//
// The last line is machine-readable for bench/idlecpu.sh:
//
//	runtimecpu: strobe=… bcsrun_other=… rank_main=… rank_other=… (µs per slice)
package main

import (
	"bytes"
	"flag"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// thread is one thread's CPU clock at its first and last sample.
type thread struct{ first, last time.Duration }

// proc is one sampled process.
type proc struct {
	rank        bool // a child of the command (a rank), else the command itself
	first, last time.Time
	threads     map[int]*thread
}

func main() {
	slice := flag.Duration("slice", 500*time.Microsecond, "the job's timeslice")
	every := flag.Duration("every", 20*time.Millisecond, "sampling period")
	flag.Parse()
	if flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: runtimecpu [-slice D] [-every D] -- COMMAND ARGS...")
		os.Exit(2)
	}
	cmd := exec.Command(flag.Arg(0), flag.Args()[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(os.Stderr, "runtimecpu: %v\n", err)
		os.Exit(2)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	procs := map[int]*proc{}
	root := cmd.Process.Pid
	tick := time.NewTicker(*every)
	var err error
wait:
	for {
		select {
		case err = <-done:
			break wait
		case <-tick.C:
			sample(procs, root)
		}
	}
	tick.Stop()
	report(procs, *slice)
	if err != nil {
		fmt.Fprintf(os.Stderr, "runtimecpu: %s: %v\n", flag.Arg(0), err)
		os.Exit(1)
	}
}

// sample reads the CPU clock of every thread of root and of its children.
func sample(procs map[int]*proc, root int) {
	// The ranks are root's children; /proc/<pid>/task/<tid>/children lists
	// only the children one thread forked, so scan for the parent instead.
	pids := []int{root}
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		if p, err := strconv.Atoi(e.Name()); err == nil && p != root && ppid(p) == root {
			pids = append(pids, p)
		}
	}
	now := time.Now()
	for _, pid := range pids {
		tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
		if err != nil {
			continue // exited
		}
		pr := procs[pid]
		if pr == nil {
			pr = &proc{rank: pid != root, first: now, threads: map[int]*thread{}}
			procs[pid] = pr
		}
		pr.last = now
		for _, t := range tasks {
			tid, err := strconv.Atoi(t.Name())
			if err != nil {
				continue
			}
			c, ok := cpuTime(pid, tid)
			if !ok {
				continue
			}
			th := pr.threads[tid]
			if th == nil {
				th = &thread{first: c}
				pr.threads[tid] = th
			}
			th.last = c
		}
	}
}

// ppid is the parent of process p (0 if unknown).
func ppid(p int) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p))
	if err != nil {
		return 0
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 2 {
		return 0
	}
	n, _ := strconv.Atoi(f[1])
	return n
}

// cpuTime is a thread's CPU time: se.sum_exec_runtime (ms with ns digits)
// where the kernel has /proc/.../sched, else utime+stime in clock ticks
// (assumed 100 Hz).
func cpuTime(pid, tid int) (time.Duration, bool) {
	dir := filepath.Join("/proc", strconv.Itoa(pid), "task", strconv.Itoa(tid))
	if b, err := os.ReadFile(filepath.Join(dir, "sched")); err == nil {
		if d, ok := sumExec(b); ok {
			return d, true
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, "stat"))
	if err != nil {
		return 0, false
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0, false
	}
	u, err1 := strconv.ParseInt(f[11], 10, 64)
	s, err2 := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(u+s) * 10 * time.Millisecond, err1 == nil && err2 == nil
}

// sumExec is se.sum_exec_runtime of a /proc/.../sched file (ms, with ns
// in the decimals).
func sumExec(b []byte) (time.Duration, bool) {
	for _, line := range strings.Split(string(b), "\n") {
		if name, val, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(name) == "se.sum_exec_runtime" {
			ms, err := strconv.ParseFloat(strings.TrimSpace(val), 64)
			return time.Duration(math.Round(ms * 1e6)), err == nil
		}
	}
	return 0, false
}

// split is a process's main thread's CPU and the rest, and the slices in
// its window.
func split(p *proc, slice time.Duration) (main, other time.Duration, n float64) {
	var ds []time.Duration
	for _, t := range p.threads {
		ds = append(ds, t.last-t.first)
	}
	if len(ds) == 0 {
		return 0, 0, 0
	}
	main = slices.Max(ds)
	for _, d := range ds {
		other += d
	}
	return main, other - main, float64(p.last.Sub(p.first)) / float64(slice)
}

func report(procs map[int]*proc, slice time.Duration) {
	us := func(d time.Duration, n float64) float64 {
		if n <= 0 {
			return 0
		}
		return float64(d.Nanoseconds()) / 1e3 / n
	}
	var strobe, bother, rmain, rother float64
	ranks, nth := 0, 0
	for _, p := range procs {
		m, o, n := split(p, slice)
		if n < 1 {
			continue
		}
		if p.rank {
			rmain += us(m, n)
			rother += us(o, n)
			ranks++
			nth += len(p.threads) - 1
		} else {
			strobe, bother = us(m, n), us(o, n)
			fmt.Printf("runtimecpu: bcsrun: %d threads over %.0f slices of %v\n", len(p.threads), n, slice)
		}
	}
	if ranks > 0 {
		rmain /= float64(ranks)
		rother /= float64(ranks)
		fmt.Printf("runtimecpu: %d ranks, %d other threads each on average\n", ranks, nth/ranks)
	}
	fmt.Printf("runtimecpu: CPU µs per slice: strobe thread %.1f, bcsrun's other threads %.1f, a rank's main thread %.1f, a rank's other threads %.1f\n",
		strobe, bother, rmain, rother)
	fmt.Printf("runtimecpu: strobe=%.1f bcsrun_other=%.1f rank_main=%.1f rank_other=%.1f\n", strobe, bother, rmain, rother)
}
