package sim

import (
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/bcsmpi/bcsmpi/internal/core"
	"github.com/bcsmpi/bcsmpi/internal/proto"
	"github.com/bcsmpi/bcsmpi/internal/reduce"
)

// Workload shapes the program every simulated rank runs: MPI_Init, two
// MPI_Comm_splits (a contiguous and a strided sub-communicator), then Rounds
// rounds, then MPI_Finalize. Every rank runs the same sequence of rounds,
// drawn from the run's seed: a ring exchange (Irecv, Isend, Waitall with a
// rank Offset away, near or far), an Allreduce (int64 sum), a Barrier or a
// Bcast on one of the sub-communicators; before each round a rank computes
// for 0 .. Compute-1 slices (its own draw), so ranks drift apart and
// collectives and messages meet ranks that are late. Every byte delivered is
// checked against what its sender wrote.
type Workload struct {
	Rounds  int    // rounds before MPI_Finalize; 0: no end (the run's slice limit ends it)
	MaxLen  uint64 // largest message or vector, bytes; a multiple of 8, 8 .. 1 MiB
	Group   int    // ranks per contiguous sub-communicator, 1 ..
	Strided int    // ranks per strided sub-communicator (about), 1 ..
	Compute int    // a rank computes up to Compute-1 slices before each round
	// Wildcard, if > 0, makes every Wildcard-th round a wildcard gather on
	// the contiguous sub-communicator: its first member receives one
	// 8-byte message from each other member with MPI_Recv(ANY_SOURCE),
	// one receive at a time; which source each receive matched is the
	// run's Outcome (deterministic mode makes it the same whatever the
	// timing).
	Wildcard int
}

// DefaultWorkload is a mixed workload of small messages.
var DefaultWorkload = Workload{Rounds: 20, MaxLen: 512, Group: 8, Strided: 16, Compute: 3}

func (w Workload) validate() error {
	switch {
	case w.Rounds < 0:
		return fmt.Errorf("sim: workload rounds = %d, want 0 or more", w.Rounds)
	case w.MaxLen < 8 || w.MaxLen > 1<<20 || w.MaxLen%8 != 0:
		return fmt.Errorf("sim: workload max_len = %d, want a multiple of 8 in 8 .. %d", w.MaxLen, 1<<20)
	case w.Group < 1:
		return fmt.Errorf("sim: workload group = %d, want 1 or more", w.Group)
	case w.Strided < 1:
		return fmt.Errorf("sim: workload strided = %d, want 1 or more", w.Strided)
	case w.Compute < 1:
		return fmt.Errorf("sim: workload compute = %d, want 1 or more", w.Compute)
	case w.Wildcard < 0:
		return fmt.Errorf("sim: workload wildcard = %d, want 0 (none) or more", w.Wildcard)
	}
	return nil
}

// Communicators of a rank, by index.
const (
	cWorld = iota
	cGroup
	cStrided
	nComms
)

// roundKind is what a round does.
type roundKind uint8

const (
	rExchange roundKind = iota
	rAllreduce
	rBarrier
	rBcast
	rRelay // pairs (2i, 2i+1): a chain of calls where each waits on the other
	rCycle // injected: a receive nobody will ever match
	rWild  // Workload.Wildcard: a gather by wildcard receives
)

func (k roundKind) String() string {
	return [...]string{"exchange", "allreduce", "barrier", "bcast", "relay", "recv-cycle", "wildcard"}[k]
}

// round is one round of the program, the same on every rank but for rCycle.
type round struct {
	kind   roundKind
	comm   int    // cGroup or cStrided
	len    uint64 // bytes
	offset int    // exchange: send to rank+offset, receive from rank-offset
	rootAt uint64 // bcast: the root's position, modulo the communicator's size
	peer   proto.Rank
}

// cycleTag is a tag no send of the workload uses.
const cycleTag = 1 << 30

func mix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

