package nicthread

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/bcsmpi/bcsmpi/internal/core"
	"github.com/bcsmpi/bcsmpi/internal/proto"
	"github.com/bcsmpi/bcsmpi/internal/shm"
	"github.com/bcsmpi/bcsmpi/strobe"
	"github.com/bcsmpi/bcsmpi/transport"
)

// fakeNodes is a one-node job whose DEM reports fixed status bytes and
// which fails at a given slice.
type fakeNodes struct {
	status []uint8
	failAt proto.SliceID // 0: never

	mu       sync.Mutex
	gates    []bool
	stops    int
	stopCode int32
	stopWhy  string
}

func (f *fakeNodes) DEM(k proto.SliceID, arrive func(proto.NodeID) error, _ func()) ([]proto.Descriptor, []uint8, error) {
	if f.failAt != 0 && k >= f.failAt {
		return nil, nil, &JobError{Node: 0, Rank: 0, Why: fmt.Sprintf("fake failure in slice %d", k)}
	}
	return nil, f.status, arrive(0)
}
func (f *fakeNodes) MSM(_ proto.SliceID, _ []proto.Descriptor, _ []uint8, arrive func(proto.NodeID) error, _ func()) error {
	return arrive(0)
}
func (f *fakeNodes) TX(_ proto.SliceID, arrive func(proto.NodeID) error, _ func()) error {
	return arrive(0)
}
func (f *fakeNodes) Stop(code int32, why string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.stops++
	f.stopCode, f.stopWhy = code, why
}
func (f *fakeNodes) Gate(run bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.gates = append(f.gates, run)
}

const gangSlice = 200 * time.Microsecond

// decisions records the gang's decision of every slice.
type decisions struct {
	mu    sync.Mutex
	names []string
}

func (d *decisions) on(name string, _ bool) {
	d.mu.Lock()
	d.names = append(d.names, name)
	d.mu.Unlock()
}

// runs splits the decisions into maximal runs of one job: name and length.
func (d *decisions) runs() (names []string, lens []int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for i, n := range d.names {
		if i == 0 || n != d.names[i-1] {
			names, lens = append(names, n), append(lens, 0)
		}
		lens[len(lens)-1]++
	}
	return names, lens
}

// agentsJob makes a job of nodes logical nodes with one rank each (no
// process: the ranks stay "starting", so the job can always use the CPU),
// and records, per node, whether it ran in each slice and each OnRun call.
type agentsJob struct {
	nodes *LocalNodes
	mu    sync.Mutex
	ran   [][]bool // per node, per slice
	onRun [][]bool // per node, the OnRun calls
}

func newAgentsJob(t *testing.T, nodes int) *agentsJob {
	j := &agentsJob{nodes: &LocalNodes{TXTimeout: time.Second}, ran: make([][]bool, nodes), onRun: make([][]bool, nodes)}
	nodeOf := make([]proto.NodeID, nodes)
	for i := range nodeOf {
		nodeOf[i] = proto.NodeID(i)
	}
	g := shm.Geometry{Ranks: 1, RingSlots: 8, ReqMax: 16, InlineMax: 64}
	for n := range nodes {
		region, err := shm.Init(make([]byte, g.Size()), g)
		if err != nil {
			t.Fatal(err)
		}
		a := NewAgent(AgentConfig{Node: proto.NodeID(n), NodeOf: nodeOf, Sched: core.DefaultSchedConfig, Region: region, DeadlockSlices: 1000,
			OnSlice: func(s *SliceStats) {
				j.mu.Lock()
				j.ran[n] = append(j.ran[n], s.Ran)
				j.mu.Unlock()
			},
			OnRun: func(run bool) {
				j.mu.Lock()
				j.onRun[n] = append(j.onRun[n], run)
				j.mu.Unlock()
			}})
		j.nodes.Agents = append(j.nodes.Agents, a)
	}
	return j
}

