package scheduler

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"slices"
	"strings"

	"github.com/bcsmpi/bcsmpi/internal/plan"
	"github.com/bcsmpi/bcsmpi/internal/proto"
	"github.com/bcsmpi/bcsmpi/internal/reduce"
)

// UndefinedColor is MPI_UNDEFINED as the color of a Split (proto.UndefinedColor).
const UndefinedColor = proto.UndefinedColor

// commInfo is one communicator: its members in communicator-rank order.
type commInfo struct {
	id      proto.CommID
	members []proto.Rank // communicator rank → world rank
	index   []int32      // world rank → communicator rank, -1 if not a member
	grants  uint8        // grants of local duplicates made to it so far (dupGrant)
}

// dupRange is a grant of local duplicates (dupGrant): ids lo..hi are the
// next duplicates of parent, made by its members without the runtime; an
// id's entry is made the first time a descriptor names it (comm).
type dupRange struct {
	lo, hi proto.CommID
	parent *commInfo
}

// comm is communicator id's entry, or nil if no communicator has that id.
// A local duplicate's entry is made here, the first time a descriptor
// names it: it shares its parent's lists, like any duplicate's.
func (s *Scheduler) comm(id proto.CommID) *commInfo {
	if c := s.comms[id]; c != nil {
		return c
	}
	// The first grant ending at or after id is the only one that may hold it.
	i, _ := slices.BinarySearchFunc(s.dups, id, func(r dupRange, id proto.CommID) int { return cmp.Compare(r.hi, id) })
	if i < len(s.dups) {
		if r := s.dups[i]; r.lo <= id {
			c := &commInfo{id: id, members: r.parent.members, index: r.parent.index}
			s.comms[id] = c
			return c
		}
	}
	return nil
}

// Grants of local duplicates: the first grant to a communicator is
// dupGrantFirst ids, each next one twice the last, up to dupGrantMax.
const (
	dupGrantFirst = 4
	dupGrantMax   = 1024
)

// dupGrant is the number of local duplicates of parent to grant with a
// duplicate whose members' descriptors are heads (all asked: DupGrant):
// doubling with each grant, and never more than would take the member
// with the most live communicators (Lives, this duplicate included) past
// proto.CommsMax.
func dupGrant(parent *commInfo, heads []proto.Descriptor) uint32 {
	most := uint32(0)
	for _, d := range heads {
		if !d.DupGrant() {
			return 0
		}
		most = max(most, d.Lives())
	}
	if most >= proto.CommsMax {
		return 0
	}
	n := uint32(dupGrantFirst) << parent.grants
	return min(n, dupGrantMax, proto.CommsMax-most)
}

func newComm(id proto.CommID, members []proto.Rank, world int) *commInfo {
	c := &commInfo{id: id, members: members, index: make([]int32, world)}
	for i := range c.index {
		c.index[i] = -1
	}
	for i, r := range members {
		c.index[r] = int32(i)
	}
	return c
}

// collKey is one collective of a communicator: its CollSeq, in the space
// of ordinary collectives or (persist) of persistent collectives' starts,
// matched by initialization order (proto.PersistKey).
type collKey struct {
	comm    proto.CommID
	seq     uint32
	persist bool
}

func keyOf(d proto.Descriptor) collKey { return collKey{d.Comm, d.CollSeq, d.Persist} }

// move is one block of a data-moving collective: bytes from one rank's
// memory to another's.
type move struct {
	src, dst         proto.Rank
	srcAddr, dstAddr uint64
	len, moved       uint64
}

// segmented is the progress of a segmented collective, a segment per slice:
// a reduction (segments of the vector are gathered into the fold node's
// staging area, folded in communicator rank order, and the results sent
// out) or a broadcast (Bcast, and Allgather as one broadcast per member:
// node is the root's, or the first member's; no fold).
type segmented struct {
	op         reduce.Op
	t          reduce.Type
	mode       reduce.Mode
	node       proto.NodeID
	esz        uint64
	total, off uint64
	block      []uint64 // Reduce_scatter: start of each member's block, plus the end
}

// coll is one collective call of a communicator, from the first member's
// descriptor to its completion.
type coll struct {
	key    collKey
	comm   *commInfo
	heads  []proto.Descriptor   // by communicator rank; Kind 0: not posted yet
	parts  [][]proto.Descriptor // by communicator rank
	posted int
	first  int // communicator rank of the first member that posted
	moves  []move
	left   int        // moves with bytes still to move
	seg    *segmented // nil, or &segBuf: the collective is segmented
	segBuf segmented
	done   []proto.Completion // Split: the completions it decided
}

