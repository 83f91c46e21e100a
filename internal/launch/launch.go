// Package launch runs one job on this machine: it creates a shared-memory
// region and an agent per logical node, starts the master, spawns the rank
// processes, forwards their output, watches them, and tears everything down on
// every path (normal end, a failing rank, a runtime error, SIGINT, SIGTERM or
// SIGHUP, at any moment from the start).
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
// Input and output: rank 0 reads Job.Stdin, the other ranks /dev/null. Output
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
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/bcsmpi/bcsmpi/configs"
	"github.com/bcsmpi/bcsmpi/internal/jobenv"
	"github.com/bcsmpi/bcsmpi/internal/proto"
	"github.com/bcsmpi/bcsmpi/internal/shm"
	"github.com/bcsmpi/bcsmpi/internal/unix"
	"github.com/bcsmpi/bcsmpi/nicthread"
	"github.com/bcsmpi/bcsmpi/scheduler"
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
}

// TermSignals end a job the same way: the ranks are stopped, bcsrun says
// which signal arrived and exits with 128+signal.
var TermSignals = []os.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP}

// drainWait bounds how long Run reads output pipes after every process of
// the job has ended (only a process outside the job can still hold them).
const drainWait = 2 * time.Second

// reapEvery bounds how often Run looks for exited orphans during a job.
const reapEvery = 100 * time.Millisecond

