package launch

import (
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/bcsmpi/bcsmpi/configs"
	"github.com/bcsmpi/bcsmpi/emds/kernel"
	"github.com/bcsmpi/bcsmpi/internal/jobenv"
	"github.com/bcsmpi/bcsmpi/internal/pmi"
	"github.com/bcsmpi/bcsmpi/internal/proto"
	"github.com/bcsmpi/bcsmpi/nicthread"
	"github.com/bcsmpi/bcsmpi/strobe"
	"github.com/bcsmpi/bcsmpi/transport"
)

// Variables bcsrun passes to every bcsd through srun (which propagates the
// environment): never on a command line, where every user of the host can
// read them. They are not BCS_* variables (those are configuration keys and
// the rank contract), and bcsd removes them from its ranks' environment.
const (
	// VarSecret is the job's secret, hex: the mesh's handshake proves it.
	VarSecret = "BCSD_SECRET"
	// VarJob is the job's id (jobenv's BCS_JOB for the ranks).
	VarJob = "BCSD_JOB"
	// VarConfig is the job's configuration as bcsrun resolved it (JSON).
	VarConfig = "BCSD_CONFIG"
)

// KVS keys of the start-up exchange (PMI): node n's agent endpoint, and the
// master's (node 0's bcsd hosts the master).
const (
	kvsEndpoint = "bcs-ep-"
	kvsMaster   = "bcs-master"
	kvsHost     = "bcs-host-" // node n's host name, for messages
)

// HostJob is one host's part of a job across hosts: what bcsd runs.
type HostJob struct {
	Ranks   int // in the whole job
	Program string
	Args    []string
	Config  configs.Config // as bcsrun resolved it; Nodes is the number of hosts
	JobID   string
	Secret  []byte
	// PMI is the step's PMI conversation, already open: its Rank is this
	// host's node id and its Size the number of hosts. RunHost closes it.
	PMI *pmi.Client
	// Host names this host in messages (Slurm's node name).
	Host    string
	Stdin   *os.File  // rank 0's input (node 0 only); nil: from bcsrun over the control connection, else /dev/null
	Stdout  io.Writer // nil: os.Stdout
	Stderr  io.Writer // nil: os.Stderr
	Signals <-chan os.Signal
	// Control is bcsrun's control address (control.go: VarControl under
	// Slurm, the PMI port over ssh): the job's verdict, its MDS data and
	// rank 0's input go through it. "": none (the MDS must then be off).
	Control string
	// Gang is bcsrun's --gang: "auto" (or ""): node 0's master is a place
	// in the gang of this user's bcsd on node 0's host when one runs
	// there; "on": it must be; "off": the job runs its own master
	// (gangacross.go).
	Gang string
	// JoinGang, if set, asks this host's gang daemon for a place (node 0
	// only); an error matching ErrNoGang: no daemon runs here.
	JoinGang func(GangRequest) (GangPlace, error)
}

