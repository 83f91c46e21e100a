package kernel

import (
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/bcsmpi/bcsmpi/emds"
)

// Summary is one entity's whole run, read back from a job's dumps.
type Summary struct {
	Entity   string
	Slices   int
	SpanNS   int64 // time the rows cover (sum of TEND differences; the first row counts one slice)
	OnCPU    int64 // ns
	Runnable int64 // ns (RUNQ)
	Preempt  int64 // ns
	Wakeups  int64
	P50, P99 int64 // wake-up latency in ns (upper bound of the bucket), -1 without wake-ups
	Top      []Interferer
}

// Interferer is a task that ran while the entity waited.
type Interferer struct {
	PID    int
	Comm   string
	NS     int64
	Entity string // the entity registered with this id (the master's thread, a rank's main thread), or ""
}

// ReadSeries reads emds-kernel-<entity>.csv of dir.
func ReadSeries(dir, entity string) (*emds.Series, error) {
	path := filepath.Join(dir, "emds-kernel-"+entity+".csv")
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%w (was the job run with BCS_MDS=…,kernel, and did the monitor load? see manifest.json's \"kernel\")", err)
	}
	defer f.Close()
	s, err := emds.ReadCSV(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	for _, m := range Metrics {
		if _, err := s.Col(m); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
	}
	return s, nil
}

// IsHostRuntime says whether e names one host's runtime (runtime-node<k>)
// in a job across hosts.
func IsHostRuntime(e string) bool {
	k, ok := strings.CutPrefix(e, "runtime-node")
	n, err := strconv.Atoi(k)
	return ok && err == nil && n >= 0 && strconv.Itoa(n) == k
}

// Entities lists the entities with a dump in dir: rank0.., master, runtime
// (one machine) or runtime-node0.. (each host of a job across hosts).
func Entities(dir string) ([]string, error) {
	files, err := filepath.Glob(filepath.Join(dir, "emds-kernel-*.csv"))
	if err != nil {
		return nil, err
	}
	var ranks []int
	var others []string
	for _, f := range files {
		e := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(f), "emds-kernel-"), ".csv")
		if r, ok := strings.CutPrefix(e, "rank"); ok {
			if n, err := strconv.Atoi(r); err == nil {
				ranks = append(ranks, n)
			}
		} else if e == "master" || e == "runtime" || IsHostRuntime(e) {
			others = append(others, e)
		}
	}
	if len(ranks)+len(others) == 0 {
		return nil, fmt.Errorf("no kernel monitor data (emds-kernel-*.csv) in %s", dir)
	}
	sort.Ints(ranks)
	sort.Strings(others)
	out := make([]string, 0, len(ranks)+len(others))
	for _, r := range ranks {
		out = append(out, "rank"+strconv.Itoa(r))
	}
	return append(out, others...), nil
}

// Durations are the lengths in ns of the rows of s (TEND differences; the
// first row, whose start is not recorded, gets slice ns).
func Durations(s *emds.Series, slice int64) []int64 {
	end, _ := s.Col("TEND")
	d := make([]int64, len(end))
	for i := range end {
		if i == 0 {
			d[i] = slice
		} else {
			d[i] = max(end[i]-end[i-1], 0)
		}
	}
	return d
}

// Summarize reads a job's kernel monitor dumps; slice is the slice length
// in ns (the manifest's timeslice_ns). top bounds the interferers listed.
//
// It summarizes what is there: where a host's (or, on one machine, the
// job's) ids, wake-up histogram, interferers or runtime file is missing —
// a job across hosts whose bcsd's data did not all come back — only what
// that file holds is left out (its entities' wake-up latencies show as
// "-", its interferers are not listed or not named, its runtime has no
// row), and missing says so, one line per file, naming the node (and its
// host, from the manifest's hosts) and the file. A file that is there but
// malformed is an error, as is a directory with no kernel data at all.
func Summarize(dir string, slice int64, top int) (sums []Summary, missing []string, err error) {
	ents, err := Entities(dir)
	if err != nil {
		return nil, nil, err
	}
	hist, intf, missing, err := readShared(dir, ents)
	if err != nil {
		return nil, nil, err
	}
	var out []Summary
	for _, e := range ents {
		s, err := ReadSeries(dir, e)
		if err != nil {
			return nil, nil, err
		}
		sum := Summary{Entity: e, Slices: len(s.Slices), P50: -1, P99: -1}
		for _, d := range Durations(s, slice) {
			sum.SpanNS += d
		}
		add := func(metric string) int64 {
			c, _ := s.Col(metric)
			var n int64
			for _, v := range c {
				n += v
			}
			return n
		}
		sum.OnCPU, sum.Runnable, sum.Preempt, sum.Wakeups = add("ONCPU"), add("RUNQ"), add("PREEMPT"), add("NWAKE")
		sum.P50, sum.P99 = quantile(hist[e], 0.50), quantile(hist[e], 0.99)
		in := intf[e]
		sum.Top = in[:min(top, len(in))]
		out = append(out, sum)
	}
	return out, missing, nil
}

