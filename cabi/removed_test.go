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

// TestFintConversions builds and runs testdata/fint.c: MPI_Fint and the
// MPI_<handle>_c2f/_f2c conversions (outside the standard ABI; mpi.h keeps
// them for C programs such as LAMMPS' library interface) round-trip handles,
// and the converted ones work.
func TestFintConversions(t *testing.T) {
	exe := compile(t, "bcscc", "testdata/fint.c")
	okRanks(t, bcsrun(t, "-n", "3", exe), "fint", 3)
}
