package main

import (
	"encoding/csv"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/bcsmpi/bcsmpi/emds"
	"github.com/bcsmpi/bcsmpi/emds/kernel"
)

// job is what the barrier analysis reads of a job's MDS directory.
type job struct {
	slice   int64 // ns
	compute int64 // ns of computation per iteration
	spin    int64 // ns a blocked call spins before it sleeps
	early   bool  // restart policy early: ranks released at the end of the barrier's own slice's transmission
	node    *emds.Series
	ranks   []*emds.Series
	names   map[int]string
	wakes   []int64 // the ranks' wake-ups by wakeBins (nil: no histogram)
}

// wakeBins are the bins of the ranks' wake-up latency, in slices.
var wakeBins = []string{"<0.25 slice", "0.25-0.75", "0.75-1.25 (about one slice)", ">1.25"}

func sum(v []int64) int64 {
	var s int64
	for _, x := range v {
		s += x
	}
	return s
}

// binWakes sorts the histogram's buckets (emds-kernel-wakehist.csv: entity,
// lo_ns, hi_ns, count) of the ranks into wakeBins by their middle.
func binWakes(recs [][]string, slice int64) []int64 {
	out := make([]int64, len(wakeBins))
	for i, r := range recs {
		if i == 0 || len(r) != 4 || !strings.HasPrefix(r[0], "rank") {
			continue
		}
		lo, e1 := strconv.ParseInt(r[1], 10, 64)
		hi, e2 := strconv.ParseInt(r[2], 10, 64)
		n, e3 := strconv.ParseInt(r[3], 10, 64)
		if e1 != nil || e2 != nil || e3 != nil {
			continue
		}
		mid := float64(lo+hi) / 2 / float64(slice)
		switch {
		case mid < 0.25:
			out[0] += n
		case mid < 0.75:
			out[1] += n
		case mid < 1.25:
			out[2] += n
		default:
			out[3] += n
		}
	}
	if sum(out) == 0 {
		return nil
	}
	return out
}

// activeMin is the least time (on CPU or runnable) in a row for a rank to
// count as active in it: below it, the Go runtime's housekeeping of a
// sleeping rank.
const activeMin = 5_000

// cause is the split of a cycle's slices over the ideal (see cycle).
type cause struct{ strobe, wake, runq, oncpu, none int }

func (c *cause) add(d cause) {
	c.strobe += d.strobe
	c.wake += d.wake
	c.runq += d.runq
	c.oncpu += d.oncpu
	c.none += d.none
}

// cycle is one barrier period as the kernel saw its last rank.
type cycle struct {
	from, to   uint64 // the slices of the two barriers
	period     int
	last       int   // the rank that entered last
	wake       int64 // its wake-up latency after the completion that released it (ns; -1: none measured: it had not slept)
	runqAfter  int64 // its runnable time after the compute's nominal end
	oncpuAfter int64 // its time on CPU after that end, less the spin
	preempt    int64 // time other tasks ran while it waited, over the cycle
	nivcsw     int64
	nmigr      int64
	top        map[int]int64 // interfering task → ns, over the cycle
	wakeTop    map[int]int64 // the same, in the rows up to its wake-up's (what held its CPU while it waited to run)
	cause      cause
}

// index maps slice numbers to row indices.
func index(s *emds.Series) map[uint64]int {
	m := make(map[uint64]int, len(s.Slices))
	for i, k := range s.Slices {
		m[k] = i
	}
	return m
}

