package mpiapi

import (
	"unsafe"

	"github.com/bcsmpi/bcsmpi/internal/proto"
	"github.com/bcsmpi/bcsmpi/internal/reduce"
	"github.com/bcsmpi/bcsmpi/mds"
)

// The byte-level core (see the package comment): every call that moves
// data is implemented once, on bytes of elements of one runtime element
// type t (an internal/reduce.Type code). The XBytes functions below are
// its entry points; the generic API (Send[T], Bcast[T], ...) wraps them,
// and package cabi calls them directly. Each enters its call (the MMDS
// record, the argument checks and their messages, the MPI_IN_PLACE and
// overlap rules, the buffer checks) exactly as the generic call of its
// name did; the core adds checkBuf, which only a caller of the XBytes
// functions can fail. Error messages count elements, as the generic API's
// do (len(recv) is the number of elements of recv).

// bytesView is buf's memory as bytes (nil for an empty buf).
func bytesView[T Elem](buf []T) []byte {
	if len(buf) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(buf))), len(buf)*int(sizeOf[T]()))
}

// elemsView is b's memory as elements of T (b is aligned for T: see aligned).
func elemsView[T Elem](b []byte) []T {
	return unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(b))), len(b)/int(sizeOf[T]()))
}

// aligned is n zeroed bytes aligned for every element type (8 bytes), for
// the buffers the core makes that a user operation's function reads as
// elements.
func aligned(n int) []byte {
	if n == 0 {
		return nil
	}
	w := make([]uint64, (n+7)/8)
	return unsafe.Slice((*byte)(unsafe.Pointer(&w[0])), n)
}

// checkBuf checks that t is an element type and buf a whole number of its
// elements; what names the buffer.
func (p *process) checkBuf(call, what string, buf []byte, t reduce.Type) error {
	if !t.Valid() {
		return p.errf(ErrType, call, "element type %s is not one of the runtime's element types (int8 ... float64, the value-index pairs)", t)
	}
	if es := t.Size(); len(buf)%es != 0 {
		return p.errf(ErrCount, call, "len(%s) = %d bytes is not a whole number of %s elements (%d bytes each)", what, len(buf), t, es)
	}
	return nil
}

// byteAddr is the address of element i of buf (elements of es bytes); 0
// for an empty buf.
func byteAddr(buf []byte, i, es int) uint64 {
	if len(buf) == 0 {
		return 0
	}
	return uint64(uintptr(unsafe.Pointer(unsafe.SliceData(buf)))) + uint64(i)*uint64(es)
}

// sameAt reports whether a starts exactly at element i of b (the
// MPI_IN_PLACE idiom of this API: pass the receive buffer's own block as
// the send buffer).
func sameAt(a, b []byte, i, es int) bool {
	return len(a) > 0 && i*es < len(b) && unsafe.SliceData(a) == unsafe.SliceData(b[i*es:])
}

// overlaps reports whether a and b share memory.
func overlaps(a, b []byte) bool {
	return Overlap(byteAddr(a, 0, 1), uint64(len(a)), byteAddr(b, 0, 1), uint64(len(b)))
}

// Point-to-point.

// IsendBytes is Isend on bytes: buf holds elements of type t.
func IsendBytes(c *Comm, buf []byte, t reduce.Type, dest, tag int) (*Request, error) {
	const call = "MPI_Isend"
	p, err := current(call)
	if err != nil {
		return nil, err
	}
	t0 := p.mmds.begin(false)
	r, err := startMode(p, call, proto.KindSend, c, buf, t, dest, tag, sendStandard)
	p.mmds.end(mds.Isend, t0, int64(len(buf)), false)
	return r, err
}

// IrecvBytes is Irecv on bytes.
func IrecvBytes(c *Comm, buf []byte, t reduce.Type, source, tag int) (*Request, error) {
	const call = "MPI_Irecv"
	p, err := current(call)
	if err != nil {
		return nil, err
	}
	t0 := p.mmds.begin(false)
	r, err := startMode(p, call, proto.KindRecv, c, buf, t, source, tag, sendStandard)
	p.mmds.end(mds.Irecv, t0, int64(len(buf)), false)
	return r, err
}

