// Command pingpong bounces a message between ranks 0 and 1 and reports the
// round-trip time in milliseconds and in slices. Other ranks idle.
//
//	bcsrun -n 2 pingpong [-size BYTES] [-iters N]
package main

import (
	"flag"
	"fmt"
	"os"
	"time"

	mpi "github.com/bcsmpi/bcsmpi/mpiapi"
)

func main() {
	size := flag.Int("size", 1024, "message size in bytes")
	iters := flag.Int("iters", 100, "round trips")
	flag.Parse()
	if err := mpi.Init(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	w := mpi.World()
	if w.Size() < 2 {
		fmt.Fprintln(os.Stderr, "pingpong needs at least 2 ranks")
		mpi.Abort(w, 2)
	}
	buf := make([]byte, *size)
	check := func(err error) {
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			mpi.Abort(w, 1)
		}
	}
	t0 := mpi.Wtime()
	for i := 0; i < *iters; i++ {
		switch w.Rank() {
		case 0:
			for j := range buf {
				buf[j] = byte(i + j)
			}
			check(mpi.Send(w, buf, 1, i))
			st, err := mpi.Recv(w, buf, 1, i)
			check(err)
			for j := range buf {
				if buf[j] != byte(i+j+1) {
					check(fmt.Errorf("iteration %d byte %d = %d, want %d (count %d)", i, j, buf[j], byte(i+j+1), st.Count()))
				}
			}
		case 1:
			_, err := mpi.Recv(w, buf, 0, i)
			check(err)
			for j := range buf {
				buf[j]++
			}
			check(mpi.Send(w, buf, 0, i))
		}
	}
	if w.Rank() == 0 {
		rt := (mpi.Wtime() - t0) / float64(*iters)
		slice := time.Duration(0)
		if v, err := time.ParseDuration(os.Getenv("BCS_TIMESLICE_NS") + "ns"); err == nil {
			slice = v
		}
		fmt.Printf("pingpong: %d iterations of %d bytes: %.3f ms per round trip (%.2f slices of %v), data verified\n",
			*iters, *size, rt*1e3, rt/slice.Seconds(), slice)
	}
	check(mpi.Finalize())
}
