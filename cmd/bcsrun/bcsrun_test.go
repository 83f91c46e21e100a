package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// raceEnabled is set when the tests run with -race; bcsrun is then built with
// the race detector too, so the runtime's goroutines are checked end to end.
var raceEnabled bool

var bin string

func TestMain(m *testing.M) {
	// The tests run jobs on this machine even when the test itself runs in
	// a Slurm allocation (bcsrun would take it); the Slurm tests set up their own.
	for _, v := range []string{"SLURM_JOB_ID", "SLURM_JOB_NUM_NODES", "SLURM_NNODES"} {
		os.Unsetenv(v)
	}
	dir, err := os.MkdirTemp("", "bcsrun-e2e-")
	if err != nil {
		panic(err)
	}
	bin = dir
	// bcsrun and bcsd carry the fault hook (BCS_FAULT_STALL_NODE, see
	// internal/launch/fault.go) only in a bcsfault build.
	args := []string{"build", "-tags", "bcsfault", "-o", dir + "/"}
	if raceEnabled {
		args = append(args, "-race")
	}
	for _, pkg := range [][]string{{".", "../bcsd"}, {"../../examples/...", "../../internal/e2eprog", "../../tools/..."}} {
		cmd := exec.Command("go", append(args, pkg...)...)
		cmd.Stderr = os.Stderr
		if err := cmd.Run(); err != nil {
			fmt.Fprintln(os.Stderr, "building test binaries:", err)
			os.Exit(1)
		}
		args = []string{"build", "-o", dir + "/"} // rank programs without -race: faster, and they have no goroutines of their own
	}
	// The kernel monitor's CO-RE cache (emds/kernel) in a directory of the
	// tests' own (the configuration reaches every host's bcsd).
	os.Setenv("BCS_MDS_KERNEL_CACHE", filepath.Join(dir, "cache"))
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

type run struct {
	code   int
	stdout string
	stderr string
}

// jobDeadline bounds a job run by bcsrun. It is a guard against a hang, not
// a measurement: the heaviest jobs here (TestCheckCleanPrograms' collectives
// on 4 ranks) take about 25 s at a load of 10 on the 2-core development
// host and about 120 s at a load of 20 (a time-sliced runtime's ranks wait
// for a core at every wake-up), so the guard leaves room for a loaded host.
// A job that overruns it is first asked for its goroutine dumps (quitJob).
const jobDeadline = 240 * time.Second

// bcsrun runs a job with a deadline and then checks that nothing is left behind.
func bcsrun(t *testing.T, args ...string) run {
	t.Helper()
	before := listeners(t)
	ctx, cancel := context.WithTimeout(context.Background(), jobDeadline)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(bin, "bcsrun"), args...)
	cmd.Dir = bin
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	cmd.Cancel = func() error { return quitJob(cmd.Process) }
	err := startJob(cmd)
	if err == nil {
		err = cmd.Wait()
	}
	if ctx.Err() != nil {
		t.Fatalf("bcsrun %v did not end within %v (hung, or very slow on a loaded host: the goroutine dumps of its ranks and of bcsrun, taken with SIGQUIT, are in its stderr)\nstdout:\n%s\nstderr:\n%s", args, jobDeadline, o.String(), e.String())
	}
	r := run{stdout: o.String(), stderr: e.String()}
	if ee, ok := err.(*exec.ExitError); ok {
		r.code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	nothingLeft(t, before)
	return r
}

// quitJob ends a job that overran its deadline so that the failure tells a
// hang from slowness: SIGQUIT to each of bcsrun's child processes that runs
// one of the test binaries (its ranks; a Go program prints every goroutine's
// stack on SIGQUIT, to its standard error, which bcsrun relays), then, if
// bcsrun has not ended the job by itself after a while, SIGQUIT to bcsrun
// (its own goroutines), and finally SIGKILL.
func quitJob(p *os.Process) error {
	alive := func() bool {
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.Pid))
		f := strings.Fields(string(stat))
		return err == nil && len(f) > 2 && f[2] != "Z"
	}
	waitGone := func(d time.Duration) {
		for end := time.Now().Add(d); alive() && time.Now().Before(end); {
			time.Sleep(100 * time.Millisecond)
		}
	}
	for _, c := range childrenOf(p.Pid) {
		syscall.Kill(c, syscall.SIGQUIT)
	}
	waitGone(10 * time.Second)
	if alive() {
		p.Signal(syscall.SIGQUIT)
		waitGone(5 * time.Second)
	}
	return p.Kill()
}

