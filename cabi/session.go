package main

/*
#include "shim.h"
*/
import "C"

import (
	"fmt"
	"slices"
	"strings"
	"unsafe"

	"github.com/bcsmpi/bcsmpi/mpiapi"
)

// Sessions (MPI-4, MPI_Session_*): a session is a local handle that keeps
// the library usable (see startRuntime in env.go) and names two process
// sets, "mpi://WORLD" (every process of the bcsrun job) and "mpi://SELF"
// (the caller). Groups come from MPI_Group_from_session_pset; communicators
// from MPI_Comm_create_from_group, which the group's members alone call
// (mpiapi.CreateFromGroup: a runtime group creation under the world,
// keyed by the string tag). Sessions and the world model coexist: either
// may start first, and the runtime detaches once neither needs it.

const kindSession = 21

type sessionEntry struct {
	live   bool
	gen    uint32
	errh   uintptr
	thread string // the thread level granted, as the "thread_level" info value
	buf    *bbuf  // MPI_Session_attach_buffer's (bsend.go uses it after the communicator's)
}

var (
	sessions     []sessionEntry
	sessionsLive int
	// commSess is the session a communicator was made from (slot + 1), for
	// buffered sends; groupSess likewise for the groups of a session.
	commSess   = map[int]int{}
	groupSess  = map[int]int{}
	stopAtExit bool // the last session ended without the world model: detach at exit
)

const hSessionNull = 0x120

var psets = []string{"mpi://WORLD", "mpi://SELF"}

// session resolves a session handle to its slot.
func session(call string, h C.uintptr_t) (int, C.int) {
	if uintptr(h) == hSessionNull {
		return -1, fail(0, call, errSession, "session = MPI_SESSION_NULL, want one from MPI_Session_init")
	}
	kind, i, gen := splitHandle(uintptr(h))
	if kind == kindSession && i < len(sessions) {
		if e := &sessions[i]; e.live && e.gen == gen {
			return i, 0
		}
		return -1, fail(0, call, errSession, "session = 0x%x was finalized with MPI_Session_finalize", uintptr(h))
	}
	return -1, fail(0, call, errSession, "session = %s is not a session", describe(uintptr(h)))
}

func sessionHandle(i int) uintptr { return userHandle(kindSession, i, sessions[i].gen) }

// sfail raises an error on session i with its error handler.
func sfail(i int, call string, class int, format string, a ...any) C.int {
	name := C.GoString(C.bcs_class_name(C.int(class)))
	return raiseWith(sessions[i].errh, sessionHandle(i), class, fmt.Sprintf("rank %d: %s: %s: %s", worldRank, call, name, fmt.Sprintf(format, a...)))
}

//export bcs_session_init
func bcs_session_init(infoH, errh C.uintptr_t, out *C.uintptr_t) C.int {
	const call = "MPI_Session_init"
	eh := uintptr(errh)
	if eh == hErrhNull {
		eh = hErrhFatal
	}
	if !validErrhandler(eh) {
		return fail(-1, call, errArg, "errhandler = %s, want MPI_ERRORS_ARE_FATAL, MPI_ERRORS_RETURN, MPI_ERRORS_ABORT or one from MPI_Session_create_errhandler", describe(eh))
	}
	if out == nil {
		return raiseWith(eh, hSessionNull, errArg, fmt.Sprintf("rank %d: %s: MPI_ERR_ARG: session = NULL", worldRank, call))
	}
	level := C.int(C.MPI_THREAD_SERIALIZED) // without "thread_level" (threads.go)
	if uintptr(infoH) != hInfoNull {
		e, rc := info(call, uintptr(infoH), false)
		if rc != 0 {
			return rc
		}
		if i := e.find("thread_level"); i >= 0 {
			if l, ok := threadLevelByName(e.vals[i]); ok {
				level = l
			}
		}
	}
	if rc := startRuntime(call); rc != 0 {
		return rc
	}
	level = threadLevel(level)
	if C.bcs_mt != 0 {
		// The process already provides MULTIPLE (MPI_Init_thread,
		// MPI_T_init_thread or an earlier session asked for it): every
		// call takes the call lock, so this session is as safe, and says so
		// (MPI 5.0 "Threads and the Sessions Model": earlier grants may
		// influence a session's).
		level = C.MPI_THREAD_MULTIPLE
	}
	startThreads(level)
	thread := threadLevelName(level)
	C.bcs_fix_sigonstack()
	stopAtExit = false
	i := slices.IndexFunc(sessions, func(e sessionEntry) bool { return !e.live })
	if i < 0 {
		i = len(sessions)
		sessions = append(sessions, sessionEntry{})
	}
	e := &sessions[i]
	e.live, e.errh, e.thread, e.buf = true, eh, thread, nil
	sessionsLive++
	*out = C.uintptr_t(sessionHandle(i))
	return 0
}

