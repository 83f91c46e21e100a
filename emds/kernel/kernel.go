package kernel

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/btf"
	"github.com/cilium/ebpf/link"

	"github.com/bcsmpi/bcsmpi/emds"
	"github.com/bcsmpi/bcsmpi/internal/unix"
)

// Metrics are the columns of the per-entity files, in order.
var Metrics = []string{"ONCPU", "RUNQ", "PREEMPT", "WAKELAT", "NWAKE", "NIVCSW", "NMIGR",
	"TOP1PID", "TOP1NS", "TOP2PID", "TOP2NS", "TOP3PID", "TOP3NS", "TEND"}

// Top is how many interfering tasks each slice's row names.
const Top = 3

// HistBuckets is the number of wake-up latency buckets (two per power of two).
const HistBuckets = 128

// Bounds of the kernel's maps, per entity: threads followed (a Go rank has
// about ten) and (entity, task) interference pairs (least recently updated
// first out; Dropped counts the pairs the kernel could not insert at all).
const (
	TasksPerEntity       = 128
	InterferersPerEntity = 256
)

// DefaultBTFPath is where Linux exposes its own BTF.
const DefaultBTFPath = "/sys/kernel/btf/vmlinux"

// ErrUnavailable is matched by every reason the monitor cannot run here.
var ErrUnavailable = errors.New("emds/kernel: kernel monitor unavailable")

// UnavailableError says what is missing.
type UnavailableError struct {
	Missing string // what the monitor needs and did not find
	Err     error  // the underlying failure, if any
}

func (e *UnavailableError) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("needs %s (%v)", e.Missing, e.Err)
	}
	return "needs " + e.Missing
}
func (e *UnavailableError) Is(t error) bool { return t == ErrUnavailable }
func (e *UnavailableError) Unwrap() error   { return e.Err }

// Config describes what to monitor.
type Config struct {
	Ranks      int    // entities 0 .. Ranks-1
	RuntimePID int    // bcsrun's process id (entity "runtime")
	BTFPath    string // the kernel's BTF for CO-RE ("" = DefaultBTFPath)
	First, Len uint64 // the EMDS window: slices [First, First+Len)
	// Slice is the runtime's timeslice (0: unknown); it sets how often the
	// reader takes the finished slices (DrainEvery).
	Slice time.Duration
	// Recorded selects the ranks that get a window (nil: all); every rank
	// is followed in the kernel either way.
	Recorded []bool
}

// MaxWindowBytes bounds the memory of the monitor's windows.
const MaxWindowBytes = 1 << 30

// Entity names: rank<R>, master, runtime.
func (m *Monitor) EntityName(e int) string { return entityName(e, m.cfg.Ranks) }

func entityName(e, ranks int) string {
	switch {
	case e < ranks:
		return "rank" + strconv.Itoa(e)
	case e == ranks:
		return "master"
	}
	return "runtime"
}

// Monitor is a loaded, attached kernel monitor and its reader goroutine.
// Publish, the reader and Dump share the windows through mu; see the
// package doc for who may call what when.
type Monitor struct {
	cfg   Config
	objs  schedObjects
	bss   *ebpf.Map // the programs' .bss: the slice clock
	links []link.Link
	ncpu  int
	nent  int

	// Memory-mapped from the kernel's maps (see Close for their lifetime).
	maps  [][]byte
	clk   *schedSliceClock
	slots []schedSlot     // ncpu × ring × nent
	tops  []schedSliceTop // ncpu × ring
	waits []schedWaits    // ncpu × nent
	cpus  []schedCpuState // ncpu

	// The publisher's (node 0's agent).
	q           uint64          // the slice running now (sched.bpf.c's clock.cur)
	pubN, pubNS int64           // Publish's calls and their time
	ring        uint64          // slices the kernel keeps (a power of two, RingMin .. RingMax)
	labels      []atomic.Uint64 // labels[q % ring]: the runtime's number of slice q

	// The reader's (and Publish's when the reader falls behind), under mu.
	mu                        sync.Mutex
	every                     time.Duration // between drains
	stop                      chan struct{} // closed: exit
	exited                    chan struct{} // closed by the reader when it exits
	stopOnce                  sync.Once
	d                         uint64  // the first slice not taken
	acc                       []int64 // per (slice − d, entity, field): the slots summed over CPUs
	cpuSnap                   []schedCpuState
	nOld                      []int64    // per entity: open waits begun before d
	extra                     []int64    // per entity: open ONCPU, PREEMPT in the slice being recorded
	cand                      []openIntf // one slice's interference by pair
	top                       []topEntry // nent × Top
	vals                      []int64
	win                       []*emds.Window
	drains, drainNS, drainCPU [2]int64 // drains by the reader [0] and by Publish [1], their time and CPU time
	lost                      int64    // slices the reader fell too far behind to take

	ikeys []schedIntfKey
	ivals []schedIntfVal         // len(ikeys) × ncpu
	ikern map[schedIntfKey]int64 // the kernel's interference totals (read at Dump)
	comm  map[uint32]string

	master int // registered master tid, 0 if none

	// ids are the registered ids (AddRank, SetMasterThread) → entity, for a
	// task that was already running when it was registered: the kernel
	// learns its entity only at its next switch.
	idsMu sync.RWMutex
	ids   map[uint32]int
}

