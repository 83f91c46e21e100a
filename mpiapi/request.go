package mpiapi

import (
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/bcsmpi/bcsmpi/internal/proto"
	"github.com/bcsmpi/bcsmpi/internal/shm"
	"github.com/bcsmpi/bcsmpi/internal/unix"
	"github.com/bcsmpi/bcsmpi/mds"
)

// Requests, as MPI 4.1 §3.7 defines them.
//
// A *Request is a handle. Every non-blocking call makes a new one, with a
// generation: the process's n-th request has generation n, and the handle is
// live while the process's table of live generations maps n to it. A request
// holds one of the rank's completion slots (the shared-memory record the agent
// fills) while the runtime works on it; the slot goes back to the free list
// as soon as its completion is read, and the next request may take it — but
// never the handle, so an old handle cannot see a new request.
//
// The call that returns a request complete — Wait, a Test that says true, the
// Waitany/Testany/Waitsome/Testsome/Waitall/Testall families for each request
// they report, Request.Free — retires its generation: from then on the handle
// is MPI_REQUEST_NULL's stale copy, and passing it to any request call is an
// MPI_ERR_REQUEST error through the error handler. Status stays readable. The
// array calls also set the retired entries of the caller's slice to nil
// (MPI_REQUEST_NULL), so calling them again over the same slice is correct;
// nil entries are allowed and ignored, and an array with no non-nil entry has
// no active request (index/outcount Undefined, an empty status).

// Request is a pending non-blocking operation (MPI_Request). Not safe for
// concurrent use.
type Request struct {
	gen       uint64 // the handle's generation; 0: not a request of this process
	comm      *Comm
	slot      uint32 // completion slot, while active and not a chain
	call      string
	kind      proto.Kind
	peer, tag int    // point-to-point: as the caller gave them (for reports)
	buf       any    // keeps the buffer alive and pinned (Go's heap does not move)
	mem       []byte // a point-to-point receive's buffer as bytes: where pull orders may copy
	elem      int
	active    bool   // the runtime has not completed it yet
	done      bool   // completed: status and err are final
	retiredBy string // the call that returned it complete or freed it; "" while live
	status    Status
	err       error
	comp      proto.Completion
	after     func() error // runs once when a collective completes (copy-outs, Split), or a partitioned receive (its size check)
	made      *Comm        // the communicator an Idup made, once complete (comm.go)
	counts    bool         // a communicator creation holding one of the process's lives (comm.go)
	chain     *chain       // a compound request: runtime steps joined by local work
	watch     []*Request   // a request done when these are (Watch, tool.go); they stay their owner's
	// cancelPosted: Cancel posted a KindCancel for it (cancel.go).
	cancelPosted bool
	chk          *reqCheck // the buffer checks' record (check.go); nil when off
	logSeq       uint64    // a logged wildcard receive or probe: its number (replay.go); 0: none
	sig          uint8     // a send's or receive's type signature (sig.go)
	// eager: a blocking send that returned at its post (eager.go); it is
	// retired and waits in process.eager for its completion record.
	eager bool
}

// chain is a request made of several runtime requests one after another,
// with local work between them (a reduction with a user operation: gather,
// fold in the rank, broadcast). It advances whenever it is polled — inside
// Wait, Test and their variants, as MPI's progress rule allows.
type chain struct {
	inner *Request
	steps []func() (*Request, error) // each returns the next runtime request, or nil
}

// Status is the request's status once it has completed (it stays readable
// after the call that completed the request).
func (r *Request) Status() Status { return r.status }

// emptyStatus is MPI's empty status: what a null request completes with.
var emptyStatus = Status{Source: AnySource, Tag: AnyTag}

// track gives r the next generation and makes it live.
func (p *process) track(r *Request) *Request {
	p.gen++
	r.gen = p.gen
	p.live[r.gen] = r
	return r
}

// retire ends r's generation: call returned it complete (or freed it).
func (p *process) retire(r *Request, call string) {
	delete(p.live, r.gen)
	r.retiredBy = call
}

