package main

import (
	"testing"
	"time"
)

func TestSumExec(t *testing.T) {
	b := []byte("computephase (1234, #threads: 5)\n---\nse.exec_start                                :       1000.000000\nse.sum_exec_runtime                          :           159.188915\nse.nr_migrations                             :                   23\n")
	d, ok := sumExec(b)
	if !ok || d != 159188915*time.Nanosecond {
		t.Fatalf("sumExec = %v, %v; want 159.188915ms, true", d, ok)
	}
	if _, ok := sumExec([]byte("se.nr_migrations : 3\n")); ok {
		t.Fatal("sumExec found a value in a file without se.sum_exec_runtime")
	}
}

// TestSplit: the thread with the most CPU in the window is the main one, the
// others are summed, and the window is counted in slices.
func TestSplit(t *testing.T) {
	t0 := time.Unix(100, 0)
	p := &proc{first: t0, last: t0.Add(time.Second), threads: map[int]*thread{
		1: {first: 0, last: 10 * time.Millisecond},
		2: {first: 5 * time.Millisecond, last: 405 * time.Millisecond}, // the main thread
		3: {first: time.Millisecond, last: 4 * time.Millisecond},
	}}
	main, other, n := split(p, 500*time.Microsecond)
	if main != 400*time.Millisecond || other != 13*time.Millisecond || n != 2000 {
		t.Fatalf("split = %v, %v, %v slices; want 400ms, 13ms, 2000", main, other, n)
	}
}
