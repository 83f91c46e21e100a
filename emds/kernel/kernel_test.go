package kernel

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cilium/ebpf"

	"github.com/bcsmpi/bcsmpi/emds"
	"github.com/bcsmpi/bcsmpi/internal/unix"
)

func TestNoBTF(t *testing.T) {
	_, err := Open(Config{Ranks: 1, RuntimePID: os.Getpid(), BTFPath: "/nonexistent/vmlinux", Len: 10})
	if !errors.Is(err, ErrUnavailable) {
		t.Fatalf("Open with a bogus BTF path: %v, want ErrUnavailable", err)
	}
	if !strings.Contains(err.Error(), "BTF at /nonexistent/vmlinux") {
		t.Fatalf("message %q does not name the missing BTF", err)
	}
}

func TestReleaseAtLeast(t *testing.T) {
	for _, c := range []struct {
		rel  string
		want bool
	}{{"6.18.44-fc", true}, {"5.19.0", true}, {"5.18.9-1-amd64", false}, {"4.19", false}, {"", false}, {"x", false}} {
		if got := releaseAtLeast(c.rel, 5, 19); got != c.want {
			t.Errorf("releaseAtLeast(%q) = %v, want %v", c.rel, got, c.want)
		}
	}
}

func TestBucketBounds(t *testing.T) {
	// sched.bpf.c: v in [2^p, 2^p + 2^(p-1)) → 2p, the rest of the octave → 2p+1.
	for _, c := range []struct {
		b      int
		lo, hi uint64
	}{{0, 0, 2}, {2, 2, 3}, {3, 3, 4}, {20, 1024, 1536}, {21, 1536, 2048}} {
		if lo, hi := BucketBounds(c.b); lo != c.lo || hi != c.hi {
			t.Errorf("BucketBounds(%d) = [%d, %d), want [%d, %d)", c.b, lo, hi, c.lo, c.hi)
		}
	}
}

// open loads the monitor or skips when this machine lacks what it needs
// (not root, or no BTF); as root with BTF present a failure fails the test.
func open(t *testing.T, ranks int) *Monitor {
	t.Helper()
	m, err := Open(Config{Ranks: ranks, RuntimePID: os.Getpid(), Len: 1000})
	if err != nil {
		if _, serr := os.Stat(DefaultBTFPath); os.Getuid() != 0 || serr != nil {
			t.Skipf("kernel monitor unavailable here: %v", err)
		}
		t.Fatalf("Open as root with %s present: %v", DefaultBTFPath, err)
	}
	t.Cleanup(func() { m.Close() })
	if !m.start.cached {
		t.Fatal("Open decoded the BTF: the CO-RE cache TestMain filled was not used")
	}
	return m
}

// busy starts a busy loop pinned to cpu, under a scheduling wrapper
// (e.g. "chrt -f 1") when one is given: the host may be shared, and
// real-time priorities make the scenario independent of its other load.
func busy(t *testing.T, cpu int, wrap ...string) *exec.Cmd {
	t.Helper()
	args := append(wrap, "taskset", "-c", strconv.Itoa(cpu), "sh", "-c", "while :; do :; done")
	c := exec.Command(args[0], args[1:]...)
	if err := c.Start(); err != nil {
		t.Skipf("taskset: %v", err)
	}
	t.Cleanup(func() { c.Process.Kill(); c.Wait() })
	return c
}

// run publishes n "slices" of d each and returns rank 0's series.
func run(t *testing.T, m *Monitor, n int, d time.Duration) *emds.Series {
	return runWith(t, m, n, d, func(int) {})
}

// runWith calls at(k) at the start of each slice k.
func runWith(t *testing.T, m *Monitor, n int, d time.Duration, at func(k int)) *emds.Series {
	t.Helper()
	for k := range n {
		at(k)
		time.Sleep(d) // the slice: the scenario runs meanwhile
		m.Publish(uint64(k))
	}
	dir := t.TempDir()
	if err := m.Dump(dir, 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(dir, "emds-kernel-rank0.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s, err := emds.ReadCSV(f)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Slices) != n {
		t.Fatalf("%d rows, want %d", len(s.Slices), n)
	}
	for _, name := range []string{"emds-kernel-master.csv", "emds-kernel-runtime.csv", "emds-kernel-interferers.csv", "emds-kernel-wakehist.csv"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Errorf("dump: %v", err)
		}
	}
	return s
}

