package mpiapi

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/bcsmpi/bcsmpi/internal/proto"
	"github.com/bcsmpi/bcsmpi/internal/shm"
	"github.com/bcsmpi/bcsmpi/internal/unix"
	"github.com/bcsmpi/bcsmpi/mds"
)

// Wildcards, the null process and the tag bound.
const (
	AnySource = int(proto.AnySource)
	AnyTag    = int(proto.AnyTag)
	ProcNull  = int(proto.ProcNull)
	TagUB     = 1<<30 - 1
)

// Environment variables set by bcsrun for every rank.
const (
	EnvShmFD = "BCS_SHM_FD" // inherited descriptor of the node's region
	EnvRank  = "BCS_RANK"
	EnvSize  = "BCS_SIZE"
	EnvLocal = "BCS_LOCAL_RANK" // block index in the node's region
	EnvSlice = "BCS_TIMESLICE_NS"
	EnvSpin  = "BCS_SPIN_NS" // how long a blocked call spins before it sleeps
)

// Numeric is the element type of a message buffer.
type Numeric interface {
	~int8 | ~int16 | ~int32 | ~int64 | ~int | ~uint8 | ~uint16 | ~uint32 | ~uint64 | ~uint | ~float32 | ~float64
}

type process struct {
	rank, size proto.Rank
	region     *shm.Region
	mem        []byte
	blk        *shm.RankBlock
	seq        uint64
	free       []uint32
	reqs       []Request
	slice      time.Duration
	spin       time.Duration
	start      time.Time
	finalized  bool
	mmds       mmds
}

var self *process

// Comm is a communicator: a group of ranks with its own message space and
// its own sequence of collective calls. Make new ones with Dup, Split and
// Create; the runtime gives every communicator a job-wide id.
type Comm struct {
	id      proto.CommID
	rank    int
	size    int
	members []proto.Rank // communicator rank → world rank; nil for the world
	toComm  []int32      // world rank → communicator rank, -1 if not a member
	collSeq uint32       // collective calls made on this communicator
	freed   bool
}

var world Comm

// World is MPI_COMM_WORLD (valid after Init).
func World() *Comm { return &world }

// worldRank translates a rank of c to a world rank.
func (c *Comm) worldRank(r int) proto.Rank {
	if c.members == nil || r < 0 {
		return proto.Rank(r)
	}
	return c.members[r]
}

// commRank translates a world rank to a rank of c (-1 if not a member).
func (c *Comm) commRank(w proto.Rank) int {
	if c.members == nil || w < 0 {
		return int(w)
	}
	return int(c.toComm[w])
}

// Rank is the caller's rank in c.
func (c *Comm) Rank() int { return c.rank }

// Size is the number of ranks in c.
func (c *Comm) Size() int { return c.size }

func envInt(name string) (int, error) {
	v := os.Getenv(name)
	if v == "" {
		return 0, fmt.Errorf("%s is not set: start the program with bcsrun", name)
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0, fmt.Errorf("%s=%q is not an integer", name, v)
	}
	return n, nil
}

