package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bcsmpi/bcsmpi/emds"
	"github.com/bcsmpi/bcsmpi/emds/kernel"
)

const (
	slice = 250_000
	base  = 1_000_000_000
	ltts  = 5_000
)

// strobeAt is the synthetic job's strobe of slice k; each row ends ltts
// after it.
func strobeAt(k uint64) int64 { return base + int64(k)*slice }

// synthJob writes a §3.3-like job's MDS directory: barriers scheduled in
// the slices of at, and per cycle the rows its ranks had (set by rows).
type synthRow struct{ oncpu, runq, preempt, wakelat, nwake, nivcsw, nmigr, top1pid, top1ns int64 }

func writeJob(t *testing.T, first, last uint64, at []uint64, rows [2]map[uint64]synthRow) string {
	t.Helper()
	dir := t.TempDir()
	man := `{"timeslice_ns":250000,"ranks":2,"args":["-iters","5"],"kernel":"on","config":{"Spin":0}}`
	if err := os.WriteFile(filepath.Join(dir, "manifest.json"), []byte(man), 0o600); err != nil {
		t.Fatal(err)
	}
	sched := map[uint64]bool{}
	for _, k := range at {
		sched[k] = true
	}
	var node strings.Builder
	node.WriteString("slice," + strings.Join(emds.LocalMetrics, ",") + "\n")
	for k := first; k <= last; k++ {
		fmt.Fprintf(&node, "%d", k)
		for _, m := range emds.LocalMetrics {
			v := int64(0)
			switch m {
			case "LTTS":
				v = ltts
			case "NCOLLMSM":
				if sched[k] {
					v = 1
				}
			}
			fmt.Fprintf(&node, ",%d", v)
		}
		node.WriteString("\n")
	}
	if err := os.WriteFile(filepath.Join(dir, "emds-node0.csv"), []byte(node.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	for r := 0; r < 2; r++ {
		var b strings.Builder
		b.WriteString("slice," + strings.Join(kernel.Metrics, ",") + "\n")
		for k := first; k <= last; k++ {
			x := rows[r][k]
			fmt.Fprintf(&b, "%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,0,0,0,0,%d\n", k, x.oncpu, x.runq, x.preempt, x.wakelat, x.nwake,
				x.nivcsw, x.nmigr, x.top1pid, x.top1ns, strobeAt(k)+ltts)
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("emds-kernel-rank%d.csv", r)), []byte(b.String()), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	ids := "id,entity,kind\n500,rank0,process\n501,rank1,process\n"
	inter := "entity,pid,comm,ns\nrank1,777,hog,1000\n"
	os.WriteFile(filepath.Join(dir, "emds-kernel-ids.csv"), []byte(ids), 0o600)
	os.WriteFile(filepath.Join(dir, "emds-kernel-interferers.csv"), []byte(inter), 0o600)
	return dir
}

// fillCycle fills rank r's rows of the cycle (b, b2]: woken with latency
// wake (credited to row b+2), computing in rows b+2..to.
func fillCycle(m map[uint64]synthRow, b, to uint64, wake int64) {
	m[b+2] = synthRow{oncpu: slice - wake, wakelat: wake, nwake: 1}
	for k := b + 3; k <= to; k++ {
		m[k] = synthRow{oncpu: 200_000}
	}
}

func TestBarrierCycles(t *testing.T) {
	at := []uint64{100, 109, 119, 128, 138, 149}
	var rows [2]map[uint64]synthRow
	rows[0], rows[1] = map[uint64]synthRow{}, map[uint64]synthRow{}
	// 100→109: ideal; rank 0 last.
	fillCycle(rows[0], 100, 109, 5_000)
	fillCycle(rows[1], 100, 108, 5_000)
	// 109→119: rank 1 woke 300 µs late: one slice more.
	fillCycle(rows[0], 109, 118, 5_000)
	fillCycle(rows[1], 109, 119, 300_000)
	r := rows[1][111]
	r.top1pid, r.top1ns = 777, 200_000 // the hog held its CPU
	rows[1][111] = r
	// 119→128: ideal; rank 0 last.
	fillCycle(rows[0], 119, 128, 5_000)
	fillCycle(rows[1], 119, 127, 5_000)
	// 128→138: rank 1 preempted past its compute's end by a hog.
	fillCycle(rows[0], 128, 137, 5_000)
	fillCycle(rows[1], 128, 138, 5_000)
	rows[1][137] = synthRow{runq: slice, preempt: slice, nivcsw: 1, top1pid: 777, top1ns: slice}
	rows[1][138] = synthRow{oncpu: 100_000, runq: 100_000, nmigr: 1}
	// 138→149: two slices the kernel did not explain.
	// (rank 1 stops at its nominal end, in row 147, yet the barrier is
	// scheduled two slices later).
	fillCycle(rows[0], 138, 146, 5_000)
	fillCycle(rows[1], 138, 147, 5_000)
	dir := writeJob(t, 99, 150, at, rows)
	hist := "entity,lo_ns,hi_ns,count\nrank0,8192,12288,3\nrank1,196608,262144,2\nrank1,393216,524288,1\nmaster,196608,262144,50\n"
	if err := os.WriteFile(filepath.Join(dir, "emds-kernel-wakehist.csv"), []byte(hist), 0o600); err != nil {
		t.Fatal(err)
	}
	j, err := loadJob(dir, 0, -1)
	if err != nil {
		t.Fatal(err)
	}
	if j.compute != 1_900_000 || j.ideal() != 9 {
		t.Fatalf("compute %d, ideal %d: want 1.9 ms and 9", j.compute, j.ideal())
	}
	cs, skipped, err := j.cycles()
	if err != nil || skipped != 0 {
		t.Fatalf("cycles: %v, %d skipped", err, skipped)
	}
	want := []struct {
		period, last int
		cause        cause
	}{
		{9, 0, cause{}},
		{10, 1, cause{wake: 1}},
		{9, 0, cause{}},
		{10, 1, cause{runq: 1}},
		{11, 1, cause{none: 2}},
	}
	if len(cs) != len(want) {
		t.Fatalf("%d cycles, want %d", len(cs), len(want))
	}
	for i, w := range want {
		c := cs[i]
		if c.period != w.period || c.last != w.last || c.cause != w.cause {
			t.Errorf("cycle %d→%d: period %d, last rank %d, causes %+v; want %d, %d, %+v", c.from, c.to, c.period, c.last, c.cause, w.period, w.last, w.cause)
		}
	}
	if c := cs[1]; c.wake != 300_000 || c.wakeTop[777] != 200_000 || len(c.wakeTop) != 1 {
		t.Errorf("cycle 109→119: wake-up latency %d, while waiting %v; want 300000 and the hog's 200 µs", c.wake, c.wakeTop)
	}
	if c := cs[3]; c.preempt != slice || c.nivcsw != 1 || c.nmigr != 1 || c.top[777] != slice || c.runqAfter <= slice/2 {
		t.Errorf("cycle 128→138: %+v, want the hog's slice of preemption, 1 switch, 1 migration and the runnable time after the end", c)
	}
	var out bytes.Buffer
	if err := j.report(&out); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"ideal period 9", "9: 2 (40%) 10: 2 (40%) 11: 1 (20%)", "rank0 2 rank1 3", "4 in all", "hog:777", "exactly in 4 cycles (80%), within one slice in 0 more",
		"125 µs or more after its release: 1 cycles (20%); while it waited: hog:777 200.0",
		"<0.25 slice 50.0% 0.25-0.75 0.0% 0.75-1.25 (about one slice) 33.3% >1.25 16.7%"} {
		if !strings.Contains(out.String(), s) {
			t.Errorf("report lacks %q:\n%s", s, out.String())
		}
	}
}

func TestBarrierComputeArgAndErrors(t *testing.T) {
	m := manifest{Args: []string{"-iters", "5", "-compute", "2.4ms"}}
	if got := m.computeArg(); got != 2_400_000 {
		t.Errorf("computeArg = %d, want 2400000", got)
	}
	m.Args = []string{"--compute=1ms"}
	if got := m.computeArg(); got != 1_000_000 {
		t.Errorf("computeArg = %d, want 1000000", got)
	}
	j := &job{slice: slice, compute: 2_400_000}
	if j.ideal() != 11 {
		t.Errorf("ideal for 2.4 ms = %d, want 11", j.ideal())
	}
	// One barrier only: an error that says so.
	var rows [2]map[uint64]synthRow
	rows[0], rows[1] = map[uint64]synthRow{}, map[uint64]synthRow{}
	dir := writeJob(t, 1, 20, []uint64{5}, rows)
	j, err := loadJob(dir, 0, -1)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := j.cycles(); err == nil || !strings.Contains(err.Error(), "only 1 barriers") {
		t.Errorf("one barrier: err = %v, want one naming it", err)
	}
	// A job without the monitor.
	os.WriteFile(filepath.Join(dir, "manifest.json"), []byte(`{"timeslice_ns":250000,"ranks":2,"kernel":"no BTF"}`), 0o600)
	if _, err := loadJob(dir, 0, -1); err == nil || !strings.Contains(err.Error(), "no BTF") {
		t.Errorf("monitor off: err = %v, want the manifest's reason", err)
	}
}

func writePhases(t *testing.T, dir, name, line string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(strings.Join(phaseHeader, ",")+"\n"+line+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestCompute(t *testing.T) {
	d := t.TempDir()
	files := []string{
		// plain: 1000 µs per iteration, all on CPU.
		writePhases(t, d, "p-1.csv", "plain,-1,100,100000000,100000000,0,0,0,1000000,1000000"),
		writePhases(t, d, "p-2.csv", "plain,-1,100,100000000,100000000,0,0,0,1000000,1000000"),
		// bcsmpi: 1250 µs, 150 of it runnable, 100 more on CPU.
		writePhases(t, d, "b-rank0.csv", "bcs,0,100,125000000,110000000,15000000,30,2,1250000,1300000"),
		writePhases(t, d, "b-rank1.csv", "bcs,1,100,125000000,110000000,15000000,30,2,1250000,1300000"),
	}
	var out bytes.Buffer
	if err := compute(&out, files, ""); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"(1.250×, +250.0 µs)", "+150.0 µs    60.0%", "+100.0 µs    40.0%", "switches per iteration 0.300 against 0.000, migrations 0.020"} {
		if !strings.Contains(out.String(), s) {
			t.Errorf("output lacks %q:\n%s", s, out.String())
		}
	}
	bad := writePhases(t, d, "bad.csv", "bcs,0,x,1,1,1,1,1,1,1")
	if err := compute(&out, []string{bad}, ""); err == nil || !strings.Contains(err.Error(), `iters = "x"`) {
		t.Errorf("bad iters: err = %v, want one naming it", err)
	}
	os.WriteFile(bad, []byte("a,b\n1,2\n"), 0o600)
	if err := compute(&out, []string{bad}, ""); err == nil || !strings.Contains(err.Error(), "computephase's header") {
		t.Errorf("bad header: err = %v, want one naming the format", err)
	}
}

func TestComputeKernelRows(t *testing.T) {
	var rows [2]map[uint64]synthRow
	rows[0], rows[1] = map[uint64]synthRow{}, map[uint64]synthRow{}
	for k := uint64(2); k <= 10; k++ {
		rows[0][k] = synthRow{oncpu: 200_000, runq: 50_000, preempt: 50_000, top1pid: 777, top1ns: 50_000}
		rows[1][k] = synthRow{oncpu: 10_000} // asleep: not a compute row
	}
	rows[1][5] = synthRow{oncpu: slice, nmigr: 1}
	dir := writeJob(t, 1, 10, nil, rows)
	// The master ran 25 µs of every 250 µs slice (rows 2..10 over 9 slices).
	var m strings.Builder
	m.WriteString("slice," + strings.Join(kernel.Metrics, ",") + "\n")
	for k := uint64(1); k <= 10; k++ {
		fmt.Fprintf(&m, "%d,25000,0,0,0,0,0,0,0,0,0,0,0,0,%d\n", k, strobeAt(k)+ltts)
	}
	if err := os.WriteFile(filepath.Join(dir, "emds-kernel-master.csv"), []byte(m.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := computeRows(&out, dir); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(out.String(), "\n")
	if len(lines) < 4 || !strings.Contains(lines[2], "    0      9   80.0%     20.0%     20.0%") || !strings.Contains(lines[2], "hog:777 50.0") {
		t.Errorf("rank 0's line:\n%s", out.String())
	}
	if !strings.Contains(lines[3], "    1      1  100.0%      0.0%      0.0%    0.000    1.000") {
		t.Errorf("rank 1's line:\n%s", out.String())
	}
	if !strings.Contains(out.String(), "bcsrun's master on CPU: 10.0% of one CPU") || strings.Contains(out.String(), "runtime") {
		t.Errorf("bcsrun's threads (the master's file only):\n%s", out.String())
	}
}

// With the restart policy early, ranks wake at the end of the barrier's
// own slice's transmission: 1.9 ms make a period of 8.
func TestBarrierEarly(t *testing.T) {
	var rows [2]map[uint64]synthRow
	rows[0], rows[1] = map[uint64]synthRow{}, map[uint64]synthRow{}
	at := []uint64{100, 108, 117}
	for i := 0; i+1 < len(at); i++ {
		b := at[i]
		rows[0][b+1] = synthRow{oncpu: slice - 5_000, wakelat: 5_000, nwake: 1}
		for k := b + 2; k <= b+7; k++ {
			rows[0][k] = synthRow{oncpu: 200_000}
		}
		rows[1][b+1] = synthRow{oncpu: slice - 5_000, wakelat: 5_000, nwake: 1}
		for k := b + 2; k <= b+8; k++ {
			rows[1][k] = synthRow{oncpu: 200_000}
		}
	}
	dir := writeJob(t, 99, 118, at, rows)
	man := `{"timeslice_ns":250000,"ranks":2,"args":[],"kernel":"on","config":{"Spin":0,"Restart":"early"}}`
	if err := os.WriteFile(filepath.Join(dir, "manifest.json"), []byte(man), 0o600); err != nil {
		t.Fatal(err)
	}
	j, err := loadJob(dir, 0, -1)
	if err != nil {
		t.Fatal(err)
	}
	if !j.early || j.ideal() != 8 {
		t.Fatalf("early %v, ideal %d: want true and 8", j.early, j.ideal())
	}
	cs, _, err := j.cycles()
	if err != nil || len(cs) != 2 {
		t.Fatalf("cycles %v, %v", cs, err)
	}
	if c := cs[0]; c.period != 8 || c.cause != (cause{}) {
		t.Errorf("cycle 100→108: period %d, causes %+v; want 8 and none", c.period, c.cause)
	}
	if c := cs[1]; c.period != 9 || c.last != 1 || c.cause != (cause{none: 1}) {
		t.Errorf("cycle 108→117: period %d, last %d, causes %+v; want 9, rank 1, one slice unexplained", c.period, c.last, c.cause)
	}
}
