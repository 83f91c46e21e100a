package mpiapi

import (
	"fmt"
	"os"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/bcsmpi/bcsmpi/internal/jobenv"
	"github.com/bcsmpi/bcsmpi/internal/proto"
	"github.com/bcsmpi/bcsmpi/internal/reduce"
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
//
// Deprecated: the launcher↔rank contract is package internal/jobenv; these
// are its names, kept for code that spelled them through mpiapi.
const (
	EnvShmFD     = jobenv.VarShmFD
	EnvRank      = jobenv.VarRank
	EnvSize      = jobenv.VarSize
	EnvLocal     = jobenv.VarLocalRank
	EnvSlice     = jobenv.VarTimeslice
	EnvSpin      = jobenv.VarSpin
	EnvLeakCheck = jobenv.VarLeakCheck
	EnvReportFD  = jobenv.VarReportFD
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
	free       []uint32   // request slots not in use
	owner      []*Request // request slot → the request holding it (nil: free)
	gen        uint64     // generation of the last request handle made
	live       map[uint64]*Request
	freed      []*Request // released with Request.Free, still holding a slot
	freeing    []*Request // Comm.Free's collectives, completing in the background
	eager      []*Request // blocking sends that returned at their post, not yet exchanged (eager.go)
	// eagerPosted counts the eager sends posted (proto.Descriptor.Eager),
	// eagerMost the most of them unmatched at once (eager.go, EagerHeld).
	eagerPosted, eagerMost uint64
	eagerWarned            bool // the eager-matched word was past eagerPosted (eagerHeld said so once)
	blocking               bool // inside block with threads off (the rank reported blocked, offering pull orders)
	comms                  map[proto.CommID]*Comm
	groupSeq               map[groupCall]uint32 // MPI_Comm_create_group calls made (group.go)
	// lives counts the communicators this rank belongs to, the world
	// included, in its program's order (comm.go, proto.Descriptor.Lives);
	// 0 stands for 1 (the world) in a process made by a test.
	lives     uint32
	slice     time.Duration
	spin      time.Duration
	start     time.Time
	env       jobenv.Env // as the launcher started the rank
	finalized bool
	mmds      mmds
	chk       *checker     // the opt-in checks (check.go); nil: none
	rr        recordReplay // bcsrun --record / --replay (replay.go)
	pview     *Comm        // the persistent view of the start RunPersistent runs (coll.go); nil: none
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
	collSeq uint32       // collective calls made on this communicator (a persistent view's: its steps)
	pinits  uint32       // persistent collectives initialized on this communicator (Persistent)
	pk      uint32       // a persistent view's index among its communicator's pinits; 0: not a view
	freed   bool
	made    string       // the call that made it (for the leak report)
	counted bool         // it holds one of the process's lives (comm.go); false for the world and views
	dupNext proto.CommID // the id of its next local duplicate (comm.go, Dup)
	dupLeft uint32       // local duplicates still granted to it
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
	env, err := jobenv.Decode(os.Getenv)
	if err != nil {
		return (*process)(nil).errf(ErrOther, call, "%v", err)
	}
	fd, rank, size, local := env.ShmFD, env.Rank, env.Size, env.LocalRank
	if !unix.ShmFile(fd) {
		return (*process)(nil).errf(ErrOther, call, "%s=%d: rank %d's shared memory is not open in this process (descriptor %d is closed or another file); only the process bcsrun started for rank %d can attach as it (a rank's region is closed on exec, so programs a rank starts cannot join the job)", jobenv.VarShmFD, fd, rank, fd, rank)
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
		return (*process)(nil).errf(ErrOther, call, "%s=%d is not rank %d's shared memory: %v", jobenv.VarShmFD, fd, rank, err)
	}
	if local < 0 || local >= region.G.Ranks || rank < 0 || rank >= size {
		unix.Unmap(mem)
		return (*process)(nil).errf(ErrOther, call, "%s=%d %s=%d %s=%d do not fit a node of %d ranks", jobenv.VarRank, rank, jobenv.VarSize, size, jobenv.VarLocalRank, local, region.G.Ranks)
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
		owner: make([]*Request, region.G.ReqMax), live: make(map[uint64]*Request), comms: make(map[proto.CommID]*Comm), lives: 1, start: time.Now(), slice: env.Timeslice, spin: env.Spin, env: env}
	p.free = make([]uint32, 0, region.G.ReqMax)
	for i := region.G.ReqMax - 1; i >= 0; i-- {
		p.free = append(p.free, uint32(i))
	}
	if err := p.mmds.init(rank, env.MDS); err != nil {
		unix.Unmap(mem)
		return p.errf(ErrArg, call, "%v", err)
	}
	if err := p.initCheck(env.Check); err != nil {
		unix.Unmap(mem)
		return p.errf(ErrArg, call, "%s: %v", jobenv.VarCheck, err)
	}
	if err := p.initRecordReplay(env); err != nil {
		unix.Unmap(mem)
		return p.errf(ErrOther, call, "%v", err)
	}
	if env.ReportFD > 2 {
		unix.CloseOnExec(env.ReportFD) // the report pipe must close when the rank exits, not live on in its children
	}
	// Pull orders: sibling ranks (descendants of the launcher) copy from
	// this rank's send buffers. Where that is refused anyway, the agent
	// finds the order unserved and copies itself.
	unix.AllowReadsFrom(os.Getppid())
	blk.SetState(shm.StateInit)
	self = p
	world = Comm{id: 0, rank: rank, size: size}
	return nil
}

// Initialized reports whether Init has succeeded.
func Initialized() bool { return self != nil }

// Finalize detaches from the agent, once the rank's blocking sends that
// returned at their post (eager.go) have been exchanged. What the rank has not released — user
// operations, communicators other than the world, requests never completed
// or never waited for — is reported by bcsrun at the end of the job, in one
// report with the messages that were sent but never received: a warning by
// default, an error that fails the job under leak_check: error, nothing under
// leak_check: off (see leak.go).
func Finalize() error {
	const call = "MPI_Finalize"
	p, err := current(call)
	if err != nil {
		return err
	}
	// Comm.Free's collectives; the eager sends' exchange (eager.go); the flow check's last comparison
	p.block(call, func() bool { p.reap(); return len(p.freeing) == 0 && p.eagerDone() && p.pullsVerified() })
	p.reap()
	p.finishLog()
	p.reportLeaks()
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
	Source    int
	Tag       int
	bytes     uint64
	elem      int
	cancelled bool // MPI_Cancel withdrew the request (cancel.go)
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
	p.stuck() // replay: a call that waits for a recorded message (replay.go)
	p.mmds.dump()
	fmt.Fprintf(os.Stderr, "bcsmpi: rank %d: the job is aborting\n", p.rank)
	os.Exit(1)
}

// sendMode is how a send is posted.
type sendMode uint8

const (
	// sendStandard: a standard send (and every receive). Sends of at most
	// inline_max bytes carry their payload in the ring slot and are buffered
	// by the agent: they complete when exchanged.
	sendStandard sendMode = iota
	// sendSync: a synchronous send, never inline, so it completes only once
	// matched and moved (ssend.go).
	sendSync
	// sendBlocking: a blocking standard send (MPI_Send, MPI_Rsend). One that
	// goes inline is complete for its caller at its post (eager.go): the
	// request is released at once (Request.eager) and waited for later.
	sendBlocking
)

// startMode checks the arguments of a send or receive of buf, elements of
// type t, and posts its descriptor (see sendMode for how a send goes).
func startMode(p *process, call string, kind proto.Kind, c *Comm, buf []byte, t reduce.Type, peer, tag int, mode sendMode) (*Request, error) {
	return startPair(p, call, kind, c, buf, t, peer, tag, mode, 0)
}

// startPair is startMode for a send or receive of partitioned pair number
// pair (proto.Descriptor.Pair; 0: not partitioned, when a receive may name
// wildcards).
func startPair(p *process, call string, kind proto.Kind, c *Comm, buf []byte, t reduce.Type, peer, tag int, mode sendMode, pair uint32) (*Request, error) {
	recv := kind != proto.KindSend
	sig := signature(t, recv) // sig.go: first, so that a refused call uses it up too
	what := "dest"
	if recv {
		what = "source"
	}
	if err := p.checkComm(call, c); err != nil {
		return nil, err
	}
	if err := p.checkPeer(call, what, c, peer, recv && pair == 0); err != nil {
		return nil, err
	}
	if err := p.checkTag(call, tag, recv && pair == 0); err != nil {
		return nil, err
	}
	if err := p.checkBuf(call, "buf", buf, t); err != nil { // core.go
		return nil, err
	}
	var addr unsafe.Pointer
	n, es := uint64(len(buf)), t.Size()
	if n > 0 {
		addr = unsafe.Pointer(unsafe.SliceData(buf))
	}
	if peer == ProcNull {
		return p.track(&Request{done: true, call: call, kind: kind, peer: peer, tag: tag, comm: c, status: Status{Source: ProcNull, Tag: AnyTag, elem: es}}), nil
	}
	var bufs []buffer
	if p.chk != nil {
		bufs = []buffer{{b: unsafe.Slice((*byte)(addr), n), write: recv}}
		if err := p.checkPost(call, bufs); err != nil {
			return nil, err
		}
	}
	var logSeq uint64
	if recv {
		peer, tag, logSeq = p.wildcard(call, c, peer, tag) // replay: the recorded source and tag
	}
	inline := !recv && mode != sendSync && n <= uint64(p.region.G.InlineMax)
	eager := inline && mode == sendBlocking
	r, err := p.newRequest(call, kind, buf, es)
	if err != nil {
		return nil, err
	}
	r.comm, r.peer, r.tag, r.logSeq = c, peer, tag, logSeq
	if kind == proto.KindRecv && n > 0 {
		r.mem = unsafe.Slice((*byte)(addr), n)
	}
	switch {
	case p.chk != nil && eager: // its payload is copied at the post: nothing to compare later (eager.go)
		p.blk.SetCheck(r.slot, 0)
	case p.chk != nil:
		p.arm(r, bufs, recv, peerText(recv, peer, tag))
	}
	r.sig = sig
	d := proto.Descriptor{Kind: kind, Comm: c.id, Peer: c.worldRank(peer), Tag: int32(tag), Req: r.slot, Addr: uint64(uintptr(addr)), Len: n, DType: sig}
	d.SetPair(pair)
	var inl []byte
	if inline {
		d.Inline, d.Eager = true, eager
		inl = unsafe.Slice((*byte)(addr), n)
	}
	if err := p.post(d, inl); err != nil {
		return r, err
	}
	if eager {
		p.detachEager(r, call, n)
	}
	if recv {
		noteReceive(c, peer, tag, p.seq) // mprobe.go: a matched probe waiting in another thread
	}
	if r.chk != nil && r.chk.flowSend != nil {
		p.flowSums(r) // check.go: under flow alone, after the post
	}
	return r, nil
}

// Isend starts a send of buf to dest.
func Isend[T Elem](c *Comm, buf []T, dest, tag int) (*Request, error) {
	return IsendBytes(c, bytesView(buf), typeOf[T](), dest, tag)
}

// Irecv starts a receive into buf from source (or AnySource).
func Irecv[T Elem](c *Comm, buf []T, source, tag int) (*Request, error) {
	return IrecvBytes(c, bytesView(buf), typeOf[T](), source, tag)
}

// Send sends buf to dest. It returns when the data has moved, or, for sends of
// at most inline_max bytes, at once: their payload is copied with the
// descriptor and buffered by the agent (eager.go).
func Send[T Elem](c *Comm, buf []T, dest, tag int) error {
	return SendBytes(c, bytesView(buf), typeOf[T](), dest, tag)
}

// Recv receives into buf from source (or AnySource) with tag (or AnyTag).
func Recv[T Elem](c *Comm, buf []T, source, tag int) (Status, error) {
	return RecvBytes(c, bytesView(buf), typeOf[T](), source, tag)
}

// Sendrecv sends sendbuf to dest and receives into recvbuf from source.
func Sendrecv[T, U Elem](c *Comm, sendbuf []T, dest, sendtag int, recvbuf []U, source, recvtag int) (Status, error) {
	return SendrecvBytes(c, bytesView(sendbuf), typeOf[T](), dest, sendtag, bytesView(recvbuf), typeOf[U](), source, recvtag)
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
	var logSeq uint64
	if kind == proto.KindProbe {
		source, tag, logSeq = p.wildcard(call, c, source, tag) // replay: the recorded source and tag
	}
	r, err := p.newRequest(call, kind, nil, 1)
	if err != nil {
		return nil, err
	}
	r.comm, r.peer, r.tag, r.logSeq = c, source, tag, logSeq
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
	if p.rr.on() {
		found, st, err := p.iprobeLogged("MPI_Iprobe", c, source, tag)
		p.mmds.end(mds.Iprobe, t0, 0, true)
		return found, st, err
	}
	var st Status
	r, err := probe(p, "MPI_Iprobe", proto.KindIprobe, c, source, tag)
	if err == nil {
		st, err = p.wait(r, "MPI_Iprobe")
	}
	p.mmds.end(mds.Iprobe, t0, 0, true)
	return err == nil && st.Source != AnySource, st, err
}