// PsendBytes is the send of one start of a partitioned send request
// (MPI_Psend_init, once every partition is ready): IsendBytes in the
// partitioned matching space. pair (from 1) is the caller's count of
// partitioned sends initialized with c, dest and tag, up to this one; the
// send matches only the receive of dest's PrecvBytes with the same pair
// number, source and tag, never a plain receive or probe
// (proto.Descriptor.Pair). MMDS records it as MPI_Isend.
func PsendBytes(c *Comm, buf []byte, t reduce.Type, dest, tag int, pair uint32) (*Request, error) {
	const call = "MPI_Start"
	p, err := current(call)
	if err != nil {
		return nil, err
	}
	if pair == 0 {
		return nil, p.errf(ErrArg, call, "partitioned pair number 0, want 1 or more")
	}
	t0 := p.mmds.begin(false)
	r, err := startPair(p, call, proto.KindSend, c, buf, t, dest, tag, sendStandard, pair)
	p.mmds.end(mds.Isend, t0, int64(len(buf)), false)
	return r, err
}

// PrecvBytes is the receive of one start of a partitioned receive request
// (MPI_Precv_init): IrecvBytes in the partitioned matching space, with no
// wildcards. pair counts the caller's partitioned receives initialized with
// c, source and tag (see PsendBytes). MMDS records it as MPI_Irecv.
func PrecvBytes(c *Comm, buf []byte, t reduce.Type, source, tag int, pair uint32) (*Request, error) {
	const call = "MPI_Start"
	p, err := current(call)
	if err != nil {
		return nil, err
	}
	if pair == 0 {
		return nil, p.errf(ErrArg, call, "partitioned pair number 0, want 1 or more")
	}
	t0 := p.mmds.begin(false)
	r, err := startPair(p, call, proto.KindRecv, c, buf, t, source, tag, sendStandard, pair)
	if err == nil && !r.done {
		// The two buffers must be the same size (the partitions may
		// differ); a longer message is already MPI_ERR_TRUNCATE.
		want := uint64(len(buf))
		r.after = func() error {
			if st := r.status; !st.cancelled && st.bytes < want {
				return p.errf(ErrOther, call, "the partitioned send from rank %d tag %d is %d bytes and the partitioned receive's buffer %d: the standard wants them the same size (the partitions may differ)", st.Source, st.Tag, st.bytes, want)
			}
			return nil
		}
	}
	p.mmds.end(mds.Irecv, t0, int64(len(buf)), false)
	return r, err
}

// SendBytes is Send on bytes.
func SendBytes(c *Comm, buf []byte, t reduce.Type, dest, tag int) error {
	const call = "MPI_Send"
	p, err := current(call)
	if err != nil {
		return err
	}
	t0 := p.mmds.begin(true)
	r, err := startMode(p, call, proto.KindSend, c, buf, t, dest, tag, sendBlocking)
	switch {
	case err == nil && r.eager: // complete at its post, unless eager_max are unmatched (eager.go)
		p.awaitMatch(call)
	case err == nil:
		_, err = p.wait(r, call)
	}
	p.mmds.end(mds.Send, t0, int64(len(buf)), true)
	return err
}

// RecvBytes is Recv on bytes.
func RecvBytes(c *Comm, buf []byte, t reduce.Type, source, tag int) (Status, error) {
	const call = "MPI_Recv"
	p, err := current(call)
	if err != nil {
		return Status{}, err
	}
	t0 := p.mmds.begin(true)
	var st Status
	r, err := startMode(p, call, proto.KindRecv, c, buf, t, source, tag, sendStandard)
	if err == nil {
		st, err = p.wait(r, call)
	}
	p.mmds.end(mds.Recv, t0, int64(st.bytes), true)
	return st, err
}

// SendrecvBytes is Sendrecv on bytes: sendbuf holds elements of type st,
// recvbuf of type rt.
func SendrecvBytes(c *Comm, sendbuf []byte, st reduce.Type, dest, sendtag int, recvbuf []byte, rt reduce.Type, source, recvtag int) (Status, error) {
	const call = "MPI_Sendrecv"
	p, err := current(call)
	if err != nil {
		return Status{}, err
	}
	t0 := p.mmds.begin(true)
	defer func() { p.mmds.end(mds.Sendrecv, t0, int64(len(sendbuf)+len(recvbuf)), true) }()
	s, err := startMode(p, call, proto.KindSend, c, sendbuf, st, dest, sendtag, sendStandard)
	if err != nil {
		return Status{}, err
	}
	r, err := startMode(p, call, proto.KindRecv, c, recvbuf, rt, source, recvtag, sendStandard)
	if err != nil {
		p.wait(s, call)
		return Status{}, err
	}
	err = p.waitall([]*Request{s, r}, call)
	return r.status, err
}

