package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bcsmpi/bcsmpi/mds"
)

var t0 = time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)

// writeJob makes a synthetic MDS directory: a manifest (man, marshalled as
// launch writes it) and one EMDS file per node given (CSV text).
func writeJob(t *testing.T, man map[string]any, nodes map[int]string) string {
	t.Helper()
	dir := t.TempDir()
	b, err := json.Marshal(man)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, mds.ManifestFile), b, 0o600); err != nil {
		t.Fatal(err)
	}
	for n, csv := range nodes {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("emds-node%d.csv", n)), []byte(csv), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// emdsRows is an EMDS node file of the given slices with RUN and SWITCHNS
// (the other columns left out: a reader takes them by name).
func emdsRows(rows [][3]int64) string {
	var b strings.Builder
	b.WriteString("slice,LETTS,RUN,SWITCHNS\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "%d,1000000,%d,%d\n", r[0], r[1], r[2])
	}
	return b.String()
}

func gangManifest(prog string, submitted, admitted, start, end time.Time, g mds.Gang, nodes []int) map[string]any {
	m := map[string]any{"program": prog, "args": []string{"10"}, "ranks": 2, "nodes": len(nodes), "timeslice_ns": 1_000_000,
		"start": start, "end": end, "finished": true, "emds_nodes": nodes, "gang": g}
	if !submitted.IsZero() {
		m["submitted"], m["admitted"] = submitted, admitted
	}
	return m
}

// Two jobs of one gang: A ran throughout its life (no queue); B waited in
// the queue, and its EMDS window has gaps (slices not recorded) and runs of
// stopped slices. Every figure of the report follows from the files.
func TestGangReportTwoJobs(t *testing.T) {
	// Job A: 2 nodes, 6 slices alive, 4 run; switches out at 3, in at 5
	// (each on both nodes: 4 node switches of 10..40 µs).
	ga := mds.Gang{MPL: 2, Quantum: 2, SlicesAlive: 6, SlicesRun: 4, SwitchesIn: 1, SwitchesOut: 1,
		NodeSwitches: 4, SwitchNS: 100_000, SwitchMeanNS: 25_000}
	a := writeJob(t, gangManifest("/bin/a", t0, t0, t0.Add(50*time.Millisecond), t0.Add(2050*time.Millisecond), ga, []int{0, 1}),
		map[int]string{
			0: emdsRows([][3]int64{{1, 1, 0}, {2, 1, 0}, {3, 0, 10_000}, {4, 0, 0}, {5, 1, 20_000}, {6, 1, 0}}),
			1: emdsRows([][3]int64{{1, 1, 0}, {2, 1, 0}, {3, 0, 30_000}, {4, 0, 0}, {5, 1, 40_000}, {6, 1, 0}}),
		})
	// Job B: queued 1 s; 10 slices alive, 3 run, 2 given away; its one
	// node's window recorded slices 1-2 and 6-9 only (gaps), 5 switches of
	// which 3 recorded.
	gb := mds.Gang{MPL: 2, Quantum: 2, SlicesAlive: 10, SlicesRun: 3, SlicesGiven: 2, SwitchesIn: 2, SwitchesOut: 3,
		NodeSwitches: 5, SwitchNS: 5_000_000, SwitchMeanNS: 1_000_000}
	b := writeJob(t, gangManifest("/bin/b", t0, t0.Add(time.Second), t0.Add(1100*time.Millisecond), t0.Add(4*time.Second), gb, []int{0}),
		map[int]string{0: emdsRows([][3]int64{{1, 0, 500_000}, {2, 0, 0}, {6, 1, 2_000_000}, {7, 0, 100_000}, {8, 0, 0}, {9, 1, 0}})})

	ra, err := makeGangReport(a, "")
	if err != nil {
		t.Fatal(err)
	}
	if ra.ResponseNS != int64(2050*time.Millisecond) || ra.QueueNS != 0 || ra.StartupNS != int64(50*time.Millisecond) || ra.RunNS != int64(2*time.Second) {
		t.Fatalf("A's times: response %d, queue %d, start-up %d, run %d", ra.ResponseNS, ra.QueueNS, ra.StartupNS, ra.RunNS)
	}
	if ra.RunShare != 4.0/6 || ra.ShareSlowdown != 1.5 || ra.SwitchShare != 0.025 {
		t.Fatalf("A: run share %v, slowdown %v, switch share %v; want 0.667, 1.5, 0.025", ra.RunShare, ra.ShareSlowdown, ra.SwitchShare)
	}
	d := ra.EMDS
	if d == nil || d.Switches != 4 || d.P50NS != 20_000 || d.P99NS != 40_000 || d.MaxNS != 40_000 || d.Slices != 6 || d.RunSlices != 4 || len(d.Nodes) != 2 {
		t.Fatalf("A's EMDS: %+v; want 4 switches on 2 nodes, p50 20 µs, p99 40 µs, node 0 ran 4 of 6", d)
	}

	_, err = makeGangReport(b, a) // A is not B alone: refused
	if err == nil || !strings.Contains(err.Error(), "ran /bin/a on 2 ranks, the job /bin/b") {
		t.Fatalf("--alone of another program: %v", err)
	}
	alone := writeJob(t, map[string]any{"program": "/bin/b", "args": []string{"10"}, "ranks": 2, "timeslice_ns": 1_000_000,
		"start": t0, "end": t0.Add(1450 * time.Millisecond), "finished": true}, nil)
	rb, err := makeGangReport(b, alone)
	if err != nil {
		t.Fatal(err)
	}
	if rb.ResponseNS != int64(4*time.Second) || rb.QueueNS != int64(time.Second) || rb.RunNS != int64(2900*time.Millisecond) {
		t.Fatalf("B's times: response %d, queue %d, run %d", rb.ResponseNS, rb.QueueNS, rb.RunNS)
	}
	if rb.Alone == nil || rb.Alone.Slowdown != 2 || rb.Alone.ResponseSlowdown != 4.0/1.45 {
		t.Fatalf("B against alone: %+v; want slowdown 2, response %v", rb.Alone, 4.0/1.45)
	}
	if d := rb.EMDS; d == nil || d.Switches != 3 || d.P50NS != 500_000 || d.P99NS != 2_000_000 || d.Slices != 6 || d.RunSlices != 2 {
		t.Fatalf("B's EMDS (gaps): %+v; want 3 switches, p50 500 µs, p99 2 ms, ran 2 of the 6 recorded", d)
	}
	var out bytes.Buffer
	if err := rb.write(&out, "text"); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"response time   4.000 s  (submitted → ended)",
		"queue wait      1.000 s",
		"run 3 of 10 alive (run share 0.300); 2 of its turns' slices given away",
		"slowdown        3.33x implied by the run share",
		"slowdown alone  2.00x measured: run time against 1.450 s alone",
		"switches        2 in, 3 out; 5 on the nodes, total 5.00 ms, mean 1.00 ms (100.00% of the 1.00 ms slice)",
		"EMDS, 3 switches on nodes [0]: p50 500.0 µs, p99 2.00 ms, max 2.00 ms (p50 50.00%, p99 200.00% of the slice)",
		"node 0 ran in 2 of the 6 slices recorded",
	} {
		if !strings.Contains(out.String(), want) {
			t.Fatalf("B's report lacks %q:\n%s", want, out.String())
		}
	}
	out.Reset()
	if err := rb.write(&out, "json"); err != nil {
		t.Fatal(err)
	}
	var back gangReport
	if err := json.Unmarshal(out.Bytes(), &back); err != nil || back.SlicesGiven != 2 || back.Alone == nil || back.EMDS.P99NS != 2_000_000 {
		t.Fatalf("json: %v, %+v", err, back)
	}
}

