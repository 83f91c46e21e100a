//go:build linux

package unix

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

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

// FutexWait sleeps while *addr == val, at most timeout. It returns on a wake,
// a timeout, a signal or a value change, and does not say which: callers
// re-check their condition.
func FutexWait(addr *uint32, val uint32, timeout time.Duration) {
	ts := unix.NsecToTimespec(int64(timeout))
	unix.Syscall6(unix.SYS_FUTEX, uintptr(unsafe.Pointer(addr)), futexWait, uintptr(val), uintptr(unsafe.Pointer(&ts)), 0, 0)
}

// FutexWake wakes up to n sleepers on addr.
func FutexWake(addr *uint32, n int) {
	unix.Syscall6(unix.SYS_FUTEX, uintptr(unsafe.Pointer(addr)), futexWake, uintptr(n), 0, 0, 0)
}

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

// MaxRanges is the most ranges ReadRanges and WriteRanges take (IOV_MAX).
const MaxRanges = 1024

// ReadRanges fills local, in order, from the ranges of process pid (each an
// address and a length, their lengths summing to len(local), at most
// MaxRanges): one process_vm_readv. A transfer that stops short is an
// error.
func ReadRanges(pid int, local []byte, ranges [][2]uint64) error {
	return vmRanges(pid, local, ranges, false)
}

// WriteRanges copies local, in order, into the ranges of process pid (as
// ReadRanges).
func WriteRanges(pid int, local []byte, ranges [][2]uint64) error {
	return vmRanges(pid, local, ranges, true)
}

func vmRanges(pid int, local []byte, ranges [][2]uint64, write bool) error {
	if len(ranges) > MaxRanges {
		return fmt.Errorf("process_vm pid %d: %d ranges, at most %d", pid, len(ranges), MaxRanges)
	}
	if len(local) == 0 {
		return nil
	}
	l := []unix.Iovec{{Base: &local[0]}}
	l[0].SetLen(len(local))
	r := make([]unix.RemoteIovec, len(ranges))
	for i, x := range ranges {
		r[i] = unix.RemoteIovec{Base: uintptr(x[0]), Len: int(x[1])}
	}
	for {
		var n int
		var err error
		if write {
			n, err = unix.ProcessVMWritev(pid, l, r, 0)
		} else {
			n, err = unix.ProcessVMReadv(pid, l, r, 0)
		}
		switch {
		case err == unix.EINTR:
			continue
		case err == unix.ESRCH:
			return ErrProcessGone
		case err != nil:
			return fmt.Errorf("process_vm pid %d, %d ranges: %w", pid, len(ranges), err)
		case n != len(local):
			return fmt.Errorf("process_vm pid %d, %d ranges: %d of %d bytes", pid, len(ranges), n, len(local))
		}
		return nil
	}
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

// SetAffinity binds the calling OS thread to cpu. The caller must have
// locked its goroutine to the thread and must not unlock it (the thread
// then ends with the goroutine), or the Go runtime will run other
// goroutines on a bound thread.
func SetAffinity(cpu int) error {
	var set unix.CPUSet
	set.Set(cpu)
	return unix.SchedSetaffinity(0, &set)
}

// Affinity is the calling OS thread's CPU affinity, in increasing order.
func Affinity() ([]int, error) {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return nil, err
	}
	var cpus []int
	for c := 0; c < len(set)*64; c++ {
		if set.IsSet(c) {
			cpus = append(cpus, c)
		}
	}
	return cpus, nil
}

// SetAffinitySet binds the calling OS thread to cpus (what SetAffinity
// says of locking holds).
func SetAffinitySet(cpus []int) error {
	var set unix.CPUSet
	for _, c := range cpus {
		set.Set(c)
	}
	return unix.SchedSetaffinity(0, &set)
}

// IsFIFO reports whether the calling OS thread runs under SCHED_FIFO.
func IsFIFO() (bool, error) {
	attr, err := unix.SchedGetAttr(0, 0)
	if err != nil {
		return false, err
	}
	return attr.Policy == schedFIFO, nil
}

// SetNormal puts the calling OS thread back to SCHED_OTHER.
func SetNormal() error {
	attr := unix.SchedAttr{Size: unix.SizeofSchedAttr, Policy: schedOther}
	return unix.SchedSetAttr(0, &attr, 0)
}

