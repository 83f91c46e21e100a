package main

/*
#include "shim.h"
*/
import "C"

import (
	"github.com/bcsmpi/bcsmpi/mds"
	"github.com/bcsmpi/bcsmpi/mpiapi"
)

// Synchronisation: fence, post-start-complete-wait, locks and flushes.
// Each waits with mpiapi.Block, so the caller serves the requests of
// others while it waits (two ranks locking each other's windows, or
// flushing to each other, complete).

const (
	modeNocheck   = 1024
	modeNoprecede = 2048
	modeNoput     = 4096
	modeNostore   = 8192
	modeNosucceed = 16384
)

// checkAssert refuses assert bits other than allowed.
func (w *window) checkAssert(call string, assert C.int, allowed int, names string) C.int {
	if int(assert)&^allowed != 0 {
		return w.fail(call, errAssert, "assert = %d, want 0 or a combination of %s", int(assert), names)
	}
	return 0
}

// wait blocks until done() holds, serving requests meanwhile.
func (w *window) wait(call string, done func() bool) C.int {
	if done() {
		return 0
	}
	return w.failErr(mpiapi.Block(call, func() bool {
		rmaProgress()
		return done()
	}))
}

// settled reports whether rank t owes the caller no acknowledgement and no
// result, and the bodies sent to it from the program's buffers have gone.
func (w *window) settled(t int) bool {
	p := &w.peers[t]
	return p.acks == 0 && len(p.results) == 0 && len(p.sends) == 0 && p.errs <= 0
}

// complete completes the operations issued to the targets in ts: at the
// targets too when remote (a flush), else at the origin only (results
// received; a put's data is copied when it is issued).
func (w *window) complete(call string, ts []int, remote bool) C.int {
	for _, t := range ts {
		p := &w.peers[t]
		if t == w.rank || w.c == nil {
			p.dirty = false
			continue
		}
		if remote && p.dirty {
			p.acks++
			p.dirty = false
			if rc := w.control(t, opFlush, false); rc != 0 {
				return rc
			}
		}
	}
	if rc := w.wait(call, func() bool {
		for _, t := range ts {
			if !w.settled(t) {
				return false
			}
		}
		return true
	}); rc != 0 {
		return rc
	}
	return w.raiseDeferred(call)
}

// completeAll completes the operations to every member.
func (w *window) completeAll(call string, remote bool) C.int {
	return w.complete(call, w.all(), remote)
}

func (w *window) all() []int {
	ts := make([]int, w.size)
	for i := range ts {
		ts[i] = i
	}
	return ts
}

// raiseDeferred raises an error a target reported (a refused request).
func (w *window) raiseDeferred(call string) C.int {
	if w.deferred == "" {
		return 0
	}
	msg, class := w.deferred, w.defClass
	w.deferred = ""
	return w.fail(call, class, "%s", msg)
}

//export bcs_win_fence
func bcs_win_fence(assert C.int, h C.uintptr_t) C.int {
	t0 := mpiapi.BeginCall(true)
	defer mpiapi.EndCall(mds.WinFence, t0, 0, true)
	const call = "MPI_Win_fence"
	w, rc := win(call, h)
	if rc != 0 {
		return rc
	}
	if rc := w.checkAssert(call, assert, modeNostore|modeNoput|modeNoprecede|modeNosucceed, "MPI_MODE_NOSTORE, MPI_MODE_NOPUT, MPI_MODE_NOPRECEDE, MPI_MODE_NOSUCCEED"); rc != 0 {
		return rc
	}
	if o := w.open(); o != "" {
		return w.fail(call, errRMASync, "%s is open on this window; a fence cannot be called inside it", o)
	}
	if assert&modeNoprecede == 0 {
		if rc := w.completeAll(call, true); rc != 0 {
			return rc
		}
	}
	if w.c != nil {
		if err := mpiapi.Barrier(w.c); err != nil {
			return w.failErr(err)
		}
	}
	w.fence, w.fenceOps = assert&modeNosucceed == 0, 0
	return w.raiseDeferred(call)
}