func sum(t *testing.T, s *emds.Series, metric string) int64 {
	c, err := s.Col(metric)
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, v := range c {
		n += v
	}
	return n
}

// The rank runs alone on CPU 1 for the first half of the slices (at
// SCHED_FIFO 1: the host's other load cannot preempt it); then a competing
// busy process pinned to the same CPU starts at SCHED_FIFO 2. The competitor must
// show up as an interferer in the second half only, and the rank must wait
// for it about as long as it runs.
func TestPreemptedByPinnedCompetitor(t *testing.T) {
	m := open(t, 1)
	rank := busy(t, 1, "chrt", "-f", "1")
	if err := m.AddRank(0, rank.Process.Pid); err != nil {
		t.Fatal(err)
	}
	const n, half = 40, 20
	var rival *exec.Cmd
	s := runWith(t, m, n, 10*time.Millisecond, func(k int) {
		if k == half {
			rival = busy(t, 1, "chrt", "-f", "2")
		}
	})
	onc, _ := s.Col("ONCPU")
	pre, _ := s.Col("PREEMPT")
	var on2, rivalNS int64
	rivalSlices := 0
	for k := range n {
		found := false
		for i := 1; i <= Top; i++ {
			p, _ := s.Col("TOP" + strconv.Itoa(i) + "PID")
			ns, _ := s.Col("TOP" + strconv.Itoa(i) + "NS")
			if int(p[k]) == rival.Process.Pid {
				found = true
				rivalNS += ns[k]
			}
		}
		if found && k < half {
			t.Errorf("slice %d: the competitor interferes before it started", k)
		}
		if k >= half {
			on2 += onc[k]
			if found {
				rivalSlices++
			}
		}
	}
	t.Logf("second half: rank ONCPU %v, competitor's interference %v (%d of %d slices); PREEMPT by slice %v",
		time.Duration(on2), time.Duration(rivalNS), rivalSlices, n-half, pre)
	// Named in some slices of the second half, in none of the first. Not
	// in all: when the real-time tasks of the CPU are throttled (the
	// competitor spins at SCHED_FIFO: sched_rt_runtime_us), the host's other
	// load runs and fills the slice's top places; on a busy host (CI ran
	// other packages' jobs beside it) that was 11 of 20 slices. How long
	// it kept the rank waiting is the measure (below).
	if rivalSlices == 0 {
		t.Errorf("the competitor (pid %d) is among the top %d interferers in none of the %d slices after it started", rival.Process.Pid, Top, n-half)
	}
	// At a higher real-time priority the competitor has the CPU to itself:
	// the rank waits for it longer than it runs.
	if rivalNS < on2 {
		t.Errorf("the competitor ran %d ns while the rank waited, less than the rank's %d ns on CPU", rivalNS, on2)
	}
	if sum(t, s, "NIVCSW") == 0 {
		t.Error("no involuntary context switch recorded")
	}
	// The rank waits for its CPU through the second half: one wait that
	// ends only when the competitor is killed, spread over the slices by
	// the reader (RUNQ counts it while open).
	var runq2 int64
	for _, v := range col(t, s, "RUNQ")[half+1:] {
		runq2 += v
	}
	if runq2*2 < rivalNS {
		t.Errorf("RUNQ %d ns in slices %d .. %d, under half the competitor's %d ns", runq2, half+1, n-1, rivalNS)
	}
}

