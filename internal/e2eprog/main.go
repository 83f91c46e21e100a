// Command e2eprog is the rank program of the end-to-end tests. Its first
// argument names a scenario; it checks every byte it receives and exits
// non-zero (via MPI_Abort) on any mismatch.
package main

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"syscall"
	"time"

	"github.com/bcsmpi/bcsmpi/internal/jobenv"
	mpi "github.com/bcsmpi/bcsmpi/mpiapi"
)

var w *mpi.Comm

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		mpi.Abort(w, 1)
	}
}

func fail(format string, a ...any) {
	check(fmt.Errorf("rank %d: "+format, append([]any{w.Rank()}, a...)...))
}

func pattern(src, dst, size, salt int) []byte {
	b := make([]byte, size)
	for i := range b {
		b[i] = byte(src*131 + dst*17 + i*7 + salt)
	}
	return b
}

func main() {
	if os.Args[1] == "lateinit" && os.Getenv(jobenv.VarRank) == "1" {
		time.Sleep(2 * time.Second) // a slow start: rank 0 waits for us meanwhile
	}
	if os.Args[1] == "hog" { // not a rank: the kernel monitor's competitor (kernel.go)
		hog(os.Args[2])
		return
	}
	if os.Args[1] == "noinit" && os.Getenv(jobenv.VarRank) == "1" {
		return // a process of the job that is not an MPI program
	}
	if preInit(os.Args[1:]) {
		return
	}
	check(mpi.Init())
	w = mpi.World()
	switch os.Args[1] {
	case "exchange":
		exchange()
	case "spans": // span.go
		spans()
	case "check": // BCS_CHECK scenarios (checks.go)
		checkScenario(os.Args[2])
	case "semantics":
		semantics()
	case "collectives":
		collectives()
	case "collmismatch":
		collMismatch(os.Args[2])
	case "stalereq":
		staleRequest()
	case "waitany":
		waitanyTwice()
	case "cancelrace": // record and replay: MPI_Cancel against a send (replay.go)
		cancelRace()
	case "replayrace": // record and replay: every timing-dependent call against racing senders (replay.go)
		k, err := strconv.Atoi(os.Args[2])
		check(err)
		replayRace(k)
	case "leaks":
		leaks()
	case "commfree": // a communicator used after MPI_Comm_free
		d, err := w.Dup()
		check(err)
		check(d.Free())
		mpi.Barrier(d)
	case "exit3":
		// Every rank is through Init (its SIGTERM handler, which dumps the
		// MMDS, installed) before rank 1 leaves: Init does not wait for the
		// others, and a rank killed inside Init has nothing to dump.
		mpi.Barrier(w)
		if w.Rank() == 1 {
			os.Exit(3)
		}
		mpi.Recv(w, make([]byte, 1), 1, 0) // never matched: the job must abort
	case "nofinalize":
		if w.Rank() == 1 {
			return
		}
		mpi.Recv(w, make([]byte, 1), 1, 0)
	case "kill":
		if w.Rank() == w.Size()-1 {
			syscall.Kill(os.Getpid(), syscall.SIGKILL)
		}
		mpi.Recv(w, make([]byte, 1), w.Size()-1, 0)
	case "headtohead":
		// Both ranks send first, then receive: safe with buffered (small) sends.
		peer := 1 - w.Rank()
		for i := 0; i < 10; i++ {
			check(mpi.Send(w, []int64{int64(w.Rank()*100 + i)}, peer, i))
			v := []int64{0}
			_, err := mpi.Recv(w, v, peer, i)
			check(err)
			if v[0] != int64(peer*100+i) {
				fail("head-to-head %d: got %d", i, v[0])
			}
		}
		if w.Rank() == 0 {
			fmt.Println("headtohead ok")
		}
	case "badrank": // an argument error under the default, fatal handler
		if w.Rank() == 1 {
			mpi.Send(w, []byte{1}, 99, 0)
		}
		mpi.Recv(w, make([]byte, 1), 1, 0)
	case "badtag":
		if w.Rank() == 0 {
			mpi.Recv(w, make([]byte, 1), 1, -7)
		}
		mpi.Recv(w, make([]byte, 1), 0, 0)
	case "nilcomm":
		if w.Rank() == 0 {
			mpi.Send(nil, []byte{1}, 1, 0)
		}
		mpi.Recv(w, make([]byte, 1), 0, 0)
	case "pending": // finalize with an Irecv still pending
		if w.Rank() == 0 {
			mpi.Irecv(w, make([]byte, 4), 1, 9)
		}
	case "typemismatch", "typemismatch-return": // sig.go
		typeMismatch(os.Args[1] == "typemismatch-return")
	case "mprims": // sig.go
		mprims()
	case "truncate":
		if w.Rank() == 0 {
			check(mpi.Send(w, make([]byte, 64), 1, 0))
		} else {
			mpi.Recv(w, make([]byte, 16), 0, 0)
		}
	case "shm": // the node's region as the rank sees it
		st, err := os.NewFile(3, "shm").Stat()
		check(err)
		fmt.Printf("shm %v uid %d\n", st.Mode().Perm(), st.Sys().(*syscall.Stat_t).Uid)
	case "deadlock": // 0 and 1 receive from each other; the others finish
		if w.Rank() < 2 {
			mpi.Recv(w, make([]byte, 8), 1-w.Rank(), 7)
		}
	case "freeone": // only rank 0 frees a duplicate of the world: its free never completes
		d, err := w.Dup()
		check(err)
		if w.Rank() == 0 {
			check(d.Free())
		}
	case "deadlocklater": // as deadlock, after completions were published to every rank
		for i := 0; i < 3; i++ {
			check(mpi.Barrier(w))
		}
		if w.Rank() < 2 {
			mpi.Recv(w, make([]byte, 8), 1-w.Rank(), 7)
		}
	case "sendsend": // both send 1 MiB first: rendezvous sends wait for receives that never come
		if w.Rank() < 2 {
			mpi.Send(w, make([]byte, 1<<20), 1-w.Rank(), 5)
		}
	case "unmatched": // a small (buffered) message nobody receives
		if w.Rank() == 0 {
			check(mpi.Send(w, []byte("lost"), 1, 3))
		}
	case "lateinit": // rank 1 sleeps 2 s before MPI_Init; rank 0 waits for its message
		switch w.Rank() {
		case 0:
			v := []int64{0}
			_, err := mpi.Recv(w, v, 1, 4)
			check(err)
			if v[0] != 42 {
				fail("lateinit: got %d, want 42", v[0])
			}
			fmt.Println("lateinit ok")
		case 1:
			check(mpi.Send(w, []int64{42}, 0, 4))
		}
	case "noinit": // rank 1 exits without MPI_Init; rank 0 waits for it forever
		if w.Rank() == 0 {
			mpi.Recv(w, make([]byte, 1), 1, 0)
		}
	case "stopped": // rank 0 stops rank 1 (SIGSTOP) while its receive completes, and continues it 1 s later
		stopped()
	case "gangwork": // the gang tests' CPU-bound job (gang.go)
		gangwork(os.Args[2:])
	case "ring": // a token around every rank, then a barrier: rank 0 waits for the last rank to start
		ring()
	case "exec-child":
		execChild()
	case "impersonate":
		impersonate()
	case "contend", "spin": // the kernel monitor's scenarios (kernel.go)
		contend(os.Args[1] == "contend")
	case "race": // deterministic mode's race programs (race.go)
		race(os.Args[2])
	case "neighbourfds": // a ring of Sendrecvs, then rank 0 counts its launcher's sockets (fds.go)
		neighbourFDs()
	case "pairs": // ranks 1 and 2 exchange messages in a loop (hostfail: a partition, a slow link)
		size, err := strconv.Atoi(os.Args[2])
		check(err)
		count, err := strconv.Atoi(os.Args[3])
		check(err)
		pairs(size, count)
	case "hang":
		fmt.Println("ready")
		mpi.Recv(w, make([]byte, 1), mpi.AnySource, 0) // blocks until bcsrun is signalled
	}
	check(mpi.Finalize())
}

