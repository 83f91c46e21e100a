// Command gang measures gang scheduling (issue 17) in one process, through
// launch.Run, with examples/stencil with -ops as the CPU-bound job:
//
//  1. two stencil jobs at multiprogramming level 2 (one gang, quantum -q),
//     once per rank_pin setting of -pins (default off and auto: unpinned,
//     and pinned one rank per core), against each one alone (unpinned, and
//     pinned with rank_pin on), and against the same two uncoordinated (two
//     plain concurrent Runs, each with its own master: today's behaviour);
//     -reps rounds of every case, interleaved, medians reported;
//  2. a long job and a short one submitted while it runs (after -delay of
//     it): the short job's response time against its time alone;
//  3. the cost of a switch (the agents' stop and continue (killpg or cgroup.freeze: -stop) at the
//     strobe, EMDS SWITCHNS) in µs and as a share of the slice, at each
//     quantum of -quanta, once per rank_pin setting of -pins.
//
// Each row of parts 1 and 3 names the CPU lists its ranks were allowed
// (Cpus_allowed_list, sampled every 20 ms): "0|1" is two ranks pinned one
// per core, "0-1" unpinned.
//
// With -ompi PROG (examples/c/stencil.c, the same stencil in C, built with
// mpicc.openmpi), part 1 also runs it under Open MPI's mpirun alone and two
// at once (what two mpiruns sharing a machine do: the kernel time-shares
// their ranks), each job's time against its own time alone.
//
// Usage (see README.md; run.sh builds and runs it):
//
//	gang -prog ./stencil [-ranks 2] [-iters 200] [-ops 1000000] [-q 20] [-quanta 1,20,100] [-pins off,auto] [-reps 1] [-parts 1,2,3] [-ompi ./stencil.ompi]
//
// Times are wall-clock response times (launch.Result.Elapsed: from Run's
// call to its return, start-up included). Only direct switch costs are
// measured; the cache and TLB refill of the incoming job is not.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bcsmpi/bcsmpi/configs"
	"github.com/bcsmpi/bcsmpi/internal/launch"
	"github.com/bcsmpi/bcsmpi/nicthread"
	"github.com/bcsmpi/bcsmpi/strobe"
)

var (
	prog    = flag.String("prog", "./stencil", "the rank program (examples/stencil, run with -ops)")
	ranks   = flag.Int("ranks", 2, "ranks per job")
	iters   = flag.Int("iters", 200, "stencil iterations of a job (the long job runs 4x, the short one 1/2x)")
	ops     = flag.Int("ops", 1_000_000, "multiply-adds per iteration")
	quantum = flag.Uint64("q", 20, "quantum (slices) of parts 1 and 2")
	quanta  = flag.String("quanta", "1,20,100", "quanta of part 3")
	fifo    = flag.Bool("fifo", true, "try SCHED_FIFO for the strobe threads (as bcsrun does); the report says whether it was granted")
	ompi    = flag.String("ompi", "", "part 1 also under Open MPI: examples/c/stencil.c built with mpicc.openmpi (empty: skip)")
	mpirun  = flag.String("mpirun", "mpirun.openmpi", "Open MPI's launcher, for -ompi")
	stop    = flag.String("stop", "signal", "gang_stop: how descheduled ranks are stopped (signal, freezer, auto)")
	pin     = flag.String("pin", "auto", "rank_pin of part 2 and of part 1's uncoordinated jobs: auto (the gang's jobs pinned one rank per core when they fit; alone and uncoordinated unpinned), on (every job pinned), off")
	pins    = flag.String("pins", "off,auto", "rank_pin settings that part 1's gang and part 3 each run with, side by side (off: unpinned; auto: a gang's ranks pinned one per core where they fit)")
	reps    = flag.Int("reps", 1, "part 1: runs of each case, interleaved; the medians are reported")
	parts   = flag.String("parts", "1,2,3", "parts to run")
	delay   = flag.Float64("delay", 0.25, "part 2: the short job is submitted after this fraction of the long job's time alone")
)

