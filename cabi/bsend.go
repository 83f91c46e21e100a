package main

/*
#include "shim.h"
*/
import "C"

import (
	"math"
	"unsafe"

	"github.com/bcsmpi/bcsmpi/internal/reduce"
	"github.com/bcsmpi/bcsmpi/mpiapi"
)

// Buffered sends copy the message out of the caller's buffer and send the
// copy; the attached buffer bounds how many bytes may be pending, counting
// bsendHeader bytes per message besides its data. A
// send uses its communicator's buffer (MPI_Comm_attach_buffer) if it has
// one, else the process's (MPI_Buffer_attach). MPI_BUFFER_AUTOMATIC as the
// buffer means no bound. Pending sends are reclaimed, with mpiapi's Test
// (which the MMDS records), when a new one needs room, and waited for by
// MPI_Buffer_detach, MPI_Comm_detach_buffer, the flush calls
// (MPI_Buffer_flush, MPI_Comm_flush_buffer) and MPI_Finalize. A
// communicator made from a session's group uses the session's buffer
// (MPI_Session_attach_buffer, session.go) when it has none of its own. The
// non-blocking flushes (abimisc.go) return a request that completes when
// the sends pending at the call have.

// bbuf is an attached buffer.
type bbuf struct {
	p    unsafe.Pointer
	size int
	auto bool // MPI_BUFFER_AUTOMATIC: no bound
}

type bsendMsg struct {
	r     *mpiapi.Request
	bytes int
	owner *bbuf
}

const hBufferAutomatic = 2 // MPI_BUFFER_AUTOMATIC

// bsendHeader is what a pending buffered send counts against the attached
// buffer besides its data. MPI_BSEND_OVERHEAD (512 in the MPI-5 ABI) is
// the standard's upper bound for it, so a buffer sized with it always
// suffices; the copies live outside the buffer, and counting 96 bytes (the
// header MPICH keeps in the buffer, its own MPI_BSEND_OVERHEAD) lets
// programs sized for MPICH or Open MPI (128) run unchanged: MPICH's
// pt2pt/bsend2-5 attach 2000 bytes for ten 40-byte messages, which the full
// 512 per message refused.
const bsendHeader = 96

var (
	procBuf  *bbuf             // MPI_Buffer_attach's, nil when none
	commBufs = map[int]*bbuf{} // by communicator slot
	bsends   []bsendMsg
)

// attach checks and makes a buffer.
func attach(ci int, call string, have *bbuf, buf unsafe.Pointer, size int64) (*bbuf, C.int) {
	if have != nil {
		if have.auto {
			return nil, fail(ci, call, errBuffer, "MPI_BUFFER_AUTOMATIC is already attached; detach it first")
		}
		return nil, fail(ci, call, errBuffer, "a buffer of %d bytes is already attached; detach it first", have.size)
	}
	if uintptr(buf) == hBufferAutomatic {
		return &bbuf{p: buf, auto: true}, 0
	}
	if size < 0 || (buf == nil && size > 0) {
		return nil, fail(ci, call, errBuffer, "buffer = %p with size = %d", buf, size)
	}
	return &bbuf{p: buf, size: int(size)}, 0
}

//export bcs_buffer_attach
func bcs_buffer_attach(buf unsafe.Pointer, size C.MPI_Count, mode C.int) C.int {
	call := pick(mode, "MPI_Buffer_attach", "MPI_Buffer_attach_c")
	if rc := enter(call); rc != 0 {
		return rc
	}
	b, rc := attach(0, call, procBuf, buf, int64(size))
	if rc != 0 {
		return rc
	}
	procBuf = b
	return 0
}

// bsendWait waits for every pending buffered send of owner (nil: all).
func bsendWait(owner *bbuf) error {
	var rs []*mpiapi.Request
	live := bsends[:0]
	for _, m := range bsends {
		if owner == nil || m.owner == owner {
			rs = append(rs, m.r)
		} else {
			live = append(live, m)
		}
	}
	clear(bsends[len(live):])
	bsends = live
	if len(rs) == 0 {
		return nil
	}
	return mpiapi.Waitall(rs...)
}

// detach waits for b's pending sends and gives its address and size.
func detach(ci int, call string, b *bbuf, bufAddr *unsafe.Pointer, size *C.MPI_Count, mode C.int) C.int {
	if b == nil {
		return fail(ci, call, errBuffer, "no buffer is attached")
	}
	if mode&C.BCS_LARGE == 0 && b.size > math.MaxInt32 {
		return fail(ci, call, errCount, "the attached buffer has %d bytes, more than an int holds; detach it with the _c form", b.size)
	}
	if bufAddr == nil || size == nil {
		return fail(ci, call, errArg, "buffer_addr or size = NULL")
	}
	if err := bsendWait(b); err != nil {
		return failErr(ci, err)
	}
	*bufAddr, *size = b.p, C.MPI_Count(b.size)
	return 0
}

//export bcs_buffer_detach
func bcs_buffer_detach(bufAddr *unsafe.Pointer, size *C.MPI_Count, mode C.int) C.int {
	call := pick(mode, "MPI_Buffer_detach", "MPI_Buffer_detach_c")
	if rc := enter(call); rc != 0 {
		return rc
	}
	if rc := detach(0, call, procBuf, bufAddr, size, mode); rc != 0 {
		return rc
	}
	procBuf = nil
	return 0
}

