package launch

import (
	"errors"
	"fmt"

	"github.com/bcsmpi/bcsmpi/configs"
	"github.com/bcsmpi/bcsmpi/nicthread"
)

// Gang scheduling across hosts (issue 17). A job across hosts (RunSSH,
// RunSlurm) has one bcsd per host, as always; what it shares with the
// user's other jobs is the master. When node 0's host runs this user's
// gang daemon (bcsd start), node 0's bcsd does not start a master of its
// own: it asks the daemon for a place in its gang (HostJob.JoinGang, a
// GangPlace), whose strobe thread then drives this job's agents over the
// job's own authenticated mesh endpoint (the job's secret; the daemon
// listens on node 0's address) beside the daemon's other jobs, local or
// across hosts. Node 0 publishes the place's endpoint as the master's in
// the PMI exchange, and kvsGang; every host, seeing kvsGang, puts its
// ranks in a process group (or a cgroup freezer, gang_stop) that its agent
// stops and continues when the gang's decision arrives in the slice's
// MsgDEM, so every host of the job switches at the same strobe.
//
// Failure domains stay apart: each job's bcsds, ranks, regions and mesh
// are its own processes and sockets; the daemon holds only the job's
// master endpoint. A job's failure (a rank, a host, a deadlock) ends that
// job alone, as a local gang job's does; node 0's bcsd dying closes its
// connection to the daemon, which ends the job's place (the master stops
// every agent). The daemon dying ends the jobs whose master it held (their
// node 0 sees the connection end: "lost bcsd").
//
// Time apart too: a job across hosts runs its slices on its own goroutine
// in the gang (nicthread's gang.go), so a remote host that is silent (a
// cut link: no reset) or late stalls its own job only. The strobe thread
// waits for a job's slice at most the gang's hold (nicthread.DefaultHold:
// 100 ms, at least two slices) past the strobe's due time, then strobes the
// other jobs without it; the late job is held (strobed no more, passed over
// by the gang matrix) until its slice ends, or its node_timeout (plus
// tx_timeout in its transmission) ends the job, naming the node and its
// host (internal/gangd's doc.go, "A silent host"); asked to leave while
// held (j.stop: bcsrun interrupted, bcsd stop), it ends at once, as a
// stopped job (the gang cancels its master's wait). The other jobs' slices
// are delayed by at most the hold, once per late slice. The daemon refuses
// timeouts outside the configuration's ranges (10ms .. 10m, 1ms .. 10m).
//
// The switch across hosts: the gang decides once per slice and every host
// of a job applies the decision at that slice's strobe, when its MsgDEM
// arrives (EMDS RUN is the same on every host slice by slice:
// TestGangAcrossHosts). The strobe thread runs the jobs' slices one after
// the other, in the order they joined, so where the incoming job joined
// before the outgoing one, the incoming job's ranks are continued in its
// exchange and the outgoing job's stopped in its own, later in the same
// slice: the two overlap for the incoming job's exchange of that slice (on
// one machine, LocalNodes, both are applied before any exchange, the stop
// first).
//
// The MDS's master part (emds-global.csv, the communication matrix's user
// traffic) comes from the master's hooks, which run in the daemon's
// process: gangmds.go. A job beyond the daemon's multiprogramming level is refused,
// not queued. Node 0 must be the daemon's host (the first of --hosts, or
// the allocation's first host).

// VarGang is bcsrun's --gang (auto, on, off) for the bcsds under Slurm;
// over ssh it is SSHEnv.Gang.
const VarGang = "BCSD_GANG"

// kvsGang is published by node 0 when the job's master is a place in the
// gang of node 0's host's daemon: every host then gives its ranks a
// process group the gang stops and continues.
const kvsGang = "bcs-gang"

// ErrNoGang is matched by HostJob.JoinGang's error when no gang daemon of
// this user runs on node 0's host.
var ErrNoGang = errors.New("no bcsd of yours runs on this host")

// GangRequest is what node 0's bcsd asks the daemon for.
type GangRequest struct {
	Job     string // the job's id
	Ranks   int
	Hosts   int            // the job's nodes
	Program string         // for the daemon's status
	Args    []string       // for the daemon's status
	IP      string         // the address the master's endpoint listens on (the address key, resolved)
	Secret  []byte         // the job's mesh secret
	Config  configs.Config // the job's configuration (timeslice, node and TX timeouts)
}