// StagingSize is the size of each node's collective staging area that plans
// made under c may address.
func (c Config) StagingSize(ranks int) uint64 { return c.BytesPerSliceMax + 16*uint64(ranks) }

func (s *Scheduler) fail(ranks []proto.Rank, format string, a ...any) {
	if s.plan.Err == nil {
		s.plan.Err = &plan.Error{Slice: s.plan.Slice, Ranks: ranks, Why: fmt.Sprintf(format, a...)}
	}
}

// checkComm verifies that d's rank (and peer) belong to d's communicator.
func (s *Scheduler) checkComm(d proto.Descriptor) bool {
	ci := s.comm(d.Comm)
	if ci == nil {
		s.fail([]proto.Rank{d.Rank}, "rank %d used communicator %d, which does not exist", d.Rank, d.Comm)
		return false
	}
	if ci.index[d.Rank] < 0 {
		s.fail([]proto.Rank{d.Rank}, "rank %d used communicator %d, of which it is not a member", d.Rank, d.Comm)
		return false
	}
	switch d.Kind {
	case proto.KindSend, proto.KindCollPart:
		if ci.index[d.Peer] < 0 {
			s.fail([]proto.Rank{d.Rank}, "rank %d named rank %d, which is not a member of communicator %d", d.Rank, d.Peer, d.Comm)
			return false
		}
	case proto.KindRecv, proto.KindProbe, proto.KindIprobe:
		if d.Peer != proto.AnySource && ci.index[d.Peer] < 0 {
			s.fail([]proto.Rank{d.Rank}, "rank %d named rank %d, which is not a member of communicator %d", d.Rank, d.Peer, d.Comm)
			return false
		}
	case proto.KindColl:
		if d.Coll.Rooted() && ci.index[d.Root()] < 0 {
			s.fail([]proto.Rank{d.Rank}, "rank %d called %s with root world rank %d, not a member of communicator %d", d.Rank, d.Coll.MPIName(), d.Root(), d.Comm)
			return false
		}
	}
	return true
}

// postColl takes one collective descriptor exchanged in DEM.
func (s *Scheduler) postColl(d proto.Descriptor) {
	ci := s.comm(d.Comm)
	me := int(ci.index[d.Rank])
	k := keyOf(d)
	c := s.colls[k]
	if c == nil {
		c = s.newColl(k, ci)
		s.colls[k] = c
	}
	if d.Kind == proto.KindCollPart {
		c.parts[me] = append(c.parts[me], d)
		return
	}
	if c.heads[me].Kind != 0 {
		s.fail([]proto.Rank{d.Rank}, "rank %d posted %s on communicator %d twice", d.Rank, d.CollCall(), d.Comm)
		return
	}
	if c.first >= 0 {
		if why := mismatch(c.heads[c.first], d); why != "" {
			f := c.heads[c.first]
			s.fail([]proto.Rank{f.Rank, d.Rank}, "collective mismatch on %s, %s: %s called %s but %s called %s (%s); %s",
				commName(d.Comm), d.CollCall(), rankName(c, c.first), DescribeCall(f), rankName(c, me), DescribeCall(d), why, sameOrder(d))
			return
		}
	} else {
		c.first = me
	}
	c.heads[me] = d
	c.posted++
	if c.posted == len(ci.members) {
		s.startColl(c)
	}
}

// newColl takes a finished collective's bookkeeping from the free list (so a
// steady stream of collectives does not allocate) or makes a new one.
func (s *Scheduler) newColl(k collKey, ci *commInfo) *coll {
	n := len(ci.members)
	var c *coll
	if m := len(s.freeColls); m > 0 {
		c, s.freeColls = s.freeColls[m-1], s.freeColls[:m-1]
	} else {
		c = new(coll)
	}
	if cap(c.heads) < n {
		c.heads = make([]proto.Descriptor, n)
		c.parts = make([][]proto.Descriptor, n)
	}
	c.heads, c.parts = c.heads[:n], c.parts[:n]
	clear(c.heads)
	for i := range c.parts {
		c.parts[i] = c.parts[i][:0]
	}
	*c = coll{key: k, comm: ci, heads: c.heads, parts: c.parts, first: -1, moves: c.moves[:0],
		segBuf: segmented{block: c.segBuf.block[:0]}, done: c.done[:0]}
	return c
}

// sameOrder is the rule a collective mismatch broke.
func sameOrder(d proto.Descriptor) string {
	if d.Persist {
		return "every member must initialize the same persistent collectives in the same order"
	}
	return "every member must make the same collective calls in the same order"
}

