package main

/*
#include "shim.h"
*/
import "C"

import (
	"fmt"
	"os"
	"syscall"
	"unsafe"

	"github.com/bcsmpi/bcsmpi/internal/unix"
	"github.com/bcsmpi/bcsmpi/mpiapi"
)

// Shared-memory windows (MPI_Win_allocate_shared, MPI_Win_shared_query).
//
// The members must be on one node (bcsrun's logical node, the colour of
// MPI_Comm_split_type(MPI_COMM_TYPE_SHARED)); a communicator spanning
// nodes is refused by every member with MPI_ERR_RMA_SHARED. Rank 0 of the
// window makes an anonymous memory file (memfd_create) as long as all
// segments together and maps it; the others open it through
// /proc/<pid>/fd/<fd> of rank 0 and map it too, and every member closes
// its descriptor once all have mapped it. So the memory is never named in
// /dev/shm or anywhere else: it lives while a member maps it, and a killed
// job leaves nothing behind. The segments follow each other in rank order
// with no gap (contiguous, as the standard's default says); when any
// member passes the info key alloc_shared_noncontig = "true", each segment
// starts on a page boundary instead. The mapping is unmapped at
// MPI_Win_free.
//
// Operations (Put, Accumulate, ...) and synchronisation on such a window
// are those of every other window: requests to the target, applied there,
// or done by the origin itself in the mapping once the target's exposure
// is certain (rmadirect.go; accumulates under the target's accumulate
// lock, so they stay atomic against each other); plain loads and stores
// by the members reach the same memory (MPI_WIN_UNIFIED), ordered by
// MPI_Win_sync (a full memory fence in the shim) and a process
// synchronisation such as MPI_Barrier.

// pageSize aligns the segments of a non-contiguous shared window.
const pageSize = 4096

