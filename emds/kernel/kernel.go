package kernel

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"

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

// Monitor is a loaded, attached kernel monitor.
type Monitor struct {
	cfg   Config
	objs  schedObjects
	links []link.Link
	ncpu  int
	nent  int

	keys     []uint32
	stats    []schedEntStats // nent × ncpu
	cpus     []schedCpuState // ncpu
	skeys    []schedIntfKey
	svals    []uint64 // len(skeys) × ncpu
	ikeys    []schedIntfKey
	ivals    []schedIntfVal // len(ikeys) × ncpu
	cum      []int64        // nent × nsum: cumulative ONCPU, RUNQ, PREEMPT, WAKELAT, NWAKE, NIVCSW, NMIGR
	prev     []int64
	ikern    map[schedIntfKey]int64 // the kernel's interference totals (read at Dump)
	dirty    []openIntf             // the kernel's growth per pair since the previous Sample
	kpre     []int64                // per entity, the kernel's PREEMPT at the previous Sample
	open     []openIntf             // interference still open on some CPU at this Sample
	prevOpen []openIntf             // open at the previous Sample
	comm     map[uint32]string
	top      []topEntry // nent × Top
	vals     []int64
	win      []*emds.Window
	master   int // registered master tid, 0 if none

	samples, sampleNS, sampleCPU int64 // Sample's calls, the time they took and their CPU time

	// ids are the registered ids (AddRank, SetMasterThread) → entity, for a
	// task that was already running when it was registered: the kernel
	// learns its entity only at its next switch.
	idsMu sync.RWMutex
	ids   map[uint32]int
}

const nsum = 7

type openIntf struct {
	k  schedIntfKey
	ns int64
}

type topEntry struct {
	pid uint32
	ns  int64
}

