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

// TestNullArgs runs testdata/nullargs.c: a NULL output argument to the
// query calls (extents, sizes, counts, names, envelopes, comparisons,
// errhandlers, info, the environment, ...) is MPI_ERR_ARG, never a crash,
// before MPI_Init too (found by MPICH's errors/datatype *_nullarg tests).
func TestNullArgs(t *testing.T) {
	exe := compile(t, "bcscc", "testdata/nullargs.c")
	okRanks(t, bcsrun(t, "-n", "2", exe), "nullargs", 2)
}
