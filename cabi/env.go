package main

/*
#include "shim.h"
*/
import "C"

import (
	"fmt"
	"os"
	"runtime"
	"strconv"

	"github.com/bcsmpi/bcsmpi/internal/jobenv"
	"github.com/bcsmpi/bcsmpi/mpiapi"
)

// node is the (logical) node holding this rank: the ranks of one node share
// its shared-memory region (MPI_COMM_TYPE_SHARED).
var node int

//export bcs_init
func bcs_init(required C.int) C.int {
	const call = "MPI_Init"
	if C.bcs_initialized != 0 || C.bcs_finalized != 0 {
		return fail(-1, call, errOther, "MPI is already initialised (MPI_Init may be called once)")
	}
	switch required {
	case C.MPI_THREAD_SINGLE, C.MPI_THREAD_FUNNELED, C.MPI_THREAD_SERIALIZED, C.MPI_THREAD_MULTIPLE:
	default:
		return fail(-1, call, errArg, "required = %d, want MPI_THREAD_SINGLE (0), MPI_THREAD_FUNNELED (1024), MPI_THREAD_SERIALIZED (2048) or MPI_THREAD_MULTIPLE (4096)", int(required))
	}
	if rc := startRuntime(call); rc != 0 {
		return rc
	}
	// Calls may come from any thread, under MULTIPLE at the same time (doc.go, "Threads").
	C.bcs_thread_level = threadLevel(required)
	startThreads(C.bcs_thread_level)
	return 0
}

// Runtime: the library attaches to bcsrun's job (mpiapi.Init) once per
// process, at MPI_Init or at the first MPI_Session_init, whichever comes
// first, and detaches (mpiapi.Finalize, local) once neither model needs it:
// at MPI_Finalize if no session is live, else when the last session is
// finalized after MPI_Finalize; a process that finalizes its sessions and
// never called MPI_Init detaches at exit (session.go), so it may start
// another session in between.
var runtimeUp, runtimeDown bool

func startRuntime(call string) C.int {
	if runtimeUp {
		return 0
	}
	if runtimeDown {
		return fail(-1, call, errOther, "bcsmpi's runtime was already finalized in this process (MPI_Finalize, or the end of its last session after MPI_Finalize); it starts once per process")
	}
	// A rank's Go runtime only serves calls; keep its housekeeping off the
	// program's cores unless the user asked otherwise.
	// Under MPI_THREAD_MULTIPLE (already on when MPI_T_init_thread asked
	// for it first) the threads need more (startThreads says why).
	if os.Getenv("GOMAXPROCS") == "" {
		if C.bcs_mt != 0 {
			runtime.GOMAXPROCS(max(runtime.GOMAXPROCS(0), 4))
		} else {
			runtime.GOMAXPROCS(1)
		}
	}
	errh := uintptr(hErrhFatal)
	if os.Getenv("BCS_ERRORS") == "return" {
		errh = hErrhReturn
	}
	// This package applies the error handlers itself, per communicator.
	mpiapi.SetErrhandler(mpiapi.ErrorsReturn)
	comms = append(comms[:0], commEntry{errh: errh, live: true}, commEntry{errh: errh, live: true})
	if os.Getenv(jobenv.VarShmFD) == "" {
		singleton = true
		worldRank = 0
		C.bcs_world_rank, C.bcs_world_size = 0, 1
	} else {
		if err := mpiapi.Init(); err != nil {
			return failErr(0, err)
		}
		w := mpiapi.World()
		comms[0].c = w
		node = w.Rank() // a rank alone, unless bcsrun says which node holds it
		if v, err := strconv.Atoi(os.Getenv("BCS_NODE")); err == nil && v >= 0 {
			node = v
		}
		worldRank = w.Rank()
		C.bcs_world_rank, C.bcs_world_size = C.int(w.Rank()), C.int(w.Size())
	}
	runtimeUp = true
	tRefresh() // mpit.go: the MPI_T variables MPI_Init makes known
	return 0
}

//export bcs_finalize
func bcs_finalize() C.int {
	const call = "MPI_Finalize"
	if rc := enter(call); rc != 0 {
		return rc
	}
	if sessionsLive > 0 { // session.go: the runtime stays until the last one ends
		return 0
	}
	return stopRuntime(call)
}

// stopRuntime detaches from the job: windows, pending requests and
// buffered sends first.
func stopRuntime(call string) C.int {
	if !runtimeUp {
		return 0
	}
	if rc := finalizeWindows(); rc != 0 { // rma.go
		return rc
	}
	finalizeFiles()                // file.go
	for k, o := range builtinOps { // ops.go
		o.Free()
		delete(builtinOps, k)
	}
	for _, o := range retiredOps { // ops.go: user operations freed by MPI_Op_free
		o.Free()
	}
	retiredOps = nil
	pending := 0
	for i := range reqs {
		if reqs[i].live && !reqs[i].inactive() {
			pending++
		}
	}
	if singleton {
		if pending > 0 {
			return fail(0, call, errRequest, "%d requests still pending; wait for them before MPI_Finalize", pending)
		}
		runtimeUp, runtimeDown = false, true
		return 0
	}
	if err := bsendWait(nil); err != nil {
		return failErr(0, err)
	}
	if len(detached) > 0 {
		err := mpiapi.Waitall(detached...)
		detached = nil
		if err != nil {
			return failErr(0, err)
		}
	}
	runtimeUp, runtimeDown = false, true
	return failErr(0, mpiapi.Finalize())
}

//export bcs_abort
func bcs_abort(commHandle C.uintptr_t, code C.int) {
	if singleton || !runtimeUp {
		fmt.Fprintf(os.Stderr, "bcsmpi: rank %d called MPI_Abort with code %d\n", max(worldRank, 0), int(code))
		if code == 0 {
			code = 1
		}
		os.Exit(int(code))
	}
	mpiapi.Abort(mpiapi.World(), int(code))
}
