package main

/*
#include <stdlib.h>
#include "shim.h"
*/
import "C"

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"strings"
	"unsafe"

	"github.com/bcsmpi/bcsmpi/internal/reduce"
	"github.com/bcsmpi/bcsmpi/mds"
	"github.com/bcsmpi/bcsmpi/mpiapi"
)

// One-sided communication (MPI-4.1 chapter 12) over messages: see
// "One-sided communication" in doc.go for the design. This file holds the
// windows and their creation and attributes; rmaops.go the operations and
// the target side; rmasync.go the synchronisation calls.

// kindWin is the handle kind of windows (handles.go).
const (
	kindWin  = 14
	hWinNull = 0x110
)

// The window's private communicator carries three message streams per pair
// of members.
const (
	tagHdr    = 1 // requests and control messages, processed in order
	tagBody   = 2 // the body of a request too long for its header message
	tagResult = 3 // data a target returns (Get, Get_accumulate, Fetch_and_op, Compare_and_swap)
)

// hdrMax is the size of each header receive: a request whose header,
// target layout and data fit is one message, a longer one is a header and
// a body.
const hdrMax = 4096

// window is a window (MPI_Win) slot.
type window struct {
	idx  int
	gen  uint32
	live bool

	ci      int          // the communicator slot it was created over (request errors)
	c       *mpiapi.Comm // its private duplicate; nil: one process (MPI_COMM_SELF, a singleton)
	rank    int
	size    int
	members []int // world ranks, in window rank order

	base    unsafe.Pointer
	bytes   int64
	unit    int64
	flavor  int
	alloc   unsafe.Pointer // Win_allocate's memory, freed with the window
	shm     []byte         // Win_allocate_shared's mapping, unmapped with the window (rmashared.go)
	shmOff  []int64        // each member's segment in it
	attr    unsafe.Pointer // C memory the attribute pointers point into
	bases   []uint64
	sizes   []int64 // -1: a dynamic window (the target checks)
	units   []int64
	pids    []int       // members on the caller's node: their pid (direct operations, rmadirect.go); others 0
	words   []*uint32   // their accumulate lock words (mpiapi.RMALockOf), nil where pids is 0
	regions [][2]uint64 // a dynamic window's attached [base, base+size)
	errh    uintptr
	name    string
	hints   []string // window info hints, key and value pairs (winhints.go)

	peers []winPeer // by window rank; the caller's own entry is unused but for its origin counters

	// Access epochs (origin side).
	fence      bool // a fence opened an epoch (closed by MPI_MODE_NOSUCCEED)
	fenceOps   int  // operations issued in that epoch, completed only by the next fence
	locks      []int8
	lockAll    bool
	nocheck    []bool // lock taken with MPI_MODE_NOCHECK: no lock messages
	startGroup []int  // window ranks of the open PSCW access epoch
	started    bool

	// Exposure (target side).
	exclHolder int // window rank holding the exclusive lock, -1: none
	shared     int
	lockQueue  []lockWait
	postGroup  []int
	posted     bool
	regrant    bool  // a queued origin's lock was granted during this progress pass
	completes  int   // MPI_Win_complete messages of the open exposure epoch
	posts      []int // MPI_Win_post messages received from each rank, not yet consumed by a start

	closing  bool   // MPI_Win_free is withdrawing the receives: progress leaves the window alone
	recvs    int    // header receives it holds (postReceives), counted in recvsHeld
	deferred string // an error a target reported, raised by the next synchronisation call
	defClass int
}

// winPeer is the state of one other member of a window.
type winPeer struct {
	ring  []*mpiapi.Request // header receives, in posting order
	bufs  [][]byte
	head  int
	queue []queued // requests taken and waiting for a body, or behind one (rmaops.go)

	acks int // acknowledgements to come (flushes, unlocks)
	// released: of acks, those of unlocks not waited for (rmasync.go,
	// unlock), which come first and confirm no later lock.
	released int
	// errs: refusals' empty results come less their reports (opErr with
	// excl 1) come, which travel on another stream: above 0, a report is
	// still due and the peer is not settled (rmaops.go, refuseFetch).
	errs    int
	granted bool // the caller's own lock request was granted
	held    bool // target side: its lock request waits, so its later requests wait too
	dirty   bool // operations sent since its last remote completion
	// confirmed: the caller's passive-target lock on it is known granted
	// (MPI_MODE_NOCHECK, or an acknowledgement came back since the lock
	// request, which the target answers only after granting it): an
	// operation to it may then be done directly (rmadirect.go).
	confirmed bool
	noVM      bool // process_vm_* on it was refused: no direct operations by that path (rmadirect.go)
	results   []rmaResult
	sends     []*mpiapi.Request // bodies sent from the program's buffer (rmaops.go): local completion waits for them
	posted    []*mpiapi.Request // copied messages over the inline size still being sent (post): each holds a request slot
}

