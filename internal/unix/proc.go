//go:build linux

package unix

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// CreateRegion makes an anonymous shared-memory file of size bytes for a
// node's region: a memfd (no name in any file system, so nothing can be left
// behind whatever kills the creator), mode 0600, close-on-exec, its size
// sealed so that no process sharing it can shrink it under another's mapping.
// Where memfd_create is refused it falls back to an unnamed O_TMPFILE file in
// ShmDir. name only labels the descriptor (/proc/PID/fd shows "memfd:name").
func CreateRegion(name string, size int) (*os.File, error) {
	fd, err := unix.MemfdCreate(name, unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING)
	sealed := err == nil
	if err != nil {
		memfdErr := err
		fd, err = unix.Open(ShmDir, unix.O_RDWR|unix.O_TMPFILE|unix.O_CLOEXEC, 0o600)
		if err != nil {
			return nil, fmt.Errorf("create region %s: memfd_create: %v; O_TMPFILE in %s: %w", name, memfdErr, ShmDir, err)
		}
	}
	f := os.NewFile(uintptr(fd), "region "+name)
	if err := unix.Fchmod(fd, 0o600); err != nil {
		f.Close()
		return nil, fmt.Errorf("create region %s: chmod 0600: %w", name, err)
	}
	if err := unix.Ftruncate(fd, int64(size)); err != nil {
		f.Close()
		return nil, fmt.Errorf("size region %s to %d bytes: %w", name, size, err)
	}
	if sealed {
		if _, err := unix.FcntlInt(uintptr(fd), unix.F_ADD_SEALS, unix.F_SEAL_SHRINK|unix.F_SEAL_GROW|unix.F_SEAL_SEAL); err != nil {
			f.Close()
			return nil, fmt.Errorf("seal region %s: %w", name, err)
		}
	}
	return f, nil
}

// SetChildSubreaper makes this process the reaper of its orphaned
// descendants: a process whose parent dies is re-parented here instead of to
// init, so Children finds it. The setting lasts for the life of the process.
func SetChildSubreaper() error {
	return unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
}

// Children lists the child processes of this process by scanning /proc.
func Children() ([]Child, error) {
	self := os.Getpid()
	d, err := os.Open("/proc")
	if err != nil {
		return nil, err
	}
	names, err := d.Readdirnames(-1)
	d.Close()
	if err != nil {
		return nil, err
	}
	var out []Child
	for _, n := range names {
		pid, err := strconv.Atoi(n)
		if err != nil || pid == self {
			continue
		}
		stat, err := os.ReadFile("/proc/" + n + "/stat")
		if err != nil {
			continue // gone meanwhile
		}
		// pid (comm) state ppid ...; comm may hold spaces and parentheses.
		i := bytes.LastIndexByte(stat, ')')
		if i < 0 {
			continue
		}
		f := bytes.Fields(stat[i+1:])
		if len(f) < 2 {
			continue
		}
		if ppid, err := strconv.Atoi(string(f[1])); err == nil && ppid == self {
			out = append(out, Child{PID: pid, Zombie: string(f[0]) == "Z"})
		}
	}
	return out, nil
}

// ChildPIDs lists the child processes of this process from
// /proc/self/task/*/children: cheap (it reads no other process's files) but,
// as the kernel documents, a snapshot that may miss a child being created or
// re-parented meanwhile. Use Children where a complete list matters. An error
// means the kernel lacks the interface (CONFIG_PROC_CHILDREN).
func ChildPIDs() ([]int, error) {
	d, err := os.Open("/proc/self/task")
	if err != nil {
		return nil, err
	}
	tids, err := d.Readdirnames(-1)
	d.Close()
	if err != nil {
		return nil, err
	}
	var out []int
	found := false
	for _, tid := range tids {
		b, err := os.ReadFile("/proc/self/task/" + tid + "/children")
		if err != nil {
			continue // the thread exited, or no such file
		}
		found = true
		for _, f := range bytes.Fields(b) {
			if pid, err := strconv.Atoi(string(f)); err == nil {
				out = append(out, pid)
			}
		}
	}
	if !found {
		return nil, errors.New("/proc/self/task/*/children not available")
	}
	return out, nil
}

// DieWithParent is the SysProcAttr of a child that the kernel kills
// (SIGKILL) when the thread that started it exits: start it from a locked
// thread, and it dies with this process, whatever kills it.
func DieWithParent() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}

// ReapIfExited reaps child pid if it has exited, without waiting.
func ReapIfExited(pid int) {
	var ws unix.WaitStatus
	for {
		if _, err := unix.Wait4(pid, &ws, unix.WNOHANG, nil); err != unix.EINTR {
			return
		}
	}
}

// KillChild sends SIGKILL to pid. Use it only on an unreaped child (one that
// Children listed and nobody has waited for yet): its pid cannot have been
// reused.
func KillChild(pid int) error { return unix.Kill(pid, unix.SIGKILL) }

// Reap waits for child pid to exit and releases it. A pid that is not (or no
// longer) a child is not an error.
func Reap(pid int) error {
	var ws unix.WaitStatus
	for {
		_, err := unix.Wait4(pid, &ws, 0, nil)
		switch {
		case err == unix.EINTR:
			continue
		case err == nil, errors.Is(err, unix.ECHILD):
			return nil
		}
		return fmt.Errorf("wait4 pid %d: %w", pid, err)
	}
}

// AllowReadsFrom lets process pid and its descendants read this process's
// memory with process_vm_readv where the Yama LSM would refuse it
// (ptrace_scope 1 allows only ancestors): a rank names its launcher, so that
// its sibling ranks can copy from it. Without Yama there is nothing to
// allow, and that is not an error.
func AllowReadsFrom(pid int) error {
	err := unix.Prctl(unix.PR_SET_PTRACER, uintptr(pid), 0, 0, 0)
	if err == unix.EINVAL {
		return nil
	}
	return err
}

// Memfd makes an anonymous memory file of size 0 (memfd_create, close on
// exec): nothing names it in any file system, so it goes with the last
// descriptor or mapping. name labels it in /proc/PID/fd ("/memfd:name").
func Memfd(name string) (int, error) {
	return unix.MemfdCreate(name, unix.MFD_CLOEXEC)
}

// SiblingReadsRefused reports whether the Yama LSM refuses process_vm_readv
// between sibling processes whatever they allow with AllowReadsFrom:
// ptrace_scope 3 (no attach at all), or 2 (attach only with CAP_SYS_PTRACE)
// for a process that is not root. Without Yama it is false.
func SiblingReadsRefused() bool {
	b, err := os.ReadFile("/proc/sys/kernel/yama/ptrace_scope")
	if err != nil {
		return false
	}
	switch strings.TrimSpace(string(b)) {
	case "3":
		return true
	case "2":
		return os.Geteuid() != 0
	}
	return false
}