func commName(id proto.CommID) string {
	if id == 0 {
		return "MPI_COMM_WORLD"
	}
	return fmt.Sprintf("communicator %d", id)
}

func rankName(c *coll, i int) string {
	w := c.comm.members[i]
	if c.key.comm == 0 {
		return fmt.Sprintf("rank %d", w)
	}
	return fmt.Sprintf("rank %d (world rank %d)", i, w)
}

// DescribeCall renders a collective descriptor as the call that posted it,
// e.g. "MPI_Reduce(root 0, MPI_SUM, 8 x float64)".
//
// The Gather that starts a reduction with a user operation is rendered as the
// call the user made, e.g. "MPI_Allreduce(user operation 0x3a1f, 4 x float64)".
func DescribeCall(d proto.Descriptor) string {
	var args []string
	name := d.Coll.MPIName()
	if d.UserColl != 0 {
		name = d.UserColl.MPIName()
		if d.UserColl.Rooted() {
			args = append(args, rootName(d))
		}
		args = append(args, fmt.Sprintf("user operation %#04x", d.UserOp))
		if t := reduce.Type(d.DType); t.Valid() {
			args = append(args, fmt.Sprintf("%d x %s", d.Len/uint64(t.Size()), t))
		}
		return name + "(" + strings.Join(args, ", ") + ")"
	}
	if d.Coll.Rooted() {
		args = append(args, rootName(d))
	}
	if d.Coll.Reduces() {
		args = append(args, reduce.Op(d.Op).String())
	}
	switch d.Coll {
	case proto.CollBarrier, proto.CollFree:
	case proto.CollSplit:
		args = append(args, fmt.Sprintf("color %d, key %d", d.Color(), d.Key()))
	case proto.CollGroup:
		args = append(args, fmt.Sprintf("group of %d, rank %d in it, tag %d", d.GroupSize(), d.GroupRank(), d.GroupTag()))
	default:
		t := reduce.Type(d.DType)
		if t.Valid() {
			args = append(args, fmt.Sprintf("%d x %s", d.Len/uint64(t.Size()), t))
		} else {
			args = append(args, fmt.Sprintf("%d bytes", d.Len))
		}
	}
	return name + "(" + strings.Join(args, ", ") + ")"
}

func rootName(d proto.Descriptor) string {
	if d.Comm == 0 {
		return fmt.Sprintf("root %d", d.Root())
	}
	return fmt.Sprintf("root world rank %d", d.Root())
}

// mismatch says how b differs from a, the first member's call, or "".
func mismatch(a, b proto.Descriptor) string {
	if userCall(a) != userCall(b) {
		return "different collectives"
	}
	if a.Coll != b.Coll || a.UserOp != b.UserOp { // a user operation against a predefined one, or two user operations
		return "different operations"
	}
	if a.Coll.Rooted() && a.Root() != b.Root() {
		return "different roots"
	}
	if a.Coll.Reduces() && a.Op != b.Op {
		return "different operations"
	}
	switch a.Coll {
	case proto.CollBarrier, proto.CollFree, proto.CollSplit:
		return ""
	}
	if a.DType != b.DType {
		return "different element types"
	}
	switch a.Coll {
	case proto.CollGatherv, proto.CollScatterv, proto.CollAllgatherv, proto.CollAlltoallv:
		return "" // block sizes are checked pairwise when every member has posted
	}
	if a.Len != b.Len {
		return "different element counts"
	}
	return ""
}

// userCall is the collective the user called: the runtime step's own, or the
// reduction a user operation's Gather starts.
func userCall(d proto.Descriptor) proto.Coll {
	if d.UserColl != 0 {
		return d.UserColl
	}
	return d.Coll
}

func (s *Scheduler) addMove(c *coll, src proto.Rank, srcAddr uint64, dst proto.Rank, dstAddr, n uint64) {
	if n == 0 {
		return
	}
	c.moves = append(c.moves, move{src: src, dst: dst, srcAddr: srcAddr, dstAddr: dstAddr, len: n})
	c.left++
}

// part finds rank i's part of direction dir for peer (a world rank).
func part(c *coll, i int, dir int32, peer proto.Rank) (proto.Descriptor, bool) {
	for _, d := range c.parts[i] {
		if d.Dir() == dir && d.Peer == peer {
			return d, true
		}
	}
	return proto.Descriptor{}, false
}

