package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/bcsmpi/bcsmpi/emds"
)

// kernelOK skips a test of the kernel monitor where this machine cannot run
// it (not root, or no BTF): only a missing kernel feature skips.
func kernelOK(t *testing.T) {
	t.Helper()
	if os.Getuid() != 0 {
		t.Skip("the kernel monitor needs root (CAP_BPF, CAP_PERFMON)")
	}
	if _, err := os.Stat("/sys/kernel/btf/vmlinux"); err != nil {
		t.Skipf("no kernel BTF: %v", err)
	}
	for _, tool := range []string{"taskset", "chrt"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s: %v", tool, err)
		}
	}
}

// kernelJob runs one rank of e2eprog's contend or spin scenario pinned to
// CPU 1 (wrapped by wrap, e.g. chrt) with BCS_MDS=elan,kernel, and returns
// the rank's kernel series, its stdout and the MDS directory.
func kernelJob(t *testing.T, scenario string, wrap ...string) (*emds.Series, run, string) {
	t.Helper()
	args := append([]string{"-n", "1", "--timeslice", "500us"}, wrap...)
	args = append(args, "taskset", "-c", "1", "./e2eprog", scenario)
	r, dir := runMDS(t, []string{"BCS_MDS=elan,kernel", "BCS_TEST_CPU=1"}, args...)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	if strings.Contains(r.stderr, "kernel monitor off") {
		t.Fatalf("root with BTF, yet: %s", r.stderr)
	}
	return readSeries(t, filepath.Join(dir, "emds-kernel-rank0.csv")), r, dir
}

func col(t *testing.T, s *emds.Series, name string) []int64 {
	t.Helper()
	c, err := s.Col(name)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// schedFigures is the kernel's own accounting of the rank's threads over an
// interval (e2eprog's "sched" line, from /proc/self/task/*/schedstat and
// status), and the monitor's rows bounding that interval: inner sums the
// rows wholly inside [T0, T1], outer those that overlap it. The monitor
// splits every run and wait at the rows' bounds, so where it counts what
// the kernel counts, inner ≤ kernel ≤ outer.
type schedFigures struct {
	T0, T1, On, RunQ, NIvcsw int64
	Waiting0, Waiting1       int
	Vanished                 int
	Steal                    int64 // every CPU's steal time over [t0, t1], ns, in 10 ms ticks
	inner, outer             map[string]int64
	lost                     string // the monitor's lost rows and records, when any
}

func schedOf(t *testing.T, s *emds.Series, stdout, dir string) schedFigures {
	t.Helper()
	return schedOfCost(t, s, stdout, filepath.Join(dir, "emds-kernel-cost.csv"))
}

// schedOfCost is schedOf with the monitor's cost file at cost (a host's
// emds-kernel-cost-node<k>.csv across hosts).
func schedOfCost(t *testing.T, s *emds.Series, stdout, cost string) schedFigures {
	t.Helper()
	var f schedFigures
	raw, err := os.ReadFile(cost)
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(raw)) {
		if (strings.HasPrefix(line, "lost,") || strings.HasPrefix(line, "lost_records,")) && !strings.HasPrefix(strings.SplitN(line, ",", 3)[1], "0") {
			f.lost += strings.TrimSpace(line) + " "
		}
	}
	i := strings.Index(stdout, "sched ")
	if i < 0 {
		t.Fatalf("no sched line in stdout %q", stdout)
	}
	if _, err := fmt.Sscanf(stdout[i:], "sched %d %d %d %d %d %d %d %d %d", &f.T0, &f.T1, &f.On, &f.RunQ, &f.NIvcsw, &f.Waiting0, &f.Waiting1, &f.Vanished, &f.Steal); err != nil {
		t.Fatalf("sched line in stdout %q: %v", stdout, err)
	}
	f.inner, f.outer = map[string]int64{}, map[string]int64{}
	tend := col(t, s, "TEND")
	for _, m := range []string{"ONCPU", "RUNQ", "PREEMPT", "NIVCSW", "NWAKE"} {
		c := col(t, s, m)
		for k := range s.Slices {
			start := int64(-1 << 62) // the first row's start is not recorded
			if k > 0 {
				start = tend[k-1]
			}
			if start >= f.T0 && tend[k] <= f.T1 {
				f.inner[m] += c[k]
			}
			if tend[k] > f.T0 && start < f.T1 {
				f.outer[m] += c[k]
			}
		}
	}
	t.Logf("kernel over [t0, t1] (%d ns): on CPU %d ns, run-queue wait %d ns (threads waiting at t0 %d, t1 %d), %d involuntary switches, steal %d ns",
		f.T1-f.T0, f.On, f.RunQ, f.Waiting0, f.Waiting1, f.NIvcsw, f.Steal)
	t.Logf("monitor inner/outer rows: on CPU %d/%d ns, runnable %d/%d ns, preempted %d/%d ns, %d/%d involuntary switches, %d/%d wake-ups",
		f.inner["ONCPU"], f.outer["ONCPU"], f.inner["RUNQ"], f.outer["RUNQ"], f.inner["PREEMPT"], f.outer["PREEMPT"],
		f.inner["NIVCSW"], f.outer["NIVCSW"], f.inner["NWAKE"], f.outer["NWAKE"])
	if f.lost != "" {
		t.Logf("the monitor lost data (emds-kernel-cost.csv: %s): its totals may fall short", f.lost)
	}
	if f.Vanished != 0 {
		t.Fatalf("%d of the rank's threads exited between t0 and t1: the kernel's sums lost their figures", f.Vanished)
	}
	return f
}

