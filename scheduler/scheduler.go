package scheduler

import (
	"fmt"
	"math/bits"
	"slices"

	"github.com/bcsmpi/bcsmpi/internal/plan"
	"github.com/bcsmpi/bcsmpi/internal/proto"
	"github.com/bcsmpi/bcsmpi/internal/reduce"
)

// Config bounds what one slice may move.
type Config struct {
	// BytesPerSliceMax is how many bytes a node may copy in one slice
	// (inbound plus outbound, a local copy counted once). At least 1 KiB.
	BytesPerSliceMax uint64
	// ChunksPerSliceMax is how many chunks a node may handle in one slice. At least 1.
	ChunksPerSliceMax int
	// Deterministic resolves ANY_SOURCE receives and probes and every
	// Iprobe by logical time instead of by the slice their descriptors
	// arrived in (see "Deterministic mode" in doc.go).
	Deterministic bool
	// PullBytesPerSlice is how many bytes one spanning chunk (see "Spans"
	// in doc.go) is given per slice it lasts: the rate at which the
	// receiving rank's single copy moves them. 0: no spans; otherwise
	// BytesPerSliceMax .. 4 GiB.
	PullBytesPerSlice uint64
	// SpanSlicesMax bounds how many slices one span lasts (a span lasts at
	// least two): 2 .. 64 when PullBytesPerSlice is set.
	SpanSlicesMax int
	// PullChunkMin is the smallest chunk that its receiving rank copies
	// itself (nicthread's pull orders, 256 KiB there). With
	// PullBytesPerSlice set, a chunk of at least this size between two
	// ranks of one node whose receiver would be given a span is counted
	// on its node's budget at BytesPerSliceMax ÷ PullBytesPerSlice of its
	// bytes (see "Pulled chunks" in doc.go); none under SpanBlind. 0: every
	// chunk counts its size.
	PullChunkMin uint64
	// PullEntriesMax bounds the pulled chunks per receiving rank and slice
	// (nicthread's pull order holds shm.PullMax entries; the agent copies
	// the others itself, so they count at their size). 0: no bound.
	PullEntriesMax int
	// SpanBlind gives spans whatever the receiving rank's status (a job
	// recording or replaying its slice log, whose plans must be a function
	// of the exchange alone); otherwise only to a receiver blocked in a call.
	SpanBlind bool
}

// DefaultConfig is a budget that fits a 500 µs slice on a laptop-class core.
var DefaultConfig = Config{BytesPerSliceMax: 1 << 20, ChunksPerSliceMax: 1024}

// Validate reports the first out-of-range field.
func (c Config) Validate() error {
	if c.BytesPerSliceMax < 1024 || c.BytesPerSliceMax > 1<<32 {
		return fmt.Errorf("scheduler: bytes_per_slice_max = %d, want 1024 .. %d", c.BytesPerSliceMax, uint64(1)<<32)
	}
	if c.ChunksPerSliceMax < 1 || c.ChunksPerSliceMax > 1<<20 {
		return fmt.Errorf("scheduler: chunks_per_slice_max = %d, want 1 .. %d", c.ChunksPerSliceMax, 1<<20)
	}
	if c.PullBytesPerSlice != 0 {
		if c.PullBytesPerSlice < c.BytesPerSliceMax || c.PullBytesPerSlice > 1<<32 {
			return fmt.Errorf("scheduler: pull bytes per slice = %d, want 0 (no spans) or %d (bytes_per_slice_max) .. %d", c.PullBytesPerSlice, c.BytesPerSliceMax, uint64(1)<<32)
		}
		if c.SpanSlicesMax < 2 || c.SpanSlicesMax > 64 {
			return fmt.Errorf("scheduler: span_slices_max = %d, want 2 .. 64", c.SpanSlicesMax)
		}
	}
	return nil
}

type key struct {
	comm proto.CommID
	rank proto.Rank // the receiving rank
}

type op struct {
	d     proto.Descriptor
	slice proto.SliceID // DEM slice
}

type xfer struct {
	id          uint64
	send, recv  proto.Descriptor
	len, moved  uint64
	trunc       bool
	matchedInSl proto.SliceID
	spanEnd     proto.SliceID // last slice of the transfer's span in flight (0: none)
}

