package main

/*
#include "shim.h"
*/
import "C"

import (
	"bytes"
	"fmt"
	"os"
	"unsafe"

	"github.com/bcsmpi/bcsmpi/internal/reduce"
	"github.com/bcsmpi/bcsmpi/internal/unix"
	"github.com/bcsmpi/bcsmpi/mpiapi"
)

// Direct operations: an origin that can reach a target's window memory
// itself carries the operation out there, a copy complete when the call
// returns, instead of a request the target applies (a round trip of about
// four slices to complete it). The memory is reachable
//
//   - on a shared window (MPI_Win_allocate_shared): any member's segment
//     is mapped in the caller, any target datatype;
//   - on a window of MPI_Win_create or MPI_Win_allocate whose target runs
//     on the caller's node (bcsrun's logical node; its pid attached to a
//     rank block of the node's shared region, so a process of this job on
//     this host, never another job's): with process_vm_readv
//     and process_vm_writev on the target's pid and window address, both
//     gathered at creation: one system call, with one range for a
//     contiguous target layout and one per block for another (at most
//     unix.MaxRanges blocks, counted after merging adjacent ones; more go
//     as requests). Every rank lets its siblings read and
//     write it (mpiapi: AllowReadsFrom, as the pull orders of large
//     messages need); where the kernel refuses anyway (Yama), the first
//     refusal turns the path off for that target and the request goes as
//     on other windows. Dynamic windows are never reached directly (their
//     regions come and go with attach and detach).
//
// The operation is direct only when the target's exposure is certain and
// nothing the caller sent the target waits to be applied before it (no
// operation since its last remote completion, no acknowledgement or
// result to come, so the program's order of operations is kept):
//
//   - in a fence epoch (the fence is a barrier), in an access epoch whose
//     start saw the target's post, and under a passive-target lock known
//     granted: MPI_MODE_NOCHECK, or once an acknowledgement or a result
//     came back from the target since the lock request (the target
//     answers nothing from the caller before granting its lock).
//
// Accumulate, Get_accumulate, Fetch_and_op and Compare_and_swap are a
// read, a reduction and a write of the target's elements, done under the
// target's accumulate lock: a futex word in the target's rank block of the
// node's shared region (shm.RankBlock.RMALock, mpiapi.RMALockOf, found by
// the target's pid), which the target holds too while it applies an
// accumulate itself (apply: its own and other origins' requests). So every
// accumulate to a location is atomic against every other, whoever applies
// it, under shared locks, lock_all, fences and PSCW alike; a target whose
// word cannot be found (not a rank of this node's region) gets requests.
// process_vm_writev is refused, if at all, before it writes (the
// permission check comes first), so a refused write leaves the target as
// it was and the request goes instead.
//
// So after the first flush of a lock epoch, every operation with
// Win_flush costs no slice (about 4 before: a round trip). The MMDS
// records a direct operation as the call it is (bcs_rma), with the bytes
// it moves. Windows are refused under --record and --replay (rma.go), so
// replay is not affected.

// Ways a window member's memory is reached (window.reach).
const (
	reachNone = iota
	reachShm  // a shared window's mapping
	reachVM   // process_vm_readv/writev on the member's pid
)

// siblingVM tells whether process_vm_* between sibling ranks may work
// (unix.SiblingReadsRefused is false); read once.
var siblingVM = func() func() bool {
	var known, ok bool
	return func() bool {
		if !known {
			known, ok = true, !unix.SiblingReadsRefused()
		}
		return ok
	}
}()

// reach tells how the caller can reach member t's window memory itself.
func (w *window) reach(t int) int {
	switch {
	case t == w.rank || w.c == nil:
		return reachNone
	case w.shm != nil:
		return reachShm
	case (w.flavor == flavorCreate || w.flavor == flavorAllocate) && w.pids != nil && w.pids[t] > 0 && !w.peers[t].noVM && siblingVM():
		return reachVM
	}
	return reachNone
}

// exposed tells whether an operation op to member t may be direct now
// (see above): the target's exposure certain, nothing of the caller's
// before it at t, and for the accumulate family its lock word known.
func (w *window) exposed(t int, op uint8) bool {
	p := &w.peers[t]
	if p.dirty || !w.settled(t) {
		return false
	}
	if op != opPut && op != opGet && w.accWord(t) == nil {
		return false
	}
	if w.locks[t] != lockNone {
		return p.confirmed || w.nocheck[t]
	}
	return w.fence || w.started
}

// accWord is member t's accumulate lock word (mpiapi.RMALockOf), or nil.
func (w *window) accWord(t int) *uint32 {
	if w.words == nil {
		return nil
	}
	return w.words[t]
}

// ownAccLock is the caller's accumulate lock word, or nil (a process with
// no rank block: a singleton).
func ownAccLock() *uint32 { return mpiapi.RMALockOf(os.Getpid()) }