// Every Q slices the running job changes, on every node of every job at the
// same strobe; exactly one job runs in each slice; OnRun is called exactly
// when a node's decision changes.
func TestGangSwitchesEveryQuantumOnEveryNode(t *testing.T) {
	const q = 4
	var d decisions
	g, err := NewGang(GangConfig{Slice: gangSlice, Matrix: strobe.GangConfig{MPL: 2, Quantum: q}, OnSlice: d.on})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	a, b := newAgentsJob(t, 3), newAgentsJob(t, 2)
	ja, err := g.Join("A", MasterConfig{Slice: gangSlice, Nodes: 3, MaxSlices: 60}, a.nodes, nil)
	if err != nil {
		t.Fatal(err)
	}
	jb, err := g.Join("B", MasterConfig{Slice: gangSlice, Nodes: 2, MaxSlices: 60}, b.nodes, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range []*GangJob{ja, jb} {
		if st, err := j.Wait(); err != nil || st.Slices != 60 {
			t.Fatalf("job %s: %d slices, %v; want 60, nil", j.Name, st.Slices, err)
		}
	}
	for _, j := range []*agentsJob{a, b} {
		for n := range j.ran {
			if fmt.Sprint(j.ran[n]) != fmt.Sprint(j.ran[0]) {
				t.Fatalf("node %d ran in slices %v, node 0 in %v: not one gang switch", n, j.ran[n], j.ran[0])
			}
			// OnRun: a call for every change of decision (the first slice
			// that does not run stops the ranks, which started running).
			var want []bool
			prev := true
			for _, r := range j.ran[n] {
				if r != prev {
					want = append(want, r)
				}
				prev = r
			}
			if fmt.Sprint(j.onRun[n]) != fmt.Sprint(want) {
				t.Fatalf("node %d: OnRun calls %v, want %v for slices run %v", n, j.onRun[n], want, j.ran[n])
			}
		}
	}
	// The gang's switch counts are the changes of decision its nodes saw.
	for i, gj := range []*GangJob{ja, jb} {
		var in, out uint64
		prev := true
		for _, r := range []*agentsJob{a, b}[i].ran[0] {
			if r && !prev {
				in++
			}
			if !r && prev {
				out++
			}
			prev = r
		}
		if gin, gout := gj.Switches(); gin != in || gout != out || out == 0 {
			t.Fatalf("job %s: switches in %d, out %d; its node 0 saw %d, %d (want some)", gj.Name, gin, gout, in, out)
		}
		if gj.Given() != 0 {
			t.Fatalf("job %s: %d slices given away, but its ranks never blocked", gj.Name, gj.Given())
		}
	}
	ranA, aliveA := ja.Counts()
	ranB, aliveB := jb.Counts()
	if aliveA != 60 || aliveB != 60 || ranA+ranB > 120 || ranA == 0 || ranB == 0 {
		t.Fatalf("counts: A ran %d of %d, B ran %d of %d", ranA, aliveA, ranB, aliveB)
	}
	names, lens := d.runs()
	if len(names) < 6 {
		t.Fatalf("only %d runs in %v", len(names), names)
	}
	// The first run may end early (the second job arrives), the last ones
	// are cut by the jobs' ends; every run between is one whole quantum.
	for i := 1; i < len(names)-2; i++ {
		if lens[i] != q || names[i] == names[i-1] || names[i] == "" {
			t.Fatalf("run %d: job %q for %d slices, want a quantum of %d (runs %v %v)", i, names[i], lens[i], q, names, lens)
		}
	}
	if len(a.ran[0]) != 60 || countTrue(a.ran[0]) != int(ranA) {
		t.Fatalf("job A's agents saw %d slices, ran in %d; the gang counted %d", len(a.ran[0]), countTrue(a.ran[0]), ranA)
	}
}

func countTrue(b []bool) int {
	n := 0
	for _, x := range b {
		if x {
			n++
		}
	}
	return n
}

// One job's node error stops that job alone, with RunMaster's error and
// Stop; the other job goes on to its end.
func TestGangJobErrorStopsOnlyThatJob(t *testing.T) {
	g, err := NewGang(GangConfig{Slice: gangSlice, Matrix: strobe.GangConfig{MPL: 2, Quantum: 2}})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	fa := &fakeNodes{status: []uint8{proto.StatusRunning}, failAt: 5}
	fb := &fakeNodes{status: []uint8{proto.StatusRunning}}
	ja, err := g.Join("A", MasterConfig{Slice: gangSlice, Nodes: 1}, fa, nil)
	if err != nil {
		t.Fatal(err)
	}
	jb, err := g.Join("B", MasterConfig{Slice: gangSlice, Nodes: 1, MaxSlices: 30}, fb, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, errA := ja.Wait()
	var je *JobError
	if !errors.As(errA, &je) || !errors.Is(errA, ErrJob) {
		t.Fatalf("job A: %v, want its node's *JobError", errA)
	}
	stB, errB := jb.Wait()
	if errB != nil || stB.Slices != 30 {
		t.Fatalf("job B: %d slices, %v; want 30, nil", stB.Slices, errB)
	}
	if fa.stops != 1 || fa.stopCode != 1 || fa.stopWhy != errA.Error() {
		t.Fatalf("job A stopped %d times, last (%d, %q); want once (1, %q)", fa.stops, fa.stopCode, fa.stopWhy, errA.Error())
	}
	if fb.stops != 1 || fb.stopCode != 0 || fb.stopWhy != "slice limit" {
		t.Fatalf("job B stopped %d times, last (%d, %q); want once (0, slice limit)", fb.stops, fb.stopCode, fb.stopWhy)
	}
	// B alone after A left: it ran in every slice from then on.
	n := len(fb.gates)
	if n < 20 || countTrue(fb.gates[n-20:]) != 20 {
		t.Fatalf("job B's last gates %v: want it to run in every slice once alone", fb.gates)
	}
}

// Work-conserving: a job whose every rank is blocked with nothing exchanged
// gives the rest of the quantum to the other job at the next strobe.
func TestGangWorkConserving(t *testing.T) {
	var d decisions
	g, err := NewGang(GangConfig{Slice: gangSlice, Matrix: strobe.GangConfig{MPL: 2, Quantum: 10}, OnSlice: d.on})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	blocked := proto.CallCode("MPI_Recv")
	if !proto.StatusBlocked(blocked) {
		t.Fatalf("status %d is not blocked", blocked)
	}
	fa := &fakeNodes{status: []uint8{blocked, proto.StatusFinalized}}
	fb := &fakeNodes{status: []uint8{proto.StatusRunning}}
	stopA := make(chan struct{})
	ja, err := g.Join("A", MasterConfig{Slice: gangSlice, Nodes: 1}, fa, stopA)
	if err != nil {
		t.Fatal(err)
	}
	jb, err := g.Join("B", MasterConfig{Slice: gangSlice, Nodes: 1, MaxSlices: 50}, fb, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.Join("C", MasterConfig{Slice: gangSlice, Nodes: 1}, &fakeNodes{}, nil); !errors.Is(err, strobe.ErrGangFull) {
		t.Fatalf("a third job at MPL 2: %v, want ErrGangFull", err)
	}
	if _, err := jb.Wait(); err != nil {
		t.Fatal(err)
	}
	close(stopA)
	if _, err := ja.Wait(); err != nil {
		t.Fatal(err)
	}
	names, lens := d.runs()
	sawA := 0
	for i := range names {
		if names[i] == "A" && i < len(names)-1 {
			sawA++
			if lens[i] != 1 {
				t.Fatalf("blocked job A ran %d slices in a row (runs %v %v); want 1 (work-conserving)", lens[i], names, lens)
			}
		}
	}
	if sawA == 0 {
		t.Fatalf("job A never ran (runs %v %v): it must still get its turn each quantum", names, lens)
	}
	// B ran in the slices A gave away, and perhaps in a quantum of its own
	// (had A run a whole quantum alone before B joined).
	ranB, _ := jb.Counts()
	if ga := ja.Given(); ga == 0 || ga > ranB || jb.Given() != 0 {
		t.Fatalf("slices given away: A %d, B %d; B ran %d; want A 1 .. %d, B 0", ga, jb.Given(), ranB, ranB)
	}
}

// Status lists the jobs with their slots; Close stops a job still in the
// gang with ErrGangClosed and refuses new ones.
func TestGangStatusAndClose(t *testing.T) {
	var once sync.Once
	seen := make(chan []GangJobStatus, 1)
	var g *Gang
	g, err := NewGang(GangConfig{Slice: gangSlice, OnSlice: func(string, bool) {
		if st := g.Status(); len(st) == 2 && st[0].Slot >= 0 && st[1].Slot >= 0 && st[0].SlicesAlive > 0 && st[1].SlicesAlive > 0 {
			once.Do(func() { seen <- st })
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	fa, fb := &fakeNodes{status: []uint8{0}}, &fakeNodes{status: []uint8{0}}
	ja, err := g.Join("A", MasterConfig{Slice: gangSlice, Nodes: 1}, fa, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.Join("B", MasterConfig{Slice: gangSlice, Nodes: 1}, fb, nil); err != nil {
		t.Fatal(err)
	}
	st := <-seen
	if st[0].Name != "A" || st[1].Name != "B" || st[0].Slot == st[1].Slot || st[0].Running == st[1].Running {
		t.Fatalf("status %+v: want A and B in two slots, one running", st)
	}
	g.Close()
	if _, err := ja.Wait(); !errors.Is(err, ErrGangClosed) {
		t.Fatalf("job A after Close: %v, want ErrGangClosed", err)
	}
	if _, err := g.Join("C", MasterConfig{Slice: gangSlice, Nodes: 1}, &fakeNodes{}, nil); !errors.Is(err, ErrGangClosed) {
		t.Fatalf("Join after Close: %v, want ErrGangClosed", err)
	}
	if _, err := g.Join("D", MasterConfig{Slice: time.Millisecond, Nodes: 1}, &fakeNodes{}, nil); err == nil {
		t.Fatal("a job with another timeslice was accepted")
	}
}

// The gang's slice loop does not allocate either (STYLE.md habit 7): two
// one-node jobs with real agents, hooks set, switching every 3 slices.
func TestGangSliceLoopDoesNotAllocate(t *testing.T) {
	g := shm.Geometry{Ranks: 1, RingSlots: 8, ReqMax: 16, InlineMax: 64}
	run := func(n uint64) uint64 {
		gang, err := NewGang(GangConfig{Slice: 100 * time.Microsecond, Spin: 20 * time.Microsecond, Matrix: strobe.GangConfig{MPL: 2, Quantum: 3},
			OnSlice: func(string, bool) {}})
		if err != nil {
			t.Fatal(err)
		}
		defer gang.Close()
		var nodes []*LocalNodes
		for range 2 {
			region, err := shm.Init(make([]byte, g.Size()), g)
			if err != nil {
				t.Fatal(err)
			}
			a := NewAgent(AgentConfig{NodeOf: []proto.NodeID{0}, Sched: core.DefaultSchedConfig, Region: region, DeadlockSlices: 1000,
				OnSlice: func(*SliceStats) {}, OnRun: func(bool) {}})
			nodes = append(nodes, &LocalNodes{Agents: []*Agent{a}, TXTimeout: time.Second})
		}
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		var jobs []*GangJob
		for i, ln := range nodes {
			j, err := gang.Join(fmt.Sprint(i), MasterConfig{Slice: 100 * time.Microsecond, Nodes: 1, MaxSlices: n,
				OnSlice: func(*strobe.SliceRecord) {}, OnDEM: func([]proto.Descriptor) {}}, ln, nil)
			if err != nil {
				t.Fatal(err)
			}
			jobs = append(jobs, j)
		}
		for _, j := range jobs {
			if st, err := j.Wait(); err != nil || st.Slices != n {
				t.Fatalf("%d slices, %v", st.Slices, err)
			}
		}
		runtime.ReadMemStats(&after)
		return after.Mallocs - before.Mallocs
	}
	short, long := run(100), run(2100)
	if extra := int64(long) - int64(short); extra > 50 {
		t.Fatalf("2000 extra gang slices allocated %d more objects (%d vs %d)", extra, long, short)
	}
}

// Over a transport (RemoteNodes: the decision travels in each slice's
// MsgDEM), every agent of a job applies each switch in the same slice.
func TestGangOverTCPSwitchesEveryNodeAtOnce(t *testing.T) {
	g := shm.Geometry{Ranks: 1, RingSlots: 8, ReqMax: 16, InlineMax: 64}
	gang, err := NewGang(GangConfig{Slice: gangSlice, Matrix: strobe.GangConfig{MPL: 2, Quantum: 3}})
	if err != nil {
		t.Fatal(err)
	}
	defer gang.Close()
	type rec struct {
		mu  sync.Mutex
		ran [][]bool
	}
	var jobs []*GangJob
	var recs []*rec
	var closers, joins []func()
	for range 2 {
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
		r := &rec{ran: make([][]bool, 2)}
		eps := make([]*AgentEndpoint, 2)
		for i := range eps {
			region, err := shm.Init(make([]byte, g.Size()), g)
			if err != nil {
				t.Fatal(err)
			}
			a := NewAgent(AgentConfig{Node: proto.NodeID(i), NodeOf: []proto.NodeID{0, 1}, Sched: core.DefaultSchedConfig, Region: region, DeadlockSlices: 1000,
				OnSlice: func(s *SliceStats) {
					r.mu.Lock()
					r.ran[i] = append(r.ran[i], s.Ran)
					r.mu.Unlock()
				}})
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
		// Joined below, back to back, once both jobs are set up: a job
		// joined alone would run its 40 slices before the other's set-up
		// ends on a loaded machine, and never be descheduled.
		joins = append(joins, func() {
			j, err := gang.Join(fmt.Sprint(len(jobs)), MasterConfig{Slice: gangSlice, Nodes: 2, MaxSlices: 40}, remote, nil)
			if err != nil {
				t.Fatal(err)
			}
			jobs = append(jobs, j)
		})
		recs = append(recs, r)
		closers = append(closers, func() {
			for range eps {
				if err := <-served; err != nil {
					t.Error(err)
				}
			}
			for _, m := range ms {
				m.Close()
			}
		})
	}
	for _, join := range joins {
		join()
	}
	for _, j := range jobs {
		if st, err := j.Wait(); err != nil || st.Slices != 40 {
			t.Fatalf("job %s: %d slices, %v", j.Name, st.Slices, err)
		}
	}
	for _, c := range closers {
		c()
	}
	for i, r := range recs {
		if fmt.Sprint(r.ran[0]) != fmt.Sprint(r.ran[1]) {
			t.Fatalf("job %d: node 0 ran in %v, node 1 in %v", i, r.ran[0], r.ran[1])
		}
		if n := countTrue(r.ran[0]); n == 0 || n == len(r.ran[0]) {
			t.Fatalf("job %d ran in %d of %d slices: want it both run and descheduled", i, n, len(r.ran[0]))
		}
	}
}
