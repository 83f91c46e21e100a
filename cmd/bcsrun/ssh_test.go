package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bcsmpi/bcsmpi/internal/slurmtest"
)

// TestSSHAcrossHosts runs jobs with bcsrun --hosts over ssh: an sshd in
// each of three namespace hosts (slurmtest's network; Slurm itself is not
// used), bcsrun as the PMI server. Results are right, a failing rank fails
// the job naming the rank, and nothing is left.
func TestSSHAcrossHosts(t *testing.T) {
	if testing.Short() {
		t.Skip("starts namespace hosts and sshd")
	}
	cl, sshCmd := startSSHHosts(t, 3)
	hosts := strings.Join(cl.HostAddr, ",")
	runIn := func(t *testing.T, env []string, stdin io.Reader, args ...string) run {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, filepath.Join(bin, "bcsrun"), append([]string{"--hosts", hosts}, args...)...)
		cmd.Env = append(append(os.Environ(), "BCS_SSH="+sshCmd), env...)
		cmd.Dir = bin
		cmd.Stdin = stdin
		var o, e bytes.Buffer
		cmd.Stdout, cmd.Stderr = &o, &e
		err := cmd.Run()
		if ctx.Err() != nil {
			t.Fatalf("bcsrun %v hung (killed after 120s)\nstdout:\n%s\nstderr:\n%s", args, o.String(), e.String())
		}
		r := run{stdout: o.String(), stderr: e.String()}
		if ee, ok := err.(*exec.ExitError); ok {
			r.code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		nothingLeft(t, map[string]string{})
		return r
	}
	run1 := func(t *testing.T, args ...string) run { t.Helper(); return runIn(t, nil, nil, args...) }
	r := run1(t, "-n", "5", "./e2eprog", "collectives")
	if r.code != 0 || !strings.Contains(r.stdout, "collectives ok: 5 ranks") {
		t.Fatalf("collectives: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	r = run1(t, "-n", "3", "/bin/sh", "-c", `echo "rank $BCS_RANK node $BCS_NODE secret ${BCSD_SECRET:-none}"`)
	for _, w := range []string{"rank 0 node 0 secret none", "rank 1 node 1 secret none", "rank 2 node 2 secret none"} {
		if r.code != 0 || !strings.Contains(r.stdout, w) {
			t.Errorf("placement: exit %d, want %q\nstdout:\n%s\nstderr:\n%s", r.code, w, r.stdout, r.stderr)
		}
	}
	r = run1(t, "-n", "3", "./e2eprog", "kill")
	if r.code == 0 || !strings.Contains(r.stderr, "rank 2 was killed by signal killed") || !strings.Contains(r.stderr, cl.HostAddr[2]) {
		t.Fatalf("failing rank: exit %d, want non-zero naming rank 2 and its host\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	t.Logf("what the user saw: exit %d\n%s", r.code, r.stderr)
	// The failing rank's own status, its host named.
	r = run1(t, "-n", "3", "./e2eprog", "exit3")
	if r.code != 3 || !strings.Contains(r.stderr, "bcsd on "+cl.HostAddr[1]+": rank 1 exited with status 3; job aborted") {
		t.Errorf("rank exits 3: exit %d, want 3 naming rank 1 and host %s\nstderr:\n%s", r.code, cl.HostAddr[1], r.stderr)
	}

	// bcsrun's standard input reaches rank 0 on its host, to its end
	// (cat ends only at EOF), and no other rank; a large input too, through
	// the control connection's window.
	r = runIn(t, nil, strings.NewReader("hi\nthere\n"), "-n", "3", "--tag-output", "/bin/cat")
	if want := fmt.Sprintf("[0@%[1]s] hi\n[0@%[1]s] there\n", cl.HostAddr[0]); r.code != 0 || r.stdout != want {
		t.Errorf("stdin: exit %d, stdout %q, want %q\nstderr:\n%s", r.code, r.stdout, want, r.stderr)
	}
	// Every rank's lines, stdout and stderr, name it and its own host.
	r = run1(t, "--tag-output", "-n", "3", "/bin/sh", "-c", `echo "out $BCS_RANK"; echo "err $BCS_RANK" >&2`)
	for i, h := range cl.HostAddr {
		o, e := fmt.Sprintf("[%d@%s] out %d\n", i, h, i), fmt.Sprintf("[%d@%s] err %d\n", i, h, i)
		if r.code != 0 || !strings.Contains(r.stdout, o) || !strings.Contains(r.stderr, e) {
			t.Errorf("--tag-output: exit %d, want %q on stdout and %q on stderr\nstdout:\n%s\nstderr:\n%s", r.code, o, e, r.stdout, r.stderr)
		}
	}
	big := bytes.Repeat([]byte("0123456789abcdef"), 1<<16) // 1 MiB
	r = runIn(t, nil, bytes.NewReader(big), "-n", "2", "/bin/sh", "-c", `if [ "$BCS_RANK" = 0 ]; then sha256sum; else cat; fi`)
	sum := sha256.Sum256(big)
	if want := hex.EncodeToString(sum[:]) + "  -\n"; r.code != 0 || r.stdout != want {
		t.Errorf("1 MiB of stdin: exit %d, stdout %q, want %q (rank 1 reads nothing)\nstderr:\n%s", r.code, r.stdout, want, r.stderr)
	}

	// The MDS across hosts, as for the same job on one machine.
	want := localMDSFiles(t, "-n", "5", "--nodes", "3", "./e2eprog", "collectives")
	root := t.TempDir()
	r = runIn(t, []string{"BCS_MDS=main,elan", "BCS_MDS_DIR=" + root}, nil, "-n", "5", "./e2eprog", "collectives")
	if r.code != 0 || !strings.Contains(r.stderr, "MMDS summary, 5 ranks") {
		t.Fatalf("MDS: exit %d, want 0 and the summary\nstderr:\n%s", r.code, r.stderr)
	}
	checkHostsMDS(t, latestDir(t, root, r.stderr), want, cl.HostAddr)
	if l := hostMDSLeft(""); len(l) > 0 {
		t.Errorf("the hosts' MDS staging directories were left: %v", l)
	}

	// SIGTERM to bcsrun: every host's part of the MDS comes back.
	{
		root := t.TempDir()
		ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, filepath.Join(bin, "bcsrun"), "--hosts", hosts, "-n", "3", "./e2eprog", "hang")
		cmd.Env = append(os.Environ(), "BCS_SSH="+sshCmd, "BCS_MDS=main,elan", "BCS_MDS_DIR="+root)
		cmd.Dir = bin
		o, e := newWatched(), newWatched()
		cmd.Stdout, cmd.Stderr = o, e
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		if !o.waitFor("ready", 3, 60*time.Second) {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("the ranks did not start:\n%s\n%s", o.String(), e.String())
		}
		cmd.Process.Signal(syscall.SIGTERM)
		cmd.Wait()
		if c := cmd.ProcessState.ExitCode(); c != 143 {
			t.Errorf("SIGTERM with MDS: exit %d, want 143\n%s", c, e.String())
		}
		dir := latestDir(t, root, e.String())
		m := readHostsManifest(t, dir)
		if len(m.MissingHosts) > 0 {
			t.Errorf("SIGTERM with MDS: missing %q\n%s", m.MissingHosts, e.String())
		}
		for _, f := range []string{"emds-global.csv", "emds-node2.csv", "mmds-rank0.csv", "mmds-rank2.csv"} {
			if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
				t.Errorf("SIGTERM with MDS: %s: %v", f, err)
			}
		}
		nothingLeftWithin(t, 30*time.Second)
	}

	// A host's bcsd SIGKILLed mid-job, with the MDS: the job fails naming
	// the host, the others' data comes back, and the killed bcsd's staging
	// directory is removed by bcsrun (bcsd --cleanup over ssh).
	{
		root := t.TempDir()
		ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, filepath.Join(bin, "bcsrun"), "--hosts", hosts, "-n", "3", "./e2eprog", "hang")
		cmd.Env = append(os.Environ(), "BCS_SSH="+sshCmd, "BCS_MDS=main,elan", "BCS_MDS_DIR="+root, "BCS_NODE_TIMEOUT=1s")
		cmd.Dir = bin
		o, e := newWatched(), newWatched()
		cmd.Stdout, cmd.Stderr = o, e
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		if !o.waitFor("ready", 3, 60*time.Second) {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("the ranks did not start:\n%s\n%s", o.String(), e.String())
		}
		if pid := bcsdIn("bcsslurm3"); pid != 0 {
			syscall.Kill(pid, syscall.SIGKILL)
		} else {
			t.Errorf("no bcsd in host 3's namespace")
		}
		cmd.Wait()
		if ctx.Err() != nil {
			t.Fatalf("bcsd killed over ssh: bcsrun hung\n%s", e.String())
		}
		if c := cmd.ProcessState.ExitCode(); c == 0 || !strings.Contains(e.String(), cl.HostAddr[2]) {
			t.Errorf("bcsd killed over ssh: exit %d, want non-zero naming host %s\n%s", c, cl.HostAddr[2], e.String())
		}
		if left := hostMDSLeft(""); len(left) > 0 {
			for _, l := range left {
				os.RemoveAll(l)
			}
			t.Errorf("bcsd killed over ssh: staging directories left: %q, want none", left)
		}
		m := readHostsManifest(t, latestDir(t, root, e.String()))
		if len(m.MissingHosts) != 1 || !strings.Contains(m.MissingHosts[0], "(node 2): MDS data missing") {
			t.Errorf("bcsd killed over ssh: missing hosts %q, want node 2's", m.MissingHosts)
		}
		t.Logf("bcsd killed over ssh, what the user saw: exit %d\n%s", cmd.ProcessState.ExitCode(), e.String())
		nothingLeftWithin(t, 30*time.Second)
	}

	// bcsrun SIGKILLed mid-job: its ssh clients die with it, and with them
	// every host's bcsd and ranks (nothingLeft in run1's place).
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(bin, "bcsrun"), "--hosts", hosts, "-n", "3", "./e2eprog", "hang")
	cmd.Env = append(os.Environ(), "BCS_SSH="+sshCmd)
	cmd.Dir = bin
	o, e := newWatched(), newWatched()
	cmd.Stdout, cmd.Stderr = o, e
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if !o.waitFor("ready", 3, 60*time.Second) {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("the ranks did not start:\n%s\n%s", o.String(), e.String())
	}
	cmd.Process.Kill()
	cmd.Wait()
	nothingLeftWithin(t, 30*time.Second)
}

// startSSHHosts starts n namespace hosts (slurmtest's network; Slurm
// itself is not used) with an sshd each that accepts a key made here, and
// returns the cluster and the ssh command (key BCS_SSH) that logs into
// them. The sshds accept BCS_RUNTIME_DIR from the client (ssh -o
// SendEnv=BCS_RUNTIME_DIR): the gang test's daemon's directory. They are
// stopped at the end of the test.
func startSSHHosts(t *testing.T, n int) (*slurmtest.Cluster, string) {
	t.Helper()
	cl := slurmtest.Start(t, n, 2)
	return cl, cl.StartSSH(t)
}

// nothingLeftWithin waits (bounded) until no process of the test binaries
// runs, as the ends of remote sessions take a moment to propagate.
func nothingLeftWithin(t *testing.T, d time.Duration) {
	t.Helper()
	for end := time.Now().Add(d); len(ourProcesses()) > 0; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(end) {
			t.Errorf("processes left %v after bcsrun was killed: %v", d, ourProcesses())
			for _, p := range ourProcesses() {
				var pid int
				fmt.Sscan(p, &pid)
				syscall.Kill(pid, syscall.SIGKILL)
			}
			return
		}
	}
}
