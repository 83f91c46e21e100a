// Package launch runs one job: it creates a shared-memory region and an
// agent per node, starts the master, spawns the rank processes, forwards
// their output, watches them, and tears everything down on every path
// (normal end, a failing rank, a runtime error, SIGINT, SIGTERM or SIGHUP,
// at any moment from the start).
//
// Two launchers share what one node needs (node.go: the region, the agent
// and its mesh endpoint, rank spawning with the jobenv contract, judging a
// rank's exit):
//
//   - Run, the embedded launcher: every node is a logical node of this
//     process (over loopback TCP when there are several), and so is the
//     master.
//   - Across hosts under Slurm (slurm.go, host.go): RunSlurm, in bcsrun,
//     starts one bcsd per host of the allocation with srun --mpi=pmi2, and
//     RunHost, in each bcsd, runs that host's node. The bcsds exchange their
//     endpoints through the PMI key/value space (put, fence, get) and build
//     the authenticated mesh on the address key's interface; the job's
//     secret comes in the environment, never on a command line.
//   - Across hosts over ssh (ssh.go): RunSSH starts one bcsd per host with
//     ssh and is itself the PMI server they meet at; the secret comes on
//     ssh's standard input. Each bcsd runs RunHost as under Slurm.
//
// Where the master runs across hosts: in node 0's bcsd, not in bcsrun. The
// strobe is the job's heartbeat, a round trip to every node each slice: it
// belongs on the compute hosts' network, one hop from every agent, not on the
// host where the user typed salloc (a login node that may not even be
// reachable from the compute hosts, and is loaded by other users). It also
// ties the master's life to the Slurm step, which Slurm ends and cleans up
// as a whole; bcsrun is then only srun's caller, and its death ends the
// step without leaving a master behind.
//
// Job end across hosts: a bcsd whose ranks all ended well enters a second
// PMI fence; it completes when every host's ranks have, and node 0 then
// stops the master, whose stop ends every agent. Each bcsd keeps a control
// connection to bcsrun (control.go). A bcsd that judges a rank's exit a
// failure prints the job message (naming the rank and its host) and sends
// it to bcsrun, which ends the job on every other host; bcsrun exits with
// the failing rank's status, not its launcher's. Each bcsd then sends its
// MDS files (hostmds.go) and exits when bcsrun has every host's part; a
// host that died is named in the job's MDS directory as missing. Each
// bcsd, like Run, is the reaper of its ranks' orphans.
//
// Ownership: Run owns every resource it creates — regions (anonymous memfd
// files with no name in any file system, inherited by the ranks as fd 3, so
// nothing is left behind whatever kills bcsrun, SIGKILL included), transport
// listeners and connections, child processes, and goroutines; all are
// released before Run returns.
//
// Processes: ranks are started with PDEATHSIG=SIGKILL from a locked thread, so
// they die with bcsrun. The calling process becomes a child subreaper
// (PR_SET_CHILD_SUBREAPER, for the rest of its life), so every process a rank
// starts and leaves behind is re-parented to it; when the last rank has ended,
// Run kills (SIGKILL) and reaps every remaining child: no process a rank
// started outlives the job. (If bcsrun itself is killed with SIGKILL, the
// ranks die but such grandchildren cannot be reached.) Orphans that exit
// during the job are reaped on SIGCHLD.
//
// Gangs (gang.go): with Job.Gang set, Run joins that gang master instead of
// starting its own, and several Runs may share it concurrently in one
// process; each job's ranks form a process group per node, stopped and
// continued at the strobe when the gang switches jobs, and each Run reaps
// and ends only its own processes (reap.go's registry).
//
// Input and output: rank 0 reads Job.Stdin (across hosts: through srun, or
// over ssh through node 0's control connection), the other ranks /dev/null. Output
// goes straight to Job.Stdout/Stderr when they are files; otherwise, and with
// TagOutput, through pipes read by Run, with no limit on a line's length.
// The job ends when its ranks end: Run does not wait for a process outside
// the job that still holds an output pipe open (it reads what the pipe holds,
// for at most drainWait, then closes it).
//
// At the end of a job that otherwise succeeded, Run prints one report of what
// was not released (leak.go): the ranks' parts, which they write to the
// report pipe (fd 4) at MPI_Finalize, and the messages no receive matched. The
// leak_check key makes it a warning, an error that fails the job, or nothing.
//
// Fault injection (fault.go, nofault.go): the agents' links carry no fault
// logic in production. A build with the bcsfault tag (go build -tags
// bcsfault), which is how cmd/bcsrun's end-to-end tests build bcsrun and bcsd
// in their TestMain, reads BCS_FAULT_STALL_NODE=node@slice and wraps that
// node's transport.Link with transporttest.Stall: its agent stops answering
// the master from that slice on, so the tests see a silent node end to end. A
// normal build ignores the variable and does not link transporttest (a test
// checks both with go list -deps). Why a tag rather than an environment
// switch alone: the tests run the real binaries, so the hook must be compiled
// into some build of them; the tag keeps it out of the one users run, and the
// variable, read only in that build, still picks the node and slice per test.
package launch

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/bcsmpi/bcsmpi/configs"
	"github.com/bcsmpi/bcsmpi/internal/core"
	"github.com/bcsmpi/bcsmpi/internal/proto"
	"github.com/bcsmpi/bcsmpi/internal/replay"
	"github.com/bcsmpi/bcsmpi/internal/unix"
	"github.com/bcsmpi/bcsmpi/nicthread"
	"github.com/bcsmpi/bcsmpi/strobe"
	"github.com/bcsmpi/bcsmpi/transport"
)

