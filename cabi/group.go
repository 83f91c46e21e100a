package main

/*
#include "shim.h"
*/
import "C"

import (
	"fmt"
	"slices"
	"unsafe"

	"github.com/bcsmpi/bcsmpi/mpiapi"
)

// Groups are local objects: ordered lists of world ranks, kept here (so they
// work on local communicators and in a singleton too) and turned into an
// mpiapi group only when MPI_Comm_create needs one.

const (
	hGroupNull  = 0x108
	hGroupEmpty = 0x109
	kindGroup   = 3
)

type groupEntry struct {
	ranks []int
	gen   uint32
	live  bool
}

var (
	groups     []groupEntry
	freeGroups []int
)

func newGroup(ranks []int) uintptr {
	if len(ranks) == 0 {
		return hGroupEmpty
	}
	var i int
	if n := len(freeGroups); n > 0 {
		i, freeGroups = freeGroups[n-1], freeGroups[:n-1]
	} else {
		i = len(groups)
		groups = append(groups, groupEntry{})
	}
	e := &groups[i]
	e.ranks, e.live = ranks, true
	return userHandle(kindGroup, i, e.gen)
}

// group resolves a group handle to its world ranks (slot -1 for MPI_GROUP_EMPTY).
func group(call, what string, h C.uintptr_t) ([]int, int, C.int) {
	switch uintptr(h) {
	case hGroupEmpty:
		return nil, -1, 0
	case hGroupNull:
		return nil, -1, fail(0, call, errGroup, "%s = MPI_GROUP_NULL, want a group", what)
	}
	kind, i, gen := splitHandle(uintptr(h))
	if kind == kindGroup && i < len(groups) {
		if e := &groups[i]; e.live && e.gen == gen {
			return e.ranks, i, 0
		}
		return nil, -1, fail(0, call, errGroup, "%s = 0x%x was freed with MPI_Group_free", what, uintptr(h))
	}
	return nil, -1, fail(0, call, errGroup, "%s = %s is not a group", what, describe(uintptr(h)))
}

// members is the world ranks of communicator slot ci, in its rank order.
func members(ci int) []int {
	if ic := comms[ci].inter; ic != nil { // inter.go: the local group
		return slices.Clone(ic.lranks)
	}
	c := comms[ci].c
	if c == nil {
		return []int{worldRank}
	}
	n := c.Size()
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	w, err := c.Group().TranslateRanks(idx, mpiapi.World().Group())
	if err != nil {
		panic(fmt.Sprintf("cabi: translating the ranks of a live communicator: %v", err))
	}
	return w
}

//export bcs_comm_group
func bcs_comm_group(h C.uintptr_t, out *C.uintptr_t) C.int {
	const call = "MPI_Comm_group"
	ci, rc := enterComm(call, uintptr(h))
	if rc != 0 {
		return rc
	}
	*out = C.uintptr_t(newGroup(members(ci)))
	return 0
}

//export bcs_group_size
func bcs_group_size(h C.uintptr_t, size *C.int) C.int {
	ranks, _, rc := group("MPI_Group_size", "group", h)
	if rc == 0 {
		*size = C.int(len(ranks))
	}
	return rc
}

//export bcs_group_rank
func bcs_group_rank(h C.uintptr_t, rank *C.int) C.int {
	ranks, _, rc := group("MPI_Group_rank", "group", h)
	if rc == 0 {
		*rank = C.MPI_UNDEFINED
		if i := slices.Index(ranks, worldRank); i >= 0 {
			*rank = C.int(i)
		}
	}
	return rc
}

//export bcs_group_free
func bcs_group_free(h *C.uintptr_t) C.int {
	_, i, rc := group("MPI_Group_free", "group", *h)
	if rc != 0 {
		return rc
	}
	if i >= 0 {
		e := &groups[i]
		e.ranks, e.live = nil, false
		e.gen = (e.gen + 1) & genMask
		freeGroups = append(freeGroups, i)
	}
	*h = hGroupNull
	return 0
}

