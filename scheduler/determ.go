package scheduler

import (
	"cmp"
	"math"
	"slices"

	"github.com/bcsmpi/bcsmpi/internal/proto"
)

// determ is the state of deterministic mode (doc.go, "Deterministic mode").
type determ struct {
	on bool
	// last is, per world rank, the highest Seq exchanged so far: the rank's
	// logical clock as MSM knows it. A rank drains in post order, so every
	// descriptor it posts from now on has a Seq above last.
	last []uint64
	// inert is, per world rank, whether it has finalized or exited without
	// MPI (status bytes of this slice and the previous one): it posts
	// nothing more and everything it posted has been exchanged.
	inert []bool
	// prev and stable: the status bytes of the previous slice, and per
	// rank whether it was blocked in this slice and the previous one with
	// no completion for it in between: it has not run since, so all it
	// posted has been exchanged, and it posts nothing before a completion
	// reaches it.
	prev   []uint8
	stable []bool
	force  bool
	heldN  map[key]int // held entries (see held) in each pending queue
	keys   []key       // resolveAll's scratch
	// unsettled is resolve's scratch.
	unsettled []proto.Descriptor
	stats     DetStats
}

// DetStats count deterministic mode's decisions since the job began.
type DetStats struct {
	// Decided: wildcard receives and probes and Iprobes answered because
	// no rank could still post an earlier matching send.
	Decided uint64
	// Forced: answered at a quiescent point (SetView's force) with the
	// sends posted so far.
	Forced uint64
}

func (d *determ) init(ranks int) {
	d.on = true
	d.last = make([]uint64, ranks)
	d.inert = make([]bool, ranks)
	d.prev = make([]uint8, ranks)
	d.stable = make([]bool, ranks)
	d.heldN = make(map[key]int)
}

// observe advances the clocks from this slice's descriptors.
func (d *determ) observe(descs []proto.Descriptor) {
	for _, x := range descs {
		if x.Seq > d.last[x.Rank] {
			d.last[x.Rank] = x.Seq
		}
	}
}

// held reports whether x is answered by logical time in deterministic mode:
// a receive or probe from ANY_SOURCE, or any Iprobe (whose "found" otherwise
// depends on when the sender's post arrived).
func (d *determ) held(x proto.Descriptor) bool {
	switch x.Kind {
	case proto.KindIprobe:
		return true
	case proto.KindRecv, proto.KindProbe:
		return x.Peer == proto.AnySource
	}
	return false
}

// bound is the lowest clock a send rank r posts from now on can carry.
func (d *determ) bound(r proto.Rank) uint64 {
	if d.inert[r] {
		return math.MaxUint64
	}
	return d.last[r] + 1
}

// mayPrecede reports whether rank r can still post a send whose key
// (clock, source) is below (clk, src).
func (d *determ) mayPrecede(r proto.Rank, clk uint64, src proto.Rank) bool {
	b := d.bound(r)
	return b < clk || (b == clk && r < src)
}

// SetView gives the scheduler, before Schedule, every rank's status byte of
// this slice (nil: unknown, no rank known to be inert) and whether the job
// is quiescent: no rank can progress and nothing was exchanged in the last
// two slices (internal/core decides). Under force, every held entry that
// has a candidate is answered with the earliest one posted so far, and
// every held Iprobe with what has been posted. Only deterministic mode uses
// them.
func (s *Scheduler) SetView(status []uint8, force bool) {
	if !s.det.on {
		return
	}
	d := &s.det
	for r := range d.inert {
		st := uint8(proto.StatusRunning)
		if status != nil {
			st = status[r]
		}
		// Finalized in the previous slice too: a rank that posts and then
		// finalizes between this slice's strobe and its status read has
		// posts not exchanged yet (rule 1), so one status is not enough.
		d.inert[r] = proto.StatusInert(st) && proto.StatusInert(d.prev[r])
		d.stable[r] = proto.StatusBlocked(st) && proto.StatusBlocked(d.prev[r])
		d.prev[r] = st
	}
	for _, c := range s.plan.Completions { // the previous slice's, published since
		d.stable[c.Rank] = false
	}
	d.force = force
}