// The kernel keeps the last ring slices per entity and CPU, ring a power
// of two from RingMin to RingMax (sched.bpf.c's RING_MAX), the largest
// whose maps fit KernelBytesMax: the reader must take each slice within
// ring − 2 slices of its end, or it is lost (counted in
// emds-kernel-cost.csv); Publish takes them itself when the reader is half
// the ring behind.
const (
	RingMin        = 256
	RingMax        = 4096
	KernelBytesMax = 64 << 20
)

// The fields of a slot (sched.bpf.c's F_*): Metrics' first nsum, then the
// open waits begun in the slice.
const (
	nsum     = 7
	fOpenN   = 7
	fOpenSum = 8
	nf       = 9
)

type openIntf struct {
	k  schedIntfKey
	ns int64
}

type topEntry struct {
	pid uint32
	ns  int64
}

// Open loads and attaches the programs and starts the reader. On any
// failure it releases what it took and returns an error; an
// *UnavailableError says what is missing.
func Open(cfg Config) (*Monitor, error) {
	if cfg.BTFPath == "" {
		cfg.BTFPath = DefaultBTFPath
	}
	if cfg.Ranks < 1 {
		return nil, fmt.Errorf("emds/kernel: %d ranks, want 1 or more", cfg.Ranks)
	}
	if cfg.Slice < 0 {
		return nil, fmt.Errorf("emds/kernel: slice %v, want 0 (unknown) or more", cfg.Slice)
	}
	if rel := unix.KernelRelease(); !releaseAtLeast(rel, 5, 19) {
		return nil, &UnavailableError{Missing: fmt.Sprintf("Linux 5.19 or later (this kernel is %q)", rel)}
	}
	kspec, err := btf.LoadSpec(cfg.BTFPath)
	if err != nil {
		return nil, &UnavailableError{Missing: fmt.Sprintf("the kernel's BTF at %s (a kernel built with CONFIG_DEBUG_INFO_BTF=y)", cfg.BTFPath), Err: err}
	}
	spec, err := loadSched()
	if err != nil {
		return nil, fmt.Errorf("emds/kernel: the embedded eBPF object: %w", err)
	}
	nent := cfg.Ranks + 2
	ncpu, err := ebpf.PossibleCPU()
	if err != nil {
		return nil, fmt.Errorf("emds/kernel: possible CPUs: %w", err)
	}
	perSlice := ncpu * (nent*int(unsafe.Sizeof(schedSlot{})) + int(unsafe.Sizeof(schedSliceTop{})))
	ring := RingMax
	for ring > RingMin && ring*perSlice > KernelBytesMax {
		ring /= 2
	}
	if ring*perSlice > KernelBytesMax {
		return nil, fmt.Errorf("emds/kernel: %d CPUs × %d entities × %d slices need %d MiB of kernel memory, over %d MiB; run fewer ranks",
			ncpu, nent, ring, ring*perSlice>>20, KernelBytesMax>>20)
	}
	spec.Maps[schedMapEnts].MaxEntries = uint32(nent + 64)
	spec.Maps[schedMapWakehist].MaxEntries = uint32(nent * HistBuckets)
	spec.Maps[schedMapTasks].MaxEntries = uint32(max(256, TasksPerEntity*nent))
	spec.Maps[schedMapIntf].MaxEntries = uint32(max(512, InterferersPerEntity*nent))
	spec.Maps[schedMapTops].MaxEntries = uint32(ncpu * ring)
	spec.Maps[schedMapSlots].MaxEntries = uint32(ncpu * ring * nent)
	spec.Maps[schedMapOpenWaits].MaxEntries = uint32(ncpu * nent)
	spec.Maps[schedMapCpus].MaxEntries = uint32(ncpu)
	for name, v := range map[string]uint32{"runtime_tgid": uint32(cfg.RuntimePID), "nranks": uint32(cfg.Ranks), "nent": uint32(nent), "ring": uint32(ring)} {
		if err := spec.Variables[name].Set(v); err != nil {
			return nil, fmt.Errorf("emds/kernel: %w", err)
		}
	}
	if v := spec.Variables[schedVarClock]; v == nil || v.Offset != 0 || v.Size() != uint32(unsafe.Sizeof(schedSliceClock{})) {
		return nil, fmt.Errorf("emds/kernel: the embedded eBPF object's slice clock is not .bss's only variable (%v)", v)
	}
	windows := 2
	for r := range cfg.Ranks {
		if cfg.Recorded == nil || (r < len(cfg.Recorded) && cfg.Recorded[r]) {
			windows++
		}
	}
	if b := uint64(windows) * cfg.Len * uint64(len(Metrics)*8+1); b > MaxWindowBytes {
		return nil, fmt.Errorf("emds/kernel: %d windows of %d slices would take %d MiB, over %d MiB; record fewer slices (emds_slices) or ranks (mds_ranks)",
			windows, cfg.Len, b>>20, MaxWindowBytes>>20)
	}
	m := &Monitor{cfg: cfg, nent: nent, ncpu: ncpu, ring: uint64(ring), labels: make([]atomic.Uint64, ring)}
	var objs struct {
		schedObjects
		Bss *ebpf.Map `ebpf:".bss"`
	}
	if err := spec.LoadAndAssign(&objs, &ebpf.CollectionOptions{Programs: ebpf.ProgramOptions{KernelTypes: kspec}}); err != nil {
		return nil, classify("loading the eBPF programs", err)
	}
	m.objs, m.bss = objs.schedObjects, objs.Bss
	if err := m.mapMemory(); err != nil {
		m.Close()
		return nil, err
	}
	m.clk.Bound[0] = uint64(unix.Now()) // slice 0: from now to the first Publish
	for _, p := range []*ebpf.Program{m.objs.OnSwitch, m.objs.OnWaking, m.objs.OnWakeup, m.objs.OnWakeupNew, m.objs.OnMigrate} {
		l, err := link.AttachTracing(link.TracingOptions{Program: p, AttachType: ebpf.AttachTraceRawTp})
		if err != nil {
			m.Close()
			return nil, classify("attaching to the scheduler's tracepoints", err)
		}
		m.links = append(m.links, l)
	}
	if err := m.objs.Ents.Put(uint32(cfg.RuntimePID), uint32(cfg.Ranks+1)); err != nil {
		m.Close()
		return nil, classify("registering bcsrun", err)
	}
	m.acc = make([]int64, ring*nent*nf)
	m.cpuSnap = make([]schedCpuState, ncpu)
	m.nOld = make([]int64, nent)
	m.extra = make([]int64, 2*nent)
	m.cand = make([]openIntf, 0, 64)
	m.ikeys = make([]schedIntfKey, 256)
	m.ivals = make([]schedIntfVal, 256*ncpu)
	m.ikern = make(map[schedIntfKey]int64)
	m.comm = make(map[uint32]string)
	m.ids = map[uint32]int{uint32(cfg.RuntimePID): cfg.Ranks + 1}
	m.top = make([]topEntry, nent*Top)
	m.vals = make([]int64, len(Metrics))
	m.win = make([]*emds.Window, nent)
	for e := range m.win {
		if e >= cfg.Ranks || cfg.Recorded == nil || (e < len(cfg.Recorded) && cfg.Recorded[e]) {
			m.win[e] = emds.NewWindow(Metrics, nil, cfg.First, cfg.Len)
		}
	}
	m.every = DrainEvery(cfg.Slice)
	m.stop, m.exited = make(chan struct{}), make(chan struct{})
	go m.reader()
	return m, nil
}

