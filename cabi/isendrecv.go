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

// MPI_Isendrecv and MPI_Isendrecv_replace (and their _c forms) are a send
// and a receive under one request: its slot holds the receive (r), whose
// status the request reports, and the send (also). The request completes
// when both have:
//
//   - MPI_Wait waits for the send, then the receive; MPI_Test,
//     MPI_Testany and MPI_Testsome test the send first and the receive only
//     once the send has completed, so they never block.
//   - MPI_Waitall and MPI_Testall hand both to mpiapi's array call.
//   - MPI_Waitany and MPI_Waitsome wait for the receive among the others
//     and then for its send: they may block until that send completes
//     although another request of the array has completed.
//   - MPI_Request_get_status reports it finished once both have.
//
// An error of the send is the request's error when the receive has none.
// The MMDS records the two as MPI_Isend and MPI_Irecv. On a one-process
// communicator (local.go) the send is buffered at once, so the request is
// the receive alone. MPI_Isendrecv_replace sends from a copy of the buffer
// (or the packed copy of a non-contiguous datatype).

// sendDone reports whether the send of an Isendrecv request has completed
// (always, for any other request), waiting for it when block is set.
func (e *reqEntry) sendDone(block bool) bool {
	if e.also == nil {
		return true
	}
	var done bool
	var err error
	if block {
		_, err = mpiapi.Wait(e.also)
		done = true
	} else {
		done, _, err = mpiapi.Test(e.also)
	}
	if done {
		e.also, e.alsoErr = nil, err
	}
	return done
}

// sendsDone records the sends of the slots' Isendrecv requests as completed
// once an array call (Waitall, Testall) has retired them.
func sendsDone(slots []int) {
	for _, i := range slots {
		if i >= 0 {
			if e := &reqs[i]; e.also != nil {
				e.also, e.alsoErr = nil, e.also.Err()
			}
		}
	}
}

//export bcs_isendrecv
func bcs_isendrecv(sbuf unsafe.Pointer, scount C.MPI_Count, stype C.uintptr_t, dest, stag C.int,
	rbuf unsafe.Pointer, rcount C.MPI_Count, rtype C.uintptr_t, source, rtag C.int, commH C.uintptr_t, out *C.uintptr_t, mode C.int) C.int {
	call := pick(mode, "MPI_Isendrecv", "MPI_Isendrecv_c")
	s, r, rc := sendrecvArgs(call, commH, sbuf, scount, stype, dest, stag, rbuf, rcount, rtype, source, rtag)
	if rc != 0 {
		return rc
	}
	return isendrecv(call, s, r, out)
}

//export bcs_isendrecv_replace
func bcs_isendrecv_replace(buf unsafe.Pointer, count C.MPI_Count, dt C.uintptr_t, dest, stag, source, rtag C.int, commH C.uintptr_t, out *C.uintptr_t, mode C.int) C.int {
	call := pick(mode, "MPI_Isendrecv_replace", "MPI_Isendrecv_replace_c")
	s, r, rc := sendrecvArgs(call, commH, buf, count, dt, dest, stag, buf, count, dt, source, rtag)
	if rc != 0 {
		return rc
	}
	if !s.packed {
		s.buf = append([]byte(nil), s.buf...)
	}
	return isendrecv(call, s, r, out)
}

func isendrecv(call string, s, r p2p, out *C.uintptr_t) C.int {
	if out == nil {
		s.release()
		r.release()
		return fail(r.ci, call, errArg, "request = NULL")
	}
	if r.c == nil {
		localSend(s) // copies the message
		s.release()
		*out = C.uintptr_t(newReq(nil, localRecv(call, r), r.ci))
		setUnpack(*out, r.unpacker())
		return 0
	}
	sign(&s, &r) // sig.go
	qs, err := mpiapi.IsendBytes(s.c, s.buf, reduce.Uint8, s.peer, s.tag)
	if err != nil {
		s.release()
		r.release()
		return failErr(s.ci, err)
	}
	qr, err := mpiapi.IrecvBytes(r.c, r.buf, reduce.Uint8, r.peer, r.tag)
	if err != nil {
		// The send goes on, as a request freed with MPI_Request_free
		// would: detached, MPI_Finalize waits for it, and its pack
		// buffer stays its own (never given back to the pool while the
		// runtime may still read it; the collector frees it).
		qs.Detach()
		detached = append(detached, qs)
		r.release()
		return failErr(r.ci, err)
	}
	h := newReq(qr, nil, r.ci)
	_, i, _ := splitHandle(h)
	reqs[i].also = qs
	*out = C.uintptr_t(h)
	send, recv := s.unpacker(), r.unpacker()
	if send != nil || recv != nil {
		reqs[i].unpack = func(n int) {
			if recv != nil {
				recv(n)
			}
			if send != nil {
				send(0) // gives the send's pack buffer back
			}
		}
	}
	return 0
}
