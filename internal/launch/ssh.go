package launch

import (
	"bufio"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/bcsmpi/bcsmpi/internal/pmi"
)

// Launching over ssh (bcsrun --hosts, --hostfile), where there is no Slurm:
// bcsrun is the PMI server. It listens on TCP (the address key, "auto": the
// local address that routes to the first host), starts `ssh HOST exec bcsd
// --pmi-port ADDR --node I --nodes M --ranks N -- PROGRAM ARGS` per host and
// writes the job's secret, id and configuration as one JSON line (SSHEnv) to
// each ssh's standard input, never on a command line. bcsd dials the port,
// proves it knows the secret (pmiAuth), and from then on speaks PMI-2 as it
// does under Slurm. bcsrun keeps each ssh's input open: its end (bcsrun
// gone, or bcsrun ending the job) tells bcsd to stop.

// SSHEnv is what bcsrun tells each bcsd over ssh's standard input.
type SSHEnv struct {
	Secret string          `json:"secret"` // hex
	Job    string          `json:"job"`
	Config json.RawMessage `json:"config"`
	// Gang is bcsrun's --gang (auto, on, off; "": auto): node 0's master
	// in the gang of this user's bcsd on its host (gangacross.go).
	Gang string `json:"gang,omitempty"`
}

// pmiAuth is the line a bcsd writes first on its PMI connection: its node
// and HMAC-SHA256(secret, "bcs-pmi job node").
func pmiAuth(secret []byte, job string, node int) string {
	h := hmac.New(sha256.New, secret)
	fmt.Fprintf(h, "bcs-pmi %s %d", job, node)
	return fmt.Sprintf("bcsd %d %s\n", node, hex.EncodeToString(h.Sum(nil)))
}

// DialPMI connects bcsd to bcsrun's PMI server at addr as node, proving it
// knows secret, and opens PMI-2.
//
// Under Slurm (VarPMI) addr is ":port", on srun's host (controlAddr).
func DialPMI(addr string, secret []byte, job string, node int) (*pmi.Client, error) {
	addr = controlAddr(addr)
	conn, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		return nil, fmt.Errorf("connecting to bcsrun at %s: %w", addr, err)
	}
	if _, err := io.WriteString(conn, pmiAuth(secret, job, node)); err != nil {
		conn.Close()
		return nil, fmt.Errorf("connecting to bcsrun at %s: %w", addr, err)
	}
	c, err := pmi.NewClient(conn, pmi.V2, pmi.Identity{Rank: node, ID: -1, JobID: job})
	if err != nil {
		conn.Close()
		return nil, err
	}
	return c, nil
}

// ReadSSHEnv reads SSHEnv's line from r one byte at a time (what follows
// is not consumed).
func ReadSSHEnv(r io.Reader) (SSHEnv, error) {
	var line []byte
	b := make([]byte, 1)
	for len(line) < 1<<20 {
		if _, err := r.Read(b); err != nil {
			return SSHEnv{}, fmt.Errorf("reading the job from standard input: %w", err)
		}
		if b[0] == '\n' {
			var e SSHEnv
			if err := json.Unmarshal(line, &e); err != nil {
				return SSHEnv{}, fmt.Errorf("reading the job from standard input: %w", err)
			}
			return e, nil
		}
		line = append(line, b[0])
	}
	return SSHEnv{}, errors.New("reading the job from standard input: no newline in 1 MiB")
}

