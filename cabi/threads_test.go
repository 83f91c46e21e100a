package main

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
)

// TestThreadsSerialized runs testdata/threads.c: pthreads taking turns
// under a mutex, each doing point-to-point (requests started in one thread
// and completed in another, messages to itself, a matched probe, a large
// message), collectives on its own communicator and communicator creation,
// with MPI_Query_thread and MPI_Is_thread_main checked in every thread.
// The level provided is the one asked for (MPI_THREAD_MULTIPLE included),
// and so is a session's asked for MPI_THREAD_MULTIPLE; MPI_INFO_ENV's
// "thread_level" says what MPI_Init_thread provided. In a deterministic
// job MULTIPLE is not provided (SERIALIZED is): the order of calls between
// threads would not be the program's.
func TestThreadsSerialized(t *testing.T) {
	exe := compile(t, "bcscc", "testdata/threads.c", "-pthread")
	for _, ask := range []struct{ name, env string }{{"serialized", "MPI_THREAD_SERIALIZED"}, {"multiple", "MPI_THREAD_MULTIPLE"}} {
		want := fmt.Sprintf("provided %d\n", 2048) // MPI_THREAD_SERIALIZED
		if ask.name == "multiple" {
			want = fmt.Sprintf("provided %d\n", 4096)
		}
		wantInfo := "session MPI_THREAD_MULTIPLE\nenv " + ask.env + "\n"
		t.Run(ask.name+"/singleton", func(t *testing.T) {
			r := run(t, exe, ask.name)
			okRanks(t, r, "threads", 1)
			if !strings.Contains(r.stdout, want) || !strings.Contains(r.stdout, wantInfo) {
				t.Fatalf("want %q and %q\nstdout:\n%s", want, wantInfo, r.stdout)
			}
		})
		for _, c := range []struct{ ranks, nodes int }{{2, 1}, {3, 1}, {4, 2}} {
			t.Run(fmt.Sprintf("%s/n%d-nodes%d", ask.name, c.ranks, c.nodes), func(t *testing.T) {
				r := bcsrun(t, "-n", strconv.Itoa(c.ranks), "--nodes", strconv.Itoa(c.nodes), exe, ask.name)
				okRanks(t, r, "threads", c.ranks)
				if !strings.Contains(r.stdout, want) || !strings.Contains(r.stdout, wantInfo) {
					t.Fatalf("want %q and %q\nstdout:\n%s", want, wantInfo, r.stdout)
				}
			})
		}
	}
	t.Run("multiple/deterministic", func(t *testing.T) {
		r := bcsrun(t, "-n", "2", "--deterministic", exe, "multiple")
		okRanks(t, r, "threads", 2)
		want := "provided 2048\nsession MPI_THREAD_SERIALIZED\nenv MPI_THREAD_SERIALIZED\n"
		if !strings.Contains(r.stdout, want) {
			t.Fatalf("want %q (no MULTIPLE in a deterministic job)\nstdout:\n%s", want, r.stdout)
		}
	})
}

// TestThreadsMultiple runs testdata/threadsmt.c under MPI_THREAD_MULTIPLE:
// threads of a rank calling MPI at the same time, with no turns. A thread
// blocked in MPI_Recv or MPI_Probe while another thread of the rank sends
// what it waits for (on the world, and on MPI_COMM_SELF); per-thread
// ping-pong and ring exchanges on their own tags and on duplicates;
// Isend/Irecv completed by Waitall, Waitany and Testall in every thread;
// Allreduce, Bcast, Allgather and Barrier on per-thread duplicates;
// Comm_dup, Comm_split and Comm_free from several threads; a receive one
// thread tests while another's send completes it, a generalized request
// one thread waits on while another completes it, and a partitioned send
// one thread waits on while others mark its partitions. Every value is
// checked by the program.
func TestThreadsMultiple(t *testing.T) {
	exe := compile(t, "bcscc", "testdata/threadsmt.c", "-pthread")
	want := "provided 4096\n"
	t.Run("singleton", func(t *testing.T) {
		r := run(t, exe)
		okRanks(t, r, "threadsmt", 1)
		if !strings.Contains(r.stdout, want) {
			t.Fatalf("want %q\nstdout:\n%s", want, r.stdout)
		}
	})
	for _, c := range []struct{ ranks, nodes int }{{1, 1}, {2, 1}, {3, 1}, {4, 2}} {
		t.Run(fmt.Sprintf("n%d-nodes%d", c.ranks, c.nodes), func(t *testing.T) {
			r := bcsrun(t, "-n", strconv.Itoa(c.ranks), "--nodes", strconv.Itoa(c.nodes), exe)
			okRanks(t, r, "threadsmt", c.ranks)
			if !strings.Contains(r.stdout, want) {
				t.Fatalf("want %q\nstdout:\n%s", want, r.stdout)
			}
		})
	}
	// The whole single-threaded suite under MPI_THREAD_MULTIPLE: every call
	// takes the call lock, and callbacks (error handlers, user reductions,
	// attribute copies) that call MPI take it again.
	suite := compile(t, "bcscc", "testdata/suite.c")
	t.Run("suite/singleton", func(t *testing.T) { okRanks(t, run(t, suite, "multiple"), "suite", 1) })
	t.Run("suite/n4-nodes2", func(t *testing.T) {
		okRanks(t, bcsrun(t, "-n", "4", "--nodes", "2", suite, "multiple"), "suite", 4)
	})
}

// TestThreadsMatchedProbe runs testdata/mprobemt.c under
// MPI_THREAD_MULTIPLE: per rank, sender threads and receiver threads at
// once; receivers take messages (empty, small and larger than a slice
// moves) with MPI_Mprobe or MPI_Improbe and MPI_Mrecv or MPI_Imrecv, first
// each on a tag of its own (in order, checked element by element), then all
// on MPI_ANY_SOURCE and MPI_ANY_TAG, racing for the same messages: each must
// be received exactly once, with its own contents. Before mprobe.go's
// claim watch two threads could be answered with the same message and one
// of them then waited for ever in MPI_Mrecv.
func TestThreadsMatchedProbe(t *testing.T) {
	exe := compile(t, "bcscc", "testdata/mprobemt.c", "-pthread")
	t.Run("singleton", func(t *testing.T) { okRanks(t, run(t, exe), "mprobemt", 1) })
	for _, c := range []struct{ ranks, nodes int }{{2, 1}, {3, 1}, {4, 2}} {
		t.Run(fmt.Sprintf("n%d-nodes%d", c.ranks, c.nodes), func(t *testing.T) {
			okRanks(t, bcsrun(t, "-n", strconv.Itoa(c.ranks), "--nodes", strconv.Itoa(c.nodes), exe), "mprobemt", c.ranks)
		})
	}
}
