// Package slurmtest starts a real Slurm cluster on this machine for tests:
// munged, slurmctld, and one slurmd per host, each host a network namespace
// on a bridge, as Debian packages them (slurmctld, slurmd, slurm-client,
// munge). Tests then run srun, salloc and sbatch against it with Env.
//
// Everything a Cluster starts it stops by process id at Close, together
// with every process still inside its namespaces (slurmstepd reparents to
// init, so a killed slurmd does not take its steps along); it deletes its
// namespaces, bridge and files. One Cluster runs on the machine at a time:
// Start takes an exclusive lock (/run/lock/bcs-slurmtest.lock), so that the
// fixed bridge, namespace names and ports never collide, and removes what a
// killed earlier run left under those names.
//
// Without Slurm installed, Start skips the test, except under CI=true, where
// .ci/run installs the packages and a missing one is a failure.
//
// Root is required (namespaces, bridge, munged); Start skips without it.
package slurmtest

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Fixed names, safe because of the machine-wide lock.
const (
	bridge   = "bcsslurm0"
	nsPrefix = "bcsslurm"
	subnet   = "10.231.77."
	ctlPort  = 16817
	slurmdPt = 16818
	lockPath = "/run/lock/bcs-slurmtest.lock"
)

// Cluster is a running Slurm with Hosts compute hosts.
type Cluster struct {
	Hosts int
	Dir   string // configuration, state, spool and logs
	Conf  string // slurm.conf
	// HostAddr[i] is host i's address on the bridge; the controller (and
	// whatever the test runs outside the namespaces) is CtlAddr.
	HostAddr []string
	CtlAddr  string

	t     testing.TB
	lock  *os.File
	procs []*exec.Cmd
	nsIno map[uint64]bool
}

// Need returns the missing Slurm and munge programs.
func Need() []string {
	var missing []string
	for _, p := range []string{"munged", "slurmctld", "slurmd", "srun", "sinfo", "scontrol", "ip", "nsenter"} {
		if _, err := exec.LookPath(p); err != nil {
			missing = append(missing, p)
		}
	}
	return missing
}