// cycles splits the window into barrier cycles (between two slices where
// node 0 scheduled a barrier) and explains each by its last rank.
//
// Timing model (nicthread and mpiapi doc.go): a rank that posts in slice E
// has its descriptor exchanged and the barrier scheduled in slice E+1 =
// B, and is woken at the DEM of slice B+1, just after that slice's strobe
// S(B+1) (with the restart policy early, at the end of slice B's
// transmission, TEND(B)). It computes for c (a spin on the wall clock), then posts; for the
// next barrier to be in slice B+p it must post before S(B+p). The strobe of
// slice k is S(k) = TEND(k) − LTTS(k): the kernel row's end is the end of
// node 0's transmission microphase, LTTS the time from the strobe to it.
// Row k covers [TEND(k−1), TEND(k)].
//
// For the last rank the post time is estimated cumulatively: from the
// strobe, c (the ideal: the period given the strobes' actual times), plus
// its wake-up latency, plus its runnable time after the nominal end t0 +
// wake + c, plus its time on CPU after that end (less the spin after the
// post). Each step's period in slices is the largest m with S(m) at or
// before the estimate, plus 1, minus B; what each step adds is its share of
// the extra slices, and what the actual period exceeds the last estimate
// by is what the kernel did not see (negative: the estimate overshot).
func (j *job) cycles() (cs []cycle, skipped int, err error) {
	ncoll, err := j.node.Col("NCOLLMSM")
	if err != nil {
		return nil, 0, err
	}
	ltts, err := j.node.Col("LTTS")
	if err != nil {
		return nil, 0, err
	}
	var at []uint64
	for i, v := range ncoll {
		if v != 0 {
			at = append(at, j.node.Slices[i])
		}
	}
	if len(at) < 2 {
		return nil, 0, fmt.Errorf("only %d barriers in the EMDS window: run more iterations or widen it", len(at))
	}
	nidx := index(j.node)
	ridx := make([]map[uint64]int, len(j.ranks))
	cols := make([]map[string][]int64, len(j.ranks))
	for r, s := range j.ranks {
		ridx[r] = index(s)
		cols[r] = map[string][]int64{}
		for _, m := range []string{"ONCPU", "RUNQ", "PREEMPT", "WAKELAT", "NWAKE", "NIVCSW", "NMIGR", "TEND"} {
			if cols[r][m], err = s.Col(m); err != nil {
				return nil, 0, fmt.Errorf("rank %d: %w", r, err)
			}
		}
		for t := 1; t <= kernel.Top; t++ {
			for _, m := range []string{"TOP" + strconv.Itoa(t) + "PID", "TOP" + strconv.Itoa(t) + "NS"} {
				if cols[r][m], err = s.Col(m); err != nil {
					return nil, 0, fmt.Errorf("rank %d: %w", r, err)
				}
			}
		}
	}
	tend := func(k uint64) (int64, bool) {
		i, ok := ridx[0][k]
		if !ok {
			return 0, false
		}
		return cols[0]["TEND"][i], true
	}
	strobe := func(k uint64) (int64, bool) {
		t, ok := tend(k)
		if i, ok2 := nidx[k]; ok && ok2 {
			t -= ltts[i]
		}
		return t, ok
	}
	last := j.node.Slices[len(j.node.Slices)-1]
	// pred is the period if the last rank posted at t.
	pred := func(b uint64, t int64) int {
		m := b + 1
		for k := b + 2; k <= last+1; k++ {
			s, ok := strobe(k)
			if !ok {
				continue // a skipped slice: its number still counts
			}
			if s > t {
				break
			}
			m = k
		}
		return int(m + 1 - b)
	}
	ideal := j.ideal()
	for i := 0; i+1 < len(at); i++ {
		b, b2 := at[i], at[i+1]
		ok := true
		for k := b; k <= b2 && ok; k++ {
			for r := range j.ranks {
				if _, ok2 := ridx[r][k]; !ok2 && (k == b || k == b+1 || k == b2) {
					ok = false
				}
			}
		}
		if !ok {
			skipped++
			continue
		}
		c := cycle{from: b, to: b2, period: int(b2 - b), last: -1, wake: -1, top: map[int]int64{}, wakeTop: map[int]int64{}}
		// The last rank: latest active row, then most active in it.
		var lastRow uint64
		var lastAct int64
		for r := range j.ranks {
			for k := b2; k > b; k-- {
				x, ok := ridx[r][k]
				if !ok {
					continue
				}
				act := cols[r]["ONCPU"][x] + cols[r]["RUNQ"][x]
				if act < activeMin {
					continue
				}
				if k > lastRow || (k == lastRow && act > lastAct) {
					c.last, lastRow, lastAct = r, k, act
				}
				break
			}
		}
		if c.last < 0 {
			skipped++
			continue
		}
		L := cols[c.last]
		var wl, nw int64
		for k := b + 1; k <= b2; k++ { // its one wake by bcsrun in the cycle: the release
			if x, ok := ridx[c.last][k]; ok {
				wl += L["WAKELAT"][x]
				nw += L["NWAKE"][x]
			}
		}
		w := int64(0)
		if nw > 0 {
			w = wl / nw
			c.wake = w
		}
		t0, _ := strobe(b + 1)
		if j.early {
			t0, _ = tend(b)
		}
		end := t0 + w + j.compute
		waiting := nw > 0
		for k := b + 1; k <= b2; k++ {
			x, ok := ridx[c.last][k]
			if !ok {
				continue
			}
			c.preempt += L["PREEMPT"][x]
			c.nivcsw += L["NIVCSW"][x]
			c.nmigr += L["NMIGR"][x]
			for t := 1; t <= kernel.Top; t++ {
				if pid := L["TOP"+strconv.Itoa(t)+"PID"][x]; pid != 0 {
					ns := L["TOP"+strconv.Itoa(t)+"NS"][x]
					c.top[int(pid)] += ns
					if waiting {
						c.wakeTop[int(pid)] += ns
					}
				}
			}
			if L["NWAKE"][x] > 0 {
				waiting = false
			}
			hi, _ := tend(k)
			lo, ok := tend(k - 1)
			if !ok || hi <= lo || hi <= end {
				continue
			}
			n := hi - lo
			part := func(v int64) int64 {
				v = min(v, n) // one thread's worth: the rank's other threads do not delay its post
				if lo >= end {
					return v
				}
				return v * (hi - end) / n
			}
			c.runqAfter += part(L["RUNQ"][x])
			c.oncpuAfter += part(L["ONCPU"][x])
		}
		c.oncpuAfter = max(0, c.oncpuAfter-j.spin)
		p0 := pred(b, t0+j.compute)
		pw := pred(b, t0+j.compute+w)
		pr := pred(b, t0+j.compute+w+c.runqAfter)
		po := pred(b, t0+j.compute+w+c.runqAfter+c.oncpuAfter)
		c.cause = cause{strobe: p0 - ideal, wake: pw - p0, runq: pr - pw, oncpu: po - pr, none: c.period - po}
		cs = append(cs, c)
	}
	return cs, skipped, nil
}

