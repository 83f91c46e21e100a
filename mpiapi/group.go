package mpiapi

import (
	"hash/fnv"

	"github.com/bcsmpi/bcsmpi/internal/proto"
	"github.com/bcsmpi/bcsmpi/mds"
)

// groupCall names a sequence of MPI_Comm_create_group calls that the
// members of one group make on one communicator with one tag: the n-th
// call of every member is the same call (the standard requires them to
// be made in the same order by every member).
type groupCall struct {
	comm proto.CommID
	tag  int32
	hash uint64
}

// CreateGroup makes a communicator of g's members, ranked as in g
// (MPI_Comm_create_group). Unlike Create it is collective over g only: the
// members of c outside g do not call it, and c's own collectives are not
// disturbed. g must be a subset of c's group; a caller outside g (an empty
// g too) gets nil and no error, locally. tag (>= 0) tells apart concurrent
// calls with the same group.
func (c *Comm) CreateGroup(g *Group, tag int) (*Comm, error) {
	const call = "MPI_Comm_create_group"
	p, err := enter(call, c)
	if err != nil {
		return nil, err
	}
	if tag < 0 || tag > 1<<31-1 {
		return nil, p.errf(ErrTag, call, "tag = %d, want 0..%d", tag, 1<<31-1)
	}
	return p.createGroup(call, c, g, int32(tag))
}

// CreateFromGroup makes a communicator of g's members, ranked as in g, with
// no parent communicator (MPI_Comm_create_from_group): collective over g
// only; tag, any string, tells apart concurrent calls with the same group.
// The runtime makes it as a group creation under the world, which holds
// every process of a bcsrun job.
func CreateFromGroup(g *Group, tag string) (*Comm, error) {
	const call = "MPI_Comm_create_from_group"
	p, err := enter(call, &world)
	if err != nil {
		return nil, err
	}
	h := fnv.New32a()
	h.Write([]byte(tag))
	// String tags take the negative half of the tag space, so they never
	// meet the integer tags of MPI_Comm_create_group on the world.
	return p.createGroup(call, &world, g, int32(h.Sum32()|1<<31))
}

func (p *process) createGroup(call string, c *Comm, g *Group, tag int32) (*Comm, error) {
	if g == nil {
		return nil, p.errf(ErrGroup, call, "group is nil, want a group")
	}
	for i, w := range g.ranks {
		if c.commRank(w) < 0 {
			return nil, p.errf(ErrGroup, call, "group rank %d (world rank %d) is not a member of the communicator", i, w)
		}
	}
	me := g.Rank()
	if me == Undefined { // outside the group (MPI_GROUP_EMPTY too): no communicator, locally
		return nil, nil
	}
	hash := proto.GroupHash(g.ranks)
	if p.groupSeq == nil {
		p.groupSeq = make(map[groupCall]uint32)
	}
	k := groupCall{c.id, tag, hash}
	p.groupSeq[k]++
	seq := p.groupSeq[k]
	list := make([]int32, len(g.ranks)) // the agent writes the new group's world ranks here
	var out *Comm
	err := p.run(mds.CommCreate, 0, func() (*Request, error) {
		r, err := p.newRequest(call, proto.KindColl, list, 1)
		if err != nil {
			return nil, err
		}
		r.comm = c
		r.after = func() error {
			nc, err := p.adopt(call, r, list)
			out = nc
			return err
		}
		d := proto.Descriptor{Kind: proto.KindColl, Coll: proto.CollGroup, Comm: c.id, CollSeq: seq, Req: r.slot, RAddr: addrOf(list, 0)}
		d.SetGroup(tag, int32(me), len(g.ranks), hash)
		d.SetLives(p.takeLife(r))
		if err := p.post(d, nil); err != nil {
			p.unlive(r)
			return r, err
		}
		return r, nil
	})
	return out, err
}
