package main

import "testing"

// TestMPIT runs testdata/mpit.c: control variables read the job's
// configuration (requests_max set through BCS_REQUESTS_MAX, mds through
// BCS_MDS), performance variables change with the traffic the program
// makes, and every MPI_T call answers bad indices, handles and sessions
// with the standard's codes.
func TestMPIT(t *testing.T) {
	exe := compile(t, "bcscc", "testdata/mpit.c")
	t.Run("singleton", func(t *testing.T) { okRanks(t, run(t, exe, "single"), "mpit", 1) })
	t.Run("n3", func(t *testing.T) {
		t.Setenv("BCS_REQUESTS_MAX", "64")
		okRanks(t, bcsrun(t, "-n", "3", exe, "64", "none"), "mpit", 3)
	})
	t.Run("n4-nodes2-mmds", func(t *testing.T) {
		t.Setenv("BCS_MDS", "main")
		t.Setenv("BCS_MDS_DIR", t.TempDir())
		okRanks(t, bcsrun(t, "-n", "4", "--nodes", "2", exe, "4096", "main"), "mpit", 4)
	})
}

// TestExternal32 runs testdata/external.c: external32 byte images of basic,
// pair, complex, long double and derived datatypes against bytes written
// out by hand, their round trips, conversion and truncation errors; the
// f90 datatypes; the ABI and Fortran information; the hardware info; the
// non-blocking buffer flushes.
func TestExternal32(t *testing.T) {
	exe := compile(t, "bcscc", "testdata/external.c")
	t.Run("singleton", func(t *testing.T) { okRanks(t, run(t, exe), "external", 1) })
	t.Run("n3", func(t *testing.T) { okRanks(t, bcsrun(t, "-n", "3", exe), "external", 3) })
}
