package scheduler

import (
	"fmt"
	"math/rand"
	"slices"
	"strings"
	"testing"

	"github.com/bcsmpi/bcsmpi/internal/proto"
)

// raceProgram is an open-loop program: each rank's descriptors in post
// order (Seq 1, 2, ...). Rank 0 receives; the others send to it (and to
// rank 1, traffic that shifts their clocks).
func raceProgram(rng *rand.Rand, ranks int) [][]proto.Descriptor {
	prog := make([][]proto.Descriptor, ranks)
	total := 0
	for r := 1; r < ranks; r++ {
		n := 1 + rng.Intn(4)
		for i := 0; i < n; i++ {
			if rng.Intn(3) == 0 && r != 1 {
				prog[r] = append(prog[r], send(proto.Rank(r), 1, 9, 0, 0))
			}
			prog[r] = append(prog[r], send(proto.Rank(r), 0, int32(1+rng.Intn(2)), 0, 8))
			total++
		}
	}
	for i := 0; i < total+1; i++ { // one more than there are sends: one stays pending
		var d proto.Descriptor
		switch rng.Intn(6) {
		case 0:
			d = recv(0, proto.AnySource, 1, 0, 8)
		case 1:
			d = recv(0, proto.Rank(1+rng.Intn(ranks-1)), proto.AnyTag, 0, 8)
		case 2:
			d = proto.Descriptor{Kind: proto.KindIprobe, Rank: 0, Peer: proto.AnySource, Tag: proto.AnyTag}
		case 3:
			d = proto.Descriptor{Kind: proto.KindProbe, Rank: 0, Peer: proto.AnySource, Tag: 2}
		default:
			d = recv(0, proto.AnySource, proto.AnyTag, 0, 8)
		}
		prog[0] = append(prog[0], d)
	}
	for r := range prog {
		for i := range prog[r] {
			prog[r][i].Seq = uint64(i + 1)
			prog[r][i].Req = uint32(i + 1)
		}
	}
	return prog
}

// runRace feeds prog to a scheduler, each rank's descriptors split over
// slices at random (timing), a rank turning finalized once all its
// descriptors are exchanged; when everything is in and nothing happens for
// two slices, the quiescent point (force) is applied. It returns every
// matching decision and probe answer of rank 0, in rank 0's post order.
func runRace(t *testing.T, prog [][]proto.Descriptor, rng *rand.Rand, det bool) string {
	t.Helper()
	s := New(Config{BytesPerSliceMax: 1 << 20, ChunksPerSliceMax: 1024, Deterministic: det}, make([]proto.NodeID, len(prog)))
	next := make([]int, len(prog))
	status := make([]uint8, len(prog))
	out := map[uint32]string{}
	quiet := 0
	for k := proto.SliceID(1); k < 10000; k++ {
		var descs []proto.Descriptor
		for r := range prog {
			if next[r] == len(prog[r]) {
				status[r] = proto.StatusFinalized // its posts were all exchanged in earlier slices
				continue
			}
			n := rng.Intn(3)
			for i := 0; i < n && next[r] < len(prog[r]); i++ {
				descs = append(descs, prog[r][next[r]])
				next[r]++
			}
		}
		s.SetView(status, quiet >= 2)
		p := s.Schedule(k, descs)
		if p.Err != nil {
			t.Fatal(p.Err)
		}
		for _, m := range p.Matches {
			if m.Recv.Rank == 0 {
				out[m.Recv.Req] = fmt.Sprintf("recv#%d<-r%d#%d", m.Recv.Seq, m.Send.Rank, m.Send.Seq)
			}
		}
		for _, c := range p.Completions {
			if c.Rank == 0 && c.Kind != proto.KindRecv {
				out[c.Req] = fmt.Sprintf("%s#%d found=%v src=%d tag=%d", c.Kind, c.Req, c.Found, c.Source, c.Tag)
			}
		}
		all := true
		for r := range prog {
			all = all && next[r] == len(prog[r])
		}
		if all && len(descs) == 0 && len(p.Matches) == 0 && len(p.Completions) == 0 {
			quiet++
		} else {
			quiet = 0
		}
		if quiet > 4 {
			break
		}
	}
	var lines []string
	for i := range prog[0] {
		if o, ok := out[uint32(i+1)]; ok {
			lines = append(lines, o)
		} else {
			lines = append(lines, fmt.Sprintf("#%d pending", i+1))
		}
	}
	return strings.Join(lines, "\n")
}

