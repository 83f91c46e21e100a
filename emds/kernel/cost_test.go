package kernel

import (
	"bytes"
	_ "embed"
	"os"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/btf"
	"github.com/cilium/ebpf/link"

	"github.com/bcsmpi/bcsmpi/internal/unix"
)

// schedBaseObj is the programs' object before their cost was cut (built
// by go generate from sched.bpf.c at commit 518bd6c): BenchmarkPrograms's
// baseline.
//
//go:embed testdata/sched_base_bpfel.o
var schedBaseObj []byte

// progNames are the programs, in the order of progSet.progs.
var progNames = [4]string{schedProgOnSwitch, schedProgOnWaking, schedProgOnWakeupNew, schedProgOnMigrate}

// progSet is one eBPF object, loaded and sized as Open does, with this
// process registered as the runtime (rank 0 being nobody), attached only
// while a benchmark phase runs. Its logs are not read: they wrap.
type progSet struct {
	name  string
	coll  *ebpf.Collection
	progs [4]*ebpf.Program
	links []link.Link
}

func loadSet(b *testing.B, name string, obj []byte) *progSet {
	b.Helper()
	kspec, err := btf.LoadSpec(DefaultBTFPath)
	if err != nil {
		b.Skipf("no kernel BTF: %v", err)
	}
	ncpu, err := ebpf.PossibleCPU()
	if err != nil {
		b.Fatal(err)
	}
	spec, err := ebpf.LoadCollectionSpecFromReader(bytes.NewReader(obj))
	if err != nil {
		b.Fatalf("%s: %v", name, err)
	}
	if err := sizeSpec(spec, ncpu, LogMin, 1, os.Getpid()); err != nil {
		b.Fatal(err)
	}
	coll, err := ebpf.NewCollectionWithOptions(spec, ebpf.CollectionOptions{Programs: ebpf.ProgramOptions{KernelTypes: kspec}})
	if err != nil {
		if os.Getuid() != 0 {
			b.Skipf("%s: %v", name, err)
		}
		b.Fatalf("loading %s as root: %v", name, err)
	}
	s := &progSet{name: name, coll: coll}
	b.Cleanup(func() { s.detach(); coll.Close() })
	for i, n := range progNames {
		if s.progs[i] = coll.Programs[n]; s.progs[i] == nil {
			b.Fatalf("%s has no program %s", name, n)
		}
	}
	// Ranks 1: entity 2 (stored + 1) is the runtime.
	id := uint32(os.Getpid())
	if err := coll.Maps[schedMapIds].Put(id%idSlots, schedIdSlot{Id: id, Ent: 3}); err != nil {
		b.Fatal(err)
	}
	return s
}

func (s *progSet) attach(b *testing.B) {
	for _, p := range s.progs {
		l, err := link.AttachTracing(link.TracingOptions{Program: p, AttachType: ebpf.AttachTraceRawTp})
		if err != nil {
			b.Fatalf("%s: %v", s.name, err)
		}
		s.links = append(s.links, l)
	}
}

func (s *progSet) detach() {
	for _, l := range s.links {
		l.Close()
	}
	s.links = nil
}

// stats are the programs' runs and run time (ns) so far.
func (s *progSet) stats(b *testing.B) (runs, ns [4]float64) {
	for i, p := range s.progs {
		st, err := p.Stats()
		if err != nil {
			b.Fatal(err)
		}
		runs[i], ns[i] = float64(st.RunCount), float64(st.Runtime.Nanoseconds())
	}
	return
}

