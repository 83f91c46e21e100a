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

// Bounds of the reader's state, per entity: threads followed (a Go rank has
// about ten) and (entity, task) interference pairs kept for the whole run
// (the first ones seen; Dropped counts the time credited to pairs that
// found no room).
const (
	TasksPerEntity       = 128
	InterferersPerEntity = 4096
)

// ReaderThread is the name of the reader's thread (its comm, as
// emds-kernel-interferers.csv names it where it ran while a rank waited).
const ReaderThread = "bcsrun-kreader"

// ReaderNice is the reader thread's nice value: the lowest priority.
const ReaderNice = 19

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
	// Across says the monitor is one host's of a job across hosts (one
	// bcsd's monitor per host), Node that host's node. With node k the files this
	// monitor has of its own (the runtime's row file, interferers,
	// wake-up histograms, ids, cost) are named with "-node<k>", and the
	// runtime entity is "runtime-node<k>", so that every host's files sit
	// side by side in the job's directory; the rank files keep their
	// names (each rank is one host's).
	Across bool
	Node   int
	// NoMaster: the master does not run in this process (a host other
	// than node 0): no master row file.
	NoMaster bool
	// CacheDir is the CO-RE cache's directory: "" for DefaultCacheDir(),
	// CacheOff for none (doc.go, "The CO-RE cache"). Only the running
	// kernel's BTF (BTFPath DefaultBTFPath) is cached.
	CacheDir string
}

// tag is the suffix of the files a monitor has of its own: "" on one
// machine, "-node<k>" on node k of a job across hosts.
func (c Config) tag() string {
	if !c.Across {
		return ""
	}
	return "-node" + strconv.Itoa(c.Node)
}

// MaxWindowBytes bounds the memory of the monitor's windows.
const MaxWindowBytes = 1 << 30

// Entity names: rank<R>, master, runtime.
// Across hosts (Config.Across, Node k) the runtime is runtime-node<k>.
func (m *Monitor) EntityName(e int) string { return entityName(e, m.cfg.Ranks, m.cfg.tag()) }

func entityName(e, ranks int, tag string) string {
	switch {
	case e < ranks:
		return "rank" + strconv.Itoa(e)
	case e == ranks:
		return "master"
	}
	return "runtime" + tag
}

// Monitor is a loaded, attached kernel monitor and its reader goroutine.
// Publish, the reader and Dump share the reader's state through mu; see
// the package doc for who may call what when.
type Monitor struct {
	cfg   Config
	objs  schedObjects
	links []link.Link
	ncpu  int
	nent  int

	// Memory-mapped from the kernel's maps (see Close for their lifetime).
	maps [][]byte
	cpus []schedCpuLog // ncpu: each log's head, the programs' waiting marks
	logs []schedEv     // ncpu × nlog
	nlog uint64

	// The publisher's (node 0's agent).
	q           uint64          // the slice running now
	pubN, pubNS int64           // Publish's calls and their time
	ring        uint64          // slices the reader keeps (a power of two, RingMin .. RingMax)
	raiseAt     uint64          // Publish raises the reader at this lag in slices (raiseLag)
	labels      []atomic.Uint64 // labels[q % ring]: the runtime's number of slice q
	bounds      []atomic.Int64  // bounds[q % ring]: when slice q began (CLOCK_MONOTONIC ns)
	cur         atomic.Uint64   // slices published: slice cur runs now
	done        atomic.Uint64   // the reader's d: slices below it are recorded

	// The reader's (and Publish's when the reader falls behind), under mu.
	mu                        sync.Mutex
	every                     time.Duration // between drains
	stop                      chan struct{} // closed: exit
	exited                    chan struct{} // closed by the reader when it exits
	stopOnce                  sync.Once
	readerTid                 atomic.Int32 // the reader's thread, once named and niced
	rd                        reader
	win                       []*emds.Window
	drains, drainNS, drainCPU [2]int64     // drains by the reader [0] and by Publish [1], their time and CPU time
	lost                      int64        // slices the reader fell too far behind to record
	raised                    atomic.Int32 // 1: the reader was raised to nice 0 (raiseReader); 2: refused

	master int // registered master tid, 0 if none

	attachNS, detachNS int64     // Open's attaching and Close's detaching (BenchmarkPhases)
	start              startCost // the BTF's and the programs' loading (emds-kernel-cost.csv)

	// ids are the registered ids (AddRank, SetMasterThread) → entity: the
	// files list them, and the reader uses them for a task that was already
	// running when it was registered (the programs log it only from its
	// next switch). idTab mirrors the programs' id table.
	idsMu sync.RWMutex
	ids   map[uint32]int
	regAt map[uint32]int64 // when each id was registered
	idTab [idSlots]schedIdSlot
}

