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

// Partitioned communication (MPI 4: MPI_Psend_init, MPI_Precv_init,
// MPI_Pready, MPI_Pready_range, MPI_Pready_list, MPI_Parrived and the _c
// forms) on persistent requests (wait.go). The buffer of partitions*count
// items moves as one message, matched like a standard send and receive of
// the same communicator, peer and tag:
//
//   - MPI_Start of a partitioned send makes it active with no partition
//     ready; when the last partition is marked ready (MPI_Pready*), the
//     message is packed and sent. Marking a partition twice in one start,
//     or one outside 0..partitions-1, is MPI_ERR_ARG; marking on an
//     inactive request, or on one that is not a partitioned send, is
//     MPI_ERR_REQUEST.
//   - A partitioned receive is an ordinary persistent receive of the whole
//     buffer; MPI_Parrived reports every partition arrived once the whole
//     message has (and, on an inactive request, as the standard says).
//   - Waiting for a partitioned send whose partitions are not all ready is
//     a deadlock error naming the first one missing, since no other thread
//     can mark it while this one waits; under MPI_THREAD_MULTIPLE the wait
//     is real (another thread may call MPI_Pready; doc.go, "Threads").
//   - Not conforming: the standard matches a partitioned operation only
//     with a partitioned one, the k-th initialization call of an envelope
//     with the peer's k-th. Here a partitioned send and a non-partitioned
//     receive (or the reverse) with the same envelope match each other,
//     and partitioned operations of one envelope match in the order their
//     messages go (the last MPI_Pready), not of their initialization.
//     Both need a matching space of their own in mpiapi (tags above
//     MPI_TAG_UB carrying the initialization ordinal).

// partInit is MPI_Psend_init and MPI_Precv_init.
func partInit(call string, buf unsafe.Pointer, parts C.int, count C.MPI_Count, dt C.uintptr_t, peer, t C.int, commH C.uintptr_t, out *C.uintptr_t, recv bool) C.int {
	if rc := enter(call); rc != 0 {
		return rc
	}
	ci, rc := comm(call, uintptr(commH))
	if rc != 0 {
		return rc
	}
	if parts < 1 {
		return fail(ci, call, errArg, "partitions = %d, want >= 1", int(parts))
	}
	if count < 0 || int64(count) > maxTypeBytes {
		return fail(ci, call, errCount, "count = %d, want 0..%d", int64(count), maxTypeBytes)
	}
	how := sendPartitioned
	if recv {
		how = sendStandard
	}
	if rc := initSend(call, buf, C.MPI_Count(int64(parts)*int64(count)), dt, peer, t, commH, out, recv, how); rc != 0 {
		return rc
	}
	_, i, _ := splitHandle(uintptr(*out))
	p := reqs[i].persist
	p.parts = int(parts)
	if !recv {
		p.ready = make([]bool, parts)
	}
	return 0
}

//export bcs_psend_init
func bcs_psend_init(buf unsafe.Pointer, parts C.int, count C.MPI_Count, dt C.uintptr_t, dest, t C.int, commH C.uintptr_t, out *C.uintptr_t, mode C.int) C.int {
	return partInit(pick(mode, "MPI_Psend_init", "MPI_Psend_init_c"), buf, parts, count, dt, dest, t, commH, out, false)
}

//export bcs_precv_init
func bcs_precv_init(buf unsafe.Pointer, parts C.int, count C.MPI_Count, dt C.uintptr_t, source, t C.int, commH C.uintptr_t, out *C.uintptr_t, mode C.int) C.int {
	return partInit(pick(mode, "MPI_Precv_init", "MPI_Precv_init_c"), buf, parts, count, dt, source, t, commH, out, true)
}

// startPartitioned makes a partitioned send active with no partition ready:
// a local request that is not done stands for it until the last Pready.
func startPartitioned(e *reqEntry, p *persistent) C.int {
	clear(p.ready)
	p.nready = 0
	e.unpack = nil
	e.loc = &localReq{ci: p.a.ci, part: p}
	return 0
}