// DrainEvery is how often the reader takes the finished slices: an eighth
// of the smallest ring's time at slice (Config.Slice), within 1 to 8 ms;
// 4 ms when the slice is unknown.
func DrainEvery(slice time.Duration) time.Duration {
	if slice <= 0 {
		return 4 * time.Millisecond
	}
	return min(max(slice*RingMin/8, time.Millisecond), 8*time.Millisecond)
}

// mapMemory maps the slice clock and the maps the reader reads.
func (m *Monitor) mapMemory() error {
	page := os.Getpagesize()
	mp := func(what string, mp *ebpf.Map, bytes int) (unsafe.Pointer, error) {
		b, err := unix.Map(mp.FD(), (bytes+page-1)/page*page)
		if err != nil {
			return nil, fmt.Errorf("emds/kernel: mapping the %s: %w", what, err)
		}
		m.maps = append(m.maps, b)
		return unsafe.Pointer(&b[0]), nil
	}
	p, err := mp("slice clock", m.bss, int(unsafe.Sizeof(schedSliceClock{})))
	if err != nil {
		return err
	}
	m.clk = (*schedSliceClock)(p)
	ring := int(m.ring)
	n := m.ncpu * ring * m.nent
	if p, err = mp("slices' counters", m.objs.Slots, n*int(unsafe.Sizeof(schedSlot{}))); err != nil {
		return err
	}
	m.slots = unsafe.Slice((*schedSlot)(p), n)
	if p, err = mp("slices' interference", m.objs.Tops, m.ncpu*ring*int(unsafe.Sizeof(schedSliceTop{}))); err != nil {
		return err
	}
	m.tops = unsafe.Slice((*schedSliceTop)(p), m.ncpu*ring)
	if p, err = mp("open waits", m.objs.OpenWaits, m.ncpu*m.nent*int(unsafe.Sizeof(schedWaits{}))); err != nil {
		return err
	}
	m.waits = unsafe.Slice((*schedWaits)(p), m.ncpu*m.nent)
	if p, err = mp("CPUs' state", m.objs.Cpus, m.ncpu*int(unsafe.Sizeof(schedCpuState{}))); err != nil {
		return err
	}
	m.cpus = unsafe.Slice((*schedCpuState)(p), m.ncpu)
	return nil
}

