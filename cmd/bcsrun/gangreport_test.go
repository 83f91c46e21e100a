package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bcsmpi/bcsmpi/emds"
	"github.com/bcsmpi/bcsmpi/mds"
)

// gangJobDir is what the gang accounting test reads of one job's MDS
// directory: its manifest's times and gang object, and its nodes' EMDS.
type gangJobDir struct {
	Submitted time.Time `json:"submitted"`
	Admitted  time.Time `json:"admitted"`
	Start     time.Time `json:"start"`
	End       time.Time `json:"end"`
	Slices    uint64    `json:"slices"`
	Nodes     int       `json:"nodes"`
	EMDSNodes []int     `json:"emds_nodes"`
	Gang      *mds.Gang `json:"gang"`
}

// Two jobs time-share the daemon's gang (a quantum of 2 slices): each
// one's manifest says it ran in fewer slices than it was alive, with
// switches into and out of it, and agrees with its EMDS counted slice by
// slice: slices alive are the rows, slices run the RUN column's ones, the
// switches its changes (from a running start), the node switches the
// non-zero SWITCHNS cells and their sum the total. bcsreport --gang and the
// text report give the same figures. Job A (one node) computes until told
// to stop, job B (two logical nodes) runs beside it to its end.
func TestGangdAccountingInManifestAndReport(t *testing.T) {
	before := listeners(t)
	conf := []string{"BCS_GANG_QUANTUM=2", "BCS_TIMESLICE=2ms"}
	g := startGangd(t, "", conf...)
	g.env = append(g.env, conf...)
	g.env = append(g.env, "BCS_MDS=main,elan", "BCS_EMDS_SLICES=50000", "BCS_DEADLOCK_SLICES=0")
	workA, workB := t.TempDir(), t.TempDir()
	stop := filepath.Join(t.TempDir(), "stop")
	a := exec.Command(filepath.Join(bin, "bcsrun"), "-n", "2", filepath.Join(bin, "e2eprog"), "gangwork", "10", stop)
	a.Env, a.Dir = g.env, workA
	var ao, ae syncBuf
	a.Stdout, a.Stderr = &ao, &ae
	if err := startJob(a); err != nil {
		t.Fatal(err)
	}
	g.waitFor(t, "job 1: 2 rank(s) of "+filepath.Join(bin, "e2eprog")+" for pid ")
	rb := g.bcsrun(t, workB, "", "-n", "2", "--nodes", "2", filepath.Join(bin, "e2eprog"), "gangwork", "30")
	if rb.code != 0 || !strings.Contains(rb.stdout, "gangwork ok: 2 ranks, 30 iterations") {
		t.Fatalf("job B: exit %d\nstdout:\n%s\nstderr:\n%s", rb.code, rb.stdout, rb.stderr)
	}
	if err := os.WriteFile(stop, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := a.Wait(); err != nil || !strings.Contains(ao.String(), "gangwork ok: 2 ranks, ") {
		t.Fatalf("job A: %v\nstdout:\n%s\nstderr:\n%s", err, ao.String(), ae.String())
	}
	g.stop(t)
	nothingLeft(t, before)

	for _, job := range []struct {
		name, dir string
		nodes     int
	}{{"A", filepath.Join(workA, "bcs-mds", "latest"), 1}, {"B", filepath.Join(workB, "bcs-mds", "latest"), 2}} {
		raw, err := os.ReadFile(filepath.Join(job.dir, mds.ManifestFile))
		if err != nil {
			t.Fatal(err)
		}
		var m gangJobDir
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatal(err)
		}
		gm := m.Gang
		if gm == nil {
			t.Fatalf("job %s: no gang in its manifest:\n%s", job.name, raw)
		}
		if m.Submitted.IsZero() || m.Admitted.Before(m.Submitted) || m.Start.Before(m.Admitted) || !m.End.After(m.Start) {
			t.Errorf("job %s: submitted %v, admitted %v, start %v, end %v: want them in that order", job.name, m.Submitted, m.Admitted, m.Start, m.End)
		}
		if gm.MPL != 2 || gm.Quantum != 2 || gm.SlicesAlive != m.Slices || gm.SlicesRun == 0 || gm.SlicesRun >= gm.SlicesAlive ||
			gm.SwitchesIn == 0 || gm.SwitchesOut == 0 || gm.NodeSwitches == 0 || gm.SwitchNS <= 0 || gm.SwitchMeanNS != gm.SwitchNS/int64(gm.NodeSwitches) {
			t.Fatalf("job %s: gang accounting %+v (slices %d): want MPL 2, quantum 2, run < alive = slices, switches both ways", job.name, *gm, m.Slices)
		}
		if !slices.Equal(m.EMDSNodes, []int{0, 1}[:job.nodes]) {
			t.Fatalf("job %s: EMDS nodes %v, want %d", job.name, m.EMDSNodes, job.nodes)
		}
		var nodeSwitches uint64
		var switchNS int64
		for _, n := range m.EMDSNodes {
			f, err := os.Open(filepath.Join(job.dir, fmt.Sprintf("emds-node%d.csv", n)))
			if err != nil {
				t.Fatal(err)
			}
			s, err := emds.ReadCSV(f)
			f.Close()
			if err != nil {
				t.Fatal(err)
			}
			run, sw := s.Cols[slices.Index(s.Names, "RUN")], s.Cols[slices.Index(s.Names, "SWITCHNS")]
			var ran, in, out uint64
			prev := int64(1) // the ranks start running
			for i, r := range run {
				if r == 1 {
					ran++
				}
				if r == 1 && prev == 0 {
					in++
				}
				if r == 0 && prev == 1 {
					out++
				}
				prev = r
				if sw[i] > 0 {
					nodeSwitches++
					switchNS += sw[i]
				}
			}
			if uint64(len(s.Slices)) != gm.SlicesAlive || ran != gm.SlicesRun || in != gm.SwitchesIn || out != gm.SwitchesOut {
				t.Errorf("job %s node %d: EMDS has %d slices, %d run, switches %d in, %d out; the manifest %d, %d, %d, %d",
					job.name, n, len(s.Slices), ran, in, out, gm.SlicesAlive, gm.SlicesRun, gm.SwitchesIn, gm.SwitchesOut)
			}
		}
		if nodeSwitches != gm.NodeSwitches || switchNS != gm.SwitchNS {
			t.Errorf("job %s: EMDS has %d switches on its nodes, %d ns; the manifest %d, %d", job.name, nodeSwitches, switchNS, gm.NodeSwitches, gm.SwitchNS)
		}
		if job.nodes == 1 && nodeSwitches != gm.SwitchesIn+gm.SwitchesOut { // no hold on one node (its slices run on the strobe thread)
			t.Errorf("job %s: %d node switches, want one per switch (%d in, %d out)", job.name, nodeSwitches, gm.SwitchesIn, gm.SwitchesOut)
		}

		r := command(t, g.env, bin, "", filepath.Join(bin, "bcsreport"), "--gang", "--format", "json", job.dir)
		var rep struct {
			Share  float64 `json:"run_share"`
			Slower float64 `json:"share_slowdown"`
			EMDS   struct {
				Switches  uint64 `json:"switches"`
				Slices    uint64 `json:"slices"`
				RunSlices uint64 `json:"run_slices"`
			} `json:"emds"`
		}
		if err := json.Unmarshal([]byte(r.stdout), &rep); r.code != 0 || err != nil {
			t.Fatalf("job %s: bcsreport --gang: exit %d, %v\n%s%s", job.name, r.code, err, r.stdout, r.stderr)
		}
		if rep.EMDS.Switches != gm.NodeSwitches || rep.EMDS.Slices != gm.SlicesAlive || rep.EMDS.RunSlices != gm.SlicesRun ||
			rep.Share != float64(gm.SlicesRun)/float64(gm.SlicesAlive) || rep.Slower != float64(gm.SlicesAlive)/float64(gm.SlicesRun) {
			t.Errorf("job %s: bcsreport --gang disagrees with the manifest %+v:\n%s", job.name, *gm, r.stdout)
		}
		r = command(t, g.env, bin, "", filepath.Join(bin, "bcsreport"), job.dir)
		line := fmt.Sprintf("run %d of %d alive (run share %.3f)", gm.SlicesRun, gm.SlicesAlive, rep.Share)
		if r.code != 0 || !strings.Contains(r.stdout, "MPI_Allreduce") || !strings.Contains(r.stdout, line) ||
			!strings.Contains(r.stdout, "switches        "+strconv.FormatUint(gm.SwitchesIn, 10)+" in, ") {
			t.Errorf("job %s: bcsreport: exit %d, want the MMDS table and %q\n%s%s", job.name, r.code, line, r.stdout, r.stderr)
		}
		t.Logf("job %s: bcsreport:\n%s", job.name, r.stdout)
	}
}
