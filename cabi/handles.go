package main

/*
#include "shim.h"
*/
import "C"

import (
	"fmt"

	"github.com/bcsmpi/bcsmpi/mpiapi"
)

// Predefined handle values of the standard ABI that the Go side tests.
const (
	hCommNull   = 0x100
	hCommWorld  = 0x101
	hCommSelf   = 0x102
	hErrhNull   = 0x140
	hErrhFatal  = 0x141
	hErrhReturn = 0x142
	hErrhAbort  = 0x143
	hReqNull    = 0x180
	hTypeNull   = 0x200
	hOpNull     = 0x20
	hInPlace    = 1 // MPI_IN_PLACE as an address
)

// User handles: kind<<48 | generation<<24 | index. Kind is never 0, so a
// user handle is always above the predefined range (< 0x1000), and a freed
// handle (its slot's generation moved on) or a handle of another kind is
// told apart exactly.
const (
	kindComm = 1
	kindReq  = 2
	genMask  = 1<<24 - 1
)

func userHandle(kind, idx int, gen uint32) uintptr {
	return uintptr(kind)<<48 | uintptr(gen&genMask)<<24 | uintptr(idx)
}

func splitHandle(h uintptr) (kind, idx int, gen uint32) {
	return int(h >> 48), int(h & genMask), uint32(h>>24) & genMask
}

// commEntry is a communicator slot. Slot 0 is MPI_COMM_WORLD, slot 1
// MPI_COMM_SELF. A nil c is a local communicator of one process
// (MPI_COMM_SELF, or the world of a singleton) whose collectives are copies.
type commEntry struct {
	c     *mpiapi.Comm
	errh  uintptr
	gen   uint32
	live  bool
	inter *interComm // an intercommunicator (inter.go); c is then its union
}

// reqEntry is a request slot: a request of the runtime (r), or one on a
// local communicator (loc).
type reqEntry struct {
	r       *mpiapi.Request
	loc     *localReq
	persist *persistent // a persistent request (Send_init, Recv_init); active while r or loc is set
	comm    int
	gen     uint32
	live    bool
	mark    uint64          // the array call that last saw this slot (duplicate check)
	unpack  func(bytes int) // run at completion: a packed receive unpacks (datatype.go)
	also    *mpiapi.Request // MPI_Isendrecv: its send, while it runs (r is its receive; isendrecv.go)
	alsoErr error           // the send's error, once it completed
}

var (
	comms     []commEntry
	freeComms []int
	reqs      []reqEntry
	freeReqs  []int
	singleton bool
	worldRank = -1
)

func newComm(c *mpiapi.Comm, errh uintptr) uintptr {
	var i int
	if n := len(freeComms); n > 0 {
		i, freeComms = freeComms[n-1], freeComms[:n-1]
	} else {
		i = len(comms)
		comms = append(comms, commEntry{})
	}
	e := &comms[i]
	e.c, e.errh, e.live, e.inter = c, errh, true, nil
	return userHandle(kindComm, i, e.gen)
}

func freeComm(i int) {
	e := &comms[i]
	e.c, e.live, e.inter = nil, false, nil
	e.gen = (e.gen + 1) & genMask
	delete(commBufs, i) // its attached buffer, if any (bsend.go)
	partForget(i)       // its partitioned pair numbers (partition.go)
	delete(commSess, i) // the session it came from (session.go)
	freeComms = append(freeComms, i)
}

func newReq(r *mpiapi.Request, loc *localReq, comm int) uintptr {
	var i int
	if n := len(freeReqs); n > 0 {
		i, freeReqs = freeReqs[n-1], freeReqs[:n-1]
	} else {
		i = len(reqs)
		reqs = append(reqs, reqEntry{})
	}
	e := &reqs[i]
	e.r, e.loc, e.comm, e.live = r, loc, comm, true
	return userHandle(kindReq, i, e.gen)
}