// classify turns a load or attach failure into what is missing.
func classify(what string, err error) error {
	switch {
	case errors.Is(err, os.ErrPermission):
		return &UnavailableError{Missing: fmt.Sprintf("CAP_BPF and CAP_PERFMON, or CAP_SYS_ADMIN (uid %d, %s)", os.Getuid(), what), Err: err}
	case errors.Is(err, ebpf.ErrNotSupported), errors.Is(err, btf.ErrNotFound):
		return &UnavailableError{Missing: fmt.Sprintf("a kernel with BTF tracepoints (tp_btf) and per-CPU map lookups, Linux 5.19 or later (%s)", what), Err: err}
	}
	return fmt.Errorf("emds/kernel: %s: %w", what, err)
}

// releaseAtLeast says whether a release like "6.1.0-18-amd64" is ≥ maj.min.
func releaseAtLeast(rel string, maj, min int) bool {
	f := strings.FieldsFunc(rel, func(r rune) bool { return r < '0' || r > '9' })
	if len(f) < 2 {
		return false
	}
	a, err1 := strconv.Atoi(f[0])
	b, err2 := strconv.Atoi(f[1])
	if err1 != nil || err2 != nil {
		return false
	}
	return a > maj || (a == maj && b >= min)
}

// AddRank registers rank's process (all its threads). Safe for concurrent use.
func (m *Monitor) AddRank(rank, pid int) error {
	if rank < 0 || rank >= m.cfg.Ranks {
		return fmt.Errorf("emds/kernel: rank %d, want 0 .. %d", rank, m.cfg.Ranks-1)
	}
	m.idsMu.Lock()
	m.ids[uint32(pid)] = rank
	m.idsMu.Unlock()
	return m.objs.Ents.Put(uint32(pid), uint32(rank))
}

// SetMasterThread registers the calling OS thread as the master's. The
// caller must be locked to its thread; only the first call registers.
func (m *Monitor) SetMasterThread() error {
	if m.master != 0 {
		return nil
	}
	m.master = unix.Gettid()
	m.idsMu.Lock()
	m.ids[uint32(m.master)] = m.cfg.Ranks
	m.idsMu.Unlock()
	return m.objs.Ents.Put(uint32(m.master), uint32(m.cfg.Ranks))
}

// Publish says that the runtime's slice has ended now and the next begins:
// what the programs see from now on belongs to the next row. It is the
// monitor's only work on the slice's path: a clock read and three stores
// to memory shared with the programs, no system call, no allocation. Call
// it from one goroutine (node 0's agent), never concurrently with or after
// Close.
func (m *Monitor) Publish(slice uint64) {
	now := unix.Now()
	q := m.q
	m.labels[q%m.ring].Store(slice)
	atomic.StoreUint64(&m.clk.Bound[(q+1)%m.ring], uint64(now))
	atomic.StoreUint64(&m.clk.Cur, q+1)
	m.q = q + 1
	m.pubN++
	m.pubNS += unix.Now() - now
	// A reader starved of CPU would lose slices: take them here instead.
	if q+1-atomic.LoadUint64(&m.clk.Done) >= m.ring/2 && m.mu.TryLock() {
		m.drainLocked(false, true)
		m.mu.Unlock()
	}
}