// IssendBytes is Issend on bytes.
func IssendBytes(c *Comm, buf []byte, t reduce.Type, dest, tag int) (*Request, error) {
	const call = "MPI_Issend"
	p, err := current(call)
	if err != nil {
		return nil, err
	}
	t0 := p.mmds.begin(false)
	r, err := startMode(p, call, proto.KindSend, c, buf, t, dest, tag, sendSync)
	p.mmds.end(mds.Issend, t0, int64(len(buf)), false)
	return r, err
}

// SsendBytes is Ssend on bytes.
func SsendBytes(c *Comm, buf []byte, t reduce.Type, dest, tag int) error {
	const call = "MPI_Ssend"
	p, err := current(call)
	if err != nil {
		return err
	}
	t0 := p.mmds.begin(true)
	r, err := startMode(p, call, proto.KindSend, c, buf, t, dest, tag, sendSync)
	if err == nil {
		_, err = p.wait(r, call)
	}
	p.mmds.end(mds.Ssend, t0, int64(len(buf)), true)
	return err
}

// MrecvBytes is Mrecv on bytes.
func MrecvBytes(m *Message, buf []byte, t reduce.Type) (Status, error) {
	const call = "MPI_Mrecv"
	p, err := current(call)
	if err != nil {
		return Status{}, err
	}
	if err := p.checkBuf(call, "buf", buf, t); err != nil {
		return Status{}, err
	}
	if err := p.takeMessage(call, m); err != nil {
		return Status{}, err
	}
	if m.NoProc() {
		return Status{Source: ProcNull, Tag: AnyTag}, nil
	}
	t0 := p.mmds.begin(true)
	defer p.mmds.end(mds.Mrecv, t0, int64(len(buf)), true)
	if _, err := p.wait(m.recv, call); err != nil {
		return Status{}, err
	}
	return m.deliver(p, call, buf, t.Size())
}

// ImrecvBytes is Imrecv on bytes.
func ImrecvBytes(m *Message, buf []byte, t reduce.Type) (*Request, error) {
	const call = "MPI_Imrecv"
	p, err := current(call)
	if err != nil {
		return nil, err
	}
	t0 := p.mmds.begin(false)
	defer p.mmds.end(mds.Imrecv, t0, int64(len(buf)), false)
	if err := p.checkBuf(call, "buf", buf, t); err != nil {
		return nil, err
	}
	if err := p.takeMessage(call, m); err != nil {
		return nil, err
	}
	if m.NoProc() {
		return p.track(&Request{done: true, call: call, kind: proto.KindRecv, peer: ProcNull, status: Status{Source: ProcNull, Tag: AnyTag}}), nil
	}
	es := t.Size()
	r := &Request{call: call, kind: proto.KindRecv, active: true, comm: m.recv.comm, peer: m.status.Source, tag: m.status.Tag, buf: buf}
	copyOut := func() (*Request, error) {
		var err error
		r.status, err = m.deliver(p, call, buf, es)
		return nil, err
	}
	r.chain = &chain{inner: m.recv, steps: []func() (*Request, error){copyOut}}
	return p.track(r), nil
}

// Rooted and all-to-all collectives on blocks of one length. Each checks
// its buffers against t, then runs as the generic call of its name.

// BcastBytes is Bcast on bytes.
func BcastBytes(c *Comm, buf []byte, t reduce.Type, root int) error {
	const call = "MPI_Bcast"
	p, err := enter(call, c)
	if err != nil {
		return err
	}
	if err := p.checkBuf(call, "buf", buf, t); err != nil {
		return err
	}
	return p.run(mds.Bcast, int64(len(buf)), func() (*Request, error) { return bcast(p, call, c, buf, t, root) })
}

// IbcastBytes is Ibcast on bytes.
func IbcastBytes(c *Comm, buf []byte, t reduce.Type, root int) (*Request, error) {
	const call = "MPI_Ibcast"
	p, err := enter(call, c)
	if err != nil {
		return nil, err
	}
	if err := p.checkBuf(call, "buf", buf, t); err != nil {
		return nil, err
	}
	return p.nonblocking(mds.Ibcast, int64(len(buf)), func() (*Request, error) { return bcast(p, call, c, buf, t, root) })
}

// enterBufs is enter for a call with a send and a receive buffer of
// elements of type t.
func enterBufs(call string, c *Comm, send, recv []byte, t reduce.Type) (*process, error) {
	p, err := enter(call, c)
	if err != nil {
		return nil, err
	}
	if err := p.checkBuf(call, "send", send, t); err != nil {
		return nil, err
	}
	return p, p.checkBuf(call, "recv", recv, t)
}

