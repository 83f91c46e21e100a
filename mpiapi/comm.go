package mpiapi

import (
	"encoding/binary"
	"slices"
	"unsafe"

	"github.com/bcsmpi/bcsmpi/internal/proto"
	"github.com/bcsmpi/bcsmpi/mds"
)

// Undefined is MPI_UNDEFINED: as a Split color it means "no new
// communicator for me"; ranks not in a group are reported as Undefined.
const Undefined = -32766

// Results of Compare and CompareGroups.
const (
	Ident     = 0 // the same communicator (or group)
	Congruent = 1 // same members in the same order, different communicators
	Similar   = 2 // same members, different order
	Unequal   = 3
)

// Group is an ordered set of ranks (MPI_Group), identified by world rank.
// Groups are local objects: making one involves no other rank.
type Group struct{ ranks []proto.Rank }

// Group returns c's group (MPI_Comm_group).
func (c *Comm) Group() *Group {
	g := &Group{ranks: make([]proto.Rank, c.size)}
	for i := range g.ranks {
		g.ranks[i] = c.worldRank(i)
	}
	return g
}

// Size is the number of ranks in g.
func (g *Group) Size() int { return len(g.ranks) }

// Rank is the caller's rank in g, or Undefined.
func (g *Group) Rank() int {
	if self == nil {
		return Undefined
	}
	if i := slices.Index(g.ranks, self.rank); i >= 0 {
		return i
	}
	return Undefined
}

func groupErr(call, format string, a ...any) error {
	return self.errf(ErrGroup, call, format, a...)
}

// Incl makes the group of g's ranks listed in ranks, in that order.
func (g *Group) Incl(ranks []int) (*Group, error) {
	if _, err := g.distinct("MPI_Group_incl", ranks); err != nil {
		return nil, err
	}
	out := &Group{ranks: make([]proto.Rank, len(ranks))}
	for i, r := range ranks {
		out.ranks[i] = g.ranks[r]
	}
	return out, nil
}

// Excl makes the group of g's ranks not listed in ranks, in g's order.
func (g *Group) Excl(ranks []int) (*Group, error) {
	drop, err := g.distinct("MPI_Group_excl", ranks)
	if err != nil {
		return nil, err
	}
	out := &Group{}
	for i, w := range g.ranks {
		if !drop[i] {
			out.ranks = append(out.ranks, w)
		}
	}
	return out, nil
}

// distinct checks that ranks are distinct ranks of g and returns them as a set.
func (g *Group) distinct(call string, ranks []int) (map[int]bool, error) {
	set := make(map[int]bool, len(ranks))
	for i, r := range ranks {
		if r < 0 || r >= len(g.ranks) {
			return nil, self.errf(ErrRank, call, "ranks[%d] = %d, want 0..%d", i, r, len(g.ranks)-1)
		}
		if set[r] {
			return nil, self.errf(ErrRank, call, "ranks[%d] = %d appears twice", i, r)
		}
		set[r] = true
	}
	return set, nil
}

// Union is g's ranks followed by h's ranks not in g.
func (g *Group) Union(h *Group) *Group {
	out := &Group{ranks: slices.Clone(g.ranks)}
	for _, w := range h.ranks {
		if !slices.Contains(g.ranks, w) {
			out.ranks = append(out.ranks, w)
		}
	}
	return out
}

// Intersection is g's ranks that are also in h, in g's order.
func (g *Group) Intersection(h *Group) *Group {
	out := &Group{}
	for _, w := range g.ranks {
		if slices.Contains(h.ranks, w) {
			out.ranks = append(out.ranks, w)
		}
	}
	return out
}

// Difference is g's ranks that are not in h, in g's order.
func (g *Group) Difference(h *Group) *Group {
	out := &Group{}
	for _, w := range g.ranks {
		if !slices.Contains(h.ranks, w) {
			out.ranks = append(out.ranks, w)
		}
	}
	return out
}

