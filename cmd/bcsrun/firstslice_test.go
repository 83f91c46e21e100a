package main

import (
	"regexp"
	"strconv"
	"testing"
	"time"
)

// TestVerboseFirstSlice: bcsrun -v says when the job's first slice ended,
// counted from bcsrun's start (the start-up figure of bench/hosts): after
// the start and before bcsrun returned, as the test's own clock saw it, for
// a job on logical nodes (the master in bcsrun; across hosts, bench/hosts
// reads the same line with the master in node 0's bcsd).
func TestVerboseFirstSlice(t *testing.T) {
	start := time.Now()
	r := bcsrun(t, "-v", "-n", "2", "--nodes", "2", "./barrier", "-iters", "1")
	took := time.Since(start)
	if r.code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	m := regexp.MustCompile(`first slice ([0-9.]+)s after bcsrun started`).FindStringSubmatch(r.stderr)
	if m == nil {
		t.Fatalf("bcsrun -v did not say when the first slice ended:\n%s", r.stderr)
	}
	first, err := strconv.ParseFloat(m[1], 64)
	if err != nil || first <= 0 || first > took.Seconds() {
		t.Fatalf("first slice %ss after bcsrun started, want in (0, %.3f] (the test's time around bcsrun):\n%s", m[1], took.Seconds(), r.stderr)
	}
	if s := regexp.MustCompile(`2 node\(s\), ([0-9]+) slices`).FindStringSubmatch(r.stderr); s == nil || s[1] == "0" {
		t.Fatalf("want at least one slice counted:\n%s", r.stderr)
	}
}
