package nicthread

import (
	"bytes"
	"os"
	"testing"

	"github.com/bcsmpi/bcsmpi/internal/core"
	"github.com/bcsmpi/bcsmpi/internal/proto"
	"github.com/bcsmpi/bcsmpi/internal/replay"
	"github.com/bcsmpi/bcsmpi/internal/shm"
)

// newLogNode is a node of two ranks in a recorded job: its region has a log
// ring and OnLog collects what the agent hands over, per rank.
func newLogNode(t *testing.T) (*testNode, map[proto.Rank][]byte) {
	t.Helper()
	g := testGeometry
	g.Ranks, g.LogBytes = 2, 4096
	mem := make([]byte, g.Size())
	region, err := shm.Init(mem, g)
	if err != nil {
		t.Fatal(err)
	}
	got := map[proto.Rank][]byte{}
	onLog := func(r proto.Rank, b []byte) { got[r] = append(got[r], b...) }
	tn := &testNode{a: NewAgent(AgentConfig{Node: 0, NodeOf: []proto.NodeID{0, 0}, Sched: core.DefaultSchedConfig, Region: region, OnLog: onLog}), mem: mem}
	for l := range g.Ranks {
		tn.rank = append(tn.rank, region.Block(l))
	}
	me := os.Getpid()
	tn.attach(t, 0, me, me)
	return tn, got
}

// What a rank logs reaches OnLog whole and in order, at the strobes and in
// the last drain (DrainLogs) after the agent has stopped.
func TestLogRecordsReachOnLog(t *testing.T) {
	tn, got := newLogNode(t)
	var enc replay.Encoder
	recs := []replay.Record{
		{Op: replay.OpFlag, Call: replay.CallTest, Seq: 2, Run: 40},
		{Op: replay.OpMatch, Call: replay.CallIrecv, Seq: 1, Source: 1, Tag: 7},
		{Op: replay.OpSome, Call: replay.CallTestsome, Seq: 42, Run: 1, NReq: 3, Indices: []int{0, 2}},
	}
	var want []byte
	for _, r := range recs {
		b := enc.Append(nil, r)
		if !tn.rank[0].LogAppend(b) {
			t.Fatal("log ring full")
		}
		want = append(want, b...)
	}
	if err := runSlices([]*testNode{tn}, 2); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got[0], want) {
		t.Fatalf("OnLog got %x, want %x", got[0], want)
	}
	end := enc.Append(nil, replay.Record{Op: replay.OpEnd, Seq: 42})
	tn.rank[0].LogAppend(end)
	if err := tn.a.DrainLogs(); err != nil {
		t.Fatal(err)
	}
	if want = append(want, end...); !bytes.Equal(got[0], want) {
		t.Fatalf("after DrainLogs OnLog has %x, want %x", got[0], want)
	}
	if len(got[1]) != 0 {
		t.Fatalf("rank 1 never attached, yet OnLog got %x for it", got[1])
	}
}

// A record a rank writes that does not decode, or names values out of range,
// fails the job naming the rank and the field; nothing of that drain reaches
// the recording.
func TestBadLogRecordAbortsJob(t *testing.T) {
	var enc replay.Encoder
	good := enc.Append(nil, replay.Record{Op: replay.OpFlag, Call: replay.CallTest, Seq: 1, Run: 1})
	for _, c := range []struct {
		name  string
		bytes []byte
		want  string
	}{
		{"unknown op", []byte{0x09, 0x02}, "log record (op 0x9) op = 9"},
		{"source past the job", (&replay.Encoder{}).Append(nil, replay.Record{Op: replay.OpMatch, Call: replay.CallRecv, Seq: 1, Source: 2, Tag: 0}), "log record (MATCH) source = 2, want 0 .. 1"},
		{"call of another op", []byte{byte(replay.OpMatch), 0x02, byte(replay.CallTest), 0, 0}, "log record (MATCH) call = 6"},
		{"run 0", []byte{byte(replay.OpFlag), 0x02, byte(replay.CallTest), 0, 1}, "log record (FLAG) run = 0, want at least 1"},
		{"index past the array", []byte{byte(replay.OpIndex), 0x02, byte(replay.CallWaitany), 1, 2, 6}, "log record (INDEX) index = 3, want -1 .. 1"},
		{"record cut short", good[:len(good)-1], "log ring head = inside a record"},
		{"record after END", append([]byte{byte(replay.OpEnd), 1}, good...), "log record (FLAG) op = FLAG, want nothing after END"},
	} {
		t.Run(c.name, func(t *testing.T) {
			tn, got := newLogNode(t)
			tn.rank[0].LogAppend(good) // a good record first: the drain is refused whole
			tn.rank[0].LogAppend(c.bytes)
			err := runSlices([]*testNode{tn}, 1)
			wantViolation(t, err, 0, c.want)
			if len(got[0]) != 0 {
				t.Errorf("OnLog got %x of a refused drain", got[0])
			}
		})
	}
}
