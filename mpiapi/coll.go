package mpiapi

import (
	"fmt"

	"github.com/bcsmpi/bcsmpi/internal/proto"
	"github.com/bcsmpi/bcsmpi/internal/reduce"
	"github.com/bcsmpi/bcsmpi/mds"
)

// Collectives are executed by the runtime, not built from point-to-point
// messages: each call posts one descriptor (plus one per peer block for the
// v-variants), the scheduler runs the collective in the slice in which its
// last member's descriptor is exchanged, and the agents move the data (and
// fold reductions, in communicator rank order) in the transmission phase.
//
// In place (MPI_IN_PLACE): pass the receive buffer itself (or, for Gather and
// Allgather, the caller's own block of it; for Scatter, the root's own block
// of the send buffer) as the send buffer. Any other overlap of the send and
// receive buffers is an MPI_ERR_BUFFER error.

// coll describes one collective call for icoll.
type coll struct {
	call    string
	kind    proto.Coll
	root    int // communicator rank, or -1
	op      reduce.Op
	t       reduce.Type
	send    uint64
	recv    uint64
	len     uint64
	inPlace bool
	parts   []proto.Descriptor
	keep    any
	color   int32 // Split: color
	key     int32 // Split: key
	grant   bool  // Split: ask for a grant of local duplicates (Dup)
	user    userTag
}

// userTag marks the runtime steps of a reduction with a user operation with
// the operation's number and the call the user made, so that MSM compares
// them across members as it compares predefined operations.
type userTag struct {
	op   uint16
	coll proto.Coll
}

func (p *process) checkRoot(call string, c *Comm, root int) error {
	if root < 0 || root >= c.size {
		return p.errf(ErrRoot, call, "root = %d, want 0..%d", root, c.size-1)
	}
	return nil
}

// icoll posts a collective on c and returns its request.
func (p *process) icoll(c *Comm, a coll) (*Request, error) {
	var bufs []buffer
	if p.chk != nil {
		bufs = collBuffers(c, &a)
		if err := p.checkPost(a.call, bufs); err != nil {
			return nil, err
		}
	}
	r, err := p.newRequest(a.call, proto.KindColl, a.keep, 1)
	if err != nil {
		return nil, err
	}
	if p.chk != nil {
		p.arm(r, bufs, false, fmt.Sprintf("collective on communicator %d", c.id))
	}
	c = p.view(c)
	r.comm = c
	c.collSeq++
	seq := c.collSeq
	if c.pk != 0 {
		seq = proto.PersistKey(c.pk, c.collSeq)
	}
	for _, d := range a.parts {
		d.Kind, d.Comm, d.CollSeq, d.Persist, d.Req = proto.KindCollPart, c.id, seq, c.pk != 0, r.slot
		if err := p.post(d, nil); err != nil {
			return nil, err
		}
	}
	d := proto.Descriptor{Kind: proto.KindColl, Coll: a.kind, Comm: c.id, CollSeq: seq, Persist: c.pk != 0, Req: r.slot,
		Op: uint8(a.op), DType: uint8(a.t), InPlace: a.inPlace, Addr: a.send, RAddr: a.recv, Len: a.len,
		UserOp: a.user.op, UserColl: a.user.coll}
	if a.kind.Rooted() {
		d.SetRoot(c.worldRank(a.root))
	}
	if a.kind == proto.CollSplit {
		d.SetSplit(a.color, a.key)
		if a.grant {
			d.SetDupGrant()
		}
		if a.color != proto.UndefinedColor {
			d.SetLives(p.takeLife(r))
		}
	}
	if err := p.post(d, nil); err != nil {
		p.unlive(r)
		return r, err
	}
	return r, nil
}

// Persistent collectives (MPI_X_init) match in the order of their
// initialization calls, not of their starts (MPI 4.0 §6.13): members may
// start a communicator's persistent requests in different orders. Each
// init takes a view of the communicator (Persistent), whose index k is the
// init's place among the communicator's persistent initializations (the
// same on every member, since the inits are collective and ordered); each
// start runs its non-blocking collective inside RunPersistent, so what it
// posts on the communicator goes into the view's own matching space
// (proto.PersistKey: k and the view's step count), apart from the
// communicator's ordinary collectives, which keep their own count. The
// later steps of a chained request (a user operation) post through the
// view too.