// ---- locks (target side) ----

// acquire gives origin the lock if it is free for it (and nobody waits
// before it), else queues it; it reports whether it was granted.
func (w *window) acquire(origin int, excl bool) bool {
	if len(w.lockQueue) == 0 && w.exclHolder < 0 && (!excl || w.shared == 0) {
		w.take(origin, excl)
		return true
	}
	w.lockQueue = append(w.lockQueue, lockWait{origin, excl})
	return false
}

func (w *window) take(origin int, excl bool) {
	if excl {
		w.exclHolder = origin
	} else {
		w.shared++
	}
}

// release ends origin's lock and grants the queued requests that now can
// be, in order.
func (w *window) release(origin int, excl bool) {
	if excl {
		if w.exclHolder == origin {
			w.exclHolder = -1
		}
	} else if w.shared > 0 {
		w.shared--
	}
	for len(w.lockQueue) > 0 {
		q := w.lockQueue[0]
		if w.exclHolder >= 0 || (q.excl && w.shared > 0) {
			return
		}
		w.lockQueue = w.lockQueue[1:]
		w.take(q.origin, q.excl)
		if q.origin == w.rank {
			w.peers[q.origin].granted = true
		} else {
			w.peers[q.origin].held = false // its stream goes on (progress drains it again)
			w.regrant = true
		}
	}
}

// ---- locks (origin side) ----

// lock requests the lock on each of ts. The caller's own window's lock is
// waited for (the program may then touch its memory); another member's is
// not: the request goes first in the stream to it, and that target applies
// nothing more from the caller until it has granted it, so the operations
// of the epoch and the unlock's acknowledgement come after the grant, one
// round trip in all (the standard allows MPI_Win_lock to return before the
// lock is acquired).
func (w *window) lock(call string, ts []int, excl bool) C.int {
	for _, t := range ts {
		p := &w.peers[t]
		p.granted, p.confirmed = true, false
		switch {
		case t == w.rank || w.c == nil:
			p.granted = w.acquire(w.rank, excl)
		default:
			if rc := w.control(t, opLock, excl); rc != 0 {
				return rc
			}
		}
	}
	return w.wait(call, func() bool {
		for _, t := range ts {
			if !w.peers[t].granted {
				return false
			}
		}
		return true
	})
}

// unlock completes the operations to each of ts at the target and
// releases the locks.
func (w *window) unlock(call string, ts []int) C.int {
	var wait []int
	for _, t := range ts {
		p := &w.peers[t]
		excl := w.locks[t] == lockExcl
		switch {
		case w.nocheck[t]:
			// No lock was taken: complete below flushes.
		case t == w.rank || w.c == nil:
			w.release(w.rank, excl)
			p.dirty = false
		default:
			// Nothing of the caller's waits at t (no Put or Accumulate
			// since its last remote completion, every answer in but
			// earlier releases', direct operations done): the release
			// goes and is not waited for.
			// Its acknowledgement is taken later (t is not settled until
			// then: no direct operation, flush or free passes it), and
			// confirms no later lock (released).
			lazy := !p.dirty && p.acks == p.released && len(p.results) == 0 && len(p.sends) == 0
			p.acks++
			p.dirty = false
			if rc := w.control(t, opUnlock, excl); rc != 0 {
				return rc
			}
			if lazy {
				p.released++
				continue
			}
		}
		wait = append(wait, t)
	}
	rc := w.complete(call, wait, true)
	for _, t := range ts {
		w.locks[t], w.nocheck[t] = lockNone, false
		w.peers[t].confirmed = false
	}
	return rc
}

// closeFence ends a fence epoch in which nothing was issued, so that
// another kind of epoch can start (a program may end its fences without
// MPI_MODE_NOSUCCEED). An epoch in which operations were issued is ended
// only by the next fence: call fails with MPI_ERR_RMA_SYNC.
func (w *window) closeFence(call string) C.int {
	if rc := w.fenceDone(call); rc != 0 {
		return rc
	}
	w.fence = false
	return 0
}

