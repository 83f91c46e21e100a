package core

import (
	"errors"
	"strings"
	"testing"

	"github.com/bcsmpi/bcsmpi/internal/proto"
	"github.com/bcsmpi/bcsmpi/scheduler"
)

func TestDeadlockDetection(t *testing.T) {
	n := New(Config{Node: 0, NodeOf: []proto.NodeID{0, 0, 0}, Sched: scheduler.DefaultConfig, DeadlockSlices: 5})
	recvCode := proto.CallCode("MPI_Recv")
	stuck := []uint8{recvCode, recvCode, proto.StatusFinalized}
	step := func(k proto.SliceID, descs []proto.Descriptor, st []uint8) error {
		t.Helper()
		if _, err := n.DEM(k); err != nil {
			t.Fatal(err)
		}
		_, err := n.MSM(k, descs, st)
		n.TX(k)
		n.EndSlice(k)
		return err
	}
	// Ranks 0 and 1 receive from each other; rank 2 has finalized.
	if err := step(1, []proto.Descriptor{
		{Kind: proto.KindRecv, Rank: 0, Peer: 1, Tag: 7, Seq: 1, Req: 1, Len: 8},
		{Kind: proto.KindRecv, Rank: 1, Peer: 0, Tag: 7, Seq: 1, Req: 1, Len: 8},
	}, stuck); err != nil {
		t.Fatalf("slice 1 has activity, no deadlock yet: %v", err)
	}
	// A running rank resets the count.
	for k := proto.SliceID(2); k <= 5; k++ {
		if err := step(k, nil, stuck); err != nil {
			t.Fatalf("slice %d: %v", k, err)
		}
	}
	if err := step(6, nil, []uint8{recvCode, proto.StatusRunning, proto.StatusFinalized}); err != nil {
		t.Fatal(err)
	}
	var dl *DeadlockError
	for k := proto.SliceID(7); k <= 11; k++ {
		err := step(k, nil, stuck)
		if k < 11 && err != nil {
			t.Fatalf("slice %d: early %v", k, err)
		}
		if k == 11 && !errors.As(err, &dl) {
			t.Fatalf("slice 11: want a deadlock after 5 stuck slices, got %v", err)
		}
	}
	for _, want := range []string{
		"blocked for 5 slices",
		"rank 0 (in MPI_Recv): waits for a message from rank 1 (tag 7)",
		"rank 1 (in MPI_Recv): waits for a message from rank 0 (tag 7)",
		"rank 2 (finalized)",
		"wait-for cycle: 0 -> 1 -> 0",
	} {
		if !strings.Contains(dl.Report, want) {
			t.Errorf("report lacks %q:\n%s", want, dl.Report)
		}
	}
	if !dl.Fatal || dl.Slice != 11 {
		t.Fatalf("fatal %v slice %d", dl.Fatal, dl.Slice)
	}
}

// stepper runs slices of one node with the given descriptors and statuses.
func stepper(t *testing.T, n *Node) func(k proto.SliceID, descs []proto.Descriptor, st []uint8) error {
	return func(k proto.SliceID, descs []proto.Descriptor, st []uint8) error {
		t.Helper()
		if _, err := n.DEM(k); err != nil {
			t.Fatal(err)
		}
		_, err := n.MSM(k, descs, st)
		if err := n.TX(k); err != nil {
			t.Fatal(err)
		}
		if _, err := n.EndSlice(k); err != nil {
			t.Fatal(err)
		}
		return err
	}
}

// A guard of one slice is raised to two: a post made just before its rank
// blocked is exchanged only in the next slice.
func TestDeadlockGuardIsAtLeastTwoSlices(t *testing.T) {
	n := New(Config{Node: 0, NodeOf: []proto.NodeID{0, 0}, Sched: scheduler.DefaultConfig, DeadlockSlices: 1})
	step := stepper(t, n)
	recv := proto.CallCode("MPI_Recv")
	st := []uint8{recv, recv}
	if err := step(1, []proto.Descriptor{
		{Kind: proto.KindRecv, Rank: 0, Peer: 1, Tag: 7, Seq: 1, Req: 1, Len: 8},
		{Kind: proto.KindRecv, Rank: 1, Peer: 0, Tag: 7, Seq: 1, Req: 1, Len: 8},
	}, st); err != nil {
		t.Fatal(err)
	}
	if err := step(2, nil, st); err != nil {
		t.Fatalf("one quiet slice: %v", err)
	}
	var dl *DeadlockError
	if err := step(3, nil, st); !errors.As(err, &dl) || dl.Slices != 2 {
		t.Fatalf("second quiet slice: want a deadlock after 2 slices, got %v", err)
	}
}

