package mpiapi

import (
	"sync/atomic"
	"time"

	"github.com/bcsmpi/bcsmpi/internal/unix"
)

// Threads (MPI_THREAD_MULTIPLE for a layer above, package cabi).
//
// Glossary:
//   - call lock: the lock the layer holds around each of its calls, so that
//     this package's state (and the layer's) is changed by one thread at a
//     time. The layer owns it; SetThreaded gives this package a way to
//     release it and take it back.
//   - waiter: a thread inside a blocking wait (block) whose condition is not
//     yet true. A waiter never holds the call lock while it sleeps.
//   - leader: the one waiter that sleeps on the rank's futex word (the word
//     the agent bumps when it publishes a completion or posts a pull order,
//     waking one sleeper). The others are followers: they sleep on a Go
//     channel (parking their goroutine, so they hold no runtime processor)
//     that the leader closes each time it wakes. Every waiter then takes the
//     call lock back in turn and looks at its own condition again.
//   - kick: a call that changed state a waiter may be waiting for without
//     the agent (a message to itself on MPI_COMM_SELF, MPI_Grequest_complete,
//     a buffer another thread's request shares) wakes every waiter (Kick).
//     The layer kicks at the end of every call made while there are waiters.
//
// With threads on, a blocked call does not spin (it releases the lock and
// sleeps at once), and the rank does not report itself blocked to the
// deadlock detector: another thread of it, computing outside MPI, may be the
// one to post what the blocked call waits for, so a rank waiting in every
// thread looks the same from outside as one whose other thread is about to
// send. The rank still offers pull orders while any thread waits (the offer
// is taken by the first waiter and withdrawn by the last), and any waiter
// holding the lock serves a posted order.
//
// Rejected: a lock inside this package's every exported function (the layer
// makes several calls here per MPI call, with its own tables in between,
// which must change together), and every waiter sleeping on the futex word
// (the agent wakes one sleeper per bump, and a thread blocked in a system
// call keeps the Go runtime's processor until the runtime's monitor takes it
// back, which delays every other thread's call by up to 10 ms).

var mt struct {
	on        bool
	release   func() int // releases the call lock, returning what reacquire needs
	reacquire func(int)
	waiters   func(int) // told the number of waiters whenever it changes
	n         int       // waiters now (under the call lock)
	leader    bool      // a waiter sleeps on the rank's futex word
	kick      chan struct{}
}

// SetThreaded turns threads on: release must release the layer's call lock
// (held by the calling thread) and return a value that reacquire takes to
// lock it again; waiters is told the number of threads waiting each time it
// changes (the layer kicks when it is not zero). Call it under the call
// lock, before a second thread calls. nil functions turn threads off.
func SetThreaded(release func() int, reacquire func(int), waiters func(int)) {
	if release == nil || reacquire == nil || waiters == nil {
		mt.on = false
		return
	}
	mt.on, mt.release, mt.reacquire, mt.waiters = true, release, reacquire, waiters
	mt.kick = make(chan struct{})
}

// Threaded reports whether SetThreaded turned threads on.
func Threaded() bool { return mt.on }

// Kick wakes every waiter to look at its condition again (call it under the
// call lock, after changing state a waiter may wait for).
func Kick() {
	if !mt.on || mt.n == 0 {
		return
	}
	close(mt.kick)
	mt.kick = make(chan struct{})
	if mt.leader && self != nil {
		// The leader read the word before it released the lock: a bump
		// makes its FutexWait return at once even if it has not slept yet.
		atomic.AddUint32(self.blk.Wake(), 1)
		unix.FutexWake(self.blk.Wake(), 1)
	}
}

// blockThreaded is block with threads on (lock held on entry and return).
// p is nil for a process without the runtime (a singleton): its waiters are
// all followers, woken by kicks only.
func (p *process) blockThreaded(call string, ready func() bool) {
	mt.n++
	mt.waiters(mt.n)
	if p != nil && mt.n == 1 {
		p.blk.OfferPull() // while any thread waits, copy the data of our receives ourselves when the agent asks
	}
	defer func() {
		mt.n--
		mt.waiters(mt.n)
		if p != nil && mt.n == 0 {
			for !p.blk.WithdrawPull() {
				p.servePull(false)
			}
		}
	}()
	for {
		var w uint32
		if p != nil {
			w = atomic.LoadUint32(p.blk.Wake())
			if p.blk.PullPosted() {
				p.servePull(true)
			}
			p.progress()
		}
		if ready() {
			return
		}
		if p != nil {
			if p.region.Aborting() {
				p.abortExit()
			}
			p.mmds.checkSignal()
		}
		if p != nil && !mt.leader {
			mt.leader = true
			sleeping := p.blk.Sleeping()
			held := mt.release()
			atomic.StoreUint32(sleeping, 1)
			unix.FutexWait(p.blk.Wake(), w, 100*time.Millisecond)
			atomic.StoreUint32(sleeping, 0)
			mt.reacquire(held)
			mt.leader = false
			close(mt.kick) // the followers look again, and one of them leads if this one returns
			mt.kick = make(chan struct{})
			continue
		}
		kick := mt.kick
		held := mt.release()
		if p == nil {
			// No agent wakes a singleton: other threads' calls kick it, and it
			// looks again at least every 100 ms.
			select {
			case <-kick:
			case <-time.After(100 * time.Millisecond):
			}
		} else {
			<-kick
		}
		mt.reacquire(held)
	}
}

// WaitThreads waits, with threads on, until ready() is true, in a process
// that may not have the runtime (a singleton): the waiting of Block without
// its call name. Without threads it reports false at once if ready() is
// false: nothing else could make it true.
func WaitThreads(call string, ready func() bool) bool {
	if ready() {
		return true
	}
	if !mt.on {
		return false
	}
	if p, err := current(call); err == nil {
		p.block(call, ready)
		return true
	}
	(*process)(nil).blockThreaded(call, ready)
	return true
}

// ThreadsAllowed reports whether this process may turn threads on: not in a
// deterministic, recorded or replayed job, whose outcome must be a function
// of the program's calls in their order (between threads, that order is the
// scheduler's). True before Init.
func ThreadsAllowed() bool {
	return self == nil || !(self.region.G.Deterministic || self.rr.on())
}
