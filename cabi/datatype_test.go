package main

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestDatatypes runs testdata/datatypes.c: every constructor against a
// hand-computed layout, pack/unpack round trips, point-to-point and
// collectives with derived types on both sides and mixed, and the errors of
// uncommitted and freed types; as a singleton, on one rank and on several
// ranks over one and several logical nodes.
func TestDatatypes(t *testing.T) {
	exe := compile(t, "bcscc", "testdata/datatypes.c")
	t.Run("singleton", func(t *testing.T) { okRanks(t, run(t, exe), "datatypes", 1) })
	for _, c := range []struct{ ranks, nodes int }{{1, 1}, {3, 1}, {4, 2}} {
		t.Run(fmt.Sprintf("n%d-nodes%d", c.ranks, c.nodes), func(t *testing.T) {
			okRanks(t, bcsrun(t, "-n", strconv.Itoa(c.ranks), "--nodes", strconv.Itoa(c.nodes), exe), "datatypes", c.ranks)
		})
	}
}

// An uncommitted datatype in a send is MPI_ERR_TYPE naming the type and
// what to do, fatal under the default handler.
func TestUncommittedTypeIsFatal(t *testing.T) {
	exe := compile(t, "bcscc", "testdata/datatypes.c")
	r := run(t, exe, "uncommitted")
	want := regexp.MustCompile(`rank 0: MPI_Send: MPI_ERR_TYPE: datatype = 0x[0-9a-f]+ \(a datatype made by MPI_Type_contiguous\) is not committed; call MPI_Type_commit`)
	if r.code == 0 || strings.Contains(r.stdout, "not reached") || !want.MatchString(r.stderr) {
		t.Fatalf("exit %d, want stderr matching %s\nstdout:\n%s\nstderr:\n%s", r.code, want, r.stdout, r.stderr)
	}
}

// TestCGExample runs the C conjugate gradient (examples/c/cg.c), checked as
// the Go one is: the residual history equals a serial run's bit for bit.
func TestCGExample(t *testing.T) {
	exe := compile(t, "bcscc", "../examples/c/cg.c", "-O2", "-lm")
	for _, c := range []struct{ ranks, nodes string }{{"3", "2"}, {"4", "1"}} {
		r := bcsrun(t, "-n", c.ranks, "--nodes", c.nodes, exe, "999", "60")
		if r.code != 0 || !strings.Contains(r.stdout, "cg: 999 unknowns on "+c.ranks+" ranks: 60 iterations") ||
			!strings.Contains(r.stdout, "cg: residual history identical to the serial run, bit for bit") {
			t.Fatalf("-n %s --nodes %s: exit %d\nstdout:\n%s\nstderr:\n%s", c.ranks, c.nodes, r.code, r.stdout, r.stderr)
		}
	}
	r := run(t, exe, "200", "30")
	if r.code != 0 || !strings.Contains(r.stdout, "bit for bit") {
		t.Fatalf("singleton: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
}

// TestDatatypeVectorScale runs testdata/dtvector.c: a vector of 2^36
// blocks is built, committed and measured at once (it used to be walked
// block by block at construction and at commit, which never finished), and
// the single strided segment that replaced the walk packs, unpacks and
// sends the bytes the definition names, for forward, backward, zero and
// contiguous strides.
func TestDatatypeVectorScale(t *testing.T) {
	exe := compile(t, "bcscc", "testdata/dtvector.c")
	t.Run("singleton", func(t *testing.T) { okRanks(t, run(t, exe), "dtvector", 1) })
	t.Run("n3-nodes2", func(t *testing.T) { okRanks(t, bcsrun(t, "-n", "3", "--nodes", "2", exe), "dtvector", 3) })
}

// TestDatatypeEdges runs testdata/dtedge.c: datatype edge cases found by
// running MPICH's datatype tests, each checked against the standard's
// answer (an empty MPI_Type_create_struct was MPI_ERR_INTERN; MPI_LONG_LONG
// was named MPI_LONG_LONG, where MPICH and Open MPI say MPI_LONG_LONG_INT).
func TestDatatypeEdges(t *testing.T) {
	exe := compile(t, "bcscc", "testdata/dtedge.c")
	t.Run("singleton", func(t *testing.T) { okRanks(t, run(t, exe), "dtedge", 1) })
	t.Run("n3-nodes2", func(t *testing.T) { okRanks(t, bcsrun(t, "-n", "3", "--nodes", "2", exe), "dtedge", 3) })
}