// A job outside a gang gets nothing more after the table; --gang (and
// --alone) say why there is no report. An older gang manifest (no submit
// time, no EMDS) still reads.
func TestGangReportNotInGangAndOldManifest(t *testing.T) {
	plain := writeJob(t, map[string]any{"program": "/bin/a", "ranks": 2, "timeslice_ns": 1_000_000, "start": t0,
		"end": t0.Add(time.Second), "finished": true}, nil)
	var out bytes.Buffer
	if err := gangAfterTable(&out, plain, "", "text"); err != nil || out.Len() != 0 {
		t.Fatalf("a job outside a gang: %v, %q; want nothing", err, out.String())
	}
	if _, err := makeGangReport(plain, ""); !errors.Is(err, errNotGang) {
		t.Fatalf("--gang on a job outside a gang: %v", err)
	}
	if err := gangAfterTable(&out, plain, plain, "text"); !errors.Is(err, errNotGang) {
		t.Fatalf("--alone on a job outside a gang: %v", err)
	}
	old := writeJob(t, map[string]any{"program": "/bin/a", "ranks": 2, "timeslice_ns": 1_000_000, "start": t0,
		"end": t0.Add(time.Second), "finished": true, "gang": map[string]any{"slices_alive": 8, "slices_run": 4}}, nil)
	if err := gangAfterTable(&out, old, "", "text"); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"(started → ended: no submit time in the manifest)", "run 4 of 8 alive (run share 0.500)",
		"2.00x implied", "no SWITCHNS in the EMDS"} {
		if !strings.Contains(out.String(), want) {
			t.Fatalf("old manifest's report lacks %q:\n%s", want, out.String())
		}
	}
	unfinished := writeJob(t, map[string]any{"program": "/bin/a", "ranks": 2, "start": t0, "gang": map[string]any{"slices_alive": 8}}, nil)
	if _, err := makeGangReport(unfinished, ""); err == nil || !strings.Contains(err.Error(), "has not finished") {
		t.Fatalf("an unfinished job: %v", err)
	}
}
