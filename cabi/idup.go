package main

/*
#include "shim.h"
*/
import "C"

import (
	"unsafe"

	"github.com/bcsmpi/bcsmpi/mpiapi"
)

// MPI_Comm_idup and MPI_Comm_idup_with_info: a nonblocking duplicate.
//
// The call posts the runtime's duplicate collective (mpiapi Comm.Idup) and
// returns; the new communicator is made when the request completes, in the
// Wait, Test, array call or MPI_Request_get_status that first sees it
// complete, and only then is *newcomm written. Several duplicates may be
// outstanding at once, of the same or different parents, overlapped with
// other collectives, and completed in any order: each is matched across
// the members by its place among the collectives on the parent, as MPI
// requires every member to start them in the same order.
//
// As MPI 5.0 §7.4.2 says, the result is as if MPI_Comm_dup had run when
// MPI_Comm_idup was called: the attribute copy callbacks run in the call,
// on the attributes the parent has then, and the duplicate gets the
// parent's error handler and topology of that moment. When a copy callback
// fails, the call raises its code with *newcomm = MPI_COMM_NULL and
// *request = MPI_REQUEST_NULL, and the duplicate still completes in the
// background, so the other members' requests complete (it is then
// released on this rank alone, as MPI_Comm_dup does). When the callback
// fails on some members only, the others keep a duplicate this rank never
// had: a collective on it, their MPI_Comm_free included, then waits for
// this rank, and the deadlock detector reports it (MPICH hangs in the
// idup itself).
//
// An intercommunicator's duplicate is three duplicates started together:
// two of the hidden union (the new union, and the new union's private
// copy for the collectives) and one of the local group's communicator; the
// request completes when all three have.

// idupParts is what an idup keeps from its call until its completion.
type idupParts struct {
	ci    int // the parent's slot (for errors; it may be freed meanwhile)
	errh  uintptr
	attrs []attr
	cart  *cart
	graph *graphTopo
	out   *C.uintptr_t
	// An intercommunicator: the parent's groups and the three duplicates.
	inter              *interComm
	union, coll, local *mpiapi.Request
}

//export bcs_comm_idup
func bcs_comm_idup(h C.uintptr_t, out *C.uintptr_t, request *C.uintptr_t) C.int {
	return commIdup("MPI_Comm_idup", h, hInfoNull, out, request)
}

// bcs_comm_idup_with_info is MPI_Comm_idup_with_info (the hints are
// checked and used by none, as for MPI_Comm_dup_with_info).
//
//export bcs_comm_idup_with_info
func bcs_comm_idup_with_info(h, info C.uintptr_t, out *C.uintptr_t, request *C.uintptr_t) C.int {
	return commIdup("MPI_Comm_idup_with_info", h, uintptr(info), out, request)
}

// commIdup starts the duplicate before it checks the arguments a member
// may get wrong alone (dupArgs, comm.go): on such an error this member's
// duplicate is discarded, as when a copy callback fails.
func commIdup(call string, h C.uintptr_t, info uintptr, out *C.uintptr_t, request *C.uintptr_t) C.int {
	ci, rc := enterComm(call, uintptr(h))
	if rc != 0 {
		return rc
	}
	var argRC C.int // raised now, returned once the duplicate is started and discarded
	if request == nil {
		argRC = dupArgs(call, ci, info, nil, "request")
	} else {
		argRC = dupArgs(call, ci, info, unsafe.Pointer(out), "newcomm")
	}
	var tmpOut, tmpReq C.uintptr_t
	userOut, userReq := out, request
	if out == nil {
		out = &tmpOut
	}
	if request == nil {
		request = &tmpReq
	}
	e := comms[ci]
	k := &idupParts{ci: ci, errh: e.errh, cart: carts[ci], graph: graphs[ci], out: out, inter: e.inter}
	crc := argRC
	if crc == 0 {
		k.attrs, crc = copiedAttrs(call, ci) // attr.go: as if duplicated now
	}
	var r *mpiapi.Request
	var err error
	switch {
	case e.inter != nil:
		r, err = k.startInter(call)
	case e.c != nil:
		r, err = e.c.Idup()
	}
	if err != nil {
		return failErr(ci, err)
	}
	if crc != 0 { // a bad argument or a copy callback failed: the call fails, the duplicate completes in the background
		for _, q := range []*mpiapi.Request{r, k.union, k.coll, k.local} {
			q.Discard()
		}
		setOut(userOut, hCommNull)
		setOut(userReq, hReqNull)
		return crc
	}
	if r == nil { // a local communicator: its duplicate is made at once
		*request = C.uintptr_t(newReq(nil, &localReq{ci: ci, done: true, source: mpiapi.AnySource, rtag: mpiapi.AnyTag}, ci))
	} else {
		*request = C.uintptr_t(newReq(r, nil, ci))
	}
	reqs[slotOf(uintptr(*request))].unpack = func(int) { k.finish(r) }
	return 0
}

// startInter posts the three duplicates of an intercommunicator and
// returns a request that completes when they all have.
func (k *idupParts) startInter(call string) (*mpiapi.Request, error) {
	ic := k.inter
	var err error
	if k.union, err = comms[ic.union].c.Idup(); err != nil {
		return nil, err
	}
	if k.coll, err = comms[ic.union].c.Idup(); err != nil {
		k.union.Discard()
		return nil, err
	}
	rs := []*mpiapi.Request{k.union, k.coll}
	if l := comms[ic.local].c; l != nil {
		if k.local, err = l.Idup(); err != nil {
			k.union.Discard()
			k.coll.Discard()
			return nil, err
		}
		rs = append(rs, k.local)
	}
	w, err := mpiapi.Watch(call, rs)
	if err != nil {
		for _, q := range rs {
			q.Discard()
		}
	}
	return w, err
}

// finish makes the communicator of a completed idup (r nil: of a local
// communicator) and writes its handle to the caller's newcomm.
func (k *idupParts) finish(r *mpiapi.Request) {
	*k.out = hCommNull
	var nh uintptr
	switch {
	case k.inter != nil:
		var made [3]*mpiapi.Comm
		var ferr error
		for j, q := range []*mpiapi.Request{k.union, k.coll, k.local} {
			if q == nil {
				continue
			}
			if _, err := mpiapi.Wait(q); err != nil && ferr == nil { // complete: retires it
				ferr = err
			}
			made[j] = q.Comm()
		}
		if ferr != nil || made[0] == nil || made[1] == nil || (k.local != nil && made[2] == nil) {
			for _, c := range made {
				if c != nil {
					c.Forget()
				}
			}
			if ferr == nil {
				return
			}
			ci := k.ci
			if ci >= len(comms) || !comms[ci].live {
				ci = 0
			}
			failErr(ci, ferr)
			return
		}
		ic := k.inter
		local := slotOf(newComm(made[2], k.errh))
		nh = newInterOf(made[0], made[1], local, ic.lranks, ic.rranks, ic.loff == 0, k.errh)
	case r != nil:
		nc := r.Comm()
		if nc == nil { // failed: Wait or Test reports the request's error
			return
		}
		nh = newComm(nc, k.errh)
	default:
		nh = newComm(nil, k.errh)
	}
	if len(k.attrs) > 0 {
		attrs[nh] = k.attrs
	}
	_, i, _ := splitHandle(nh) // a duplicate keeps the topology
	if k.cart != nil {
		carts[i] = k.cart
	}
	if k.graph != nil {
		graphs[i] = k.graph
	}
	*k.out = C.uintptr_t(nh)
}
