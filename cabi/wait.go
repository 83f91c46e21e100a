package main

/*
#include "shim.h"
*/
import "C"

import (
	"slices"
	"unsafe"

	"github.com/bcsmpi/bcsmpi/internal/reduce"
	"github.com/bcsmpi/bcsmpi/mpiapi"
)

// Completion: a request handle is freed, and the caller's handle set to
// MPI_REQUEST_NULL, as soon as a Wait or Test call observes its completion,
// so this package never touches an mpiapi request after that.

// scratch is reused by the array calls so they allocate nothing; not under
// MPI_THREAD_MULTIPLE, where another thread's call may run while one waits
// (threads.go).
var scratch []*mpiapi.Request

func reqScratch() []*mpiapi.Request {
	if C.bcs_mt != 0 {
		return nil
	}
	return scratch[:0]
}

func keepScratch(rs []*mpiapi.Request) {
	if C.bcs_mt == 0 {
		scratch = rs
	}
}

// requestArray checks every handle of an array call and returns the slots
// (-1 for MPI_REQUEST_NULL).
func requestArray(call string, n C.int, hs *C.uintptr_t) ([]C.uintptr_t, []int, C.int) {
	if n < 0 {
		return nil, nil, fail(0, call, errCount, "count = %d, want >= 0", int(n))
	}
	if n > 0 && hs == nil {
		return nil, nil, fail(0, call, errArg, "array_of_requests = NULL with count = %d", int(n))
	}
	handles := unsafe.Slice(hs, int(n))
	var slots []int
	if C.bcs_mt == 0 {
		slots = slotScratch[:0]
	}
	epoch++
	for k, h := range handles {
		i, rc := req(call, uintptr(h))
		if rc != 0 {
			return nil, nil, rc
		}
		if i >= 0 && reqs[i].inactive() {
			i = -1
		}
		if i >= 0 {
			if reqs[i].mark == epoch {
				return nil, nil, fail(reqs[i].comm, call, errRequest, "array_of_requests[%d] = %s appears twice in the array", k, describe(uintptr(h)))
			}
			reqs[i].mark = epoch
		}
		slots = append(slots, i)
	}
	if C.bcs_mt == 0 {
		slotScratch = slots
	}
	return handles, slots, 0
}

var (
	slotScratch []int
	epoch       uint64 // marks the slots seen by one array call
)

func statusAt(sts *C.MPI_Status, k int) *C.MPI_Status {
	if sts == nil {
		return nil
	}
	return (*C.MPI_Status)(unsafe.Add(unsafe.Pointer(sts), uintptr(k)*unsafe.Sizeof(*sts)))
}

// complete writes slot i's status and frees it, nulling the caller's
// handle; a persistent request only becomes inactive.
func complete(i int, h *C.uintptr_t, st *C.MPI_Status, class int) {
	e := &reqs[i]
	e.sendDone(true) // isendrecv.go
	if f := e.unpack; f != nil {
		e.unpack = nil
		if e.r != nil {
			f(e.r.Status().Bytes())
		} else {
			f(int(e.loc.bytes))
		}
	}
	if e.r != nil {
		putStatus(st, interStatus(e.comm, e.r.Status()), class)
	} else {
		e.loc.status(st, class)
	}
	if e.persist != nil {
		e.r, e.loc = nil, nil
		return
	}
	if e.loc != nil {
		e.loc.gfree() // grequest.go: free_fn already ran in the completion (gcomplete)
	}
	freeReq(i)
	*h = hReqNull
}

// localDone reports whether every local request among slots has completed;
// if one has not, it can never (see local.go), and pending is its slot.
func localDone(slots []int) (ok bool, pending int) {
	for _, i := range slots {
		if i >= 0 && reqs[i].loc != nil && !reqs[i].loc.done {
			return false, i
		}
	}
	return true, -1
}

//export bcs_wait
func bcs_wait(h *C.uintptr_t, st *C.MPI_Status) C.int {
	_, rc := one("MPI_Wait", h, st, true)
	return rc
}