// ParseHostfile reads the Open MPI / MPICH hostfile shape: one host per
// line, optionally "slots=N" (N >= 1; placement is by block over the hosts,
// one bcsd each, whatever the slots), '#' comments and blank lines. A host
// named twice is an error.
func ParseHostfile(r io.Reader, name string) ([]string, error) {
	var hosts []string
	seen := map[string]bool{}
	sc := bufio.NewScanner(r)
	for ln := 1; sc.Scan(); ln++ {
		line, _, _ := strings.Cut(sc.Text(), "#")
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		for _, opt := range f[1:] {
			v, ok := strings.CutPrefix(opt, "slots=")
			if n, err := strconv.Atoi(v); !ok || err != nil || n < 1 {
				return nil, fmt.Errorf("%s:%d: %q, want \"host\" or \"host slots=N\" with N >= 1", name, ln, strings.TrimSpace(line))
			}
		}
		if !validHost(f[0]) {
			return nil, fmt.Errorf("%s:%d: host %q, want a name or address (letters, digits, . - _ : [ ] and user@), not starting with '-'", name, ln, f[0])
		}
		if seen[f[0]] {
			return nil, fmt.Errorf("%s:%d: host %s is named twice", name, ln, f[0])
		}
		seen[f[0]] = true
		hosts = append(hosts, f[0])
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(hosts) == 0 {
		return nil, fmt.Errorf("%s: no host", name)
	}
	return hosts, nil
}

// validHost reports whether h can be handed to ssh as a destination: a
// name, an IPv4 or bracketed IPv6 address, optionally user@; never an
// option (a leading '-').
func validHost(h string) bool {
	if h == "" || h[0] == '-' || len(h) > 255 {
		return false
	}
	for _, c := range h {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.ContainsRune(".-_:[]@", c):
		default:
			return false
		}
	}
	return true
}

// ParseHosts reads --hosts a,b,c.
func ParseHosts(list string) ([]string, error) {
	return ParseHostfile(strings.NewReader(strings.ReplaceAll(list, ",", "\n")), "--hosts")
}

