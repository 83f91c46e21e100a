package gangd

import (
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"sync"
	"time"

	"github.com/bcsmpi/bcsmpi/internal/launch"
	"github.com/bcsmpi/bcsmpi/internal/proto"
	"github.com/bcsmpi/bcsmpi/nicthread"
	"github.com/bcsmpi/bcsmpi/transport"
)

// Jobs across hosts in the gang (launch's gangacross.go): node 0's bcsd of
// a job across hosts, on the daemon's host, asks for a place for the job's
// master in the daemon's gang. The conversation, on one connection:
//
//	bcsd → daemon   Request{Op: "master", Master}
//	daemon → bcsd   Reply{Kind: "listening", Addr}   the job's master endpoint (its secret, node 0's address)
//	bcsd → daemon   Request{Op: "start", Addrs, MDS} every endpoint, after the job's PMI exchange; MDS: node 0's EMDS is on
//	daemon → bcsd   Reply{Kind: "joined"}            connected to every agent, in the gang
//	bcsd → daemon   Request{Op: "leave"}             the job is done (zero or one)
//	daemon → bcsd   Reply{Kind: "left", Left}        the job has left the gang: its counts, or the error that ended it;
//	                                                 with MDS, emds-global.csv is in node 0's staging directory and
//	                                                 Left has the user traffic (or why not)
//
// or Reply{Kind: "refused"} at any step (a full gang, a bad request, the
// daemon stopping). The connection's end is the job's end: the daemon
// ends the place (the master stops every agent) and closes the endpoint.
// A job across hosts counts towards the multiprogramming level beside the
// daemon's own jobs, and is refused rather than queued when the gang is
// full (its other hosts are already up and waiting in the PMI exchange).

// MasterSpec is a job across hosts asking for a place for its master.
type MasterSpec struct {
	Job     string   `json:"job"`
	Ranks   int      `json:"ranks"`
	Hosts   int      `json:"hosts"`
	Program string   `json:"program"`
	Args    []string `json:"args"`
	IP      string   `json:"ip"`     // where the endpoint listens
	Secret  string   `json:"secret"` // hex, the job's mesh secret
	// Timeslice, NodeTimeout and TXTimeout are the job's (configs).
	Timeslice   time.Duration `json:"timeslice"`
	NodeTimeout time.Duration `json:"node_timeout"`
	TXTimeout   time.Duration `json:"tx_timeout"`
}

// MasterEnd is how a job across hosts left the gang.
type MasterEnd struct {
	Slices  uint64 `json:"slices"`
	Skipped uint64 `json:"skipped"`
	FIFO    bool   `json:"fifo"`
	Ran     uint64 `json:"ran"`
	Alive   uint64 `json:"alive"`
	Err     string `json:"err,omitempty"` // the first error a node reported
	// ErrNode and ErrRank say whom Err is about when it is a node's
	// (nicthread.JobError: node -1 for the whole job, rank -1 for the
	// node); both absent otherwise.
	ErrNode *int `json:"err_node,omitempty"`
	ErrRank *int `json:"err_rank,omitempty"`
	// With a start's MDS: the user traffic's non-zero cells, or why the
	// master's part of the MDS is missing.
	Traffic    []launch.Traffic `json:"traffic,omitempty"`
	MDSProblem string           `json:"mds_problem,omitempty"`
}

// maxTraffic bounds the traffic cells a left reply carries (about 60 bytes
// of JSON each, well inside FrameMax).
const maxTraffic = 100_000

// startWait bounds how long a place waits for its job's endpoints: the
// other hosts' bcsds start meanwhile (ssh, srun).
const startWait = 2 * time.Minute

// remoteJob is a job across hosts whose master the daemon holds.
type remoteJob struct {
	id        int
	spec      MasterSpec
	clientPID int
	conn      *net.UnixConn
	started   time.Time
	member    *nicthread.GangJob // once joined; under Daemon.mu
	stopped   bool               // the daemon stops: it ended the job; under Daemon.mu
	leave     func()             // closes the job's stop: it leaves at the next slice boundary
}