// roundOf draws round j of the program from the seed.
func (s *Sim) roundOf(j int) round {
	h := mix(s.wseed ^ mix(uint64(j)+1))
	w := s.cfg.Workload
	lens := [...]uint64{0, 8, min(64, w.MaxLen), w.MaxLen / 16 * 8, w.MaxLen}
	rd := round{comm: cGroup + int(h>>8&1), len: lens[h>>16%uint64(len(lens))], rootAt: h >> 40}
	switch x := h % 16; {
	case x < 7:
		rd.kind = rExchange
		R := uint64(len(s.ranks))
		if h>>24&1 == 0 {
			rd.offset = int(1 + h>>28%uint64(2*s.cfg.RanksPerNode)) // mostly within a node or to the next
		} else {
			rd.offset = int(1 + h>>28%max(R-1, 1)) // anywhere
		}
		rd.offset %= int(R)
	case x < 10:
		rd.kind = rAllreduce
	case x < 11:
		rd.kind, rd.len = rBarrier, 0
	case x < 12:
		rd.kind = rRelay
	default:
		rd.kind = rBcast
	}
	if w.Wildcard > 0 && j%w.Wildcard == w.Wildcard-1 {
		rd.kind, rd.comm = rWild, cGroup
	}
	return rd
}

// word is the w-th 8-byte word rank src writes for round j: sends,
// contributions and broadcast buffers are all made of these.
func (s *Sim) word(src proto.Rank, j int, w uint64) uint64 {
	return mix(s.wseed ^ uint64(src)<<40 ^ uint64(j)<<20 ^ w)
}

func (s *Sim) fill(b []byte, src proto.Rank, j int) {
	for w := uint64(0); w < uint64(len(b))/8; w++ {
		binary.LittleEndian.PutUint64(b[8*w:], s.word(src, j, w))
	}
}

// rstate is where a rank's program is.
type rstate uint8

const (
	sStarting  rstate = iota // alive, not yet in MPI_Init
	sRunning                 // between calls: will post at its next run
	sComputing               // busy for busy more slices
	sBlocked                 // in a blocking call until its requests (waits) complete
	sFinalized
	sExited // exited without calling MPI_Init
)

// rank is one simulated rank: its memory and its program's state.
type rank struct {
	id      proto.Rank
	state   rstate
	call    uint8 // blocking call (proto.CallNames) while sBlocked
	step    int   // 0, 1: the splits; 2: compute; 3: the round
	round   int
	cur     round
	busy    int
	sub     int                // step within a round of several calls
	open    []uint32           // requests posted, not yet completed and looked at
	waits   []uint32           // the requests the blocking call waits for
	inbox   []proto.Completion // published, not yet looked at
	seq     uint64
	wildN   int    // receives (first member) or sends (others) of a wildcard round
	outcome hasher // wildcard matches, in completion order (Sim.Outcome)
	collSeq [nComms]uint32
	comm    [nComms]proto.CommID
	mem     []byte
}

// memory layout of a rank, with L = Workload.MaxLen
func (s *Sim) addrs() (send, recv, csend, crecv, list uint64) {
	L := s.cfg.Workload.MaxLen
	return 0, L, 2 * L, 3 * L, 4 * L
}

// members lists the world ranks of rank r's communicator c, in rank order
// (both splits use the world rank as key). The list is valid until the next
// call.
func (s *Sim) members(r proto.Rank, c int) []proto.Rank {
	out := s.scratch[:0]
	defer func() { s.scratch = out }()
	R := len(s.ranks)
	switch c {
	case cGroup:
		g := s.cfg.Workload.Group
		for q := int(r) / g * g; q < min(int(r)/g*g+g, R); q++ {
			out = append(out, proto.Rank(q))
		}
	case cStrided:
		st := s.stride()
		for q := int(r) % st; q < R; q += st {
			out = append(out, proto.Rank(q))
		}
	}
	return out
}

// stride is the number of strided communicators.
func (s *Sim) stride() int { return max(1, len(s.ranks)/s.cfg.Workload.Strided) }

// color of rank r in the split that makes communicator c.
func (s *Sim) color(r proto.Rank, c int) int32 {
	if c == cGroup {
		return int32(int(r) / s.cfg.Workload.Group)
	}
	return int32(int(r) % s.stride())
}