// childrenOf lists the processes whose parent is pid and whose executable is
// one of the test binaries.
func childrenOf(pid int) []int {
	var out []int
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		exe, err := os.Readlink(d + "/exe")
		if err != nil || !strings.HasPrefix(exe, bin+"/") {
			continue
		}
		stat, _ := os.ReadFile(d + "/stat")
		s := string(stat)
		// pid (comm) state ppid ...: comm may hold spaces, so cut after its ')'.
		if i := strings.LastIndexByte(s, ')'); i >= 0 {
			if f := strings.Fields(s[i+1:]); len(f) > 1 && f[1] == fmt.Sprint(pid) {
				var c int
				fmt.Sscan(filepath.Base(d), &c)
				out = append(out, c)
			}
		}
	}
	return out
}

// nothingLeft checks that no shared-memory file, no rank process and no new
// listening socket survived the job.
func nothingLeft(t *testing.T, before map[string]string) {
	t.Helper()
	if files := shmLeftBehind(); len(files) > 0 {
		t.Errorf("left in /dev/shm: %v", files)
	}
	deadline := time.Now().Add(2 * time.Second) // the kernel reaps asynchronously
	for {
		procs := ourProcesses()
		if len(procs) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Errorf("processes left behind: %v", procs)
			for _, p := range procs {
				var pid int
				fmt.Sscan(p, &pid)
				syscall.Kill(pid, syscall.SIGKILL)
			}
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	for l, inode := range listeners(t) {
		if before[l] == "" {
			// Other test packages run in parallel and listen too: only a socket
			// owned by one of this job's binaries is a leak.
			if owner := socketOwner(inode); owner != "" {
				t.Errorf("listening socket %s left behind by %s", l, owner)
			}
		}
	}
}

// shmLeftBehind lists the /dev/shm files that a job of this test binary left
// behind. A region is named bcs-<bcsrun pid>-<random>-node<k>; only a file
// whose bcsrun was started by this test process (its parent is us, or it is
// gone) and is no longer running counts, so another job on the machine, or
// another test package's, is never blamed.
func shmLeftBehind() []string {
	var out []string
	files, _ := filepath.Glob("/dev/shm/bcs-*")
	for _, f := range files {
		var pid int
		if _, err := fmt.Sscanf(filepath.Base(f), "bcs-%d-", &pid); err != nil || !startedHere(pid) {
			continue
		}
		out = append(out, f)
	}
	return out
}

// started records the pids of the bcsrun processes this test binary started
// (see startJob); a region file is ours only if its bcsrun pid is here.
var started sync.Map

// startJob starts cmd and records its pid as one of ours.
func startJob(cmd *exec.Cmd) error {
	if err := cmd.Start(); err != nil {
		return err
	}
	started.Store(cmd.Process.Pid, true)
	return nil
}

func startedHere(pid int) bool {
	_, ok := started.Load(pid)
	return ok
}

// socketOwner names the process (pid and executable) holding socket inode, if
// it runs one of the test binaries; "" otherwise.
func socketOwner(inode string) string {
	fds, _ := filepath.Glob("/proc/[0-9]*/fd/*")
	for _, fd := range fds {
		if link, err := os.Readlink(fd); err == nil && link == "socket:["+inode+"]" {
			pid := strings.Split(fd, "/")[2]
			if exe, err := os.Readlink("/proc/" + pid + "/exe"); err == nil && strings.HasPrefix(exe, bin+"/") {
				return pid + " " + exe
			}
		}
	}
	return ""
}

// ourProcesses lists live processes running one of the test binaries.
func ourProcesses() []string {
	var out []string
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		exe, err := os.Readlink(d + "/exe")
		if err != nil || !strings.HasPrefix(exe, bin+"/") {
			continue
		}
		// The compiler wrappers are no part of a job: TestSlurmAcrossHosts
		// compiles its C programs with bin/bcscc in the background while
		// its other subtests check for leftovers.
		if b := filepath.Base(exe); b == "bcscc" || b == "bcscxx" {
			continue
		}
		stat, _ := os.ReadFile(d + "/stat")
		if f := strings.Fields(string(stat)); len(f) > 2 && f[2] == "Z" {
			continue
		}
		out = append(out, filepath.Base(d)+" "+exe)
	}
	return out
}

