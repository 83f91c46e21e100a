package main

import (
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"

	mpi "github.com/bcsmpi/bcsmpi/mpiapi"
)

// The collectives scenario runs every collective on the world, on a split
// and on a duplicate of it, with several lengths, and compares every result
// with a naive reference computed locally from the same generators: a plain
// left fold in rank order written with Go's own operators, so a wrong order,
// a lost segment or a misplaced block shows up as a wrong bit.

// fval is a float64 contribution whose sum depends on the order it is taken in.
func fval(r, i, salt int) float64 {
	mag := []float64{1e16, 1, -1e16, 3.5, 1e-3, -2.25, 7e15}
	return mag[(r*3+i+salt)%len(mag)] * float64(1+(i+r)%3)
}

func ival(r, i, salt int) int64 { return int64((r+1)*7919+i*31+salt*131) % 1000003 }

func eqBits(a, b []float64) int {
	for i := range a {
		if math.Float64bits(a[i]) != math.Float64bits(b[i]) {
			return i
		}
	}
	return -1
}

func expect[T comparable](what string, got, want []T) {
	if len(got) != len(want) {
		fail("%s: %d elements, want %d", what, len(got), len(want))
	}
	for i := range got {
		if got[i] != want[i] {
			fail("%s: element %d = %v, want %v", what, i, got[i], want[i])
		}
	}
}

func expectF(what string, got, want []float64) {
	if i := eqBits(got, want); i >= 0 {
		fail("%s: element %d = %v (bits %x), want %v (bits %x)", what, i, got[i], math.Float64bits(got[i]), want[i], math.Float64bits(want[i]))
	}
}

// affine maps x -> m*x + b, stored as (m, b) pairs; composing them is
// associative but not commutative, so a user operation built on it checks
// the rank order of user reductions.
func affine(in, inout []int64) {
	for k := 0; k+1 < len(in); k += 2 {
		// inout = in ; inout (apply in first)
		m, b := inout[k]*in[k], inout[k]*in[k+1]+inout[k+1]
		inout[k], inout[k+1] = m, b
	}
}

