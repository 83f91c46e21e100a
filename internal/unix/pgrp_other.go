//go:build !linux

package unix

import "syscall"

func InGroup(pgid int) *syscall.SysProcAttr          { return &syscall.SysProcAttr{} }
func SignalGroup(pgid int, sig syscall.Signal) error { return notSupported("killpg") }
func Signal(pid int, sig syscall.Signal) error       { return notSupported("kill") }
func ProcessGroup(pid int) (int, error)              { return 0, notSupported("getpgid") }
