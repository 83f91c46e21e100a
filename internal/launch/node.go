package launch

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/bcsmpi/bcsmpi/configs"
	"github.com/bcsmpi/bcsmpi/internal/jobenv"
	"github.com/bcsmpi/bcsmpi/internal/proto"
	"github.com/bcsmpi/bcsmpi/internal/shm"
	"github.com/bcsmpi/bcsmpi/internal/unix"
	"github.com/bcsmpi/bcsmpi/nicthread"
	"github.com/bcsmpi/bcsmpi/transport"
)

// node is what one node of a job needs on its host: the shared-memory region
// its ranks attach to, its agent, and which ranks it runs. The embedded
// launcher (Run) makes one per logical node; bcsd (RunHost) one per host.
// close releases the region; the agent is stopped by its driver.
type node struct {
	id     int
	file   *os.File // the region's memfd
	mem    []byte
	region *shm.Region
	agent  *nicthread.Agent
	ranks  []int  // world ranks, in block (local rank) order
	group  *group // gang mode: the node's ranks' process group; nil otherwise
}

// group is the process group of one job's ranks on one node (gang mode). The
// gang stops and continues the job's ranks node by node, at the strobe, from
// the agent (Agent.Gate → onRun), so the group is per node: it is what an
// agent on another host could signal too, and it keeps the orphans a rank
// leaves attributable to its job (the registry, reap.go). mu orders the
// spawner's start of a rank against onRun: a rank started while the job is
// descheduled is stopped at once.
type group struct {
	mu      sync.Mutex
	pgid    int  // 0 until the node's first rank is started, and again once every rank has been reaped
	stopped bool // the job is descheduled
	ending  bool // the job is being ended: its ranks stay continued
	alive   int  // ranks started and not yet reaped
	// started is closed once the spawner is done with the node (every rank
	// started, or starting stopped): only then is the group's leader, its
	// first rank, waited for. A leader that exits at once stays a zombie
	// until then, and so keeps the group for the ranks still to join it
	// (setpgid to a group with no member is EPERM).
	started chan struct{}
	// fz, where the gang stops jobs with the cgroup freezer (gang_stop),
	// holds the node's ranks: onRun freezes and thaws it instead of
	// signalling the group (which still exists: the reaper's orphans).
	fz *freezer
	// running is signalled (with mu) when the job is continued or ended: a
	// rank is not started into a frozen freezer (its fork would not reach
	// exec, and Start would wait with mu held), so the spawner waits for
	// the job's turn.
	running *sync.Cond
}

func newGroup() *group {
	g := &group{started: make(chan struct{})}
	g.running = sync.NewCond(&g.mu)
	return g
}

// spawned says the spawner is done with the node (see started).
func (g *group) spawned() {
	if g != nil {
		select {
		case <-g.started:
		default:
			close(g.started)
		}
	}
}