// allocShared makes the window's shared mapping over w.c (nil: the caller
// alone) and sets w.base to the caller's segment. Every member returns the
// same success or error class.
func (w *window) allocShared(call string, infoH uintptr) C.int {
	noncontig := false
	if infoH != hInfoNull {
		e, rc := info(call, infoH, false)
		if rc != 0 {
			return rc
		}
		if i := e.find("alloc_shared_noncontig"); i >= 0 && e.vals[i] == "true" {
			noncontig = true
		}
	}
	mine := []int64{int64(node), w.bytes, int64(os.Getpid()), int64(b2i(noncontig))}
	all := mine
	if w.c != nil {
		all = make([]int64, 4*w.size)
		if err := mpiapi.Allgather(w.c, mine, all); err != nil {
			return failErr(w.ci, err)
		}
	}
	for r := range w.size {
		if all[4*r] != all[0] {
			return fail(w.ci, call, errRMAShared, "the communicator's members are on more than one node (rank 0 on node %d, rank %d on node %d): a shared window needs a communicator whose members share memory, such as one from MPI_Comm_split_type(MPI_COMM_TYPE_SHARED)", all[0], r, all[4*r])
		}
		noncontig = noncontig || all[4*r+3] != 0
	}
	w.shmOff = make([]int64, w.size+1)
	for r := range w.size {
		start := w.shmOff[r]
		if noncontig {
			start = (start + pageSize - 1) &^ (pageSize - 1)
			w.shmOff[r] = start
		}
		w.shmOff[r+1] = start + all[4*r+1]
		if w.shmOff[r+1] > maxTypeBytes {
			return fail(w.ci, call, errSize, "the members' segments come to more than %d bytes (at rank %d)", maxTypeBytes, r)
		}
	}
	length := max((w.shmOff[w.size]+pageSize-1)&^(pageSize-1), pageSize)

	// Rank 0 makes the file; its descriptor number and the outcome go to
	// the others, and theirs come back, so that all fail together.
	fd, errno := -1, 0
	if w.rank == 0 {
		var err error
		if fd, err = unix.Memfd("bcsmpi-win"); err == nil {
			if err = syscall.Ftruncate(fd, length); err == nil {
				w.shm, err = syscall.Mmap(fd, 0, int(length), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
			}
		}
		errno = errnoOf(err)
	}
	if w.c != nil {
		b := []int64{int64(fd), int64(errno)}
		if err := mpiapi.Bcast(w.c, b, 0); err != nil {
			return w.sharedFailed(failErr(w.ci, err), fd)
		}
		if b[1] != 0 {
			return w.sharedFailed(fail(w.ci, call, errNoMem, "rank 0 cannot make a shared mapping of %d bytes: %v", length, syscall.Errno(b[1])), fd)
		}
		if w.rank != 0 {
			path := fmt.Sprintf("/proc/%d/fd/%d", all[2], b[0])
			f, err := syscall.Open(path, syscall.O_RDWR|syscall.O_CLOEXEC, 0)
			if err == nil {
				w.shm, err = syscall.Mmap(f, 0, int(length), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
				syscall.Close(f)
			}
			errno = errnoOf(err)
		}
		st := make([]int64, w.size)
		if err := mpiapi.Allgather(w.c, []int64{int64(errno)}, st); err != nil {
			return w.sharedFailed(failErr(w.ci, err), fd)
		}
		for r, e := range st {
			if e != 0 {
				return w.sharedFailed(fail(w.ci, call, errRMAShared, "rank %d cannot map rank 0's shared memory (/proc/%d/fd/%d): %v", r, all[2], b[0], syscall.Errno(e)), fd)
			}
		}
	} else if errno != 0 {
		return w.sharedFailed(fail(w.ci, call, errNoMem, "cannot make a shared mapping of %d bytes: %v", length, syscall.Errno(errno)), fd)
	}
	if fd >= 0 {
		syscall.Close(fd) // every member has mapped it
	}
	w.base = unsafe.Add(unsafe.Pointer(unsafe.SliceData(w.shm)), w.shmOff[w.rank])
	return 0
}

// sharedFailed undoes a failed allocShared and returns rc.
func (w *window) sharedFailed(rc C.int, fd int) C.int {
	if fd >= 0 {
		syscall.Close(fd)
	}
	w.unmapShared()
	return rc
}

// unmapShared unmaps a shared window's memory (MPI_Win_free).
func (w *window) unmapShared() {
	if w.shm != nil {
		_ = syscall.Munmap(w.shm)
		w.shm = nil
	}
}

// errnoOf is err's errno, or 0.
func errnoOf(err error) int {
	if err == nil {
		return 0
	}
	if e, ok := err.(syscall.Errno); ok {
		return int(e)
	}
	return int(syscall.EIO)
}

const errRMAShared = 49

// bcs_win_shared_query is MPI_Win_shared_query (mode C.BCS_LARGE: the _c
// form, whose disp_unit is an MPI_Aint). On a shared window every member's
// segment is reachable; on the other flavors only the caller's own (the
// standard allows them: the others are size 0 and NULL). MPI_PROC_NULL
// names the lowest rank with a segment of size > 0 (none: size 0 and the
// start of the mapping).
//
//export bcs_win_shared_query
func bcs_win_shared_query(h C.uintptr_t, rank C.int, size *C.MPI_Aint, unitInt *C.int, unitAint *C.MPI_Aint, base *unsafe.Pointer, mode C.int) C.int {
	call := "MPI_Win_shared_query"
	if mode&C.BCS_LARGE != 0 {
		call += "_c"
	}
	w, rc := win(call, h)
	if rc != 0 {
		return rc
	}
	if size == nil || (unitInt == nil && unitAint == nil) || base == nil {
		return w.fail(call, errArg, "size, disp_unit or baseptr = NULL")
	}
	// reach tells whether rank r's segment is load/store accessible here.
	reach := func(r int) bool { return w.flavor == flavorShared || (r == w.rank && w.flavor != flavorDynamic) }
	r := int(rank)
	switch {
	case rank == C.MPI_PROC_NULL:
		r = -1
		for q := range w.size {
			if reach(q) && w.sizes[q] > 0 {
				r = q
				break
			}
		}
	case r < 0 || r >= w.size:
		return w.fail(call, errRank, "rank = %d, want 0..%d or MPI_PROC_NULL", r, w.size-1)
	}
	var n, u int64 = 0, 1
	var p unsafe.Pointer
	switch {
	case r < 0 && w.flavor == flavorShared:
		p = unsafe.Pointer(unsafe.SliceData(w.shm))
	case r < 0:
	case !reach(r):
		u = w.units[r]
	case w.flavor == flavorShared && w.sizes[r] == 0:
		u = w.units[r] // no segment: NULL (as MPICH; the standard is silent)
	case w.flavor == flavorShared:
		n, u, p = w.sizes[r], w.units[r], unsafe.Add(unsafe.Pointer(unsafe.SliceData(w.shm)), w.shmOff[r])
	default:
		n, u, p = w.bytes, w.unit, w.base
	}
	*size, *base = C.MPI_Aint(n), p
	if unitAint != nil {
		*unitAint = C.MPI_Aint(u)
	} else {
		*unitInt = C.int(u) // at most INT_MAX (bcs_win_create)
	}
	return 0
}