// The reader keeps the last ring slices, ring a power of two from RingMin
// to RingMax, the largest whose state fits KernelBytesMax: it must record
// each slice within ring − 2 slices of its end, or it is lost (counted in
// emds-kernel-cost.csv); Publish drains itself when the reader is half the
// ring behind. Each CPU's log holds LogMax records, or as many as fit
// KernelBytesMax over all CPUs (at least LogMin).
const (
	RingMin        = 256
	RingMax        = 4096
	LogMin         = 1024
	LogMax         = 16384
	KernelBytesMax = 64 << 20
)

// The programs' id table (sched.bpf.c's IDS, PROBE).
const (
	idSlots = 4096
	idProbe = 4
)

// Open loads and attaches the programs and starts the reader. On any
// failure it releases what it took and returns an error; an
// *UnavailableError says what is missing.
func Open(cfg Config) (*Monitor, error) {
	t0 := unix.Now()
	if cfg.BTFPath == "" {
		cfg.BTFPath = DefaultBTFPath
	}
	if cfg.Ranks < 1 {
		return nil, fmt.Errorf("emds/kernel: %d ranks, want 1 or more", cfg.Ranks)
	}
	if cfg.Slice < 0 {
		return nil, fmt.Errorf("emds/kernel: slice %v, want 0 (unknown) or more", cfg.Slice)
	}
	if rel := unix.KernelRelease(); !releaseAtLeast(rel, 5, 14) {
		return nil, &UnavailableError{Missing: fmt.Sprintf("Linux 5.14 or later (this kernel is %q)", rel)}
	}
	l := takeLoad(cfg)
	defer func() { // prefetched programs not taken below
		if l.objs != nil {
			l.objs.Close()
		}
	}()
	if l.err != nil {
		return nil, btfMissing(cfg.BTFPath, l.err)
	}
	nent := cfg.Ranks + 2
	ncpu, err := ebpf.PossibleCPU()
	if err != nil {
		return nil, fmt.Errorf("emds/kernel: possible CPUs: %w", err)
	}
	perSlice := nent*nsum*8 + topCap*int(unsafe.Sizeof(cand{})) + 32 // acc, cands; bounds, labels, bnd, nCands
	ring := RingMax
	for ring > RingMin && ring*perSlice > KernelBytesMax {
		ring /= 2
	}
	if ring*perSlice > KernelBytesMax {
		return nil, fmt.Errorf("emds/kernel: %d entities × %d slices need %d MiB, over %d MiB; run fewer ranks",
			nent, ring, ring*perSlice>>20, KernelBytesMax>>20)
	}
	evSize := int(unsafe.Sizeof(schedEv{}))
	nlog := logRecords(ncpu)
	if ncpu*nlog*evSize > KernelBytesMax {
		return nil, fmt.Errorf("emds/kernel: %d CPUs' logs of %d records need %d MiB of kernel memory, over %d MiB",
			ncpu, nlog, ncpu*nlog*evSize>>20, KernelBytesMax>>20)
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
	m := &Monitor{cfg: cfg, nent: nent, ncpu: ncpu, ring: uint64(ring), nlog: uint64(nlog),
		labels: make([]atomic.Uint64, ring), bounds: make([]atomic.Int64, ring)}
	if l.objs != nil && l.ncpu == ncpu && l.ranks == cfg.Ranks && l.pid == cfg.RuntimePID {
		m.objs, l.objs = *l.objs, nil // loaded by Prefetch for this job
	} else {
		objs, err := l.load(ncpu, cfg.Ranks, cfg.RuntimePID)
		if err != nil {
			return nil, err
		}
		m.objs = *objs
	}
	m.start = l.start
	if err := m.mapMemory(); err != nil {
		m.Close()
		return nil, err
	}
	m.ids, m.regAt = make(map[uint32]int), make(map[uint32]int64)
	if err := m.register(uint32(cfg.RuntimePID), cfg.Ranks+1); err != nil {
		m.Close()
		return nil, classify("registering bcsrun", err)
	}
	m.rd.init(m)
	m.bounds[0].Store(unix.Now()) // slice 0: from now to the first Publish
	ta := unix.Now()
	for _, p := range []*ebpf.Program{m.objs.OnSwitch, m.objs.OnWaking, m.objs.OnWakeupNew, m.objs.OnMigrate} {
		l, err := link.AttachTracing(link.TracingOptions{Program: p, AttachType: ebpf.AttachTraceRawTp})
		if err != nil {
			m.Close()
			return nil, classify("attaching to the scheduler's tracepoints", err)
		}
		m.links = append(m.links, l)
	}
	m.attachNS = unix.Now() - ta
	m.win = make([]*emds.Window, nent)
	for e := range m.win {
		if e >= cfg.Ranks || cfg.Recorded == nil || (e < len(cfg.Recorded) && cfg.Recorded[e]) {
			m.win[e] = emds.NewWindow(Metrics, nil, cfg.First, cfg.Len)
		}
	}
	m.every = DrainEvery(cfg.Slice)
	m.raiseAt = raiseLag(m.ring, m.every, cfg.Slice)
	m.stop, m.exited = make(chan struct{}), make(chan struct{})
	go m.reader()
	m.start.openNS = unix.Now() - t0
	return m, nil
}

// btfLoad is what the programs' loading takes from the kernel's BTF at
// path: the CO-RE cache's facts (facts, and cache an attachCache), or the
// BTF decoded (cache, spec; err when that failed); and, with ranks > 0,
// the programs loaded for a job of ranks ranks under runtime process pid
// on ncpu CPUs (objs; nil when they failed to load: Open loads them again
// and says why): its results once done is closed. Used by one goroutine
// at a time: the Prefetch's, then Open's.
type btfLoad struct {
	done             chan struct{}
	path             string // cleaned
	dir              string // the CO-RE cache's directory ("": none)
	key              string // the running kernel's (kernelKey; "": not cached)
	btfSize          int64
	facts            *coreFacts
	cache            *btf.Cache
	spec             *btf.Spec
	err              error
	cacheErr         error                // why the cache was not used (tests)
	writeErr         error                // why it was not written (tests)
	cs               *ebpf.CollectionSpec // the object, parsed and checked against facts, for the first load
	start            startCost
	ranks, pid, ncpu int
	objs             *schedObjects
}

// startCost is what the BTF and the programs' loading took at the job's
// start (emds-kernel-cost.csv's start_btf, start_load): whether the BTF's
// facts came from the CO-RE cache, the wall time of that (or of the
// decoding), and of the loading.
type startCost struct {
	cached        bool
	btfNS, loadNS int64
	waitNS        int64 // Open's wait for a Prefetch
	openNS        int64 // Open's whole time, the wait included
}

// The load a Prefetch started, for the first Open with its path.
var prefetched struct {
	sync.Mutex
	path string // cleaned
	load *btfLoad
}

// Prefetch starts, in the background, taking what the programs need of the
// kernel's BTF at cfg.BTFPath ("" = DefaultBTFPath) (from the CO-RE cache,
// or decoding it) and, when cfg.Ranks > 0, loading the programs for
// cfg.Ranks and cfg.RuntimePID (not attaching them), for the next Open
// with that path: they are most of Open's time, and a launcher can overlap
// them with its own start-up (bcsrun's launch.Run does, from the moment it
// knows the monitor is wanted). Open takes what matches its Config and
// redoes the rest. Safe for concurrent use; a second Prefetch before that
// Open does nothing.
func Prefetch(cfg Config) {
	prefetched.Lock()
	defer prefetched.Unlock()
	if prefetched.load != nil {
		return
	}
	l := newLoad(cfg)
	l.ranks, l.pid = cfg.Ranks, cfg.RuntimePID
	prefetched.path, prefetched.load = l.path, l
	go func() {
		defer close(l.done)
		if l.prepare(); l.err != nil || l.ranks < 1 {
			return
		}
		if ncpu, err := ebpf.PossibleCPU(); err == nil {
			if objs, err := l.load(ncpu, l.ranks, l.pid); err == nil {
				l.ncpu, l.objs = ncpu, objs
			}
		}
	}()
}

// newLoad is a load, not started, of the BTF cfg names.
func newLoad(cfg Config) *btfLoad {
	path := cfg.BTFPath
	if path == "" {
		path = DefaultBTFPath
	}
	dir := cfg.CacheDir
	switch dir {
	case "":
		dir = DefaultCacheDir()
	case CacheOff:
		dir = ""
	}
	return &btfLoad{done: make(chan struct{}), path: filepath.Clean(path), dir: dir}
}

// takeLoad is the BTF for Open with cfg, done: what a Prefetch of its
// path took, and maybe loaded (waiting for it), else taken now. A
// Prefetch of another path is dropped (its programs closed). The running
// kernel's BTF is decoded once, if at all: for the CO-RE relocations and
// for the tracepoints' attach targets, which cilium/ebpf looks up through
// the cache (decoding vmlinux's 5 MB twice was most of Open's time, on the
// job's start-up path).
func takeLoad(cfg Config) *btfLoad {
	want := newLoad(cfg)
	prefetched.Lock()
	l, match := prefetched.load, prefetched.path == want.path
	prefetched.load = nil // taken, or for another path: dropped
	prefetched.Unlock()
	if l != nil && match {
		t0 := unix.Now()
		<-l.done
		l.start.waitNS = unix.Now() - t0
		return l
	}
	if l != nil {
		go func(old *btfLoad) {
			<-old.done
			if old.objs != nil {
				old.objs.Close()
			}
		}(l)
	}
	want.prepare()
	close(want.done)
	return want
}

// prepare takes the facts from the CO-RE cache when it has them for this
// kernel and object, else decodes the BTF.
func (l *btfLoad) prepare() {
	t0 := unix.Now()
	defer func() { l.start.btfNS = unix.Now() - t0 }()
	if l.cacheErr = l.fromCache(); l.cacheErr == nil {
		l.start.cached = true
		return
	}
	l.decode()
}

// fromCache takes the facts from the CO-RE cache, or says why not.
func (l *btfLoad) fromCache() error {
	if l.dir == "" || l.path != DefaultBTFPath {
		return errors.New("no cache: another BTF than the running kernel's, or no cache directory")
	}
	var err error
	if l.key, l.btfSize, err = kernelKey(); err != nil {
		l.key = ""
		return err
	}
	cs, err := loadSched()
	if err != nil {
		return err
	}
	f, err := readFacts(l.dir, l.key, l.btfSize, cs)
	if err != nil {
		return err
	}
	if l.cache, err = attachCache(f.Attach); err != nil {
		return err
	}
	l.facts, l.cs = f, cs
	return nil
}

// decode decodes the BTF (no facts from the cache).
func (l *btfLoad) decode() {
	l.facts, l.cs, l.start.cached = nil, nil, false
	l.cache, l.spec, l.err = decodeBTF(l.path)
}

// load loads the programs for a job of ranks ranks under the runtime's
// process pid on ncpu CPUs. With the cache's facts: their instructions
// relocated as the facts say, the attach targets from the facts; should
// that fail (for another reason than permissions), the BTF is decoded and
// they are loaded as without a cache. Decoded, the programs are relocated
// by cilium/ebpf against the BTF, and once they loaded, the facts are
// computed and written into the cache (its directory's, when there is
// one; a failure to write leaves the job as it was).
func (l *btfLoad) load(ncpu, ranks, pid int) (*schedObjects, error) {
	t0 := unix.Now()
	defer func() { l.start.loadNS = unix.Now() - t0 }()
	if l.facts != nil {
		objs, err := loadObjects(l, ncpu, ranks, pid)
		var ve *ebpf.VerifierError
		if err == nil || errors.Is(err, os.ErrPermission) && !errors.As(err, &ve) {
			return objs, err // loaded, or not allowed to load: decoding would not help
		}
		l.cacheErr = fmt.Errorf("loading with the cache's facts: %w", err)
		if l.decode(); l.err != nil {
			return nil, btfMissing(l.path, l.err)
		}
	}
	objs, err := loadObjects(l, ncpu, ranks, pid)
	if err == nil && l.key != "" {
		l.writeErr = l.remember()
		l.key = "" // written once
	}
	return objs, err
}

// remember computes the facts from the decoded BTF and writes them into
// the cache.
func (l *btfLoad) remember() error {
	cs, err := loadSched()
	if err != nil {
		return err
	}
	kernel, err := l.cache.Kernel()
	if err != nil {
		return err
	}
	f, err := computeFacts(cs, l.spec, kernel, l.key)
	if err != nil {
		return err
	}
	return writeFacts(l.dir, f)
}

// btfMissing is Open's error for a BTF it could not decode.
func btfMissing(path string, err error) error {
	return &UnavailableError{Missing: fmt.Sprintf("the kernel's BTF at %s (a kernel built with CONFIG_DEBUG_INFO_BTF=y)", path), Err: err}
}

// loadObjects loads the programs and their maps, sized for ncpu CPUs and
// ranks ranks under the runtime's process pid: relocated as l's facts
// say, with the attach targets in l's cache, or against l's spec (and the
// attach targets found through l's cache).
func loadObjects(l *btfLoad, ncpu, ranks, pid int) (*schedObjects, error) {
	cs := l.cs // parsed by fromCache
	l.cs = nil
	if cs == nil {
		var err error
		if cs, err = loadSched(); err != nil {
			return nil, fmt.Errorf("emds/kernel: the embedded eBPF object: %w", err)
		}
	}
	if err := sizeSpec(cs, ncpu, logRecords(ncpu), ranks, pid); err != nil {
		return nil, err
	}
	opts := &ebpf.CollectionOptions{Programs: ebpf.ProgramOptions{KernelTypes: l.spec}, Cache: l.cache}
	if l.facts != nil {
		if err := l.facts.check(cs, l.btfSize); err != nil {
			return nil, fmt.Errorf("emds/kernel: the CO-RE cache: %w", err)
		}
		l.facts.apply(cs)
		opts.Programs.KernelTypes = nil // no relocation left
	}
	var objs schedObjects
	if err := cs.LoadAndAssign(&objs, opts); err != nil {
		return nil, classify("loading the eBPF programs", err)
	}
	return &objs, nil
}

// decodeBTF decodes the BTF at path for the relocations, and the running
// kernel's, for the attach targets, into the cache (the same one where
// path is the running kernel's).
//
// The types the load will look up are looked up here too: cilium/ebpf
// decodes a type, and every type it reaches, at its first lookup, and the
// tracepoints' types reach task_struct and most of the kernel's (over half
// of the decoding's time); looked up here, a Prefetch takes that too.
func decodeBTF(path string) (*btf.Cache, *btf.Spec, error) {
	cache := btf.NewCache()
	var spec *btf.Spec
	var err error
	if path == DefaultBTFPath {
		spec, err = cache.Kernel()
	} else if spec, err = btf.LoadSpec(path); err == nil {
		cache.Kernel() // a failure shows when the programs load
	}
	if err == nil {
		var st *btf.Struct
		spec.TypeByName("task_struct", &st) // the CO-RE relocations' target
		if k, kerr := cache.Kernel(); kerr == nil {
			for _, tp := range tracepoints {
				var td *btf.Typedef
				k.TypeByName("btf_trace_"+tp, &td) // the attach targets
			}
		}
	}
	return cache, spec, err
}

// tracepoints are the scheduler's tracepoints the programs attach to.
var tracepoints = []string{"sched_switch", "sched_waking", "sched_wakeup_new", "sched_migrate_task"}

// logRecords is the records per CPU's log: LogMax, or as many as fit
// KernelBytesMax over ncpu CPUs (at least LogMin).
func logRecords(ncpu int) int {
	nlog := LogMax
	for nlog > LogMin && ncpu*nlog*int(unsafe.Sizeof(schedEv{})) > KernelBytesMax {
		nlog /= 2
	}
	return nlog
}

// sizeSpec sizes an eBPF object's maps for ncpu CPUs with nlog records
// each and sets its constants. BenchmarkPrograms loads an earlier object
// through it too: a map or constant the object lacks is left out.
func sizeSpec(spec *ebpf.CollectionSpec, ncpu, nlog, ranks, runtimePID int) error {
	for name, n := range map[string]int{schedMapCpus: ncpu, schedMapEvlog: ncpu * nlog, schedMapNames: ncpu * 16} {
		if ms := spec.Maps[name]; ms != nil {
			ms.MaxEntries = uint32(n)
		}
	}
	for name, v := range map[string]uint32{schedVarRuntimeTgid: uint32(runtimePID), schedVarNranks: uint32(ranks), schedVarNlog: uint32(nlog)} {
		if vs := spec.Variables[name]; vs != nil {
			if err := vs.Set(v); err != nil {
				return fmt.Errorf("emds/kernel: %s: %w", name, err)
			}
		}
	}
	return nil
}

// raiseLag is the lag (slices published but not yet taken) at which Publish
// raises the reader: an eighth of the ring, but never less than two drains'
// worth of slices, which a reader on time reaches between its drains when
// the ring is small (many ranks) or the slice short. Unknown slice: an
// eighth of the ring.
func raiseLag(ring uint64, every, slice time.Duration) uint64 {
	lag := ring / 8
	if slice > 0 {
		lag = max(lag, 2*(uint64(every/slice)+1))
	}
	return lag
}

// DrainEvery is how often the reader takes the records: a 32nd of the
// ring's time at slice (Config.Slice), within 4 to 32 ms; 16 ms when the
// slice is unknown. Each drain starts with the reader's data out of the
// caches, so fewer, larger drains cost less per record; the CPUs' logs
// (LogMax records each) and the ring leave room for many drains missed.
func DrainEvery(slice time.Duration) time.Duration {
	if slice <= 0 {
		return 16 * time.Millisecond
	}
	return min(max(slice*RingMax/32, 4*time.Millisecond), 32*time.Millisecond)
}

// mapMemory maps the CPUs' state and their logs.
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
	p, err := mp("CPUs' state", m.objs.Cpus, m.ncpu*int(unsafe.Sizeof(schedCpuLog{})))
	if err != nil {
		return err
	}
	m.cpus = unsafe.Slice((*schedCpuLog)(p), m.ncpu)
	n := m.ncpu * int(m.nlog)
	if p, err = mp("CPUs' logs", m.objs.Evlog, n*int(unsafe.Sizeof(schedEv{}))); err != nil {
		return err
	}
	m.logs = unsafe.Slice((*schedEv)(p), n)
	return nil
}