// listeners maps every listening TCP socket (local address) to its inode.
func listeners(t *testing.T) map[string]string {
	m := map[string]string{}
	for _, f := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		fh, err := os.Open(f)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(fh)
		for sc.Scan() {
			fs := strings.Fields(sc.Text())
			if len(fs) > 9 && fs[3] == "0A" { // TCP_LISTEN
				m[fs[1]] = fs[9]
			}
		}
		fh.Close()
	}
	return m
}

func TestExchangeAcrossRanksAndNodes(t *testing.T) {
	for _, c := range []struct{ ranks, nodes int }{{1, 1}, {2, 1}, {4, 1}, {8, 1}, {2, 2}, {4, 2}, {8, 2}, {4, 4}, {8, 4}} {
		t.Run(fmt.Sprintf("n%d_nodes%d", c.ranks, c.nodes), func(t *testing.T) {
			r := bcsrun(t, "-n", fmt.Sprint(c.ranks), "--nodes", fmt.Sprint(c.nodes), "--timeslice", "500us", "./e2eprog", "exchange")
			if r.code != 0 || !strings.Contains(r.stdout, fmt.Sprintf("exchange ok: %d ranks", c.ranks)) {
				t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
			}
		})
	}
}

func TestSemantics(t *testing.T) {
	for _, args := range [][]string{{"-n", "2", "semantics"}, {"-n", "3", "--nodes", "3", "semantics"}, {"-n", "2", "--restart", "early", "semantics"},
		{"-n", "2", "headtohead"}, {"-n", "2", "--nodes", "2", "headtohead"}} {
		t.Run(strings.Join(args, "_"), func(t *testing.T) {
			scenario := args[len(args)-1]
			r := bcsrun(t, append(args[:len(args)-1:len(args)-1], "./e2eprog", scenario)...)
			if r.code != 0 || !strings.Contains(r.stdout, scenario+" ok") {
				t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
			}
		})
	}
}

func TestExamples(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"-n", "2", "./pingpong", "-iters", "20", "-size", "100000"}, "data verified"},
		{[]string{"-n", "4", "--nodes", "2", "./ring"}, "ring: lap 2 ok, token 6"},
		{[]string{"-n", "4", "--nodes", "2", "./stencil", "-iters", "20"}, "checksum ok"},
		{[]string{"-n", "3", "--tag-output", "./ring", "-laps", "1"}, "[0] ring: lap 0 ok, token 3"},
		{[]string{"-n", "3", "--nodes", "2", "./cg", "-n", "999", "-iters", "60"}, "cg: residual history identical to the serial run, bit for bit"},
		{[]string{"-n", "2", "./barrier", "-iters", "50"}, "barrier: 50 iterations"},
		{[]string{"-n", "2", "/bin/echo", "hello"}, "hello\nhello\n"}, // any program, like mpirun -n 2 hostname
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args, "_"), func(t *testing.T) {
			r := bcsrun(t, c.args...)
			if r.code != 0 || !strings.Contains(r.stdout, c.want) {
				t.Fatalf("exit %d, want stdout containing %q\nstdout:\n%s\nstderr:\n%s", r.code, c.want, r.stdout, r.stderr)
			}
		})
	}
}

