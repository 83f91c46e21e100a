package unix

import (
	"errors"
	"runtime"
)

// Declarations shared by every platform.

// ShmDir is where shared-memory regions live.
const ShmDir = "/dev/shm"

// ErrProcessGone means the peer process no longer exists.
var ErrProcessGone = errors.New("process gone")

// ErrLocked means a lock (TryLock) is held by another holder.
var ErrLocked = errors.New("unix: locked by another process")

// ErrNotSupported is matched (errors.Is) by the errors of calls this
// platform cannot make: everything that needs Linux, elsewhere.
var ErrNotSupported = errors.New("unix: not supported on this platform")

// Child is a child process of this process, as /proc shows it.
type Child struct {
	PID    int
	Zombie bool // exited, not yet reaped
}

// LockThread pins the calling goroutine to its OS thread and returns the
// function that undoes it.
func LockThread() func() {
	runtime.LockOSThread()
	return runtime.UnlockOSThread
}

// DescendsFrom reports whether process pid is ancestor or one of its
// descendants, following parents at most depth steps.
func DescendsFrom(pid, ancestor, depth int) (bool, error) {
	for range depth {
		if pid == ancestor {
			return true, nil
		}
		if pid <= 1 {
			return false, nil
		}
		p, err := ParentPID(pid)
		if err != nil {
			return false, err
		}
		pid = p
	}
	return pid == ancestor, nil
}