// reader takes the finished slices every m.every, on its own OS thread
// (so that its CPU time is its own), until stop.
func (m *Monitor) reader() {
	runtime.LockOSThread()
	defer close(m.exited)
	t := time.NewTicker(m.every)
	defer t.Stop()
	for {
		select {
		case <-m.stop:
			return
		case <-t.C:
			m.mu.Lock()
			m.drainLocked(false, false)
			m.mu.Unlock()
		}
	}
}

// drainLocked drains and counts it (m.mu held): by Publish, when the
// reader has fallen half the ring behind.
func (m *Monitor) drainLocked(final, byPublish bool) {
	t0, c0 := unix.Now(), unix.ThreadCPUTime()
	m.drain(final)
	i := 0
	if byPublish {
		i = 1
	}
	m.drains[i]++
	m.drainNS[i] += unix.Now() - t0
	m.drainCPU[i] += unix.ThreadCPUTime() - c0
}

// stopReader stops the reader and takes the last slices.
func (m *Monitor) stopReader() {
	if m.stop == nil {
		return
	}
	m.stopOnce.Do(func() {
		close(m.stop)
		<-m.exited
	})
	m.mu.Lock()
	m.drainLocked(true, false)
	m.mu.Unlock()
}

// drain records the slices from m.d up to two before the current one (all
// finished ones when final): the kernel's counts, plus the parts of the
// intervals still open (a task running, a task waiting, another task running
// while it waits), which the kernel credits only when they end and then
// no longer to the slices taken.
func (m *Monitor) drain(final bool) {
	c := atomic.LoadUint64(&m.clk.Cur)
	ring := m.ring
	if c >= ring-2 && m.d < c-(ring-2) { // the kernel may have reused their buckets
		m.lost += int64(c - (ring - 2) - m.d)
		m.d = c - (ring - 2)
	}
	last := c // the last slice taken, + 1
	if !final {
		last = max(c, 1) - 1
	}
	if last <= m.d {
		return
	}
	d := m.d
	atomic.StoreUint64(&m.clk.Done, last) // from here on the kernel leaves them alone
	now := int64(unix.Now())
	copy(m.cpuSnap, m.cpus)

	// The kernel's counts of slices d .. c, summed over CPUs (mod 2^64:
	// the open waits' counts move from the CPU where a wait began to the
	// one where it ended).
	n := int(c - d + 1)
	acc := m.acc[:n*m.nent*nf]
	clear(acc)
	for cpu := range m.ncpu {
		for i := range n {
			q := d + uint64(i)
			row := m.slots[(cpu*int(ring)+int(q%ring))*m.nent:][:m.nent]
			for e := range row {
				sl := &row[e]
				if atomic.LoadUint64(&sl.Tag) != q+1 {
					continue
				}
				a := acc[(i*m.nent+e)*nf:][:nf]
				for f := range nf {
					a[f] += int64(sl.V[f])
				}
			}
		}
	}
	// The open waits that began before d: all of them, less those that
	// began in d .. c.
	for e := range m.nent {
		var all uint64
		for cpu := range m.ncpu {
			all += m.waits[cpu*m.nent+e].N
		}
		old := int64(all)
		for i := range n {
			old -= acc[(i*m.nent+e)*nf+fOpenN]
		}
		if old < 0 || old > 1<<20 { // a race with the kernel, or garbage
			old = 0
		}
		m.nOld[e] = old
	}
	c2 := atomic.LoadUint64(&m.clk.Cur)
	for q := d; q < last; q++ {
		if q+ring <= c2 { // its bucket, bounds or label may have been reused while read
			m.lost++
			continue
		}
		b0, b1 := int64(atomic.LoadUint64(&m.clk.Bound[q%ring])), int64(atomic.LoadUint64(&m.clk.Bound[(q+1)%ring]))
		m.slice(q, int(q-d), b0, b1, now)
	}
	m.d = last
}