// agreesWithKernel checks the monitor's rows against the kernel's own
// accounting of the rank (schedFigures), on any load:
//
//   - on-CPU time: inner − tol ≤ kernel ≤ outer + tol, tol = 2% of the
//     kernel's figure + 0.5 ms. The kernel's sum_exec_runtime leaves out the
//     time the hypervisor stole (CONFIG_PARAVIRT_TIME_ACCOUNTING), the
//     monitor's switch-to-switch times do not, and their clocks are read
//     some µs apart at each switch;
//   - involuntary switches: inner ≤ kernel ≤ outer, ±1 (a task preempted on
//     its way to sleep is involuntary to the kernel, voluntary to the
//     monitor's prev_state);
//   - where no other thread of the rank waited for the CPU at t0 and t1
//     (the kernel's run_delay holds only ended waits): run-queue wait,
//     inner − tol − 100 µs per wake-up ≤ kernel ≤ outer + tol, and preempted (others ran while
//     the rank waited) inner ≤ the kernel's wait + tol: on a CPU where
//     nothing else ran, the rank waited only for its own threads, and the
//     monitor must not call that preemption.
//
// A run where the monitor lost rows or records (emds-kernel-cost.csv) is
// not compared: its reader then forgets a CPU until that CPU's next switch,
// as documented.
func agreesWithKernel(t *testing.T, f schedFigures) {
	t.Helper()
	if f.lost != "" {
		t.Logf("agreement with the kernel not checked: the monitor lost data (%s; see emds/kernel's doc.go)", f.lost)
		return
	}
	tol := func(k int64) int64 { return k/50 + 500_000 }
	// The kernel's time on CPU leaves out the time the hypervisor stole
	// from the vCPU (rq_clock_task); the monitor's timestamps count it, so
	// on a loaded host the rows may exceed the kernel by the steal over
	// [t0, t1] (counted in 10 ms ticks: a tick more on each side when any).
	steal := f.Steal
	if steal > 0 {
		steal += 2 * 10_000_000
	}
	if on := f.On; on+tol(on)+steal < f.inner["ONCPU"] || on > f.outer["ONCPU"]+tol(on) {
		t.Errorf("on CPU: the kernel says %d ns, the monitor's rows %d .. %d ns (tolerance %d ns, and %d ns of steal)", on, f.inner["ONCPU"], f.outer["ONCPU"], tol(on), steal)
	}
	if n := f.NIvcsw; n+1 < f.inner["NIVCSW"] || n > f.outer["NIVCSW"]+1 {
		t.Errorf("involuntary switches: the kernel says %d, the monitor's rows %d .. %d", n, f.inner["NIVCSW"], f.outer["NIVCSW"])
	}
	if f.Waiting0 != 0 || f.Waiting1 != 0 {
		t.Logf("run-queue waits not compared: %d and %d threads of the rank were waiting at t0 and t1", f.Waiting0, f.Waiting1)
		return
	}
	// The monitor starts a wait at sched_waking, the kernel at the enqueue,
	// which for a wake-up from another CPU follows an IPI: to a halted vCPU
	// of a loaded host that took up to some 50 µs per wake-up.
	wake := f.outer["NWAKE"] * 100_000
	if q := f.RunQ; q+tol(q)+wake < f.inner["RUNQ"] || q > f.outer["RUNQ"]+tol(q) {
		t.Errorf("run-queue wait: the kernel says %d ns, the monitor's rows %d .. %d ns (tolerance %d ns, and %d ns for the wake-ups)", q, f.inner["RUNQ"], f.outer["RUNQ"], tol(q), wake)
	}
	if q := f.RunQ; f.inner["PREEMPT"] > q+tol(q)+wake {
		t.Errorf("preempted %d ns, more than the %d ns the kernel says the rank waited (tolerance %d ns, and %d ns for the wake-ups)", f.inner["PREEMPT"], q, tol(q), wake)
	}
}