// checkLive is the handle check of every request call: r must be a live
// request of this process (nil is handled by the caller).
func (p *process) checkLive(call string, r *Request) error {
	if p.live[r.gen] == r {
		return nil
	}
	if r.retiredBy != "" {
		return p.errf(ErrRequest, call, "request #%d (%s) is stale: %s completed and released it, after which it is MPI_REQUEST_NULL; pass nil or a request that is still active", r.gen, r.call, r.retiredBy)
	}
	return p.errf(ErrRequest, call, "the request was not started by this process (a zero Request?); want one returned by a non-blocking call such as Isend")
}

func (p *process) checkArray(call string, rs []*Request) error {
	for _, r := range rs {
		if r != nil {
			if err := p.checkLive(call, r); err != nil {
				return err
			}
		}
	}
	return nil
}

func anyActive(rs []*Request) bool {
	for _, r := range rs {
		if r != nil {
			return true
		}
	}
	return false
}

func (p *process) newRequest(call string, kind proto.Kind, buf any, elem int) (*Request, error) {
	if len(p.freed) > 0 || len(p.freeing) > 0 || len(p.eager) > 0 {
		p.reap()
	}
	if len(p.free) == 0 && len(p.eager) > 0 {
		p.awaitEager(call) // eager.go: eager sends hold the slots until their exchange
	}
	n := len(p.free)
	if n == 0 {
		return nil, p.errf(ErrRequest, call, "all %d request slots are in use; wait for some requests first", p.region.G.ReqMax)
	}
	slot := p.free[n-1]
	p.free = p.free[:n-1]
	r := &Request{slot: slot, call: call, kind: kind, buf: buf, elem: elem, active: true}
	p.owner[slot] = r
	p.blk.ClearCompletion(slot)
	return p.track(r), nil
}

// finish consumes a completed request's record and frees its slot.
func (p *process) finish(r *Request) {
	if p.owner[r.slot] != r {
		panic("mpiapi: a request read the completion record of a slot it does not hold: the slot table and the request handles are out of step")
	}
	p.owner[r.slot] = nil
	r.mem = nil
	comp := p.blk.Completion(r.slot)
	src := int(comp.Source)
	if r.comm != nil && r.kind != proto.KindSend && r.kind != proto.KindColl {
		src = r.comm.commRank(comp.Source)
	}
	r.status = Status{Source: src, Tag: int(comp.Tag), bytes: comp.Count, elem: r.elem}
	r.comp = comp
	switch comp.Err {
	case proto.ErrNone, proto.ErrNoComm:
	case proto.ErrCancelled:
		r.status = Status{Source: AnySource, Tag: AnyTag, elem: r.elem, cancelled: true}
	case proto.ErrType:
		r.err = p.typeErr(r, comp) // sig.go
	case proto.ErrTruncate:
		r.err = p.errf(ErrTruncate, r.call, "message from rank %d tag %d is longer than the receive buffer (%d bytes received)", src, comp.Tag, comp.Count)
	case proto.ErrTooManyComms: // comm.go
		r.err = p.errf(ErrOther, r.call, "too many communicators: world rank %d belongs to %d live communicators (the world included), the limit is %d (proto.CommsMax); free some with MPI_Comm_free", comp.Source, comp.Count, proto.CommsMax)
	default:
		r.err = p.errf(ErrOther, r.call, "operation failed: %v", comp.Err)
	}
	if comp.Err != proto.ErrNone {
		p.unlive(r) // a refused creation's life is back (comm.go)
	} else if !r.eager { // an eager send counted at its post (eager.go)
		traffic.note(r.kind, comp.Count) // tool.go
	}
	if r.kind == proto.KindIprobe && !comp.Found {
		r.status = Status{Source: AnySource, Tag: AnyTag}
	}
	if r.chk != nil {
		if err := p.verify(r); err != nil && r.retiredBy != "" {
			p.freedFinding(r, err)
		} else if r.err == nil {
			r.err = err
		}
	}
	p.noteMatch(r)
	r.done, r.active, r.buf = true, false, nil
	p.free = append(p.free, r.slot)
	if r.after != nil && r.err == nil {
		r.err = r.after()
		r.after = nil
	}
}