// Job is what to run.
type Job struct {
	Ranks   int
	Program string
	Args    []string
	Config  configs.Config
	Stdin   *os.File  // rank 0's standard input; nil: /dev/null (the other ranks always read /dev/null)
	Stdout  io.Writer // nil: os.Stdout
	Stderr  io.Writer // nil: os.Stderr
	// Signals carries the signals that terminate the job (SIGINT, SIGTERM,
	// SIGHUP). The caller subscribes them with signal.Notify(ch,
	// TermSignals...) as its first act, so that none is missed during
	// start-up. nil: Run subscribes them itself when it starts.
	Signals <-chan os.Signal
	// OnSlice receives the master's record of every slice (runs on the strobe thread).
	OnSlice func(*strobe.SliceRecord)
	// OnAgentSlice receives every agent's local record of every slice.
	OnAgentSlice func(*nicthread.SliceStats)
	// Record, if set, is a directory to record the job into; Replay, if
	// set, one to replay (replay.go). Not both.
	Record, Replay string
	// Gang, if set, is the gang master the job joins instead of running its
	// own (gang.go): its ranks time-share the machine with the gang's other
	// jobs. nil: the job has its own master, as always.
	Gang *nicthread.Gang
	// GangName names the job in Gang.Status; "" for its job id.
	GangName string

	// Env is the environment every rank starts from (the jobenv variables
	// are added to it); nil: this process's (os.Environ()). Dir is the
	// ranks' working directory; "": this process's. A launcher that runs
	// jobs for others (bcsd start) passes its client's; give Program,
	// Record, Replay and mds_dir as absolute paths then, since Run resolves
	// them in this process.
	Env []string
	Dir string
}

// Result says how the job ended.
type Result struct {
	ExitCode   int
	Message    string // why the job failed ("" if it did not)
	Slices     uint64
	Skipped    uint64
	FIFO       bool
	JobID      string
	Elapsed    time.Duration
	RuntimeCPU time.Duration       // CPU used by bcsrun itself (master + agents)
	Pulls      nicthread.PullStats // summed over the agents
	// BytesPerSliceMax is the budget the job ran with (auto resolved).
	BytesPerSliceMax uint64
	// RecordBytes is the size of the recording's rank files (--record).
	RecordBytes int64
	// Hosts is the number of hosts a job across hosts ran on (RunSlurm);
	// 0 for a job on this machine.
	Hosts int
	// SlicesRun is the number of slices in which the job's ranks ran and
	// SlicesAlive the number in which it was strobed (equal, and equal to
	// Slices, outside a gang). Elapsed is the job's response time.
	SlicesRun, SlicesAlive uint64
}

// TermSignals end a job the same way: the ranks are stopped, bcsrun says
// which signal arrived and exits with 128+signal.
var TermSignals = []os.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP}

