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
