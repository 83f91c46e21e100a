package launch

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/bcsmpi/bcsmpi/nicthread"
)

func TestStallWatch(t *testing.T) {
	const nodeTimeout, txTimeout = time.Second, 2 * time.Second
	t0 := time.Unix(1000, 0)
	ms := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Millisecond) }
	type step struct {
		beat, cont bool
		at         int // ms after t0
	}
	cases := []struct {
		name    string
		steps   []step
		errAt   int
		want    time.Duration
		stopped bool
	}{
		{"regular beats: the node is to blame", []step{{beat: true, at: 50}, {beat: true, at: 100}, {beat: true, at: 150}}, 160, 0, false},
		{"short hiccup below half of node_timeout", []step{{beat: true, at: 50}, {beat: true, at: 499}}, 520, 0, false},
		{"stall under way when the error arrives", []step{{beat: true, at: 50}}, 3050, 3 * time.Second, false},
		{"stall under way, SIGCONT seen", []step{{beat: true, at: 50}, {cont: true, at: 3040}}, 3050, 3 * time.Second, true},
		{"stall just ended", []step{{beat: true, at: 50}, {beat: true, at: 2050}, {beat: true, at: 2100}}, 2120, 2 * time.Second, false},
		{"stall long before the master's wait", []step{{beat: true, at: 50}, {beat: true, at: 2050}, {beat: true, at: 2100}}, 2050 + 3100, 0, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := newStallWatch(nodeTimeout, txTimeout, t0)
			last := t0
			for _, st := range c.steps {
				if st.beat {
					s.beat(ms(st.at))
					last = ms(st.at)
				}
				if st.cont {
					s.cont()
				}
			}
			if c.errAt > 3000 && c.want == 0 { // keep beating up to the error
				for at := last.Add(s.period); !at.After(ms(c.errAt)); at = at.Add(s.period) {
					s.beat(at)
				}
			}
			g, stopped := s.stalled(ms(c.errAt))
			if g != c.want || stopped != c.stopped {
				t.Fatalf("stalled = %v, %v; want %v, %v", g, stopped, c.want, c.stopped)
			}
			msg := s.explain(&nicthread.JobError{Node: 0, Rank: -1, Why: "stopped answering: no DEM report for slice 7 within 1s (node_timeout)"}, nodeTimeout, ms(c.errAt))
			if blames := strings.HasPrefix(msg, "bcsmpi: job aborted: bcsrun itself"); blames != (c.want > 0) || !strings.Contains(msg, "node 0: stopped answering") {
				t.Fatalf("message %q", msg)
			}
			if c.stopped && !strings.Contains(msg, "was stopped for 3.0s") {
				t.Fatalf("message %q does not say bcsrun was stopped, and for how long", msg)
			}
			// A failure a stall cannot cause is never blamed on one.
			for _, err := range []error{errors.New("transport: bad frame"), &nicthread.JobError{Node: -1, Rank: -1, Why: "deadlock: every MPI rank has been blocked"}} {
				if msg := s.explain(err, nodeTimeout, ms(c.errAt)); msg != "bcsmpi: job aborted: "+err.Error() {
					t.Fatalf("message %q for %v", msg, err)
				}
			}
		})
	}
}