// Persistent returns a new view of c for one persistent collective: its
// index is the next of c's persistent initializations. Call it once per
// MPI_X_init, on every member, in the same order.
func (c *Comm) Persistent() *Comm {
	c.pinits++
	return &Comm{id: c.id, rank: c.rank, size: c.size, members: c.members, toComm: c.toComm, pk: c.pinits, made: c.made}
}

// RunPersistent runs start (one start of a persistent collective) with
// the collectives it posts on v's communicator matched in v's space. A
// nil v runs start as it is.
func RunPersistent(v *Comm, start func()) {
	if v == nil || self == nil {
		start()
		return
	}
	p := self
	prev := p.pview
	p.pview = v
	defer func() { p.pview = prev }()
	start()
}

// view is the persistent view c's collectives post through now: the one
// RunPersistent set for c's communicator, or c.
func (p *process) view(c *Comm) *Comm {
	if v := p.pview; v != nil && c.pk == 0 && v.id == c.id {
		return v
	}
	return c
}

// run is the shape of every blocking collective: MMDS bracket, post, wait.
func (p *process) run(prim mds.Prim, bytes int64, start func() (*Request, error)) error {
	call := prim.String()
	t0 := p.mmds.begin(true)
	r, err := start()
	if err == nil && r != nil { // nil: start did the whole call (user operations)
		_, err = p.wait(r, call)
	}
	p.mmds.end(prim, t0, bytes, true)
	return err
}

// nonblocking is the shape of every non-blocking collective.
func (p *process) nonblocking(prim mds.Prim, bytes int64, start func() (*Request, error)) (*Request, error) {
	t0 := p.mmds.begin(false)
	if p.chk != nil { // check.go: its written buffer is compared before the runtime writes it
		p.chk.nonblocking = true
		defer func() { p.chk.nonblocking = false }()
	}
	r, err := start()
	p.mmds.end(prim, t0, bytes, false)
	return r, err
}

func enter(call string, c *Comm) (*process, error) {
	p, err := current(call)
	if err != nil {
		return nil, err
	}
	return p, p.checkComm(call, c)
}

// Barrier blocks until every rank of c has entered it. The runtime completes
// it in the slice in which the last member's descriptor is exchanged.
func Barrier(c *Comm) error {
	p, err := enter("MPI_Barrier", c)
	if err != nil {
		return err
	}
	return p.run(mds.Barrier, 0, func() (*Request, error) {
		return p.icoll(c, coll{call: "MPI_Barrier", kind: proto.CollBarrier})
	})
}

// Ibarrier starts a barrier; its request completes when every member has entered.
func Ibarrier(c *Comm) (*Request, error) {
	p, err := enter("MPI_Ibarrier", c)
	if err != nil {
		return nil, err
	}
	return p.nonblocking(mds.Ibarrier, 0, func() (*Request, error) {
		return p.icoll(c, coll{call: "MPI_Ibarrier", kind: proto.CollBarrier})
	})
}

func bcast(p *process, call string, c *Comm, buf []byte, t reduce.Type, root int) (*Request, error) {
	if err := p.checkRoot(call, c, root); err != nil {
		return nil, err
	}
	return p.icoll(c, coll{call: call, kind: proto.CollBcast, root: root, t: t,
		send: byteAddr(buf, 0, 1), len: uint64(len(buf)), keep: buf})
}

// Bcast sends root's buf to every member of c (every member passes a buffer
// of the same length).
func Bcast[T Elem](c *Comm, buf []T, root int) error {
	return BcastBytes(c, bytesView(buf), typeOf[T](), root)
}

// Ibcast starts a broadcast.
func Ibcast[T Elem](c *Comm, buf []T, root int) (*Request, error) {
	return IbcastBytes(c, bytesView(buf), typeOf[T](), root)
}