// one is MPI_Wait (block) or MPI_Test (!block) on the request behind *h:
// done says whether it completed (on return from a successful Wait, always).
// A null or inactive request completes at once with an empty status.
func one(call string, h *C.uintptr_t, st *C.MPI_Status, block bool) (done bool, rc C.int) {
	if rc := enter(call); rc != 0 {
		return false, rc
	}
	i, rc := req(call, uintptr(*h))
	if rc != 0 {
		return false, rc
	}
	if i < 0 || reqs[i].inactive() {
		emptyStatus(st)
		return true, 0
	}
	return step(call, i, h, st, block)
}

// step waits for (block) or tests the live request in slot i; done reports
// completion (then the slot is freed and the handle nulled).
func step(call string, i int, h *C.uintptr_t, st *C.MPI_Status, block bool) (done bool, rc C.int) {
	if block && reqs[i].loc != nil && !reqs[i].loc.done {
		// Under MPI_THREAD_MULTIPLE another thread may complete it: a message
		// to itself, MPI_Grequest_complete, the last MPI_Pready (threads.go).
		mpiapi.WaitThreads(call, func() bool { l := reqs[i].loc; return l == nil || l.done })
	}
	e := reqs[i]
	if e.loc != nil {
		if !e.loc.done {
			if block {
				return false, localDeadlock(call, e.loc)
			}
			return false, 0
		}
		rc = e.loc.result(call)
		complete(i, h, st, single(rc))
		return true, rc
	}
	if !reqs[i].sendDone(block) { // isendrecv.go
		return false, 0
	}
	var err error
	if block {
		_, err = mpiapi.Wait(e.r)
	} else if done, _, err = mpiapi.Test(e.r); !done {
		return false, failErr(e.comm, err)
	}
	if err == nil {
		err = reqs[i].alsoErr
	}
	rc = failErr(e.comm, err)
	complete(i, h, st, single(rc))
	return true, rc
}

//export bcs_waitall
func bcs_waitall(n C.int, hs *C.uintptr_t, sts *C.MPI_Status) C.int {
	const call = "MPI_Waitall"
	if rc := enter(call); rc != 0 {
		return rc
	}
	handles, slots, rc := requestArray(call, n, hs)
	if rc != 0 {
		return rc
	}
	if ok, i := localDone(slots); !ok {
		if !mpiapi.WaitThreads(call, func() bool { ok, _ := localDone(slots); return ok }) {
			return localDeadlock(call, reqs[i].loc)
		}
	}
	rs, ci := reqScratch(), 0
	for _, i := range slots {
		if i >= 0 && reqs[i].r != nil {
			if len(rs) == 0 {
				ci = reqs[i].comm
			}
			rs = append(rs, reqs[i].r)
			if a := reqs[i].also; a != nil {
				rs = append(rs, a)
			}
		}
	}
	keepScratch(rs)
	var err error
	if len(rs) > 0 {
		err = mpiapi.Waitall(rs...)
	}
	clear(rs)
	sendsDone(slots)                                     // isendrecv.go
	return finishAll(call, ci, handles, slots, sts, err) // errstatus.go
}

//export bcs_waitany
func bcs_waitany(n C.int, hs *C.uintptr_t, index *C.int, st *C.MPI_Status) C.int {
	const call = "MPI_Waitany"
	if rc := enter(call); rc != 0 {
		return rc
	}
	handles, slots, rc := requestArray(call, n, hs)
	if rc != 0 {
		return rc
	}
	waitLocal(call, slots)
	rs, live, pendingLocal := reqScratch(), false, -1
	for k, i := range slots {
		var r *mpiapi.Request
		if i >= 0 {
			if loc := reqs[i].loc; loc != nil {
				if loc.done {
					*index = C.int(k)
					rc := loc.result(call)
					complete(i, &handles[k], st, single(rc))
					return rc
				}
				pendingLocal = i
			}
			if r = reqs[i].r; r != nil {
				live = true
			}
		}
		rs = append(rs, r)
	}
	keepScratch(rs)
	if !live && pendingLocal >= 0 {
		clear(rs)
		return localDeadlock(call, reqs[pendingLocal].loc)
	}
	k := -1
	var err error
	if live {
		k, _, err = mpiapi.Waitany(rs...)
	}
	clear(rs)
	if k < 0 {
		*index = C.MPI_UNDEFINED
		emptyStatus(st)
		return failErr(0, err)
	}
	*index = C.int(k)
	ci := reqs[slots[k]].comm
	rc = failErr(ci, err)
	complete(slots[k], &handles[k], st, single(rc))
	return rc
}