// A rank sharing its CPU with a pinned competing busy process (for 200 ms
// in the middle of the job, at a higher real-time priority) is reported
// preempted in those slices, by that process, and not outside them.
func TestKernelMonitorPreemption(t *testing.T) {
	kernelOK(t)
	s, r, dir := kernelJob(t, "contend", "chrt", "-f", "1")
	agreesWithKernel(t, schedOf(t, s, r.stdout, dir))
	var pid int
	var start, stop int64
	if _, err := fmt.Sscanf(r.stdout, "competitor %d %d %d", &pid, &start, &stop); err != nil {
		t.Fatalf("no competitor pid and times in stdout %q: %v", r.stdout, err)
	}
	// The rows' end times (TEND) say which slices the competitor's life
	// covers; margin allows for the rank's delay in starting and killing it.
	const margin = 4
	var from, to uint64
	for k, end := range col(t, s, "TEND") {
		if end < start {
			from = s.Slices[k] + 1
		}
		if end < stop {
			to = s.Slices[k] + 1
		}
	}
	on, pre := col(t, s, "ONCPU"), col(t, s, "PREEMPT")
	var in, onIn, preIn int64
	inSlices, interior := 0, 0
	for k, slice := range s.Slices {
		ns := int64(0)
		for i := 1; i <= 3; i++ {
			if int(col(t, s, "TOP"+strconv.Itoa(i)+"PID")[k]) == pid {
				ns += col(t, s, "TOP"+strconv.Itoa(i)+"NS")[k]
			}
		}
		if ns > 0 && (slice+margin < from || slice > to+margin) {
			t.Errorf("slice %d: the competitor interferes for %d ns, outside slices %d .. %d where it ran", slice, ns, from, to)
		}
		if slice >= from+margin && slice+margin <= to {
			in += ns
			onIn += on[k]
			preIn += pre[k]
			if pre[k] > 100_000 { // the rank waited (when it sleeps in a barrier nothing interferes)
				interior++
				if ns > 0 {
					inSlices++
				}
			}
		}
	}
	t.Logf("slices %d .. %d: rank on CPU %d ns, preempted %d ns, by the competitor %d ns; named in %d of the %d slices where the rank waited over 100 µs",
		from, to, onIn, preIn, in, inSlices, interior)
	if interior < 10 || inSlices*4 < interior*3 {
		t.Errorf("the competitor is named in %d of the %d slices where the rank waited over 100 µs while it ran", inSlices, interior)
	}
	// At a higher real-time priority it has the CPU to itself while it runs.
	if in < onIn {
		t.Errorf("the competitor ran %d ns while the rank waited, less than the rank's %d ns on the CPU", in, onIn)
	}
	raw, err := os.ReadFile(filepath.Join(dir, "emds-kernel-interferers.csv"))
	if err != nil || !strings.Contains(string(raw), fmt.Sprintf("rank0,%d,e2eprog,", pid)) {
		t.Errorf("the whole run's interferers do not name the competitor (pid %d, e2eprog): %v\n%s", pid, err, raw)
	}
}

// A rank that nothing else may preempt (SCHED_FIFO 99, the highest real-time
// priority) is reported as the kernel itself accounts for it. A loaded host
// preempts even it: the kernel keeps some 5% of each CPU for SCHED_OTHER
// tasks that real-time ones starve (since Linux 6.12 the fair server, a
// deadline entity of 50 ms per second; before it, RT throttling at
// sched_rt_runtime_us = 950000; a `yes` pinned beside an RT-99 spinner got
// 4.6% of the CPU on the 6.18 development VM), and other bcsruns' runtime and pinned competitors wake on
// CPU 1 too; the monitor then rightly reports 10-30% preempted over the
// whole run (most of it at start-up and exit). So the test does not assert
// a figure that depends on the host's load: it asserts that the monitor
// agrees with the rank's /proc/self/task/*/schedstat and status over the
// interval the rank measured (agreesWithKernel), that it calls
// preemption no more than the kernel's run-queue wait (the rank's threads
// also wait for each other, pinned to one CPU at the same priority: on an
// idle CPU that is all they wait for, and none of it is preemption), and
// that the rank's 36 × 2 ms of computation are on the CPU.
func TestKernelMonitorIdleCPU(t *testing.T) {
	kernelOK(t)
	s, r, dir := kernelJob(t, "spin", "chrt", "-f", "99")
	f := schedOf(t, s, r.stdout, dir)
	agreesWithKernel(t, f)
	var on, pre, runq int64
	for k := range s.Slices {
		on += col(t, s, "ONCPU")[k]
		pre += col(t, s, "PREEMPT")[k]
		runq += col(t, s, "RUNQ")[k]
	}
	t.Logf("whole run: rank on CPU %d ns, preempted %d ns, runnable %d ns", on, pre, runq)
	if f.On < 36*2_000_000 {
		t.Errorf("on CPU %d ns between t0 and t1 (the kernel), want at least the 36 × 2 ms it computed", f.On)
	}
}