// TestDeterministicRace: the same program with its posts spread over
// slices at random gives one outcome in deterministic mode, and (the test
// has the power to tell) several without it.
func TestDeterministicRace(t *testing.T) {
	for seed := int64(1); seed <= 20; seed++ {
		prog := raceProgram(rand.New(rand.NewSource(seed)), 5)
		var det, free []string
		for trial := int64(0); trial < 12; trial++ {
			det = append(det, runRace(t, prog, rand.New(rand.NewSource(seed*100+trial)), true))
			free = append(free, runRace(t, prog, rand.New(rand.NewSource(seed*100+trial)), false))
		}
		slices.Sort(det)
		if det = slices.Compact(det); len(det) != 1 {
			t.Fatalf("seed %d: deterministic mode gave %d outcomes:\n%s", seed, len(det), strings.Join(det, "\n---\n"))
		}
		if strings.Contains(det[0], "iprobe") && !strings.Contains(det[0], "found") {
			t.Fatalf("seed %d: outcome has no iprobe answer:\n%s", seed, det[0])
		}
		slices.Sort(free)
		if seed == 1 && len(slices.Compact(free)) < 2 {
			t.Fatalf("seed %d: without deterministic mode every trial matched alike: the race does not race", seed)
		}
	}
}

// TestDeterministicEarliestClock: a wildcard takes the send with the least
// (Seq, source), not the one exchanged first, and waits while a rank that
// could still post an earlier one is alive.
func TestDeterministicEarliestClock(t *testing.T) {
	s := New(Config{BytesPerSliceMax: 1 << 20, ChunksPerSliceMax: 16, Deterministic: true}, make([]proto.NodeID, 3))
	// Rank 0 is blocked in its receive: once it has been for two slices
	// with nothing else to wait for, its own later sends come after.
	status := []uint8{proto.CallCode("MPI_Recv"), proto.StatusRunning, proto.StatusRunning}
	s.SetView(status, false)
	// Rank 2's third post arrives first; rank 1 has posted nothing yet.
	p := s.Schedule(1, []proto.Descriptor{recv(0, proto.AnySource, 5, 1, 4), send(2, 1, 9, 1, 0), send(2, 1, 9, 2, 0), send(2, 0, 5, 3, 4)})
	if len(p.Matches) != 0 {
		t.Fatalf("matched %v while rank 1 (clock 0) could still post an earlier send", p.Matches)
	}
	// Rank 1 posts a send at clock 2: earlier than rank 2's clock 3.
	s.SetView(status, false)
	p = s.Schedule(2, []proto.Descriptor{send(1, 2, 9, 1, 0), send(1, 0, 5, 2, 4)})
	if len(p.Matches) != 1 || p.Matches[0].Send.Rank != 1 {
		t.Fatalf("slice 2: matches %v, want rank 1's send (clock 2, before rank 2's clock 3)", p.Matches)
	}
	// The next wildcard: rank 2's send (clock 3) is the only candidate;
	// rank 1's clock is 2, so it could still post clock 3 with a lower
	// source: wait until it finalizes.
	s.SetView(status, false)
	p = s.Schedule(3, []proto.Descriptor{recv(0, proto.AnySource, 5, 2, 4)})
	if len(p.Matches) != 0 {
		t.Fatalf("slice 3: matched %v while rank 1 could still post (3, rank 1) < (3, rank 2)", p.Matches)
	}
	status[1] = proto.StatusFinalized
	s.SetView(status, false)
	if p = s.Schedule(4, nil); len(p.Matches) != 0 {
		t.Fatalf("slice 4: matched %v on the first slice rank 1 shows finalized (a post of its last moments may not be exchanged yet)", p.Matches)
	}
	s.SetView(status, false)
	p = s.Schedule(5, nil)
	if len(p.Matches) != 1 || p.Matches[0].Send.Rank != 2 {
		t.Fatalf("slice 4: matches %v, want rank 2's send once rank 1 finalized", p.Matches)
	}
	if st := s.DetStats(); st.Decided != 2 || st.Forced != 0 {
		t.Fatalf("stats %+v, want 2 decided, 0 forced", st)
	}
}