// sharedFiles are the files a monitor writes of its own besides the
// entities' rows (…<tag>.csv: tag "" on one machine, "-node<k>" per host
// across hosts), and what a summary lacks without each.
var sharedFiles = []struct{ name, without string }{
	{"ids", "its interferers are not named by entity"},
	{"wakehist", "the wake-up latencies (p50, p99) of its entities are not shown"},
	{"interferers", "its entities' interfering tasks are not listed"},
}

// hostTags lists the monitors whose files are in dir: "" (one machine) if
// any of its own files or its runtime's row is there, and "-node<k>" for
// every host k with any file carrying that tag (ents: the entities with
// rows), in host order.
func hostTags(dir string, ents []string) ([]string, error) {
	var tags []string
	one := false
	nodes := map[int]bool{}
	for _, e := range ents {
		if e == "runtime" {
			one = true
		} else if IsHostRuntime(e) {
			k, _ := strconv.Atoi(strings.TrimPrefix(e, "runtime-node"))
			nodes[k] = true
		}
	}
	for _, f := range sharedFiles {
		if _, err := os.Stat(filepath.Join(dir, "emds-kernel-"+f.name+".csv")); err == nil {
			one = true
		}
		files, err := filepath.Glob(filepath.Join(dir, "emds-kernel-"+f.name+"-node*.csv"))
		if err != nil {
			return nil, err
		}
		for _, p := range files {
			t := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(p), "emds-kernel-"+f.name), ".csv")
			if IsHostRuntime("runtime" + t) {
				k, _ := strconv.Atoi(strings.TrimPrefix(t, "-node"))
				nodes[k] = true
			}
		}
	}
	if one || len(nodes) == 0 {
		tags = append(tags, "")
	}
	ks := make([]int, 0, len(nodes))
	for k := range nodes {
		ks = append(ks, k)
	}
	sort.Ints(ks)
	for _, k := range ks {
		tags = append(tags, "-node"+strconv.Itoa(k))
	}
	return tags, nil
}

// hostNames reads the manifest's hosts (node k runs on hosts[k]), nil if
// it has none or cannot be read: they only help name what is missing.
func hostNames(dir string) []string {
	b, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if err != nil {
		return nil
	}
	var m struct {
		Hosts []string `json:"hosts"`
	}
	if json.Unmarshal(b, &m) != nil {
		return nil
	}
	return m.Hosts
}

// readShared reads the wake-up histograms and the interferers (each named
// by its registered entity, if any) of dir: one set of files on one machine
// (emds-kernel-wakehist.csv, -interferers.csv, -ids.csv), one per host
// across hosts (…-node<k>.csv: its ids name its interferers; process ids
// of different hosts are not comparable). A host without the monitor has
// no files at all and is not looked for; a host with some of them but not
// all has the missing ones named in missing.
func readShared(dir string, ents []string) (map[string][]bucket, map[string][]Interferer, []string, error) {
	tags, err := hostTags(dir, ents)
	if err != nil {
		return nil, nil, nil, err
	}
	hosts := hostNames(dir)
	var missing []string
	absent := func(t, file, without string) {
		who := "the job"
		if k, ok := strings.CutPrefix(t, "-node"); ok {
			n, _ := strconv.Atoi(k)
			who = "node " + k
			if n < len(hosts) && hosts[n] != "" {
				who += " (host " + hosts[n] + ")"
			}
		}
		missing = append(missing, fmt.Sprintf("%s: %s missing: %s", who, file, without))
	}
	hist, intf := map[string][]bucket{}, map[string][]Interferer{}
	for _, t := range tags {
		if t != "" {
			if e := "runtime" + t; !slices.Contains(ents, e) {
				absent(t, "emds-kernel-"+e+".csv", "its runtime has no row")
			}
		}
		var h map[string][]bucket
		var in map[string][]Interferer
		var ids map[int]string
		for _, f := range sharedFiles {
			name := "emds-kernel-" + f.name + t + ".csv"
			path := filepath.Join(dir, name)
			var err error
			switch f.name {
			case "ids":
				ids, err = readIDs(path)
			case "wakehist":
				h, err = readHist(path)
			case "interferers":
				in, err = readInterferers(path)
			}
			if errors.Is(err, fs.ErrNotExist) {
				absent(t, name, f.without)
			} else if err != nil {
				return nil, nil, nil, err
			}
		}
		for e, bs := range h {
			hist[e] = append(hist[e], bs...)
		}
		for e, l := range in {
			for i := range l {
				l[i].Entity = ids[l[i].PID]
			}
			intf[e] = append(intf[e], l...)
		}
	}
	for _, bs := range hist {
		sort.Slice(bs, func(i, j int) bool { return bs[i].hi < bs[j].hi })
	}
	for _, in := range intf {
		sort.SliceStable(in, func(i, j int) bool { return in[i].NS > in[j].NS })
	}
	return hist, intf, missing, nil
}

