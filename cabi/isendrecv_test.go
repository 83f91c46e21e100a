package main

import "testing"

// TestIsendrecvRecvRefused runs testdata/isendrecv_fail.c: when
// MPI_Isendrecv's receive is refused after its send was posted, the send
// goes on with its own pack buffer, which a later packed send does not
// get while it is in flight.
func TestIsendrecvRecvRefused(t *testing.T) {
	exe := compile(t, "bcscc", "testdata/isendrecv_fail.c")
	t.Setenv("BCS_REQUESTS_MAX", "16")
	okRanks(t, bcsrun(t, "-n", "2", exe), "isendrecvfail", 2)
}