func collectives() {
	sizes := []int{0, 1, 7, 1000, 70001}
	if len(os.Args) > 2 {
		sizes = nil
		for _, a := range os.Args[2:] {
			n, err := strconv.Atoi(a)
			check(err)
			sizes = append(sizes, n)
		}
	}
	dup, err := w.Dup()
	check(err)
	if mpi.Compare(w, dup) != mpi.Congruent || mpi.Compare(w, w) != mpi.Ident {
		fail("Compare(world, dup) = %d, Compare(world, world) = %d", mpi.Compare(w, dup), mpi.Compare(w, w))
	}
	// Split: odd and even ranks, the reverse order within each.
	sub, err := w.Split(w.Rank()%2, -w.Rank())
	check(err)
	var want []int
	for r := w.Size() - 1; r >= 0; r-- {
		if r%2 == w.Rank()%2 {
			want = append(want, r)
		}
	}
	got, err := sub.Group().TranslateRanks(seq(sub.Size()), w.Group())
	check(err)
	expect("split members", got, want)
	if sub.Rank() != slices.Index(want, w.Rank()) {
		fail("split: my rank %d, want %d", sub.Rank(), slices.Index(want, w.Rank()))
	}
	// Create from a group: the ranks 1..size-1 in world order; rank 0 gets nil.
	g, err := w.Group().Excl([]int{0})
	check(err)
	tail, err := w.Create(g)
	check(err)
	if (tail == nil) != (w.Rank() == 0) {
		fail("Create: got %v for rank %d", tail, w.Rank())
	}
	// Nested: split the split in halves; an Allreduce there sums world ranks.
	half, err := sub.Split(sub.Rank()*2/max(sub.Size(), 1), 0)
	check(err)
	hs := make([]int64, 1)
	check(mpi.Allreduce(half, []int64{int64(w.Rank())}, hs, mpi.Sum))
	var members []int
	for i, r := range want {
		if i*2/len(want) == sub.Rank()*2/len(want) {
			members = append(members, r)
		}
	}
	var wantSum int64
	for _, r := range members {
		wantSum += int64(r)
	}
	if hs[0] != wantSum || half.Size() != len(members) {
		fail("nested split: size %d sum %d, want %d members %v", half.Size(), hs[0], len(members), members)
	}
	check(half.Free())
	// Undefined color: no communicator.
	none, err := w.Split(mpi.Undefined, 0)
	check(err)
	if none != nil {
		fail("Split(Undefined) returned a communicator")
	}

	// Traffic on one communicator must not disturb another: a receive posted
	// on dup with ANY_SOURCE must not take the world message sent meanwhile.
	isolation(dup)

	comms := []*mpi.Comm{w, sub, dup}
	if tail != nil {
		comms = append(comms, tail)
	}
	for ci, c := range comms {
		for _, n := range sizes {
			runAll(c, n, ci*10+n%7)
		}
	}
	nonblocking(w, 777)
	nonblocking(sub, 33)
	// Collectives on three communicators in flight at once complete
	// independently, each with its own data.
	x, y := make([]int64, 3), []int64{int64(w.Rank()), 1, 2}
	if w.Rank() == 0 {
		x = []int64{7, 8, 9}
	}
	sum := make([]int64, 3)
	r1, err := mpi.Iallreduce(dup, y, sum, mpi.Sum)
	check(err)
	r2, err := mpi.Ibcast(w, x, 0)
	check(err)
	r3, err := mpi.Ibarrier(sub)
	check(err)
	check(mpi.Waitall(r3, r2, r1))
	n := int64(w.Size())
	if x[0] != 7 || x[2] != 9 || sum[0] != n*(n-1)/2 || sum[1] != n || sum[2] != 2*n {
		fail("concurrent collectives: bcast %v, allreduce %v", x, sum)
	}
	if tail != nil {
		check(tail.Free())
	}
	check(sub.Free())
	check(dup.Free())
	check(mpi.Barrier(w))
	if w.Rank() == 0 {
		fmt.Printf("collectives ok: %d ranks, sizes %v\n", w.Size(), sizes)
	}
}

func seq(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}

func isolation(dup *mpi.Comm) {
	if w.Size() < 2 {
		return
	}
	switch w.Rank() {
	case 0:
		onDup := make([]int64, 1)
		r, err := mpi.Irecv(dup, onDup, mpi.AnySource, mpi.AnyTag)
		check(err)
		onWorld := make([]int64, 1)
		_, err = mpi.Recv(w, onWorld, 1, 5)
		check(err)
		check(mpi.Barrier(dup)) // rank 1 sends on dup only after this
		st, err := mpi.Wait(r)
		check(err)
		if onWorld[0] != 111 || onDup[0] != 222 || st.Source != 1 {
			fail("isolation: world got %d, dup got %d from %d", onWorld[0], onDup[0], st.Source)
		}
	case 1:
		check(mpi.Send(w, []int64{111}, 0, 5))
		check(mpi.Barrier(dup))
		check(mpi.Send(dup, []int64{222}, 0, 9))
	default:
		check(mpi.Barrier(dup))
	}
}