// ProcessCPUTime is the CPU time (user+system) used by this process so far.
func ProcessCPUTime() time.Duration {
	var ru unix.Rusage
	unix.Getrusage(unix.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// ShmFile reports whether fd is an open descriptor of a regular file in a
// tmpfs such as ShmDir (a shared-memory region is one; an inherited pipe, or
// a file the Go runtime keeps open, such as a cgroup file, is not).
func ShmFile(fd int) bool {
	var st unix.Stat_t
	var fs unix.Statfs_t
	return unix.Fstat(fd, &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFREG &&
		unix.Fstatfs(fd, &fs) == nil && fs.Type == unix.TMPFS_MAGIC
}

// CloseOnExec sets FD_CLOEXEC on fd, so no program this process executes
// inherits it.
func CloseOnExec(fd int) error {
	flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0)
	if err != nil {
		return fmt.Errorf("fcntl(%d, F_GETFD): %w", fd, err)
	}
	if _, err := unix.FcntlInt(uintptr(fd), unix.F_SETFD, flags|unix.FD_CLOEXEC); err != nil {
		return fmt.Errorf("fcntl(%d, F_SETFD, FD_CLOEXEC): %w", fd, err)
	}
	return nil
}

// ParentPID is the parent of process pid, read from /proc/pid/stat. A
// process whose parent has exited has been reparented (to 1 or a subreaper).
func ParentPID(pid int) (int, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return 0, ErrProcessGone
		}
		return 0, err
	}
	// "pid (comm) state ppid ...": comm may hold spaces and parentheses.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, fmt.Errorf("/proc/%d/stat: no ')' after the command name", pid)
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 2 {
		return 0, fmt.Errorf("/proc/%d/stat: no parent after the command name", pid)
	}
	ppid, err := strconv.Atoi(f[1])
	if err != nil {
		return 0, fmt.Errorf("/proc/%d/stat: parent %q: %w", pid, f[1], err)
	}
	return ppid, nil
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

// Unmapped returns the first page-aligned address in [addr, addr+n) that
// is not mapped in this process, or 0 when every page is (mincore(2),
// which fails with ENOMEM on an unmapped page, asked 1 MiB at a time). A
// page mapped without read permission counts as mapped.
func Unmapped(addr, n uintptr) uintptr {
	if n == 0 {
		return 0
	}
	const chunk = 1 << 20
	page := uintptr(os.Getpagesize()) // 4 KiB, or 16/64 KiB on some arm64 kernels: mincore wants it aligned
	vec := make([]byte, max(1, chunk/page))
	lo, end := addr&^(page-1), addr+n
	if end < addr { // wraps: the top of the address space is never mapped
		end = ^uintptr(0) &^ (page - 1)
	}
	for lo < end {
		m := min(end-lo, chunk)
		_, _, e := unix.Syscall(unix.SYS_MINCORE, lo, m, uintptr(unsafe.Pointer(&vec[0])))
		if e == unix.ENOMEM {
			for p := lo; p < lo+m; p += page { // which page
				if _, _, e := unix.Syscall(unix.SYS_MINCORE, p, page, uintptr(unsafe.Pointer(&vec[0]))); e == unix.ENOMEM {
					return max(p, addr)
				}
			}
			return max(lo, addr)
		}
		lo += m
	}
	return 0
}

// SetThreadNice sets thread tid's nice value (Linux keeps one per thread;
// tid 0: the calling thread). A thread that sets its own must have locked
// its goroutine to the thread and must not unlock it (the thread then ends
// with the goroutine), or the Go runtime will run other goroutines at that
// priority. Raising a priority needs CAP_SYS_NICE (or RLIMIT_NICE).
func SetThreadNice(tid, nice int) error {
	return unix.Setpriority(unix.PRIO_PROCESS, tid, nice)
}

// SetThreadName names the calling OS thread (its comm, at most 15 bytes:
// longer names are cut), with the same locking rule as SetThreadNice.
func SetThreadName(name string) error {
	b := make([]byte, 16)
	copy(b[:15], name)
	return unix.Prctl(unix.PR_SET_NAME, uintptr(unsafe.Pointer(&b[0])), 0, 0, 0)
}
