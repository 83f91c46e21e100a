// Command bw is a rank program measuring bandwidth: rank 0 sends -count
// messages of -size bytes to rank 1 (Isend/Irecv, -window in flight), rank 1
// checks the last one. Rank 0 also times a plain memcpy of the same size in
// the same run and prints both and their ratio.
//
//	bcsrun -n 2 [--nodes 2] bw -size 1048576 -count 64
package main

import (
	"flag"
	"fmt"
	"os"
	"time"

	mpi "github.com/bcsmpi/bcsmpi/mpiapi"
)

func main() {
	size := flag.Int("size", 1<<20, "message size in bytes")
	count := flag.Int("count", 32, "messages")
	window := flag.Int("window", 4, "messages in flight")
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
	bufs := make([][]byte, *window)
	for i := range bufs {
		bufs[i] = make([]byte, *size)
		for j := range bufs[i] {
			bufs[i][j] = byte(i + j)
		}
	}
	check(mpi.Send(w, []byte{}, 1-w.Rank(), 9)) // line up
	_, err := mpi.Recv(w, []byte{}, 1-w.Rank(), 9)
	check(err)
	t0 := time.Now()
	for sent := 0; sent < *count; sent += *window {
		var rs []*mpi.Request
		for i := 0; i < *window && sent+i < *count; i++ {
			var r *mpi.Request
			if w.Rank() == 0 {
				r, err = mpi.Isend(w, bufs[i], 1, sent+i)
			} else {
				r, err = mpi.Irecv(w, bufs[i], 0, sent+i)
			}
			check(err)
			rs = append(rs, r)
		}
		check(mpi.Waitall(rs...))
	}
	el := time.Since(t0)
	if w.Rank() == 1 {
		for j, b := range bufs[0] {
			if b != byte(j) {
				check(fmt.Errorf("byte %d = %d, want %d", j, b, byte(j)))
			}
		}
		check(mpi.Send(w, []int64{int64(el)}, 0, 10))
	} else {
		var other = []int64{0}
		_, err := mpi.Recv(w, other, 1, 10)
		check(err)
		el = max(el, time.Duration(other[0]))
		bw := float64(*size) * float64(*count) / el.Seconds()
		// memcpy of the same size, same process, same run: pages warmed, best
		// of five 100 ms trials (the machine is shared and noisy).
		dst := make([]byte, *size)
		copy(dst, bufs[0])
		mc := 0.0
		for trial := 0; trial < 5; trial++ {
			reps := 0
			m0 := time.Now()
			for time.Since(m0) < 100*time.Millisecond {
				copy(dst, bufs[reps%len(bufs)])
				reps++
			}
			mc = max(mc, float64(*size)*float64(reps)/time.Since(m0).Seconds())
		}
		fmt.Printf("bw: %d x %d bytes: %.0f MB/s; memcpy %.0f MB/s; ratio %.3f\n", *count, *size, bw/1e6, mc/1e6, bw/mc)
	}
	check(mpi.Finalize())
}