func TestFailingJobs(t *testing.T) {
	cases := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"rank exits non-zero", []string{"-n", "2", "./e2eprog", "exit3"}, 3, "rank 1 exited with status 3"},
		{"rank exits non-zero, 2 nodes", []string{"-n", "4", "--nodes", "2", "./e2eprog", "exit3"}, 3, "rank 1 exited with status 3"},
		{"rank skips Finalize", []string{"-n", "2", "./e2eprog", "nofinalize"}, 1, "rank 1 exited without calling MPI_Finalize"},
		{"rank killed", []string{"-n", "4", "--nodes", "2", "./e2eprog", "kill"}, 137, "rank 3 was killed by signal killed"},
		{"program missing", []string{"-n", "2", "./no-such-program"}, 2, `program "./no-such-program"`},
		{"invalid rank, fatal handler", []string{"-n", "2", "./e2eprog", "badrank"}, 1, "bcsmpi: rank 1: MPI_Send: MPI_ERR_RANK: dest = 99, want 0..1 or MPI_PROC_NULL (MPI_ERRORS_ARE_FATAL: aborting the job)"},
		{"invalid tag, fatal handler", []string{"-n", "2", "./e2eprog", "badtag"}, 1, "bcsmpi: rank 0: MPI_Recv: MPI_ERR_TAG: tag = -7, want 0..1073741823 or MPI_ANY_TAG"},
		{"nil communicator", []string{"-n", "2", "./e2eprog", "nilcomm"}, 1, "bcsmpi: rank 0: MPI_Send: MPI_ERR_COMM: comm = nil, want a communicator such as mpiapi.World()"},
		{"communicator used after Free", []string{"-n", "2", "./e2eprog", "commfree"}, 1, "MPI_Barrier: MPI_ERR_COMM: communicator 1 was freed with MPI_Comm_free"},
		{"Finalize with a pending request, strict", []string{"-n", "2", "./e2eprog", "pending"}, 1, "bcsmpi: error: 1 resource(s) were not released by the end of the job (leak_check: error):\n  rank 0: request #1, MPI_Irecv from rank 1, tag 9, was still pending"},
		{"truncation, fatal handler", []string{"-n", "2", "./e2eprog", "truncate"}, 1, "bcsmpi: rank 1: MPI_Recv: MPI_ERR_TRUNCATE: message from rank 0 tag 0 is longer than the receive buffer (16 bytes received)"},
		{"bad timeslice", []string{"-n", "2", "--timeslice", "1us", "./e2eprog", "exchange"}, 2, "timeslice = 1µs, want 50µs .. 100ms"},
		{"more nodes than ranks", []string{"-n", "2", "--nodes", "3", "./e2eprog", "exchange"}, 2, "--nodes 3 is more than the 2 ranks"},
	}
	t.Setenv("BCS_LEAK_CHECK", "error")
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := bcsrun(t, c.args...)
			if r.code != c.code || !strings.Contains(r.stderr, c.want) {
				t.Fatalf("exit %d (want %d), want stderr containing %q\nstdout:\n%s\nstderr:\n%s", r.code, c.code, c.want, r.stdout, r.stderr)
			}
		})
	}
}

func TestSIGTERMShutsDownCleanly(t *testing.T) {
	before := listeners(t)
	cmd := exec.Command(filepath.Join(bin, "bcsrun"), "-n", "4", "--nodes", "2", "./e2eprog", "hang")
	cmd.Dir = bin
	var e bytes.Buffer
	cmd.Stderr = &e
	out, _ := cmd.StdoutPipe()
	if err := startJob(cmd); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(out)
	for i := 0; i < 4; i++ { // every rank is inside MPI and blocked
		if !sc.Scan() {
			t.Fatalf("rank output ended early; stderr:\n%s", e.String())
		}
	}
	terminate(t, cmd)
	if cmd.ProcessState.ExitCode() != 128+15 || !strings.Contains(e.String(), "terminated received, job terminated") {
		t.Fatalf("exit %d, stderr:\n%s", cmd.ProcessState.ExitCode(), e.String())
	}
	nothingLeft(t, before)
}