// TranslateRanks maps ranks of g to the ranks of the same processes in h
// (Undefined for those not in h).
func (g *Group) TranslateRanks(ranks []int, h *Group) ([]int, error) {
	out := make([]int, len(ranks))
	for i, r := range ranks {
		if r < 0 || r >= len(g.ranks) {
			return nil, self.errf(ErrRank, "MPI_Group_translate_ranks", "ranks[%d] = %d, want 0..%d", i, r, len(g.ranks)-1)
		}
		out[i] = Undefined
		if j := slices.Index(h.ranks, g.ranks[r]); j >= 0 {
			out[i] = j
		}
	}
	return out, nil
}

// CompareGroups returns Ident (same ranks, same order), Similar (same ranks)
// or Unequal.
func CompareGroups(g, h *Group) int {
	if slices.Equal(g.ranks, h.ranks) {
		return Ident
	}
	if len(g.ranks) == len(h.ranks) {
		a, b := slices.Clone(g.ranks), slices.Clone(h.ranks)
		slices.Sort(a)
		slices.Sort(b)
		if slices.Equal(a, b) {
			return Similar
		}
	}
	return Unequal
}

// Compare returns Ident (the same communicator), Congruent (same group, same
// order), Similar (same members) or Unequal.
func Compare(a, b *Comm) int {
	if a == b || (a.id == b.id && !a.freed && !b.freed) {
		return Ident
	}
	switch CompareGroups(a.Group(), b.Group()) {
	case Ident:
		return Congruent
	case Similar:
		return Similar
	}
	return Unequal
}

// split runs the runtime's Split collective on c.
func split(call string, c *Comm, color, key int) (*Comm, error) {
	return splitAsk(call, c, color, key, false)
}

// splitAsk is split; grant: ask for a grant of local duplicates of c
// (Dup), which the runtime gives with a duplicate that every member asked
// for.
func splitAsk(call string, c *Comm, color, key int, grant bool) (*Comm, error) {
	p, err := enter(call, c)
	if err != nil {
		return nil, err
	}
	if color != Undefined && color < 0 {
		return nil, p.errf(ErrArg, call, "color = %d, want >= 0 or mpiapi.Undefined", color)
	}
	if key < -1<<31 || key > 1<<31-1 {
		return nil, p.errf(ErrArg, call, "key = %d does not fit 32 bits", key)
	}
	col := int32(color)
	if color == Undefined {
		col = proto.UndefinedColor
	}
	list := make([]int32, c.size) // the agent writes the new group's world ranks here
	var out *Comm
	prim, _ := mds.ParsePrim(call)
	err = p.run(prim, 0, func() (*Request, error) {
		r, err := p.icoll(c, coll{call: call, kind: proto.CollSplit, color: col, key: int32(key),
			recv: addrOf(list, 0), keep: list, grant: grant})
		if err != nil {
			return nil, err
		}
		r.after = func() error {
			if r.comp.Err == proto.ErrNoComm {
				return nil
			}
			nc, err := p.adopt(call, r, list)
			out = nc
			if n := r.comp.NewCommDups(); err == nil && n > 0 {
				// Every member of c got this grant with this duplicate
				// (the runtime gives it only when all asked).
				c.dupNext, c.dupLeft = nc.id+1, n
			}
			return err
		}
		return r, nil
	})
	return out, err
}

// adopt makes the communicator a Split or a group creation's completion r
// describes (proto.NewCommCompletion: its id, the caller's rank in it, its
// size; list: its members' world ranks, as the runtime wrote them).
func (p *process) adopt(call string, r *Request, list []int32) (*Comm, error) {
	n := r.comp.NewCommSize()
	if n < 1 || n > len(list) {
		return nil, p.errf(ErrIntern, call, "the runtime made a communicator of %d ranks, want 1..%d", n, len(list))
	}
	raw := unsafe.Slice((*byte)(unsafe.Pointer(&list[0])), 4*n)
	nc := &Comm{id: r.comp.NewComm(), rank: r.comp.NewCommRank(), size: n,
		members: make([]proto.Rank, n), toComm: make([]int32, p.size)}
	for i := range nc.toComm {
		nc.toComm[i] = -1
	}
	for i := range n {
		w := proto.Rank(binary.LittleEndian.Uint32(raw[4*i:]))
		if w < 0 || w >= p.size {
			return nil, p.errf(ErrIntern, call, "the runtime listed world rank %d in the new communicator", w)
		}
		nc.members[i] = w
		nc.toComm[w] = int32(i)
	}
	if nc.rank < 0 || nc.rank >= n || nc.members[nc.rank] != p.rank {
		return nil, p.errf(ErrIntern, call, "the runtime placed rank %d at position %d of the new communicator", p.rank, nc.rank)
	}
	nc.made = call
	nc.counted, r.counts = r.counts, false
	p.comms[nc.id] = nc
	return nc, nil
}

