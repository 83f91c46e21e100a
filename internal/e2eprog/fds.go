package main

import (
	"fmt"
	"os"
	"strings"

	mpi "github.com/bcsmpi/bcsmpi/mpiapi"
)

// neighbourFDs: every rank sends a 64 KiB block to the next rank and receives
// one from the previous (Sendrecv around the ring, three times, checking every
// byte), then all meet in a barrier. By then every connection the job will
// ever make exists; rank 0 counts the sockets its launcher (its parent: bcsrun,
// or bcsd on a host) holds and prints "launcher sockets: K". The test compares
// K with the node count (cmd/bcsrun: TestLazyConnectionsScaleWithNodes).
func neighbourFDs() {
	me, n := w.Rank(), w.Size()
	next, prev := (me+1)%n, (me+n-1)%n
	got := make([]byte, 64<<10)
	for round := range 3 {
		_, err := mpi.Sendrecv(w, pattern(me, next, len(got), round), next, round, got, prev, round)
		check(err)
		want := pattern(prev, me, len(got), round)
		for i := range got {
			if got[i] != want[i] {
				fail("round %d: byte %d from rank %d is %d, want %d", round, i, prev, got[i], want[i])
			}
		}
	}
	check(mpi.Barrier(w))
	if me == 0 {
		dir := fmt.Sprintf("/proc/%d/fd", os.Getppid())
		ents, err := os.ReadDir(dir)
		check(err)
		sockets := 0
		for _, e := range ents {
			if l, err := os.Readlink(dir + "/" + e.Name()); err == nil && strings.HasPrefix(l, "socket:") {
				sockets++
			}
		}
		fmt.Printf("launcher sockets: %d\n", sockets)
	}
	check(mpi.Barrier(w)) // the launcher's sockets stay as they are until rank 0 has counted
}