// Scheduler holds the global matching state. Every agent keeps an identical one.
type Scheduler struct {
	cfg        Config
	nodeOf     []proto.NodeID
	pending    map[key][]op
	unexpected map[key][]op
	active     []*xfer
	free       []*xfer
	nextXfer   uint64
	order      []proto.Descriptor
	used       []uint64
	chunks     []int
	reserved   []proto.SliceID // per node: the last slice a span in flight holds its budget (spans)
	refused    []bool          // per node: a transfer found no budget there in this slice (spans)
	pulledTo   []int           // per rank: pulled chunks it receives in this slice (PullEntriesMax)
	collBusy   []bool          // per node: a ready collective with a member there has bytes to move (spans)
	soleFirst  []*xfer         // per node: the earliest transfer using its budget in this slice (soleOn); nil: none
	soleMixed  []bool          // per node: another transfer uses its budget whose rank pair differs from soleFirst's
	spanEnded  []proto.SliceID // per node: the slice its last span ended in, until the next slice judges it (0: none pending)
	spanLen    []uint64        // per node: the slices of its span in flight, then of its ended one until judged
	keptUp     []bool          // per node: its last judged span ended on time (no slice skipped after it): spans may be doubled
	status     []uint8         // this slice's rank status bytes (SetStatus); nil: unknown
	plan       plan.Plan
	lastSlice  proto.SliceID
	started    bool

	comms      map[proto.CommID]*commInfo
	nextComm   proto.CommID
	dups       []dupRange // grants of local duplicates, in id order (coll.go)
	colls      map[collKey]*coll
	groups     map[groupKey]*groupMake // MPI_Comm_create_group calls waiting for members (group.go)
	collActive []*coll                 // every member has posted; moving, in readiness order
	freeColls  []*coll
	cnt, ccnt  []int    // per node, scratch of chunkSegment
	slots, kn  []int    // per node, scratch of chunkSegment and fanout
	landing    []uint64 // per node, scratch of fanout
	recip      []recipient
	stageUsed  []uint64 // per node, staging bytes allotted this slice

	det determ // deterministic mode's state (determ.go)
}

// New returns a scheduler for a job whose world rank r lives on node nodeOf[r].
func New(cfg Config, nodeOf []proto.NodeID) *Scheduler {
	nodes := 0
	for _, n := range nodeOf {
		if int(n)+1 > nodes {
			nodes = int(n) + 1
		}
	}
	s := &Scheduler{
		cfg:        cfg,
		nodeOf:     slices.Clone(nodeOf),
		pending:    make(map[key][]op),
		unexpected: make(map[key][]op),
		used:       make([]uint64, nodes),
		chunks:     make([]int, nodes),
		reserved:   make([]proto.SliceID, nodes),
		refused:    make([]bool, nodes),
		pulledTo:   make([]int, len(nodeOf)),
		collBusy:   make([]bool, nodes),
		soleFirst:  make([]*xfer, nodes),
		soleMixed:  make([]bool, nodes),
		spanEnded:  make([]proto.SliceID, nodes),
		spanLen:    make([]uint64, nodes),
		keptUp:     make([]bool, nodes),
		comms:      make(map[proto.CommID]*commInfo),
		colls:      make(map[collKey]*coll),
		cnt:        make([]int, nodes),
		ccnt:       make([]int, nodes),
		slots:      make([]int, nodes),
		kn:         make([]int, nodes),
		landing:    make([]uint64, nodes),
		stageUsed:  make([]uint64, nodes),
	}
	world := make([]proto.Rank, len(nodeOf))
	for i := range world {
		world[i] = proto.Rank(i)
	}
	s.comms[0] = newComm(0, world, len(nodeOf))
	if cfg.Deterministic {
		s.det.init(len(nodeOf))
	}
	return s
}

// Size is the number of ranks in the job.
func (s *Scheduler) Size() int { return len(s.nodeOf) }

// NodeOf says which node hosts rank r.
func (s *Scheduler) NodeOf(r proto.Rank) proto.NodeID { return s.nodeOf[r] }

