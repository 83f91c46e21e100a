package main

/*
#include "shim.h"
*/
import "C"

import (
	"math"
	"slices"
	"unsafe"
)

// Cartesian topologies are kept here: a Cartesian communicator is an
// ordinary communicator (made with Split, ranks in the old order: reorder is
// allowed to do nothing) plus its dimensions and periodicity, in row-major
// rank order as the standard specifies.

type cart struct {
	dims    []int
	periods []bool
}

var carts = map[int]*cart{} // by communicator slot

func (t *cart) coords(rank int) []int {
	c := make([]int, len(t.dims))
	for d := len(t.dims) - 1; d >= 0; d-- {
		c[d] = rank % t.dims[d]
		rank /= t.dims[d]
	}
	return c
}

// rank of coords, wrapping periodic dimensions; -1 if outside a
// non-periodic one.
func (t *cart) rank(coords []int) int {
	r := 0
	for d, c := range coords {
		if t.periods[d] {
			c = ((c % t.dims[d]) + t.dims[d]) % t.dims[d]
		} else if c < 0 || c >= t.dims[d] {
			return -1
		}
		r = r*t.dims[d] + c
	}
	return r
}

func cartOf(call string, h C.uintptr_t) (int, *cart, C.int) {
	if rc := enter(call); rc != 0 {
		return -1, nil, rc
	}
	ci, rc := comm(call, uintptr(h))
	if rc != 0 {
		return -1, nil, rc
	}
	t := carts[ci]
	if t == nil {
		return -1, nil, fail(ci, call, errTopology, "comm = %s has no Cartesian topology; make one with MPI_Cart_create", describe(uintptr(h)))
	}
	return ci, t, 0
}

func commSize(ci int) int {
	if c := comms[ci].c; c != nil {
		return c.Size()
	}
	return 1
}

func commRank(ci int) int {
	if ic := comms[ci].inter; ic != nil { // inter.go: the rank in the local group
		return comms[ci].c.Rank() - ic.loff
	}
	if c := comms[ci].c; c != nil {
		return c.Rank()
	}
	return 0
}

// splitOf makes the communicator of the members of slot ci with the same
// color (C.MPI_UNDEFINED: none), ranked by key; it inherits the errhandler.
func splitOf(ci int, color, key int) (uintptr, C.int) {
	e := comms[ci]
	if e.c == nil {
		if color == C.MPI_UNDEFINED {
			return hCommNull, 0
		}
		return newComm(nil, e.errh), 0
	}
	nc, err := e.c.Split(color, key)
	if err != nil {
		return 0, failErr(ci, err)
	}
	if nc == nil {
		return hCommNull, 0
	}
	return newComm(nc, e.errh), 0
}

//export bcs_cart_create
func bcs_cart_create(h C.uintptr_t, ndims C.int, dims, periods *C.int, out *C.uintptr_t) C.int {
	const call = "MPI_Cart_create"
	ci, rc := enterComm(call, uintptr(h))
	if rc != 0 {
		return rc
	}
	if rc := wantIntra(ci, call, "comm_old", h); rc != 0 {
		return rc
	}
	if ndims < 0 || (ndims > 0 && (dims == nil || periods == nil)) {
		return fail(ci, call, errArg, "ndims = %d with dims or periods NULL", int(ndims))
	}
	t := &cart{dims: make([]int, ndims), periods: make([]bool, ndims)}
	total := 1
	for d, v := range unsafe.Slice(dims, int(ndims)) {
		if v <= 0 {
			return fail(ci, call, errDims, "dims[%d] = %d, want > 0", d, int(v))
		}
		t.dims[d] = int(v)
		total *= int(v)
	}
	for d, v := range unsafe.Slice(periods, int(ndims)) {
		t.periods[d] = v != 0
	}
	if size := commSize(ci); total > size {
		return fail(ci, call, errDims, "the grid has %d processes, the communicator only %d", total, size)
	}
	color, me := 0, commRank(ci)
	if me >= total {
		color = C.MPI_UNDEFINED
	}
	nh, rc := splitOf(ci, color, me)
	if rc != 0 {
		return rc
	}
	if nh != hCommNull {
		_, i, _ := splitHandle(nh)
		carts[i] = t
	}
	*out = C.uintptr_t(nh)
	return 0
}

//export bcs_cart_get
func bcs_cart_get(h C.uintptr_t, maxdims C.int, dims, periods, coords *C.int) C.int {
	ci, t, rc := cartOf("MPI_Cart_get", h)
	if rc != 0 {
		return rc
	}
	n := min(int(maxdims), len(t.dims))
	me := t.coords(commRank(ci))
	for d := range n {
		unsafe.Slice(dims, n)[d] = C.int(t.dims[d])
		unsafe.Slice(periods, n)[d] = 0
		if t.periods[d] {
			unsafe.Slice(periods, n)[d] = 1
		}
		unsafe.Slice(coords, n)[d] = C.int(me[d])
	}
	return 0
}

