package mpiapi

import (
	"math/rand/v2"
	"testing"
)

// refPost is one receive in the reference model of claims: every receive
// noted while a watch is live, kept in full (what claims kept before it was
// bounded).
type refPost struct {
	comm      *Comm
	peer, tag int
	seq       uint64
}

func refStale(posts []refPost, since uint64, c *Comm, st Status) bool {
	for _, r := range posts {
		if r.seq > since && r.comm.id == c.id && (r.peer == AnySource || r.peer == st.Source) && (r.tag == AnyTag || r.tag == st.Tag) {
			return true
		}
	}
	return false
}

func withThreadsFlag(t *testing.T) {
	t.Helper()
	on := mt.on
	mt.on = true
	t.Cleanup(func() {
		mt.on = on
		claims.watching, claims.posted, claims.pruneAt = nil, nil, 0
	})
}

// TestMprobeClaimsSameAnswers drives claims and the full log with the same
// random watches, receives and stale checks: while the receives use fewer
// than claimsMax/2 (communicator, peer, tag) triples, every stale answer is
// the same.
func TestMprobeClaimsSameAnswers(t *testing.T) {
	withThreadsFlag(t)
	comms := []*Comm{{id: 0}, {id: 3}, {id: 7}}
	rng := rand.New(rand.NewPCG(1, 2))
	pick := func(any int, n int) int {
		if rng.IntN(4) == 0 {
			return any
		}
		return rng.IntN(n)
	}
	var seq uint64
	var posts []refPost
	var live []*claimWatch
	checks, staleSeen := 0, 0
	for step := 0; step < 200000; step++ {
		switch op := rng.IntN(10); {
		case op == 0 && len(live) < 6: // a matched probe starts waiting
			w := watchClaims()
			seq++
			w.since = seq
			live = append(live, w)
		case op == 1 && len(live) > 0: // one is answered and stops watching
			i := rng.IntN(len(live))
			live[i].done()
			live = append(live[:i], live[i+1:]...)
			if len(live) == 0 {
				posts = posts[:0]
			}
		case op < 6: // a receive is posted
			c := comms[rng.IntN(len(comms))]
			pe, tg := pick(AnySource, 4), pick(AnyTag, 6)
			seq++
			noteReceive(c, pe, tg, seq)
			if len(live) > 0 {
				posts = append(posts, refPost{c, pe, tg, seq})
			}
		default: // a live watch is answered with an envelope
			if len(live) == 0 {
				continue
			}
			w := live[rng.IntN(len(live))]
			c := comms[rng.IntN(len(comms))]
			st := Status{Source: rng.IntN(4), Tag: rng.IntN(6)}
			got, want := w.stale(c, st), refStale(posts, w.since, c, st)
			if got != want {
				t.Fatalf("step %d: stale(since %d, comm %d, source %d, tag %d) = %v, the full log says %v", step, w.since, c.id, st.Source, st.Tag, got, want)
			}
			checks++
			if got {
				staleSeen++
			}
		}
		if len(claims.posted) > claimsMax+1 {
			t.Fatalf("step %d: claims keeps %d entries, want at most %d", step, len(claims.posted), claimsMax+1)
		}
	}
	if checks < 1000 || staleSeen == 0 || staleSeen == checks {
		t.Fatalf("%d checks, %d stale: the random walk did not exercise both answers", checks, staleSeen)
	}
}

// TestMprobeClaimsBounded: one matched probe waits for the whole run while
// receives with ever new tags are posted; claims stays bounded, the waiting
// probe still sees that a receive may have taken its answer (folded entries
// answer stale at least as often), and a probe started after them sees
// exactly what was posted after it.
func TestMprobeClaimsBounded(t *testing.T) {
	withThreadsFlag(t)
	c, other := &Comm{id: 1}, &Comm{id: 2}
	long := watchClaims()
	long.since = 1
	seq := uint64(1)
	for tag := 0; tag < 100000; tag++ {
		seq++
		noteReceive(c, tag%4, tag, seq)
		if n := len(claims.posted); n > claimsMax+1 {
			t.Fatalf("after %d receives claims keeps %d entries, want at most %d", tag+1, n, claimsMax+1)
		}
	}
	if !long.stale(c, Status{Source: 3, Tag: 99999}) {
		t.Fatal("the long-waiting probe does not see the receive (source 3, tag 99999) posted after it")
	}
	if long.stale(other, Status{Source: 3, Tag: 99999}) {
		t.Fatal("a receive on another communicator made the long-waiting probe stale")
	}
	w := watchClaims()
	seq++
	w.since = seq
	if w.stale(c, Status{Source: 0, Tag: 0}) {
		t.Fatal("a probe started after every receive was answered stale")
	}
	seq++
	noteReceive(c, 2, 5, seq)
	if !w.stale(c, Status{Source: 2, Tag: 5}) || w.stale(c, Status{Source: 1, Tag: 5}) || w.stale(c, Status{Source: 2, Tag: 6}) {
		t.Fatal("the new probe's answers for the one receive (source 2, tag 5) posted after it are wrong")
	}
	w.done()
	long.done()
	if len(claims.posted) != 0 {
		t.Fatalf("claims keeps %d entries with no probe waiting", len(claims.posted))
	}
}