// rankList reads n distinct ranks of a group of size from C (expanded from
// the call's ranges when fromRanges).
func rankList(call string, p *C.int, n C.int, size int, fromRanges bool) ([]int, C.int) {
	if n < 0 || int(n) > size {
		return nil, fail(0, call, errArg, "n = %d, want 0..%d (the group's size)", int(n), size)
	}
	if n > 0 && p == nil {
		return nil, fail(0, call, errArg, "ranks = NULL with n = %d", int(n))
	}
	out := make([]int, n)
	seen := make([]bool, size)
	for i, r := range unsafe.Slice(p, int(n)) {
		if r < 0 || int(r) >= size {
			return nil, fail(0, call, errRank, "ranks[%d] = %d, want 0..%d", i, int(r), size-1)
		}
		if seen[r] {
			if fromRanges {
				return nil, fail(0, call, errRank, "rank %d is in two of the ranges (or twice in one)", int(r))
			}
			return nil, fail(0, call, errRank, "ranks[%d] = %d appears twice", i, int(r))
		}
		seen[r] = true
		out[i] = int(r)
	}
	return out, 0
}

// bcs_group_incl is Group_incl (excl 0) and Group_excl (1), and with 2
// added Group_range_incl and Group_range_excl, whose ranges the shim has
// expanded into ranks.
//
//export bcs_group_incl
func bcs_group_incl(h C.uintptr_t, n C.int, ranks *C.int, out *C.uintptr_t, excl C.int) C.int {
	call := [...]string{"MPI_Group_incl", "MPI_Group_excl", "MPI_Group_range_incl", "MPI_Group_range_excl"}[excl&3]
	fromRanges := excl&2 != 0
	excl &= 1
	g, _, rc := group(call, "group", h)
	if rc != 0 {
		return rc
	}
	list, rc := rankList(call, ranks, n, len(g), fromRanges)
	if rc != 0 {
		return rc
	}
	if out == nil { // the range forms come here unchecked (shim.c)
		return fail(0, call, errArg, "newgroup = NULL, want the address of an MPI_Group")
	}
	var w []int
	if excl == 0 {
		for _, r := range list {
			w = append(w, g[r])
		}
	} else {
		drop := make([]bool, len(g))
		for _, r := range list {
			drop[r] = true
		}
		for i, r := range g {
			if !drop[i] {
				w = append(w, r)
			}
		}
	}
	*out = C.uintptr_t(newGroup(w))
	return 0
}

//export bcs_group_translate_ranks
func bcs_group_translate_ranks(h1 C.uintptr_t, n C.int, ranks *C.int, h2 C.uintptr_t, out *C.int) C.int {
	const call = "MPI_Group_translate_ranks"
	g1, _, rc := group(call, "group1", h1)
	if rc != 0 {
		return rc
	}
	g2, _, rc := group(call, "group2", h2)
	if rc != 0 {
		return rc
	}
	if n < 0 || (n > 0 && (ranks == nil || out == nil)) {
		return fail(0, call, errArg, "n = %d with ranks1 or ranks2 NULL", int(n))
	}
	res := unsafe.Slice(out, int(n))
	for i, r := range unsafe.Slice(ranks, int(n)) {
		switch {
		case r == C.MPI_PROC_NULL:
			res[i] = C.MPI_PROC_NULL
		case r < 0 || int(r) >= len(g1):
			return fail(0, call, errRank, "ranks1[%d] = %d, want 0..%d or MPI_PROC_NULL", i, int(r), len(g1)-1)
		default:
			res[i] = C.MPI_UNDEFINED
			if j := slices.Index(g2, g1[r]); j >= 0 {
				res[i] = C.int(j)
			}
		}
	}
	return 0
}