// ideal is the period in slices of a rank woken at the strobe: it posts in
// the slice where c ends, floor(c/slice) slices after the one it woke in,
// and the barrier is scheduled in the next. With the restart policy early
// it wakes in the barrier's own slice, one sooner (the transmission's time
// taken as nothing).
func (j *job) ideal() int {
	if j.early {
		return 1 + int(j.compute/j.slice)
	}
	return 2 + int(j.compute/j.slice)
}

func pct(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return 100 * float64(a) / float64(b)
}

func quant(v []int64, q float64) int64 {
	if len(v) == 0 {
		return 0
	}
	v = slices.Clone(v)
	slices.Sort(v)
	return v[min(len(v)-1, int(q*float64(len(v))))]
}

// report prints the barrier analysis.
func (j *job) report(w io.Writer) error {
	cs, skipped, err := j.cycles()
	if err != nil {
		return err
	}
	ideal := j.ideal()
	woken := "at the strobe after the barrier's slice"
	if j.early {
		woken = "in the barrier's slice (restart early)"
	}
	fmt.Fprintf(w, "§3.3 barrier job: compute %.3f ms per iteration, slice %d µs: %.2f slices; a rank woken %s posts %d slices later and the barrier is scheduled in the next: ideal period %d slices, margin %d µs for the wake-up, the posting and a late strobe\n",
		float64(j.compute)/1e6, j.slice/1000, float64(j.compute)/float64(j.slice), woken, j.compute/j.slice, ideal, ((j.compute/j.slice+1)*j.slice-j.compute)/1000)
	if len(cs) == 0 {
		return fmt.Errorf("no barrier cycle with kernel rows (%d skipped)", skipped)
	}
	fmt.Fprintf(w, "%d cycles (%d skipped: rows missing)\n", len(cs), skipped)
	byP := map[int][]cycle{}
	lastBy := map[int]int{}
	var tot cause
	extra := 0
	for _, c := range cs {
		byP[c.period] = append(byP[c.period], c)
		lastBy[c.last]++
		tot.add(c.cause)
		extra += c.period - ideal
	}
	var ps []int
	for p := range byP {
		ps = append(ps, p)
	}
	sort.Ints(ps)
	fmt.Fprint(w, "period in slices (cycles):")
	for _, p := range ps {
		fmt.Fprintf(w, " %d: %d (%.0f%%)", p, len(byP[p]), pct(len(byP[p]), len(cs)))
	}
	fmt.Fprint(w, "\nrank that entered last (cycles):")
	for r := range j.ranks {
		fmt.Fprintf(w, " rank%d %d", r, lastBy[r])
	}
	fmt.Fprintf(w, "\nslices over the ideal %d: %d in all, %.2f per cycle; explained by (slices, share):\n", ideal, extra, float64(extra)/float64(len(cs)))
	row := func(name string, n int) { fmt.Fprintf(w, "  %-62s %6d  %5.1f%%\n", name, n, pct(n, extra)) }
	row("strobes (slices late, long or skipped; not the kernel's)", tot.strobe)
	row("wake-up latency of the last rank after its release", tot.wake)
	row("last rank runnable, not running, after its compute's end", tot.runq)
	row("last rank on CPU past its compute's end (posting, runtime)", tot.oncpu)
	row("nothing the kernel saw (agent's publish, estimate's error)", tot.none)
	exact, one := 0, 0
	for _, c := range cs {
		switch c.cause.none {
		case 0:
			exact++
		case -1, 1:
			one++
		}
	}
	fmt.Fprintf(w, "the estimate gives the period exactly in %d cycles (%.0f%%), within one slice in %d more (%.0f%%)\n", exact, pct(exact, len(cs)), one, pct(one, len(cs)))
	// Late wake-ups: what ran while the released rank waited for a CPU.
	late, lateTop := 0, map[int]int64{}
	for _, c := range cs {
		if c.wake >= j.slice/2 {
			late++
			for pid, ns := range c.wakeTop {
				lateTop[pid] += ns
			}
		}
	}
	fmt.Fprintf(w, "last rank woken %d µs or more after its release: %d cycles (%.0f%%); while it waited: %s\n", j.slice/2000, late, pct(late, len(cs)),
		topString(lateTop, j.names, int64(max(late, 1)), 4))
	if j.wakes != nil {
		fmt.Fprint(w, "ranks' wake-up latencies over the run (bcsrun's wake-ups of a blocked rank):")
		for i, b := range wakeBins {
			fmt.Fprintf(w, " %s %.1f%%", b, pct(int(j.wakes[i]), int(sum(j.wakes))))
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "per period, the last rank (µs; wake-up p50/p90 of the cycles that measured one):\n")
	fmt.Fprintf(w, "%6s %6s %10s %10s %10s %10s %10s %7s %7s  %s\n", "period", "cycles", "wake p50", "wake p90", "runq>end", "oncpu>end", "preempted", "nivcsw", "nmigr", "top interfering tasks (µs per cycle)")
	for _, p := range ps {
		var wakes, rq, on, pre []int64
		var iv, mg int64
		top := map[int]int64{}
		for _, c := range byP[p] {
			if c.wake >= 0 {
				wakes = append(wakes, c.wake)
			}
			rq = append(rq, c.runqAfter)
			on = append(on, c.oncpuAfter)
			pre = append(pre, c.preempt)
			iv += c.nivcsw
			mg += c.nmigr
			for pid, ns := range c.top {
				top[pid] += ns
			}
		}
		n := int64(len(byP[p]))
		fmt.Fprintf(w, "%6d %6d %10.1f %10.1f %10.1f %10.1f %10.1f %7.2f %7.2f  %s\n", p, n,
			float64(quant(wakes, 0.5))/1e3, float64(quant(wakes, 0.9))/1e3, mean(rq)/1e3, mean(on)/1e3, mean(pre)/1e3,
			float64(iv)/float64(n), float64(mg)/float64(n), topString(top, j.names, n, 3))
	}
	return nil
}

func mean(v []int64) float64 {
	if len(v) == 0 {
		return 0
	}
	var s int64
	for _, x := range v {
		s += x
	}
	return float64(s) / float64(len(v))
}

// topString names the n largest of top, in µs per unit of per.
func topString(top map[int]int64, names map[int]string, per int64, n int) string {
	type pt struct {
		pid int
		ns  int64
	}
	var ts []pt
	for pid, ns := range top {
		ts = append(ts, pt{pid, ns})
	}
	sort.Slice(ts, func(a, b int) bool { return ts[a].ns > ts[b].ns || ts[a].ns == ts[b].ns && ts[a].pid < ts[b].pid })
	s := ""
	for i, t := range ts {
		if i == n {
			break
		}
		if i > 0 {
			s += ", "
		}
		name := names[t.pid]
		if name == "" {
			name = "?"
		}
		s += fmt.Sprintf("%s:%d %.1f", name, t.pid, float64(t.ns)/float64(per)/1e3)
	}
	return s
}

// loadJob reads the barrier job's MDS directory.
func loadJob(dir string, compute, spin int64) (*job, error) {
	var man manifest
	if err := man.read(dir); err != nil {
		return nil, err
	}
	j := &job{slice: man.Slice, compute: compute, spin: spin, names: taskNames(dir), early: man.Config.Restart == "early"}
	if j.spin < 0 {
		j.spin = man.Config.Spin
	}
	if j.compute <= 0 {
		j.compute = man.computeArg()
	}
	var err error
	if j.node, err = readSeries(filepath.Join(dir, "emds-node0.csv")); err != nil {
		return nil, err
	}
	if f, err := os.Open(filepath.Join(dir, "emds-kernel-wakehist.csv")); err == nil {
		recs, _ := csv.NewReader(f).ReadAll()
		f.Close()
		j.wakes = binWakes(recs, j.slice)
	}
	for r := 0; r < man.Ranks; r++ {
		s, err := kernel.ReadSeries(dir, fmt.Sprintf("rank%d", r))
		if err != nil {
			return nil, err
		}
		j.ranks = append(j.ranks, s)
	}
	return j, nil
}