// A rank blocked on a pipe on CPU 1 is woken from CPU 0 (a thread bound
// there writes a line each slice) while a busy competitor is pinned to CPU
// 1. The programs mark no CPU for a wake-up from another (sched.bpf.c's
// mark_waiting): the switch that ends the rank's wait, logged because the
// rank comes in, must still credit the wait to the competitor and name it.
func TestWokenFromAnotherCPU(t *testing.T) {
	if runtime.NumCPU() < 2 {
		t.Skip("needs 2 CPUs")
	}
	m := open(t, 1)
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	rank := exec.Command("taskset", "-c", "1", "sh", "-c", "while read -r x; do :; done")
	rank.Stdin = r
	if err := rank.Start(); err != nil {
		t.Skipf("taskset: %v", err)
	}
	r.Close()
	t.Cleanup(func() { rank.Process.Kill(); rank.Wait() })
	if err := m.AddRank(0, rank.Process.Pid); err != nil {
		t.Fatal(err)
	}
	// The competitor at nice -20 takes nearly all of CPU 1 that the host's
	// other load (SCHED_OTHER at nice 0) would share with it, so the rank's
	// waits are its even on a busy host (at nice 0 on a host at load 15 it
	// was in no slice's top places).
	rival := busy(t, 1, "nice", "-n", "-20")
	wake := make(chan bool)
	werr := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the bound thread ends with the goroutine
		err := unix.SetAffinity(0)
		for range wake {
			if err == nil {
				_, err = w.Write([]byte("x\n"))
			}
		}
		werr <- err
	}()
	s := runWith(t, m, 40, 10*time.Millisecond, func(int) { wake <- true })
	close(wake)
	if err := <-werr; err != nil {
		t.Fatalf("waking the rank from CPU 0: %v", err)
	}
	pre, nw := sum(t, s, "PREEMPT"), sum(t, s, "NWAKE")
	var topped int64
	for i := 1; i <= Top; i++ {
		p, ns := col(t, s, "TOP"+strconv.Itoa(i)+"PID"), col(t, s, "TOP"+strconv.Itoa(i)+"NS")
		for k := range p {
			if int(p[k]) == rival.Process.Pid {
				topped += ns[k]
			}
		}
	}
	t.Logf("PREEMPT %v, by the competitor %v; RUNQ %v; %d wake-ups measured", time.Duration(pre), time.Duration(topped),
		time.Duration(sum(t, s, "RUNQ")), nw)
	if topped == 0 || pre == 0 {
		t.Errorf("the competitor (pid %d) kept the woken rank waiting %d ns (PREEMPT %d ns), want more than 0", rival.Process.Pid, topped, pre)
	}
	if name := m.rd.comm[uint32(rival.Process.Pid)]; name != "sh" {
		t.Errorf("the competitor is named %q, want \"sh\"", name)
	}
}

// A rank that nothing else may preempt (SCHED_FIFO: the machine's other
// load is SCHED_OTHER) waits for nearly nothing.
func TestIdleCPUNearZero(t *testing.T) {
	m := open(t, 1)
	rank := busy(t, 1, "chrt", "-f", "1")
	if err := m.AddRank(0, rank.Process.Pid); err != nil {
		t.Fatal(err)
	}
	s := run(t, m, 40, 10*time.Millisecond)
	on, pre := sum(t, s, "ONCPU"), sum(t, s, "PREEMPT")
	t.Logf("rank ONCPU %v, PREEMPT %v, RUNQ %v", time.Duration(on), time.Duration(pre), time.Duration(sum(t, s, "RUNQ")))
	if on == 0 {
		t.Fatal("a busy rank recorded no time on CPU")
	}
	if pre*10 > on {
		t.Errorf("PREEMPT %d ns is over a tenth of ONCPU %d ns with nobody else pinned to the CPU", pre, on)
	}
	// A rank running through many slices is spread over them: no row holds
	// more than its slice's length (TEND to TEND) of one CPU, give or take
	// the few µs a read of the kernel's state takes.
	onc, tend := col(t, s, "ONCPU"), col(t, s, "TEND")
	var span int64
	for k := 1; k < len(onc); k++ {
		l := tend[k] - tend[k-1]
		span += l
		if onc[k] > l+l/100 {
			t.Errorf("slice %d: ONCPU %d ns, over its length %d ns", s.Slices[k], onc[k], l)
		}
	}
	// Under SCHED_FIFO it runs for most of each slice (sysctl
	// kernel.sched_rt_runtime_us leaves other tasks at least 5%).
	if on2 := on - onc[0]; on2*2 < span {
		t.Errorf("ONCPU %d ns in slices 1 .. %d, under half of their %d ns", on2, len(onc)-1, span)
	}
}

func col(t *testing.T, s *emds.Series, name string) []int64 {
	t.Helper()
	c, err := s.Col(name)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// Publish, the monitor's only work on the slice's path, neither allocates
// nor waits for the reader.
func TestPublishAllocs(t *testing.T) {
	m := open(t, 1)
	k := uint64(0)
	if n := testing.AllocsPerRun(1000, func() { m.Publish(k); k++ }); n != 0 {
		t.Errorf("Publish allocates %v times per call", n)
	}
}

// BenchmarkPublish: the cost on the slice's path.
func BenchmarkPublish(b *testing.B) {
	m, err := Open(Config{Ranks: 2, RuntimePID: os.Getpid(), Len: 1 << 20})
	if err != nil {
		b.Skip(err)
	}
	defer m.Close()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		m.Publish(uint64(i))
	}
}

