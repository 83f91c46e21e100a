package main

// The user's daemon (bcsd start) and bcsrun attached to it (issue 17,
// parts 1 and 6; package internal/gangd). Each test starts its own daemon
// with its runtime directory in a temporary directory (BCS_RUNTIME_DIR), and
// stops it. Jobs run one at a time, except in the queueing test, whose
// multiprogramming level of 1 lets one job run at once.

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// daemonProc is a bcsd start --foreground started by a test.
type daemonProc struct {
	cmd  *exec.Cmd
	dir  string   // its runtime directory
	env  []string // the environment for bcsrun and bcsd commands that talk to it
	mu   sync.Mutex
	cond *sync.Cond
	log  strings.Builder
	eof  bool // its standard error has ended
}

// startGangd starts a daemon in runtime directory dir ("": a new one) with
// extra environment variables, and waits until it listens. It is stopped
// (SIGTERM) at the end of the test unless the test stopped it.
func startGangd(t *testing.T, dir string, extra ...string) *daemonProc {
	t.Helper()
	return startGangdIn(t, "", dir, extra...)
}

// startGangdIn is startGangd in network namespace ns ("": this one).
func startGangdIn(t *testing.T, ns, dir string, extra ...string) *daemonProc {
	t.Helper()
	if dir == "" {
		dir = filepath.Join(t.TempDir(), "run")
	}
	g := &daemonProc{dir: dir, env: append(os.Environ(), "BCS_RUNTIME_DIR="+dir)}
	g.cond = sync.NewCond(&g.mu)
	g.cmd = exec.Command(filepath.Join(bin, "bcsd"), "start", "--foreground")
	if ns != "" { // nsenter execs bcsd: the pid is the daemon's
		g.cmd = exec.Command("nsenter", "--net=/run/netns/"+ns, filepath.Join(bin, "bcsd"), "start", "--foreground")
	}
	g.cmd.Env = append(append([]string(nil), g.env...), extra...)
	g.cmd.Dir = "/" // the jobs' paths must not depend on the daemon's
	stderr, err := g.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := startJob(g.cmd); err != nil { // its regions are named after its pid: shmLeftBehind counts them
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			g.mu.Lock()
			g.log.WriteString(sc.Text() + "\n")
			g.cond.Broadcast()
			g.mu.Unlock()
		}
		g.mu.Lock()
		g.eof = true
		g.cond.Broadcast()
		g.mu.Unlock()
	}()
	t.Cleanup(func() {
		if g.cmd.ProcessState == nil {
			signalAndWait(t, g.cmd, syscall.SIGTERM)
		}
	})
	g.waitFor(t, "bcsd: listening on "+filepath.Join(dir, "bcsd.sock"))
	return g
}

// waitFor returns once the daemon's log holds s; the end of the log, or a
// minute without it, fails the test.
func (g *daemonProc) waitFor(t *testing.T, s string) {
	t.Helper()
	expired := false
	timer := time.AfterFunc(time.Minute, func() {
		g.mu.Lock()
		expired = true
		g.cond.Broadcast()
		g.mu.Unlock()
	})
	defer timer.Stop()
	g.mu.Lock()
	defer g.mu.Unlock()
	for !strings.Contains(g.log.String(), s) {
		if g.eof || expired {
			t.Fatalf("the daemon's log lacks %q (ended: %v)\n%s", s, g.eof, g.log.String())
		}
		g.cond.Wait()
	}
}

func (g *daemonProc) logText() string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.log.String()
}

// stop stops the daemon with bcsd stop and waits for it to exit.
func (g *daemonProc) stop(t *testing.T) {
	t.Helper()
	r := command(t, g.env, bin, "", filepath.Join(bin, "bcsd"), "stop")
	if r.code != 0 || !strings.Contains(r.stderr, fmt.Sprintf("bcsd: stopped (pid %d)", g.cmd.Process.Pid)) {
		t.Fatalf("bcsd stop: exit %d\n%s", r.code, r.stderr)
	}
	done := make(chan error, 1)
	go func() { done <- g.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("the daemon exited with %v\n%s", err, g.logText())
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("the daemon did not exit within 30s of bcsd stop")
	}
}