// RunHost runs this host's node of a job across hosts and returns the exit
// status for bcsd: 0, a failing rank's status (128+signal if it was
// killed), 1 for a runtime failure, 128+signal when bcsd was told to stop.
// An error means the node could not be started; RunHost has told bcsrun
// and called PMI abort (which ends the step on every host); the caller
// prints it and exits non-zero.
//
// The node runs as an embedded node does (region, agent, ranks, output,
// orphans ended), behind a transport mesh to the other hosts that it builds
// from the endpoints exchanged through PMI. Node 0 also runs the master.
// When every local rank has ended well, bcsd enters a PMI fence; the fence
// completes when every host's ranks have ended, and node 0 then stops the
// master, whose stop ends every agent.
//
// With a control connection (spec.Control, control.go): a failure this host
// judges (a rank's exit, a runtime error) goes to bcsrun, which ends the
// job on the other hosts ('A', an abort as for a signal, silent); an error
// that is only a consequence of another host's end (a peer's connection
// closed, the master stopping the job) waits up to quietWait for that word
// before it is printed. At the end, failed or not, the host sends its MDS
// files (hostmds.go) and its status, then waits for bcsrun's release.
//
// Call it once, from bcsd's main flow: like Run, it makes the process the
// reaper of its ranks' orphans; and when the job fails elsewhere while this
// host waits in the fence, it leaves the PMI conversation to the process's
// exit.
func RunHost(spec HostJob) (code int, err error) {
	c := spec.PMI
	fencing, fenceDone, fenceOK := false, false, false // the end-of-job fence (below)
	defer func() {
		// A fence still waiting (the job failed elsewhere) keeps the
		// conversation: closing it under the waiting goroutine would race.
		// bcsd exits next, which closes it.
		if !fencing || fenceDone {
			c.Close()
		}
	}()
	var ctl *hostControl // the control connection to bcsrun, once made
	defer func() {
		// This host could not start its part: bcsrun hears why, and the
		// launcher ends the step (the other hosts may wait in the start-up
		// fence for this one).
		if err != nil {
			if ctl != nil {
				ctl.sendJSON('V', hostVerdict{Code: 1, Message: err.Error()})
			}
			c.Abort(1, err.Error())
		}
	}()
	who := "bcsd"
	if spec.Host != "" {
		who = "bcsd on " + spec.Host
	}
	sigs := spec.Signals
	if sigs == nil {
		ch := make(chan os.Signal, 4)
		signal.Notify(ch, TermSignals...)
		defer signal.Stop(ch)
		sigs = ch
	}
	stdout, stderr := spec.Stdout, spec.Stderr
	if stdout == nil {
		stdout = os.Stdout
	}
	if stderr == nil {
		stderr = os.Stderr
	}
	cfg := spec.Config
	if err := cfg.Validate(); err != nil {
		return 1, err
	}
	me, hosts := c.Rank, c.Size
	if hosts != cfg.Nodes {
		return 1, fmt.Errorf("%s: the step has %d tasks, the job's configuration %d nodes; want one bcsd per node", who, hosts, cfg.Nodes)
	}
	if spec.Ranks < hosts || spec.Ranks > 4096 {
		return 1, fmt.Errorf("%s: --ranks %d, want %d .. 4096 (at least one per host)", who, spec.Ranks, hosts)
	}
	if len(spec.Secret) < 16 || spec.JobID == "" {
		return 1, fmt.Errorf("%s: no job secret or id in the environment (%s, %s): bcsd is started by bcsrun", who, VarSecret, VarJob)
	}
	prog, err := exec.LookPath(spec.Program)
	if err != nil {
		return 1, fmt.Errorf("%s: program %q: %w", who, spec.Program, err)
	}
	if cfg.MDSMode().Kernel {
		// The kernel monitor's decoding and loading, beside this host's
		// start-up (the mesh, the fences), as bcsrun's Run does.
		kernel.Prefetch(kernel.Config{BTFPath: cfg.MDSKernelBTF, CacheDir: cfg.MDSKernelCache, Ranks: spec.Ranks, RuntimePID: os.Getpid()})
	}
	// The job's parts (job.go), released in reverse by Close on every path.
	nodeOf := NodeOf(spec.Ranks, hosts, cfg.Cyclic(), cfg.PPN)
	j := newJob(who, spec.JobID, cfg, spec.Ranks, nodeOf, stderr)
	defer j.Close() // no part of a host's job fails on release
	if err := j.becomeReaper(); err != nil {
		return 1, err
	}
	if err := j.openNodes([]int{me}, ranksOfNodes(nodeOf, hosts), 0, false, func() bool { return false }); err != nil {
		return 1, err
	}
	n := j.nodes[0]

	// The meshes: this node's agent (endpoint me+1), and on node 0 the
	// master's (endpoint 0).
	ip, err := ListenAddress(cfg.Address)
	if err != nil {
		return 1, fmt.Errorf("%s: %w", who, err)
	}
	if err := j.meshStep(); err != nil {
		return 1, err
	}
	listen := func() (*transport.Mesh, error) { return j.listen(net.JoinHostPort(ip, "0"), spec.Secret) }
	agentMesh, err := listen()
	if err != nil {
		return 1, fmt.Errorf("%s: %w", who, err)
	}
	var masterMesh *transport.Mesh
	var place GangPlace // node 0 in a gang: the master is a place in the daemon's (gangacross.go)
	if me == 0 {
		if place, err = j.openPlace(spec, ip); err != nil {
			return 1, err
		}
	}
	if place != nil {
		if err := c.Put(kvsMaster, place.Addr()); err != nil {
			return 1, fmt.Errorf("%s: %w", who, err)
		}
		if err := c.Put(kvsGang, "1"); err != nil {
			return 1, fmt.Errorf("%s: %w", who, err)
		}
	} else if me == 0 {
		if masterMesh, err = listen(); err != nil {
			return 1, fmt.Errorf("%s: %w", who, err)
		}
		if err := c.Put(kvsMaster, masterMesh.Addr()); err != nil {
			return 1, fmt.Errorf("%s: %w", who, err)
		}
	}
	if err := c.Put(kvsEndpoint+strconv.Itoa(me), agentMesh.Addr()); err != nil {
		return 1, fmt.Errorf("%s: %w", who, err)
	}
	if err := c.Put(kvsHost+strconv.Itoa(me), pmi.EncodeValue([]byte(spec.Host))); err != nil {
		return 1, fmt.Errorf("%s: %w", who, err)
	}
	if err := c.Fence(); err != nil {
		return 1, fmt.Errorf("%s: %w", who, err)
	}
	addrs := make([]string, hosts+1)
	for i := range addrs {
		key := kvsMaster
		if i > 0 {
			key = kvsEndpoint + strconv.Itoa(i-1)
		}
		v, ok, err := c.Get(key)
		if err != nil {
			return 1, fmt.Errorf("%s: %w", who, err)
		}
		if !ok {
			return 1, fmt.Errorf("%s: PMI has no %s after the fence: a bcsd of this step did not publish its endpoint", who, key)
		}
		if _, _, err := net.SplitHostPort(v); err != nil {
			return 1, fmt.Errorf("%s: PMI %s = %q, want host:port: %v", who, key, v, err)
		}
		addrs[i] = v
	}
	// The job's master is a gang's: this host's ranks get a process group
	// for the gang to stop and continue.
	if v, ok, err := c.Get(kvsGang); err != nil {
		return 1, fmt.Errorf("%s: %w", who, err)
	} else if ok && v == "1" {
		if err := j.ganged(); err != nil {
			return 1, err
		}
	}
	hostNames := make([]string, hosts)
	for i := range hostNames {
		if v, ok, err := c.Get(kvsHost + strconv.Itoa(i)); err == nil && ok {
			if b, err := pmi.DecodeValue(v); err == nil {
				hostNames[i] = string(b)
			}
		}
	}
	// The control connection to bcsrun (control.go).
	if spec.Control != "" {
		if ctl, err = dialControl(spec.Control, spec.Secret, spec.JobID, me, spec.Host); err != nil {
			return 1, fmt.Errorf("%s: %w", who, err)
		}
		defer ctl.close()
	}
	err = j.openMonitor(func() (*monitor, error) { return newHostMonitor(cfg, spec.JobID, me, spec.Ranks, nodeOf, who, stderr) }, true)
	if err != nil {
		return 1, fmt.Errorf("%s: %w", who, err)
	}
	hm := j.mon
	var gmds *GangMDS
	if hm != nil && place != nil {
		// The master's hooks run in the daemon, which writes
		// emds-global.csv and counts the user traffic (gangmds.go).
		hm.global = nil
		gmds = hm.gangMDS(cfg)
	}
	if hm != nil && ctl == nil {
		return 1, fmt.Errorf("%s: mds = %q, but no control connection to bcsrun to send the data to: bcsd is started by bcsrun", who, cfg.MDS)
	}
	// describe names the host of the node a job error is about.
	describe := func(err error) string {
		var je *nicthread.JobError
		if errors.As(err, &je) && je.Node >= 0 && int(je.Node) < hosts && hostNames[je.Node] != "" {
			return fmt.Sprintf("%s: %v [node %d is host %s]; job aborted", who, err, je.Node, hostNames[je.Node])
		}
		return fmt.Sprintf("%s: %v; job aborted", who, err)
	}

	onWarn := func(msg string) { fmt.Fprintf(stderr, "bcsmpi: %s\n", msg) }
	ac := n.agentConfig(cfg, nodeOf)
	ac.OnWarn = onWarn
	// Across hosts a link can be cut or the network partitioned between
	// two agents that both still answer the master: each agent gives a
	// node it awaits data from, or sends data to, node_timeout.
	ac.PeerTimeout, ac.Hosts = cfg.NodeTimeout, hostNames
	ac.Quiet = func(n proto.NodeID) time.Duration { return agentMesh.Quiet(1 + int(n)) } // endpoint 1+n is node n
	agentMesh.SetSendTimeout(cfg.NodeTimeout)
	if n.group != nil {
		ac.OnRun = n.group.onRun
	}
	var onSlice func(*strobe.SliceRecord)
	var onDEM func([]proto.Descriptor)
	if hm != nil {
		ac.OnSlice = hm.agentHook(me)
		if hm.global != nil { // node 0
			onSlice, onDEM = hm.onSlice, hm.onDEM
		}
		if hm.msgs != nil { // node 0
			ac.OnPlan = hm.onPlan
		}
	}
	ep := n.remoteAgent(ac, agentMesh, cfg.TXTimeout)
	var remote *nicthread.RemoteNodes
	startErrs := make(chan error, 2)
	go func() { startErrs <- agentMesh.Start(me+1, addrs, ep.Handler, ep.Direct()) }()
	starts := len(j.meshes)
	if masterMesh != nil {
		remote = nicthread.NewRemoteNodes(masterMesh, hosts, cfg.NodeTimeout, cfg.TXTimeout)
		// A node cut off while it transmits: noticed within node_timeout,
		// not node_timeout + tx_timeout (its kernel answers no probe).
		masterMesh.SetDirectKeepAlive(cfg.NodeTimeout)
		go func() { startErrs <- masterMesh.Start(0, addrs, remote.Handler, remote.Direct()) }()
	}
	if place != nil {
		go func() { startErrs <- place.Start(addrs, gmds) }()
		starts++
	}
	for range starts {
		if err := <-startErrs; err != nil {
			return 1, fmt.Errorf("%s: %w", who, err)
		}
	}
	if masterMesh != nil {
		if w := keepAliveWarning(who, masterMesh.KeepAliveFailed(), hostNames, cfg); w != "" {
			fmt.Fprintln(stderr, w)
		}
	}
	served := make(chan error, 1)
	j.wg.Add(1)
	go func() { defer j.wg.Done(); served <- ep.Serve() }()
	defer j.closeStop() // also on paths where this host has no master (the input feeder)
	masterDone := me != 0
	if place != nil {
		if err := j.joinPlace(place); err != nil {
			return 1, err
		}
	} else if me == 0 {
		mcfg := nicthread.MasterConfig{Slice: cfg.Timeslice, Nodes: hosts, Spin: cfg.StrobeSpin, FIFO: cfg.FIFO, TXTimeout: cfg.TXTimeout,
			OnSlice: onSlice, OnDEM: onDEM}
		if err := j.runMaster(mcfg, remote); err != nil {
			return 1, err
		}
	}

	// The leak report pipe, for this host's ranks.
	if err := j.openLeakPipe(); err != nil {
		return 1, err
	}

	// Ranks.
	j.out = &output{tag: cfg.TagOutput, host: spec.Host}
	stdin := spec.Stdin
	var stdinR *os.File // ours, closed once rank 0 has its copy
	if me != 0 {
		stdin = nil
	} else if stdin == nil && ctl != nil {
		// Over ssh: bcsrun's input comes over the control connection.
		r, w, err := os.Pipe()
		if err != nil {
			return 1, fmt.Errorf("%s: rank 0's input pipe: %w", who, err)
		}
		defer r.Close()
		go ctl.feedInput(w, j.stop)
		stdin = r
		stdinR = r
	}
	rankMDS := jobenv.MDS{Mode: "none"}
	if hm != nil {
		rankMDS = hm.env(cfg)
	}
	sp := &spawner{who: who, prog: prog, args: spec.Args, env: rankEnviron(os.Environ()), jobID: spec.JobID, size: spec.Ranks, cfg: cfg,
		mds: rankMDS, reportW: j.reportW, stdin: stdin, stdout: stdout, stderr: stderr, out: j.out, exits: j.exits}
	startErr := j.spawnRanks(sp, nil)
	if stdinR != nil { // rank 0's end of its input: a rank gone makes the writer's next write fail
		stdinR.Close()
	}

	// Watch (watch.go).
	fenced := make(chan error, 1)
	w := &watch{j: j, sigs: sigs, agent: served, fenced: fenced}
	if ctl != nil {
		w.ctlAbort, w.ctlGone = ctl.abort, ctl.gone
	}
	w.verdict = func(c int, msg string) {
		code = c
		if msg != "" {
			fmt.Fprintln(stderr, msg)
			if ctl != nil { // bcsrun ends the job on the other hosts
				ctl.sendJSON('V', hostVerdict{Code: c, Message: msg, Secondary: w.secondary})
			}
		}
	}
	w.sigMsg = func(os.Signal) string { return "" } // bcsrun (or Slurm) says why
	// abortAfter aborts with msg; a consequence of another host's end
	// (a peer's connection closed, the master stopped the job) first waits
	// up to quietWait for bcsrun's word that another host ended the job,
	// which that host's report explains: then this host says nothing, as
	// on one machine only the cause is printed.
	abortAfter := func(msg string, consequence bool) {
		if w.aborting {
			return
		}
		if consequence && ctl != nil {
			w.quiet(msg)
			return
		}
		w.secondary = consequence
		w.abort(1, msg)
	}
	w.master = func(err error) {
		masterDone = true
		if err != nil {
			abortAfter(describe(err), peerGone(err))
		} else if len(j.live) > 0 {
			w.abort(1, who+": the master stopped before the ranks finished")
		}
	}
	w.fence = func(err error) {
		fenceDone, fenceOK = true, err == nil
		if err != nil {
			w.abort(1, fmt.Sprintf("%s: waiting for the other hosts' ranks: %v; job aborted", who, err))
		} else {
			j.closeStop() // node 0: the master says stop to every agent
		}
	}
	// The agent's end, judged once what it depends on is known (the end
	// fence's outcome, the master's error), without blocking the loop:
	// signals and rank exits are still watched meanwhile.
	agentDone, agentPending := false, false
	var agentErr error
	w.agentEnd = func(err error) { agentDone, agentErr, agentPending = true, err, true }
	w.more = func() bool { return !w.aborting && (!agentDone || agentPending || w.quietTime != nil) }
	w.before = func() {
		if len(j.live) == 0 && !w.aborting && !fencing {
			// Every local rank ended well: wait, serving the agent, for every
			// other host's (the fence completes when all bcsds entered it).
			fencing = true
			go func() { fenced <- c.Fence() }()
		}
	}
	w.after = func() {
		if !agentPending {
			return
		}
		err := agentErr
		switch {
		case err != nil && fencing && !fenceDone:
			// Our ranks are done: did every host's end well? Then the
			// error is the teardown at the end (another host closed
			// its connections just after the master's stop, and the
			// agent saw that before the stop). Wait for the fence.
		case (err == nil || fenceOK) && !masterDone && len(j.live) > 0:
			// Node 0: the master stops every agent, ours included,
			// when it fails; its error (about to come) says why.
		default:
			agentPending = false
			if err != nil && fenceOK {
				err = nil
			}
			if err != nil {
				abortAfter(describe(err), peerGone(err) || me != 0 && wholeJob(err))
			} else if len(j.live) > 0 {
				abortAfter(who+": the master stopped the job before this host's ranks finished (node 0's bcsd says why)", true)
			}
		}
	}
	if startErr != nil {
		w.abort(1, startErr.Error())
	}
	w.run()
	// The end, in Close's order (job.go), reading each part once stopped.
	j.endOrphans(code == 0)
	j.closeStop()
	if !masterDone && code == 0 {
		if err := j.stopMaster().err; err != nil {
			code = 1
			fmt.Fprintf(stderr, "%s: %v\n", who, err)
		}
	}
	j.stopAgents()
	j.drainOutput()
	if j.reportR != nil {
		j.reportR.SetReadDeadline(time.Now().Add(time.Second))
		got := <-j.leaks
		leaks, dropped := got.leaks, got.dropped
		if code == 0 {
			var lost []proto.Descriptor
			if me == 0 {
				lost = n.agent.Unmatched() // every node plans the same: node 0 reports for all
			}
			text, fail := leakReport(cfg.LeakCheck, leaks, dropped, lost)
			fmt.Fprint(stderr, text)
			if fail {
				code = 1
			}
		}
	}
	if code == 0 {
		if fencing && !fenceDone {
			// The master may stop the job once node 0's fence completes,
			// before this host's response arrived: one conversation at a time.
			if err := <-fenced; err != nil {
				fmt.Fprintf(stderr, "%s: warning: %v\n", who, err)
			}
			fenceDone = true
		}
		if err := c.Finalize(); err != nil {
			fmt.Fprintf(stderr, "%s: warning: %v\n", who, err)
		}
	}
	if ctl != nil {
		if me == 0 { // the master's goroutine has ended (stopAgents above)
			md := j.stopMaster()
			st := md.st
			hs := hostStats{Slices: st.Slices, Skipped: st.Skipped, FIFO: st.FIFO}
			if !st.FirstSlice.IsZero() {
				hs.FirstSlice = st.FirstSlice.UnixNano()
			}
			if md.ganged {
				hs.Ran, hs.Alive = md.ran, md.alive
			}
			ctl.sendJSON('S', hs)
		}
		if err := ctl.ship(hm, me, code); err != nil && w.ctlGone != nil { // bcsrun gone: said above
			fmt.Fprintf(stderr, "%s: warning: sending this host's end to bcsrun: %v\n", who, err)
		}
		// Exit when bcsrun has every host's part (or is gone, or a signal
		// says stop): under Slurm, an exit now could end the step under a
		// host still sending.
		select {
		case <-ctl.release:
		case <-sigs:
		}
	}
	return code, nil
}