//export bcs_cartdim_get
func bcs_cartdim_get(h C.uintptr_t, ndims *C.int) C.int {
	_, t, rc := cartOf("MPI_Cartdim_get", h)
	if rc == 0 {
		*ndims = C.int(len(t.dims))
	}
	return rc
}

//export bcs_cart_coords
func bcs_cart_coords(h C.uintptr_t, rank, maxdims C.int, coords *C.int) C.int {
	const call = "MPI_Cart_coords"
	ci, t, rc := cartOf(call, h)
	if rc != 0 {
		return rc
	}
	if size := commSize(ci); rank < 0 || int(rank) >= size {
		return fail(ci, call, errRank, "rank = %d, want 0..%d", int(rank), size-1)
	}
	if int(maxdims) < len(t.dims) {
		return fail(ci, call, errArg, "maxdims = %d, want >= %d", int(maxdims), len(t.dims))
	}
	out := unsafe.Slice(coords, len(t.dims))
	for d, c := range t.coords(int(rank)) {
		out[d] = C.int(c)
	}
	return 0
}

//export bcs_cart_rank
func bcs_cart_rank(h C.uintptr_t, coords *C.int, rank *C.int) C.int {
	const call = "MPI_Cart_rank"
	ci, t, rc := cartOf(call, h)
	if rc != 0 {
		return rc
	}
	c := make([]int, len(t.dims))
	for d, v := range unsafe.Slice(coords, len(t.dims)) {
		c[d] = int(v)
	}
	r := t.rank(c)
	if r < 0 {
		return fail(ci, call, errArg, "coords = %v lie outside the non-periodic grid %v", c, t.dims)
	}
	*rank = C.int(r)
	return 0
}

//export bcs_cart_shift
func bcs_cart_shift(h C.uintptr_t, direction, disp C.int, source, dest *C.int) C.int {
	const call = "MPI_Cart_shift"
	ci, t, rc := cartOf(call, h)
	if rc != 0 {
		return rc
	}
	if direction < 0 || int(direction) >= len(t.dims) {
		return fail(ci, call, errArg, "direction = %d, want 0..%d", int(direction), len(t.dims)-1)
	}
	me := t.coords(commRank(ci))
	at := func(delta int) C.int {
		c := slices.Clone(me)
		c[direction] += delta
		if r := t.rank(c); r >= 0 {
			return C.int(r)
		}
		return C.MPI_PROC_NULL
	}
	*source, *dest = at(-int(disp)), at(int(disp))
	return 0
}

//export bcs_cart_sub
func bcs_cart_sub(h C.uintptr_t, remain *C.int, out *C.uintptr_t) C.int {
	const call = "MPI_Cart_sub"
	ci, t, rc := cartOf(call, h)
	if rc != 0 {
		return rc
	}
	me := t.coords(commRank(ci))
	keep := unsafe.Slice(remain, len(t.dims))
	sub := &cart{}
	color, key := 0, 0
	for d := range t.dims {
		if keep[d] != 0 {
			sub.dims = append(sub.dims, t.dims[d])
			sub.periods = append(sub.periods, t.periods[d])
			key = key*t.dims[d] + me[d]
		} else {
			color = color*t.dims[d] + me[d]
		}
	}
	nh, rc := splitOf(ci, color, key)
	if rc != 0 {
		return rc
	}
	_, i, _ := splitHandle(nh)
	carts[i] = sub
	*out = C.uintptr_t(nh)
	return 0
}

//export bcs_topo_test
func bcs_topo_test(h C.uintptr_t, status *C.int) C.int {
	const call = "MPI_Topo_test"
	ci, rc := enterComm(call, uintptr(h))
	if rc != 0 {
		return rc
	}
	*status = C.MPI_UNDEFINED
	if carts[ci] != nil {
		*status = C.MPI_CART
	}
	if g := graphs[ci]; g != nil { // graph.go
		*status = C.MPI_GRAPH
		if g.dist {
			*status = C.MPI_DIST_GRAPH
		}
	}
	return 0
}