// runAll runs each collective once on c with n elements per block.
func runAll(c *mpi.Comm, n, salt int) {
	me, p := c.Rank(), c.Size()
	wr := func(r int) int { // world rank of c's rank r, so data depend on the process
		t, err := c.Group().TranslateRanks([]int{r}, w.Group())
		check(err)
		return t[0]
	}
	tag := fmt.Sprintf("comm %d (size %d) n=%d", c.ID(), p, n)

	// Barrier.
	check(mpi.Barrier(c))

	// Bcast from the last rank and from 0.
	for _, root := range []int{p - 1, 0} {
		buf := make([]float64, n)
		if me == root {
			for i := range buf {
				buf[i] = fval(wr(root), i, salt)
			}
		}
		check(mpi.Bcast(c, buf, root))
		ref := make([]float64, n)
		for i := range ref {
			ref[i] = fval(wr(root), i, salt)
		}
		expectF(tag+" Bcast", buf, ref)
	}

	// Reduce and Allreduce, float64 sum: the rank-order left fold, bit for bit.
	fsend := make([]float64, n)
	for i := range fsend {
		fsend[i] = fval(wr(me), i, salt)
	}
	fsum := make([]float64, n)
	for i := range fsum {
		acc := fval(wr(0), i, salt)
		for r := 1; r < p; r++ {
			acc += fval(wr(r), i, salt)
		}
		fsum[i] = acc
	}
	out := make([]float64, n)
	check(mpi.Reduce(c, fsend, out, mpi.Sum, p/2))
	if me == p/2 {
		expectF(tag+" Reduce(SUM)", out, fsum)
	}
	out = make([]float64, n)
	check(mpi.Allreduce(c, fsend, out, mpi.Sum))
	expectF(tag+" Allreduce(SUM)", out, fsum)
	inplace := slices.Clone(fsend)
	check(mpi.Allreduce(c, inplace, inplace, mpi.Sum))
	expectF(tag+" Allreduce(SUM, in place)", inplace, fsum)

	// Integer operations.
	isend := make([]int64, n)
	for i := range isend {
		isend[i] = ival(wr(me), i, salt)
	}
	type iop struct {
		op *mpi.Op
		f  func(a, b int64) int64
	}
	b2i := func(v bool) int64 {
		if v {
			return 1
		}
		return 0
	}
	for _, o := range []iop{
		{mpi.Max, func(a, b int64) int64 { return max(a, b) }},
		{mpi.Min, func(a, b int64) int64 { return min(a, b) }},
		{mpi.Prod, func(a, b int64) int64 { return a * b }},
		{mpi.Band, func(a, b int64) int64 { return a & b }},
		{mpi.Bor, func(a, b int64) int64 { return a | b }},
		{mpi.Bxor, func(a, b int64) int64 { return a ^ b }},
		{mpi.Land, func(a, b int64) int64 { return b2i(a != 0 && b != 0) }},
		{mpi.Lor, func(a, b int64) int64 { return b2i(a != 0 || b != 0) }},
		{mpi.Lxor, func(a, b int64) int64 { return b2i((a != 0) != (b != 0)) }},
	} {
		in := make([]int64, n)
		for i := range in {
			in[i] = isend[i] % 5 // zeros for the logical operations
		}
		if o.op == mpi.Prod || o.op == mpi.Max || o.op == mpi.Min {
			copy(in, isend)
		}
		ref := make([]int64, n)
		for i := range ref {
			v := func(r int) int64 {
				x := ival(wr(r), i, salt)
				if o.op == mpi.Prod || o.op == mpi.Max || o.op == mpi.Min {
					return x
				}
				return x % 5
			}
			acc := v(0)
			for r := 1; r < p; r++ {
				acc = o.f(acc, v(r))
			}
			ref[i] = acc
		}
		got := make([]int64, n)
		check(mpi.Allreduce(c, in, got, o.op))
		expect(tag+" Allreduce("+o.op.String()+")", got, ref)
	}

	// MINLOC / MAXLOC with ties (the lower index wins).
	pairs := make([]mpi.ValIdx[float64], n)
	for i := range pairs {
		pairs[i] = mpi.ValIdx[float64]{Val: float64((wr(me) + i) % 3), Idx: int32(me)}
	}
	minRef := make([]mpi.ValIdx[float64], n)
	maxRef := make([]mpi.ValIdx[float64], n)
	for i := range minRef {
		minRef[i] = mpi.ValIdx[float64]{Val: math.Inf(1)}
		maxRef[i] = mpi.ValIdx[float64]{Val: math.Inf(-1)}
		for r := 0; r < p; r++ {
			v := float64((wr(r) + i) % 3)
			if v < minRef[i].Val {
				minRef[i] = mpi.ValIdx[float64]{Val: v, Idx: int32(r)}
			}
			if v > maxRef[i].Val {
				maxRef[i] = mpi.ValIdx[float64]{Val: v, Idx: int32(r)}
			}
		}
	}
	gotPairs := make([]mpi.ValIdx[float64], n)
	check(mpi.Allreduce(c, pairs, gotPairs, mpi.Minloc))
	expect(tag+" Allreduce(MINLOC)", gotPairs, minRef)
	check(mpi.Reduce(c, pairs, gotPairs, mpi.Maxloc, 0))
	if me == 0 {
		expect(tag+" Reduce(MAXLOC)", gotPairs, maxRef)
	}

	// A user operation that is associative but not commutative.
	aff := make([]int64, 2*((n+1)/2))
	for k := 0; k < len(aff); k += 2 {
		aff[k], aff[k+1] = int64(wr(me)%5+1), int64(k+wr(me))
	}
	affRef := func(upto int) []int64 { // fold of ranks 0..upto
		ref := make([]int64, len(aff))
		for k := 0; k < len(ref); k += 2 {
			m, b := int64(1), int64(0)
			for r := 0; r <= upto; r++ {
				mr, br := int64(wr(r)%5+1), int64(k+wr(r))
				m, b = mr*m, mr*b+br // apply the earlier rank's map first
			}
			ref[k], ref[k+1] = m, b
		}
		return ref
	}
	user := mpi.NewOp("affine", affine, false)
	gotAff := make([]int64, len(aff))
	check(mpi.Allreduce(c, aff, gotAff, user))
	expect(tag+" Allreduce(user)", gotAff, affRef(p-1))
	check(mpi.Scan(c, aff, gotAff, user))
	expect(tag+" Scan(user)", gotAff, affRef(me))
	exAff := make([]int64, len(aff))
	for i := range exAff {
		exAff[i] = -1
	}
	check(mpi.Exscan(c, aff, exAff, user))
	if me > 0 {
		expect(tag+" Exscan(user)", exAff, affRef(me-1))
	} else if slices.ContainsFunc(exAff, func(v int64) bool { return v != -1 }) {
		fail("%s Exscan(user): rank 0's buffer was written", tag)
	}
	// Reduce_scatter with the user operation: member j gets the fold of pair j.
	rsAff := make([]int64, 2*p)
	for j := 0; j < p; j++ {
		rsAff[2*j], rsAff[2*j+1] = int64(wr(me)%5+1), int64(j+wr(me))
	}
	rsGotAff := make([]int64, 2)
	check(mpi.ReduceScatterBlock(c, rsAff, rsGotAff, user))
	m, b := int64(1), int64(0)
	for r := 0; r < p; r++ {
		mr, br := int64(wr(r)%5+1), int64(me+wr(r))
		m, b = mr*m, mr*b+br
	}
	expect(tag+" Reduce_scatter_block(user)", rsGotAff, []int64{m, b})

	// Scan and Exscan.
	scanGot := make([]int64, n)
	check(mpi.Scan(c, isend, scanGot, mpi.Sum))
	exGot := make([]int64, n)
	for i := range exGot {
		exGot[i] = -42
	}
	check(mpi.Exscan(c, isend, exGot, mpi.Sum))
	fscan := slices.Clone(fsend)
	check(mpi.Scan(c, fscan, fscan, mpi.Sum)) // in place
	for i := 0; i < n; i++ {
		var acc int64
		facc := fval(wr(0), i, salt)
		for r := 0; r <= me; r++ {
			if r == me {
				if me > 0 && exGot[i] != acc {
					fail("%s Exscan: element %d = %d, want %d", tag, i, exGot[i], acc)
				}
				if me == 0 && exGot[i] != -42 {
					fail("%s Exscan: rank 0's buffer was written", tag)
				}
			}
			acc += ival(wr(r), i, salt)
			if r > 0 {
				facc += fval(wr(r), i, salt)
			}
		}
		if scanGot[i] != acc {
			fail("%s Scan: element %d = %d, want %d", tag, i, scanGot[i], acc)
		}
		if math.Float64bits(fscan[i]) != math.Float64bits(facc) {
			fail("%s Scan(in place): element %d = %v, want %v", tag, i, fscan[i], facc)
		}
	}

	// Gather, Scatter, Allgather, Alltoall on int32 blocks.
	blk := func(r, dst, n int) []int32 {
		b := make([]int32, n)
		for i := range b {
			b[i] = int32(wr(r)*100000 + dst*1000 + i + salt)
		}
		return b
	}
	all := make([]int32, p*n)
	check(mpi.Gather(c, blk(me, 0, n), all, 0))
	if me == 0 {
		for r := 0; r < p; r++ {
			expect(tag+" Gather", all[r*n:(r+1)*n], blk(r, 0, n))
		}
	}
	// In-place Gather at the root.
	all = make([]int32, p*n)
	copy(all[me*n:], blk(me, 0, n))
	mine := blk(me, 0, n)
	if me == p-1 {
		mine = all[me*n : (me+1)*n]
	}
	check(mpi.Gather(c, mine, all, p-1))
	if me == p-1 {
		for r := 0; r < p; r++ {
			expect(tag+" Gather(in place)", all[r*n:(r+1)*n], blk(r, 0, n))
		}
	}
	var src []int32
	if me == 0 {
		for r := 0; r < p; r++ {
			src = append(src, blk(0, r, n)...)
		}
	}
	piece := make([]int32, n)
	check(mpi.Scatter(c, src, piece, 0))
	expect(tag+" Scatter", piece, blk(0, me, n))
	all = make([]int32, p*n)
	check(mpi.Allgather(c, blk(me, 0, n), all))
	for r := 0; r < p; r++ {
		expect(tag+" Allgather", all[r*n:(r+1)*n], blk(r, 0, n))
	}
	all = make([]int32, p*n)
	copy(all[me*n:], blk(me, 0, n))
	check(mpi.Allgather(c, all[me*n:(me+1)*n], all))
	for r := 0; r < p; r++ {
		expect(tag+" Allgather(in place)", all[r*n:(r+1)*n], blk(r, 0, n))
	}
	var a2a []int32
	for d := 0; d < p; d++ {
		a2a = append(a2a, blk(me, d, n)...)
	}
	recv := make([]int32, p*n)
	check(mpi.Alltoall(c, a2a, recv))
	for r := 0; r < p; r++ {
		expect(tag+" Alltoall", recv[r*n:(r+1)*n], blk(r, me, n))
	}
	check(mpi.Alltoall(c, a2a, a2a)) // in place
	expect(tag+" Alltoall(in place)", a2a, recv)

	// The v-variants: rank r's block has cnt(r) elements (zero for some).
	cnt := func(r int) int { return (r*5 + n) % 9 * (1 + n/50) }
	counts, displs := make([]int, p), make([]int, p)
	tot := 0
	for r := 0; r < p; r++ {
		counts[r], displs[r] = cnt(r), tot+r // a gap of r elements before each block
		tot += cnt(r) + r
	}
	vall := make([]int32, tot)
	check(mpi.Gatherv(c, blk(me, 1, cnt(me)), vall, counts, displs, 0))
	if me == 0 {
		for r := 0; r < p; r++ {
			expect(tag+" Gatherv", vall[displs[r]:displs[r]+counts[r]], blk(r, 1, cnt(r)))
		}
	}
	var vsrc []int32
	if me == p-1 {
		vsrc = make([]int32, tot)
		for r := 0; r < p; r++ {
			copy(vsrc[displs[r]:], blk(p-1, r, cnt(r)))
		}
	}
	vpiece := make([]int32, cnt(me))
	check(mpi.Scatterv(c, vsrc, counts, displs, vpiece, p-1))
	expect(tag+" Scatterv", vpiece, blk(p-1, me, cnt(me)))
	vall = make([]int32, tot)
	check(mpi.Allgatherv(c, blk(me, 2, cnt(me)), vall, counts, displs))
	for r := 0; r < p; r++ {
		expect(tag+" Allgatherv", vall[displs[r]:displs[r]+counts[r]], blk(r, 2, cnt(r)))
	}
	// Alltoallv: rank i sends (i+j)%4*(n/100+1) elements to rank j.
	amount := func(i, j int) int { return (i + j) % 4 * (n/100 + 1) }
	sc, sd, rc, rd := make([]int, p), make([]int, p), make([]int, p), make([]int, p)
	st, rt := 0, 0
	for j := 0; j < p; j++ {
		sc[j], sd[j] = amount(me, j), st
		st += sc[j]
		rc[j], rd[j] = amount(j, me), rt
		rt += rc[j]
	}
	vs := make([]int32, st)
	for j := 0; j < p; j++ {
		copy(vs[sd[j]:], blk(me, j, sc[j]))
	}
	vr := make([]int32, rt)
	check(mpi.Alltoallv(c, vs, sc, sd, vr, rc, rd))
	for j := 0; j < p; j++ {
		expect(tag+" Alltoallv", vr[rd[j]:rd[j]+rc[j]], blk(j, me, rc[j]))
	}

	// Reduce_scatter: the float64 sum vector split by counts.
	rsCounts := make([]int, p)
	rsTot := 0
	for r := range rsCounts {
		rsCounts[r] = cnt(r)
		rsTot += cnt(r)
	}
	rsSend := make([]float64, rsTot)
	for i := range rsSend {
		rsSend[i] = fval(wr(me), i, salt)
	}
	start := 0
	for r := 0; r < me; r++ {
		start += rsCounts[r]
	}
	rsRef := make([]float64, rsCounts[me])
	for i := range rsRef {
		acc := fval(wr(0), start+i, salt)
		for r := 1; r < p; r++ {
			acc += fval(wr(r), start+i, salt)
		}
		rsRef[i] = acc
	}
	rsGot := make([]float64, rsCounts[me])
	check(mpi.ReduceScatter(c, rsSend, rsGot, rsCounts, mpi.Sum))
	expectF(tag+" Reduce_scatter", rsGot, rsRef)
	check(mpi.ReduceScatter(c, rsSend, rsSend[:rsCounts[me]], rsCounts, mpi.Sum)) // in place
	expectF(tag+" Reduce_scatter(in place)", rsSend[:rsCounts[me]], rsRef)
	blkGot := make([]int64, 3)
	blkSend := make([]int64, 3*p)
	for i := range blkSend {
		blkSend[i] = int64(i * (wr(me) + 1))
	}
	check(mpi.ReduceScatterBlock(c, blkSend, blkGot, mpi.Sum))
	for i := range blkGot {
		var want int64
		for r := 0; r < p; r++ {
			want += int64((me*3 + i) * (wr(r) + 1))
		}
		if blkGot[i] != want {
			fail("%s Reduce_scatter_block: element %d = %d, want %d", tag, i, blkGot[i], want)
		}
	}
}

