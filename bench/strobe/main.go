// Command strobe measures strobe precision: the actual start of each slice
// minus its scheduled time (t0 + k·slice), with the embedded master driving
// one agent, at the given slice lengths, idle and with -busy CPU-bound
// processes competing for the cores.
//
//	go run ./bench/strobe [-slices 4000] [-busy 4]
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"time"

	"github.com/bcsmpi/bcsmpi/internal/core"
	"github.com/bcsmpi/bcsmpi/internal/proto"
	"github.com/bcsmpi/bcsmpi/internal/shm"
	"github.com/bcsmpi/bcsmpi/nicthread"
	"github.com/bcsmpi/bcsmpi/strobe"
)

func main() {
	n := flag.Int("slices", 4000, "slices per measurement")
	busy := flag.Int("busy", 4, "CPU-bound processes for the loaded runs")
	spin := flag.Duration("spin", 100*time.Microsecond, "upper bound of the master busy-wait before each strobe")
	child := flag.Bool("child-busy", false, "internal: be a busy process")
	flag.Parse()
	if *child {
		x := 0
		for {
			x++
		}
	}
	fmt.Printf("%-8s %-6s %10s %10s %10s %10s %8s %8s\n", "slice", "load", "p50", "p99", "p99.9", "max", "skipped", "fifo")
	for _, load := range []int{0, *busy} {
		var kids []*exec.Cmd
		for i := 0; i < load; i++ {
			c := exec.Command(os.Args[0], "-child-busy")
			if err := c.Start(); err != nil {
				panic(err)
			}
			kids = append(kids, c)
		}
		for _, sl := range []time.Duration{500 * time.Microsecond, 250 * time.Microsecond} {
			measure(sl, *n, *spin, load)
		}
		for _, c := range kids {
			c.Process.Kill()
			c.Wait()
		}
	}
}

func measure(slice time.Duration, n int, spin time.Duration, load int) {
	g := shm.Geometry{Ranks: 1, RingSlots: 8, ReqMax: 16, InlineMax: 0}
	region, err := shm.Init(make([]byte, g.Size()), g)
	if err != nil {
		panic(err)
	}
	a := nicthread.NewAgent(nicthread.AgentConfig{NodeOf: []proto.NodeID{0}, Sched: core.DefaultSchedConfig, Region: region})
	lates := make([]time.Duration, 0, n)
	var skipped uint64
	st, err := nicthread.RunMaster(nicthread.MasterConfig{Slice: slice, Nodes: 1, Spin: spin, FIFO: true, TXTimeout: time.Second, MaxSlices: uint64(n),
		OnSlice: func(r *strobe.SliceRecord) { lates = append(lates, r.Late); skipped += r.Skipped }},
		&nicthread.LocalNodes{Agents: []*nicthread.Agent{a}, TXTimeout: time.Second}, nil)
	if err != nil {
		panic(err)
	}
	slices.Sort(lates)
	q := func(p float64) time.Duration { return lates[int(p*float64(len(lates)-1))] }
	fmt.Printf("%-8v %-6d %10v %10v %10v %10v %8d %8v\n", slice, load, q(0.5), q(0.99), q(0.999), lates[len(lates)-1], skipped, st.FIFO)
}
