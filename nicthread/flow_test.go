package nicthread

import (
	"bytes"
	"os"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/bcsmpi/bcsmpi/internal/check"
	"github.com/bcsmpi/bcsmpi/internal/core"
	"github.com/bcsmpi/bcsmpi/internal/proto"
	"github.com/bcsmpi/bcsmpi/internal/shm"
	"github.com/bcsmpi/bcsmpi/internal/unix"
)

// checkNodes makes one node with two ranks (cross false) or two nodes with
// one rank each, all played by this process, with the checks of mode on.
func checkNodes(t testing.TB, cross bool, mode check.Mode) []*testNode {
	t.Helper()
	nodeOf := []proto.NodeID{0, 0}
	if cross {
		nodeOf = []proto.NodeID{0, 1}
	}
	var nodes []*testNode
	send := func(to proto.NodeID, m *proto.Msg) error { return nodes[to].a.OnData(m.Node, m) }
	me := os.Getpid()
	for n := range int(nodeOf[1]) + 1 {
		g := testGeometry
		g.Ranks = 2 - int(nodeOf[1])
		mem := make([]byte, g.Size())
		region, err := shm.Init(mem, g)
		if err != nil {
			t.Fatal(err)
		}
		tn := &testNode{a: NewAgent(AgentConfig{Node: proto.NodeID(n), NodeOf: nodeOf, Sched: core.DefaultSchedConfig, Region: region, Send: send, Check: mode}), mem: mem}
		for l := range g.Ranks {
			tn.rank = append(tn.rank, region.Block(l))
			tn.attach(t, l, me, me)
		}
		nodes = append(nodes, tn)
	}
	return nodes
}

// rankBlock is the block of world rank r.
func rankBlock(nodes []*testNode, r int) *shm.RankBlock {
	if len(nodes) == 1 {
		return nodes[0].rank[r]
	}
	return nodes[r].rank[0]
}

// postPair posts a send of src from rank 0 and a receive into dst on rank 1.
func postPair(nodes []*testNode, src, dst []byte) {
	rankBlock(nodes, 0).Post(proto.Descriptor{Kind: proto.KindSend, Rank: 0, Peer: 1, Tag: 5, Req: 0, Seq: 1, Addr: addrOf(src), Len: uint64(len(src))}, nil)
	rankBlock(nodes, 1).Post(proto.Descriptor{Kind: proto.KindRecv, Rank: 1, Peer: 0, Tag: 5, Req: 0, Seq: 1, Addr: addrOf(dst), Len: uint64(len(dst))}, nil)
}

func message(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7 + i>>12)
	}
	return b
}

// A fault injected into the agent's copy path — a byte flipped between the
// read and the write, a chunk skipped, a chunk moved twice — is caught by
// the flow check, within the node and across nodes, with a report naming
// the slice, the plan entry and the nodes. Without the check the corrupted
// message is delivered silently (the first case shows it).
func TestFlowCatchesCopyFault(t *testing.T) {
	const size = 5<<19 + 100 // three chunks at 1 MiB per slice
	faults := map[string]func(k proto.SliceID, i int, c *proto.Chunk, data []byte) int{
		"corrupt": func(k proto.SliceID, i int, c *proto.Chunk, data []byte) int {
			if c.Off > 0 {
				data[len(data)/2] ^= 0x40
			}
			return 1
		},
		"skip": func(k proto.SliceID, i int, c *proto.Chunk, data []byte) int {
			if c.Off > 0 && !c.Last {
				return 0
			}
			return 1
		},
		"twice": func(k proto.SliceID, i int, c *proto.Chunk, data []byte) int {
			if c.Last {
				return 2
			}
			return 1
		},
	}
	t.Cleanup(func() { copyFault = nil })
	for _, cross := range []bool{false, true} {
		where := "within a node"
		if cross {
			where = "across nodes"
		}
		copyFault = faults["corrupt"]
		src, dst := message(size), make([]byte, size)
		nodes := checkNodes(t, cross, check.Mode{})
		postPair(nodes, src, dst)
		if err := runSlices(nodes, 6); err != nil || !rankBlock(nodes, 1).Done(0) || bytes.Equal(src, dst) {
			t.Fatalf("%s, no check: err %v, done %v, delivered intact %v; want the corrupted message delivered without a word", where, err, rankBlock(nodes, 1).Done(0), bytes.Equal(src, dst))
		}
		// Under buffers,flow the sender has a check header, and the agent
		// takes the source sum and the comparison with the post in one
		// pass over each piece (checkRead).
		for _, mode := range []check.Mode{{Flow: true}, {Flow: true, Buffers: true}} {
			for name, fault := range faults {
				copyFault = fault
				src, dst := message(size), make([]byte, size)
				nodes := checkNodes(t, cross, mode)
				hdr := senderHeader(nodes, mode, src)
				postPair(nodes, src, dst)
				err := runSlices(nodes, 6)
				runtime.KeepAlive(hdr)
				if err == nil {
					t.Fatalf("%s, %v, fault %s: no error; want the flow check's report", where, mode, name)
				}
				msg := err.Error()
				for _, want := range []string{"flow check: runtime bug in slice", "plan entry", "r0->r1", "node 0 -> node "} {
					if !strings.Contains(msg, want) {
						t.Errorf("%s, %v, fault %s: %q does not name %q", where, mode, name, msg, want)
					}
				}
				t.Logf("%s, %v, %s: %v", where, mode, name, err)
			}
			copyFault = nil
			src, dst = message(size), make([]byte, size)
			nodes = checkNodes(t, cross, mode)
			hdr := senderHeader(nodes, mode, src)
			postPair(nodes, src, dst)
			err := runSlices(nodes, 6)
			runtime.KeepAlive(hdr)
			if err != nil || !bytes.Equal(src, dst) {
				t.Fatalf("%s, %v, no fault: %v (delivered intact: %v); want a clean run", where, mode, err, bytes.Equal(src, dst))
			}
			if _, _, _, ok := rankBlock(nodes, 0).Written(0); ok {
				t.Fatalf("%s, %v, no fault: the send buffer reported modified", where, mode)
			}
		}
	}
}