// Init attaches the process to its node's agent. A rank attaches once: its
// block's attach word is claimed with its pid, and the region's descriptor is
// made close-on-exec as soon as it is mapped, so no program the rank starts
// inherits it; a second Init for the same rank from another process is
// refused with an error naming the rank and the process holding it.
func Init() error {
	const call = "MPI_Init"
	if self != nil {
		return self.errf(ErrOther, call, "called twice")
	}
	var vals [4]int
	for i, name := range []string{EnvShmFD, EnvRank, EnvSize, EnvLocal} {
		v, err := envInt(name)
		if err != nil {
			return (*process)(nil).errf(ErrOther, call, "%v", err)
		}
		vals[i] = v
	}
	fd, rank, size, local := vals[0], vals[1], vals[2], vals[3]
	if !unix.ShmFile(fd) {
		return (*process)(nil).errf(ErrOther, call, "%s=%d: rank %d's shared memory is not open in this process (descriptor %d is closed or another file); only the process bcsrun started for rank %d can attach as it (a rank's region is closed on exec, so programs a rank starts cannot join the job)", EnvShmFD, fd, rank, fd, rank)
	}
	n, err := unix.FileSize(fd)
	if err != nil {
		return (*process)(nil).errf(ErrOther, call, "shared memory fd %d of rank %d: %v", fd, rank, err)
	}
	mem, err := unix.Map(fd, int(n))
	if err != nil {
		return (*process)(nil).errf(ErrOther, call, "rank %d: %v", rank, err)
	}
	if err := unix.CloseOnExec(fd); err != nil {
		unix.Unmap(mem)
		return (*process)(nil).errf(ErrOther, call, "rank %d: %v", rank, err)
	}
	region, err := shm.Attach(mem)
	if err != nil {
		unix.Unmap(mem)
		return (*process)(nil).errf(ErrOther, call, "%s=%d is not rank %d's shared memory: %v", EnvShmFD, fd, rank, err)
	}
	if local < 0 || local >= region.G.Ranks || rank < 0 || rank >= size {
		unix.Unmap(mem)
		return (*process)(nil).errf(ErrOther, call, "%s=%d %s=%d %s=%d do not fit a node of %d ranks", EnvRank, rank, EnvSize, size, EnvLocal, local, region.G.Ranks)
	}
	blk := region.Block(local)
	if blk.WorldRank() != proto.Rank(rank) {
		unix.Unmap(mem)
		return (*process)(nil).errf(ErrOther, call, "block %d belongs to rank %d, not %d", local, blk.WorldRank(), rank)
	}
	if holder, ok := blk.Claim(os.Getpid()); !ok { // before anything of the rank's (MMDS files) is touched
		unix.Unmap(mem)
		return (*process)(nil).errf(ErrOther, call, "rank %d is already attached by process %d; a rank attaches once, and a process it starts cannot attach as it", rank, holder)
	}
	p := &process{rank: proto.Rank(rank), size: proto.Rank(size), region: region, mem: mem, blk: blk,
		reqs: make([]Request, region.G.ReqMax), start: time.Now(), slice: 500 * time.Microsecond, spin: 20 * time.Microsecond}
	if v, err := envInt(EnvSlice); err == nil && v > 0 {
		p.slice = time.Duration(v)
	}
	if v, err := envInt(EnvSpin); err == nil && v >= 0 {
		p.spin = time.Duration(v)
	}
	p.free = make([]uint32, 0, region.G.ReqMax)
	for i := region.G.ReqMax - 1; i >= 0; i-- {
		p.free = append(p.free, uint32(i))
	}
	if err := p.mmds.init(rank); err != nil {
		unix.Unmap(mem)
		return p.errf(ErrArg, call, "%v", err)
	}
	blk.SetState(shm.StateInit)
	self = p
	world = Comm{id: 0, rank: rank, size: size}
	return nil
}

// Initialized reports whether Init has succeeded.
func Initialized() bool { return self != nil }

// Finalize detaches from the agent. Every request must have been completed.
func Finalize() error {
	const call = "MPI_Finalize"
	p, err := current(call)
	if err != nil {
		return err
	}
	if n := p.region.G.ReqMax - len(p.free); n > 0 {
		var which []string
		for i := range p.reqs {
			if r := &p.reqs[i]; r.active && len(which) < 5 {
				which = append(which, fmt.Sprintf("%s (%s)", r.call, r.kind))
			}
		}
		return p.errf(ErrRequest, call, "%d requests still pending, e.g. %s; wait for them before MPI_Finalize", n, strings.Join(which, ", "))
	}
	p.mmds.finish()
	p.blk.SetState(shm.StateFinalized)
	p.finalized = true
	return nil
}

func current(call string) (*process, error) {
	if self == nil {
		return nil, (*process)(nil).errf(ErrNotInitialized, call, "MPI_Init has not been called")
	}
	if self.finalized {
		return nil, self.errf(ErrOther, call, "called after MPI_Finalize")
	}
	return self, nil
}

// Wtime is the wall-clock time in seconds since Init.
func Wtime() float64 {
	if self == nil {
		return 0
	}
	return time.Since(self.start).Seconds()
}

// Wtick is the resolution of Wtime.
func Wtick() float64 { return 1e-9 }

// Abort ends the whole job: bcsrun terminates every rank and exits with code.
func Abort(c *Comm, code int) {
	r := -1
	if self != nil {
		r = int(self.rank)
	}
	fmt.Fprintf(os.Stderr, "bcsmpi: rank %d called MPI_Abort with code %d\n", r, code)
	if self != nil {
		self.mmds.dump()
	}
	if code == 0 {
		code = 1
	}
	os.Exit(code)
}

// Status describes a completed receive or probe.
type Status struct {
	Source int
	Tag    int
	bytes  uint64
	elem   int
}

// Count is the number of elements received (of the receive buffer's type).
func (s Status) Count() int {
	if s.elem == 0 {
		return int(s.bytes)
	}
	return int(s.bytes) / s.elem
}

