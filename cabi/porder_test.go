package main

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestPersistOrder runs testdata/porder.c: persistent collectives (two
// broadcasts with different roots, an allreduce with MPI_SUM and one with a
// user operation) started in different orders on even and odd ranks, over
// several rounds, on MPI_COMM_WORLD and a split of it, with ordinary
// collectives between the starts, match by initialization order; on one
// node and two, and under --deterministic and --record.
func TestPersistOrder(t *testing.T) {
	exe := compile(t, "bcscc", "testdata/porder.c")
	for _, c := range []struct {
		name string
		args []string
	}{
		{"n4", []string{"-n", "4", exe}},
		{"n3", []string{"-n", "3", exe}},
		{"nodes2", []string{"-n", "4", "--nodes", "2", exe}},
		{"deterministic", []string{"-n", "4", "--deterministic", exe}},
		{"record", []string{"-n", "3", "--record", filepath.Join(t.TempDir(), "rec"), exe}},
	} {
		t.Run(c.name, func(t *testing.T) {
			n := 4
			if c.args[1] == "3" {
				n = 3
			}
			okRanks(t, bcsrun(t, c.args...), "porder", n)
		})
	}
}

// TestPersistOrderMismatch: members whose k-th persistent initializations
// differ are a collective mismatch, reported naming both calls.
func TestPersistOrderMismatch(t *testing.T) {
	exe := compile(t, "bcscc", "testdata/porder.c")
	r := bcsrun(t, "-n", "3", exe, "mismatch")
	if r.code == 0 || strings.Contains(r.stdout, "not reached") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	for _, w := range []string{
		"collective mismatch on MPI_COMM_WORLD, persistent collective #1",
		"called MPI_Bcast(root 0, 8 x int64)",
		"called MPI_Allreduce(MPI_SUM, 8 x int64)",
		"every member must initialize the same persistent collectives in the same order",
	} {
		if !strings.Contains(r.stderr, w) {
			t.Errorf("stderr lacks %q:\n%s", w, r.stderr)
		}
	}
}

// TestPersistStartOrder runs testdata/pstart.c: a barrier, a gather, an
// alltoall, a reduction and two neighbourhood collectives on a ring, each
// rank starting them in an order of its own that changes every round
// (MPI_Startall or MPI_Start each) and completing them with MPI_Waitall, an
// MPI_Testall loop or MPI_Wait in another order; a gather started twice in
// a round, before the others' starts on even ranks and after them on odd
// ones; an intercommunicator's persistent collectives started in opposite
// orders by its groups; and a communicator asserting strict ordering. On
// one node and two, under --deterministic, and recorded then replayed.
func TestPersistStartOrder(t *testing.T) {
	exe := compile(t, "bcscc", "testdata/pstart.c")
	rec := filepath.Join(t.TempDir(), "rec")
	for _, c := range []struct {
		name string
		n    int
		args []string
	}{
		{"n2", 2, nil},
		{"n3", 3, nil},
		{"n4", 4, nil},
		{"nodes2", 4, []string{"--nodes", "2"}},
		{"deterministic", 3, []string{"--deterministic"}},
		{"record", 3, []string{"--record", rec}},
		{"replay", 3, []string{"--replay", rec}}, // of the record case's job
	} {
		t.Run(c.name, func(t *testing.T) {
			args := append([]string{"-n", strconv.Itoa(c.n)}, c.args...)
			okRanks(t, bcsrun(t, append(args, exe)...), "pstart", c.n)
		})
	}
}

// TestPersistStartOrderMismatch: the second persistent initialization
// differs between rank 0 and the others (a broadcast's root, an
// allreduce's count) and the requests are started in opposite orders: the
// job fails with a collective mismatch naming that initialization and both
// calls, not with a mismatch between the barrier and the other call.
func TestPersistStartOrderMismatch(t *testing.T) {
	exe := compile(t, "bcscc", "testdata/pstart.c")
	for _, c := range []struct {
		arg  string
		want []string
	}{
		{"root", []string{"called MPI_Bcast(root 0, 4 x int64)", "called MPI_Bcast(root 1, 4 x int64)", "(different roots)"}},
		{"count", []string{"called MPI_Allreduce(MPI_SUM, 4 x int64)", "called MPI_Allreduce(MPI_SUM, 3 x int64)", "(different element counts)"}},
	} {
		t.Run(c.arg, func(t *testing.T) {
			r := bcsrun(t, "-n", "3", exe, c.arg)
			if r.code == 0 || strings.Contains(r.stdout, "not reached") {
				t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
			}
			want := append([]string{"collective mismatch on MPI_COMM_WORLD, persistent collective #2 (in initialization order), step 1: rank ",
				"every member must initialize the same persistent collectives in the same order"}, c.want...)
			for _, w := range want {
				if !strings.Contains(r.stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, r.stderr)
				}
			}
			if strings.Contains(r.stderr, "MPI_Barrier") {
				t.Errorf("the barrier (init #1, which agrees) was reported:\n%s", r.stderr)
			}
		})
	}
}
