package nicthread

import (
	"runtime"
	"testing"
	"time"

	"github.com/bcsmpi/bcsmpi/internal/core"
	"github.com/bcsmpi/bcsmpi/internal/proto"
	"github.com/bcsmpi/bcsmpi/internal/shm"
	"github.com/bcsmpi/bcsmpi/strobe"
	"github.com/bcsmpi/bcsmpi/transport"
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
		a := NewAgent(AgentConfig{NodeOf: []proto.NodeID{0, 0}, Sched: core.DefaultSchedConfig, Region: region,
			OnSlice: func(s *SliceStats) { seen++ }, DeadlockSlices: 1000})
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		start := time.Now()
		st, err := RunMaster(MasterConfig{Slice: 100 * time.Microsecond, Nodes: 1, Spin: 20 * time.Microsecond, TXTimeout: time.Second, MaxSlices: n,
			OnSlice: func(*strobe.SliceRecord) {}, OnDEM: func([]proto.Descriptor) {}},
			&LocalNodes{Agents: []*Agent{a}, TXTimeout: time.Second}, nil)
		if err != nil {
			t.Fatal(err)
		}
		runtime.ReadMemStats(&after)
		// The first slice's end (bcsrun -v's start-up figure) lies within the run.
		if end := time.Now(); st.FirstSlice.Before(start) || st.FirstSlice.After(end) {
			t.Fatalf("FirstSlice %v, want within the run [%v, %v]", st.FirstSlice, start, end)
		}
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

// The same over TCP: master and two agents on a transport mesh.
func TestSliceLoopOverTCPAllocatesLittle(t *testing.T) {
	g := shm.Geometry{Ranks: 1, RingSlots: 8, ReqMax: 16, InlineMax: 64}
	run := func(n uint64) uint64 {
		secret := transport.NewSecret()
		ms := make([]*transport.Mesh, 3)
		addrs := make([]string, 3)
		for i := range ms {
			m, err := transport.Listen("127.0.0.1:0", secret)
			if err != nil {
				t.Fatal(err)
			}
			ms[i], addrs[i] = m, m.Addr()
		}
		remote := NewRemoteNodes(ms[0], 2, time.Second, time.Second)
		eps := make([]*AgentEndpoint, 2)
		for i := range eps {
			region, err := shm.Init(make([]byte, g.Size()), g)
			if err != nil {
				t.Fatal(err)
			}
			a := NewAgent(AgentConfig{Node: proto.NodeID(i), NodeOf: []proto.NodeID{0, 1}, Sched: core.DefaultSchedConfig, Region: region, DeadlockSlices: 1000})
			eps[i] = NewAgentEndpoint(a, ms[i+1], time.Second)
		}
		errs := make(chan error, 3)
		go func() { errs <- ms[0].Start(0, addrs, remote.Handler, remote.Direct()) }()
		for i, ep := range eps {
			go func() { errs <- ms[i+1].Start(i+1, addrs, ep.Handler, ep.Direct()) }()
		}
		for range 3 {
			if err := <-errs; err != nil {
				t.Fatal(err)
			}
		}
		served := make(chan error, 2)
		for _, ep := range eps {
			go func() { served <- ep.Serve() }()
		}
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		if _, err := RunMaster(MasterConfig{Slice: 200 * time.Microsecond, Nodes: 2, TXTimeout: time.Second, MaxSlices: n}, remote, nil); err != nil {
			t.Fatal(err)
		}
		runtime.ReadMemStats(&after)
		for range eps {
			<-served
		}
		for _, m := range ms {
			m.Close()
		}
		return after.Mallocs - before.Mallocs
	}
	short, long := run(100), run(1100)
	per := float64(int64(long)-int64(short)) / 1000
	t.Logf("TCP slice loop: %.2f allocations per slice (%d vs %d)", per, long, short)
	if per > 1 {
		t.Fatalf("%.2f allocations per slice over TCP, want at most 1", per)
	}
}
