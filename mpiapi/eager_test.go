package mpiapi

import (
	"bytes"
	"io"
	"os"
	"slices"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bcsmpi/bcsmpi/internal/proto"
	"github.com/bcsmpi/bcsmpi/internal/shm"
	"github.com/bcsmpi/bcsmpi/internal/unix"
)

// seen is a descriptor the fake agent drained, with a copy of its inline payload.
type seen struct {
	d   proto.Descriptor
	inl []byte
}

// fakeAgent plays the agent for p in a goroutine, one round per loop: it
// drains the ring, and if exchange() says so, starts the next slice,
// completes every send drained so far (as the scheduler completes a
// buffered send when it is exchanged) and wakes the rank. stop ends it and
// returns what it drained, in post order.
func fakeAgent(t *testing.T, p *process, exchange func() bool) (stop func() []seen) {
	t.Helper()
	quit, out := make(chan struct{}), make(chan []seen)
	go func() {
		var all []seen
		next := 0 // all[next:] are not yet completed
		drain := func() {
			if _, err := p.blk.Drain(p.region.Slice()+1, func(d proto.Descriptor, inl []byte) error {
				all = append(all, seen{d, bytes.Clone(inl)})
				return nil
			}); err != nil {
				panic(err) // the test's own ring: a broken invariant
			}
		}
		for {
			select {
			case <-quit:
				drain() // what was posted before stop
				out <- all
				return
			default:
			}
			drain()
			if next < len(all) && exchange() {
				p.region.SetSlice(p.region.Slice() + 1)
				for ; next < len(all); next++ {
					if d := all[next].d; d.Kind == proto.KindSend {
						p.blk.Complete(proto.Completion{Req: d.Req, Kind: proto.KindSend, Source: d.Peer, Tag: d.Tag, Count: d.Len})
					}
				}
				atomic.AddUint32(p.blk.Wake(), 1)
				unix.FutexWake(p.blk.Wake(), 1)
			}
			time.Sleep(20 * time.Microsecond) // a poll loop's pause, not a timing assumption
		}
	}()
	return func() []seen {
		close(quit)
		return <-out
	}
}

// TestSendReturnsAtPost: a blocking send of at most inline_max bytes
// returns in the slice it was posted in, without waiting for its exchange
// (the fake agent exchanges only once the rank blocks, as a rank waiting
// for its completion would), so a receive posted right after it goes out
// in the same slice. The send's request is released and waits in
// process.eager; its completion record is consumed later and its slot
// comes back. A larger send still waits for its completion.
func TestSendReturnsAtPost(t *testing.T) {
	p := fakeRank(t)
	p.region.SetSlice(5)
	stop := fakeAgent(t, p, func() bool { return p.blk.Blocked() != 0 })
	msg := []byte("eager!")
	sent := TrafficSoFar().MsgsSent
	if err := Send(World(), msg, 1, 7); err != nil {
		stop()
		t.Fatal(err)
	}
	returned := p.region.Slice()
	sentAtReturn := TrafficSoFar().MsgsSent - sent
	copy(msg, "XXXXXX") // the buffer is the program's again
	r, err := Irecv(World(), make([]byte, 8), 1, 8)
	all := stop()
	if err != nil {
		t.Fatal(err)
	}
	if returned != 5 {
		t.Fatalf("MPI_Send returned in slice %d, want 5 (the slice it was posted in): it waited for its exchange", returned)
	}
	if len(all) != 2 {
		t.Fatalf("the agent drained %d descriptors, want the send and the receive", len(all))
	}
	s, rv := all[0], all[1]
	if s.d.Kind != proto.KindSend || !s.d.Inline || s.d.Tag != 7 || string(s.inl) != "eager!" {
		t.Fatalf("first descriptor %s (inline %v, payload %q), want the inline send of %q with tag 7", s.d.Describe(), s.d.Inline, s.inl, "eager!")
	}
	if rv.d.Kind != proto.KindRecv || rv.d.PostSlice != s.d.PostSlice {
		t.Fatalf("the receive %s was posted in slice %d, the send in %d: want the same slice", rv.d.Describe(), rv.d.PostSlice, s.d.PostSlice)
	}
	if len(p.eager) != 1 || p.eager[0].retiredBy != "MPI_Send" || len(p.live) != 1 {
		t.Fatalf("eager %d, live %d: want the send released (eager, retired by MPI_Send) and the receive live", len(p.eager), len(p.live))
	}
	if len(p.free) != 14 {
		t.Fatalf("%d free request slots, want 14 (the send's until its exchange, the receive's)", len(p.free))
	}
	p.blk.Complete(proto.Completion{Req: s.d.Req, Kind: proto.KindSend, Source: 1, Tag: 7, Count: 6})
	if !p.eagerDone() || len(p.free) != 15 {
		t.Fatalf("after the exchange: %d eager sends pending, %d free slots; want 0 and 15", len(p.eager), len(p.free))
	}
	if n := TrafficSoFar().MsgsSent - sent; sentAtReturn != 1 || n != 1 {
		t.Fatalf("messages sent: %d when MPI_Send returned, %d after its exchange; want 1 and 1 (counted once, when the program sees it sent)", sentAtReturn, n)
	}
	if lk := p.leaks(); len(lk) != 1 {
		t.Fatalf("leaks %q, want only the pending receive", lk)
	}
	complete(p, r, 8, 0)
	if _, err := Wait(r); err != nil {
		t.Fatal(err)
	}

	// Over inline_max: not eager; it returns once completed, a slice later.
	stop = fakeAgent(t, p, func() bool { return p.blk.Blocked() != 0 })
	err = Send(World(), make([]byte, 65), 1, 9)
	returned = p.region.Slice()
	all = stop()
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 1 || all[0].d.Inline || returned != 6 || len(p.eager) != 0 {
		t.Fatalf("the 65-byte send: %d descriptors (inline %v), returned in slice %d, %d eager; want one not inline, slice 6, none eager", len(all), len(all) > 0 && all[0].d.Inline, returned, len(p.eager))
	}
}