// hostMaster serves a place request on c until the job has left.
func (d *Daemon) hostMaster(c *net.UnixConn, pid int, spec *MasterSpec) {
	defer c.Close()
	refuse := func(code int, msg string) {
		writeFrame(c, Reply{Kind: "refused", Code: code, Notice: msg})
		d.logf("refused a job across hosts of pid %d: %s", pid, msg)
	}
	secret, err := hex.DecodeString(spec.Secret)
	switch {
	case d.Gang == nil:
		refuse(ExitRefused, "bcsd: this daemon has no gang master (it was not started with bcsd start)")
		return
	case spec.Hosts < 1 || spec.Hosts > 4096:
		refuse(ExitRefused, fmt.Sprintf("bcsd: a job across %d hosts, want 1 .. 4096", spec.Hosts))
		return
	case err != nil || len(secret) < 16:
		refuse(ExitRefused, "bcsd: the job's secret is not at least 16 bytes of hex")
		return
	case spec.NodeTimeout < 10*time.Millisecond || spec.NodeTimeout > 10*time.Minute:
		refuse(ExitRefused, fmt.Sprintf("bcsd: node_timeout = %v, want 10ms .. 10m", spec.NodeTimeout))
		return
	case spec.TXTimeout < time.Millisecond || spec.TXTimeout > 10*time.Minute:
		refuse(ExitRefused, fmt.Sprintf("bcsd: tx_timeout = %v, want 1ms .. 10m", spec.TXTimeout))
		return
	case net.ParseIP(spec.IP) == nil:
		refuse(ExitRefused, fmt.Sprintf("bcsd: address %q is not an IP address", spec.IP))
		return
	}
	stop := make(chan struct{})
	leave := sync.OnceFunc(func() { close(stop) })
	rj := &remoteJob{spec: *spec, clientPID: pid, conn: c, started: time.Now(), leave: leave}
	d.mu.Lock()
	if d.stopping {
		d.mu.Unlock()
		refuse(ExitTempFail, "bcsd: bcsd is stopping; nothing ran")
		return
	}
	if n := len(d.running) + len(d.remotes); n >= d.cfg.MPL {
		d.mu.Unlock()
		refuse(ExitTempFail, "bcsd: refused: "+jobsRunning(n, d.cfg.MPL)+" (a job across hosts does not wait in the queue)")
		return
	}
	d.nextID++
	rj.id = d.nextID
	d.remotes = append(d.remotes, rj)
	d.jobs.Add(1)
	d.mu.Unlock()
	defer func() {
		d.mu.Lock()
		for i, x := range d.remotes {
			if x == rj {
				d.remotes = append(d.remotes[:i], d.remotes[i+1:]...)
				break
			}
		}
		d.startQueuedLocked()
		d.mu.Unlock()
		d.jobs.Done()
	}()
	d.logf("job %d: %d rank(s) of %s across %d hosts (job %s) for pid %d: master here", rj.id, spec.Ranks, spec.Program, spec.Hosts, spec.Job, pid)

	mesh, err := transport.Listen(net.JoinHostPort(spec.IP, "0"), secret)
	if err != nil {
		refuse(ExitRefused, fmt.Sprintf("bcsd: the master's endpoint: %v", err))
		return
	}
	defer mesh.Close()
	if err := writeFrame(c, Reply{Kind: "listening", Job: rj.id, Addr: mesh.Addr()}); err != nil {
		return
	}
	c.SetReadDeadline(time.Now().Add(startWait))
	var req Request
	files, err := readFrame(c, &req)
	closeFiles(files)
	c.SetReadDeadline(time.Time{})
	if err != nil || req.Op != "start" || len(req.Addrs) != spec.Hosts+1 {
		if err == nil {
			refuse(ExitRefused, fmt.Sprintf("bcsd: %q with %d endpoints, want start with %d", req.Op, len(req.Addrs), spec.Hosts+1))
		}
		d.logf("job %d: ended before its start (%v)", rj.id, err)
		return
	}
	// From now on the connection's end (or a leave) ends the job.
	go func() {
		for {
			var r Request
			files, err := readFrame(c, &r)
			closeFiles(files)
			if err != nil || r.Op == "leave" {
				leave()
				if err != nil {
					return
				}
			}
		}
	}()
	remote := nicthread.NewRemoteNodes(mesh, spec.Hosts, spec.NodeTimeout, spec.TXTimeout)
	started := make(chan error, 1)
	go func() { started <- mesh.Start(0, req.Addrs, remote.Handler, remote.Direct()) }()
	select {
	case err = <-started:
	case <-stop:
		mesh.Close()
		<-started
		d.logf("job %d: ended before its agents were connected", rj.id)
		return
	}
	if err != nil {
		refuse(1, fmt.Sprintf("bcsd: connecting the master to job %s's agents: %v", spec.Job, err))
		return
	}
	name := fmt.Sprintf("%s@%d", spec.Job, spec.Hosts)
	cfg := nicthread.MasterConfig{Slice: spec.Timeslice, Nodes: spec.Hosts, TXTimeout: spec.TXTimeout}
	var mm *launch.MasterMDS
	var mdsProblem string
	if req.MDS != nil { // the job runs on without it: its hosts' files still come
		if mm, err = launch.NewMasterMDS(*req.MDS); err != nil {
			mdsProblem = err.Error()
			d.logf("job %d: no emds-global.csv: %v", rj.id, err)
		} else {
			cfg.OnSlice, cfg.OnDEM = mm.OnSlice, mm.OnDEM
		}
	}
	m, err := d.Gang.Join(name, cfg, remote, stop)
	if err != nil {
		refuse(ExitTempFail, "bcsd: "+err.Error())
		return
	}
	d.mu.Lock()
	rj.member = m
	d.mu.Unlock()
	writeFrame(c, Reply{Kind: "joined", Job: rj.id})
	st, err := m.Wait()
	ran, alive := m.Counts()
	end := &MasterEnd{Slices: st.Slices, Skipped: st.Skipped, FIFO: st.FIFO, Ran: ran, Alive: alive, MDSProblem: mdsProblem}
	if mm != nil { // the job has left: its hooks have run for the last time
		cells, err := mm.Finish()
		switch {
		case err != nil:
			end.MDSProblem = fmt.Sprintf("writing emds-global.csv: %v", err)
		case len(cells) > maxTraffic:
			end.MDSProblem = fmt.Sprintf("the user traffic has %d rank pairs, more than the %d a reply carries: comm-matrix.csv has the collectives' only", len(cells), maxTraffic)
		default:
			end.Traffic = cells
		}
	}
	d.mu.Lock()
	stopped := rj.stopped
	d.mu.Unlock()
	if err != nil {
		end.Err = err.Error()
		var je *nicthread.JobError
		if errors.As(err, &je) {
			node, rank := int(je.Node), int(je.Rank)
			end.Err, end.ErrNode, end.ErrRank = je.Why, &node, &rank
		}
	} else if stopped { // the job did not end: it was ended, and its hosts must say why
		end.Err = fmt.Sprintf("the gang's bcsd (pid %d) was stopped while the job ran", os.Getpid())
	}
	writeFrame(c, Reply{Kind: "left", Job: rj.id, Left: end})
	why := end.Err
	if err != nil {
		why = err.Error()
	}
	d.logf("job %d: left the gang after %d slices (ran %d)%s", rj.id, st.Slices, ran, ifMsg(why))
}

