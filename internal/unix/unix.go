//go:build linux

// Package unix is the only importer of golang.org/x/sys/unix in bcsmpi: shared
// memory files and mappings, futexes, process_vm_readv/writev, the monotonic
// clock, absolute sleeps and real-time scheduling. Everything here is a thin,
// allocation-free wrapper; callers own the fds and mappings they get.
package unix

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// ShmDir is where shared-memory regions live.
const ShmDir = "/dev/shm"

// CreateShm creates /dev/shm/name exclusively with mode 0600 and size bytes.
func CreateShm(name string, size int) (*os.File, error) {
	path := ShmDir + "/" + name
	fd, err := unix.Open(path, unix.O_RDWR|unix.O_CREAT|unix.O_EXCL|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return nil, fmt.Errorf("create %s: %w", path, err)
	}
	if err := unix.Ftruncate(fd, int64(size)); err != nil {
		unix.Close(fd)
		unix.Unlink(path)
		return nil, fmt.Errorf("size %s to %d bytes: %w", path, size, err)
	}
	return os.NewFile(uintptr(fd), path), nil
}

// Map maps size bytes of fd shared, read-write.
func Map(fd int, size int) ([]byte, error) {
	b, err := unix.Mmap(fd, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("mmap %d bytes: %w", size, err)
	}
	return b, nil
}

// Unmap releases a mapping made by Map.
func Unmap(b []byte) error { return unix.Munmap(b) }

// FileSize is the size of the file behind fd.
func FileSize(fd int) (int64, error) {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return 0, err
	}
	return st.Size, nil
}

const (
	futexWait = 0 // FUTEX_WAIT (shared: no FUTEX_PRIVATE_FLAG, works across processes)
	futexWake = 1
)

// FutexWait sleeps while *addr == val, at most timeout. It returns nil on a
// wake, a timeout, a signal or a value change; callers re-check their condition.
func FutexWait(addr *uint32, val uint32, timeout time.Duration) {
	ts := unix.NsecToTimespec(int64(timeout))
	unix.Syscall6(unix.SYS_FUTEX, uintptr(unsafe.Pointer(addr)), futexWait, uintptr(val), uintptr(unsafe.Pointer(&ts)), 0, 0)
}

// FutexWake wakes up to n sleepers on addr.
func FutexWake(addr *uint32, n int) {
	unix.Syscall6(unix.SYS_FUTEX, uintptr(unsafe.Pointer(addr)), futexWake, uintptr(n), 0, 0, 0)
}

// ErrProcessGone means the peer process no longer exists.
var ErrProcessGone = errors.New("process gone")

// ReadFrom copies len(local) bytes at remote in process pid into local.
func ReadFrom(pid int, local []byte, remote uint64) error {
	return vm(pid, local, remote, false)
}

// WriteTo copies local to remote in process pid.
func WriteTo(pid int, local []byte, remote uint64) error {
	return vm(pid, local, remote, true)
}

func vm(pid int, local []byte, remote uint64, write bool) error {
	for len(local) > 0 {
		l := []unix.Iovec{{Base: &local[0]}}
		l[0].SetLen(len(local))
		r := []unix.RemoteIovec{{Base: uintptr(remote), Len: len(local)}}
		var n int
		var err error
		if write {
			n, err = unix.ProcessVMWritev(pid, l, r, 0)
		} else {
			n, err = unix.ProcessVMReadv(pid, l, r, 0)
		}
		if err == unix.EINTR {
			continue
		}
		if err == unix.ESRCH {
			return ErrProcessGone
		}
		if err != nil {
			op := "process_vm_readv"
			if write {
				op = "process_vm_writev"
			}
			return fmt.Errorf("%s pid %d addr %#x len %d: %w", op, pid, remote, len(local), err)
		}
		if n == 0 {
			return fmt.Errorf("process_vm pid %d addr %#x: no progress", pid, remote)
		}
		local = local[n:]
		remote += uint64(n)
	}
	return nil
}

var monoBase, monoAt = func() (int64, time.Time) {
	var ts unix.Timespec
	unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts)
	return ts.Nano(), time.Now()
}()

// Now is CLOCK_MONOTONIC in nanoseconds. It reads Go's monotonic clock
// (vDSO, no syscall) offset by one CLOCK_MONOTONIC reading taken at start,
// so its values can be passed to SleepUntil.
func Now() int64 { return monoBase + int64(time.Since(monoAt)) }

// SleepUntil sleeps until CLOCK_MONOTONIC reaches abs nanoseconds.
func SleepUntil(abs int64) {
	ts := unix.NsecToTimespec(abs)
	for {
		err := unix.ClockNanosleep(unix.CLOCK_MONOTONIC, unix.TIMER_ABSTIME, &ts, nil)
		if err != unix.EINTR {
			return
		}
	}
}

// SleepUntilHoldingP is SleepUntil through a raw system call: the Go runtime
// is not told the thread is blocked, so it does not hand the thread's P to
// another thread for every sleep (at a strobe every 250 µs that hand-off and
// the spinning it causes cost more CPU than the slices' work). Use it only on
// a locked thread, for sleeps well under Go's 10 ms preemption interval.
func SleepUntilHoldingP(abs int64) {
	ts := unix.NsecToTimespec(abs)
	for {
		_, _, e := unix.RawSyscall6(unix.SYS_CLOCK_NANOSLEEP, unix.CLOCK_MONOTONIC, unix.TIMER_ABSTIME, uintptr(unsafe.Pointer(&ts)), 0, 0, 0)
		if e != unix.EINTR {
			return
		}
	}
}

const (
	schedOther       = 0
	schedFIFO        = 1
	schedResetOnFork = 0x01 // SCHED_FLAG_RESET_ON_FORK
)

// SetFIFO gives the calling OS thread SCHED_FIFO at prio, with
// RESET_ON_FORK so that no process forked from this thread inherits it. The
// caller must have locked its goroutine to the thread and must call
// SetNormal before unlocking it, or the Go runtime will run other goroutines
// on a real-time thread.
func SetFIFO(prio int) error {
	attr := unix.SchedAttr{Size: unix.SizeofSchedAttr, Policy: schedFIFO, Priority: uint32(prio), Flags: schedResetOnFork}
	return unix.SchedSetAttr(0, &attr, 0)
}

// SetNormal puts the calling OS thread back to SCHED_OTHER.
func SetNormal() error {
	attr := unix.SchedAttr{Size: unix.SizeofSchedAttr, Policy: schedOther}
	return unix.SchedSetAttr(0, &attr, 0)
}

// LockThread pins the calling goroutine to its OS thread and returns the
// function that undoes it.
func LockThread() func() {
	runtime.LockOSThread()
	return runtime.UnlockOSThread
}

// ProcessCPUTime is the CPU time (user+system) used by this process so far.
func ProcessCPUTime() time.Duration {
	var ru unix.Rusage
	unix.Getrusage(unix.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// Gettid is the calling OS thread's id.
func Gettid() int { return unix.Gettid() }

// KernelRelease is the running kernel's release (uname -r), or "" if uname fails.
func KernelRelease() string {
	var u unix.Utsname
	if unix.Uname(&u) != nil {
		return ""
	}
	return unix.ByteSliceToString(u.Release[:])
}

// ThreadCPUTime is the CPU time the calling OS thread has used, in ns.
func ThreadCPUTime() int64 {
	var ts unix.Timespec
	unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts)
	return ts.Nano()
}
