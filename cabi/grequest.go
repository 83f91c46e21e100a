package main

/*
#include <stdlib.h>
#include "shim.h"
int bcs_call_gquery(void *fn, void *extra, MPI_Status *st);
int bcs_call_gfree(void *fn, void *extra);
int bcs_call_gcancel(void *fn, void *extra, int complete);
*/
import "C"

import (
	"unsafe"
)

// Generalized requests (MPI_Grequest_start, MPI_Grequest_complete): a
// request of this library that the program completes. It is a local
// request (local.go) that is done once MPI_Grequest_complete is called:
//
//   - The first completion call that sees it done (Wait, Test, the array
//     forms, Request_get_status) calls query_fn once for its status; a
//     non-zero return is the request's error (MPI_ERR_IN_STATUS in the
//     array forms). free_fn is called when the request is freed: by the
//     completion call, or by MPI_Grequest_complete after MPI_Request_free.
//   - MPI_Cancel calls cancel_fn with whether it is complete.
//   - bcsmpi provides MPI_THREAD_FUNNELED, so no other thread can complete
//     a request this one waits for: waiting for one that is not complete is
//     reported as a deadlock (MPI_ERR_OTHER) rather than hanging.
//   - The callbacks are C functions, called through shim trampolines.

type greq struct {
	query, free, cancel, extra unsafe.Pointer
	queried, freed             bool
	st                         *C.MPI_Status // query_fn's status, in C memory
}

//export bcs_grequest_start
func bcs_grequest_start(query, free, cancel, extra unsafe.Pointer, out *C.uintptr_t) C.int {
	const call = "MPI_Grequest_start"
	if rc := enter(call); rc != 0 {
		return rc
	}
	if query == nil || free == nil || cancel == nil || out == nil {
		return fail(0, call, errArg, "query_fn = %p, free_fn = %p, cancel_fn = %p, request = %p: want all four", query, free, cancel, out)
	}
	g := &greq{query: query, free: free, cancel: cancel, extra: extra}
	g.st = (*C.MPI_Status)(C.calloc(1, C.size_t(unsafe.Sizeof(C.MPI_Status{}))))
	*out = C.uintptr_t(newReq(nil, &localReq{ci: 0, g: g}, 0))
	return 0
}

//export bcs_grequest_complete
func bcs_grequest_complete(h C.uintptr_t) C.int {
	const call = "MPI_Grequest_complete"
	if rc := enter(call); rc != 0 {
		return rc
	}
	i, rc := req(call, uintptr(h))
	if rc != 0 {
		return rc
	}
	if i < 0 || reqs[i].loc == nil || reqs[i].loc.g == nil {
		return fail(0, call, errRequest, "request = %s is not a generalized request (one from MPI_Grequest_start)", describe(uintptr(h)))
	}
	r := reqs[i].loc
	if r.done {
		return fail(0, call, errRequest, "request = %s was already completed with MPI_Grequest_complete", describe(uintptr(h)))
	}
	r.done = true
	if r.g.freed { // MPI_Request_free came first
		r.gfree()
		freeReq(i)
	}
	return 0
}

// gquery calls query_fn once the request is done: its status is kept, its
// error becomes the request's.
func (r *localReq) gquery() {
	if r.g == nil || r.g.queried || !r.done {
		return
	}
	r.g.queried = true
	r.g.st.MPI_SOURCE, r.g.st.MPI_TAG = C.MPI_ANY_SOURCE, C.MPI_ANY_TAG
	if code := C.bcs_call_gquery(r.g.query, r.g.extra, r.g.st); code != 0 {
		r.class = int(code)
		if C.bcs_class_name(code) == nil {
			r.class = errOther
		}
		r.msg = "the generalized request's query_fn returned " + itoa(int(code))
	}
}

// gfree calls free_fn and releases the status.
func (r *localReq) gfree() {
	if r.g == nil || r.g.st == nil {
		return
	}
	C.bcs_call_gfree(r.g.free, r.g.extra)
	C.free(unsafe.Pointer(r.g.st))
	r.g.st = nil
}

// gstatus writes query_fn's status (with the completion's class).
func (r *localReq) gstatus(st *C.MPI_Status, class int) {
	if st != nil && r.g.st != nil {
		*st = *r.g.st
		st.MPI_ERROR = C.int(class)
	}
}

// gcancel is MPI_Cancel of a generalized request.
func (r *localReq) gcancel() {
	done := C.int(0)
	if r.done {
		done = 1
	}
	C.bcs_call_gcancel(r.g.cancel, r.g.extra, done)
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	neg := n < 0
	if neg {
		n = -n
	}
	var b [20]byte
	i := len(b)
	for n > 0 {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
	}
	if neg {
		i--
		b[i] = '-'
	}
	return string(b[i:])
}
