package nicthread

import (
	"os"
	"sync/atomic"
	"testing"

	"github.com/bcsmpi/bcsmpi/internal/core"
	"github.com/bcsmpi/bcsmpi/internal/proto"
	"github.com/bcsmpi/bcsmpi/internal/replay"
	"github.com/bcsmpi/bcsmpi/internal/shm"
)

// newLBNode is a node of two ranks, both attached; rec set: its exchanges
// are recorded into a slice log (OnExchange), sl set: it replays one.
func newLBNode(t *testing.T, enc *replay.SliceEncoder, log *[]byte, sl *replay.Slices) *testNode {
	t.Helper()
	g := testGeometry
	g.Ranks = 2
	mem := make([]byte, g.Size())
	region, err := shm.Init(mem, g)
	if err != nil {
		t.Fatal(err)
	}
	cfg := AgentConfig{Node: 0, NodeOf: []proto.NodeID{0, 0}, Sched: core.DefaultSchedConfig, Region: region, Slices: sl}
	if enc != nil {
		count := make([]replay.RankCount, 2)
		cfg.OnExchange = func(k proto.SliceID, all []proto.Descriptor, p *core.Plan) {
			for i := range count {
				count[i] = replay.RankCount{Rank: i}
			}
			var h [2]uint64
			for _, d := range all {
				count[d.Rank].Count++
				h[d.Rank] = DescHash(h[d.Rank], d)
			}
			var cs []replay.RankCount
			for i, c := range count {
				if c.Count > 0 {
					c.Hash = Fold32(h[i])
					cs = append(cs, c)
				}
			}
			idle := len(all) == 0 && PlanEmpty(p)
			plan := uint32(0)
			if !idle {
				plan = PlanHash(p)
			}
			*log = enc.Slice(*log, uint64(k), cs, plan, idle)
		}
	}
	tn := &testNode{a: NewAgent(cfg), mem: mem}
	for l := range g.Ranks {
		tn.rank = append(tn.rank, region.Block(l))
	}
	me := os.Getpid()
	tn.attach(t, 0, me, me)
	tn.attach(t, 1, me, me)
	return tn
}

var lbRecvBuf = make([]byte, 8)

func recvFrom(rank, peer proto.Rank, tag int32, req uint32, seq uint64) proto.Descriptor {
	return proto.Descriptor{Kind: proto.KindRecv, Rank: rank, Peer: peer, Tag: tag, Req: req, Seq: seq, Len: 8, Addr: addrOf(lbRecvBuf)}
}

// A recording of two ranks: rank 0 sends to rank 1 before slice 1; rank 1
// receives before slice 3 (it is late). Replayed with rank 1 early and rank
// 0 late, the virtual slices wait and hold posts so that each slice
// exchanges what it did in the recording; a changed receive stops the job at
// its slice naming the rank and its call; a rank that finalizes without
// posting what the recording has it post stops it naming the slice.
func TestReplaySliceLog(t *testing.T) {
	var enc replay.SliceEncoder
	log := replay.SlicesHeader(2, replay.IDOf("job"))
	rec := newLBNode(t, &enc, &log, nil)
	rec.rank[0].Post(inlineSend(0, 1, 0, 1), payload)
	if err := runSlices([]*testNode{rec}, 2); err != nil {
		t.Fatal(err)
	}
	rec.rank[1].Post(recvFrom(1, 0, 5, 0, 1), nil) // posted in slice 2
	if err := runSlices3(rec, 3, 5); err != nil {
		t.Fatal(err)
	}
	if !rec.rank[1].Done(0) {
		t.Fatal("recording: the receive did not complete")
	}
	log = enc.End(log)
	sl, err := replay.ParseSlices(log, "slices.rpl", 2, replay.IDOf("job"))
	if err != nil {
		t.Fatal(err)
	}
	if sl.Busy != 2 { // slice 1 (the send) and slice 3 (the receive, matched)
		t.Fatalf("recorded %d busy slices, want 2: %+v", sl.Busy, sl.List)
	}

	// Replay: rank 1's receive first, and rank 0's send only after two slices.
	rep := newLBNode(t, nil, nil, sl)
	rep.rank[1].Post(recvFrom(1, 0, 5, 0, 1), nil)
	if err := runSlices3(rep, 1, 2); err != nil {
		t.Fatal(err)
	}
	if n, _ := rep.a.Replayed(); n != 0 {
		t.Fatalf("%d virtual slices ran before rank 0 posted the send of the first", n)
	}
	rep.rank[0].Post(inlineSend(0, 1, 0, 1), payload)
	if err := runSlices3(rep, 3, 3); err != nil {
		t.Fatal(err)
	}
	if rep.rank[1].Done(0) {
		t.Fatal("replay: the receive completed in virtual slice 1, the recording exchanged it in slice 3")
	}
	if err := runSlices3(rep, 4, 8); err != nil {
		t.Fatal(err)
	}
	if !rep.rank[1].Done(0) {
		t.Fatal("replay: the receive did not complete")
	}
	if n, busy := rep.a.Replayed(); busy != 2 || n != sl.Total {
		t.Fatalf("replayed %d slices (%d busy), want %d (2)", n, busy, sl.Total)
	}

	// A receive for another tag: slice 3 differs in rank 1's descriptors.
	bad := newLBNode(t, nil, nil, sl)
	bad.rank[0].Post(inlineSend(0, 1, 0, 1), payload)
	bad.rank[1].Post(recvFrom(1, 0, 6, 0, 1), nil)
	err = runSlices3(bad, 1, 8)
	wantViolation(t, err, 1, "replay diverged from the recording: slice 3: this rank's 1 descriptors differ from the recorded ones (now: r1#1 recv from=0 tag=6")

	// Rank 1 finalizes without its receive.
	gone := newLBNode(t, nil, nil, sl)
	gone.rank[0].Post(inlineSend(0, 1, 0, 1), payload)
	gone.rank[1].SetState(shm.StateFinalized)
	err = runSlices3(gone, 1, 8)
	wantViolation(t, err, 1, "replay diverged from the recording: slice 3: the recording exchanged 1 descriptors of this rank in this slice; it posted 0 and is finalized")
}

