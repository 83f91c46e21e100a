package sim

import (
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/bcsmpi/bcsmpi/internal/core"
	"github.com/bcsmpi/bcsmpi/internal/proto"
)

var (
	seedFlag = flag.Uint64("sim.seed", 0, "replay the run with this seed (0: the tests' own seeds)")
	runsFlag = flag.Int("sim.runs", 12, "random scenarios TestRandomScenarios runs")
	bigFlag  = flag.Bool("sim.big", os.Getenv("BCS_SIM_BIG") == "1", "run the slow tests at 10,000 nodes (also BCS_SIM_BIG=1)")
)

// seedOr is the seed a test uses: -sim.seed if given.
func seedOr(def uint64) uint64 {
	if *seedFlag != 0 {
		return *seedFlag
	}
	return def
}

// newSim builds a simulation seeded with seed; a failure of the test prints
// the seed, the injectors and how to replay it.
func newSim(t testing.TB, cfg Config, seed uint64) *Sim {
	t.Helper()
	s, err := New(cfg, rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			inj := "none"
			if cfg.Inject != nil {
				inj = cfg.Inject.String()
			}
			t.Logf("sim: seed %d, %d nodes x %d ranks, injectors %s, stopped at slice %d; replay: go test ./internal/sim -run '^%s$' -sim.seed=%d",
				seed, cfg.Nodes, cfg.RanksPerNode, inj, s.Slice(), strings.Split(t.Name(), "/")[0], seed)
		}
	})
	return s
}

// mustFinish runs s until every rank has finalized and fails the test on an
// error or a deadlock report.
func mustFinish(t testing.TB, s *Sim, maxSlices int) Stats {
	t.Helper()
	if err := s.Run(maxSlices); err != nil {
		t.Fatal(err)
	}
	st := s.Stats()
	if !s.Done() || st.Finalized != len(s.ranks) {
		t.Fatalf("after %d slices %d of %d ranks finalized", st.Slices, st.Finalized, len(s.ranks))
	}
	if st.Deadlocks != 0 {
		t.Fatalf("%d deadlock reports in a job that finished", st.Deadlocks)
	}
	return st
}

// TestIdenticalPlansEveryNode runs every one of 200 nodes as a replica: all
// of them must compute the same plan in every slice (Step compares hashes),
// publish what the agent model holds, and deliver every byte intact.
func TestIdenticalPlansEveryNode(t *testing.T) {
	w := DefaultWorkload
	w.Rounds = 12
	s := newSim(t, Config{Nodes: 200, RanksPerNode: 2, DeadlockSlices: 4, Workload: w,
		Sched: core.SchedConfig{BytesPerSliceMax: 2048, ChunksPerSliceMax: 64}}, seedOr(1))
	if got := len(s.Replicas()); got != 200 {
		t.Fatalf("%d replicas, want 200", got)
	}
	st := mustFinish(t, s, 200)
	if st.Collectives == 0 || st.Matches == 0 || st.Chunks <= st.Matches {
		t.Fatalf("workload did too little to test anything: %+v", st)
	}
}

// TestPlanDifferenceIsCaught: a replica whose scheduler is configured
// differently plans differently, and the simulation says so (the check
// above is not vacuous).
func TestPlanDifferenceIsCaught(t *testing.T) {
	cfg := Config{Nodes: 8, RanksPerNode: 2, Sched: core.SchedConfig{BytesPerSliceMax: 2048, ChunksPerSliceMax: 64}}
	s := newSim(t, cfg, seedOr(2))
	s.cores[5] = core.New(core.Config{Node: 5, NodeOf: s.nodeOf, Sched: core.SchedConfig{BytesPerSliceMax: 1024, ChunksPerSliceMax: 64}})
	err := s.Run(200)
	if err == nil || !strings.Contains(err.Error(), "node 5 planned differently from node 0") {
		t.Fatalf("err = %v, want node 5's plan reported as different", err)
	}
}