// slice records slice q's row (i = q − d in acc), which ran from b0 to b1:
// the kernel's counts plus the parts in [b0, b1) of the intervals open at
// now.
func (m *Monitor) slice(q uint64, i int, b0, b1, now int64) {
	label := m.labels[q%m.ring].Load()
	if label < m.cfg.First || label-m.cfg.First >= m.cfg.Len {
		return // outside the windows
	}
	clear(m.top)
	clear(m.extra)
	m.cand = m.cand[:0]
	for cpu := range m.ncpu {
		t := &m.tops[cpu*int(m.ring)+int(q%m.ring)]
		if atomic.LoadUint64(&t.Tag) != q+1 {
			continue
		}
		for i, ns := range t.Ns {
			if ns > 0 && int(t.Ent[i]) < m.nent {
				m.cand = addCand(m.cand, schedIntfKey{Ent: t.Ent[i], Pid: t.Pid[i]}, int64(ns))
			}
		}
	}
	for cpu := range m.cpuSnap {
		cs := &m.cpuSnap[cpu]
		if cs.Start == 0 || now <= int64(cs.Start) {
			continue
		}
		e := int(cs.CurrEnt) - 1
		if e < 0 && cs.CurrPid != 0 { // switched in before it was registered?
			m.idsMu.RLock()
			if id, ok := m.ids[cs.CurrPid]; ok {
				e = id
			}
			m.idsMu.RUnlock()
		}
		if e >= 0 && e < m.nent {
			m.extra[e*2] += overlap(int64(cs.Start), now, b0, b1)
		}
		if w := int(cs.WaitEnt) - 1; w >= 0 && w < m.nent && w != int(cs.CurrEnt)-1 && cs.CurrPid != 0 {
			if o := overlap(max(int64(cs.Start), int64(cs.WaitSince)), now, b0, b1); o > 0 {
				m.extra[w*2+1] += o
				m.cand = addCand(m.cand, schedIntfKey{Ent: uint32(w), Pid: cs.CurrPid}, o)
			}
		}
	}
	for _, c := range m.cand {
		m.addTop(c.k, c.ns)
	}
	for e := range m.nent {
		if m.win[e] == nil {
			continue
		}
		a := m.acc[(i*m.nent+e)*nf:][:nf]
		waiting := m.nOld[e] // open waits that began before q: waiting all through it
		for j := range i {
			waiting += m.acc[(j*m.nent+e)*nf+fOpenN]
		}
		runq := openWaits(waiting, a[fOpenN], a[fOpenSum], b0, b1)
		copy(m.vals, a[:nsum])
		m.vals[0] += m.extra[e*2]
		m.vals[1] += runq
		m.vals[2] += m.extra[e*2+1]
		for k := range nsum {
			m.vals[k] = max(m.vals[k], 0)
		}
		for k, t := range m.top[e*Top:][:Top] {
			m.vals[nsum+2*k], m.vals[nsum+2*k+1] = int64(t.pid), t.ns
		}
		m.vals[nsum+2*Top] = b1
		m.win[e].Record(label, m.vals)
	}
}

// overlap is the length of [from, to) ∩ [b0, b1).
func overlap(from, to, b0, b1 int64) int64 {
	return max(0, min(to, b1)-max(from, b0))
}

// openWaits is the time in slice [b0, b1) of the waits still open: waiting
// began before b0, and n began in the slice at times summing to sum (mod
// 2^64).
func openWaits(waiting, n, sum, b0, b1 int64) int64 {
	w := max(waiting, 0) * (b1 - b0)
	if n > 0 {
		w += max(n*b1-sum, 0)
	}
	return max(w, 0)
}

// addCand adds ns to k's entry of list.
func addCand(list []openIntf, k schedIntfKey, ns int64) []openIntf {
	for i := range list {
		if list[i].k == k {
			list[i].ns += ns
			return list
		}
	}
	return append(list, openIntf{k, ns})
}

// addTop enters d ns of interference by k.Pid into k.Ent's top list.
func (m *Monitor) addTop(k schedIntfKey, d int64) {
	if d <= 0 || int(k.Ent) >= m.nent {
		return
	}
	t := m.top[int(k.Ent)*Top:][:Top]
	for i := range t {
		if d > t[i].ns {
			copy(t[i+1:], t[i:Top-1])
			t[i] = topEntry{k.Pid, d}
			return
		}
	}
}

// readIntf reads the interference map's totals into ikern, and the tasks' names.
func (m *Monitor) readIntf() error {
	var icur ebpf.MapBatchCursor
	for {
		n, err := m.objs.Intf.BatchLookup(&icur, m.ikeys, m.ivals, nil)
		for i := 0; i < n; i++ {
			k := m.ikeys[i]
			var sum int64
			for cpu := 0; cpu < m.ncpu; cpu++ {
				v := &m.ivals[i*m.ncpu+cpu]
				sum += int64(v.Ns)
				if v.Comm[0] != 0 && !sameComm(m.comm[k.Pid], v.Comm[:]) {
					m.comm[k.Pid] = commString(v.Comm[:]) // the latest name: a task renames itself at exec
				}
			}
			m.ikern[k] = sum
		}
		if errors.Is(err, ebpf.ErrKeyNotExist) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("emds/kernel: reading the interference map: %w", err)
		}
	}
}

