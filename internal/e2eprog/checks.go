package main

import (
	"fmt"

	mpi "github.com/bcsmpi/bcsmpi/mpiapi"
)

// checkScenario breaks one of the rules BCS_CHECK=buffers checks (run by
// cmd/bcsrun's check tests, two ranks; the check report aborts the job under
// the default error handler, or is a warning under buffers:warn, after
// which the scenario finishes and exits 0).
func checkScenario(name string) {
	me := w.Rank()
	const big = 4 << 20 // several slices at the default budget
	switch name {
	case "sendmod-inline", "sendmod-large": // a send buffer modified before its Wait
		n := 64
		if name == "sendmod-large" {
			n = big
		}
		if me == 0 {
			buf := make([]byte, n)
			r, err := mpi.Isend(w, buf, 1, 7)
			check(err)
			buf[n-10] = 1 // last block
			buf[n/2+5] = 1
			_, err = mpi.Wait(r)
			check(err)
		} else {
			_, err := mpi.Recv(w, make([]byte, n), 0, 7)
			check(err)
		}
	case "sendmod-restore": // modified while the runtime reads it, restored before the Wait
		if me == 0 {
			buf := make([]byte, big)
			r, err := mpi.Isend(w, buf, 1, 7)
			check(err)
			buf[100] = 1
			_, err = mpi.Recv(w, make([]byte, 1), 1, 8) // rank 1 has the message
			check(err)
			buf[100] = 0
			_, err = mpi.Wait(r)
			check(err)
		} else {
			_, err := mpi.Recv(w, make([]byte, big), 0, 7)
			check(err)
			check(mpi.Send(w, []byte{1}, 0, 8))
		}
	case "recvwrite-inline", "recvwrite-large": // a receive buffer written before the runtime writes it
		n := 64
		if name == "recvwrite-large" {
			n = big
		}
		if me == 1 {
			buf := make([]byte, n)
			r, err := mpi.Irecv(w, buf, 0, 7)
			check(err)
			buf[n/2+5] = 1
			check(mpi.Barrier(w)) // the send starts after this write
			_, err = mpi.Wait(r)
			check(err)
		} else {
			check(mpi.Barrier(w))
			check(mpi.Send(w, make([]byte, n), 1, 7))
		}
	case "recvwrite-past": // written past what the message delivers
		if me == 1 {
			buf := make([]byte, 3*4096)
			r, err := mpi.Irecv(w, buf, 0, 7)
			check(err)
			buf[2*4096+1] = 1
			check(mpi.Barrier(w))
			_, err = mpi.Wait(r)
			check(err)
		} else {
			check(mpi.Barrier(w))
			check(mpi.Send(w, make([]byte, 100), 1, 7))
		}
	case "overlap-recv": // two outstanding receives into overlapping ranges
		if me == 1 {
			buf := make([]int64, 100)
			a, err := mpi.Irecv(w, buf[:60], 0, 1)
			check(err)
			b, err := mpi.Irecv(w, buf[40:], 0, 2)
			check(err)
			check(mpi.Waitall(a, b))
		} else {
			check(mpi.Send(w, make([]int64, 60), 1, 1))
			check(mpi.Send(w, make([]int64, 60), 1, 2))
		}
	case "overlap-coll": // a send from the output of an outstanding collective
		send, recv := make([]float64, 1000), make([]float64, 1000)
		r, err := mpi.Iallreduce(w, send, recv, mpi.Sum)
		check(err)
		var s *mpi.Request
		if me == 0 {
			s, err = mpi.Isend(w, recv[500:], 1, 3)
			check(err)
		} else {
			s, err = mpi.Irecv(w, make([]float64, 500), 0, 3)
			check(err)
		}
		check(mpi.Waitall(r, s))
	case "sendmod-bcast": // a broadcast's buffer modified at the root before its Wait
		buf := make([]int32, big/4)
		r, err := mpi.Ibcast(w, buf, 0)
		check(err)
		if me == 0 {
			buf[len(buf)/4] = 9
		}
		_, err = mpi.Wait(r)
		check(err)
	case "recvwrite-iallgather": // a nonblocking collective's receive buffer written before the runtime writes it
		const n = 1 << 20
		recv := make([]byte, 2*n)
		if me == 0 {
			r, err := mpi.Iallgather(w, make([]byte, n), recv)
			check(err)
			recv[n+3*4096+5] = 1                // in rank 1's block: 4 KiB block 259
			check(mpi.Send(w, []byte{1}, 1, 8)) // rank 1 posts after this write
			_, err = mpi.Wait(r)
			check(err)
		} else {
			_, err := mpi.Recv(w, make([]byte, 1), 0, 8)
			check(err)
			r, err := mpi.Iallgather(w, make([]byte, n), recv)
			check(err)
			_, err = mpi.Wait(r)
			check(err)
		}
	case "recvwrite-iallreduce": // the same, into a reduction's result over several slices
		const n = 512 << 10 // float64s: 4 MiB, segmented over slices
		recv := make([]float64, n)
		if me == 0 {
			r, err := mpi.Iallreduce(w, make([]float64, n), recv, mpi.Sum)
			check(err)
			recv[n/2+3] = 1 // byte 2097176: 4 KiB block 512
			check(mpi.Send(w, []byte{1}, 1, 8))
			_, err = mpi.Wait(r)
			check(err)
		} else {
			_, err := mpi.Recv(w, make([]byte, 1), 0, 8)
			check(err)
			r, err := mpi.Iallreduce(w, make([]float64, n), recv, mpi.Sum)
			check(err)
			_, err = mpi.Wait(r)
			check(err)
		}
	default:
		fail("unknown check scenario %q", name)
	}
	if me == 0 {
		fmt.Println("check scenario done")
	}
}
