// Command kernelbarrier explains the barrier period of the paper's §3.3
// experiment with the kernel monitor's data (BCS_MDS=elan,kernel): it splits
// the EMDS window into barrier cycles (the slices between two slices where
// node 0 scheduled a barrier) and prints, per period length in slices, how
// many cycles had it and what the ranks went through in them: the largest
// wake-up latency of the cycle's wake-ups, the time the ranks ran, waited
// for a CPU while runnable (RUNQ, all their threads) and were kept off a CPU
// by another task (PREEMPT), and who those tasks were. bench/kernel-barrier.sh
// runs the job and this command.
//
//	kernelbarrier DIR
package main

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"

	"github.com/bcsmpi/bcsmpi/emds"
	"github.com/bcsmpi/bcsmpi/emds/kernel"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: kernelbarrier DIR")
		os.Exit(2)
	}
	if err := run(os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "kernelbarrier:", err)
		os.Exit(1)
	}
}

type cycle struct {
	period   int
	wakeMax  int64 // largest mean wake-up latency of a rank in the cycle's slices
	on, runq int64 // summed over ranks and slices
	pre      int64
	top      map[int]int64 // pid → ns while a rank waited (from the rows' TOP columns)
}

func run(dir string) error {
	var man struct {
		Slice int64 `json:"timeslice_ns"`
		Ranks int   `json:"ranks"`
	}
	raw, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if err != nil {
		return err
	}
	if err := json.Unmarshal(raw, &man); err != nil || man.Slice <= 0 || man.Ranks < 1 {
		return fmt.Errorf("manifest.json: no timeslice_ns or ranks (%v)", err)
	}
	f, err := os.Open(filepath.Join(dir, "emds-node0.csv"))
	if err != nil {
		return err
	}
	node, err := emds.ReadCSV(f)
	f.Close()
	if err != nil {
		return err
	}
	ncoll, err := node.Col("NCOLLMSM")
	if err != nil {
		return err
	}
	var at []uint64
	for i, v := range ncoll {
		if v != 0 {
			at = append(at, node.Slices[i])
		}
	}
	if len(at) < 3 {
		return fmt.Errorf("only %d barriers in the window", len(at))
	}
	ranks := make([]*emds.Series, man.Ranks)
	row := make([]map[uint64]int, man.Ranks)
	for r := range ranks {
		if ranks[r], err = kernel.ReadSeries(dir, fmt.Sprintf("rank%d", r)); err != nil {
			return err
		}
		row[r] = map[uint64]int{}
		for i, k := range ranks[r].Slices {
			row[r][k] = i
		}
	}
	col := func(r int, m string) []int64 { c, _ := ranks[r].Col(m); return c }
	var cycles []cycle
	for i := 0; i+1 < len(at); i++ {
		c := cycle{period: int(at[i+1] - at[i]), top: map[int]int64{}}
		for r := range ranks {
			on, rq, pre, wl, nw := col(r, "ONCPU"), col(r, "RUNQ"), col(r, "PREEMPT"), col(r, "WAKELAT"), col(r, "NWAKE")
			for k := at[i] + 1; k <= at[i+1]; k++ {
				j, ok := row[r][k]
				if !ok {
					continue
				}
				c.on += on[j]
				c.runq += rq[j]
				c.pre += pre[j]
				if nw[j] > 0 {
					c.wakeMax = max(c.wakeMax, wl[j]/nw[j])
				}
				for t := 1; t <= kernel.Top; t++ {
					pid := col(r, "TOP"+strconv.Itoa(t)+"PID")[j]
					if pid != 0 {
						c.top[int(pid)] += col(r, "TOP"+strconv.Itoa(t)+"NS")[j]
					}
				}
			}
		}
		cycles = append(cycles, c)
	}
	names := taskNames(dir)
	byPeriod := map[int][]cycle{}
	for _, c := range cycles {
		byPeriod[c.period] = append(byPeriod[c.period], c)
	}
	var periods []int
	for p := range byPeriod {
		periods = append(periods, p)
	}
	sort.Ints(periods)
	fmt.Printf("%d barrier cycles, slice %d µs, %d ranks; per cycle, summed over the ranks:\n", len(cycles), man.Slice/1000, man.Ranks)
	fmt.Printf("%7s %7s %14s %14s %12s %12s %12s  %s\n", "period", "cycles", "wake p50(µs)", "wake max(µs)", "on CPU(µs)", "runnable(µs)", "preempted(µs)", "top interfering tasks (µs per cycle)")
	for _, p := range periods {
		cs := byPeriod[p]
		var on, rq, pre int64
		var wakes []int64
		top := map[int]int64{}
		for _, c := range cs {
			on += c.on
			rq += c.runq
			pre += c.pre
			wakes = append(wakes, c.wakeMax)
			for pid, ns := range c.top {
				top[pid] += ns
			}
		}
		sort.Slice(wakes, func(i, j int) bool { return wakes[i] < wakes[j] })
		n := int64(len(cs))
		type pt struct {
			pid int
			ns  int64
		}
		var tops []pt
		for pid, ns := range top {
			tops = append(tops, pt{pid, ns})
		}
		sort.Slice(tops, func(i, j int) bool { return tops[i].ns > tops[j].ns })
		s := ""
		for i, t := range tops {
			if i == 3 {
				break
			}
			s += fmt.Sprintf("%s:%d %.0f  ", names[t.pid], t.pid, float64(t.ns)/float64(n)/1e3)
		}
		fmt.Printf("%7d %7d %14.1f %14.1f %12.1f %12.1f %12.1f  %s\n", p, n, float64(wakes[len(wakes)/2])/1e3, float64(wakes[len(wakes)-1])/1e3,
			float64(on)/float64(n)/1e3, float64(rq)/float64(n)/1e3, float64(pre)/float64(n)/1e3, s)
	}
	return nil
}

// taskNames maps pids to names from the interferers' file, marking the
// registered ones (the master's thread, the ranks).
func taskNames(dir string) map[int]string {
	out := map[int]string{}
	read := func(name string, f func([]string)) {
		fh, err := os.Open(filepath.Join(dir, name))
		if err != nil {
			return
		}
		defer fh.Close()
		recs, _ := csv.NewReader(fh).ReadAll()
		for i, r := range recs {
			if i > 0 && len(r) >= 3 {
				f(r)
			}
		}
	}
	read("emds-kernel-interferers.csv", func(r []string) {
		if pid, err := strconv.Atoi(r[1]); err == nil {
			out[pid] = r[2]
		}
	})
	read("emds-kernel-ids.csv", func(r []string) {
		if id, err := strconv.Atoi(r[0]); err == nil {
			out[id] += "(" + r[1] + ")"
		}
	})
	return out
}
