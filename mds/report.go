package mds

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
)

// TableRow is one line of the paper's Table 2, aggregated over the ranks it
// covers. Times are in ms. RankTotal* give the spread of this row's total
// across ranks (as mpiP reports it); they equal Total for one rank.
type TableRow struct {
	Name          string  `json:"name"`
	Min           float64 `json:"min_ms"`
	Max           float64 `json:"max_ms"`
	Total         float64 `json:"total_ms"`
	Count         int64   `json:"count"`
	Average       float64 `json:"average_ms"`
	RankTotalMin  float64 `json:"rank_total_min_ms"`
	RankTotalMean float64 `json:"rank_total_mean_ms"`
	RankTotalMax  float64 `json:"rank_total_max_ms"`
}

// Table is Table 2 for a set of ranks.
type Table struct {
	Ranks []int      `json:"ranks"`
	Rows  []TableRow `json:"rows"` // primitives, then "Comp Granularity" and "Comm Overhead"
	// RunMs is the longest run time among the ranks; AccuracyPct is the worst
	// |comp + comm − run| / run over the ranks, in percent.
	RunMs       float64 `json:"run_ms"`
	AccuracyPct float64 `json:"accuracy_pct"`
}

const ms = 1e6

// Aggregate builds the table over the given summaries.
func Aggregate(sums []Summary) Table {
	t := Table{}
	type acc struct {
		row    TableRow
		totals []float64
	}
	byName := map[string]*acc{}
	var order []string
	add := func(name string, r Row) {
		if r.Count == 0 {
			return
		}
		a := byName[name]
		if a == nil {
			a = &acc{row: TableRow{Name: name, Min: math.Inf(1)}}
			byName[name] = a
			order = append(order, name)
		}
		a.row.Min = math.Min(a.row.Min, float64(r.Min)/ms)
		a.row.Max = math.Max(a.row.Max, float64(r.Max)/ms)
		a.row.Total += float64(r.Total) / ms
		a.row.Count += r.Count
		a.totals = append(a.totals, float64(r.Total)/ms)
	}
	sort.Slice(sums, func(i, j int) bool { return sums[i].Rank < sums[j].Rank })
	for _, s := range sums {
		t.Ranks = append(t.Ranks, s.Rank)
		for _, r := range s.Rows {
			add(r.Name, r)
		}
		t.RunMs = math.Max(t.RunMs, float64(s.RunNs)/ms)
		if s.RunNs > 0 {
			e := math.Abs(float64(s.Comp.Total+s.Comm.Total-s.RunNs)) / float64(s.RunNs) * 100
			t.AccuracyPct = math.Max(t.AccuracyPct, e)
		}
	}
	sort.SliceStable(order, func(i, j int) bool {
		pi, _ := ParsePrim(order[i])
		pj, _ := ParsePrim(order[j])
		return pi < pj
	})
	for _, s := range sums {
		add("Comp Granularity", s.Comp)
		add("Comm Overhead", s.Comm)
	}
	for _, name := range order {
		a := byName[name]
		a.row.Average = a.row.Total / float64(a.row.Count)
		a.row.RankTotalMin, a.row.RankTotalMax = math.Inf(1), 0
		for _, v := range a.totals {
			a.row.RankTotalMin = math.Min(a.row.RankTotalMin, v)
			a.row.RankTotalMax = math.Max(a.row.RankTotalMax, v)
			a.row.RankTotalMean += v / float64(len(a.totals))
		}
		t.Rows = append(t.Rows, a.row)
	}
	return t
}

// Write prints the table as "text", "csv" or "json".
func (t Table) Write(w io.Writer, format string) error {
	switch format {
	case "json":
		e := json.NewEncoder(w)
		e.SetIndent("", "  ")
		return e.Encode(t)
	case "csv":
		fmt.Fprintln(w, "primitive,min_ms,max_ms,total_ms,count,average_ms,rank_total_min_ms,rank_total_mean_ms,rank_total_max_ms")
		for _, r := range t.Rows {
			fmt.Fprintf(w, "%s,%.6f,%.6f,%.6f,%d,%.6f,%.6f,%.6f,%.6f\n", r.Name, r.Min, r.Max, r.Total, r.Count, r.Average, r.RankTotalMin, r.RankTotalMean, r.RankTotalMax)
		}
		return nil
	case "text", "":
		who := fmt.Sprintf("rank %d", t.Ranks[0])
		if len(t.Ranks) != 1 {
			who = fmt.Sprintf("%d ranks", len(t.Ranks))
		}
		fmt.Fprintf(w, "MMDS summary, %s (times in ms; the last three columns are the spread of Total across ranks)\n", who)
		fmt.Fprintf(w, "%-17s %10s %10s %12s %9s %11s %11s %11s %11s\n", "Primitive", "Min(ms)", "Max(ms)", "Total(ms)", "Count", "Average(ms)", "rank min", "rank mean", "rank max")
		for _, r := range t.Rows {
			fmt.Fprintf(w, "%-17s %10.3f %10.3f %12.3f %9d %11.3f %11.3f %11.3f %11.3f\n", r.Name, r.Min, r.Max, r.Total, r.Count, r.Average, r.RankTotalMin, r.RankTotalMean, r.RankTotalMax)
		}
		fmt.Fprintf(w, "run time %.3f ms; comp + comm differs from run time by at most %.5f%% on any rank\n", t.RunMs, t.AccuracyPct)
		return nil
	}
	return fmt.Errorf("mds: format %q, want text, csv or json", format)
}

var summaryFile = regexp.MustCompile(`^mmds-rank(\d+)\.csv$`)

// ReadDir reads the summaries of every rank dumped in dir (or only of ranks
// in sel, if non-nil).
func ReadDir(dir string, sel *Set) ([]Summary, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []Summary
	for _, e := range ents {
		m := summaryFile.FindStringSubmatch(e.Name())
		if m == nil {
			continue
		}
		rank, _ := strconv.Atoi(m[1])
		if sel != nil && !sel.Has(rank) {
			continue
		}
		f, err := os.Open(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		s, err := ReadSummary(f, rank)
		f.Close()
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("mds: no MMDS summaries (mmds-rank*.csv) in %s; was the job run with BCS_MDS=main?", dir)
	}
	return out, nil
}