// senderHeader gives rank 0's request 0 the check header of send buffer
// src under the buffer checks, as package mpiapi does at the post.
func senderHeader(nodes []*testNode, mode check.Mode, src []byte) []uint32 {
	if !mode.Buffers {
		return nil
	}
	hdr := check.NewHeader(src)
	rankBlock(nodes, 0).SetCheck(0, uint64(uintptr(unsafe.Pointer(unsafe.SliceData(hdr)))))
	return hdr
}

// Before the agent writes a chunk into a receive buffer, it compares the
// blocks starting in the chunk with their sums at post (read from the
// rank's check header) and records the blocks the program wrote in the
// request's completion record; blocks the message does not reach are left
// to the rank (checked at completion).
func TestPreWriteFindsProgramWrites(t *testing.T) {
	const size = 5<<19 + 100
	for _, cross := range []bool{false, true} {
		nodes := checkNodes(t, cross, check.Mode{Buffers: true})
		src, dst := message(size), make([]byte, size+3*check.BlockSize)
		hdr := check.NewHeader(dst)
		rankBlock(nodes, 1).SetCheck(0, uint64(uintptr(unsafe.Pointer(unsafe.SliceData(hdr)))))
		dst[1<<20+5] = 1                 // block 256: second chunk
		dst[2<<20+3*check.BlockSize] = 1 // block 515: third chunk
		dst[size+check.BlockSize] = 1    // past the message: not the agent's to see
		postPair(nodes, src, dst)
		err := runSlices(nodes, 6)
		runtime.KeepAlive(hdr) // the agent reads it through the address SetCheck gave
		if err != nil {
			t.Fatal(err)
		}
		lo, hi, k, ok := rankBlock(nodes, 1).Written(0)
		if !ok || lo != 256 || hi != 515 || k < 2 {
			t.Fatalf("cross %v: Written = %d, %d, slice %d, %v; want blocks 256 .. 515 from slice 2 on", cross, lo, hi, k, ok)
		}
		if !bytes.Equal(src, dst[:size]) {
			t.Fatalf("cross %v: message not delivered intact", cross)
		}
	}
}

