package plots

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bcsmpi/bcsmpi/emds/kernel"
)

// kernelDir writes a small kernel monitor dump: two ranks over 1000 slices
// of 250 µs; rank 1 is preempted by pid 77 in slices 400..599.
func kernelDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	write(t, dir, "manifest.json", `{"timeslice_ns": 250000}`)
	for _, e := range []string{"rank0", "rank1", "master", "runtime"} {
		var b strings.Builder
		b.WriteString("slice," + strings.Join(kernel.Metrics, ",") + "\n")
		for k := range 1000 {
			on, pre, top, topNS := 200000, 0, 0, 0
			if e == "rank1" && k >= 400 && k < 600 {
				on, pre, top, topNS = 50000, 150000, 77, 150000
			}
			fmt.Fprintf(&b, "%d,%d,%d,%d,%d,1,0,0,%d,%d,0,0,0,0,%d\n", k, on, pre, pre, 20000, top, topNS, 1_000_000+250000*k)
		}
		write(t, dir, "emds-kernel-"+e+".csv", b.String())
	}
	write(t, dir, "emds-kernel-interferers.csv", "entity,pid,comm,ns\nrank1,77,hog,30000000\nrank1,5,bcsrun,1000\n")
	write(t, dir, "emds-kernel-wakehist.csv", "entity,lo_ns,hi_ns,count\nrank0,16384,24576,900\nrank0,1048576,1572864,100\nrank1,16384,24576,1000\n")
	write(t, dir, "emds-kernel-ids.csv", "id,entity,kind\n10,rank0,process\n11,rank1,process\n5,master,thread\n4,runtime,process\n")
	return dir
}

func TestKernelFigures(t *testing.T) {
	dir := kernelDir(t)
	files, err := KernelHeat(dir, dir, Range{})
	if err != nil {
		t.Fatal(err)
	}
	checkPNG(t, files[0], int(Width.Dots(DPI)), int((Height * 2).Dots(DPI)))
	files, err = KernelStack(dir, dir, "rank1", Range{From: 350, To: 650})
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Base(files[0]) != "kernel-rank1.png" {
		t.Fatalf("files %v", files)
	}
	checkPNG(t, files[0], int(Width.Dots(DPI)), int(Height.Dots(DPI)))
	if _, err := KernelStack(dir, dir, "rank7", Range{}); err == nil || !strings.Contains(err.Error(), "emds-kernel-rank7.csv") {
		t.Fatalf("a missing rank: %v", err)
	}
	if _, err := KernelHeat(dir, dir, Range{From: 5000}); err == nil {
		t.Fatal("an empty range drew a figure")
	}
}

func TestKernelSummary(t *testing.T) {
	sums, missing, err := kernel.Summarize(kernelDir(t), 250000, 3)
	if err != nil || len(missing) > 0 {
		t.Fatal(err, missing)
	}
	if len(sums) != 4 || sums[0].Entity != "rank0" || sums[1].Entity != "rank1" || sums[2].Entity != "master" {
		t.Fatalf("entities %+v", sums)
	}
	r1 := sums[1]
	if r1.SpanNS != 1000*250000 || r1.OnCPU != 800*200000+200*50000 || r1.Preempt != 200*150000 {
		t.Errorf("rank1 span %d, on CPU %d, preempted %d", r1.SpanNS, r1.OnCPU, r1.Preempt)
	}
	if len(r1.Top) != 2 || r1.Top[0].PID != 77 || r1.Top[0].Comm != "hog" || r1.Top[1].Entity != "master" {
		t.Errorf("rank1's interferers %+v", r1.Top)
	}
	// rank0: 90% of the wake-ups in [16384, 24576), 10% in [1048576, 1572864).
	if sums[0].P50 != 24576 || sums[0].P99 != 1572864 {
		t.Errorf("rank0 p50 %d, p99 %d", sums[0].P50, sums[0].P99)
	}
	if sums[2].P50 != -1 {
		t.Errorf("the master without wake-ups: p50 %d", sums[2].P50)
	}
	var b strings.Builder
	if err := kernel.WriteSummaries(&b, sums); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "hog:77 30.00") || !strings.Contains(b.String(), "bcsrun:5(master)") {
		t.Errorf("table:\n%s", b.String())
	}
}

