package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"time"

	"github.com/bcsmpi/bcsmpi/emds"
	"github.com/bcsmpi/bcsmpi/mds"
)

// jobManifest is the part of manifest.json (internal/launch's Manifest)
// the gang report reads.
type jobManifest struct {
	Program    string    `json:"program"`
	Args       []string  `json:"args"`
	Ranks      int       `json:"ranks"`
	Nodes      int       `json:"nodes"`
	TimesliceN int64     `json:"timeslice_ns"`
	Submitted  time.Time `json:"submitted"`
	Admitted   time.Time `json:"admitted"`
	Start      time.Time `json:"start"`
	End        time.Time `json:"end"`
	Finished   bool      `json:"finished"`
	EMDSNodes  []int     `json:"emds_nodes"`
	Gang       *mds.Gang `json:"gang"`
}

func readManifest(dir string) (jobManifest, error) {
	var m jobManifest
	b, err := os.ReadFile(filepath.Join(dir, mds.ManifestFile))
	if err != nil {
		return m, err
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return m, fmt.Errorf("%s: %w", filepath.Join(dir, mds.ManifestFile), err)
	}
	return m, nil
}

// errNotGang is a job that did not run in a gang.
var errNotGang = errors.New("did not run in a gang")

// gangReport is a ganged job's slowdown, response time and switch cost
// (bcsreport --gang; the fields are documented in the help and the README).
type gangReport struct {
	Dir     string `json:"dir"`
	Program string `json:"program"`
	Ranks   int    `json:"ranks"`
	MPL     int    `json:"mpl,omitempty"`
	Quantum uint64 `json:"quantum,omitempty"`
	// Times, in ns. ResponseNS is end − submitted (end − start when the
	// manifest has no submit time: HasSubmit false), QueueNS admitted −
	// submitted, StartupNS start − admitted, RunNS end − start.
	HasSubmit  bool  `json:"has_submit"`
	ResponseNS int64 `json:"response_ns"`
	QueueNS    int64 `json:"queue_ns"`
	StartupNS  int64 `json:"startup_ns"`
	RunNS      int64 `json:"run_ns"`
	SliceNS    int64 `json:"timeslice_ns"`

	SlicesAlive uint64 `json:"slices_alive"`
	SlicesRun   uint64 `json:"slices_run"`
	SlicesGiven uint64 `json:"slices_given"`
	// RunShare is SlicesRun / SlicesAlive; ShareSlowdown its inverse, the
	// slowdown the share implies for a CPU-bound job (0 when it ran none).
	RunShare      float64 `json:"run_share"`
	ShareSlowdown float64 `json:"share_slowdown"`

	// Alone: --alone DIR, a run of the same program alone; Slowdown is
	// RunNS / its run time, ResponseSlowdown ResponseNS / its run time.
	Alone *aloneRun `json:"alone,omitempty"`

	SwitchesIn   uint64 `json:"switches_in"`
	SwitchesOut  uint64 `json:"switches_out"`
	NodeSwitches uint64 `json:"node_switches"`
	SwitchNS     int64  `json:"switch_ns"`
	SwitchMeanNS int64  `json:"switch_mean_ns"`
	// SwitchShare is SwitchMeanNS / SliceNS.
	SwitchShare float64 `json:"switch_share"`
	// EMDS: the recorded switches (non-zero SWITCHNS over the nodes' EMDS
	// windows) and their distribution; nil without SWITCHNS in the dumps.
	EMDS *switchDist `json:"emds,omitempty"`
	Note string      `json:"note,omitempty"`
}

type aloneRun struct {
	Dir              string  `json:"dir"`
	RunNS            int64   `json:"run_ns"`
	Slowdown         float64 `json:"slowdown"`
	ResponseSlowdown float64 `json:"response_slowdown"`
}

// switchDist is the distribution of SWITCHNS's non-zero cells; the shares
// are of the slice. RunSlices and Slices are node 0's (or the first
// recorded node's) RUN column: slices run among those recorded.
type switchDist struct {
	Nodes     []int   `json:"nodes"`
	Switches  int     `json:"switches"`
	P50NS     int64   `json:"p50_ns"`
	P99NS     int64   `json:"p99_ns"`
	MaxNS     int64   `json:"max_ns"`
	P50Share  float64 `json:"p50_share"`
	P99Share  float64 `json:"p99_share"`
	Slices    int     `json:"slices"`
	RunSlices int     `json:"run_slices"`
}