// Open loads and attaches the programs. On any failure it releases what it
// took and returns an error; an *UnavailableError says what is missing.
func Open(cfg Config) (*Monitor, error) {
	if cfg.BTFPath == "" {
		cfg.BTFPath = DefaultBTFPath
	}
	if cfg.Ranks < 1 {
		return nil, fmt.Errorf("emds/kernel: %d ranks, want 1 or more", cfg.Ranks)
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
	spec.Maps[schedMapEnts].MaxEntries = uint32(nent + 64)
	spec.Maps[schedMapStats].MaxEntries = uint32(nent)
	spec.Maps[schedMapWakehist].MaxEntries = uint32(nent * HistBuckets)
	// A hash map's batch read walks every bucket: size the maps Sample
	// reads by the job, not by the worst case.
	spec.Maps[schedMapTasks].MaxEntries = uint32(max(256, TasksPerEntity*nent))
	spec.Maps[schedMapIntf].MaxEntries = uint32(max(512, InterferersPerEntity*nent))
	spec.Maps[schedMapSliceIntf].MaxEntries = uint32(max(256, 16*nent))
	if err := spec.Variables["runtime_tgid"].Set(uint32(cfg.RuntimePID)); err != nil {
		return nil, fmt.Errorf("emds/kernel: %w", err)
	}
	if err := spec.Variables["nranks"].Set(uint32(cfg.Ranks)); err != nil {
		return nil, fmt.Errorf("emds/kernel: %w", err)
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
	m := &Monitor{cfg: cfg, nent: nent}
	if m.ncpu, err = ebpf.PossibleCPU(); err != nil {
		return nil, fmt.Errorf("emds/kernel: possible CPUs: %w", err)
	}
	if err := spec.LoadAndAssign(&m.objs, &ebpf.CollectionOptions{Programs: ebpf.ProgramOptions{KernelTypes: kspec}}); err != nil {
		return nil, classify("loading the eBPF programs", err)
	}
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
	m.keys = make([]uint32, nent)
	m.stats = make([]schedEntStats, nent*m.ncpu)
	m.cpus = make([]schedCpuState, m.ncpu)
	m.skeys = make([]schedIntfKey, 64)
	m.svals = make([]uint64, 64*m.ncpu)
	m.ikeys = make([]schedIntfKey, 256)
	m.ivals = make([]schedIntfVal, 256*m.ncpu)
	m.cum = make([]int64, nent*nsum)
	m.prev = make([]int64, nent*nsum)
	m.ikern = make(map[schedIntfKey]int64)
	m.kpre = make([]int64, nent)
	m.open = make([]openIntf, 0, m.ncpu)
	m.prevOpen = make([]openIntf, 0, m.ncpu)
	m.dirty = make([]openIntf, 0, 64)
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
	return m, nil
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

// Sample reads the kernel's counters and records what happened since the
// previous Sample as slice's row of every entity.
func (m *Monitor) Sample(slice uint64) error {
	t0, c0 := unix.Now(), unix.ThreadCPUTime()
	defer func() {
		m.samples++
		m.sampleNS += unix.Now() - t0
		m.sampleCPU += unix.ThreadCPUTime() - c0
	}()
	if err := m.read(); err != nil {
		return err
	}
	now := int64(unix.Now())
	for i := range m.cum {
		m.cum[i] = 0
	}
	moved := false // some entity's PREEMPT moved in the kernel since the previous Sample
	for e := 0; e < m.nent; e++ {
		c := m.cum[e*nsum:][:nsum]
		var nwait, since uint64
		for cpu := 0; cpu < m.ncpu; cpu++ {
			s := &m.stats[e*m.ncpu+cpu]
			c[0] += int64(s.OncpuNs)
			c[1] += int64(s.RunqNs)
			c[2] += int64(s.PreemptNs)
			c[3] += int64(s.WakeNs)
			c[4] += int64(s.Nwake)
			c[5] += int64(s.Nivcsw)
			c[6] += int64(s.Nmigr)
			nwait += s.Nwait
			since += s.SinceSum
		}
		if c[2] != m.kpre[e] {
			m.kpre[e], moved = c[2], true
		}
		// The waits still open: n tasks runnable since (sum)/n on average.
		if n := int64(nwait); n > 0 && n <= 1<<20 {
			if open := n*now - int64(since); open > 0 {
				c[1] += open
			}
		}
	}
	m.dirty = m.dirty[:0]
	if moved {
		if err := m.takeSliceIntf(); err != nil {
			return err
		}
	}
	// The intervals still open on each CPU.
	m.open = m.open[:0]
	for cpu := range m.cpus {
		cs := &m.cpus[cpu]
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
			m.cum[e*nsum] += now - int64(cs.Start)
		}
		if w := int(cs.WaitEnt) - 1; w >= 0 && w < m.nent && w != int(cs.CurrEnt)-1 && cs.CurrPid != 0 {
			from := max(int64(cs.Start), int64(cs.WaitSince))
			if now > from {
				m.cum[w*nsum+2] += now - from
				k := schedIntfKey{Ent: uint32(w), Pid: cs.CurrPid}
				m.open = append(m.open, openIntf{k, now - from})
			}
		}
	}
	for i := range m.top {
		m.top[i] = topEntry{}
	}
	// Each pair's share of this slice: what the kernel added, plus what is
	// open now, minus what was open at the previous Sample and counted then
	// (the kernel's total includes it once the interval ends).
	for i := range m.dirty {
		d := &m.dirty[i]
		d.ns += takeOpen(m.open, d.k) - takeOpen(m.prevOpen, d.k)
		m.addTop(d.k, d.ns)
	}
	for _, o := range m.open {
		if o.ns >= 0 {
			m.addTop(o.k, o.ns-takeOpen(m.prevOpen, o.k))
		}
	}
	for i := range m.open { // takeOpen marked them taken; restore for the next Sample
		m.open[i].ns = max(m.open[i].ns, ^m.open[i].ns)
	}
	m.prevOpen = append(m.prevOpen[:0], m.open...)
	for e := 0; e < m.nent; e++ {
		c, p := m.cum[e*nsum:][:nsum], m.prev[e*nsum:][:nsum]
		for i := range nsum {
			m.vals[i] = max(c[i]-p[i], 0)
			p[i] = max(c[i], p[i])
		}
		for i, t := range m.top[e*Top:][:Top] {
			m.vals[nsum+2*i], m.vals[nsum+2*i+1] = int64(t.pid), t.ns
		}
		m.vals[nsum+2*Top] = now
		if m.win[e] != nil {
			m.win[e].Record(slice, m.vals)
		}
	}
	return nil
}

// takeOpen returns the open interference of k in list and marks it taken
// (a negative ns, undone by ^), or 0.
func takeOpen(list []openIntf, k schedIntfKey) int64 {
	for i := range list {
		if list[i].k == k && list[i].ns >= 0 {
			v := list[i].ns
			list[i].ns = ^v
			return v
		}
	}
	return 0
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

// read fetches the per-entity counters and the CPUs' state.
func (m *Monitor) read() error {
	var cur ebpf.MapBatchCursor
	n, err := m.objs.Stats.BatchLookup(&cur, m.keys, m.stats, nil)
	if err != nil && !errors.Is(err, ebpf.ErrKeyNotExist) {
		return fmt.Errorf("emds/kernel: reading the counters: %w", err)
	}
	if n != m.nent {
		return fmt.Errorf("emds/kernel: reading the counters: %d of %d entities", n, m.nent)
	}
	if err := m.objs.Cpus.Lookup(uint32(0), m.cpus); err != nil {
		return fmt.Errorf("emds/kernel: reading the CPUs' state: %w", err)
	}
	return nil
}

// takeSliceIntf takes the interference of the pairs that grew since the
// last call out of the kernel's slice map into dirty.
func (m *Monitor) takeSliceIntf() error {
	var cur ebpf.MapBatchCursor
	for {
		n, err := m.objs.SliceIntf.BatchLookupAndDelete(&cur, m.skeys, m.svals, nil)
		for i := 0; i < n; i++ {
			var sum int64
			for _, v := range m.svals[i*m.ncpu:][:m.ncpu] {
				sum += int64(v)
			}
			m.dirty = append(m.dirty, openIntf{m.skeys[i], sum})
		}
		if errors.Is(err, ebpf.ErrKeyNotExist) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("emds/kernel: reading the slice's interference: %w", err)
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

// Dropped is the number of interference pairs that did not fit the map.
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

// Close detaches the programs and frees the maps. Safe to call twice.
func (m *Monitor) Close() error {
	for _, l := range m.links {
		l.Close()
	}
	m.links = nil
	return m.objs.Close()
}

// Dump writes the files (doc.go lists them) into dir with permissions perm.
// Call it after the last Sample; it reads the whole run's histograms and
// interference totals from the kernel, so call it before Close.
func (m *Monitor) Dump(dir string, perm os.FileMode) error {
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

// writeCost says what the monitor cost: Sample's calls and time, and each
// program's runs and time in the kernel (counted only while the sysctl
// kernel.bpf_stats_enabled is 1; 0 otherwise).
func (m *Monitor) writeCost(w io.Writer) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintln(bw, "what,count,ns")
	fmt.Fprintf(bw, "sample,%d,%d\n", m.samples, m.sampleNS)
	fmt.Fprintf(bw, "sample_cpu,%d,%d\n", m.samples, m.sampleCPU)
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
