//go:build !linux

package mpiapi

import "syscall"

type sigAct [4]uint64

const (
	sigDFL = 0
	sigIGN = 1
)

func sigaction(syscall.Signal, *sigAct) (sigAct, bool) { return sigAct{}, false }

func (a *sigAct) handler() uintptr { return uintptr(a[0]) }