// Place asks the daemon for a place in its gang for the master of a job
// across hosts (launch.HostJob.JoinGang); the Client is the place's
// connection from then on.
func (cl *Client) Place(req launch.GangRequest) (launch.GangPlace, error) {
	spec := MasterSpec{Job: req.Job, Ranks: req.Ranks, Hosts: req.Hosts, Program: req.Program, Args: req.Args, IP: req.IP, Secret: hex.EncodeToString(req.Secret),
		Timeslice: req.Config.Timeslice, NodeTimeout: req.Config.NodeTimeout, TXTimeout: req.Config.TXTimeout}
	if err := writeFrame(cl.c, Request{Version: Version, Op: "master", Master: &spec}); err != nil {
		cl.c.Close()
		if ref := cl.refusal(); ref != nil {
			return nil, ref
		}
		return nil, fmt.Errorf("gangd: %s: %w", cl.Socket, err)
	}
	r, err := cl.reply("listening")
	if err != nil {
		cl.c.Close()
		return nil, err
	}
	return &place{cl: cl, addr: r.Addr, ended: make(chan struct{})}, nil
}

// reply reads the daemon's next reply, which should be of kind want; a
// refusal is an *ExitError.
func (cl *Client) reply(want string) (Reply, error) {
	var r Reply
	files, err := readFrame(cl.c, &r)
	closeFiles(files)
	switch {
	case err != nil:
		return r, fmt.Errorf("gangd: lost bcsd (pid %d, %s): %w", cl.DaemonPID, cl.Socket, err)
	case r.Kind == "refused":
		return r, &ExitError{Code: r.Code, Msg: r.Notice}
	case r.Kind != want:
		return r, fmt.Errorf("gangd: bcsd (pid %d) answered %q, want %q", cl.DaemonPID, r.Kind, want)
	}
	return r, nil
}