// The CO-RE cache (emds/kernel): the first job decodes the kernel's BTF and
// writes the cache into $XDG_CACHE_HOME/bcsmpi (mds_kernel_cache empty, the
// default), the next takes it (emds-kernel-cost.csv's start_btf says
// which); with mds_kernel_cache off neither reads nor writes it.
func TestKernelMonitorCoreCache(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("the kernel monitor needs root (CAP_BPF, CAP_PERFMON)")
	}
	if _, err := os.Stat("/sys/kernel/btf/vmlinux"); err != nil {
		t.Skipf("no kernel BTF: %v", err)
	}
	cache := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cache)
	t.Setenv("BCS_MDS_KERNEL_CACHE", "")
	for i, c := range []struct{ setting, want string }{{"", "start_btf,0,"}, {"", "start_btf,1,"}, {"off", "start_btf,0,"}} {
		want := c.want
		r, dir := runMDS(t, []string{"BCS_MDS=kernel", "BCS_MDS_KERNEL_CACHE=" + c.setting}, "-n", "2", "./e2eprog", "exchange")
		if r.code != 0 || strings.Contains(r.stderr, "kernel monitor off") {
			t.Fatalf("job %d: exit %d\n%s", i+1, r.code, r.stderr)
		}
		raw, err := os.ReadFile(filepath.Join(dir, "emds-kernel-cost.csv"))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(raw), "\n"+want) {
			t.Errorf("job %d's emds-kernel-cost.csv has no %s… row:\n%s", i+1, want, raw)
		}
		files, _ := filepath.Glob(filepath.Join(cache, "bcsmpi", "emds-kernel-core-*.json"))
		if len(files) != 1 {
			t.Errorf("after job %d the cache holds %v, want one file", i+1, files)
		}
	}
}

// Without the kernel's BTF the job runs, says what is missing once, and the
// manifest records it.
func TestKernelMonitorNoBTF(t *testing.T) {
	r, dir := runMDS(t, []string{"BCS_MDS=kernel", "BCS_MDS_KERNEL_BTF=/nonexistent/vmlinux"}, "-n", "2", "./e2eprog", "exchange")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	const msg = "bcsrun: MDS kernel monitor off: needs the kernel's BTF at /nonexistent/vmlinux"
	if n := strings.Count(r.stderr, msg); n != 1 {
		t.Fatalf("stderr has %q %d times, want once:\n%s", msg, n, r.stderr)
	}
	checkManifestKernel(t, dir, "off: needs the kernel's BTF at /nonexistent/vmlinux")
	if _, err := os.Stat(filepath.Join(dir, "emds-node0.csv")); err != nil {
		t.Errorf("the EMDS still runs: %v", err)
	}
}

// Without the capabilities (bcsrun started with an empty bounding set) the
// job runs and names the capabilities.
func TestKernelMonitorNoPermission(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root to drop capabilities")
	}
	if _, err := exec.LookPath("setpriv"); err != nil {
		t.Skipf("setpriv: %v", err)
	}
	root := t.TempDir()
	t.Setenv("BCS_MDS", "kernel")
	t.Setenv("BCS_MDS_DIR", root)
	before := listeners(t)
	cmd := exec.Command("setpriv", "--bounding-set", "-all", "--inh-caps", "-all", filepath.Join(bin, "bcsrun"), "-n", "2", "./e2eprog", "exchange")
	cmd.Dir = bin
	out, err := cmd.CombinedOutput()
	nothingLeft(t, before)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	const msg = "bcsrun: MDS kernel monitor off: needs CAP_BPF and CAP_PERFMON, or CAP_SYS_ADMIN"
	if n := strings.Count(string(out), msg); n != 1 {
		t.Fatalf("output has %q %d times, want once:\n%s", msg, n, out)
	}
	dir, err := filepath.EvalSymlinks(filepath.Join(root, "latest"))
	if err != nil {
		t.Fatal(err)
	}
	checkManifestKernel(t, dir, "off: needs CAP_BPF")
}

func checkManifestKernel(t *testing.T, dir, prefix string) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Kernel string `json:"kernel"`
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(m.Kernel, prefix) {
		t.Errorf("manifest kernel = %q, want it to start with %q", m.Kernel, prefix)
	}
}
