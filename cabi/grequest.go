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
//     completion call (after query_fn; its non-zero return is the
//     request's error unless query_fn's came first), by MPI_Request_free
//     of a complete request, or by MPI_Grequest_complete after
//     MPI_Request_free; each of those calls returns free_fn's error.
//   - MPI_Cancel calls cancel_fn with whether it is complete, and returns
//     its error.
//   - A callback's non-zero return that is not an error class is
//     MPI_ERR_OTHER; the message names the callback and the code.
//   - Below MPI_THREAD_MULTIPLE no other thread can complete a request
//     while this one waits for it: waiting for one that is not complete is
//     reported as a deadlock (MPI_ERR_OTHER) rather than hanging. Under
//     MULTIPLE the wait is real (doc.go, "Threads").
//   - The callbacks are C functions, called through shim trampolines.

type greq struct {
	query, free, cancel, extra unsafe.Pointer
	queried, freed             bool
	freeCalled                 bool          // free_fn has run
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
	if r.g.freed { // MPI_Request_free came first: free_fn's error is this call's
		class, msg := r.gfree()
		freeReq(i)
		if class != 0 {
			return fail(r.ci, call, class, "%s", msg)
		}
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

// gcomplete is the completion of a done generalized request (a Wait, Test
// or array call that returns it): query_fn, then free_fn, whose error
// becomes the request's unless query_fn's came first.
func (r *localReq) gcomplete() {
	r.gquery()
	if r.g == nil || r.g.freeCalled {
		return
	}
	if class, msg := r.callFree(); class != 0 && r.class == 0 {
		r.class, r.msg = class, msg
	}
}

// callFree calls free_fn once: a class and message for its error.
func (r *localReq) callFree() (int, string) {
	r.g.freeCalled = true
	return callbackClass("free_fn", C.bcs_call_gfree(r.g.free, r.g.extra))
}

// gfree calls free_fn, unless the completion did, and releases the status;
// a class and message when free_fn failed here.
func (r *localReq) gfree() (int, string) {
	if r.g == nil || r.g.st == nil {
		return 0, ""
	}
	class, msg := 0, ""
	if !r.g.freeCalled {
		class, msg = r.callFree()
	}
	C.free(unsafe.Pointer(r.g.st))
	r.g.st = nil
	return class, msg
}

// callbackClass is the class a generalized request's callback's non-zero
// return code stands for (MPI_ERR_OTHER for one that is not an error
// class), with a message naming the callback and the code.
func callbackClass(fn string, code C.int) (int, string) {
	if code == 0 {
		return 0, ""
	}
	class := int(code)
	if C.bcs_class_name(code) == nil {
		class = errOther
	}
	return class, "the generalized request's " + fn + " returned " + itoa(int(code))
}

// gstatus writes query_fn's status (with the completion's class).
func (r *localReq) gstatus(st *C.MPI_Status, class int) {
	if st != nil && r.g.st != nil {
		keep := st.MPI_ERROR
		*st = *r.g.st
		st.MPI_ERROR = C.int(class)
		if class == keepError {
			st.MPI_ERROR = keep
		}
	}
}

// gcancel is MPI_Cancel of a generalized request: a class and message when
// cancel_fn failed.
func (r *localReq) gcancel() (int, string) {
	done := C.int(0)
	if r.done {
		done = 1
	}
	return callbackClass("cancel_fn", C.bcs_call_gcancel(r.g.cancel, r.g.extra, done))
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
