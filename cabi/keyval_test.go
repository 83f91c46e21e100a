package main

import "testing"

// TestKeyvalFreedTwice: a communicator, datatype or window keyval freed by
// the delete callback while another object still holds an attribute of it
// keeps working until that attribute goes (the standard's deferred free);
// freeing the same keyval again, from the program or from the last
// callback, is MPI_ERR_KEYVAL under MPI_ERRORS_RETURN, not silently
// accepted (MPICH's attr/keyval_double_free* expect it accepted; see
// testdata/keyvalfree.c).
func TestKeyvalFreedTwice(t *testing.T) {
	exe := compile(t, "bcscc", "testdata/keyvalfree.c")
	okRanks(t, bcsrun(t, "-n", "2", exe), "keyvalfree", 2)
}