func main() {
	flag.Parse()
	p, err := filepath.Abs(*prog)
	check(err)
	*prog = p
	cfg := configs.Default()
	cfg.FIFO = *fifo
	cfg.LeakCheck = "off"
	cfg.GangStop = *stop
	cfg.RankPin = *pin
	check(cfg.Validate())
	fmt.Printf("gang bench: %d ranks per job, %d iterations x %d ops, timeslice %v, gang_stop %s, rank_pin %s (part 2, uncoordinated) and %s (part 1's gang, part 3), %d CPUs\n",
		*ranks, *iters, *ops, cfg.Timeslice, cfg.GangStop, cfg.RankPin, *pins, numCPU())

	pinList := strings.Split(*pins, ",")
	withPin := func(p string) configs.Config {
		c := cfg
		c.RankPin = strings.TrimSpace(p)
		check(c.Validate())
		return c
	}
	for _, p := range pinList {
		withPin(p)
	}
	if *reps < 1 {
		check(fmt.Errorf("-reps %d: want at least 1", *reps))
	}
	part := func(n string) bool { return slices.Contains(strings.Split(*parts, ","), n) }

	// 1. Two jobs: alone (unpinned, and pinned: rank_pin on), gang MPL 2
	// with each rank_pin of -pins, uncoordinated.
	if part("1") {
		partOne(cfg, withPin, pinList)
	}

	// 2. Long + short.
	if part("2") {
		partTwo(cfg)
	}

	// 3. Switch cost per quantum, with each rank_pin of -pins.
	if part("3") {
		fmt.Printf("\n3. switch cost (agent's stop or continue at the strobe, both jobs' nodes; slice %v)\n", cfg.Timeslice)
		fmt.Printf("   %8s %6s %9s %10s %10s %10s %16s %16s %14s  %s\n", "rank_pin", "Q", "switches", "p50 µs", "p99 µs", "mean µs", "p50 % of slice", "p50/Q % of time", "% of time", "ranks' CPUs")
		for _, p := range pinList {
			for _, f := range strings.Split(*quanta, ",") {
				q, err := strconv.ParseUint(strings.TrimSpace(f), 10, 64)
				check(err)
				switchCost(withPin(p), q)
			}
		}
		fmt.Println("\n   (a switch is one stop and one continue, each an agent's killpg or cgroup.freeze write timed at the strobe: p50/p99 are twice the\n   per-call figures, mean is the total over the number of switches; % of time is the measured total over every slice)")
	}
}

// partOne runs part 1: -reps rounds of every case, interleaved, and
// prints each case's median times and their ratios to the medians alone.
func partOne(cfg configs.Config, withPin func(string) configs.Config, pinList []string) {
	type kase struct {
		name string
		cfg  configs.Config
		gang bool
		jobs int
		a, b []time.Duration
		cpus map[string]bool
		note string
	}
	cases := []*kase{{name: "alone, unpinned", cfg: withPin("off"), jobs: 1}, {name: "alone, pinned (rank_pin on)", cfg: withPin("on"), jobs: 1}}
	for _, p := range pinList {
		cases = append(cases, &kase{name: fmt.Sprintf("gang MPL 2, Q %d, rank_pin %s", *quantum, strings.TrimSpace(p)), cfg: withPin(p), gang: true, jobs: 2})
	}
	cases = append(cases, &kase{name: fmt.Sprintf("uncoordinated, rank_pin %s", *pin), cfg: cfg, jobs: 2})
	fifo := ""
	for range *reps {
		for _, c := range cases {
			var g *nicthread.Gang
			if c.gang {
				g = newGang(c.cfg, *quantum, nil)
			}
			specs := []spec{{iters: *iters}, {iters: *iters}}[:c.jobs]
			stop := sampleCPUs(&c.cpus)
			r := run(c.cfg, g, specs...)
			stop()
			c.a = append(c.a, r[0].Elapsed)
			if c.jobs == 2 {
				c.b = append(c.b, r[1].Elapsed)
			}
			if g != nil {
				g.Close()
				c.note = fmt.Sprintf("slices run/alive: %d/%d, %d/%d", r[0].SlicesRun, r[0].SlicesAlive, r[1].SlicesRun, r[1].SlicesAlive)
				if fifo == "" {
					fifo = fmt.Sprintf("SCHED_FIFO: alone %v, gang %v", r[0].FIFO, g.FIFO())
				}
			}
		}
	}
	fmt.Println(fifo)
	aloneOff, aloneOn := median(cases[0].a), median(cases[1].a)
	fmt.Printf("\n1. two CPU-bound stencils (%d ranks each) on the same cores (medians of %d runs)\n", *ranks, *reps)
	fmt.Printf("   %-32s %10s %10s %17s %17s  %s\n", "", "job A", "job B", "÷ alone unpinned", "÷ alone pinned", "ranks' CPUs")
	for _, c := range cases {
		a := median(c.a)
		b, rb := "", ""
		if c.jobs == 2 {
			b = secs(median(c.b))
		}
		ra := fmt.Sprintf("%.2fx", ratio(a, aloneOff))
		rb = fmt.Sprintf("%.2fx", ratio(a, aloneOn))
		if c.jobs == 2 {
			ra += fmt.Sprintf(" %.2fx", ratio(median(c.b), aloneOff))
			rb += fmt.Sprintf(" %.2fx", ratio(median(c.b), aloneOn))
		}
		fmt.Printf("   %-32s %10s %10s %17s %17s  %s", c.name, secs(a), b, ra, rb, cpuList(c.cpus))
		if c.note != "" {
			fmt.Printf("   (%s)", c.note)
		}
		fmt.Println()
	}
	if *ompi != "" {
		oAlone := runOMPI(1)[0]
		o := runOMPI(2)
		fmt.Printf("   %-32s %10s %10s\n", "Open MPI alone (C stencil)", secs(oAlone), "")
		fmt.Printf("   %-32s %10s %10s %.2fx %.2fx   (vs Open MPI alone)\n", "Open MPI, two mpiruns", secs(o[0]), secs(o[1]),
			ratio(o[0], oAlone), ratio(o[1], oAlone))
	}
}