// rmaResult is a pending receive of data a target returns.
type rmaResult struct {
	r      *mpiapi.Request
	done   func() // unpacks a packed result; nil: none
	pack   []byte
	shared bool  // the user holds it as an MPI_Request (Rget...): not retired here
	want   int64 // the bytes it should bring: none brought is a refusal (refuseFetch)
}

type lockWait struct {
	origin int
	excl   bool
}

const (
	lockNone   = 0
	lockShared = 1
	lockExcl   = 2
)

var (
	wins     []*window
	freeWins []int
	winsLive int
)

// win resolves a window handle.
func win(call string, h C.uintptr_t) (*window, C.int) {
	if rc := enter(call); rc != 0 {
		return nil, rc
	}
	if uintptr(h) == hWinNull {
		return nil, fail(0, call, errWin, "win = MPI_WIN_NULL, want a window from MPI_Win_create, MPI_Win_allocate or MPI_Win_create_dynamic")
	}
	kind, i, gen := splitHandle(uintptr(h))
	if kind == kindWin && i < len(wins) {
		if w := wins[i]; w.live && w.gen == gen {
			return w, 0
		}
		return nil, fail(0, call, errWin, "win = 0x%x was freed with MPI_Win_free", uintptr(h))
	}
	return nil, fail(0, call, errWin, "win = %s is not a window", describe(uintptr(h)))
}

func (w *window) handle() uintptr { return userHandle(kindWin, w.idx, w.gen) }

// fail raises an error on the window's error handler.
func (w *window) fail(call string, class int, format string, a ...any) C.int {
	name := C.GoString(C.bcs_class_name(C.int(class)))
	return raiseWith(w.errh, w.handle(), class, fmt.Sprintf("rank %d: %s: %s: %s", worldRank, call, name, fmt.Sprintf(format, a...)))
}

// failErr raises an error of mpiapi on the window's error handler.
func (w *window) failErr(err error) C.int {
	if err == nil {
		return 0
	}
	if e, ok := err.(*mpiapi.Error); ok {
		return raiseWith(w.errh, w.handle(), abiClass(e.Class), e.Error())
	}
	return raiseWith(w.errh, w.handle(), errIntern, fmt.Sprintf("rank %d: %v", worldRank, err))
}

// The window error classes this file raises.
const (
	errAssert   = 22
	errDisp     = 26
	errLocktype = 37
	errRMARange = 48
	errRMASync  = 50
	errSize     = 52
	errWin      = 56
	errFlavor   = 57
)

// ---- creation ----

const (
	flavorCreate   = 311
	flavorAllocate = 312
	flavorDynamic  = 313
	flavorShared   = 314
	modelUnified   = 321
)