// exchange: every rank sends every other rank three messages — inline (small),
// medium, and one larger than a slice's budget — with Isend/Irecv/Waitall, and
// checks every byte.
func exchange() {
	me, n := w.Rank(), w.Size()
	sizes := []int{100, 20000, 3 << 20}
	var reqs []*mpi.Request
	recvs := map[[2]int][]byte{}
	for peer := 0; peer < n; peer++ {
		if peer == me {
			continue
		}
		for i, sz := range sizes {
			buf := make([]byte, sz)
			recvs[[2]int{peer, i}] = buf
			r, err := mpi.Irecv(w, buf, peer, i)
			check(err)
			reqs = append(reqs, r)
		}
	}
	for peer := 0; peer < n; peer++ {
		if peer == me {
			continue
		}
		for i, sz := range sizes {
			r, err := mpi.Isend(w, pattern(me, peer, sz, i), peer, i)
			check(err)
			reqs = append(reqs, r)
		}
	}
	check(mpi.Waitall(reqs...))
	for k, buf := range recvs {
		want := pattern(k[0], me, len(buf), k[1])
		for i := range buf {
			if buf[i] != want[i] {
				fail("message from %d tag %d: byte %d = %d, want %d", k[0], k[1], i, buf[i], want[i])
			}
		}
	}
	if me == 0 {
		fmt.Printf("exchange ok: %d ranks\n", n)
	}
}

