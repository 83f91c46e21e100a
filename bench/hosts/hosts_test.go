// Package hosts is issue 16's "Measure and report" benchmark across
// network-namespace hosts: a real Slurm (internal/slurmtest) of 4 hosts on
// one machine, and bcsrun inside salloc on 1, 2 or 4 of them, against the
// same jobs on logical nodes of one bcsrun process. It runs only on
// request (BCS_HOSTS_BENCH=1, root, Slurm installed); bench/hosts/run.sh
// builds and runs it and prints its table. See README.md.
package hosts

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bcsmpi/bcsmpi/emds"
	"github.com/bcsmpi/bcsmpi/internal/slurmtest"
)

// bin holds bcsrun, bcsd and the rank programs, built by TestMain.
var bin string

func TestMain(m *testing.M) {
	if os.Getenv("BCS_HOSTS_BENCH") == "" {
		os.Exit(m.Run()) // the test skips itself
	}
	for _, v := range []string{"SLURM_JOB_ID", "SLURM_JOB_NUM_NODES", "SLURM_NNODES"} {
		os.Unsetenv(v) // the local runs must not take an outer allocation
	}
	dir, err := os.MkdirTemp("", "bcs-hostbench-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	bin = dir
	// Plain builds (no race detector, no fault hook): what a user runs.
	cmd := exec.Command("go", "build", "-o", dir+"/", "../../cmd/bcsrun", "../../cmd/bcsd", "../../examples/barrier", "../../examples/stencil", "../../examples/cg")
	cmd.Stderr = os.Stderr
	code := 1
	if err := cmd.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building the programs:", err)
	} else {
		code = m.Run()
	}
	os.RemoveAll(dir)
	os.Exit(code)
}

// figures are the values of one measurement over the rounds.
type figures map[string][]float64

func (f figures) add(key string, v float64) { f[key] = append(f[key], v) }

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s) == 0 {
		return math.NaN()
	}
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// quantile is the q-quantile of v (nearest rank).
func quantile(v []int64, q float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	i := int(math.Ceil(q*float64(len(s)))) - 1
	return float64(s[max(0, min(i, len(s)-1))])
}

var (
	reFirst   = regexp.MustCompile(`first slice ([0-9.]+)s after bcsrun started`)
	reSlices  = regexp.MustCompile(`([0-9]+) slices of [^ ]+ \(([0-9]+) skipped\)`)
	reStencil = regexp.MustCompile(`stencil: .*wall ([0-9.]+) s`)
	reCG      = regexp.MustCompile(`cg: .* iterations in ([^ ]+) `)
)

