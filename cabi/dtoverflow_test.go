package main

import (
	"fmt"
	"strconv"
	"testing"
)

// TestDatatypeOverflow runs testdata/dtoverflow.c: constructor arguments
// whose sizes, displacements or argument lists overflow, and MPI_Pack,
// MPI_Unpack, MPI_Send and MPI_Bcast counts whose bytes overflow, are each
// refused with an error class under MPI_ERRORS_RETURN, and the job goes
// on. Before the checks these crashed a rank (a heap overflow in the C
// shim, a panic in a cgo export) or packed past a buffer.
func TestDatatypeOverflow(t *testing.T) {
	exe := compile(t, "bcscc", "testdata/dtoverflow.c")
	t.Run("singleton", func(t *testing.T) { okRanks(t, run(t, exe), "dtoverflow", 1) })
	for _, c := range []struct{ ranks, nodes int }{{2, 1}} {
		t.Run(fmt.Sprintf("n%d-nodes%d", c.ranks, c.nodes), func(t *testing.T) {
			okRanks(t, bcsrun(t, "-n", strconv.Itoa(c.ranks), "--nodes", strconv.Itoa(c.nodes), exe), "dtoverflow", c.ranks)
		})
	}
}