// Bytes is the number of bytes received.
func (s Status) Bytes() int { return int(s.bytes) }

// Request is a pending non-blocking operation.
type Request struct {
	comm   *Comm
	slot   uint32
	call   string
	kind   proto.Kind
	buf    any // keeps the buffer alive and pinned (Go's heap does not move)
	elem   int
	active bool
	done   bool
	status Status
	err    error
	comp   proto.Completion
	after  func() error // runs once when a collective completes (copy-outs, Split)
	chain  *chain       // a compound request: runtime steps joined by local work
}

// chain is a request made of several runtime requests one after another,
// with local work between them (a reduction with a user operation: gather,
// fold in the rank, broadcast). It advances whenever it is polled — inside
// Wait, Test and their variants, as MPI's progress rule allows.
type chain struct {
	inner *Request
	steps []func() (*Request, error) // each returns the next runtime request, or nil
}

// Status is the request's status once it has completed.
func (r *Request) Status() Status { return r.status }

func bytesOf[T Elem](buf []T) (unsafe.Pointer, uint64, int) {
	var z T
	es := int(unsafe.Sizeof(z))
	if len(buf) == 0 {
		return nil, 0, es
	}
	return unsafe.Pointer(unsafe.SliceData(buf)), uint64(len(buf) * es), es
}

func (p *process) checkComm(call string, c *Comm) error {
	if c == nil {
		return p.errf(ErrComm, call, "comm = nil, want a communicator such as mpiapi.World()")
	}
	if c.freed {
		return p.errf(ErrComm, call, "communicator %d was freed with MPI_Comm_free", c.id)
	}
	if c.size == 0 {
		return p.errf(ErrComm, call, "communicator is not initialised (MPI_COMM_NULL?); want one from World, Dup, Split or Create")
	}
	return nil
}

func (p *process) checkPeer(call, what string, c *Comm, peer int, wildcard bool) error {
	if peer == ProcNull || (wildcard && peer == AnySource) {
		return nil
	}
	if peer < 0 || peer >= c.size {
		extra := " or MPI_PROC_NULL"
		if wildcard {
			extra = ", MPI_ANY_SOURCE or MPI_PROC_NULL"
		}
		return p.errf(ErrRank, call, "%s = %d, want 0..%d%s", what, peer, c.size-1, extra)
	}
	return nil
}

func (p *process) checkTag(call string, tag int, wildcard bool) error {
	if (wildcard && tag == AnyTag) || (tag >= 0 && tag <= TagUB) {
		return nil
	}
	if wildcard {
		return p.errf(ErrTag, call, "tag = %d, want 0..%d or MPI_ANY_TAG", tag, TagUB)
	}
	return p.errf(ErrTag, call, "tag = %d, want 0..%d", tag, TagUB)
}

func (p *process) newRequest(call string, kind proto.Kind, buf any, elem int) (*Request, error) {
	n := len(p.free)
	if n == 0 {
		return nil, p.errf(ErrRequest, call, "all %d request slots are in use; wait for some requests first", p.region.G.ReqMax)
	}
	slot := p.free[n-1]
	p.free = p.free[:n-1]
	r := &p.reqs[slot]
	*r = Request{slot: slot, call: call, kind: kind, buf: buf, elem: elem, active: true}
	p.blk.ClearCompletion(slot)
	return r, nil
}

// post publishes d, waiting (a slice at a time) while the ring is full.
func (p *process) post(d proto.Descriptor, inline []byte) error {
	p.seq++
	d.Seq = p.seq
	d.Rank = p.rank
	for {
		d.PostSlice = p.region.Slice()
		if p.blk.Post(d, inline) {
			return nil
		}
		atomic.AddUint64(p.blk.FullWaits(), 1)
		if p.region.Aborting() {
			p.abortExit()
		}
		unix.FutexWait(p.blk.Wake(), atomic.LoadUint32(p.blk.Wake()), p.slice)
	}
}

func (p *process) abortExit() {
	p.mmds.dump()
	fmt.Fprintf(os.Stderr, "bcsmpi: rank %d: the job is aborting\n", p.rank)
	os.Exit(1)
}

