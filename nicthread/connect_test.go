package nicthread

import (
	"bytes"
	"fmt"
	"os"
	"sync"
	"testing"

	"github.com/bcsmpi/bcsmpi/internal/core"
	"github.com/bcsmpi/bcsmpi/internal/proto"
	"github.com/bcsmpi/bcsmpi/internal/shm"
)

// In MSM the agent names each node its part of the plan sends to
// (AgentConfig.Connect), before TX sends that node its first data frame,
// and names no node it does not send to: the transport dials on that cue
// (transport/doc.go).
func TestConnectNamedInMSMBeforeFirstSend(t *testing.T) {
	nodeOf := []proto.NodeID{0, 1}
	var nodes []*testNode
	var mu sync.Mutex
	var events []string
	note := func(e string) {
		mu.Lock()
		events = append(events, e)
		mu.Unlock()
	}
	send := func(to proto.NodeID, m *proto.Msg) error {
		note(fmt.Sprintf("send %d->%d", m.Node, to))
		return nodes[to].a.OnData(m.Node, m)
	}
	me := os.Getpid()
	for n := range 2 {
		g := testGeometry
		g.Ranks = 1
		mem := make([]byte, g.Size())
		region, err := shm.Init(mem, g)
		if err != nil {
			t.Fatal(err)
		}
		connect := func(to proto.NodeID) { note(fmt.Sprintf("connect %d->%d", n, to)) }
		tn := &testNode{a: NewAgent(AgentConfig{Node: proto.NodeID(n), NodeOf: nodeOf, Sched: core.DefaultSchedConfig, Region: region, Send: send, Connect: connect}), mem: mem}
		tn.rank = append(tn.rank, region.Block(0))
		tn.attach(t, 0, me, me)
		nodes = append(nodes, tn)
	}
	src, dst := message(3<<20+5), make([]byte, 3<<20+5) // several slices' chunks
	postPair(nodes, src, dst)
	if err := runSlices(nodes, 6); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(src, dst) || !rankBlock(nodes, 1).Done(0) {
		t.Fatal("message not delivered")
	}
	sends := 0
	for i, e := range events {
		switch e {
		case "connect 0->1":
		case "send 0->1":
			if sends == 0 && (i == 0 || events[i-1] != "connect 0->1") {
				t.Fatalf("events %q: the first send to node 1 was not preceded by its connect in the same slice's MSM", events)
			}
			sends++
		default:
			t.Fatalf("events %q: unexpected %q (node 1 sends nothing; no node connects to itself)", events, e)
		}
	}
	t.Logf("events: %q", events)
	if sends < 2 {
		t.Fatalf("events %q: want the message in several chunks", events)
	}
}