// bcs_win_create is MPI_Win_create (flavor create: base is the caller's
// memory), MPI_Win_allocate (allocate: the memory is allocated here and its
// address stored at *baseOut), MPI_Win_allocate_shared (shared: one shared
// mapping for the members, rmashared.go) and MPI_Win_create_dynamic
// (dynamic: no memory until MPI_Win_attach); mode C.BCS_LARGE: the _c form.
//
//export bcs_win_create
func bcs_win_create(flavor C.int, base unsafe.Pointer, size, unit C.MPI_Aint, infoH, commH C.uintptr_t, baseOut *unsafe.Pointer, out *C.uintptr_t, mode C.int) C.int {
	prim := map[C.int]mds.Prim{flavorCreate: mds.WinCreate, flavorAllocate: mds.WinAllocate, flavorDynamic: mds.WinCreateDynamic, flavorShared: mds.WinAllocateShared}[flavor]
	t0 := mpiapi.BeginCall(true)
	defer mpiapi.EndCall(prim, t0, 0, true)
	call := map[C.int]string{flavorCreate: "MPI_Win_create", flavorAllocate: "MPI_Win_allocate", flavorDynamic: "MPI_Win_create_dynamic", flavorShared: "MPI_Win_allocate_shared"}[flavor]
	if mode&C.BCS_LARGE != 0 {
		call += "_c"
	}
	ci, rc := enterComm(call, uintptr(commH))
	if rc != 0 {
		return rc
	}
	if rc := wantIntra(ci, call, "comm", commH); rc != 0 {
		return rc
	}
	if rc := infoArg(call, uintptr(infoH)); rc != 0 {
		return rc
	}
	if out == nil {
		return fail(ci, call, errArg, "win = NULL, want the address of an MPI_Win")
	}
	if rec, rep := mpiapi.RecordReplay(); rec || rep {
		how := "recorded (bcsrun --record)"
		if rep {
			how = "replayed (bcsrun --replay)"
		}
		return fail(ci, call, errUnsupported, "one-sided communication is not %s: a window's progress posts and polls receives at timing-dependent points outside the replay log, so the job could not be reproduced", how)
	}
	if flavor != flavorDynamic {
		if size < 0 || int64(size) > maxTypeBytes {
			return fail(ci, call, errSize, "size = %d, want 0..%d bytes", int64(size), maxTypeBytes)
		}
		// MPI_WIN_DISP_UNIT is an int attribute: the _c forms take no more.
		if unit <= 0 || unit > math.MaxInt32 {
			return fail(ci, call, errDisp, "disp_unit = %d, want 1..%d bytes", int64(unit), math.MaxInt32)
		}
		if flavor == flavorCreate && base == nil && size > 0 {
			return fail(ci, call, errBase, "base = NULL with size = %d", int64(size))
		}
	}
	if (flavor == flavorAllocate || flavor == flavorShared) && baseOut == nil {
		return fail(ci, call, errArg, "baseptr = NULL, want the address of a pointer")
	}
	if flavor == flavorAllocate {
		base = C.malloc(C.size_t(max(size, 1)))
		if base == nil {
			return fail(ci, call, errNoMem, "cannot allocate %d bytes", int64(size))
		}
		*baseOut = base
	}
	w := &window{ci: ci, c: comms[ci].c, base: base, bytes: int64(size), unit: int64(unit), flavor: int(flavor),
		errh: comms[ci].errh, exclHolder: -1, live: true}
	if flavor == flavorAllocate {
		w.alloc = base
	}
	if flavor == flavorDynamic {
		w.base, w.bytes, w.unit = nil, 0, 1
	}
	w.members = members(ci)
	w.initHints(uintptr(infoH))
	w.rank, w.size = 0, 1
	if w.c != nil {
		var err error
		if w.c, err = w.c.Dup(); err != nil {
			return failErr(ci, err)
		}
		w.rank, w.size = w.c.Rank(), w.c.Size()
	}
	if flavor == flavorShared {
		if rc := w.allocShared(call, uintptr(infoH)); rc != 0 { // rmashared.go
			if w.c != nil {
				_ = w.c.Free()
			}
			return rc
		}
		*baseOut = w.base
	}
	// Each member's base, size, unit, and node and pid (direct
	// operations on members of the caller's node, rmadirect.go).
	mine := []int64{int64(uintptr(w.base)), w.bytes, w.unit, int64(node), int64(os.Getpid())}
	if flavor == flavorDynamic {
		mine[1] = -1
	}
	all := mine
	if w.c != nil {
		all = make([]int64, 5*w.size)
		if err := mpiapi.Allgather(w.c, mine, all); err != nil {
			return failErr(ci, err)
		}
	}
	w.bases, w.sizes, w.units, w.pids = make([]uint64, w.size), make([]int64, w.size), make([]int64, w.size), make([]int, w.size)
	for r := range w.size {
		w.bases[r], w.sizes[r], w.units[r] = uint64(all[5*r]), all[5*r+1], all[5*r+2]
		if all[5*r+3] == int64(node) && r != w.rank {
			w.pids[r] = int(all[5*r+4])
		}
	}
	w.words = make([]*uint32, w.size)
	for r, pid := range w.pids {
		// Only a rank attached to this node's region is this job's and
		// this host's (a spawned job's node numbers are its own): any
		// other pid is left alone.
		if w.words[r] = mpiapi.RMALockOf(pid); w.words[r] == nil {
			w.pids[r] = 0
		}
	}
	w.locks, w.nocheck, w.posts = make([]int8, w.size), make([]bool, w.size), make([]int, w.size)
	w.peers = make([]winPeer, w.size)
	w.attr = C.malloc(32)
	*(*C.MPI_Aint)(w.attr) = C.MPI_Aint(w.bytes)
	a := unsafe.Slice((*C.int)(unsafe.Add(w.attr, 8)), 3)
	a[0], a[1], a[2] = C.int(w.unit), C.int(flavor), modelUnified
	if flavor == flavorDynamic {
		a[0] = 1
	}

	mpiapi.SetProgress(rmaProgress)
	w.idx = len(wins)
	if n := len(freeWins); n > 0 {
		w.idx, freeWins = freeWins[n-1], freeWins[:n-1]
		w.gen = wins[w.idx].gen
		wins[w.idx] = w
	} else {
		wins = append(wins, w)
	}
	if rc := w.postReceives(); rc != 0 {
		// A request slot ran out part-way (MPI_ERR_REQUEST): every member
		// got this far (the Allgather above), so the window is undone
		// here, its receives withdrawn and their budget returned.
		if w.c != nil {
			_ = w.withdraw(call)
			_ = w.c.Free()
		}
		w.discard()
		return rc
	}
	winsLive++
	*out = C.uintptr_t(w.handle())
	return 0
}

