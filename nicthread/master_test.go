package nicthread

import (
	"runtime"
	"testing"
	"time"

	"github.com/bcsmpi/bcsmpi/internal/proto"
	"github.com/bcsmpi/bcsmpi/internal/shm"
	"github.com/bcsmpi/bcsmpi/scheduler"
	"github.com/bcsmpi/bcsmpi/strobe"
)

// The slice loop (strobe, DEM, MSM, TX, EMDS hooks) must not allocate once
// the job is running (STYLE.md habit 7). Counted over real slices of the
// embedded master driving one agent.
func TestSliceLoopDoesNotAllocate(t *testing.T) {
	g := shm.Geometry{Ranks: 2, RingSlots: 8, ReqMax: 16, InlineMax: 64}
	var seen uint64
	run := func(n uint64) uint64 {
		region, err := shm.Init(make([]byte, g.Size()), g)
		if err != nil {
			t.Fatal(err)
		}
		a := NewAgent(AgentConfig{NodeOf: []proto.NodeID{0, 0}, Sched: scheduler.DefaultConfig, Region: region,
			OnSlice: func(s *SliceStats) { seen++ }, DeadlockSlices: 1000})
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		_, err = RunMaster(MasterConfig{Slice: 100 * time.Microsecond, Nodes: 1, Spin: 20 * time.Microsecond, TXTimeout: time.Second, MaxSlices: n,
			OnSlice: func(*strobe.SliceRecord) {}, OnDEM: func([]proto.Descriptor) {}},
			&LocalNodes{Agents: []*Agent{a}, TXTimeout: time.Second}, nil)
		if err != nil {
			t.Fatal(err)
		}
		runtime.ReadMemStats(&after)
		return after.Mallocs - before.Mallocs
	}
	short, long := run(100), run(2100)
	// Setup allocates the same in both runs; 2000 more slices must add (almost) nothing.
	if extra := int64(long) - int64(short); extra > 50 {
		t.Fatalf("2000 extra slices allocated %d more objects (%d vs %d)", extra, long, short)
	}
	if seen != 2200 {
		t.Fatalf("agent saw %d slices, want 2200", seen)
	}
}