// partTwo runs part 2: a long job and a short one submitted while it runs.
func partTwo(cfg configs.Config) {
	short := *iters / 2
	shortAlone := run(cfg, nil, spec{iters: short})[0]
	longAlone := run(cfg, nil, spec{iters: 4 * *iters})[0]
	at := time.Duration(float64(longAlone.Elapsed) * *delay)
	g := newGang(cfg, *quantum, nil)
	ls := run(cfg, g, spec{iters: 4 * *iters}, spec{iters: short, after: at})
	g.Close()
	fmt.Printf("\n2. long job (%d iterations, %s alone) + short job (%d iterations, %s alone) submitted %s into it, gang MPL 2, Q %d\n",
		4**iters, secs(longAlone.Elapsed), short, secs(shortAlone.Elapsed), secs(at), *quantum)
	fmt.Printf("   short job response time %s = %.2fx alone; long job %s = %.2fx alone\n",
		secs(ls[1].Elapsed), ratio(ls[1].Elapsed, shortAlone.Elapsed), secs(ls[0].Elapsed), ratio(ls[0].Elapsed, longAlone.Elapsed))
}

// switchCost runs part 3 at quantum q: two jobs in a gang, every agent's
// switch timed.
func switchCost(cfg configs.Config, q uint64) {
	var mu sync.Mutex
	var costs []time.Duration // per agent call
	var nslices atomic.Int64
	g := newGang(cfg, q, func(string, bool) { nslices.Add(1) })
	hook := func(s *nicthread.SliceStats) {
		if s.Switch > 0 {
			mu.Lock()
			costs = append(costs, s.Switch)
			mu.Unlock()
		}
	}
	var cpus map[string]bool
	stop := sampleCPUs(&cpus)
	run(cfg, g, spec{iters: *iters, onAgent: hook}, spec{iters: *iters, onAgent: hook})
	stop()
	g.Close()
	// A gang switch is one stop and one continue (one agent call each,
	// one node per job here): pair them.
	n := len(costs) / 2
	var total time.Duration
	for _, c := range costs {
		total += c
	}
	perSwitch := time.Duration(0)
	if n > 0 {
		perSwitch = total / time.Duration(n)
	}
	slices.Sort(costs)
	pct := func(p float64) time.Duration {
		if len(costs) == 0 {
			return 0
		}
		return costs[min(len(costs)-1, int(p*float64(len(costs))))]
	}
	p50 := 2 * pct(0.5)
	fmt.Printf("   %8s %6d %9d %10.1f %10.1f %10.1f %15.2f%% %15.3f%% %13.3f%%  %s\n", cfg.RankPin, q, n, us(p50), us(2*pct(0.99)), us(perSwitch),
		100*float64(p50)/float64(cfg.Timeslice), 100*float64(p50)/float64(cfg.Timeslice)/float64(q),
		100*float64(total)/float64(time.Duration(max(1, nslices.Load()))*cfg.Timeslice), cpuList(cpus))
}