// The agent compares the bytes it reads for a point-to-point send with the
// send buffer's block sums at post, piece by piece. The pieces of a chunk
// start at the buffer's block boundaries, so a block that lies wholly in a
// chunk is compared even where the chunk starts in the middle of a block
// (here the message starts 100 bytes into the buffer the header describes,
// so a piece counted from the chunk's start would split block 288 and skip
// it); a block that straddles two chunks is left to the completion check.
func TestCheckReadFindsModifiedSendBlocks(t *testing.T) {
	const size, skip = 5<<19 + 100, 100
	for _, cross := range []bool{false, true} {
		nodes := checkNodes(t, cross, check.Mode{Buffers: true})
		buf := message(size)
		hdr := check.NewHeader(buf) // the send buffer at post
		rankBlock(nodes, 0).SetCheck(0, uint64(uintptr(unsafe.Pointer(unsafe.SliceData(hdr)))))
		buf[1<<20+50] ^= 1           // block 256: straddles the first two chunks (1 MiB each)
		buf[1<<20+128<<10+2048] ^= 1 // block 288: inside the second chunk
		src, dst := buf[skip:], make([]byte, size-skip)
		rankBlock(nodes, 0).Post(proto.Descriptor{Kind: proto.KindSend, Rank: 0, Peer: 1, Tag: 5, Req: 0, Seq: 1, Addr: addrOf(src), Len: uint64(len(src))}, nil)
		rankBlock(nodes, 1).Post(proto.Descriptor{Kind: proto.KindRecv, Rank: 1, Peer: 0, Tag: 5, Req: 0, Seq: 1, Addr: addrOf(dst), Len: uint64(len(dst))}, nil)
		err := runSlices(nodes, 6)
		runtime.KeepAlive(hdr) // the agent reads it through the address SetCheck gave
		if err != nil {
			t.Fatal(err)
		}
		lo, hi, k, ok := rankBlock(nodes, 0).Written(0)
		if !ok || lo != 288 || hi != 288 || k < 2 {
			t.Fatalf("cross %v: Written = %d, %d, slice %d, %v; want block 288 .. 288 from slice 2 on", cross, lo, hi, k, ok)
		}
		if !bytes.Equal(src, dst) {
			t.Fatalf("cross %v: message not delivered as read", cross)
		}
	}
}

// A rendezvous send that completes without a last chunk (matched by a
// zero-length receive) leaves nothing in the checks' table of sends: the
// entry goes when the send's completion is in a plan.
func TestCheckSendsTableDoesNotLeak(t *testing.T) {
	for _, cross := range []bool{false, true} {
		nodes := checkNodes(t, cross, check.Mode{Buffers: true, Flow: true})
		src := message(100000)
		for i := range 5 {
			seq := uint64(i + 1)
			rankBlock(nodes, 0).Post(proto.Descriptor{Kind: proto.KindSend, Rank: 0, Peer: 1, Tag: 5, Req: uint32(i), Seq: seq, Addr: addrOf(src), Len: uint64(len(src))}, nil)
			rankBlock(nodes, 1).Post(proto.Descriptor{Kind: proto.KindRecv, Rank: 1, Peer: 0, Tag: 5, Req: uint32(i), Seq: seq}, nil)
		}
		if err := runSlices(nodes, 4); err != nil {
			t.Fatal(err)
		}
		if !rankBlock(nodes, 0).Done(4) {
			t.Fatalf("cross %v: the fifth send did not complete", cross)
		}
		if n := len(nodes[0].a.chk.sends); n != 0 {
			t.Errorf("cross %v: %d sends left in the checks' table after they completed", cross, n)
		}
	}
}

// servePulls plays receiving rank blk as a rank blocked in a call does: it
// offers to serve pull orders and serves each one, copying every entry into
// dst (the receive buffer) with copyIn and storing the sum of what it
// copied, as package mpiapi does: before reporting the order done, or,
// deferred (flow alone), after it, once the agent has compared the previous
// order's sums. It stops when the returned function is called.
func servePulls(t *testing.T, blk *shm.RankBlock, dst []byte, deferred bool, copyIn func(d []byte, src uint64) error) (stop func()) {
	t.Helper()
	old := pullGrace
	pullGrace = time.Minute // the test's rank may be slow to run on a loaded host
	done, quit := make(chan struct{}), make(chan struct{})
	if !blk.OfferPull() {
		t.Fatal("offer already on")
	}
	go func() {
		defer close(done)
		var last uint32 // deferred: the last order whose sums were stored
		for {
			select {
			case <-quit:
				return
			default:
			}
			if !blk.TakePull() {
				runtime.Gosched()
				continue
			}
			seq, n := blk.PullOrder()
			copied := 0
			var sums []uint32
			for ; copied < n; copied++ {
				e := blk.PullEntry(copied)
				d := dst[e.DstAddr-addrOf(dst):][:e.Len]
				if copyIn(d, e.SrcAddr) != nil {
					break
				}
				if sums = append(sums, check.Sum(d)); !deferred {
					blk.SetPullSum(copied, sums[copied])
				}
			}
			blk.FinishPull(seq, copied, true)
			unix.FutexWake(blk.PullDone(), 1)
			if deferred {
				for last != 0 && atomic.LoadUint32(blk.PullVerified()) != last {
					select {
					case <-quit:
						return
					default:
						runtime.Gosched()
					}
				}
				for j, s := range sums {
					blk.SetPullSum(j, s)
				}
				atomic.StoreUint32(blk.PullSumsDone(), seq)
				unix.FutexWake(blk.PullSumsDone(), 1)
				last = seq
			}
		}
	}()
	return func() { close(quit); <-done; pullGrace = old }
}