func (s *Sim) post(rk *rank, d proto.Descriptor) uint32 {
	rk.seq++
	d.Rank, d.Seq, d.Req, d.PostSlice = rk.id, rk.seq, uint32(rk.seq), s.k
	if d.Kind == proto.KindColl {
		c := cWorld
		for i := range rk.comm {
			if rk.comm[i] == d.Comm {
				c = i
			}
		}
		rk.collSeq[c]++
		d.CollSeq = rk.collSeq[c]
	}
	n := s.nodeOf[rk.id]
	s.queue[n] = append(s.queue[n], d)
	rk.open = append(rk.open, d.Req)
	return d.Req
}

// block puts rk in a blocking call that waits for reqs (none: every
// request it has open).
func (s *Sim) block(rk *rank, call string, reqs ...uint32) {
	rk.state, rk.call = sBlocked, proto.CallCode(call)
	rk.waits = append(rk.waits[:0], reqs...)
	if len(reqs) == 0 {
		rk.waits = append(rk.waits, rk.open...)
	}
	if rk.call == 0 {
		panic("sim: unknown call " + call)
	}
}

// runRank runs rank r during the current slice: it looks at what was
// published to it, and goes on with its program until it blocks or computes.
func (s *Sim) runRank(rk *rank) error {
	var e Effect
	e.RecvFrom = -1
	s.inject(Point{Op: OpRank, Slice: s.k, Node: s.nodeOf[rk.id], Rank: rk.id}, &e)
	if rk.state == sStarting && e.Exit {
		rk.state = sExited
		return nil
	}
	if e.Hold || rk.state == sFinalized || rk.state == sExited {
		return nil
	}
	if rk.state == sStarting {
		rk.state = sRunning
	}
	for _, c := range rk.inbox {
		if err := s.consume(rk, c); err != nil {
			return err
		}
		if i := slices.Index(rk.open, c.Req); i >= 0 {
			rk.open = slices.Delete(rk.open, i, i+1)
		} else {
			return fmt.Errorf("sim: slice %d: rank %d: %s names no open request", s.k, rk.id, c.Describe())
		}
	}
	rk.inbox = rk.inbox[:0]
	for {
		switch rk.state {
		case sBlocked:
			for _, q := range rk.waits {
				if slices.Contains(rk.open, q) {
					return nil
				}
			}
			rk.state = sRunning
			rk.advance()
		case sComputing:
			if rk.busy > 0 {
				rk.busy--
				return nil
			}
			rk.state = sRunning
			rk.advance()
		case sRunning:
			s.next(rk)
		default:
			return nil
		}
	}
}

// advance moves to the next step: the two splits, then compute and round in
// turn.
func (rk *rank) advance() {
	if rk.step == 3 && rk.cur.kind == rRelay && rk.sub < 2 {
		rk.sub++
		return
	}
	if rk.step == 3 && rk.cur.kind == rWild && rk.sub+1 < rk.wildN {
		rk.sub++
		return
	}
	if rk.step == 3 {
		rk.sub = 0
		rk.step = 2
		rk.round++
		return
	}
	rk.step++
}

