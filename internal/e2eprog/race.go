package main

import (
	"fmt"
	"math/rand"
	"strings"
	"time"

	mpi "github.com/bcsmpi/bcsmpi/mpiapi"
)

// race runs a program whose MPI outcome depends on timing unless the job is
// in deterministic mode: every rank sleeps a random time (seeded from the
// clock, so every run differs) before its posts, and rank 0 prints one
// "outcome" line: which source each wildcard receive matched, what each
// probe and Iprobe answered, what each Test-family call returned.
func race(kind string) {
	me, n := w.Rank(), w.Size()
	rng := rand.New(rand.NewSource(time.Now().UnixNano() + int64(me)*7919))
	delay := func() { time.Sleep(time.Duration(rng.Intn(1200)) * time.Microsecond) }
	const K = 3 // messages per sender
	var out []string
	add := func(format string, a ...any) { out = append(out, fmt.Sprintf(format, a...)) }
	got := func(buf []int64, st mpi.Status) {
		if int(buf[0]) != st.Source {
			fail("message says it is from rank %d, status says %d", buf[0], st.Source)
		}
		add("%d.%d", st.Source, buf[1])
	}
	switch kind {
	case "wild": // many senders, one ANY_SOURCE receiver, Iprobes between
		if me == 0 {
			for i := 0; i < (n-1)*K; i++ {
				buf := make([]int64, 2)
				st, err := mpi.Recv(w, buf, mpi.AnySource, mpi.AnyTag)
				check(err)
				got(buf, st)
				if i%2 == 0 {
					found, st, err := mpi.Iprobe(w, mpi.AnySource, mpi.AnyTag)
					check(err)
					add("iprobe:%v:%d", found, st.Source)
				}
			}
		} else {
			for i := 0; i < K; i++ {
				delay()
				if i == 1 && me+1 < n { // traffic between senders moves their clocks apart
					check(mpi.Send(w, []int64{int64(me), -1}, me+1, 99))
				}
				check(mpi.Send(w, []int64{int64(me), int64(i)}, 0, me%3))
			}
			if me > 1 && K > 1 {
				buf := make([]int64, 2)
				_, err := mpi.Recv(w, buf, me-1, 99)
				check(err)
			}
		}
	case "probe": // Probe then a receive from the probed source; a polling Iprobe
		if me == 0 {
			for i := 0; i < (n-1)*K; i++ {
				polls := 0
				for {
					found, _, err := mpi.Iprobe(w, mpi.AnySource, mpi.AnyTag)
					check(err)
					polls++
					if found {
						break
					}
				}
				st, err := mpi.Probe(w, mpi.AnySource, mpi.AnyTag)
				check(err)
				buf := make([]int64, 2)
				st2, err := mpi.Recv(w, buf, st.Source, st.Tag)
				check(err)
				got(buf, st2)
				add("polls=%d", polls)
			}
		} else {
			for i := 0; i < K; i++ {
				delay()
				check(mpi.Send(w, []int64{int64(me), int64(i)}, 0, i))
			}
		}
	case "testany": // Test, Testany, Waitany and Testsome over racing requests
		if me == 0 {
			var rs []*mpi.Request
			for s := 1; s < n; s++ { // one receive from each sender, one from any
				b := make([]int64, 2)
				r, err := mpi.Irecv(w, b, s, 1)
				check(err)
				rs = append(rs, r)
			}
			for s := 1; s < n; s++ {
				b := make([]int64, 2)
				r, err := mpi.Irecv(w, b, mpi.AnySource, 2)
				check(err)
				rs = append(rs, r)
			}
			falses := 0
			for {
				done, _, err := mpi.Test(rs[0])
				check(err)
				if done {
					rs[0] = nil
					add("test0 after %d", falses)
					break
				}
				falses++
			}
			for left := len(rs) - 1; left > 0; {
				if left%2 == 0 {
					idx, flag, st, err := mpi.Testany(rs...)
					check(err)
					if !flag {
						add("testany:none")
						continue
					}
					add("testany:%d<-%d", idx, st.Source)
					left--
					continue
				}
				if left%3 == 0 {
					cnt, idx, sts, err := mpi.Testsome(rs...)
					check(err)
					for j := range idx {
						add("testsome:%d<-%d", idx[j], sts[j].Source)
					}
					left -= cnt
					continue
				}
				idx, st, err := mpi.Waitany(rs...)
				check(err)
				add("waitany:%d<-%d", idx, st.Source)
				left--
			}
		} else {
			delay()
			check(mpi.Send(w, []int64{int64(me), 1}, 0, 2))
			delay()
			check(mpi.Send(w, []int64{int64(me), 0}, 0, 1))
		}
	case "nbc": // non-blocking collectives mixed with wildcard receives
		sum := make([]int64, 1)
		delay()
		ra, err := mpi.Iallreduce(w, []int64{int64(me)}, sum, mpi.Sum)
		check(err)
		rb, err := mpi.Ibarrier(w)
		check(err)
		if me == 0 {
			rs := []*mpi.Request{ra, rb}
			for s := 1; s < n; s++ {
				r, err := mpi.Irecv(w, make([]int64, 2), mpi.AnySource, mpi.AnyTag)
				check(err)
				rs = append(rs, r)
			}
			for {
				idx, st, err := mpi.Waitany(rs...)
				check(err)
				if idx == mpi.Undefined {
					break
				}
				src := st.Source
				if idx < 2 {
					src = -1
				}
				add("%d<-%d", idx, src)
			}
			if sum[0] != int64(n*(n-1)/2) {
				fail("allreduce %d, want %d", sum[0], n*(n-1)/2)
			}
		} else {
			delay()
			check(mpi.Send(w, []int64{int64(me), 0}, 0, 5))
			check(mpi.Waitall(ra, rb))
		}
	case "testloop": // Testany must say "none" for rank 0 to send what completes it
		if me == 0 {
			rs := make([]*mpi.Request, n-1)
			for i := range rs {
				r, err := mpi.Irecv(w, make([]int64, 2), i+1, 1)
				check(err)
				rs[i] = r
			}
			gos := 0
			for left := n - 1; left > 0; {
				idx, flag, _, err := mpi.Testany(rs...)
				check(err)
				if !flag {
					add("none")
					if gos < n-1 {
						gos++
						check(mpi.Send(w, []int64{0, 0}, gos, 2))
					}
					continue
				}
				add("%d", idx)
				left--
			}
		} else {
			delay()
			_, err := mpi.Recv(w, make([]int64, 2), 0, 2)
			check(err)
			delay()
			check(mpi.Send(w, []int64{int64(me), 0}, 0, 1))
		}
	default:
		fail("race %q: want wild, probe, testany, nbc or testloop", kind)
	}
	if me == 0 {
		fmt.Printf("outcome %s: %s\n", kind, strings.Join(out, " "))
	}
}