// nonblocking starts several collectives at once, with point-to-point
// traffic in flight on the same communicator, and waits for them together.
func nonblocking(c *mpi.Comm, n int) {
	me, p := c.Rank(), c.Size()
	b1 := make([]int64, n)
	if me == 0 {
		for i := range b1 {
			b1[i] = int64(i * 3)
		}
	}
	send := make([]float64, n)
	for i := range send {
		send[i] = float64(me + i)
	}
	sum := make([]float64, n)
	gath := make([]int32, p)
	a2aS, a2aR := make([]int32, p), make([]int32, p)
	for j := range a2aS {
		a2aS[j] = int32(me*100 + j)
	}
	red := make([]float64, n)
	var scatSrc []int32
	if me == p-1 {
		scatSrc = seqI32(p)
	}
	scat := make([]int32, 1)
	gat := make([]int32, p)
	// Point-to-point in flight: a ring message on the same communicator.
	ring := make([]int64, 1)
	rr, err := mpi.Irecv(c, ring, (me+p-1)%p, 3)
	check(err)
	rs, err := mpi.Isend(c, []int64{int64(me)}, (me+1)%p, 3)
	check(err)
	var reqs []*mpi.Request
	add := func(r *mpi.Request, err error) {
		check(err)
		reqs = append(reqs, r)
	}
	add(mpi.Ibarrier(c))
	add(mpi.Ibcast(c, b1, 0))
	add(mpi.Iallreduce(c, send, sum, mpi.Sum))
	add(mpi.Ireduce(c, send, red, mpi.Max, p-1))
	add(mpi.Iallgather(c, []int32{int32(me)}, gath))
	add(mpi.Ialltoall(c, a2aS, a2aR))
	add(mpi.Iscatter(c, scatSrc, scat, p-1))
	add(mpi.Igather(c, []int32{int32(me * 2)}, gat, 0))
	// A user operation (folded in a rank when Waitall polls the request).
	aff := []int64{int64(me%3 + 2), int64(me)}
	affGot := make([]int64, 2)
	add(mpi.Iallreduce(c, aff, affGot, mpi.NewOp("affine", affine, false)))
	// The v-variants, scans and reduce-scatter, non-blocking: rank r
	// contributes r+1 elements of value r.
	counts, displs := make([]int, p), make([]int, p)
	tot := 0
	for r := range p {
		counts[r], displs[r] = r+1, tot
		tot += r + 1
	}
	mine := make([]int32, me+1)
	for i := range mine {
		mine[i] = int32(me)
	}
	var whole []int32 // every rank's block, rank order
	for r := range p {
		for range r + 1 {
			whole = append(whole, int32(r))
		}
	}
	gv, agv := make([]int32, tot), make([]int32, tot)
	var svSrc []int32
	if me == 0 {
		svSrc = whole
	}
	sv := make([]int32, me+1)
	add(mpi.Igatherv(c, mine, gv, counts, displs, 0))
	add(mpi.Iallgatherv(c, mine, agv, counts, displs))
	add(mpi.Iscatterv(c, svSrc, counts, displs, sv, 0))
	// Alltoallv: one element j*1000+me to every rank j.
	ones, seqd := equal(p, 1), seq(p)
	a2avS, a2avR := make([]int32, p), make([]int32, p)
	for j := range a2avS {
		a2avS[j] = int32(j*1000 + me)
	}
	add(mpi.Ialltoallv(c, a2avS, ones, seqd, a2avR, ones, seqd))
	sc, ex := make([]int64, 1), []int64{-1}
	add(mpi.Iscan(c, []int64{int64(me + 1)}, sc, mpi.Sum))
	add(mpi.Iexscan(c, []int64{int64(me + 1)}, ex, mpi.Sum))
	rsIn := make([]int64, tot)
	for i := range rsIn {
		rsIn[i] = int64(i)
	}
	rsOut := make([]int64, me+1)
	add(mpi.IreduceScatter(c, rsIn, rsOut, counts, mpi.Sum))
	check(mpi.Waitall(append(reqs, rr, rs)...))
	if me == 0 {
		expect("Igatherv", gv, whole)
	}
	expect("Iallgatherv", agv, whole)
	for i := range sv {
		if sv[i] != int32(me) {
			fail("Iscatterv: %v", sv)
		}
	}
	for j := range a2avR {
		if a2avR[j] != int32(me*1000+j) {
			fail("Ialltoallv: %v", a2avR)
		}
	}
	if sc[0] != int64((me+1)*(me+2)/2) || (me > 0 && ex[0] != int64(me*(me+1)/2)) || (me == 0 && ex[0] != -1) {
		fail("Iscan %d, Iexscan %d", sc[0], ex[0])
	}
	for i := range rsOut {
		if rsOut[i] != int64(p*(displs[me]+i)) {
			fail("IreduceScatter: %v", rsOut)
		}
	}
	m, b := int64(1), int64(0)
	for r := 0; r < p; r++ {
		mr, br := int64(r%3+2), int64(r)
		m, b = mr*m, mr*b+br
	}
	if affGot[0] != m || affGot[1] != b {
		fail("Iallreduce(user): got %v, want [%d %d]", affGot, m, b)
	}
	for i := range b1 {
		if b1[i] != int64(i*3) {
			fail("Ibcast: element %d = %d", i, b1[i])
		}
		want := 0.0
		for r := 0; r < p; r++ {
			want += float64(r + i)
		}
		if sum[i] != want {
			fail("Iallreduce: element %d = %v, want %v", i, sum[i], want)
		}
		if me == p-1 && red[i] != float64(p-1+i) {
			fail("Ireduce(MAX): element %d = %v", i, red[i])
		}
	}
	for j := 0; j < p; j++ {
		if gath[j] != int32(j) || a2aR[j] != int32(j*100+me) || (me == 0 && gat[j] != int32(j*2)) {
			fail("Iallgather/Ialltoall/Igather: block %d: %d %d %d", j, gath[j], a2aR[j], gat[j])
		}
	}
	if scat[0] != int32(me) || ring[0] != int64((me+p-1)%p) {
		fail("Iscatter got %d, ring got %d", scat[0], ring[0])
	}
}