// sampleCPUs records, every 20 ms until the returned stop is called, the
// CPU lists (Cpus_allowed_list) of the processes running -prog: one list
// per rank when the ranks are pinned, the whole set when not.
func sampleCPUs(into *map[string]bool) (stop func()) {
	if *into == nil {
		*into = map[string]bool{}
	}
	m := *into
	done, ended := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(ended)
		for {
			dirs, _ := filepath.Glob("/proc/[0-9]*")
			for _, d := range dirs {
				if exe, err := os.Readlink(d + "/exe"); err != nil || exe != *prog {
					continue
				}
				b, _ := os.ReadFile(d + "/status")
				for _, l := range strings.Split(string(b), "\n") {
					if v, ok := strings.CutPrefix(l, "Cpus_allowed_list:"); ok {
						m[strings.TrimSpace(v)] = true
					}
				}
			}
			select {
			case <-done:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	return func() { close(done); <-ended }
}

// cpuList names the CPU lists sampleCPUs saw, "|" between ranks' lists.
func cpuList(m map[string]bool) string {
	var l []string
	for k := range m {
		l = append(l, k)
	}
	slices.Sort(l)
	if len(l) == 0 {
		return "-"
	}
	return strings.Join(l, "|")
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}

// spec is one job of a run.
type spec struct {
	iters   int
	after   time.Duration // submitted this long after the run starts
	onAgent func(*nicthread.SliceStats)
}

// run runs the jobs concurrently (in g if set, else each with its own
// master) and returns their results in order.
func run(cfg configs.Config, g *nicthread.Gang, specs ...spec) []launch.Result {
	out := make([]launch.Result, len(specs))
	var wg sync.WaitGroup
	for i, s := range specs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			time.Sleep(s.after)
			res, err := launch.Run(launch.Job{Ranks: *ranks, Program: *prog,
				Args:   []string{"-iters", strconv.Itoa(s.iters), "-ops", strconv.Itoa(*ops), "-halo", "4096"},
				Config: cfg, Gang: g, Stdout: io.Discard, Stderr: os.Stderr, OnAgentSlice: s.onAgent})
			check(err)
			if res.ExitCode != 0 {
				check(fmt.Errorf("job %d failed: %s", i, res.Message))
			}
			out[i] = res
		}()
	}
	wg.Wait()
	return out
}

// runOMPI runs k copies of the -ompi program at once, each under its own
// mpirun, and returns each one's wall time from start to exit.
func runOMPI(k int) []time.Duration {
	out := make([]time.Duration, k)
	var wg sync.WaitGroup
	for i := range k {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := exec.Command(*mpirun, "--allow-run-as-root", "--oversubscribe", "-np", strconv.Itoa(*ranks), *ompi,
				strconv.Itoa(*iters), "4096", "0", strconv.Itoa(*ops)) // ITERS HALO_BYTES WORK_MS OPS
			cmd.Stderr = os.Stderr
			t0 := time.Now()
			if b, err := cmd.Output(); err != nil {
				check(fmt.Errorf("%s: %v\n%s", cmd, err, b))
			}
			out[i] = time.Since(t0)
		}()
	}
	wg.Wait()
	return out
}

func newGang(cfg configs.Config, q uint64, onSlice func(string, bool)) *nicthread.Gang {
	g, err := nicthread.NewGang(nicthread.GangConfig{Slice: cfg.Timeslice, Spin: cfg.StrobeSpin, FIFO: cfg.FIFO,
		Matrix: strobe.GangConfig{MPL: 2, Quantum: q}, OnSlice: onSlice})
	check(err)
	return g
}

func secs(d time.Duration) string { return fmt.Sprintf("%.3f s", d.Seconds()) }
func ratio(a, b time.Duration) float64 {
	return float64(a) / float64(b)
}
func us(d time.Duration) float64 { return float64(d) / 1e3 }

func numCPU() int {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return 0
	}
	return strings.Count(string(b), "processor\t:")
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "gang:", err)
		os.Exit(1)
	}
}
