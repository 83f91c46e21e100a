// Package launch runs one job on this machine: it creates a shared-memory
// region and an agent per logical node, starts the master, spawns the rank
// processes, forwards their output, watches them, and tears everything down on
// every path (normal end, a failing rank, a runtime error, SIGINT/SIGTERM).
//
// Ownership: Run owns every resource it creates — regions (the /dev/shm file is
// unlinked as soon as the ranks have inherited its descriptor, so not even a
// SIGKILL of bcsrun can leave it behind), transport listeners and connections,
// child processes (started with PDEATHSIG=SIGKILL from a locked thread, so
// they die with bcsrun), and goroutines; all are released before Run returns.
package launch

import (
	"bufio"
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
	"sync"
	"syscall"
	"time"

	"github.com/bcsmpi/bcsmpi/configs"
	"github.com/bcsmpi/bcsmpi/internal/proto"
	"github.com/bcsmpi/bcsmpi/internal/shm"
	"github.com/bcsmpi/bcsmpi/internal/unix"
	"github.com/bcsmpi/bcsmpi/mpiapi"
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
	Stdout  io.Writer // nil: os.Stdout
	Stderr  io.Writer // nil: os.Stderr
	// OnSlice receives the master's record of every slice (runs on the strobe thread).
	OnSlice func(*strobe.SliceRecord)
	// OnAgentSlice receives every agent's local record of every slice.
	OnAgentSlice func(*nicthread.SliceStats)
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
	RuntimeCPU time.Duration // CPU used by bcsrun itself (master + agents)
}

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
	file   *os.File
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
// not be started at all.
func Run(job Job) (res Result, err error) {
	cfg := job.Config
	if err := cfg.Validate(); err != nil {
		return res, err
	}
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
	stdout, stderr := job.Stdout, job.Stderr
	if stdout == nil {
		stdout = os.Stdout
	}
	if stderr == nil {
		stderr = os.Stderr
	}
	var idb [6]byte
	rand.Read(idb[:])
	res.JobID = strconv.Itoa(os.Getpid()) + "-" + hex.EncodeToString(idb[:])
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
				os.Remove(n.file.Name())
				n.file.Close()
			}
		}
	}()
	for i, n := range nodes {
		g := cfg.Geometry(len(n.ranks))
		name := fmt.Sprintf("bcs-%s-node%d", res.JobID, i)
		if n.file, err = unix.CreateShm(name, g.Size()); err != nil {
			return res, fmt.Errorf("bcsrun: %w", err)
		}
		if n.mem, err = unix.Map(int(n.file.Fd()), g.Size()); err != nil {
			return res, fmt.Errorf("bcsrun: %w", err)
		}
		if n.region, err = shm.Init(n.mem, g); err != nil {
			return res, err
		}
	}

	// Master and agents.
	onWarn := func(msg string) { fmt.Fprintf(stderr, "bcsmpi: %s\n", msg) }
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
		n.agent = nicthread.NewAgent(nicthread.AgentConfig{Node: 0, NodeOf: nodeOf, Sched: cfg.Sched(), Restart: cfg.RestartPolicy(), Region: n.region, OnSlice: agentHook(0), OnPlan: onPlan,
			DeadlockSlices: cfg.DeadlockSlices, DeadlockWarn: cfg.DeadlockAction == "warn", OnWarn: onWarn})
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
				Send: func(to proto.NodeID, m *proto.Msg) error { return ep.Send(to, m) }, OnSlice: agentHook(i), OnPlan: onPlanIf(i == 0, onPlan),
				DeadlockSlices: cfg.DeadlockSlices, DeadlockWarn: cfg.DeadlockAction == "warn", OnWarn: onWarn})
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

	// Ranks. Spawned from a locked thread so PDEATHSIG means "bcsrun died".
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(sigs)
	exits := make(chan exit, job.Ranks)
	procs := make([]*os.Process, job.Ranks)
	var outWG sync.WaitGroup
	var outMu sync.Mutex
	started := 0
	var startErr error
	var closeWriters []*os.File
	for ni, n := range nodes {
		for li, r := range n.ranks {
			cmd := exec.Command(prog, job.Args...)
			cmd.Env = append(os.Environ(),
				mpiapi.EnvShmFD+"=3",
				fmt.Sprintf("%s=%d", mpiapi.EnvRank, r),
				fmt.Sprintf("%s=%d", mpiapi.EnvSize, job.Ranks),
				fmt.Sprintf("%s=%d", mpiapi.EnvLocal, li),
				fmt.Sprintf("%s=%d", mpiapi.EnvSlice, cfg.Timeslice.Nanoseconds()),
				fmt.Sprintf("%s=%d", mpiapi.EnvSpin, cfg.Spin.Nanoseconds()),
				fmt.Sprintf("BCS_NODE=%d", ni),
				"BCS_JOB="+res.JobID,
			)
			cmd.Env = append(cmd.Env, mon.env(cfg)...)
			cmd.ExtraFiles = []*os.File{n.file}
			cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
			if cfg.TagOutput {
				// Our own pipes, not cmd.StdoutPipe: Wait closes those as soon as
				// the process exits, possibly before the reader has drained them.
				var pipes [2][2]*os.File
				for i := range pipes {
					pr, pw, err := os.Pipe()
					if err != nil {
						startErr = fmt.Errorf("bcsrun: output pipe for rank %d: %w", r, err)
						break
					}
					pipes[i] = [2]*os.File{pr, pw}
				}
				if startErr != nil {
					break
				}
				cmd.Stdout, cmd.Stderr = pipes[0][1], pipes[1][1]
				closeWriters = append(closeWriters, pipes[0][1], pipes[1][1])
				for i, w := range []io.Writer{stdout, stderr} {
					rd := pipes[i][0]
					outWG.Add(1)
					go func() {
						defer outWG.Done()
						defer rd.Close()
						sc := bufio.NewScanner(rd)
						sc.Buffer(make([]byte, 64<<10), 1<<20)
						for sc.Scan() {
							outMu.Lock()
							fmt.Fprintf(w, "[%d] %s\n", r, sc.Bytes())
							outMu.Unlock()
						}
					}()
				}
			} else {
				cmd.Stdout, cmd.Stderr = stdout, stderr
			}
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
			mon.rankStarted(r, cmd.Process.Pid)
			started++
			go func() {
				err := cmd.Wait()
				exits <- exit{rank: r, state: cmd.ProcessState, err: err}
			}()
		}
		if startErr != nil {
			break
		}
	}
	for _, n := range nodes { // every rank has its descriptor now
		os.Remove(n.file.Name())
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
	}
	var master *masterDone
	for alive > 0 {
		select {
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
				abort(1, "bcsmpi: job aborted: "+md.err.Error())
			} else if !aborting {
				abort(1, "bcsmpi: the master stopped before the ranks finished")
			}
		case err := <-agentErrs:
			abort(1, "bcsmpi: job aborted: "+err.Error())
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
	outWG.Wait()
	res.Elapsed = time.Since(start)
	res.RuntimeCPU = unix.ProcessCPUTime() - cpu0
	if lost := nodes[0].agent.Unmatched(); len(lost) > 0 && res.ExitCode == 0 {
		fmt.Fprintf(stderr, "bcsmpi: warning: %d message(s) were sent but never received:\n", len(lost))
		for i, d := range lost {
			if i == 10 {
				fmt.Fprintf(stderr, "  ... and %d more\n", len(lost)-10)
				break
			}
			fmt.Fprintf(stderr, "  rank %d -> rank %d, tag %d, %d bytes\n", d.Rank, d.Peer, d.Tag, d.Len)
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

// faultStall reads BCS_FAULT_STALL_NODE=node@slice, a fault injection for
// tests: that node's agent stops answering the master from that slice on.
func faultStall() (int, proto.SliceID) {
	v := os.Getenv("BCS_FAULT_STALL_NODE")
	if v == "" {
		return -1, 0
	}
	var node int
	var slice uint64
	if _, err := fmt.Sscanf(v, "%d@%d", &node, &slice); err != nil || slice == 0 {
		fmt.Fprintf(os.Stderr, "bcsrun: BCS_FAULT_STALL_NODE=%q ignored, want node@slice\n", v)
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