// GatherBytes is Gather on bytes.
func GatherBytes(c *Comm, send, recv []byte, t reduce.Type, root int) error {
	const call = "MPI_Gather"
	p, err := enterBufs(call, c, send, recv, t)
	if err != nil {
		return err
	}
	return p.run(mds.Gather, int64(len(send)), func() (*Request, error) { return gather(p, call, c, send, recv, t, root, userTag{}) })
}

// IgatherBytes is Igather on bytes.
func IgatherBytes(c *Comm, send, recv []byte, t reduce.Type, root int) (*Request, error) {
	const call = "MPI_Igather"
	p, err := enterBufs(call, c, send, recv, t)
	if err != nil {
		return nil, err
	}
	return p.nonblocking(mds.Igather, int64(len(send)), func() (*Request, error) { return gather(p, call, c, send, recv, t, root, userTag{}) })
}

// ScatterBytes is Scatter on bytes.
func ScatterBytes(c *Comm, send, recv []byte, t reduce.Type, root int) error {
	const call = "MPI_Scatter"
	p, err := enterBufs(call, c, send, recv, t)
	if err != nil {
		return err
	}
	return p.run(mds.Scatter, int64(len(recv)), func() (*Request, error) { return scatter(p, call, c, send, recv, t, root) })
}

// IscatterBytes is Iscatter on bytes.
func IscatterBytes(c *Comm, send, recv []byte, t reduce.Type, root int) (*Request, error) {
	const call = "MPI_Iscatter"
	p, err := enterBufs(call, c, send, recv, t)
	if err != nil {
		return nil, err
	}
	return p.nonblocking(mds.Iscatter, int64(len(recv)), func() (*Request, error) { return scatter(p, call, c, send, recv, t, root) })
}

// AllgatherBytes is Allgather on bytes.
func AllgatherBytes(c *Comm, send, recv []byte, t reduce.Type) error {
	const call = "MPI_Allgather"
	p, err := enterBufs(call, c, send, recv, t)
	if err != nil {
		return err
	}
	return p.run(mds.Allgather, int64(len(send)), func() (*Request, error) { return allgather(p, call, c, send, recv, t) })
}

// IallgatherBytes is Iallgather on bytes.
func IallgatherBytes(c *Comm, send, recv []byte, t reduce.Type) (*Request, error) {
	const call = "MPI_Iallgather"
	p, err := enterBufs(call, c, send, recv, t)
	if err != nil {
		return nil, err
	}
	return p.nonblocking(mds.Iallgather, int64(len(send)), func() (*Request, error) { return allgather(p, call, c, send, recv, t) })
}

// AlltoallBytes is Alltoall on bytes.
func AlltoallBytes(c *Comm, send, recv []byte, t reduce.Type) error {
	const call = "MPI_Alltoall"
	p, err := enterBufs(call, c, send, recv, t)
	if err != nil {
		return err
	}
	return p.run(mds.Alltoall, int64(len(send)), func() (*Request, error) { return alltoall(p, call, c, send, recv, t) })
}

// IalltoallBytes is Ialltoall on bytes.
func IalltoallBytes(c *Comm, send, recv []byte, t reduce.Type) (*Request, error) {
	const call = "MPI_Ialltoall"
	p, err := enterBufs(call, c, send, recv, t)
	if err != nil {
		return nil, err
	}
	return p.nonblocking(mds.Ialltoall, int64(len(send)), func() (*Request, error) { return alltoall(p, call, c, send, recv, t) })
}

// The v-variants: counts and displacements in elements of type t.

// GathervBytes is Gatherv on bytes.
func GathervBytes(c *Comm, send, recv []byte, t reduce.Type, counts, displs []int, root int) error {
	const call = "MPI_Gatherv"
	p, err := enterBufs(call, c, send, recv, t)
	if err != nil {
		return err
	}
	return p.run(mds.Gatherv, int64(len(send)), func() (*Request, error) { return gatherv(p, call, c, send, recv, t, counts, displs, root) })
}

// IgathervBytes is Igatherv on bytes.
func IgathervBytes(c *Comm, send, recv []byte, t reduce.Type, counts, displs []int, root int) (*Request, error) {
	const call = "MPI_Igatherv"
	p, err := enterBufs(call, c, send, recv, t)
	if err != nil {
		return nil, err
	}
	return p.nonblocking(mds.Igatherv, int64(len(send)), func() (*Request, error) { return gatherv(p, call, c, send, recv, t, counts, displs, root) })
}