// bcs_dims_create balances nnodes over the dimensions left 0 in dims, in
// non-increasing order, as MPI_Dims_create specifies (balancedDims).
//
//export bcs_dims_create
func bcs_dims_create(nnodes, ndims C.int, dims *C.int) C.int {
	const call = "MPI_Dims_create"
	if nnodes <= 0 || ndims < 0 || (ndims > 0 && dims == nil) {
		return fail(0, call, errArg, "nnodes = %d, ndims = %d: want nnodes > 0, ndims >= 0 and dims not NULL", int(nnodes), int(ndims))
	}
	d := unsafe.Slice(dims, int(ndims))
	rest := int(nnodes)
	var free []int
	for i, v := range d {
		switch {
		case v < 0:
			return fail(0, call, errDims, "dims[%d] = %d, want >= 0", i, int(v))
		case v == 0:
			free = append(free, i)
		default:
			if rest%int(v) != 0 {
				if rest == int(nnodes) {
					return fail(0, call, errDims, "dims[%d] = %d does not divide nnodes = %d", i, int(v), int(nnodes))
				}
				return fail(0, call, errDims, "dims[%d] = %d does not divide the %d nodes the fixed dims before it leave of nnodes = %d", i, int(v), rest, int(nnodes))
			}
			rest /= int(v)
		}
	}
	if len(free) == 0 {
		if rest != 1 {
			return fail(0, call, errDims, "the fixed dims multiply to less than nnodes = %d", int(nnodes))
		}
		return 0
	}
	got := balancedDims(rest, len(free))
	for k, i := range free {
		d[i] = C.int(got[k])
	}
	return 0
}

// balancedDims returns the k factors of n, in non-increasing order, that
// are "as close to each other as possible" (MPI_Dims_create): of all ways
// to write n as such a product, the one whose largest and smallest factors
// differ least; among those, the one whose factors, read from the smallest
// up, are larger at the first place they differ (360 over 3 is 10 x 6 x 6
// rather than 9 x 8 x 5; 98784 over 5 is 14 x 14 x 9 x 8 x 7 rather than
// 14 x 12 x 12 x 7 x 7, equal to it on the spread and on the smallest
// factor; 102 over 4 is 17 x 3 x 2 x 1, not 17 x 6 x 1 x 1). So 72 over 2
// dimensions is 9 x 8, not the 12 x 6 of handing out prime factors largest
// first (which this replaced; Open MPI 4.1 still answers 12 x 6). The rule
// reproduces MPICH 4.0's answers: the same on every n up to 20000 over 2 to
// 8 dimensions and on 3000 random n up to 2^31 over 2 to 10 (an earlier
// tie-break, on the smallest factor only and then the first found, gave
// 14 x 12 x 12 x 7 x 7 and differed from MPICH on some 5-dimensional n).
//
// A depth-first search over the divisors of n, largest factor first,
// pruned by the best difference found so far: every factor must lie
// within it of the largest, and the smallest of m factors still to choose
// for a remainder r is at most the m-th root of r.
func balancedDims(n, k int) []int {
	if k == 0 {
		return nil
	}
	var divs []int // divisors of n, ascending
	for d := 1; d*d <= n; d++ {
		if n%d == 0 {
			divs = append(divs, d)
		}
	}
	for i := len(divs) - 1; i >= 0; i-- {
		if d := n / divs[i]; d != divs[i] {
			divs = append(divs, d)
		}
	}
	best, bestSpread := []int(nil), n // any real spread is below n
	cur := make([]int, 0, k)
	var search func(r, m, limit int)
	search = func(r, m, limit int) {
		if m == 1 {
			if r > limit {
				return
			}
			top := r
			if len(cur) > 0 {
				top = cur[0]
			}
			if top-r < bestSpread || (top-r == bestSpread && smallerFirst(cur, r, best) > 0) {
				bestSpread = top - r
				best = append(append(best[:0], cur...), r)
			}
			return
		}
		lo := ceilRoot(r, m) // the largest of m factors of r is at least its m-th root
		floor := floorRoot(r, m)
		from, _ := slices.BinarySearch(divs, lo)
		for _, d := range divs[from:] {
			if d > limit || d > r {
				break
			}
			top := d
			if len(cur) > 0 {
				top = cur[0]
			}
			if top-floor > bestSpread {
				if len(cur) == 0 {
					break // the bound grows with the largest factor
				}
				continue
			}
			if r%d != 0 || (len(cur) > 0 && top-d > bestSpread) {
				continue
			}
			cur = append(cur, d)
			search(r/d, m-1, d)
			cur = cur[:len(cur)-1]
		}
	}
	search(n, k, n)
	return best
}

// smallerFirst compares the factors cur followed by r with best (both
// non-increasing, of one length) from the smallest factor up: it is
// positive where the first factor, from the smallest, in which they differ
// is larger in cur+r.
func smallerFirst(cur []int, r int, best []int) int {
	last := len(best) - 1
	if r != best[last] {
		return r - best[last]
	}
	for i := last - 1; i >= 0; i-- {
		if cur[i] != best[i] {
			return cur[i] - best[i]
		}
	}
	return 0
}