// fenceDone fails with MPI_ERR_RMA_SYNC when operations were issued in the
// open fence epoch: only the fence that ends it completes them (MPI 5.0
// §12.5.1), so they can be neither given to another epoch nor left behind
// by MPI_Win_free. As in MPICH; a fence epoch in which nothing was issued
// may be left without a closing fence.
func (w *window) fenceDone(call string) C.int {
	if !w.fence || w.fenceOps == 0 {
		return 0
	}
	return w.fail(call, errRMASync, "%d RMA operation(s) issued since the last MPI_Win_fence are not completed; end the fence epoch with MPI_Win_fence first", w.fenceOps)
}

//export bcs_win_lock
func bcs_win_lock(lockType, rank, assert C.int, h C.uintptr_t) C.int {
	t0 := mpiapi.BeginCall(true)
	defer mpiapi.EndCall(mds.WinLock, t0, 0, true)
	const call = "MPI_Win_lock"
	w, rc := win(call, h)
	if rc != 0 {
		return rc
	}
	if lockType != C.MPI_LOCK_EXCLUSIVE && lockType != C.MPI_LOCK_SHARED {
		return w.fail(call, errLocktype, "lock_type = %d, want MPI_LOCK_EXCLUSIVE (%d) or MPI_LOCK_SHARED (%d)", int(lockType), C.MPI_LOCK_EXCLUSIVE, C.MPI_LOCK_SHARED)
	}
	if rank == C.MPI_PROC_NULL {
		return 0
	}
	if rank < 0 || int(rank) >= w.size {
		return w.fail(call, errRank, "rank = %d, want 0..%d or MPI_PROC_NULL", int(rank), w.size-1)
	}
	if rc := w.checkAssert(call, assert, modeNocheck, "MPI_MODE_NOCHECK"); rc != 0 {
		return rc
	}
	t := int(rank)
	if w.locks[t] != lockNone {
		return w.fail(call, errRMASync, "rank %d is already locked on this window by this process", t)
	}
	if w.started {
		return w.fail(call, errRMASync, "the access epoch of MPI_Win_start is open on this window")
	}
	if rc := w.closeFence(call); rc != 0 {
		return rc
	}
	excl := lockType == C.MPI_LOCK_EXCLUSIVE
	if assert&modeNocheck == 0 {
		if rc := w.lock(call, []int{t}, excl); rc != 0 {
			return rc
		}
	} else {
		w.nocheck[t] = true
	}
	w.locks[t] = lockShared
	if excl {
		w.locks[t] = lockExcl
	}
	return 0
}

//export bcs_win_unlock
func bcs_win_unlock(rank C.int, h C.uintptr_t) C.int {
	t0 := mpiapi.BeginCall(true)
	defer mpiapi.EndCall(mds.WinUnlock, t0, 0, true)
	const call = "MPI_Win_unlock"
	w, rc := win(call, h)
	if rc != 0 {
		return rc
	}
	if rank == C.MPI_PROC_NULL {
		return 0
	}
	if rank < 0 || int(rank) >= w.size {
		return w.fail(call, errRank, "rank = %d, want 0..%d or MPI_PROC_NULL", int(rank), w.size-1)
	}
	if w.locks[rank] == lockNone || w.lockAll {
		return w.fail(call, errRMASync, "rank %d is not locked on this window by MPI_Win_lock", int(rank))
	}
	return w.unlock(call, []int{int(rank)})
}

//export bcs_win_lock_all
func bcs_win_lock_all(assert C.int, h C.uintptr_t) C.int {
	t0 := mpiapi.BeginCall(true)
	defer mpiapi.EndCall(mds.WinLockAll, t0, 0, true)
	const call = "MPI_Win_lock_all"
	w, rc := win(call, h)
	if rc != 0 {
		return rc
	}
	if rc := w.checkAssert(call, assert, modeNocheck, "MPI_MODE_NOCHECK"); rc != 0 {
		return rc
	}
	if o := w.open(); o != "" {
		return w.fail(call, errRMASync, "%s is open on this window", o)
	}
	if rc := w.closeFence(call); rc != 0 {
		return rc
	}
	ts := w.all()
	if assert&modeNocheck == 0 {
		if rc := w.lock(call, ts, false); rc != 0 {
			return rc
		}
	}
	for t := range ts {
		w.locks[t], w.nocheck[t] = lockShared, assert&modeNocheck != 0
	}
	w.lockAll = true
	return 0
}