// postReceives posts the header receives from every other member: up to 32
// per peer, so that several requests from one origin are taken in one
// slice, and fewer on large windows (256 in all, or one per peer beyond
// 257 members: each holds one of the rank's request slots). Every receive
// the live windows hold counts in recvsHeld: a new window gets as many per
// peer as the rest of recvBudget allows, and at least one per peer (the
// runtime keeps what arrives before a receive is reposted), so the windows
// hold at most recvBudget receives plus one per peer of the windows made
// once it is spent, and a program can make as many windows as request
// slots allow for one per peer (over 2000 two-member windows, not 16 or
// 128). Each receive is counted once posted, so a failure part-way leaves
// recvsHeld matching what withdraw returns.
func (w *window) postReceives() C.int {
	if w.c == nil || w.size == 1 {
		return 0
	}
	k := max(1, min(32, 256/(w.size-1), (recvBudget-recvsHeld)/(w.size-1)))
	for r := range w.peers {
		if r == w.rank {
			continue
		}
		p := &w.peers[r]
		p.ring, p.bufs = make([]*mpiapi.Request, k), make([][]byte, k)
		for j := range k {
			p.bufs[j] = make([]byte, hdrMax)
			q, err := mpiapi.IrecvBytes(w.c, p.bufs[j], reduce.Uint8, r, tagHdr)
			if err != nil {
				return w.failErr(err)
			}
			p.ring[j] = q
			w.recvs++
			recvsHeld++
		}
	}
	return 0
}

//export bcs_win_free
func bcs_win_free(h *C.uintptr_t) C.int {
	t0 := mpiapi.BeginCall(true)
	defer mpiapi.EndCall(mds.WinFree, t0, 0, true)
	const call = "MPI_Win_free"
	if h == nil {
		return fail(0, call, errArg, "win = NULL")
	}
	w, rc := win(call, *h)
	if rc != 0 {
		return rc
	}
	if w.open() != "" {
		return w.fail(call, errRMASync, "%s is still open; close it before freeing the window", w.open())
	}
	if rc := w.fenceDone(call); rc != 0 {
		return rc
	}
	if rc := w.deleteAttrs(call); rc != 0 { // winattr.go
		return rc
	}
	if rc := w.completeAll(call, true); rc != 0 {
		return rc
	}
	if w.c != nil {
		if err := mpiapi.Barrier(w.c); err != nil {
			return w.failErr(err)
		}
		// Every member has completed its operations (each waited for its
		// targets' acknowledgements before the barrier): nothing more
		// arrives, and the header receives are withdrawn.
		if rc := w.withdraw(call); rc != 0 {
			return rc
		}
		if err := w.c.Free(); err != nil {
			return w.failErr(err)
		}
	}
	w.discard()
	winsLive--
	*h = hWinNull
	return 0
}

// discard frees the window's memory and its slot in wins (its
// communicator is freed and its receives withdrawn before).
func (w *window) discard() {
	if w.alloc != nil {
		C.free(w.alloc)
	}
	w.unmapShared() // rmashared.go
	C.free(w.attr)
	wins[w.idx] = &window{idx: w.idx, gen: (w.gen + 1) & genMask}
	freeWins = append(freeWins, w.idx)
}

// recvBudget bounds the header receives the live windows hold (see
// postReceives); recvsHeld is what they hold.
const recvBudget = 1024

var recvsHeld int