// reduction checks and posts Reduce, Allreduce, Scan and Exscan with a
// predefined operation.
func reduction(p *process, call string, kind proto.Coll, c *Comm, send, recv []byte, t reduce.Type, op *Op, root int) (*Request, error) {
	es := t.Size()
	inPlace := sameAt(send, recv, 0, es)
	if !inPlace && overlaps(send, recv) {
		return nil, p.errf(ErrBuffer, call, "send and receive buffers overlap; pass the receive buffer itself as the send buffer for MPI_IN_PLACE")
	}
	if kind != proto.CollReduce || c.rank == root {
		if len(recv) != len(send) {
			return nil, p.errf(ErrCount, call, "len(recv) = %d, want len(send) = %d", len(recv)/es, len(send)/es)
		}
	} else {
		recv = nil
	}
	return p.icoll(c, coll{call: call, kind: kind, root: root, op: op.code, t: t, inPlace: inPlace,
		send: byteAddr(send, 0, 1), recv: byteAddr(recv, 0, 1), len: uint64(len(send)), keep: [2][]byte{send, recv}})
}

// reduceArgs enters a reduction: the communicator, the buffers, the root
// (when rooted) and the operation, whose user function it returns (nil for
// a predefined operation).
func reduceArgs(call string, c *Comm, send, recv []byte, t reduce.Type, op *Op, root int, rooted bool) (*process, func(in, inout []byte), error) {
	p, err := enterBufs(call, c, send, recv, t)
	if err != nil {
		return nil, nil, err
	}
	if rooted {
		if err := p.checkRoot(call, c, root); err != nil {
			return nil, nil, err
		}
	}
	f, err := checkOp(p, call, op, t)
	return p, f, err
}

// startReduce posts a Reduce or Allreduce: in the runtime for a predefined
// operation, as a chained request for a user operation.
func startReduce(p *process, call string, kind proto.Coll, c *Comm, f func(in, inout []byte), send, recv []byte, t reduce.Type, op *Op, root int) (*Request, error) {
	if f != nil {
		return userIreduce(p, call, c, f, userTag{op.id, kind}, send, recv, t, root, kind == proto.CollAllreduce)
	}
	return reduction(p, call, kind, c, send, recv, t, op, root)
}

// Reduce combines every member's send with op, in rank order, into root's
// recv (ignored, and may be nil, elsewhere).
func Reduce[T Elem](c *Comm, send, recv []T, op *Op, root int) error {
	return ReduceBytes(c, bytesView(send), bytesView(recv), typeOf[T](), op, root)
}

// Ireduce starts a Reduce.
func Ireduce[T Elem](c *Comm, send, recv []T, op *Op, root int) (*Request, error) {
	return IreduceBytes(c, bytesView(send), bytesView(recv), typeOf[T](), op, root)
}

// Allreduce combines every member's send with op, in rank order, into every
// member's recv. The result is bit-identical on every member and in every run.
func Allreduce[T Elem](c *Comm, send, recv []T, op *Op) error {
	return AllreduceBytes(c, bytesView(send), bytesView(recv), typeOf[T](), op)
}

// Iallreduce starts an Allreduce.
func Iallreduce[T Elem](c *Comm, send, recv []T, op *Op) (*Request, error) {
	return IallreduceBytes(c, bytesView(send), bytesView(recv), typeOf[T](), op)
}

// Scan leaves in member i's recv the combination of the sends of members 0..i.
func Scan[T Elem](c *Comm, send, recv []T, op *Op) error {
	return ScanBytes(c, bytesView(send), bytesView(recv), typeOf[T](), op)
}

// Iscan starts a Scan.
func Iscan[T Elem](c *Comm, send, recv []T, op *Op) (*Request, error) {
	return IscanBytes(c, bytesView(send), bytesView(recv), typeOf[T](), op)
}

// Exscan leaves in member i's recv the combination of the sends of members
// 0..i-1; member 0's recv is not touched.
func Exscan[T Elem](c *Comm, send, recv []T, op *Op) error {
	return ExscanBytes(c, bytesView(send), bytesView(recv), typeOf[T](), op)
}

// Iexscan starts an Exscan.
func Iexscan[T Elem](c *Comm, send, recv []T, op *Op) (*Request, error) {
	return IexscanBytes(c, bytesView(send), bytesView(recv), typeOf[T](), op)
}