// DetStats are the deterministic mode's counters.
func (s *Scheduler) DetStats() DetStats { return s.det.stats }

// hold queues receive, probe or Iprobe x behind the key's held entries.
func (s *Scheduler) hold(k key, x proto.Descriptor, slice proto.SliceID) {
	s.pending[k] = append(s.pending[k], op{d: x, slice: slice})
	if s.det.held(x) {
		s.det.heldN[k]++
	}
}

// resolveAll answers what can be answered in every pending queue with held
// entries, in (communicator, rank) order so that every node appends the same
// matches and completions in the same order.
func (s *Scheduler) resolveAll(slice proto.SliceID) {
	ks := s.det.keys[:0]
	for k, n := range s.det.heldN {
		if n > 0 {
			ks = append(ks, k)
		} else {
			delete(s.det.heldN, k)
		}
	}
	slices.SortFunc(ks, func(a, b key) int {
		if c := cmp.Compare(a.comm, b.comm); c != 0 {
			return c
		}
		return cmp.Compare(a.rank, b.rank)
	})
	for _, k := range ks {
		s.resolve(slice, k)
	}
	s.det.keys = ks
}

// resolve matches in the pending queue of k, which has held entries, in
// post order. An entry is unsettled while what it gets is not known yet: a
// held entry decide cannot answer, or a receive or probe (with a source)
// whose earliest acceptable send an earlier unsettled entry also accepts.
// An entry that could take a send an earlier unsettled one may be owed
// (their sources and tags overlap) is unsettled too; any other entry is
// answered as MPI orders it: a held one by decide, one with a source by the
// earliest unexpected send it accepts (that source's post order).
func (s *Scheduler) resolve(slice proto.SliceID, k key) {
	q, u := s.pending[k], s.unexpected[k]
	unsettled := s.det.unsettled[:0]
	for i := 0; i < len(q); {
		e := q[i].d
		if slices.ContainsFunc(unsettled, func(x proto.Descriptor) bool { return overlap(x, e) }) {
			unsettled = append(unsettled, e)
			i++
			continue
		}
		if s.det.held(e) {
			j, ok := s.decide(e, u)
			if !ok {
				unsettled = append(unsettled, e)
				i++
				continue
			}
			q = slices.Delete(q, i, i+1)
			s.det.heldN[k]--
			switch {
			case e.Kind == proto.KindRecv:
				s.match(slice, u[j].d, e)
				u = slices.Delete(u, j, j+1)
			case j >= 0: // a probe, or an Iprobe that found one
				m := u[j].d
				s.complete(proto.Completion{Rank: e.Rank, Req: e.Req, Kind: e.Kind, Source: m.Rank, Tag: m.Tag, Count: m.Len, Found: true})
			default:
				s.complete(proto.Completion{Rank: e.Rank, Req: e.Req, Kind: e.Kind, Source: proto.AnySource, Tag: proto.AnyTag})
			}
			continue
		}
		found := slices.IndexFunc(u, func(o op) bool { return accepts(e, o.d) })
		if found < 0 {
			i++ // waits for a send, as in a queue without held entries
			continue
		}
		q = slices.Delete(q, i, i+1)
		if e.Kind == proto.KindRecv {
			s.match(slice, u[found].d, e)
			u = slices.Delete(u, found, found+1)
		} else { // a blocking probe with a source
			m := u[found].d
			s.complete(proto.Completion{Rank: e.Rank, Req: e.Req, Kind: e.Kind, Source: m.Rank, Tag: m.Tag, Count: m.Len, Found: true})
		}
	}
	clear(unsettled)
	s.det.unsettled = unsettled[:0]
	s.pending[k], s.unexpected[k] = q, u
}

