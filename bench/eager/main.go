// Command eager measures what blocking small sends cost in slices: a
// stream (rank 0 sends -n messages of -size bytes to rank 1 with MPI_Send,
// rank 1 receives them with MPI_Recv) or an exchange (both ranks, -n
// times: MPI_Send to the other, then MPI_Recv from it). Run it under
// bcsrun -v, which prints the job's slice count, at two values of -n: the
// difference of the slice counts over the difference of -n is the slices
// per message, free of start-up. Every message is checked.
//
//	bcsrun -v -n 2 bin/eager -mode stream -n 2000 -size 8
//	bcsrun -v -n 2 bin/eager -mode exchange -n 500 -size 8
//
// The stream is also the flood that eager_max bounds (mpiapi's eager.go):
// rank 0 sends faster than rank 1 receives, and the line printed says how
// many of its sends were unmatched at most. The runtime's memory then
// follows eager_max, not -n: compare bcsrun's peak RSS (GNU time -v,
// "Maximum resident set size", which is bcsrun's, the agents included)
// at a large -n with BCS_EAGER_MAX=1048576 (no bound within -n) and the
// default:
//
//	BCS_EAGER_MAX=1048576 /usr/bin/time -v bcsrun -n 2 --timeslice 200us bin/eager -n 50000 -size 960
//	/usr/bin/time -v bcsrun -n 2 --timeslice 200us bin/eager -n 50000 -size 960
//
// Busy 2-core host (load 40-86), 2026-11-28, peak RSS of bcsrun (agent
// and master), no bound against eager_max 1024: -n 10000 28.8 MB against
// 19.7 MB; 30000 56.9 against 19.9; 100000 159.2 against 20.5 (the ranks
// about 11 MB either way); the stream takes as long (the receiver paces it).
package main

import (
	"flag"
	"fmt"
	"os"

	mpi "github.com/bcsmpi/bcsmpi/mpiapi"
)

func main() {
	mode := flag.String("mode", "stream", "stream or exchange")
	n := flag.Int("n", 1000, "messages (stream) or exchanges")
	size := flag.Int("size", 8, "message size in bytes (at most inline_max for an eager send)")
	flag.Parse()
	if err := mpi.Init(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	w := mpi.World()
	check := func(err error) {
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			mpi.Abort(w, 1)
		}
	}
	if w.Size() != 2 || (*mode != "stream" && *mode != "exchange") || *size < 1 {
		fmt.Fprintln(os.Stderr, "eager: want 2 ranks, -mode stream or exchange, -size at least 1")
		mpi.Abort(w, 2)
	}
	me, other := w.Rank(), 1-w.Rank()
	out, in := make([]byte, *size), make([]byte, *size)
	fill := func(b []byte, from, i int) {
		for j := range b {
			b[j] = byte(from*31 + i*7 + j)
		}
	}
	verify := func(from, i int) {
		for j := range in {
			if in[j] != byte(from*31+i*7+j) {
				check(fmt.Errorf("message %d from rank %d: byte %d = %d, want %d", i, from, j, in[j], byte(from*31+i*7+j)))
			}
		}
	}
	t0 := mpi.Wtime()
	for i := 0; i < *n; i++ {
		if *mode == "exchange" || me == 0 {
			fill(out, me, i)
			check(mpi.Send(w, out, other, i))
		}
		if *mode == "exchange" || me == 1 {
			_, err := mpi.Recv(w, in, other, i)
			check(err)
			verify(other, i)
		}
	}
	if me == 0 {
		_, most, limit := mpi.EagerHeld()
		fmt.Printf("eager: %s of %d messages of %d bytes: %.3f ms per message, data verified; at most %d eager sends unmatched (limit %d)\n", *mode, *n, *size, (mpi.Wtime()-t0)*1e3/float64(*n), most, limit)
	}
	check(mpi.Finalize())
}