func sameComm(s string, c []int8) bool {
	for i, x := range c {
		if x == 0 {
			return i == len(s)
		}
		if i >= len(s) || s[i] != byte(x) {
			return false
		}
	}
	return len(s) == len(c)
}

func commString(c []int8) string {
	b := make([]byte, 0, len(c))
	for _, x := range c {
		if x == 0 {
			break
		}
		b = append(b, byte(x))
	}
	return string(b)
}

// Dropped is the number of interference pairs that did not fit the maps
// (0 after Close).
func (m *Monitor) Dropped() uint64 {
	var d uint64
	for _, c := range m.cpus {
		d += c.Dropped
	}
	return d
}

// Bytes is the memory the windows use.
func (m *Monitor) Bytes() int {
	n := 0
	for _, w := range m.win {
		if w != nil {
			n += w.Bytes()
		}
	}
	return n
}

// Close stops the reader, detaches the programs and frees the maps. Safe
// to call twice; Publish must not run during or after it.
func (m *Monitor) Close() error {
	m.stopReader()
	for _, l := range m.links {
		l.Close()
	}
	m.links = nil
	m.clk, m.slots, m.tops, m.waits, m.cpus = nil, nil, nil, nil, nil
	for _, b := range m.maps {
		unix.Unmap(b)
	}
	m.maps = nil
	if m.bss != nil {
		m.bss.Close()
		m.bss = nil
	}
	return m.objs.Close()
}

// Dump takes the last slices, stops the reader and writes the files
// (doc.go lists them) into dir with permissions perm. Call it after the
// last Publish; it reads the whole run's histograms and interference totals
// from the kernel, so call it before Close.
func (m *Monitor) Dump(dir string, perm os.FileMode) error {
	m.stopReader()
	var errs []error
	for e, w := range m.win {
		if w == nil {
			continue
		}
		errs = append(errs, w.Dump(filepath.Join(dir, "emds-kernel-"+m.EntityName(e)+".csv"), perm))
	}
	if err := m.readIntf(); err != nil {
		return errors.Join(append(errs, err)...)
	}
	errs = append(errs, writeAtomic(filepath.Join(dir, "emds-kernel-interferers.csv"), perm, m.writeInterferers))
	errs = append(errs, writeAtomic(filepath.Join(dir, "emds-kernel-wakehist.csv"), perm, m.writeHist))
	errs = append(errs, writeAtomic(filepath.Join(dir, "emds-kernel-ids.csv"), perm, m.writeIDs))
	errs = append(errs, writeAtomic(filepath.Join(dir, "emds-kernel-cost.csv"), perm, m.writeCost))
	return errors.Join(errs...)
}

// writeCost says what the monitor cost: Publish's calls and time (on the
// slice's path), the reader's drains, their time and CPU time, the slices
// it lost, and each program's runs and time in the kernel (counted only
// while the sysctl kernel.bpf_stats_enabled is 1; 0 otherwise).
func (m *Monitor) writeCost(w io.Writer) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintln(bw, "what,count,ns")
	fmt.Fprintf(bw, "publish,%d,%d\n", m.pubN, m.pubNS)
	fmt.Fprintf(bw, "drain,%d,%d\n", m.drains[0], m.drainNS[0])
	fmt.Fprintf(bw, "drain_cpu,%d,%d\n", m.drains[0], m.drainCPU[0])
	fmt.Fprintf(bw, "publish_drain,%d,%d\n", m.drains[1], m.drainNS[1])
	fmt.Fprintf(bw, "publish_drain_cpu,%d,%d\n", m.drains[1], m.drainCPU[1])
	fmt.Fprintf(bw, "lost,%d,0\n", m.lost)
	for _, p := range []struct {
		name string
		p    *ebpf.Program
	}{{"sched_switch", m.objs.OnSwitch}, {"sched_waking", m.objs.OnWaking}, {"sched_wakeup", m.objs.OnWakeup},
		{"sched_wakeup_new", m.objs.OnWakeupNew}, {"sched_migrate_task", m.objs.OnMigrate}} {
		st, err := p.p.Stats()
		if err != nil {
			return fmt.Errorf("emds/kernel: %s's run time: %w", p.name, err)
		}
		fmt.Fprintf(bw, "%s,%d,%d\n", p.name, st.RunCount, st.Runtime.Nanoseconds())
	}
	return bw.Flush()
}

