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
// Asked for MPI_THREAD_MULTIPLE, the library provides SERIALIZED, and so
// does a session asked for it; MPI_INFO_ENV's "thread_level" says so too.
func TestThreadsSerialized(t *testing.T) {
	exe := compile(t, "bcscc", "testdata/threads.c", "-pthread")
	for _, ask := range []string{"serialized", "multiple"} {
		want := fmt.Sprintf("provided %d\n", 2048) // MPI_THREAD_SERIALIZED
		t.Run(ask+"/singleton", func(t *testing.T) {
			r := run(t, exe, ask)
			okRanks(t, r, "threads", 1)
			if !strings.Contains(r.stdout, want) || !strings.Contains(r.stdout, "session MPI_THREAD_SERIALIZED\nenv MPI_THREAD_SERIALIZED\n") {
				t.Fatalf("want %q and MPI_THREAD_SERIALIZED from the session and MPI_INFO_ENV\nstdout:\n%s", want, r.stdout)
			}
		})
		for _, c := range []struct{ ranks, nodes int }{{2, 1}, {3, 1}, {4, 2}} {
			t.Run(fmt.Sprintf("%s/n%d-nodes%d", ask, c.ranks, c.nodes), func(t *testing.T) {
				r := bcsrun(t, "-n", strconv.Itoa(c.ranks), "--nodes", strconv.Itoa(c.nodes), exe, ask)
				okRanks(t, r, "threads", c.ranks)
				if !strings.Contains(r.stdout, want) || !strings.Contains(r.stdout, "session MPI_THREAD_SERIALIZED\nenv MPI_THREAD_SERIALIZED\n") {
					t.Fatalf("want %q and MPI_THREAD_SERIALIZED from the session and MPI_INFO_ENV\nstdout:\n%s", want, r.stdout)
				}
			})
		}
	}
}