// TestEagerSendsBounded: a stream of eager sends longer than the request
// slots or the ring waits for the exchanges instead of failing (the slots
// are the eager sends', so the program has nothing to wait for), every
// message goes out once, in order, with its contents, and the wait
// Finalize makes (eagerDone) ends only once all were exchanged.
func TestEagerSendsBounded(t *testing.T) {
	for _, tc := range []struct {
		name string
		g    shm.Geometry
	}{
		{"slots", shm.Geometry{Ranks: 1, RingSlots: 256, ReqMax: 4, InlineMax: 64}},
		{"ring", shm.Geometry{Ranks: 1, RingSlots: 8, ReqMax: 64, InlineMax: 64}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := fakeRankG(t, tc.g)
			p.slice = time.Millisecond
			stop := fakeAgent(t, p, func() bool { return true })
			const n = 40
			var sendErr error
			for i := range n {
				b := bytes.Repeat([]byte{byte(i)}, i%64+1)
				if sendErr = Send(World(), b, 1, i); sendErr != nil {
					break
				}
				b[0] = 0xff // reused at once
			}
			if sendErr == nil {
				p.block("MPI_Finalize", p.eagerDone)
			}
			all := stop()
			if sendErr != nil {
				t.Fatalf("a send failed: %v", sendErr)
			}
			if len(p.eager) != 0 || len(p.free) != tc.g.ReqMax {
				t.Fatalf("after the wait: %d eager sends pending, %d of %d slots free", len(p.eager), len(p.free), tc.g.ReqMax)
			}
			if len(all) != n {
				t.Fatalf("the agent drained %d sends, want %d", len(all), n)
			}
			for i, s := range all {
				if want := bytes.Repeat([]byte{byte(i)}, i%64+1); s.d.Tag != int32(i) || !s.d.Inline || !bytes.Equal(s.inl, want) {
					t.Fatalf("send %d: %s inline %v payload %x, want tag %d and %x", i, s.d.Describe(), s.d.Inline, s.inl, i, want)
				}
			}
			if tc.name == "ring" && atomic.LoadUint64(p.blk.FullWaits()) == 0 {
				t.Fatalf("no send found the ring full: the case does not test the full ring")
			}
		})
	}
}

