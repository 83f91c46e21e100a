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

// Point-to-point buffers go to mpiapi as bytes: the runtime matches sends
// and receives by envelope and moves bytes, and the status counts bytes,
// which MPI_Get_count divides by the datatype's wire size (its extent for a
// contiguous type). A non-contiguous datatype moves through a pack
// buffer (p2p.buffer in types.go).

// pick names a call by its variant: plain, or the large-count form (mode
// has C.BCS_LARGE: the C wrapper took MPI_Count counts).
func pick(mode C.int, plain, large string) string {
	if mode&C.BCS_LARGE != 0 {
		return large
	}
	return plain
}

// peer converts a rank argument from the ABI's sentinels to mpiapi's.
func peer(ci int, call, what string, r C.int, size int, wildcard bool) (int, C.int) {
	switch {
	case r == C.MPI_PROC_NULL:
		return mpiapi.ProcNull, 0
	case r == C.MPI_ANY_SOURCE && wildcard:
		return mpiapi.AnySource, 0
	case r >= 0:
		return int(r), 0
	}
	extra := " or MPI_PROC_NULL"
	if wildcard {
		extra = ", MPI_ANY_SOURCE or MPI_PROC_NULL"
	}
	return 0, fail(ci, call, errRank, "%s = %d, want 0..%d%s", what, int(r), size-1, extra)
}

// tag converts a tag argument from the ABI's MPI_ANY_TAG to mpiapi's.
func tag(ci int, call string, t C.int, wildcard bool) (int, C.int) {
	switch {
	case t == C.MPI_ANY_TAG && wildcard:
		return mpiapi.AnyTag, 0
	case t >= 0:
		return int(t), 0
	}
	if wildcard {
		return 0, fail(ci, call, errTag, "tag = %d, want 0..%d or MPI_ANY_TAG", int(t), mpiapi.TagUB)
	}
	return 0, fail(ci, call, errTag, "tag = %d, want 0..%d", int(t), mpiapi.TagUB)
}

// keepError, as the class of a status write, leaves the status's MPI_ERROR
// as the program set it. The calls that return one status (Recv, Wait,
// Test, Waitany, Testany, Probe, Mprobe, Mrecv, Sendrecv) use it when they
// succeed: their return code is the error, and MPICH and Open MPI leave that
// field alone there too (Open MPI everywhere, MPICH 4.0 in all but Probe,
// Iprobe and Sendrecv_replace; MPI 5.0 §3.2.5 makes it undefined). A failed
// call still writes its class there, and the calls that fill an array of
// statuses always set it.
const keepError = -1

// single is the class a one-status call writes into its status for its
// return code rc: keepError when it succeeded.
func single(rc C.int) int {
	if rc == 0 {
		return keepError
	}
	return int(rc)
}

func putRaw(st *C.MPI_Status, source, tag int, bytes uint64, class int) {
	if st == nil {
		return
	}
	st.MPI_SOURCE, st.MPI_TAG = C.int(source), C.int(tag)
	if class != keepError {
		st.MPI_ERROR = C.int(class)
	}
	st.MPI_internal[0], st.MPI_internal[1], st.MPI_internal[2] = C.int(uint32(bytes)), C.int(uint32(bytes>>32)), 0
}

// putStatus writes an mpiapi status with the ABI's sentinels.
func putStatus(st *C.MPI_Status, s mpiapi.Status, class int) {
	src, t := s.Source, s.Tag
	if src == mpiapi.ProcNull {
		src = C.MPI_PROC_NULL
	}
	if t == mpiapi.AnyTag {
		t = C.MPI_ANY_TAG
	}
	putRaw(st, src, t, uint64(s.Bytes()), class)
	if st != nil && s.Cancelled() {
		st.MPI_internal[2] = 1
	}
}

func procNullStatus(st *C.MPI_Status) { putRaw(st, C.MPI_PROC_NULL, C.MPI_ANY_TAG, 0, keepError) }
func emptyStatus(st *C.MPI_Status)    { putRaw(st, C.MPI_ANY_SOURCE, C.MPI_ANY_TAG, 0, 0) }