// runSlices3 drives one node through slices from .. to.
func runSlices3(tn *testNode, from, to proto.SliceID) error {
	for k := from; k <= to; k++ {
		batch, err := tn.a.DEM(k)
		if err != nil {
			return err
		}
		if err := tn.a.MSM(k, append([]proto.Descriptor(nil), batch...), tn.a.Status()); err != nil {
			return err
		}
		if err := tn.a.TX(k, 0); err != nil {
			return err
		}
	}
	return nil
}

// During a replay the slice stats say, as outside one, whether the job ran
// in the slice and what its last switch cost (the EMDS RUN and SWITCH
// columns): RUN is 1 in a slice the job runs, 0 in one the gang stopped it,
// and the switch is reported once, in the slice after the Gate that switched.
func TestReplayStatsRanAndSwitch(t *testing.T) {
	var enc replay.SliceEncoder
	log := replay.SlicesHeader(2, replay.IDOf("job"))
	rec := newLBNode(t, &enc, &log, nil)
	if err := runSlices3(rec, 1, 2); err != nil {
		t.Fatal(err)
	}
	sl, err := replay.ParseSlices(enc.End(log), "slices.rpl", 2, replay.IDOf("job"))
	if err != nil {
		t.Fatal(err)
	}
	rep := newLBNode(t, nil, nil, sl)
	var got []SliceStats
	rep.a.onSlice = func(s *SliceStats) { got = append(got, *s) }
	if err := runSlices3(rep, 1, 1); err != nil {
		t.Fatal(err)
	}
	rep.a.Gate(false)
	if err := runSlices3(rep, 2, 3); err != nil {
		t.Fatal(err)
	}
	rep.a.Gate(true)
	if err := runSlices3(rep, 4, 4); err != nil {
		t.Fatal(err)
	}
	if len(got) != 4 {
		t.Fatalf("%d slice stats, want 4", len(got))
	}
	for i, want := range []bool{true, false, false, true} {
		if got[i].Ran != want {
			t.Errorf("slice %d: Ran = %v, want %v", got[i].Slice, got[i].Ran, want)
		}
		if switched := i == 1 || i == 3; (got[i].Switch > 0) != switched {
			t.Errorf("slice %d: Switch = %v, want a switch cost only in slices 2 and 4", got[i].Slice, got[i].Switch)
		}
	}
}

// A rank that posts in the real slice being drained (it read the region's
// slice after the agent's SetSlice) and then blocks, as a rank in
// MPI_Iprobe or MPI_Recv does, is not stuck: its descriptor is drained in
// the next real slice and the virtual slice that waits for it runs then.
// (Before the fix, the agent saw the rank blocked with fewer descriptors
// drained than recorded and stopped the job as a divergence.)
func TestReplayPostedInTheDrainedSlice(t *testing.T) {
	var enc replay.SliceEncoder
	log := replay.SlicesHeader(2, replay.IDOf("job"))
	rec := newLBNode(t, &enc, &log, nil)
	rec.rank[0].Post(inlineSend(0, 1, 0, 1), payload)
	if err := runSlices([]*testNode{rec}, 2); err != nil {
		t.Fatal(err)
	}
	rec.rank[1].Post(recvFrom(1, 0, 5, 0, 1), nil) // exchanged in slice 3
	if err := runSlices3(rec, 3, 5); err != nil {
		t.Fatal(err)
	}
	sl, err := replay.ParseSlices(enc.End(log), "slices.rpl", 2, replay.IDOf("job"))
	if err != nil {
		t.Fatal(err)
	}

	rep := newLBNode(t, nil, nil, sl)
	rep.rank[0].Post(inlineSend(0, 1, 0, 1), payload)
	if err := runSlices3(rep, 1, 2); err != nil {
		t.Fatal(err)
	}
	// Real slice 3, virtual slice 3: rank 1's receive carries slice 3, and
	// rank 1 is blocked in MPI_Recv with every completion seen.
	recv := recvFrom(1, 0, 5, 0, 1)
	recv.PostSlice = 3
	b := rep.rank[1]
	b.Post(recv, nil)
	b.SetBlocked(proto.CallCode("MPI_Recv"))
	b.SetSeen(atomic.LoadUint32(b.Wake()))
	if err := runSlices3(rep, 3, 3); err != nil {
		t.Fatalf("a receive posted in the real slice being drained: %v", err)
	}
	if n, _ := rep.a.Replayed(); n != 2 {
		t.Fatalf("%d virtual slices ran by real slice 3, want 2 (slice 3 waits for the receive)", n)
	}
	if err := runSlices3(rep, 4, 8); err != nil {
		t.Fatal(err)
	}
	if !b.Done(0) {
		t.Fatal("replay: the receive did not complete")
	}
	if n, busy := rep.a.Replayed(); busy != 2 || n != sl.Total {
		t.Fatalf("replayed %d slices (%d busy), want %d (2)", n, busy, sl.Total)
	}
}