func TestDeadlockDetection(t *testing.T) {
	t.Setenv("BCS_DEADLOCK_SLICES", "50")
	cases := []struct {
		name string
		args []string
		want []string
	}{
		{"mutual receive", []string{"-n", "3", "./e2eprog", "deadlock"}, []string{
			"deadlock: every MPI rank has been blocked for 50 slices",
			"rank 0 (in MPI_Recv): waits for a message from rank 1 (tag 7)",
			"rank 1 (in MPI_Recv): waits for a message from rank 0 (tag 7)",
			"rank 2 (finalized)",
			"wait-for cycle: 0 -> 1 -> 0",
		}},
		{"a communicator freed by one member only", []string{"-n", "2", "./e2eprog", "freeone"}, []string{
			"deadlock: every MPI rank has been blocked for 50 slices",
			"rank 0 (in MPI_Finalize)",
			"rank 1 (finalized)",
		}},
		{"head-to-head large sends on 2 nodes", []string{"-n", "2", "--nodes", "2", "./e2eprog", "sendsend"}, []string{
			"rank 0 (in MPI_Send): its send to rank 1 (tag 5, 1048576 bytes) waits for a matching receive",
			"rank 1 (in MPI_Send): its send to rank 0 (tag 5, 1048576 bytes) waits for a matching receive",
			"wait-for cycle: 0 -> 1 -> 0",
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := bcsrun(t, c.args...)
			if r.code != 1 {
				t.Fatalf("exit %d, want 1\n%s", r.code, r.stderr)
			}
			for _, w := range c.want {
				if !strings.Contains(r.stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, r.stderr)
				}
			}
		})
	}
}

func TestDeadlockWarnKeepsWaiting(t *testing.T) {
	t.Setenv("BCS_DEADLOCK_SLICES", "20")
	t.Setenv("BCS_DEADLOCK_ACTION", "warn")
	before := listeners(t)
	cmd := exec.Command(filepath.Join(bin, "bcsrun"), "-n", "2", "./e2eprog", "deadlock")
	cmd.Dir = bin
	stderr, _ := cmd.StderrPipe()
	if err := startJob(cmd); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stderr)
	for sc.Scan() { // the report arrives, and the job is still running
		if strings.Contains(sc.Text(), "the job keeps waiting") {
			break
		}
	}
	if cmd.ProcessState != nil {
		t.Fatal("job ended in warn mode")
	}
	cmd.Process.Signal(syscall.SIGTERM)
	go io.Copy(io.Discard, stderr)
	cmd.Wait()
	if cmd.ProcessState.ExitCode() != 143 {
		t.Fatalf("exit %d after SIGTERM", cmd.ProcessState.ExitCode())
	}
	nothingLeft(t, before)
}

func TestUnmatchedMessageReported(t *testing.T) {
	r := bcsrun(t, "-n", "2", "./e2eprog", "unmatched")
	if r.code != 0 || !strings.Contains(r.stderr, "bcsmpi: warning: 1 resource(s) were not released by the end of the job (leak_check: error fails the job, off silences this):\n  message rank 0 -> rank 1, tag 3, 4 bytes: sent but never received") {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
}

func TestSilentNodeAbortsJob(t *testing.T) {
	t.Setenv("BCS_NODE_TIMEOUT", "300ms")
	t.Setenv("BCS_FAULT_STALL_NODE", "1@300")
	start := time.Now()
	r := bcsrun(t, "-n", "4", "--nodes", "2", "./e2eprog", "hang")
	// The stall starts at the first slice >= 300 (slices may be skipped on a busy host).
	if r.code != 1 || !strings.Contains(r.stderr, "node 1: stopped answering: no DEM report for slice 3") || !strings.Contains(r.stderr, "within 300ms (node_timeout)") {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	t.Logf("silent node detected and job torn down in %v", time.Since(start))
}

func TestSharedMemoryIsPrivate(t *testing.T) {
	r := bcsrun(t, "-n", "2", "./e2eprog", "shm")
	want := fmt.Sprintf("shm -rw------- uid %d\n", os.Getuid())
	if r.code != 0 || strings.Count(r.stdout, want) != 2 {
		t.Fatalf("exit %d, want two lines %q\n%s%s", r.code, want, r.stdout, r.stderr)
	}
}

// terminate sends SIGTERM to a started bcsrun and waits (bounded) for it to exit.
func terminate(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	signalAndWait(t, cmd, syscall.SIGTERM)
}

// signalAndWait sends sig to a started bcsrun and waits (bounded: a hang is a
// failure, not a stuck suite) for it to exit.
func signalAndWait(t *testing.T, cmd *exec.Cmd, sig syscall.Signal) {
	t.Helper()
	cmd.Process.Signal(sig)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("bcsrun did not exit within 30s of %v", sig)
	}
}
