package main

/*
#include "shim.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"os"
	"unsafe"

	"github.com/bcsmpi/bcsmpi/mpiapi"
)

// The standard ABI's error classes used by this package.
const (
	errBuffer      = 1
	errCount       = 2
	errType        = 3
	errTag         = 4
	errComm        = 5
	errRank        = 6
	errRequest     = 7
	errRoot        = 8
	errGroup       = 9
	errOp          = 10
	errTopology    = 11
	errDims        = 12
	errArg         = 13
	errTruncate    = 15
	errOther       = 16
	errIntern      = 17
	errInfo        = 34
	errKeyval      = 36
	errUnsupported = 55
)

// abiClasses maps an error class name to the standard's number.
var abiClasses = func() map[string]int {
	m := map[string]int{}
	for i := 0; ; i++ {
		n := C.bcs_class_name(C.int(i))
		if n == nil {
			return m
		}
		m[C.GoString(n)] = i
	}
}()

// abiClass is the standard's number for one of mpiapi's classes (they are
// matched by name, so a class mpiapi adds later maps without a change here);
// a class the standard lacks (MPI_ERR_NOT_INITIALIZED) is MPI_ERR_OTHER.
func abiClass(c mpiapi.Class) int {
	if n, ok := abiClasses[c.String()]; ok {
		return n
	}
	return errOther
}

// errhandler is the error handler in force for communicator slot ci.
func errhandler(ci int) uintptr {
	if ci >= 0 && ci < len(comms) && comms[ci].live {
		return comms[ci].errh
	}
	if len(comms) > 0 {
		return comms[0].errh
	}
	return hErrhFatal
}

// raise applies communicator ci's error handler to an error of class: under
// MPI_ERRORS_RETURN it returns the class, under MPI_ERRORS_ARE_FATAL and
// MPI_ERRORS_ABORT it prints text and ends the process (bcsrun then aborts
// the job).
func raise(ci int, class int, text string) C.int {
	if argErrh != 0 {
		return raiseWith(argErrh, hCommNull, class, text)
	}
	return raiseWith(errhandler(ci), commHandle(ci), class, text)
}

// argErrh, when set, is the error handler of every error raised: the
// errhandler argument of MPI_Comm_create_from_group and
// MPI_Intercomm_create_from_groups, which have no communicator yet (the
// handler gets MPI_COMM_NULL). withErrh sets it for the call's duration.
var argErrh uintptr

func withErrh(eh uintptr) func() {
	argErrh = eh
	return func() { argErrh = 0 }
}

// errhArg checks the errhandler argument of call (MPI_ERRHANDLER_NULL
// meaning MPI_ERRORS_ARE_FATAL) and makes it the handler of every error
// raised until the returned function is called (withErrh); it returns the
// handler too, for the object the call makes.
func errhArg(call string, errh C.uintptr_t) (uintptr, func(), C.int) {
	eh := uintptr(errh)
	if eh == hErrhNull {
		eh = hErrhFatal
	}
	if !validErrhandler(eh) {
		return 0, nil, fail(0, call, errArg, "errhandler = %s, want MPI_ERRORS_ARE_FATAL, MPI_ERRORS_RETURN, MPI_ERRORS_ABORT or a user handler", describe(eh))
	}
	return eh, withErrh(eh), 0
}

// raiseWith applies error handler eh of the object obj (a communicator or
// a window, passed to a user handler) to an error of class.
func raiseWith(eh, obj uintptr, class int, text string) C.int {
	if eh == hErrhReturn {
		return C.int(class)
	}
	if kind, i, _ := splitHandle(eh); kind == kindErrh && i < len(userErrhandlers) {
		C.bcs_call_errhandler(userErrhandlers[i], C.uintptr_t(obj), C.int(class))
		return C.int(class)
	}
	C.bcs_flush()
	fmt.Fprintf(os.Stderr, "bcsmpi: %s (MPI_ERRORS_ARE_FATAL: aborting the job)\n", text)
	os.Exit(1)
	return C.int(class)
}

// fail raises an error found by this package.
func fail(ci int, call string, class int, format string, a ...any) C.int {
	name := C.GoString(C.bcs_class_name(C.int(class)))
	return raise(ci, class, fmt.Sprintf("rank %d: %s: %s: %s", worldRank, call, name, fmt.Sprintf(format, a...)))
}

// failErr raises an error returned by mpiapi (nil is success).
func failErr(ci int, err error) C.int {
	if err == nil {
		return 0
	}
	var e *mpiapi.Error
	if errors.As(err, &e) {
		return raise(ci, abiClass(e.Class), e.Error())
	}
	return raise(ci, errIntern, fmt.Sprintf("rank %d: %v", worldRank, err))
}

// bcs_error raises an error found by the C shim.
//
//export bcs_error
func bcs_error(commHandle C.uintptr_t, call *C.char, class C.int, msg *C.char) C.int {
	ci := 0
	switch uintptr(commHandle) {
	case hCommSelf:
		ci = 1
	default:
		if kind, i, gen := splitHandle(uintptr(commHandle)); kind == kindComm && i < len(comms) && comms[i].gen == gen {
			ci = i
		}
	}
	return fail(ci, C.GoString(call), int(class), "%s", C.GoString(msg))
}

// bcs_null_arg is the error of a NULL output argument (shim.c NONNULL):
// first the check every call makes (enter), then MPI_ERR_ARG naming it.
//
//export bcs_null_arg
func bcs_null_arg(commHandle C.uintptr_t, call *C.char, msg *C.char) C.int {
	if rc := enter(C.GoString(call)); rc != 0 {
		return rc
	}
	return bcs_error(commHandle, call, C.MPI_ERR_ARG, msg)
}

// enter checks that MPI is initialised and not finalised.
func enter(call string) C.int {
	if sessionsLive > 0 { // session.go: a session keeps the library usable without (or after) MPI_Init
		if winsLive > 0 {
			rmaProgress()
		}
		return 0
	}
	if C.bcs_initialized == 0 {
		return fail(-1, call, errOther, "MPI_Init has not been called")
	}
	if C.bcs_finalized != 0 {
		return fail(-1, call, errOther, "called after MPI_Finalize")
	}
	if winsLive > 0 {
		rmaProgress() // rma.go: every call serves one-sided operations
	}
	return 0
}

// User error handlers (MPI_Comm_create_errhandler) are C functions the shim
// calls; their handles are kindErrh|index and are never reused, so a
// communicator keeps its handler after MPI_Errhandler_free, as the standard
// requires.
const kindErrh = 4

var userErrhandlers []unsafe.Pointer

// commHandle is the handle of communicator slot ci.
func commHandle(ci int) uintptr {
	switch {
	case ci == 1:
		return hCommSelf
	case ci > 1 && ci < len(comms):
		return userHandle(kindComm, ci, comms[ci].gen)
	}
	return hCommWorld
}

// validErrhandler reports whether h can be set on a communicator.
func validErrhandler(h uintptr) bool {
	switch h {
	case hErrhFatal, hErrhReturn, hErrhAbort:
		return true
	}
	kind, i, _ := splitHandle(h)
	return kind == kindErrh && i < len(userErrhandlers)
}

//export bcs_comm_create_errhandler
func bcs_comm_create_errhandler(fn unsafe.Pointer, out *C.uintptr_t) C.int {
	const call = "MPI_Comm_create_errhandler"
	if fn == nil {
		return fail(0, call, errArg, "comm_errhandler_fn = NULL, want a function")
	}
	userErrhandlers = append(userErrhandlers, fn)
	*out = C.uintptr_t(userHandle(kindErrh, len(userErrhandlers)-1, 0))
	return 0
}

//export bcs_errhandler_free
func bcs_errhandler_free(h *C.uintptr_t) C.int {
	if !validErrhandler(uintptr(*h)) {
		return fail(0, "MPI_Errhandler_free", errArg, "errhandler = %s is not an error handler", describe(uintptr(*h)))
	}
	*h = hErrhNull
	return 0
}

//export bcs_comm_call_errhandler
func bcs_comm_call_errhandler(h C.uintptr_t, code C.int) C.int {
	const call = "MPI_Comm_call_errhandler"
	ci, rc := enterComm(call, uintptr(h))
	if rc != 0 {
		return rc
	}
	raise(ci, int(code), fmt.Sprintf("rank %d: %s: error code %d raised by the program", worldRank, call, int(code)))
	return 0
}
