package main

/*
#include "shim.h"
*/
import "C"

import (
	"unsafe"

	"github.com/bcsmpi/bcsmpi/mpiapi"
)

// MPI_Request_get_status and its array forms (MPI 4.1) test without
// completing: a request that has finished reports its status but stays
// live, and a later Wait, Test or Request_free releases it as usual. A
// packed receive (a non-contiguous datatype) is unpacked into the caller's
// buffer when get_status first sees it finished, so the data is there.

// peek reports whether the request in slot i has finished and writes its
// status if so.
func peek(call string, i int, st *C.MPI_Status) (bool, C.int) {
	e := &reqs[i]
	if e.loc != nil {
		if !e.loc.done {
			return false, 0
		}
		e.loc.status(st, 0)
		if f := e.unpack; f != nil {
			e.unpack = nil
			f(int(e.loc.bytes))
		}
		return true, 0
	}
	if e.also != nil { // MPI_Isendrecv: finished when its send has too
		if done, _, _ := mpiapi.GetStatus(e.also); !done {
			return false, 0
		}
	}
	done, s, err := mpiapi.GetStatus(e.r)
	if !done {
		return false, failErr(e.comm, err)
	}
	if f := e.unpack; f != nil {
		e.unpack = nil
		f(s.Bytes())
	}
	class := 0
	if err != nil {
		class = int(failErr(e.comm, err))
	}
	putStatus(st, interStatus(e.comm, s), class)
	return true, C.int(class)
}

//export bcs_request_get_status
func bcs_request_get_status(h C.uintptr_t, flag *C.int, st *C.MPI_Status) C.int {
	const call = "MPI_Request_get_status"
	if rc := enter(call); rc != 0 {
		return rc
	}
	i, rc := req(call, uintptr(h))
	if rc != 0 {
		return rc
	}
	if i < 0 || reqs[i].inactive() {
		*flag = 1
		emptyStatus(st)
		return 0
	}
	done, rc := peek(call, i, st)
	*flag = 0
	if done {
		*flag = 1
	}
	return rc
}

// bcs_request_get_status_n is the array forms: mode 0 any (index, flag,
// one status), 1 all (flag, statuses), 2 some (outcount, indices, statuses).
//
//export bcs_request_get_status_n
func bcs_request_get_status_n(mode C.int, n C.int, hs *C.uintptr_t, index, flag *C.int, sts *C.MPI_Status) C.int {
	call := [...]string{"MPI_Request_get_status_any", "MPI_Request_get_status_all", "MPI_Request_get_status_some"}[mode]
	if rc := enter(call); rc != 0 {
		return rc
	}
	_, slots, rc := requestArray(call, n, hs)
	if rc != 0 {
		return rc
	}
	slots = append([]int(nil), slots...) // peek may reuse the scratch
	active := 0
	for _, i := range slots {
		if i >= 0 {
			active++
		}
	}
	switch mode {
	case 0: // any
		*index = C.MPI_UNDEFINED
		if active == 0 {
			*flag = 1
			emptyStatus(sts)
			return 0
		}
		*flag = 0
		for k, i := range slots {
			if i < 0 {
				continue
			}
			done, rc := peek(call, i, sts)
			if done {
				*index, *flag = C.int(k), 1
				return rc
			}
		}
		return 0
	case 1: // all: statuses only when every request has finished
		var tmp C.MPI_Status
		for _, i := range slots {
			if i >= 0 {
				if done, rc := peek(call, i, &tmp); !done || rc != 0 {
					*flag = 0
					return rc
				}
			}
		}
		*flag = 1
		for k, i := range slots {
			if i < 0 {
				emptyStatus(statusAt(sts, k))
			} else {
				peek(call, i, statusAt(sts, k))
			}
		}
		return 0
	}
	// some
	if active == 0 {
		*index = C.MPI_UNDEFINED
		return 0
	}
	out := 0
	idx := unsafe.Slice(flag, len(slots))
	for k, i := range slots {
		if i < 0 {
			continue
		}
		done, rc := peek(call, i, statusAt(sts, out))
		if rc != 0 {
			return rc
		}
		if done {
			idx[out] = C.int(k)
			out++
		}
	}
	*index = C.int(out)
	return 0
}
