package kernel

import (
	"bytes"
	"runtime"
	"strconv"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/bcsmpi/bcsmpi/emds"
)

// fake is a Monitor without the kernel: its CPUs' logs are Go memory that
// the test writes records into, as the programs would.
func fake(t testing.TB, ranks, ncpu int, nlog uint64) *Monitor {
	t.Helper()
	nent := ranks + 2
	m := &Monitor{cfg: Config{Ranks: ranks, First: 0, Len: 1 << 16}, nent: nent, ncpu: ncpu, ring: RingMin, nlog: nlog,
		labels: make([]atomic.Uint64, RingMin), bounds: make([]atomic.Int64, RingMin),
		cpus: make([]schedCpuLog, ncpu), logs: make([]schedEv, uint64(ncpu)*nlog),
		ids: map[uint32]int{}, regAt: map[uint32]int64{}}
	m.rd.init(m)
	m.win = make([]*emds.Window, nent)
	for e := range m.win {
		m.win[e] = emds.NewWindow(Metrics, nil, 0, 1<<16)
	}
	return m
}

// put writes a record into cpu's log as the programs do.
func (m *Monitor) put(cpu int, e schedEv) {
	c := &m.cpus[cpu]
	i := c.Head
	e.Seq = uint32(i + 1)
	m.logs[uint64(cpu)*m.nlog+i%m.nlog] = e
	c.Head = i + 1
}

func (m *Monitor) sw(cpu int, ts int64, prev, next uint32, pe, ne int, preempted bool) {
	var fl uint16
	if preempted {
		fl = flPreempted
	}
	m.put(cpu, schedEv{Kind: evSwitch, Flags: fl, A: prev, B: next, Ts: uint64(ts), Ea: uint32(pe + 1), Eb: uint32(ne + 1)})
	m.cpus[cpu].Curr = next
}

func (m *Monitor) wake(cpu int, ts int64, tid uint32, e, on int, latency bool) {
	var fl uint16
	if latency {
		fl = flLatency
	}
	m.put(cpu, schedEv{Kind: evWaking, Flags: fl, A: tid, B: uint32(on), Ts: uint64(ts), Ea: uint32(e + 1)})
}

// slices publishes bounds: slice q began at b[q].
func (m *Monitor) slices(b ...int64) {
	for q, t := range b {
		m.bounds[uint64(q)%m.ring].Store(t)
		m.labels[uint64(q)%m.ring].Store(uint64(q))
	}
	m.cur.Store(uint64(len(b) - 1))
}

func row(t *testing.T, m *Monitor, e int, q uint64, metric string) int64 {
	t.Helper()
	var buf bytes.Buffer
	if err := m.win[e].WriteCSV(&buf); err != nil {
		t.Fatal(err)
	}
	s, err := emds.ReadCSV(&buf)
	if err != nil {
		t.Fatal(err)
	}
	c, err := s.Col(metric)
	if err != nil {
		t.Fatal(err)
	}
	for i, k := range s.Slices {
		if k == q {
			return c[i]
		}
	}
	t.Fatalf("no row for slice %d of entity %d", q, e)
	return 0
}