// CheckDescriptor reports why d cannot be scheduled in a job of size ranks, or nil.
func CheckDescriptor(d proto.Descriptor, size int) error {
	if d.Rank < 0 || int(d.Rank) >= size {
		return fmt.Errorf("descriptor rank %d not in 0..%d", d.Rank, size-1)
	}
	switch d.Kind {
	case proto.KindSend:
		if d.Peer < 0 || int(d.Peer) >= size {
			return fmt.Errorf("send destination %d not in 0..%d", d.Peer, size-1)
		}
		if d.Tag < 0 {
			return fmt.Errorf("send tag %d is negative", d.Tag)
		}
	case proto.KindColl:
		if d.CollSeq == 0 {
			return fmt.Errorf("%s with collective sequence number 0, want 1 or more", d.Coll)
		}
		if d.Coll.Rooted() && (d.Root() < 0 || int(d.Root()) >= size) {
			return fmt.Errorf("%s root %d not in 0..%d", d.Coll, d.Root(), size-1)
		}
		switch d.Coll {
		case proto.CollBarrier, proto.CollFree, proto.CollSplit:
			return nil
		case proto.CollGroup:
			if n, i := d.GroupSize(), d.GroupRank(); n == 0 || n > uint64(size) || i < 0 || uint64(i) >= n {
				return fmt.Errorf("%s: rank %d of a group of %d in a job of %d", d.Coll.MPIName(), i, n, size)
			}
			return nil
		}
		t := reduce.Type(d.DType)
		if !t.Valid() {
			return fmt.Errorf("%s element type %d unknown", d.Coll, d.DType)
		}
		if d.Len%uint64(t.Size()) != 0 {
			return fmt.Errorf("%s of %d bytes is not a whole number of %s elements", d.Coll, d.Len, t)
		}
		if d.Coll.Reduces() {
			if err := reduce.Check(reduce.Op(d.Op), t); err != nil {
				return fmt.Errorf("%s: %v", d.Coll.MPIName(), err)
			}
		}
	case proto.KindCollPart:
		if d.Peer < 0 || int(d.Peer) >= size {
			return fmt.Errorf("collective block peer %d not in 0..%d", d.Peer, size-1)
		}
		if d.Dir() != proto.PartSend && d.Dir() != proto.PartRecv {
			return fmt.Errorf("collective block direction %d, want 0 (send) or 1 (receive)", d.Dir())
		}
	case proto.KindCancel:
		return checkCancel(d, size)
	case proto.KindRecv, proto.KindProbe, proto.KindIprobe:
		if d.Peer != proto.AnySource && (d.Peer < 0 || int(d.Peer) >= size) {
			return fmt.Errorf("%s source %d not in 0..%d or ANY_SOURCE", d.Kind, d.Peer, size-1)
		}
		if d.Tag < 0 && d.Tag != proto.AnyTag {
			return fmt.Errorf("%s tag %d is negative and not ANY_TAG", d.Kind, d.Tag)
		}
		if d.Kind != proto.KindRecv && d.CollSeq != 0 {
			return fmt.Errorf("%s with pair number %d, want 0 (only a send or receive is partitioned)", d.Kind, d.CollSeq)
		}
		if d.Pair() != 0 && (d.Peer == proto.AnySource || d.Tag == proto.AnyTag) {
			return fmt.Errorf("partitioned recv (pair %d) with source %d and tag %d, want no wildcard", d.Pair(), d.Peer, d.Tag)
		}
	default:
		return fmt.Errorf("descriptor kind %d unknown", d.Kind)
	}
	if d.Kind == proto.KindSend || d.Kind == proto.KindRecv {
		return checkSig(d) // sig.go
	}
	return nil
}

// accepts reports whether receive or probe r accepts send s: source and
// tag, with wildcards, and the same pair number (proto.Descriptor.Pair: a
// partitioned send matches only the partitioned receive of its pair, and
// nothing else matches either).
func accepts(r, s proto.Descriptor) bool {
	return (r.Peer == proto.AnySource || r.Peer == s.Rank) && (r.Tag == proto.AnyTag || r.Tag == s.Tag) && r.Pair() == s.Pair()
}