// makeGangReport reads dir's manifest and EMDS (and alone's manifest when
// alone is not ""). errNotGang: the job did not run in a gang.
func makeGangReport(dir, alone string) (*gangReport, error) {
	m, err := readManifest(dir)
	if err != nil {
		return nil, err
	}
	if m.Gang == nil {
		return nil, fmt.Errorf("%s: the job %w (no \"gang\" in its manifest)", dir, errNotGang)
	}
	if !m.Finished || m.End.IsZero() {
		return nil, fmt.Errorf("%s: the job has not finished (its manifest has no end): no response time yet", dir)
	}
	g := m.Gang
	r := &gangReport{Dir: dir, Program: m.Program, Ranks: m.Ranks, MPL: g.MPL, Quantum: g.Quantum, SliceNS: m.TimesliceN,
		RunNS: int64(m.End.Sub(m.Start)), SlicesAlive: g.SlicesAlive, SlicesRun: g.SlicesRun, SlicesGiven: g.SlicesGiven,
		SwitchesIn: g.SwitchesIn, SwitchesOut: g.SwitchesOut, NodeSwitches: g.NodeSwitches, SwitchNS: g.SwitchNS,
		SwitchMeanNS: g.SwitchMeanNS, Note: g.Note}
	r.ResponseNS = r.RunNS
	if !m.Submitted.IsZero() {
		r.HasSubmit = true
		r.ResponseNS = int64(m.End.Sub(m.Submitted))
		if !m.Admitted.IsZero() {
			r.QueueNS, r.StartupNS = int64(m.Admitted.Sub(m.Submitted)), int64(m.Start.Sub(m.Admitted))
		}
	}
	if g.SlicesAlive > 0 {
		r.RunShare = float64(g.SlicesRun) / float64(g.SlicesAlive)
	}
	if g.SlicesRun > 0 {
		r.ShareSlowdown = float64(g.SlicesAlive) / float64(g.SlicesRun)
	}
	if m.TimesliceN > 0 {
		r.SwitchShare = float64(g.SwitchMeanNS) / float64(m.TimesliceN)
	}
	if r.EMDS, err = readSwitches(dir, m); err != nil {
		return nil, err
	}
	if alone != "" {
		a, err := readManifest(alone)
		if err != nil {
			return nil, fmt.Errorf("--alone: %w", err)
		}
		switch {
		case a.Program != m.Program || a.Ranks != m.Ranks:
			return nil, fmt.Errorf("--alone %s ran %s on %d ranks, the job %s on %d: compare a run of the same program", alone, a.Program, a.Ranks, m.Program, m.Ranks)
		case !a.Finished || a.End.IsZero() || !a.End.After(a.Start):
			return nil, fmt.Errorf("--alone %s: that job has not finished (its manifest has no end)", alone)
		}
		if !slices.Equal(a.Args, m.Args) {
			fmt.Fprintf(os.Stderr, "bcsreport: warning: --alone %s ran %s with arguments %q, the job with %q\n", alone, a.Program, a.Args, m.Args)
		}
		if a.Gang != nil && a.Gang.SlicesRun < a.Gang.SlicesAlive {
			fmt.Fprintf(os.Stderr, "bcsreport: warning: --alone %s shared its gang (ran %d of %d slices): not a run alone\n", alone, a.Gang.SlicesRun, a.Gang.SlicesAlive)
		}
		ar := &aloneRun{Dir: alone, RunNS: int64(a.End.Sub(a.Start))}
		ar.Slowdown = float64(r.RunNS) / float64(ar.RunNS)
		ar.ResponseSlowdown = float64(r.ResponseNS) / float64(ar.RunNS)
		r.Alone = ar
	}
	return r, nil
}

// readSwitches gathers SWITCHNS and RUN from the nodes' EMDS files; nil
// when there are none or they lack SWITCHNS.
func readSwitches(dir string, m jobManifest) (*switchDist, error) {
	var d switchDist
	var vals []int64
	for _, n := range m.EMDSNodes {
		path := filepath.Join(dir, fmt.Sprintf("emds-node%d.csv", n))
		f, err := os.Open(path)
		if errors.Is(err, os.ErrNotExist) {
			continue // mds.Check names it
		}
		if err != nil {
			return nil, err
		}
		s, err := emds.ReadCSV(bufio.NewReader(f))
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		sw, run := slices.Index(s.Names, "SWITCHNS"), slices.Index(s.Names, "RUN")
		if sw < 0 {
			continue
		}
		d.Nodes = append(d.Nodes, n)
		for _, v := range s.Cols[sw] {
			if v > 0 {
				vals = append(vals, v)
			}
		}
		if run >= 0 && len(d.Nodes) == 1 {
			d.Slices = len(s.Slices)
			for _, v := range s.Cols[run] {
				if v != 0 {
					d.RunSlices++
				}
			}
		}
	}
	if len(d.Nodes) == 0 {
		return nil, nil
	}
	sort.Slice(vals, func(i, j int) bool { return vals[i] < vals[j] })
	d.Switches = len(vals)
	if len(vals) > 0 {
		d.P50NS, d.P99NS, d.MaxNS = rankOf(vals, 0.50), rankOf(vals, 0.99), vals[len(vals)-1]
		if m.TimesliceN > 0 {
			d.P50Share, d.P99Share = float64(d.P50NS)/float64(m.TimesliceN), float64(d.P99NS)/float64(m.TimesliceN)
		}
	}
	return &d, nil
}