// bcs_buffer_flush is MPI_Buffer_flush (comm NULL: every pending buffered
// send of the process's buffer) and MPI_Comm_flush_buffer.
//
//export bcs_buffer_flush
func bcs_buffer_flush(commH *C.uintptr_t) C.int {
	call, ci := "MPI_Buffer_flush", 0
	if commH != nil {
		call = "MPI_Comm_flush_buffer"
	}
	if rc := enter(call); rc != 0 {
		return rc
	}
	owner := procBuf
	if commH != nil {
		var rc C.int
		if ci, rc = comm(call, uintptr(*commH)); rc != 0 {
			return rc
		}
		owner = commBufs[ci]
	}
	if owner == nil {
		return 0 // nothing attached: nothing pending
	}
	return failErr(ci, bsendWait(owner))
}

//export bcs_comm_attach_buffer
func bcs_comm_attach_buffer(commH C.uintptr_t, buf unsafe.Pointer, size C.MPI_Count, mode C.int) C.int {
	call := pick(mode, "MPI_Comm_attach_buffer", "MPI_Comm_attach_buffer_c")
	ci, rc := enterComm(call, uintptr(commH))
	if rc != 0 {
		return rc
	}
	b, rc := attach(ci, call, commBufs[ci], buf, int64(size))
	if rc != 0 {
		return rc
	}
	commBufs[ci] = b
	return 0
}

//export bcs_comm_detach_buffer
func bcs_comm_detach_buffer(commH C.uintptr_t, bufAddr *unsafe.Pointer, size *C.MPI_Count, mode C.int) C.int {
	call := pick(mode, "MPI_Comm_detach_buffer", "MPI_Comm_detach_buffer_c")
	ci, rc := enterComm(call, uintptr(commH))
	if rc != 0 {
		return rc
	}
	if rc := detach(ci, call, commBufs[ci], bufAddr, size, mode); rc != 0 {
		return rc
	}
	delete(commBufs, ci)
	return 0
}

//export bcs_bsend
func bcs_bsend(buf unsafe.Pointer, count C.MPI_Count, dt C.uintptr_t, dest, t C.int, commH C.uintptr_t, out *C.uintptr_t, mode C.int) C.int {
	call := pick(mode, "MPI_Bsend", "MPI_Bsend_c")
	if out != nil {
		call = pick(mode, "MPI_Ibsend", "MPI_Ibsend_c")
	}
	if rc := enter(call); rc != 0 {
		return rc
	}
	a, rc := p2pArgs(call, commH, buf, count, dt, dest, t, false)
	if rc != 0 {
		return rc
	}
	if rc := bsendCore(call, a); rc != 0 {
		return rc
	}
	if out != nil {
		*out = C.uintptr_t(newReq(nil, doneReq(a.ci), a.ci))
	}
	return 0
}

// doneReq is a local request that has completed with an empty status.
func doneReq(ci int) *localReq {
	return &localReq{ci: ci, done: true, source: mpiapi.AnySource, rtag: mpiapi.AnyTag}
}

// startBsend starts a persistent buffered send (MPI_Bsend_init): the
// message is copied out at once, so the request is complete.
func startBsend(call string, e *reqEntry, a p2p) C.int {
	if rc := bsendCore(call, a); rc != 0 {
		return rc
	}
	e.loc = doneReq(a.ci)
	return 0
}

// bsendCore sends a's message as a buffered send: a copy, counted against
// the attached buffer.
func bsendCore(call string, a p2p) C.int {
	if a.peer == mpiapi.ProcNull {
		a.release()
		return 0
	}
	owner := commBufs[a.ci]
	if owner == nil {
		owner = sessionBuf(a.ci) // session.go
	}
	if owner == nil {
		owner = procBuf
	}
	if owner == nil {
		return fail(a.ci, call, errBuffer, "no buffer is attached; call MPI_Buffer_attach or MPI_Comm_attach_buffer first")
	}
	need := len(a.buf) + bsendHeader
	used := 0
	live := bsends[:0]
	for _, m := range bsends { // reclaim the sends that have completed
		if ok, _, err := mpiapi.Test(m.r); ok {
			if err != nil {
				return failErr(a.ci, err)
			}
			continue
		}
		live = append(live, m)
		if m.owner == owner {
			used += m.bytes
		}
	}
	clear(bsends[len(live):])
	bsends = live
	if !owner.auto && used+need > owner.size {
		return fail(a.ci, call, errBuffer, "the attached buffer of %d bytes holds %d bytes of pending messages; %d more (the message and %d bytes of header) do not fit", owner.size, used, need, bsendHeader)
	}
	if a.c == nil { // a one-process communicator: copied and complete at once (local.go)
		localSend(a)
		a.release()
		return 0
	}
	msg := append([]byte(nil), a.buf...)
	a.release()
	sign(&a, nil) // sig.go
	r, err := mpiapi.IsendBytes(a.c, msg, reduce.Uint8, a.peer, a.tag)
	if err != nil {
		return failErr(a.ci, err)
	}
	bsends = append(bsends, bsendMsg{r: r, bytes: need, owner: owner})
	return 0
}