// shellQuote quotes s for the remote shell ssh runs the command with.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// RunSSH runs the job across hosts started over ssh (see above). The exit
// status is the first non-zero status of a host's ssh (bcsd's, the failing
// rank's there), else 0.
func RunSSH(job Job, hosts []string) (res Result, err error) {
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
	a, err := prepareAcross(job, len(hosts))
	if err != nil {
		return res, err
	}
	res.JobID, res.Hosts, res.BytesPerSliceMax = a.jobID, a.hosts, a.cfg.BytesPerSliceMax
	hosts = hosts[:a.hosts]
	mon, err := newMonitorFor(job, a.cfg, a.jobID, NodeOf(job.Ranks, a.hosts, a.cfg.Cyclic(), a.cfg.PPN), stderr, false)
	if err != nil {
		return res, err
	}
	defer mon.close()
	ip, err := listenAddressFor(a.cfg.Address, hosts[0])
	if err != nil {
		return res, fmt.Errorf("bcsrun: %w", err)
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	if err != nil {
		return res, fmt.Errorf("bcsrun: PMI port: %w", err)
	}
	defer ln.Close()
	// The bcsds' control connections come to the same port (control.go);
	// rank 0's input goes through node 0's.
	ctl := newCtlServer(a, job.Ranks, hosts, mon, job.Stdin, true, stderr)
	rv, err := startRendezvous(ln, a, ctl, stderr)
	if err != nil {
		ctl.finish()
		return res, err
	}
	ctlFinished := false
	defer func() {
		if !ctlFinished {
			ctl.finish()
		}
		rv.close()
	}()
	srv := rv.srv

	start := time.Now()
	env, _ := json.Marshal(SSHEnv{Secret: hex.EncodeToString(a.secret), Job: a.jobID, Config: a.conf, Gang: job.AcrossGang})
	env = append(env, '\n')
	sshArgv := strings.Fields(a.cfg.SSH)
	type done struct {
		host int
		err  error
	}
	dones := make(chan done, len(hosts))
	var inputs []io.WriteCloser
	var cmds []*exec.Cmd
	closeInputs := func() {
		for _, w := range inputs {
			w.Close()
		}
	}
	for i, h := range hosts {
		remote := []string{"exec", shellQuote(a.bcsd), "--pmi-port", shellQuote(ln.Addr().String()), "--node", strconv.Itoa(i), "--host", shellQuote(h),
			"--ranks", strconv.Itoa(job.Ranks), "--", shellQuote(a.prog)}
		for _, arg := range job.Args {
			remote = append(remote, shellQuote(arg))
		}
		argv := append(append([]string(nil), sshArgv[1:]...), "-T", "-o", "BatchMode=yes", h, strings.Join(remote, " "))
		cmd := exec.Command(sshArgv[0], argv...)
		cmd.Stdout, cmd.Stderr = stdout, stderr
		w, err := cmd.StdinPipe()
		if err == nil {
			err = cmd.Start()
		}
		if err != nil {
			// The hosts already started may wait in their start-up fence:
			// failing the PMI server ends it, closing their input stops
			// them, and their waits (already running, in dones) are
			// bounded by killWait.
			srv.Close()
			closeInputs()
			stop := time.After(killWait)
			for left := len(cmds); left > 0; {
				select {
				case <-dones:
					left--
				case <-stop:
					for _, c := range cmds {
						c.Process.Kill()
					}
				}
			}
			return res, fmt.Errorf("bcsrun: starting %s for host %s: %w", sshArgv[0], h, err)
		}
		w.Write(env) // bcsd reads it first; a failed write shows as ssh's failure
		inputs, cmds = append(inputs, w), append(cmds, cmd)
		go func() { dones <- done{i, cmd.Wait()} }()
	}

	var sig os.Signal
	var kill <-chan time.Time
	for left := len(cmds); left > 0; {
		select {
		case d := <-dones:
			left--
			code := 0
			var ee *exec.ExitError
			if errors.As(d.err, &ee) {
				code = ee.ExitCode()
				if code < 0 {
					code = 1
				}
			} else if d.err != nil {
				code = 1
			}
			if code != 0 && res.ExitCode == 0 && sig == nil {
				res.ExitCode = code
				res.Message = fmt.Sprintf("bcsrun: the job failed on host %s (exit status %d)", hosts[d.host], code)
				closeInputs() // the other bcsds stop
				srv.Close()
				kill = time.After(killWait)
			}
		case s := <-sigs:
			if sig == nil {
				sig = s
				res.ExitCode = 128 + int(s.(syscall.Signal))
				res.Message = fmt.Sprintf("bcsrun: %v received, job terminated", s)
				fmt.Fprintln(stderr, res.Message)
				closeInputs()
				srv.Close()
				kill = time.After(killWait)
			}
		case <-kill:
			for _, c := range cmds {
				c.Process.Kill()
			}
		}
	}
	closeInputs()
	res.Elapsed = time.Since(start)
	ctlFinished = true
	cr := ctl.finish()
	if mon != nil && mon.on() && len(cr.unclean) > 0 {
		var cleans []*exec.Cmd
		for _, h := range cr.unclean {
			argv := append(append([]string(nil), sshArgv[1:]...), "-T", "-o", "BatchMode=yes", h, "exec "+shellQuote(a.bcsd)+" --cleanup "+shellQuote(a.jobID))
			cleans = append(cleans, exec.Command(sshArgv[0], argv...))
		}
		cleanStaging(cleans, cr.unclean, stderr)
	}
	cr.apply(&res, sig != nil, mon, hosts, stdout, stderr)
	return res, nil
}

// errJobNode marks a refusal of a connection that proved the job's secret:
// one of the job's own bcsds, so the job cannot go on without it.
var errJobNode = errors.New("a bcsd of this job was refused")

// admit checks a bcsd's first line on the PMI port and returns its node,
// claimed once.
func (a *across) admit(line string, claimed []bool, mu *sync.Mutex) (int, error) {
	f := strings.Fields(line)
	if len(f) != 3 || f[0] != "bcsd" {
		return 0, errors.New("not a bcsd")
	}
	node, err := strconv.Atoi(f[1])
	if err != nil || node < 0 || node >= len(claimed) {
		return 0, fmt.Errorf("node %q, want 0..%d", f[1], len(claimed)-1)
	}
	if !hmac.Equal([]byte(pmiAuth(a.secret, a.jobID, node)), []byte(line+"\n")) {
		return 0, fmt.Errorf("node %d: wrong proof of the job's secret", node)
	}
	mu.Lock()
	defer mu.Unlock()
	if claimed[node] {
		return 0, fmt.Errorf("%w: node %d claimed twice", errJobNode, node)
	}
	claimed[node] = true
	return node, nil
}

// listenAddressFor is ListenAddress, where "auto" means the local address
// that routes to host.
func listenAddressFor(key, host string) (string, error) {
	if key != "auto" {
		return ListenAddress(key)
	}
	if u, err := net.Dial("udp", net.JoinHostPort(host, "9")); err == nil { // no packet is sent
		ip := u.LocalAddr().(*net.UDPAddr).IP
		u.Close()
		return ip.String(), nil
	}
	return ListenAddress(key)
}