// A rank (entity 0, tid 10) runs on CPU 0 across a slice bound, is
// preempted by an untracked task (tid 99), and waits for it; then the
// runtime (entity 3, tid 20) wakes it and it runs again. Every metric of
// the rows is checked against the intervals.
func TestReaderCreditsIntervals(t *testing.T) {
	m := fake(t, 2, 2, 64)
	m.slices(0, 1000, 2000, 3000, 4000)
	m.sw(0, 500, 0, 10, -1, 0, false)                      // rank in at 500
	m.sw(0, 1500, 10, 99, 0, -1, true)                     // preempted at 1500 by 99
	m.put(0, schedEv{Kind: evComm, A: 99, Ts: 0x6b726f77}) // "work"
	m.sw(0, 1700, 99, 10, -1, 0, false)                    // back at 1700: 200 of RUNQ and PREEMPT
	m.sw(0, 2100, 10, 0, 0, -1, false)                     // sleeps at 2100
	m.wake(1, 2500, 10, 0, 0, true)                        // the runtime wakes it at 2500
	m.sw(0, 2600, 0, 10, -1, 0, false)                     // runs at 2600: latency 100
	m.sw(0, 3500, 10, 0, 0, -1, false)                     // sleeps at 3500
	m.mu.Lock()
	m.drain(true, false)
	m.mu.Unlock()
	for _, c := range []struct {
		q      uint64
		metric string
		want   int64
	}{
		{0, "ONCPU", 500}, {1, "ONCPU", 500 + 300}, {2, "ONCPU", 100 + 400}, {3, "ONCPU", 500},
		{1, "RUNQ", 200}, {1, "PREEMPT", 200}, {1, "NIVCSW", 1}, {1, "TOP1PID", 99}, {1, "TOP1NS", 200},
		{2, "RUNQ", 100}, {2, "WAKELAT", 100}, {2, "NWAKE", 1}, {2, "PREEMPT", 0},
		{1, "TEND", 2000},
	} {
		if got := row(t, m, 0, c.q, c.metric); got != c.want {
			t.Errorf("slice %d %s = %d, want %d", c.q, c.metric, got, c.want)
		}
	}
	if m.rd.comm[99] != "work" {
		t.Errorf("task 99 named %q, want work", m.rd.comm[99])
	}
	m.rd.totals()
	if got := m.rd.itot[intfKey{0, 99}]; got != 200 {
		t.Errorf("whole run's interference of 99 on rank 0: %d, want 200", got)
	}
	if n := m.rd.hist[0*HistBuckets+latBucket(100)]; n != 1 {
		t.Errorf("histogram bucket of 100 ns: %d, want 1", n)
	}
}

// drainAt is Monitor.drain with the horizon at hz (the fake logs' clock).
func drainAt(m *Monitor, hz int64) {
	r := &m.rd
	c := m.cur.Load()
	r.qAt = max(r.qAt, r.d)
	r.snapBounds(c)
	hz = r.read(hz)
	r.merge(hz, c)
	last := r.d
	for last < c && r.bound(last+1) <= hz {
		last++
	}
	for q := r.d; q < last; q++ {
		r.record(q, hz)
	}
	r.advance(last, c)
}

// Credits to slices not recorded yet survive a drain: the rank runs from
// 500 to 2600, is preempted by 99 until 2900 and runs until 3100, across
// drains at 1500 and 2700.
func TestReaderAcrossDrains(t *testing.T) {
	m := fake(t, 1, 1, 64)
	m.slices(0, 1000, 2000, 3000, 4000)
	m.sw(0, 500, 0, 10, -1, 0, false)
	drainAt(m, 1500) // records slice 0
	m.sw(0, 2600, 10, 99, 0, -1, true)
	drainAt(m, 2700) // records slice 1; slice 2 holds the run's end
	m.sw(0, 2900, 99, 10, -1, 0, false)
	m.sw(0, 3100, 10, 0, 0, -1, false)
	m.mu.Lock()
	m.drain(true, false)
	m.mu.Unlock()
	for _, c := range []struct {
		q      uint64
		metric string
		want   int64
	}{{0, "ONCPU", 500}, {1, "ONCPU", 1000}, {2, "ONCPU", 700}, {2, "RUNQ", 300}, {2, "PREEMPT", 300},
		{2, "TOP1PID", 99}, {2, "NIVCSW", 1}, {3, "ONCPU", 100}, {3, "RUNQ", 0}} {
		if got := row(t, m, 0, c.q, c.metric); got != c.want {
			t.Errorf("slice %d %s = %d, want %d", c.q, c.metric, got, c.want)
		}
	}
}

// An interval still open when a slice is recorded is counted in it, and
// not again when it ends.
func TestReaderOpenIntervals(t *testing.T) {
	m := fake(t, 1, 1, 64)
	m.slices(0, 1000, 2000)
	m.sw(0, 500, 0, 10, -1, 0, false)
	drainAt(m, 2500)
	m.slices(0, 1000, 2000, 3000)
	m.sw(0, 2800, 10, 0, 0, -1, false)
	m.mu.Lock()
	m.drain(true, false)
	m.mu.Unlock()
	for q, want := range []int64{500, 1000, 800} {
		if got := row(t, m, 0, uint64(q), "ONCPU"); got != want {
			t.Errorf("slice %d ONCPU %d, want %d", q, got, want)
		}
	}
}