// command runs a program with env in dir, stdin as its input, with a
// deadline, and returns how it ended; unlike bcsrun() it does not check for
// leftovers, since the daemon is one of the test binaries' processes.
func command(t *testing.T, env []string, dir, stdin, prog string, args ...string) run {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, prog, args...)
	cmd.Env, cmd.Dir = env, dir
	cmd.Stdin = strings.NewReader(stdin)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := startJob(cmd)
	if err == nil {
		err = cmd.Wait()
	}
	if ctx.Err() != nil {
		t.Fatalf("%s %v hung (killed after 90s)\nstdout:\n%s\nstderr:\n%s", prog, args, o.String(), e.String())
	}
	r := run{stdout: o.String(), stderr: e.String()}
	if ee, ok := err.(*exec.ExitError); ok {
		r.code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return r
}

func (g *daemonProc) bcsrun(t *testing.T, dir, stdin string, args ...string) run {
	t.Helper()
	return command(t, g.env, dir, stdin, filepath.Join(bin, "bcsrun"), args...)
}

// bcsd start daemonises and says so; a second start is refused naming the
// first's pid; status (bcsd and bcsrun) lists it; stop ends it and removes
// its socket; then status says nothing runs and bcsrun --gang=on fails.
func TestGangdStartStatusStop(t *testing.T) {
	before := listeners(t)
	dir := filepath.Join(t.TempDir(), "run")
	env := append(os.Environ(), "BCS_RUNTIME_DIR="+dir)
	bcsd := filepath.Join(bin, "bcsd")
	sock := filepath.Join(dir, "bcsd.sock")
	if r := command(t, env, bin, "", bcsd, "status"); r.code != 3 || !strings.Contains(r.stderr, "bcsd: not running (no daemon at "+sock+")") {
		t.Fatalf("status before start: exit %d\n%s", r.code, r.stderr)
	}
	r := command(t, env, bin, "", bcsd, "start")
	var pid int
	if _, err := fmt.Sscanf(r.stderr, "bcsd: started (pid %d, socket ", &pid); r.code != 0 || err != nil || !strings.Contains(r.stderr, sock+", log "+filepath.Join(dir, "bcsd.log")+")") {
		t.Fatalf("bcsd start: exit %d\n%s", r.code, r.stderr)
	}
	started.Store(pid, true)
	stopped := false
	defer func() {
		if !stopped {
			syscall.Kill(pid, syscall.SIGTERM)
		}
	}()
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("runtime directory: %v %v, want mode 0700", fi.Mode(), err)
	}
	r = command(t, env, bin, "", bcsd, "start")
	if want := fmt.Sprintf("bcsd: already running (pid %d, socket %s)", pid, sock); r.code != 1 || !strings.Contains(r.stderr, want) {
		t.Fatalf("second bcsd start: exit %d, want 1 and %q\n%s", r.code, want, r.stderr)
	}
	want := fmt.Sprintf("bcsd: pid %d, socket %s, multiprogramming level 2: 0 running, 0 queued\n", pid, sock)
	if r := command(t, env, bin, "", bcsd, "status"); r.code != 0 || r.stdout != want {
		t.Fatalf("bcsd status: exit %d, stdout %q, want %q\n%s", r.code, r.stdout, want, r.stderr)
	}
	if r := command(t, env, bin, "", filepath.Join(bin, "bcsrun"), "--status"); r.code != 0 || r.stdout != want {
		t.Fatalf("bcsrun --status: exit %d, stdout %q, want %q\n%s", r.code, r.stdout, want, r.stderr)
	}
	if r := command(t, env, bin, "", filepath.Join(bin, "bcsrun"), "-n", "2", "./e2eprog", "exchange"); r.code != 0 || !strings.Contains(r.stdout, "exchange ok") {
		t.Fatalf("a job through the daemon: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := command(t, env, bin, "", bcsd, "stop"); r.code != 0 || !strings.Contains(r.stderr, fmt.Sprintf("bcsd: stopped (pid %d)", pid)) {
		t.Fatalf("bcsd stop: exit %d\n%s", r.code, r.stderr)
	}
	stopped = true
	log, _ := os.ReadFile(filepath.Join(dir, "bcsd.log"))
	for _, w := range []string{"job 1: 2 rank(s) of " + filepath.Join(bin, "e2eprog"), "job 1: ended with status 0", "stopped (0 running job(s) ended, 0 queued dropped)"} {
		if !strings.Contains(string(log), w) {
			t.Errorf("bcsd.log lacks %q:\n%s", w, log)
		}
	}
	if _, err := os.Lstat(sock); err == nil {
		t.Errorf("socket %s left after bcsd stop", sock)
	}
	if r := command(t, env, bin, "", bcsd, "status"); r.code != 3 {
		t.Errorf("status after stop: exit %d\n%s", r.code, r.stderr)
	}
	if r := command(t, env, bin, "", bcsd, "stop"); r.code != 0 || !strings.Contains(r.stderr, "bcsd: not running") {
		t.Errorf("stop after stop: exit %d\n%s", r.code, r.stderr)
	}
	r = command(t, env, bin, "", filepath.Join(bin, "bcsrun"), "--gang=on", "-n", "1", "./e2eprog", "exchange")
	if r.code != 2 || !strings.Contains(r.stderr, "bcsrun: --gang on: gangd: no bcsd running") || !strings.Contains(r.stderr, "start one with: bcsd start") {
		t.Errorf("--gang=on without a daemon: exit %d\n%s", r.code, r.stderr)
	}
	nothingLeft(t, before)
}

