package sim

import (
	"testing"
	"time"

	"github.com/bcsmpi/bcsmpi/internal/core"
)

// TestDeterministicModeTiming: one program (the workload's seed fixed) with
// wildcard gathers, 64 ranks, run under different timing noise (ranks
// descheduled at random slices, seeded), on 8 to 64 nodes, at slices of
// 200 µs to 2 ms: in deterministic mode every run gives the same wildcard
// matches; without it they differ (the test has the power to tell).
func TestDeterministicModeTiming(t *testing.T) {
	shapes := []struct {
		nodes, perNode int
		slice          time.Duration
	}{{32, 2, 500 * time.Microsecond}, {16, 4, 200 * time.Microsecond}, {64, 1, 2 * time.Millisecond}, {8, 8, 500 * time.Microsecond}}
	run := func(det bool, noise uint64) (uint64, Stats) {
		sh := shapes[noise%uint64(len(shapes))]
		cfg := Config{Nodes: sh.nodes, RanksPerNode: sh.perNode, Slice: sh.slice, DeadlockSlices: 50,
			Sched:    core.SchedConfig{BytesPerSliceMax: 64 << 10, ChunksPerSliceMax: 1024, Deterministic: det},
			Workload: Workload{Rounds: 24, MaxLen: 512, Group: 8, Strided: 16, Compute: 3, Wildcard: 3},
			Inject:   Deschedule{Seed: noise, Percent: 30}}
		s := newSim(t, cfg, seedOr(7))
		st := mustFinish(t, s, 200000)
		if det && noise == 1 {
			ds, rel := s.DetStats()
			t.Logf("deterministic: %d slices, %d matches; wildcards decided by clocks %d, at quiescent points %d; releases %d",
				st.Slices, st.Matches, ds.Decided, ds.Forced, rel)
		}
		return s.Outcome(), st
	}
	var detOut, freeOut []uint64
	for noise := uint64(1); noise <= 8; noise++ {
		o, _ := run(true, noise)
		detOut = append(detOut, o)
		f, st := run(false, noise)
		freeOut = append(freeOut, f)
		if noise == 1 {
			t.Logf("without the mode: %d slices", st.Slices)
		}
	}
	for i, o := range detOut {
		if o != detOut[0] {
			t.Fatalf("deterministic mode: noise seed %d gave outcome %#x, seed 1 gave %#x", i+1, o, detOut[0])
		}
	}
	differ := false
	for _, o := range freeOut {
		differ = differ || o != freeOut[0]
	}
	if !differ {
		t.Fatalf("without deterministic mode every noise seed gave outcome %#x: the test cannot tell", freeOut[0])
	}
}