// startColl turns a collective every member has posted into moves, a
// reduction, or an immediate completion.
func (s *Scheduler) startColl(c *coll) {
	h, m := c.heads, c.comm.members
	p := len(m)
	op := h[0].Coll
	root := -1
	if op.Rooted() {
		root = int(c.comm.index[h[0].Root()])
	}
	needPart := func(i int, dir int32, peer int) (proto.Descriptor, bool) {
		d, ok := part(c, i, dir, m[peer])
		if !ok {
			what := "send"
			if dir == proto.PartRecv {
				what = "receive"
			}
			s.fail([]proto.Rank{m[i]}, "%s called %s without a %s block for %s", rankName(c, i), op.MPIName(), what, rankName(c, peer))
		}
		return d, ok
	}
	sizeMismatch := func(from, to int, sent, want uint64) {
		s.fail([]proto.Rank{m[from], m[to]}, "collective mismatch on %s, %s (%s): %s sends %d bytes to %s, which expects %d bytes",
			commName(c.key.comm), c.heads[c.first].CollCall(), op.MPIName(), rankName(c, from), sent, rankName(c, to), want)
	}
	switch op {
	case proto.CollBarrier, proto.CollFree:
	case proto.CollSplit:
		s.split(c)
	case proto.CollBcast:
		t := reduce.Type(h[0].DType)
		r := &c.segBuf
		*r = segmented{t: t, esz: uint64(t.Size()), total: h[0].Len, node: s.nodeOf[m[root]], block: r.block[:0]}
		if r.total > 0 {
			c.seg = r
		}
	case proto.CollGather:
		for i := range p {
			if i != root || !h[root].InPlace {
				s.addMove(c, m[i], h[i].Addr, m[root], h[root].RAddr+uint64(i)*h[i].Len, h[i].Len)
			}
		}
	case proto.CollScatter:
		for i := range p {
			if i != root || !h[root].InPlace {
				s.addMove(c, m[root], h[root].Addr+uint64(i)*h[i].Len, m[i], h[i].RAddr, h[i].Len)
			}
		}
	case proto.CollAllgather: // p broadcasts, segmented together
		t := reduce.Type(h[0].DType)
		r := &c.segBuf
		*r = segmented{t: t, esz: uint64(t.Size()), total: h[0].Len, node: s.nodeOf[m[0]], block: r.block[:0]}
		if r.total > 0 {
			c.seg = r
		}
	case proto.CollAlltoall:
		for i := range p {
			for j := range p {
				s.addMove(c, m[i], h[i].Addr+uint64(j)*h[i].Len, m[j], h[j].RAddr+uint64(i)*h[i].Len, h[i].Len)
			}
		}
	case proto.CollGatherv:
		for i := range p {
			rp, ok := needPart(root, proto.PartRecv, i)
			if !ok {
				return
			}
			if i == root && h[root].InPlace {
				continue
			}
			if rp.Len != h[i].Len {
				sizeMismatch(i, root, h[i].Len, rp.Len)
				return
			}
			s.addMove(c, m[i], h[i].Addr, m[root], rp.Addr, h[i].Len)
		}
	case proto.CollScatterv:
		for i := range p {
			sp, ok := needPart(root, proto.PartSend, i)
			if !ok {
				return
			}
			if i == root && h[root].InPlace {
				continue
			}
			if sp.Len != h[i].Len {
				sizeMismatch(root, i, sp.Len, h[i].Len)
				return
			}
			s.addMove(c, m[root], sp.Addr, m[i], h[i].RAddr, h[i].Len)
		}
	case proto.CollAllgatherv:
		for i := range p {
			src := h[i].Addr
			if h[i].InPlace {
				own, ok := needPart(i, proto.PartRecv, i)
				if !ok {
					return
				}
				src = own.Addr
			}
			for j := range p {
				rp, ok := needPart(j, proto.PartRecv, i)
				if !ok {
					return
				}
				if rp.Len != h[i].Len {
					sizeMismatch(i, j, h[i].Len, rp.Len)
					return
				}
				if i != j || !h[i].InPlace {
					s.addMove(c, m[i], src, m[j], rp.Addr, h[i].Len)
				}
			}
		}
	case proto.CollAlltoallv:
		for i := range p {
			for j := range p {
				sp, ok1 := needPart(i, proto.PartSend, j)
				rp, ok2 := needPart(j, proto.PartRecv, i)
				if !ok1 || !ok2 {
					return
				}
				if sp.Len != rp.Len {
					sizeMismatch(i, j, sp.Len, rp.Len)
					return
				}
				s.addMove(c, m[i], sp.Addr, m[j], rp.Addr, sp.Len)
			}
		}
	case proto.CollReduce, proto.CollAllreduce, proto.CollScan, proto.CollExscan, proto.CollReduceScatter:
		t := reduce.Type(h[0].DType)
		r := &c.segBuf
		*r = segmented{op: reduce.Op(h[0].Op), t: t, esz: uint64(t.Size()), total: h[0].Len, block: r.block[:0]}
		if op == proto.CollScan || op == proto.CollExscan {
			r.mode = reduce.Prefix
		}
		if op == proto.CollReduce {
			r.node = s.nodeOf[m[root]]
		} else {
			r.node = s.busiest(m)
		}
		if op == proto.CollReduceScatter {
			r.block = append(r.block[:0], make([]uint64, p+1)...)
			for i := range p {
				rp, ok := needPart(i, proto.PartRecv, i)
				if !ok {
					return
				}
				r.block[i+1] = r.block[i] + rp.Len
			}
			if r.block[p] != r.total {
				s.fail(slices.Clone(m), "collective mismatch on %s, %s (MPI_Reduce_scatter): the members' receive counts add up to %d bytes but the vector is %d bytes",
					commName(c.key.comm), c.heads[c.first].CollCall(), r.block[p], r.total)
				return
			}
		}
		if r.total > 0 {
			c.seg = r
		}
	default:
		s.fail([]proto.Rank{m[0]}, "collective %s is not supported", op)
		return
	}
	s.collActive = append(s.collActive, c)
}