// p2p is a checked point-to-point call: its communicator, buffer, peer, tag.
type p2p struct {
	ci   int
	c    *mpiapi.Comm // nil: a local communicator
	buf  []byte       // the bytes the runtime moves
	peer int
	tag  int
	pair uint32 // a partitioned operation's pair number (partition.go); 0: plain

	// The caller's buffer; packed: buf is a pack buffer for it.
	t      dtype
	user   unsafe.Pointer
	count  int
	recv   bool
	packed bool
	keep   bool // a persistent request's: never released
}

// p2pArgs checks the arguments of a point-to-point call.
func p2pArgs(call string, commH C.uintptr_t, buf unsafe.Pointer, count C.MPI_Count, dt C.uintptr_t, r, t C.int, recv bool) (p2p, C.int) {
	what := "dest"
	if recv {
		what = "source"
	}
	ci, rc := comm(call, uintptr(commH))
	if rc != 0 {
		return p2p{}, rc
	}
	a := p2p{ci: ci, c: comms[ci].c}
	typ, rc := datatype(ci, call, "datatype", uintptr(dt))
	if rc != 0 {
		return a, rc
	}
	if rc = a.buffer64(call, "buf", buf, int64(count), typ, recv); rc != 0 {
		return a, rc
	}
	size := 1
	if a.c != nil {
		size = a.c.Size()
	}
	ic := comms[ci].inter
	if ic != nil { // ranks name the remote group (inter.go)
		size = len(ic.rranks)
		if r >= C.int(size) {
			return a, fail(ci, call, errRank, "%s = %d, want 0..%d (a rank of the remote group) or MPI_PROC_NULL", what, int(r), size-1)
		}
	}
	if a.peer, rc = peer(ci, call, what, r, size, recv); rc != 0 {
		return a, rc
	}
	if ic != nil {
		a.peer = interPeer(ic, a.peer)
	}
	if a.tag, rc = tag(ci, call, t, recv); rc != 0 {
		return a, rc
	}
	if a.c == nil && a.peer > 0 {
		extra := " or MPI_PROC_NULL"
		if recv {
			extra = ", MPI_ANY_SOURCE or MPI_PROC_NULL"
		}
		return a, fail(ci, call, errRank, "%s = %d, want 0%s (the communicator has one process)", what, a.peer, extra)
	}
	return a, 0
}

//export bcs_send
func bcs_send(buf unsafe.Pointer, count C.MPI_Count, dt C.uintptr_t, dest, t C.int, commH C.uintptr_t, mode C.int) C.int {
	call := pick(mode, "MPI_Send", "MPI_Send_c")
	if rc := enter(call); rc != 0 {
		return rc
	}
	a, rc := p2pArgs(call, commH, buf, count, dt, dest, t, false)
	if rc != 0 {
		return rc
	}
	if a.c == nil {
		localSend(a) // copies the message
		a.release()
		return 0
	}
	sign(&a, nil) // sig.go
	err := mpiapi.SendBytes(a.c, a.buf, reduce.Uint8, a.peer, a.tag)
	a.release()
	return failErr(a.ci, err)
}

//export bcs_recv
func bcs_recv(buf unsafe.Pointer, count C.MPI_Count, dt C.uintptr_t, source, t C.int, commH C.uintptr_t, st *C.MPI_Status, mode C.int) C.int {
	call := pick(mode, "MPI_Recv", "MPI_Recv_c")
	if rc := enter(call); rc != 0 {
		return rc
	}
	a, rc := p2pArgs(call, commH, buf, count, dt, source, t, true)
	if rc != 0 {
		return rc
	}
	if a.c == nil {
		return localBlockingRecv(call, a, st)
	}
	sign(nil, &a)
	s, err := mpiapi.RecvBytes(a.c, a.buf, reduce.Uint8, a.peer, a.tag)
	a.drain(s.Bytes())
	a.release()
	rc = failErr(a.ci, err)
	putStatus(st, interStatus(a.ci, s), single(rc))
	return rc
}

