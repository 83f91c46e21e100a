//go:build !linux

package main

import "errors"

type schedSnap struct {
	at, on, runq, nivcsw int64
	steal                int64
	waiting              int
	tids                 map[int]bool
}

func takeSched() (schedSnap, error) {
	return schedSnap{}, errors.New("no /proc/self/task/*/schedstat: the kernel's accounting is read on Linux only")
}