// TestDeterministicForced: a wildcard whose receiver's own clock lags (it
// could still send to itself) is answered at the quiescent point.
func TestDeterministicForced(t *testing.T) {
	s := New(Config{BytesPerSliceMax: 1 << 20, ChunksPerSliceMax: 16, Deterministic: true}, make([]proto.NodeID, 2))
	status := []uint8{proto.StatusRunning, proto.StatusFinalized} // rank 0 runs after its Irecv
	s.SetView(status, false)
	p := s.Schedule(1, []proto.Descriptor{recv(0, proto.AnySource, 5, 1, 4), send(1, 1, 9, 1, 0), send(1, 0, 5, 2, 4)})
	if len(p.Matches) != 0 {
		t.Fatalf("matched %v while rank 0 (clock 1) could still send itself clock 2", p.Matches)
	}
	s.SetView(status, true)
	p = s.Schedule(2, nil)
	if len(p.Matches) != 1 || p.Matches[0].Send.Rank != 1 {
		t.Fatalf("forced: matches %v, want rank 1's send", p.Matches)
	}
	if st := s.DetStats(); st.Forced != 1 {
		t.Fatalf("stats %+v, want 1 forced", st)
	}
}

// TestDeterministicHoldsLaterReceives: a receive posted after an
// unanswered wildcard does not take a send the wildcard may get.
func TestDeterministicHoldsLaterReceives(t *testing.T) {
	s := New(Config{BytesPerSliceMax: 1 << 20, ChunksPerSliceMax: 16, Deterministic: true}, make([]proto.NodeID, 3))
	s.SetView([]uint8{0, 0, 0}, false)
	// Rank 1's send has clock 2; rank 2 (clock 0) could still post clock 1.
	p := s.Schedule(1, []proto.Descriptor{recv(0, proto.AnySource, 5, 1, 4), recv(0, 1, 5, 2, 4), send(1, 2, 9, 1, 0), send(1, 0, 5, 2, 4)})
	if len(p.Matches) != 0 {
		t.Fatalf("matched %v: rank 0's second receive overtook its wildcard", p.Matches)
	}
	for k := proto.SliceID(2); k <= 3; k++ { // finalized for two slices: its clock is final
		s.SetView([]uint8{0, proto.StatusFinalized, proto.StatusFinalized}, false)
		p = s.Schedule(k, nil)
	}
	if len(p.Matches) != 1 || p.Matches[0].Recv.Seq != 1 {
		t.Fatalf("matches %v, want the wildcard (seq 1) to take rank 1's send", p.Matches)
	}
	if p.Pending != 1 {
		t.Fatalf("pending %d, want the second receive still waiting", p.Pending)
	}
}

// TestNotDeterministicUnchanged: without the mode a wildcard takes the send
// of the earliest slice at once (the rule of doc.go).
func TestNotDeterministicUnchanged(t *testing.T) {
	s := New(Config{BytesPerSliceMax: 1 << 20, ChunksPerSliceMax: 16}, make([]proto.NodeID, 3))
	p := s.Schedule(1, []proto.Descriptor{recv(0, proto.AnySource, 5, 1, 4), send(2, 0, 5, 3, 4)})
	if len(p.Matches) != 1 {
		t.Fatalf("matches %v, want rank 2's send at once", p.Matches)
	}
}

