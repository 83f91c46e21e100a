package main

/*
#include "shim.h"
*/
import "C"

import (
	"math"
	"unsafe"

	"github.com/bcsmpi/bcsmpi/mpiapi"
)

// Buffered sends copy the message out of the caller's buffer and send the
// copy; the attached buffer (MPI_Buffer_attach) bounds how many bytes may be
// pending, counting MPI_BSEND_OVERHEAD per message as the standard's
// accounting does. Pending sends are reclaimed, with mpiapi's Test (which
// the MMDS records), when a new one needs room, and waited for by
// MPI_Buffer_detach and MPI_Finalize.

type bsendMsg struct {
	r     *mpiapi.Request
	bytes int
}

var (
	bsendBuf  unsafe.Pointer
	bsendSize int
	bsendOn   bool
	bsends    []bsendMsg
)

//export bcs_buffer_attach
func bcs_buffer_attach(buf unsafe.Pointer, size C.MPI_Count, mode C.int) C.int {
	call := pick(mode, "MPI_Buffer_attach", "MPI_Buffer_attach_c")
	if rc := enter(call); rc != 0 {
		return rc
	}
	if bsendOn {
		return fail(0, call, errBuffer, "a buffer of %d bytes is already attached; detach it first", bsendSize)
	}
	if size < 0 || (buf == nil && size > 0) {
		return fail(0, call, errBuffer, "buffer = %p with size = %d", buf, int64(size))
	}
	bsendBuf, bsendSize, bsendOn = buf, int(size), true
	return 0
}

// bsendWait waits for every pending buffered send.
func bsendWait() error {
	if len(bsends) == 0 {
		return nil
	}
	rs := make([]*mpiapi.Request, len(bsends))
	for i, m := range bsends {
		rs[i] = m.r
	}
	bsends = bsends[:0]
	return mpiapi.Waitall(rs...)
}

//export bcs_buffer_detach
func bcs_buffer_detach(bufAddr *unsafe.Pointer, size *C.MPI_Count, mode C.int) C.int {
	call := pick(mode, "MPI_Buffer_detach", "MPI_Buffer_detach_c")
	if rc := enter(call); rc != 0 {
		return rc
	}
	if !bsendOn {
		return fail(0, call, errBuffer, "no buffer is attached")
	}
	if mode&C.BCS_LARGE == 0 && bsendSize > math.MaxInt32 {
		return fail(0, call, errCount, "the attached buffer has %d bytes, more than an int holds; detach it with MPI_Buffer_detach_c", bsendSize)
	}
	if err := bsendWait(); err != nil {
		return failErr(0, err)
	}
	*bufAddr, *size = bsendBuf, C.MPI_Count(bsendSize)
	bsendBuf, bsendSize, bsendOn = nil, 0, false
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
	if a.peer == mpiapi.ProcNull || a.c == nil {
		if a.c == nil {
			localSend(a) // copies the message
		}
		a.release()
		return 0
	}
	if !bsendOn {
		return fail(a.ci, call, errBuffer, "no buffer is attached; call MPI_Buffer_attach first")
	}
	need := len(a.buf) + C.MPI_BSEND_OVERHEAD
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
		used += m.bytes
	}
	bsends = live
	if used+need > bsendSize {
		return fail(a.ci, call, errBuffer, "the attached buffer of %d bytes holds %d bytes of pending messages; %d more (the message and MPI_BSEND_OVERHEAD) do not fit", bsendSize, used, need)
	}
	msg := append([]byte(nil), a.buf...)
	a.release()
	sign(&a, nil) // sig.go
	r, err := mpiapi.Isend(a.c, msg, a.peer, a.tag)
	if err != nil {
		return failErr(a.ci, err)
	}
	bsends = append(bsends, bsendMsg{r: r, bytes: need})
	return 0
}