//export bcs_session_finalize
func bcs_session_finalize(h *C.uintptr_t) C.int {
	const call = "MPI_Session_finalize"
	if h == nil {
		return fail(0, call, errArg, "session = NULL")
	}
	si, rc := session(call, *h)
	if rc != 0 {
		return rc
	}
	e := &sessions[si]
	if e.buf != nil { // finalizing detaches the session's buffer
		if err := bsendWait(e.buf); err != nil {
			return sfail(si, call, errOther, "%v", err)
		}
	}
	for ci, s := range commSess {
		if s == si+1 {
			delete(commSess, ci)
		}
	}
	for gi, s := range groupSess {
		if s == si+1 {
			delete(groupSess, gi)
		}
	}
	e.live, e.buf = false, nil
	e.gen = (e.gen + 1) & genMask
	sessionsLive--
	*h = hSessionNull
	if sessionsLive == 0 && (C.bcs_initialized == 0 || C.bcs_finalized != 0) {
		if C.bcs_finalized != 0 {
			return stopRuntime(call) // MPI_Finalize came first and left the runtime to us
		}
		if !stopAtExit {
			stopAtExit = true
			C.bcs_register_exit()
		}
	}
	return 0
}

// bcs_session_exit runs at process exit (atexit): a process whose last
// session ended, and that has not started the world model since, detaches
// from the job here, so that it could start another session before.
//
//export bcs_session_exit
func bcs_session_exit() {
	if stopAtExit && sessionsLive == 0 && C.bcs_initialized == 0 && runtimeUp {
		stopRuntime("MPI_Session_finalize")
	}
}

// pset resolves a process set name to its world ranks.
func pset(name string) ([]int, bool) {
	switch {
	case strings.EqualFold(name, psets[0]):
		w := make([]int, int(C.bcs_world_size))
		for i := range w {
			w[i] = i
		}
		return w, true
	case strings.EqualFold(name, psets[1]):
		return []int{worldRank}, true
	}
	return nil, false
}

//export bcs_session_get_num_psets
func bcs_session_get_num_psets(h, infoH C.uintptr_t, n *C.int) C.int {
	const call = "MPI_Session_get_num_psets"
	si, rc := session(call, h)
	if rc != 0 {
		return rc
	}
	if rc := infoArg(call, uintptr(infoH)); rc != 0 {
		return rc
	}
	if n == nil {
		return sfail(si, call, errArg, "npset_names = NULL")
	}
	*n = C.int(len(psets))
	return 0
}

//export bcs_session_get_nth_pset
func bcs_session_get_nth_pset(h, infoH C.uintptr_t, n C.int, plen *C.int, name *C.char) C.int {
	const call = "MPI_Session_get_nth_pset"
	si, rc := session(call, h)
	if rc != 0 {
		return rc
	}
	if rc := infoArg(call, uintptr(infoH)); rc != 0 {
		return rc
	}
	if n < 0 || int(n) >= len(psets) {
		return sfail(si, call, errArg, "n = %d, want 0..%d (MPI_Session_get_num_psets)", int(n), len(psets)-1)
	}
	if plen == nil || *plen < 0 || (*plen > 0 && name == nil) {
		return sfail(si, call, errArg, "pset_len = NULL or negative, or pset_name = NULL")
	}
	s := psets[n]
	if *plen > 0 { // copy what fits, always terminated
		k := min(len(s), int(*plen)-1)
		b := unsafe.Slice((*byte)(unsafe.Pointer(name)), k+1)
		copy(b, s[:k])
		b[k] = 0
	}
	*plen = C.int(len(s) + 1)
	return 0
}

