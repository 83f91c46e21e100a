package launch

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"time"

	"github.com/bcsmpi/bcsmpi/configs"
	"github.com/bcsmpi/bcsmpi/emds"
	"github.com/bcsmpi/bcsmpi/emds/kernel"
	"github.com/bcsmpi/bcsmpi/internal/core"
	"github.com/bcsmpi/bcsmpi/internal/jobenv"
	"github.com/bcsmpi/bcsmpi/internal/proto"
	"github.com/bcsmpi/bcsmpi/internal/shm"
	"github.com/bcsmpi/bcsmpi/mds"
	"github.com/bcsmpi/bcsmpi/nicthread"
	"github.com/bcsmpi/bcsmpi/strobe"
)

// Manifest describes a monitored run (manifest.json in the job's MDS
// directory). bcsrun writes it when the job starts, with Finished false and
// no exit code, and rewrites it (atomically) when the job ends with the exit
// code and which ranks' dumps are whole (mds.Status): a manifest of a bcsrun
// that was killed still says Finished false.
type Manifest struct {
	JobID      string         `json:"job_id"`
	Program    string         `json:"program"`
	Args       []string       `json:"args"`
	Ranks      int            `json:"ranks"`
	Nodes      int            `json:"nodes"`
	NodeOf     []proto.NodeID `json:"node_of"`
	TimesliceN int64          `json:"timeslice_ns"`
	MDS        string         `json:"mds"`
	Config     configs.Config `json:"config"`
	// Submitted is when the job was handed over (to a bcsd: its request
	// arrived), Admitted when it left the bcsd's queue; both absent for a
	// job bcsrun ran itself, and in manifests older than them. Start is
	// when the launcher made the job's MDS directory, End when it ended.
	Submitted time.Time `json:"submitted,omitzero"`
	Admitted  time.Time `json:"admitted,omitzero"`
	Start     time.Time `json:"start"`
	End       time.Time `json:"end,omitzero"`
	Slices    uint64    `json:"slices"`
	Skipped   uint64    `json:"skipped"`
	Message   string    `json:"message,omitempty"`
	mds.Status
	Versions map[string]string `json:"versions"`
	// MemoryBytes is what the EMDS windows and the communication matrix used in bcsrun.
	MemoryBytes int64 `json:"emds_memory_bytes"`
	// Kernel is the kernel monitor's state (mds: kernel): "on", or "off: "
	// and what it needs; empty when it was not asked for.
	Kernel string `json:"kernel,omitempty"`
	// KernelHosts says, one line per host of a job across hosts, whether
	// its kernel monitor ran ("h1: on") or why not ("h2: off: needs …");
	// Kernel then sums them up ("on", "off: …" for all, or "off on h2 …").
	KernelHosts []string `json:"kernel_hosts,omitempty"`
	// Hosts names node n's host (a job across hosts); absent on one machine.
	Hosts []string `json:"hosts,omitempty"`
	// MissingHosts says, one line per host, whose data did not come back
	// from a job across hosts (the host died, or its bcsd could not send).
	MissingHosts []string `json:"missing_hosts,omitempty"`
	// Gang is the job's accounting under a gang scheduler (mds.Gang),
	// written when the job ends; absent outside a gang.
	Gang *mds.Gang `json:"gang,omitempty"`
}

// monitor is bcsrun's part of the MDS: the EMDS windows of the master and of
// every agent, the communication matrix, and the job's manifest. Each window
// is written only by its owner (the master's thread, or one agent).
type monitor struct {
	dir    string
	held   *os.File    // a host's staging directory, open and locked while this bcsd lives (hostmds.go)
	fmode  os.FileMode // MDS files; the directory has dmode
	dmode  os.FileMode
	mode   mds.Mode
	global *emds.Window
	gvals  []int64
	nodes  []*emds.Window
	nvals  [][]int64
	msgs   []uint64 // ranks×ranks, user point-to-point messages src→dst
	bytes  []uint64
	rmsgs  []uint64 // the same for collectives (class "runtime"), from node 0's plans
	rbytes []uint64
	ranks  int
	man    Manifest
	// gangProblem: node 0 of a job across hosts in a gang, why the
	// master's part of the MDS is missing (gangmds.go).
	gangProblem string
	// The kernel monitor (mds: kernel): node 0's agent publishes each
	// slice's end to it after the slice's transmission; its own reader
	// takes the slices; nil when off.
	kern       *kernel.Monitor
	kernMaster bool // the master runs on a locked thread (one node): register it
	kernNode   int  // the node whose agent publishes (0; a host's own across hosts)
	kernWho    string
	kernOut    io.Writer // where kernWho's notes about the monitor go
	// A job in a gang: the gang's matrix (for the manifest) and each node's
	// switches, counted by its agent's hook (that agent's goroutine; read
	// when the agents have stopped).
	gang     *nicthread.Gang
	switches []nodeSwitches
}

