package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bcsmpi/bcsmpi/emds"
	"github.com/bcsmpi/bcsmpi/mds"
)

// runMDS runs bcsrun with the MDS on, output under a fresh directory, and
// returns the job's MDS directory.
func runMDS(t *testing.T, env []string, args ...string) (run, string) {
	t.Helper()
	root := t.TempDir()
	for _, e := range append(env, "BCS_MDS_DIR="+root) {
		k, v, _ := strings.Cut(e, "=")
		t.Setenv(k, v)
	}
	r := bcsrun(t, args...)
	dir, err := filepath.EvalSymlinks(filepath.Join(root, "latest"))
	if err != nil {
		t.Fatalf("no %s/latest: %v\nstderr:\n%s", root, err, r.stderr)
	}
	return r, dir
}

func readSeries(t *testing.T, path string) *emds.Series {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s, err := emds.ReadCSV(f)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// The paper's §3.3 experiment, scaled down: compute 1.9 ms, Barrier, with
// 250 µs slices and an EMDS window in the middle of the run. Only exact
// properties are checked here; the timing figures of the experiment (median
// GETTS against the slice, the barrier period in slices) depend on the host
// and are measured by bench/mds-barrier.sh.
func TestMDSBarrierExperiment(t *testing.T) {
	const iters = 1200
	// A loaded host may keep a rank off the CPU for longer than the default
	// 2 s of quiet slices; this test is about the MDS, not deadlocks.
	r, dir := runMDS(t, []string{"BCS_MDS=main,elan", "BCS_EMDS_FIRST=300", "BCS_EMDS_SLICES=2000", "BCS_DEADLOCK_SLICES=200000"},
		"-n", "2", "--timeslice", "250us", "./barrier", "-iters", "1200")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	// The summary is printed, with every barrier counted and comp+comm = run time.
	if !strings.Contains(r.stderr, "MMDS summary, 2 ranks") || !strings.Contains(r.stderr, "differs from run time by at most 0.00000%") {
		t.Fatalf("summary missing or inaccurate:\n%s", r.stderr)
	}
	sums, err := mds.ReadDir(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range sums {
		if len(s.Rows) != 1 || s.Rows[0].Name != "MPI_Barrier" || s.Rows[0].Count != iters {
			t.Fatalf("rank %d rows %+v, want %d MPI_Barrier calls", s.Rank, s.Rows, iters)
		}
		if got := s.Comp.Total + s.Comm.Total; got != s.RunNs {
			t.Fatalf("rank %d: comp+comm %d != run %d", s.Rank, got, s.RunNs)
		}
	}
	// The window holds only slices 300 .. 2299, in order, one row per slice
	// run (a skipped slice has none).
	g := readSeries(t, filepath.Join(dir, "emds-global.csv"))
	getts, _ := g.Col("GETTS")
	if len(getts) == 0 || g.Slices[0] < 300 || g.Slices[len(g.Slices)-1] >= 2300 || !slices.IsSorted(g.Slices) {
		t.Fatalf("window holds %d slices, %v .. %v; want slices within 300 .. 2299", len(getts), g.Slices[0], g.Slices[len(g.Slices)-1])
	}
	// The runtime schedules each barrier in exactly the slice whose DEM brought
	// its last member's descriptor, and between two barriers every member's
	// descriptor arrives once (NCOLLDEM summed since the previous barrier = 2).
	n := readSeries(t, filepath.Join(dir, "emds-node0.csv"))
	ncoll, _ := n.Col("NCOLLMSM")
	ndem, _ := n.Col("NCOLLDEM")
	var at []uint64
	arrived := int64(0)
	for i, v := range ncoll {
		arrived += ndem[i]
		if v == 0 {
			continue
		}
		if ndem[i] == 0 {
			t.Fatalf("slice %d: barrier scheduled with no barrier descriptor in its DEM", n.Slices[i])
		}
		if len(at) > 0 && arrived != 2 { // the first barrier in the window may have started before it
			t.Fatalf("slice %d: barrier scheduled after %d member descriptors, want 2", n.Slices[i], arrived)
		}
		arrived = 0
		at = append(at, n.Slices[i])
	}
	if len(at) == 0 {
		t.Fatal("no barrier scheduled in a window of 2000 slices of a run that barriers every 1.9 ms")
	}
	// The manifest describes the run; the figures draw.
	var man struct {
		Ranks    int               `json:"ranks"`
		MDS      string            `json:"mds"`
		Slice    int64             `json:"timeslice_ns"`
		Slices   uint64            `json:"slices"`
		Version  map[string]string `json:"versions"`
		Finished bool              `json:"finished"`
		Complete bool              `json:"complete"`
		ExitCode *int              `json:"exit_code"`
	}
	raw, _ := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if err := json.Unmarshal(raw, &man); err != nil || man.Ranks != 2 || man.MDS != "main,elan" || man.Slice != 250_000 || man.Slices == 0 || man.Version["go"] == "" ||
		!man.Finished || !man.Complete || man.ExitCode == nil || *man.ExitCode != 0 {
		t.Fatalf("manifest %+v (%v):\n%s", man, err, raw)
	}
	for _, fig := range [][]string{{"getts", dir}, {"ncoll", dir, "--node", "0"}, {"matrix", dir}, {"hist", dir, "--rank", "1", "--metric", "MPI_Barrier.latency"}} {
		out, err := exec.Command(filepath.Join(bin, "bcsplot"), fig...).CombinedOutput()
		if fig[0] == "matrix" { // a barrier-only job has no point-to-point traffic
			if err == nil || !strings.Contains(string(out), "no point-to-point traffic") {
				t.Fatalf("bcsplot matrix on a barrier job: %v\n%s", err, out)
			}
			continue
		}
		if err != nil {
			t.Fatalf("bcsplot %v: %v\n%s", fig, err, out)
		}
		pngPath := strings.Fields(string(out))[0]
		f, err := os.Open(pngPath)
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(f)
		f.Close()
		if err != nil || img.Bounds().Dx() != 768 {
			t.Fatalf("%s: %v, %v", pngPath, err, img.Bounds())
		}
	}
	out, err := exec.Command(filepath.Join(bin, "bcsreport"), "--format", "json", dir).Output()
	var tbl mds.Table
	if err != nil || json.Unmarshal(out, &tbl) != nil || len(tbl.Rows) != 3 || tbl.Rows[0].Count != 2*iters {
		t.Fatalf("bcsreport json: %v %+v\n%s", err, tbl, out)
	}
}

func TestMDSBadValue(t *testing.T) {
	t.Setenv("BCS_MDS", "mian")
	r := bcsrun(t, "-n", "1", "./e2eprog", "exchange")
	if r.code != 2 || !strings.Contains(r.stderr, `"mian", want none, or a comma list of main, elan, kernel and all`) {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
}

func TestMDSStencilMatrix(t *testing.T) {
	r, dir := runMDS(t, []string{"BCS_MDS=all"}, "-n", "4", "--nodes", "2", "./stencil", "-iters", "20")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	raw, err := os.ReadFile(filepath.Join(dir, "comm-matrix.csv"))
	if err != nil {
		t.Fatal(err)
	}
	// 20 iterations × 2 halos of 64 KiB to each neighbour, plus the checksum to rank 0.
	for _, row := range []string{"0,1,20,1310720,user", "1,0,21,1310728,user", "3,2,20,1310720,user", "3,0,21,1310728,user"} {
		if !strings.Contains(string(raw), row+"\n") {
			t.Fatalf("matrix lacks %q:\n%s", row, raw)
		}
	}
	for _, f := range []string{"emds-node0.csv", "emds-node1.csv", "mmds-rank3.hlog", "mmds-rank2-dist.csv"} {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() == 0 {
			t.Fatalf("%s: %v", f, err)
		}
	}
}

// A job killed with SIGTERM still leaves every rank's MMDS data.
func TestMDSDumpOnSIGTERM(t *testing.T) {
	root := t.TempDir()
	cmd := exec.Command(filepath.Join(bin, "bcsrun"), "-n", "3", "./e2eprog", "hang")
	cmd.Dir = bin
	cmd.Env = append(os.Environ(), "BCS_MDS=main", "BCS_MDS_DIR="+root)
	var e bytes.Buffer
	cmd.Stderr = &e
	out, _ := cmd.StdoutPipe()
	if err := startJob(cmd); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(out)
	for i := 0; i < 3; i++ { // every rank is past Init (its SIGTERM handler is set)
		sc.Scan()
	}
	before := listeners(t)
	terminate(t, cmd)
	nothingLeft(t, before)
	dir, _ := filepath.EvalSymlinks(filepath.Join(root, "latest"))
	sums, err := mds.ReadDir(dir, nil)
	if err != nil || len(sums) != 3 {
		t.Fatalf("%d summaries after SIGTERM (%v)\nstderr:\n%s", len(sums), err, e.String())
	}
	// Each rank was in or about to enter MPI_Recv: its computation up to that
	// call is recorded once it enters; the call itself is counted when it
	// returns, which it never did. The dump says it was not taken at Finalize.
	for _, s := range sums {
		if s.Comp.Count > 1 || s.RunNs < s.Comp.Total || s.Comm.Count != 0 || s.Final {
			t.Fatalf("rank %d summary after SIGTERM: %+v", s.Rank, s)
		}
	}
	st, err := mds.Check(dir)
	if err != nil || !st.Finished || st.Complete || !slices.Equal(st.Incomplete(), []int{0, 1, 2}) {
		t.Fatalf("after SIGTERM: %+v (%v)", st, err)
	}
}

// mds_interval dumps while the job runs, so a run that hangs or is killed
// later still leaves recent data.
func TestMDSPeriodicDump(t *testing.T) {
	before := listeners(t)
	root := t.TempDir()
	cmd := exec.Command(filepath.Join(bin, "bcsrun"), "-n", "2", "./barrier", "-iters", "4000", "-compute", "500us")
	cmd.Dir = bin
	cmd.Env = append(os.Environ(), "BCS_MDS=main", "BCS_MDS_DIR="+root, "BCS_MDS_INTERVAL=100ms")
	if err := startJob(cmd); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var during mds.Summary
	found := false
	deadline := time.After(60 * time.Second)
poll:
	for {
		select {
		case <-done:
			break poll
		case <-deadline:
			cmd.Process.Kill()
			t.Fatal("job did not end")
		case <-time.After(20 * time.Millisecond):
		}
		files, _ := filepath.Glob(filepath.Join(root, "*", "mmds-rank0.csv"))
		if len(files) == 0 {
			continue
		}
		f, err := os.Open(files[0])
		if err != nil {
			continue
		}
		s, err := mds.ReadSummary(f, 0)
		f.Close()
		if err == nil && len(s.Rows) > 0 && s.Rows[0].Count > 0 && s.Rows[0].Count < 4000 {
			during, found = s, true
			cmd.Process.Signal(syscall.SIGTERM) // enough: the periodic dump happened mid-run
			<-done
			break
		}
	}
	if !found {
		t.Fatal("no MMDS dump appeared while the job was running")
	}
	t.Logf("mid-run dump: %d of 4000 barriers recorded", during.Rows[0].Count)
	nothingLeft(t, before)
}
