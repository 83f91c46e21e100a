package launch

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/bcsmpi/bcsmpi/configs"
	"github.com/bcsmpi/bcsmpi/internal/unix"
	"github.com/bcsmpi/bcsmpi/nicthread"
	"github.com/bcsmpi/bcsmpi/transport"
)

// InSlurm reports whether bcsrun runs inside a Slurm allocation (salloc,
// sbatch): SLURM_JOB_ID is set.
func InSlurm() bool { return os.Getenv("SLURM_JOB_ID") != "" }

// SlurmHosts is the number of hosts of the allocation (SLURM_JOB_NUM_NODES,
// else SLURM_NNODES).
func SlurmHosts() (int, error) {
	for _, name := range []string{"SLURM_JOB_NUM_NODES", "SLURM_NNODES"} {
		if v := os.Getenv(name); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 {
				return 0, fmt.Errorf("bcsrun: %s=%q, want a number of hosts >= 1", name, v)
			}
			return n, nil
		}
	}
	return 0, errors.New("bcsrun: SLURM_JOB_ID is set but neither SLURM_JOB_NUM_NODES nor SLURM_NNODES: not a Slurm allocation bcsrun understands")
}

// SlurmArgs are srun's arguments for a job of hosts bcsds (Mode A of
// docs: one bcsd per host, PMI-2 for the rendezvous). The program and its
// arguments follow "--": bcsd takes no option after it.
//
// srun does not end the step when one bcsd fails (--kill-on-bad-exit=0):
// bcsrun ends the job on every host through their control connections,
// and each bcsd sends its MDS data before it exits. A host that cannot
// start calls PMI abort, which ends the step at once; wait bounds how long
// srun lets the other bcsds run once one has ended (--wait, whole seconds).
//
// mpi is srun's MPI plugin: "pmi2", or "none" (the bcsds meet at bcsrun's
// rendezvous port, VarPMI).
func SlurmArgs(hosts, ranks int, bcsd, prog string, args []string, inStep bool, wait time.Duration, mpi string) []string {
	h := strconv.Itoa(hosts)
	w := max(1, int((wait+time.Second-1)/time.Second))
	a := []string{"--mpi=" + mpi, "-N", h, "-n", h, "--ntasks-per-node=1", "--kill-on-bad-exit=0", "--wait=" + strconv.Itoa(w), "--cpu-bind=none",
		"--input=0", "--quiet"}
	if inStep { // bcsrun is itself a task of a step: share its resources
		a = append(a, "--overlap")
	}
	a = append(a, bcsd, "--ranks", strconv.Itoa(ranks), "--")
	return append(append(a, prog), args...)
}

// SlurmCleanupArgs are srun's arguments for `bcsd --cleanup job` on hosts
// (their Slurm names), one task each, after the job's step has ended: it
// removes the MDS staging directories a bcsd could not (hostmds.go).
func SlurmCleanupArgs(hosts []string, bcsd, job string, inStep bool) []string {
	h := strconv.Itoa(len(hosts))
	a := []string{"--mpi=none", "-N", h, "-n", h, "--ntasks-per-node=1", "-w", strings.Join(hosts, ","), "--kill-on-bad-exit=0", "--cpu-bind=none",
		"--input=none", "--quiet"}
	if inStep {
		a = append(a, "--overlap")
	}
	return append(a, bcsd, "--cleanup", job)
}

// VarPMI is bcsrun's rendezvous port for the bcsds under Slurm without
// PMI-2 (slurm_mpi = none): ":port" (srun's host, as for VarControl). bcsd
// then speaks PMI-2 with bcsrun there, as over ssh, its node being its
// Slurm task id (SLURM_PROCID).
const VarPMI = "BCSD_PMI"

// slurmMPI resolves the slurm_mpi key to srun's MPI plugin: "auto" is pmi2
// where list (srun --mpi=list) names it, else none; a listing that cannot
// be read gives pmi2 (srun then says what is wrong).
func slurmMPI(key string, list func() ([]byte, error)) string {
	if key != "auto" {
		return key
	}
	out, err := list()
	if err != nil {
		return "pmi2"
	}
	if offersPMI2(out) {
		return "pmi2"
	}
	return "none"
}

// offersPMI2 reports whether srun --mpi=list's output names the pmi2
// plugin: one plugin a line, indented ("\tpmi2", Slurm 20 and later) or
// after "srun: " (older).
func offersPMI2(out []byte) bool {
	for _, line := range strings.Split(string(out), "\n") {
		line = strings.TrimSpace(line)
		line = strings.TrimSpace(strings.TrimPrefix(line, "srun:"))
		if line == "pmi2" {
			return true
		}
	}
	return false
}

