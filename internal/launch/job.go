package launch

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"sync"
	"syscall"

	"github.com/bcsmpi/bcsmpi/configs"
	"github.com/bcsmpi/bcsmpi/internal/proto"
	"github.com/bcsmpi/bcsmpi/internal/unix"
	"github.com/bcsmpi/bcsmpi/nicthread"
	"github.com/bcsmpi/bcsmpi/transport"
)

// job is what one job holds on this host while it runs: the embedded
// launcher (Run, also in the gang daemon) and bcsd (RunHost) build the same
// type, from the same small steps; Run in this order (RunHost takes the
// parts it needs, the mesh before the MDS):
//
//	reaper      the registry entry that makes the job's orphans its own (reap.go)
//	recording   --record's files (Run only)
//	MDS         the monitor (Run) or this host's private MDS directory (RunHost)
//	region N    node N's shared-memory region (one per node on this host)
//	leak pipe   the report pipe the ranks inherit as fd 4 (leak_check on)
//	mesh        the transport endpoints, and the goroutines serving them
//	master      the master's goroutine, or the job's place in a gang (Job.Gang)
//	stall watch bcsrun's own stalls (Run only)
//	ranks       the rank processes, spawned from a locked OS thread
//
// Each step adds its part to parts before it acquires anything, so a step
// that fails half-way leaves its part releasable; Close releases the parts
// in reverse, once, and joins their errors. The normal end (finish, in
// Run and RunHost) stops the master and the agents itself, in Close's order,
// because the result is read between those stops (the master's counts, the
// agents' pulls, the recording's last logs); Close then releases only what
// is left. Create, run and Close a job on one goroutine: the ranks' thread
// stays locked until Close (PDEATHSIG is the spawning thread's death).
type job struct {
	who    string // prefix of messages: "bcsrun" or "bcsd on HOST"
	id     string
	cfg    configs.Config
	size   int // ranks in the whole job
	nodeOf []proto.NodeID
	stderr io.Writer

	parts    []part
	closed   bool
	closeErr error

	procs     *jobProcs // reaper
	rec       *recording
	mon       *monitor // Run: the job's MDS; RunHost: this host's part (nil when off)
	nodes     []*node  // this host's nodes, in id order
	reportR   *os.File // leak pipe: ours
	reportW   *os.File // leak pipe: the ranks' (closed once they hold it)
	leaks     chan leaksRead
	meshes    []*transport.Mesh
	wg        sync.WaitGroup  // the goroutines serving the meshes, and the master's
	stop      chan struct{}   // closed to stop the master
	closeStop func()          // closes stop, once
	master    chan masterDone // the master's end, sent once
	ended     *masterDone     // the master's end, once received
	member    *nicthread.GangJob
	out       *output
	exits     chan exit
	live      map[int]*os.Process // started ranks not yet reaped
	spawned   int                 // ranks started
	locked    bool                // the spawning thread is locked
	orphans   bool                // the orphans were ended (finish)
}

// part is one resource of a job and how to release it.
type part struct {
	name    string
	release func() error
}

// masterDone is how the job's master (or its place in a gang) ended.
type masterDone struct {
	st  nicthread.MasterStats
	err error
	// A place in another process's gang (joinPlace): the slices the job
	// ran in and was strobed in.
	ran, alive uint64
	ganged     bool
}

// leaksRead is what the leak pipe's reader got.
type leaksRead struct {
	leaks   []rankLeak
	dropped int
}

// failStep, set by tests only, makes the step of that name fail before it
// acquires anything ("rank N": before rank N starts); onRelease, also set by
// tests only, hears each part Close releases (job_test.go).
var (
	failStep  func(name string) error
	onRelease func(name string)
)

// newJob makes a job with nothing acquired yet.
func newJob(who, id string, cfg configs.Config, size int, nodeOf []proto.NodeID, stderr io.Writer) *job {
	stop := make(chan struct{})
	return &job{who: who, id: id, cfg: cfg, size: size, nodeOf: nodeOf, stderr: stderr,
		stop: stop, closeStop: sync.OnceFunc(func() { close(stop) }), master: make(chan masterDone, 1),
		exits: make(chan exit, size), live: map[int]*os.Process{}}
}

// step starts acquiring part name: failStep's error, or nil after adding
// release to the parts Close will release.
func (j *job) step(name string, release func() error) error {
	if failStep != nil {
		if err := failStep(name); err != nil {
			return err
		}
	}
	j.parts = append(j.parts, part{name, release})
	return nil
}