// start checks the arguments of a send or receive and posts its descriptor.
// Sends of at most inline_max bytes carry their payload in the ring slot and
// are buffered by the agent (they complete when exchanged).
func start[T Elem](p *process, call string, kind proto.Kind, c *Comm, buf []T, peer, tag int) (*Request, error) {
	recv := kind != proto.KindSend
	what := "dest"
	if recv {
		what = "source"
	}
	if err := p.checkComm(call, c); err != nil {
		return nil, err
	}
	if err := p.checkPeer(call, what, c, peer, recv); err != nil {
		return nil, err
	}
	if err := p.checkTag(call, tag, recv); err != nil {
		return nil, err
	}
	addr, n, es := bytesOf(buf)
	if peer == ProcNull {
		return &Request{done: true, call: call, status: Status{Source: ProcNull, Tag: AnyTag, elem: es}}, nil
	}
	r, err := p.newRequest(call, kind, buf, es)
	if err != nil {
		return nil, err
	}
	r.comm = c
	d := proto.Descriptor{Kind: kind, Comm: c.id, Peer: c.worldRank(peer), Tag: int32(tag), Req: r.slot, Addr: uint64(uintptr(addr)), Len: n}
	var inl []byte
	if !recv && n <= uint64(p.region.G.InlineMax) {
		d.Inline = true
		inl = unsafe.Slice((*byte)(addr), n)
	}
	return r, p.post(d, inl)
}

func isend[T Elem](p *process, call string, c *Comm, buf []T, dest, tag int) (*Request, error) {
	return start(p, call, proto.KindSend, c, buf, dest, tag)
}

func irecv[T Elem](p *process, call string, c *Comm, buf []T, source, tag int) (*Request, error) {
	return start(p, call, proto.KindRecv, c, buf, source, tag)
}

func nbytes[T Elem](buf []T) int64 {
	var z T
	return int64(len(buf)) * int64(unsafe.Sizeof(z))
}

// Isend starts a send of buf to dest.
func Isend[T Elem](c *Comm, buf []T, dest, tag int) (*Request, error) {
	p, err := current("MPI_Isend")
	if err != nil {
		return nil, err
	}
	t0 := p.mmds.begin(false)
	r, err := isend(p, "MPI_Isend", c, buf, dest, tag)
	p.mmds.end(mds.Isend, t0, nbytes(buf), false)
	return r, err
}

// Irecv starts a receive into buf from source (or AnySource).
func Irecv[T Elem](c *Comm, buf []T, source, tag int) (*Request, error) {
	p, err := current("MPI_Irecv")
	if err != nil {
		return nil, err
	}
	t0 := p.mmds.begin(false)
	r, err := irecv(p, "MPI_Irecv", c, buf, source, tag)
	p.mmds.end(mds.Irecv, t0, nbytes(buf), false)
	return r, err
}

// Send sends buf to dest. It returns when the data has moved, or, for sends of
// at most inline_max bytes (buffered by the agent), when it has been exchanged.
func Send[T Elem](c *Comm, buf []T, dest, tag int) error {
	p, err := current("MPI_Send")
	if err != nil {
		return err
	}
	t0 := p.mmds.begin(true)
	r, err := isend(p, "MPI_Send", c, buf, dest, tag)
	if err == nil {
		_, err = p.wait(r, "MPI_Send")
	}
	p.mmds.end(mds.Send, t0, nbytes(buf), true)
	return err
}

// Recv receives into buf from source (or AnySource) with tag (or AnyTag).
func Recv[T Elem](c *Comm, buf []T, source, tag int) (Status, error) {
	p, err := current("MPI_Recv")
	if err != nil {
		return Status{}, err
	}
	t0 := p.mmds.begin(true)
	var st Status
	r, err := irecv(p, "MPI_Recv", c, buf, source, tag)
	if err == nil {
		st, err = p.wait(r, "MPI_Recv")
	}
	p.mmds.end(mds.Recv, t0, int64(st.bytes), true)
	return st, err
}

// Sendrecv sends sendbuf to dest and receives into recvbuf from source.
func Sendrecv[T, U Elem](c *Comm, sendbuf []T, dest, sendtag int, recvbuf []U, source, recvtag int) (Status, error) {
	p, err := current("MPI_Sendrecv")
	if err != nil {
		return Status{}, err
	}
	t0 := p.mmds.begin(true)
	defer func() { p.mmds.end(mds.Sendrecv, t0, nbytes(sendbuf)+nbytes(recvbuf), true) }()
	s, err := isend(p, "MPI_Sendrecv", c, sendbuf, dest, sendtag)
	if err != nil {
		return Status{}, err
	}
	r, err := irecv(p, "MPI_Sendrecv", c, recvbuf, source, recvtag)
	if err != nil {
		p.wait(s, "MPI_Sendrecv")
		return Status{}, err
	}
	err = p.waitall([]*Request{s, r}, "MPI_Sendrecv")
	return r.status, err
}