// overlap reports whether some send could be accepted by both a and b.
func overlap(a, b proto.Descriptor) bool {
	return (a.Peer == proto.AnySource || b.Peer == proto.AnySource || a.Peer == b.Peer) &&
		(a.Tag == proto.AnyTag || b.Tag == proto.AnyTag || a.Tag == b.Tag) && a.Pair() == b.Pair()
}

// decide answers held entry e over the unexpected sends u of its queue. The
// candidate is the accepted send with the least (Seq, rank), and for an
// Iprobe only a send with a Seq below the Iprobe's own (the Iprobe is
// answered as at its logical time). It returns the candidate's index in u
// (-1: none, an Iprobe's "not found") and whether e can be answered now:
// no rank that e accepts sends from can still post a send that would come
// before the candidate (for an Iprobe without a candidate: a send with a
// Seq below the Iprobe's), or the job is quiescent (force).
func (s *Scheduler) decide(e proto.Descriptor, u []op) (int, bool) {
	limit := uint64(math.MaxUint64)
	if e.Kind == proto.KindIprobe {
		limit = e.Seq
	}
	best := -1
	for j := range u {
		m := u[j].d
		if m.Seq >= limit || !accepts(e, m) {
			continue
		}
		if best < 0 || m.Seq < u[best].d.Seq || (m.Seq == u[best].d.Seq && m.Rank < u[best].d.Rank) {
			best = j
		}
	}
	if best < 0 && e.Kind != proto.KindIprobe {
		return -1, false // a receive or probe needs a send, forced or not
	}
	clk, src := limit, proto.Rank(-1) // no candidate: no send below the Iprobe's Seq may come
	if best >= 0 {
		clk, src = u[best].d.Seq, u[best].d.Rank
	}
	if !s.settled(e, clk, src) {
		if !s.det.force {
			return -1, false
		}
		s.det.stats.Forced++
		return best, true
	}
	s.det.stats.Decided++
	return best, true
}

// settled reports whether no rank that e accepts sends from can still post
// a send with a key below (clk, src).
func (s *Scheduler) settled(e proto.Descriptor, clk uint64, src proto.Rank) bool {
	if e.Peer != proto.AnySource {
		return !s.det.mayPrecede(e.Peer, clk, src)
	}
	ci := s.comm(e.Comm)
	if ci == nil {
		return false // unknown (checkComm refuses such descriptors; communicators are never dropped)
	}
	for _, r := range ci.members {
		if s.det.mayPrecede(r, clk, src) && (r != e.Rank || !s.alone(e)) {
			return false
		}
	}
	return true
}

// alone reports whether e is the only unfinished operation of its rank,
// which is stable (see determ.stable) and gets no completion in this slice:
// then the rank posts nothing more until e is answered, so its own later
// sends come after e and are not candidates (a wildcard receiver whose
// clock lags its senders' need not wait for the quiescent point).
func (s *Scheduler) alone(e proto.Descriptor) bool {
	q := e.Rank
	if !s.det.stable[q] {
		return false
	}
	for _, c := range s.plan.Completions {
		if c.Rank == q {
			return false
		}
	}
	for _, pq := range s.pending {
		for _, o := range pq {
			if o.d.Rank == q && o.d.Seq != e.Seq {
				return false
			}
		}
	}
	for _, uq := range s.unexpected {
		for _, o := range uq {
			if o.d.Rank == q && !o.d.Inline {
				return false
			}
		}
	}
	for _, c := range s.colls {
		for _, d := range c.heads {
			if d.Kind != 0 && d.Rank == q {
				return false
			}
		}
	}
	if s.groupBusy(q) {
		return false
	}
	for _, c := range s.collActive {
		for _, d := range c.heads {
			if d.Rank == q {
				return false
			}
		}
	}
	for _, x := range s.active {
		if x.send.Rank == q || x.recv.Rank == q {
			return false
		}
	}
	return true
}
