package main

import (
	"strings"
	"testing"

	"github.com/bcsmpi/bcsmpi/mds"
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

// The MMDS names MPI_Ssend, MPI_Issend, MPI_Mprobe, MPI_Improbe, MPI_Mrecv
// and MPI_Imrecv as primitives of their own (they were counted as Send,
// Isend, Probe, Iprobe and Recv).
func TestMDSNamesSsendAndMprobe(t *testing.T) {
	r, dir := runMDS(t, []string{"BCS_MDS=main"}, "-n", "2", "./e2eprog", "mprims")
	if r.code != 0 || !strings.Contains(r.stdout, "mprims ok 1") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	sums, err := mds.ReadDir(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := map[int][]string{0: {"MPI_Ssend", "MPI_Issend"}, 1: {"MPI_Mprobe", "MPI_Mrecv", "MPI_Improbe", "MPI_Imrecv"}}
	for _, s := range sums {
		names := map[string]bool{}
		for _, row := range s.Rows {
			names[row.Name] = true
		}
		for _, n := range want[s.Rank] {
			if !names[n] {
				t.Errorf("rank %d: no %s row in %+v", s.Rank, n, s.Rows)
			}
		}
		for _, n := range []string{"MPI_Send", "MPI_Isend", "MPI_Probe", "MPI_Recv"} {
			if names[n] {
				t.Errorf("rank %d: a %s row, which this program never calls: %+v", s.Rank, n, s.Rows)
			}
		}
	}
	if !strings.Contains(r.stderr, "MPI_Mprobe") {
		t.Errorf("the printed summary does not name MPI_Mprobe:\n%s", r.stderr)
	}
}