func scan(p *process, call string, c *Comm, f func(in, inout []byte), send, recv []byte, t reduce.Type, op *Op, ex bool) (*Request, error) {
	kind := proto.CollScan
	if ex {
		kind = proto.CollExscan
	}
	if f != nil {
		return userIscan(p, call, c, f, userTag{op.id, kind}, send, recv, t, ex)
	}
	return reduction(p, call, kind, c, send, recv, t, op, 0)
}

// ReduceScatter combines the members' send vectors with op and leaves
// elements [sum(counts[:i]), sum(counts[:i+1])) of the result in member i's
// recv (len(recv) = counts[i]). In place: recv = send[:counts[i]].
func ReduceScatter[T Elem](c *Comm, send, recv []T, counts []int, op *Op) error {
	return ReduceScatterBytes(c, bytesView(send), bytesView(recv), typeOf[T](), counts, op)
}

// IreduceScatter starts a ReduceScatter.
func IreduceScatter[T Elem](c *Comm, send, recv []T, counts []int, op *Op) (*Request, error) {
	return IreduceScatterBytes(c, bytesView(send), bytesView(recv), typeOf[T](), counts, op)
}

// ReduceScatterBlock is ReduceScatter with every member receiving len(recv) elements.
func ReduceScatterBlock[T Elem](c *Comm, send, recv []T, op *Op) error {
	return ReduceScatterBlockBytes(c, bytesView(send), bytesView(recv), typeOf[T](), op)
}

func equalCounts(p, n int) []int {
	counts := make([]int, p)
	for i := range counts {
		counts[i] = n
	}
	return counts
}

func reduceScatter(p *process, call string, c *Comm, f func(in, inout []byte), send, recv []byte, t reduce.Type, counts []int, op *Op) (*Request, error) {
	if len(counts) != c.size {
		return nil, p.errf(ErrCount, call, "len(counts) = %d, want the communicator size %d", len(counts), c.size)
	}
	total := 0
	for i, n := range counts {
		if n < 0 {
			return nil, p.errf(ErrCount, call, "counts[%d] = %d, want >= 0", i, n)
		}
		total += n
	}
	es := t.Size()
	if total != len(send)/es {
		return nil, p.errf(ErrCount, call, "counts add up to %d, want len(send) = %d", total, len(send)/es)
	}
	if len(recv)/es != counts[c.rank] {
		return nil, p.errf(ErrCount, call, "len(recv) = %d, want counts[%d] = %d", len(recv)/es, c.rank, counts[c.rank])
	}
	if !sameAt(recv, send, 0, es) && overlaps(send, recv) {
		return nil, p.errf(ErrBuffer, call, "send and receive buffers overlap; for MPI_IN_PLACE pass send[:counts[rank]] as recv")
	}
	if f != nil {
		return userIreduceScatter(p, call, c, f, userTag{op.id, proto.CollReduceScatter}, send, recv, t, counts)
	}
	part := proto.Part(proto.PartRecv, c.worldRank(c.rank), byteAddr(recv, 0, 1), uint64(len(recv)))
	return p.icoll(c, coll{call: call, kind: proto.CollReduceScatter, op: op.code, t: t,
		send: byteAddr(send, 0, 1), recv: byteAddr(recv, 0, 1), len: uint64(len(send)), parts: []proto.Descriptor{part}, keep: [2][]byte{send, recv}})
}

// gather posts a Gather; user marks it as the first step of a reduction with
// a user operation (zero for a plain Gather).
func gather(p *process, call string, c *Comm, send, recv []byte, t reduce.Type, root int, user userTag) (*Request, error) {
	if err := p.checkRoot(call, c, root); err != nil {
		return nil, err
	}
	es := t.Size()
	n := len(send) / es
	inPlace := false
	if c.rank == root {
		inPlace = sameAt(send, recv, root*n, es)
		if inPlace {
			n = len(recv) / es / c.size
		}
		if len(recv)/es != c.size*n {
			return nil, p.errf(ErrCount, call, "len(recv) = %d at the root, want size x len(send) = %d x %d", len(recv)/es, c.size, n)
		}
		if !inPlace && overlaps(send, recv) {
			return nil, p.errf(ErrBuffer, call, "send and receive buffers overlap; for MPI_IN_PLACE pass recv[root*n:(root+1)*n] as send")
		}
	}
	return p.icoll(c, coll{call: call, kind: proto.CollGather, root: root, t: t, inPlace: inPlace,
		send: byteAddr(send, 0, 1), recv: byteAddr(recv, 0, 1), len: uint64(n * es), keep: [2][]byte{send, recv}, user: user})
}

