//go:build !linux

package unix

import (
	"fmt"
	"net"
	"os"
	"runtime"
	"syscall"
	"time"
)

// The stub for systems other than Linux: the same functions as unix.go and
// proc.go (stub_test.go checks it), none of which can do its work. Each one
// that returns an error returns one matching ErrNotSupported; the others say
// what they do instead. Nothing here imports golang.org/x/sys.

func notSupported(what string) error {
	return fmt.Errorf("%w: %s needs Linux (this is %s)", ErrNotSupported, what, runtime.GOOS)
}

// Unmapped reports nothing: without mincore(2) every address is taken as
// mapped.
func Unmapped(addr, n uintptr) uintptr { return 0 }

// Map fails: shared mappings of the runtime's regions need Linux.
func Map(fd int, size int) ([]byte, error) { return nil, notSupported("mmap") }

// Unmap fails: Map never succeeds here.
func Unmap(b []byte) error { return notSupported("munmap") }

// FileSize fails.
func FileSize(fd int) (int64, error) { return 0, notSupported("fstat") }

// FutexWait returns at once, as a spurious wake-up would: callers re-check
// their condition, so they poll.
func FutexWait(addr *uint32, val uint32, timeout time.Duration) {}

// FutexWake does nothing.
func FutexWake(addr *uint32, n int) {}

// ReadFrom fails: process_vm_readv is Linux's.
func ReadFrom(pid int, local []byte, remote uint64) error {
	return notSupported("process_vm_readv")
}

// MaxRanges is the most ranges ReadRanges and WriteRanges take.
const MaxRanges = 1024

// ReadRanges fails: process_vm_readv is Linux's.
func ReadRanges(pid int, local []byte, ranges [][2]uint64) error {
	return notSupported("process_vm_readv")
}

// WriteRanges fails: process_vm_writev is Linux's.
func WriteRanges(pid int, local []byte, ranges [][2]uint64) error {
	return notSupported("process_vm_writev")
}

// WriteTo fails: process_vm_writev is Linux's.
func WriteTo(pid int, local []byte, remote uint64) error {
	return notSupported("process_vm_writev")
}

var monoAt = time.Now()

// Now is Go's monotonic clock in nanoseconds since the process started (no
// CLOCK_MONOTONIC to align with); SleepUntil takes its values.
func Now() int64 { return int64(time.Since(monoAt)) }

// SleepUntil sleeps until Now reaches abs.
func SleepUntil(abs int64) { time.Sleep(time.Duration(abs - Now())) }

// SleepUntilHoldingP is SleepUntil.
func SleepUntilHoldingP(abs int64) { SleepUntil(abs) }

// SetFIFO fails: callers go on without real-time priority, as they do where
// Linux refuses it.
func SetFIFO(prio int) error { return notSupported("SCHED_FIFO") }

// SetAffinity fails: callers go on unbound.
func SetAffinity(cpu int) error { return notSupported("CPU affinity") }

// Affinity fails: callers go on unbound.
func Affinity() ([]int, error) { return nil, notSupported("CPU affinity") }

// SetAffinitySet fails: callers go on unbound.
func SetAffinitySet(cpus []int) error { return notSupported("CPU affinity") }

// IsFIFO is false: SetFIFO never succeeds here.
func IsFIFO() (bool, error) { return false, nil }

// SetNormal does nothing: SetFIFO never succeeds here.
func SetNormal() error { return nil }

// ProcessCPUTime is 0: unknown.
func ProcessCPUTime() time.Duration { return 0 }

// ShmFile is false: no descriptor is a region here.
func ShmFile(fd int) bool { return false }

// CloseOnExec fails.
func CloseOnExec(fd int) error { return notSupported("FD_CLOEXEC") }

// ParentPID fails: it reads Linux's /proc.
func ParentPID(pid int) (int, error) { return 0, notSupported("/proc/PID/stat") }

// CreateRegion fails: regions are memfds.
func CreateRegion(name string, size int) (*os.File, error) {
	return nil, notSupported("memfd_create")
}

// SetChildSubreaper fails.
func SetChildSubreaper() error { return notSupported("PR_SET_CHILD_SUBREAPER") }

// Children fails: it reads Linux's /proc.
func Children() ([]Child, error) { return nil, notSupported("/proc") }

// ChildPIDs fails: it reads Linux's /proc.
func ChildPIDs() ([]int, error) { return nil, notSupported("/proc/self/task/*/children") }

// DieWithParent is an empty SysProcAttr: no parent-death signal here.
func DieWithParent() *syscall.SysProcAttr { return &syscall.SysProcAttr{} }

// ReapIfExited does nothing.
func ReapIfExited(pid int) {}

// KillChild fails.
func KillChild(pid int) error { return notSupported("kill") }

// Reap fails.
func Reap(pid int) error { return notSupported("wait4") }

// AllowReadsFrom does nothing: there is no Yama here.
func AllowReadsFrom(pid int) error { return nil }

// SiblingReadsRefused is false: there is no Yama here.
func SiblingReadsRefused() bool { return false }

// Gettid is the process id: no per-thread ids here.
func Gettid() int { return os.Getpid() }

// KernelRelease is runtime.GOOS: there is no Linux release to name.
func KernelRelease() string { return runtime.GOOS }

// ThreadCPUTime is 0: no per-thread CPU clock here.
func ThreadCPUTime() int64 { return 0 }

// SendFiles fails: descriptors pass over Unix sockets on Linux only here.
func SendFiles(c *net.UnixConn, b []byte, files []*os.File) error {
	return notSupported("SCM_RIGHTS")
}

// RecvFiles fails.
func RecvFiles(c *net.UnixConn, b []byte, max int) (int, []*os.File, error) {
	return 0, nil, notSupported("SCM_RIGHTS")
}

// PeerCred fails.
func PeerCred(c *net.UnixConn) (pid, uid int, err error) { return 0, 0, notSupported("SO_PEERCRED") }

// TryLock fails.
func TryLock(f *os.File) error { return notSupported("flock") }

// Memfd fails: memory files are Linux's.
func Memfd(name string) (int, error) { return -1, notSupported("memfd_create") }

// SetThreadNice fails: callers go on at the default priority.
func SetThreadNice(tid, nice int) error { return notSupported("a thread's nice value") }

// SetThreadName fails: the thread keeps its name.
func SetThreadName(name string) error { return notSupported("a thread's name") }
