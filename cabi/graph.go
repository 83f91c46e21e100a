package main

/*
#include "shim.h"
*/
import "C"

import (
	"slices"
	"unsafe"

	"github.com/bcsmpi/bcsmpi/mpiapi"
)

// Graph and distributed-graph topologies (MPI 4.1 §8.5). MPI_Graph_create
// keeps the whole graph (each member's neighbours are both its sources and
// its destinations); MPI_Dist_graph_create_adjacent keeps the caller's own
// lists; MPI_Dist_graph_create gathers every member's edges (an Allgather of
// the counts, an Allgatherv of the edges) and keeps the edges into and out
// of the caller, in the order of the contributing ranks and their lists.
// Ranks keep their order (reorder is accepted and ignored, as the standard
// allows). The new communicator is a duplicate (a Split) of the old one,
// less the members beyond a graph's nnodes.

type graphTopo struct {
	dist         bool
	index, edges []int // MPI_Graph_create
	in, out      []int // the caller's sources and destinations
	inW, outW    []int
	weighted     bool
}

var graphs = map[int]*graphTopo{} // by communicator slot

// neighbours lists the sources and destinations of the communicator in slot
// ci and their labels (see wcoll.go: what decides which block of a pair
// goes with which).
func neighbours(call string, ci int) (outs, ins, outLab, inLab []int, rc C.int) {
	if g := graphs[ci]; g != nil {
		return g.out, g.in, make([]int, len(g.out)), make([]int, len(g.in)), 0
	}
	t := carts[ci]
	if t == nil {
		return nil, nil, nil, nil, fail(ci, call, errTopology, "the communicator has no topology; make one with MPI_Cart_create, MPI_Graph_create or MPI_Dist_graph_create(_adjacent)")
	}
	me := t.coords(commRank(ci))
	for d := range t.dims {
		for dir, delta := range []int{-1, 1} {
			c := slices.Clone(me)
			c[d] += delta
			r := t.rank(c) // -1 outside a non-periodic grid: MPI_PROC_NULL
			outs, ins = append(outs, r), append(ins, r)
			// Sent to the destination (dir 1) arrives in the receiver's
			// source block: the labels of the two ends agree.
			outLab, inLab = append(outLab, 2*d+dir), append(inLab, 2*d+1-dir)
		}
	}
	return outs, ins, outLab, inLab, 0
}

func graphOf(call string, h C.uintptr_t, dist bool) (int, *graphTopo, C.int) {
	if rc := enter(call); rc != 0 {
		return -1, nil, rc
	}
	ci, rc := comm(call, uintptr(h))
	if rc != 0 {
		return -1, nil, rc
	}
	g := graphs[ci]
	if g == nil || g.dist != dist {
		what := "a graph topology; make one with MPI_Graph_create"
		if dist {
			what = "a distributed graph topology; make one with MPI_Dist_graph_create(_adjacent)"
		}
		return -1, nil, fail(ci, call, errTopology, "comm = %s has no %s", describe(uintptr(h)), what)
	}
	return ci, g, 0
}

//export bcs_graph_create
func bcs_graph_create(h C.uintptr_t, nnodes C.int, index, edges *C.int, out *C.uintptr_t) C.int {
	const call = "MPI_Graph_create"
	ci, rc := enterComm(call, uintptr(h))
	if rc != 0 {
		return rc
	}
	if rc := wantIntra(ci, call, "comm_old", h); rc != 0 {
		return rc
	}
	size, me := commSize(ci), commRank(ci)
	if nnodes < 0 || int(nnodes) > size {
		return fail(ci, call, errArg, "nnodes = %d, want 0..%d (the communicator's size)", int(nnodes), size)
	}
	n := int(nnodes)
	if n > 0 && (index == nil || edges == nil) {
		return fail(ci, call, errArg, "index or edges = NULL with nnodes = %d", n)
	}
	g := &graphTopo{}
	prev := 0
	for i, v := range unsafe.Slice(index, n) {
		if int(v) < prev {
			return fail(ci, call, errArg, "index[%d] = %d is below index[%d] = %d; want a non-decreasing list", i, int(v), i-1, prev)
		}
		g.index, prev = append(g.index, int(v)), int(v)
	}
	for i, v := range unsafe.Slice(edges, prev) {
		if v < 0 || int(v) >= n {
			return fail(ci, call, errArg, "edges[%d] = %d, want 0..%d", i, int(v), n-1)
		}
		g.edges = append(g.edges, int(v))
	}
	color := 0
	if me >= n {
		color = C.MPI_UNDEFINED
	} else {
		g.in = g.neighborsOf(me)
		g.out = g.in
	}
	nh, rc := splitOf(ci, color, me)
	if rc != 0 {
		return rc
	}
	if nh != hCommNull {
		_, i, _ := splitHandle(nh)
		graphs[i] = g
	}
	*out = C.uintptr_t(nh)
	return 0
}

