package mpiapi

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/bcsmpi/bcsmpi/internal/unix"
)

// RMALockOf is the accumulate lock word (shm.RankBlock.RMALock) of the
// rank of this node whose process is pid, or nil when no rank block of
// this node is attached to pid (another node, another job, not started).
// Package cabi holds a target's word while it applies an accumulate to the
// target's window memory, the target's own requests and the direct
// operations of the node's other ranks alike.
func RMALockOf(pid int) *uint32 {
	p := self
	if p == nil || p.region == nil || pid <= 0 {
		return nil
	}
	rmaLocks.Lock()
	defer rmaLocks.Unlock()
	if l, ok := rmaLocks.byPID[pid]; ok {
		return p.region.Block(l).RMALock()
	}
	for l := range p.region.G.Ranks {
		if b := p.region.Block(l); b.PID() == pid {
			if rmaLocks.byPID == nil {
				rmaLocks.byPID = map[int]int{}
			}
			rmaLocks.byPID[pid] = l // an attach word is claimed once: it stays
			return b.RMALock()
		}
	}
	return nil
}

var rmaLocks struct {
	sync.Mutex
	byPID map[int]int
}

// LockWord takes the futex lock word w (0 free, 1 held, 2 held with
// waiters), shared between processes; a holder that was stopped (the gang
// scheduler stops a job's ranks between its slices) is waited for.
func LockWord(w *uint32) {
	if atomic.CompareAndSwapUint32(w, 0, 1) {
		return
	}
	for atomic.SwapUint32(w, 2) != 0 {
		unix.FutexWait(w, 2, time.Millisecond)
	}
}

// UnlockWord releases w, waking a waiter if there is one.
func UnlockWord(w *uint32) {
	if atomic.SwapUint32(w, 0) == 2 {
		unix.FutexWake(w, 1)
	}
}