// direct carries out operation h on member t's memory when it may (reach,
// exposed), and reports whether it did; rc is the error it raised. data is
// the packed origin data (Compare_and_swap: the origin then the compare
// element), res the result buffer of the fetching operations.
func (w *window) direct(call string, t int, h header, tt *dtInfo, data []byte, res rmaBuf, req *C.uintptr_t) (bool, C.int) {
	how := w.reach(t)
	n := int(h.count * tt.wire)
	if how == reachNone || n == 0 || !w.exposed(t, h.op) {
		return false, 0
	}
	var base unsafe.Pointer // reachShm: the first item's address in the mapping
	var addr [][2]uint64    // reachVM: the target's blocks, in packed order
	if how == reachShm {
		base = unsafe.Add(unsafe.Pointer(unsafe.SliceData(w.shm)), w.shmOff[t]+h.disp*w.units[t]) // inRange checked it
	} else if addr = blocks(w.bases[t]+uint64(h.disp*w.units[t]), tt, int(h.count)); addr == nil {
		return false, 0
	}
	reply := func(b []byte) {
		if res.bytes > 0 {
			res.t.info.unpack(res.p, b, res.count)
		}
	}
	// read is the target's packed bytes; false: the kernel refused.
	read := func(b []byte) bool {
		if how == reachShm {
			tt.pack(b, base, int(h.count))
			return true
		}
		return w.vmCopy(t, b, addr, false)
	}
	switch h.op {
	case opPut:
		if len(data) != n {
			return true, w.fail(call, errType, "a put of %d bytes into %d bytes of the target", len(data), n)
		}
		if how == reachShm {
			tt.unpack(base, data, int(h.count))
		} else if !w.vmCopy(t, data, addr, true) {
			return false, 0
		}
	case opGet:
		b := make([]byte, n)
		if !read(b) {
			return false, 0
		}
		reply(b)
	default:
		// Under the target's accumulate lock, which it holds itself while
		// it applies one (apply): atomic against every other accumulate.
		cur := make([]byte, n)
		if h.elem == elemC {
			cur = aligned16(n)
		}
		lk := w.accWord(t)
		mpiapi.LockWord(lk)
		ok := read(cur)
		var old []byte
		write, class, msg := false, 0, ""
		if ok {
			old = bytes.Clone(cur)
			write, class, msg = combine(h, cur, data)
		}
		if ok && write && class == 0 {
			if how == reachShm {
				tt.unpack(base, cur, int(h.count))
			} else {
				// A refusal here leaves the target unwritten (see
				// above): the request goes instead.
				ok = w.vmCopy(t, cur, addr, true)
			}
		}
		mpiapi.UnlockWord(lk)
		if !ok {
			return false, 0
		}
		if h.op != opAcc {
			reply(old)
		}
		if class != 0 {
			return true, w.fail(call, class, "%s", msg)
		}
	}
	if req != nil {
		*req = C.uintptr_t(newReq(nil, &localReq{ci: w.ci, done: true, source: mpiapi.AnySource, rtag: mpiapi.AnyTag}, w.ci))
	}
	return true, 0
}

// vmCopy copies b to (write) or from t's blocks addr. A refusal turns
// the path off for t (false: the caller sends the request instead).
func (w *window) vmCopy(t int, b []byte, addr [][2]uint64, write bool) bool {
	var err error
	if write {
		err = unix.WriteRanges(w.pids[t], b, addr)
	} else {
		err = unix.ReadRanges(w.pids[t], b, addr)
	}
	if err != nil {
		w.peers[t].noVM = true
		return false
	}
	return true
}

// blocks lists the bytes count items of tt at address a cover, in packed
// order (address and length each, adjacent ones merged), or nil when there
// are more than unix.MaxRanges.
func blocks(a uint64, tt *dtInfo, count int) [][2]uint64 {
	if tt.contig {
		return [][2]uint64{{a + uint64(tt.trueLB), uint64(int64(count) * tt.wire)}}
	}
	var out [][2]uint64
	ext := tt.extent()
	for i := range int64(count) {
		for _, s := range tt.segs {
			for k := range s.n {
				if s.len == 0 {
					continue
				}
				p := a + uint64(i*ext+s.off+k*s.stride)
				if m := len(out); m > 0 && out[m-1][0]+out[m-1][1] == p {
					out[m-1][1] += uint64(s.len)
					continue
				}
				if len(out) == unix.MaxRanges {
					return nil
				}
				out = append(out, [2]uint64{p, uint64(s.len)})
			}
		}
	}
	return out
}

// combine applies accumulate h (opAcc, opGetAcc, opCAS) of data to cur,
// the target's packed elements; write tells whether cur changed and goes
// back to the target.
func combine(h header, cur, data []byte) (write bool, class int, msg string) {
	n := len(cur)
	if h.op == opCAS {
		if len(data) != 2*n {
			return false, errType, fmt.Sprintf("a compare-and-swap of %d bytes on %d bytes of the target", len(data), n)
		}
		if !bytes.Equal(cur, data[n:]) {
			return false, 0, ""
		}
		copy(cur, data[:n])
		return true, 0, ""
	}
	switch {
	case h.red == redNoOp:
		return false, 0, ""
	case len(data) != n:
		return false, errType, fmt.Sprintf("an accumulate of %d bytes into %d bytes of the target", len(data), n)
	case h.red == redReplace:
		copy(cur, data)
		return true, 0, ""
	case h.elem == elemC:
		if msg := reduceC(h, cur, data); msg != "" {
			return false, errOp, msg
		}
		return true, 0, ""
	}
	e := reduce.Type(h.elem)
	if err := reduce.Check(reduce.Op(h.red), e); err != nil {
		return false, errOp, fmt.Sprintf("operation %d on element type %d: %v", h.red, h.elem, err)
	}
	if !applyPacked(reduce.Op(h.red), e, cur, data) { // pairs packed as their parts
		return false, errOp, fmt.Sprintf("operation %d on %d bytes: not whole elements of type %s", h.red, n, e)
	}
	return true, 0, ""
}
