package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
)

// emptyDir fails the test if the program left anything in dir.
func emptyDir(t *testing.T, dir string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(ents) > 0 {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Fatalf("left behind in %s: %v", dir, names)
	}
}

// TestIO runs testdata/io.c: open/close/delete and the access-mode error
// classes, explicit offsets, individual and shared file pointers, ordered
// access, interleaved blocks through a vector filetype read back
// contiguously and through the view, derived memory types, nonblocking,
// split collective and _c forms, sizes, atomicity, views, statuses and file
// error handlers, MPI_MODE_SEQUENTIAL, a 2-D array decomposed in
// subarrays; one member's error in a collective failing every member (a
// bad split _end, NULL fh or filename to open, offsets beyond the bound);
// as a singleton and on 2 to 6 ranks over 1 to 3 logical nodes.
// The program deletes its files; nothing may be left in its directory, and
// no resource unreleased. (The program runs under MPICH too:
// mpicc.mpich testdata/io.c && mpiexec.mpich -n 4 ./a.out DIR.)
func TestIO(t *testing.T) {
	exe := compile(t, "bcscc", "testdata/io.c")
	t.Run("singleton", func(t *testing.T) {
		dir := t.TempDir()
		okRanks(t, run(t, exe, dir), "io", 1)
		emptyDir(t, dir)
	})
	for _, c := range []struct{ ranks, nodes int }{{2, 1}, {4, 1}, {3, 3}, {6, 2}} {
		t.Run(fmt.Sprintf("n%d-nodes%d", c.ranks, c.nodes), func(t *testing.T) {
			dir := t.TempDir()
			r := bcsrun(t, "-n", strconv.Itoa(c.ranks), "--nodes", strconv.Itoa(c.nodes), exe, dir)
			okRanks(t, r, "io", c.ranks)
			if strings.Contains(r.stderr, "not released") || strings.Contains(r.stderr, "warning") {
				t.Fatalf("warnings:\n%s", r.stderr)
			}
			emptyDir(t, dir)
		})
	}
}

// A member passing another amode to MPI_File_open under
// MPI_ERRORS_ARE_FATAL (set on MPI_FILE_NULL) ends the job: the message
// names the class, both amodes, and on the others the member that failed;
// nothing is created.
func TestIONotSameFatal(t *testing.T) {
	exe := compile(t, "bcscc", "testdata/io.c")
	dir := t.TempDir()
	r := bcsrun(t, "-n", "3", exe, dir, "nosame")
	if r.code == 0 || strings.Contains(r.stdout, "nosame returned") {
		t.Fatalf("exit %d, want a failed job\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	for _, want := range []string{
		"MPI_File_open: MPI_ERR_NOT_SAME: amode = MPI_MODE_WRONLY|MPI_MODE_CREATE (258) differs from rank 0's MPI_MODE_RDWR|MPI_MODE_CREATE (34)",
	} {
		if !strings.Contains(r.stderr, want) {
			t.Fatalf("stderr lacks %q:\n%s", want, r.stderr)
		}
	}
	emptyDir(t, dir)
}

// A file left open is closed by MPI_Finalize with a warning naming it; its
// MPI_MODE_DELETE_ON_CLOSE still deletes it, and its private communicator
// is freed.
func TestIOFileLeftOpen(t *testing.T) {
	exe := compile(t, "bcscc", "testdata/io.c")
	dir := t.TempDir()
	r := bcsrun(t, "-n", "2", exe, dir, "open")
	okRanks(t, r, "io", 2)
	if !strings.Contains(r.stderr, "left\" (0x") || !strings.Contains(r.stderr, "was never closed (MPI_File_close)") {
		t.Fatalf("no warning naming the file:\n%s", r.stderr)
	}
	if strings.Contains(r.stderr, "not released") {
		t.Fatalf("resources left behind:\n%s", r.stderr)
	}
	emptyDir(t, dir)
}