// rankEnviron is bcsd's environment without what bcsrun passed to bcsd
// alone (the secret above all) and without the PMI descriptor's variables:
// ranks speak to their agent, not to Slurm.
func rankEnviron(env []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, "BCSD_") || strings.HasPrefix(name, "PMI_") {
			continue
		}
		out = append(out, kv)
	}
	return out
}

// ParseSecret decodes VarSecret's value.
func ParseSecret(s string) ([]byte, error) {
	b, err := hex.DecodeString(s)
	if err != nil || len(b) < 16 {
		return nil, fmt.Errorf("%s is not at least 16 bytes of hex (%d characters given)", VarSecret, len(s))
	}
	return b, nil
}

// ListenAddress resolves the address key to an IP address to listen on:
// an IP address as it is; an interface name to that interface's first IPv4
// address (else its first address); "auto" to the local address of the
// route to the host srun ran on (SLURM_LAUNCH_NODE_IPADDR), else the first
// non-loopback IPv4 address of an interface that is up.
func ListenAddress(key string) (string, error) {
	if ip := net.ParseIP(key); ip != nil {
		return ip.String(), nil
	}
	if key != "auto" {
		ifc, err := net.InterfaceByName(key)
		if err != nil {
			return "", fmt.Errorf("address = %q: no such interface (want \"auto\", an IP address or an interface name): %v", key, err)
		}
		addrs, err := ifc.Addrs()
		if err != nil || len(addrs) == 0 {
			return "", fmt.Errorf("address = %q: the interface has no address", key)
		}
		for _, a := range addrs {
			if ipn, ok := a.(*net.IPNet); ok && ipn.IP.To4() != nil {
				return ipn.IP.String(), nil
			}
		}
		return addrs[0].(*net.IPNet).IP.String(), nil
	}
	if l := os.Getenv("SLURM_LAUNCH_NODE_IPADDR"); net.ParseIP(l) != nil {
		if u, err := net.Dial("udp", net.JoinHostPort(l, "9")); err == nil { // no packet is sent
			ip := u.LocalAddr().(*net.UDPAddr).IP
			u.Close()
			if !ip.IsLoopback() || net.ParseIP(l).IsLoopback() {
				return ip.String(), nil
			}
		}
	}
	ifs, err := net.Interfaces()
	if err != nil {
		return "", fmt.Errorf("address = auto: %v", err)
	}
	for _, ifc := range ifs {
		if ifc.Flags&net.FlagUp == 0 || ifc.Flags&net.FlagLoopback != 0 {
			continue
		}
		addrs, _ := ifc.Addrs()
		for _, a := range addrs {
			if ipn, ok := a.(*net.IPNet); ok && ipn.IP.To4() != nil && !ipn.IP.IsLoopback() {
				return ipn.IP.String(), nil
			}
		}
	}
	return "", fmt.Errorf("address = auto: no interface other than loopback is up with an IPv4 address; set address to an IP address or an interface name")
}