// TestHosts runs every measurement, interleaved, for BCS_HOSTS_ROUNDS
// rounds (default 7), and prints the medians as one markdown table on
// stdout. Every job must succeed and print its figures, or the test fails.
func TestHosts(t *testing.T) {
	if os.Getenv("BCS_HOSTS_BENCH") == "" {
		t.Skip("a benchmark: run with BCS_HOSTS_BENCH=1 (bench/hosts/run.sh)")
	}
	rounds := 7
	if s := os.Getenv("BCS_HOSTS_ROUNDS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > 100 {
			t.Fatalf("BCS_HOSTS_ROUNDS=%q, want a number of rounds 1..100", s)
		}
		rounds = n
	}
	// SIGINT or SIGTERM end the running job and then the test, through
	// t.Fatal, so that the cluster's Close (t.Cleanup) still runs.
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	load0 := loadavg()
	began := time.Now()
	cl := slurmtest.Start(t, 4, 2)
	sshCmd := cl.StartSSH(t)
	clusterUp := time.Since(began)

	// job runs bcsrun, inside `salloc -N<hosts>` when hosts > 0, over ssh
	// to the first -hosts hosts when hosts < 0, else on this machine
	// (logical nodes, one process); it returns stderr+stdout and the time
	// the whole command took.
	job := func(hosts int, env []string, args ...string) (string, time.Duration) {
		t.Helper()
		jctx, cancel := context.WithTimeout(ctx, 120*time.Second)
		defer cancel()
		var cmd *exec.Cmd
		if hosts > 0 {
			cmd = cl.CommandContext(jctx, "salloc", append([]string{"-N" + strconv.Itoa(hosts), "--quiet", filepath.Join(bin, "bcsrun"), "-v"}, args...)...)
		} else if hosts < 0 {
			cmd = exec.CommandContext(jctx, filepath.Join(bin, "bcsrun"), append([]string{"-v", "--hosts", strings.Join(cl.HostAddr[:-hosts], ",")}, args...)...)
			cmd.Env = append(os.Environ(), "BCS_SSH="+sshCmd)
		} else {
			cmd = exec.CommandContext(jctx, filepath.Join(bin, "bcsrun"), append([]string{"-v", "--launcher", "local"}, args...)...)
			cmd.Env = os.Environ()
		}
		cmd.Env = append(cmd.Env, env...)
		cmd.Dir = bin
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		start := time.Now()
		err := cmd.Run()
		took := time.Since(start)
		if ctx.Err() != nil {
			t.Fatalf("interrupted (%v): the cluster is being torn down", context.Cause(ctx))
		}
		if jctx.Err() != nil {
			t.Fatalf("%v on %d hosts hung (killed after 120 s)\n%s\n%s", args, hosts, out.String(), cl.Logs())
		}
		if err != nil {
			t.Fatalf("%v on %d hosts: %v\n%s", args, hosts, err, out.String())
		}
		if hosts > 0 { // the allocation is released before the next job
			for end := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
				q, err := cl.Command("squeue", "-h", "-o", "%i").Output()
				if err == nil && strings.TrimSpace(string(q)) == "" {
					break
				}
				if time.Now().After(end) {
					t.Fatalf("the job is still in squeue 30 s after salloc returned: %q %v", q, err)
				}
			}
		}
		return out.String(), took
	}
	find := func(re *regexp.Regexp, out string, what string) float64 {
		t.Helper()
		m := re.FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("no %s in the output:\n%s", what, out)
		}
		v, err := strconv.ParseFloat(m[1], 64)
		if err != nil {
			t.Fatalf("%s %q: %v", what, m[1], err)
		}
		return v
	}
	where := func(hosts int) string {
		switch {
		case hosts == 0:
			return "4 logical nodes, 1 process"
		case hosts == -1:
			return "1 host, ssh"
		case hosts < 0:
			return fmt.Sprintf("%d hosts, ssh", -hosts)
		case hosts == 1:
			return "1 host, Slurm"
		}
		return fmt.Sprintf("%d hosts, Slurm", hosts)
	}

	f := figures{}
	var keys []string // in the table's order
	key := func(k string) string {
		if !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
		return k
	}
	for r := 0; r < rounds; r++ {
		// Start-up: a one-barrier job of 4 ranks.
		for _, h := range []int{1, 4, -1, -4, 0} {
			args := []string{"-n", "4", "./barrier", "-iters", "1"}
			if h == 0 {
				args = append([]string{"--nodes", "4"}, args...)
			}
			out, took := job(h, nil, args...)
			f.add(key("start-up: bcsrun to first slice (s)|"+where(h)), find(reFirst, out, "first slice"))
			f.add(key("start-up: whole job (s; salloc and bcsrun, or bcsrun alone)|"+where(h)), took.Seconds())
		}
		// Slice rate, skipped slices and GETTS: 4 ranks in barriers every
		// 1.9 ms for 400 iterations, EMDS on.
		for _, slice := range []string{"500us", "250us"} {
			for _, h := range []int{2, 4, 0} {
				root := filepath.Join(t.TempDir(), "mds")
				args := []string{"--timeslice", slice, "-n", "4", "./barrier", "-iters", "400"}
				if h == 0 {
					args = append([]string{"--nodes", "4"}, args...)
				}
				out, _ := job(h, []string{"BCS_MDS=elan", "BCS_MDS_DIR=" + root}, args...)
				m := reSlices.FindStringSubmatch(out)
				if m == nil {
					t.Fatalf("no slice count in the output:\n%s", out)
				}
				run, _ := strconv.ParseFloat(m[1], 64)
				skipped, _ := strconv.ParseFloat(m[2], 64)
				getts := readGETTS(t, root)
				var sum int64
				for _, g := range getts {
					sum += g
				}
				w := " at " + strings.Replace(slice, "us", " µs", 1) + "|" + where(h)
				f.add(key("slices per second"+w), float64(len(getts))/(float64(sum)/1e9))
				f.add(key("skipped slices (% of strobes due)"+w), 100*skipped/(run+skipped))
				f.add(key("GETTS p50 (µs)"+w), quantile(getts, 0.50)/1e3)
				f.add(key("GETTS p99 (µs)"+w), quantile(getts, 0.99)/1e3)
			}
		}
		// The applications, 4 ranks, one per host or per logical node.
		for _, h := range []int{4, 0} {
			args := []string{"-n", "4"}
			if h == 0 {
				args = append(args, "--nodes", "4")
			}
			out, _ := job(h, nil, append(slices.Clone(args), "./stencil", "-iters", "200")...)
			f.add(key("stencil, 200 iterations (s)|"+where(h)), find(reStencil, out, "stencil wall time"))
			out, _ = job(h, nil, append(slices.Clone(args), "./cg")...)
			m := reCG.FindStringSubmatch(out)
			if m == nil {
				t.Fatalf("no cg time in the output:\n%s", out)
			}
			d, err := time.ParseDuration(m[1])
			if err != nil {
				t.Fatalf("cg time %q: %v", m[1], err)
			}
			f.add(key("cg, default problem (ms)|"+where(h)), float64(d)/1e6)
		}
		t.Logf("round %d of %d done (%v)", r+1, rounds, time.Since(began).Round(time.Second))
	}

	// The table.
	var b strings.Builder
	host, _ := os.Hostname()
	commit := os.Getenv("BCS_HOSTS_COMMIT")
	if commit == "" {
		commit = "(unknown: run through bench/hosts/run.sh)"
	}
	fmt.Fprintf(&b, "\n## bench/hosts: bcsmpi across namespace hosts (issue 16)\n\n")
	fmt.Fprintf(&b, "- date: %s; commit %s\n", time.Now().UTC().Format("2006-01-02 15:04 MST"), commit)
	fmt.Fprintf(&b, "- machine: %s, %s, %d CPUs, %s; load average %s at the start, %s at the end\n", host, cpuModel(), runtime.NumCPU(), kernel(), load0, loadavg())
	fmt.Fprintf(&b, "- %d rounds, every measurement once per round, interleaved; each cell is the median (min–max); the cluster (4 hosts) took %v to start, the whole run %v\n\n",
		rounds, clusterUp.Round(time.Millisecond), time.Since(began).Round(time.Second))
	cols := []string{where(1), where(2), where(4), where(-1), where(-4), where(0)}
	fmt.Fprintf(&b, "| measurement | %s |\n|---|%s\n", strings.Join(cols, " | "), strings.Repeat("---:|", len(cols)))
	var whats []string
	for _, k := range keys {
		if what, _, _ := strings.Cut(k, "|"); !slices.Contains(whats, what) {
			whats = append(whats, what)
		}
	}
	for _, what := range whats {
		fmt.Fprintf(&b, "| %s |", what)
		for _, c := range cols {
			v := f[what+"|"+c]
			if len(v) == 0 {
				b.WriteString(" |")
				continue
			}
			fmt.Fprintf(&b, " %s (%s–%s) |", num(median(v)), num(slices.Min(v)), num(slices.Max(v)))
		}
		b.WriteString("\n")
	}
	for _, what := range []string{"stencil, 200 iterations (s)", "cg, default problem (ms)"} {
		h, l := median(f[what+"|"+where(4)]), median(f[what+"|"+where(0)])
		fmt.Fprintf(&b, "| %s: 4 hosts / 4 logical nodes (medians) | | | %.2fx | | | |\n", strings.Split(what, ",")[0], h/l)
	}
	fmt.Println(b.String())
}