// Split partitions c by color (MPI_Comm_split): members with the same color
// form a new communicator, ranked by key, ties broken by rank in c. A member
// with color Undefined gets nil (MPI_COMM_NULL). Collective over c.
func (c *Comm) Split(color, key int) (*Comm, error) { return split("MPI_Comm_split", c, color, key) }

// Dup makes a new communicator with c's group and a separate message space
// (MPI_Comm_dup). Collective over c. Most duplicates are made without the
// runtime, from the ids it granted c with an earlier one (see localDup).
func (c *Comm) Dup() (*Comm, error) {
	const call = "MPI_Comm_dup"
	if c == nil {
		return split(call, c, 0, 0)
	}
	if c.dupLeft > 0 {
		return localDup(c)
	}
	return splitAsk(call, c, 0, c.rank, true)
}

// Local duplicates. A Comm_dup through the runtime is a Split collective:
// at least two slices (posted in one, exchanged in the next, the caller
// woken at the strobe after), and MPICH's comm/ctxalloc makes 200,000 of
// them. A blocking Dup therefore asks the runtime for a grant
// (proto.Descriptor.DupGrant), and the scheduler, when every member asked,
// reserves the ids after the new communicator's for c's next duplicates
// (proto.Completion.NewCommDups; scheduler doc.go, "Local duplicates").
// While c holds granted ids, Dup takes the next one locally, posting
// nothing: every member of c calls Dup on c in the same order (it is
// collective) and holds the same grant, so each member takes the same id
// for the same duplicate, and the scheduler knows that id as a duplicate
// of c from the grant, the first time a descriptor names it. The grant is
// taken only from a blocking Dup's completion, consumed by the call
// itself, so no member can see it earlier or later in its program than
// another; an Idup never asks (its completion is consumed whenever the
// program waits), but takes a granted id when c holds one, and its
// request is then complete from the start.
//
// A local duplicate counts in p.lives like any creation but is never
// refused: the scheduler grants no more ids than would take the member
// with the most live communicators past proto.CommsMax, so a program
// whose ranks make only duplicates of c meanwhile stays within the bound.
// A rank that makes communicators through other calls between the grant
// and the duplicate can pass the bound by at most c's remaining grant
// (1024 at most); its next creation through the runtime is then refused,
// on every member alike, as before. What a local duplicate does not do:
// it is no collective on c, so members that called Dup and members that
// called another collective on c are not reported as a mismatch there,
// and the runtime's collective counters (NCOLL) and MMDS's count of
// collectives do not see it (MMDS records the MPI_Comm_dup call). It does
// advance c's count of collective calls (collSeq), so a member that skipped
// a Dup (or made one more) is caught at c's next collective (scheduler
// doc.go, "Local duplicates").

// localDup makes c's next duplicate from its grant, without the runtime.
func localDup(c *Comm) (*Comm, error) {
	const call = "MPI_Comm_dup"
	p, err := enter(call, c)
	if err != nil {
		return nil, err
	}
	t0 := p.mmds.begin(true)
	nc := p.dupFromGrant(c, call)
	p.mmds.end(mds.CommDup, t0, 0, true)
	return nc, nil
}