func (g *graphTopo) neighborsOf(r int) []int {
	lo := 0
	if r > 0 {
		lo = g.index[r-1]
	}
	return g.edges[lo:g.index[r]]
}

//export bcs_graphdims_get
func bcs_graphdims_get(h C.uintptr_t, nnodes, nedges *C.int) C.int {
	_, g, rc := graphOf("MPI_Graphdims_get", h, false)
	if rc != 0 {
		return rc
	}
	*nnodes, *nedges = C.int(len(g.index)), C.int(len(g.edges))
	return 0
}

//export bcs_graph_get
func bcs_graph_get(h C.uintptr_t, maxindex, maxedges C.int, index, edges *C.int) C.int {
	const call = "MPI_Graph_get"
	ci, g, rc := graphOf(call, h, false)
	if rc != 0 {
		return rc
	}
	if maxindex < 0 || maxedges < 0 || (maxindex > 0 && index == nil) || (maxedges > 0 && edges == nil) {
		return fail(ci, call, errArg, "maxindex = %d, maxedges = %d with index or edges NULL", int(maxindex), int(maxedges))
	}
	for i, v := range g.index[:min(len(g.index), int(maxindex))] {
		unsafe.Slice(index, maxindex)[i] = C.int(v)
	}
	for i, v := range g.edges[:min(len(g.edges), int(maxedges))] {
		unsafe.Slice(edges, maxedges)[i] = C.int(v)
	}
	return 0
}

//export bcs_graph_neighbors
func bcs_graph_neighbors(h C.uintptr_t, rank, max C.int, count, nbrs *C.int) C.int {
	call := "MPI_Graph_neighbors"
	if count != nil {
		call = "MPI_Graph_neighbors_count"
	}
	ci, g, rc := graphOf(call, h, false)
	if rc != 0 {
		return rc
	}
	if rank < 0 || int(rank) >= len(g.index) {
		return fail(ci, call, errRank, "rank = %d, want 0..%d", int(rank), len(g.index)-1)
	}
	ns := g.neighborsOf(int(rank))
	if count != nil {
		*count = C.int(len(ns))
		return 0
	}
	if max < 0 || (max > 0 && nbrs == nil) {
		return fail(ci, call, errArg, "maxneighbors = %d with neighbors NULL", int(max))
	}
	for i, v := range ns[:min(len(ns), int(max))] {
		unsafe.Slice(nbrs, max)[i] = C.int(v)
	}
	return 0
}

// weights reads n weights; MPI_UNWEIGHTED gives nil and false.
func weights(p *C.int, n int) ([]int, bool) {
	switch uintptr(unsafe.Pointer(p)) {
	case 10: // MPI_UNWEIGHTED
		return nil, false
	case 11: // MPI_WEIGHTS_EMPTY
		return make([]int, n), true
	}
	w := make([]int, n)
	if p != nil {
		for i, v := range unsafe.Slice(p, n) {
			w[i] = int(v)
		}
	}
	return w, true
}

// ranksIn reads n ranks of a communicator of size.
func ranksIn(ci int, call, what string, p *C.int, n, size int) ([]int, C.int) {
	if n > 0 && p == nil {
		return nil, fail(ci, call, errArg, "%s = NULL with %d entries", what, n)
	}
	out := make([]int, n)
	for i, v := range unsafe.Slice(p, n) {
		if v < 0 || int(v) >= size {
			return nil, fail(ci, call, errRank, "%s[%d] = %d, want 0..%d", what, i, int(v), size-1)
		}
		out[i] = int(v)
	}
	return out, 0
}