// ScattervBytes is Scatterv on bytes.
func ScattervBytes(c *Comm, send []byte, counts, displs []int, recv []byte, t reduce.Type, root int) error {
	const call = "MPI_Scatterv"
	p, err := enterBufs(call, c, send, recv, t)
	if err != nil {
		return err
	}
	return p.run(mds.Scatterv, int64(len(recv)), func() (*Request, error) { return scatterv(p, call, c, send, counts, displs, recv, t, root) })
}

// IscattervBytes is Iscatterv on bytes.
func IscattervBytes(c *Comm, send []byte, counts, displs []int, recv []byte, t reduce.Type, root int) (*Request, error) {
	const call = "MPI_Iscatterv"
	p, err := enterBufs(call, c, send, recv, t)
	if err != nil {
		return nil, err
	}
	return p.nonblocking(mds.Iscatterv, int64(len(recv)), func() (*Request, error) { return scatterv(p, call, c, send, counts, displs, recv, t, root) })
}

// AllgathervBytes is Allgatherv on bytes.
func AllgathervBytes(c *Comm, send, recv []byte, t reduce.Type, counts, displs []int) error {
	const call = "MPI_Allgatherv"
	p, err := enterBufs(call, c, send, recv, t)
	if err != nil {
		return err
	}
	return p.run(mds.Allgatherv, int64(len(send)), func() (*Request, error) { return allgatherv(p, call, c, send, recv, t, counts, displs) })
}

// IallgathervBytes is Iallgatherv on bytes.
func IallgathervBytes(c *Comm, send, recv []byte, t reduce.Type, counts, displs []int) (*Request, error) {
	const call = "MPI_Iallgatherv"
	p, err := enterBufs(call, c, send, recv, t)
	if err != nil {
		return nil, err
	}
	return p.nonblocking(mds.Iallgatherv, int64(len(send)), func() (*Request, error) { return allgatherv(p, call, c, send, recv, t, counts, displs) })
}

// AlltoallvBytes is Alltoallv on bytes.
func AlltoallvBytes(c *Comm, send []byte, scounts, sdispls []int, recv []byte, t reduce.Type, rcounts, rdispls []int) error {
	const call = "MPI_Alltoallv"
	p, err := enterBufs(call, c, send, recv, t)
	if err != nil {
		return err
	}
	return p.run(mds.Alltoallv, int64(len(send)), func() (*Request, error) {
		return alltoallv(p, call, c, send, scounts, sdispls, recv, rcounts, rdispls, t)
	})
}

// IalltoallvBytes is Ialltoallv on bytes.
func IalltoallvBytes(c *Comm, send []byte, scounts, sdispls []int, recv []byte, t reduce.Type, rcounts, rdispls []int) (*Request, error) {
	const call = "MPI_Ialltoallv"
	p, err := enterBufs(call, c, send, recv, t)
	if err != nil {
		return nil, err
	}
	return p.nonblocking(mds.Ialltoallv, int64(len(send)), func() (*Request, error) {
		return alltoallv(p, call, c, send, scounts, sdispls, recv, rcounts, rdispls, t)
	})
}

// Reductions: op is a predefined operation defined on t, or a user
// operation made for elements of type t (NewOp, NewOpBytes).

// ReduceBytes is Reduce on bytes.
func ReduceBytes(c *Comm, send, recv []byte, t reduce.Type, op *Op, root int) error {
	const call = "MPI_Reduce"
	p, f, err := reduceArgs(call, c, send, recv, t, op, root, true)
	if err != nil {
		return err
	}
	return p.run(mds.Reduce, int64(len(send)), func() (*Request, error) {
		return startReduce(p, call, proto.CollReduce, c, f, send, recv, t, op, root)
	})
}

// IreduceBytes is Ireduce on bytes.
func IreduceBytes(c *Comm, send, recv []byte, t reduce.Type, op *Op, root int) (*Request, error) {
	const call = "MPI_Ireduce"
	p, f, err := reduceArgs(call, c, send, recv, t, op, root, true)
	if err != nil {
		return nil, err
	}
	return p.nonblocking(mds.Ireduce, int64(len(send)), func() (*Request, error) {
		return startReduce(p, call, proto.CollReduce, c, f, send, recv, t, op, root)
	})
}