// TestFinalizeWaitsForEagerSends: Finalize does not detach while an eager
// send is not yet exchanged. The fake agent exchanges only once the rank is
// blocked, so a Finalize that did not wait would return with the send
// still pending.
func TestFinalizeWaitsForEagerSends(t *testing.T) {
	p := fakeRank(t)
	if err := Send(World(), []byte("last"), 1, 3); err != nil {
		t.Fatal(err)
	}
	if p.eagerDone() {
		t.Fatalf("the send completed with no agent: the scenario needs it pending")
	}
	stop := fakeAgent(t, p, func() bool { return p.blk.Blocked() != 0 })
	err := Finalize()
	all := stop()
	if err != nil {
		t.Fatal(err)
	}
	if len(p.eager) != 0 || len(p.free) != 16 {
		t.Fatalf("Finalize returned with %d eager sends pending and %d of 16 slots free", len(p.eager), len(p.free))
	}
	if len(all) != 1 || string(all[0].inl) != "last" {
		t.Fatalf("the agent drained %d descriptors, want the send of %q", len(all), "last")
	}
}

// eagerFull fills every request slot of p with eager sends the fake agent
// has not exchanged yet.
func eagerFull(t *testing.T, p *process) {
	t.Helper()
	for i := range len(p.free) {
		if err := Send(World(), []byte{byte(i)}, 1, i); err != nil {
			t.Fatal(err)
		}
	}
	if len(p.free) != 0 || len(p.eager) == 0 {
		t.Fatalf("%d free slots, %d eager sends: want none free, all eager", len(p.free), len(p.eager))
	}
}

// TestAwaitEagerInsideBlockedCall: a request made inside a blocked call's
// condition (a chain's next step) while eager sends hold every slot waits
// for their exchange as the blocked call does: serving the progress
// function and setting the seen word each time it looks, and leaving the
// call's blocked state as it was. The fake agent exchanges only once the
// rank sleeps, so the request must wait.
func TestAwaitEagerInsideBlockedCall(t *testing.T) {
	p := fakeRankG(t, shm.Geometry{Ranks: 1, RingSlots: 256, ReqMax: 2, InlineMax: 64})
	p.slice = time.Millisecond
	eagerFull(t, p)
	nested, calls := false, 0
	SetProgress(func() {
		if nested {
			calls++
		}
	})
	t.Cleanup(func() { SetProgress(nil) })
	stop := fakeAgent(t, p, func() bool { return atomic.LoadUint32(p.blk.Sleeping()) == 1 })
	var (
		r        *Request
		err      error
		blocked  uint32
		seenWord uint32
	)
	p.block("MPI_Wait", func() bool {
		if p.blk.Blocked() == 0 {
			return false // block looks once before it reports the rank blocked
		}
		nested = true
		const sentinel = 0xdead // never a wake count here
		p.blk.SetSeen(sentinel)
		r, err = p.newRequest("MPI_Isend", proto.KindSend, nil, 1)
		nested = false
		blocked, seenWord = uint32(p.blk.Blocked()), p.blk.Seen()^sentinel
		return true
	})
	stop()
	if err != nil {
		t.Fatalf("the request inside the blocked call failed: %v", err)
	}
	if calls == 0 {
		t.Fatalf("the progress function never ran while the request waited for a slot")
	}
	if seenWord == 0 {
		t.Fatalf("the seen word was not set while the request waited for a slot (the agent would revoke pull orders)")
	}
	if blocked == 0 {
		t.Fatalf("the blocked call's state was cleared by the wait inside it")
	}
	if p.blocking || p.blk.Blocked() != 0 {
		t.Fatalf("after the call: blocking %v, blocked %d; want both cleared", p.blocking, p.blk.Blocked())
	}
	p.finish(r) // give the slot back: the fake request has no completion
}