// Close releases every part the job acquired, in reverse order, and returns
// their errors joined (each names its part). It is safe after
// any step failed, and more than once (a later call returns the first's
// error).
func (j *job) Close() error {
	if j.closed {
		return j.closeErr
	}
	j.closed = true
	var errs []error
	for i := len(j.parts) - 1; i >= 0; i-- {
		if onRelease != nil {
			onRelease(j.parts[i].name)
		}
		if err := j.parts[i].release(); err != nil {
			errs = append(errs, err)
		}
	}
	j.closeErr = errors.Join(errs...)
	return j.closeErr
}

// becomeReaper makes this process the reaper of the job's processes and
// enters the job in the registry, with the caller's children until now as
// not the job's. Released: the orphans the ranks left (if finish did not
// end them) and the registry entry.
func (j *job) becomeReaper() error {
	err := j.step("reaper", func() error {
		if j.procs == nil {
			return nil
		}
		var err error
		if j.spawned > 0 && !j.orphans {
			if _, err = endJobOrphans(j.procs); err != nil {
				err = fmt.Errorf("%s: ending the processes the ranks left behind: %w", j.who, err)
			}
		}
		j.procs.unregister()
		return err
	})
	if err != nil {
		return err
	}
	if err := unix.SetChildSubreaper(); err != nil {
		return fmt.Errorf("%s: becoming the reaper of the job's processes: %w", j.who, err)
	}
	others, err := unix.Children() // the caller's own children are not the job's
	if err != nil {
		return fmt.Errorf("%s: listing child processes: %w", j.who, err)
	}
	j.procs = register(others)
	return nil
}

// startRecording starts --record's files (replay.go). Released: the files
// are flushed and closed; an error names the file.
func (j *job) startRecording(spec Job, prog string) error {
	err := j.step("recording", func() error {
		if j.rec == nil {
			return nil
		}
		return j.rec.close()
	})
	if err != nil {
		return err
	}
	j.rec, err = startRecording(spec, prog, j.id)
	return err
}

// openMonitor opens the job's MDS with open: the monitor of a job on this
// machine (its kernel monitor is released) or a host's part of a job
// across hosts (its private directory is removed).
func (j *job) openMonitor(open func() (*monitor, error), host bool) error {
	err := j.step("MDS", func() error {
		if j.mon == nil {
			return nil
		}
		j.mon.close()
		if host {
			j.mon.removeDir()
		}
		return nil
	})
	if err != nil {
		return err
	}
	j.mon, err = open()
	return err
}

// errSignalled stops the creation of a job when a terminating signal
// arrived: the caller reports the signal, not an error.
var errSignalled = errors.New("launch: signalled during start-up")

// openNodes creates the regions of nodes ids (ranks per node: ranksOf),
// with replay log rings of logBytes and, in a gang, a process group per
// node. signalled, checked before each region, stops the creation with
// errSignalled. Released: each region, in reverse.
func (j *job) openNodes(ids []int, ranksOf [][]int, logBytes int, gang bool, signalled func() bool) error {
	for _, id := range ids {
		if signalled() {
			return errSignalled
		}
		var n *node
		if err := j.step(fmt.Sprintf("region %d", id), func() error { n.close(); return nil }); err != nil {
			return err
		}
		var err error
		if n, err = openNode(j.id, id, ranksOf[id], j.cfg, logBytes, j.who); err != nil {
			return err
		}
		j.nodes = append(j.nodes, n)
		if gang {
			n.group = newGroup()
			if err := j.openFreezer(n); err != nil {
				return err
			}
		}
	}
	return nil
}

// openFreezer gives node n's group a cgroup freezer where gang_stop asks
// for one: always with "freezer" (an error naming why there is none), where
// one can be made with "auto" (else the group is stopped with signals).
// Released: the freezer (what is left in it is killed).
func (j *job) openFreezer(n *node) error {
	if j.cfg.GangStop == "signal" {
		return nil
	}
	var fz *freezer
	if err := j.step(fmt.Sprintf("freezer %d", n.id), func() error { return fz.close() }); err != nil {
		return err
	}
	fz, err := newFreezer(j.id, n.id)
	if err != nil {
		if j.cfg.GangStop == "freezer" {
			return fmt.Errorf("%s: gang_stop is freezer, but %w (gang_stop: signal or auto stop the ranks with SIGSTOP instead)", j.who, err)
		}
		return nil
	}
	n.group.fz = fz
	return nil
}

