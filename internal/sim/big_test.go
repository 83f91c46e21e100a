package sim

import (
	"runtime"
	"testing"
	"time"

	"github.com/bcsmpi/bcsmpi/internal/core"
)

// bigWorkload is the mixed workload of the 10,000-node runs: no end (the
// slice limit ends the run), small messages, sub-communicators of 32
// contiguous and about 128 strided ranks. (A communicator costs each
// replica 4 bytes per world rank; 8-rank groups at 30,000 ranks would take
// 675 MB per replica.)
var bigWorkload = Workload{MaxLen: 512, Group: 32, Strided: 128, Compute: 3}

// TestBig10kNodes is the scale run: 10,000 nodes x 3 ranks x 1,000 slices,
// point-to-point and collectives on sub-communicators, three replicas
// compared every slice. It reports node-slices per second and memory.
// Behind -sim.big (or BCS_SIM_BIG=1); run it without -race.
func TestBig10kNodes(t *testing.T) {
	if !*bigFlag {
		t.Skip("10,000 nodes x 1,000 slices: run with -sim.big or BCS_SIM_BIG=1")
	}
	const nodes, slices = 10000, 1000
	s := newSim(t, Config{Nodes: nodes, RanksPerNode: 3, Cores: 3, DeadlockSlices: 5, Workload: bigWorkload}, seedOr(21))
	start := time.Now()
	if err := s.Run(slices); err != nil {
		t.Fatal(err)
	}
	el := time.Since(start)
	st := s.Stats()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	t.Logf("%d nodes x %d slices in %v: %.0f node-slices/s; heap in use %d MiB, from the OS %d MiB; %+v",
		nodes, st.Slices, el.Round(time.Millisecond), float64(nodes)*float64(st.Slices)/el.Seconds(), ms.HeapInuse>>20, ms.Sys>>20, st)
	if st.Slices != slices || st.Collectives == 0 || st.Matches == 0 || st.Deadlocks != 0 {
		t.Fatalf("stats %+v", st)
	}
}

// TestBigIdenticalPlans2000Nodes: every one of 2,000 nodes a replica (one
// rank each, few and large sub-communicators: each replica holds every
// communicator's index), 25 slices of the mixed workload (the splits and
// the first rounds). Behind -sim.big: about 30 s and 5.6 GB resident here
// (2,000 copies of the matching state).
func TestBigIdenticalPlans2000Nodes(t *testing.T) {
	if !*bigFlag {
		t.Skip("2,000 replicas: run with -sim.big or BCS_SIM_BIG=1")
	}
	w := bigWorkload
	w.Group, w.Strided = 64, 256
	s := newSim(t, Config{Nodes: 2000, RanksPerNode: 1, DeadlockSlices: 5, Workload: w,
		Sched: core.SchedConfig{BytesPerSliceMax: 4096, ChunksPerSliceMax: 256}}, seedOr(22))
	if err := s.Run(25); err != nil {
		t.Fatal(err)
	}
	if st := s.Stats(); st.Slices != 25 || st.Matches == 0 || st.Chunks == 0 {
		t.Fatalf("stats %+v", st)
	}
}

// BenchmarkStep is the cost of one slice of 1,000 nodes x 3 ranks of the
// mixed workload with two replicas, in node-slices per second.
func BenchmarkStep(b *testing.B) {
	const nodes = 1000
	s := newSim(b, Config{Nodes: nodes, RanksPerNode: 3, Cores: 2, DeadlockSlices: 5, Workload: bigWorkload}, 23)
	s.Run(20) // past MPI_Init and the splits
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		s.Step()
	}
	if s.Err() != nil {
		b.Fatal(s.Err())
	}
	b.ReportMetric(float64(nodes)*float64(b.N)/b.Elapsed().Seconds(), "node-slices/s")
}