// Pull orders under the flow check: the receiving rank copies large chunks
// within a node itself and sums what it copied. With the buffer checks on
// too, the source sum is taken from the send buffer's block sums at post
// (and the bytes of the partial blocks at a chunk's ends), so the agent
// reads almost nothing of the send buffer; with flow alone it reads every
// byte. Either way a fault in the rank's copy is a runtime bug report, and
// under buffers a send buffer modified before the copy is the program's
// error, recorded for the sender's completion (block 288), not a flow
// violation.
func TestFlowPullOrders(t *testing.T) {
	const size, skip = 5<<19 + 100, 100 // three chunks of at least pullMin; blocks counted from 100 bytes before the message
	me := os.Getpid()
	faithful := func(d []byte, src uint64) error { return unix.ReadFrom(me, d, src) }
	corrupt := func(d []byte, src uint64) error {
		err := unix.ReadFrom(me, d, src)
		d[len(d)/2] ^= 0x40
		return err
	}
	for _, c := range []struct {
		name     string
		mode     check.Mode
		copyIn   func([]byte, uint64) error
		modify   bool   // the program modifies block 288 of its send buffer after the post
		wantErr  string // "": a clean run
		maxRead  int    // bytes of the send buffer the agent may read to sum them
		minRead  int
		written  bool // the sender's record names block 288
		intactOK bool
		summed   int // flow alone: the sender's header has this many blocks summed (its sums taken after the post); 0: no header
	}{
		{name: "buffers,flow", mode: check.Mode{Buffers: true, Flow: true}, copyIn: faithful, maxRead: 3 * 2 * check.BlockSize, intactOK: true},
		{name: "flow", mode: check.Mode{Flow: true}, copyIn: faithful, minRead: size - skip, maxRead: size - skip, intactOK: true},
		{name: "buffers,flow/corrupt", mode: check.Mode{Buffers: true, Flow: true}, copyIn: corrupt, wantErr: "flow check: runtime bug in slice", maxRead: size},
		{name: "flow/corrupt", mode: check.Mode{Flow: true}, copyIn: corrupt, wantErr: "flow check: runtime bug in slice", maxRead: size},
		{name: "buffers,flow/modified", mode: check.Mode{Buffers: true, Flow: true}, copyIn: faithful, modify: true, written: true, maxRead: size},
		// Flow alone, a send with a header: the sums in place are used, the
		// blocks not summed yet are read (from block 320 on: the last 1.25 MiB).
		{name: "flow/header", mode: check.Mode{Flow: true}, copyIn: faithful, summed: check.Blocks(size), maxRead: 3 * 2 * check.BlockSize, intactOK: true},
		{name: "flow/half-summed", mode: check.Mode{Flow: true}, copyIn: faithful, summed: 320, minRead: size - 320*check.BlockSize, maxRead: size - 320*check.BlockSize + 3*2*check.BlockSize, intactOK: true},
		{name: "flow/header/corrupt", mode: check.Mode{Flow: true}, copyIn: corrupt, summed: check.Blocks(size), wantErr: "flow check: runtime bug in slice", maxRead: size},
	} {
		t.Run(c.name, func(t *testing.T) {
			nodes := checkNodes(t, false, c.mode)
			buf := message(size)
			if c.mode.Buffers || c.summed > 0 {
				hdr := check.NewHeader(buf) // the send buffer at post
				if c.summed > 0 {
					check.SetSummed(hdr, c.summed)
				}
				rankBlock(nodes, 0).SetCheck(0, uint64(uintptr(unsafe.Pointer(unsafe.SliceData(hdr)))))
				defer runtime.KeepAlive(hdr)
			}
			if c.modify {
				buf[1<<20+128<<10+2048] ^= 1 // block 288
			}
			src, dst := buf[skip:], make([]byte, size-skip)
			stop := servePulls(t, rankBlock(nodes, 1), dst, !c.mode.Buffers, c.copyIn)
			rankBlock(nodes, 0).Post(proto.Descriptor{Kind: proto.KindSend, Rank: 0, Peer: 1, Tag: 5, Req: 0, Seq: 1, Addr: addrOf(src), Len: uint64(len(src))}, nil)
			rankBlock(nodes, 1).Post(proto.Descriptor{Kind: proto.KindRecv, Rank: 1, Peer: 0, Tag: 5, Req: 0, Seq: 1, Addr: addrOf(dst), Len: uint64(len(dst))}, nil)
			err := runSlices(nodes, 6)
			a := nodes[0].a
			// Flow alone: the last order's sums are compared at a TX after the
			// rank stores them (as a real rank's MPI_Finalize waits for):
			// run slices until then, at most 1000.
			for k := proto.SliceID(7); err == nil && !c.mode.Buffers && a.chk.pend[1].on && k < 1000; k++ {
				err = runSlicesFrom(nodes, k, k)
			}
			stop()
			if a.Pulls().Bytes == 0 {
				t.Fatalf("no pull order served (%+v): the test did not reach the pull path", a.Pulls())
			}
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) || !strings.Contains(err.Error(), "pull order entry") {
					t.Fatalf("err %v, want %q naming the pull order entry", err, c.wantErr)
				}
				t.Log(err)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !c.mode.Buffers { // flow alone: compared at the next TX, and the rank told
				if a.chk.pend[1].on || atomic.LoadUint32(rankBlock(nodes, 1).PullVerified()) == 0 {
					t.Errorf("the served pull order's sums were not compared (pending %v, verified order %d)", a.chk.pend[1].on, atomic.LoadUint32(rankBlock(nodes, 1).PullVerified()))
				}
			}
			if got := int(a.chk.srcRead); got < c.minRead || got > c.maxRead {
				t.Errorf("the agent read %d bytes of the send buffer to sum them, want %d .. %d", got, c.minRead, c.maxRead)
			}
			lo, hi, _, ok := rankBlock(nodes, 0).Written(0)
			if ok != c.written || (ok && (lo != 288 || hi != 288)) {
				t.Errorf("sender's record: blocks %d .. %d, %v; want block 288: %v", lo, hi, ok, c.written)
			}
			if !bytes.Equal(src, dst) {
				t.Errorf("message not delivered as the sender held it")
			}
		})
	}
}

