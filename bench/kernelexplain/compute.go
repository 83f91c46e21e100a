package main

import (
	"encoding/csv"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"

	"github.com/bcsmpi/bcsmpi/emds/kernel"
)

// phases is one bench/computephase process's line.
type phases struct {
	file                                  string
	mode                                  string
	rank                                  int
	iters                                 int64
	wall, oncpu, runq, nivcsw, nmigr, p50 int64
}

var phaseHeader = []string{"mode", "rank", "iters", "wall_ns", "oncpu_ns", "runq_ns", "nivcsw", "nmigr", "p50_ns", "p90_ns"}

func readPhases(path string) (phases, error) {
	f, err := os.Open(path)
	if err != nil {
		return phases{}, err
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		return phases{}, fmt.Errorf("%s: %w", path, err)
	}
	if len(recs) != 2 || len(recs[0]) != len(phaseHeader) || len(recs[1]) != len(phaseHeader) {
		return phases{}, fmt.Errorf("%s: want bench/computephase's header %v and one line", path, phaseHeader)
	}
	for i, h := range phaseHeader {
		if recs[0][i] != h {
			return phases{}, fmt.Errorf("%s: column %d is %q, want %q", path, i+1, recs[0][i], h)
		}
	}
	r := recs[1]
	p := phases{file: path, mode: r[0]}
	if p.mode != "bcs" && p.mode != "plain" {
		return phases{}, fmt.Errorf("%s: mode %q, want bcs or plain", path, p.mode)
	}
	v := make([]int64, len(r))
	for i := 1; i < len(r); i++ {
		if v[i], err = strconv.ParseInt(r[i], 10, 64); err != nil {
			return phases{}, fmt.Errorf("%s: %s = %q, want an integer", path, phaseHeader[i], r[i])
		}
	}
	p.rank, p.iters, p.wall, p.oncpu, p.runq, p.nivcsw, p.nmigr, p.p50 = int(v[1]), v[2], v[3], v[4], v[5], v[6], v[7], v[8]
	if p.iters < 1 {
		return phases{}, fmt.Errorf("%s: iters %d, want at least 1", path, p.iters)
	}
	return p, nil
}

// perIter is a mode's means per iteration over its processes (µs).
type perIter struct{ wall, oncpu, runq, other, nivcsw, nmigr float64 }

func means(ps []phases) perIter {
	var m perIter
	for _, p := range ps {
		n := float64(p.iters)
		m.wall += float64(p.wall) / n / 1e3
		m.oncpu += float64(p.oncpu) / n / 1e3
		m.runq += float64(p.runq) / n / 1e3
		m.nivcsw += float64(p.nivcsw) / n
		m.nmigr += float64(p.nmigr) / n
	}
	k := float64(len(ps))
	m.wall, m.oncpu, m.runq, m.nivcsw, m.nmigr = m.wall/k, m.oncpu/k, m.runq/k, m.nivcsw/k, m.nmigr/k
	m.other = m.wall - m.oncpu - m.runq
	return m
}

func compute(w io.Writer, files []string, mds string) error {
	by := map[string][]phases{}
	for _, f := range files {
		p, err := readPhases(f)
		if err != nil {
			return err
		}
		by[p.mode] = append(by[p.mode], p)
	}
	for _, m := range []string{"bcs", "plain"} {
		sort.Slice(by[m], func(a, b int) bool { return by[m][a].rank < by[m][b].rank })
	}
	fmt.Fprintln(w, "compute phases of the same calibrated work (µs per iteration; other = wall − on CPU − runnable: the counters' own reads; negative where the CPU clock and run_delay count more than the wall clock, as with a VM's stolen time)")
	fmt.Fprintf(w, "%-6s %5s %6s %9s %9s %9s %8s %9s %8s %8s\n", "mode", "rank", "iters", "wall", "p50", "on CPU", "runnable", "other", "nivcsw", "nmigr")
	for _, m := range []string{"plain", "bcs"} {
		for _, p := range by[m] {
			n := float64(p.iters)
			rank := strconv.Itoa(p.rank)
			if p.rank < 0 {
				rank = "-"
			}
			mig := fmt.Sprintf("%8.3f", float64(p.nmigr)/n)
			if p.nmigr < 0 {
				mig = fmt.Sprintf("%8s", "n/a")
			}
			fmt.Fprintf(w, "%-6s %5s %6d %9.1f %9.1f %9.1f %8.1f %9.1f %8.3f %s\n", m, rank, p.iters,
				float64(p.wall)/n/1e3, float64(p.p50)/1e3, float64(p.oncpu)/n/1e3, float64(p.runq)/n/1e3,
				float64(p.wall-p.oncpu-p.runq)/n/1e3, float64(p.nivcsw)/n, mig)
		}
	}
	if len(by["bcs"]) > 0 && len(by["plain"]) > 0 {
		b, p := means(by["bcs"]), means(by["plain"])
		d := b.wall - p.wall
		share := func(x float64) float64 {
			if d == 0 {
				return 0
			}
			return 100 * x / d
		}
		fmt.Fprintf(w, "bcsmpi against plain, means per process: wall %.1f against %.1f µs per iteration (%.3f×, %+.1f µs)\n", b.wall, p.wall, b.wall/p.wall, d)
		fmt.Fprintf(w, "  runnable, not running (preemption, wake-up placement; the scheduler saw it): %+8.1f µs  %6.1f%%\n", b.runq-p.runq, share(b.runq-p.runq))
		fmt.Fprintf(w, "  more time on CPU for the same work (caches, TLB, frequency, SMT; unseen):   %+8.1f µs  %6.1f%%\n", b.oncpu-p.oncpu, share(b.oncpu-p.oncpu))
		fmt.Fprintf(w, "  other                                                                      %+8.1f µs  %6.1f%%\n", b.other-p.other, share(b.other-p.other))
		fmt.Fprintf(w, "  involuntary switches per iteration %.3f against %.3f, migrations %.3f against %.3f\n", b.nivcsw, p.nivcsw, b.nmigr, p.nmigr)
	}
	if mds == "" {
		return nil
	}
	return computeRows(w, mds)
}