func freeReq(i int) {
	e := &reqs[i]
	e.r, e.loc, e.persist, e.unpack, e.live = nil, nil, nil, nil, false
	e.also, e.alsoErr = nil, nil
	e.gen = (e.gen + 1) & genMask
	freeReqs = append(freeReqs, i)
}

// describe names a handle value for an error message.
func describe(h uintptr) string {
	if t := C.bcs_type_of(C.uintptr_t(h)); t != nil {
		return fmt.Sprintf("%s (0x%x, a datatype)", C.GoString(t.name), h)
	}
	if o, ok := ops[h]; ok {
		return fmt.Sprintf("%s (0x%x, an operation)", o, h)
	}
	switch h {
	case 0:
		return "NULL"
	case hCommNull:
		return "MPI_COMM_NULL"
	case hCommWorld:
		return "MPI_COMM_WORLD"
	case hCommSelf:
		return "MPI_COMM_SELF"
	case hReqNull:
		return "MPI_REQUEST_NULL"
	case hTypeNull:
		return "MPI_DATATYPE_NULL"
	case hOpNull:
		return "MPI_OP_NULL"
	case hGroupNull:
		return "MPI_GROUP_NULL"
	case hGroupEmpty:
		return "MPI_GROUP_EMPTY"
	case hErrhNull:
		return "MPI_ERRHANDLER_NULL"
	case hErrhFatal:
		return "MPI_ERRORS_ARE_FATAL"
	case hErrhReturn:
		return "MPI_ERRORS_RETURN"
	case hErrhAbort:
		return "MPI_ERRORS_ABORT"
	case hFileNull:
		return "MPI_FILE_NULL"
	}
	switch kind, _, _ := splitHandle(h); kind {
	case kindComm:
		return fmt.Sprintf("0x%x (a communicator)", h)
	case kindReq:
		return fmt.Sprintf("0x%x (a request)", h)
	case kindGroup:
		return fmt.Sprintf("0x%x (a group)", h)
	case kindErrh:
		return fmt.Sprintf("0x%x (an error handler)", h)
	case kindOp:
		return fmt.Sprintf("0x%x (a user operation)", h)
	case kindType:
		return describeType(h)
	case kindFile:
		return fmt.Sprintf("0x%x (a file)", h)
	}
	return fmt.Sprintf("0x%x", h)
}

// comm resolves a communicator handle to its slot.
// enterComm is enter (MPI is initialized and not finalized) followed by
// comm: the prologue of every call on a communicator.
func enterComm(call string, h uintptr) (int, C.int) {
	if rc := enter(call); rc != 0 {
		return 0, rc
	}
	return comm(call, h)
}

func comm(call string, h uintptr) (int, C.int) {
	switch h {
	case hCommWorld:
		return 0, 0
	case hCommSelf:
		return 1, 0
	case hCommNull:
		return -1, fail(0, call, errComm, "comm = MPI_COMM_NULL, want a communicator such as MPI_COMM_WORLD")
	}
	kind, i, gen := splitHandle(h)
	if kind == kindComm && i < len(comms) {
		if e := &comms[i]; e.live && e.gen == gen {
			return i, 0
		}
		return -1, fail(0, call, errComm, "comm = %s was freed with MPI_Comm_free", describe(h))
	}
	return -1, fail(0, call, errComm, "comm = %s is not a communicator", describe(h))
}

// req resolves a request handle to its slot; MPI_REQUEST_NULL gives -1
// and no error.
func req(call string, h uintptr) (int, C.int) {
	if h == hReqNull {
		return -1, 0
	}
	kind, i, gen := splitHandle(h)
	if kind == kindReq && i < len(reqs) {
		if e := &reqs[i]; e.live && e.gen == gen {
			return i, 0
		}
		return -1, fail(0, call, errRequest, "request = %s was already completed or freed", describe(h))
	}
	return -1, fail(0, call, errRequest, "request = %s is not a request", describe(h))
}

// inactive reports whether slot i is a persistent request not started (it
// behaves as MPI_REQUEST_NULL in Wait and Test).
func (e *reqEntry) inactive() bool { return e.persist != nil && e.r == nil && e.loc == nil }