// rankOf is the nearest-rank percentile p of sorted vals (not empty).
func rankOf(vals []int64, p float64) int64 {
	i := int(math.Ceil(p*float64(len(vals)))) - 1
	return vals[max(0, min(i, len(vals)-1))]
}

func (r *gangReport) write(w io.Writer, format string) error {
	if format == "json" {
		e := json.NewEncoder(w)
		e.SetIndent("", "  ")
		return e.Encode(r)
	}
	b := bufio.NewWriter(w)
	p := func(f string, a ...any) { fmt.Fprintf(b, f, a...) }
	p("gang: %s, %d ranks", r.Program, r.Ranks)
	if r.MPL > 0 {
		p(" (bcsd: gang_mpl %d, gang_quantum %d)", r.MPL, r.Quantum)
	}
	p("\n")
	if r.HasSubmit {
		p("  response time   %s  (submitted → ended)\n", secs(r.ResponseNS))
		p("  queue wait      %s  (submitted → admitted)\n", secs(r.QueueNS))
		p("  start-up        %s  (admitted → started)\n", secs(r.StartupNS))
	} else {
		p("  response time   %s  (started → ended: no submit time in the manifest)\n", secs(r.ResponseNS))
	}
	p("  run time        %s  (started → ended)\n", secs(r.RunNS))
	p("  slices          run %d of %d alive (run share %.3f); %d of its turns' slices given away (work-conserving)\n",
		r.SlicesRun, r.SlicesAlive, r.RunShare, r.SlicesGiven)
	if r.SlicesRun > 0 {
		p("  slowdown        %.2fx implied by the run share (alive / run)\n", r.ShareSlowdown)
	} else {
		p("  slowdown        unknown: the job ran in no slice\n")
	}
	if a := r.Alone; a != nil {
		p("  slowdown alone  %.2fx measured: run time against %s alone (%s); response time %.2fx\n", a.Slowdown, secs(a.RunNS), a.Dir, a.ResponseSlowdown)
	}
	p("  switches        %d in, %d out; %d on the nodes, total %s, mean %s", r.SwitchesIn, r.SwitchesOut, r.NodeSwitches, micros(r.SwitchNS), micros(r.SwitchMeanNS))
	if r.SliceNS > 0 {
		p(" (%.2f%% of the %s slice)", 100*r.SwitchShare, micros(r.SliceNS))
	}
	p("\n")
	switch d := r.EMDS; {
	case d == nil:
		p("  switch cost     no SWITCHNS in the EMDS (run with BCS_MDS=elan for its distribution)\n")
	case d.Switches == 0:
		p("  switch cost     no switch recorded in the EMDS (nodes %v)\n", d.Nodes)
	default:
		p("  switch cost     EMDS, %d switches on nodes %v: p50 %s, p99 %s, max %s (p50 %.2f%%, p99 %.2f%% of the slice)\n",
			d.Switches, d.Nodes, micros(d.P50NS), micros(d.P99NS), micros(d.MaxNS), 100*d.P50Share, 100*d.P99Share)
	}
	if d := r.EMDS; d != nil && d.Slices > 0 {
		p("  EMDS RUN        node %d ran in %d of the %d slices recorded\n", d.Nodes[0], d.RunSlices, d.Slices)
	}
	if r.Note != "" {
		p("  note            %s\n", r.Note)
	}
	return b.Flush()
}

func secs(ns int64) string { return fmt.Sprintf("%.3f s", float64(ns)/1e9) }

func micros(ns int64) string {
	if ns >= 1_000_000 {
		return fmt.Sprintf("%.2f ms", float64(ns)/1e6)
	}
	return fmt.Sprintf("%.1f µs", float64(ns)/1e3)
}
