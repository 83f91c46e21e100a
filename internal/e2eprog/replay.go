package main

import (
	"fmt"
	"math/rand"
	"os"
	"strconv"
	"strings"
	"time"

	mpi "github.com/bcsmpi/bcsmpi/mpiapi"
)

// replayDelay is the replayrace scenario's injected timing (E2E_DELAY): "up:US" makes
// rank r sleep r×US µs before each send, "down:US" (size-r)×US, "random:US"
// a random 0 .. US µs (seeded from the clock: different every run), and
// nothing sleeps without it. It creates the races; replay must not care.
func replayDelay() func() {
	mode, v, _ := strings.Cut(os.Getenv("E2E_DELAY"), ":")
	us, _ := strconv.Atoi(v)
	me, n := w.Rank(), w.Size()
	rng := rand.New(rand.NewSource(time.Now().UnixNano() + int64(me)*7919))
	return func() {
		var d int
		switch mode {
		case "up":
			d = me * us
		case "down":
			d = (n - me) * us
		case "random":
			d = rng.Intn(us + 1)
		}
		time.Sleep(time.Duration(d) * time.Microsecond)
	}
}

// replayRace: every timing-dependent call of the Go API, each racing the other
// ranks' sends into rank 0, which prints every outcome it sees on one line
// per phase (the output record and replay compare). k is the number of
// messages each sender sends in the wildcard phase.
//
//  1. Recv(ANY_SOURCE, ANY_TAG) of k messages from every other rank;
//  2. Iprobe(ANY_SOURCE) polled until found (the misses are counted), then
//     Probe(ANY_SOURCE) and a Recv from the source found, once per sender;
//     then Improbe(ANY_SOURCE) polled or Mprobe(ANY_SOURCE), and Mrecv;
//  3. Irecv from every sender, then Testany polled (misses counted) and
//     Waitany until all are done;
//  4. Irecv from every sender, then Testsome polled until all are done, and
//     Test and Testall over fresh receives.
func replayRace(k int) {
	me, n := w.Rank(), w.Size()
	sleep := replayDelay()
	buf := []int64{0}
	out := func(format string, a ...any) {
		if me == 0 {
			fmt.Printf(format, a...)
		}
	}
	// 1. wildcard receives (E2E_TAG=t: the first one for tag t only, a
	// program that changed outside MPI)
	if me == 0 {
		var got []string
		for i := 0; i < k*(n-1); i++ {
			tag := mpi.AnyTag
			if t, err := strconv.Atoi(os.Getenv("E2E_TAG")); err == nil && i == 0 {
				tag = t
			}
			st, err := mpi.Recv(w, buf, mpi.AnySource, tag)
			check(err)
			if buf[0] != int64(st.Source*1000+st.Tag) {
				fail("message %d from %d tag %d, want %d", buf[0], st.Source, st.Tag, st.Source*1000+st.Tag)
			}
			got = append(got, fmt.Sprintf("%d:%d", st.Source, st.Tag))
		}
		out("recv %s\n", strings.Join(got, " "))
	} else if strconv.Itoa(me) != os.Getenv("E2E_NOSEND") { // E2E_NOSEND=r: rank r does not send (a changed program)
		for i := 0; i < k; i++ {
			sleep()
			check(mpi.Send(w, []int64{int64(me*1000 + i)}, 0, i))
		}
	}
	check(mpi.Barrier(w))
	// 2. Iprobe and Probe
	if me == 0 {
		var got []string
		for i := 1; i < n; i++ {
			misses := 0
			for {
				found, st, err := mpi.Iprobe(w, mpi.AnySource, 50)
				check(err)
				if found {
					got = append(got, fmt.Sprintf("iprobe %d after %d", st.Source, misses))
					break
				}
				misses++
			}
			st, err := mpi.Probe(w, mpi.AnySource, 50)
			check(err)
			_, err = mpi.Recv(w, buf, st.Source, 50)
			check(err)
			got = append(got, fmt.Sprintf("probe %d", st.Source))
		}
		out("%s\n", strings.Join(got, ", "))
	} else {
		sleep()
		check(mpi.Send(w, []int64{int64(me)}, 0, 50))
	}
	check(mpi.Barrier(w))
	// 2b. matched probes: Improbe polled until found, or Mprobe; then Mrecv
	if me == 0 {
		var got []string
		for i := 1; i < n; i++ {
			var m *mpi.Message
			var st mpi.Status
			if i%2 == 1 {
				misses := 0
				for {
					mm, found, s, err := mpi.Improbe(w, mpi.AnySource, 51)
					check(err)
					if found {
						m, st = mm, s
						break
					}
					misses++
				}
				got = append(got, fmt.Sprintf("improbe %d after %d", st.Source, misses))
			} else {
				mm, s, err := mpi.Mprobe(w, mpi.AnySource, 51)
				check(err)
				m, st = mm, s
				got = append(got, fmt.Sprintf("mprobe %d", st.Source))
			}
			_, err := mpi.Mrecv(m, buf)
			check(err)
			if buf[0] != int64(st.Source) {
				fail("matched message %d from %d", buf[0], st.Source)
			}
		}
		out("%s\n", strings.Join(got, ", "))
	} else {
		sleep()
		check(mpi.Send(w, []int64{int64(me)}, 0, 51))
	}
	check(mpi.Barrier(w))
	// 3. Testany and Waitany
	if me == 0 {
		rs := make([]*mpi.Request, n-1)
		bufs := make([][]int64, n-1)
		for i := range rs {
			bufs[i] = []int64{0}
			var err error
			rs[i], err = mpi.Irecv(w, bufs[i], i+1, 60)
			check(err)
		}
		misses := 0
		var order []int
		for len(order) < n-1 {
			if len(order)%2 == 0 {
				i, ok, _, err := mpi.Testany(rs...)
				check(err)
				if !ok {
					misses++
					continue
				}
				order = append(order, i+1)
			} else {
				i, _, err := mpi.Waitany(rs...)
				check(err)
				order = append(order, i+1)
			}
		}
		out("any %v (testany misses %d)\n", order, misses)
	} else {
		sleep()
		check(mpi.Send(w, []int64{int64(me)}, 0, 60))
	}
	check(mpi.Barrier(w))
	// 4. Testsome, Test, Testall
	if me == 0 {
		rs := make([]*mpi.Request, n-1)
		for i := range rs {
			var err error
			rs[i], err = mpi.Irecv(w, []int64{0}, i+1, 70)
			check(err)
		}
		var sets []string
		for left := n - 1; left > 0; {
			c, idx, _, err := mpi.Testsome(rs...)
			check(err)
			if c > 0 {
				sets = append(sets, fmt.Sprint(idx))
				left -= c
			}
		}
		r1, err := mpi.Irecv(w, []int64{0}, 1, 71)
		check(err)
		tests := 0
		for {
			done, _, err := mpi.Test(r1)
			check(err)
			if done {
				break
			}
			tests++
		}
		rs2 := make([]*mpi.Request, n-1)
		for i := range rs2 {
			rs2[i], err = mpi.Irecv(w, []int64{0}, i+1, 72)
			check(err)
		}
		testalls := 0
		for {
			all, err := mpi.Testall(rs2...)
			check(err)
			if all {
				break
			}
			testalls++
		}
		out("some %s; test misses %d; testall misses %d\n", strings.Join(sets, " "), tests, testalls)
	} else {
		sleep()
		check(mpi.Send(w, []int64{int64(me)}, 0, 70))
		if me == 1 {
			sleep()
			check(mpi.Send(w, []int64{1}, 0, 71))
		}
		sleep()
		check(mpi.Send(w, []int64{int64(me)}, 0, 72))
	}
}