// nodeSwitches is one node's gang switches: how many, and their total cost.
type nodeSwitches struct {
	n  uint64
	ns int64
}

func newMonitor(job Job, cfg configs.Config, jobID string, nodeOf []proto.NodeID, stderr io.Writer) (*monitor, error) {
	return newMonitorFor(job, cfg, jobID, nodeOf, stderr, true)
}

// newMonitorFor is newMonitor; with local false (a job across hosts) it
// keeps no window of its own: the hosts send their files (control.go).
func newMonitorFor(job Job, cfg configs.Config, jobID string, nodeOf []proto.NodeID, stderr io.Writer, local bool) (*monitor, error) {
	m := &monitor{mode: cfg.MDSMode(), ranks: job.Ranks}
	if !m.mode.Main && !m.mode.Elan {
		return m, nil
	}
	m.dir = filepath.Join(cfg.MDSDir, jobID)
	m.fmode, m.dmode = cfg.MDSFileModes()
	if err := os.MkdirAll(m.dir, m.dmode); err != nil {
		return nil, fmt.Errorf("bcsrun: MDS directory: %w", err)
	}
	if err := os.Chmod(m.dir, m.dmode); err != nil { // exactly, whatever the umask
		return nil, fmt.Errorf("bcsrun: MDS directory: %w", err)
	}
	vers := map[string]string{"go": runtime.Version(), "shm_layout": fmt.Sprint(shm.Version), "bcsmpi": "devel"}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		vers["bcsmpi"] = bi.Main.Version
	}
	m.man = Manifest{JobID: jobID, Program: job.Program, Args: job.Args, Ranks: job.Ranks, Nodes: cfg.Nodes, NodeOf: nodeOf,
		TimesliceN: cfg.Timeslice.Nanoseconds(), MDS: m.mode.String(), Config: cfg, Submitted: job.Submitted, Admitted: job.Admitted,
		Start: time.Now(), Versions: vers}
	if job.Gang != nil && local {
		m.gang, m.switches = job.Gang, make([]nodeSwitches, cfg.Nodes)
	}
	m.man.MMDSRanks, m.man.EMDSNodes = []int{}, []int{}
	if m.mode.Main {
		sel, _ := mds.ParseSet(cfg.MDSRanks)
		for r := range job.Ranks {
			if sel.Has(r) {
				m.man.MMDSRanks = append(m.man.MMDSRanks, r)
			}
		}
	}
	m.man.EMDS = m.mode.Elan
	if m.mode.Elan && !local {
		sel, _ := mds.ParseSet(cfg.MDSNodes)
		for n := range cfg.Nodes {
			if sel.Has(n) {
				m.man.EMDSNodes = append(m.man.EMDSNodes, n)
			}
		}
	}
	if m.mode.Elan && local {
		gsel, lsel, _ := cfg.EMDSSelection()
		m.global = emds.NewWindow(emds.GlobalMetrics, gsel, cfg.EMDSFirst, cfg.EMDSSlices)
		m.gvals = make([]int64, len(emds.GlobalMetrics))
		sel, _ := mds.ParseSet(cfg.MDSNodes)
		m.nodes = make([]*emds.Window, cfg.Nodes)
		m.nvals = make([][]int64, cfg.Nodes)
		for n := range m.nodes {
			if sel.Has(n) {
				m.man.EMDSNodes = append(m.man.EMDSNodes, n)
				m.nodes[n] = emds.NewWindow(emds.LocalMetrics, lsel, cfg.EMDSFirst, cfg.EMDSSlices)
				m.nvals[n] = make([]int64, 0, len(emds.LocalMetrics))
			}
		}
		m.msgs = make([]uint64, job.Ranks*job.Ranks)
		m.bytes = make([]uint64, job.Ranks*job.Ranks)
		m.rmsgs = make([]uint64, job.Ranks*job.Ranks)
		m.rbytes = make([]uint64, job.Ranks*job.Ranks)
	}
	if m.mode.Kernel && local {
		m.openKernel(cfg, job.Ranks, nil, -1, "bcsrun", stderr)
		m.kernMaster = m.kern != nil && cfg.Nodes == 1
	}
	return m, m.writeManifest()
}