// A rank whose status says blocked but which has no operation the runtime
// holds as incomplete is not deadlocked: the posted state does not show it.
func TestBlockedWithNothingIncompleteIsNoDeadlock(t *testing.T) {
	n := New(Config{Node: 0, NodeOf: []proto.NodeID{0, 0}, Sched: scheduler.DefaultConfig, DeadlockSlices: 3})
	step := stepper(t, n)
	recv := proto.CallCode("MPI_Recv")
	if err := step(1, []proto.Descriptor{{Kind: proto.KindRecv, Rank: 0, Peer: 1, Tag: 7, Seq: 1, Req: 1, Len: 8}}, []uint8{recv, recv}); err != nil {
		t.Fatal(err)
	}
	for k := proto.SliceID(2); k <= 20; k++ {
		if err := step(k, nil, []uint8{recv, recv}); err != nil {
			t.Fatalf("slice %d: rank 1 has nothing incomplete, yet: %v", k, err)
		}
	}
	// Once rank 1 is finalized, rank 0's wait is a fact: reported after the guard.
	var dl *DeadlockError
	for k := proto.SliceID(21); k <= 23; k++ {
		err := step(k, nil, []uint8{recv, proto.StatusFinalized})
		if got := errors.As(err, &dl); got != (k == 23) {
			t.Fatalf("slice %d: deadlock %v (%v), want it only at slice 23", k, got, err)
		}
	}
	if !strings.Contains(dl.Report, "no wait-for cycle: the ranks wait for ranks that have finalized or exited without calling MPI_Init") {
		t.Fatalf("report:\n%s", dl.Report)
	}
}

// Warn mode reports once and keeps counting without reporting again.
func TestDeadlockWarnReportsOnce(t *testing.T) {
	n := New(Config{Node: 0, NodeOf: []proto.NodeID{0, 0}, Sched: scheduler.DefaultConfig, DeadlockSlices: 3, DeadlockWarn: true})
	step := stepper(t, n)
	recv := proto.CallCode("MPI_Recv")
	st := []uint8{recv, proto.StatusNotMPI}
	step(1, []proto.Descriptor{{Kind: proto.KindRecv, Rank: 0, Peer: 1, Tag: 7, Seq: 1, Req: 1, Len: 8}}, st)
	reports := 0
	for k := proto.SliceID(2); k <= 30; k++ {
		var dl *DeadlockError
		if err := step(k, nil, st); errors.As(err, &dl) {
			reports++
			if dl.Fatal || dl.Slice != 4 || !strings.Contains(dl.Report, "rank 1 (exited without calling MPI_Init)") {
				t.Fatalf("slice %d: fatal %v slice %d\n%s", k, dl.Fatal, dl.Slice, dl.Report)
			}
		} else if err != nil {
			t.Fatal(err)
		}
	}
	if reports != 1 {
		t.Fatalf("%d reports, want 1", reports)
	}
}

// A status byte is another process's data: an invalid one is refused with an
// error naming the rank, the value and what is valid.
func TestBadStatusByteRefused(t *testing.T) {
	n := New(Config{Node: 0, NodeOf: []proto.NodeID{0, 0}, Sched: scheduler.DefaultConfig, DeadlockSlices: 3})
	if _, err := n.DEM(1); err != nil {
		t.Fatal(err)
	}
	_, err := n.MSM(1, nil, []uint8{0, 0x7f})
	if err == nil || !strings.Contains(err.Error(), "slice 1: rank 1: status byte 0x7f, want 0 (running)") {
		t.Fatalf("got %v", err)
	}
}

// A deadlock report names each distinct wait of a rank once, in order,
// with the number of identical waits behind it: a rank with a one-sided
// window's 32 header receives per peer outstanding was listed 32 times per
// peer (MPICH rma/at_complete on 4 ranks, a 392-line report).
func TestCollapseWaits(t *testing.T) {
	a, b := "waits for a message from rank 1 (tag 1, communicator 1)", "waits for a message from rank 2 (tag 1, communicator 1)"
	in := []string{a, a, b, a, b, "its send to rank 3 waits for a matching receive"}
	got := collapseWaits(in)
	want := []string{a + ", 3 requests", b + ", 2 requests", "its send to rank 3 waits for a matching receive"}
	if len(got) != len(want) {
		t.Fatalf("collapseWaits = %q, want %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("collapseWaits = %q, want %q", got, want)
		}
	}
	if got := collapseWaits(nil); len(got) != 0 {
		t.Fatalf("collapseWaits(nil) = %q, want nothing", got)
	}
}
