package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestGangAcrossHosts: jobs across namespace hosts (bcsrun --hosts over
// ssh) share the hosts under one strobe, the gang of this user's bcsd on the
// first host (bcsd start there; launch's gangacross.go). Three jobs of
// different sizes run at once at multiprogramming level 3 and each one
// finishes with its own checked results (gangwork checks every word it
// receives against its own job's size, sender and iteration) and was
// descheduled at least once, by its own records: the master's counts
// (bcsrun -v: ran in fewer slices than it was strobed in) and, for one
// job, its per-node EMDS, whose RUN column has descheduled slices and is
// the same on every host slice by slice (one strobe switches every host).
// Then, while the longest job still runs, a job that crashes and one that
// deadlocks fail alone, and the long job still finishes correctly.
func TestGangAcrossHosts(t *testing.T) {
	if testing.Short() {
		t.Skip("starts namespace hosts, sshd and a bcsd")
	}
	cl, sshCmd := startSSHHosts(t, 3)
	dir := filepath.Join(t.TempDir(), "run")
	g := startGangdIn(t, "bcsslurm1", dir, "BCS_GANG_MPL=3")
	env := append(os.Environ(), "BCS_RUNTIME_DIR="+dir, "BCS_SSH="+sshCmd+" -o SendEnv=BCS_RUNTIME_DIR")
	h := cl.HostAddr
	start := func(t *testing.T, extra []string, hosts string, args ...string) (*exec.Cmd, *bytes.Buffer, *bytes.Buffer) {
		t.Helper()
		cmd := exec.Command(filepath.Join(bin, "bcsrun"), append([]string{"-v", "--hosts", hosts}, args...)...)
		cmd.Env = append(append([]string(nil), env...), extra...)
		cmd.Dir = bin
		var o, e bytes.Buffer
		cmd.Stdout, cmd.Stderr = &o, &e
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		return cmd, &o, &e
	}
	wait := func(t *testing.T, what string, cmd *exec.Cmd, o, e *bytes.Buffer) run {
		t.Helper()
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(3 * time.Minute):
			cmd.Process.Kill()
			<-done
			t.Fatalf("%s hung (killed after 3 min)\nstdout:\n%s\nstderr:\n%s\ndaemon:\n%s", what, o.String(), e.String(), g.logText())
		}
		return run{code: cmd.ProcessState.ExitCode(), stdout: o.String(), stderr: e.String()}
	}
	// counts reads the job's own count of the slices it ran in and was
	// strobed in (bcsrun -v); a job not in the gang fails.
	counts := func(t *testing.T, what string, r run) (ran, alive uint64) {
		t.Helper()
		var id string
		found := false
		for _, l := range strings.Split(r.stderr, "\n") {
			if strings.Contains(l, ": in a gang: ran in ") {
				found = true
				fmt.Sscanf(l, "bcsrun: job %s in a gang: ran in %d of its %d slices", &id, &ran, &alive)
			}
		}
		if !found || ran == 0 || alive < ran {
			t.Errorf("%s: not in the gang (ran in %d of %d slices; bcsrun -v)\n%s\ndaemon:\n%s", what, ran, alive, r.stderr, g.logText())
		}
		t.Logf("%s: ran in %d of %d slices", what, ran, alive)
		return ran, alive
	}
	// descheduled: the job ran in fewer slices than it was strobed in. Said
	// of A and B, not of C: A and B both span the second host, which C does
	// not use, and while that host is late (a loaded machine) both are held
	// and C rightly runs in every slice (strobe.Gang: a held job is passed
	// over). CI saw C run in all its 620 slices so; C is required in the
	// gang only.
	descheduled := func(t *testing.T, what string, r run) {
		t.Helper()
		if ran, alive := counts(t, what, r); ran >= alive {
			t.Errorf("%s: ran in %d of %d slices, want descheduled at least once (bcsrun -v)\n%s\ndaemon:\n%s", what, ran, alive, r.stderr, g.logText())
		}
	}
	stopA := filepath.Join(t.TempDir(), "stop")
	all := strings.Join(h, ",")
	a, ao, ae := start(t, nil, all, "-n", "6", "./e2eprog", "gangwork", "20", stopA)
	mdsB := t.TempDir()
	b, bo, be := start(t, []string{"BCS_MDS=elan", "BCS_MDS_DIR=" + mdsB}, h[0]+","+h[1], "-n", "4", "./e2eprog", "gangwork", "150")
	c, co, ce := start(t, nil, h[0]+","+h[2], "-n", "2", "./e2eprog", "gangwork", "100")
	rb := wait(t, "job B", b, bo, be)
	if rb.code != 0 || !strings.Contains(rb.stdout, "gangwork ok: 4 ranks, 150 iterations") {
		t.Fatalf("job B (4 ranks on 2 hosts): exit %d\nstdout:\n%s\nstderr:\n%s\ndaemon:\n%s", rb.code, rb.stdout, rb.stderr, g.logText())
	}
	descheduled(t, "job B", rb)
	// B's own per-node records: descheduled slices, the same on both hosts.
	md := latestDir(t, mdsB, rb.stderr)
	s0, s1 := readSeries(t, filepath.Join(md, "emds-node0.csv")), readSeries(t, filepath.Join(md, "emds-node1.csv"))
	run0, run1 := col(t, s0, "RUN"), col(t, s1, "RUN")
	at1 := map[uint64]int64{}
	for k, sl := range s1.Slices {
		at1[sl] = run1[k]
	}
	off, same, diff := 0, 0, 0
	for k, sl := range s0.Slices {
		if run0[k] == 0 {
			off++
		}
		if v, ok := at1[sl]; ok {
			if v == run0[k] {
				same++
			} else {
				diff++
			}
		}
	}
	if off == 0 || same == 0 || diff > 0 {
		t.Errorf("job B's EMDS: %d of %d slices descheduled on node 0; %d slices alike on both hosts, %d differ: want some descheduled, none differing", off, len(s0.Slices), same, diff)
	}
	rc := wait(t, "job C", c, co, ce)
	if rc.code != 0 || !strings.Contains(rc.stdout, "gangwork ok: 2 ranks, 100 iterations") {
		t.Fatalf("job C (2 ranks on 2 hosts): exit %d\nstdout:\n%s\nstderr:\n%s", rc.code, rc.stdout, rc.stderr)
	}
	counts(t, "job C", rc)

	// The long job runs on; its place is listed by the daemon.
	st := command(t, g.env, bin, "", filepath.Join(bin, "bcsd"), "status")
	if st.code != 0 || !strings.Contains(st.stdout, "1 running, 0 queued") || !strings.Contains(st.stdout, "gangwork 20 "+stopA+" (across 3 hosts)") {
		t.Errorf("bcsd status while job A runs: exit %d\n%s%s", st.code, st.stdout, st.stderr)
	}
	// A job that crashes, and one that deadlocks, beside it: each fails alone.
	r := command(t, env, bin, "", filepath.Join(bin, "bcsrun"), "--hosts", all, "-n", "3", "./e2eprog", "exit3")
	if r.code != 3 || !strings.Contains(r.stderr, "rank 1 exited with status 3") {
		t.Errorf("a crashing job beside job A: exit %d, want 3 naming rank 1\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	r = command(t, append(env, "BCS_DEADLOCK_SLICES=50"), bin, "", filepath.Join(bin, "bcsrun"), "--hosts", h[0]+","+h[1], "-n", "2", "./e2eprog", "deadlock")
	if r.code != 1 || !strings.Contains(r.stderr, "deadlock") {
		t.Errorf("a deadlocking job beside job A: exit %d, want 1 and a deadlock report\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	// A full gang: with job A and two waiting jobs in it, a fourth job
	// across hosts is refused naming the level (it does not queue: its
	// hosts are already up); the waiting jobs end on SIGTERM as jobs
	// outside a gang do.
	var waiting []*exec.Cmd
	var werrs []*watched
	for range 2 {
		cmd := exec.Command(filepath.Join(bin, "bcsrun"), "--hosts", h[0]+","+h[1], "-n", "2", "./e2eprog", "hang")
		cmd.Env, cmd.Dir = append(append([]string(nil), env...), "BCS_DEADLOCK_SLICES=0"), bin
		o, e := newWatched(), newWatched()
		cmd.Stdout, cmd.Stderr = o, e
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		waiting, werrs = append(waiting, cmd), append(werrs, e)
		if !o.waitFor("ready", 2, 60*time.Second) {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("a waiting job did not start:\n%s\ndaemon:\n%s", e.String(), g.logText())
		}
	}
	r = command(t, env, bin, "", filepath.Join(bin, "bcsrun"), "--hosts", h[0]+","+h[1], "-n", "2", "./e2eprog", "exchange")
	if want := "3 jobs running at multiprogramming level 3 (a job across hosts does not wait in the queue)"; r.code == 0 || !strings.Contains(r.stderr, want) {
		t.Errorf("a fourth job at level 3: exit %d, want non-zero and %q\nstdout:\n%s\nstderr:\n%s", r.code, want, r.stdout, r.stderr)
	}
	t.Logf("a fourth job at level 3, what the user saw: exit %d\n%s", r.code, r.stderr)
	for i, cmd := range waiting {
		cmd.Process.Signal(syscall.SIGTERM)
		cmd.Wait()
		if c := cmd.ProcessState.ExitCode(); c != 143 {
			t.Errorf("waiting job %d on SIGTERM: exit %d, want 143\n%s", i, c, werrs[i].String())
		}
	}
	if a.ProcessState != nil {
		t.Fatalf("job A ended before it was told to\nstdout:\n%s\nstderr:\n%s", ao.String(), ae.String())
	}
	if err := os.WriteFile(stopA, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	ra := wait(t, "job A", a, ao, ae)
	if ra.code != 0 || !strings.Contains(ra.stdout, "gangwork ok: 6 ranks, ") {
		t.Fatalf("job A (6 ranks on 3 hosts): exit %d\nstdout:\n%s\nstderr:\n%s\ndaemon:\n%s", ra.code, ra.stdout, ra.stderr, g.logText())
	}
	descheduled(t, "job A", ra)
	log := g.logText()
	for i := 1; i <= 7; i++ { // A, B, C, the crash, the deadlock, the two waiting jobs
		if !strings.Contains(log, fmt.Sprintf("job %d: left the gang after ", i)) {
			t.Errorf("the daemon's log lacks job %d leaving the gang:\n%s", i, log)
		}
	}
	// The daemon stopped while a job across hosts runs in its gang: the job
	// fails, saying why, and nothing is left on any host.
	cmd := exec.Command(filepath.Join(bin, "bcsrun"), "--hosts", h[0]+","+h[1], "-n", "2", "./e2eprog", "hang")
	cmd.Env, cmd.Dir = append(append([]string(nil), env...), "BCS_DEADLOCK_SLICES=0"), bin
	o, e := newWatched(), newWatched()
	cmd.Stdout, cmd.Stderr = o, e
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if !o.waitFor("ready", 2, 60*time.Second) {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("the last job did not start:\n%s\ndaemon:\n%s", e.String(), g.logText())
	}
	g.stop(t)
	rs := wait(t, "the job whose daemon stopped", cmd, &bytes.Buffer{}, &bytes.Buffer{})
	if want := ") was stopped while the job ran; job aborted"; rs.code != 1 || !strings.Contains(e.String(), want) {
		t.Errorf("the daemon stopped under a job: exit %d, want 1 and %q\n%s", rs.code, want, e.String())
	}
	t.Logf("the daemon stopped under a job, what the user saw: exit %d\n%s", rs.code, e.String())
	nothingLeftWithin(t, 30*time.Second)

	// The daemon killed (SIGKILL) under a job: the job fails, naming the
	// lost daemon, and nothing is left.
	g = startGangdIn(t, "bcsslurm1", dir)
	cmd = exec.Command(filepath.Join(bin, "bcsrun"), "--hosts", h[0]+","+h[1], "-n", "2", "./e2eprog", "hang")
	cmd.Env, cmd.Dir = append(append([]string(nil), env...), "BCS_DEADLOCK_SLICES=0"), bin
	o, e = newWatched(), newWatched()
	cmd.Stdout, cmd.Stderr = o, e
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if !o.waitFor("ready", 2, 60*time.Second) {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("the last job did not start:\n%s\ndaemon:\n%s", e.String(), g.logText())
	}
	g.cmd.Process.Kill()
	g.cmd.Wait()
	rs = wait(t, "the job whose daemon was killed", cmd, &bytes.Buffer{}, &bytes.Buffer{})
	if rs.code == 0 || !strings.Contains(e.String(), ") that held this job's master is gone (") {
		t.Errorf("the daemon killed under a job: exit %d, want non-zero naming the lost bcsd\n%s", rs.code, e.String())
	}
	t.Logf("the daemon killed under a job, what the user saw: exit %d\n%s", rs.code, e.String())
	nothingLeftWithin(t, 30*time.Second)
}