//export bcs_win_unlock_all
func bcs_win_unlock_all(h C.uintptr_t) C.int {
	t0 := mpiapi.BeginCall(true)
	defer mpiapi.EndCall(mds.WinUnlockAll, t0, 0, true)
	const call = "MPI_Win_unlock_all"
	w, rc := win(call, h)
	if rc != 0 {
		return rc
	}
	if !w.lockAll {
		return w.fail(call, errRMASync, "no MPI_Win_lock_all epoch is open on this window")
	}
	w.lockAll = false
	return w.unlock(call, w.all())
}

// bcs_win_flush is MPI_Win_flush (local 0, all 0), _flush_all (all 1),
// _flush_local (local 1) and _flush_local_all.
//
//export bcs_win_flush
func bcs_win_flush(rank C.int, h C.uintptr_t, local, all C.int) C.int {
	prim := [2][2]mds.Prim{{mds.WinFlush, mds.WinFlushAll}, {mds.WinFlushLocal, mds.WinFlushLocalAll}}[b2i(local != 0)][b2i(all != 0)]
	t0 := mpiapi.BeginCall(true)
	defer mpiapi.EndCall(prim, t0, 0, true)
	call := [2][2]string{{"MPI_Win_flush", "MPI_Win_flush_all"}, {"MPI_Win_flush_local", "MPI_Win_flush_local_all"}}[local][all]
	w, rc := win(call, h)
	if rc != 0 {
		return rc
	}
	var ts []int
	if all != 0 {
		for t, l := range w.locks {
			if l != lockNone {
				ts = append(ts, t)
			}
		}
		if len(ts) == 0 {
			return w.fail(call, errRMASync, "no passive-target epoch (MPI_Win_lock, MPI_Win_lock_all) is open on this window")
		}
	} else {
		if rank == C.MPI_PROC_NULL {
			return 0
		}
		if rank < 0 || int(rank) >= w.size {
			return w.fail(call, errRank, "rank = %d, want 0..%d or MPI_PROC_NULL", int(rank), w.size-1)
		}
		if w.locks[rank] == lockNone {
			return w.fail(call, errRMASync, "rank %d is not locked on this window (flushes need a passive-target epoch: MPI_Win_lock or MPI_Win_lock_all)", int(rank))
		}
		ts = []int{int(rank)}
	}
	return w.complete(call, ts, local == 0)
}

//export bcs_win_sync
func bcs_win_sync(h C.uintptr_t) C.int {
	t0 := mpiapi.BeginCall(false)
	defer mpiapi.EndCall(mds.WinSync, t0, 0, false)
	_, rc := win("MPI_Win_sync", h) // one copy of the memory (MPI_WIN_UNIFIED): nothing to synchronise
	return rc
}

// ---- post, start, complete, wait ----

// groupRanks is a group's members as window ranks.
func (w *window) groupRanks(call string, g C.uintptr_t) ([]int, C.int) {
	ranks, _, rc := group(call, "group", g)
	if rc != 0 {
		return nil, rc
	}
	out := make([]int, 0, len(ranks))
	for _, wr := range ranks {
		found := -1
		for i, m := range w.members {
			if m == wr {
				found = i
			}
		}
		if found < 0 {
			return nil, w.fail(call, errGroup, "the group holds world rank %d, which is not a member of the window", wr)
		}
		out = append(out, found)
	}
	return out, 0
}