// BenchmarkDrain: the reader's cost per slice, with one busy rank (one
// drain of 32 slices per op).
func BenchmarkDrain(b *testing.B) {
	m, err := Open(Config{Ranks: 2, RuntimePID: os.Getpid(), Len: 1 << 20})
	if err != nil {
		b.Skip(err)
	}
	defer m.Close()
	m.stopReader() // drained by hand below
	c := exec.Command("sh", "-c", "while :; do :; done")
	if err := c.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() { c.Process.Kill(); c.Wait() }()
	m.AddRank(0, c.Process.Pid)
	b.ReportAllocs()
	k := uint64(0)
	for b.Loop() {
		for range 32 {
			m.Publish(k)
			k++
		}
		m.drain(false, false)
	}
}

func TestOverlap(t *testing.T) {
	for _, c := range []struct{ from, to, b0, b1, want int64 }{
		{0, 10, 20, 30, 0},  // before
		{40, 50, 20, 30, 0}, // after
		{0, 25, 20, 30, 5},  // ends inside
		{25, 50, 20, 30, 5}, // begins inside
		{0, 50, 20, 30, 10}, // spans it
		{22, 27, 20, 30, 5}, // inside
		{20, 30, 20, 30, 10},
		{30, 40, 20, 30, 0}, // begins at its end
	} {
		if got := overlap(c.from, c.to, c.b0, c.b1); got != c.want {
			t.Errorf("overlap([%d, %d), [%d, %d)) = %d, want %d", c.from, c.to, c.b0, c.b1, got, c.want)
		}
	}
}

// When the reader does not run (here: stopped), Publish takes the rows
// before the programs reuse their place: every slice has its row.
func TestNoRowLostWhenReaderStarves(t *testing.T) {
	m := open(t, 1)
	m.stopReader()
	n := 3 * int(m.ring)
	for k := range n {
		m.Publish(uint64(k))
	}
	dir := t.TempDir()
	if err := m.Dump(dir, 0o600); err != nil {
		t.Fatal(err)
	}
	if m.lost != 0 {
		t.Errorf("%d rows lost", m.lost)
	}
	f, err := os.Open(filepath.Join(dir, "emds-kernel-runtime.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s, err := emds.ReadCSV(f)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Slices) != min(n, 1000) {
		t.Errorf("%d rows, want %d", len(s.Slices), min(n, 1000))
	}
	raw, err := os.ReadFile(filepath.Join(dir, "emds-kernel-cost.csv"))
	if err != nil || !strings.Contains(string(raw), "\nlost,0,0\n") {
		t.Errorf("cost file does not say no row was lost: %v\n%s", err, raw)
	}
}

// The reader's thread is named ReaderThread and runs at ReaderNice: it
// takes the time the ranks leave, not theirs (Open's and the reader's
// cost on the job, issue 15).
func TestReaderThreadNiceAndNamed(t *testing.T) {
	m := open(t, 1)
	deadline := time.Now().Add(10 * time.Second)
	for m.readerTid.Load() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the reader did not start in 10 s")
		}
		time.Sleep(time.Millisecond)
	}
	task := filepath.Join("/proc/self/task", strconv.Itoa(int(m.readerTid.Load())))
	comm, err := os.ReadFile(filepath.Join(task, "comm"))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(string(comm)); got != ReaderThread {
		t.Errorf("reader thread named %q, want %q", got, ReaderThread)
	}
	stat, err := os.ReadFile(filepath.Join(task, "stat"))
	if err != nil {
		t.Fatal(err)
	}
	// The fields after the name's closing parenthesis; nice is the 19th of all.
	f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
	if f[16] != strconv.Itoa(ReaderNice) {
		t.Errorf("reader thread at nice %s, want %d", f[16], ReaderNice)
	}
}

