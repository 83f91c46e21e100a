package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/bcsmpi/bcsmpi/emds"
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
	cbuild := startCBuild(t) // the C programs of subtest C, built while the cluster starts
	cl := slurmtest.Start(t, 3, 2)
	// sallocHook runs bcsrun in `salloc -N3`; during, if not nil, runs while
	// the job runs, with the job's output so far.
	sallocHook := func(t *testing.T, env []string, stdin string, during func(o, e *watched), args ...string) run {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
		defer cancel()
		hosts := "-N3"
		if len(args) > 0 && strings.HasPrefix(args[0], "-N") {
			hosts, args = args[0], args[1:]
		}
		cmd := cl.CommandContext(ctx, "salloc", append([]string{hosts, "--quiet", filepath.Join(bin, "bcsrun")}, args...)...)
		cmd.Env = append(cmd.Env, env...)
		cmd.Dir = bin
		o, e := newWatched(), newWatched()
		cmd.Stdout, cmd.Stderr = o, e
		if stdin != "" {
			cmd.Stdin = strings.NewReader(stdin)
		}
		err := cmd.Start()
		if err == nil {
			if during != nil {
				during(o, e)
			}
			err = cmd.Wait()
		}
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
	salloc := func(t *testing.T, args ...string) run { t.Helper(); return sallocHook(t, nil, "", nil, args...) }

	// Where the ranks ran: block placement over the three hosts.
	r := salloc(t, "-n", "5", "/bin/sh", "-c", `echo "rank $BCS_RANK node $BCS_NODE host $SLURMD_NODENAME"`)
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	sort.Strings(lines)
	want := []string{"rank 0 node 0 host h1", "rank 1 node 0 host h1", "rank 2 node 1 host h2", "rank 3 node 1 host h2", "rank 4 node 2 host h3"}
	if r.code != 0 || strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Fatalf("placement: exit %d, lines %q, want %q\nstderr:\n%s", r.code, lines, want, r.stderr)
	}
	// --ppn 2 uses two of the three hosts; --map-by cyclic deals ranks round-robin.
	for _, pc := range []struct {
		args []string
		want []string
	}{
		{[]string{"--ppn", "2", "-n", "3"}, []string{"rank 0 node 0 host h1", "rank 1 node 0 host h1", "rank 2 node 1 host h2"}},
		{[]string{"--map-by", "cyclic", "-n", "4"}, []string{"rank 0 node 0 host h1", "rank 1 node 1 host h2", "rank 2 node 2 host h3", "rank 3 node 0 host h1"}},
	} {
		pr := salloc(t, append(pc.args, "/bin/sh", "-c", `echo "rank $BCS_RANK node $BCS_NODE host $SLURMD_NODENAME"`)...)
		pl := strings.Split(strings.TrimSpace(pr.stdout), "\n")
		sort.Strings(pl)
		if pr.code != 0 || strings.Join(pl, "\n") != strings.Join(pc.want, "\n") {
			t.Errorf("placement %v: exit %d, lines %q, want %q\nstderr:\n%s", pc.args, pr.code, pl, pc.want, pr.stderr)
		}
	}
	if strings.Contains(r.stdout+r.stderr, "BCSD_SECRET") {
		t.Errorf("the secret's variable leaked into the output")
	}
	// Standard input reaches rank 0 (on h1) only, through srun and bcsd.
	r = sallocHook(t, nil, "hi\n", nil, "-n", "3", "cat")
	if r.code != 0 || r.stdout != "hi\n" {
		t.Errorf("stdin: exit %d, stdout %q, want \"hi\\n\" once\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}

	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"collectives", []string{"-n", "6", "./e2eprog", "collectives"}, "collectives ok: 6 ranks"},
		{"ring", []string{"-n", "4", "./ring"}, "ring: lap 2 ok, token 6"},
		{"exchange", []string{"-n", "3", "--tag-output", "./e2eprog", "exchange"}, "[0@h1] exchange ok: 3 ranks"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := salloc(t, c.args...)
			if r.code != 0 || !strings.Contains(r.stdout, c.want) {
				t.Fatalf("exit %d, want stdout containing %q\nstdout:\n%s\nstderr:\n%s", r.code, c.want, r.stdout, r.stderr)
			}
		})
	}

	// --tag-output names each line's rank and that rank's host, on stdout
	// and stderr, for every rank (cyclic: every host has a rank, h1 two).
	t.Run("tag-output, every rank's host", func(t *testing.T) {
		r := salloc(t, "--tag-output", "--map-by", "cyclic", "-n", "4", "/bin/sh", "-c", `echo "out $BCS_RANK"; echo "err $BCS_RANK" >&2`)
		out, errs := strings.Split(strings.TrimSpace(r.stdout), "\n"), []string{}
		for _, l := range strings.Split(r.stderr, "\n") {
			if strings.HasPrefix(l, "[") { // bcsrun's own lines are not tagged
				errs = append(errs, l)
			}
		}
		sort.Strings(out)
		sort.Strings(errs)
		var wantOut, wantErr []string
		for i, h := range []string{"h1", "h2", "h3", "h1"} {
			wantOut = append(wantOut, fmt.Sprintf("[%d@%s] out %d", i, h, i))
			wantErr = append(wantErr, fmt.Sprintf("[%d@%s] err %d", i, h, i))
		}
		if r.code != 0 || !slices.Equal(out, wantOut) || !slices.Equal(errs, wantErr) {
			t.Errorf("exit %d\nstdout %q, want %q\nstderr %q, want %q", r.code, out, wantOut, errs, wantErr)
		}
	})

	// cabi's C suites (MPI semantics), compiled with bcscc, across the hosts.
	t.Run("C", func(t *testing.T) { cAcrossHosts(t, cbuild, sallocHook) })

	for _, c := range []struct {
		name string
		args []string
		want string
		code int    // the failing rank's own status, not srun's
		also string // the failing call, as the rank names it
	}{
		// Rank 1 (on h1, node 0) exits 3 while the others wait for a
		// message that never comes.
		{"rank exits 3 on node 0", []string{"-n", "4", "./e2eprog", "exit3"}, "bcsd on h1: rank 1 exited with status 3; job aborted", 3, ""},
		// The last rank (on h3, node 2) is killed while the others wait for it.
		{"rank killed on node 2", []string{"-n", "3", "./e2eprog", "kill"}, "bcsd on h3: rank 2 was killed by signal killed; job aborted", 137, ""},
		// Rank 1 (on h2) calls MPI_Abort(1) on a bad argument.
		{"MPI error on node 1", []string{"-n", "3", "--ppn", "1", "./e2eprog", "badrank"}, "bcsd on h2: rank 1 exited with status 1; job aborted", 1,
			"bcsmpi: rank 1: MPI_Send: MPI_ERR_RANK: dest = 99"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := salloc(t, c.args...)
			if r.code != c.code || !strings.Contains(r.stderr, c.want) || !strings.Contains(r.stderr, c.also) {
				t.Fatalf("exit %d, want %d and stderr containing %q\nstdout:\n%s\nstderr:\n%s", r.code, c.code, c.want, r.stdout, r.stderr)
			}
			t.Logf("what the user saw: exit %d\n%s", r.code, r.stderr)
		})
	}

	// Without PMI-2 (slurm_mpi: none, srun --mpi=none): the bcsds meet at
	// bcsrun's port, as over ssh. The same results, the same failures.
	t.Run("without PMI", func(t *testing.T) {
		// srun tells its tasks the plugin (SLURM_MPI_TYPE, none: unset).
		for _, mpi := range []string{"pmi2", "none"} {
			r := sallocHook(t, []string{"BCS_SLURM_MPI=" + mpi}, "", nil, "-n", "5", "/bin/sh", "-c", `echo "rank $BCS_RANK node $BCS_NODE host $SLURMD_NODENAME mpi ${SLURM_MPI_TYPE:-none}"`)
			lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
			sort.Strings(lines)
			var want []string
			for i, h := range []string{"h1", "h1", "h2", "h2", "h3"} {
				want = append(want, fmt.Sprintf("rank %d node %d host %s mpi %s", i, i/2, h, mpi))
			}
			if r.code != 0 || !slices.Equal(lines, want) {
				t.Errorf("placement: exit %d, lines %q, want %q\nstderr:\n%s", r.code, lines, want, r.stderr)
			}
		}
		none := []string{"BCS_SLURM_MPI=none"}
		r := sallocHook(t, none, "", nil, "-n", "6", "./e2eprog", "collectives")
		if r.code != 0 || !strings.Contains(r.stdout, "collectives ok: 6 ranks") {
			t.Errorf("collectives: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
		}
		r = sallocHook(t, none, "", nil, "-n", "4", "./e2eprog", "exit3")
		if r.code != 3 || !strings.Contains(r.stderr, "bcsd on h1: rank 1 exited with status 3; job aborted") {
			t.Errorf("failing rank: exit %d, want 3 naming rank 1 on h1\nstderr:\n%s", r.code, r.stderr)
		}
	})
	// slurm_mpi: auto (the default) chooses none where srun --mpi=list does
	// not name pmi2 (an srun that lists only none and cray_shasta, in front
	// of the real one).
	t.Run("auto, srun without pmi2", func(t *testing.T) {
		real, err := exec.LookPath("srun")
		if err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		script := "#!/bin/sh\nif [ \"$1\" = --mpi=list ]; then printf 'MPI plugin types are...\\n\\tnone\\n\\tcray_shasta\\n'; exit 0; fi\nexec " + real + " \"$@\"\n"
		if err := os.WriteFile(filepath.Join(dir, "srun"), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
		r := sallocHook(t, []string{"PATH=" + dir + ":" + os.Getenv("PATH")}, "", nil, "-n", "3", "/bin/sh", "-c", `echo "rank $BCS_RANK host $SLURMD_NODENAME mpi ${SLURM_MPI_TYPE:-none}"`)
		lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
		sort.Strings(lines)
		want := []string{"rank 0 host h1 mpi none", "rank 1 host h2 mpi none", "rank 2 host h3 mpi none"}
		if r.code != 0 || !slices.Equal(lines, want) {
			t.Errorf("exit %d, lines %q, want %q\nstderr:\n%s", r.code, lines, want, r.stderr)
		}
	})

	// The MDS across hosts: the same files as the same job on one machine,
	// in one directory on bcsrun's host, the manifest naming every host.
	t.Run("MDS", func(t *testing.T) {
		want := localMDSFiles(t, "-n", "5", "--nodes", "3", "./e2eprog", "collectives")
		root := t.TempDir()
		r := sallocHook(t, []string{"BCS_MDS=main,elan", "BCS_MDS_DIR=" + root}, "", nil, "-n", "5", "./e2eprog", "collectives")
		if r.code != 0 || !strings.Contains(r.stdout, "collectives ok: 5 ranks") || !strings.Contains(r.stderr, "MMDS summary, 5 ranks") {
			t.Fatalf("exit %d, want 0, the result and the MMDS summary\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
		}
		checkHostsMDS(t, latestDir(t, root, r.stderr), want, []string{"h1", "h2", "h3"})
		if l := hostMDSLeft("slurm"); len(l) > 0 {
			t.Errorf("the hosts' MDS staging directories were left: %v", l)
		}
	})
	// The kernel monitor across hosts: each host's bcsd runs its own
	// (kernelhosts_test.go says what is checked).
	t.Run("MDS, kernel monitor", func(t *testing.T) {
		kernelOK(t)
		root := t.TempDir()
		r := sallocHook(t, []string{"BCS_MDS=main,elan,kernel", "BCS_MDS_DIR=" + root}, "", nil, "-n", "3", "--tag-output", "--timeslice", "500us", "./e2eprog", "spin")
		if r.code != 0 {
			t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
		}
		checkKernelAcrossHosts(t, r, latestDir(t, root, r.stderr), []string{"h1", "h2", "h3"})
		if l := hostMDSLeft("slurm"); len(l) > 0 {
			t.Errorf("the hosts' MDS staging directories were left: %v", l)
		}
	})
	t.Run("MDS, failing rank", func(t *testing.T) {
		// Every rank is in MPI (it printed "ready"); rank 2, on h2, is
		// killed: the others are stopped and dump their MMDS.
		root := t.TempDir()
		r := sallocHook(t, []string{"BCS_MDS=main,elan", "BCS_MDS_DIR=" + root}, "", func(o, e *watched) {
			if !o.waitFor("ready", 4, 60*time.Second) {
				t.Errorf("the ranks did not start:\n%s\n%s", o.String(), e.String())
				return
			}
			if pid := processIn("bcsslurm2", filepath.Join(bin, "e2eprog")); pid != 0 {
				syscall.Kill(pid, syscall.SIGKILL)
			} else {
				t.Errorf("no rank in host h2's namespace")
			}
		}, "-n", "4", "./e2eprog", "hang")
		if r.code != 137 || !strings.Contains(r.stderr, "bcsd on h2: rank 2 was killed by signal killed; job aborted") {
			t.Fatalf("exit %d, want 137 naming rank 2 on h2\nstderr:\n%s", r.code, r.stderr)
		}
		dir := latestDir(t, root, r.stderr)
		m := readHostsManifest(t, dir)
		if m.ExitCode == nil || *m.ExitCode != 137 || len(m.MissingHosts) > 0 || !slices.Equal(m.Hosts, []string{"h1", "h2", "h3"}) {
			t.Errorf("manifest: exit %v, hosts %q, missing %q; want 137, every host, none missing", m.ExitCode, m.Hosts, m.MissingHosts)
		}
		// Every host's part came back, the stopped ranks' dumps included.
		for _, f := range []string{"emds-global.csv", "emds-node0.csv", "emds-node1.csv", "emds-node2.csv", "mmds-rank0.csv", "mmds-rank1.csv", "mmds-rank3.csv"} {
			if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
				t.Errorf("%s: %v", f, err)
			}
		}
	})

	// Start-up, measured on request (BCS_SLURM_MEASURE=1): bcsrun's wall
	// time (srun and every bcsd, to the job's end) for a one-barrier job on
	// 1 and 3 hosts; the local launcher for comparison.
	if os.Getenv("BCS_SLURM_MEASURE") != "" {
		t.Run("start-up", func(t *testing.T) {
			wall := regexp.MustCompile(`([0-9.]+)s wall`)
			for _, c := range [][]string{{"-N1", "-n", "1"}, {"-N3", "-n", "3"}, {"-N1", "--launcher", "local", "-n", "3", "--nodes", "3"}} {
				var ts []string
				for i := 0; i < 5; i++ {
					start := time.Now()
					r := salloc(t, append(c, "-v", "./barrier", "-iters", "1")...)
					m := wall.FindStringSubmatch(r.stderr)
					if r.code != 0 || m == nil {
						t.Fatalf("exit %d\n%s", r.code, r.stderr)
					}
					ts = append(ts, fmt.Sprintf("%ss (salloc %.3fs)", m[1], time.Since(start).Seconds()))
				}
				t.Logf("%v: bcsrun wall %v", c, ts)
			}
			// The stencil across 2 hosts, MDS off and on (main,elan): the
			// program's own wall time and salloc's (gathering included).
			// Interleaved rounds, so that the machine's load falls on both.
			swall := regexp.MustCompile(`wall ([0-9.]+) s`)
			modes := []string{"none", "main,elan"}
			ts := map[string][]string{}
			for i := 0; i < 7; i++ {
				for _, mode := range modes {
					root := t.TempDir()
					start := time.Now()
					r := sallocHook(t, []string{"BCS_MDS=" + mode, "BCS_MDS_DIR=" + root}, "", nil, "-N2", "-n", "4", "./stencil", "-iters", "400")
					m := swall.FindStringSubmatch(r.stdout)
					if r.code != 0 || m == nil {
						t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
					}
					ts[mode] = append(ts[mode], fmt.Sprintf("%ss (salloc %.3fs)", m[1], time.Since(start).Seconds()))
				}
			}
			for _, mode := range modes {
				t.Logf("stencil -n 4 on 2 hosts, mds %s: %v", mode, ts[mode])
			}
			for _, n := range []string{"1", "3"} { // Slurm's own share: a step of /bin/true
				var ts []string
				for i := 0; i < 5; i++ {
					start := time.Now()
					if out, err := cl.Command("salloc", "-N"+n, "--quiet", "srun", "--mpi=pmi2", "-N"+n, "-n"+n, "--quiet", "/bin/true").CombinedOutput(); err != nil {
						t.Fatalf("salloc srun /bin/true: %v\n%s", err, out)
					}
					ts = append(ts, fmt.Sprintf("%.3fs", time.Since(start).Seconds()))
				}
				t.Logf("salloc -N%s srun --mpi=pmi2 /bin/true: %v", n, ts)
			}
		})
	}

	// Hosts failing under a running job (every rank blocked in a receive
	// after printing "ready"): detected within node_timeout, the job ends
	// non-zero naming the host, and nothing is left.
	fast := []string{"BCS_NODE_TIMEOUT=1s"}
	t.Run("bcsd killed", func(t *testing.T) {
		var killed time.Time
		r := sallocHook(t, fast, "", func(o, e *watched) {
			if !o.waitFor("ready", 3, 60*time.Second) {
				t.Errorf("the ranks did not start:\n%s\n%s", o.String(), e.String())
				return
			}
			pid := bcsdIn("bcsslurm3")
			if pid == 0 {
				t.Errorf("no bcsd in host h3's namespace")
				return
			}
			killed = time.Now()
			syscall.Kill(pid, syscall.SIGKILL)
			if e.waitFor("job aborted", 1, 60*time.Second) {
				t.Logf("detected after %v", time.Since(killed).Round(time.Millisecond))
			}
		}, "-n", "3", "./e2eprog", "hang")
		if r.code == 0 || !strings.Contains(r.stderr, "h3") {
			t.Fatalf("exit %d, want non-zero and stderr naming h3\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
		}
		t.Logf("what the user saw (%v after the kill, teardown included): exit %d\n%s", time.Since(killed).Round(time.Millisecond), r.code, r.stderr)
	})
	t.Run("bcsd killed, MDS", func(t *testing.T) {
		root := t.TempDir()
		r := sallocHook(t, append([]string{"BCS_MDS=main,elan", "BCS_MDS_DIR=" + root}, fast...), "", func(o, e *watched) {
			if !o.waitFor("ready", 3, 60*time.Second) {
				t.Errorf("the ranks did not start:\n%s\n%s", o.String(), e.String())
				return
			}
			if pid := bcsdIn("bcsslurm3"); pid != 0 {
				syscall.Kill(pid, syscall.SIGKILL)
			} else {
				t.Errorf("no bcsd in host h3's namespace")
			}
		}, "-n", "3", "./e2eprog", "hang")
		// The killed bcsd could not remove its staging directory, the
		// others removed theirs, and bcsrun removed node 2's on h3 (bcsd
		// --cleanup through srun) once the job had ended: nothing is left.
		if left := hostMDSLeft("slurm"); len(left) > 0 {
			for _, l := range left {
				os.RemoveAll(l)
			}
			t.Errorf("staging directories left: %q, want none (bcsrun cleans up after a killed bcsd)", left)
		}
		if strings.Contains(r.stderr, "staging directory") {
			t.Errorf("a warning about the staging directory:\n%s", r.stderr)
		}
		if r.code == 0 {
			t.Fatalf("exit 0\nstderr:\n%s", r.stderr)
		}
		dir := latestDir(t, root, r.stderr)
		m := readHostsManifest(t, dir)
		if len(m.MissingHosts) != 1 || !strings.Contains(m.MissingHosts[0], "host h3 (node 2): MDS data missing") || !strings.Contains(r.stderr, "bcsrun: MDS: host h3 (node 2): MDS data missing") {
			t.Errorf("missing hosts %q, want one line naming h3, also on stderr:\n%s", m.MissingHosts, r.stderr)
		}
		for _, f := range []string{"emds-global.csv", "emds-node0.csv", "emds-node1.csv", "mmds-rank0.csv", "mmds-rank1.csv"} {
			if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
				t.Errorf("the other hosts' data: %s: %v", f, err)
			}
		}
		if _, err := os.Stat(filepath.Join(dir, "emds-node2.csv")); err == nil {
			t.Errorf("emds-node2.csv of the killed host exists")
		}
		t.Logf("what the user saw: exit %d\n%s", r.code, r.stderr)
	})
	t.Run("deadlock while other hosts wait at the end", func(t *testing.T) {
		// Ranks 2 and 3 (h2, h3) finish, so their bcsds wait in the
		// end-of-job fence; ranks 0 and 1 (h1) receive from each other.
		r := sallocHook(t, []string{"BCS_DEADLOCK_SLICES=50"}, "", nil, "-n", "4", "./e2eprog", "deadlock")
		if r.code == 0 || !strings.Contains(r.stderr, "wait-for cycle: 0 -> 1 -> 0") {
			t.Fatalf("exit %d, want non-zero and the deadlock report\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
		}
		t.Logf("what the user saw: exit %d\n%s", r.code, r.stderr)
	})
	t.Run("SIGTERM to bcsrun", func(t *testing.T) {
		r := sallocHook(t, nil, "", func(o, e *watched) {
			if !o.waitFor("ready", 3, 60*time.Second) {
				t.Errorf("the ranks did not start:\n%s\n%s", o.String(), e.String())
				return
			}
			pid := processOf(filepath.Join(bin, "bcsrun"))
			if pid == 0 {
				t.Errorf("no bcsrun running")
				return
			}
			syscall.Kill(pid, syscall.SIGTERM)
		}, "-n", "3", "./e2eprog", "hang")
		if r.code != 143 || !strings.Contains(r.stderr, "bcsrun: terminated received, job terminated") {
			t.Fatalf("exit %d, want 143 and the signal named\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
		}
		t.Logf("what the user saw: exit %d\n%s", r.code, r.stderr)
	})
	t.Run("SIGTERM to bcsrun, MDS", func(t *testing.T) {
		// Every host's part comes back when the job is stopped: the ranks'
		// dumps at the signal, each node's EMDS.
		root := t.TempDir()
		r := sallocHook(t, []string{"BCS_MDS=main,elan", "BCS_MDS_DIR=" + root}, "", func(o, e *watched) {
			if !o.waitFor("ready", 3, 60*time.Second) {
				t.Errorf("the ranks did not start:\n%s\n%s", o.String(), e.String())
				return
			}
			if pid := processOf(filepath.Join(bin, "bcsrun")); pid != 0 {
				syscall.Kill(pid, syscall.SIGTERM)
			} else {
				t.Errorf("no bcsrun running")
			}
		}, "-n", "3", "./e2eprog", "hang")
		if r.code != 143 {
			t.Fatalf("exit %d, want 143\nstderr:\n%s", r.code, r.stderr)
		}
		dir := latestDir(t, root, r.stderr)
		m := readHostsManifest(t, dir)
		if m.ExitCode == nil || *m.ExitCode != 143 || len(m.MissingHosts) > 0 {
			t.Errorf("manifest: exit %v, missing %q; want 143, none missing", m.ExitCode, m.MissingHosts)
		}
		for _, f := range []string{"emds-global.csv", "emds-node0.csv", "emds-node1.csv", "emds-node2.csv", "mmds-rank0.csv", "mmds-rank1.csv", "mmds-rank2.csv"} {
			if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
				t.Errorf("%s: %v", f, err)
			}
		}
	})
	t.Run("bcsrun SIGKILLed", func(t *testing.T) {
		// bcsrun dies while the allocation goes on (the shell salloc runs
		// waits for a line): srun, orphaned, would wait for its tasks for
		// ever; each bcsd sees its control connection end and ends its
		// host's part, and the step ends.
		ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
		defer cancel()
		cmd := cl.CommandContext(ctx, "salloc", "-N3", "--quiet", "/bin/sh", "-c", filepath.Join(bin, "bcsrun")+" -n 3 ./e2eprog hang </dev/null; read line")
		// No deadlock detection: the ranks wait for ever unless ended.
		cmd.Env = append(cmd.Env, "BCS_NODE_TIMEOUT=1s", "BCS_DEADLOCK_SLICES=0")
		cmd.Dir = bin
		o, e := newWatched(), newWatched()
		cmd.Stdout, cmd.Stderr = o, e
		in, err := cmd.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		defer func() {
			in.Close() // the shell, then salloc, end
			cmd.Wait()
		}()
		if !o.waitFor("ready", 3, 60*time.Second) {
			t.Fatalf("the ranks did not start:\n%s\n%s", o.String(), e.String())
		}
		pid := processOf(filepath.Join(bin, "bcsrun"))
		if pid == 0 {
			t.Fatal("no bcsrun running")
		}
		syscall.Kill(pid, syscall.SIGKILL)
		end := time.Now().Add(60 * time.Second) // a bound on a hang
		for len(ourProcesses()) > 0 || stepsLeft(cl) {
			if time.Now().After(end) {
				t.Fatalf("60 s after bcsrun was killed, still running: %v (steps left: %v)\n%s", ourProcesses(), stepsLeft(cl), e.String())
			}
			time.Sleep(50 * time.Millisecond)
		}
		if !strings.Contains(e.String(), "the control connection to bcsrun ended (bcsrun is gone); job aborted") {
			t.Errorf("the hosts did not say why they ended:\n%s", e.String())
		}
		t.Logf("what the user saw:\n%s", e.String())
	})
	t.Run("link cut", func(t *testing.T) {
		var cut time.Time
		r := sallocHook(t, fast, "", func(o, e *watched) {
			if !o.waitFor("ready", 3, 60*time.Second) {
				t.Errorf("the ranks did not start:\n%s\n%s", o.String(), e.String())
				return
			}
			if out, err := exec.Command("ip", "link", "set", "vbcs3", "down").CombinedOutput(); err != nil {
				t.Errorf("ip link set vbcs3 down: %v: %s", err, out)
				return
			}
			cut = time.Now()
			// The master says h3 stopped answering (or, cut off while it
			// transmitted, was lost: its kernel answered no probe).
			seen := e.waitFor("job aborted", 1, 60*time.Second)
			t.Logf("detected after %v", time.Since(cut).Round(time.Millisecond))
			// Up again, so that Slurm can end the step on h3 (a host cut
			// for good is Slurm's to declare down).
			if out, err := exec.Command("ip", "link", "set", "vbcs3", "up").CombinedOutput(); err != nil {
				t.Errorf("ip link set vbcs3 up: %v: %s", err, out)
			}
			if !seen {
				t.Errorf("the cut was not detected in 60 s:\n%s", e.String())
			}
		}, "-n", "3", "./e2eprog", "hang")
		if r.code == 0 || !strings.Contains(r.stderr, "node 2 is host h3") {
			t.Fatalf("exit %d, want non-zero and stderr naming host h3\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
		}
		t.Logf("what the user saw (%v after the cut, teardown included): exit %d\n%s", time.Since(cut).Round(time.Millisecond), r.code, r.stderr)
	})
	// A partition between h2 and h3 while both still reach h1, where the
	// master runs: ranks 1 (h2) and 2 (h3) exchange 1 MiB messages in a
	// loop when each host's packets to the other start to vanish (a
	// blackhole route in each namespace: silent, no RST, no ICMP; this
	// machine has no iptables). The master hears both agents; the agents
	// notice each other's silence within node_timeout, and the message
	// names both hosts.
	for _, c := range []struct{ name, size string }{
		// 1 MiB a message: the senders block on the lost link, their
		// send timeout notices (took none of the data).
		{"1 MiB messages", "1048576"},
		// 4 KiB: the sends go into the sockets' buffers, the receivers'
		// wait notices (sent no data).
		{"4 KiB messages", "4096"},
	} {
		t.Run("partition, "+c.name, func(t *testing.T) {
			cut := partition(t, cl, 2, 3)
			var at time.Time
			r := sallocHook(t, fast, "", func(o, e *watched) {
				defer cut(false)
				if !o.waitFor("ready", 3, 60*time.Second) {
					t.Errorf("the ranks did not start:\n%s\n%s", o.String(), e.String())
					return
				}
				cut(true)
				at = time.Now()
				seen := e.waitFor("job aborted", 1, 60*time.Second)
				t.Logf("detected after %v", time.Since(at).Round(time.Millisecond))
				if !seen {
					t.Errorf("the partition was not detected in 60 s:\n%s", e.String())
				}
			}, "-n", "3", "--ppn", "1", "./e2eprog", "pairs", c.size, "0")
			// Either agent may notice first; its bcsd names both hosts and
			// node_timeout (not tx_timeout, which is longer).
			m := regexp.MustCompile(`(?m)^bcsd on h[123]: node [12]: node [12] \(host h[23]\) (awaited|took) .*\(node_timeout\).*the link between host (h2|h3) and host (h2|h3) is down, or the network is partitioned between them`).FindStringSubmatch(r.stderr)
			if r.code == 0 || m == nil || m[2] == m[3] {
				t.Fatalf("exit %d, want non-zero and a bcsd's message naming h2 and h3 and node_timeout\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
			}
			t.Logf("what the user saw (%v after the partition, teardown included): exit %d\n%s", time.Since(at).Round(time.Millisecond), r.code, r.stderr)
		})
	}
	// A slow link that drops what overflows its queue: a token bucket of
	// 4 Mbit/s each way on h3's link (this kernel has no netem; tbf drops
	// what waits longer than its latency) while ranks 1 (h2) and 2 (h3)
	// exchange 128 KiB messages. The job goes on, slower: the right
	// results, exit 0. The EMDS shows it: against the same job on a clean
	// link just before, node 2's wait for the chunks of other nodes (LTR4)
	// and the master's strobe-to-end-of-slice times (GTTS) add up to more.
	t.Run("slow link", func(t *testing.T) {
		args := []string{"-n", "3", "--ppn", "1", "./e2eprog", "pairs", "131072", "16"}
		job := func(t *testing.T) map[string]int64 {
			t.Helper()
			root := t.TempDir()
			start := time.Now()
			r := sallocHook(t, []string{"BCS_MDS=elan", "BCS_MDS_DIR=" + root}, "", nil, args...)
			if r.code != 0 || !strings.Contains(r.stdout, "pairs ok: 16 exchanges of 131072 bytes") {
				t.Fatalf("exit %d, want 0 and the ranks' result\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
			}
			sums := emdsSums(t, latestDir(t, root, r.stderr))
			t.Logf("exit 0 after %v; EMDS sums %v", time.Since(start).Round(time.Millisecond), sums)
			return sums
		}
		clean := job(t)
		shape := slowLink(t, 3, "4mbit")
		shape(true)
		slow := job(t)
		shape(false)
		for _, k := range []string{"node2.LTR4", "global.GTTS"} {
			if slow[k] <= clean[k] {
				t.Errorf("EMDS %s: %d ns on the slow link, %d ns on a clean one; want more on the slow link", k, slow[k], clean[k])
			}
		}
	})
}

// emdsSums adds up, over the recorded slices, the master's GTTS, LATE,
// SKIPPED and USRTS and every node's LTR3 and LTR4 in the MDS directory
// dir ("global.GTTS", "node2.LTR4", ...), and counts the slices
// ("global.slices").
func emdsSums(t *testing.T, dir string) map[string]int64 {
	t.Helper()
	sums := map[string]int64{}
	read := func(file, prefix string, cols ...string) {
		f, err := os.Open(filepath.Join(dir, file))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		s, err := emds.ReadCSV(f)
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		sums[prefix+".slices"] = int64(len(s.Slices))
		for _, c := range cols {
			v, err := s.Col(c)
			if err != nil {
				t.Fatalf("%s: %v", file, err)
			}
			for _, x := range v {
				sums[prefix+"."+c] += x
			}
		}
	}
	read("emds-global.csv", "global", "GTTS", "LATE", "SKIPPED", "USRTS")
	for n := 0; n < 3; n++ {
		read(fmt.Sprintf("emds-node%d.csv", n), fmt.Sprintf("node%d", n), "LTR3", "LTR4")
	}
	return sums
}

// slowLink returns a switch for a slow link to host h (1-based) of the
// namespace cluster: on, a token bucket of rate each way (tc tbf on the
// bridge's end of its veth, for what goes to h, and on eth0 inside h, for
// what leaves it), which drops what waits longer than 50 ms; off, the
// qdiscs are removed. Off is also registered with t.Cleanup.
func slowLink(t *testing.T, h int, rate string) func(on bool) {
	var mu sync.Mutex
	set := false
	// tc's options before "qdisc" (the namespace) and the device.
	devs := [][2][]string{{nil, {fmt.Sprintf("vbcs%d", h)}}, {{"-n", fmt.Sprintf("bcsslurm%d", h)}, {"eth0"}}}
	sw := func(on bool) {
		mu.Lock()
		defer mu.Unlock()
		if on == set {
			return
		}
		set = on
		verb, shape := "del", []string(nil)
		if on {
			verb, shape = "add", []string{"tbf", "rate", rate, "burst", "16kb", "latency", "50ms"}
		}
		for _, d := range devs {
			args := append(append(slices.Clone(d[0]), "qdisc", verb, "dev", d[1][0], "root"), shape...)
			if out, err := exec.Command("tc", args...).CombinedOutput(); err != nil {
				t.Errorf("tc %s: %v: %s", strings.Join(args, " "), err, out)
			}
		}
	}
	t.Cleanup(func() { sw(false) })
	return sw
}

// partition returns a switch for a partition between hosts a and b of
// cl (1-based): on, each host's packets to the other are dropped (a
// blackhole route in its namespace); off, the routes are removed. Off is
// also registered with t.Cleanup, so the routes go on every path.
func partition(t *testing.T, cl *slurmtest.Cluster, a, b int) func(on bool) {
	var mu sync.Mutex
	set := false
	routes := [][2]string{{fmt.Sprintf("bcsslurm%d", a), cl.HostAddr[b-1]}, {fmt.Sprintf("bcsslurm%d", b), cl.HostAddr[a-1]}}
	sw := func(on bool) {
		mu.Lock()
		defer mu.Unlock()
		if on == set {
			return
		}
		set = on
		verb := "del"
		if on {
			verb = "add"
		}
		for _, r := range routes {
			if out, err := exec.Command("ip", "-n", r[0], "route", verb, "blackhole", r[1]+"/32").CombinedOutput(); err != nil {
				t.Errorf("ip -n %s route %s blackhole %s/32: %v: %s", r[0], verb, r[1], err, out)
			}
		}
	}
	t.Cleanup(func() { sw(false) })
	return sw
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

// watched is an output buffer that a test can wait on.
type watched struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	more chan struct{} // closed and replaced at every write
}

func newWatched() *watched { return &watched{more: make(chan struct{})} }

func (w *watched) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	close(w.more)
	w.more = make(chan struct{})
	return len(p), nil
}

func (w *watched) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// waitFor waits until the output holds want count times, at most d (a
// bound on a hang, not a speed requirement), and says whether it did.
func (w *watched) waitFor(want string, count int, d time.Duration) bool {
	deadline := time.After(d)
	for {
		w.mu.Lock()
		n, more := strings.Count(w.buf.String(), want), w.more
		w.mu.Unlock()
		if n >= count {
			return true
		}
		select {
		case <-more:
		case <-deadline:
			return false
		}
	}
}

// bcsdIn returns the pid of the bcsd running in network namespace ns ("" if none).
func bcsdIn(ns string) int {
	var want syscall.Stat_t
	if syscall.Stat("/run/netns/"+ns, &want) != nil {
		return 0
	}
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		exe, err := os.Readlink(d + "/exe")
		if err != nil || exe != filepath.Join(bin, "bcsd") {
			continue
		}
		var st syscall.Stat_t
		if syscall.Stat(d+"/ns/net", &st) == nil && st.Ino == want.Ino {
			pid, _ := strconv.Atoi(filepath.Base(d))
			return pid
		}
	}
	return 0
}

// processOf returns the pid of a live process running exe (0 if none).
func processOf(exe string) int {
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		if e, err := os.Readlink(d + "/exe"); err == nil && e == exe {
			pid, _ := strconv.Atoi(filepath.Base(d))
			return pid
		}
	}
	return 0
}

// stepsLeft reports whether the cluster has a job step running.
func stepsLeft(cl *slurmtest.Cluster) bool {
	out, err := cl.Command("squeue", "-h", "-s", "-o", "%i").Output()
	return err != nil || strings.TrimSpace(string(out)) != ""
}
