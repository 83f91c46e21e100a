//go:build linux

package unix

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// InGroup is the SysProcAttr of a child like DieWithParent's that is also
// put in process group pgid (0: a new group whose id is the child's pid), so
// that SignalGroup reaches it and the processes it starts.
func InGroup(pgid int) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true, Pgid: pgid}
}

// SignalGroup sends sig to every process of process group pgid (killpg).
func SignalGroup(pgid int, sig syscall.Signal) error {
	if pgid <= 0 {
		return unix.EINVAL
	}
	return unix.Kill(-pgid, sig)
}

// Signal sends sig to process pid.
func Signal(pid int, sig syscall.Signal) error { return unix.Kill(pid, sig) }

// ProcessGroup returns the process group of pid, which may be an unreaped
// (zombie) child: it keeps its group until it is reaped.
func ProcessGroup(pid int) (int, error) { return unix.Getpgid(pid) }