// distGraph makes the communicator of a distributed graph topology.
func distGraph(ci int, g *graphTopo, out *C.uintptr_t) C.int {
	nh, rc := splitOf(ci, 0, commRank(ci))
	if rc != 0 {
		return rc
	}
	_, i, _ := splitHandle(nh)
	graphs[i] = g
	*out = C.uintptr_t(nh)
	return 0
}

//export bcs_dist_graph_create_adjacent
func bcs_dist_graph_create_adjacent(h C.uintptr_t, indegree C.int, sources, sourceweights *C.int,
	outdegree C.int, dests, destweights *C.int, info C.uintptr_t, out *C.uintptr_t) C.int {
	const call = "MPI_Dist_graph_create_adjacent"
	ci, rc := enterComm(call, uintptr(h))
	if rc != 0 {
		return rc
	}
	if rc := wantIntra(ci, call, "comm_old", h); rc != 0 {
		return rc
	}
	if indegree < 0 || outdegree < 0 {
		return fail(ci, call, errArg, "indegree = %d, outdegree = %d, want >= 0", int(indegree), int(outdegree))
	}
	size := commSize(ci)
	g := &graphTopo{dist: true}
	if g.in, rc = ranksIn(ci, call, "sources", sources, int(indegree), size); rc != 0 {
		return rc
	}
	if g.out, rc = ranksIn(ci, call, "destinations", dests, int(outdegree), size); rc != 0 {
		return rc
	}
	var w1, w2 bool
	g.inW, w1 = weights(sourceweights, int(indegree))
	g.outW, w2 = weights(destweights, int(outdegree))
	if w1 != w2 {
		return fail(ci, call, errArg, "sourceweights and destweights must both be MPI_UNWEIGHTED or neither")
	}
	g.weighted = w1
	return distGraph(ci, g, out)
}

//export bcs_dist_graph_create
func bcs_dist_graph_create(h C.uintptr_t, n C.int, sources, degrees, dests, wts *C.int, info C.uintptr_t, out *C.uintptr_t) C.int {
	const call = "MPI_Dist_graph_create"
	ci, rc := enterComm(call, uintptr(h))
	if rc != 0 {
		return rc
	}
	if rc := wantIntra(ci, call, "comm_old", h); rc != 0 {
		return rc
	}
	size, me := commSize(ci), commRank(ci)
	if n < 0 || (n > 0 && (sources == nil || degrees == nil)) {
		return fail(ci, call, errArg, "n = %d with sources or degrees NULL", int(n))
	}
	src, rc := ranksIn(ci, call, "sources", sources, int(n), size)
	if rc != 0 {
		return rc
	}
	ne := 0
	for i, d := range unsafe.Slice(degrees, int(n)) {
		if d < 0 {
			return fail(ci, call, errArg, "degrees[%d] = %d, want >= 0", i, int(d))
		}
		ne += int(d)
	}
	dst, rc := ranksIn(ci, call, "destinations", dests, ne, size)
	if rc != 0 {
		return rc
	}
	w, weighted := weights(wts, ne)
	// Mine as (source, destination, weight) triples.
	mine := make([]int32, 0, 3*ne)
	e := 0
	for i, d := range unsafe.Slice(degrees, int(n)) {
		for range int(d) {
			wt := int32(0)
			if weighted {
				wt = int32(w[e])
			}
			mine = append(mine, int32(src[i]), int32(dst[e]), wt)
			e++
		}
	}
	all := mine
	if c := comms[ci].c; c != nil {
		counts := make([]int32, size)
		if err := mpiapi.Allgather(c, []int32{int32(len(mine))}, counts); err != nil {
			return failErr(ci, err)
		}
		cs, ds, tot := make([]int, size), make([]int, size), 0
		for i, v := range counts {
			cs[i], ds[i] = int(v), tot
			tot += int(v)
		}
		all = make([]int32, tot)
		if err := mpiapi.Allgatherv(c, mine, all, cs, ds); err != nil {
			return failErr(ci, err)
		}
	}
	g := &graphTopo{dist: true, weighted: weighted}
	for i := 0; i+2 < len(all); i += 3 {
		s, d, wt := int(all[i]), int(all[i+1]), int(all[i+2])
		if d == me {
			g.in, g.inW = append(g.in, s), append(g.inW, wt)
		}
		if s == me {
			g.out, g.outW = append(g.out, d), append(g.outW, wt)
		}
	}
	return distGraph(ci, g, out)
}