// Records are taken in time order over the CPUs: a wake-up logged on CPU 1
// before the switch on CPU 0 that runs the task gives its latency, though
// CPU 0's log is read first.
func TestReaderMergesCPUs(t *testing.T) {
	m := fake(t, 1, 2, 64)
	m.slices(0, 1000, 2000)
	m.sw(0, 100, 10, 0, 0, -1, false) // tid 10 sleeps
	m.sw(0, 700, 0, 10, -1, 0, false) // and runs at 700
	m.wake(1, 400, 10, 0, 0, true)    // woken at 400 on CPU 1
	m.mu.Lock()
	m.drain(true, false)
	m.mu.Unlock()
	if got := row(t, m, 0, 0, "WAKELAT"); got != 300 {
		t.Errorf("WAKELAT %d, want 300", got)
	}
	if got := row(t, m, 0, 0, "RUNQ"); got != 300 {
		t.Errorf("RUNQ %d, want 300", got)
	}
}

// A log overrun is counted and leaves the reader consistent.
func TestReaderLostRecords(t *testing.T) {
	m := fake(t, 1, 1, 8)
	m.slices(0, 1000)
	for i := range 20 {
		m.sw(0, int64(10+i), 10, 0, 0, -1, false)
	}
	m.mu.Lock()
	m.drain(true, false)
	m.mu.Unlock()
	if m.rd.lostRecs != 12 || m.rd.records != 8 {
		t.Errorf("lost %d, took %d records; want 12 and 8", m.rd.lostRecs, m.rd.records)
	}
}

// A drain that finds the publisher more than a ring ahead (Publish ran on
// while the reader held the lock) counts the slices it cannot record as
// lost and records the rest; it panicked (its state's slices indexed past
// the ring) before.
func TestReaderPublisherRingsAhead(t *testing.T) {
	m := fake(t, 1, 1, 64)
	ring := m.ring
	m.bounds[0].Store(10)
	m.sw(0, 20, 0, 7, -1, 0, false) // rank 0 runs from 20 on
	m.cur.Store(3)                  // the reader takes slices 0..2 (and the switch) first
	for q := uint64(1); q <= 3; q++ {
		m.bounds[q].Store(int64(q) * 100)
		m.labels[q-1].Store(q - 1)
	}
	drainAt(m, 250)
	c := 3*ring + 5
	for q := uint64(4); q <= c; q++ {
		m.bounds[q%ring].Store(int64(q) * 100)
		m.labels[(q-1)%ring].Store(q - 1)
	}
	m.cur.Store(c)
	m.mu.Lock()
	m.drain(false, true)
	m.mu.Unlock()
	if want := int64(c - (ring - 2) - 2); m.lost != want { // slices 0 and 1 were recorded
		t.Errorf("lost %d slices, want %d", m.lost, want)
	}
	if m.rd.d != c {
		t.Errorf("recorded up to slice %d, want %d (every slice that ended)", m.rd.d, c)
	}
	if on := row(t, m, 0, c-1, "ONCPU"); on != 100 {
		t.Errorf("slice %d: rank 0 on a CPU %d ns, want 100 (all of it)", c-1, on)
	}
}

func TestLatBucket(t *testing.T) {
	for _, v := range []uint64{0, 1, 2, 3, 5, 100, 1023, 1024, 1535, 1536, 2047, 1 << 40, 1<<62 + 5} {
		b := latBucket(v)
		lo, hi := BucketBounds(b)
		if v < lo || (v >= hi && b < HistBuckets-1) {
			t.Errorf("latBucket(%d) = %d: [%d, %d)", v, b, lo, hi)
		}
	}
}

