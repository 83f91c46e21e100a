package main

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestDatarep runs testdata/datarep.c: user data representations
// (MPI_Register_datarep and _c) converting on every read and write
// (byte-swapped ints, 8-byte file ints for 4-byte memory ints, native
// read-back of the file's bytes, portable and byte-displacement filetypes,
// get_type_extent, a strided memory type over several conversion chunks
// whose positions follow each other, MPI_CONVERSION_FN_NULL, a read at the
// end of the file, ordered writes, and the error classes), as a singleton
// and on 3 ranks over 2 logical nodes. Nothing may be left in its
// directory.
func TestDatarep(t *testing.T) {
	exe := compile(t, "bcscc", "testdata/datarep.c")
	chunks := regexp.MustCompile(`datarep chunks (\d+)`)
	check := func(t *testing.T, r result, n int) {
		okRanks(t, r, "datarep", n)
		if strings.Contains(r.stderr, "not released") || strings.Contains(r.stderr, "warning") {
			t.Fatalf("warnings:\n%s", r.stderr)
		}
		m := chunks.FindStringSubmatch(r.stdout)
		if m == nil {
			t.Fatalf("no chunk count:\n%s", r.stdout)
		}
		// 100000 ints of 8 file bytes in conversion buffers of convChunk.
		if k, _ := strconv.Atoi(m[1]); int64(k) != (800000+convChunk-1)/convChunk {
			t.Fatalf("the strided write took %d conversion calls, want %d", k, (800000+convChunk-1)/convChunk)
		}
	}
	t.Run("singleton", func(t *testing.T) {
		dir := t.TempDir()
		check(t, run(t, exe, dir), 1)
		emptyDir(t, dir)
	})
	t.Run(fmt.Sprintf("n%d-nodes%d", 3, 2), func(t *testing.T) {
		dir := t.TempDir()
		check(t, bcsrun(t, "-n", "3", "--nodes", "2", exe, dir), 3)
		emptyDir(t, dir)
	})
}

// TestDatarepShortWrite runs testdata/datarepshort.c: a write through a
// user data representation that the file system cuts short (the file size
// limit) fails with MPI_ERR_NO_SPACE, and its status and the individual
// file pointer both count the whole etypes written (etypes of one int and
// of two). Singleton: the limit is the process's own.
func TestDatarepShortWrite(t *testing.T) {
	exe := compile(t, "bcscc", "testdata/datarepshort.c")
	dir := t.TempDir()
	okRanks(t, run(t, exe, dir), "datarepshort", 1)
	emptyDir(t, dir)
}