// Schedule runs MSM for slice over the descriptors exchanged in its DEM and
// returns the plan. Descriptors must have passed CheckDescriptor. The plan is
// valid until the next call.
func (s *Scheduler) Schedule(slice proto.SliceID, descs []proto.Descriptor) *plan.Plan {
	if s.started && slice <= s.lastSlice {
		panic(fmt.Sprintf("scheduler: slice %d scheduled after slice %d; slices must increase", slice, s.lastSlice))
	}
	s.started, s.lastSlice = true, slice
	p := &s.plan
	p.Slice = slice
	p.Matches = p.Matches[:0]
	p.Consumed = p.Consumed[:0]
	p.Chunks = p.Chunks[:0]
	p.Completions = p.Completions[:0]
	p.Folds = p.Folds[:0]
	clear(p.Writes)
	p.Writes = p.Writes[:0]
	p.Err = nil
	clear(s.stageUsed)

	s.order = s.order[:0]
	for _, d := range descs {
		if s.checkComm(d) {
			s.order = append(s.order, d)
		}
	}
	slices.SortFunc(s.order, func(a, b proto.Descriptor) int {
		if a.Rank != b.Rank {
			return int(a.Rank) - int(b.Rank)
		}
		if a.Seq < b.Seq {
			return -1
		}
		if a.Seq > b.Seq {
			return 1
		}
		return 0
	})
	if s.det.on {
		s.det.observe(s.order)
	}

	// Step 1: new sends against receives and probes posted in earlier slices.
	for _, d := range s.order {
		if d.Kind != proto.KindSend {
			continue
		}
		if d.Inline { // buffered: the agent holds the payload
			s.complete(proto.Completion{Rank: d.Rank, Req: d.Req, Kind: proto.KindSend, Source: d.Peer, Tag: d.Tag, Count: d.Len})
		}
		k := key{d.Comm, d.Peer}
		q := s.pending[k]
		if s.det.on && s.det.heldN[k] > 0 {
			q = nil // a queue with held entries matches in resolve
		}
		matched := false
		for i := 0; i < len(q); i++ {
			r := q[i].d
			if !accepts(r, d) {
				continue
			}
			q = slices.Delete(q, i, i+1)
			if r.Kind == proto.KindProbe {
				s.complete(proto.Completion{Rank: r.Rank, Req: r.Req, Kind: r.Kind, Source: d.Rank, Tag: d.Tag, Count: d.Len, Found: true})
				break // the send stays unmatched; a later receive takes it
			}
			s.match(slice, d, r)
			matched = true
			break
		}
		if q != nil {
			s.pending[k] = q
		}
		if !matched {
			s.unexpected[k] = append(s.unexpected[k], op{d: d, slice: slice})
		}
	}
	// Step 2: new receives and probes against unexpected sends.
	p.Collectives = 0
	for _, d := range s.order {
		if d.Kind == proto.KindSend || d.Kind == proto.KindCancel {
			continue
		}
		if d.Kind == proto.KindColl && d.Coll == proto.CollGroup {
			s.postGroup(d) // group.go
			continue
		}
		if d.IsColl() {
			s.postColl(d)
			continue
		}
		k := key{d.Comm, d.Rank}
		if s.det.on && (s.det.held(d) || s.det.heldN[k] > 0) {
			s.hold(k, d, slice)
			continue
		}
		u := s.unexpected[k]
		found := -1
		for i := range u {
			if accepts(d, u[i].d) {
				found = i
				break
			}
		}
		switch d.Kind {
		case proto.KindRecv:
			if found >= 0 {
				s.match(slice, u[found].d, d)
				s.unexpected[k] = slices.Delete(u, found, found+1)
			} else {
				s.pending[k] = append(s.pending[k], op{d: d, slice: slice})
			}
		case proto.KindProbe, proto.KindIprobe:
			if found >= 0 {
				m := u[found].d
				s.complete(proto.Completion{Rank: d.Rank, Req: d.Req, Kind: d.Kind, Source: m.Rank, Tag: m.Tag, Count: m.Len, Found: true})
			} else if d.Kind == proto.KindIprobe {
				s.complete(proto.Completion{Rank: d.Rank, Req: d.Req, Kind: d.Kind, Source: proto.AnySource, Tag: proto.AnyTag})
			} else {
				s.pending[k] = append(s.pending[k], op{d: d, slice: slice})
			}
		}
	}
	if s.det.on {
		s.resolveAll(slice)
	}
	// Step 3: cancels, after the receives and sends of this slice were
	// matched (a target matched by now is not withdrawn).
	s.cancels()
	s.chunk(p)
	// Collectives run once every member has posted them (docs/design.md), after
	// the point-to-point chunks: a barrier completes in the slice its last
	// member's descriptor is exchanged in.
	s.collChunks(p)

	p.Pending, p.Unexpected = 0, 0
	for _, q := range s.pending {
		p.Pending += len(q)
	}
	for _, q := range s.unexpected {
		p.Unexpected += len(q)
	}
	return p
}

