package scheduler

import (
	"encoding/binary"
	"slices"

	"github.com/bcsmpi/bcsmpi/internal/plan"
	"github.com/bcsmpi/bcsmpi/internal/proto"
)

// MPI_Comm_create_group (proto.CollGroup) is collective over the new
// group only: the parent's other members do not call, so it cannot be a
// collective of the parent (their collective counts would diverge). Its
// descriptors are gathered by (parent, tag, group hash, the caller's count
// of such calls) until every rank of the group has posted; then the
// members, ordered by their rank in the group, are checked against the hash
// they all named and the new communicator gets the next id, as a Split's
// do: the same on every node, since every node sees the descriptors in the
// same order.

type groupKey struct {
	comm proto.CommID
	tag  int32
	hash uint64
	seq  uint32
}

// groupMake is one MPI_Comm_create_group waiting for its members.
type groupMake struct {
	heads  []proto.Descriptor // by rank in the group; Kind 0: not posted yet
	posted int
}

func (s *Scheduler) postGroup(d proto.Descriptor) {
	if s.groups == nil {
		s.groups = make(map[groupKey]*groupMake)
	}
	k := groupKey{d.Comm, d.GroupTag(), d.GroupID(), d.CollSeq}
	g := s.groups[k]
	n := int(d.GroupSize())
	if g == nil {
		g = &groupMake{heads: make([]proto.Descriptor, n)}
		s.groups[k] = g
	}
	i := int(d.GroupRank())
	switch {
	case n != len(g.heads):
		s.fail([]proto.Rank{d.Rank}, "rank %d called MPI_Comm_create_group on %s (tag %d) with a group of %d ranks, another member with one of %d", d.Rank, commName(d.Comm), d.GroupTag(), n, len(g.heads))
		return
	case g.heads[i].Kind != 0:
		s.fail([]proto.Rank{g.heads[i].Rank, d.Rank}, "ranks %d and %d both called MPI_Comm_create_group on %s (tag %d) as rank %d of the group", g.heads[i].Rank, d.Rank, commName(d.Comm), d.GroupTag(), i)
		return
	}
	g.heads[i] = d
	g.posted++
	if g.posted < n {
		return
	}
	delete(s.groups, k)
	members := make([]proto.Rank, n)
	data := make([]byte, 4*n)
	for j, h := range g.heads {
		members[j] = h.Rank
		binary.LittleEndian.PutUint32(data[4*j:], uint32(h.Rank))
	}
	if proto.GroupHash(members) != k.hash {
		s.fail(members, "MPI_Comm_create_group on %s (tag %d): the members named different groups (the ranks that called, in group order, are %v)", commName(d.Comm), d.GroupTag(), members)
		return
	}
	for _, d := range g.heads {
		if d.Lives() > proto.CommsMax {
			for _, h := range g.heads {
				s.complete(tooMany(h, d))
			}
			return
		}
	}
	id := s.newCommID()
	s.comms[id] = newComm(id, members, len(s.nodeOf))
	for j, h := range g.heads {
		s.plan.Writes = append(s.plan.Writes, plan.Write{Rank: h.Rank, Addr: h.RAddr, Data: data})
		s.complete(proto.NewCommCompletion(h.Rank, h.Req, id, j, n))
	}
}

// groupWaits lists the members of group creations not every member has
// entered (Waits sorts them).
func (s *Scheduler) groupWaits(out []Wait) []Wait {
	for _, g := range s.groups {
		for _, d := range g.heads {
			if d.Kind != 0 {
				out = append(out, Wait{d.Rank, d, "collective"})
			}
		}
	}
	return out
}

// groupBusy reports whether rank q waits in a group creation.
func (s *Scheduler) groupBusy(q proto.Rank) bool {
	for _, g := range s.groups {
		if slices.ContainsFunc(g.heads, func(d proto.Descriptor) bool { return d.Kind != 0 && d.Rank == q }) {
			return true
		}
	}
	return false
}