// TestAwaitEagerNotInProgress: the progress function must never block, so
// a request made inside it while eager sends hold every slot fails at once
// (as when every slot is the program's) instead of waiting for their
// exchange; the fake agent exchanges only once the rank sleeps.
func TestAwaitEagerNotInProgress(t *testing.T) {
	p := fakeRankG(t, shm.Geometry{Ranks: 1, RingSlots: 256, ReqMax: 2, InlineMax: 64})
	p.slice = time.Millisecond
	eagerFull(t, p)
	var err error
	ran := false
	SetProgress(func() {
		ran = true
		_, err = p.newRequest("MPI_Irecv", proto.KindRecv, nil, 1)
	})
	t.Cleanup(func() { SetProgress(nil) })
	stop := fakeAgent(t, p, func() bool { return atomic.LoadUint32(p.blk.Sleeping()) == 1 })
	slice := p.region.Slice()
	p.progress()
	after := p.region.Slice()
	stop()
	if !ran {
		t.Fatal("the progress function did not run")
	}
	if err == nil || after != slice {
		t.Fatalf("inside the progress function: error %v, slice %d then %d; want the slots-full error at once, in the same slice", err, slice, after)
	}
}

// TestEagerSendWaitsForMatch (eager_max): a flood of blocking sends to a
// receiver that matches one message only when the sender is blocked. The
// fake agent exchanges every send at once (so request slots never run
// short) and counts the eager sends it drained that are not yet matched:
// that count reaches the limit, max(eager_max, size), and never passes it;
// a Send returns past it only after a match (so at least N-limit+1 matches
// were needed); every descriptor carries the Eager flag and its payload,
// in order; EagerHeld reports the same; the rank shows the status
// proto.CallSendMatch while it waits.
func TestEagerSendWaitsForMatch(t *testing.T) {
	for _, tc := range []struct {
		eagerMax int
		limit    uint64 // the job has 2 ranks
	}{{4, 4}, {1, 2}} {
		t.Run(strconv.Itoa(tc.eagerMax), func(t *testing.T) {
			p := fakeRankG(t, shm.Geometry{Ranks: 1, RingSlots: 256, ReqMax: 64, InlineMax: 64, EagerMax: tc.eagerMax})
			type result struct {
				all           []seen
				matched, most uint64
				code          uint8 // a blocked code other than proto.CallSendMatch
			}
			quit, out := make(chan struct{}), make(chan result)
			go func() {
				var r result
				wake := func() {
					atomic.AddUint32(p.blk.Wake(), 1)
					unix.FutexWake(p.blk.Wake(), 1)
				}
				for {
					n := len(r.all)
					if _, err := p.blk.Drain(p.region.Slice()+1, func(d proto.Descriptor, inl []byte) error {
						r.all = append(r.all, seen{d, bytes.Clone(inl)})
						return nil
					}); err != nil {
						panic(err) // the test's own ring: a broken invariant
					}
					if len(r.all) > n { // exchanged: the buffered sends complete
						p.region.SetSlice(p.region.Slice() + 1)
						for _, s := range r.all[n:] {
							p.blk.Complete(proto.Completion{Req: s.d.Req, Kind: proto.KindSend, Source: s.d.Peer, Tag: s.d.Tag, Count: s.d.Len})
						}
						wake()
					}
					r.most = max(r.most, uint64(len(r.all))-r.matched)
					select {
					case <-quit:
						out <- r
						return
					default:
					}
					// The receiver takes one once the rank is blocked and all it
					// posted was drained (and counted above).
					if c := p.blk.Blocked(); c != 0 && c != proto.CallSendMatch {
						r.code = c
					}
					if p.blk.Blocked() != 0 && p.blk.Undrained() == 0 && r.matched < uint64(len(r.all)) {
						r.matched++
						p.blk.SetEagerMatched(r.matched)
						wake()
					}
					time.Sleep(20 * time.Microsecond) // a poll loop's pause, not a timing assumption
				}
			}()
			const n = 60
			for i := range n {
				b := bytes.Repeat([]byte{byte(i)}, i%64+1)
				if err := Send(World(), b, 1, i); err != nil {
					t.Fatalf("send %d: %v", i, err)
				}
				b[0] = 0xff
			}
			now, most, limit := EagerHeld()
			close(quit)
			r := <-out
			if limit != tc.limit || most != tc.limit || now > tc.limit-1 {
				t.Errorf("EagerHeld = %d now, %d at most, limit %d; want at most %d now, and %d, %d", now, most, limit, tc.limit-1, tc.limit, tc.limit)
			}
			if r.code != 0 {
				t.Errorf("a Send waiting for a match showed status %s, want code %d (proto.CallSendMatch, what deadlock detection counts eager sends by)", proto.DescribeStatus(r.code), proto.CallSendMatch)
			}
			if r.most != tc.limit {
				t.Errorf("the agent held %d eager sends unmatched at most, want the limit %d", r.most, tc.limit)
			}
			if r.matched < n-tc.limit+1 {
				t.Errorf("%d matches, want at least %d: a Send returned past the limit without one", r.matched, n-tc.limit+1)
			}
			if len(r.all) != n {
				t.Fatalf("the agent drained %d sends, want %d", len(r.all), n)
			}
			for i, s := range r.all {
				if want := bytes.Repeat([]byte{byte(i)}, i%64+1); s.d.Tag != int32(i) || !s.d.Inline || !s.d.Eager || !bytes.Equal(s.inl, want) {
					t.Fatalf("send %d: %s inline %v eager %v payload %x, want tag %d and %x", i, s.d.Describe(), s.d.Inline, s.d.Eager, s.inl, i, want)
				}
			}
		})
	}
}