// reaped counts a rank of the node reaped; after the last, the group's
// number is forgotten, so that no later switch signals a group that may no
// longer be the job's (the number is free once its members are gone).
func (g *group) reaped() {
	if g == nil {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.alive--; g.alive == 0 {
		g.pgid = 0
	}
}

// onRun stops (killpg SIGSTOP, or the freezer) or continues (SIGCONT, or a
// thaw) the group; the agent calls it on the strobe thread.
func (g *group) onRun(run bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.stopped = !run && !g.ending
	if g.fz != nil && !g.ending { // before the first rank too
		g.fz.set(!run)
		if run {
			g.running.Broadcast()
		}
		return
	}
	if g.pgid == 0 || g.ending {
		return
	}
	sig := syscall.SIGCONT
	if !run {
		sig = syscall.SIGSTOP
	}
	unix.SignalGroup(g.pgid, sig) // ESRCH: every rank has exited
}

// cont continues the group for good, whatever the gang decides from now
// on: a rank being ended must run to handle SIGTERM.
func (g *group) cont() {
	if g == nil {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.ending, g.stopped = true, false
	if g.fz != nil {
		g.fz.set(false)
		g.running.Broadcast()
	}
	if g.pgid != 0 {
		unix.SignalGroup(g.pgid, syscall.SIGCONT)
	}
}

// openNode creates node id's region for its ranks, with replay log rings of
// logBytes (0: the job is not recorded). On error, whatever was created is
// released.
func openNode(jobID string, id int, ranks []int, cfg configs.Config, logBytes int, who string) (n *node, err error) {
	n = &node{id: id, ranks: ranks}
	defer func() {
		if err != nil {
			n.close()
			n = nil
		}
	}()
	g := cfg.Geometry(len(ranks))
	g.LogBytes = logBytes
	name := fmt.Sprintf("bcs-%s-node%d", jobID, id)
	if n.file, err = unix.CreateRegion(name, g.Size()); err != nil {
		return n, fmt.Errorf("%s: %w", who, err)
	}
	if n.mem, err = unix.Map(int(n.file.Fd()), g.Size()); err != nil {
		return n, fmt.Errorf("%s: %w", who, err)
	}
	if n.region, err = shm.Init(n.mem, g); err != nil {
		return n, err
	}
	return n, nil
}

// close unmaps and closes the region. Safe on a partly opened node and more
// than once.
func (n *node) close() {
	if n == nil {
		return
	}
	if n.mem != nil {
		unix.Unmap(n.mem)
		n.mem = nil
	}
	if n.file != nil {
		n.file.Close()
		n.file = nil
	}
}

// agentConfig is the part of node n's agent configuration that comes from
// the job's configuration; the caller adds Send and the hooks.
func (n *node) agentConfig(cfg configs.Config, nodeOf []proto.NodeID) nicthread.AgentConfig {
	return nicthread.AgentConfig{Node: proto.NodeID(n.id), NodeOf: nodeOf, Sched: cfg.Sched(), Restart: cfg.RestartPolicy(), Region: n.region,
		DeadlockSlices: cfg.DeadlockSlices, DeadlockWarn: cfg.DeadlockAction == "warn", Check: cfg.CheckMode()}
}

// remoteAgent makes node n's agent behind mesh (endpoint n.id+1): its data
// path to the other nodes is the mesh. Start the mesh with the endpoint's
// Handler and Direct, then Serve it. faultLink is the identity except in a
// bcsfault build (fault.go).
func (n *node) remoteAgent(ac nicthread.AgentConfig, mesh *transport.Mesh, txTimeout time.Duration) *nicthread.AgentEndpoint {
	ep := &nicthread.AgentEndpoint{}
	ac.Send = func(to proto.NodeID, m *proto.Msg) error { return ep.Send(to, m) }
	ac.Connect = func(to proto.NodeID) { ep.Connect(to) }
	n.agent = nicthread.NewAgent(ac)
	*ep = *nicthread.NewAgentEndpoint(n.agent, faultLink(n.id, mesh), txTimeout)
	return ep
}

// exit is how one rank process ended.
type exit struct {
	rank  int
	state *os.ProcessState
	err   error
}

// spawner starts a job's rank processes on one host with the launcher→rank
// environment (package jobenv): the node's region as descriptor 3, the leak
// report pipe as descriptor 4, output through out. Call start from a locked
// OS thread, so that PDEATHSIG means "the launcher died".
type spawner struct {
	who     string // "bcsrun" or "bcsd ...", the prefix of its errors
	prog    string
	args    []string
	env     []string // the environment every rank starts from (os.Environ() for bcsrun)
	dir     string   // the ranks' working directory; "": the launcher's
	jobID   string
	size    int
	cfg     configs.Config
	mds     jobenv.MDS
	record  bool     // the job is recorded (--record): ranks log into their rings
	replay  string   // the recording ranks replay (--replay); "" for none
	reportW *os.File // nil: no leak report
	stdin   *os.File // rank 0's; nil: /dev/null
	stdout  io.Writer
	stderr  io.Writer
	out     *output
	exits   chan<- exit // each started rank's end
}

// start starts world rank r, block li of node n, and sends its end on
// s.exits once it has been waited for.
func (s *spawner) start(n *node, li, r int) (*exec.Cmd, error) {
	cmd := exec.Command(s.prog, s.args...)
	renv := jobenv.Env{ShmFD: 3, Rank: r, Size: s.size, LocalRank: li, Node: n.id, Job: s.jobID,
		Timeslice: s.cfg.Timeslice, Spin: s.cfg.Spin, LeakCheck: s.cfg.LeakCheck, MDS: s.mds, Check: s.cfg.CheckMode().String(),
		Record: s.record, Replay: s.replay}
	cmd.ExtraFiles = []*os.File{n.file} // descriptor 3
	if s.reportW != nil {
		cmd.ExtraFiles = append(cmd.ExtraFiles, s.reportW) // descriptor 4
		renv.ReportFD = 4
	}
	cmd.Env = append(append([]string(nil), s.env...), renv.Environ()...)
	cmd.Dir = s.dir
	cmd.SysProcAttr = unix.DieWithParent()
	if g := n.group; g != nil {
		g.mu.Lock()
		defer g.mu.Unlock()
		if g.fz != nil {
			for g.stopped && !g.ending { // the job's turn: born in a thawed freezer
				g.running.Wait()
			}
		}
		cmd.SysProcAttr = unix.InGroup(g.pgid)
		if g.fz != nil {
			g.fz.into(cmd.SysProcAttr) // born in it: nothing it starts is outside
		}
	}
	if r == 0 && s.stdin != nil {
		cmd.Stdin = s.stdin // the descriptor itself: no copying, EOF when the caller's input ends
	}
	var w [2]*os.File
	var closeWriters []*os.File
	defer func() {
		for _, w := range closeWriters { // the child has its copies now (or never will)
			w.Close()
		}
	}()
	for i, dst := range []io.Writer{s.stdout, s.stderr} {
		var err error
		if w[i], err = s.out.writer(r, dst); err != nil {
			return nil, fmt.Errorf("%s: output pipe for rank %d: %w", s.who, r, err)
		}
		if w[i] != dst {
			closeWriters = append(closeWriters, w[i])
		}
	}
	cmd.Stdout, cmd.Stderr = w[0], w[1]
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("%s: starting rank %d (%s): %w", s.who, r, s.prog, err)
	}
	// The group's leader is waited for once the node's ranks have started.
	var hold <-chan struct{}
	if g := n.group; g != nil { // g.mu is held
		if g.pgid == 0 {
			g.pgid = cmd.Process.Pid
			hold = g.started
		}
		g.alive++
		if g.stopped && g.fz == nil { // (with a freezer, it was born in the job's turn)
			unix.Signal(cmd.Process.Pid, syscall.SIGSTOP)
		}
	}
	go func() {
		if hold != nil {
			<-hold
		}
		err := cmd.Wait()
		s.exits <- exit{rank: r, state: cmd.ProcessState, err: err}
	}()
	return cmd, nil
}

// judge says whether a rank's exit fails the job, and with which message and
// code; n is the rank's node, who the messages' prefix.
func judge(e exit, n *node, who string) (string, int) {
	var state uint32
	for li, r := range n.ranks {
		if r == e.rank {
			state = n.region.Block(li).State()
		}
	}
	ws, _ := e.state.Sys().(syscall.WaitStatus)
	switch {
	case ws.Signaled():
		return fmt.Sprintf("%s: rank %d was killed by signal %v; job aborted", who, e.rank, ws.Signal()), 128 + int(ws.Signal())
	case ws.ExitStatus() != 0:
		return fmt.Sprintf("%s: rank %d exited with status %d; job aborted", who, e.rank, ws.ExitStatus()), ws.ExitStatus()
	case state == shm.StateInit:
		return fmt.Sprintf("%s: rank %d exited without calling MPI_Finalize; job aborted", who, e.rank), 1
	}
	if e.err != nil && !errors.As(e.err, new(*exec.ExitError)) {
		return fmt.Sprintf("%s: rank %d: %v", who, e.rank, e.err), 1
	}
	return "", 0
}