// TestDeterministicHoldsOnlyWhatIsOwed: behind an unanswered wildcard for
// tag 5, a receive for tag 6 takes its message at once (holding it would
// deadlock a program that needs it first); a receive from rank 1 with any
// tag waits, because the wildcard may be owed rank 1's earlier tag-5
// message, and then takes the next one.
func TestDeterministicHoldsOnlyWhatIsOwed(t *testing.T) {
	s := New(Config{BytesPerSliceMax: 1 << 20, ChunksPerSliceMax: 16, Deterministic: true}, make([]proto.NodeID, 3))
	s.SetView([]uint8{0, 0, 0}, false)
	// Rank 2 (clock 0) could still post a tag-5 send before rank 1's.
	p := s.Schedule(1, []proto.Descriptor{recv(0, proto.AnySource, 5, 1, 4), recv(0, 1, 6, 2, 4), send(1, 0, 6, 1, 4)})
	if len(p.Matches) != 1 || p.Matches[0].Recv.Seq != 2 {
		t.Fatalf("matches %v, want the tag-6 receive (seq 2) to take rank 1's tag-6 message at once", p.Matches)
	}
	p = s.Schedule(2, []proto.Descriptor{recv(0, 1, proto.AnyTag, 3, 4), send(1, 0, 5, 2, 4), send(1, 0, 7, 3, 4)})
	if len(p.Matches) != 0 {
		t.Fatalf("matches %v: the any-tag receive from rank 1 must wait for the wildcard", p.Matches)
	}
	for k := proto.SliceID(3); k <= 4; k++ { // finalized for two slices: its clock is final
		s.SetView([]uint8{0, 0, proto.StatusFinalized}, false)
		p = s.Schedule(k, nil)
	}
	if len(p.Matches) != 2 || p.Matches[0].Recv.Seq != 1 || p.Matches[0].Send.Seq != 2 || p.Matches[1].Recv.Seq != 3 || p.Matches[1].Send.Seq != 3 {
		t.Fatalf("matches %v, want the wildcard to take rank 1's #2 and the any-tag receive its #3", p.Matches)
	}
}

// BenchmarkScheduleDeterministic is BenchmarkSchedule (a ring exchange, no
// wildcard) in deterministic mode, with the per-slice SetView of the core:
// what the mode costs a program without wildcards.
func BenchmarkScheduleDeterministic(b *testing.B) {
	cfg := DefaultConfig
	cfg.Deterministic = true
	s := New(cfg, []proto.NodeID{0, 0, 1, 1})
	status := make([]uint8, 4)
	descs := make([]proto.Descriptor, 0, 8)
	seq := uint64(0)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		seq++
		descs = descs[:0]
		for r := proto.Rank(0); r < 4; r++ {
			descs = append(descs, send(r, (r+1)%4, 0, seq*2, 4096), recv(r, (r+3)%4, 0, seq*2+1, 4096))
		}
		s.SetView(status, false)
		s.Schedule(proto.SliceID(i+1), descs)
	}
}

// BenchmarkScheduleWildcard: every slice, ranks 1..7 each send rank 0 a
// message and rank 0 posts seven MPI_ANY_SOURCE receives; with and without
// deterministic mode.
func BenchmarkScheduleWildcard(b *testing.B) {
	for _, det := range []bool{false, true} {
		b.Run(fmt.Sprintf("deterministic=%v", det), func(b *testing.B) {
			cfg := DefaultConfig
			cfg.Deterministic = det
			s := New(cfg, make([]proto.NodeID, 8))
			status := make([]uint8, 8)
			descs := make([]proto.Descriptor, 0, 14)
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				descs = descs[:0]
				for r := proto.Rank(1); r < 8; r++ {
					descs = append(descs, send(r, 0, 1, uint64(i+1), 64))
					descs = append(descs, recv(0, proto.AnySource, 1, uint64(7*i)+uint64(r), 64))
				}
				s.SetView(status, false)
				if p := s.Schedule(proto.SliceID(i+1), descs); len(p.Matches) != 7 {
					b.Fatalf("slice %d: %d matches, want 7", i+1, len(p.Matches))
				}
			}
		})
	}
}