func TestKernelSummaryBadFiles(t *testing.T) {
	dir := kernelDir(t)
	write(t, dir, "emds-kernel-wakehist.csv", "entity,lo_ns,hi_ns,count\nrank0,1,x,3\n")
	if _, _, err := kernel.Summarize(dir, 250000, 3); err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Fatalf("a bad histogram row: %v", err)
	}
	dir = kernelDir(t)
	write(t, dir, "emds-kernel-rank1.csv", "slice,ONCPU\n0,1\n")
	if _, _, err := kernel.Summarize(dir, 250000, 3); err == nil || !strings.Contains(err.Error(), "RUNQ") {
		t.Fatalf("a file without the metrics: %v", err)
	}
}

// A job across hosts: each host's files carry "-node<k>" (its runtime is
// runtime-node<k>); the summary and the figures read them all, each host's
// ids naming its own interferers (pid 5 is the master on node 0, an
// unregistered task on node 1). A host without the monitor (node 2) has
// no files and is left out.
// kernelAcrossDir is kernelDir as a job across two hosts leaves it (see
// TestKernelSummaryAcrossHosts).
func kernelAcrossDir(t *testing.T) string {
	t.Helper()
	dir := kernelDir(t)
	for _, f := range []string{"interferers", "wakehist", "ids"} {
		if err := os.Remove(filepath.Join(dir, "emds-kernel-"+f+".csv")); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Rename(filepath.Join(dir, "emds-kernel-runtime.csv"), filepath.Join(dir, "emds-kernel-runtime-node0.csv")); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(dir, "emds-kernel-rank0.csv"))
	if err != nil {
		t.Fatal(err)
	}
	write(t, dir, "emds-kernel-runtime-node1.csv", string(raw))
	write(t, dir, "emds-kernel-interferers-node0.csv", "entity,pid,comm,ns\nrank0,5,bcsd,2000\n")
	write(t, dir, "emds-kernel-wakehist-node0.csv", "entity,lo_ns,hi_ns,count\nrank0,16384,24576,900\nrank0,1048576,1572864,100\n")
	write(t, dir, "emds-kernel-ids-node0.csv", "id,entity,kind\n10,rank0,process\n5,master,thread\n4,runtime-node0,process\n")
	write(t, dir, "emds-kernel-interferers-node1.csv", "entity,pid,comm,ns\nrank1,77,hog,30000000\nrank1,5,kworker,1000\n")
	write(t, dir, "emds-kernel-wakehist-node1.csv", "entity,lo_ns,hi_ns,count\nrank1,16384,24576,1000\n")
	write(t, dir, "emds-kernel-ids-node1.csv", "id,entity,kind\n11,rank1,process\n6,runtime-node1,process\n")
	return dir
}

func TestKernelSummaryAcrossHosts(t *testing.T) {
	dir := kernelAcrossDir(t)
	sums, missing, err := kernel.Summarize(dir, 250000, 3)
	if err != nil || len(missing) > 0 {
		t.Fatal(err, missing)
	}
	var ents []string
	for _, s := range sums {
		ents = append(ents, s.Entity)
	}
	if strings.Join(ents, " ") != "rank0 rank1 master runtime-node0 runtime-node1" {
		t.Fatalf("entities %q", ents)
	}
	if sums[0].P50 != 24576 || sums[0].P99 != 1572864 || sums[1].P50 != 24576 {
		t.Errorf("rank0 p50 %d, p99 %d; rank1 p50 %d", sums[0].P50, sums[0].P99, sums[1].P50)
	}
	if top := sums[0].Top; len(top) != 1 || top[0].Entity != "master" {
		t.Errorf("rank0's interferers %+v, want pid 5 named the master (node 0's ids)", top)
	}
	if top := sums[1].Top; len(top) != 2 || top[0].PID != 77 || top[1].Entity != "" {
		t.Errorf("rank1's interferers %+v, want pid 5 unnamed (node 1's ids do not have it)", top)
	}
	if _, err := KernelHeat(dir, dir, Range{}); err != nil {
		t.Fatal(err)
	}
	if _, err := KernelStack(dir, dir, "runtime-node1", Range{}); err != nil {
		t.Fatal(err)
	}
}

