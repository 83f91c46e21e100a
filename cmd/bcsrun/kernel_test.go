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

// A rank sharing its CPU with a pinned competing busy process (for 200 ms
// in the middle of the job, at a higher real-time priority) is reported
// preempted in those slices, by that process, and not outside them.
func TestKernelMonitorPreemption(t *testing.T) {
	kernelOK(t)
	s, r, dir := kernelJob(t, "contend", "chrt", "-f", "1")
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

// A rank that nothing else may preempt reports near zero preemption (its
// other Go threads, pinned to the same CPU, do wait: RUNQ is not near
// zero, and is not what this test checks). SCHED_FIFO at the highest priority, 99: at a low one the
// real-time threads of other jobs on a busy machine (other bcsruns' strobe
// threads at 10, other tests' pinned competitors) preempt it for real.
func TestKernelMonitorIdleCPU(t *testing.T) {
	kernelOK(t)
	s, _, _ := kernelJob(t, "spin", "chrt", "-f", "99")
	var on, pre, runq int64
	for k := range s.Slices {
		on += col(t, s, "ONCPU")[k]
		pre += col(t, s, "PREEMPT")[k]
		runq += col(t, s, "RUNQ")[k]
	}
	t.Logf("rank on CPU %d ns, preempted %d ns, runnable %d ns", on, pre, runq)
	if on < 36*2_000_000 {
		t.Errorf("on CPU %d ns, want at least the 36 × 2 ms it computed", on)
	}
	if pre*20 > on {
		t.Errorf("preempted %d ns, more than 5%% of its %d ns on CPU", pre, on)
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