func (s *Scheduler) complete(c proto.Completion) { s.plan.Completions = append(s.plan.Completions, c) }

func (s *Scheduler) match(slice proto.SliceID, send, recv proto.Descriptor) {
	if sigMismatch(send, recv) { // sig.go
		s.typeMismatch(send, recv)
		return
	}
	var x *xfer
	if n := len(s.free); n > 0 {
		x, s.free = s.free[n-1], s.free[:n-1]
	} else {
		x = new(xfer)
	}
	s.nextXfer++
	*x = xfer{id: s.nextXfer, send: send, recv: recv, len: min(send.Len, recv.Len), trunc: send.Len > recv.Len, matchedInSl: slice}
	s.active = append(s.active, x)
	s.plan.Matches = append(s.plan.Matches, plan.Match{Xfer: x.id, Send: send, Recv: recv})
}

// SetStatus gives the scheduler the rank status bytes of the slice about to
// be scheduled (nil: unknown): a span goes only to a receiving rank blocked
// in a call (see "Spans" in doc.go). The slice is read during Schedule only.
func (s *Scheduler) SetStatus(status []uint8) { s.status = status }

// spanTo reports whether a transfer to rank r may be given a span now: r
// is in a blocking call (woken or not: one woken still serves an order
// posted before it leaves the call), or the span does not look.
func (s *Scheduler) spanTo(r proto.Rank) bool {
	if s.cfg.SpanBlind {
		return true
	}
	if s.status == nil {
		return false
	}
	st := s.status[r]
	if proto.StatusServesNoPulls(st) { // its agent would copy the span itself, overrunning its slices
		return false
	}
	return proto.StatusBlocked(st) || (st > proto.StatusWoken && proto.StatusBlocked(st-proto.StatusWoken))
}

func (s *Scheduler) chunk(p *plan.Plan) {
	clear(s.used)
	clear(s.chunks)
	clear(s.refused)
	clear(s.pulledTo)
	clear(s.collBusy)
	B := s.cfg.BytesPerSliceMax
	if s.cfg.PullBytesPerSlice != 0 {
		for _, c := range s.collActive { // collChunks runs after chunk: no span holds such a node's budget
			if c.left > 0 || (c.seg != nil && c.seg.off < c.seg.total) {
				for _, r := range c.comm.members {
					s.collBusy[s.nodeOf[r]] = true
				}
			}
		}
	}
	for n, e := range s.reserved { // a span in flight holds its node's whole budget
		if e >= p.Slice {
			s.used[n] = B
		}
	}
	if s.cfg.PullBytesPerSlice != 0 {
		for n, e := range s.spanEnded { // judge the span that ended in the last slice (doc.go, "Doubling is earned")
			switch {
			case e == 0:
			case p.Slice != e+1: // slices skipped: its last slice overran by a slice or more
				s.keptUp[n] = false
			case s.spanLen[n] >= uint64(s.cfg.SpanSlicesMax): // on time, and as long as an undoubled span gets
				s.keptUp[n] = true
			}
			s.spanEnded[n] = 0
		}
		s.soleScan(p.Slice)
	}
	p.Spanning = 0
	keep := s.active[:0]
	for _, x := range s.active {
		if s.advance(p, x) {
			keep = append(keep, x)
			continue
		}
		// Last chunk scheduled (or nothing to move), or the span that carried
		// it ended: both sides complete in this slice (a buffered send
		// completed when it was exchanged).
		if !x.send.Inline {
			s.complete(proto.Completion{Rank: x.send.Rank, Req: x.send.Req, Kind: proto.KindSend, Source: x.recv.Rank, Tag: x.send.Tag, Count: x.len})
		}
		rc := proto.Completion{Rank: x.recv.Rank, Req: x.recv.Req, Kind: proto.KindRecv, Source: x.send.Rank, Tag: x.send.Tag, Count: x.len}
		if x.trunc {
			rc.Err = proto.ErrTruncate
		}
		s.complete(rc)
		s.free = append(s.free, x)
	}
	clear(s.active[len(keep):])
	clear(s.soleFirst) // holds no finished transfer beyond the slice
	s.active = keep
	p.Waiting = len(keep)
}