// Spans under flow alone (span.go, flowSpan): a large message within a
// node moves as one span, copied by its receiver across slices, which sums
// it as it copies and stores the sum after reporting the order done; the
// agent takes the source sum from the sender's block sums (read almost
// nothing of the send buffer) and compares when the rank has stored its
// sum. A fault in the receiver's copy is a runtime bug report naming the
// span's plan entry; when the receiver does not take the order the agent
// copies the span's shares itself, each checked as it copies it, and a
// fault there is reported naming the span's entry too.
func TestFlowSpans(t *testing.T) {
	const size = 1<<20 + 13 // one span of 3 slices (spanNode)
	me := os.Getpid()
	faithful := func(d []byte, src uint64) error { return unix.ReadFrom(me, d, src) }
	corrupt := func(d []byte, src uint64) error {
		err := unix.ReadFrom(me, d, src)
		d[len(d)/2] ^= 0x40
		return err
	}
	t.Cleanup(func() { copyFault = nil })
	for _, c := range []struct {
		name     string
		copyIn   func([]byte, uint64) error // nil: the receiver takes no order
		fault    bool                       // the agent's copy corrupts a share
		wantErr  []string
		agentErr bool
	}{
		{name: "receiver", copyIn: faithful},
		{name: "receiver/corrupt", copyIn: corrupt, wantErr: []string{"flow check: runtime bug in slice", "pull order entry 0", "r0->r1"}},
		{name: "agent"},
		{name: "agent/corrupt", fault: true, wantErr: []string{"flow check: runtime bug in slice", "a share of a span copied by the agent", "r0->r1"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			copyFault = nil
			if c.fault {
				copyFault = func(k proto.SliceID, i int, ch *proto.Chunk, data []byte) int {
					if ch.Off > 0 {
						data[len(data)/2] ^= 0x40
					}
					return 1
				}
			}
			tn := spanNodeChecked(t, nil, 0, check.Mode{Flow: true})
			nodes := []*testNode{tn}
			src, dst := message(size), make([]byte, size)
			hdr := check.NewHeader(src) // the sender's sums, taken after its post
			tn.rank[0].SetCheck(0, uint64(uintptr(unsafe.Pointer(unsafe.SliceData(hdr)))))
			defer runtime.KeepAlive(hdr)
			stop := func() {}
			if c.copyIn != nil {
				stop = servePulls(t, tn.rank[1], dst, true, c.copyIn)
			}
			postSpanPair(tn, src, dst)
			err := runSlices(nodes, 4)
			a := tn.a
			for k := proto.SliceID(5); err == nil && a.chk.pend[1].on && k < 1000; k++ {
				err = runSlicesFrom(nodes, k, k)
			}
			stop()
			st := a.Pulls()
			if st.Spans != 1 {
				t.Fatalf("pull stats %+v, want one span", st)
			}
			if c.copyIn != nil && st.Served != 1 {
				t.Fatalf("pull stats %+v, want the span served by the receiver", st)
			}
			if c.wantErr != nil {
				if err == nil {
					t.Fatal("no error; want the flow check's report")
				}
				for _, w := range c.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("%q does not name %q", err, w)
					}
				}
				t.Log(err)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !tn.rank[1].Done(0) || !bytes.Equal(src, dst) {
				t.Fatalf("receive done %v, delivered intact %v", tn.rank[1].Done(0), bytes.Equal(src, dst))
			}
			if c.copyIn != nil {
				if a.chk.pend[1].on || atomic.LoadUint32(tn.rank[1].PullVerified()) == 0 {
					t.Errorf("the span's sum was not compared (pending %v, verified order %d)", a.chk.pend[1].on, atomic.LoadUint32(tn.rank[1].PullVerified()))
				}
				if a.chk.srcRead > check.BlockSize {
					t.Errorf("the agent read %d bytes of the send buffer to sum them, want at most the last partial block", a.chk.srcRead)
				}
			}
		})
	}
}