//export bcs_session_get_pset_info
func bcs_session_get_pset_info(h C.uintptr_t, name *C.char, out *C.uintptr_t) C.int {
	const call = "MPI_Session_get_pset_info"
	si, rc := session(call, h)
	if rc != 0 {
		return rc
	}
	if name == nil || out == nil {
		return sfail(si, call, errArg, "pset_name or info = NULL")
	}
	ranks, ok := pset(C.GoString(name))
	if !ok {
		return sfail(si, call, errArg, "pset_name = %q, want one of %s", C.GoString(name), strings.Join(psets, ", "))
	}
	*out = C.uintptr_t(newInfo([]string{"mpi_size"}, []string{fmt.Sprint(len(ranks))}))
	return 0
}

//export bcs_session_get_info
func bcs_session_get_info(h C.uintptr_t, out *C.uintptr_t) C.int {
	const call = "MPI_Session_get_info"
	si, rc := session(call, h)
	if rc != 0 {
		return rc
	}
	if out == nil {
		return sfail(si, call, errArg, "info_used = NULL")
	}
	*out = C.uintptr_t(newInfo([]string{"thread_level"}, []string{sessions[si].thread}))
	return 0
}

//export bcs_group_from_session_pset
func bcs_group_from_session_pset(h C.uintptr_t, name *C.char, out *C.uintptr_t) C.int {
	const call = "MPI_Group_from_session_pset"
	si, rc := session(call, h)
	if rc != 0 {
		return rc
	}
	if name == nil || out == nil {
		return sfail(si, call, errArg, "pset_name or newgroup = NULL")
	}
	ranks, ok := pset(C.GoString(name))
	if !ok {
		return sfail(si, call, errArg, "pset_name = %q, want one of %s", C.GoString(name), strings.Join(psets, ", "))
	}
	g := newGroup(ranks)
	if _, gi, _ := splitHandle(g); g != hGroupEmpty {
		groupSess[gi] = si + 1
	}
	*out = C.uintptr_t(g)
	return 0
}

//export bcs_comm_create_from_group
func bcs_comm_create_from_group(gh C.uintptr_t, tag *C.char, infoH, errh C.uintptr_t, out *C.uintptr_t) C.int {
	const call = "MPI_Comm_create_from_group"
	if rc := enter(call); rc != 0 {
		return rc
	}
	eh, restore, rc := errhArg(call, errh)
	if rc != 0 {
		return rc
	}
	defer restore() // every error from here goes to the errhandler argument
	g, gi, rc := group(call, "group", gh)
	if rc != 0 {
		return rc
	}
	if tag == nil {
		return fail(0, call, errArg, "stringtag = NULL, want a string that tells concurrent calls apart")
	}
	if rc := infoArg(call, uintptr(infoH)); rc != 0 {
		return rc
	}
	if out == nil {
		return fail(0, call, errArg, "newcomm = NULL")
	}
	if !slices.Contains(g, worldRank) { // outside the group (MPI_GROUP_EMPTY too): local, MPI_COMM_NULL
		*out = hCommNull
		return 0
	}
	var nc *mpiapi.Comm
	if len(g) > 1 {
		mg, err := mpiapi.World().Group().Incl(g)
		if err != nil {
			return failErr(0, err)
		}
		if nc, err = mpiapi.CreateFromGroup(mg, C.GoString(tag)); err != nil {
			return failErr(0, err)
		}
	}
	h := newComm(nc, eh)
	_, ci, _ := splitHandle(h)
	s := groupSess[gi]
	if s == 0 && sessionsLive == 1 { // a group derived from a session's: the only live one
		s = slices.IndexFunc(sessions, func(e sessionEntry) bool { return e.live }) + 1
	}
	if s > 0 {
		commSess[ci] = s
	}
	*out = C.uintptr_t(h)
	return 0
}

// ---- error handlers ----

//export bcs_session_set_errhandler
func bcs_session_set_errhandler(h, eh C.uintptr_t) C.int {
	const call = "MPI_Session_set_errhandler"
	si, rc := session(call, h)
	if rc != 0 {
		return rc
	}
	if !validErrhandler(uintptr(eh)) {
		return sfail(si, call, errArg, "errhandler = %s, want MPI_ERRORS_ARE_FATAL, MPI_ERRORS_RETURN, MPI_ERRORS_ABORT or one from MPI_Session_create_errhandler", describe(uintptr(eh)))
	}
	sessions[si].errh = uintptr(eh)
	return 0
}

