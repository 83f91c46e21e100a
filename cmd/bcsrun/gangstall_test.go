package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestGangAcrossHostsSilentHost: two jobs across namespace hosts in the
// gang of this user's bcsd on h1 (TestGangAcrossHosts's setup). Y, on h1,h3
// with a node_timeout of 45 s, computes (gangwork with a stop file it is
// never given) alone in the gang, so the last gang decision its hosts get
// is to run. h3's link is cut silently (ip link set down: no reset, no
// FIN), so Y's master in the daemon waits for h3's report and the gang
// holds Y: Y's rank on h1, which still answers, is stopped (state T), and
// stays stopped while X (h1,h2, the MDS on) starts and runs, so that the
// two jobs' ranks do not share h1's cores. X finishes with its checked
// results and exit 0 while Y still waits: the silent host stalled only its
// own job. Then Y is aborted at its node_timeout, exit non-zero naming node
// 1, host h3 and what the master waited for (its stopped rank continued and
// ended), and the daemon goes on: a third job runs in the gang after it,
// and a fourth, Z, held the same way and interrupted, ends at once with
// its stopped rank on h1 continued and ended.
// X's MDS directory has the master's part, which the daemon wrote
// (emds-global.csv with a row per recorded slice, the communication
// matrix's user traffic). Nothing is left: the daemon holds the same
// sockets as before the jobs, no process, no /dev/shm file of the jobs'
// bcsds, no staging directory.
func TestGangAcrossHostsSilentHost(t *testing.T) {
	if testing.Short() {
		t.Skip("starts namespace hosts, sshd and a bcsd")
	}
	cl, sshCmd := startSSHHosts(t, 3)
	dir := filepath.Join(t.TempDir(), "run")
	g := startGangdIn(t, "bcsslurm1", dir)
	env := append(os.Environ(), "BCS_RUNTIME_DIR="+dir, "BCS_SSH="+sshCmd+" -o SendEnv=BCS_RUNTIME_DIR")
	h := cl.HostAddr
	sockets0 := socketFDs(g.cmd.Process.Pid)
	staging0 := hostMDSLeft("")
	start := func(extra []string, hosts string, args ...string) (*exec.Cmd, *watched, *watched, chan struct{}) {
		t.Helper()
		cmd := exec.Command(filepath.Join(bin, "bcsrun"), append([]string{"-v", "--hosts", hosts}, args...)...)
		cmd.Env = append(append([]string(nil), env...), extra...)
		cmd.Dir = bin
		o, e := newWatched(), newWatched()
		cmd.Stdout, cmd.Stderr = o, e
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		ended := make(chan struct{})
		go func() { cmd.Wait(); close(ended) }()
		t.Cleanup(func() {
			if cmd.ProcessState == nil {
				cmd.Process.Kill()
				<-ended
			}
		})
		return cmd, o, e, ended
	}
	wait := func(what string, cmd *exec.Cmd, o, e *watched, ended chan struct{}) run {
		t.Helper()
		select {
		case <-ended:
		case <-time.After(3 * time.Minute): // a hang guard
			cmd.Process.Kill()
			<-ended
			t.Fatalf("%s hung (killed after 3 min)\nstdout:\n%s\nstderr:\n%s\ndaemon:\n%s", what, o.String(), e.String(), g.logText())
		}
		return run{code: cmd.ProcessState.ExitCode(), stdout: o.String(), stderr: e.String()}
	}
	linkUp := func() {
		if out, err := exec.Command("ip", "link", "set", "vbcs3", "up").CombinedOutput(); err != nil {
			t.Errorf("ip link set vbcs3 up: %v: %s", err, out)
		}
	}

	// The jobs' bcsds, whose regions (/dev/shm/bcs-<pid>-*) must go with them.
	var bcsds []string
	jobBcsds := func() {
		for _, p := range ourProcesses() {
			if f := strings.Fields(p); len(f) == 2 && filepath.Base(f[1]) == "bcsd" && f[0] != strconv.Itoa(g.cmd.Process.Pid) && !slices.Contains(bcsds, f[0]) {
				bcsds = append(bcsds, f[0])
			}
		}
	}

	// computing waits until the rank on h1 of the job whose stop file is
	// stopFile computes, and returns its pid.
	computing := func(job, stopFile string, e *watched) int {
		t.Helper()
		pid := 0
		for end := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
			if pid == 0 {
				pid = rankOnNode(stopFile, 0)
			}
			if _, ticks := procState(pid); ticks >= 5 {
				return pid
			}
			if time.Now().After(end) { // a hang guard
				t.Fatalf("job %s's rank on h1 (pid %d) did not start computing within a minute:\n%s\ndaemon:\n%s", job, pid, e.String(), g.logText())
			}
		}
	}
	cut := func() {
		t.Helper()
		if out, err := exec.Command("ip", "link", "set", "vbcs3", "down").CombinedOutput(); err != nil {
			t.Fatalf("ip link set vbcs3 down: %v: %s", err, out)
		}
	}
	// heldStopped waits until a held job's rank on h1 is stopped, although
	// its last decision was to run. (The minute is a hang guard: unstopped,
	// it never is.)
	heldStopped := func(job string, pid int) {
		t.Helper()
		for end := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
			st, _ := procState(pid)
			if st == "T" {
				return
			}
			if time.Now().After(end) {
				t.Fatalf("job %s held (h3 silent): its rank on h1 (pid %d) is in state %q (\"\": gone), want T (stopped) while held\ndaemon:\n%s", job, pid, st, g.logText())
			}
		}
	}

	// Y computes alone in the gang: its ranks run in every slice.
	stopY := filepath.Join(t.TempDir(), "stop-never")
	y, yo, ye, yEnded := start([]string{"BCS_NODE_TIMEOUT=45s", "BCS_DEADLOCK_SLICES=0"}, h[0]+","+h[2], "-n", "2", "./e2eprog", "gangwork", "20", stopY)
	g.waitFor(t, "job 1: ") // Y has asked for its place
	y0 := computing("Y", stopY, ye)
	jobBcsds()
	cut()
	t.Cleanup(linkUp) // again, harmless
	heldStopped("Y", y0)

	// X starts and runs while Y is held; Y's rank on h1 stays stopped.
	mdsX := t.TempDir()
	stopX := filepath.Join(t.TempDir(), "stop")
	x, xo, xe, xEnded := start([]string{"BCS_MDS=elan", "BCS_MDS_DIR=" + mdsX}, h[0]+","+h[1], "-n", "4", "./e2eprog", "gangwork", "20", stopX)
	sampled := make(chan []string, 1)
	go func() {
		var bad []string
		n := 0
		for {
			if st, _ := procState(y0); st != "T" {
				bad = append(bad, st)
			}
			n++
			select {
			case <-xEnded:
				sampled <- append(bad, strconv.Itoa(n))
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()
	g.waitFor(t, "job 2: ") // X has asked for its place
	jobBcsds()
	if err := os.WriteFile(stopX, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	rx := wait("job X", x, xo, xe, xEnded)
	if rx.code != 0 || !strings.Contains(rx.stdout, "gangwork ok: 4 ranks, ") {
		t.Fatalf("job X (4 ranks on h1,h2) with h3 silent: exit %d\nstdout:\n%s\nstderr:\n%s\ndaemon:\n%s", rx.code, rx.stdout, rx.stderr, g.logText())
	}
	if s := <-sampled; len(s) > 1 {
		t.Errorf("job Y's rank on h1, held, was seen in states %q in %s samples while job X ran; want T (stopped) in all", s[:len(s)-1], s[len(s)-1])
	}
	select {
	case <-yEnded:
		t.Errorf("job Y ended before job X, with h3 silent: its node_timeout (45 s) is what should end it\n%s", ye.String())
	default:
	}
	if strings.Contains(ye.String(), "stopped answering") {
		t.Errorf("job X finished only after job Y's master gave up on h3: the silent host stalled the gang\nX's stderr:\n%s\nY's stderr:\n%s", rx.stderr, ye.String())
	}

	// Y: aborted at its node_timeout, naming the host; the link comes back
	// so that the end reaches h3's bcsd.
	seen := ye.waitFor("stopped answering", 1, 2*time.Minute)
	linkUp()
	ry := wait("job Y", y, yo, ye, yEnded)
	if !seen || ry.code == 0 || !strings.Contains(ry.stderr, "node 1: stopped answering: no ") || !strings.Contains(ry.stderr, " (node_timeout) [node 1 is host "+h[2]+"]; job aborted") {
		t.Errorf("job Y with h3 silent: exit %d, want non-zero naming node 1, host %s and the missing report\nstderr:\n%s\ndaemon:\n%s", ry.code, h[2], ry.stderr, g.logText())
	}
	t.Logf("job Y, what the user saw: exit %d\n%s", ry.code, ry.stderr)

	// X's MDS: the master's part came from the daemon.
	md := latestDir(t, mdsX, rx.stderr)
	files := mdsFiles(t, md)
	for _, f := range []string{"emds-global.csv", "comm-matrix.csv", "emds-node0.csv", "emds-node1.csv", "manifest.json"} {
		if !slices.Contains(files, f) {
			t.Errorf("job X's MDS directory lacks %s: %q", f, files)
		}
	}
	if slices.Contains(files, "emds-global.csv") {
		s := readSeries(t, filepath.Join(md, "emds-global.csv"))
		getts := col(t, s, "GETTS")
		if len(s.Slices) == 0 || len(getts) != len(s.Slices) {
			t.Errorf("emds-global.csv: %d slices, %d GETTS values: want a row per slice", len(s.Slices), len(getts))
		}
		m := readHostsManifest(t, md)
		if !m.Finished || !m.Complete || len(m.Problems) > 0 || m.Slices == 0 || uint64(len(s.Slices)) > m.Slices {
			t.Errorf("manifest: finished %v, complete %v, problems %q, slices %d; emds-global.csv has %d", m.Finished, m.Complete, m.Problems, m.Slices, len(s.Slices))
		}
	}
	if b, err := os.ReadFile(filepath.Join(md, "comm-matrix.csv")); err != nil || !bytes.Contains(b, []byte(",user\n")) {
		t.Errorf("comm-matrix.csv: %v, want user traffic (the ring's sends):\n%s", err, b)
	}

	// The gang goes on.
	r := command(t, env, bin, "", filepath.Join(bin, "bcsrun"), "--hosts", h[0]+","+h[1], "-n", "2", "./e2eprog", "gangwork", "20")
	if r.code != 0 || !strings.Contains(r.stdout, "gangwork ok: 2 ranks, 20 iterations") {
		t.Errorf("a job after the silent host's: exit %d\nstdout:\n%s\nstderr:\n%s\ndaemon:\n%s", r.code, r.stdout, r.stderr, g.logText())
	}
	log := g.logText()
	if !strings.Contains(log, "left the gang after ") || !strings.Contains(log, "node 1: stopped answering") {
		t.Errorf("the daemon's log lacks job Y's end naming node 1:\n%s", log)
	}

	// Z, held the same way (its node_timeout ten minutes), is interrupted:
	// it ends at once, its stopped rank on h1 continued and ended, before
	// h3 is back (which then ends Z's rank there).
	stopZ := filepath.Join(t.TempDir(), "stop-never-z")
	z, zo, ze, zEnded := start([]string{"BCS_NODE_TIMEOUT=10m"}, h[0]+","+h[2], "-n", "2", "./e2eprog", "gangwork", "20", stopZ)
	g.waitFor(t, "job 4: ") // Z has asked for its place
	z0 := computing("Z", stopZ, ze)
	jobBcsds()
	cut()
	heldStopped("Z", z0)
	z.Process.Signal(os.Interrupt)
	for end := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
		st, _ := procState(z0)
		if st == "" || st == "Z" { // ended (a zombie: not reaped yet)
			break
		}
		if time.Now().After(end) { // a hang guard: the node_timeout is ten minutes
			t.Fatalf("job Z, held and interrupted: its rank on h1 (pid %d) is still there, state %q\nstderr:\n%s\ndaemon:\n%s", z0, st, ze.String(), g.logText())
		}
	}
	linkUp()
	if rz := wait("job Z", z, zo, ze, zEnded); rz.code == 0 || strings.Contains(rz.stderr, "stopped answering") {
		t.Errorf("job Z, held and interrupted: exit %d, want non-zero, ended by the interrupt, not its node_timeout\nstderr:\n%s", rz.code, rz.stderr)
	}
	if s := socketFDs(g.cmd.Process.Pid); s != sockets0 {
		t.Errorf("the daemon holds %d sockets after the jobs, %d before them", s, sockets0)
	}
	g.stop(t)
	nothingLeftWithin(t, 90*time.Second)
	for _, pid := range bcsds {
		if l, _ := filepath.Glob("/dev/shm/bcs-" + pid + "-*"); len(l) > 0 {
			t.Errorf("left in /dev/shm by bcsd %s: %v", pid, l)
		}
	}
	for _, d := range hostMDSLeft("") {
		if !slices.Contains(staging0, d) {
			t.Errorf("staging directory left: %s", d)
		}
	}
}

// rankOnNode returns the pid of a rank of e2eprog whose command line has
// arg and which runs on node (its BCS_NODE), or 0 if there is none yet.
func rankOnNode(arg string, node int) int {
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		if exe, err := os.Readlink(d + "/exe"); err != nil || exe != filepath.Join(bin, "e2eprog") {
			continue
		}
		cl, _ := os.ReadFile(d + "/cmdline")
		env, _ := os.ReadFile(d + "/environ")
		if slices.Contains(strings.Split(string(cl), "\x00"), arg) && slices.Contains(strings.Split(string(env), "\x00"), "BCS_NODE="+strconv.Itoa(node)) {
			pid, _ := strconv.Atoi(filepath.Base(d))
			return pid
		}
	}
	return 0
}

// procState returns process pid's state letter ("" if it is gone) and
// the CPU time it has used, in clock ticks (/proc/<pid>/stat).
func procState(pid int) (string, int) {
	if pid <= 0 {
		return "", 0
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	i := bytes.LastIndexByte(b, ')')
	if err != nil || i < 0 {
		return "", 0
	}
	f := strings.Fields(string(b[i+1:])) // state is field 3, utime and stime 14 and 15
	if len(f) < 13 {
		return "", 0
	}
	ut, _ := strconv.Atoi(f[11])
	st, _ := strconv.Atoi(f[12])
	return f[0], ut + st
}

// socketFDs counts the sockets process pid holds open.
func socketFDs(pid int) int {
	fds, _ := filepath.Glob("/proc/" + strconv.Itoa(pid) + "/fd/*")
	n := 0
	for _, fd := range fds {
		if l, err := os.Readlink(fd); err == nil && strings.HasPrefix(l, "socket:") {
			n++
		}
	}
	return n
}