// cancelRace: rank 0 posts a receive from rank 1 (tag 5), sleeps D0 µs and
// cancels it; rank 1 sleeps D1 µs and sends (E2E_CANCEL=D0:D1). Whether the
// cancel wins depends on which comes first; rank 0 prints it, and receives
// the message afterwards if the cancel won, then sends rank 1 the message
// it has been waiting for since its start (tag 9).
func cancelRace() {
	d0, d1, _ := strings.Cut(os.Getenv("E2E_CANCEL"), ":")
	us := func(s string) time.Duration { v, _ := strconv.Atoi(s); return time.Duration(v) * time.Microsecond }
	buf := []int64{0}
	switch w.Rank() {
	case 0:
		r, err := mpi.Irecv(w, buf, 1, 5)
		check(err)
		time.Sleep(us(d0))
		check(r.Cancel())
		st, err := mpi.Wait(r)
		check(err)
		if st.Cancelled() {
			_, err = mpi.Recv(w, buf, 1, 5)
			check(err)
		}
		if buf[0] != 42 {
			fail("received %d, want 42", buf[0])
		}
		fmt.Printf("cancelled %v\n", st.Cancelled())
		check(mpi.Send(w, []int64{7}, 1, 9))
	case 1:
		ack, err := mpi.Irecv(w, []int64{0}, 0, 9)
		check(err)
		time.Sleep(us(d1))
		if os.Getenv("E2E_SKIPSEND") == "" { // set: a changed program that waits without sending
			check(mpi.Send(w, []int64{42}, 0, 5))
		}
		_, err = mpi.Wait(ack)
		check(err)
	}
}