// busiest is the node hosting most of ranks (lowest id on ties): the fold
// there keeps the most contributions and results off the network.
func (s *Scheduler) busiest(ranks []proto.Rank) proto.NodeID {
	clear(s.cnt)
	best := s.nodeOf[ranks[0]]
	for _, r := range ranks {
		n := s.nodeOf[r]
		s.cnt[n]++
		if s.cnt[n] > s.cnt[best] || (s.cnt[n] == s.cnt[best] && n < best) {
			best = n
		}
	}
	return best
}

// split builds the new communicators of a Split: one per color, members
// ordered by (key, parent rank); ids are handed out in color order, the same
// on every node.
func (s *Scheduler) split(c *coll) {
	type entry struct {
		color, key int32
		i          int
	}
	es := make([]entry, len(c.heads))
	for i, d := range c.heads {
		es[i] = entry{d.Color(), d.Key(), i}
	}
	slices.SortFunc(es, func(a, b entry) int {
		return cmp.Or(cmp.Compare(a.color, b.color), cmp.Compare(a.key, b.key), cmp.Compare(a.i, b.i))
	})
	// Every member of the parent gets the same answer: if one new
	// communicator would take a rank past proto.CommsMax, none is made.
	for _, e := range es {
		if d := c.heads[e.i]; e.color != UndefinedColor && d.Lives() > proto.CommsMax {
			for _, h := range c.heads {
				c.done = append(c.done, tooMany(h, d))
			}
			return
		}
	}
	for lo := 0; lo < len(es); {
		hi := lo
		for hi < len(es) && es[hi].color == es[lo].color {
			hi++
		}
		group := es[lo:hi]
		lo = hi
		if group[0].color == UndefinedColor {
			for _, e := range group {
				d := c.heads[e.i]
				s.complete(proto.Completion{Rank: d.Rank, Req: d.Req, Kind: proto.KindColl, Err: proto.ErrNoComm})
			}
			continue
		}
		id := s.newCommID()
		members := make([]proto.Rank, len(group))
		data := make([]byte, 4*len(group))
		for j, e := range group {
			members[j] = c.comm.members[e.i]
			binary.LittleEndian.PutUint32(data[4*j:], uint32(members[j]))
		}
		grant := uint32(0)
		if slices.Equal(members, c.comm.members) {
			// A duplicate (Comm_dup, Idup): its lists are its parent's,
			// which never change, so the entry it leaves in the table
			// (communicators are never dropped, doc.go) holds no copy.
			s.comms[id] = &commInfo{id: id, members: c.comm.members, index: c.comm.index}
			if grant = dupGrant(c.comm, c.heads); grant > 0 {
				s.dups = append(s.dups, dupRange{lo: id + 1, hi: id + proto.CommID(grant), parent: c.comm})
				for range grant {
					s.newCommID()
				}
				c.comm.grants = min(c.comm.grants+1, 16) // 4<<16 is past dupGrantMax already
			}
		} else {
			s.comms[id] = newComm(id, members, len(s.nodeOf))
		}
		for j, e := range group {
			d := c.heads[e.i]
			s.plan.Writes = append(s.plan.Writes, plan.Write{Rank: d.Rank, Addr: d.RAddr, Data: data})
			done := proto.NewCommCompletion(d.Rank, d.Req, id, j, len(group))
			done.SetNewCommDups(grant)
			c.done = append(c.done, done)
		}
	}
}