func equal(n, v int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = v
	}
	return s
}

func seqI32(n int) []int32 {
	s := make([]int32, n)
	for i := range s {
		s[i] = int32(i)
	}
	return s
}

// collMismatch makes the members of the world disagree about one collective.
func collMismatch(kind string) {
	me := w.Rank()
	buf := make([]float64, 8)
	switch kind {
	case "call": // rank 1 broadcasts while the others enter a barrier
		if me == 1 {
			check(mpi.Bcast(w, buf, 0))
		} else {
			check(mpi.Barrier(w))
		}
	case "root":
		check(mpi.Bcast(w, buf, me%2))
	case "op":
		op := mpi.Sum
		if me == w.Size()-1 {
			op = mpi.Max
		}
		check(mpi.Allreduce(w, buf, make([]float64, 8), op))
	case "userop": // the last rank passes another user operation
		sum := mpi.NewOp("sum", func(in, inout []float64) {
			for i := range in {
				inout[i] += in[i]
			}
		}, true)
		larger := mpi.NewOp("max", func(in, inout []float64) {
			for i := range in {
				inout[i] = math.Max(in[i], inout[i])
			}
		}, true)
		op := sum
		if me == w.Size()-1 {
			op = larger
		}
		check(mpi.Allreduce(w, buf, make([]float64, 8), op))
	case "count":
		n := 8
		if me == 0 {
			n = 9
		}
		check(mpi.Allreduce(w, make([]float64, n), make([]float64, n), mpi.Sum))
	case "type":
		if me == 0 {
			check(mpi.Bcast(w, make([]int64, 8), 0))
		} else {
			check(mpi.Bcast(w, buf, 0))
		}
	case "vcount": // the root expects 2 elements from rank 1, which sends 3
		n := 2
		if me == 1 {
			n = 3
		}
		counts := make([]int, w.Size())
		displs := make([]int, w.Size())
		for i := range counts {
			counts[i], displs[i] = 2, 2*i
		}
		check(mpi.Gatherv(w, make([]int32, n), make([]int32, 2*w.Size()), counts, displs, 0))
	case "missing": // rank 0 never enters the barrier: a deadlock, reported
		if me != 0 {
			check(mpi.Barrier(w))
		} else {
			_, err := mpi.Recv(w, make([]byte, 1), 1, 0)
			check(err)
		}
	default:
		fail("unknown mismatch kind %q", kind)
	}
	fail("the mismatched collective returned")
}