// BenchmarkReader: the reader's cost per record, for a barrier-like
// pattern: per slice on each of 2 CPUs a rank is woken by the runtime and
// switched in, preempted once and switched back; on a host of 2 CPUs, and
// of 64 of which the 2 are busy (the others log nothing).
func BenchmarkReader(b *testing.B) {
	for _, ncpu := range []int{2, 64} {
		b.Run("cpus="+strconv.Itoa(ncpu), func(b *testing.B) {
			m := fake(b, 2, ncpu, 4096)
			var ts int64 = 1
			q := uint64(0)
			m.bounds[0].Store(ts)
			b.ReportAllocs()
			n := 0
			var took time.Duration
			for b.Loop() {
				for range 32 {
					for cpu := range 2 {
						tid := uint32(100 + cpu)
						m.wake(1-cpu, ts+10, tid, cpu, cpu, true)
						m.sw(cpu, ts+20, 0, tid, -1, cpu, false)
						m.sw(cpu, ts+60, tid, 200, cpu, 3, true)
						m.sw(cpu, ts+80, 200, tid, 3, cpu, false)
						m.sw(cpu, ts+200, tid, 0, cpu, -1, false)
						n += 5
					}
					ts += 250
					q++
					m.labels[(q-1)%m.ring].Store(q - 1)
					m.bounds[q%m.ring].Store(ts)
					m.cur.Store(q)
				}
				t0 := time.Now()
				m.drain(true, false)
				took += time.Since(t0)
			}
			b.ReportMetric(float64(took.Nanoseconds())/float64(n), "ns/record")
		})
	}
}

// A task registered while it runs (its switch-in logged as untracked, or
// not logged) counts as running from its registration.
func TestReaderRegisteredWhileRunning(t *testing.T) {
	for _, logged := range []bool{true, false} {
		m := fake(t, 1, 1, 64)
		m.slices(0, 1000, 2000)
		if logged {
			m.sw(0, 100, 7, 50, 1, -1, false) // the master leaves, 50 (untracked yet) comes in
		} else {
			m.cpus[0].Curr = 50
		}
		m.ids[50], m.regAt[50] = 0, 300
		m.mu.Lock()
		m.drain(true, false)
		m.mu.Unlock()
		for q, want := range []int64{700, 1000} {
			if got := row(t, m, 0, uint64(q), "ONCPU"); got != want {
				t.Errorf("switch-in logged %v: slice %d ONCPU %d, want %d", logged, q, got, want)
			}
		}
	}
}

// A record still being written on one CPU holds back the records of the
// others that come after it: the wake-up being logged on CPU 1 is taken
// before the switch on CPU 0 that runs the task.
func TestReaderWaitsForRecordBeingWritten(t *testing.T) {
	m := fake(t, 1, 2, 64)
	m.slices(0, 1000, 2000)
	m.sw(0, 100, 10, 0, 0, -1, false) // tid 10 sleeps
	m.wake(1, 400, 10, 0, 0, true)    // woken at 400 on CPU 1: not visible yet
	m.logs[1*64].Seq = 0
	m.sw(0, 700, 0, 10, -1, 0, false) // runs at 700
	m.mu.Lock()
	m.drain(false, false)
	if m.rd.records != 0 { // its time is unknown: at least the last one taken
		t.Errorf("took %d records with one being written, want 0", m.rd.records)
	}
	m.logs[1*64].Seq = 1
	m.drain(true, false)
	m.mu.Unlock()
	if got := row(t, m, 0, 0, "WAKELAT"); got != 300 {
		t.Errorf("WAKELAT %d, want 300", got)
	}
}

// The whole run's interference keeps InterferersPerEntity pairs per
// entity; a refused pair is counted once by Dropped, however often it
// interferes.
func TestReaderInterferersBound(t *testing.T) {
	m := fake(t, 1, 1, 64)
	for range 2 {
		for pid := range uint32(InterferersPerEntity + 1) {
			m.rd.addIntf(intfKey{0, pid + 1}, 10)
		}
	}
	m.rd.addIntf(intfKey{1, 1}, 5) // another entity has its own room
	m.rd.totals()
	if got := m.Dropped(); got != 1 {
		t.Errorf("Dropped %d, want 1", got)
	}
	if len(m.rd.itot) != InterferersPerEntity+1 || m.rd.itot[intfKey{0, 1}] != 20 || m.rd.itot[intfKey{1, 1}] != 5 {
		t.Errorf("%d pairs kept, (0, 1) %d ns, (1, 1) %d ns; want %d, 20, 5", len(m.rd.itot), m.rd.itot[intfKey{0, 1}], m.rd.itot[intfKey{1, 1}], InterferersPerEntity+1)
	}
}

