package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bcsmpi/bcsmpi/internal/slurmtest"
)

// TestSlurmGang: two jobs in two allocations of the same two hosts of a
// real Slurm (salloc -w h1,h2; the hosts have two cores each) share them
// under the gang of this user's bcsd on h1, the allocations' first host:
// srun carries BCS_RUNTIME_DIR and --gang (BCSD_GANG) to the bcsds, and
// node 0's asks the daemon for a place. Both finish with their own checked
// results, and each was descheduled, by its own count (bcsrun -v).
func TestSlurmGang(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a Slurm cluster and a bcsd")
	}
	cl := slurmtest.Start(t, 2, 2)
	dir := filepath.Join(t.TempDir(), "run")
	g := startGangdIn(t, "bcsslurm1", dir)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	start := func(args ...string) (*exec.Cmd, *watched, *watched) {
		t.Helper()
		cmd := cl.CommandContext(ctx, "salloc", append([]string{"-w", "h1,h2", "--quiet", filepath.Join(bin, "bcsrun"), "-v", "--gang=on"}, args...)...)
		cmd.Env = append(cmd.Env, "BCS_RUNTIME_DIR="+dir)
		cmd.Dir = bin
		o, e := newWatched(), newWatched()
		cmd.Stdout, cmd.Stderr = o, e
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		return cmd, o, e
	}
	finish := func(what string, cmd *exec.Cmd, o, e *watched, want string) {
		t.Helper()
		err := cmd.Wait()
		if ctx.Err() != nil {
			t.Fatalf("%s hung\nstdout:\n%s\nstderr:\n%s\ndaemon:\n%s\n%s", what, o.String(), e.String(), g.logText(), cl.Logs())
		}
		if err != nil || !strings.Contains(o.String(), want) {
			t.Fatalf("%s: %v, want %q\nstdout:\n%s\nstderr:\n%s\ndaemon:\n%s", what, err, want, o.String(), e.String(), g.logText())
		}
		var id string
		var ran, alive uint64
		for _, l := range strings.Split(e.String(), "\n") {
			if strings.Contains(l, ": in a gang: ran in ") {
				fmt.Sscanf(l, "bcsrun: job %s in a gang: ran in %d of its %d slices", &id, &ran, &alive)
			}
		}
		if alive == 0 || ran == 0 || ran >= alive {
			t.Errorf("%s: ran in %d of %d slices, want descheduled at least once (bcsrun -v)\n%s", what, ran, alive, e.String())
		}
		t.Logf("%s: ran in %d of %d slices", what, ran, alive)
	}
	stop := filepath.Join(t.TempDir(), "stop")
	a, ao, ae := start("-n", "4", "./e2eprog", "gangwork", "20", stop)
	b, bo, be := start("-n", "2", "./e2eprog", "gangwork", "150")
	finish("job B", b, bo, be, "gangwork ok: 2 ranks, 150 iterations")
	if err := os.WriteFile(stop, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	finish("job A", a, ao, ae, "gangwork ok: 4 ranks, ")
	log := g.logText()
	for i := 1; i <= 2; i++ {
		if !strings.Contains(log, fmt.Sprintf("job %d: left the gang after ", i)) {
			t.Errorf("the daemon's log lacks job %d leaving the gang:\n%s", i, log)
		}
	}
	g.stop(t)
	nothingLeftWithin(t, 30*time.Second)
}