// Gather collects every member's send, in rank order, into root's recv
// (len(recv) = size x len(send) at the root; ignored elsewhere).
func Gather[T Elem](c *Comm, send, recv []T, root int) error {
	return GatherBytes(c, bytesView(send), bytesView(recv), typeOf[T](), root)
}

// Igather starts a Gather.
func Igather[T Elem](c *Comm, send, recv []T, root int) (*Request, error) {
	return IgatherBytes(c, bytesView(send), bytesView(recv), typeOf[T](), root)
}

func scatter(p *process, call string, c *Comm, send, recv []byte, t reduce.Type, root int) (*Request, error) {
	if err := p.checkRoot(call, c, root); err != nil {
		return nil, err
	}
	es := t.Size()
	n := len(recv) / es
	inPlace := false
	if c.rank == root {
		inPlace = sameAt(recv, send, root*n, es)
		if inPlace {
			n = len(send) / es / c.size
		}
		if len(send)/es != c.size*n {
			return nil, p.errf(ErrCount, call, "len(send) = %d at the root, want size x len(recv) = %d x %d", len(send)/es, c.size, n)
		}
		if !inPlace && overlaps(send, recv) {
			return nil, p.errf(ErrBuffer, call, "send and receive buffers overlap; for MPI_IN_PLACE pass send[root*n:(root+1)*n] as recv")
		}
	}
	return p.icoll(c, coll{call: call, kind: proto.CollScatter, root: root, t: t, inPlace: inPlace,
		send: byteAddr(send, 0, 1), recv: byteAddr(recv, 0, 1), len: uint64(n * es), keep: [2][]byte{send, recv}})
}

// Scatter sends block i of root's send (len(send) = size x len(recv)) to
// member i's recv.
func Scatter[T Elem](c *Comm, send, recv []T, root int) error {
	return ScatterBytes(c, bytesView(send), bytesView(recv), typeOf[T](), root)
}

// Iscatter starts a Scatter.
func Iscatter[T Elem](c *Comm, send, recv []T, root int) (*Request, error) {
	return IscatterBytes(c, bytesView(send), bytesView(recv), typeOf[T](), root)
}

func allgather(p *process, call string, c *Comm, send, recv []byte, t reduce.Type) (*Request, error) {
	es := t.Size()
	n := len(send) / es
	inPlace := sameAt(send, recv, c.rank*n, es)
	if inPlace && n == 0 {
		inPlace = false
	}
	if inPlace {
		n = len(recv) / es / c.size
	}
	if len(recv)/es != c.size*n {
		return nil, p.errf(ErrCount, call, "len(recv) = %d, want size x len(send) = %d x %d", len(recv)/es, c.size, n)
	}
	if !inPlace && overlaps(send, recv) {
		return nil, p.errf(ErrBuffer, call, "send and receive buffers overlap; for MPI_IN_PLACE pass recv[rank*n:(rank+1)*n] as send")
	}
	return p.icoll(c, coll{call: call, kind: proto.CollAllgather, t: t, inPlace: inPlace,
		send: byteAddr(send, 0, 1), recv: byteAddr(recv, 0, 1), len: uint64(n * es), keep: [2][]byte{send, recv}})
}

// Allgather collects every member's send, in rank order, into every member's
// recv (len(recv) = size x len(send)).
func Allgather[T Elem](c *Comm, send, recv []T) error {
	return AllgatherBytes(c, bytesView(send), bytesView(recv), typeOf[T]())
}

// Iallgather starts an Allgather.
func Iallgather[T Elem](c *Comm, send, recv []T) (*Request, error) {
	return IallgatherBytes(c, bytesView(send), bytesView(recv), typeOf[T]())
}