// computeRows prints, from the bcsmpi job's kernel rows in which a rank was
// computing, its shares and who interfered.
func computeRows(w io.Writer, dir string) error {
	var man manifest
	if err := man.read(dir); err != nil {
		return err
	}
	names := taskNames(dir)
	fmt.Fprintln(w, "kernel monitor, rows in which the rank was computing (on CPU or runnable ≥ 90% of the row):")
	fmt.Fprintf(w, "%5s %6s %7s %9s %9s %8s %8s  %s\n", "rank", "rows", "on CPU", "runnable", "preempted", "nivcsw", "nmigr", "top interfering tasks (µs per row)")
	for r := 0; r < man.Ranks; r++ {
		s, err := kernel.ReadSeries(dir, fmt.Sprintf("rank%d", r))
		if err != nil {
			return err
		}
		col := func(m string) []int64 { c, _ := s.Col(m); return c }
		on, rq, pre, iv, mg, tend := col("ONCPU"), col("RUNQ"), col("PREEMPT"), col("NIVCSW"), col("NMIGR"), col("TEND")
		var rows, sumLen, sOn, sRq, sPre, sIv, sMg int64
		top := map[int]int64{}
		for i := 1; i < len(s.Slices); i++ {
			n := tend[i] - tend[i-1]
			if n <= 0 || s.Slices[i] != s.Slices[i-1]+1 {
				continue
			}
			o, q := min(on[i], n), min(rq[i], n)
			if min(o+q, n) < n*9/10 {
				continue
			}
			rows++
			sumLen += n
			sOn += o
			sRq += q
			sPre += pre[i]
			sIv += iv[i]
			sMg += mg[i]
			for t := 1; t <= kernel.Top; t++ {
				if pid := col("TOP" + strconv.Itoa(t) + "PID")[i]; pid != 0 {
					top[int(pid)] += col("TOP" + strconv.Itoa(t) + "NS")[i]
				}
			}
		}
		if rows == 0 {
			fmt.Fprintf(w, "%5d %6d  (no row in which it computed)\n", r, 0)
			continue
		}
		fmt.Fprintf(w, "%5d %6d %6.1f%% %8.1f%% %8.1f%% %8.3f %8.3f  %s\n", r, rows, 100*float64(sOn)/float64(sumLen),
			100*float64(sRq)/float64(sumLen), 100*float64(sPre)/float64(sumLen), float64(sIv)/float64(rows), float64(sMg)/float64(rows),
			topString(top, names, rows, 5))
	}
	// bcsrun's own threads: how much of a CPU they took over the job.
	for _, e := range []string{"master", "runtime"} {
		s, err := kernel.ReadSeries(dir, e)
		if err != nil || len(s.Slices) < 2 {
			continue
		}
		on, _ := s.Col("ONCPU")
		tend, _ := s.Col("TEND")
		var sum int64
		for _, v := range on[1:] {
			sum += v
		}
		if span := tend[len(tend)-1] - tend[0]; span > 0 {
			fmt.Fprintf(w, "bcsrun's %s on CPU: %.1f%% of one CPU over the recorded slices\n", e, 100*float64(sum)/float64(span))
		}
	}
	return nil
}