// BenchmarkOpen: Open and Close, on the job's start-up path, with the
// running kernel's BTF at its default path (decoded once, for the CO-RE
// relocations and the attach targets) and at another path (the same file
// through a link, decoded twice: what Open did before), and what is left
// of it once a Prefetch is done (prefetched); it reports the process's CPU
// time per op beside the wall time. Needs root and BTF, e.g.
//
//	go test -run XXX -bench Open -benchtime 20x -count 3 ./emds/kernel
func BenchmarkOpen(b *testing.B) {
	link := filepath.Join(b.TempDir(), "vmlinux")
	if err := os.Symlink(DefaultBTFPath, link); err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name, path string
		prefetched bool
	}{{"default", "", false}, {"other-path", link, false}, {"prefetched", "", true}} {
		b.Run(c.name, func(b *testing.B) {
			cpu := time.Duration(0)
			for b.Loop() {
				if c.prefetched { // what is left of Open once a Prefetch is done
					b.StopTimer()
					Prefetch(Config{BTFPath: c.path, Ranks: 2, RuntimePID: os.Getpid()})
					prefetched.Lock()
					l := prefetched.load
					prefetched.Unlock()
					<-l.done
					b.StartTimer()
				}
				cpu0 := unix.ProcessCPUTime()
				m, err := Open(Config{Ranks: 2, RuntimePID: os.Getpid(), BTFPath: c.path, First: 2500, Len: 5000, Slice: 250 * time.Microsecond})
				if err != nil {
					if os.Getuid() != 0 {
						b.Skip(err)
					}
					b.Fatal(err)
				}
				m.Close()
				cpu += unix.ProcessCPUTime() - cpu0
			}
			b.ReportMetric(float64(cpu)/float64(b.N)/1e6, "cpu-ms/op")
		})
	}
}

// Open takes what a Prefetch of its path decoded, errors included, and
// drops a Prefetch of another path; concurrent Prefetches and Opens are
// safe (-race).
func TestPrefetch(t *testing.T) {
	Prefetch(Config{BTFPath: "/nonexistent/./vmlinux", Ranks: 1, RuntimePID: os.Getpid()})
	_, err := Open(Config{Ranks: 1, RuntimePID: os.Getpid(), BTFPath: "/nonexistent/vmlinux", Len: 10})
	if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "BTF at /nonexistent/vmlinux") {
		t.Fatalf("Open after a Prefetch of a missing BTF: %v, want ErrUnavailable naming it", err)
	}
	prefetched.Lock()
	left := prefetched.load
	prefetched.Unlock()
	if left != nil {
		t.Fatal("the prefetched decoding was not taken by Open")
	}
	Prefetch(Config{BTFPath: "/nonexistent/other"})
	if _, err := Open(Config{Ranks: 1, RuntimePID: os.Getpid(), BTFPath: "/nonexistent/vmlinux", Len: 10}); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("Open beside a Prefetch of another path: %v, want ErrUnavailable", err)
	}
	prefetched.Lock()
	left = prefetched.load
	prefetched.Unlock()
	if left != nil {
		t.Fatal("a Prefetch of another path was kept after Open")
	}
	// As root with BTF: the programs a Prefetch loaded are taken by an Open
	// for the same job, and closed by one for another.
	if _, serr := os.Stat(DefaultBTFPath); os.Getuid() == 0 && serr == nil {
		for _, ranks := range []int{1, 2} {
			Prefetch(Config{Ranks: 2, RuntimePID: os.Getpid()})
			prefetched.Lock()
			l := prefetched.load
			prefetched.Unlock()
			<-l.done
			if l.objs == nil {
				t.Fatalf("Prefetch as root with BTF loaded no programs (BTF error %v)", l.err)
			}
			fd := l.objs.OnSwitch.FD()
			m, err := Open(Config{Ranks: ranks, RuntimePID: os.Getpid(), Len: 10})
			if err != nil {
				t.Fatal(err)
			}
			taken := m.objs.OnSwitch.FD() == fd
			m.Close()
			if taken != (ranks == 2) {
				t.Errorf("Open of %d ranks after a Prefetch of 2: took its programs %v, want %v", ranks, taken, ranks == 2)
			}
			if ranks == 1 && l.objs.OnSwitch.FD() >= 0 {
				t.Errorf("the programs a Prefetch of 2 ranks loaded were left open by an Open of 1")
			}
		}
	}
	done := make(chan error, 4)
	for range 4 {
		go func() {
			Prefetch(Config{Ranks: 1, RuntimePID: os.Getpid()})
			m, err := Open(Config{Ranks: 1, RuntimePID: os.Getpid(), Len: 10})
			if err == nil {
				m.Close()
			}
			done <- err
		}()
	}
	for range 4 {
		if err := <-done; err != nil {
			if _, serr := os.Stat(DefaultBTFPath); os.Getuid() != 0 || serr != nil {
				continue // unavailable here: the race detector still checked the hand-over
			}
			t.Fatalf("Open after a Prefetch, as root with BTF: %v", err)
		}
	}
}