// withdraw cancels the window's header receives, out of the progress
// engine's sight (which must not repost them), and waits until they are
// withdrawn.
func (w *window) withdraw(call string) C.int {
	w.closing = true
	recvsHeld -= w.recvs
	w.recvs = 0
	var cancelled []*mpiapi.Request
	for r := range w.peers {
		for _, q := range w.peers[r].ring {
			if q != nil {
				_ = q.Cancel()
				cancelled = append(cancelled, q)
			}
		}
		for _, it := range w.peers[r].queue { // only an erroneous program leaves any
			if it.body != nil {
				_ = it.body.Cancel()
				cancelled = append(cancelled, it.body)
			}
		}
		w.peers[r].ring, w.peers[r].queue = nil, nil
		// The copied messages still being sent are let go: they were
		// matched before the barrier (or, at MPI_Finalize, are the
		// program's error) and complete on their own.
		for _, q := range w.peers[r].posted {
			_ = q.Free()
		}
		inFlight -= len(w.peers[r].posted)
		w.peers[r].posted = nil
	}
	if err := mpiapi.Block(call, func() bool {
		for _, q := range cancelled {
			if done, _, _ := mpiapi.Poll(q, false); !done {
				return false
			}
		}
		return true
	}); err != nil {
		return w.failErr(err)
	}
	for _, q := range cancelled {
		mpiapi.Poll(q, true)
	}
	return 0
}

// finalizeWindows withdraws the receives of the windows the program did
// not free, so that MPI_Finalize reports the windows (a warning) rather
// than their requests; their private communicators stay and are reported
// as never freed.
func finalizeWindows() C.int {
	for _, w := range wins {
		if !w.live || w.closing {
			continue
		}
		name := ""
		if w.name != "" {
			name = fmt.Sprintf(" (%q)", w.name)
		}
		fmt.Fprintf(os.Stderr, "bcsmpi: warning: rank %d: window 0x%x%s was never freed (MPI_Win_free)\n", worldRank, w.handle(), name)
		if w.c != nil {
			if rc := w.withdraw("MPI_Finalize"); rc != 0 {
				return rc
			}
		}
	}
	return 0
}

// open names the epoch still open on the window, or "".
func (w *window) open() string {
	switch {
	case w.lockAll:
		return "the MPI_Win_lock_all epoch"
	case w.started:
		return "the access epoch of MPI_Win_start"
	case w.posted:
		return "the exposure epoch of MPI_Win_post"
	}
	for r, l := range w.locks {
		if l != lockNone {
			return fmt.Sprintf("the MPI_Win_lock epoch on rank %d", r)
		}
	}
	return ""
}

// ---- attributes, names, groups, error handlers ----

//export bcs_win_get_attr
func bcs_win_get_attr(h C.uintptr_t, key C.int, val *unsafe.Pointer, flag *C.int) C.int {
	const call = "MPI_Win_get_attr"
	w, rc := win(call, h)
	if rc != 0 {
		return rc
	}
	if val == nil || flag == nil {
		return w.fail(call, errArg, "attribute_val or flag = NULL")
	}
	*flag = 1
	switch key {
	case C.MPI_WIN_BASE:
		*val = w.base
	case C.MPI_WIN_SIZE:
		*val = w.attr
	case C.MPI_WIN_DISP_UNIT:
		*val = unsafe.Add(w.attr, 8)
	case C.MPI_WIN_CREATE_FLAVOR:
		*val = unsafe.Add(w.attr, 12)
	case C.MPI_WIN_MODEL:
		*val = unsafe.Add(w.attr, 16)
	default:
		return w.userAttr(call, key, val, flag) // winattr.go
	}
	return 0
}

//export bcs_win_get_group
func bcs_win_get_group(h C.uintptr_t, out *C.uintptr_t) C.int {
	w, rc := win("MPI_Win_get_group", h)
	if rc != 0 {
		return rc
	}
	*out = C.uintptr_t(newGroup(append([]int(nil), w.members...)))
	return 0
}

//export bcs_win_set_name
func bcs_win_set_name(h C.uintptr_t, name *C.char) C.int {
	const call = "MPI_Win_set_name"
	w, rc := win(call, h)
	if rc != 0 {
		return rc
	}
	if name == nil {
		return w.fail(call, errArg, "win_name = NULL")
	}
	n := C.GoString(name)
	if len(n) > C.MPI_MAX_OBJECT_NAME-1 {
		n = n[:C.MPI_MAX_OBJECT_NAME-1]
	}
	w.name = strings.Clone(n)
	return 0
}