// A host whose files did not all come back: the summary covers the rest
// and names each missing file with its node and host (the manifest's
// hosts), instead of failing for every host.
func TestKernelSummaryHostFileMissing(t *testing.T) {
	dir := kernelAcrossDir(t)
	write(t, dir, "manifest.json", `{"timeslice_ns": 250000, "hosts": ["ha", "hb"]}`)
	if err := os.Remove(filepath.Join(dir, "emds-kernel-wakehist-node1.csv")); err != nil {
		t.Fatal(err)
	}
	sums, missing, err := kernel.Summarize(dir, 250000, 3)
	if err != nil || len(sums) != 5 || sums[0].P50 != 24576 || sums[1].P50 != -1 ||
		strings.Join(missing, "\n") != "node 1 (host hb): emds-kernel-wakehist-node1.csv missing: the wake-up latencies (p50, p99) of its entities are not shown" {
		t.Fatalf("node 1's histogram missing: %d summaries, missing %q, %v; want the rest summarized and the file named", len(sums), missing, err)
	}
	if err := os.Remove(filepath.Join(dir, "emds-kernel-ids-node1.csv")); err != nil {
		t.Fatal(err)
	}
	sums, missing, err = kernel.Summarize(dir, 250000, 3)
	if err != nil {
		t.Fatalf("one host's files missing failed the whole summary: %v", err)
	}
	var ents []string
	for _, s := range sums {
		ents = append(ents, s.Entity)
	}
	if strings.Join(ents, " ") != "rank0 rank1 master runtime-node0 runtime-node1" {
		t.Fatalf("entities %q", ents)
	}
	if sums[0].P50 != 24576 || sums[0].P99 != 1572864 || len(sums[0].Top) != 1 || sums[0].Top[0].Entity != "master" {
		t.Errorf("rank0 (node 0, whole): p50 %d, p99 %d, interferers %+v", sums[0].P50, sums[0].P99, sums[0].Top)
	}
	if top := sums[1].Top; sums[1].P50 != -1 || len(top) != 2 || top[0].PID != 77 || top[1].Entity != "" {
		t.Errorf("rank1 (node 1, no histogram, no ids): p50 %d, interferers %+v; want -1 and its two unnamed", sums[1].P50, top)
	}
	want := []string{
		"node 1 (host hb): emds-kernel-ids-node1.csv missing: its interferers are not named by entity",
		"node 1 (host hb): emds-kernel-wakehist-node1.csv missing: the wake-up latencies (p50, p99) of its entities are not shown",
	}
	if strings.Join(missing, "\n") != strings.Join(want, "\n") {
		t.Errorf("missing:\n%s\nwant:\n%s", strings.Join(missing, "\n"), strings.Join(want, "\n"))
	}

	// A host's runtime row missing (its other files there): named too.
	dir = kernelAcrossDir(t)
	if err := os.Remove(filepath.Join(dir, "emds-kernel-runtime-node1.csv")); err != nil {
		t.Fatal(err)
	}
	sums, missing, err = kernel.Summarize(dir, 250000, 3)
	if err != nil || len(sums) != 4 || len(missing) != 1 || missing[0] != "node 1: emds-kernel-runtime-node1.csv missing: its runtime has no row" {
		t.Errorf("runtime-node1 missing: %d summaries, missing %q, %v", len(sums), missing, err)
	}
}