// collChunks schedules this slice's part of every running collective, in the
// order they became ready, after the point-to-point chunks.
func (s *Scheduler) collChunks(p *plan.Plan) {
	keep := s.collActive[:0]
	for _, c := range s.collActive {
		if c.left > 0 {
			s.chunkMoves(p, c)
		}
		if c.seg != nil && c.seg.off < c.seg.total {
			s.chunkSegment(p, c)
		}
		if c.left > 0 || (c.seg != nil && c.seg.off < c.seg.total) {
			keep = append(keep, c)
			continue
		}
		s.finishColl(c)
		p.Collectives++
	}
	clear(s.collActive[len(keep):])
	s.collActive = keep
}

// newCommID hands out the next communicator id, the same on every node
// (ids are never reused: a message still in flight on a freed
// communicator can never meet a newer one).
func (s *Scheduler) newCommID() proto.CommID {
	s.nextComm++
	if s.nextComm == 0 {
		panic("scheduler: communicator ids wrapped around after 2^32 creations")
	}
	return s.nextComm
}

// tooMany is the completion of d, a communicator-making collective one of
// whose members posted over, a descriptor whose Lives is past
// proto.CommsMax.
func tooMany(d, over proto.Descriptor) proto.Completion {
	return proto.Completion{Rank: d.Rank, Req: d.Req, Kind: proto.KindColl, Err: proto.ErrTooManyComms, Source: over.Rank, Count: uint64(over.Lives() - 1)}
}

func (s *Scheduler) finishColl(c *coll) {
	if c.heads[0].Coll == proto.CollSplit {
		for _, x := range c.done {
			s.complete(x)
		}
	} else {
		for _, d := range c.heads {
			s.complete(proto.Completion{Rank: d.Rank, Req: d.Req, Kind: proto.KindColl, Count: d.Len})
		}
	}
	delete(s.colls, c.key)
	c.comm = nil
	s.freeColls = append(s.freeColls, c)
}

func (s *Scheduler) chunkMoves(p *plan.Plan, c *coll) {
	B, C := s.cfg.BytesPerSliceMax, s.cfg.ChunksPerSliceMax
	for i := range c.moves {
		mv := &c.moves[i]
		if mv.moved == mv.len {
			continue
		}
		sn, dn := s.nodeOf[mv.src], s.nodeOf[mv.dst]
		avail := min(B-s.used[sn], B-s.used[dn])
		if s.chunks[sn] >= C || s.chunks[dn] >= C || avail == 0 {
			continue
		}
		n := min(mv.len-mv.moved, avail)
		p.Chunks = append(p.Chunks, proto.Chunk{Src: mv.src, Dst: mv.dst, SrcNode: sn, DstNode: dn,
			Last: mv.moved+n == mv.len, SrcAddr: mv.srcAddr + mv.moved, DstAddr: mv.dstAddr + mv.moved, Off: mv.moved, Len: n})
		s.charge(sn, dn, n)
		mv.moved += n
		if mv.moved == mv.len {
			c.left--
		}
	}
}

func (s *Scheduler) charge(sn, dn proto.NodeID, n uint64) {
	s.used[sn] += n
	s.chunks[sn]++
	if dn != sn {
		s.used[dn] += n
		s.chunks[dn]++
	}
}

// recipients calls fn for every result block of the segment [off, off+seg)
// that is not fanned out (see fanout): the member that receives it, the slot
// it comes from, and the byte range [lo, hi) of the vector.
func (c *coll) recipients(off, seg uint64, fn func(i, slot int, lo, hi uint64)) {
	h := c.heads
	switch h[0].Coll {
	case proto.CollReduce:
		fn(int(c.comm.index[h[0].Root()]), 0, off, off+seg)
	case proto.CollScan:
		for i := range h {
			fn(i, i, off, off+seg)
		}
	case proto.CollExscan:
		for i := 1; i < len(h); i++ {
			fn(i, i-1, off, off+seg)
		}
	case proto.CollReduceScatter:
		b := c.seg.block
		for i := range h {
			lo, hi := max(off, b[i]), min(off+seg, b[i+1])
			if lo < hi {
				fn(i, 0, lo, hi)
			}
		}
	}
}