// A daemon killed with SIGKILL leaves its socket: bcsrun then runs the job
// itself, and the next daemon replaces the socket.
func TestGangdStaleSocket(t *testing.T) {
	g := startGangd(t, "")
	g.cmd.Process.Kill()
	g.cmd.Wait()
	sock := filepath.Join(g.dir, "bcsd.sock")
	if _, err := os.Lstat(sock); err != nil {
		t.Fatalf("the killed daemon's socket: %v (the scenario needs it left)", err)
	}
	r := g.bcsrun(t, bin, "", "-n", "2", "./e2eprog", "exchange")
	if r.code != 0 || !strings.Contains(r.stdout, "exchange ok") || r.stderr != "" {
		t.Fatalf("bcsrun beside a stale socket: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	g2 := startGangd(t, g.dir)
	g2.waitFor(t, "bcsd: replaced the stale socket "+sock)
	if r := command(t, g2.env, bin, "", filepath.Join(bin, "bcsd"), "status"); r.code != 0 || !strings.Contains(r.stdout, fmt.Sprintf("bcsd: pid %d,", g2.cmd.Process.Pid)) {
		t.Fatalf("status of the new daemon: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	g2.stop(t)
}

// A job through the daemon reads the same input, runs in the client's
// directory with the client's environment, and gives the same output,
// messages and status as the job run inside bcsrun.
func TestGangdSameAsEmbedded(t *testing.T) {
	before := listeners(t)
	g := startGangd(t, "")
	work := t.TempDir()
	script := "#!/bin/sh\necho \"cwd $(pwd) FOO=$FOO\"\ncat\necho 'to stderr' >&2\nexit 3\n"
	if err := os.WriteFile(filepath.Join(work, "prog.sh"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	g.env = append(g.env, "FOO=bar", "BCS_LEAK_CHECK=error") // the client's, not the daemon's
	cases := []struct {
		dir, stdin string
		args       []string
		code       int
		stdout     string
	}{
		{work, "line one\nline two\n", []string{"-n", "1", "./prog.sh"}, 3, "cwd " + work + " FOO=bar\nline one\nline two\n"},
		{bin, "", []string{"-n", "2", "./e2eprog", "exit3"}, 3, ""},
		{bin, "", []string{"-n", "4", "--nodes", "2", "./e2eprog", "kill"}, 137, ""},
		{bin, "", []string{"-n", "2", "./e2eprog", "pending"}, 1, ""},
		{bin, "", []string{"-n", "2", "./no-such-program"}, 2, ""},
		{bin, "", []string{"-n", "2", "--nodes", "3", "./e2eprog", "exchange"}, 2, ""},
	}
	jobs := 0
	for _, c := range cases {
		emb := g.bcsrun(t, c.dir, c.stdin, append([]string{"--gang=off"}, c.args...)...)
		att := g.bcsrun(t, c.dir, c.stdin, c.args...)
		if emb.code != c.code || (c.stdout != "" && emb.stdout != c.stdout) {
			t.Errorf("%v inside bcsrun: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", c.args, emb.code, c.code, emb.stdout, emb.stderr)
		}
		// Whether a blocked rank reports the abort before SIGTERM ends it is
		// a race in either launcher: its line is left out of the comparison.
		att.stderr, emb.stderr = withoutAborting(att.stderr), withoutAborting(emb.stderr)
		if att != emb {
			t.Errorf("%v through the daemon: exit %d\nstdout:\n%s\nstderr:\n%s\ninside bcsrun: exit %d\nstdout:\n%s\nstderr:\n%s", c.args, att.code, att.stdout, att.stderr, emb.code, emb.stdout, emb.stderr)
		}
		if c.args[2] != "./no-such-program" { // bcsrun finds the program before handing the job over
			jobs++
			g.waitFor(t, fmt.Sprintf("bcsd: job %d: ", jobs)) // the daemon ran it: the comparison is not of two embedded runs
		}
	}
	if !strings.Contains(g.logText(), "job 1: ended with status 3 (bcsrun: rank 0 exited with status 3; job aborted)") {
		t.Errorf("daemon log:\n%s", g.logText())
	}
	g.stop(t)
	nothingLeft(t, before)
}

// withoutAborting drops the lines of ranks reporting that the job aborts.
func withoutAborting(s string) string {
	var out []string
	for _, l := range strings.SplitAfter(s, "\n") {
		if !strings.HasSuffix(strings.TrimSpace(l), ": the job is aborting") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "")
}

// startHang starts bcsrun -n 2 e2eprog hang through the daemon and returns
// once both ranks are blocked in MPI.
func (g *daemonProc) startHang(t *testing.T, stderr io.Writer, extra ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(filepath.Join(bin, "bcsrun"), "-n", "2", "./e2eprog", "hang")
	cmd.Env, cmd.Dir, cmd.Stderr = append(append([]string(nil), g.env...), extra...), bin, stderr
	out, _ := cmd.StdoutPipe()
	if err := startJob(cmd); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(out)
	for range 2 {
		if !sc.Scan() {
			t.Fatalf("rank output ended early; daemon log:\n%s", g.logText())
		}
	}
	go io.Copy(io.Discard, out)
	return cmd
}

// SIGINT to an attached bcsrun ends its job as it ends an embedded one.
func TestGangdSIGINTForwarded(t *testing.T) {
	g := startGangd(t, "")
	var e syncBuf
	cmd := g.startHang(t, &e)
	signalAndWait(t, cmd, syscall.SIGINT)
	if cmd.ProcessState.ExitCode() != 130 || !strings.Contains(e.String(), "bcsrun: interrupt received, job terminated") {
		t.Fatalf("exit %d\n%s", cmd.ProcessState.ExitCode(), e.String())
	}
	g.waitFor(t, "job 1: ended with status 130 (bcsrun: interrupt received, job terminated)")
	g.stop(t)
}

// An attached bcsrun killed with SIGKILL: its job ends as on SIGHUP, and
// leaves no rank process and no shared-memory file.
func TestGangdClientKilled(t *testing.T) {
	before := listeners(t)
	g := startGangd(t, "")
	var e syncBuf
	cmd := g.startHang(t, &e)
	cmd.Process.Kill()
	cmd.Wait()
	g.waitFor(t, "job 1: ended with status 129 (bcsrun: hangup received, job terminated)")
	// launch.Run has reaped every rank before the job ends: none is left now.
	for _, p := range ourProcesses() {
		if !strings.HasSuffix(p, "/bcsd") {
			t.Errorf("left running while the daemon runs: %s", p)
		}
	}
	if files, _ := filepath.Glob(fmt.Sprintf("/dev/shm/bcs-%d-*", g.cmd.Process.Pid)); len(files) > 0 {
		t.Errorf("left in /dev/shm: %v", files)
	}
	g.stop(t)
	nothingLeft(t, before)
}

// At multiprogramming level 1 a second job waits in the queue, saying so,
// and runs when the first ends; --no-queue is refused with status 75, and a
// job whose ranks do not fit in memory with status 2, naming the figures.
func TestGangdQueue(t *testing.T) {
	before := listeners(t)
	g := startGangd(t, "", "BCS_GANG_MPL=1")
	var e1 syncBuf
	first := g.startHang(t, &e1, "BCS_DEADLOCK_SLICES=0") // it waits until signalled

	second := exec.Command(filepath.Join(bin, "bcsrun"), "-n", "2", "./e2eprog", "exchange")
	second.Env, second.Dir = g.env, bin
	var o2 bytes.Buffer
	second.Stdout = &o2
	errPipe, _ := second.StderrPipe()
	if err := startJob(second); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(errPipe)
	if !sc.Scan() || sc.Text() != "bcsrun: queued: 1 job running at multiprogramming level 1" {
		t.Fatalf("second job's first line %q, want the queue message; daemon log:\n%s", sc.Text(), g.logText())
	}
	var e2 syncBuf
	go func() {
		for sc.Scan() {
			e2.Write([]byte(sc.Text() + "\n"))
		}
	}()

	st := g.bcsrun(t, bin, "", "--status")
	for _, w := range []string{"multiprogramming level 1: 1 running, 1 queued", "JOB  RANKS  STATE", filepath.Join(bin, "e2eprog") + " hang", filepath.Join(bin, "e2eprog") + " exchange"} {
		if st.code != 0 || !strings.Contains(st.stdout, w) {
			t.Errorf("bcsrun --status: exit %d, lacks %q\n%s%s", st.code, w, st.stdout, st.stderr)
		}
	}
	lines := strings.Split(st.stdout, "\n")
	if len(lines) < 4 || !strings.HasPrefix(lines[2], "1    2      running") || !strings.HasPrefix(lines[3], "2    2      queued   -") {
		t.Errorf("bcsrun --status rows:\n%s", st.stdout)
	}

	r := g.bcsrun(t, bin, "", "--no-queue", "-n", "1", "./e2eprog", "exchange")
	if r.code != 75 || r.stderr != "bcsrun: refused (--no-queue): 1 job running at multiprogramming level 1\n" || r.stdout != "" {
		t.Errorf("--no-queue on a full daemon: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	r = g.bcsrun(t, bin, "", "--mem-per-rank", "64T", "-n", "2", "./e2eprog", "exchange")
	if r.code != 2 || !strings.Contains(r.stderr, "bcsrun: refused: the job needs 128.0 TiB (2 ranks × 64 TiB declared with --mem-per-rank, plus ") || !strings.Contains(r.stderr, "available (MemAvailable in /proc/meminfo)") {
		t.Errorf("a job too large for memory: exit %d\n%s", r.code, r.stderr)
	}

	if second.ProcessState != nil {
		t.Fatal("the queued job ended while the first ran")
	}
	signalAndWait(t, first, syscall.SIGTERM)
	if first.ProcessState.ExitCode() != 143 {
		t.Errorf("first job: exit %d\n%s", first.ProcessState.ExitCode(), e1.String())
	}
	done := make(chan error, 1)
	go func() { done <- second.Wait() }()
	select {
	case err := <-done:
		if err != nil || !strings.Contains(o2.String(), "exchange ok") || !strings.Contains(e2.String(), "bcsrun: job 2 started after ") {
			t.Errorf("second job: %v\nstdout:\n%s\nstderr:\n%s", err, o2.String(), e2.String())
		}
	case <-time.After(90 * time.Second):
		second.Process.Kill()
		t.Fatalf("the queued job did not finish within 90s of the first's end; daemon log:\n%s", g.logText())
	}
	l := g.logText()
	if i, j := strings.Index(l, "job 1: ended with status 143"), strings.Index(l, "job 2: 2 rank(s) of "+filepath.Join(bin, "e2eprog")+fmt.Sprintf(" for pid %d: running", second.Process.Pid)); i < 0 || j < i {
		t.Errorf("the second job did not start after the first ended:\n%s", l)
	}
	g.stop(t)
	nothingLeft(t, before)
}

// Bad values of the new flags are refused, naming the value.
func TestGangFlagsBadInput(t *testing.T) {
	env := append(os.Environ(), "BCS_RUNTIME_DIR="+filepath.Join(t.TempDir(), "run"))
	cases := []struct {
		env  []string
		args []string
		want string
	}{
		{nil, []string{"--gang=maybe", "-n", "1", "./e2eprog", "exchange"}, `bcsrun: --gang "maybe", want auto, on or off`},
		{[]string{"BCS_GANG=maybe"}, []string{"-n", "1", "./e2eprog", "exchange"}, `bcsrun: BCS_GANG "maybe", want auto, on or off`},
		{nil, []string{"--mem-per-rank", "12X", "-n", "1", "./e2eprog", "exchange"}, `bcsrun: --mem-per-rank "12X", want a size such as 512M, 2G or 1048576`},
	}
	for _, c := range cases {
		r := command(t, append(append([]string(nil), env...), c.env...), bin, "", filepath.Join(bin, "bcsrun"), c.args...)
		if r.code != 2 || !strings.Contains(r.stderr, c.want) {
			t.Errorf("%v %v: exit %d, want 2 and %q\n%s", c.env, c.args, r.code, c.want, r.stderr)
		}
	}
	if r := command(t, env, bin, "", filepath.Join(bin, "bcsd"), "start", "now"); r.code != 2 || !strings.Contains(r.stderr, `bcsd start: unexpected argument "now"`) {
		t.Errorf("bcsd start now: exit %d\n%s", r.code, r.stderr)
	}
	if r := command(t, append(env, "BCS_GANG_MPL=0"), bin, "", filepath.Join(bin, "bcsd"), "start"); r.code != 1 || !strings.Contains(r.stderr, "gang_mpl = 0, want 1 .. 64 jobs (from BCS_GANG_MPL)") {
		t.Errorf("bcsd start with gang_mpl 0: exit %d\n%s", r.code, r.stderr)
	}
}

// syncBuf is a buffer written by one goroutine (exec's copy) and read by
// the test.
type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// MDS output of a job through the daemon goes under the client's working
// directory (mds_dir is relative), not the daemon's.
func TestGangdMDSInClientDir(t *testing.T) {
	g := startGangd(t, "")
	work := t.TempDir()
	g.env = append(g.env, "BCS_MDS=main")
	r := g.bcsrun(t, work, "", "-n", "2", filepath.Join(bin, "e2eprog"), "exchange")
	if r.code != 0 || !strings.Contains(r.stderr, "bcsrun: MDS data in "+filepath.Join(work, "bcs-mds")+"/") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	g.waitFor(t, "job 1: ended with status 0")
	files, _ := filepath.Glob(filepath.Join(work, "bcs-mds", "latest", "*"))
	if len(files) == 0 {
		t.Errorf("no MDS files under %s", filepath.Join(work, "bcs-mds", "latest"))
	}
	g.stop(t)
}

// Two jobs at once in the daemon, under its gang master: while a job waits
// in MPI for ever (its quantum is given away), another computes its result,
// a third crashes (rank 1 exits 3) and fails alone, and the first still
// ends as a signal ends it. Each job's communication stays its own.
func TestGangdTwoJobsAtOnce(t *testing.T) {
	before := listeners(t)
	g := startGangd(t, "")
	var e1 syncBuf
	first := g.startHang(t, &e1, "BCS_DEADLOCK_SLICES=0") // waits until signalled

	st := g.bcsrun(t, bin, "", "--status")
	if st.code != 0 || !strings.Contains(st.stdout, "multiprogramming level 2: 1 running, 0 queued") {
		t.Errorf("bcsrun --status with one job: exit %d\n%s%s", st.code, st.stdout, st.stderr)
	}
	r := g.bcsrun(t, bin, "", "-n", "3", "./e2eprog", "exchange")
	if r.code != 0 || !strings.Contains(r.stdout, "exchange ok: 3 ranks") {
		t.Errorf("a job beside the waiting one: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	r = g.bcsrun(t, bin, "", "-n", "2", "./e2eprog", "exit3")
	if r.code != 3 || !strings.Contains(r.stderr, "rank 1 exited with status 3") {
		t.Errorf("a crashing job beside the waiting one: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	if first.ProcessState != nil {
		t.Fatalf("the waiting job ended while the others ran:\n%s", e1.String())
	}
	signalAndWait(t, first, syscall.SIGTERM)
	if first.ProcessState.ExitCode() != 143 {
		t.Errorf("first job: exit %d\n%s", first.ProcessState.ExitCode(), e1.String())
	}
	g.stop(t)
	nothingLeft(t, before)
}

// Two spans jobs at once under the daemon's gang master with a quantum of
// two slices: each job is stopped and continued every few slices, so its
// spans (up to four slices) are in flight when its ranks are stopped (the
// agent lets a receiver finish its copy first, then copies the rest itself
// while the job is stopped). Both jobs' data arrive intact.
func TestGangdSpans(t *testing.T) {
	before := listeners(t)
	g := startGangd(t, "", "BCS_GANG_QUANTUM=2")
	env := append(slices.Clone(g.env), "BCS_BYTES_PER_SLICE_MAX=262144")
	first := exec.Command(filepath.Join(bin, "bcsrun"), "-n", "2", "./e2eprog", "spans")
	first.Env, first.Dir = env, bin
	var o1, e1 syncBuf
	first.Stdout, first.Stderr = &o1, &e1
	if err := startJob(first); err != nil {
		t.Fatal(err)
	}
	r := command(t, env, bin, "", filepath.Join(bin, "bcsrun"), "-n", "2", "./e2eprog", "spans")
	if r.code != 0 || r.stdout != "spans ok: 2 ranks\n" {
		t.Errorf("second job: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	if err := first.Wait(); err != nil || o1.String() != "spans ok: 2 ranks\n" {
		t.Errorf("first job: %v\nstdout:\n%s\nstderr:\n%s", err, o1.String(), e1.String())
	}
	g.stop(t)
	nothingLeft(t, before)
}