//export bcs_win_get_name
func bcs_win_get_name(h C.uintptr_t, out *C.char, resultlen *C.int) C.int {
	const call = "MPI_Win_get_name"
	w, rc := win(call, h)
	if rc != 0 {
		return rc
	}
	if out == nil || resultlen == nil {
		return w.fail(call, errArg, "win_name or resultlen = NULL")
	}
	b := unsafe.Slice((*byte)(unsafe.Pointer(out)), len(w.name)+1)
	copy(b, w.name)
	b[len(w.name)] = 0
	*resultlen = C.int(len(w.name))
	return 0
}

//export bcs_win_set_errhandler
func bcs_win_set_errhandler(h, eh C.uintptr_t) C.int {
	const call = "MPI_Win_set_errhandler"
	w, rc := win(call, h)
	if rc != 0 {
		return rc
	}
	if !validErrhandler(uintptr(eh)) {
		return w.fail(call, errArg, "errhandler = %s, want MPI_ERRORS_ARE_FATAL, MPI_ERRORS_RETURN, MPI_ERRORS_ABORT or one from MPI_Win_create_errhandler", describe(uintptr(eh)))
	}
	w.errh = uintptr(eh)
	return 0
}

//export bcs_win_get_errhandler
func bcs_win_get_errhandler(h C.uintptr_t, eh *C.uintptr_t) C.int {
	w, rc := win("MPI_Win_get_errhandler", h)
	if rc != 0 {
		return rc
	}
	*eh = C.uintptr_t(w.errh)
	return 0
}

//export bcs_win_call_errhandler
func bcs_win_call_errhandler(h C.uintptr_t, code C.int) C.int {
	const call = "MPI_Win_call_errhandler"
	w, rc := win(call, h)
	if rc != 0 {
		return rc
	}
	raiseWith(w.errh, w.handle(), int(code), fmt.Sprintf("rank %d: %s: error code %d raised by the program", worldRank, call, int(code)))
	return 0
}

//export bcs_win_attach
func bcs_win_attach(h C.uintptr_t, base unsafe.Pointer, size C.MPI_Aint, detach C.int) C.int {
	call := "MPI_Win_attach"
	if detach != 0 {
		call = "MPI_Win_detach"
	}
	w, rc := win(call, h)
	if rc != 0 {
		return rc
	}
	if w.flavor != flavorDynamic {
		return w.fail(call, errFlavor, "the window was not made by MPI_Win_create_dynamic")
	}
	b := uint64(uintptr(base))
	if detach != 0 {
		for i, r := range w.regions {
			if r[0] == b {
				w.regions = append(w.regions[:i], w.regions[i+1:]...)
				return 0
			}
		}
		return w.fail(call, errRMAAttach, "base = %p is not the base of a region attached to this window", base)
	}
	if size < 0 || int64(size) > maxTypeBytes || (base == nil && size > 0) {
		return w.fail(call, errRMAAttach, "base = %p, size = %d, want memory of 0..%d bytes", base, int64(size), maxTypeBytes)
	}
	for _, r := range w.regions {
		if b < r[1] && r[0] < b+uint64(size) {
			return w.fail(call, errRMAAttach, "[%p, +%d) overlaps a region already attached at 0x%x", base, int64(size), r[0])
		}
	}
	w.regions = append(w.regions, [2]uint64{b, b + uint64(size)})
	return 0
}

// More window error classes, and info's null handle.
const (
	errBase      = 24
	errRMAAttach = 46
	errNoMem     = 39
)

// hdr helpers (the header layout is in rmaops.go).
var le = binary.LittleEndian

// bcs_win_info is MPI_Win_get_info (set 0: a new info holding the
// window's hints) and MPI_Win_set_info (set 1: the info is checked, and
// the window hints it holds replace theirs; winhints.go).
//
//export bcs_win_info
func bcs_win_info(h C.uintptr_t, set C.int, infoH *C.uintptr_t) C.int {
	call := "MPI_Win_get_info"
	if set != 0 {
		call = "MPI_Win_set_info"
	}
	w, rc := win(call, h)
	if rc != 0 {
		return rc
	}
	if set != 0 {
		if rc := infoArg(call, uintptr(*infoH)); rc != 0 {
			return rc
		}
		w.setHints(uintptr(*infoH))
		return 0
	}
	*infoH = C.uintptr_t(w.hintInfo())
	return 0
}
