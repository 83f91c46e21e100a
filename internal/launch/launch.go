package launch

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/bcsmpi/bcsmpi/configs"
	"github.com/bcsmpi/bcsmpi/emds/kernel"
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
	// AcrossGang is --gang for a job across hosts (RunSSH, RunSlurm):
	// "auto" or "" (node 0's master is a place in the gang of this
	// user's bcsd on node 0's host when one runs there), "on" (it must
	// be), "off" (the job's own master). See gangacross.go.
	AcrossGang string

	// Env is the environment every rank starts from (the jobenv variables
	// are added to it); nil: this process's (os.Environ()). Dir is the
	// ranks' working directory; "": this process's. A launcher that runs
	// jobs for others (bcsd start) passes its client's; give Program,
	// Record, Replay and mds_dir as absolute paths then, since Run resolves
	// them in this process.
	Env []string
	Dir string

	// Submitted is when the job was handed to the launcher (a bcsd: when
	// its request arrived), Admitted when it left the queue to start; zero:
	// when Run was called. The manifest keeps them (submitted, admitted),
	// so that the report can give the job's response time and queue wait.
	Submitted, Admitted time.Time
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
	// Late and LateMax are the sum and the largest of the strobes'
	// lateness (nicthread.MasterStats); zero across hosts and in a gang.
	Late, LateMax time.Duration
	// StrobeSpin and Spin are the bounds the job ran with (the host's
	// defaults resolved, configs.Config.ForHost).
	StrobeSpin, Spin time.Duration
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
	// Ganged: the job's master was a gang's (bcsd start, here or on the
	// first host of a job across hosts), so SlicesRun and SlicesAlive are
	// the gang's counts even where they are equal.
	Ganged bool
	// SlicesGiven, SwitchesIn and SwitchesOut are a gang's accounting
	// (nicthread.GangJob.Switches): slices of the job's turns lent to
	// another job, and switches into and out of it; 0 outside a gang.
	SlicesGiven, SwitchesIn, SwitchesOut uint64
	// FirstSlice is when the job's first slice ended on every node, by the
	// wall clock of the master's host (node 0's, across hosts); zero if
	// the master never completed one or the job ran in a gang.
	FirstSlice time.Time
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
//
// Run is the job type's lifecycle (job.go): create the job's parts, start
// its ranks, watch them, finish (the result), Close.
func Run(spec Job) (res Result, err error) {
	sigs := spec.Signals
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
	if spec.Config.MDSMode().Kernel {
		// Open's decoding and loading, beside checkJob's (AutoBudget's) time.
		kernel.Prefetch(kernel.Config{BTFPath: spec.Config.MDSKernelBTF, CacheDir: spec.Config.MDSKernelCache, Ranks: spec.Ranks, RuntimePID: os.Getpid()})
	}
	cfg, prog, err := checkJob(spec)
	res.BytesPerSliceMax = cfg.BytesPerSliceMax
	if err != nil {
		return res, err
	}
	stdout, stderr := spec.Stdout, spec.Stderr
	if stdout == nil {
		stdout = os.Stdout
	}
	if stderr == nil {
		stderr = os.Stderr
	}
	sigResult := func(s os.Signal) Result {
		res.ExitCode, res.Message = 128+int(s.(syscall.Signal)), signalMsg(s)
		fmt.Fprintln(stderr, res.Message)
		return res
	}
	if signalled() {
		return sigResult(startSig), nil
	}
	j := newJob("bcsrun", "", cfg, spec.Ranks, NodeOf(spec.Ranks, cfg.Nodes, cfg.Cyclic(), cfg.PPN), stderr)
	defer func() {
		// The recording's files are the one part whose release can fail
		// a job that ran (a file that could not be written).
		if cerr := j.Close(); cerr != nil {
			fmt.Fprintln(stderr, cerr)
			if res.ExitCode == 0 {
				res.ExitCode, res.Message = 1, cerr.Error()
			}
		}
	}()
	lj, err := j.create(spec, prog, signalled)
	res.JobID = j.id
	if errors.Is(err, errSignalled) {
		return sigResult(startSig), nil
	}
	if err != nil {
		return res, err
	}
	startErr := j.spawnRanks(lj.spawner(spec, prog, stdout, stderr), signalled)
	lj.watch(&res, sigs, startErr, startSig)
	j.endOrphans(res.ExitCode == 0)
	lj.finish(&res, spec, stdout)
	return res, nil
}