// next posts the next call of rk's program.
func (s *Sim) next(rk *rank) {
	_, _, csend, crecv, list := s.addrs()
	switch rk.step {
	case 0, 1:
		c := cGroup + rk.step
		d := proto.Descriptor{Kind: proto.KindColl, Coll: proto.CollSplit, Comm: 0, RAddr: list}
		d.SetSplit(s.color(rk.id, c), int32(rk.id))
		s.post(rk, d)
		s.block(rk, "MPI_Comm_split")
		return
	case 2:
		w := s.cfg.Workload
		if w.Rounds > 0 && rk.round >= w.Rounds {
			rk.state = sFinalized
			s.finalized++
			return
		}
		rk.state = sComputing
		rk.busy = int(mix(s.wseed^uint64(rk.id)<<32^uint64(rk.round)) % uint64(w.Compute))
		return
	}
	if rk.sub > 0 {
		if rk.cur.kind == rWild {
			s.wild(rk)
			return
		}
		s.relay(rk)
		return
	}
	rd := s.rounds(rk.round)
	var e Effect
	e.RecvFrom = -1
	s.inject(Point{Op: OpProgram, Slice: s.k, Node: s.nodeOf[rk.id], Rank: rk.id, Round: rk.round}, &e)
	if e.RecvFrom >= 0 {
		rd = round{kind: rCycle, peer: e.RecvFrom}
	}
	rk.cur = rd
	send, recv, _, _, _ := s.addrs()
	R := len(s.ranks)
	switch rd.kind {
	case rCycle:
		s.post(rk, proto.Descriptor{Kind: proto.KindRecv, Peer: rd.peer, Tag: cycleTag, Addr: recv, Len: 8})
		s.block(rk, "MPI_Recv")
	case rExchange:
		from := proto.Rank((int(rk.id) - rd.offset + R) % R)
		to := proto.Rank((int(rk.id) + rd.offset) % R)
		s.post(rk, proto.Descriptor{Kind: proto.KindRecv, Peer: from, Tag: int32(rk.round), Addr: recv, Len: rd.len})
		s.fill(rk.mem[send:send+rd.len], rk.id, rk.round)
		s.post(rk, proto.Descriptor{Kind: proto.KindSend, Peer: to, Tag: int32(rk.round), Addr: send, Len: rd.len})
		s.block(rk, "MPI_Waitall")
	case rAllreduce:
		s.fill(rk.mem[csend:csend+rd.len], rk.id, rk.round)
		s.post(rk, proto.Descriptor{Kind: proto.KindColl, Coll: proto.CollAllreduce, Comm: rk.comm[rd.comm], Op: uint8(reduce.Sum), DType: uint8(reduce.Int64),
			Addr: csend, RAddr: crecv, Len: rd.len})
		s.block(rk, "MPI_Allreduce")
	case rRelay:
		s.relay(rk)
	case rWild:
		s.wild(rk)
	case rBarrier:
		s.post(rk, proto.Descriptor{Kind: proto.KindColl, Coll: proto.CollBarrier, Comm: rk.comm[rd.comm]})
		s.block(rk, "MPI_Barrier")
	case rBcast:
		ms := s.members(rk.id, rd.comm)
		root := ms[rd.rootAt%uint64(len(ms))]
		if root == rk.id {
			s.fill(rk.mem[csend:csend+rd.len], rk.id, rk.round)
		}
		d := proto.Descriptor{Kind: proto.KindColl, Coll: proto.CollBcast, Comm: rk.comm[rd.comm], DType: uint8(reduce.Uint8), Addr: csend, Len: rd.len}
		d.SetRoot(root)
		s.post(rk, d)
		s.block(rk, "MPI_Bcast")
	}
}

// relayTag is the first tag of relay rounds (beyond any round number).
const relayTag = 1 << 24

func relayKey(j int, x uint64) int { return 1<<28 + 4*j + int(x) }

// relay runs step rk.sub of a relay round, a chain in which each call of
// one rank waits on the other (stopped_rank.txt at scale):
//
//	even rank A              odd rank B = A+1
//	Irecv(B, t2); Send(B, t1)  Recv(A, t1)
//	Send(B, t3)                Recv(A, t3)
//	Wait(the Irecv)            Send(A, t2)
//
// A stopped after its first Send completed, holding that completion
// unconsumed, has an incomplete Irecv while B waits for A's next Send: only
// the woken status tells that A can still go on. A rank without a partner skips the
// round.
func (s *Sim) relay(rk *rank) {
	j, rd := rk.round, rk.cur
	send, recv, _, _, _ := s.addrs()
	peer := rk.id ^ 1
	if int(peer) >= len(s.ranks) {
		rk.sub = 2 // no partner: the round is over
		rk.state = sRunning
		rk.advance()
		return
	}
	tag := func(x int) int32 { return int32(relayTag + 4*j + x) }
	sendTo := func(x int) uint32 {
		s.fill(rk.mem[send:send+rd.len], rk.id, relayKey(j, uint64(x)))
		return s.post(rk, proto.Descriptor{Kind: proto.KindSend, Peer: peer, Tag: tag(x), Addr: send, Len: rd.len})
	}
	recvFrom := func(x int) uint32 {
		return s.post(rk, proto.Descriptor{Kind: proto.KindRecv, Peer: peer, Tag: tag(x), Addr: recv, Len: rd.len})
	}
	if rk.id%2 == 0 {
		switch rk.sub {
		case 0:
			recvFrom(2)
			s.block(rk, "MPI_Send", sendTo(1))
		case 1:
			s.block(rk, "MPI_Send", sendTo(3))
		case 2:
			s.block(rk, "MPI_Wait") // the Irecv, the only open request
		}
		return
	}
	switch rk.sub {
	case 0:
		s.block(rk, "MPI_Recv", recvFrom(1))
	case 1:
		s.block(rk, "MPI_Recv", recvFrom(3))
	case 2:
		s.block(rk, "MPI_Send", sendTo(2))
	}
}