// RunSlurm runs the job across the hosts of the Slurm allocation bcsrun
// runs in: srun starts one bcsd per host (the program bcsd next to bcsrun's
// executable, else on PATH), node 0's bcsd runs the master, and the job's
// secret, id and configuration travel in bcsd's environment (VarSecret,
// VarJob, VarConfig), never on a command line. Ranks are placed by block.
//
// The ranks' output reaches bcsrun through srun. Each bcsd dials bcsrun's
// control port (VarControl, control.go): a failing rank's bcsd prints why
// the job failed and tells bcsrun, which ends the job on the other hosts;
// every host sends its MDS data (the job's directory is on this host, as
// for a local job), and Result.ExitCode is the failing rank's status and
// Result.Message its host's report, not srun's. Without a report (a bcsd
// that could not start) it is srun's status. A terminating signal ends the
// job through the control connections (every host sends its MDS data);
// srun gets SIGTERM if the hosts have not ended in killWait, or at once
// when some host has not connected yet or at a second signal.
func RunSlurm(job Job) (res Result, err error) {
	sigs := job.Signals
	if sigs == nil {
		ch := make(chan os.Signal, 4)
		signal.Notify(ch, TermSignals...)
		defer signal.Stop(ch)
		sigs = ch
	}
	stdout, stderr := job.Stdout, job.Stderr
	if stdout == nil {
		stdout = os.Stdout
	}
	if stderr == nil {
		stderr = os.Stderr
	}
	avail, err := SlurmHosts()
	if err != nil {
		return res, err
	}
	a, err := prepareAcross(job, avail)
	if err != nil {
		return res, err
	}
	res.JobID, res.Hosts, res.BytesPerSliceMax = a.jobID, a.hosts, a.cfg.BytesPerSliceMax
	res.JobID = "slurm" + os.Getenv("SLURM_JOB_ID") + "-" + a.jobID
	a.jobID = res.JobID // what the bcsds prove on their control connections
	start := time.Now()
	mon, err := newMonitorFor(job, a.cfg, res.JobID, NodeOf(job.Ranks, a.hosts, a.cfg.Cyclic(), a.cfg.PPN), stderr, false)
	if err != nil {
		return res, err
	}
	defer mon.close()
	ln, ctlAddr, err := controlListen()
	if err != nil {
		return res, fmt.Errorf("bcsrun: %w", err)
	}
	defer ln.Close()
	ctl := newCtlServer(a, job.Ranks, nil, mon, nil, false, stderr)
	// The bcsds meet through Slurm's PMI-2, else (slurm_mpi: none, or
	// auto where srun offers no pmi2) at bcsrun's port, which serves both
	// their PMI and their control connections.
	mpi := slurmMPI(a.cfg.SlurmMPI, func() ([]byte, error) { return exec.Command("srun", "--mpi=list").Output() })
	var rv *rendezvous
	var accepting <-chan struct{}
	if mpi == "none" {
		if rv, err = startRendezvous(ln, a, ctl, stderr); err != nil {
			ctl.finish()
			return res, err
		}
	} else {
		accepting = ctl.accept(ln)
	}
	// finish is called once srun has ended: it stops accepting and ends
	// the control connections, reading what they still hold (the
	// rendezvous's port closes after that: it closes every connection).
	finish := func() ctlResult {
		if rv == nil {
			ln.Close()
			<-accepting
			return ctl.finish()
		}
		cr := ctl.finish()
		rv.close()
		return cr
	}

	// srun's --wait: a bcsd ended, the others have this long to end the
	// job, send their MDS data and exit (bcsrun releases them within
	// ctl.bound of a failure).
	wait := 2*ctl.bound + killWait
	cmd := exec.Command("srun", SlurmArgs(a.hosts, job.Ranks, a.bcsd, a.prog, job.Args, os.Getenv("SLURM_STEP_ID") != "", wait, mpi)...)
	cmd.Env = append(os.Environ(), VarSecret+"="+hex.EncodeToString(a.secret), VarJob+"="+res.JobID, VarConfig+"="+string(a.conf), VarControl+"="+ctlAddr, VarGang+"="+job.AcrossGang)
	if mpi == "none" {
		cmd.Env = append(cmd.Env, VarPMI+"="+ctlAddr)
	}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	if job.Stdin != nil {
		cmd.Stdin = job.Stdin
	}
	if err := cmd.Start(); err != nil {
		finish()
		return res, fmt.Errorf("bcsrun: starting srun: %w", err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var sig os.Signal
	var term, kill <-chan time.Time
	for {
		select {
		case s := <-sigs:
			if sig == nil {
				sig = s
				res.Message = fmt.Sprintf("bcsrun: %v received, job terminated", s)
				fmt.Fprintln(stderr, res.Message)
				// Every host connected: they end the job through their
				// control connections and send their MDS data (Slurm's
				// SIGTERM would be followed by its SIGKILL, KillWait
				// later); srun is signalled only if they have not ended
				// in killWait.
				if ctl.stop(res.Message) {
					term = time.After(killWait)
					continue
				}
			}
			term = nil
			cmd.Process.Signal(syscall.SIGTERM) // srun passes it to every bcsd
			if kill == nil {
				kill = time.After(killWait)
			}
			continue
		case <-term:
			term = nil
			cmd.Process.Signal(syscall.SIGTERM)
			kill = time.After(killWait)
			continue
		case <-kill:
			cmd.Process.Kill() // Slurm ends the step without srun
			continue
		case err = <-done:
		}
		break
	}
	res.Elapsed = time.Since(start)
	cr := finish()
	if mon != nil && mon.on() && len(cr.unclean) > 0 {
		cmd := exec.Command("srun", SlurmCleanupArgs(cr.unclean, a.bcsd, res.JobID, os.Getenv("SLURM_STEP_ID") != "")...)
		cleanStaging([]*exec.Cmd{cmd}, []string{strings.Join(cr.unclean, ",")}, stderr)
	}
	var ee *exec.ExitError
	switch {
	case sig != nil:
		res.ExitCode = 128 + int(sig.(syscall.Signal))
	case err == nil:
	case errors.As(err, &ee):
		// srun's status is a host's bcsd's, or 137 when it ended the
		// others: the failing host's verdict (below) says what failed.
		res.ExitCode = ee.ExitCode()
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			res.ExitCode = 128 + int(ws.Signal())
		}
		res.Message = fmt.Sprintf("bcsrun: the job failed on its hosts (srun exited with status %d)", res.ExitCode)
	default:
		return res, fmt.Errorf("bcsrun: srun: %w", err)
	}
	cr.apply(&res, sig != nil, mon, ctl.hostNames(), stdout, stderr)
	return res, nil
}

// killWait bounds how long bcsrun waits for srun after forwarding a
// terminating signal.
const killWait = 10 * time.Second

// findBcsd returns bcsd beside bcsrun's executable, else bcsd on PATH.
func findBcsd() (string, error) {
	if exe, err := os.Executable(); err == nil {
		p := filepath.Join(filepath.Dir(exe), "bcsd")
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	p, err := exec.LookPath("bcsd")
	if err != nil {
		return "", fmt.Errorf("bcsrun: bcsd is neither beside bcsrun nor on PATH: %w", err)
	}
	return filepath.Abs(p)
}

// across is what a job across hosts needs before its launcher starts bcsds.
type across struct {
	cfg    configs.Config // resolved: Nodes = hosts, the slice budget measured
	hosts  int
	prog   string // absolute
	bcsd   string
	conf   []byte // cfg as JSON, for bcsd
	jobID  string
	secret []byte
}

// prepareAcross checks a job across up to avail hosts and resolves what
// every bcsd must agree on.
func prepareAcross(job Job, avail int) (*across, error) {
	cfg := job.Config
	if job.Ranks < 1 || job.Ranks > 4096 {
		return nil, fmt.Errorf("bcsrun: -n %d, want 1 .. 4096 ranks", job.Ranks)
	}
	hosts, err := Nodes(job.Ranks, avail, cfg.PPN)
	if err != nil {
		return nil, err
	}
	if cfg.Nodes > 1 && cfg.PPN > 0 && cfg.Nodes != hosts {
		return nil, fmt.Errorf("bcsrun: --nodes %d and --ppn %d disagree: %d ranks at %d per host need %d hosts", cfg.Nodes, cfg.PPN, job.Ranks, cfg.PPN, hosts)
	}
	if cfg.Nodes > 1 && cfg.PPN == 0 { // the user asked for fewer hosts than there are
		if cfg.Nodes > avail {
			return nil, fmt.Errorf("bcsrun: --nodes %d, but there are %d host(s); want 1 .. %d", cfg.Nodes, avail, avail)
		}
		hosts = min(cfg.Nodes, job.Ranks)
	}
	cfg.Nodes = hosts
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.BytesPerSliceMax == 0 { // auto, measured here once: the same for every host
		cfg.BytesPerSliceMax = nicthread.AutoBudget(cfg.Timeslice)
	}
	if unix.SiblingReadsRefused() {
		// No rank could serve a span (nicthread doc.go, "Spans"): the agent
		// would copy every one, overrunning its slices. Decided here, once,
		// the same for every node; a remote host that is stricter than this
		// one is seen by its own agent, whose ranks then say in their status
		// byte that they serve no pull orders (proto.StatusNoPull).
		cfg.SpanSlicesMax = 0
	}
	prog, err := exec.LookPath(job.Program)
	if err != nil {
		return nil, fmt.Errorf("bcsrun: program %q: %w", job.Program, err)
	}
	if prog, err = filepath.Abs(prog); err != nil {
		return nil, fmt.Errorf("bcsrun: program %q: %w", job.Program, err)
	}
	bcsd, err := findBcsd()
	if err != nil {
		return nil, err
	}
	conf, err := json.Marshal(cfg)
	if err != nil {
		return nil, fmt.Errorf("bcsrun: encoding the configuration for bcsd: %w", err)
	}
	var idb [6]byte
	rand.Read(idb[:])
	return &across{cfg: cfg, hosts: hosts, prog: prog, bcsd: bcsd, conf: conf, jobID: hex.EncodeToString(idb[:]), secret: transport.NewSecret()}, nil
}