//export bcs_test
func bcs_test(h *C.uintptr_t, flag *C.int, st *C.MPI_Status) C.int {
	done, rc := one("MPI_Test", h, st, false)
	*flag = 0
	if done {
		*flag = 1
	}
	return rc
}

//export bcs_testall
func bcs_testall(n C.int, hs *C.uintptr_t, flag *C.int, sts *C.MPI_Status) C.int {
	const call = "MPI_Testall"
	if rc := enter(call); rc != 0 {
		return rc
	}
	handles, slots, rc := requestArray(call, n, hs)
	if rc != 0 {
		return rc
	}
	rs, ci := reqScratch(), 0
	for _, i := range slots {
		if i >= 0 && reqs[i].r != nil {
			if len(rs) == 0 {
				ci = reqs[i].comm
			}
			rs = append(rs, reqs[i].r)
			if a := reqs[i].also; a != nil {
				rs = append(rs, a)
			}
		}
	}
	keepScratch(rs)
	all, err := true, error(nil)
	if len(rs) > 0 {
		all, err = mpiapi.Testall(rs...)
	}
	clear(rs)
	if all {
		sendsDone(slots) // isendrecv.go
	}
	if ok, _ := localDone(slots); !all || !ok {
		*flag = 0
		return failErr(ci, err)
	}
	*flag = 1
	return finishAll(call, ci, handles, slots, sts, err) // errstatus.go
}

// detached holds the runtime requests freed with MPI_Request_free before
// they completed; MPI_Finalize waits for them.
var detached []*mpiapi.Request

//export bcs_request_free
func bcs_request_free(h *C.uintptr_t) C.int {
	const call = "MPI_Request_free"
	if rc := enter(call); rc != 0 {
		return rc
	}
	i, rc := req(call, uintptr(*h))
	if rc != 0 {
		return rc
	}
	if i < 0 {
		return fail(0, call, errRequest, "request = MPI_REQUEST_NULL, want an active request")
	}
	for _, r := range [...]*mpiapi.Request{reqs[i].r, reqs[i].also} {
		if r != nil {
			r.Detach() // for the buffer checks: the program no longer waits for it
			detached = append(detached, r)
		}
	}
	if g := reqs[i].loc; g != nil && g.g != nil {
		if !g.done { // freed at MPI_Grequest_complete (grequest.go)
			g.g.freed = true
			*h = hReqNull
			return 0
		}
		class, msg := g.gfree() // free_fn's error is this call's
		freeReq(i)
		*h = hReqNull
		if class != 0 {
			return fail(g.ci, call, class, "%s", msg)
		}
		return 0
	}
	freeReq(i) // an active local request needs nothing: its send is buffered, its receive stays posted
	*h = hReqNull
	return 0
}

// Testany, Waitsome and Testsome are composed from mpiapi's Test and
// Waitany (so the MMDS records those calls) until mpiapi has them.

//export bcs_testany
func bcs_testany(n C.int, hs *C.uintptr_t, index, flag *C.int, st *C.MPI_Status) C.int {
	const call = "MPI_Testany"
	if rc := enter(call); rc != 0 {
		return rc
	}
	handles, slots, rc := requestArray(call, n, hs)
	if rc != 0 {
		return rc
	}
	*index, *flag = C.MPI_UNDEFINED, 1
	live := false
	for k, i := range slots {
		if i < 0 {
			continue
		}
		live = true
		done, rc := step(call, i, &handles[k], st, false)
		if done || rc != 0 {
			if done {
				*index = C.int(k)
			}
			return rc
		}
	}
	if live {
		*flag = 0
	} else {
		emptyStatus(st)
	}
	return 0
}