// TestEagerSendThreadsNoWait: with threads on (MPI_THREAD_MULTIPLE) a Send
// past the limit does not wait for a match (the matched word is one total
// for every thread, so a thread could be held by another's unmatched send:
// eager.go, Back-pressure). The fake agent exchanges every send and matches
// none, unless the rank sleeps with more sends than the limit posted: then
// it notes the wait and matches them all, so a Send that waited fails the
// test instead of hanging it.
func TestEagerSendThreadsNoWait(t *testing.T) {
	p := fakeRankG(t, shm.Geometry{Ranks: 1, RingSlots: 256, ReqMax: 64, InlineMax: 64, EagerMax: 1})
	p.slice = time.Millisecond
	SetThreaded(func() int { return 0 }, func(int) {}, func(int) {})
	t.Cleanup(func() { SetThreaded(nil, nil, nil) })
	const n = 10 // past the limit, 2 (the job's size)
	var waited atomic.Bool
	stop := fakeAgent(t, p, func() bool {
		if atomic.LoadUint32(p.blk.Sleeping()) == 1 { // slots and ring suffice: only a match is waited for
			waited.Store(true)
			p.blk.SetEagerMatched(n)
		}
		return true
	})
	for i := range n {
		if err := Send(World(), []byte{byte(i)}, 1, i); err != nil {
			t.Fatalf("send %d: %v", i, err)
		}
	}
	now, _, _ := EagerHeld()
	all := stop()
	if p.eagerLimit() >= n {
		t.Fatalf("limit %d: the sends do not pass it", p.eagerLimit())
	}
	if waited.Load() {
		t.Fatal("a Send past the limit waited for a match with threads on")
	}
	if len(all) != n || now != n {
		t.Fatalf("the agent drained %d sends, %d unmatched; want %d and %d", len(all), now, n, n)
	}
}

// TestEagerWordPastPostedWarnsOnce: an eager-matched word past the sends
// the rank posted (overwritten) turns the bound off for the rank, and says
// so once on stderr, naming the rank and both counts.
func TestEagerWordPastPostedWarnsOnce(t *testing.T) {
	p := fakeRank(t)
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	old := os.Stderr
	os.Stderr = w
	p.blk.SetEagerMatched(7)
	held := []uint64{p.eagerHeld(), p.eagerHeld()}
	p.eagerPosted = 3
	held = append(held, p.eagerHeld())
	os.Stderr = old
	w.Close()
	out, err := io.ReadAll(r)
	r.Close()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(held, []uint64{0, 0, 0}) {
		t.Fatalf("eagerHeld %v, want 0 each time (the bound is off)", held)
	}
	want := "bcsmpi: rank 0: the eager-matched word of its control page says 7 eager sends matched, but the rank posted 0 (the word was overwritten): eager_max no longer bounds this rank's unmatched eager sends\n"
	if string(out) != want {
		t.Fatalf("stderr %q, want once %q", out, want)
	}
}