func alltoall(p *process, call string, c *Comm, send, recv []byte, t reduce.Type) (*Request, error) {
	es := t.Size()
	if len(send)/es%c.size != 0 {
		return nil, p.errf(ErrCount, call, "len(send) = %d is not a multiple of the communicator size %d", len(send)/es, c.size)
	}
	if len(recv) != len(send) {
		return nil, p.errf(ErrCount, call, "len(recv) = %d, want len(send) = %d", len(recv)/es, len(send)/es)
	}
	if sameAt(send, recv, 0, es) { // in place: send from a copy
		send = append([]byte(nil), send...)
	} else if overlaps(send, recv) {
		return nil, p.errf(ErrBuffer, call, "send and receive buffers overlap; pass the same slice twice for MPI_IN_PLACE")
	}
	return p.icoll(c, coll{call: call, kind: proto.CollAlltoall, t: t,
		send: byteAddr(send, 0, 1), recv: byteAddr(recv, 0, 1), len: uint64(len(send) / c.size), keep: [2][]byte{send, recv}})
}

// Alltoall sends block j of every member's send to member j, which stores
// the block from member i as block i of its recv.
func Alltoall[T Elem](c *Comm, send, recv []T) error {
	return AlltoallBytes(c, bytesView(send), bytesView(recv), typeOf[T]())
}

// Ialltoall starts an Alltoall.
func Ialltoall[T Elem](c *Comm, send, recv []T) (*Request, error) {
	return IalltoallBytes(c, bytesView(send), bytesView(recv), typeOf[T]())
}

// blocks checks counts/displs (in elements of es bytes) against buf and
// returns the parts describing them.
func blocks(p *process, call, what string, c *Comm, buf []byte, es int, counts, displs []int, dir int32) ([]proto.Descriptor, error) {
	if len(counts) != c.size || len(displs) != c.size {
		return nil, p.errf(ErrCount, call, "len(%scounts) = %d and len(%sdispls) = %d, want the communicator size %d", what, len(counts), what, len(displs), c.size)
	}
	n := len(buf) / es
	parts := make([]proto.Descriptor, c.size)
	for i := range c.size {
		// A block of no elements moves nothing, so its displacement may
		// lie anywhere (MPI programs leave it past the buffer's end).
		if counts[i] < 0 || displs[i] < 0 || counts[i] > 0 && displs[i]+counts[i] > n {
			return nil, p.errf(ErrCount, call, "%scounts[%d] = %d at %sdispls[%d] = %d does not fit len(%s) = %d", what, i, counts[i], what, i, displs[i], what, n)
		}
		parts[i] = proto.Part(dir, c.worldRank(i), byteAddr(buf, displs[i], es), uint64(counts[i]*es))
	}
	return parts, nil
}

// Gatherv collects member i's send into root's recv at displs[i]; counts[i]
// must equal len(send) of member i. counts and displs matter at the root only.
func Gatherv[T Elem](c *Comm, send, recv []T, counts, displs []int, root int) error {
	return GathervBytes(c, bytesView(send), bytesView(recv), typeOf[T](), counts, displs, root)
}

// Igatherv starts a Gatherv.
func Igatherv[T Elem](c *Comm, send, recv []T, counts, displs []int, root int) (*Request, error) {
	return IgathervBytes(c, bytesView(send), bytesView(recv), typeOf[T](), counts, displs, root)
}

func gatherv(p *process, call string, c *Comm, send, recv []byte, t reduce.Type, counts, displs []int, root int) (*Request, error) {
	if err := p.checkRoot(call, c, root); err != nil {
		return nil, err
	}
	es := t.Size()
	a := coll{call: call, kind: proto.CollGatherv, root: root, t: t, send: byteAddr(send, 0, 1),
		len: uint64(len(send)), keep: [2][]byte{send, recv}}
	if c.rank == root {
		var err error
		if a.parts, err = blocks(p, call, "recv", c, recv, es, counts, displs, proto.PartRecv); err != nil {
			return nil, err
		}
		a.inPlace = sameAt(send, recv, displs[root], es)
		if !a.inPlace && overlaps(send, recv) {
			return nil, p.errf(ErrBuffer, call, "send and receive buffers overlap; for MPI_IN_PLACE pass recv[displs[root]:...] as send")
		}
	}
	return p.icoll(c, a)
}

// Scatterv sends counts[i] elements at displs[i] of root's send to member
// i's recv (len(recv) = counts[i]).
func Scatterv[T Elem](c *Comm, send []T, counts, displs []int, recv []T, root int) error {
	return ScattervBytes(c, bytesView(send), counts, displs, bytesView(recv), typeOf[T](), root)
}