// writeIDs lists the registered ids: rank processes, the master's thread,
// bcsrun's process.
func (m *Monitor) writeIDs(w io.Writer) error {
	type row struct{ id, ent uint32 }
	var rows []row
	var k, v uint32
	it := m.objs.Ents.Iterate()
	for it.Next(&k, &v) {
		rows = append(rows, row{k, v})
	}
	if err := it.Err(); err != nil {
		return fmt.Errorf("emds/kernel: reading the registered ids: %w", err)
	}
	sort.Slice(rows, func(i, j int) bool {
		return rows[i].ent < rows[j].ent || rows[i].ent == rows[j].ent && rows[i].id < rows[j].id
	})
	bw := bufio.NewWriter(w)
	fmt.Fprintln(bw, "id,entity,kind")
	for _, r := range rows {
		kind := "process"
		if int(r.ent) == m.cfg.Ranks {
			kind = "thread"
		}
		fmt.Fprintf(bw, "%d,%s,%s\n", r.id, m.EntityName(int(r.ent)), kind)
	}
	return bw.Flush()
}

func (m *Monitor) writeInterferers(w io.Writer) error {
	type row struct {
		k  schedIntfKey
		ns int64
	}
	var rows []row
	for k, v := range m.ikern {
		if v > 0 {
			rows = append(rows, row{k, v})
		}
	}
	sort.Slice(rows, func(i, j int) bool {
		if rows[i].k.Ent != rows[j].k.Ent {
			return rows[i].k.Ent < rows[j].k.Ent
		}
		if rows[i].ns != rows[j].ns {
			return rows[i].ns > rows[j].ns
		}
		return rows[i].k.Pid < rows[j].k.Pid
	})
	bw := bufio.NewWriter(w)
	fmt.Fprintln(bw, "entity,pid,comm,ns")
	for _, r := range rows {
		fmt.Fprintf(bw, "%s,%d,%s,%d\n", m.EntityName(int(r.k.Ent)), r.k.Pid, csvSafe(m.comm[r.k.Pid]), r.ns)
	}
	return bw.Flush()
}

// csvSafe keeps a task name to one CSV field: commas and quotes become _.
func csvSafe(s string) string {
	if s == "" {
		return "?"
	}
	return strings.Map(func(r rune) rune {
		if r == ',' || r == '"' || r == '\n' || r == '\r' {
			return '_'
		}
		return r
	}, s)
}

func (m *Monitor) writeHist(w io.Writer) error {
	keys := make([]uint32, m.nent*HistBuckets)
	vals := make([]uint64, len(keys)*m.ncpu)
	var cur ebpf.MapBatchCursor
	n, err := m.objs.Wakehist.BatchLookup(&cur, keys, vals, nil)
	if err != nil && !errors.Is(err, ebpf.ErrKeyNotExist) {
		return fmt.Errorf("emds/kernel: reading the wake-up histograms: %w", err)
	}
	bw := bufio.NewWriter(w)
	fmt.Fprintln(bw, "entity,lo_ns,hi_ns,count")
	for i := 0; i < n; i++ {
		var c uint64
		for cpu := 0; cpu < m.ncpu; cpu++ {
			c += vals[i*m.ncpu+cpu]
		}
		if c == 0 {
			continue
		}
		e, b := int(keys[i])/HistBuckets, int(keys[i])%HistBuckets
		lo, hi := BucketBounds(b)
		fmt.Fprintf(bw, "%s,%d,%d,%d\n", m.EntityName(e), lo, hi, c)
	}
	return bw.Flush()
}

// BucketBounds is the range [lo, hi) in ns of wake-up latency bucket b: two
// buckets per power of two (sched.bpf.c's bucket()).
func BucketBounds(b int) (lo, hi uint64) {
	if b < 2 {
		return 0, 2
	}
	p, half := uint(b/2), uint64(b%2)
	base := uint64(1) << p
	step := base / 2
	if p >= 63 {
		return base + half*step, 1<<63 - 1
	}
	return base + half*step, base + (half+1)*step
}

func writeAtomic(path string, perm os.FileMode, fill func(io.Writer) error) error {
	f, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	err = fill(f)
	if err == nil {
		err = f.Chmod(perm)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
	}
	return err
}