// some is Waitsome (block) and Testsome: every request found complete is
// returned; failures give MPI_ERR_IN_STATUS (errstatus.go).
func some(call string, n C.int, hs *C.uintptr_t, outcount *C.int, indices *C.int, sts *C.MPI_Status, block bool) C.int {
	if rc := enter(call); rc != 0 {
		return rc
	}
	handles, slots, rc := requestArray(call, n, hs)
	if rc != 0 {
		return rc
	}
	if block {
		waitLocal(call, slots)
	}
	live, localReady, pendingLocal := false, false, -1
	rs := reqScratch()
	for _, i := range slots {
		var r *mpiapi.Request
		if i >= 0 {
			live = true
			if loc := reqs[i].loc; loc != nil {
				localReady = localReady || loc.done
				if !loc.done {
					pendingLocal = i
				}
			}
			r = reqs[i].r
		}
		rs = append(rs, r)
	}
	keepScratch(rs)
	if !live {
		clear(rs)
		*outcount = C.MPI_UNDEFINED
		return 0
	}
	skip := -1
	if block && !localReady { // wait for one runtime request
		if !anyActiveReq(rs) {
			clear(rs)
			return localDeadlock(call, reqs[pendingLocal].loc)
		}
		k, _, err := mpiapi.Waitany(rs...)
		if k < 0 {
			clear(rs)
			return failErr(0, err)
		}
		skip = k
	}
	clear(rs)
	count, failed, fci, first := someDone(call, handles, slots, unsafe.Slice(indices, int(n)), sts, skip)
	*outcount = C.int(count)
	if failed > 0 {
		return inStatus(fci, call, failed, count, first)
	}
	return 0
}

func anyActiveReq(rs []*mpiapi.Request) bool {
	for _, r := range rs {
		if r != nil {
			return true
		}
	}
	return false
}

//export bcs_waitsome
func bcs_waitsome(n C.int, hs *C.uintptr_t, outcount *C.int, indices *C.int, sts *C.MPI_Status) C.int {
	return some("MPI_Waitsome", n, hs, outcount, indices, sts, true)
}

//export bcs_testsome
func bcs_testsome(n C.int, hs *C.uintptr_t, outcount *C.int, indices *C.int, sts *C.MPI_Status) C.int {
	return some("MPI_Testsome", n, hs, outcount, indices, sts, false)
}

// persistent is the call a persistent request starts each time: a
// point-to-point call (a) of a send mode, or a persistent collective (coll,
// persist.go).
type persistent struct {
	call string
	recv bool
	send sendMode
	a    p2p
	coll func(out *C.uintptr_t) C.int // starts the collective, its request in *out
	view *mpiapi.Comm                 // the collective's matching space (persist.go); nil: a local communicator

	// Partitioned communication (partition.go): the partitions of a
	// Psend_init or Precv_init request, and a send's ready ones.
	parts  int
	ready  []bool
	nready int
}

// sendMode is the mode of a persistent send.
type sendMode int

const (
	sendStandard sendMode = iota
	sendSync
	sendBuffered
	sendPartitioned
)

func initRequest(call string, buf unsafe.Pointer, count C.MPI_Count, dt C.uintptr_t, r, t C.int, commH C.uintptr_t, out *C.uintptr_t, recv bool) C.int {
	return initSend(call, buf, count, dt, r, t, commH, out, recv, sendStandard)
}

func initSend(call string, buf unsafe.Pointer, count C.MPI_Count, dt C.uintptr_t, r, t C.int, commH C.uintptr_t, out *C.uintptr_t, recv bool, how sendMode) C.int {
	if rc := enter(call); rc != 0 {
		return rc
	}
	a, rc := p2pArgs(call, commH, buf, count, dt, r, t, recv)
	if rc != 0 {
		return rc
	}
	if out == nil {
		return fail(a.ci, call, errArg, "request = NULL")
	}
	a.keep = true // its pack buffer serves every start
	i := newReq(nil, nil, a.ci)
	_, slot, _ := splitHandle(i)
	reqs[slot].persist = &persistent{call: call, recv: recv, send: how, a: a}
	*out = C.uintptr_t(i)
	return 0
}

//export bcs_send_init
func bcs_send_init(buf unsafe.Pointer, count C.MPI_Count, dt C.uintptr_t, dest, t C.int, commH C.uintptr_t, out *C.uintptr_t, mode C.int) C.int {
	return initRequest(pick(mode, "MPI_Send_init", "MPI_Send_init_c"), buf, count, dt, dest, t, commH, out, false)
}

//export bcs_recv_init
func bcs_recv_init(buf unsafe.Pointer, count C.MPI_Count, dt C.uintptr_t, source, t C.int, commH C.uintptr_t, out *C.uintptr_t, mode C.int) C.int {
	return initRequest(pick(mode, "MPI_Recv_init", "MPI_Recv_init_c"), buf, count, dt, source, t, commH, out, true)
}

