package main

// Matched probes (MPI_Mprobe, MPI_Improbe, MPI_Mrecv, MPI_Imrecv).

type msgEntry struct {
	gen  uint32
	live bool
}

var msgs []msgEntry