// Iscatterv starts a Scatterv.
func Iscatterv[T Elem](c *Comm, send []T, counts, displs []int, recv []T, root int) (*Request, error) {
	return IscattervBytes(c, bytesView(send), counts, displs, bytesView(recv), typeOf[T](), root)
}

func scatterv(p *process, call string, c *Comm, send []byte, counts, displs []int, recv []byte, t reduce.Type, root int) (*Request, error) {
	if err := p.checkRoot(call, c, root); err != nil {
		return nil, err
	}
	es := t.Size()
	a := coll{call: call, kind: proto.CollScatterv, root: root, t: t, recv: byteAddr(recv, 0, 1),
		len: uint64(len(recv)), keep: [2][]byte{send, recv}}
	if c.rank == root {
		var err error
		if a.parts, err = blocks(p, call, "send", c, send, es, counts, displs, proto.PartSend); err != nil {
			return nil, err
		}
		a.inPlace = sameAt(recv, send, displs[root], es)
		if !a.inPlace && overlaps(send, recv) {
			return nil, p.errf(ErrBuffer, call, "send and receive buffers overlap; for MPI_IN_PLACE pass send[displs[root]:...] as recv")
		}
	}
	return p.icoll(c, a)
}

// Allgatherv collects member i's send into every member's recv at
// displs[i]; counts[i] must equal len(send) of member i.
func Allgatherv[T Elem](c *Comm, send, recv []T, counts, displs []int) error {
	return AllgathervBytes(c, bytesView(send), bytesView(recv), typeOf[T](), counts, displs)
}

// Iallgatherv starts an Allgatherv.
func Iallgatherv[T Elem](c *Comm, send, recv []T, counts, displs []int) (*Request, error) {
	return IallgathervBytes(c, bytesView(send), bytesView(recv), typeOf[T](), counts, displs)
}

func allgatherv(p *process, call string, c *Comm, send, recv []byte, t reduce.Type, counts, displs []int) (*Request, error) {
	es := t.Size()
	a := coll{call: call, kind: proto.CollAllgatherv, t: t, send: byteAddr(send, 0, 1),
		len: uint64(len(send)), keep: [2][]byte{send, recv}}
	var err error
	if a.parts, err = blocks(p, call, "recv", c, recv, es, counts, displs, proto.PartRecv); err != nil {
		return nil, err
	}
	a.inPlace = len(send) > 0 && sameAt(send, recv, displs[c.rank], es)
	if a.inPlace {
		a.len = uint64(counts[c.rank] * es)
	} else if overlaps(send, recv) {
		return nil, p.errf(ErrBuffer, call, "send and receive buffers overlap; for MPI_IN_PLACE pass recv[displs[rank]:...] as send")
	}
	return p.icoll(c, a)
}

// Alltoallv sends scounts[j] elements at sdispls[j] of send to member j,
// which receives them at rdispls[i] of its recv (rcounts[i] elements).
func Alltoallv[T Elem](c *Comm, send []T, scounts, sdispls []int, recv []T, rcounts, rdispls []int) error {
	return AlltoallvBytes(c, bytesView(send), scounts, sdispls, bytesView(recv), typeOf[T](), rcounts, rdispls)
}

// Ialltoallv starts an Alltoallv.
func Ialltoallv[T Elem](c *Comm, send []T, scounts, sdispls []int, recv []T, rcounts, rdispls []int) (*Request, error) {
	return IalltoallvBytes(c, bytesView(send), scounts, sdispls, bytesView(recv), typeOf[T](), rcounts, rdispls)
}

func alltoallv(p *process, call string, c *Comm, send []byte, scounts, sdispls []int, recv []byte, rcounts, rdispls []int, t reduce.Type) (*Request, error) {
	if overlaps(send, recv) {
		return nil, p.errf(ErrBuffer, call, "send and receive buffers overlap")
	}
	es := t.Size()
	sp, err := blocks(p, call, "send", c, send, es, scounts, sdispls, proto.PartSend)
	if err != nil {
		return nil, err
	}
	rp, err := blocks(p, call, "recv", c, recv, es, rcounts, rdispls, proto.PartRecv)
	if err != nil {
		return nil, err
	}
	return p.icoll(c, coll{call: call, kind: proto.CollAlltoallv, t: t, parts: append(sp, rp...), keep: [2][]byte{send, recv}})
}