// A task woken while still on its way out of its CPU (sched_waking sees it
// running; its switch says it is being woken) waits from that switch.
func TestReaderWokenOnItsWayOut(t *testing.T) {
	m := fake(t, 1, 2, 64)
	m.slices(0, 1000, 2000)
	m.sw(0, 50, 0, 10, -1, 0, false) // tid 10 runs
	m.wake(1, 100, 10, 0, 0, true)   // woken while still running
	m.put(0, schedEv{Kind: evSwitch, Flags: flWaking, A: 10, B: 99, Ts: 150, Ea: 1})
	m.cpus[0].Curr = 99
	m.sw(0, 400, 99, 10, -1, 0, false) // runs again at 400
	m.mu.Lock()
	m.drain(true, false)
	m.mu.Unlock()
	for _, c := range []struct {
		metric string
		want   int64
	}{{"RUNQ", 250}, {"WAKELAT", 300}, {"PREEMPT", 250}, {"NIVCSW", 0}, {"TOP1PID", 99}} {
		if got := row(t, m, 0, 0, c.metric); got != c.want {
			t.Errorf("%s %d, want %d", c.metric, got, c.want)
		}
	}
}

// The reader's state at a large rank count is its rows' ring (bounded by
// KernelBytesMax in Open) and a few KiB per entity: the whole run's
// interference pairs grow as they are seen, not sized for
// InterferersPerEntity per entity up front (hundreds of MB at 1,024 ranks).
func TestReaderInitMemory(t *testing.T) {
	const ranks = 1024
	nent := ranks + 2
	m := &Monitor{cfg: Config{Ranks: ranks}, nent: nent, ncpu: 4, ring: RingMin, nlog: LogMin}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	m.rd.init(m)
	runtime.ReadMemStats(&after)
	got := after.TotalAlloc - before.TotalAlloc
	rows := uint64(RingMin * (nent*nsum*8 + topCap*int(unsafe.Sizeof(cand{})) + 32))
	const perEntity = 16 << 10 // tasks (TasksPerEntity), histogram, TOP, open intervals
	if want := rows + uint64(nent)*perEntity + 4*LogMin*uint64(unsafe.Sizeof(schedEv{})); got > want {
		t.Errorf("the reader of %d ranks allocated %d MiB at construction, want at most %d MiB (rows %d MiB + %d KiB per entity + the CPUs' stages)",
			ranks, got>>20, want>>20, rows>>20, perEntity>>10)
	}
	t.Logf("%d ranks: %d MiB allocated (rows %d MiB)", ranks, got>>20, rows>>20)
}

// The reader raises its priority when it loses records or finds a log over
// an eighth full.
func TestReaderRaise(t *testing.T) {
	const n = 1024
	for _, c := range []struct {
		backlog uint64
		lost    bool
		want    bool
	}{{0, false, false}, {n / 32, false, false}, {n / 8, false, false}, {n/8 + 1, false, true}, {0, true, true}, {n, true, true}} {
		if got := raise(c.backlog, n, c.lost); got != c.want {
			t.Errorf("raise(backlog %d of %d, lost %v) = %v, want %v", c.backlog, n, c.lost, got, c.want)
		}
	}
}

// TestRaiseLag: a reader on time is never raised by Publish, whatever the
// ring's size and the slice: the lag that raises it is above what builds up
// between two drains (review: with a ring of 1024 or less, or slices under
// about 8 µs, the lag between drains reached ring/8 and the reader was
// raised on an idle host).
func TestRaiseLag(t *testing.T) {
	for _, ring := range []uint64{RingMin, 256, 1024, RingMax} {
		for _, slice := range []time.Duration{2 * time.Microsecond, 50 * time.Microsecond, 250 * time.Microsecond, 2 * time.Millisecond} {
			every := DrainEvery(slice)
			between := uint64(every/slice) + 1
			at := raiseLag(ring, every, slice)
			if at <= between {
				t.Errorf("ring %d, slice %v: raised at lag %d, but %d slices pass between drains", ring, slice, at, between)
			}
			if at < ring/8 {
				t.Errorf("ring %d, slice %v: raised at lag %d, under an eighth of the ring", ring, slice, at)
			}
		}
	}
	if got := raiseLag(1024, DrainEvery(0), 0); got != 128 {
		t.Errorf("unknown slice: raised at %d, want 128", got)
	}
}
