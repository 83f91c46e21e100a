package nicthread

import (
	"errors"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bcsmpi/bcsmpi/internal/proto"
)

// peerNodes makes two nodes of one rank each (rank 0 on node 0, on host
// ha; rank 1 on node 1, on host hb), played by this process, whose data
// frames go through deliver, with PeerTimeout peer.
func peerNodes(t *testing.T, peer time.Duration, deliver func(nodes []*testNode, to proto.NodeID, m *proto.Msg) error) []*testNode {
	t.Helper()
	nodeOf := []proto.NodeID{0, 1}
	var nodes []*testNode
	send := func(to proto.NodeID, m *proto.Msg) error { return deliver(nodes, to, m) }
	for n := range 2 {
		tn := newTestNode(t, proto.NodeID(n), nodeOf, send)
		tn.a.peerTimeout, tn.a.hosts = peer, []string{"ha", "hb"}
		tn.attach(t, 0, os.Getpid(), os.Getpid())
		nodes = append(nodes, tn)
	}
	return nodes
}

// postMany posts count sends of size bytes from rank 0 and their receives
// on rank 1 (tags and requests 0..count-1) and returns the buffers.
func postMany(nodes []*testNode, count, size int) (src, dst [][]byte) {
	for i := range count {
		s, d := message(size), make([]byte, size)
		s[0] = byte(i)
		src, dst = append(src, s), append(dst, d)
		nodes[0].rank[0].Post(proto.Descriptor{Kind: proto.KindSend, Rank: 0, Peer: 1, Tag: int32(i), Req: uint32(i), Seq: uint64(i + 1), Addr: addrOf(s), Len: uint64(size)}, nil)
		nodes[1].rank[0].Post(proto.Descriptor{Kind: proto.KindRecv, Rank: 1, Peer: 0, Tag: int32(i), Req: uint32(i), Seq: uint64(i + 1), Addr: addrOf(d), Len: uint64(size)}, nil)
	}
	return src, dst
}

// A node that owes this node chunks and sends none of them (a cut link, a
// partition between two agents that both still answer the master) fails
// the slice after PeerTimeout, not after TX's timeout (runSlices gives
// 5 s), and the error names both nodes, their hosts and node_timeout.
func TestPeerSilenceFailsTheSlice(t *testing.T) {
	nodes := peerNodes(t, 100*time.Millisecond, func(nodes []*testNode, to proto.NodeID, m *proto.Msg) error {
		return nil // lost on the way
	})
	postMany(nodes, 1, 4096)
	err := runSlices(nodes, 3)
	var je *JobError
	if !errors.As(err, &je) || je.Node != 1 {
		t.Fatalf("got %v, want node 1's job error", err)
	}
	for _, want := range []string{"node 1 (host hb) awaited 1 chunk of slice", "from node 0 (host ha), which sent it no data for 100ms (node_timeout)", "the link between host hb and host ha is down, or the network is partitioned between them"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("got %q, want it to say %q", err, want)
		}
	}
}

// A node that keeps sending, each frame well within PeerTimeout of the
// last, is not silent, even when the whole wait is longer than
// PeerTimeout: every message arrives intact.
func TestPeerSlowButSendingIsNotSilent(t *testing.T) {
	const count, gap = 6, 200 * time.Millisecond // 1.2 s in all, at most 200 ms without a frame
	var mu sync.Mutex
	sent := 0
	nodes := peerNodes(t, time.Second, func(nodes []*testNode, to proto.NodeID, m *proto.Msg) error {
		cp := *m
		cp.Payload = append([]byte(nil), m.Payload...) // the agent reuses its bounce buffer
		mu.Lock()
		sent++
		delay := time.Duration(sent) * gap
		mu.Unlock()
		time.AfterFunc(delay, func() { nodes[to].a.OnData(cp.Node, &cp) })
		return nil
	})
	src, dst := postMany(nodes, count, 4096)
	if err := runSlices(nodes, 3); err != nil {
		t.Fatalf("a slow sender failed the job: %v", err)
	}
	for i := range count {
		if !nodes[1].rank[0].Done(uint32(i)) || string(src[i]) != string(dst[i]) {
			t.Errorf("message %d: done %v, intact %v", i, nodes[1].rank[0].Done(uint32(i)), string(src[i]) == string(dst[i]))
		}
	}
}

// A node whose one large data frame takes longer than PeerTimeout to
// arrive is not silent while the mesh still reads its bytes
// (AgentConfig.Quiet): the frame, delivered after twice PeerTimeout, ends
// the slice well. Without Quiet the same run fails the slice (the first
// subtest: the check is live).
func TestPeerFrameStillArrivingIsNotSilent(t *testing.T) {
	const peer = 200 * time.Millisecond
	run := func(t *testing.T, quiet func(proto.NodeID) time.Duration) error {
		nodes := peerNodes(t, peer, func(nodes []*testNode, to proto.NodeID, m *proto.Msg) error {
			cp := *m
			cp.Payload = append([]byte(nil), m.Payload...)
			time.AfterFunc(2*peer, func() { nodes[to].a.OnData(cp.Node, &cp) })
			return nil
		})
		for _, n := range nodes {
			n.a.quiet = quiet
		}
		src, dst := postMany(nodes, 1, 4096)
		err := runSlices(nodes, 3)
		if err == nil && string(src[0]) != string(dst[0]) {
			t.Errorf("the message arrived damaged")
		}
		return err
	}
	t.Run("no Quiet: silent", func(t *testing.T) {
		if err := run(t, nil); err == nil || !strings.Contains(err.Error(), "which sent it no data") {
			t.Fatalf("got %v, want the slice failed for a silent node", err)
		}
	})
	t.Run("bytes still coming", func(t *testing.T) {
		if err := run(t, func(proto.NodeID) time.Duration { return 0 }); err != nil {
			t.Fatalf("a frame still arriving failed the slice: %v", err)
		}
	})
}