// BenchmarkPhases: where the monitor's fixed cost per job goes, each phase
// timed on its own (ms/op for each, wall time), with the CO-RE cache and
// without it side by side in each iteration: taking what the programs need
// of the kernel's BTF, from a warm cache (cached-btf-ms) or by decoding it
// (decode-ms), loading and verifying the programs and their maps with the
// cache's relocations (cached-load-ms) or relocated against the decoded
// BTF (load-ms; the BTF and the loading are what Prefetch overlaps with
// the launcher's start-up), what is left of Open once they are done
// (open-ms: mapping the logs, registering bcsrun, attaching the four
// programs, starting the reader; attach-ms of it), Dump of a short job's
// windows (dump-ms), and Close (close-ms: detaching, unmapping, freeing;
// detach-ms of it). The cold start of a job's process (cilium/ebpf's
// feature probes, once per process) is not in it: bench/kernel-ab.sh
// measures whole jobs. Needs root and BTF; on a quiet machine:
//
//	go test -run XXX -bench Phases -benchtime 20x -count 3 ./emds/kernel
func BenchmarkPhases(b *testing.B) {
	if os.Getuid() != 0 {
		b.Skip("needs root")
	}
	ms := func(d int64) float64 { return float64(d) / 1e6 }
	var decode, load, cbtf, cload, open, attach, dump, cl, detach int64
	dir, cacheDir := b.TempDir(), b.TempDir()
	ncpu, err := ebpf.PossibleCPU()
	if err != nil {
		b.Fatal(err)
	}
	// The cache, written by a first load.
	warm := newLoad(Config{CacheDir: cacheDir})
	if warm.prepare(); warm.err != nil {
		b.Skip(warm.err)
	}
	objs, err := warm.load(ncpu, 2, os.Getpid())
	if err != nil {
		b.Fatal(err)
	}
	objs.Close()
	if warm.writeErr != nil {
		b.Fatalf("the cache was not written: %v", warm.writeErr)
	}
	for b.Loop() {
		// Cached.
		t0 := unix.Now()
		l := newLoad(Config{CacheDir: cacheDir})
		if l.prepare(); !l.start.cached {
			b.Fatalf("the cache was not used: %v", l.cacheErr)
		}
		t1 := unix.Now()
		objs, err := l.load(ncpu, 2, os.Getpid())
		if err != nil {
			b.Fatal(err)
		}
		t2 := unix.Now()
		objs.Close()
		cbtf, cload = cbtf+t1-t0, cload+t2-t1
		// Decoded.
		t0 = unix.Now()
		l = newLoad(Config{CacheDir: CacheOff})
		if l.prepare(); l.err != nil {
			b.Fatal(l.err)
		}
		t1 = unix.Now()
		if objs, err = l.load(ncpu, 2, os.Getpid()); err != nil {
			b.Fatal(err)
		}
		t2 = unix.Now()
		decode, load = decode+t1-t0, load+t2-t1
		// Open with those programs, as after a Prefetch.
		l.ranks, l.pid, l.ncpu, l.objs = 2, os.Getpid(), ncpu, objs
		close(l.done)
		prefetched.Lock()
		prefetched.path, prefetched.load = DefaultBTFPath, l
		prefetched.Unlock()
		t3 := unix.Now()
		m, err := Open(Config{Ranks: 2, RuntimePID: os.Getpid(), First: 0, Len: 5000, Slice: 250 * time.Microsecond})
		if err != nil {
			b.Fatal(err)
		}
		t4 := unix.Now()
		open += t4 - t3
		attach += m.attachNS
		for k := range uint64(100) {
			m.Publish(k)
		}
		t5 := unix.Now()
		if err := m.Dump(dir, 0o600); err != nil {
			b.Fatal(err)
		}
		t6 := unix.Now()
		m.Close()
		t7 := unix.Now()
		dump, cl, detach = dump+t6-t5, cl+t7-t6, detach+m.detachNS
	}
	n := float64(b.N)
	b.ReportMetric(ms(decode)/n, "decode-ms")
	b.ReportMetric(ms(cbtf)/n, "cached-btf-ms")
	b.ReportMetric(ms(load)/n, "load-ms")
	b.ReportMetric(ms(cload)/n, "cached-load-ms")
	b.ReportMetric(ms(open)/n, "open-ms")
	b.ReportMetric(ms(attach)/n, "attach-ms")
	b.ReportMetric(ms(dump)/n, "dump-ms")
	b.ReportMetric(ms(cl)/n, "close-ms")
	b.ReportMetric(ms(detach)/n, "detach-ms")
}