// drainWait bounds how long Run reads output pipes after every process of
// the job has ended (only a process outside the job can still hold them).
const drainWait = 2 * time.Second

// reapEvery bounds how often Run looks for exited orphans during a job.
const reapEvery = 100 * time.Millisecond

// NodeOf places ranks on nodes. In blocks (cyclic false): with ppn > 0 node
// i gets ranks i*ppn .. (i+1)*ppn-1; with ppn 0 the ranks are spread evenly,
// node i getting ranks/nodes ranks and the first ranks%nodes one more.
// Cyclic: rank r goes to node r % nodes. Every node gets at least one rank
// when 1 <= nodes <= ranks (Nodes chooses nodes for a ppn).
func NodeOf(ranks, nodes int, cyclic bool, ppn int) []proto.NodeID {
	out := make([]proto.NodeID, ranks)
	if cyclic {
		for r := range out {
			out[r] = proto.NodeID(r % nodes)
		}
		return out
	}
	if ppn > 0 {
		for r := range out {
			out[r] = proto.NodeID(r / ppn)
		}
		return out
	}
	per, extra := ranks/nodes, ranks%nodes
	r := 0
	for n := 0; n < nodes; n++ {
		cnt := per
		if n < extra {
			cnt++
		}
		for i := 0; i < cnt; i++ {
			out[r] = proto.NodeID(n)
			r++
		}
	}
	return out
}

// Nodes is how many nodes a job of ranks ranks uses when up to avail are
// offered: ceil(ranks/ppn) with ppn > 0 (an error naming both when that is
// more than avail), else min(avail, ranks).
func Nodes(ranks, avail, ppn int) (int, error) {
	if ppn <= 0 {
		return min(avail, ranks), nil
	}
	n := (ranks + ppn - 1) / ppn
	if n > avail {
		return 0, fmt.Errorf("bcsrun: -n %d at ppn %d needs %d nodes, only %d available", ranks, ppn, n, avail)
	}
	return n, nil
}

