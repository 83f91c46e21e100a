package main

/*
#include "shim.h"
*/
import "C"

import (
	"fmt"
	"unsafe"

	"github.com/bcsmpi/bcsmpi/internal/reduce"
	"github.com/bcsmpi/bcsmpi/mpiapi"
)

// Partitioned communication (MPI 4: MPI_Psend_init, MPI_Precv_init,
// MPI_Pready, MPI_Pready_range, MPI_Pready_list, MPI_Parrived and the _c
// forms) on persistent requests (wait.go). Each start moves the buffer of
// partitions*count items as one message in a matching space of partitioned
// operations alone (MPI 5.0 §4.2):
//
//   - Matching: an initialization call takes a pair number, k for the k-th
//     Psend_init of this process to (communicator, dest, tag), or the k-th
//     Precv_init from (communicator, source, tag); every start's message
//     and receive carry it (mpiapi.PsendBytes and PrecvBytes, the
//     scheduler's proto.Descriptor.Pair), and a send matches only the
//     receive of its pair. So the k-th Psend_init pairs with the peer's
//     k-th Precv_init, as the standard's "order in which the
//     initialization calls are made", whatever order their starts and
//     Preadys come in, for every start of the two requests; a plain send
//     never matches a Precv_init, nor a partitioned send a plain receive,
//     probe or wildcard. The pairing is fixed at initialization with no
//     communication: the numbers are counted on each side (per
//     communicator handle, forgotten when it is freed). A Precv_init with
//     MPI_ANY_SOURCE is MPI_ERR_RANK, with MPI_ANY_TAG MPI_ERR_TAG (the
//     standard allows no wildcards there; MPICH gives the same classes).
//   - Sizes: the two sides may partition differently, but the buffers must
//     be the same size. A send longer than the receive completes the
//     receive with MPI_ERR_TRUNCATE, a shorter one with MPI_ERR_OTHER
//     naming both sizes (MPICH: MPI_ERR_OTHER for both); the send completes
//     without error.
//   - MPI_Start of a partitioned send makes it active with no partition
//     ready; when the last partition is marked ready (MPI_Pready*), the
//     message is packed and sent. Marking a partition twice in one start,
//     or one outside 0..partitions-1, is MPI_ERR_ARG; marking on an
//     inactive request, or on one that is not a partitioned send, is
//     MPI_ERR_REQUEST.
//   - MPI_Start of a partitioned receive posts the receive of the whole
//     buffer; MPI_Parrived reports every partition arrived once the whole
//     message has (and, on an inactive request, as the standard says).
//   - Waiting for a partitioned send whose partitions are not all ready is
//     a deadlock error naming the first one missing, since no other thread
//     can mark it while this one waits; under MPI_THREAD_MULTIPLE the wait
//     is real (another thread may call MPI_Pready; doc.go, "Threads"). A
//     partitioned receive waiting for a send the peer never readies is
//     seen by the runtime's deadlock detection as a receive (its report
//     says "partitioned pair k").
//   - MMDS records each start's send and receive as MPI_Isend and
//     MPI_Irecv, as before.

// partKey is the envelope of partitioned initialization calls that count
// one sequence of pair numbers: communicator (slot and generation, so a
// freed and reused slot starts afresh), direction, peer (after intercomm
// translation) and tag.
type partKey struct {
	ci   int
	gen  uint32
	recv bool
	peer int
	tag  int
}

// partPairs is the last pair number given per envelope.
var partPairs = map[partKey]uint32{}

// partPair gives the next pair number of a's envelope.
func partPair(a p2p, recv bool) uint32 {
	k := partKey{ci: a.ci, gen: comms[a.ci].gen, recv: recv, peer: a.peer, tag: a.tag}
	partPairs[k]++
	return partPairs[k]
}

// partForget drops the pair numbers of communicator slot ci (it is freed).
func partForget(ci int) {
	for k := range partPairs {
		if k.ci == ci {
			delete(partPairs, k)
		}
	}
}

// partSizeMsg explains a partitioned receive whose message is shorter than
// its buffer.
func partSizeMsg(src, tag, sent, room int) string {
	return fmt.Sprintf("the partitioned send from rank %d tag %d is %d bytes and the partitioned receive's buffer %d: the standard wants them the same size (the partitions may differ)", src, tag, sent, room)
}

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
	if recv && peer == C.MPI_ANY_SOURCE {
		return fail(ci, call, errRank, "source = MPI_ANY_SOURCE: a partitioned receive names its source (a rank or MPI_PROC_NULL; the standard allows no wildcard)")
	}
	if recv && t == C.MPI_ANY_TAG {
		return fail(ci, call, errTag, "tag = MPI_ANY_TAG: a partitioned receive names its tag (0..%d; the standard allows no wildcard)", mpiapi.TagUB)
	}
	if rc := initSend(call, buf, C.MPI_Count(int64(parts)*int64(count)), dt, peer, t, commH, out, recv, sendPartitioned); rc != 0 {
		return rc
	}
	_, i, _ := splitHandle(uintptr(*out))
	p := reqs[i].persist
	p.parts = int(parts)
	p.a.pair = partPair(p.a, recv)
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

// startPartitioned starts a partitioned request. A receive posts the
// receive of its pair; a send becomes active with no partition ready: a
// local request that is not done stands for it until the last Pready.
func startPartitioned(e *reqEntry, p *persistent) C.int {
	if p.recv {
		p.a.fill()
		e.unpack = p.a.unpacker()
		if p.a.c == nil {
			e.loc = localRecv(p.call, p.a)
			return 0
		}
		sign(nil, &p.a) // sig.go
		var err error
		e.r, err = mpiapi.PrecvBytes(p.a.c, p.a.buf, reduce.Uint8, p.a.peer, p.a.tag, p.a.pair)
		return failErr(e.comm, err)
	}
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
	e.r, err = mpiapi.PsendBytes(p.a.c, p.a.buf, reduce.Uint8, p.a.peer, p.a.tag, p.a.pair)
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
