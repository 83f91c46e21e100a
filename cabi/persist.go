package main

/*
#include "shim.h"
*/
import "C"

import "github.com/bcsmpi/bcsmpi/mpiapi"

// Persistent collectives (MPI 4: MPI_Barrier_init, MPI_Bcast_init, ...,
// MPI_Neighbor_alltoallw_init and their _c forms). The init call checks
// every argument as the collective itself would (the entry runs with
// C.BCS_PERSIST|C.BCS_RUN and no request, and stops before starting
// anything) and makes an inactive
// persistent request that remembers the call. MPI_Start and MPI_Startall
// run it as the non-blocking collective (the entry again, with C.BCS_RUN),
// so each start reads the buffers and the count and displacement arrays
// anew, as the standard lets the program change the data (not the
// arguments) between starts; Wait and Test complete it and leave it
// inactive, ready for the next start; MPI_Request_free frees it. Starting
// an active one is MPI_ERR_REQUEST naming it (wait.go). Each start is
// recorded by the MMDS as the non-blocking collective (MPI_Ibcast, ...).
// A datatype freed between init and start is refused at the start.
//
// The starts match in the order of the init calls, not of the starts (MPI
// 4.0 §6.13: the inits are collective and ordered, and members may start
// the requests in different orders): the init takes a persistent view of
// the communicator the collective runs on (mpiapi.Comm.Persistent: the
// communicator itself, or an intercommunicator's hidden duplicate of its
// union), and each start runs inside mpiapi.RunPersistent with it, so that
// its runtime collectives match those of the same init and start on the
// other members, apart from the communicator's other collectives.

// isInit reports whether mode is an MPI_X_init call (not one of its starts).
func isInit(mode C.int) bool { return mode&(C.BCS_PERSIST|C.BCS_RUN) == C.BCS_PERSIST }

// persistColl makes the persistent request of collective which, after
// checking its arguments with run (the entry itself).
func persistColl(which C.int, h C.uintptr_t, out *C.uintptr_t, mode C.int, run func(out *C.uintptr_t, mode C.int) C.int) C.int {
	return persistNamed(collName(int(which), false, mode), h, out, mode, run)
}

func persistNamed(name string, h C.uintptr_t, out *C.uintptr_t, mode C.int, run func(out *C.uintptr_t, mode C.int) C.int) C.int {
	if rc := enter(name); rc != 0 {
		return rc
	}
	ci, rc := comm(name, uintptr(h))
	if rc != 0 {
		return rc
	}
	// The init takes its index even when its arguments are refused, so
	// that a member whose call fails (a bad argument only it passed) keeps
	// the same count as the others.
	base := comms[ci].c
	if ic := comms[ci].inter; ic != nil {
		base = comms[ic.coll].c // inter.go: the collectives run on union's duplicate
	}
	var view *mpiapi.Comm
	if base != nil { // nil: a one-process communicator, whose collectives are copies
		view = base.Persistent()
	}
	if out == nil {
		return fail(ci, name, errArg, "request = NULL")
	}
	if rc := run(nil, mode|C.BCS_RUN); rc != 0 { // the checks only: no request to start into
		return rc
	}
	i := newReq(nil, nil, ci)
	_, slot, _ := splitHandle(i)
	reqs[slot].persist = &persistent{call: name, view: view, coll: func(o *C.uintptr_t) C.int { return run(o, mode|C.BCS_RUN) }}
	*out = C.uintptr_t(i)
	return 0
}

// startColl starts the persistent collective in slot i: the non-blocking
// collective runs into a request of its own, whose runtime request (or
// local completion) and unpacking move into slot i.
func startColl(i int, p *persistent) C.int {
	var tmp C.uintptr_t
	rc := C.int(0)
	mpiapi.RunPersistent(p.view, func() { rc = p.coll(&tmp) })
	if rc != 0 {
		return rc
	}
	_, j, _ := splitHandle(uintptr(tmp))
	e, t := &reqs[i], &reqs[j] // after p.coll: newReq may have grown reqs
	e.r, e.loc, e.unpack = t.r, t.loc, t.unpack
	t.r, t.loc, t.unpack = nil, nil, nil
	freeReq(j)
	return 0
}