// NodeOf spreads ranks over nodes in blocks: node i gets ranks/nodes ranks,
// plus one more for the first ranks%nodes nodes.
func NodeOf(ranks, nodes int) []proto.NodeID {
	out := make([]proto.NodeID, ranks)
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

type node struct {
	file   *os.File // the region's memfd
	mem    []byte
	region *shm.Region
	agent  *nicthread.Agent
	ranks  []int
}

type exit struct {
	rank  int
	state *os.ProcessState
	err   error
}

// Run runs the job and returns how it ended. An error means the job could
// not be started at all. Run treats every child process the caller gains
// while it runs as the job's (see the package comment): call it from a
// process that starts no other children meanwhile, as bcsrun does.
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
	var idb [6]byte
	rand.Read(idb[:])
	res.JobID = strconv.Itoa(os.Getpid()) + "-" + hex.EncodeToString(idb[:])
	var rec *recording
	var replayDir string
	if job.Replay != "" {
		var diffs []string
		if replayDir, diffs, err = checkReplay(job, prog); err != nil {
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
	nodeOf := NodeOf(job.Ranks, cfg.Nodes)
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
	var onPlan func(*scheduler.Plan)
	if mon.msgs != nil {
		onDEM, onPlan = mon.onDEM, mon.onPlan
	}
	nodes := make([]*node, cfg.Nodes)
	for r, n := range nodeOf {
		if nodes[n] == nil {
			nodes[n] = &node{}
		}
		nodes[n].ranks = append(nodes[n].ranks, r)
	}
	defer func() {
		for _, n := range nodes {
			if n.mem != nil {
				unix.Unmap(n.mem)
			}
			if n.file != nil {
				n.file.Close()
			}
		}
	}()
	for i, n := range nodes {
		g := cfg.Geometry(len(n.ranks))
		if rec != nil {
			g.LogBytes = logRingBytes
		}
		if signalled() {
			return sigResult(startSig), nil
		}
		name := fmt.Sprintf("bcs-%s-node%d", res.JobID, i)
		if n.file, err = unix.CreateRegion(name, g.Size()); err != nil {
			return res, fmt.Errorf("bcsrun: %w", err)
		}
		if n.mem, err = unix.Map(int(n.file.Fd()), g.Size()); err != nil {
			return res, fmt.Errorf("bcsrun: %w", err)
		}
		if n.region, err = shm.Init(n.mem, g); err != nil {
			return res, err
		}
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
		n.agent = nicthread.NewAgent(nicthread.AgentConfig{Node: 0, NodeOf: nodeOf, Sched: cfg.Sched(), Restart: cfg.RestartPolicy(), Region: n.region, OnSlice: agentHook(0), OnPlan: onPlan, Check: cfg.CheckMode(),
			DeadlockSlices: cfg.DeadlockSlices, DeadlockWarn: cfg.DeadlockAction == "warn", OnWarn: onWarn, OnLog: onLog})
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
		stallNode, stallAt := faultStall()
		handlers := []transport.Handler{remote.Handler}
		direct := [][]bool{remote.Direct()}
		var eps []*nicthread.AgentEndpoint
		for i, n := range nodes {
			ep := &nicthread.AgentEndpoint{}
			n.agent = nicthread.NewAgent(nicthread.AgentConfig{Node: proto.NodeID(i), NodeOf: nodeOf, Sched: cfg.Sched(), Restart: cfg.RestartPolicy(), Region: n.region,
				Send: func(to proto.NodeID, m *proto.Msg) error { return ep.Send(to, m) }, OnSlice: agentHook(i), OnPlan: onPlanIf(i == 0, onPlan), Check: cfg.CheckMode(),
				DeadlockSlices: cfg.DeadlockSlices, DeadlockWarn: cfg.DeadlockAction == "warn", OnWarn: onWarn, OnLog: onLog})
			*ep = *nicthread.NewAgentEndpoint(n.agent, meshes[i+1], cfg.TXTimeout)
			if i == stallNode {
				ep.StallAt = stallAt
			}
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
	go func() {
		st, err := nicthread.RunMaster(nicthread.MasterConfig{Slice: cfg.Timeslice, Nodes: cfg.Nodes, Spin: cfg.StrobeSpin, FIFO: cfg.FIFO, TXTimeout: cfg.TXTimeout, OnSlice: onSlice, OnDEM: onDEM}, nodeSet, stop)
		masterCh <- masterDone{st, err}
	}()

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
	notJob := pidSet(others) // grows by the ranks: children that reapZombies leaves alone
	started := 0
	var startErr error
	var closeWriters []*os.File
	for ni, n := range nodes {
		for li, r := range n.ranks {
			if signalled() {
				break
			}
			cmd := exec.Command(prog, job.Args...)
			renv := jobenv.Env{ShmFD: 3, Rank: r, Size: job.Ranks, LocalRank: li, Node: ni, Job: res.JobID,
				Timeslice: cfg.Timeslice, Spin: cfg.Spin, LeakCheck: cfg.LeakCheck, MDS: mon.env(cfg), Check: cfg.CheckMode().String(),
				Record: rec != nil, Replay: replayDir}
			cmd.ExtraFiles = []*os.File{n.file} // descriptor 3
			if reportW != nil {
				cmd.ExtraFiles = append(cmd.ExtraFiles, reportW) // descriptor 4
				renv.ReportFD = 4
			}
			cmd.Env = append(os.Environ(), renv.Environ()...)
			cmd.SysProcAttr = unix.DieWithParent()
			if r == 0 && job.Stdin != nil {
				cmd.Stdin = job.Stdin // the descriptor itself: no copying, EOF when the caller's input ends
			}
			var w [2]*os.File
			for i, dst := range []io.Writer{stdout, stderr} {
				if w[i], err = out.writer(r, dst); err != nil {
					startErr = fmt.Errorf("bcsrun: output pipe for rank %d: %w", r, err)
					break
				}
				if w[i] != dst {
					closeWriters = append(closeWriters, w[i])
				}
			}
			if startErr != nil {
				for _, w := range closeWriters {
					w.Close()
				}
				break
			}
			cmd.Stdout, cmd.Stderr = w[0], w[1]
			startErr = cmd.Start()
			for _, w := range closeWriters { // the child has its copies now
				w.Close()
			}
			closeWriters = closeWriters[:0]
			if startErr != nil {
				startErr = fmt.Errorf("bcsrun: starting rank %d (%s): %w", r, prog, startErr)
				break
			}
			procs[r] = cmd.Process
			notJob[cmd.Process.Pid] = true
			mon.rankStarted(r, cmd.Process.Pid)
			started++
			n.agent.Spawned(proto.Rank(r), cmd.Process.Pid) // the process (tree) that may attach as r
			go func() {
				err := cmd.Wait()
				exits <- exit{rank: r, state: cmd.ProcessState, err: err}
			}()
		}
		if startErr != nil {
			break
		}
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
			reapZombies(notJob)
		case e := <-exits:
			alive--
			procs[e.rank] = nil
			nodes[nodeOf[e.rank]].agent.RankExited(proto.Rank(e.rank)) // not "starting" any more (deadlock detection)
			if aborting {
				continue
			}
			if msg, code := judge(e, nodes, nodeOf); msg != "" {
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
	if n, err := endOrphans(pidSet(others)); err != nil {
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

// judge says whether a rank's exit fails the job, and with which message and code.
func judge(e exit, nodes []*node, nodeOf []proto.NodeID) (string, int) {
	n := nodes[nodeOf[e.rank]]
	var state uint32
	for li, r := range n.ranks {
		if r == e.rank {
			state = n.region.Block(li).State()
		}
	}
	ws, _ := e.state.Sys().(syscall.WaitStatus)
	switch {
	case ws.Signaled():
		return fmt.Sprintf("bcsrun: rank %d was killed by signal %v; job aborted", e.rank, ws.Signal()), 128 + int(ws.Signal())
	case ws.ExitStatus() != 0:
		return fmt.Sprintf("bcsrun: rank %d exited with status %d; job aborted", e.rank, ws.ExitStatus()), ws.ExitStatus()
	case state == shm.StateInit:
		return fmt.Sprintf("bcsrun: rank %d exited without calling MPI_Finalize; job aborted", e.rank), 1
	}
	if e.err != nil && !errors.As(e.err, new(*exec.ExitError)) {
		return fmt.Sprintf("bcsrun: rank %d: %v", e.rank, e.err), 1
	}
	return "", 0
}

// faultStall reads BCS_FAULT_STALL_NODE=node@slice (jobenv.VarFaultStallNode), a fault injection for
// tests: that node's agent stops answering the master from that slice on.
func faultStall() (int, proto.SliceID) {
	v := os.Getenv(jobenv.VarFaultStallNode)
	if v == "" {
		return -1, 0
	}
	var node int
	var slice uint64
	if _, err := fmt.Sscanf(v, "%d@%d", &node, &slice); err != nil || slice == 0 {
		fmt.Fprintf(os.Stderr, "bcsrun: %s=%q ignored, want node@slice\n", jobenv.VarFaultStallNode, v)
		return -1, 0
	}
	return node, proto.SliceID(slice)
}

// onPlanIf gives f to node 0 only: every node computes the same plan.
func onPlanIf(first bool, f func(*scheduler.Plan)) func(*scheduler.Plan) {
	if first {
		return f
	}
	return nil
}