//export bcs_session_get_errhandler
func bcs_session_get_errhandler(h C.uintptr_t, eh *C.uintptr_t) C.int {
	const call = "MPI_Session_get_errhandler"
	si, rc := session(call, h)
	if rc != 0 {
		return rc
	}
	if eh == nil {
		return sfail(si, call, errArg, "errhandler = NULL")
	}
	*eh = C.uintptr_t(sessions[si].errh)
	return 0
}

//export bcs_session_call_errhandler
func bcs_session_call_errhandler(h C.uintptr_t, code C.int) C.int {
	const call = "MPI_Session_call_errhandler"
	si, rc := session(call, h)
	if rc != 0 {
		return rc
	}
	raiseWith(sessions[si].errh, sessionHandle(si), int(code), fmt.Sprintf("rank %d: %s: error code %d raised by the program", worldRank, call, int(code)))
	return 0
}

// ---- buffers ----

//export bcs_session_attach_buffer
func bcs_session_attach_buffer(h C.uintptr_t, buf unsafe.Pointer, size C.MPI_Count, mode C.int) C.int {
	call := pick(mode, "MPI_Session_attach_buffer", "MPI_Session_attach_buffer_c")
	si, rc := session(call, h)
	if rc != 0 {
		return rc
	}
	if sessions[si].buf != nil {
		return sfail(si, call, errBuffer, "a buffer is already attached to the session; detach it first")
	}
	b, why := attachBuffer(buf, int64(size))
	if why != "" {
		return sfail(si, call, errBuffer, "%s", why)
	}
	sessions[si].buf = b
	return 0
}

//export bcs_session_detach_buffer
func bcs_session_detach_buffer(h C.uintptr_t, bufAddr *unsafe.Pointer, size *C.MPI_Count, mode C.int) C.int {
	call := pick(mode, "MPI_Session_detach_buffer", "MPI_Session_detach_buffer_c")
	si, rc := session(call, h)
	if rc != 0 {
		return rc
	}
	b := sessions[si].buf
	switch {
	case b == nil:
		return sfail(si, call, errBuffer, "no buffer is attached to the session")
	case mode&C.BCS_LARGE == 0 && b.size > 1<<31-1:
		return sfail(si, call, errCount, "the attached buffer has %d bytes, more than an int holds; detach it with the _c form", b.size)
	case bufAddr == nil || size == nil:
		return sfail(si, call, errArg, "buffer_addr or size = NULL")
	}
	if err := bsendWait(b); err != nil {
		return sfail(si, call, errOther, "%v", err)
	}
	*bufAddr, *size = b.p, C.MPI_Count(b.size)
	sessions[si].buf = nil
	return 0
}

// bcs_session_flush_buffer is MPI_Session_flush_buffer and, with req set,
// MPI_Session_iflush_buffer (which flushes at once and returns a complete
// request).
//
//export bcs_session_flush_buffer
func bcs_session_flush_buffer(h C.uintptr_t, req *C.uintptr_t) C.int {
	call := "MPI_Session_flush_buffer"
	if req != nil {
		call = "MPI_Session_iflush_buffer"
	}
	si, rc := session(call, h)
	if rc != 0 {
		return rc
	}
	if b := sessions[si].buf; b != nil {
		if err := bsendWait(b); err != nil {
			return sfail(si, call, errOther, "%v", err)
		}
	}
	if req != nil {
		*req = C.uintptr_t(newReq(nil, &localReq{ci: 1, done: true, source: mpiapi.AnySource, rtag: mpiapi.AnyTag}, 1))
	}
	return 0
}

// sessionBuf is the buffer of the session communicator slot ci was made
// from, or nil.
func sessionBuf(ci int) *bbuf {
	if s := commSess[ci]; s > 0 && sessions[s-1].live {
		return sessions[s-1].buf
	}
	return nil
}

const errSession = 60 // MPI_ERR_SESSION

// attachBuffer makes a buffer for MPI_Session_attach_buffer, or says why not.
func attachBuffer(buf unsafe.Pointer, size int64) (*bbuf, string) {
	if uintptr(buf) == hBufferAutomatic {
		return &bbuf{p: buf, auto: true}, ""
	}
	if size < 0 || (buf == nil && size > 0) {
		return nil, fmt.Sprintf("buffer = %p with size = %d", buf, size)
	}
	return &bbuf{p: buf, size: int(size)}, ""
}