//export bcs_dist_graph_neighbors_count
func bcs_dist_graph_neighbors_count(h C.uintptr_t, indeg, outdeg, weighted *C.int) C.int {
	_, g, rc := graphOf("MPI_Dist_graph_neighbors_count", h, true)
	if rc != 0 {
		return rc
	}
	*indeg, *outdeg, *weighted = C.int(len(g.in)), C.int(len(g.out)), 0
	if g.weighted {
		*weighted = 1
	}
	return 0
}

//export bcs_dist_graph_neighbors
func bcs_dist_graph_neighbors(h C.uintptr_t, maxin C.int, sources, sw *C.int, maxout C.int, dests, dw *C.int) C.int {
	const call = "MPI_Dist_graph_neighbors"
	ci, g, rc := graphOf(call, h, true)
	if rc != 0 {
		return rc
	}
	if maxin < 0 || maxout < 0 || (maxin > 0 && sources == nil) || (maxout > 0 && dests == nil) {
		return fail(ci, call, errArg, "maxindegree = %d, maxoutdegree = %d with sources or destinations NULL", int(maxin), int(maxout))
	}
	put := func(p *C.int, max C.int, v []int) {
		if p == nil || uintptr(unsafe.Pointer(p)) == 10 || uintptr(unsafe.Pointer(p)) == 11 || v == nil {
			return
		}
		for i, x := range v[:min(len(v), int(max))] {
			unsafe.Slice(p, max)[i] = C.int(x)
		}
	}
	put(sources, maxin, g.in)
	put(dests, maxout, g.out)
	if g.weighted {
		put(sw, maxin, g.inW)
		put(dw, maxout, g.outW)
	}
	return 0
}

// ---- MPI_Comm_create_group ----

// bcs_comm_create_group is MPI_Comm_create_group: collective over the
// group's members only. A group of the caller alone is a one-process
// communicator; any other is made by the runtime among its members
// (mpiapi.Comm.CreateGroup), the parent's other members taking no part.
//
//export bcs_comm_create_group
func bcs_comm_create_group(h, gh C.uintptr_t, tag C.int, out *C.uintptr_t) C.int {
	const call = "MPI_Comm_create_group"
	ci, rc := enterComm(call, uintptr(h))
	if rc != 0 {
		return rc
	}
	if rc := wantIntra(ci, call, "comm", h); rc != 0 {
		return rc
	}
	if tag < 0 {
		return fail(ci, call, errTag, "tag = %d, want 0..MPI_TAG_UB", int(tag))
	}
	g, _, rc := group(call, "group", gh)
	if rc != 0 {
		return rc
	}
	if out == nil {
		return fail(ci, call, errArg, "newcomm = NULL, want the address of an MPI_Comm")
	}
	mine := members(ci)
	me := mine[commRank(ci)]
	for i, w := range g {
		if !slices.Contains(mine, w) {
			return fail(ci, call, errGroup, "group rank %d (world rank %d) is not a member of the communicator", i, w)
		}
	}
	if !slices.Contains(g, me) { // outside the group (MPI_GROUP_EMPTY too): local, MPI_COMM_NULL
		*out = hCommNull
		return 0
	}
	e := comms[ci]
	if len(g) == 1 {
		*out = C.uintptr_t(newComm(nil, e.errh))
		return 0
	}
	mg, err := mpiapi.World().Group().Incl(g)
	if err != nil {
		return failErr(ci, err)
	}
	nc, err := e.c.CreateGroup(mg, int(tag))
	if err != nil {
		*out = hCommNull // refused (proto.CommsMax): no communicator
		return failErr(ci, err)
	}
	*out = C.uintptr_t(newComm(nc, e.errh))
	return 0
}