// segment builds the chunks of one segment of a segmented collective. In
// counting mode it only tallies, per node, how many times the segment's
// bytes are charged (cnt), chunks (ccnt) and staging slots (slots), from
// which chunkSegment sizes the segment; then it runs again to emit.
type segment struct {
	s           *Scheduler
	p           *plan.Plan
	count       bool
	seg, stride uint64
}

func (e *segment) chunk(c proto.Chunk) {
	s := e.s
	if e.count {
		s.cnt[c.SrcNode]++
		s.ccnt[c.SrcNode]++
		if c.DstNode != c.SrcNode {
			s.cnt[c.DstNode]++
			s.ccnt[c.DstNode]++
		}
		return
	}
	e.p.Chunks = append(e.p.Chunks, c)
	s.charge(c.SrcNode, c.DstNode, c.Len)
}

// slots reserves k consecutive staging slots on node n and returns the first.
func (e *segment) slots(n proto.NodeID, k int) uint64 {
	if e.count {
		e.s.slots[n] += k
		return 0
	}
	base := e.s.stageUsed[n]
	e.s.stageUsed[n] += uint64(k) * e.stride
	return base
}

// fanout sends the same seg bytes from one source (a rank's memory, or a
// staging slot of srcNode when srcAcc) to every recipient, crossing the
// network once per node: a node with several recipients receives one copy
// into its staging area in this stage and copies it to its members in the
// next.
func (s *Scheduler) fanout(e *segment, stage uint8, srcNode proto.NodeID, src proto.Rank, srcAcc bool, srcAddr, off uint64) {
	clear(s.kn)
	for _, x := range s.recip {
		s.kn[s.nodeOf[x.rank]]++
	}
	for n, k := range s.kn {
		if nd := proto.NodeID(n); nd != srcNode && k > 1 {
			s.landing[n] = e.slots(nd, 1)
			first := proto.Rank(-1)
			for _, x := range s.recip {
				if s.nodeOf[x.rank] == nd {
					first = x.rank
					break
				}
			}
			e.chunk(proto.Chunk{Src: src, Dst: first, SrcNode: srcNode, DstNode: nd, Stage: stage, SrcAcc: srcAcc, DstAcc: true,
				SrcAddr: srcAddr, DstAddr: s.landing[n], Off: off, Len: e.seg})
		}
	}
	for _, x := range s.recip {
		n := s.nodeOf[x.rank]
		if n == srcNode || s.kn[n] == 1 {
			from := src
			if srcAcc {
				from = x.rank
			}
			e.chunk(proto.Chunk{Src: from, Dst: x.rank, SrcNode: srcNode, DstNode: n, Stage: stage, SrcAcc: srcAcc,
				SrcAddr: srcAddr, DstAddr: x.addr, Off: off, Len: e.seg})
			continue
		}
		e.chunk(proto.Chunk{Src: x.rank, Dst: x.rank, SrcNode: n, DstNode: n, Stage: stage + 1, SrcAcc: true,
			SrcAddr: s.landing[n], DstAddr: x.addr, Off: off, Len: e.seg})
	}
}

type recipient struct {
	rank proto.Rank
	addr uint64
}

// emit lays out the segment [off, off+e.seg) of c.
func (s *Scheduler) emit(e *segment, c *coll, off uint64) {
	r, m, h := c.seg, c.comm.members, c.heads
	switch h[0].Coll {
	case proto.CollBcast:
		root := int(c.comm.index[h[0].Root()])
		s.recip = s.recip[:0]
		for i, w := range m {
			if i != root {
				s.recip = append(s.recip, recipient{w, h[i].Addr + off})
			}
		}
		s.fanout(e, 0, r.node, m[root], false, h[root].Addr+off, off)
		return
	case proto.CollAllgather: // member i's block is broadcast to block i of every member
		for i, src := range m {
			at := uint64(i) * h[i].Len
			from := h[i].Addr + off
			if h[i].InPlace {
				from = h[i].RAddr + at + off
			}
			s.recip = s.recip[:0]
			for j, w := range m {
				if i != j || !h[i].InPlace {
					s.recip = append(s.recip, recipient{w, h[j].RAddr + at + off})
				}
			}
			s.fanout(e, 0, s.nodeOf[src], src, false, from, off)
		}
		return
	}
	base := e.slots(r.node, len(m))
	for i, w := range m {
		e.chunk(proto.Chunk{Src: w, Dst: w, SrcNode: s.nodeOf[w], DstNode: r.node, DstAcc: true,
			SrcAddr: h[i].Addr + off, DstAddr: base + uint64(i)*e.stride, Off: off, Len: e.seg})
	}
	if !e.count {
		e.p.Folds = append(e.p.Folds, plan.Fold{Node: r.node, Op: r.op, Type: r.t, Mode: r.mode, Base: base, Stride: e.stride, Seg: e.seg, N: len(m)})
	}
	if h[0].Coll == proto.CollAllreduce {
		s.recip = s.recip[:0]
		for i, w := range m {
			s.recip = append(s.recip, recipient{w, h[i].RAddr + off})
		}
		s.fanout(e, 1, r.node, m[0], true, base, off)
		return
	}
	seg := e.seg
	if e.count {
		seg = r.total - off // every member whose block the rest of the vector touches
	}
	c.recipients(off, seg, func(i, slot int, lo, hi uint64) {
		dst := h[i].RAddr + lo
		if len(r.block) > 0 {
			dst = h[i].RAddr + (lo - r.block[i])
		}
		e.chunk(proto.Chunk{Src: m[i], Dst: m[i], SrcNode: r.node, DstNode: s.nodeOf[m[i]], Stage: 1, SrcAcc: true,
			SrcAddr: base + uint64(slot)*e.stride + (lo - off), DstAddr: dst, Off: lo, Len: hi - lo, Last: hi == r.total})
	})
}