// Under flow alone a pulled chunk may be larger than the bounce buffer
// (the pull rate, scheduler doc.go "Pulled chunks"); when its receiver does
// not take the order the agent copies it in pieces, each checked, and the
// entry counts as moved once (movePieces): a clean copy passes, a piece
// corrupted or moved twice is reported naming the entry.
func TestFlowPulledChunkInPieces(t *testing.T) {
	const size = 384 << 10
	t.Cleanup(func() { copyFault = nil })
	for _, c := range []struct {
		name  string
		fault func(k proto.SliceID, i int, ch *proto.Chunk, data []byte) int
		want  string
	}{
		{name: "clean"},
		{name: "corrupt", fault: func(k proto.SliceID, i int, ch *proto.Chunk, data []byte) int {
			if ch.Off > 0 {
				data[len(data)/2] ^= 0x40
			}
			return 1
		}, want: "differ from the bytes read at the source"},
		{name: "twice", fault: func(k proto.SliceID, i int, ch *proto.Chunk, data []byte) int {
			if ch.Off > 0 {
				return 2
			}
			return 1
		}, want: "its piece 2 (131072 bytes at offset 262144 of the message, copied by the agent) moved 2 times by its source node, want once"},
	} {
		t.Run(c.name, func(t *testing.T) {
			copyFault = c.fault
			tn := spanNodeChecked(t, nil, shm.PullMin, check.Mode{Flow: true})
			src, dst := message(size), make([]byte, size)
			postSpanPair(tn, src, dst) // the receiver is blocked but does not offer: the agent copies
			err := runSlices([]*testNode{tn}, 1)
			p := tn.a.plan.Load()
			if len(p.Chunks) != 1 || p.Chunks[0].Len != size || uint64(len(tn.a.bounce)) >= size {
				t.Fatalf("slice 1's plan: chunks %+v, bounce %d bytes; want one chunk of %d bytes, larger than the bounce buffer", p.Chunks, len(tn.a.bounce), size)
			}
			if c.want == "" {
				if err != nil || !recvDone(p) || !bytes.Equal(src, dst) {
					t.Fatalf("err %v, receive completed %v, message intact %v", err, recvDone(p), bytes.Equal(src, dst))
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "plan entry 0") {
				t.Fatalf("err %v, want %q naming plan entry 0", err, c.want)
			}
			t.Log(err)
		})
	}
}

// A span's receiver stopped mid-copy by the gang under flow alone
// (spanSettle): the agent takes the copy over, checking what it copies,
// and the receiver's late copy, once it stores its sum, is still compared
// with the source (taken while the send was in flight): a faithful late
// copy passes and the rank is told (so its next order and MPI_Finalize do
// not wait forever), a corrupt one is a runtime bug report.
func TestFlowSpanStoppedCopy(t *testing.T) {
	const size = 1<<20 + 13
	for _, corrupt := range []bool{false, true} {
		tn := spanNodeChecked(t, nil, 0, check.Mode{Flow: true})
		src, dst := message(size), make([]byte, size)
		hdr := check.NewHeader(src)
		tn.rank[0].SetCheck(0, uint64(uintptr(unsafe.Pointer(unsafe.SliceData(hdr)))))
		blk := tn.rank[1]
		old := pullGrace
		pullGrace = time.Minute
		took, release, done := make(chan struct{}), make(chan struct{}), make(chan struct{})
		if !blk.OfferPull() {
			t.Fatal("offer already on")
		}
		go func() { // the receiving rank: takes the order, is stopped, finishes late and stores its sum
			defer close(done)
			for !blk.TakePull() {
				runtime.Gosched()
			}
			close(took)
			seq, _ := blk.PullOrder()
			e := blk.PullEntry(0)
			<-release
			d := dst[e.DstAddr-addrOf(dst):][:e.Len]
			copied := 0
			if unix.ReadFrom(os.Getpid(), d, e.SrcAddr) == nil {
				copied = 1
			}
			if corrupt {
				d[len(d)/2] ^= 0x40
			}
			blk.FinishPull(seq, copied, false)
			unix.FutexWake(blk.PullDone(), 1)
			blk.SetPullSum(0, check.Sum(d))
			atomic.StoreUint32(blk.PullSumsDone(), seq)
			unix.FutexWake(blk.PullSumsDone(), 1)
		}()
		postSpanPair(tn, src, dst)
		tn.slice(t, 1)
		<-took
		oldBound := settleBound
		settleBound = func(*Agent) time.Duration { return 0 } // the copy does not end in time
		tn.a.Gate(false)
		settleBound = oldBound
		if st := tn.a.Pulls(); st.Stopped != 1 || !tn.a.chk.pend[1].on {
			t.Fatalf("pull stats %+v, pending comparison %v; want the copy taken over and its sum awaited", st, tn.a.chk.pend[1].on)
		}
		tn.slice(t, 2)
		tn.slice(t, 3)
		close(release)
		<-done
		pullGrace = old
		var err error
		for k := proto.SliceID(4); err == nil && tn.a.chk.pend[1].on && k < 1000; k++ {
			err = runSlicesFrom([]*testNode{tn}, k, k)
		}
		runtime.KeepAlive(hdr)
		if corrupt {
			if err == nil || !strings.Contains(err.Error(), "flow check: runtime bug in slice 1, plan entry 0") {
				t.Fatalf("corrupt late copy: err %v, want the flow check's report naming slice 1, plan entry 0", err)
			}
			t.Log(err)
			continue
		}
		if err != nil || tn.a.chk.pend[1].on || atomic.LoadUint32(blk.PullVerified()) == 0 || !bytes.Equal(src, dst) {
			t.Fatalf("faithful late copy: err %v, pending %v, verified order %d, intact %v", err, tn.a.chk.pend[1].on, atomic.LoadUint32(blk.PullVerified()), bytes.Equal(src, dst))
		}
	}
}

// A span's order whose receiver was stopped mid-copy (flow alone) is
// compared as far as the rank's done word says it copied, read while the
// word still holds that order: once the agent has looked at it (any
// publish), the rank's done word moving on to a later order (it finished
// another) does not drop the comparison, and a corrupt late copy is still
// reported. A done word that moved on before the agent could read it (the
// rank's word: no later order was posted) fails the job naming the rank,
// not a comparison of nothing. Before, either way the order was marked
// compared with nothing compared.
func TestFlowStoppedOrderCountedFromItsDoneWord(t *testing.T) {
	const size = 1<<20 + 13
	for _, c := range []struct {
		name   string
		looked bool // the agent publishes before the done word moves on
		want   string
	}{
		{"read before the next order", true, "flow check: runtime bug in slice 1, plan entry 0"},
		{"moved on unread", false, "a copied count the order cannot have"},
	} {
		t.Run(c.name, func(t *testing.T) {
			tn := spanNodeChecked(t, nil, 0, check.Mode{Flow: true})
			src, dst := message(size), make([]byte, size)
			hdr := check.NewHeader(src)
			defer runtime.KeepAlive(hdr)
			tn.rank[0].SetCheck(0, uint64(uintptr(unsafe.Pointer(unsafe.SliceData(hdr)))))
			blk := tn.rank[1]
			old := pullGrace
			pullGrace = time.Minute
			defer func() { pullGrace = old }()
			took, release, done := make(chan struct{}), make(chan struct{}), make(chan struct{})
			var seq uint32
			if !blk.OfferPull() {
				t.Fatal("offer already on")
			}
			go func() { // the receiving rank: takes the order, is stopped, finishes late with a corrupt copy
				defer close(done)
				for !blk.TakePull() {
					runtime.Gosched()
				}
				seq, _ = blk.PullOrder()
				e := blk.PullEntry(0)
				close(took)
				<-release
				d := dst[e.DstAddr-addrOf(dst):][:e.Len]
				copied := 0
				if unix.ReadFrom(os.Getpid(), d, e.SrcAddr) == nil {
					copied = 1
				}
				d[len(d)/2] ^= 0x40
				blk.FinishPull(seq, copied, false)
				unix.FutexWake(blk.PullDone(), 1)
				blk.SetPullSum(0, check.Sum(d))
				atomic.StoreUint32(blk.PullSumsDone(), seq)
				unix.FutexWake(blk.PullSumsDone(), 1)
			}()
			postSpanPair(tn, src, dst)
			tn.slice(t, 1)
			<-took
			oldBound := settleBound
			settleBound = func(*Agent) time.Duration { return 0 } // the copy does not end in time
			tn.a.Gate(false)
			settleBound = oldBound
			tn.slice(t, 2)
			close(release)
			<-done
			if c.looked {
				tn.a.publish(nil) // the agent's next publish (a DEM, the end of a TX) looks at the order
			}
			atomic.StoreUint32(blk.PullDone(), seq+1) // the rank's done word moves on
			var err error
			for k := proto.SliceID(3); err == nil && tn.a.chk.pend[1].on && k < 20; k++ {
				err = runSlicesFrom([]*testNode{tn}, k, k)
			}
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err %v (pending %v, verified order %d); want %q", err, tn.a.chk.pend[1].on, atomic.LoadUint32(blk.PullVerified()), c.want)
			}
			t.Log(err)
		})
	}
}

