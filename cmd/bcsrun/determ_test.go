package main

import (
	"flag"
	"fmt"
	"strings"
	"testing"
)

var determRuns = flag.Int("determ.runs", 5, "runs of each race program in TestDeterministicRaces")

// TestDeterministicRaces runs each race program of e2eprog (random sleeps in
// every rank before its posts, a different seed each run) several times in
// deterministic mode, on one node and several, at three slice lengths, under
// both restart policies: rank 0's outcome line (wildcard matches, probe and
// Iprobe answers, Test, Testany, Waitany and Testsome results) must be the
// same every time. In testloop, rank 0's Testany must return "none" (a
// release at a quiescent point) before it sends what completes its
// requests. Without the mode the same programs give different outcomes from
// run to run (not asserted: it depends on the machine's timing). More runs:
// -determ.runs=20.
func TestDeterministicRaces(t *testing.T) {
	variants := [][]string{{}, {"--nodes", "2"}, {"--timeslice", "200us", "--restart", "early"}, {"--timeslice", "2ms", "--nodes", "3"}}
	for _, kind := range []string{"wild", "probe", "testany", "nbc", "testloop"} {
		t.Run(kind, func(t *testing.T) {
			seen := map[string][]string{}
			for i := 0; i < max(*determRuns, 2); i++ {
				v := variants[i%len(variants)]
				args := append(append([]string{"-n", "5", "--deterministic"}, v...), "./e2eprog", "race", kind)
				r := bcsrun(t, args...)
				if r.code != 0 {
					t.Fatalf("bcsrun %v: exit %d\nstdout:\n%s\nstderr:\n%s", args, r.code, r.stdout, r.stderr)
				}
				line := ""
				for _, l := range strings.Split(r.stdout, "\n") {
					if strings.HasPrefix(l, "outcome ") {
						line = l
					}
				}
				if line == "" {
					t.Fatalf("bcsrun %v printed no outcome:\n%s", args, r.stdout)
				}
				seen[line] = append(seen[line], fmt.Sprint(v))
			}
			if len(seen) != 1 {
				var b strings.Builder
				for l, vs := range seen {
					fmt.Fprintf(&b, "%s\n  in runs with %v\n", l, vs)
				}
				t.Fatalf("deterministic mode gave %d outcomes:\n%s", len(seen), b.String())
			}
		})
	}
}