// chunkSegment schedules the next segment of a segmented collective (a
// reduction, a broadcast, or an allgather = one broadcast per member): for a reduction, contributions into the fold
// node's staging area (stage 0), the fold, the results out (stage 1, fanned
// out within nodes in stage 2); for a broadcast, the root's data out (stage
// 0, fanned out in stage 1). The segment is as long as every node's
// remaining byte, chunk and staging budget allows; a collective that gets no
// budget waits, unless the slice has not moved anything on its nodes yet, in
// which case one element moves so that every collective progresses.
func (s *Scheduler) chunkSegment(p *plan.Plan, c *coll) {
	r := c.seg
	B, C := s.cfg.BytesPerSliceMax, s.cfg.ChunksPerSliceMax
	clear(s.cnt)
	clear(s.ccnt)
	clear(s.slots)
	e := segment{s: s, p: p, count: true}
	s.emit(&e, c, r.off)
	seg := r.total - r.off
	fresh := true
	room := s.cfg.StagingSize(len(s.nodeOf))
	for n := range s.cnt {
		if s.cnt[n] == 0 && s.slots[n] == 0 {
			continue
		}
		if s.used[n] > 0 || s.chunks[n] > 0 || s.stageUsed[n] > 0 {
			fresh = false
		}
		if s.cnt[n] > 0 {
			// A segment needing more chunks than a slice allows can only
			// ever go alone: in a slice that has not used the node yet.
			fits := s.chunks[n]+s.ccnt[n] <= C || s.chunks[n] == 0
			avail := uint64(0)
			if s.used[n] < B && fits {
				avail = (B - s.used[n]) / uint64(s.cnt[n])
			}
			seg = min(seg, avail)
		}
		if s.slots[n] > 0 {
			seg = min(seg, ((room-s.stageUsed[n])/uint64(s.slots[n]))&^15)
		}
	}
	seg -= seg % r.esz
	if seg == 0 {
		if !fresh {
			return
		}
		seg = min(r.esz, r.total-r.off)
	}
	e = segment{s: s, p: p, seg: seg, stride: (seg + 15) &^ 15}
	s.emit(&e, c, r.off)
	r.off += seg
}

// collWaits lists the members of collectives not every member has entered.
func (s *Scheduler) collWaits(out []Wait) []Wait {
	for _, c := range s.colls {
		if c.posted == len(c.heads) {
			continue
		}
		for _, d := range c.heads {
			if d.Kind != 0 {
				out = append(out, Wait{d.Rank, d, "collective"})
			}
		}
	}
	return out
}

// missing lists the members of d's collective that have not entered it.
func (s *Scheduler) missing(d proto.Descriptor) []proto.Rank {
	if d.Coll == proto.CollGroup { // group.go: who else belongs is known only once all have posted
		return nil
	}
	c := s.colls[keyOf(d)]
	if c == nil {
		return nil
	}
	var out []proto.Rank
	for i, h := range c.heads {
		if h.Kind == 0 {
			out = append(out, c.comm.members[i])
		}
	}
	return out
}

// CommMembers returns the world ranks of communicator id in communicator
// rank order, or nil if it does not exist.
func (s *Scheduler) CommMembers(id proto.CommID) []proto.Rank {
	if c := s.comm(id); c != nil {
		return c.members
	}
	return nil
}
