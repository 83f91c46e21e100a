package nicthread

import (
	"bytes"
	"os"
	"runtime"
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

// spanNode is one node with two ranks (this process plays both) and spans
// on: a 256 KiB budget, 384 KiB per span slice, at most 4 slices.
func spanNode(t *testing.T, onRun func(bool)) *testNode {
	t.Helper()
	return spanNodeMin(t, onRun, 0)
}

// spanNodeMin is spanNode with the scheduler's PullChunkMin set to min.
func spanNodeMin(t *testing.T, onRun func(bool), min uint64) *testNode {
	t.Helper()
	return spanNodeChecked(t, onRun, min, check.Mode{})
}

// spanNodeChecked is spanNodeMin with the checks of mode on.
func spanNodeChecked(t *testing.T, onRun func(bool), min uint64, mode check.Mode) *testNode {
	t.Helper()
	g := testGeometry
	g.Ranks = 2
	mem := make([]byte, g.Size())
	region, err := shm.Init(mem, g)
	if err != nil {
		t.Fatal(err)
	}
	sc := core.DefaultSchedConfig
	sc.BytesPerSliceMax, sc.PullBytesPerSlice, sc.SpanSlicesMax, sc.PullChunkMin = 256<<10, 384<<10, 4, min
	tn := &testNode{a: NewAgent(AgentConfig{Node: 0, NodeOf: []proto.NodeID{0, 0}, Sched: sc, Region: region, OnRun: onRun, Check: mode}), mem: mem}
	me := os.Getpid()
	for l := range g.Ranks {
		tn.rank = append(tn.rank, region.Block(l))
		tn.attach(t, l, me, me)
	}
	return tn
}

// slice runs slice k on the single node: DEM, MSM, TX.
func (tn *testNode) slice(t *testing.T, k proto.SliceID) *core.Plan {
	t.Helper()
	batch, err := tn.a.DEM(k)
	if err != nil {
		t.Fatal(err)
	}
	if err := tn.a.MSM(k, batch, tn.a.Status()); err != nil {
		t.Fatal(err)
	}
	if err := tn.a.TX(k, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	return tn.a.plan.Load()
}

// heldRank plays a receiving rank blocked in a call that takes one pull
// order and copies it, but finishes it only once release is closed. took
// is closed when it has taken the order.
func heldRank(t *testing.T, blk *shm.RankBlock, dst []byte) (took, release, done chan struct{}) {
	t.Helper()
	old := pullGrace
	pullGrace = time.Minute // the test's rank may be slow to run on a loaded host
	t.Cleanup(func() { pullGrace = old })
	took, release, done = make(chan struct{}), make(chan struct{}), make(chan struct{})
	if !blk.OfferPull() {
		t.Fatal("offer already on")
	}
	me := os.Getpid()
	go func() {
		defer close(done)
		for !blk.TakePull() {
			runtime.Gosched()
		}
		close(took)
		seq, n := blk.PullOrder()
		copied := 0
		for ; copied < n; copied++ {
			e := blk.PullEntry(copied)
			if unix.ReadFrom(me, dst[e.DstAddr-addrOf(dst):][:e.Len], e.SrcAddr) != nil {
				break
			}
		}
		<-release
		blk.FinishPull(seq, copied, true)
		unix.FutexWake(blk.PullDone(), 1)
	}()
	return took, release, done
}

func postSpanPair(tn *testNode, src, dst []byte) {
	tn.rank[0].Post(proto.Descriptor{Kind: proto.KindSend, Rank: 0, Peer: 1, Tag: 5, Req: 0, Seq: 1, Addr: addrOf(src), Len: uint64(len(src))}, nil)
	tn.rank[1].Post(proto.Descriptor{Kind: proto.KindRecv, Rank: 1, Peer: 0, Tag: 5, Req: 0, Seq: 1, Addr: addrOf(dst), Len: uint64(len(dst))}, nil)
	tn.rank[1].SetBlocked(proto.CallCode("MPI_Wait"))
}

// recvDone reports whether plan p completes rank 1's receive.
func recvDone(p *core.Plan) bool {
	for _, c := range p.Completions {
		if c.Rank == 1 && c.Kind == proto.KindRecv {
			return true
		}
	}
	return false
}

// A receiver that takes the span's order copies it across slices: the
// agent goes on with the next slices while the copy is unfinished, waits
// for it only in the span's last slice, and the receive completes there.
func TestSpanCopiedAcrossSlices(t *testing.T) {
	tn := spanNode(t, nil)
	const size = 1<<20 + 13 // span of 3 slices (ceil(size / 384 KiB)), more than 3 budgets
	src, dst := message(size), make([]byte, size)
	took, release, done := heldRank(t, tn.rank[1], dst)
	postSpanPair(tn, src, dst)
	tn.slice(t, 1) // exchanged, matched, spanned
	p := tn.a.plan.Load()
	if len(p.Chunks) != 1 || p.Chunks[0].Span != 3 || p.Chunks[0].Len != size {
		t.Fatalf("slice 1's plan: %+v, want one span of 3 slices carrying the message", p.Chunks)
	}
	<-took
	if p := tn.slice(t, 2); recvDone(p) || p.Spanning != 1 {
		t.Fatalf("slice 2: receive completed %v, spanning %d; want in flight", recvDone(p), p.Spanning)
	}
	close(release) // the last slice waits for the receiver's copy
	if p := tn.slice(t, 3); !recvDone(p) {
		t.Fatal("slice 3, the span's last: the receive did not complete")
	}
	<-done
	if st := tn.a.Pulls(); st.Spans != 1 || st.Served != 1 || st.Bytes != size {
		t.Errorf("pull stats %+v, want one span served by the receiver, %d bytes", st, size)
	}
	if !bytes.Equal(src, dst) {
		t.Error("message not delivered as sent")
	}
}

// A receiver that never takes the order (blocked, but not offering): the
// agent copies the span's share in each slice, the rest divided by the
// slices left, and all of it by the end of the last.
func TestSpanCopiedByTheAgent(t *testing.T) {
	tn := spanNode(t, nil)
	const size = 1<<20 + 13
	src, dst := message(size), make([]byte, size)
	postSpanPair(tn, src, dst)
	prefix := func() int {
		for i := range dst {
			if dst[i] != src[i] {
				return i
			}
		}
		return size
	}
	tn.slice(t, 1)
	if got, want := prefix(), (size+2)/3; got != want {
		t.Errorf("after the span's first slice the agent copied %d bytes, want a third: %d", got, want)
	}
	tn.slice(t, 2)
	if got, want := prefix(), (size+2)/3+(size-(size+2)/3+1)/2; got != want {
		t.Errorf("after the second slice %d bytes, want %d", got, want)
	}
	if p := tn.slice(t, 3); !recvDone(p) || !bytes.Equal(src, dst) {
		t.Errorf("after the last slice: receive completed %v, message intact %v", recvDone(p), bytes.Equal(src, dst))
	}
	if st := tn.a.Pulls(); st.Spans != 1 || st.Bytes != 0 {
		t.Errorf("pull stats %+v, want one span, no byte copied by the receiver", st)
	}
}

// Before the gang stops the ranks (Gate false), a receiver copying a span
// finishes its copy: when OnRun stops them, the order is served; the agent
// then copies nothing more and the receive completes in the span's last
// slice, the job stopped.
func TestSpanGateLetsTheCopyFinish(t *testing.T) {
	var tn *testNode
	var servedAtStop atomic.Int32
	tn = spanNode(t, func(run bool) {
		if !run {
			done, _, _ := tn.rank[1].PullResult(tn.a.sp.seq, 1)
			if done {
				servedAtStop.Store(2)
			} else {
				servedAtStop.Store(1)
			}
		}
	})
	const size = 1<<20 + 13
	src, dst := message(size), make([]byte, size)
	took, release, done := heldRank(t, tn.rank[1], dst)
	postSpanPair(tn, src, dst)
	tn.slice(t, 1)
	<-took
	// The receiver finishes only once the agent waits for it before
	// stopping the ranks: an agent that did not wait would stop them first.
	released := false
	spanSettling = func() { close(release); released = true }
	defer func() { spanSettling = nil }()
	oldBound := settleBound
	settleBound = func(*Agent) time.Duration { return time.Minute } // the test's rank may be slow to run
	defer func() { settleBound = oldBound }()
	tn.a.Gate(false)
	if !released {
		close(release)
	}
	<-done
	if servedAtStop.Load() != 2 {
		t.Fatal("the ranks were stopped while the receiver's span copy was unfinished")
	}
	tn.slice(t, 2)
	if p := tn.slice(t, 3); !recvDone(p) || !bytes.Equal(src, dst) {
		t.Errorf("the span's last slice, job stopped: receive completed %v, message intact %v", recvDone(p), bytes.Equal(src, dst))
	}
}

// A rank that serves no pull orders (it left one unfinished, or its host's
// Yama setting refuses sibling reads) says so in its status byte, and the
// scheduler gives it chunks, not a span its agent would copy alone.
func TestSpanNotToARankThatServesNoPulls(t *testing.T) {
	for _, c := range []struct {
		name    string
		refused bool // the host refuses sibling reads (NewAgent)
	}{{"left an order unfinished", false}, {"host refuses sibling reads", true}} {
		t.Run(c.name, func(t *testing.T) {
			old := siblingReadsRefused
			siblingReadsRefused = func() bool { return c.refused }
			defer func() { siblingReadsRefused = old }()
			tn := spanNode(t, nil)
			if !c.refused {
				tn.a.noPull[1] = true // as spanResult and the pull path set it
			}
			const size = 1<<20 + 13
			src, dst := message(size), make([]byte, size)
			postSpanPair(tn, src, dst)
			p := tn.slice(t, 1)
			if st := tn.a.Status()[1]; !proto.StatusServesNoPulls(st) || !proto.StatusBlocked(st) {
				t.Fatalf("rank 1's status byte %#x (%s), want blocked and serving no pull orders", st, proto.DescribeStatus(st))
			}
			if len(p.Chunks) != 1 || p.Chunks[0].Span != 0 || p.Chunks[0].Len != 256<<10 {
				t.Fatalf("slice 1's plan: %+v, want one chunk of the budget, no span", p.Chunks)
			}
			for k := proto.SliceID(2); !recvDone(p); k++ {
				if k > 6 {
					t.Fatal("the receive did not complete in 5 slices of chunks")
				}
				p = tn.slice(t, k)
				for _, ch := range p.Chunks {
					if ch.Span != 0 {
						t.Fatalf("slice %d: a span %s to a rank serving no pulls", k, ch.Describe())
					}
				}
			}
			if st := tn.a.Pulls(); st.Spans != 0 || st.Served != 0 || !bytes.Equal(src, dst) {
				t.Errorf("pull stats %+v, message intact %v; want no span, no order served", st, bytes.Equal(src, dst))
			}
		})
	}
}

// A job stopped (Ctrl-Z) while its span's receiver copies: the agent's
// clock jumps past the deadline of the span's last slice while neither it
// nor the receiver ran. The stopped time does not count: the receiver,
// resumed, finishes and the receive completes instead of the job failing.
func TestSpanDeadlineSkipsStoppedTime(t *testing.T) {
	tn := spanNode(t, nil)
	const size = 1<<20 + 13
	src, dst := message(size), make([]byte, size)
	took, release, done := heldRank(t, tn.rank[1], dst)
	postSpanPair(tn, src, dst)
	tn.slice(t, 1)
	<-took
	tn.slice(t, 2)
	var jump time.Duration
	looks := 0
	tn.a.spanNow = func() time.Duration {
		looks++
		if looks == 2 { // stopped for longer than the TX timeout (10 s) between two looks
			jump = time.Minute
			close(release) // resumed: the receiver goes on with its copy
		}
		return tn.a.now() + jump
	}
	if p := tn.slice(t, 3); !recvDone(p) || !bytes.Equal(src, dst) {
		t.Errorf("the span's last slice after the stop: receive completed %v, message intact %v", recvDone(p), bytes.Equal(src, dst))
	}
	<-done
	if looks < 2 {
		t.Fatalf("the agent looked at the order %d times, want it to wait across the stop", looks)
	}
}

// A receiver that does not finish its span's copy before the gang stops the
// ranks (stopped mid-copy) is not waited for: the agent takes the copy
// over in the slices the job does not run, and the receive completes in
// the span's last slice without the receiver; the receiver, continued,
// finishes its copy of the same bytes late and harmlessly.
func TestSpanGateTakesOverAStoppedCopy(t *testing.T) {
	tn := spanNode(t, nil)
	const size = 1<<20 + 13
	src, dst := message(size), make([]byte, size)
	took, release, done := heldRank(t, tn.rank[1], dst)
	postSpanPair(tn, src, dst)
	tn.slice(t, 1)
	<-took
	oldBound := settleBound
	settleBound = func(*Agent) time.Duration { return 0 } // the copy does not end in time
	defer func() { settleBound = oldBound }()
	tn.a.Gate(false)
	if st := tn.a.Pulls(); st.Stopped != 1 || tn.a.sp.posted {
		t.Fatalf("pull stats %+v, order still waited for %v; want the copy taken over", st, tn.a.sp.posted)
	}
	tn.slice(t, 2)
	if p := tn.slice(t, 3); !recvDone(p) || !bytes.Equal(src, dst) {
		t.Fatalf("the span's last slice, the receiver stopped mid-copy: receive completed %v, message intact %v", recvDone(p), bytes.Equal(src, dst))
	}
	close(release) // continued: it finishes its copy late
	<-done
	if !bytes.Equal(src, dst) {
		t.Error("message changed by the receiver's late copy")
	}
}

// settleWait: the receiver's expected copy time at two budgets per slice,
// less the time since posting, plus a slice; at most 4 slices and a second.
func TestSpanSettleWait(t *testing.T) {
	const ms = time.Millisecond
	for _, c := range []struct {
		rem, budget  uint64
		slice, since time.Duration
		want         time.Duration
	}{
		{rem: 4 << 20, budget: 1 << 20, slice: ms, since: 0, want: 3 * ms},                // 2 slices of copy + 1
		{rem: 4 << 20, budget: 1 << 20, slice: ms, since: 2 * ms, want: ms},               // due now: one slice
		{rem: 4 << 20, budget: 1 << 20, slice: ms, since: 10 * ms, want: ms},              // overdue: one slice
		{rem: 64 << 20, budget: 1 << 20, slice: ms, since: 0, want: 4 * ms},               // capped at 4 slices
		{rem: 64 << 20, budget: 1 << 20, slice: 0, since: 0, want: 10 * ms},               // slice unknown
		{rem: 64 << 20, budget: 1 << 20, slice: time.Second, since: 0, want: time.Second}, // at most a second
	} {
		if got := settleWait(c.rem, c.budget, c.slice, c.since); got != c.want {
			t.Errorf("settleWait(%d, %d, %v, %v) = %v, want %v", c.rem, c.budget, c.slice, c.since, got, c.want)
		}
	}
}

// A pulled chunk (scheduler doc.go, "Pulled chunks"): 384 KiB to a blocked
// receiver, too little for a span (no more than two budgets), moves in one
// slice as one chunk of 1.5 budgets; the receiver copies it.
func TestPulledChunkServedByTheReceiver(t *testing.T) {
	tn := spanNodeMin(t, nil, shm.PullMin)
	const size = 384 << 10
	src, dst := message(size), make([]byte, size)
	took, release, done := heldRank(t, tn.rank[1], dst)
	close(release)
	postSpanPair(tn, src, dst)
	p := tn.slice(t, 1)
	if len(p.Chunks) != 1 || p.Chunks[0].Span != 0 || p.Chunks[0].Len != size || !recvDone(p) {
		t.Fatalf("slice 1's plan: chunks %+v, receive completed %v; want one chunk of %d bytes, completed", p.Chunks, recvDone(p), size)
	}
	<-took
	<-done
	if st := tn.a.Pulls(); st.Served != 1 || st.Bytes != size || st.Revoked != 0 {
		t.Errorf("pull stats %+v, want one order served by the receiver, %d bytes", st, size)
	}
	if !bytes.Equal(src, dst) {
		t.Error("message not delivered as sent")
	}
}

// A pulled chunk larger than the agent's bounce buffer (the budget) whose
// receiver does not offer: the agent copies it in pieces that fit.
func TestPulledChunkCopiedByTheAgent(t *testing.T) {
	tn := spanNodeMin(t, nil, shm.PullMin)
	const size = 384 << 10
	src, dst := message(size), make([]byte, size)
	postSpanPair(tn, src, dst)
	p := tn.slice(t, 1)
	if len(p.Chunks) != 1 || p.Chunks[0].Len != size || uint64(len(tn.a.bounce)) >= size {
		t.Fatalf("slice 1's plan: chunks %+v, bounce %d bytes; want one chunk of %d bytes, larger than the bounce buffer", p.Chunks, len(tn.a.bounce), size)
	}
	if !recvDone(p) || !bytes.Equal(src, dst) {
		t.Errorf("slice 1: receive completed %v, message intact %v", recvDone(p), bytes.Equal(src, dst))
	}
	if st := tn.a.Pulls(); st.Served != 0 || st.Bytes != 0 {
		t.Errorf("pull stats %+v, want no order served", st)
	}
}

// A span's receiver stopped by the gang mid-copy (spanSettle: the agent
// takes the copy over) has copied part of the span and, once continued,
// copies the rest from the send buffer. The sender's completion is
// published only once the receiver's order is done: before, it was
// published in the span's last slice, the receiver still stopped, and a
// sender that reused its buffer then (as MPI allows) had its new bytes
// copied over the agent's correct copy by the continued receiver. Under
// flow alone the receiver's late copy is compared too, and passes.
func TestSpanStoppedReceiverHoldsSendCompletion(t *testing.T) {
	for _, mode := range []check.Mode{{}, {Flow: true}} {
		t.Run(mode.String(), func(t *testing.T) {
			tn := spanNodeChecked(t, nil, 0, mode)
			const size = 1<<20 + 13
			src, dst := message(size), make([]byte, size)
			orig := bytes.Clone(src)
			hdr := check.NewHeader(src)
			if mode.Flow {
				tn.rank[0].SetCheck(0, uint64(uintptr(unsafe.Pointer(unsafe.SliceData(hdr)))))
			}
			defer runtime.KeepAlive(hdr)
			blk := tn.rank[1]
			old := pullGrace
			pullGrace = time.Minute
			defer func() { pullGrace = old }()
			took, release, done := make(chan struct{}), make(chan struct{}), make(chan struct{})
			if !blk.OfferPull() {
				t.Fatal("offer already on")
			}
			go func() { // the receiving rank: copies half, is stopped, is continued and copies the rest
				defer close(done)
				for !blk.TakePull() {
					runtime.Gosched()
				}
				seq, _ := blk.PullOrder()
				e := blk.PullEntry(0)
				d := dst[e.DstAddr-addrOf(dst):][:e.Len]
				half := len(d) / 2
				copied := 0
				if unix.ReadFrom(os.Getpid(), d[:half], e.SrcAddr) == nil {
					close(took)
					<-release
					if unix.ReadFrom(os.Getpid(), d[half:], e.SrcAddr+uint64(half)) == nil {
						copied = 1
					}
				} else {
					close(took)
				}
				blk.FinishPull(seq, copied, false)
				unix.FutexWake(blk.PullDone(), 1)
				if mode.Flow {
					blk.SetPullSum(0, check.Sum(d))
					atomic.StoreUint32(blk.PullSumsDone(), seq)
					unix.FutexWake(blk.PullSumsDone(), 1)
				}
			}()
			postSpanPair(tn, src, dst)
			tn.slice(t, 1)
			<-took
			oldBound := settleBound
			settleBound = func(*Agent) time.Duration { return 0 } // the copy does not end in time
			tn.a.Gate(false)
			settleBound = oldBound
			if st := tn.a.Pulls(); st.Stopped != 1 {
				t.Fatalf("pull stats %+v, want the copy taken over", st)
			}
			k := proto.SliceID(2)
			for ; k <= 5; k++ { // the span ends in slice 3; its completions are published by slice 5's DEM
				tn.slice(t, k)
			}
			if !bytes.Equal(dst[len(dst)/2:], orig[len(dst)/2:]) {
				t.Fatal("the agent did not copy the span's rest while the receiver was stopped")
			}
			sent := tn.rank[0].Done(0)
			if sent {
				t.Errorf("the send completed while its receiver was stopped mid-copy")
				for i := range src { // the sender reuses its buffer, as it may once its send completed
					src[i] = ^src[i]
				}
			}
			tn.a.Gate(true)
			close(release)
			<-done
			for ; !tn.rank[0].Done(0) && k < 20; k++ {
				tn.slice(t, k)
			}
			if !tn.rank[0].Done(0) || !tn.rank[1].Done(0) {
				t.Fatalf("after the receiver's copy: send completed %v, receive completed %v; want both", tn.rank[0].Done(0), tn.rank[1].Done(0))
			}
			if !bytes.Equal(dst, orig) {
				t.Errorf("the receive buffer differs from the message sent")
			}
			if mode.Flow && (tn.a.chk.pend[1].on || atomic.LoadUint32(blk.PullVerified()) == 0) {
				t.Errorf("the late copy was not compared (pending %v, verified order %d)", tn.a.chk.pend[1].on, atomic.LoadUint32(blk.PullVerified()))
			}
		})
	}
}

// The sender's completion held back for a receiver stopped mid-copy is not
// held forever: a receiver whose process exits (its job fails anyway)
// releases it at the next publish.
func TestSpanStoppedReceiverExitReleasesSend(t *testing.T) {
	tn := spanNode(t, nil)
	const size = 1<<20 + 13
	src, dst := message(size), make([]byte, size)
	took, release, done := heldRank(t, tn.rank[1], dst)
	defer func() { close(release); <-done }()
	postSpanPair(tn, src, dst)
	tn.slice(t, 1)
	<-took
	oldBound := settleBound
	settleBound = func(*Agent) time.Duration { return 0 } // the copy does not end in time
	defer func() { settleBound = oldBound }()
	tn.a.Gate(false)
	for k := proto.SliceID(2); k <= 5; k++ {
		tn.slice(t, k)
	}
	if tn.rank[0].Done(0) || !tn.rank[1].Done(0) {
		t.Fatalf("receiver stopped mid-copy: send completed %v, receive completed %v; want the send held back", tn.rank[0].Done(0), tn.rank[1].Done(0))
	}
	tn.a.RankExited(1)
	tn.slice(t, 6)
	if !tn.rank[0].Done(0) {
		t.Fatal("the receiver exited: the send's completion is still held back")
	}
}