// classify turns a load or attach failure into what is missing.
func classify(what string, err error) error {
	var ve *ebpf.VerifierError
	switch {
	case errors.As(err, &ve): // EACCES, but not for want of privileges
		return fmt.Errorf("emds/kernel: %s: the verifier refused them: %w", what, err)
	case errors.Is(err, os.ErrPermission):
		return &UnavailableError{Missing: fmt.Sprintf("CAP_BPF and CAP_PERFMON, or CAP_SYS_ADMIN (uid %d, %s)", os.Getuid(), what), Err: err}
	case errors.Is(err, ebpf.ErrNotSupported), errors.Is(err, btf.ErrNotFound):
		return &UnavailableError{Missing: fmt.Sprintf("a kernel with BTF tracepoints (tp_btf), memory-mapped maps and BPF atomics, Linux 5.14 or later (%s)", what), Err: err}
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

// register enters thread-group id → entity e into the programs' id table:
// in the first free slot of (id + 0 .. idProbe-1) % idSlots.
func (m *Monitor) register(id uint32, e int) error {
	m.idsMu.Lock()
	defer m.idsMu.Unlock()
	for i := range uint32(idProbe) {
		k := (id + i) % idSlots
		s := &m.idTab[k]
		if s.Id != 0 && s.Id != id {
			continue
		}
		v := schedIdSlot{Id: id, Ent: uint32(e + 1)}
		if err := m.objs.Ids.Put(k, v); err != nil {
			return err
		}
		*s = v
		m.ids[id] = e
		m.regAt[id] = unix.Now()
		return nil
	}
	return fmt.Errorf("emds/kernel: no free slot for id %d in the id table (%d slots from %d taken)", id, idProbe, id%idSlots)
}

// AddRank registers rank's process (all its threads). Safe for concurrent use.
func (m *Monitor) AddRank(rank, pid int) error {
	if rank < 0 || rank >= m.cfg.Ranks {
		return fmt.Errorf("emds/kernel: rank %d, want 0 .. %d", rank, m.cfg.Ranks-1)
	}
	if pid <= 0 {
		return fmt.Errorf("emds/kernel: rank %d's pid %d, want a positive process id", rank, pid)
	}
	return m.register(uint32(pid), rank)
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
	m.regAt[uint32(m.master)] = unix.Now()
	m.idsMu.Unlock()
	return m.objs.Shared.Set(schedShared{MasterTid: uint32(m.master)})
}

// Publish says that the runtime's slice has ended now and the next begins:
// what happens from now on belongs to the next row. It is the monitor's
// only work on the slice's path: a clock read and three stores, no system
// call (but one, once, to raise a reader that lags: raiseReader), no
// allocation. Call it from one goroutine (node 0's agent), never
// concurrently with or after Close.
func (m *Monitor) Publish(slice uint64) {
	now := unix.Now()
	q := m.q
	m.labels[q%m.ring].Store(slice)
	m.bounds[(q+1)%m.ring].Store(now)
	m.cur.Store(q + 1)
	m.q = q + 1
	m.pubN++
	m.pubNS += unix.Now() - now
	// A reader starved of CPU would lose slices: take them here instead.
	lag := q + 1 - m.done.Load()
	if lag >= m.raiseAt && m.raised.Load() == 0 {
		m.raiseReader()
	}
	if lag >= m.ring/2 && m.mu.TryLock() {
		m.drainLocked(false, true)
		m.mu.Unlock()
	}
}

// reader takes the finished slices every m.every, on its own OS thread
// (so that its CPU time is its own; named ReaderThread, at ReaderNice),
// until stop.
func (m *Monitor) reader() {
	runtime.LockOSThread() // never unlocked: the thread ends with the reader
	defer close(m.exited)
	// Named, so that the files tell it among bcsrun's threads; at the
	// lowest priority, so that it runs in the time the ranks leave (a rank
	// woken preempts it, and it does not preempt a computing rank) rather
	// than taking it from them, unless it falls behind (raise). Where it
	// gets no time for half the ring, Publish drains.
	unix.SetThreadName(ReaderThread)
	unix.SetThreadNice(0, ReaderNice)
	m.readerTid.Store(int32(unix.Gettid()))
	t := time.NewTicker(m.every)
	defer t.Stop()
	for {
		select {
		case <-m.stop:
			return
		case <-t.C:
			m.mu.Lock()
			lost := m.rd.lostRecs
			m.drainLocked(false, false)
			if raise(m.rd.backlog, m.nlog, m.rd.lostRecs > lost) {
				m.raiseReader()
			}
			m.mu.Unlock()
		}
	}
}

// raiseReader puts the reader at the ranks' priority (nice 0), once, for
// the rest of the run: the host is loaded. Called by the reader after a
// drain (raise) and by Publish when the reader lags ring/8 slices (it may
// get no time to find out itself). Raising needs CAP_SYS_NICE (or
// RLIMIT_NICE): without it the reader stays low.
func (m *Monitor) raiseReader() {
	if tid := m.readerTid.Load(); tid != 0 && m.raised.CompareAndSwap(0, 1) {
		if unix.SetThreadNice(int(tid), 0) != nil {
			m.raised.Store(2) // refused: not counted, not tried again
		}
	}
}

// raise says whether the reader should run at the ranks' priority (nice
// 0) rather than ReaderNice after a drain that found backlog records in
// the fullest CPU's log of nlog, and lost some or not: when it lost
// records or found a log over an eighth full (a drain every DrainEvery
// leaves a 2-CPU barrier job's logs about a thirtieth full). Under a load
// that leaves the reader no idle time its records would otherwise be
// overwritten before it reads them, and a drain preempted while it holds
// the lock would keep Publish from draining.
func raise(backlog, nlog uint64, lost bool) bool {
	return lost || backlog > nlog/8
}

// drainLocked drains and counts it (m.mu held): by Publish, when the
// reader has fallen half the ring behind.
func (m *Monitor) drainLocked(final, byPublish bool) {
	t0, c0 := unix.Now(), unix.ThreadCPUTime()
	m.drain(final, byPublish)
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

// Dropped is the number of interfering tasks that the reader did not
// name: pairs (entity, task) over InterferersPerEntity for the whole run's
// totals, or over the per-slice candidates' room. Call it after Dump.
func (m *Monitor) Dropped() uint64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return uint64(m.rd.dropped)
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
	t0 := unix.Now()
	for _, l := range m.links {
		l.Close()
	}
	m.detachNS = unix.Now() - t0
	m.links = nil
	m.cpus, m.logs = nil, nil
	for _, b := range m.maps {
		unix.Unmap(b)
	}
	m.maps = nil
	return m.objs.Close()
}

// Dump takes the last slices, stops the reader and writes the files
// (doc.go lists them) into dir with permissions perm. Call it after the
// last Publish and before Close.
func (m *Monitor) Dump(dir string, perm os.FileMode) error {
	m.stopReader()
	m.mu.Lock()
	defer m.mu.Unlock()
	m.rd.totals()
	var errs []error
	for e, w := range m.win {
		if w == nil || e == m.cfg.Ranks && m.cfg.NoMaster {
			continue
		}
		errs = append(errs, w.Dump(filepath.Join(dir, "emds-kernel-"+m.EntityName(e)+".csv"), perm))
	}
	errs = append(errs, writeAtomic(filepath.Join(dir, "emds-kernel-interferers"+m.cfg.tag()+".csv"), perm, m.writeInterferers))
	errs = append(errs, writeAtomic(filepath.Join(dir, "emds-kernel-wakehist"+m.cfg.tag()+".csv"), perm, m.writeHist))
	errs = append(errs, writeAtomic(filepath.Join(dir, "emds-kernel-ids"+m.cfg.tag()+".csv"), perm, m.writeIDs))
	errs = append(errs, writeAtomic(filepath.Join(dir, "emds-kernel-cost"+m.cfg.tag()+".csv"), perm, m.writeCost))
	return errors.Join(errs...)
}

// writeCost says what the monitor cost: Publish's calls and time (on the
// slice's path), the reader's drains, their time and CPU time, the slices
// it lost, the kernel's records it lost, and each program's runs and time
// in the kernel (counted only while the sysctl kernel.bpf_stats_enabled is
// 1; 0 otherwise).
func (m *Monitor) writeCost(w io.Writer) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintln(bw, "what,count,ns")
	fmt.Fprintf(bw, "publish,%d,%d\n", m.pubN, m.pubNS)
	fmt.Fprintf(bw, "drain,%d,%d\n", m.drains[0], m.drainNS[0])
	fmt.Fprintf(bw, "drain_cpu,%d,%d\n", m.drains[0], m.drainCPU[0])
	fmt.Fprintf(bw, "publish_drain,%d,%d\n", m.drains[1], m.drainNS[1])
	fmt.Fprintf(bw, "publish_drain_cpu,%d,%d\n", m.drains[1], m.drainCPU[1])
	fmt.Fprintf(bw, "lost,%d,0\n", m.lost)
	fmt.Fprintf(bw, "records,%d,0\n", m.rd.records)
	fmt.Fprintf(bw, "lost_records,%d,0\n", m.rd.lostRecs)
	fmt.Fprintf(bw, "reader_raised,%d,0\n", m.raised.Load()&1)
	cached := 0
	if m.start.cached {
		cached = 1
	}
	fmt.Fprintf(bw, "start_btf,%d,%d\n", cached, m.start.btfNS)
	fmt.Fprintf(bw, "start_load,1,%d\n", m.start.loadNS)
	fmt.Fprintf(bw, "start_wait,1,%d\n", m.start.waitNS)
	fmt.Fprintf(bw, "start_open,1,%d\n", m.start.openNS)
	for _, p := range []struct {
		name string
		p    *ebpf.Program
	}{{"sched_switch", m.objs.OnSwitch}, {"sched_waking", m.objs.OnWaking},
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
	m.idsMu.RLock()
	for id, e := range m.ids {
		rows = append(rows, row{id, uint32(e)})
	}
	m.idsMu.RUnlock()
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
		k  intfKey
		ns int64
	}
	var rows []row
	for k, v := range m.rd.itot {
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
		fmt.Fprintf(bw, "%s,%d,%s,%d\n", m.EntityName(int(r.k.Ent)), r.k.Pid, csvSafe(m.rd.comm[r.k.Pid]), r.ns)
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
	bw := bufio.NewWriter(w)
	fmt.Fprintln(bw, "entity,lo_ns,hi_ns,count")
	for i, c := range m.rd.hist {
		if c == 0 {
			continue
		}
		e, b := i/HistBuckets, i%HistBuckets
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
