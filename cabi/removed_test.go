package main

import "testing"

// TestRemovedMPI1Functions builds and runs testdata/removed.c: the MPI-1
// functions removed in MPI-3.0 (MPI_Address, MPI_Type_struct and the rest
// that mpi.h keeps for old programs such as HPL) link, forward to their
// replacements and give the same answers (a struct sent from MPI_BOTTOM,
// hvector/hindexed layouts, lb/ub/extent, the errhandler calls).
func TestRemovedMPI1Functions(t *testing.T) {
	exe := compile(t, "bcscc", "testdata/removed.c")
	okRanks(t, bcsrun(t, "-n", "2", exe), "removed", 2)
}