// dupFromGrant makes c's next duplicate from its grant (c.dupLeft > 0):
// call is MPI_Comm_dup or MPI_Comm_idup.
func (p *process) dupFromGrant(c *Comm, call string) *Comm {
	nc := &Comm{id: c.dupNext, rank: c.rank, size: c.size, members: make([]proto.Rank, c.size),
		toComm: make([]int32, p.size), made: call, counted: true}
	c.dupNext++
	c.dupLeft--
	// A local duplicate counts as a collective call on c (as a Dup through
	// the runtime does), though it posts nothing: a member that made one
	// duplicate fewer or more than the others then numbers its next
	// collective on c differently, and the scheduler matches it with no
	// other member's (the deadlock or collective-mismatch report names the
	// call numbers) instead of its duplicates taking the others' ids
	// unnoticed forever.
	c.collSeq++
	for i := range nc.toComm {
		nc.toComm[i] = -1
	}
	for i := range nc.members {
		w := c.worldRank(i)
		nc.members[i] = w
		nc.toComm[w] = int32(i)
	}
	if p.lives == 0 {
		p.lives = 1
	}
	p.lives++
	p.comms[nc.id] = nc
	return nc
}

// Idup starts a duplicate of c (MPI_Comm_idup): the nonblocking form of
// Dup, a collective over c that members may overlap with other
// collectives on c, including other Idups, posted in the same order on
// every member. The new communicator exists once r has completed (Wait,
// Test or their array forms): then r.Comm() returns it.
func (c *Comm) Idup() (*Request, error) {
	const call = "MPI_Comm_idup"
	p, err := enter(call, c)
	if err != nil {
		return nil, err
	}
	if c.dupLeft > 0 { // a granted id: complete at once (see localDup)
		return p.nonblocking(mds.CommDup, 0, func() (*Request, error) {
			nc := p.dupFromGrant(c, call)
			return p.track(&Request{call: call, kind: proto.KindColl, comm: c, done: true, made: nc, status: emptyStatus}), nil
		})
	}
	list := make([]int32, c.size) // the agent writes the new group's world ranks here
	return p.nonblocking(mds.CommDup, 0, func() (*Request, error) {
		r, err := p.icoll(c, coll{call: call, kind: proto.CollSplit, key: int32(c.rank),
			recv: addrOf(list, 0), keep: list})
		if err != nil {
			return nil, err
		}
		r.after = func() error {
			nc, err := p.adopt(call, r, list)
			r.made = nc
			return err
		}
		return r, nil
	})
}

// Comm is the communicator a completed Idup made; nil before it completes
// and for every other request.
func (r *Request) Comm() *Comm {
	if r == nil || !r.done {
		return nil
	}
	return r.made
}

// Discard releases a request of Idup whose communicator the program will
// never see (the C layer's MPI_Comm_idup when an attribute copy callback
// failed): the handle is retired at once, the duplicate completes in the
// background (so the other members' Idup completes; Finalize waits for
// it), and its communicator is then released on this rank alone, as
// Forget does.
func (r *Request) Discard() {
	p, err := current("MPI_Comm_idup")
	if err != nil || r == nil || r.retiredBy != "" {
		return
	}
	p.unlive(r) // the program will never hold it: its life is back now, in program order
	after := r.after
	r.after = func() error {
		if after != nil {
			if err := after(); err != nil {
				return err
			}
		}
		if r.made != nil {
			r.made.Forget()
			r.made = nil
		}
		return nil
	}
	p.retire(r, "MPI_Comm_idup")
	if r.done { // completed already: after ran before it was replaced
		if r.made != nil {
			r.made.Forget()
			r.made = nil
		}
		return
	}
	p.freeing = append(p.freeing, r)
	p.reap()
}