// GangPlace is a job's master as a place in the gang of another process
// (this user's bcsd start on node 0's host).
type GangPlace interface {
	// Addr is the master's mesh endpoint, listening already.
	Addr() string
	// Start connects the endpoint to the agents at addrs (addrs[0] is its
	// own) and joins the gang; it returns once the job is in the gang, or
	// why it is not. With mds (node 0's MDS keeps the EMDS), the master
	// keeps the job's global EMDS and counts its user traffic (gangmds.go).
	Start(addrs []string, mds *GangMDS) error
	// Wait returns when the job has left the gang: how, and the first
	// error a node reported (nil when stopped).
	Wait() (GangEnd, error)
	// Stop asks the job to leave at the next slice boundary (the master
	// then stops every agent). Safe more than once.
	Stop()
	// Close drops the place: the daemon ends the job's place if it is
	// still there. Safe more than once.
	Close() error
}

// GangEnd is how a job left the gang: the master's counts, the slices it
// ran in and was strobed in, and, when Start had a GangMDS, the user
// traffic the master counted (emds-global.csv is in node 0's staging
// directory then) or why the master's part of the MDS is missing.
type GangEnd struct {
	Stats      nicthread.MasterStats
	Ran, Alive uint64
	Traffic    []Traffic
	MDSProblem string
}

// openPlace asks for a place in the gang of node 0's host (node 0 only),
// as spec.Gang says: nil (and no error) when the job runs its own master
// (off, or auto without a daemon). Released: the place is closed.
func (j *job) openPlace(spec HostJob, ip string) (GangPlace, error) {
	mode := spec.Gang
	if mode == "" {
		mode = "auto"
	}
	switch mode {
	case "auto", "on", "off":
	default:
		return nil, fmt.Errorf("%s: gang %q, want auto, on or off", j.who, mode)
	}
	if mode == "off" {
		return nil, nil
	}
	if spec.JoinGang == nil {
		if mode == "on" {
			return nil, fmt.Errorf("%s: --gang on, but this bcsd cannot reach a gang daemon", j.who)
		}
		return nil, nil
	}
	var p GangPlace
	if err := j.step("gang place", func() error {
		if p != nil {
			p.Close()
		}
		return nil
	}); err != nil {
		return nil, err
	}
	var err error
	p, err = spec.JoinGang(GangRequest{Job: spec.JobID, Ranks: spec.Ranks, Hosts: j.cfg.Nodes, Program: spec.Program, Args: spec.Args, IP: ip, Secret: spec.Secret, Config: j.cfg})
	if err != nil {
		p = nil
		if errors.Is(err, ErrNoGang) && mode == "auto" {
			return nil, nil
		}
		return nil, fmt.Errorf("%s: a place in the gang of this host's bcsd (--gang %s): %w", j.who, mode, err)
	}
	return p, nil
}

// ganged gives every node of the job on this host a process group (and a
// freezer where gang_stop asks for one): the job's master is a gang's.
func (j *job) ganged() error {
	for _, n := range j.nodes {
		n.group = newGroup()
		if err := j.openFreezer(n); err != nil {
			return err
		}
	}
	return nil
}

// joinPlace makes place the job's master: its end comes on j.master, and
// closing j.stop asks it to leave.
func (j *job) joinPlace(place GangPlace) error {
	if err := j.masterStep(); err != nil {
		return err
	}
	ended := make(chan masterDone, 1)
	mon := j.mon
	go func() {
		end, err := place.Wait()
		mon.addTraffic(end.Traffic) // before the end is known: node 0's dump comes after
		if end.MDSProblem != "" && mon != nil {
			mon.gangProblem = "the gang's master: " + end.MDSProblem
		}
		ended <- masterDone{st: end.Stats, err: err, ran: end.Ran, alive: end.Alive, ganged: true}
	}()
	j.wg.Add(1)
	go func() {
		defer j.wg.Done()
		var md masterDone
		select {
		case md = <-ended:
		case <-j.stop:
			place.Stop()
			md = <-ended
		}
		j.master <- md
	}()
	return nil
}