//export bcs_group_compare
func bcs_group_compare(h1, h2 C.uintptr_t, result *C.int) C.int {
	const call = "MPI_Group_compare"
	g1, _, rc := group(call, "group1", h1)
	if rc != 0 {
		return rc
	}
	g2, _, rc := group(call, "group2", h2)
	if rc != 0 {
		return rc
	}
	a, b := slices.Clone(g1), slices.Clone(g2)
	slices.Sort(a)
	slices.Sort(b)
	switch {
	case slices.Equal(g1, g2):
		*result = C.MPI_IDENT
	case slices.Equal(a, b):
		*result = C.MPI_SIMILAR
	default:
		*result = C.MPI_UNEQUAL
	}
	return 0
}

// Set operations: which is 0 union, 1 intersection, 2 difference.
//
//export bcs_group_setop
func bcs_group_setop(which C.int, h1, h2 C.uintptr_t, out *C.uintptr_t) C.int {
	call := [...]string{"MPI_Group_union", "MPI_Group_intersection", "MPI_Group_difference"}[which]
	g1, _, rc := group(call, "group1", h1)
	if rc != 0 {
		return rc
	}
	g2, _, rc := group(call, "group2", h2)
	if rc != 0 {
		return rc
	}
	if out == nil {
		return fail(0, call, errArg, "newgroup = NULL, want the address of an MPI_Group")
	}
	var w []int
	switch which {
	case 0:
		w = slices.Clone(g1)
		for _, r := range g2 {
			if !slices.Contains(g1, r) {
				w = append(w, r)
			}
		}
	default:
		for _, r := range g1 {
			if slices.Contains(g2, r) == (which == 1) {
				w = append(w, r)
			}
		}
	}
	*out = C.uintptr_t(newGroup(w))
	return 0
}

//export bcs_comm_create
func bcs_comm_create(h, gh C.uintptr_t, out *C.uintptr_t) C.int {
	const call = "MPI_Comm_create"
	ci, rc := enterComm(call, uintptr(h))
	if rc != 0 {
		return rc
	}
	g, _, rc := group(call, "group", gh)
	if rc != 0 {
		return rc
	}
	if ic := comms[ci].inter; ic != nil {
		return interCreate(ci, ic, g, out)
	}
	mine := members(ci)
	for i, w := range g {
		if !slices.Contains(mine, w) {
			return fail(ci, call, errGroup, "group rank %d (world rank %d) is not a member of the communicator", i, w)
		}
	}
	e := comms[ci]
	*out = hCommNull
	if e.c == nil {
		if len(g) == 1 {
			*out = C.uintptr_t(newComm(nil, e.errh))
		}
		return 0
	}
	mg, err := mpiapi.World().Group().Incl(g)
	if err != nil {
		return failErr(ci, err)
	}
	nc, err := e.c.Create(mg)
	if err != nil {
		*out = hCommNull // refused (proto.CommsMax): no communicator
		return failErr(ci, err)
	}
	if nc != nil {
		*out = C.uintptr_t(newComm(nc, e.errh))
	}
	return 0
}

// interCreate is MPI_Comm_create on intercommunicator slot ci (MPI 5.0
// §7.4.2): each group passes a subset g of its local group, and the members
// of g get an intercommunicator whose local group is g, ranked as in g, and
// whose remote group is the other side's subset; the others, and everybody
// when either subset is empty, get MPI_COMM_NULL. It is interSplit with
// one color for the members of g, keyed by their rank in g.
func interCreate(ci int, ic *interComm, g []int, out *C.uintptr_t) C.int {
	const call = "MPI_Comm_create"
	for i, w := range g {
		if !slices.Contains(ic.lranks, w) {
			return fail(ci, call, errGroup, "group rank %d (world rank %d) is not a member of the intercommunicator's local group", i, w)
		}
	}
	color, key := C.int(C.MPI_UNDEFINED), C.int(0)
	if i := slices.Index(g, worldRank); i >= 0 {
		color, key = 0, C.int(i)
	}
	return interSplit(ci, color, key, out)
}