// TestSameSeedSameRun: the same seed and injectors replay the run bit for
// bit; another seed gives another run.
func TestSameSeedSameRun(t *testing.T) {
	cfg := Config{Nodes: 40, RanksPerNode: 3, DeadlockSlices: 3, Inject: Injectors{
		SlowNode{Node: 3, From: 10, To: 20, Delay: 2 * time.Millisecond}, StopRank{Rank: 7, From: 5, To: 30}, SlowLink{Node: 9, Factor: 20}}}
	seed := seedOr(3)
	var hashes [3][2]uint64
	for i, sd := range []uint64{seed, seed, seed + 1} {
		s := newSim(t, cfg, sd)
		mustFinish(t, s, 1000)
		hashes[i] = [2]uint64{s.TraceHash(), s.ContentHash()}
	}
	if hashes[0] != hashes[1] {
		t.Fatalf("seed %d: two runs hash %x and %x", seed, hashes[0], hashes[1])
	}
	if hashes[0][0] == hashes[2][0] {
		t.Fatalf("seeds %d and %d: the same trace hash %x", seed, seed+1, hashes[0][0])
	}
}

// TestDelaysChangeWhenNotWhat: a slow node and a slow link make slices late
// and skipped, and the master retry, but every plan, status byte and
// completion is the same as without them: timing faults never change what
// the job computes.
func TestDelaysChangeWhenNotWhat(t *testing.T) {
	seed := seedOr(4)
	cfg := Config{Nodes: 60, RanksPerNode: 2, Sched: core.SchedConfig{BytesPerSliceMax: 4096, ChunksPerSliceMax: 64}}
	base := newSim(t, cfg, seed)
	bst := mustFinish(t, base, 1000)
	cfg.Inject = Injectors{SlowNode{Node: 17, From: 5, To: 40, Delay: 3 * time.Millisecond}, SlowLink{Node: 30, Factor: 400}}
	slow := newSim(t, cfg, seed)
	sst := mustFinish(t, slow, 1000)
	if slow.ContentHash() != base.ContentHash() {
		t.Fatalf("content hash %x with delays, %x without: a delay changed what the job did", slow.ContentHash(), base.ContentHash())
	}
	if slow.TraceHash() == base.TraceHash() || sst.Skipped == 0 || sst.Late <= bst.Late || sst.Retries <= bst.Retries {
		t.Fatalf("delays left no trace: skipped %d, late %d (%d without), retries %d (%d without)", sst.Skipped, sst.Late, bst.Late, sst.Retries, bst.Retries)
	}
}

// TestRandomScenarios runs random jobs with random non-fatal faults (late
// starters, stopped ranks, slow nodes and links): each must finish with
// every rank finalized, every byte intact and no deadlock reported.
// -sim.seed=N replays one; -sim.runs sets how many.
func TestRandomScenarios(t *testing.T) {
	runs, base := *runsFlag, uint64(100)
	if *seedFlag != 0 {
		runs, base = 1, *seedFlag
	}
	for i := range runs {
		seed := base + uint64(i)
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			cfg := randomConfig(seed)
			s := newSim(t, cfg, seed)
			mustFinish(t, s, 5000)
		})
	}
}

// randomConfig draws a job and its faults from seed.
func randomConfig(seed uint64) Config {
	r := rand.New(rand.NewPCG(seed, 77))
	cfg := Config{Nodes: 1 + r.IntN(48), RanksPerNode: 1 + r.IntN(4), DeadlockSlices: uint64(2 + r.IntN(5)),
		Restart: core.Restart(r.IntN(2)),
		Sched:   core.SchedConfig{BytesPerSliceMax: 1024 << r.IntN(6), ChunksPerSliceMax: 1 + r.IntN(64)},
		Workload: Workload{Rounds: 3 + r.IntN(12), MaxLen: 8 << r.IntN(10), Group: 1 + r.IntN(12), Strided: 1 + r.IntN(20),
			Compute: 1 + r.IntN(5)}}
	R := cfg.Nodes * cfg.RanksPerNode
	var inj Injectors
	for range r.IntN(4) {
		from := proto.SliceID(r.IntN(40))
		switch r.IntN(4) {
		case 0:
			inj = append(inj, LateStart{Rank: proto.Rank(r.IntN(R)), At: from + proto.SliceID(r.IntN(50))})
		case 1:
			inj = append(inj, StopRank{Rank: proto.Rank(r.IntN(R)), From: from, To: from + proto.SliceID(r.IntN(50))})
		case 2:
			inj = append(inj, SlowNode{Node: proto.NodeID(r.IntN(cfg.Nodes)), From: from, To: from + 30, Delay: time.Duration(r.IntN(5000)) * time.Microsecond})
		case 3:
			inj = append(inj, SlowLink{Node: proto.NodeID(r.IntN(cfg.Nodes)), Factor: 1 + r.IntN(100)})
		}
	}
	cfg.Inject = inj
	return cfg
}

