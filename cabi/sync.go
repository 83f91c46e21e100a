package main

/*
#include "shim.h"
*/
import "C"

import (
	"unsafe"

	"github.com/bcsmpi/bcsmpi/internal/reduce"
	"github.com/bcsmpi/bcsmpi/mpiapi"
)

// Synchronous sends (MPI_Ssend, MPI_Issend, MPI_Ssend_init), MPI_Cancel and
// matched probes (MPI_Mprobe, MPI_Improbe, MPI_Mrecv, MPI_Imrecv).

// matched marks the synchronous send of a local message complete: a
// receive (or a matched probe) took it.
func (m localMsg) matched() {
	if m.sync != nil {
		m.sync.done = true
	}
}

// localSsend delivers a synchronous send to a posted receive (it is then
// complete) or queues it, incomplete until a receive takes it.
func localSsend(a p2p) *localReq {
	if a.peer == mpiapi.ProcNull {
		return procNullReq(a.ci)
	}
	s := &localReq{ci: a.ci, rtag: a.tag}
	m := localMsg{ci: a.ci, tag: a.tag, data: append([]byte(nil), a.buf...), sync: s}
	for i, r := range localPosted {
		if r.accepts(a.ci, a.tag, 0) {
			localPosted = append(localPosted[:i], localPosted[i+1:]...)
			r.deliver("MPI_Ssend", m)
			s.done = true
			return s
		}
	}
	localQueue = append(localQueue, m)
	return s
}

// localWithdraw removes an incomplete local request: a posted receive, or
// the queued message of a synchronous send.
func localWithdraw(r *localReq) {
	for i, p := range localPosted {
		if p == r {
			localPosted = append(localPosted[:i], localPosted[i+1:]...)
		}
	}
	for i, m := range localQueue {
		if m.sync == r {
			localQueue = append(localQueue[:i], localQueue[i+1:]...)
			break
		}
	}
}

//export bcs_ssend
func bcs_ssend(buf unsafe.Pointer, count C.MPI_Count, dt C.uintptr_t, dest, t C.int, commH C.uintptr_t, out *C.uintptr_t, mode C.int) C.int {
	call := pick(mode, "MPI_Ssend", "MPI_Ssend_c")
	if out != nil {
		call = pick(mode, "MPI_Issend", "MPI_Issend_c")
	}
	if rc := enter(call); rc != 0 {
		return rc
	}
	a, rc := p2pArgs(call, commH, buf, count, dt, dest, t, false)
	if rc != 0 {
		return rc
	}
	if a.c == nil {
		r := localSsend(a)
		if out != nil {
			*out = C.uintptr_t(newReq(nil, r, a.ci))
			return 0
		}
		if !r.done && !mpiapi.WaitThreads(call, func() bool { return r.done }) {
			localWithdraw(r)
			return localDeadlock(call, r)
		}
		return 0
	}
	sign(&a, nil) // sig.go
	if out == nil {
		return failErr(a.ci, mpiapi.SsendBytes(a.c, a.buf, reduce.Uint8, a.peer, a.tag))
	}
	q, err := mpiapi.IssendBytes(a.c, a.buf, reduce.Uint8, a.peer, a.tag)
	if err != nil {
		return failErr(a.ci, err)
	}
	*out = C.uintptr_t(newReq(q, nil, a.ci))
	return 0
}

//export bcs_ssend_init
func bcs_ssend_init(buf unsafe.Pointer, count C.MPI_Count, dt C.uintptr_t, dest, t C.int, commH C.uintptr_t, out *C.uintptr_t, mode C.int) C.int {
	return initSend(pick(mode, "MPI_Ssend_init", "MPI_Ssend_init_c"), buf, count, dt, dest, t, commH, out, false, sendSync)
}

//export bcs_cancel
func bcs_cancel(h *C.uintptr_t) C.int {
	const call = "MPI_Cancel"
	if rc := enter(call); rc != 0 {
		return rc
	}
	if h == nil {
		return fail(0, call, errArg, "request = NULL")
	}
	i, rc := req(call, uintptr(*h))
	if rc != 0 {
		return rc
	}
	if i < 0 {
		return fail(0, call, errRequest, "request = MPI_REQUEST_NULL, want an active request")
	}
	e := &reqs[i]
	switch {
	case e.r != nil:
		return failErr(e.comm, e.r.Cancel())
	case e.loc != nil && e.loc.g != nil:
		if class, msg := e.loc.gcancel(); class != 0 { // grequest.go
			return fail(e.loc.ci, call, class, "%s", msg)
		}
	case e.loc != nil && !e.loc.done:
		localWithdraw(e.loc)
		e.loc.done, e.loc.cancelled = true, true
		e.loc.source, e.loc.rtag, e.loc.bytes = mpiapi.AnySource, mpiapi.AnyTag, 0
	}
	return 0 // complete, or an inactive persistent request: nothing to cancel
}

// Message handles: kindMsg|generation|index; MPI_MESSAGE_NULL and
// MPI_MESSAGE_NO_PROC are the standard's.
const (
	hMsgNull   = 0x128
	hMsgNoProc = 0x129
)

type msgEntry struct {
	m    *mpiapi.Message // a message of the runtime
	loc  *localMsg       // a message of a local communicator, taken off its queue
	ci   int
	gen  uint32
	live bool
}

var (
	msgs     []msgEntry
	freeMsgs []int
)

