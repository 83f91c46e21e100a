package main

import (
	"bufio"
	"bytes"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// jobLeftovers lists what survives of the job of the bcsrun with this pid:
// its /dev/shm files (named bcs-PID-...) and live processes whose
// environment carries its job id (BCS_JOB=PID-...). Other jobs' files and
// processes are not counted.
func jobLeftovers(pid int) (files, procs []string) {
	files, _ = filepath.Glob(fmt.Sprintf("/dev/shm/bcs-%d-*", pid))
	mark := []byte(fmt.Sprintf("BCS_JOB=%d-", pid))
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		env, err := os.ReadFile(d + "/environ")
		if err != nil || !bytes.Contains(env, mark) {
			continue
		}
		stat, _ := os.ReadFile(d + "/stat")
		if i := bytes.LastIndexByte(stat, ')'); i > 0 && bytes.HasPrefix(bytes.TrimSpace(stat[i+1:]), []byte("Z")) {
			continue
		}
		procs = append(procs, filepath.Base(d))
	}
	return files, procs
}

// awaitNothingLeft waits (bounded: the kernel delivers PDEATHSIG and reaps
// asynchronously) until nothing of bcsrun pid's job is left.
func awaitNothingLeft(t *testing.T, pid int, what string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		files, procs := jobLeftovers(pid)
		if len(files) == 0 && len(procs) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("%s: left behind: files %v, processes %v", what, files, procs)
			for _, p := range procs {
				if n, err := strconv.Atoi(p); err == nil {
					syscall.Kill(n, syscall.SIGKILL)
				}
			}
			for _, f := range files {
				os.Remove(f)
			}
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestKilledDuringStartUp kills bcsrun at random moments of start-up (seeded,
// the seed is logged) with SIGKILL and SIGTERM, and checks that nothing of the
// job is left: no /dev/shm file, no rank. A SIGTERM must also end the job with
// a message and status 143, unless it arrived before bcsrun's main began (the
// Go runtime then dies of it, having created nothing).
func TestKilledDuringStartUp(t *testing.T) {
	seed := time.Now().UnixNano()
	if s := os.Getenv("BCS_TEST_SEED"); s != "" {
		seed, _ = strconv.ParseInt(s, 10, 64)
	}
	t.Logf("seed %d (BCS_TEST_SEED replays it)", seed)
	rng := rand.New(rand.NewSource(seed))
	for _, sig := range []syscall.Signal{syscall.SIGKILL, syscall.SIGTERM} {
		handled := 0
		for i := 0; i < 20; i++ {
			delay := time.Duration(rng.Int63n(int64(300 * time.Millisecond)))
			cmd := exec.Command(filepath.Join(bin, "bcsrun"), "-n", "16", "--nodes", "4", "./e2eprog", "hang")
			cmd.Dir = bin
			var e bytes.Buffer
			cmd.Stderr = &e
			cmd.WaitDelay = 30 * time.Second
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			time.Sleep(delay) // the scenario: a signal at this moment of start-up
			cmd.Process.Signal(sig)
			done := make(chan struct{})
			go func() { cmd.Wait(); close(done) }()
			select {
			case <-done:
			case <-time.After(60 * time.Second):
				cmd.Process.Kill()
				<-done
				t.Fatalf("%v after %v: bcsrun did not exit within 60s; stderr:\n%s", sig, delay, e.String())
			}
			what := fmt.Sprintf("%v after %v", sig, delay)
			awaitNothingLeft(t, cmd.Process.Pid, what)
			if sig != syscall.SIGTERM {
				continue
			}
			ws := cmd.ProcessState.Sys().(syscall.WaitStatus)
			switch {
			case ws.Signaled() && ws.Signal() == syscall.SIGTERM && e.Len() == 0:
				// before main: nothing was created
			case ws.Exited() && ws.ExitStatus() == 143 && strings.Contains(e.String(), "bcsrun: terminated received, job terminated"):
				handled++
			default:
				t.Errorf("%s: status %v, want 143 and a message; stderr:\n%s", what, ws, e.String())
			}
		}
		if sig == syscall.SIGTERM {
			t.Logf("SIGTERM: %d of 20 handled with a message (the others arrived before main)", handled)
		}
	}
}

func TestSIGHUPEndsJobLikeSIGTERM(t *testing.T) {
	before := listeners(t)
	cmd := exec.Command(filepath.Join(bin, "bcsrun"), "-n", "2", "--nodes", "2", "./e2eprog", "hang")
	cmd.Dir = bin
	var e bytes.Buffer
	cmd.Stderr = &e
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(out)
	for i := 0; i < 2; i++ { // every rank is inside MPI and blocked
		if !sc.Scan() {
			t.Fatalf("rank output ended early; stderr:\n%s", e.String())
		}
	}
	signalAndWait(t, cmd, syscall.SIGHUP)
	if cmd.ProcessState.ExitCode() != 128+1 || !strings.Contains(e.String(), "bcsrun: hangup received, job terminated") {
		t.Fatalf("exit %d (want 129), stderr:\n%s", cmd.ProcessState.ExitCode(), e.String())
	}
	nothingLeft(t, before)
}

// TestGrandchildrenEndWithTheJob: a rank that leaves a process running (one
// holding the output pipe, one in a session of its own, one whose parent is
// itself left running) does not keep the job alive, and that process does not
// outlive the job. Each rank prints the pid of its sleep.
func TestGrandchildrenEndWithTheJob(t *testing.T) {
	for _, c := range []struct {
		name, script string
		left         int // processes left running by the 2 ranks
	}{
		{"background", "sleep 1000 & echo $!", 2},
		{"own session", "setsid sleep 1000 & echo $!", 2},
		{"grandchild of a grandchild", `f=$T/fifo$BCS_RANK; mkfifo $f; sh -c "sleep 1000 & echo \$! > $f; wait" & cat $f`, 4},
	} {
		for _, tag := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/tag=%v", c.name, tag), func(t *testing.T) {
				args := []string{"-n", "2", "--nodes", "2"}
				if tag {
					args = append(args, "--tag-output")
				}
				cmd := exec.Command(filepath.Join(bin, "bcsrun"), append(args, "/bin/sh", "-c", c.script)...)
				cmd.Dir = bin
				cmd.Env = append(os.Environ(), "T="+t.TempDir())
				var o, e bytes.Buffer
				cmd.Stdout, cmd.Stderr = &o, &e
				cmd.WaitDelay = 5 * time.Second // a surviving grandchild holds our pipe
				done := make(chan error, 1)
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				go func() { done <- cmd.Wait() }()
				hung := false
				select {
				case <-done:
				case <-time.After(60 * time.Second):
					hung = true
					cmd.Process.Kill()
					<-done
				}
				lines := strings.Split(strings.TrimSpace(o.String()), "\n")
				for _, l := range lines { // each sleep's pid: it must be gone
					if tag {
						_, l, _ = strings.Cut(l, "] ")
					}
					pid, err := strconv.Atoi(l)
					if err != nil {
						t.Errorf("stdout line %q is not a pid", l)
						continue
					}
					if cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid)); err == nil && strings.HasPrefix(string(cmdline), "sleep\x001000") {
						syscall.Kill(pid, syscall.SIGKILL)
						t.Errorf("grandchild %d (sleep 1000) outlived the job", pid)
					}
				}
				if hung {
					t.Fatalf("bcsrun did not end with its ranks; stdout:\n%s\nstderr:\n%s", o.String(), e.String())
				}
				if len(lines) != 2 {
					t.Errorf("want the 2 pids of the sleeps, got stdout %q", o.String())
				}
				want := fmt.Sprintf("bcsrun: ended %d process(es) that the ranks left running", c.left)
				if cmd.ProcessState.ExitCode() != 0 || !strings.Contains(e.String(), want) {
					t.Errorf("exit %d, want 0 and stderr with %q; stderr:\n%s", cmd.ProcessState.ExitCode(), want, e.String())
				}
			})
		}
	}
}