// TestInjectorsPrintThemselves: what a failing run prints names each fault.
func TestInjectorsPrintThemselves(t *testing.T) {
	got := Injectors{LateStart{3, 40}, NoMPI{4, 2}, StopRank{5, 10, 20}, SlowNode{6, 1, 9, time.Millisecond},
		SilentNode{7, 30}, SlowLink{8, 4}, RecvCycle{1, 2, 3}}.String()
	want := "late-start(r3@40) no-mpi(r4@2) stop-rank(r5@10..20) slow-node(n6@1..9+1ms) silent-node(n7@30) slow-link(n8/4) recv-cycle(r1<->r2@round3)"
	if got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
}

func TestConfigErrorsNameTheField(t *testing.T) {
	for _, c := range []struct {
		cfg  Config
		want string
	}{
		{Config{Nodes: 0, RanksPerNode: 1}, "nodes = 0"},
		{Config{Nodes: 2, RanksPerNode: 0}, "ranks_per_node = 0"},
		{Config{Nodes: 2, RanksPerNode: 1, Cores: 3}, "cores = 3"},
		{Config{Nodes: 2, RanksPerNode: 1, Workload: Workload{MaxLen: 12, Group: 1, Strided: 1, Compute: 1}}, "max_len = 12"},
		{Config{Nodes: 2, RanksPerNode: 1, Sched: core.SchedConfig{BytesPerSliceMax: 10, ChunksPerSliceMax: 1}}, "bytes_per_slice_max = 10"},
	} {
		_, err := New(c.cfg, rand.New(rand.NewPCG(1, 1)))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: err = %v, want one naming %q", c.cfg, err, c.want)
		}
	}
}

// TestFairnessCheckCatchesOvertaking feeds the fairness check a plan in
// which a later transfer moves while an earlier one on the same link waits.
func TestFairnessCheckCatchesOvertaking(t *testing.T) {
	s := newSim(t, Config{Nodes: 2, RanksPerNode: 2}, 1)
	send := func(r, to proto.Rank, seq uint64) proto.Descriptor {
		return proto.Descriptor{Kind: proto.KindSend, Rank: r, Peer: to, Seq: seq, Len: 4096}
	}
	recv := func(r, from proto.Rank, seq uint64) proto.Descriptor {
		return proto.Descriptor{Kind: proto.KindRecv, Rank: r, Peer: from, Seq: seq, Len: 4096}
	}
	p := &core.Plan{Slice: 1, Matches: []core.Match{{Xfer: 1, Send: send(0, 2, 1), Recv: recv(2, 0, 1)}, {Xfer: 2, Send: send(1, 3, 1), Recv: recv(3, 1, 1)}},
		Chunks: []proto.Chunk{{Xfer: 1, Src: 0, Dst: 2, SrcNode: 0, DstNode: 1, Len: 1024}, {Xfer: 2, Src: 1, Dst: 3, SrcNode: 0, DstNode: 1, Len: 1024}}}
	if err := s.fairness(p); err != nil {
		t.Fatalf("both moved: %v", err)
	}
	p = &core.Plan{Slice: 2, Chunks: []proto.Chunk{{Xfer: 2, Src: 1, Dst: 3, SrcNode: 0, DstNode: 1, Len: 1024}}}
	var fe *FairnessError
	if err := s.fairness(p); !errors.As(err, &fe) || fe.Waiting != 1 || fe.Moved != 2 {
		t.Fatalf("err = %v, want x2 moving while x1 waits", err)
	}
}