func newMsg(m *mpiapi.Message, loc *localMsg, ci int) uintptr {
	var i int
	if n := len(freeMsgs); n > 0 {
		i, freeMsgs = freeMsgs[n-1], freeMsgs[:n-1]
	} else {
		i = len(msgs)
		msgs = append(msgs, msgEntry{})
	}
	e := &msgs[i]
	e.m, e.loc, e.ci, e.live = m, loc, ci, true
	return userHandle(kindMsg, i, e.gen)
}

// bcs_mprobe is MPI_Mprobe (flag NULL: block) and MPI_Improbe.
//
//export bcs_mprobe
func bcs_mprobe(source, t C.int, commH C.uintptr_t, flag *C.int, out *C.uintptr_t, st *C.MPI_Status) C.int {
	call := "MPI_Mprobe"
	if flag != nil {
		call = "MPI_Improbe"
		*flag = 0
	}
	if rc := enter(call); rc != 0 {
		return rc
	}
	if out == nil {
		return fail(0, call, errArg, "message = NULL")
	}
	a, rc := probeArgs(call, source, t, commH)
	if rc != 0 {
		return rc
	}
	found := func() {
		if flag != nil {
			*flag = 1
		}
	}
	if a.peer == mpiapi.ProcNull {
		*out = hMsgNoProc
		procNullStatus(st)
		found()
		return 0
	}
	if a.c == nil {
		i := localFind(a.ci, a.tag)
		if i < 0 && flag == nil {
			mpiapi.WaitThreads(call, func() bool { i = localFind(a.ci, a.tag); return i >= 0 })
		}
		if i < 0 {
			if flag == nil {
				return localDeadlock(call, &localReq{ci: a.ci, recv: true, tag: a.tag})
			}
			return 0
		}
		m := localQueue[i]
		localQueue = append(localQueue[:i], localQueue[i+1:]...)
		m.matched()
		putRaw(st, 0, m.tag, uint64(len(m.data)), keepError)
		*out = C.uintptr_t(newMsg(nil, &m, a.ci))
		found()
		return 0
	}
	var m *mpiapi.Message
	var s mpiapi.Status
	var err error
	ok := true
	if flag == nil {
		m, s, err = mpiapi.Mprobe(a.c, a.peer, a.tag)
	} else {
		m, ok, s, err = mpiapi.Improbe(a.c, a.peer, a.tag)
	}
	if err != nil || !ok {
		return failErr(a.ci, err)
	}
	putStatus(st, interStatus(a.ci, s), keepError)
	*out = C.uintptr_t(newMsg(m, nil, a.ci))
	found()
	return 0
}

// bcs_mrecv is MPI_Mrecv (out NULL) and MPI_Imrecv.
//
//export bcs_mrecv
func bcs_mrecv(buf unsafe.Pointer, count C.MPI_Count, dt C.uintptr_t, mh *C.uintptr_t, st *C.MPI_Status, out *C.uintptr_t, mode C.int) C.int {
	call := pick(mode, "MPI_Mrecv", "MPI_Mrecv_c")
	if out != nil {
		call = pick(mode, "MPI_Imrecv", "MPI_Imrecv_c")
	}
	if rc := enter(call); rc != 0 {
		return rc
	}
	if mh == nil {
		return fail(0, call, errArg, "message = NULL")
	}
	h := uintptr(*mh)
	if h == hMsgNoProc {
		*mh = hMsgNull
		if out != nil {
			*out = C.uintptr_t(newReq(nil, procNullReq(0), 0))
			return 0
		}
		procNullStatus(st)
		return 0
	}
	kind, i, gen := splitHandle(h)
	if h == hMsgNull {
		return fail(0, call, errRequest, "message = MPI_MESSAGE_NULL, want one returned by MPI_Mprobe or MPI_Improbe")
	}
	if kind != kindMsg || i >= len(msgs) {
		return fail(0, call, errRequest, "message = %s is not a message", describe(h))
	}
	e := &msgs[i]
	if !e.live || e.gen != gen {
		return fail(0, call, errRequest, "message = %s was already received (a matched message is received once)", describe(h))
	}
	typ, rc := datatype(e.ci, call, "datatype", uintptr(dt))
	if rc != 0 {
		return rc
	}
	a := p2p{ci: e.ci}
	if rc := a.buffer64(call, "buf", buf, int64(count), typ, true); rc != 0 {
		return rc
	}
	b := a.buf // a pack buffer for a non-contiguous datatype (types.go)
	m, loc, ci := e.m, e.loc, e.ci
	e.m, e.loc, e.live = nil, nil, false
	e.gen = (e.gen + 1) & genMask
	freeMsgs = append(freeMsgs, i)
	*mh = hMsgNull
	if loc != nil {
		r := &localReq{ci: ci, recv: true, buf: b}
		r.deliver(call, *loc)
		if out != nil {
			*out = C.uintptr_t(newReq(nil, r, ci))
			setUnpack(*out, a.unpacker())
			return 0
		}
		a.drain(int(r.bytes))
		a.release()
		rc := r.result(call)
		r.status(st, single(rc))
		return rc
	}
	if out != nil {
		q, err := mpiapi.ImrecvBytes(m, b, reduce.Uint8)
		if err != nil {
			return failErr(ci, err)
		}
		*out = C.uintptr_t(newReq(q, nil, ci))
		setUnpack(*out, a.unpacker())
		return 0
	}
	s, err := mpiapi.MrecvBytes(m, b, reduce.Uint8)
	a.drain(s.Bytes())
	a.release()
	rc = failErr(ci, err)
	putStatus(st, interStatus(ci, s), single(rc))
	return rc
}