// wildTag is the first tag of wildcard rounds.
const wildTag = 1 << 26

// wild runs step rk.sub of a wildcard round: the first member of rk's group
// receives from ANY_SOURCE once per other member; the others send it one
// 8-byte message. A member of a group of one skips the round.
func (s *Sim) wild(rk *rank) {
	j := rk.round
	send, recv, _, _, _ := s.addrs()
	ms := s.members(rk.id, cGroup)
	rk.wildN = len(ms) - 1
	if rk.wildN == 0 || ms[0] != rk.id {
		rk.wildN = 1
	}
	if len(ms) == 1 {
		rk.state = sRunning
		rk.advance()
		return
	}
	if ms[0] == rk.id {
		s.block(rk, "MPI_Recv", s.post(rk, proto.Descriptor{Kind: proto.KindRecv, Comm: rk.comm[cGroup], Peer: proto.AnySource, Tag: int32(wildTag + j), Addr: recv, Len: 8}))
		return
	}
	s.fill(rk.mem[send:send+8], rk.id, j)
	s.block(rk, "MPI_Send", s.post(rk, proto.Descriptor{Kind: proto.KindSend, Comm: rk.comm[cGroup], Peer: ms[0], Tag: int32(wildTag + j), Addr: send, Len: 8}))
}

// Outcome is a hash of every wildcard receive's match, per rank in the
// order its receives completed: what deterministic mode makes independent
// of timing.
func (s *Sim) Outcome() uint64 {
	h := hasher(fnvOffset)
	for _, rk := range s.ranks {
		h.u64(uint64(rk.outcome))
	}
	return uint64(h)
}

// rounds returns round j, drawn once for all ranks.
func (s *Sim) rounds(j int) round {
	for len(s.program) <= j {
		s.program = append(s.program, s.roundOf(len(s.program)))
	}
	return s.program[j]
}