// finish consumes a completed request's record.
func (p *process) finish(r *Request) {
	comp := p.blk.Completion(r.slot)
	src := int(comp.Source)
	if r.comm != nil && r.kind != proto.KindSend && r.kind != proto.KindColl {
		src = r.comm.commRank(comp.Source)
	}
	r.status = Status{Source: src, Tag: int(comp.Tag), bytes: comp.Count, elem: r.elem}
	r.comp = comp
	switch comp.Err {
	case proto.ErrNone, proto.ErrNoComm:
	case proto.ErrTruncate:
		r.err = p.errf(ErrTruncate, r.call, "message from rank %d tag %d is longer than the receive buffer (%d bytes received)", src, comp.Tag, comp.Count)
	default:
		r.err = p.errf(ErrOther, r.call, "operation failed: %v", comp.Err)
	}
	if r.kind == proto.KindIprobe && !comp.Found {
		r.status = Status{Source: AnySource, Tag: AnyTag}
	}
	r.done, r.active, r.buf = true, false, nil
	p.free = append(p.free, r.slot)
	if r.after != nil && r.err == nil {
		r.err = r.after()
		r.after = nil
	}
}

func (p *process) poll(r *Request) bool {
	if r.done {
		return true
	}
	if r.chain != nil {
		return p.pollChain(r)
	}
	if !r.active {
		return false
	}
	if p.blk.Done(r.slot) {
		p.finish(r)
		return true
	}
	return false
}

func (p *process) pollChain(r *Request) bool {
	ch := r.chain
	for {
		if ch.inner != nil {
			if !p.poll(ch.inner) {
				return false
			}
			if ch.inner.err != nil {
				r.err = ch.inner.err
				break
			}
		}
		if len(ch.steps) == 0 {
			break
		}
		step := ch.steps[0]
		ch.steps = ch.steps[1:]
		in, err := step()
		if err != nil {
			r.err = err
			break
		}
		ch.inner = in
	}
	r.chain, r.done, r.active, r.buf = nil, true, false, nil
	return true
}

// block waits until ready() is true: spins for the spin window, then sleeps on
// the rank's futex word, which the agent bumps when it publishes completions.
func (p *process) block(call string, ready func() bool) {
	if ready() {
		return
	}
	p.blk.SetBlocked(proto.CallCode(call))
	defer p.blk.SetBlocked(0)
	deadline := time.Now().Add(p.spin)
	for time.Now().Before(deadline) {
		if ready() {
			return
		}
	}
	wake, sleeping := p.blk.Wake(), p.blk.Sleeping()
	for {
		w := atomic.LoadUint32(wake)
		if ready() {
			return
		}
		if p.region.Aborting() {
			p.abortExit()
		}
		p.mmds.checkSignal()
		p.blk.SetSeen(w) // every completion published up to w has been looked at, and the call still waits
		atomic.StoreUint32(sleeping, 1)
		unix.FutexWait(wake, w, 100*time.Millisecond)
		atomic.StoreUint32(sleeping, 0)
	}
}

func checkReq(call string, r *Request) error {
	if r == nil {
		return self.errf(ErrRequest, call, "request is nil (MPI_REQUEST_NULL is not allowed here)")
	}
	if !r.active && !r.done {
		return self.errf(ErrRequest, call, "request was already completed and freed")
	}
	return nil
}

func (p *process) wait(r *Request, call string) (Status, error) {
	if err := checkReq(call, r); err != nil {
		return Status{}, err
	}
	p.block(call, func() bool { return p.poll(r) })
	return r.status, r.err
}

func (p *process) waitall(rs []*Request, call string) error {
	p.block(call, func() bool {
		all := true
		for _, r := range rs {
			all = p.poll(r) && all
		}
		return all
	})
	for _, r := range rs {
		if r.err != nil {
			return r.err
		}
	}
	return nil
}

// Wait blocks until r completes and returns its status.
func Wait(r *Request) (Status, error) {
	p, err := current("MPI_Wait")
	if err != nil {
		return Status{}, err
	}
	if err := checkReq("MPI_Wait", r); err != nil {
		return Status{}, err
	}
	t0 := p.mmds.begin(true)
	st, err := p.wait(r, "MPI_Wait")
	p.mmds.end(mds.Wait, t0, int64(st.bytes), true)
	return st, err
}