// Start starts a cluster of hosts compute hosts (1..9) with cpus CPUs each
// (Slurm's view; they share this machine's CPUs), and registers Close with
// t.Cleanup. It skips the test when Slurm is not installed (fails under
// CI=true) or when not root.
func Start(t testing.TB, hosts, cpus int) *Cluster {
	t.Helper()
	if hosts < 1 || hosts > 9 {
		t.Fatalf("slurmtest: %d hosts, want 1..9", hosts)
	}
	if m := Need(); len(m) > 0 {
		if os.Getenv("CI") != "" {
			t.Fatalf("slurmtest: %s not installed; .ci/run installs slurmctld slurmd slurm-client munge", strings.Join(m, ", "))
		}
		t.Skipf("slurmtest: %s not installed (apt-get install slurmctld slurmd slurm-client munge)", strings.Join(m, ", "))
	}
	if os.Geteuid() != 0 {
		t.Skip("slurmtest: needs root (network namespaces, munged)")
	}
	c := &Cluster{Hosts: hosts, CtlAddr: subnet + "1", t: t, nsIno: map[uint64]bool{}}
	lock, err := os.OpenFile(lockPath, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		t.Fatalf("slurmtest: %v", err)
	}
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		lock.Close()
		t.Fatalf("slurmtest: lock %s: %v", lockPath, err)
	}
	c.lock = lock
	t.Cleanup(c.Close)
	c.removeNetwork() // what a killed earlier run left
	killStale()       // its daemons and steps, which outlive their namespaces' names

	// Files. munged wants the key's directories not writable by others.
	if c.Dir, err = os.MkdirTemp("", "bcs-slurm-"); err != nil {
		t.Fatalf("slurmtest: %v", err)
	}
	os.Chmod(c.Dir, 0o711)
	key := make([]byte, 1024)
	if f, err := os.Open("/dev/urandom"); err == nil {
		f.Read(key)
		f.Close()
	}
	c.must(os.WriteFile(c.path("munge.key"), key, 0o400))
	for _, d := range []string{"state", "log"} {
		c.must(os.MkdirAll(c.path(d), 0o755))
	}

	// Network: a bridge in this namespace, one veth per host namespace.
	c.ip("link", "add", bridge, "type", "bridge")
	c.ip("addr", "add", c.CtlAddr+"/24", "dev", bridge)
	c.ip("link", "set", bridge, "up")
	var names []string
	for i := 1; i <= hosts; i++ {
		ns, addr := c.ns(i), subnet+strconv.Itoa(10+i)
		c.HostAddr = append(c.HostAddr, addr)
		names = append(names, "h"+strconv.Itoa(i))
		c.ip("netns", "add", ns)
		c.ip("link", "add", "vbcs"+strconv.Itoa(i), "type", "veth", "peer", "name", "eth0", "netns", ns)
		c.ip("link", "set", "vbcs"+strconv.Itoa(i), "master", bridge, "up")
		c.ip("-n", ns, "addr", "add", addr+"/24", "dev", "eth0")
		c.ip("-n", ns, "link", "set", "eth0", "up")
		c.ip("-n", ns, "link", "set", "lo", "up")
		var st syscall.Stat_t
		c.must(syscall.Stat("/run/netns/"+ns, &st))
		c.nsIno[st.Ino] = true
		for _, d := range []string{"spool", "tmp"} {
			c.must(os.MkdirAll(c.path(d, names[i-1]), 0o755))
		}
	}

	host, _ := os.Hostname()
	host, _, _ = strings.Cut(host, ".")
	var conf bytes.Buffer
	fmt.Fprintf(&conf, `ClusterName=bcstest
SlurmctldHost=%s(%s)
SlurmctldPort=%d
SlurmdPort=%d
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=%[5]s/munge.sock
CredType=cred/munge
StateSaveLocation=%[5]s/state
SlurmdSpoolDir=%[5]s/spool/%%n
TmpFS=%[5]s/tmp/%%n
SlurmctldPidFile=%[5]s/slurmctld.pid
SlurmdPidFile=%[5]s/slurmd-%%n.pid
SlurmctldLogFile=%[5]s/log/slurmctld.log
SlurmdLogFile=%[5]s/log/slurmd-%%n.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SwitchType=switch/none
MpiDefault=none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
SchedulerType=sched/builtin
MailProg=/bin/true
PlugStackConfig=/dev/null
KillWait=2
MessageTimeout=5
NodeName=h[1-%[6]d] NodeAddr=%[7]s[11-%[8]d] CPUs=%[9]d State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
`, host, c.CtlAddr, ctlPort, slurmdPt, c.Dir, hosts, subnet, 10+hosts, cpus)
	if hosts == 1 {
		conf = *bytes.NewBufferString(strings.Replace(conf.String(), "NodeName=h[1-1] NodeAddr="+subnet+"[11-11]", "NodeName=h1 NodeAddr="+subnet+"11", 1))
	}
	c.Conf = c.path("slurm.conf")
	c.must(os.WriteFile(c.Conf, conf.Bytes(), 0o644))

	// Daemons, in the foreground so that their pids are ours to stop.
	c.daemon("munged", nil, "munged", "-F", "-f", "--socket="+c.path("munge.sock"), "--key-file="+c.path("munge.key"),
		"--log-file="+c.path("log", "munged.log"), "--pid-file="+c.path("munged.pid"), "--seed-file="+c.path("munged.seed"), "--num-threads=10")
	c.waitFor("munged's socket", func() bool { _, err := os.Stat(c.path("munge.sock")); return err == nil })
	c.daemon("slurmctld", nil, "slurmctld", "-D", "-i", "-f", c.Conf)
	for i := 1; i <= hosts; i++ {
		c.daemon("slurmd-"+names[i-1], nil, "nsenter", "--net=/run/netns/"+c.ns(i), "slurmd", "-D", "-f", c.Conf, "-N", names[i-1])
	}
	c.waitFor("every host idle in sinfo", func() bool {
		out, err := c.Command("sinfo", "-h", "-o", "%T %D").Output()
		return err == nil && strings.TrimSpace(string(out)) == "idle "+strconv.Itoa(hosts)
	})
	return c
}

func (c *Cluster) ns(i int) string { return nsPrefix + strconv.Itoa(i) }

func (c *Cluster) path(p ...string) string { return filepath.Join(append([]string{c.Dir}, p...)...) }

func (c *Cluster) must(err error) {
	c.t.Helper()
	if err != nil {
		c.t.Fatalf("slurmtest: %v", err)
	}
}

func (c *Cluster) ip(args ...string) {
	c.t.Helper()
	if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
		c.t.Fatalf("slurmtest: ip %s: %v: %s", strings.Join(args, " "), err, out)
	}
}

// daemon starts a foreground daemon with its output in log/NAME.out.
func (c *Cluster) daemon(name string, env []string, argv ...string) {
	c.t.Helper()
	out, err := os.Create(c.path("log", name+".out"))
	c.must(err)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.Env = append(os.Environ(), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	err = cmd.Start()
	out.Close()
	c.must(err)
	c.procs = append(c.procs, cmd)
}

// waitFor polls cond every 50 ms for at most 60 s: a bound on start-up, not
// an assertion about speed; on timeout it fails with the daemons' logs.
func (c *Cluster) waitFor(what string, cond func() bool) {
	c.t.Helper()
	for end := time.Now().Add(60 * time.Second); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		if cond() {
			return
		}
	}
	c.t.Fatalf("slurmtest: %s not reached in 60 s\n%s", what, c.Logs())
}