// pairs: ranks 1 and 2 exchange size bytes count times (0: until the job
// is ended), checking every byte, and print "ready" once their first
// exchange is done; the other ranks print "ready" and wait in a barrier
// that ends the job. With one rank per host, the traffic is between the
// second and third hosts only.
func pairs(size, count int) {
	me := w.Rank()
	if w.Size() < 3 {
		fail("pairs needs 3 ranks, have %d", w.Size())
	}
	if me == 1 || me == 2 {
		peer := 3 - me
		got := make([]byte, size)
		for i := 0; count == 0 || i < count; i++ {
			_, err := mpi.Sendrecv(w, pattern(me, peer, size, i), peer, i%1000, got, peer, i%1000)
			check(err)
			want := pattern(peer, me, size, i)
			for j := range got {
				if got[j] != want[j] {
					fail("exchange %d from %d: byte %d = %d, want %d", i, peer, j, got[j], want[j])
				}
			}
			if i == 0 {
				fmt.Println("ready")
			}
		}
	} else {
		fmt.Println("ready")
	}
	check(mpi.Barrier(w))
	if me == 0 {
		fmt.Printf("pairs ok: %d exchanges of %d bytes\n", count, size)
	}
}

// semantics: rank 0 talks to the last rank; checks ordering, wildcards,
// probe, truncation, PROC_NULL, typed buffers, Test/Waitany, Sendrecv.
func semantics() {
	mpi.SetErrhandler(mpi.ErrorsReturn) // the errors below are expected and checked
	me, n := w.Rank(), w.Size()
	last := n - 1
	if n < 2 {
		fail("needs 2 ranks")
	}
	switch me {
	case 0:
		// Non-overtaking: five same-tag messages arrive in order.
		for i := 0; i < 5; i++ {
			check(mpi.Send(w, []int32{int32(i)}, last, 7))
		}
		// Probe target and truncation target.
		check(mpi.Send(w, []float64{1.5, 2.5, 3.5}, last, 8))
		check(mpi.Send(w, make([]byte, 64), last, 9))
		// Zero-length message.
		check(mpi.Send(w, []byte{}, last, 10))
		// Sendrecv with the last rank.
		got := []int64{0}
		st, err := mpi.Sendrecv(w, []int64{41}, last, 11, got, last, 12)
		check(err)
		if got[0] != 42 || st.Source != last {
			fail("sendrecv got %d from %d", got[0], st.Source)
		}
	case last:
		for i := 0; i < 5; i++ {
			v := []int32{-1}
			st, err := mpi.Recv(w, v, mpi.AnySource, 7)
			check(err)
			if v[0] != int32(i) || st.Source != 0 || st.Tag != 7 || st.Count() != 1 {
				fail("ordered message %d: got %d from %d tag %d count %d", i, v[0], st.Source, st.Tag, st.Count())
			}
		}
		st, err := mpi.Probe(w, mpi.AnySource, 8)
		check(err)
		if st.Source != 0 || st.Bytes() != 24 {
			fail("probe: source %d bytes %d", st.Source, st.Bytes())
		}
		ok, st, err := mpi.Iprobe(w, 0, 8)
		check(err)
		if !ok || st.Tag != 8 {
			fail("iprobe after probe: %v tag %d", ok, st.Tag)
		}
		f := make([]float64, 3)
		st, err = mpi.Recv(w, f, 0, mpi.AnyTag)
		check(err)
		if f[2] != 3.5 || st.Count() != 3 || st.Tag != 8 {
			fail("float message %v count %d tag %d", f, st.Count(), st.Tag)
		}
		small := make([]byte, 16)
		_, err = mpi.Recv(w, small, 0, 9)
		if !errors.Is(err, &mpi.Error{Class: mpi.ErrTruncate}) {
			fail("64-byte message into 16 bytes: err = %v, want MPI_ERR_TRUNCATE", err)
		}
		r, err := mpi.Irecv(w, []byte{}, 0, 10)
		check(err)
		idx, st, err := mpi.Waitany(r)
		check(err)
		if idx != 0 || st.Count() != 0 {
			fail("waitany zero-length: idx %d count %d", idx, st.Count())
		}
		in := []int64{0}
		rr, err := mpi.Irecv(w, in, 0, 11)
		check(err)
		for {
			done, _, err := mpi.Test(rr)
			check(err)
			if done {
				break
			}
		}
		check(mpi.Send(w, []int64{in[0] + 1}, 0, 12))
	}
	// PROC_NULL and argument errors, on every rank.
	check(mpi.Send(w, []byte{1}, mpi.ProcNull, 0))
	st, err := mpi.Recv(w, []byte{0}, mpi.ProcNull, 0)
	check(err)
	if st.Source != mpi.ProcNull {
		fail("recv from PROC_NULL: source %d", st.Source)
	}
	if err := mpi.Send(w, []byte{1}, n, 0); !errors.Is(err, &mpi.Error{Class: mpi.ErrRank}) {
		fail("send to rank %d: err = %v, want MPI_ERR_RANK", n, err)
	}
	if err := mpi.Send(w, []byte{1}, 0, -5); !errors.Is(err, &mpi.Error{Class: mpi.ErrTag}) {
		fail("send with tag -5: err = %v, want MPI_ERR_TAG", err)
	}
	if me == 0 {
		fmt.Println("semantics ok")
	}
}