// Create makes a communicator of g's members, ranked as in g
// (MPI_Comm_create); members of c outside g get nil. Every member of c
// calls it, with the same group or with disjoint groups (each member of a
// group passing that group), each of which becomes a communicator.
// Collective over c.
func (c *Comm) Create(g *Group) (*Comm, error) {
	const call = "MPI_Comm_create"
	if g == nil {
		p, err := enter(call, c)
		if err != nil {
			return nil, err
		}
		return nil, p.errf(ErrGroup, call, "group = nil, want a group made from the communicator's group")
	}
	if c != nil {
		for i, w := range g.ranks {
			if c.commRank(w) < 0 {
				return nil, groupErr(call, "group rank %d (world rank %d) is not a member of the communicator", i, w)
			}
		}
	}
	me := g.Rank()
	if me == Undefined {
		return split(call, c, Undefined, 0)
	}
	// Members may pass different, disjoint groups (MPI-2.2): each group
	// becomes its own communicator, told apart by the lowest rank in c of
	// its members.
	color := 0
	if c != nil {
		color = c.size
		for _, w := range g.ranks {
			color = min(color, c.commRank(w))
		}
	}
	return split(call, c, color, me)
}

// Free releases c (MPI_Comm_free); c must not be used afterwards. Collective
// over c, but it does not wait for the other members: its collective
// completes in the background (like MPICH's and Open MPI's, whose free only
// drops a reference), so a rank may free a communicator and then wait for a
// message the others send on it before they free it (operations pending on
// c complete normally, MPI 5.0 §7.4.3). The collective is polled by later
// calls and waited for by Finalize. Communicator ids are never reused; the
// slot a communicator holds in this rank's count of live communicators
// (proto.CommsMax: a creation beyond it fails with ErrOther) is released
// when this rank calls Free (see takeLife).
func (c *Comm) Free() error {
	const call = "MPI_Comm_free"
	p, err := enter(call, c)
	if err != nil {
		return err
	}
	if c.id == 0 {
		return p.errf(ErrComm, call, "MPI_COMM_WORLD cannot be freed")
	}
	r, err := p.nonblocking(mds.CommFree, 0, func() (*Request, error) { return p.icoll(c, coll{call: call, kind: proto.CollFree}) })
	if err != nil { // not posted: c stays usable, and the others' free waits for a retry
		return err
	}
	c.freed = true
	p.release(c)
	delete(p.comms, c.id)
	p.retire(r, call) // no handle: the program cannot wait for it
	p.freeing = append(p.freeing, r)
	p.reap()
	return nil
}

// Forget releases c on this rank alone; c must not be used afterwards. It
// is for a duplicate the program never saw: the C layer's MPI_Comm_dup
// when an attribute copy callback failed on this rank (MPI then returns
// MPI_COMM_NULL). Unlike Free it is not collective, so it cannot hang on
// members whose copies succeeded; they keep their duplicate, and what they
// send on it to this rank is never received.
func (c *Comm) Forget() {
	p, err := current("MPI_Comm_dup")
	if err != nil || c.id == 0 {
		return
	}
	c.freed = true
	p.release(c)
	delete(p.comms, c.id)
}

// ID is the communicator's job-wide id (0 for the world), as the runtime's
// traces and MDS files name it.
func (c *Comm) ID() uint32 { return uint32(c.id) }

// The bound on live communicators (proto.CommsMax) is judged by the
// scheduler from counts each rank keeps in its own program's order
// (proto.Descriptor.Lives), so that the answer depends on no timing (the
// same in a --deterministic run and its replay): p.lives is +1 when the
// rank posts a creation that gives it a communicator (Split, Dup, Idup,
// Create, CreateGroup; not a color of Undefined), -1 when it posts Free or
// calls Forget, when it discards an Idup (Discard), and when it learns that
// a creation was refused (the request's completion is consumed: at once for
// the blocking calls, in the Wait or Test that completes an Idup).

// takeLife counts the creation r is about to post against the process's lives
// and returns the count to carry.
func (p *process) takeLife(r *Request) uint32 {
	if p.lives == 0 {
		p.lives = 1
	}
	p.lives++
	r.counts = true
	return p.lives
}

// unlive gives back the life creation r took, if it holds one.
func (p *process) unlive(r *Request) {
	if r.counts {
		r.counts = false
		p.lives--
	}
}

// release gives back the life communicator c holds, if it holds one.
func (p *process) release(c *Comm) {
	if c.counted {
		c.counted = false
		p.lives--
	}
}
