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
		if _, err := n.Strobe(k); err != nil {
			t.Fatal(err)
		}
		if err := n.DEM(k, descs, st); err != nil {
			t.Fatal(err)
		}
		_, err := n.MSM(k)
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