// stopped: rank 1 posts two receives (tag 3 stays pending throughout) and
// sends its pid; rank 0 stops it, sends the tag 1 message it waits for, and
// waits for its answer, which comes only after the SIGCONT a second later.
// Meanwhile rank 0 is blocked and rank 1 is blocked in a call whose operation
// has completed: not a deadlock.
func stopped() {
	switch w.Rank() {
	case 0:
		pid := []int64{0}
		_, err := mpi.Recv(w, pid, 1, 0)
		check(err)
		check(syscall.Kill(int(pid[0]), syscall.SIGSTOP))
		go func() {
			time.Sleep(time.Second)
			syscall.Kill(int(pid[0]), syscall.SIGCONT)
		}()
		check(mpi.Send(w, []int64{7}, 1, 1))
		v := []int64{0}
		_, err = mpi.Recv(w, v, 1, 2)
		check(err)
		if v[0] != 8 {
			fail("stopped: got %d, want 8", v[0])
		}
		check(mpi.Send(w, []int64{9}, 1, 3))
		fmt.Println("stopped ok")
	case 1:
		last := []int64{0}
		r3, err := mpi.Irecv(w, last, 0, 3)
		check(err)
		v := []int64{0}
		r1, err := mpi.Irecv(w, v, 0, 1)
		check(err)
		check(mpi.Send(w, []int64{int64(os.Getpid())}, 0, 0))
		_, err = mpi.Wait(r1)
		check(err)
		check(mpi.Send(w, []int64{v[0] + 1}, 0, 2))
		_, err = mpi.Wait(r3)
		check(err)
		if last[0] != 9 {
			fail("stopped: got %d, want 9", last[0])
		}
	}
}

// ring passes a counter from rank 0 around every rank and back, each rank
// adding one, then all meet in a barrier.
func ring() {
	me, n := w.Rank(), w.Size()
	v := []int64{0}
	if me == 0 {
		check(mpi.Send(w, v, 1%n, 0))
		_, err := mpi.Recv(w, v, n-1, 0)
		check(err)
		if v[0] != int64(n-1) {
			fail("ring: token %d came back, want %d", v[0], n-1)
		}
	} else {
		_, err := mpi.Recv(w, v, me-1, 0)
		check(err)
		v[0]++
		check(mpi.Send(w, v, (me+1)%n, 0))
	}
	check(mpi.Barrier(w))
	if me == 0 {
		fmt.Printf("ring of %d ok\n", n)
	}
}