// Waitall blocks until every request completes; it returns the first error.
func Waitall(rs ...*Request) error {
	p, err := current("MPI_Waitall")
	if err != nil {
		return err
	}
	for _, r := range rs {
		if err := checkReq("MPI_Waitall", r); err != nil {
			return err
		}
	}
	t0 := p.mmds.begin(true)
	err = p.waitall(rs, "MPI_Waitall")
	p.mmds.end(mds.Waitall, t0, 0, true)
	return err
}

// Waitany blocks until one of rs completes and returns its index.
func Waitany(rs ...*Request) (int, Status, error) {
	p, err := current("MPI_Waitany")
	if err != nil {
		return -1, Status{}, err
	}
	live := false
	for _, r := range rs {
		if r != nil && (r.active || r.done) {
			live = true
		}
	}
	if !live {
		return -1, Status{}, nil // MPI_UNDEFINED
	}
	t0 := p.mmds.begin(true)
	idx := -1
	p.block("MPI_Waitany", func() bool {
		for i, r := range rs {
			if r != nil && (r.active || r.done) && p.poll(r) {
				idx = i
				return true
			}
		}
		return false
	})
	r := rs[idx]
	r.done = false // consumed: the request is now inactive
	p.mmds.end(mds.Waitany, t0, int64(r.status.bytes), true)
	return idx, r.status, r.err
}

// Test reports whether r has completed, without blocking.
func Test(r *Request) (bool, Status, error) {
	p, err := current("MPI_Test")
	if err != nil {
		return false, Status{}, err
	}
	if err := checkReq("MPI_Test", r); err != nil {
		return false, Status{}, err
	}
	t0 := p.mmds.begin(false)
	done := p.poll(r)
	p.mmds.end(mds.Test, t0, 0, false)
	if !done {
		return false, Status{}, nil
	}
	return true, r.status, r.err
}

// Testall reports whether every request has completed, without blocking.
func Testall(rs ...*Request) (bool, error) {
	p, err := current("MPI_Testall")
	if err != nil {
		return false, err
	}
	for _, r := range rs {
		if err := checkReq("MPI_Testall", r); err != nil {
			return false, err
		}
	}
	t0 := p.mmds.begin(false)
	all := true
	for _, r := range rs {
		all = p.poll(r) && all
	}
	p.mmds.end(mds.Testall, t0, 0, false)
	if !all {
		return false, nil
	}
	for _, r := range rs {
		if r.err != nil {
			return true, r.err
		}
	}
	return true, nil
}

func probe(p *process, call string, kind proto.Kind, c *Comm, source, tag int) (*Request, error) {
	if err := p.checkComm(call, c); err != nil {
		return nil, err
	}
	if err := p.checkPeer(call, "source", c, source, true); err != nil {
		return nil, err
	}
	if err := p.checkTag(call, tag, true); err != nil {
		return nil, err
	}
	r, err := p.newRequest(call, kind, nil, 1)
	if err != nil {
		return nil, err
	}
	r.comm = c
	return r, p.post(proto.Descriptor{Kind: kind, Comm: c.id, Peer: c.worldRank(source), Tag: int32(tag), Req: r.slot}, nil)
}

// Probe blocks until a message from source with tag is pending and returns
// its envelope (Count in bytes) without receiving it.
func Probe(c *Comm, source, tag int) (Status, error) {
	p, err := current("MPI_Probe")
	if err != nil {
		return Status{}, err
	}
	if source == ProcNull {
		return Status{Source: ProcNull, Tag: AnyTag}, nil
	}
	t0 := p.mmds.begin(true)
	var st Status
	r, err := probe(p, "MPI_Probe", proto.KindProbe, c, source, tag)
	if err == nil {
		st, err = p.wait(r, "MPI_Probe")
	}
	p.mmds.end(mds.Probe, t0, 0, true)
	return st, err
}

// Iprobe asks whether a message from source with tag is pending; the
// scheduler answers in the next slice.
func Iprobe(c *Comm, source, tag int) (bool, Status, error) {
	p, err := current("MPI_Iprobe")
	if err != nil {
		return false, Status{}, err
	}
	if source == ProcNull {
		return true, Status{Source: ProcNull, Tag: AnyTag}, nil
	}
	t0 := p.mmds.begin(true)
	var st Status
	r, err := probe(p, "MPI_Iprobe", proto.KindIprobe, c, source, tag)
	if err == nil {
		st, err = p.wait(r, "MPI_Iprobe")
	}
	p.mmds.end(mds.Iprobe, t0, 0, true)
	return err == nil && st.Source != AnySource, st, err
}