// quietWait bounds how long a host whose job error is a consequence of
// another host's end waits for bcsrun to say that the job ended elsewhere.
const quietWait = 2 * time.Second

// wholeJob reports whether err is a verdict about the whole job (a
// deadlock, a collective mismatch: a nicthread.JobError of no node), which
// every host's replica of the schedule reaches in the same slice. Node 0's
// bcsd says it; on another host it is a consequence, said only if bcsrun
// does not end the job within quietWait, so that the user reads it once,
// as on one machine.
func wholeJob(err error) bool {
	var je *nicthread.JobError
	return errors.As(err, &je) && je.Node < 0
}

// peerGone reports whether err is another host's connection ending (that
// host ended its part, or died): a consequence, whose cause that host's
// bcsd, or bcsrun, reports.
func peerGone(err error) bool {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) {
		return true
	}
	// A node's report relayed by the master keeps only the text.
	t := err.Error()
	return strings.HasSuffix(t, ": EOF") || strings.HasSuffix(t, ": unexpected EOF") || strings.Contains(t, "connection reset by peer") || strings.Contains(t, "broken pipe")
}

// keepAliveWarning is the one warning node 0's bcsd prints when the kernel
// refused the keepalive options on some of the master's connections to its
// agents (transport.Mesh.KeepAliveFailed; endpoint k is node k-1), or "".
// The job goes on: failure detection is slower there, not gone (doc.go).
func keepAliveWarning(who string, failed []transport.KeepAliveError, hostNames []string, cfg configs.Config) string {
	if len(failed) == 0 {
		return ""
	}
	var nodes []string
	for _, f := range failed {
		n := f.Endpoint - 1
		name := fmt.Sprintf("node %d", n)
		if n >= 0 && n < len(hostNames) && hostNames[n] != "" {
			name += " (host " + hostNames[n] + ")"
		}
		nodes = append(nodes, fmt.Sprintf("%s: %v", name, f.Err))
	}
	return fmt.Sprintf("%s: warning: keepalive probes could not be set on the master's connection to %s; the job goes on, but a host there cut off while it transmits is noticed only after node_timeout + tx_timeout (%v), not node_timeout (%v)",
		who, strings.Join(nodes, "; "), cfg.NodeTimeout+cfg.TXTimeout, cfg.NodeTimeout)
}