type bucket struct{ hi, n int64 }

// quantile is the upper bound of the bucket holding the q-quantile, -1 if empty.
func quantile(bs []bucket, q float64) int64 {
	var n int64
	for _, b := range bs {
		n += b.n
	}
	if n == 0 {
		return -1
	}
	want := int64(q*float64(n) + 0.5)
	var c int64
	for _, b := range bs {
		c += b.n
		if c >= max(want, 1) {
			return b.hi
		}
	}
	return bs[len(bs)-1].hi
}

func readRows(path, header string) ([][]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := csv.NewReader(f)
	recs, err := r.ReadAll()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(recs) == 0 || strings.Join(recs[0], ",") != header {
		return nil, fmt.Errorf("%s: header is not %q", path, header)
	}
	if len(recs) > emds.MaxRows {
		return nil, fmt.Errorf("%s: more than %d rows", path, emds.MaxRows)
	}
	return recs[1:], nil
}

func readHist(path string) (map[string][]bucket, error) {
	rows, err := readRows(path, "entity,lo_ns,hi_ns,count")
	if err != nil {
		return nil, err
	}
	out := map[string][]bucket{}
	for i, r := range rows {
		hi, e1 := strconv.ParseInt(r[2], 10, 64)
		n, e2 := strconv.ParseInt(r[3], 10, 64)
		if err := errors.Join(e1, e2); err != nil || n < 0 {
			return nil, fmt.Errorf("%s line %d: %q: hi_ns and count must be integers, count ≥ 0", path, i+2, strings.Join(r, ","))
		}
		out[r[0]] = append(out[r[0]], bucket{hi, n})
	}
	for _, bs := range out {
		sort.Slice(bs, func(i, j int) bool { return bs[i].hi < bs[j].hi })
	}
	return out, nil
}

func readIDs(path string) (map[int]string, error) {
	rows, err := readRows(path, "id,entity,kind")
	if err != nil {
		return nil, err
	}
	out := map[int]string{}
	for i, r := range rows {
		id, err := strconv.Atoi(r[0])
		if err != nil {
			return nil, fmt.Errorf("%s line %d: id %q is not an integer", path, i+2, r[0])
		}
		out[id] = r[1]
	}
	return out, nil
}

func readInterferers(path string) (map[string][]Interferer, error) {
	rows, err := readRows(path, "entity,pid,comm,ns")
	if err != nil {
		return nil, err
	}
	out := map[string][]Interferer{}
	for i, r := range rows {
		pid, e1 := strconv.Atoi(r[1])
		ns, e2 := strconv.ParseInt(r[3], 10, 64)
		if err := errors.Join(e1, e2); err != nil {
			return nil, fmt.Errorf("%s line %d: %q: pid and ns must be integers", path, i+2, strings.Join(r, ","))
		}
		out[r[0]] = append(out[r[0]], Interferer{PID: pid, Comm: r[2], NS: ns})
	}
	for _, in := range out {
		sort.SliceStable(in, func(i, j int) bool { return in[i].NS > in[j].NS })
	}
	return out, nil
}

// WriteSummaries prints the table bcsreport --kernel shows.
func WriteSummaries(w io.Writer, sums []Summary) error {
	fmt.Fprintf(w, "%-8s %7s %9s %7s %9s %9s %8s %10s %10s  %s\n", "entity", "slices", "span(ms)", "on-CPU", "runnable", "preempted", "wakeups", "wake p50", "wake p99", "top interfering tasks (ms while it waited)")
	for _, s := range sums {
		share := func(v int64) string {
			if s.SpanNS <= 0 {
				return "-"
			}
			return fmt.Sprintf("%.1f%%", 100*float64(v)/float64(s.SpanNS))
		}
		lat := func(v int64) string {
			if v < 0 {
				return "-"
			}
			return fmt.Sprintf("%.1fµs", float64(v)/1e3)
		}
		var top []string
		for _, t := range s.Top {
			who := fmt.Sprintf("%s:%d", t.Comm, t.PID)
			if t.Entity != "" {
				who += "(" + t.Entity + ")"
			}
			top = append(top, fmt.Sprintf("%s %.2f", who, float64(t.NS)/1e6))
		}
		fmt.Fprintf(w, "%-8s %7d %9.1f %7s %9s %9s %8d %10s %10s  %s\n", s.Entity, s.Slices, float64(s.SpanNS)/1e6,
			share(s.OnCPU), share(s.Runnable), share(s.Preempt), s.Wakeups, lat(s.P50), lat(s.P99), strings.Join(top, ", "))
	}
	_, err := fmt.Fprintln(w, "shares are of the time the rows cover; a rank's threads together can pass 100%; wake p50/p99 are bucket upper bounds (2 buckets per power of two)")
	return err
}