// checkJob validates a job for Run: the configuration with the byte budget
// resolved (auto) and the nodes chosen (ppn), and the program's path.
func checkJob(spec Job) (configs.Config, string, error) {
	cfg := spec.Config
	if err := cfg.Validate(); err != nil {
		return configs.Config{}, "", err
	}
	if cfg.BytesPerSliceMax == 0 { // auto: once for the job, the same for every node
		cfg.BytesPerSliceMax = nicthread.AutoBudget(cfg.Timeslice)
	}
	if unix.SiblingReadsRefused() {
		// No rank could serve a span (nicthread doc.go, "Spans"): the agent
		// would copy every one, overrunning its slices. Decided here, once,
		// the same for every node.
		cfg.SpanSlicesMax = 0
	}
	if spec.Ranks < 1 || spec.Ranks > 4096 {
		return cfg, "", fmt.Errorf("bcsrun: -n %d, want 1 .. 4096 ranks", spec.Ranks)
	}
	if cfg.PPN > 0 {
		n, err := Nodes(spec.Ranks, 64, cfg.PPN)
		if err != nil {
			return cfg, "", err
		}
		if cfg.Nodes > 1 && cfg.Nodes != n {
			return cfg, "", fmt.Errorf("bcsrun: --nodes %d and --ppn %d disagree: %d ranks at %d per node need %d nodes", cfg.Nodes, cfg.PPN, spec.Ranks, cfg.PPN, n)
		}
		cfg.Nodes = n
	}
	if cfg.Nodes > spec.Ranks {
		return cfg, "", fmt.Errorf("bcsrun: --nodes %d is more than the %d ranks; want 1 .. %d", cfg.Nodes, spec.Ranks, spec.Ranks)
	}
	// Every logical node lives on this machine: its ranks, the strobe
	// thread and, with several nodes, one agent each want a CPU at once.
	threads := spec.Ranks + 1
	if cfg.Nodes > 1 {
		threads += cfg.Nodes
	}
	if cpus, err := unix.Affinity(); err == nil {
		cfg = cfg.ForHost(threads, len(cpus))
	}
	prog, err := exec.LookPath(spec.Program)
	if err != nil {
		return cfg, "", fmt.Errorf("bcsrun: program %q: %w", spec.Program, err)
	}
	if spec.Record != "" && spec.Replay != "" {
		return cfg, "", fmt.Errorf("bcsrun: --record %s and --replay %s: a job is recorded or replayed, not both", spec.Record, spec.Replay)
	}
	return cfg, prog, nil
}

// localJob is what Run keeps beside its job: the replayed recording, the
// stall watch, and the job's agents (over loopback when there are several
// nodes).
type localJob struct {
	*job
	replayDir    string
	replaySlices *replay.Slices
	stall        *stallWatch
	agentErrs    chan error
	start        time.Time     // for Result.Elapsed
	cpu0         time.Duration // for Result.RuntimeCPU
}

// create acquires, in order, the parts of a job on this machine (job.go);
// on error the caller's Close releases what was acquired. signalled stops
// it, with errSignalled, before each region.
func (j *job) create(spec Job, prog string, signalled func() bool) (*localJob, error) {
	lj := &localJob{job: j, agentErrs: make(chan error, j.cfg.Nodes)}
	cfg := j.cfg
	if err := j.becomeReaper(); err != nil {
		return lj, err
	}
	var idb [6]byte
	rand.Read(idb[:])
	j.id = strconv.Itoa(os.Getpid()) + "-" + hex.EncodeToString(idb[:])
	if spec.Replay != "" {
		var diffs []string
		var err error
		if lj.replayDir, diffs, lj.replaySlices, err = checkReplay(spec, prog); err != nil {
			return lj, err
		}
		for _, d := range diffs {
			fmt.Fprintf(j.stderr, "bcsrun: warning: replaying %s: %s; the ranks check every logged call against the recording\n", spec.Replay, d)
		}
	}
	if spec.Record != "" {
		if err := j.startRecording(spec, prog); err != nil {
			return lj, err
		}
	}
	lj.start, lj.cpu0 = time.Now(), unix.ProcessCPUTime()
	if err := j.openMonitor(func() (*monitor, error) { return newMonitor(spec, cfg, j.id, j.nodeOf, j.stderr) }, false); err != nil {
		return lj, err
	}
	logBytes := 0
	if j.rec != nil {
		logBytes = logRingBytes
	}
	ids := make([]int, cfg.Nodes)
	for i := range ids {
		ids[i] = i
	}
	if err := j.openNodes(ids, ranksOfNodes(j.nodeOf, cfg.Nodes), logBytes, spec.Gang != nil, signalled); err != nil {
		return lj, err
	}
	if err := j.openLeakPipe(); err != nil {
		return lj, err
	}
	nodeSet, err := lj.startAgents(spec)
	if err != nil {
		return lj, err
	}
	onSlice := spec.OnSlice
	if j.mon.global != nil {
		onSlice = func(r *strobe.SliceRecord) {
			j.mon.onSlice(r)
			if spec.OnSlice != nil {
				spec.OnSlice(r)
			}
		}
	}
	var onDEM func([]proto.Descriptor)
	if j.mon.msgs != nil {
		onDEM = j.mon.onDEM
	}
	mcfg := nicthread.MasterConfig{Slice: cfg.Timeslice, Nodes: cfg.Nodes, Spin: cfg.StrobeSpin, FIFO: cfg.FIFO, TXTimeout: cfg.TXTimeout, OnSlice: onSlice, OnDEM: onDEM}
	if spec.Gang != nil {
		name := spec.GangName
		if name == "" {
			name = j.id
		}
		err = j.joinGang(spec.Gang, name, mcfg, nodeSet)
	} else {
		err = j.runMaster(mcfg, nodeSet)
	}
	if err != nil {
		return lj, err
	}
	lj.stall = newStallWatch(cfg.NodeTimeout, cfg.TXTimeout, time.Now())
	return lj, j.watchStalls(lj.stall)
}