func TestTaggedLongLinesPassWhole(t *testing.T) {
	// A 2 MiB line, then a line with no newline at the end.
	r := bcsrun(t, "-n", "1", "--tag-output", "/bin/sh", "-c", `head -c 2097152 /dev/zero | tr '\000' x; echo; printf tail`)
	want := "[0] " + strings.Repeat("x", 2<<20) + "\n[0] tail\n"
	if r.code != 0 || r.stdout != want {
		t.Fatalf("exit %d, stdout %d bytes (want %d), begins %.40q, ends %q\nstderr:\n%s", r.code, len(r.stdout), len(want), r.stdout, r.stdout[max(0, len(r.stdout)-20):], r.stderr)
	}
}

func TestFlagErrorsAreReported(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-n", "abc", "true"}, `invalid argument "abc" for "-n, --np" flag`},
		{[]string{"--timeslice", "banana", "true"}, `invalid argument "banana" for "--timeslice" flag`},
		{[]string{"--tag-output=maybe", "true"}, `invalid argument "maybe" for "--tag-output" flag`},
		{[]string{"--no-such-flag", "true"}, "unknown flag: --no-such-flag"},
	} {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			r := bcsrun(t, c.args...)
			if r.code != 2 || !strings.Contains(r.stderr, "bcsrun: "+c.want) || !strings.Contains(r.stderr, "usage: bcsrun -n N") {
				t.Fatalf("exit %d (want 2), want stderr with %q and the usage:\n%s", r.code, c.want, r.stderr)
			}
		})
	}
}

