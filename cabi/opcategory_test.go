package main

import "testing"

// TestOpCategory runs testdata/opcategory.c: predefined operations outside
// the standard's categories (MPI_MAX on MPI_BYTE, MPI_SUM on MPI_C_BOOL,
// also on derived types of them) are MPI_ERR_OP in the collectives and
// MPI_Reduce_local, the bitwise and logical ones still work, and
// MPI_Reduce_local refuses aliased and overlapping buffers (found by
// MPICH's errors/coll rerr and reduce_local tests).
func TestOpCategory(t *testing.T) {
	exe := compile(t, "bcscc", "testdata/opcategory.c")
	t.Run("singleton", func(t *testing.T) { okRanks(t, run(t, exe), "opcategory", 1) })
	t.Run("n3-nodes2", func(t *testing.T) { okRanks(t, bcsrun(t, "-n", "3", "--nodes", "2", exe), "opcategory", 3) })
}
