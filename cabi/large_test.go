package main

import (
	"fmt"
	"regexp"
	"strconv"
	"testing"
)

// TestLarge runs testdata/large.c: the _c forms of point-to-point calls
// and collectives, persistent collectives and their rules, checked against
// serial computations; as a singleton and on 1, 3 and 4 ranks (2 logical
// nodes).
func TestLarge(t *testing.T) {
	exe := compile(t, "bcscc", "testdata/large.c")
	t.Run("singleton", func(t *testing.T) { okRanks(t, run(t, exe), "large", 1) })
	for _, c := range []struct{ ranks, nodes int }{{1, 1}, {3, 1}, {4, 2}} {
		t.Run(fmt.Sprintf("n%d-nodes%d", c.ranks, c.nodes), func(t *testing.T) {
			okRanks(t, bcsrun(t, "-n", strconv.Itoa(c.ranks), "--nodes", strconv.Itoa(c.nodes), exe), "large", c.ranks)
		})
	}
}

// Under MPI_ERRORS_ARE_FATAL, a count beyond bcsmpi's bound is refused
// naming the call and the count (not truncated to an int), and starting an
// active persistent request names the request and the call that made it.
func TestLargeErrorMessages(t *testing.T) {
	exe := compile(t, "bcscc", "testdata/large.c")
	for _, c := range []struct{ arg, want string }{
		{"bigcount", `rank [01]: MPI_Send_c: MPI_ERR_COUNT: count = 281474976710656 of MPI_BYTE \(1 packed bytes, extent 1 each\) is more than bcsmpi's bound`},
		{"active", `rank [01]: MPI_Start: MPI_ERR_REQUEST: request = 0x[0-9a-f]+ \(a request\) \(made by MPI_Bcast_init\) is already active`},
		{"gfree", `rank [01]: MPI_Wait: MPI_ERR_OTHER: the generalized request's free_fn returned 12345`},
		{"gcancel", `rank [01]: MPI_Cancel: MPI_ERR_ARG: the generalized request's cancel_fn returned 13`},
	} {
		t.Run(c.arg, func(t *testing.T) {
			r := bcsrun(t, "-n", "2", exe, c.arg)
			if r.code == 0 || regexp.MustCompile("not reached").MatchString(r.stdout) || !regexp.MustCompile(c.want).MatchString(r.stderr) {
				t.Fatalf("exit %d, want stderr matching %s\nstdout:\n%s\nstderr:\n%s", r.code, c.want, r.stdout, r.stderr)
			}
		})
	}
}

// TestLargeCountTransfer moves 2^31+4096 bytes, a count beyond INT_MAX,
// with MPI_Send_c and MPI_Recv_c between two ranks of one node; the sender's
// buffer is untouched memory but for four marks, so the job needs about
// 2 GiB (the receiver's buffer).
func TestLargeCountTransfer(t *testing.T) {
	if testing.Short() {
		t.Skip("moves 2 GiB")
	}
	exe := compile(t, "bcscc", "testdata/large.c")
	okRanks(t, bcsrun(t, "-n", "2", exe, "big"), "large", 2)
}
