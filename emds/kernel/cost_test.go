package kernel

import (
	"bytes"
	_ "embed"
	"os"
	"runtime"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
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
	if err := sizeSpec(spec, ncpu, logRecords(ncpu), 1, os.Getpid()); err != nil {
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

// emptySet is four programs on the same tracepoints that return at once:
// the tracepoints' own cost with a program attached (their dispatch),
// which no program can cut.
func emptySet(b *testing.B) *progSet {
	b.Helper()
	s := &progSet{name: "empty"}
	for i, tp := range []string{"sched_switch", "sched_waking", "sched_wakeup_new", "sched_migrate_task"} {
		p, err := ebpf.NewProgram(&ebpf.ProgramSpec{Type: ebpf.Tracing, AttachType: ebpf.AttachTraceRawTp, AttachTo: tp,
			Instructions: asm.Instructions{asm.Mov.Imm(asm.R0, 0), asm.Return()}, License: "Dual MIT/GPL"})
		if err != nil {
			b.Fatalf("an empty program on %s: %v", tp, err)
		}
		s.progs[i] = p
	}
	b.Cleanup(func() {
		s.detach()
		for _, p := range s.progs {
			p.Close()
		}
	})
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

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	v = slices.Clone(v)
	slices.Sort(v)
	return v[len(v)/2]
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
// and wake-up is logged) with no programs attached, with empty ones (the
// tracepoints' dispatch), with the baseline's, and with the current ones,
// in rotating order. It reports, per round trip, the wall time of each
// (the whole cost, caches and the dispatch included) and the programs'
// time in the kernel
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
	sets := []*progSet{nil, emptySet(b), loadSet(b, "base", schedBaseObj), loadSet(b, "new", _SchedBytes)}
	st, err := ebpf.EnableStats(0) // BPF_STATS_RUN_TIME
	if err != nil {
		b.Skipf("kernel.bpf_stats_enabled: %v", err)
	}
	defer st.Close()
	// Per phase: the wall time and the programs' time per round trip, and
	// their time per event; the medians over the phases are reported (the
	// host's other load makes single phases swing).
	var wall, kern, sw, wk [4][]float64
	n := 0
	for b.Loop() {
		for k := range sets {
			i := (k + n) % len(sets)
			s := sets[i]
			if s == nil {
				wall[i] = append(wall[i], float64(pingPong(b, rounds, 0, ncpu-1).Nanoseconds())/rounds)
				continue
			}
			s.attach(b)
			r0, t0 := s.stats(b)
			wall[i] = append(wall[i], float64(pingPong(b, rounds, 0, ncpu-1).Nanoseconds())/rounds)
			r1, t1 := s.stats(b)
			s.detach()
			sum := 0.0
			for p := range progNames {
				sum += t1[p] - t0[p]
			}
			kern[i] = append(kern[i], sum/rounds)
			sw[i] = append(sw[i], (t1[0]-t0[0])/max(r1[0]-r0[0], 1))
			wk[i] = append(wk[i], (t1[1]-t0[1])/max(r1[1]-r0[1], 1))
		}
		n++
	}
	var w, kn [4]float64
	for i, name := range []string{"none", "empty", "base", "new"} {
		w[i] = median(wall[i])
		b.ReportMetric(w[i], name+"-wall-ns/rt")
		if i < 2 {
			continue
		}
		kn[i] = median(kern[i])
		b.ReportMetric(kn[i], name+"-kern-ns/rt")
		b.ReportMetric(median(sw[i]), name+"-switch-ns/ev")
		b.ReportMetric(median(wk[i]), name+"-waking-ns/ev")
	}
	b.ReportMetric(kn[3]/max(kn[2], 1), "kern-new/base")
	if w[2] > w[0] { // else the host's noise hid the programs' cost
		b.ReportMetric((w[3]-w[0])/(w[2]-w[0]), "overhead-new/base")
	}
	b.ReportMetric(0, "ns/op")
}