// startAgents makes every node's agent: in this process with one node, else
// each behind its own loopback mesh endpoint (and the master behind
// endpoint 0), serving on its own goroutine. It returns the master's view
// of the nodes.
func (lj *localJob) startAgents(spec Job) (nicthread.Nodes, error) {
	j, cfg := lj.job, lj.cfg
	agentHook := func(n int) func(*nicthread.SliceStats) {
		h := j.mon.agentHook(n)
		switch {
		case h == nil:
			return spec.OnAgentSlice
		case spec.OnAgentSlice == nil:
			return h
		}
		return func(s *nicthread.SliceStats) { h(s); spec.OnAgentSlice(s) }
	}
	var onPlan func(*core.Plan)
	if j.mon.msgs != nil {
		onPlan = j.mon.onPlan
	}
	onWarn := func(msg string) { fmt.Fprintf(j.stderr, "bcsmpi: %s\n", msg) }
	var onLog func(proto.Rank, []byte)
	if j.rec != nil {
		onLog = j.rec.onLog
	}
	config := func(i int, n *node) nicthread.AgentConfig {
		ac := n.agentConfig(cfg, j.nodeOf)
		ac.OnSlice, ac.OnPlan, ac.OnWarn, ac.OnLog = agentHook(i), onPlanIf(i == 0, onPlan), onWarn, onLog
		if n.group != nil {
			ac.OnRun = n.group.onRun
		}
		agentHooks(&ac, i, j.rec, lj.replaySlices)
		return ac
	}
	if cfg.Nodes == 1 {
		n := j.nodes[0]
		n.agent = nicthread.NewAgent(config(0, n))
		return &nicthread.LocalNodes{Agents: []*nicthread.Agent{n.agent}, TXTimeout: cfg.TXTimeout}, nil
	}
	if err := j.meshStep(); err != nil {
		return nil, err
	}
	addrs := make([]string, cfg.Nodes+1)
	secret := transport.NewSecret()
	for i := range addrs {
		m, err := j.listen("127.0.0.1:0", secret)
		if err != nil {
			return nil, err
		}
		addrs[i] = m.Addr()
	}
	remote := nicthread.NewRemoteNodes(j.meshes[0], cfg.Nodes, cfg.NodeTimeout, cfg.TXTimeout)
	handlers := []transport.Handler{remote.Handler}
	direct := [][]bool{remote.Direct()}
	var eps []*nicthread.AgentEndpoint
	for i, n := range j.nodes {
		ep := n.remoteAgent(config(i, n), j.meshes[i+1], cfg.TXTimeout)
		eps = append(eps, ep)
		handlers = append(handlers, ep.Handler)
		direct = append(direct, ep.Direct())
	}
	startErrs := make(chan error, len(j.meshes))
	for i, m := range j.meshes {
		go func() { startErrs <- m.Start(i, addrs, handlers[i], direct[i]) }()
	}
	for range j.meshes {
		if err := <-startErrs; err != nil {
			return nil, err // Close closes the meshes, which ends the other starts
		}
	}
	for _, ep := range eps {
		j.wg.Add(1)
		go func() {
			defer j.wg.Done()
			if err := ep.Serve(); err != nil {
				lj.agentErrs <- err
			}
		}()
	}
	return remote, nil
}

// spawner is how Run starts the ranks.
func (lj *localJob) spawner(spec Job, prog string, stdout, stderr io.Writer) *spawner {
	j := lj.job
	j.out = &output{tag: j.cfg.TagOutput}
	env := spec.Env
	if env == nil {
		env = os.Environ()
	}
	return &spawner{who: j.who, prog: prog, args: spec.Args, env: replayEnv(env, lj.replaySlices), dir: spec.Dir, jobID: j.id, size: j.size, cfg: j.cfg, mds: j.mon.env(j.cfg),
		record: j.rec != nil, replay: lj.replayDir,
		reportW: j.reportW, stdin: spec.Stdin, stdout: stdout, stderr: stderr, out: j.out, exits: j.exits}
}

