package main

import (
	"regexp"
	"strconv"
	"testing"
)

// TestPullOrders runs the exchange scenario (3 MiB messages among four ranks
// of one node, checked byte by byte) and reads bcsrun -v's count of pull
// orders: large messages within the node must go out as pull orders, and
// every order a rank took must be finished by it (an unfinished one means the
// rank refused an entry the agent made: the two disagree on the receive
// buffer). Whether a rank takes its order within the grace period depends on
// the host's load, so served and revoked are only checked together.
func TestPullOrders(t *testing.T) {
	r := bcsrun(t, "-v", "-n", "4", "./e2eprog", "exchange")
	if r.code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	pc := pullCounts(t, r)
	if pc.served+pc.revoked == 0 || pc.unfinished != 0 || (pc.served > 0) != (pc.bytes > 0) {
		t.Fatalf("pull orders: %d served (%d bytes), %d revoked, %d unfinished; want some orders, none unfinished\n%s", pc.served, pc.bytes, pc.revoked, pc.unfinished, r.stderr)
	}
}

// pulls is bcsrun -v's pull-order line.
type pulls struct{ served, bytes, revoked, unfinished, spans int }

var pullsRE = regexp.MustCompile(`pull orders: (\d+) served \((\d+) bytes copied by the receivers\), (\d+) revoked, (\d+) unfinished; (\d+) spans`)

// pullCounts reads bcsrun -v's pull-order line from r's stderr.
func pullCounts(t *testing.T, r run) pulls {
	t.Helper()
	m := pullsRE.FindStringSubmatch(r.stderr)
	if m == nil {
		t.Fatalf("bcsrun -v printed no pull-order line:\n%s", r.stderr)
	}
	var n [5]int
	for i := range n {
		n[i], _ = strconv.Atoi(m[i+1])
	}
	return pulls{n[0], n[1], n[2], n[3], n[4]}
}