// span says whether transfer x (from node sn to node dn) gets a span in
// this slice, of how many slices (n, 0: no span) and bytes (ln): a
// transfer within a node, not buffered, with more than the budget left, to
// a receiver in a blocking call (spanTo), first on its node's budget in the
// slice (a span ending in the slice does not count), and only if the span moves more than chunks would in as many
// slices (else chunks, which leave the rest of their last slice to others).
func (s *Scheduler) span(x *xfer, sn, dn proto.NodeID) (n, ln uint64) {
	B, P := s.cfg.BytesPerSliceMax, s.cfg.PullBytesPerSlice
	rem := x.len - x.moved
	// First on the node's budget, or on a budget held by a span that ends
	// in this slice (the agent finishes that one first: back-to-back spans)
	// unless an older transfer found no budget on the node in this slice
	// (it goes first in the next slice, in match order). No span while a
	// collective on the node has bytes to move (collChunks runs after
	// chunk: a span would hold the budget it waits for for slices).
	first := s.chunks[sn] == 0 && (s.used[sn] == 0 || (s.reserved[sn] == s.plan.Slice && !s.refused[sn]))
	if P == 0 || sn != dn || x.send.Inline || rem <= B || !first || s.collBusy[sn] || !s.spanTo(x.recv.Rank) {
		return 0, 0
	}
	most := uint64(s.cfg.SpanSlicesMax)
	if s.keptUp[sn] && s.soleOn(x, sn) { // the last copy kept up, and nothing else waits for the node's budget: the whole message, up to twice as long
		most *= 2
	}
	n = min(max((rem+P-1)/P, 2), most)
	ln = min(rem, n*P)
	if ln <= n*B {
		return 0, 0
	}
	return n, ln
}

// soleScan records, in one pass over the active transfers in match order,
// each node's earliest transfer that uses its budget in slice k and whether
// another one with a different rank pair does (soleOn). A transfer that
// completes in slice k without a chunk (nothing left to move, its span, if
// any, ending with k) is left out: it no longer uses the budget. One that
// completes with a chunk is not known here, but soleOn is asked only while
// no chunk was scheduled on the node in the slice (span's "first"), so no
// transfer before x in match order completed on the node with a chunk.
func (s *Scheduler) soleScan(k proto.SliceID) {
	clear(s.soleFirst)
	clear(s.soleMixed)
	for _, x := range s.active {
		if x.moved >= x.len && (x.spanEnd == 0 || x.spanEnd <= k) {
			continue // completes in slice k without a chunk (advance)
		}
		sn, dn := s.nodeOf[x.send.Rank], s.nodeOf[x.recv.Rank]
		s.soleNote(x, sn)
		if dn != sn {
			s.soleNote(x, dn)
		}
	}
}

func (s *Scheduler) soleNote(x *xfer, n proto.NodeID) {
	f := s.soleFirst[n]
	if f == nil {
		s.soleFirst[n] = x
	} else if f.send.Rank != x.send.Rank || f.recv.Rank != x.recv.Rank {
		s.soleMixed[n] = true
	}
}

// soleOn reports whether transfer x is the only active transfer that uses
// node n's budget, apart from later transfers between the same two ranks
// (they follow x in match order whatever it gets), from soleScan's record:
// x is the node's earliest and no other rank pair uses the node.
func (s *Scheduler) soleOn(x *xfer, n proto.NodeID) bool {
	return s.soleFirst[n] == x && !s.soleMixed[n]
}