// Under flow alone every piece of a chunk the agent copies in pieces is
// counted on its own: a pulled chunk larger than the bounce buffer whose
// first piece moved twice and whose second was skipped (its bytes were
// already in place, so no sum differs) is reported, naming the piece;
// before, the pieces' two moves in all counted as the entry's one.
// Likewise a span's share copied by the agent that moved twice (correct
// bytes), and a span whose shares and order do not cover the message
// exactly (here the agent's offset skips a block, as an arithmetic slip
// would): each a flow violation naming the slice and the plan entry.
func TestFlowEveryPieceCounted(t *testing.T) {
	t.Cleanup(func() { copyFault = nil })
	for _, c := range []struct {
		name  string
		size  int
		min   uint64 // the scheduler's PullChunkMin: shm.PullMin for a pulled chunk, 0 for a span
		fault func(k proto.SliceID, i int, ch *proto.Chunk, data []byte) int
		skip  bool // after slice 1 the span's offset skips a block
		want  string
	}{
		{name: "pulled chunk: twice and skipped", size: 384 << 10, min: shm.PullMin, fault: func(k proto.SliceID, i int, ch *proto.Chunk, data []byte) int {
			if ch.Off == 0 {
				return 2
			}
			return 0
		}, want: "its piece 1 (262144 bytes at offset 0 of the message, copied by the agent) moved 2 times by its source node, want once"},
		{name: "span share twice", size: 1<<20 + 13, fault: func(k proto.SliceID, i int, ch *proto.Chunk, data []byte) int {
			if i < 0 && ch.Off > 0 {
				return 2
			}
			return 1
		}, want: "moved 2 times by its source node, want once"},
		{name: "span not covered", size: 1<<20 + 13, skip: true, want: "bytes checked of its"},
	} {
		t.Run(c.name, func(t *testing.T) {
			copyFault = c.fault
			tn := spanNodeChecked(t, nil, c.min, check.Mode{Flow: true})
			src, dst := message(c.size), make([]byte, c.size)
			copy(dst[256<<10:], src[256<<10:]) // a skipped piece's bytes already in place
			postSpanPair(tn, src, dst)         // the receiver is blocked but does not offer: the agent copies
			nodes := []*testNode{tn}
			err := runSlicesFrom(nodes, 1, 1)
			if err == nil && c.skip {
				tn.a.sp.off += check.BlockSize
			}
			if err == nil {
				err = runSlicesFrom(nodes, 2, 4)
			}
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "slice 1, plan entry 0") {
				t.Fatalf("err %v, want %q naming slice 1, plan entry 0", err, c.want)
			}
			t.Log(err)
		})
	}
}