// readGETTS reads the job's emds-global.csv (root/latest) and returns its
// GETTS column, without the first slice (its GETTS counts from the
// master's start, not from a previous strobe).
func readGETTS(t *testing.T, root string) []int64 {
	t.Helper()
	f, err := os.Open(filepath.Join(root, "latest", "emds-global.csv"))
	if err != nil {
		t.Fatalf("EMDS: %v", err)
	}
	defer f.Close()
	s, err := emds.ReadCSV(f)
	if err != nil {
		t.Fatalf("EMDS: %v", err)
	}
	g, err := s.Col("GETTS")
	if err != nil {
		t.Fatalf("EMDS: %v", err)
	}
	if len(g) < 10 {
		t.Fatalf("EMDS: %d slices recorded, want at least 10", len(g))
	}
	return g[1:]
}

func num(v float64) string {
	switch {
	case v >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case v >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	case v >= 1:
		return strconv.FormatFloat(v, 'f', 2, 64)
	}
	return strconv.FormatFloat(v, 'f', 3, 64)
}

func loadavg() string {
	b, _ := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(b)); len(f) >= 3 {
		return strings.Join(f[:3], " ")
	}
	return "?"
}

func cpuModel() string {
	b, _ := os.ReadFile("/proc/cpuinfo")
	for _, l := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return runtime.GOARCH
}

func kernel() string {
	b, _ := os.ReadFile("/proc/sys/kernel/osrelease")
	return "Linux " + strings.TrimSpace(string(b))
}
