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
	m := regexp.MustCompile(`pull orders: (\d+) served \((\d+) bytes copied by the receivers\), (\d+) revoked, (\d+) unfinished`).FindStringSubmatch(r.stderr)
	if m == nil {
		t.Fatalf("bcsrun -v printed no pull-order count:\n%s", r.stderr)
	}
	served, _ := strconv.Atoi(m[1])
	bytes, _ := strconv.Atoi(m[2])
	revoked, _ := strconv.Atoi(m[3])
	if served+revoked == 0 || m[4] != "0" || (served > 0) != (bytes > 0) {
		t.Fatalf("pull orders: %s served (%s bytes), %s revoked, %s unfinished; want some orders, none unfinished\n%s", m[1], m[2], m[3], m[4], r.stderr)
	}
}