// advance schedules transfer x's part of this slice (a chunk, a span, or
// nothing while its span is in flight) and reports whether x stays active;
// false: it completes in this slice.
func (s *Scheduler) advance(p *plan.Plan, x *xfer) bool {
	B, C := s.cfg.BytesPerSliceMax, s.cfg.ChunksPerSliceMax
	if x.spanEnd != 0 {
		p.Spanning++
		if p.Slice < x.spanEnd {
			return true
		}
		x.spanEnd = 0 // the span ends with this slice: its copy is done by the end of it; the rest may follow at once
		s.spanEnded[s.nodeOf[x.send.Rank]] = p.Slice
	}
	if x.moved >= x.len {
		return false
	}
	sn, dn := s.nodeOf[x.send.Rank], s.nodeOf[x.recv.Rank]
	if n, ln := s.span(x, sn, dn); n > 0 {
		// A span: the rest, up to SpanSlicesMax slices' worth, in one chunk
		// that its receiver copies at its own rate over n slices.
		p.Chunks = append(p.Chunks, proto.Chunk{
			Xfer: x.id, Src: x.send.Rank, Dst: x.recv.Rank, SrcNode: sn, DstNode: dn,
			SendSeq: x.send.Seq, RecvReq: x.recv.Req, Last: x.moved+ln == x.len,
			SrcAddr: x.send.Addr + x.moved, DstAddr: x.recv.Addr + x.moved, Off: x.moved, Len: ln,
			Span: uint32(n),
		})
		s.used[sn], s.chunks[sn] = B, 1
		s.spanLen[sn] = n
		x.moved += ln
		end := p.Slice + proto.SliceID(n) - 1
		x.spanEnd, s.reserved[sn] = end, end
		p.Spanning++
		return true
	}
	avail := min(B-s.used[sn], B-s.used[dn])
	if s.chunks[sn] >= C || s.chunks[dn] >= C || avail == 0 {
		// Refused: no span of a newer transfer begins in this slice on the
		// node that had no room for this one (span).
		s.refused[sn] = s.refused[sn] || s.chunks[sn] >= C || s.used[sn] >= B
		s.refused[dn] = s.refused[dn] || s.chunks[dn] >= C || s.used[dn] >= B
		return true
	}
	n := min(x.len-x.moved, avail)
	cost := n
	if pn, pc := s.pulled(x, sn, dn, avail); pn > 0 {
		n, cost = pn, pc
	}
	p.Chunks = append(p.Chunks, proto.Chunk{
		Xfer: x.id, Src: x.send.Rank, Dst: x.recv.Rank, SrcNode: sn, DstNode: dn,
		SendSeq: x.send.Seq, RecvReq: x.recv.Req, Inline: x.send.Inline, Last: x.moved+n == x.len,
		SrcAddr: x.send.Addr + x.moved, DstAddr: x.recv.Addr + x.moved, Off: x.moved, Len: n,
	})
	s.used[sn] += cost
	s.chunks[sn]++
	if dn != sn {
		s.used[dn] += n
		s.chunks[dn]++
	}
	x.moved += n
	return x.moved < x.len
}

// pulled says whether transfer x's chunk of this slice is a pulled chunk
// (see "Pulled chunks" in doc.go), given avail bytes of budget left on its
// node: its length n and what it costs on the budget (n × B ÷ P, rounded
// up, at most avail), or n = 0 when it is an ordinary chunk.
func (s *Scheduler) pulled(x *xfer, sn, dn proto.NodeID, avail uint64) (n, cost uint64) {
	B, P, M := s.cfg.BytesPerSliceMax, s.cfg.PullBytesPerSlice, s.cfg.PullChunkMin
	if P <= B || M == 0 || sn != dn || x.send.Inline || s.cfg.SpanBlind || !s.spanTo(x.recv.Rank) {
		return 0, 0 // SpanBlind: the receiver may be computing, and the agent would copy the chunk itself
	}
	if E := s.cfg.PullEntriesMax; E > 0 && s.pulledTo[x.recv.Rank] >= E {
		return 0, 0
	}
	n = min(x.len-x.moved, mulDiv(avail, P, B, false))
	if n < M {
		return 0, 0
	}
	s.pulledTo[x.recv.Rank]++
	return n, min(mulDiv(n, B, P, true), avail)
}

// mulDiv is a×b÷c rounded down (up: rounded up) without overflow, for
// a×b < c×2⁶⁴ (here a ≤ c, or a ≤ 2³² and b ≤ 2³²).
func mulDiv(a, b, c uint64, up bool) uint64 {
	hi, lo := bits.Mul64(a, b)
	q, r := bits.Div64(hi, lo, c)
	if up && r != 0 {
		q++
	}
	return q
}
