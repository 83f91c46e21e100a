package main

import (
	"bytes"
	"context"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/bcsmpi/bcsmpi/internal/slurmtest"
)

// TestSlurmAcrossHosts runs jobs with bcsrun inside `salloc -N3` on a real
// Slurm of three network-namespace hosts: srun starts one bcsd per host,
// the bcsds meet through PMI-2 and mesh over the bridge, and the ranks'
// results are right; a failing rank fails the job naming the rank; after
// each job the allocation is gone and no process of the job is left on any
// host, nor a region file.
func TestSlurmAcrossHosts(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a Slurm cluster")
	}
	cl := slurmtest.Start(t, 3, 2)
	salloc := func(t *testing.T, args ...string) run {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
		defer cancel()
		cmd := cl.CommandContext(ctx, "salloc", append([]string{"-N3", "--quiet", filepath.Join(bin, "bcsrun")}, args...)...)
		cmd.Dir = bin
		var o, e bytes.Buffer
		cmd.Stdout, cmd.Stderr = &o, &e
		err := cmd.Run()
		if ctx.Err() != nil {
			t.Fatalf("salloc bcsrun %v hung (killed after 120s)\nstdout:\n%s\nstderr:\n%s\n%s", args, o.String(), e.String(), cl.Logs())
		}
		r := run{stdout: o.String(), stderr: e.String()}
		if ee, ok := err.(*exec.ExitError); ok {
			r.code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		// The step and the allocation end with salloc; Slurm marks the job
		// complete shortly after (bounded wait on that event).
		for end := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
			out, err := cl.Command("squeue", "-h", "-o", "%i %T").Output()
			if err == nil && strings.TrimSpace(string(out)) == "" {
				break
			}
			if time.Now().After(end) {
				t.Errorf("the job is still in squeue 30 s after salloc returned: %q %v", out, err)
				break
			}
		}
		nothingLeft(t, map[string]string{})
		return r
	}

	// Where the ranks ran: block placement over the three hosts.
	r := salloc(t, "-n", "5", "/bin/sh", "-c", `echo "rank $BCS_RANK node $BCS_NODE host $SLURMD_NODENAME"`)
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	sort.Strings(lines)
	want := []string{"rank 0 node 0 host h1", "rank 1 node 0 host h1", "rank 2 node 1 host h2", "rank 3 node 1 host h2", "rank 4 node 2 host h3"}
	if r.code != 0 || strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Fatalf("placement: exit %d, lines %q, want %q\nstderr:\n%s", r.code, lines, want, r.stderr)
	}
	if strings.Contains(r.stdout+r.stderr, "BCSD_SECRET") {
		t.Errorf("the secret's variable leaked into the output")
	}

	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"collectives", []string{"-n", "6", "./e2eprog", "collectives"}, "collectives ok: 6 ranks"},
		{"ring", []string{"-n", "4", "./ring"}, "ring: lap 2 ok, token 6"},
		{"exchange", []string{"-n", "3", "--tag-output", "./e2eprog", "exchange"}, "exchange ok: 3 ranks"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := salloc(t, c.args...)
			if r.code != 0 || !strings.Contains(r.stdout, c.want) {
				t.Fatalf("exit %d, want stdout containing %q\nstdout:\n%s\nstderr:\n%s", r.code, c.want, r.stdout, r.stderr)
			}
		})
	}

	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		// Rank 1 (on h1, node 0) exits 3 while the others wait for a
		// message that never comes.
		{"rank exits 3 on node 0", []string{"-n", "4", "./e2eprog", "exit3"}, "bcsd on h1: rank 1 exited with status 3; job aborted"},
		// The last rank (on h3, node 2) is killed while the others wait for it.
		{"rank killed on node 2", []string{"-n", "3", "./e2eprog", "kill"}, "bcsd on h3: rank 2 was killed by signal killed; job aborted"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := salloc(t, c.args...)
			if r.code == 0 || !strings.Contains(r.stderr, c.want) {
				t.Fatalf("exit %d, want non-zero and stderr containing %q\nstdout:\n%s\nstderr:\n%s", r.code, c.want, r.stdout, r.stderr)
			}
			t.Logf("what the user saw: exit %d\n%s", r.code, r.stderr)
		})
	}
}

// TestBcsdRefusesPMIx: under a launcher that offers only PMIx, bcsd says to
// use srun --mpi=pmi2 instead of hanging.
func TestBcsdRefusesPMIx(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(bin, "bcsd"), "--ranks", "1", "--", "/bin/true")
	cmd.Env = []string{"PATH=/usr/bin:/bin", "PMIX_RANK=0", "PMIX_VERSION=4.2", "BCSD_SECRET=00112233445566778899aabbccddeeff", "BCSD_JOB=j", "BCSD_CONFIG={}"}
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("bcsd hung under PMIx:\n%s", out)
	}
	if err == nil || !strings.Contains(string(out), "--mpi=pmi2") {
		t.Fatalf("bcsd under PMIx only: %v, want a failure saying --mpi=pmi2:\n%s", err, out)
	}
}
