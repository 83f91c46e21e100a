package shm

import (
	"errors"
	"sync"
	"testing"
)

// TestPullProtocol walks the pull-order states between a rank and its agent
// (two views of one block, as in two processes).
func TestPullProtocol(t *testing.T) {
	r := newRegion(t, Geometry{Ranks: 1, RingSlots: 8, ReqMax: 16, InlineMax: 64})
	rank, agent := r.Block(0), r.Block(0)
	order := []Pull{{PID: 7, Req: 3, SrcAddr: 0x1000, DstAddr: 0x2000, Len: 300 << 10}, {PID: 8, Req: 4, SrcAddr: 1, DstAddr: 2, Len: 3}}

	if agent.PostPull(1, order) {
		t.Fatal("an order was posted to a rank that is not in a blocking call")
	}
	rank.OfferPull()
	if !agent.PostPull(1, order) || !rank.PullPosted() {
		t.Fatal("an order to an offering rank was not posted")
	}
	if rank.WithdrawPull() {
		t.Fatal("the rank could leave its blocking call with an order posted")
	}
	if !rank.TakePull() {
		t.Fatal("the rank could not take the posted order")
	}
	if agent.RevokePull() {
		t.Fatal("the agent revoked an order the rank had taken")
	}
	seq, n := rank.PullOrder()
	if seq != 1 || n != 2 || rank.PullEntry(0) != order[0] || rank.PullEntry(1) != order[1] {
		t.Fatalf("the rank read order %d of %d entries: %+v %+v; want 1, %+v", seq, n, rank.PullEntry(0), rank.PullEntry(1), order)
	}
	if done, _, _ := agent.PullResult(1, 2); done {
		t.Fatal("order reported done before the rank finished it")
	}
	rank.FinishPull(seq, 1, true)
	if done, copied, err := agent.PullResult(1, 2); !done || copied != 1 || err != nil {
		t.Fatalf("PullResult = %v, %d, %v; want done, 1 copied", done, copied, err)
	}

	// Still offering (stay): the next order can be revoked before it is taken.
	if !agent.PostPull(2, order[:1]) || !agent.RevokePull() {
		t.Fatal("an order not yet taken could not be revoked")
	}
	if rank.TakePull() {
		t.Fatal("the rank took a revoked order")
	}
	if !rank.WithdrawPull() || agent.PostPull(3, order) {
		t.Fatal("after withdrawing, the rank still received an order")
	}
}

// TestPullResultCountChecked: the copied count is the rank's to write; one
// over the order's entries is a FieldError, not a number the agent trusts.
func TestPullResultCountChecked(t *testing.T) {
	r := newRegion(t, Geometry{Ranks: 1, RingSlots: 8, ReqMax: 16, InlineMax: 64})
	rank, agent := r.Block(0), r.Block(0)
	rank.OfferPull()
	agent.PostPull(5, []Pull{{PID: 1, Len: 1}})
	rank.TakePull()
	rank.FinishPull(5, 9, false)
	var fe *FieldError
	if _, _, err := agent.PullResult(5, 1); !errors.As(err, &fe) || fe.Field != "pull order copied count" {
		t.Fatalf("PullResult with 9 of 1 copied = %v; want a FieldError on the copied count", err)
	}
	// A forged entry count cannot send the rank past the entries.
	le := r.Mem[HeaderSize+pullBase+4:]
	le[0], le[1], le[2], le[3] = 0xff, 0xff, 0xff, 0x7f
	if _, n := rank.PullOrder(); n != PullMax {
		t.Fatalf("PullOrder with a forged count read %d entries, want at most %d", n, PullMax)
	}
}

// TestPullRace: a rank that keeps entering and leaving blocking calls and an
// agent that posts, waits a little and revokes: every order is either served
// or revoked, never both, never lost (run with -race).
func TestPullRace(t *testing.T) {
	r := newRegion(t, Geometry{Ranks: 1, RingSlots: 8, ReqMax: 16, InlineMax: 64})
	rank, agent := r.Block(0), r.Block(0)
	const orders = 2000
	var served [orders + 1]int
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // the rank
		defer wg.Done()
		serve := func(stay bool) {
			if rank.TakePull() {
				seq, n := rank.PullOrder()
				served[seq]++
				rank.FinishPull(seq, n, stay)
			}
		}
		for {
			select {
			case <-stop:
				return
			default:
			}
			rank.OfferPull()
			for i := 0; i < 3; i++ {
				if rank.PullPosted() {
					serve(true)
				}
			}
			for !rank.WithdrawPull() {
				serve(false)
			}
		}
	}()
	revoked := 0
	for seq := uint32(1); seq <= orders; seq++ {
		for !agent.PostPull(seq, []Pull{{PID: 1, Len: 1}}) {
		}
		if agent.RevokePull() {
			revoked++
			continue
		}
		for {
			if done, copied, err := agent.PullResult(seq, 1); err != nil || (done && copied != 1) {
				t.Fatalf("order %d: done %v copied %d err %v", seq, done, copied, err)
			} else if done {
				break
			}
		}
	}
	close(stop)
	wg.Wait()
	n := 0
	for seq, c := range served {
		if c > 1 {
			t.Fatalf("order %d served %d times", seq, c)
		}
		n += c
	}
	if n+revoked != orders {
		t.Fatalf("%d served + %d revoked, want %d orders", n, revoked, orders)
	}
}
