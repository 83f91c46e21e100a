// Command computephase runs a calibrated compute loop (bench/peers' fixed
// work: a dependent chain of multiply-adds) and measures what the scheduler
// saw of each compute phase, so that bench/kernel-explain.sh can compare the
// same work under bcsmpi with the same work in a plain process.
//
//	computephase calibrate                     loops of the work for 1 ms
//	bcsrun -n N computephase mpi LOOPS ITERS OUT   the stencil of bench/peers
//	                                           (work, then 64 KiB halos to both
//	                                           neighbours, Waitall)
//	computephase plain LOOPS ITERS OUT         the same work, no MPI, no
//	                                           communication
//
// Around every compute phase (the work only) the thread reads its CPU clock
// (CLOCK_THREAD_CPUTIME_ID: time on CPU), its /proc/thread-self/schedstat
// (run_delay: time runnable waiting for a CPU),
// /proc/thread-self/status (involuntary context switches) and
// /proc/thread-self/sched (migrations, where the kernel has
// CONFIG_SCHED_DEBUG), outside the timed work, and sums the differences.
// The goroutine is locked to its thread. OUT gets one CSV line (header
// included) per process: mode, rank, iters, wall_ns, oncpu_ns, runq_ns,
// nivcsw, nmigr, and the median and p90 of the phases' wall times. The
// process appends "-rank<R>.csv" (mpi) or "-<pid>.csv" (plain) to OUT.
package main

import (
	"bytes"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"time"

	"github.com/bcsmpi/bcsmpi/internal/unix"
	mpi "github.com/bcsmpi/bcsmpi/mpiapi"
)

//lint:ignore U1000 written so that the compiler keeps the calibrated work
var sink float64

// work is bench/peers' fixed work (gotwin's): keep the two the same.
func work(loops int) {
	x := 1.0
	for i := 0; i < loops; i++ {
		x = x*1.0000001 + 1e-9
	}
	sink += x
}

func calibrate() int {
	for loops := 1000; ; loops *= 2 {
		s := time.Now()
		work(loops)
		if el := time.Since(s); el > 50*time.Millisecond {
			best := el
			for i := 0; i < 5; i++ {
				s = time.Now()
				work(loops)
				best = min(best, time.Since(s))
			}
			return int(float64(loops) * float64(time.Millisecond) / float64(best))
		}
	}
}

// sched is what the kernel says of this thread.
type sched struct{ oncpu, runq, nivcsw, nmigr int64 }

var buf = make([]byte, 8192)

func readInto(path string) []byte {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	n, _ := f.Read(buf)
	f.Close()
	return buf[:n]
}

// field returns the integer after the first occurrence of key (skipping
// spaces, tabs and colons), or -1.
func field(b []byte, key string) int64 {
	i := bytes.Index(b, []byte(key))
	if i < 0 {
		return -1
	}
	b = b[i+len(key):]
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t' || b[0] == ':') {
		b = b[1:]
	}
	j := 0
	for j < len(b) && b[j] >= '0' && b[j] <= '9' {
		j++
	}
	v, err := strconv.ParseInt(string(b[:j]), 10, 64)
	if err != nil {
		return -1
	}
	return v
}

// The counters are read so that the run queue's and the wall clock's
// readings are nearest the work: a wait between them and the work would be
// counted as runnable time outside the timed phase.
func (s *sched) misc() {
	s.nivcsw = field(readInto("/proc/thread-self/status"), "nonvoluntary_ctxt_switches")
	s.nmigr = field(readInto("/proc/thread-self/sched"), "se.nr_migrations")
}

// cpu reads the thread's CPU clock: schedstat's time on CPU is stale
// while the thread runs (updated at the tick or a switch), the clock is not.
func (s *sched) cpu() {
	s.oncpu = unix.ThreadCPUTime()
}

// queue reads run_delay, which grows only while the thread waits, so it
// is current whenever the thread reads it.
func (s *sched) queue() {
	if f := bytes.Fields(readInto("/proc/thread-self/schedstat")); len(f) >= 2 {
		s.runq, _ = strconv.ParseInt(string(f[1]), 10, 64)
	}
}

type result struct {
	sched
	wall   int64
	phases []int64
}

// phase runs the work once and adds what it took.
func (r *result) phase(loops int) {
	var a, b sched
	a.misc()
	a.cpu()
	a.queue()
	s := time.Now()
	work(loops)
	el := time.Since(s).Nanoseconds()
	b.queue()
	b.cpu()
	b.misc()
	r.wall += el
	r.phases = append(r.phases, el)
	r.oncpu += b.oncpu - a.oncpu
	r.runq += b.runq - a.runq
	if a.nivcsw >= 0 && b.nivcsw >= 0 {
		r.nivcsw += b.nivcsw - a.nivcsw
	} else {
		r.nivcsw = -1
	}
	if a.nmigr >= 0 && b.nmigr >= 0 && r.nmigr >= 0 {
		r.nmigr += b.nmigr - a.nmigr
	} else {
		r.nmigr = -1 // the kernel does not say
	}
}

func (r *result) write(path, mode string, rank int) error {
	p := slices.Clone(r.phases)
	slices.Sort(p)
	line := fmt.Sprintf("mode,rank,iters,wall_ns,oncpu_ns,runq_ns,nivcsw,nmigr,p50_ns,p90_ns\n%s,%d,%d,%d,%d,%d,%d,%d,%d,%d\n",
		mode, rank, len(p), r.wall, r.oncpu, r.runq, r.nivcsw, r.nmigr, p[len(p)/2], p[len(p)*9/10])
	return os.WriteFile(path, []byte(line), 0o644)
}

func fail(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "computephase:", err)
		os.Exit(1)
	}
}

func main() {
	runtime.LockOSThread()
	if len(os.Args) == 2 && os.Args[1] == "calibrate" {
		fmt.Println(calibrate())
		return
	}
	if len(os.Args) != 5 || (os.Args[1] != "mpi" && os.Args[1] != "plain") {
		fmt.Fprintln(os.Stderr, "usage: computephase calibrate | computephase mpi|plain LOOPS ITERS OUT")
		os.Exit(2)
	}
	loops, err1 := strconv.Atoi(os.Args[2])
	iters, err2 := strconv.Atoi(os.Args[3])
	if err1 != nil || err2 != nil || loops < 1 || iters < 1 {
		fmt.Fprintf(os.Stderr, "computephase: LOOPS = %q, ITERS = %q: want positive numbers\n", os.Args[2], os.Args[3])
		os.Exit(2)
	}
	out := os.Args[4]
	r := &result{phases: make([]int64, 0, iters)}
	if os.Args[1] == "plain" {
		for i := 0; i < iters; i++ {
			r.phase(loops)
		}
		fail(r.write(fmt.Sprintf("%s-%d.csv", out, os.Getpid()), "plain", -1))
		return
	}
	fail(mpi.Init())
	w := mpi.World()
	me, np := w.Rank(), w.Size()
	check := func(err error) {
		if err != nil {
			fmt.Fprintln(os.Stderr, "computephase:", err)
			mpi.Abort(w, 1)
		}
	}
	h := 64 << 10
	left, right := (me+np-1)%np, (me+1)%np
	sl, sr, rl, rr := make([]byte, h), make([]byte, h), make([]byte, h), make([]byte, h)
	rs := make([]*mpi.Request, 4)
	check(mpi.Barrier(w))
	for it := 0; it < iters; it++ {
		r.phase(loops)
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
	}
	check(r.write(fmt.Sprintf("%s-rank%d.csv", out, me), "bcs", me))
	fail(mpi.Finalize())
}