//export bcs_win_post
func bcs_win_post(g C.uintptr_t, assert C.int, h C.uintptr_t) C.int {
	t0 := mpiapi.BeginCall(true)
	defer mpiapi.EndCall(mds.WinPost, t0, 0, true)
	const call = "MPI_Win_post"
	w, rc := win(call, h)
	if rc != 0 {
		return rc
	}
	if rc := w.checkAssert(call, assert, modeNocheck|modeNostore|modeNoput, "MPI_MODE_NOCHECK, MPI_MODE_NOSTORE, MPI_MODE_NOPUT"); rc != 0 {
		return rc
	}
	if w.posted {
		return w.fail(call, errRMASync, "an exposure epoch of MPI_Win_post is already open on this window")
	}
	ranks, rc := w.groupRanks(call, g)
	if rc != 0 {
		return rc
	}
	if rc := w.closeFence(call); rc != 0 {
		return rc
	}
	w.postGroup, w.posted = ranks, true
	if assert&modeNocheck == 0 {
		for _, o := range ranks {
			if o == w.rank || w.c == nil {
				w.posts[o]++
			} else if rc := w.control(o, opPost, false); rc != 0 {
				return rc
			}
		}
	}
	return 0
}

//export bcs_win_start
func bcs_win_start(g C.uintptr_t, assert C.int, h C.uintptr_t) C.int {
	t0 := mpiapi.BeginCall(true)
	defer mpiapi.EndCall(mds.WinStart, t0, 0, true)
	const call = "MPI_Win_start"
	w, rc := win(call, h)
	if rc != 0 {
		return rc
	}
	if rc := w.checkAssert(call, assert, modeNocheck, "MPI_MODE_NOCHECK"); rc != 0 {
		return rc
	}
	if w.started || w.lockAll {
		return w.fail(call, errRMASync, "an access epoch (%s) is already open on this window", w.open())
	}
	ranks, rc := w.groupRanks(call, g)
	if rc != 0 {
		return rc
	}
	if rc := w.closeFence(call); rc != 0 {
		return rc
	}
	if assert&modeNocheck == 0 {
		if rc := w.wait(call, func() bool {
			for _, t := range ranks {
				if w.posts[t] == 0 {
					return false
				}
			}
			return true
		}); rc != 0 {
			return rc
		}
		for _, t := range ranks {
			w.posts[t]--
		}
	}
	w.startGroup, w.started = ranks, true
	return 0
}

//export bcs_win_complete
func bcs_win_complete(h C.uintptr_t) C.int {
	t0 := mpiapi.BeginCall(true)
	defer mpiapi.EndCall(mds.WinComplete, t0, 0, true)
	const call = "MPI_Win_complete"
	w, rc := win(call, h)
	if rc != 0 {
		return rc
	}
	if !w.started {
		return w.fail(call, errRMASync, "no access epoch of MPI_Win_start is open on this window")
	}
	for _, t := range w.startGroup {
		if t == w.rank || w.c == nil {
			w.completes++
		} else {
			w.peers[t].dirty = false // the done message follows the operations
			if rc := w.control(t, opDone, false); rc != 0 {
				return rc
			}
		}
	}
	ts := w.startGroup
	w.startGroup, w.started = nil, false
	return w.complete(call, ts, false)
}

//export bcs_win_wait
func bcs_win_wait(h C.uintptr_t, test C.int, flag *C.int) C.int {
	prim, blocking := mds.WinWait, test == 0
	if test != 0 {
		prim = mds.WinTest
	}
	t0 := mpiapi.BeginCall(blocking)
	defer mpiapi.EndCall(prim, t0, 0, blocking)
	call := "MPI_Win_wait"
	if test != 0 {
		call = "MPI_Win_test"
	}
	w, rc := win(call, h)
	if rc != 0 {
		return rc
	}
	if !w.posted {
		return w.fail(call, errRMASync, "no exposure epoch of MPI_Win_post is open on this window")
	}
	n := len(w.postGroup)
	if test != 0 {
		*flag = 0
		if w.completes < n {
			return w.raiseDeferred(call)
		}
		*flag = 1
	} else if rc := w.wait(call, func() bool { return w.completes >= n }); rc != 0 {
		return rc
	}
	w.completes -= n
	w.postGroup, w.posted = nil, false
	return w.raiseDeferred(call)
}