// partRequest resolves the request of a Pready or Parrived call.
func partRequest(call string, h C.uintptr_t, recv bool) (int, *persistent, C.int) {
	i, rc := req(call, uintptr(h))
	if rc != 0 {
		return 0, nil, rc
	}
	want := "a partitioned send (from MPI_Psend_init)"
	if recv {
		want = "a partitioned receive (from MPI_Precv_init)"
	}
	if i < 0 || reqs[i].persist == nil || reqs[i].persist.parts == 0 || reqs[i].persist.recv != recv {
		return 0, nil, fail(0, call, errRequest, "request = %s is not %s", describe(uintptr(h)), want)
	}
	return i, reqs[i].persist, 0
}

// bcs_pready marks partitions ready: n of them from list, or (list NULL)
// low..high.
//
//export bcs_pready
func bcs_pready(call *C.char, low, high C.int, n C.int, list *C.int, h C.uintptr_t) C.int {
	name := C.GoString(call)
	if rc := enter(name); rc != 0 {
		return rc
	}
	i, p, rc := partRequest(name, h, false)
	if rc != 0 {
		return rc
	}
	e := &reqs[i]
	if e.loc == nil || e.loc.part == nil {
		return fail(e.comm, name, errRequest, "request = %s is not active with partitions pending (start it with MPI_Start; its message goes once every partition is ready)", describe(uintptr(h)))
	}
	mark := func(k C.int) C.int {
		if k < 0 || int(k) >= p.parts {
			return fail(e.comm, name, errArg, "partition = %d, want 0..%d", int(k), p.parts-1)
		}
		if p.ready[k] {
			return fail(e.comm, name, errArg, "partition %d was already marked ready since MPI_Start", int(k))
		}
		p.ready[k] = true
		p.nready++
		return 0
	}
	if list != nil || n > 0 {
		if n < 0 || list == nil {
			return fail(e.comm, name, errArg, "length = %d with array_of_partitions = %p", int(n), list)
		}
		for _, k := range unsafe.Slice(list, int(n)) {
			if rc := mark(k); rc != 0 {
				return rc
			}
		}
	} else {
		if low > high {
			return fail(e.comm, name, errArg, "partition_low = %d > partition_high = %d", int(low), int(high))
		}
		for k := low; k <= high; k++ {
			if rc := mark(k); rc != 0 {
				return rc
			}
		}
	}
	if p.nready < p.parts {
		return 0
	}
	// Every partition is ready: send the message.
	e.loc = nil
	p.a.fill()
	e.unpack = p.a.unpacker()
	if p.a.c == nil {
		e.loc = localSend(p.a)
		return 0
	}
	sign(&p.a, nil) // sig.go
	var err error
	e.r, err = mpiapi.IsendBytes(p.a.c, p.a.buf, reduce.Uint8, p.a.peer, p.a.tag)
	return failErr(e.comm, err)
}

//export bcs_parrived
func bcs_parrived(h C.uintptr_t, k C.int, flag *C.int) C.int {
	const call = "MPI_Parrived"
	if rc := enter(call); rc != 0 {
		return rc
	}
	i, p, rc := partRequest(call, h, true)
	if rc != 0 {
		return rc
	}
	if k < 0 || int(k) >= p.parts {
		return fail(reqs[i].comm, call, errArg, "partition = %d, want 0..%d", int(k), p.parts-1)
	}
	if flag == nil {
		return fail(reqs[i].comm, call, errArg, "flag = NULL")
	}
	*flag = 1
	if reqs[i].inactive() {
		return 0
	}
	var st C.MPI_Status
	done, rc := peek(call, i, &st) // getstatus.go: unpacks a packed receive
	if !done {
		*flag = 0
	}
	return rc
}