// place is launch.GangPlace through a Client.
type place struct {
	cl    *Client
	addr  string
	wmu   sync.Mutex
	once  sync.Once // Stop
	ended chan struct{}
	end   MasterEnd
	err   error // the place lost (before the end arrived)
	close sync.Once
}

func (p *place) Addr() string { return p.addr }

func (p *place) Start(addrs []string, mds *launch.GangMDS) error {
	p.wmu.Lock()
	err := writeFrame(p.cl.c, Request{Version: Version, Op: "start", Addrs: addrs, MDS: mds})
	p.wmu.Unlock()
	if err != nil {
		return fmt.Errorf("gangd: %s: %w", p.cl.Socket, err)
	}
	if _, err := p.cl.reply("joined"); err != nil {
		return err
	}
	go func() {
		defer close(p.ended)
		r, err := p.cl.reply("left")
		if err != nil {
			// The cause of the job's end, not a consequence of another
			// host's (launch's peerGone): the text wraps nothing.
			p.err = fmt.Errorf("the gang's bcsd (pid %d) that held this job's master is gone (%v)", p.cl.DaemonPID, err)
			return
		}
		if r.Left == nil {
			p.err = fmt.Errorf("gangd: bcsd (pid %d) said the job left without its counts", p.cl.DaemonPID)
			return
		}
		p.end = *r.Left
	}()
	return nil
}

func (p *place) Wait() (launch.GangEnd, error) {
	<-p.ended
	if p.err != nil {
		return launch.GangEnd{}, p.err
	}
	e := p.end
	var err error
	switch {
	case e.Err != "" && e.ErrNode != nil && e.ErrRank != nil: // a node's: launch names its host
		err = &nicthread.JobError{Node: proto.NodeID(*e.ErrNode), Rank: proto.Rank(*e.ErrRank), Why: e.Err}
	case e.Err != "":
		err = &placeError{msg: e.Err}
	}
	return launch.GangEnd{Stats: nicthread.MasterStats{Slices: e.Slices, Skipped: e.Skipped, FIFO: e.FIFO}, Ran: e.Ran, Alive: e.Alive,
		Traffic: e.Traffic, MDSProblem: e.MDSProblem}, err
}

func (p *place) Stop() {
	p.once.Do(func() {
		p.wmu.Lock()
		defer p.wmu.Unlock()
		writeFrame(p.cl.c, Request{Version: Version, Op: "leave"})
	})
}

func (p *place) Close() error {
	p.close.Do(func() { p.cl.c.Close() })
	return nil
}

// placeError is a node's error as the daemon's master reported it (its
// text only).
type placeError struct{ msg string }

func (e *placeError) Error() string { return e.msg }

// stopRemotesLocked asks every job across hosts to leave (Stop). Called
// with d.mu held.
func (d *Daemon) stopRemotesLocked() {
	for _, rj := range d.remotes {
		rj.stopped = true
		rj.leave()
		if rj.member == nil { // not in the gang yet: it may wait for its start
			rj.conn.Close()
		}
	}
}

// remoteStatus is rj's line of Status. Called with d.mu held.
func (rj *remoteJob) status(now time.Time) JobStatus {
	var slices uint64
	state := "running"
	if rj.member != nil {
		_, slices = rj.member.Counts()
		if rj.member.Held() { // a host late past the gang's hold: passed over (doc.go, "A silent host")
			state = "held"
		}
	}
	return JobStatus{ID: rj.id, Ranks: rj.spec.Ranks, Program: rj.spec.Program, Args: rj.spec.Args, State: state, Slices: slices,
		Elapsed: now.Sub(rj.started), ClientPID: rj.clientPID, Hosts: rj.spec.Hosts}
}