// Run runs the job and returns how it ended. An error means the job could
// not be started at all. Run treats every child process the caller gains
// while it runs as the job's (see the package comment), except the
// processes of other jobs that Run runs concurrently in the same process
// (the registry, reap.go): call it from a process that starts no other
// children meanwhile, as bcsrun and bcsd do.
func Run(job Job) (res Result, err error) {
	sigs := job.Signals
	if sigs == nil {
		ch := make(chan os.Signal, 4)
		signal.Notify(ch, TermSignals...)
		defer signal.Stop(ch)
		sigs = ch
	}
	var startSig os.Signal // a signal that arrived during start-up
	signalled := func() bool {
		if startSig == nil {
			select {
			case startSig = <-sigs:
			default:
			}
		}
		return startSig != nil
	}
	cfg := job.Config
	if err := cfg.Validate(); err != nil {
		return res, err
	}
	if cfg.BytesPerSliceMax == 0 { // auto: once for the job, the same for every node
		cfg.BytesPerSliceMax = nicthread.AutoBudget(cfg.Timeslice)
	}
	res.BytesPerSliceMax = cfg.BytesPerSliceMax
	if job.Ranks < 1 || job.Ranks > 4096 {
		return res, fmt.Errorf("bcsrun: -n %d, want 1 .. 4096 ranks", job.Ranks)
	}
	if cfg.PPN > 0 {
		n, err := Nodes(job.Ranks, 64, cfg.PPN)
		if err != nil {
			return res, err
		}
		if cfg.Nodes > 1 && cfg.Nodes != n {
			return res, fmt.Errorf("bcsrun: --nodes %d and --ppn %d disagree: %d ranks at %d per node need %d nodes", cfg.Nodes, cfg.PPN, job.Ranks, cfg.PPN, n)
		}
		cfg.Nodes = n
	}
	if cfg.Nodes > job.Ranks {
		return res, fmt.Errorf("bcsrun: --nodes %d is more than the %d ranks; want 1 .. %d", cfg.Nodes, job.Ranks, job.Ranks)
	}
	prog, err := exec.LookPath(job.Program)
	if err != nil {
		return res, fmt.Errorf("bcsrun: program %q: %w", job.Program, err)
	}
	if job.Record != "" && job.Replay != "" {
		return res, fmt.Errorf("bcsrun: --record %s and --replay %s: a job is recorded or replayed, not both", job.Record, job.Replay)
	}
	stdout, stderr := job.Stdout, job.Stderr
	if stdout == nil {
		stdout = os.Stdout
	}
	if stderr == nil {
		stderr = os.Stderr
	}
	sigResult := func(s os.Signal) Result {
		res.ExitCode, res.Message = 128+int(s.(syscall.Signal)), fmt.Sprintf("bcsrun: %v received, job terminated", s)
		fmt.Fprintln(stderr, res.Message)
		return res
	}
	if signalled() {
		return sigResult(startSig), nil
	}
	if err := unix.SetChildSubreaper(); err != nil {
		return res, fmt.Errorf("bcsrun: becoming the reaper of the job's processes: %w", err)
	}
	others, err := unix.Children() // the caller's own children are not the job's
	if err != nil {
		return res, fmt.Errorf("bcsrun: listing child processes: %w", err)
	}
	jp := register(others)
	defer jp.unregister()
	var idb [6]byte
	rand.Read(idb[:])
	res.JobID = strconv.Itoa(os.Getpid()) + "-" + hex.EncodeToString(idb[:])
	var rec *recording
	var replayDir string
	var replaySlices *replay.Slices
	if job.Replay != "" {
		var diffs []string
		if replayDir, diffs, replaySlices, err = checkReplay(job, prog); err != nil {
			return res, err
		}
		for _, d := range diffs {
			fmt.Fprintf(stderr, "bcsrun: warning: replaying %s: %s; the ranks check every logged call against the recording\n", job.Replay, d)
		}
	}
	if job.Record != "" {
		if rec, err = startRecording(job, prog, res.JobID); err != nil {
			return res, err
		}
		defer func() {
			if cerr := rec.close(); cerr != nil {
				fmt.Fprintln(stderr, cerr)
				if res.ExitCode == 0 {
					res.ExitCode, res.Message = 1, cerr.Error()
				}
			}
		}()
	}
	start := time.Now()
	cpu0 := unix.ProcessCPUTime()

	// Regions and agents.
	nodeOf := NodeOf(job.Ranks, cfg.Nodes, cfg.Cyclic(), cfg.PPN)
	mon, err := newMonitor(job, cfg, res.JobID, nodeOf, stderr)
	if err != nil {
		return res, err
	}
	defer mon.close()
	onSlice := job.OnSlice
	if mon.global != nil {
		onSlice = func(r *strobe.SliceRecord) {
			mon.onSlice(r)
			if job.OnSlice != nil {
				job.OnSlice(r)
			}
		}
	}
	agentHook := func(n int) func(*nicthread.SliceStats) {
		h := mon.agentHook(n)
		switch {
		case h == nil:
			return job.OnAgentSlice
		case job.OnAgentSlice == nil:
			return h
		}
		return func(s *nicthread.SliceStats) { h(s); job.OnAgentSlice(s) }
	}
	var onDEM func([]proto.Descriptor)
	var onPlan func(*core.Plan)
	if mon.msgs != nil {
		onDEM, onPlan = mon.onDEM, mon.onPlan
	}
	rankLists := ranksOfNodes(nodeOf, cfg.Nodes)
	nodes := make([]*node, 0, cfg.Nodes)
	defer func() {
		for _, n := range nodes {
			n.close()
		}
	}()
	for i := range cfg.Nodes {
		if signalled() {
			return sigResult(startSig), nil
		}
		logBytes := 0
		if rec != nil {
			logBytes = logRingBytes
		}
		n, err := openNode(res.JobID, i, rankLists[i], cfg, logBytes, "bcsrun")
		if err != nil {
			return res, err
		}
		if job.Gang != nil {
			n.group = newGroup()
		}
		nodes = append(nodes, n)
	}

	// The leak report pipe: every rank inherits the write end as fd 4.
	var reportW *os.File
	type leaksRead struct {
		leaks   []rankLeak
		dropped int
	}
	var reportR *os.File
	reportCh := make(chan leaksRead, 1)
	if cfg.LeakCheck != "off" {
		if reportR, reportW, err = os.Pipe(); err != nil {
			return res, fmt.Errorf("bcsrun: leak report pipe: %w", err)
		}
		defer reportR.Close()
		defer reportW.Close()
		go func() {
			l, d := readLeaks(reportR, job.Ranks)
			reportCh <- leaksRead{l, d}
		}()
	}

	// Master and agents.
	onWarn := func(msg string) { fmt.Fprintf(stderr, "bcsmpi: %s\n", msg) }
	var onLog func(proto.Rank, []byte)
	if rec != nil {
		onLog = rec.onLog
	}
	stop := make(chan struct{})
	var nodeSet nicthread.Nodes
	var wg sync.WaitGroup
	agentErrs := make(chan error, cfg.Nodes)
	var meshes []*transport.Mesh
	defer func() {
		for _, m := range meshes {
			m.Close()
		}
	}()
	if cfg.Nodes == 1 {
		n := nodes[0]
		ac := n.agentConfig(cfg, nodeOf)
		ac.OnSlice, ac.OnPlan, ac.OnWarn, ac.OnLog = agentHook(0), onPlan, onWarn, onLog
		if n.group != nil {
			ac.OnRun = n.group.onRun
		}
		agentHooks(&ac, 0, rec, replaySlices)
		n.agent = nicthread.NewAgent(ac)
		nodeSet = &nicthread.LocalNodes{Agents: []*nicthread.Agent{n.agent}, TXTimeout: cfg.TXTimeout}
	} else {
		addrs := make([]string, cfg.Nodes+1)
		secret := transport.NewSecret()
		for i := range addrs {
			m, err := transport.Listen("127.0.0.1:0", secret)
			if err != nil {
				return res, err
			}
			meshes = append(meshes, m)
			addrs[i] = m.Addr()
		}
		remote := nicthread.NewRemoteNodes(meshes[0], cfg.Nodes, cfg.NodeTimeout, cfg.TXTimeout)
		handlers := []transport.Handler{remote.Handler}
		direct := [][]bool{remote.Direct()}
		var eps []*nicthread.AgentEndpoint
		for i, n := range nodes {
			ac := n.agentConfig(cfg, nodeOf)
			ac.OnSlice, ac.OnPlan, ac.OnWarn, ac.OnLog = agentHook(i), onPlanIf(i == 0, onPlan), onWarn, onLog
			if n.group != nil {
				ac.OnRun = n.group.onRun
			}
			agentHooks(&ac, i, rec, replaySlices)
			ep := n.remoteAgent(ac, meshes[i+1], cfg.TXTimeout)
			eps = append(eps, ep)
			handlers = append(handlers, ep.Handler)
			direct = append(direct, ep.Direct())
		}
		startErrs := make(chan error, len(meshes))
		for i, m := range meshes {
			go func() { startErrs <- m.Start(i, addrs, handlers[i], direct[i]) }()
		}
		for range meshes {
			if err := <-startErrs; err != nil {
				return res, err
			}
		}
		for _, ep := range eps {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := ep.Serve(); err != nil {
					agentErrs <- err
				}
			}()
		}
		nodeSet = remote
	}
	type masterDone struct {
		st  nicthread.MasterStats
		err error
	}
	masterCh := make(chan masterDone, 1)
	mcfg := nicthread.MasterConfig{Slice: cfg.Timeslice, Nodes: cfg.Nodes, Spin: cfg.StrobeSpin, FIFO: cfg.FIFO, TXTimeout: cfg.TXTimeout, OnSlice: onSlice, OnDEM: onDEM}
	var member *nicthread.GangJob
	if job.Gang != nil {
		// Refused (a full gang, another timeslice) before any rank starts.
		name := job.GangName
		if name == "" {
			name = res.JobID
		}
		if member, err = job.Gang.Join(name, mcfg, nodeSet, stop); err != nil {
			return res, fmt.Errorf("bcsrun: %w", err)
		}
		go func() {
			st, err := member.Wait()
			masterCh <- masterDone{st, err}
		}()
	} else {
		go func() {
			st, err := nicthread.RunMaster(mcfg, nodeSet, stop)
			masterCh <- masterDone{st, err}
		}()
	}

	// bcsrun's own stalls (SIGSTOP, Ctrl-Z), to explain a node timeout.
	stall := newStallWatch(cfg.NodeTimeout, cfg.TXTimeout, time.Now())
	conts := make(chan os.Signal, 1)
	signal.Notify(conts, syscall.SIGCONT)
	defer signal.Stop(conts)
	stallStop := make(chan struct{})
	stallDone := make(chan struct{})
	go func() { defer close(stallDone); stall.run(conts, stallStop) }()
	defer func() { close(stallStop); <-stallDone }()

	// Ranks. Spawned from a locked thread so PDEATHSIG means "bcsrun died".
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	exits := make(chan exit, job.Ranks)
	procs := make([]*os.Process, job.Ranks)
	out := &output{tag: cfg.TagOutput}
	started := 0
	var startErr error
	env := job.Env
	if env == nil {
		env = os.Environ()
	}
	sp := &spawner{who: "bcsrun", prog: prog, args: job.Args, env: replayEnv(env, replaySlices), dir: job.Dir, jobID: res.JobID, size: job.Ranks, cfg: cfg, mds: mon.env(cfg),
		record: rec != nil, replay: replayDir,
		reportW: reportW, stdin: job.Stdin, stdout: stdout, stderr: stderr, out: out, exits: exits}
	for _, n := range nodes {
		for li, r := range n.ranks {
			if signalled() {
				break
			}
			var cmd *exec.Cmd
			if cmd, startErr = sp.start(n, li, r); startErr != nil {
				break
			}
			procs[r] = cmd.Process
			pgid := 0
			if n.group != nil {
				pgid = n.group.pgid // set by the node's first rank; read on this goroutine, which sets it
			}
			jp.addRank(cmd.Process.Pid, pgid) // children that reapJobZombies leaves alone
			mon.rankStarted(r, cmd.Process.Pid)
			started++
			n.agent.Spawned(proto.Rank(r), cmd.Process.Pid) // the process (tree) that may attach as r
		}
		if startErr != nil {
			break
		}
	}
	for _, n := range nodes { // every path: the group leaders may be waited for now
		n.group.spawned()
	}
	if reportW != nil { // the ranks hold the write end now: EOF comes when the last exits
		reportW.Close()
	}

	// Watch.
	alive := started
	aborting := false
	var killTimer <-chan time.Time
	abort := func(code int, msg string) {
		if aborting {
			return
		}
		aborting = true
		res.ExitCode, res.Message = code, msg
		fmt.Fprintln(stderr, msg) // the reason first, before the ranks report being stopped
		for _, n := range nodes {
			n.agent.Abort()
		}
		for _, p := range procs {
			if p != nil {
				p.Signal(syscall.SIGTERM)
			}
		}
		for _, n := range nodes { // a descheduled rank handles SIGTERM only once continued
			n.group.cont()
		}
		killTimer = time.After(2 * time.Second)
	}
	if startErr != nil {
		abort(1, startErr.Error())
	} else if startSig != nil {
		abort(128+int(startSig.(syscall.Signal)), fmt.Sprintf("bcsrun: %v received, job terminated", startSig))
	}
	// Orphans that exit during the job are reaped as they go: on SIGCHLD, at
	// most every reapEvery (listing children may scan all of /proc).
	chld := make(chan os.Signal, 1)
	signal.Notify(chld, syscall.SIGCHLD)
	defer signal.Stop(chld)
	var reapTimer <-chan time.Time
	var master *masterDone
	for alive > 0 {
		select {
		case <-chld:
			if reapTimer == nil {
				reapTimer = time.After(reapEvery)
			}
		case <-reapTimer:
			reapTimer = nil
			reapJobZombies(jp)
		case e := <-exits:
			alive--
			procs[e.rank] = nil
			nodes[nodeOf[e.rank]].group.reaped()
			nodes[nodeOf[e.rank]].agent.RankExited(proto.Rank(e.rank)) // not "starting" any more (deadlock detection)
			if aborting {
				continue
			}
			if msg, code := judge(e, nodes[nodeOf[e.rank]], "bcsrun"); msg != "" {
				abort(code, msg)
			}
		case md := <-masterCh:
			master = &md
			if md.err != nil {
				abort(1, stall.explain(md.err, cfg.NodeTimeout, time.Now()))
			} else if !aborting {
				abort(1, "bcsmpi: the master stopped before the ranks finished")
			}
		case err := <-agentErrs:
			abort(1, stall.explain(err, cfg.NodeTimeout, time.Now()))
		case s := <-sigs:
			abort(128+int(s.(syscall.Signal)), fmt.Sprintf("bcsrun: %v received, job terminated", s))
		case <-killTimer:
			for _, p := range procs {
				if p != nil {
					p.Kill()
				}
			}
		}
	}
	// Every rank has ended: so does every process a rank left behind.
	if n, err := endJobOrphans(jp); err != nil {
		fmt.Fprintf(stderr, "bcsrun: warning: ending the processes the ranks left behind: %v\n", err)
	} else if n > 0 && res.ExitCode == 0 {
		fmt.Fprintf(stderr, "bcsrun: ended %d process(es) that the ranks left running\n", n)
	}
	close(stop)
	if master == nil {
		md := <-masterCh
		master = &md
	}
	res.Slices, res.Skipped, res.FIFO = master.st.Slices, master.st.Skipped, master.st.FIFO
	res.SlicesRun, res.SlicesAlive = res.Slices, res.Slices
	if member != nil {
		res.SlicesRun, res.SlicesAlive = member.Counts()
	}
	for _, m := range meshes {
		m.Close()
	}
	wg.Wait()
	if held := out.drain(drainWait); len(held) > 0 {
		fmt.Fprintf(stderr, "bcsrun: warning: the output of rank(s) %v is still held open by a process outside the job; stopped reading it\n", held)
	}
	res.Elapsed = time.Since(start)
	res.RuntimeCPU = unix.ProcessCPUTime() - cpu0
	if rec != nil { // the agents have stopped: what the ranks logged after the last strobe
		for _, n := range nodes {
			if n.agent == nil {
				continue
			}
			if err := n.agent.DrainLogs(); err != nil && res.ExitCode == 0 {
				res.ExitCode, res.Message = 1, err.Error()
				fmt.Fprintln(stderr, "bcsmpi:", err)
			}
		}
		res.RecordBytes = rec.bytes()
	}
	replayReport(stderr, job.Replay, replaySlices, nodes)
	if replayDir != "" && res.ExitCode != 0 {
		fmt.Fprintf(stderr, "bcsrun: note: the job replayed %s; a rank that waits for ever (a deadlock report) can mean that the program no longer makes the recorded calls\n", job.Replay)
	}
	for _, n := range nodes { // the agents have stopped (wg.Wait above)
		if n.agent != nil {
			ps := n.agent.Pulls()
			res.Pulls.Served += ps.Served
			res.Pulls.Revoked += ps.Revoked
			res.Pulls.Unfinished += ps.Unfinished
			res.Pulls.Bytes += ps.Bytes
		}
	}
	if reportR != nil {
		// Every rank has exited, so what they wrote is in the pipe; the
		// deadline only bounds the wait should a child of a rank still hold
		// the write end (ranks mark it close-on-exec at MPI_Init).
		reportR.SetReadDeadline(time.Now().Add(time.Second))
		got := <-reportCh
		if res.ExitCode == 0 {
			text, fail := leakReport(cfg.LeakCheck, got.leaks, got.dropped, nodes[0].agent.Unmatched())
			fmt.Fprint(stderr, text)
			if fail {
				res.ExitCode, res.Message = 1, strings.TrimSuffix(strings.SplitN(text, "\n", 2)[0], ":")
			}
		}
	}
	mon.finish(&res, stdout, stderr)
	return res, nil
}

// onPlanIf gives f to node 0 only: every node computes the same plan.
func onPlanIf(first bool, f func(*core.Plan)) func(*core.Plan) {
	if first {
		return f
	}
	return nil
}

// ranksOfNodes lists each node's ranks, in order, from a placement.
func ranksOfNodes(nodeOf []proto.NodeID, nodes int) [][]int {
	out := make([][]int, nodes)
	for r, n := range nodeOf {
		out[n] = append(out[n], r)
	}
	return out
}
