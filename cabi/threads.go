package main

/*
#include "shim.h"
*/
import "C"

import (
	"os"
	"runtime"

	"github.com/bcsmpi/bcsmpi/mpiapi"
)

// Threads (doc.go, "Threads"): under MPI_THREAD_MULTIPLE every call that
// reaches Go holds the shim's call lock (shim.h BCS_LOCKED), and mpiapi
// releases it while a blocked call sleeps (mpiapi threads.go).

// threadLevel is the level MPI_Init_thread, MPI_T_init_thread and a
// session provide for required: what was asked, up to
// MPI_THREAD_MULTIPLE, except in a deterministic, recorded or replayed job
// (MPI_THREAD_SERIALIZED at most: the order of calls between threads is
// not the program's).
func threadLevel(required C.int) C.int {
	if required >= C.MPI_THREAD_MULTIPLE && !mpiapi.ThreadsAllowed() {
		return C.MPI_THREAD_SERIALIZED
	}
	return min(required, C.MPI_THREAD_MULTIPLE)
}

// startThreads turns the call lock on once MPI_THREAD_MULTIPLE is provided
// (it stays on: a later call of another model may run beside it). The
// caller is the only thread in the library (MPI_Init_thread, or the first
// session).
func startThreads(provided C.int) {
	if provided < C.MPI_THREAD_MULTIPLE || C.bcs_mt != 0 {
		return
	}
	// A thread sleeping in a blocked call keeps one of the Go runtime's
	// processors until its monitor takes it back: with one, every other
	// thread's call would wait for that (up to 10 ms).
	if os.Getenv("GOMAXPROCS") == "" {
		runtime.GOMAXPROCS(max(runtime.GOMAXPROCS(0), 4))
	}
	mpiapi.SetThreaded(
		func() int { return int(C.bcs_mt_release()) },
		func(d int) { C.bcs_mt_reacquire(C.int(d)) },
		func(n int) { C.bcs_mt_waiters = C.int(n) })
	C.bcs_mt = 1
}

//export bcs_mt_kick
func bcs_mt_kick() { mpiapi.Kick() }