// userIreduce starts a reduction with a user operation as a chained
// request: the runtime gathers the contributions at root, the root folds
// them in rank order when the request is next polled, and for all (an
// Allreduce) the runtime broadcasts the result.
func userIreduce(p *process, call string, c *Comm, f func(in, inout []byte), user userTag, send, recv []byte, t reduce.Type, root int, all bool) (*Request, error) {
	n := len(send) // bytes
	if (all || c.rank == root) && len(recv) != n {
		es := t.Size()
		return nil, p.errf(ErrCount, call, "len(recv) = %d, want len(send) = %d", len(recv)/es, n/es)
	}
	c = p.view(c) // the fold's steps post through a persistent start's view
	var blocks []byte
	if c.rank == root {
		blocks = aligned(c.size * n) // f reads its blocks as elements
	}
	own := append([]byte(nil), send...) // the caller may reduce in place
	g, err := gather(p, call, c, own, blocks, t, root, user)
	if err != nil {
		return nil, err
	}
	fold := func() (*Request, error) {
		if c.rank == root {
			foldUser(f, blocks, c.size, n, false)
			copy(recv, blocks[:n])
		}
		if all {
			return bcast(p, call, c, recv, t, root)
		}
		return nil, nil
	}
	return p.track(&Request{call: call, kind: proto.KindColl, active: true, comm: c,
		chain: &chain{inner: g, steps: []func() (*Request, error){fold}}}), nil
}

// userIscan is Scan/Exscan with a user operation as a chained request: the
// runtime gathers the contributions at rank 0, which computes the prefixes
// when the request is next polled; the runtime scatters them.
func userIscan(p *process, call string, c *Comm, f func(in, inout []byte), user userTag, send, recv []byte, t reduce.Type, ex bool) (*Request, error) {
	n := len(send) // bytes
	if len(recv) != n {
		es := t.Size()
		return nil, p.errf(ErrCount, call, "len(recv) = %d, want len(send) = %d", len(recv)/es, n/es)
	}
	c = p.view(c) // the prefix's scatter posts through a persistent start's view
	var all []byte
	if c.rank == 0 {
		all = aligned(c.size * n)
	}
	own := append([]byte(nil), send...)
	g, err := gather(p, call, c, own, all, t, 0, user)
	if err != nil {
		return nil, err
	}
	out := recv
	if ex && c.rank == 0 {
		out = make([]byte, n) // Exscan leaves member 0's recv alone
	}
	prefix := func() (*Request, error) {
		if c.rank == 0 {
			foldUser(f, all, c.size, n, true)
			if ex { // member i gets the prefix of 0..i-1: shift by one block
				copy(all[n:], all[:len(all)-n])
			}
		}
		return scatter(p, call, c, all, out, t, 0)
	}
	return p.track(&Request{call: call, kind: proto.KindColl, active: true, comm: c,
		chain: &chain{inner: g, steps: []func() (*Request, error){prefix}}}), nil
}

// userIreduceScatter reduces to rank 0 with a user operation and scatters
// the blocks, as one chained request.
func userIreduceScatter(p *process, call string, c *Comm, f func(in, inout []byte), user userTag, send, recv []byte, t reduce.Type, counts []int) (*Request, error) {
	c = p.view(c) // the scatter posts through a persistent start's view
	var total []byte
	if c.rank == 0 {
		total = make([]byte, len(send))
	}
	red, err := userIreduce(p, call, c, f, user, send, total, t, 0, false)
	if err != nil {
		return nil, err
	}
	displs := make([]int, c.size)
	for i := 1; i < c.size; i++ {
		displs[i] = displs[i-1] + counts[i-1]
	}
	scatterBlocks := func() (*Request, error) { return scatterv(p, call, c, total, counts, displs, recv, t, 0) }
	return p.track(&Request{call: call, kind: proto.KindColl, active: true, comm: c,
		chain: &chain{inner: red, steps: []func() (*Request, error){scatterBlocks}}}), nil
}