// pingPong runs n round trips between two threads of this process bound to
// CPUs c0 and c1, each waking the other through a futex and sleeping until
// woken (as node 0's agent wakes a rank and the rank the agent), and
// returns the elapsed time.
func pingPong(b *testing.B, n int, c0, c1 int) time.Duration {
	var w uint32 // odd: the second thread's turn
	done := make(chan time.Duration, 2)
	side := func(cpu int, first bool) {
		runtime.LockOSThread() // never unlocked: the bound thread ends with the goroutine
		if err := unix.SetAffinity(cpu); err != nil {
			b.Errorf("binding to CPU %d: %v", cpu, err)
		}
		t0 := time.Now()
		for i := range uint32(n) {
			want, next := 2*i+1, 2*i+2 // the second thread waits for want, then sets next
			if first {
				want, next = 2*i, 2*i+1
			}
			for v := atomic.LoadUint32(&w); v != want; v = atomic.LoadUint32(&w) {
				unix.FutexWait(&w, v, time.Second)
			}
			atomic.StoreUint32(&w, next)
			unix.FutexWake(&w, 1)
		}
		done <- time.Since(t0)
	}
	go side(c1, false)
	go side(c0, true)
	d := <-done
	return max(d, <-done)
}

// BenchmarkPrograms measures the eBPF programs' cost on the scheduler's
// path, the current object against the baseline (schedBaseObj), side by
// side in one run: each iteration runs the same futex ping-pong between
// two threads on two CPUs (tracked as the runtime, so that every switch
// and wake-up is logged) with no programs attached, with the baseline's,
// and with the current ones, in rotating order. It reports, per round trip,
// the wall time of each (the whole cost, caches and the tracepoints'
// dispatch included) and the programs' time in the kernel
// (kernel.bpf_stats_enabled's, turned on for the run), per event the time
// of sched_switch and sched_waking, and the ratios new/base of the time in
// the kernel (kern-new/base) and of the wall time over none
// (overhead-new/base). The programs run for every task on the machine: the
// figures are meaningful on a quiet machine only, e.g.
//
//	go test -run XXX -bench Programs -benchtime 40x -count 5 ./emds/kernel
func BenchmarkPrograms(b *testing.B) {
	if os.Getuid() != 0 {
		b.Skip("needs root")
	}
	ncpu := runtime.NumCPU()
	const rounds = 2000 // round trips per phase
	sets := []*progSet{nil, loadSet(b, "base", schedBaseObj), loadSet(b, "new", _SchedBytes)}
	st, err := ebpf.EnableStats(0) // BPF_STATS_RUN_TIME
	if err != nil {
		b.Skipf("kernel.bpf_stats_enabled: %v", err)
	}
	defer st.Close()
	var wall [3]time.Duration
	var runs, ns [3][4]float64
	n := 0
	for b.Loop() {
		for k := range sets {
			i := (k + n) % len(sets)
			s := sets[i]
			if s == nil {
				wall[i] += pingPong(b, rounds, 0, ncpu-1)
				continue
			}
			s.attach(b)
			r0, t0 := s.stats(b)
			wall[i] += pingPong(b, rounds, 0, ncpu-1)
			r1, t1 := s.stats(b)
			s.detach()
			for p := range progNames {
				runs[i][p] += r1[p] - r0[p]
				ns[i][p] += t1[p] - t0[p]
			}
		}
		n++
	}
	rt := float64(n * rounds)
	var kern [3]float64
	for i := range sets {
		b.ReportMetric(float64(wall[i].Nanoseconds())/rt, []string{"none", "base", "new"}[i]+"-wall-ns/rt")
		if i == 0 {
			continue
		}
		for p := range progNames {
			kern[i] += ns[i][p]
		}
		b.ReportMetric(kern[i]/rt, sets[i].name+"-kern-ns/rt")
		b.ReportMetric(ns[i][0]/max(runs[i][0], 1), sets[i].name+"-switch-ns/ev")
		b.ReportMetric(ns[i][1]/max(runs[i][1], 1), sets[i].name+"-waking-ns/ev")
	}
	b.ReportMetric(kern[2]/max(kern[1], 1), "kern-new/base")
	b.ReportMetric(float64(wall[2]-wall[0])/float64(max(wall[1]-wall[0], 1)), "overhead-new/base")
	b.ReportMetric(0, "ns/op")
}
