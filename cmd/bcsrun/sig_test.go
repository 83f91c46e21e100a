package main

import (
	"strings"
	"testing"
)

// A Go program sending []float64 to a receive of []int32 of the same byte
// length gets MPI_ERR_TYPE on both sides (a synchronous send); under the
// fatal handler the receiver's report names both element types.
func TestTypeSignatureMismatchGo(t *testing.T) {
	r := bcsrun(t, "-n", "3", "--nodes", "2", "./e2eprog", "typemismatch-return")
	for i := range 3 {
		if want := "typemismatch ok " + string(rune('0'+i)); r.code != 0 || !strings.Contains(r.stdout, want) {
			t.Fatalf("exit %d, want %q\nstdout:\n%s\nstderr:\n%s", r.code, want, r.stdout, r.stderr)
		}
	}
	r = bcsrun(t, "-n", "2", "./e2eprog", "typemismatch")
	want := "bcsmpi: rank 1: MPI_Recv: MPI_ERR_TYPE: type signature mismatch with the matching send of rank 0 (tag 0): this receive's elements are int32, its elements are float64"
	if r.code == 0 || !strings.Contains(r.stderr, want) {
		t.Fatalf("exit %d, want stderr containing %q\nstdout:\n%s\nstderr:\n%s", r.code, want, r.stdout, r.stderr)
	}
}