// openKernel opens the kernel monitor (mds: kernel) for a job of ranks
// ranks: on one machine (node < 0) for all of them, in bcsd on node of a
// job across hosts (nodeOf: each rank's node) for that host's own ranks
// and runtime, whose agent publishes the slices. m.man.Kernel says "on",
// or "off: " and why; who says it once on stderr, and the job runs
// without it.
func (m *monitor) openKernel(cfg configs.Config, ranks int, nodeOf []proto.NodeID, node int, who string, stderr io.Writer) {
	sel, _ := mds.ParseSet(cfg.MDSRanks)
	rec := make([]bool, ranks)
	for r := range rec {
		rec[r] = sel.Has(r) && (node < 0 || int(nodeOf[r]) == node)
	}
	kc := kernel.Config{Ranks: ranks, RuntimePID: os.Getpid(), BTFPath: cfg.MDSKernelBTF, CacheDir: cfg.MDSKernelCache,
		First: cfg.EMDSFirst, Len: cfg.EMDSSlices, Slice: cfg.Timeslice, Recorded: rec}
	if node >= 0 {
		kc.Across, kc.Node, kc.NoMaster = true, node, node != 0
		m.kernNode = node
	}
	m.kernWho, m.kernOut = who, stderr
	k, err := kernel.Open(kc)
	if err != nil {
		m.man.Kernel = "off: " + err.Error()
		fmt.Fprintf(stderr, "%s: MDS kernel monitor off: %v; the job runs without it\n", who, err)
		return
	}
	m.kern, m.man.Kernel = k, "on"
}

// rankStarted registers a rank's process with the kernel monitor.
func (m *monitor) rankStarted(r, pid int) {
	if m.kern != nil {
		m.kern.AddRank(r, pid) // fails only for a rank out of range
	}
}

// publishKernel tells the kernel monitor that slice has ended (node 0's
// agent, after the slice's transmission): a few stores to memory shared
// with the eBPF programs, no system call.
func (m *monitor) publishKernel(slice uint64) { m.kern.Publish(slice) }

// close releases the kernel monitor (every path out of Run).
func (m *monitor) close() {
	if m.kern != nil {
		m.kern.Close()
		m.kern = nil
	}
}

func (m *monitor) on() bool { return m.dir != "" }

// env is what the ranks need to run their MMDS.
func (m *monitor) env(cfg configs.Config) jobenv.MDS {
	if !m.on() {
		return jobenv.MDS{Mode: "none"}
	}
	return jobenv.MDS{Mode: m.mode.String(), JobDir: m.dir, Ranks: cfg.MDSRanks, Primitives: cfg.MDSPrimitives,
		Digits: cfg.MDSDigits, Interval: cfg.MDSInterval, FileMode: m.fmode}
}

// onSlice records the master's global metrics (strobe thread).
func (m *monitor) onSlice(r *strobe.SliceRecord) {
	if m.global == nil {
		return
	}
	if m.kernMaster {
		m.kernMaster = false
		m.kern.SetMasterThread()
	}
	globalValues(m.gvals, r)
	m.global.Record(uint64(r.Slice), m.gvals)
}

// agentHook records one node's local metrics (that agent's goroutine).
func (m *monitor) agentHook(node int) func(*nicthread.SliceStats) {
	kern := node == m.kernNode && m.kern != nil
	var sw *nodeSwitches
	if m.switches != nil {
		sw = &m.switches[node]
	}
	var w *emds.Window
	if m.nodes != nil {
		w = m.nodes[node]
	}
	if w == nil && !kern && sw == nil {
		return nil
	}
	return func(s *nicthread.SliceStats) {
		if w != nil {
			m.nvals[node] = s.Values(m.nvals[node])
			w.Record(uint64(s.Slice), m.nvals[node])
		}
		if sw != nil && s.Switch > 0 {
			sw.n++
			sw.ns += int64(s.Switch)
		}
		if kern {
			m.publishKernel(uint64(s.Slice))
		}
	}
}

// gangAccount is the manifest's gang object of a job in a gang on this
// machine, from its result and its agents' switches.
func (m *monitor) gangAccount(res *Result) *mds.Gang {
	c := m.gang.Config().Matrix
	g := &mds.Gang{MPL: c.MPL, Quantum: c.Quantum, SlicesAlive: res.SlicesAlive, SlicesRun: res.SlicesRun, SlicesGiven: res.SlicesGiven,
		SwitchesIn: res.SwitchesIn, SwitchesOut: res.SwitchesOut}
	for _, s := range m.switches {
		g.NodeSwitches += s.n
		g.SwitchNS += s.ns
	}
	if g.NodeSwitches > 0 {
		g.SwitchMeanNS = g.SwitchNS / int64(g.NodeSwitches)
	}
	return g
}

// onDEM counts user point-to-point traffic from the exchanged descriptors
// (strobe thread).
func (m *monitor) onDEM(all []proto.Descriptor) { countSends(m.msgs, m.bytes, m.ranks, all) }