// bcs_bsend_init is MPI_Bsend_init: each start is a buffered send
// (bsend.go) from the attached buffer.
//
//export bcs_bsend_init
func bcs_bsend_init(buf unsafe.Pointer, count C.MPI_Count, dt C.uintptr_t, dest, t C.int, commH C.uintptr_t, out *C.uintptr_t, mode C.int) C.int {
	return initSend(pick(mode, "MPI_Bsend_init", "MPI_Bsend_init_c"), buf, count, dt, dest, t, commH, out, false, sendBuffered)
}

// startOne starts the persistent request h (in slot i).
func startOne(call string, i int, h uintptr) C.int {
	e := &reqs[i]
	p := e.persist
	if p == nil {
		return fail(e.comm, call, errRequest, "request = %s is not persistent (it was not made by an MPI_X_init call)", describe(h))
	}
	if !e.inactive() {
		return fail(e.comm, call, errRequest, "request = %s (made by %s) is already active; complete it with a Wait or Test call before starting it again", describe(h), p.call)
	}
	if p.coll != nil {
		return startColl(i, p) // persist.go
	}
	if p.send == sendPartitioned {
		return startPartitioned(e, p) // partition.go
	}
	p.a.fill()
	e.unpack = p.a.unpacker()
	if p.send == sendBuffered {
		return startBsend(p.call, e, p.a) // bsend.go
	}
	if p.a.c == nil {
		if p.recv {
			e.loc = localRecv(p.call, p.a)
		} else if p.send == sendSync {
			e.loc = localSsend(p.a)
		} else {
			e.loc = localSend(p.a)
		}
		return 0
	}
	var err error
	if p.recv {
		sign(nil, &p.a) // sig.go
	} else {
		sign(&p.a, nil)
	}
	if p.recv {
		e.r, err = mpiapi.IrecvBytes(p.a.c, p.a.buf, reduce.Uint8, p.a.peer, p.a.tag)
	} else if p.send == sendSync {
		e.r, err = mpiapi.IssendBytes(p.a.c, p.a.buf, reduce.Uint8, p.a.peer, p.a.tag)
	} else {
		e.r, err = mpiapi.IsendBytes(p.a.c, p.a.buf, reduce.Uint8, p.a.peer, p.a.tag)
	}
	return failErr(e.comm, err)
}

//export bcs_startall
func bcs_startall(n C.int, hs *C.uintptr_t) C.int {
	call := "MPI_Startall"
	if n == -1 { // MPI_Start
		call, n = "MPI_Start", 1
	}
	if rc := enter(call); rc != 0 {
		return rc
	}
	if n < 0 || (n > 0 && hs == nil) {
		return fail(0, call, errArg, "count = %d with array_of_requests = NULL", int(n))
	}
	for k, h := range unsafe.Slice(hs, int(n)) {
		i, rc := req(call, uintptr(h))
		if rc != 0 {
			return rc
		}
		if i < 0 {
			return fail(0, call, errRequest, "array_of_requests[%d] = MPI_REQUEST_NULL, want a persistent request", k)
		}
		if rc := startOne(call, i, uintptr(h)); rc != 0 {
			return rc
		}
	}
	return 0
}

// waitLocal is the first wait of Waitany and Waitsome under
// MPI_THREAD_MULTIPLE when slots hold a local request that is not done
// (another thread may complete it: MPI_Grequest_complete, a message to
// itself, the last MPI_Pready): until one of the requests has completed,
// local or not (threads.go). Without threads, or without such a request,
// it returns at once.
func waitLocal(call string, slots []int) {
	if C.bcs_mt == 0 || !slices.ContainsFunc(slots, func(i int) bool { return i >= 0 && reqs[i].loc != nil && !reqs[i].loc.done }) {
		return
	}
	mpiapi.WaitThreads(call, func() bool {
		for _, i := range slots {
			if i < 0 {
				continue
			}
			if l := reqs[i].loc; l != nil {
				if l.done {
					return true
				}
				continue
			}
			if r := reqs[i].r; r == nil {
				return true
			} else if done, _, _ := mpiapi.Poll(r, false); done {
				return true
			}
		}
		return false
	})
}
