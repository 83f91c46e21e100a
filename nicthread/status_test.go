package nicthread

import (
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/bcsmpi/bcsmpi/internal/core"
	"github.com/bcsmpi/bcsmpi/internal/proto"
	"github.com/bcsmpi/bcsmpi/internal/shm"
)

// The status byte of a rank, from its control page and its process's
// liveness (issue 9: a deadlock is a fact about the posted state).
func TestRankStatus(t *testing.T) {
	g := shm.Geometry{Ranks: 2, RingSlots: 8, ReqMax: 16, InlineMax: 64}
	region, err := shm.Init(make([]byte, g.Size()), g)
	if err != nil {
		t.Fatal(err)
	}
	// Ranks 1 and 3 of four live here (local blocks 0 and 1).
	a := NewAgent(AgentConfig{Node: 1, NodeOf: []proto.NodeID{0, 1, 0, 1}, Sched: core.DefaultSchedConfig, Region: region})
	b := a.Blocks()[1]
	recv := proto.CallCode("MPI_Recv")
	status := func(what string, want uint8) {
		t.Helper()
		got, err := a.rankStatus(1, b)
		if err != nil || got != want {
			t.Fatalf("%s: status %q (%v), want %q", what, proto.DescribeStatus(got), err, proto.DescribeStatus(want))
		}
	}
	status("no MPI state, process alive", proto.StatusStarting)
	for _, r := range []proto.Rank{0, 2, -1, 4} { // another node's ranks, or none: ignored
		a.RankExited(r)
	}
	status("no MPI state, process alive, other ranks exited", proto.StatusStarting)
	a.RankExited(3)
	status("no MPI state, process exited", proto.StatusNotMPI)
	if a.exited[0].Load() {
		t.Fatal("RankExited(3) marked rank 1 too")
	}

	b.SetState(shm.StateInit)
	status("initialised", proto.StatusRunning)
	b.SetBlocked(recv)
	status("blocked, nothing published", recv)
	atomic.AddUint32(b.Wake(), 1) // the agent publishes a completion
	status("blocked, a completion it has not looked at", proto.StatusWoken|recv)
	b.SetSeen(atomic.LoadUint32(b.Wake())) // it looked, and still waits
	status("blocked, every completion looked at", recv)
	b.SetState(shm.StateFinalized)
	status("finalized", proto.StatusFinalized)

	// The page is the rank's to write: out-of-range values fail the job.
	for _, c := range []struct {
		set  func()
		want string
	}{
		{func() { b.SetState(7) }, "rank 3 (node 1): control page: state = 7, want 0 (none), 1 (init) or 2 (finalized)"},
		{func() { b.SetState(shm.StateInit); b.SetBlocked(200) }, "rank 3 (node 1): control page: blocked call code = 200, want 0 .. "},
	} {
		c.set()
		_, err := a.rankStatus(1, b)
		if !errors.Is(err, ErrJob) || !strings.Contains(err.Error(), c.want) {
			t.Fatalf("got %v, want a job error containing %q", err, c.want)
		}
	}
}

// A release (deterministic mode) bumps the rank's release word and wakes
// it; it writes no completion record (it names no request slot).
func TestPublishRelease(t *testing.T) {
	g := shm.Geometry{Ranks: 1, RingSlots: 8, ReqMax: 16, InlineMax: 64, Deterministic: true}
	region, err := shm.Init(make([]byte, g.Size()), g)
	if err != nil {
		t.Fatal(err)
	}
	a := NewAgent(AgentConfig{Node: 0, NodeOf: []proto.NodeID{0}, Sched: core.DefaultSchedConfig, Region: region})
	b := a.Blocks()[0]
	b.ClearCompletion(0)
	w0 := atomic.LoadUint32(b.Wake())
	a.publish([]proto.Completion{{Rank: 0, Kind: proto.KindRelease}})
	if b.Release() != 1 || atomic.LoadUint32(b.Wake()) != w0+1 {
		t.Fatalf("release %d, wake %d: want 1 and %d", b.Release(), atomic.LoadUint32(b.Wake()), w0+1)
	}
	if b.Done(0) {
		t.Fatal("a release wrote request slot 0's completion record")
	}
}
