// Command mdsbarrier prints the timing figures of the paper's §3.3 barrier
// experiment from a job's MDS directory: the median GETTS against the slice
// length, and how regular the barrier period is (the gaps, in slices,
// between the slices where node 0 scheduled a barrier). These depend on the
// host's wake-up latency, so they are measured here rather than asserted in
// tests; bench/mds-barrier.sh runs the job and this command.
//
//	mdsbarrier DIR
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"

	"github.com/bcsmpi/bcsmpi/emds"
)

func series(path string) (*emds.Series, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return emds.ReadCSV(f)
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: mdsbarrier DIR")
		os.Exit(2)
	}
	dir := os.Args[1]
	if err := run(dir); err != nil {
		fmt.Fprintln(os.Stderr, "mdsbarrier:", err)
		os.Exit(1)
	}
}

func run(dir string) error {
	var man struct {
		Slice int64 `json:"timeslice_ns"`
	}
	raw, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if err != nil {
		return err
	}
	if err := json.Unmarshal(raw, &man); err != nil || man.Slice <= 0 {
		return fmt.Errorf("manifest.json: no timeslice_ns (%v)", err)
	}
	g, err := series(filepath.Join(dir, "emds-global.csv"))
	if err != nil {
		return err
	}
	getts, err := g.Col("GETTS")
	if err != nil || len(getts) == 0 {
		return fmt.Errorf("no GETTS values (%v)", err)
	}
	sorted := slices.Clone(getts)
	slices.Sort(sorted)
	med := sorted[len(sorted)/2]
	fmt.Printf("GETTS over %d slices: median %d ns = %.2f%% of the %d ns slice; p99 %d ns\n",
		len(sorted), med, 100*float64(med)/float64(man.Slice), man.Slice, sorted[len(sorted)*99/100])
	n, err := series(filepath.Join(dir, "emds-node0.csv"))
	if err != nil {
		return err
	}
	ncoll, err := n.Col("NCOLLMSM")
	if err != nil {
		return err
	}
	var at []uint64
	for i, v := range ncoll {
		if v != 0 {
			at = append(at, n.Slices[i])
		}
	}
	gaps := map[uint64]int{}
	for i := 1; i < len(at); i++ {
		gaps[at[i]-at[i-1]]++
	}
	keys := make([]uint64, 0, len(gaps))
	for k := range gaps {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return gaps[keys[i]] > gaps[keys[j]] })
	fmt.Printf("barriers scheduled in the window: %d; period in slices (count):", len(at))
	for _, k := range keys {
		fmt.Printf(" %d (%d)", k, gaps[k])
	}
	fmt.Println()
	return nil
}