// watch follows the job until its last rank has ended (watch.go): the
// ranks' exits, the master's end, an agent's error and the terminating
// signals. startErr, a rank that could not start, and startSig, a signal
// during start-up, abort it at once.
func (lj *localJob) watch(res *Result, sigs <-chan os.Signal, startErr error, startSig os.Signal) {
	j := lj.job
	w := &watch{j: j, sigs: sigs, agent: lj.agentErrs, sigMsg: signalMsg}
	w.verdict = func(code int, msg string) {
		res.ExitCode, res.Message = code, msg
		fmt.Fprintln(j.stderr, msg)
	}
	explain := func(err error) string { return lj.stall.explain(err, j.cfg.NodeTimeout, time.Now()) }
	w.master = func(err error) {
		if err != nil {
			w.abort(1, explain(err))
		} else {
			w.abort(1, "bcsmpi: the master stopped before the ranks finished")
		}
	}
	w.agentEnd = func(err error) { w.abort(1, explain(err)) }
	if startErr != nil {
		w.abort(1, startErr.Error())
	} else if startSig != nil {
		w.abort(128+int(startSig.(syscall.Signal)), signalMsg(startSig))
	}
	w.run()
}

// finish ends a job whose ranks have all ended and fills in the rest of
// res: it stops the master and the agents (as Close would, in Close's
// order, reading each one's counts once it has stopped), drains the
// output, and makes the reports (recording, replay, leaks, MDS).
func (lj *localJob) finish(res *Result, spec Job, stdout io.Writer) {
	j, stderr := lj.job, lj.stderr
	md := j.stopMaster()
	res.Slices, res.Skipped, res.FIFO, res.FirstSlice = md.st.Slices, md.st.Skipped, md.st.FIFO, md.st.FirstSlice
	res.Late, res.LateMax = md.st.Late, md.st.LateMax
	res.StrobeSpin, res.Spin = j.cfg.StrobeSpin, j.cfg.Spin
	res.SlicesRun, res.SlicesAlive = res.Slices, res.Slices
	if j.member != nil {
		res.Ganged = true
		res.SlicesRun, res.SlicesAlive = j.member.Counts()
		res.SwitchesIn, res.SwitchesOut = j.member.Switches()
		res.SlicesGiven = j.member.Given()
	}
	j.stopAgents()
	j.drainOutput()
	res.Elapsed = time.Since(lj.start)
	res.RuntimeCPU = unix.ProcessCPUTime() - lj.cpu0
	if j.rec != nil { // the agents have stopped: what the ranks logged after the last strobe
		for _, n := range j.nodes {
			if err := n.agent.DrainLogs(); err != nil && res.ExitCode == 0 {
				res.ExitCode, res.Message = 1, err.Error()
				fmt.Fprintln(stderr, "bcsmpi:", err)
			}
		}
		res.RecordBytes = j.rec.bytes()
	}
	replayReport(stderr, spec.Replay, lj.replaySlices, j.nodes)
	if lj.replayDir != "" && res.ExitCode != 0 {
		fmt.Fprintf(stderr, "bcsrun: note: the job replayed %s; a rank that waits for ever (a deadlock report) can mean that the program no longer makes the recorded calls\n", spec.Replay)
	}
	for _, n := range j.nodes { // the agents have stopped
		ps := n.agent.Pulls()
		res.Pulls.Served += ps.Served
		res.Pulls.Revoked += ps.Revoked
		res.Pulls.Unfinished += ps.Unfinished
		res.Pulls.Bytes += ps.Bytes
		res.Pulls.Spans += ps.Spans
		res.Pulls.Stopped += ps.Stopped
	}
	if j.reportR != nil {
		// Every rank has exited, so what they wrote is in the pipe; the
		// deadline only bounds the wait should a child of a rank still hold
		// the write end (ranks mark it close-on-exec at MPI_Init).
		j.reportR.SetReadDeadline(time.Now().Add(time.Second))
		got := <-j.leaks
		if res.ExitCode == 0 {
			text, fail := leakReport(j.cfg.LeakCheck, got.leaks, got.dropped, j.nodes[0].agent.Unmatched())
			fmt.Fprint(stderr, text)
			if fail {
				res.ExitCode, res.Message = 1, strings.TrimSuffix(strings.SplitN(text, "\n", 2)[0], ":")
			}
		}
	}
	j.mon.finish(res, stdout, stderr)
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