func istart(call string, buf unsafe.Pointer, count C.MPI_Count, dt C.uintptr_t, r, t C.int, commH C.uintptr_t, out *C.uintptr_t, recv bool) C.int {
	if rc := enter(call); rc != 0 {
		return rc
	}
	a, rc := p2pArgs(call, commH, buf, count, dt, r, t, recv)
	if rc != 0 {
		return rc
	}
	if a.c == nil {
		loc := localSend
		if recv {
			loc = func(a p2p) *localReq { return localRecv(call, a) }
		}
		*out = C.uintptr_t(newReq(nil, loc(a), a.ci))
		setUnpack(*out, a.unpacker())
		return 0
	}
	var q *mpiapi.Request
	var err error
	if recv {
		sign(nil, &a)
		q, err = mpiapi.IrecvBytes(a.c, a.buf, reduce.Uint8, a.peer, a.tag)
	} else {
		sign(&a, nil)
		q, err = mpiapi.IsendBytes(a.c, a.buf, reduce.Uint8, a.peer, a.tag)
	}
	if err != nil {
		return failErr(a.ci, err)
	}
	*out = C.uintptr_t(newReq(q, nil, a.ci))
	setUnpack(*out, a.unpacker())
	return 0
}

// setUnpack makes the request behind h run f with the bytes received when
// it completes (a packed receive unpacks).
func setUnpack(h C.uintptr_t, f func(int)) {
	if f != nil {
		_, i, _ := splitHandle(uintptr(h))
		reqs[i].unpack = f
	}
}

//export bcs_isend
func bcs_isend(buf unsafe.Pointer, count C.MPI_Count, dt C.uintptr_t, dest, t C.int, commH C.uintptr_t, out *C.uintptr_t, mode C.int) C.int {
	return istart(pick(mode, "MPI_Isend", "MPI_Isend_c"), buf, count, dt, dest, t, commH, out, false)
}

//export bcs_irecv
func bcs_irecv(buf unsafe.Pointer, count C.MPI_Count, dt C.uintptr_t, source, t C.int, commH C.uintptr_t, out *C.uintptr_t, mode C.int) C.int {
	return istart(pick(mode, "MPI_Irecv", "MPI_Irecv_c"), buf, count, dt, source, t, commH, out, true)
}

//export bcs_sendrecv
func bcs_sendrecv(sbuf unsafe.Pointer, scount C.MPI_Count, stype C.uintptr_t, dest, stag C.int,
	rbuf unsafe.Pointer, rcount C.MPI_Count, rtype C.uintptr_t, source, rtag C.int, commH C.uintptr_t, st *C.MPI_Status, mode C.int) C.int {
	call := pick(mode, "MPI_Sendrecv", "MPI_Sendrecv_c")
	s, r, rc := sendrecvArgs(call, commH, sbuf, scount, stype, dest, stag, rbuf, rcount, rtype, source, rtag)
	if rc != 0 {
		return rc
	}
	return sendrecv(call, s, r, st)
}

// sendrecvArgs is the prologue of MPI_Sendrecv and MPI_Sendrecv_replace:
// the send's and the receive's arguments, checked.
func sendrecvArgs(call string, commH C.uintptr_t, sbuf unsafe.Pointer, scount C.MPI_Count, stype C.uintptr_t, dest, stag C.int,
	rbuf unsafe.Pointer, rcount C.MPI_Count, rtype C.uintptr_t, source, rtag C.int) (s, r p2p, rc C.int) {
	if rc = enter(call); rc != 0 {
		return s, r, rc
	}
	if s, rc = p2pArgs(call, commH, sbuf, scount, stype, dest, stag, false); rc != 0 {
		return s, r, rc
	}
	r, rc = p2pArgs(call, commH, rbuf, rcount, rtype, source, rtag, true)
	return s, r, rc
}