// Logs returns the tail of every daemon's log, for failure messages.
func (c *Cluster) Logs() string {
	var b strings.Builder
	files, _ := filepath.Glob(c.path("log", "*"))
	for _, f := range files {
		data, _ := os.ReadFile(f)
		if len(data) > 2000 {
			data = data[len(data)-2000:]
		}
		fmt.Fprintf(&b, "== %s\n%s\n", filepath.Base(f), data)
	}
	return b.String()
}

// Env is the environment for Slurm's clients (srun, salloc, sbatch, ...).
func (c *Cluster) Env() []string { return append(os.Environ(), "SLURM_CONF="+c.Conf) }

// Command returns a command for one of Slurm's clients, run in this
// (the controller's) namespace with the cluster's configuration.
func (c *Cluster) Command(name string, args ...string) *exec.Cmd {
	cmd := exec.Command(name, args...)
	cmd.Env = c.Env()
	return cmd
}

// CommandContext is Command bounded by ctx.
func (c *Cluster) CommandContext(ctx context.Context, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = c.Env()
	return cmd
}

// Close cancels every job, stops the daemons, kills whatever still runs in
// the hosts' namespaces and removes the network and the files. Safe to call
// more than once.
func (c *Cluster) Close() {
	if c.lock == nil {
		return
	}
	if len(c.procs) > 0 {
		c.Command("scancel", "--user=root").Run()
	}
	for _, p := range c.procs {
		p.Process.Signal(syscall.SIGTERM)
	}
	for _, p := range c.procs {
		done := make(chan struct{})
		go func() { p.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			p.Process.Kill()
			<-done
		}
	}
	c.procs = nil
	c.killInNamespaces()
	c.removeNetwork()
	if c.Dir != "" {
		os.RemoveAll(c.Dir)
	}
	c.lock.Close() // releases the flock
	c.lock = nil
}

// killInNamespaces SIGKILLs every process whose network namespace is one of
// the cluster's hosts (slurmstepd and the tasks it left), and waits until
// they are gone.
func (c *Cluster) killInNamespaces() {
	for round := 0; round < 100; round++ {
		left := 0
		ents, _ := os.ReadDir("/proc")
		for _, e := range ents {
			pid, err := strconv.Atoi(e.Name())
			if err != nil || pid == os.Getpid() {
				continue
			}
			var st syscall.Stat_t
			if syscall.Stat("/proc/"+e.Name()+"/ns/net", &st) != nil || !c.nsIno[st.Ino] {
				continue
			}
			if data, err := os.ReadFile("/proc/" + e.Name() + "/stat"); err == nil {
				if i := bytes.LastIndexByte(data, ')'); i > 0 && i+2 < len(data) && data[i+2] == 'Z' {
					continue // a zombie: its parent (init or us) reaps it
				}
			}
			syscall.Kill(pid, syscall.SIGKILL)
			left++
		}
		if left == 0 {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// removeNetwork deletes the bridge and the namespaces under the fixed names.
func (c *Cluster) removeNetwork() {
	for i := 1; i <= 9; i++ {
		exec.Command("ip", "netns", "del", c.ns(i)).Run()
		exec.Command("ip", "link", "del", "vbcs"+strconv.Itoa(i)).Run()
	}
	exec.Command("ip", "link", "del", bridge).Run()
}

// staleDir is the prefix of every cluster's directory (os.MkdirTemp).
var staleDir = filepath.Join(os.TempDir(), "bcs-slurm-")

// killStale ends what an earlier run killed before its Close (a test binary
// ended by go test's -timeout) left behind, and removes its directories:
// every process whose environment or command line names a cluster directory
// (slurmctld, slurmd and munged are started with their configuration there,
// and slurmstepd inherits SLURM_CONF). Called holding the machine-wide lock,
// so no live cluster owns such a process. It returns how many it killed.
func killStale() int {
	killed := 0
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		env, _ := os.ReadFile("/proc/" + e.Name() + "/environ")
		cmd, _ := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if bytes.Contains(env, []byte(staleDir)) || bytes.Contains(cmd, []byte(staleDir)) {
			if syscall.Kill(pid, syscall.SIGKILL) == nil {
				killed++
			}
		}
	}
	if dirs, _ := filepath.Glob(staleDir + "*"); len(dirs) > 0 {
		for _, d := range dirs {
			os.RemoveAll(d)
		}
	}
	return killed
}