// floorRoot is the largest x with x^m <= r; ceilRoot the smallest with
// x^m >= r (r >= 1, m >= 1).
func floorRoot(r, m int) int {
	x := max(int(math.Pow(float64(r), 1/float64(m))), 1)
	for x > 1 && powOver(x, m, r) {
		x--
	}
	for !powOver(x+1, m, r) {
		x++
	}
	return x
}

func ceilRoot(r, m int) int {
	x := floorRoot(r, m)
	if pow(x, m) != r {
		x++
	}
	return x
}

// powOver reports whether x^m > r, without overflow.
func powOver(x, m, r int) bool {
	p := 1
	for range m {
		if p > r/x {
			return true
		}
		p *= x
	}
	return p > r
}

func pow(x, m int) int {
	p := 1
	for range m {
		p *= x
	}
	return p
}

// forgetTopology drops a freed communicator's topology.
func forgetTopology(ci int) { delete(carts, ci); delete(graphs, ci) }

//export bcs_comm_split_type
func bcs_comm_split_type(h C.uintptr_t, splitType, key C.int, info C.uintptr_t, out *C.uintptr_t) C.int {
	const call = "MPI_Comm_split_type"
	ci, rc := enterComm(call, uintptr(h))
	if rc != 0 {
		return rc
	}
	if comms[ci].inter != nil {
		return fail(ci, call, errUnsupported, "comm = %s is an intercommunicator; MPI_Comm_split_type of one is not implemented by bcsmpi (merge it first)", describe(uintptr(h)))
	}
	if rc := infoArg(call, uintptr(info)); rc != 0 {
		return rc
	}
	color := node
	switch splitType {
	case C.MPI_COMM_TYPE_SHARED:
	case C.MPI_UNDEFINED:
		color = C.MPI_UNDEFINED
	case C.MPI_COMM_TYPE_HW_GUIDED:
		// The info key mpi_hw_resource_type names the resource; the one
		// bcsmpi knows is the standard's mpi_shared_memory (a logical
		// node, as MPI_COMM_TYPE_SHARED). Any other, or none, gives
		// MPI_COMM_NULL, as the standard says for an unknown type.
		if infoValue(uintptr(info), "mpi_hw_resource_type") != "mpi_shared_memory" {
			color = C.MPI_UNDEFINED
		}
	case C.MPI_COMM_TYPE_HW_UNGUIDED, C.MPI_COMM_TYPE_RESOURCE_GUIDED:
		// HW_UNGUIDED: the logical node, when it is a strict subset of
		// comm (below); else MPI_COMM_NULL. RESOURCE_GUIDED (process
		// sets of the info's mpi_pset_name): no process set is known
		// beyond the predefined ones, so MPI_COMM_NULL.
		if splitType == C.MPI_COMM_TYPE_RESOURCE_GUIDED {
			color = C.MPI_UNDEFINED
		}
	default:
		return fail(ci, call, errArg, "split_type = %d, want MPI_COMM_TYPE_SHARED (%d), MPI_COMM_TYPE_HW_UNGUIDED (%d), MPI_COMM_TYPE_HW_GUIDED (%d), MPI_COMM_TYPE_RESOURCE_GUIDED (%d) or MPI_UNDEFINED",
			int(splitType), C.MPI_COMM_TYPE_SHARED, C.MPI_COMM_TYPE_HW_UNGUIDED, C.MPI_COMM_TYPE_HW_GUIDED, C.MPI_COMM_TYPE_RESOURCE_GUIDED)
	}
	nh, rc := splitOf(ci, color, int(key))
	if rc != 0 {
		return rc
	}
	if splitType == C.MPI_COMM_TYPE_HW_UNGUIDED && nh != hCommNull {
		if _, nci, _ := splitHandle(nh); commSize(nci) == commSize(ci) {
			h := C.uintptr_t(nh)
			if rc := bcs_comm_free(&h); rc != 0 {
				return rc
			}
			nh = hCommNull
		}
	}
	*out = C.uintptr_t(nh)
	return 0
}

// infoValue is the value of key in info h ("" when h is MPI_INFO_NULL or
// lacks it); h is valid.
func infoValue(h uintptr, key string) string {
	if h == hInfoNull {
		return ""
	}
	e, rc := info("", h, false)
	if rc != 0 {
		return ""
	}
	if i := e.find(key); i >= 0 {
		return e.vals[i]
	}
	return ""
}