// AllreduceBytes is Allreduce on bytes.
func AllreduceBytes(c *Comm, send, recv []byte, t reduce.Type, op *Op) error {
	const call = "MPI_Allreduce"
	p, f, err := reduceArgs(call, c, send, recv, t, op, 0, false)
	if err != nil {
		return err
	}
	return p.run(mds.Allreduce, int64(len(send)), func() (*Request, error) {
		return startReduce(p, call, proto.CollAllreduce, c, f, send, recv, t, op, 0)
	})
}

// IallreduceBytes is Iallreduce on bytes.
func IallreduceBytes(c *Comm, send, recv []byte, t reduce.Type, op *Op) (*Request, error) {
	const call = "MPI_Iallreduce"
	p, f, err := reduceArgs(call, c, send, recv, t, op, 0, false)
	if err != nil {
		return nil, err
	}
	return p.nonblocking(mds.Iallreduce, int64(len(send)), func() (*Request, error) {
		return startReduce(p, call, proto.CollAllreduce, c, f, send, recv, t, op, 0)
	})
}

// ScanBytes is Scan on bytes.
func ScanBytes(c *Comm, send, recv []byte, t reduce.Type, op *Op) error {
	const call = "MPI_Scan"
	p, f, err := reduceArgs(call, c, send, recv, t, op, 0, false)
	if err != nil {
		return err
	}
	return p.run(mds.Scan, int64(len(send)), func() (*Request, error) { return scan(p, call, c, f, send, recv, t, op, false) })
}

// IscanBytes is Iscan on bytes.
func IscanBytes(c *Comm, send, recv []byte, t reduce.Type, op *Op) (*Request, error) {
	const call = "MPI_Iscan"
	p, f, err := reduceArgs(call, c, send, recv, t, op, 0, false)
	if err != nil {
		return nil, err
	}
	return p.nonblocking(mds.Iscan, int64(len(send)), func() (*Request, error) { return scan(p, call, c, f, send, recv, t, op, false) })
}

// ExscanBytes is Exscan on bytes.
func ExscanBytes(c *Comm, send, recv []byte, t reduce.Type, op *Op) error {
	const call = "MPI_Exscan"
	p, f, err := reduceArgs(call, c, send, recv, t, op, 0, false)
	if err != nil {
		return err
	}
	return p.run(mds.Exscan, int64(len(send)), func() (*Request, error) { return scan(p, call, c, f, send, recv, t, op, true) })
}

// IexscanBytes is Iexscan on bytes.
func IexscanBytes(c *Comm, send, recv []byte, t reduce.Type, op *Op) (*Request, error) {
	const call = "MPI_Iexscan"
	p, f, err := reduceArgs(call, c, send, recv, t, op, 0, false)
	if err != nil {
		return nil, err
	}
	return p.nonblocking(mds.Iexscan, int64(len(send)), func() (*Request, error) { return scan(p, call, c, f, send, recv, t, op, true) })
}

// ReduceScatterBytes is ReduceScatter on bytes (counts in elements of t).
func ReduceScatterBytes(c *Comm, send, recv []byte, t reduce.Type, counts []int, op *Op) error {
	const call = "MPI_Reduce_scatter"
	p, f, err := reduceArgs(call, c, send, recv, t, op, 0, false)
	if err != nil {
		return err
	}
	return p.run(mds.ReduceScatter, int64(len(send)), func() (*Request, error) { return reduceScatter(p, call, c, f, send, recv, t, counts, op) })
}

// IreduceScatterBytes is IreduceScatter on bytes.
func IreduceScatterBytes(c *Comm, send, recv []byte, t reduce.Type, counts []int, op *Op) (*Request, error) {
	const call = "MPI_Ireduce_scatter"
	p, f, err := reduceArgs(call, c, send, recv, t, op, 0, false)
	if err != nil {
		return nil, err
	}
	return p.nonblocking(mds.IreduceScatter, int64(len(send)), func() (*Request, error) {
		return reduceScatter(p, call, c, f, send, recv, t, counts, op)
	})
}

// ReduceScatterBlockBytes is ReduceScatterBlock on bytes.
func ReduceScatterBlockBytes(c *Comm, send, recv []byte, t reduce.Type, op *Op) error {
	if c == nil {
		return ReduceScatterBytes(c, send, recv, t, nil, op)
	}
	n := 0
	if es := t.Size(); es > 0 { // else ReduceScatterBytes refuses t
		n = len(recv) / es
	}
	return ReduceScatterBytes(c, send, recv, t, equalCounts(c.size, n), op)
}