func sendrecv(call string, s, r p2p, st *C.MPI_Status) C.int {
	if r.c == nil {
		localSend(s)
		s.release()
		return localBlockingRecv(call, r, st)
	}
	sign(&s, &r)
	status, err := mpiapi.SendrecvBytes(s.c, s.buf, reduce.Uint8, s.peer, s.tag, r.buf, reduce.Uint8, r.peer, r.tag)
	r.drain(status.Bytes())
	s.release()
	r.release()
	rc := failErr(r.ci, err)
	putStatus(st, interStatus(r.ci, status), single(rc))
	return rc
}

// bcs_sendrecv_replace sends from buf and receives into it: the send's
// bytes are copied (or packed) out first.
//
//export bcs_sendrecv_replace
func bcs_sendrecv_replace(buf unsafe.Pointer, count C.MPI_Count, dt C.uintptr_t, dest, stag, source, rtag C.int, commH C.uintptr_t, st *C.MPI_Status, mode C.int) C.int {
	call := pick(mode, "MPI_Sendrecv_replace", "MPI_Sendrecv_replace_c")
	s, r, rc := sendrecvArgs(call, commH, buf, count, dt, dest, stag, buf, count, dt, source, rtag)
	if rc != 0 {
		return rc
	}
	if !s.packed {
		s.buf = append([]byte(nil), s.buf...)
	}
	return sendrecv(call, s, r, st)
}

func probeArgs(call string, source, t C.int, commH C.uintptr_t) (p2p, C.int) {
	return p2pArgs(call, commH, nil, 0, C.uintptr_t(0x247), source, t, true) // MPI_BYTE: no buffer
}

//export bcs_probe
func bcs_probe(source, t C.int, commH C.uintptr_t, st *C.MPI_Status) C.int {
	const call = "MPI_Probe"
	if rc := enter(call); rc != 0 {
		return rc
	}
	a, rc := probeArgs(call, source, t, commH)
	if rc != 0 {
		return rc
	}
	if a.c == nil {
		if a.peer == mpiapi.ProcNull {
			procNullStatus(st)
			return 0
		}
		i := localFind(a.ci, a.tag)
		if i < 0 && !mpiapi.WaitThreads(call, func() bool { i = localFind(a.ci, a.tag); return i >= 0 }) {
			return localDeadlock(call, &localReq{ci: a.ci, tag: a.tag})
		}
		m := localQueue[i]
		putRaw(st, 0, m.tag, uint64(len(m.data)), keepError)
		return 0
	}
	s, err := mpiapi.Probe(a.c, a.peer, a.tag)
	rc = failErr(a.ci, err)
	putStatus(st, interStatus(a.ci, s), single(rc))
	return rc
}

//export bcs_iprobe
func bcs_iprobe(source, t C.int, commH C.uintptr_t, flag *C.int, st *C.MPI_Status) C.int {
	const call = "MPI_Iprobe"
	if rc := enter(call); rc != 0 {
		return rc
	}
	a, rc := probeArgs(call, source, t, commH)
	if rc != 0 {
		return rc
	}
	if a.c == nil {
		*flag = 0
		if a.peer == mpiapi.ProcNull {
			*flag = 1
			procNullStatus(st)
		} else if i := localFind(a.ci, a.tag); i >= 0 {
			m := localQueue[i]
			*flag = 1
			putRaw(st, 0, m.tag, uint64(len(m.data)), keepError)
		}
		return 0
	}
	found, s, err := mpiapi.Iprobe(a.c, a.peer, a.tag)
	if err != nil {
		return failErr(a.ci, err)
	}
	*flag = 0
	if found {
		*flag = 1
		putStatus(st, interStatus(a.ci, s), keepError)
	}
	return 0
}

// localBlockingRecv is Recv on a local communicator.
func localBlockingRecv(call string, a p2p, st *C.MPI_Status) C.int {
	r := localRecv(call, a)
	if !r.done && !mpiapi.WaitThreads(call, func() bool { return r.done }) {
		localPosted = localPosted[:len(localPosted)-1] // the receive just posted
		return localDeadlock(call, r)
	}
	a.drain(int(r.bytes))
	a.release()
	rc := r.result(call)
	r.status(st, single(rc))
	return rc
}