// openLeakPipe makes the pipe every rank inherits as fd 4 (leak_check not
// off) and starts its reader. Released: both ends (which ends the reader).
func (j *job) openLeakPipe() error {
	if j.cfg.LeakCheck == "off" {
		return nil
	}
	err := j.step("leak pipe", func() error {
		for _, f := range []*os.File{j.reportR, j.reportW} {
			if f != nil {
				f.Close()
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	if j.reportR, j.reportW, err = os.Pipe(); err != nil {
		return fmt.Errorf("%s: leak report pipe: %w", j.who, err)
	}
	j.leaks = make(chan leaksRead, 1)
	go func(r *os.File) {
		l, d := readLeaks(r, j.size)
		j.leaks <- leaksRead{l, d}
	}(j.reportR)
	return nil
}

// meshStep adds the mesh part: released, every mesh is closed and the
// goroutines serving them and the master's (j.wg) are waited for. Call it
// before the first listen.
func (j *job) meshStep() error { return j.step("mesh", func() error { j.stopAgents(); return nil }) }

// listen opens a mesh endpoint on addr (host:0) with secret, owned by the
// mesh part.
func (j *job) listen(addr string, secret []byte) (*transport.Mesh, error) {
	m, err := transport.Listen(addr, secret)
	if err != nil {
		return nil, err
	}
	j.meshes = append(j.meshes, m)
	return m, nil
}

// stopAgents closes the meshes and waits for the goroutines serving them
// and the master's (stopped before, or ending for want of its nodes). Safe
// more than once.
func (j *job) stopAgents() {
	for _, m := range j.meshes {
		m.Close()
	}
	j.wg.Wait()
}

// masterStep adds the master part: released, the master is told to stop;
// its end is awaited then when the job has no mesh, else by the mesh's
// release, after the meshes are closed (a master waiting for a node's
// answer then returns at once, as it would not if it were awaited first).
// Call it before starting the master.
func (j *job) masterStep() error {
	return j.step("master", func() error {
		j.closeStop()
		if len(j.meshes) == 0 {
			j.stopMaster()
		}
		return nil
	})
}

// stopMaster tells the master to stop and waits for its end; the end is
// kept in j.ended. Safe more than once.
func (j *job) stopMaster() *masterDone {
	j.closeStop()
	if j.ended == nil {
		md := <-j.master
		j.ended = &md
	}
	return j.ended
}

// runMaster runs the job's own master over nodes, on a goroutine that
// counts in j.wg.
func (j *job) runMaster(mcfg nicthread.MasterConfig, nodes nicthread.Nodes) error {
	if err := j.masterStep(); err != nil {
		return err
	}
	j.wg.Add(1)
	go func() {
		defer j.wg.Done()
		st, err := nicthread.RunMaster(mcfg, nodes, j.stop)
		j.master <- masterDone{st: st, err: err}
	}()
	return nil
}

// joinGang joins gang g as name instead of running a master: refused (a
// full gang, another timeslice) before any rank starts.
func (j *job) joinGang(g *nicthread.Gang, name string, mcfg nicthread.MasterConfig, nodes nicthread.Nodes) error {
	if err := j.masterStep(); err != nil {
		return err
	}
	m, err := g.Join(name, mcfg, nodes, j.stop)
	if err != nil {
		j.master <- masterDone{err: err} // nothing to stop: Close finds it ended
		return fmt.Errorf("%s: %w", j.who, err)
	}
	j.member = m
	j.wg.Add(1)
	go func() {
		defer j.wg.Done()
		st, err := m.Wait()
		j.master <- masterDone{st: st, err: err}
	}()
	return nil
}

// watchStalls starts watching this process's own stalls (SIGSTOP, Ctrl-Z)
// to explain a node timeout. Released: the watch stops.
func (j *job) watchStalls(s *stallWatch) error {
	conts := make(chan os.Signal, 1)
	stop, done := make(chan struct{}), make(chan struct{})
	started := false
	err := j.step("stall watch", func() error {
		if started {
			signal.Stop(conts)
			close(stop)
			<-done
		}
		return nil
	})
	if err != nil {
		return err
	}
	signal.Notify(conts, syscall.SIGCONT)
	go func() { defer close(done); s.run(conts, stop) }()
	started = true
	return nil
}

// spawnRanks starts the ranks of every node of the job on this host with
// sp, in node and block order, from a thread locked until Close (so that
// PDEATHSIG means "this process died"), and tells each node's agent which
// process may attach as which rank. It stops at the first rank that cannot
// start, or, before a rank, when signalled says so (nil: never), and
// returns that rank's error (the job is then ended by its watch). Every
// started rank sends its end on j.exits. Released: ranks still alive are
// killed (SIGKILL) and reaped, and the thread is unlocked.
func (j *job) spawnRanks(sp *spawner, signalled func() bool) error {
	err := j.step("ranks", func() error {
		j.killRanks()
		for len(j.live) > 0 {
			j.reaped(<-j.exits)
		}
		if j.out != nil { // the ranks are gone: their pipes end
			j.out.drain(drainWait)
		}
		if j.locked {
			runtime.UnlockOSThread()
			j.locked = false
		}
		return nil
	})
	if err != nil {
		return err
	}
	runtime.LockOSThread()
	j.locked = true
	hostRanks, ganged := 0, false
	for _, n := range j.nodes {
		hostRanks += len(n.ranks)
		ganged = ganged || n.group != nil
	}
	pin := newPinner(j.cfg.RankPin, ganged, hostRanks) // pin.go
	defer pin.restore()
	defer func() {
		for _, n := range j.nodes { // every path: the group leaders may be waited for now
			n.group.spawned()
		}
		if j.reportW != nil { // the ranks hold the write end now: EOF comes when the last exits
			j.reportW.Close()
			j.reportW = nil
		}
	}()
	for _, n := range j.nodes {
		for li, r := range n.ranks {
			if signalled != nil && signalled() {
				return nil
			}
			if failStep != nil {
				if err := failStep(fmt.Sprintf("rank %d", r)); err != nil {
					return err
				}
			}
			pin.pin()
			cmd, err := sp.start(n, li, r)
			if err != nil {
				return err
			}
			j.live[r] = cmd.Process
			j.spawned++
			pgid := 0
			if n.group != nil {
				pgid = n.group.pgid // set by the node's first rank; read on this goroutine, which sets it
			}
			j.procs.addRank(cmd.Process.Pid, pgid) // children that reapJobZombies leaves alone
			if j.mon != nil {
				j.mon.rankStarted(r, cmd.Process.Pid)
			}
			n.agent.Spawned(proto.Rank(r), cmd.Process.Pid) // the process (tree) that may attach as r
		}
	}
	return nil
}

// nodeOfRank is the node on this host that runs rank r.
func (j *job) nodeOfRank(r int) *node {
	id := int(j.nodeOf[r])
	for _, n := range j.nodes {
		if n.id == id {
			return n
		}
	}
	panic(fmt.Sprintf("launch: rank %d's node %d is not on this host", r, id))
}

// reaped accounts for a rank's end: its node's group and agent learn of it.
func (j *job) reaped(e exit) {
	delete(j.live, e.rank)
	n := j.nodeOfRank(e.rank)
	n.group.reaped()
	n.agent.RankExited(proto.Rank(e.rank)) // not "starting" any more (deadlock detection)
}

// signalRanks sends sig to every live rank.
func (j *job) signalRanks(sig os.Signal) {
	for _, p := range j.live {
		p.Signal(sig)
	}
}

// killRanks kills every live rank, continuing a descheduled one (gang).
func (j *job) killRanks() {
	for _, n := range j.nodes {
		n.group.cont()
	}
	for _, p := range j.live {
		p.Kill()
	}
}

// endOrphans ends every process the ranks left behind (call it once every
// rank has been reaped) and says so on stderr: a failure as a warning, a
// count when the job otherwise succeeded (ok).
func (j *job) endOrphans(ok bool) {
	j.orphans = true
	if n, err := endJobOrphans(j.procs); err != nil {
		fmt.Fprintf(j.stderr, "%s: warning: ending the processes the ranks left behind: %v\n", j.who, err)
	} else if n > 0 && ok {
		fmt.Fprintf(j.stderr, "%s: ended %d process(es) that the ranks left running\n", j.who, n)
	}
}

// drainOutput reads what the output pipes still hold (every process of
// the job has ended) and warns about a pipe held open from outside the job.
func (j *job) drainOutput() {
	if held := j.out.drain(drainWait); len(held) > 0 {
		fmt.Fprintf(j.stderr, "%s: warning: the output of rank(s) %v is still held open by a process outside the job; stopped reading it\n", j.who, held)
	}
}