func TestStdinGoesToRankZero(t *testing.T) {
	before := listeners(t)
	cmd := exec.Command(filepath.Join(bin, "bcsrun"), "-n", "3", "--tag-output", "/bin/cat")
	cmd.Dir = bin
	cmd.Stdin = strings.NewReader("hi\nthere\n")
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	cmd.WaitDelay = 30 * time.Second
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v\nstderr:\n%s", err, e.String())
	}
	if o.String() != "[0] hi\n[0] there\n" {
		t.Fatalf("stdout %q, want rank 0's copy of the input only", o.String())
	}
	nothingLeft(t, before)
}

// TestStoppedBcsrunSaysSo: when bcsrun itself was stopped (SIGSTOP) for more
// than half of node_timeout around the master's timeout, the message names
// that stop, not only a node. A real stop of bcsrun rarely makes the master
// time out (it re-arms its deadline when it resumes), so the timeout is
// injected: node 1 stops answering from slice 1, and bcsrun is stopped while
// the master waits for it.
func TestStoppedBcsrunSaysSo(t *testing.T) {
	t.Setenv("BCS_NODE_TIMEOUT", "3s")
	t.Setenv("BCS_FAULT_STALL_NODE", "1@1")
	t.Setenv("BCS_DEADLOCK_SLICES", "1000000")
	before := listeners(t)
	cmd := exec.Command(filepath.Join(bin, "bcsrun"), "-n", "2", "--nodes", "2", "./e2eprog", "hang")
	cmd.Dir = bin
	var e bytes.Buffer
	cmd.Stderr = &e
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(out)
	for i := 0; i < 2; i++ { // the ranks run: so do the master's wait and bcsrun's stall watch
		if !sc.Scan() {
			cmd.Wait()
			t.Fatalf("rank output ended early (did the ranks take longer than node_timeout to start?); stderr:\n%s", e.String())
		}
	}
	cmd.Process.Signal(syscall.SIGSTOP)
	time.Sleep(2 * time.Second) // the scenario: stopped for 2s, more than half of node_timeout
	cmd.Process.Signal(syscall.SIGCONT)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		<-done
		t.Fatalf("bcsrun did not end; stderr:\n%s", e.String())
	}
	if cmd.ProcessState.ExitCode() != 1 || !strings.Contains(e.String(), "bcsmpi: job aborted: bcsrun itself ") ||
		!strings.Contains(e.String(), "The master saw: node 1: stopped answering") {
		t.Fatalf("exit %d (want 1), stderr:\n%s", cmd.ProcessState.ExitCode(), e.String())
	}
	t.Logf("message: %s", strings.SplitN(e.String(), "\n", 2)[0])
	nothingLeft(t, before)
}

// TestOrphansReapedDuringTheJob: processes a rank leaves behind that exit
// while the job runs do not stay zombies of bcsrun until the job ends.
func TestOrphansReapedDuringTheJob(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "go")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(filepath.Join(bin, "bcsrun"), "-n", "1", "/bin/sh", "-c", `(sh -c 'echo $$' &); (sh -c 'echo $$' &); read x < `+fifo)
	cmd.Dir = bin
	var e bytes.Buffer
	cmd.Stderr = &e
	cmd.WaitDelay = 30 * time.Second
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { // release the rank, then the job ends
		if f, err := os.OpenFile(fifo, os.O_WRONLY, 0); err == nil {
			f.Write([]byte("go\n"))
			f.Close()
		}
		cmd.Wait()
	}()
	sc := bufio.NewScanner(out)
	var pids []int
	for len(pids) < 2 && sc.Scan() {
		pid, err := strconv.Atoi(sc.Text())
		if err != nil {
			t.Fatalf("line %q is not a pid", sc.Text())
		}
		pids = append(pids, pid)
	}
	if len(pids) < 2 {
		t.Fatalf("want 2 pids; stderr:\n%s", e.String())
	}
	deadline := time.Now().Add(10 * time.Second)
	for _, pid := range pids {
		for {
			stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
			if err != nil {
				break // reaped
			}
			if time.Now().After(deadline) {
				t.Fatalf("orphan %d still there while the job runs: %s", pid, stat)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}