// onPlan counts the bytes collectives move (class "runtime"), from node 0's
// plan of each slice (that agent's goroutine; every node has the same plan).
// A move between two ranks is counted as such; a reduction's contribution and
// its result are counted on the diagonal of the member they belong to, since
// they go through the runtime's staging area rather than to another rank.
func (m *monitor) onPlan(p *core.Plan) {
	for i := range p.Chunks {
		c := &p.Chunks[i]
		if c.Xfer != 0 {
			continue
		}
		k := int(c.Src)*m.ranks + int(c.Dst)
		if c.Off == 0 || c.SrcAcc || c.DstAcc {
			m.rmsgs[k]++
		}
		m.rbytes[k] += c.Len
	}
}

func (m *monitor) writeManifest() error {
	return mds.WriteAtomic(filepath.Join(m.dir, mds.ManifestFile), m.fmode, func(w io.Writer) error {
		e := json.NewEncoder(w)
		e.SetIndent("", "  ")
		return e.Encode(m.man)
	})
}

// finish writes the EMDS dumps, the matrix and the final manifest, points
// <mds_dir>/latest at the job, and prints the MMDS summary.
func (m *monitor) finish(res *Result, stdout, stderr io.Writer) {
	if !m.on() {
		return
	}
	code := res.ExitCode
	m.man.End, m.man.Slices, m.man.Skipped, m.man.ExitCode, m.man.Message = time.Now(), res.Slices, res.Skipped, &code, res.Message
	if m.gang != nil {
		m.man.Gang = m.gangAccount(res)
	}
	fail := func(what string, err error) {
		if err != nil {
			fmt.Fprintf(stderr, "bcsrun: MDS: %s: %v\n", what, err)
		}
	}
	// The kernel monitor's last drain and files go on beside the other
	// dumps (the ranks have exited: a CPU is free), off the job's end.
	var kerr error
	kdone := make(chan struct{})
	if m.kern != nil {
		go func() { defer close(kdone); kerr = m.kern.Dump(m.dir, m.fmode) }()
	} else {
		close(kdone)
	}
	if m.global != nil {
		fail("EMDS global dump", m.global.Dump(filepath.Join(m.dir, "emds-global.csv"), m.fmode))
		m.man.MemoryBytes += int64(m.global.Bytes())
		for n, w := range m.nodes {
			if w != nil {
				fail("EMDS node dump", w.Dump(filepath.Join(m.dir, fmt.Sprintf("emds-node%d.csv", n)), m.fmode))
				m.man.MemoryBytes += int64(w.Bytes())
			}
		}
		m.man.MemoryBytes += int64(16 * len(m.msgs))
		fail("communication matrix", m.writeMatrix())
	}
	<-kdone
	if m.kern != nil {
		fail("EMDS kernel dump", kerr)
		if d := m.kern.Dropped(); d > 0 {
			fmt.Fprintf(stderr, "bcsrun: MDS kernel monitor: %d interfering tasks did not fit its map and are not named\n", d)
		}
		m.man.MemoryBytes += int64(m.kern.Bytes())
		m.close()
	}
	// Every rank has exited: what is on disk now is all there will be.
	m.man.Finished = true
	st, err := m.man.Status.Recheck(m.dir)
	fail("MDS completeness", err)
	if err == nil {
		m.man.Status = st
	}
	fail("manifest", m.writeManifest())
	latest := filepath.Join(filepath.Dir(m.dir), "latest")
	os.Remove(latest)
	fail("latest link", os.Symlink(filepath.Base(m.dir), latest))
	fmt.Fprintf(stderr, "bcsrun: MDS data in %s\n", m.dir)
	for _, l := range m.man.MissingHosts {
		fmt.Fprintf(stderr, "bcsrun: MDS: %s\n", l)
	}
	m.man.Status.Warn(stderr, "bcsrun", m.dir)
	if m.mode.Main {
		sums, err := mds.ReadDir(m.dir, nil)
		if err != nil {
			fail("MMDS summary", err)
			return
		}
		fail("MMDS summary", mds.Aggregate(sums).Write(stderr, "text"))
	}
}

func (m *monitor) writeMatrix() error {
	return mds.WriteAtomic(filepath.Join(m.dir, "comm-matrix.csv"), m.fmode, m.matrixCSV)
}

func (m *monitor) matrixCSV(w io.Writer) error {
	f := bufio.NewWriter(w)
	fmt.Fprintln(f, "src,dst,messages,bytes,class")
	for s := 0; s < m.ranks; s++ {
		for d := 0; d < m.ranks; d++ {
			if k := s*m.ranks + d; m.msgs[k] > 0 {
				fmt.Fprintf(f, "%d,%d,%d,%d,user\n", s, d, m.msgs[k], m.bytes[k])
			}
			if k := s*m.ranks + d; m.rbytes[k] > 0 {
				fmt.Fprintf(f, "%d,%d,%d,%d,runtime\n", s, d, m.rmsgs[k], m.rbytes[k])
			}
		}
	}
	return f.Flush()
}
