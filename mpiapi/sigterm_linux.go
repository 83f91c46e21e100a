//go:build linux

package mpiapi

import (
	"syscall"
	"unsafe"
)

// sigAct is the kernel's struct sigaction, as bytes (its handler first on
// every architecture; 32 bytes hold it on each).
type sigAct [4]uint64

const (
	sigDFL = 0
	sigIGN = 1
)

// sigaction sets sig's action to set (if not nil) and returns the one it had,
// straight from the kernel (a C program's disposition is not the Go
// runtime's to know).
func sigaction(sig syscall.Signal, set *sigAct) (old sigAct, ok bool) {
	_, _, e := syscall.RawSyscall6(syscall.SYS_RT_SIGACTION, uintptr(sig), uintptr(unsafe.Pointer(set)), uintptr(unsafe.Pointer(&old)), 8, 0, 0)
	return old, e == 0
}

// handler is the action's handler: sigDFL, sigIGN or a function's address.
func (a *sigAct) handler() uintptr { return *(*uintptr)(unsafe.Pointer(&a[0])) }