// consume checks completion c of rank rk against what its program expects:
// the bytes delivered are the bytes their sender wrote, a reduction is the
// sum of the members' contributions, a split gives the expected group.
func (s *Sim) consume(rk *rank, c proto.Completion) error {
	fail := func(format string, a ...any) error {
		return fmt.Errorf("sim: slice %d: rank %d, %s: %s", s.k, rk.id, c.Describe(), fmt.Sprintf(format, a...))
	}
	if c.Err != proto.ErrNone {
		return fail("error %s", c.Err)
	}
	_, recv, csend, crecv, list := s.addrs()
	if rk.step < 2 { // a split
		cc := cGroup + rk.step
		ms := s.members(rk.id, cc)
		pos := -1
		for i, m := range ms {
			if m == rk.id {
				pos = i
			}
		}
		if c.NewCommSize() != len(ms) || c.NewCommRank() != pos {
			return fail("communicator of %d members, position %d; want %d, %d", c.NewCommSize(), c.NewCommRank(), len(ms), pos)
		}
		for i, m := range ms {
			if got := binary.LittleEndian.Uint32(rk.mem[list+4*uint64(i):]); got != uint32(m) {
				return fail("member list entry %d = %d, want %d", i, got, m)
			}
		}
		rk.comm[cc] = c.NewComm()
		return nil
	}
	rd := rk.cur
	j := rk.round
	switch rd.kind {
	case rRelay:
		if c.Kind == proto.KindRecv {
			x := uint64(c.Tag) - relayTag - 4*uint64(j)
			if x < 1 || x > 3 || c.Source != rk.id^1 || c.Count != rd.len {
				return fail("want a message from %d, tag %d + 1 .. 3, %d bytes", rk.id^1, relayTag+4*j, rd.len)
			}
			return s.check(rk.mem[recv:recv+rd.len], c.Source, relayKey(j, x), fail)
		}
	case rExchange:
		if c.Kind == proto.KindSend {
			if c.Count != rd.len {
				return fail("sent %d bytes, want %d", c.Count, rd.len)
			}
			return nil
		}
		R := len(s.ranks)
		from := proto.Rank((int(rk.id) - rd.offset + R) % R)
		if c.Source != from || c.Tag != int32(j) || c.Count != rd.len {
			return fail("want a message from %d, tag %d, %d bytes", from, j, rd.len)
		}
		return s.check(rk.mem[recv:recv+rd.len], from, j, fail)
	case rAllreduce:
		sums := s.sums(rk.id, rd, j)
		for w, sum := range sums {
			if got := binary.LittleEndian.Uint64(rk.mem[crecv+8*uint64(w):]); got != sum {
				return fail("round %d allreduce: element %d = %#x, want %#x", j, w, got, sum)
			}
		}
	case rBcast:
		ms := s.members(rk.id, rd.comm)
		root := ms[rd.rootAt%uint64(len(ms))]
		return s.check(rk.mem[csend:csend+rd.len], root, j, fail)
	case rWild:
		if c.Kind == proto.KindRecv {
			if c.Tag != int32(wildTag+j) || c.Count != 8 || c.Source == rk.id || !slices.Contains(s.members(rk.id, cGroup), c.Source) {
				return fail("want 8 bytes with tag %d from another member of the group", wildTag+j)
			}
			rk.outcome.u64(uint64(j)<<32 | uint64(uint32(c.Source)))
			return s.check(rk.mem[recv:recv+8], c.Source, j, fail)
		}
	}
	return nil
}

// sumKey names one allreduce of the workload: communicator kind, color, round.
type sumKey struct {
	comm  int
	color int32
	round int
}

type sumEntry struct {
	sums []uint64
	left int // members that have not checked it yet
}

// sums is the expected result of rank r's allreduce in round j, computed
// once per communicator and kept until every member has checked it.
func (s *Sim) sums(r proto.Rank, rd round, j int) []uint64 {
	key := sumKey{rd.comm, s.color(r, rd.comm), j}
	e := s.sumCache[key]
	if e == nil {
		ms := s.members(r, rd.comm)
		e = &sumEntry{sums: make([]uint64, rd.len/8), left: len(ms)}
		for w := range e.sums {
			for _, m := range ms {
				e.sums[w] += s.word(m, j, uint64(w))
			}
		}
		s.sumCache[key] = e
	}
	if e.left--; e.left == 0 {
		delete(s.sumCache, key)
	}
	return e.sums
}

func (s *Sim) check(b []byte, src proto.Rank, j int, fail func(string, ...any) error) error {
	for w := uint64(0); w < uint64(len(b))/8; w++ {
		if got, want := binary.LittleEndian.Uint64(b[8*w:]), s.word(src, j, w); got != want {
			return fail("round %d: byte %d from rank %d: word %#x, want %#x", j, 8*w, src, got, want)
		}
	}
	return nil
}

// status is the status byte rank rk's agent computes at a strobe.
func (rk *rank) status() uint8 {
	switch rk.state {
	case sStarting:
		return proto.StatusStarting
	case sExited:
		return proto.StatusNotMPI
	case sFinalized:
		return proto.StatusFinalized
	case sBlocked:
		if len(rk.inbox) > 0 {
			return proto.StatusWoken | rk.call
		}
		return rk.call
	}
	return proto.StatusRunning
}

// DetStats are deterministic mode's counters of the first replica (every
// replica counts the same): wildcard answers decided by the clocks, forced
// at quiescent points, and Test-family releases.
func (s *Sim) DetStats() (core.DetStats, uint64) { return s.cores[0].DetStats() }