// poll reports whether r has completed, consuming its completion record if
// the agent has written it (and advancing a chain).
func (p *process) poll(r *Request) bool {
	if r.done {
		return true
	}
	if r.chain != nil {
		return p.pollChain(r)
	}
	if r.watch != nil {
		return p.pollWatch(r) // tool.go
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
		if in := ch.inner; in != nil {
			if !p.poll(in) {
				return false
			}
			ch.inner = nil
			p.retire(in, r.call)
			if in.err != nil {
				r.err = in.err
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

// reap polls the requests released with Request.Free, so that their slots
// come back once the runtime completes them.
func (p *process) reap() {
	p.freed = p.pending(p.freed)
	p.freeing = p.pending(p.freeing)
	p.reapEager() // eager.go
}

// pending polls rs and returns those not yet complete, in rs's array.
func (p *process) pending(rs []*Request) []*Request {
	keep := rs[:0]
	for _, r := range rs {
		if !p.poll(r) {
			keep = append(keep, r)
		}
	}
	clear(rs[len(keep):])
	return keep
}

// block waits until ready() is true: spins for the spin window, then sleeps on
// the rank's futex word, which the agent bumps when it publishes completions.
func (p *process) block(call string, ready func() bool) {
	p.blockAs(call, proto.CallCode(call), ready)
}

// blockAs is block with the status code the rank shows while blocked
// (proto.CallNames; awaitMatch's proto.CallSendMatch).
func (p *process) blockAs(call string, code uint8, ready func() bool) {
	p.progress() // progress.go: a layer's one-sided targets are served in every blocking call
	if ready() {
		return
	}
	if mt.on { // threads.go: the call lock is released while the call sleeps
		p.blockThreaded(call, ready)
		return
	}
	if p.blocking { // a wait inside a blocked call's condition (awaitEager): the call's state stays as it is
		p.sleepUntil(ready)
		return
	}
	p.blk.SetBlocked(code)
	p.blocking = true
	defer func() { p.blk.SetBlocked(0); p.blocking = false }()
	p.blk.OfferPull() // while blocked, copy the data of our receives ourselves when the agent asks
	defer func() {
		for !p.blk.WithdrawPull() {
			p.servePull(false)
		}
	}()
	deadline := time.Now().Add(p.spin)
	for time.Now().Before(deadline) {
		if p.blk.PullPosted() {
			p.servePull(true)
		}
		p.progress()
		if ready() {
			return
		}
	}
	p.sleepUntil(ready)
}

// sleepUntil is block's sleeping loop (threads off, the rank blocked and
// offering pull orders): it serves pull orders and the progress function,
// and sets the seen word, each time it looks at ready.
func (p *process) sleepUntil(ready func() bool) {
	wake, sleeping := p.blk.Wake(), p.blk.Sleeping()
	for {
		w := atomic.LoadUint32(wake)
		if p.blk.PullPosted() {
			p.servePull(true)
		}
		p.progress()
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

// servePull carries out the posted pull order (shm: pull orders): each
// entry is copied with one process_vm_readv from the sender straight into a
// pending receive buffer of this rank. The order comes from shared memory,
// which every rank of the node can write, so an entry is copied only into
// the buffer of the pending receive it names; the first entry refused or
// failed ends the order, and the agent copies the rest itself.
func (p *process) servePull(stay bool) {
	if !p.blk.TakePull() {
		return // revoked: the agent copies
	}
	seq, n := p.blk.PullOrder()
	copied := 0
	for ; copied < n; copied++ {
		e := p.blk.PullEntry(copied)
		dst := p.pullTarget(e)
		if dst == nil || e.PID <= 0 {
			break
		}
		if p.chk != nil && !p.chk.deferSums() { // check.go: piece by piece
			if !p.pullCopy(copied, p.owner[e.Req], dst, e) {
				break
			}
		} else if p.chk != nil { // flow alone: summed as it is copied, the sums stored after the order is done
			s, ok := flowCopy(int(e.PID), dst, e.SrcAddr)
			if !ok {
				break
			}
			p.chk.copied[copied] = s
		} else if unix.ReadFrom(int(e.PID), dst, e.SrcAddr) != nil {
			break
		}
	}
	p.blk.FinishPull(seq, copied, stay)
	unix.FutexWake(p.blk.PullDone(), 1)
	if p.chk != nil && p.chk.deferSums() {
		p.pullSums(seq, copied) // check.go: after the order is done
	}
}

// pullTarget is the part of a pending receive buffer that pull entry e
// names, or nil if e names no pending point-to-point receive or overruns it.
func (p *process) pullTarget(e shm.Pull) []byte {
	if int(e.Req) >= len(p.owner) {
		return nil
	}
	r := p.owner[e.Req]
	if r == nil || !r.active || len(r.mem) == 0 {
		return nil
	}
	base, n := uint64(uintptr(unsafe.Pointer(unsafe.SliceData(r.mem)))), uint64(len(r.mem))
	if e.DstAddr < base || e.Len > n || e.DstAddr-base > n-e.Len {
		return nil
	}
	off := e.DstAddr - base
	return r.mem[off : off+e.Len]
}

// wait blocks until the live request r completes and retires it.
func (p *process) wait(r *Request, call string) (Status, error) {
	p.block(call, func() bool { return p.poll(r) })
	p.retire(r, call)
	return r.status, r.err
}

// waitall blocks until every non-nil request of rs completes and retires
// them; it returns the first error.
func (p *process) waitall(rs []*Request, call string) error {
	p.block(call, func() bool {
		all := true
		for _, r := range rs {
			if r != nil {
				all = p.poll(r) && all
			}
		}
		return all
	})
	var first error
	for _, r := range rs {
		if r != nil {
			p.retire(r, call)
			if first == nil {
				first = r.err
			}
		}
	}
	return first
}

// firstDone polls rs in order and returns the index of the first completed
// request, or -1.
func (p *process) firstDone(rs []*Request) int {
	for i, r := range rs {
		if r != nil && p.poll(r) {
			return i
		}
	}
	return -1
}

// someDone polls every request of rs and reports whether any has completed.
func (p *process) someDone(rs []*Request) bool {
	some := false
	for _, r := range rs {
		if r != nil && p.poll(r) {
			some = true
		}
	}
	return some
}

// collect retires the completed requests of rs (as polled last), sets their
// entries to nil and returns their indices, statuses and the first error.
func (p *process) collect(call string, rs []*Request) (int, []int, []Status, error) {
	var idx []int
	var sts []Status
	var first error
	for i, r := range rs {
		if r == nil || !r.done {
			continue
		}
		p.retire(r, call)
		rs[i] = nil
		idx, sts = append(idx, i), append(sts, r.status)
		if first == nil {
			first = r.err
		}
	}
	return len(idx), idx, sts, first
}

// Wait blocks until r completes and returns its status (MPI_Wait). A nil r
// (MPI_REQUEST_NULL) returns an empty status at once. r is then retired.
func Wait(r *Request) (Status, error) {
	const call = "MPI_Wait"
	p, err := current(call)
	if err != nil {
		return Status{}, err
	}
	if r == nil {
		return emptyStatus, nil
	}
	if err := p.checkLive(call, r); err != nil {
		return Status{}, err
	}
	t0 := p.mmds.begin(true)
	st, err := p.wait(r, call)
	p.mmds.end(mds.Wait, t0, int64(st.bytes), true)
	return st, err
}

// Test reports whether r has completed, without blocking (MPI_Test); if so
// it returns r's status and retires r. A nil r reports true and an empty
// status.
func Test(r *Request) (bool, Status, error) {
	const call = "MPI_Test"
	p, err := current(call)
	if err != nil {
		return false, Status{}, err
	}
	if r == nil {
		return true, emptyStatus, nil
	}
	if err := p.checkLive(call, r); err != nil {
		return false, Status{}, err
	}
	t0 := p.mmds.begin(false)
	p.settle(call, func() bool { return p.allDone([]*Request{r}) })
	done := p.poll(r)
	if p.rr.on() {
		done = p.testLogged(call, r, nil, done)
	}
	p.mmds.end(mds.Test, t0, 0, false)
	if !done {
		return false, Status{}, nil
	}
	p.retire(r, call)
	return true, r.status, r.err
}

// Waitall blocks until every request completes (MPI_Waitall), retires them
// and sets every entry of rs to nil; it returns the first error. nil entries
// are ignored.
func Waitall(rs ...*Request) error {
	const call = "MPI_Waitall"
	p, err := current(call)
	if err != nil {
		return err
	}
	if err := p.checkArray(call, rs); err != nil {
		return err
	}
	t0 := p.mmds.begin(true)
	err = p.waitall(rs, call)
	clear(rs)
	p.mmds.end(mds.Waitall, t0, 0, true)
	return err
}

// Testall reports whether every request has completed, without blocking
// (MPI_Testall). If so it retires them, sets every entry of rs to nil and
// returns the first error; if not, it changes nothing. nil entries count as
// complete.
func Testall(rs ...*Request) (bool, error) {
	const call = "MPI_Testall"
	p, err := current(call)
	if err != nil {
		return false, err
	}
	if err := p.checkArray(call, rs); err != nil {
		return false, err
	}
	t0 := p.mmds.begin(false)
	p.settle(call, func() bool { return p.allDone(rs) })
	all := true
	for _, r := range rs {
		if r != nil {
			all = p.poll(r) && all
		}
	}
	if p.rr.on() {
		all = p.testLogged(call, nil, rs, all)
	}
	p.mmds.end(mds.Testall, t0, 0, false)
	if !all {
		return false, nil
	}
	var first error
	for i, r := range rs {
		if r != nil {
			p.retire(r, call)
			rs[i] = nil
			if first == nil {
				first = r.err
			}
		}
	}
	return true, first
}

// Waitany blocks until one request of rs completes (MPI_Waitany) and returns
// its index and status; it retires that request and sets rs[index] to nil.
// When several have completed, the lowest index is chosen. With no active
// request (every entry nil) it returns Undefined and an empty status at once.
func Waitany(rs ...*Request) (int, Status, error) {
	const call = "MPI_Waitany"
	p, err := current(call)
	if err != nil {
		return Undefined, Status{}, err
	}
	if err := p.checkArray(call, rs); err != nil {
		return Undefined, Status{}, err
	}
	if !anyActive(rs) {
		return Undefined, emptyStatus, nil
	}
	t0 := p.mmds.begin(true)
	if p.rr.log != nil {
		return p.waitanyReplay(call, rs, t0)
	}
	idx := -1
	p.block(call, func() bool {
		idx = p.firstDone(rs)
		return idx >= 0
	})
	if p.region.G.Deterministic {
		p.settle("MPI_Testany", func() bool { return p.allDone(rs) })
		idx = p.firstDone(rs)
	}
	r := rs[idx]
	p.retire(r, call)
	rs[idx] = nil
	if p.rr.rec != nil {
		p.anyLogged(call, rs, idx)
	}
	p.mmds.end(mds.Waitany, t0, int64(r.status.bytes), true)
	return idx, r.status, r.err
}

// Testany is Waitany without blocking (MPI_Testany): it returns the index of
// a completed request, true and its status (retiring it and setting its entry
// to nil); Undefined and false if none has completed; Undefined, true and an
// empty status if rs has no active request.
func Testany(rs ...*Request) (int, bool, Status, error) {
	const call = "MPI_Testany"
	p, err := current(call)
	if err != nil {
		return Undefined, false, Status{}, err
	}
	if err := p.checkArray(call, rs); err != nil {
		return Undefined, false, Status{}, err
	}
	if !anyActive(rs) {
		return Undefined, true, emptyStatus, nil
	}
	t0 := p.mmds.begin(false)
	p.settle(call, func() bool { return p.allDone(rs) })
	idx := p.firstDone(rs)
	if p.rr.on() {
		idx = p.anyLogged(call, rs, idx)
	}
	p.mmds.end(mds.Test, t0, 0, false)
	if idx < 0 {
		return Undefined, false, Status{}, nil
	}
	r := rs[idx]
	p.retire(r, call)
	rs[idx] = nil
	return idx, true, r.status, r.err
}

// Waitsome blocks until at least one request of rs completes (MPI_Waitsome)
// and returns how many did, their indices (ascending) and statuses, and the
// first of their errors; it retires them and sets their entries to nil. With
// no active request it returns outcount Undefined at once.
func Waitsome(rs ...*Request) (outcount int, indices []int, statuses []Status, err error) {
	const call = "MPI_Waitsome"
	p, err := current(call)
	if err != nil {
		return Undefined, nil, nil, err
	}
	if err := p.checkArray(call, rs); err != nil {
		return Undefined, nil, nil, err
	}
	if !anyActive(rs) {
		return Undefined, nil, nil, nil
	}
	t0 := p.mmds.begin(true)
	if p.rr.log != nil {
		outcount, indices, statuses, err = p.someReplay(call, rs)
		p.mmds.end(mds.Waitany, t0, 0, true)
		return outcount, indices, statuses, err
	}
	p.block(call, func() bool { return p.someDone(rs) })
	p.settle("MPI_Testsome", func() bool { return p.allDone(rs) })
	outcount, indices, statuses, err = p.collect(call, rs)
	p.noteSome(call, rs, indices)
	p.mmds.end(mds.Waitany, t0, 0, true)
	return outcount, indices, statuses, err
}

// Testsome is Waitsome without blocking (MPI_Testsome): outcount is 0 when
// no request has completed, Undefined when rs has no active request.
func Testsome(rs ...*Request) (outcount int, indices []int, statuses []Status, err error) {
	const call = "MPI_Testsome"
	p, err := current(call)
	if err != nil {
		return Undefined, nil, nil, err
	}
	if err := p.checkArray(call, rs); err != nil {
		return Undefined, nil, nil, err
	}
	if !anyActive(rs) {
		return Undefined, nil, nil, nil
	}
	if p.rr.log != nil {
		t0 := p.mmds.begin(false)
		outcount, indices, statuses, err = p.someReplay(call, rs)
		p.mmds.end(mds.Test, t0, 0, false)
		return outcount, indices, statuses, err
	}
	t0 := p.mmds.begin(false)
	p.settle(call, func() bool { return p.allDone(rs) })
	p.someDone(rs)
	outcount, indices, statuses, err = p.collect(call, rs)
	p.noteSome(call, rs, indices)
	p.mmds.end(mds.Test, t0, 0, false)
	return outcount, indices, statuses, err
}

// Free releases r (MPI_Request_free): the handle is retired at once, and the
// operation completes in the background (its buffer must not be touched
// until the program knows, by other means, that it has). Requests of
// non-blocking collectives cannot be freed, as in MPI.
func (r *Request) Free() error {
	const call = "MPI_Request_free"
	p, err := current(call)
	if err != nil {
		return err
	}
	if r == nil {
		return p.errf(ErrRequest, call, "request is nil (MPI_REQUEST_NULL), want an active request")
	}
	if err := p.checkLive(call, r); err != nil {
		return err
	}
	if r.kind == proto.KindColl {
		return p.errf(ErrRequest, call, "request #%d is a non-blocking collective (%s), which cannot be freed; wait for it or test it", r.gen, r.call)
	}
	p.retire(r, call)
	if !p.poll(r) {
		p.freed = append(p.freed, r)
	}
	return nil
}
