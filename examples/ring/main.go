// Command ring passes a token around all ranks; each rank adds its rank number.
// Rank 0 checks the sum after each lap.
//
//	bcsrun -n 4 ring [-laps N]
package main

import (
	"flag"
	"fmt"
	"os"

	mpi "github.com/bcsmpi/bcsmpi/mpiapi"
)

func main() {
	laps := flag.Int("laps", 3, "laps around the ring")
	flag.Parse()
	if err := mpi.Init(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	w := mpi.World()
	me, n := w.Rank(), w.Size()
	check := func(err error) {
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			mpi.Abort(w, 1)
		}
	}
	next, prev := (me+1)%n, (me+n-1)%n
	token := []int64{0}
	for lap := 0; lap < *laps; lap++ {
		if me == 0 {
			token[0] = 0
			check(mpi.Send(w, token, next, lap))
			st, err := mpi.Recv(w, token, prev, lap)
			check(err)
			want := int64(n * (n - 1) / 2)
			if token[0] != want || st.Source != prev || st.Count() != 1 {
				check(fmt.Errorf("lap %d: token %d from %d (count %d), want %d from %d", lap, token[0], st.Source, st.Count(), want, prev))
			}
			fmt.Printf("ring: lap %d ok, token %d\n", lap, token[0])
		} else {
			_, err := mpi.Recv(w, token, prev, lap)
			check(err)
			token[0] += int64(me)
			check(mpi.Send(w, token, next, lap))
		}
	}
	check(mpi.Finalize())
}
