package strobe

import (
	"errors"
	"testing"
	"time"

	"github.com/bcsmpi/bcsmpi/internal/clock"
)

const us = clock.Time(time.Microsecond)

func runSlice(t *testing.T, m *Master, nodes int, now clock.Time) {
	t.Helper()
	for _, p := range []Phase{PhaseDEM, PhaseMSM, PhaseTX} {
		for n := 0; n < nodes; n++ {
			done, err := m.Arrive(proto0(n), p, m.Record().Slice, now)
			if err != nil {
				t.Fatal(err)
			}
			if done != (n == nodes-1) {
				t.Fatalf("phase %v node %d: done=%v", p, n, done)
			}
		}
	}
}

func TestScheduleIsAbsolute(t *testing.T) {
	// Paper §3.3: the master must signal at regular intervals. A late strobe does
	// not shift the ones after it.
	m := NewMaster(Config{Slice: 250 * time.Microsecond, Nodes: 2}, 1000*us)
	for k := 0; k < 5; k++ {
		_, due := m.Due()
		want := 1000*us + clock.Time(k)*250*us
		if due != want {
			t.Fatalf("slice %d due at %d, want %d", k, due, want)
		}
		now := due
		if k == 2 {
			now += 40 * us // late strobe
		}
		if got := m.Strobe(now); int(got) != k {
			t.Fatalf("started slice %d, want %d", got, k)
		}
		if k == 2 && m.Record().Late != 40*time.Microsecond {
			t.Fatalf("lateness %v, want 40µs", m.Record().Late)
		}
		if k == 3 && m.Record().GETTS != 210*time.Microsecond {
			t.Fatalf("GETTS after a late strobe = %v, want 210µs", m.Record().GETTS)
		}
		runSlice(t, m, 2, now+10*us)
	}
}

func TestSkipAhead(t *testing.T) {
	m := NewMaster(Config{Slice: 100 * time.Microsecond, Nodes: 1}, 0)
	m.Strobe(0)
	runSlice(t, m, 1, 10*us)
	// The host stalled for 1 ms: slices 1..9 passed; slice 10's window holds now.
	k := m.Strobe(1030 * us)
	if k != 10 || m.Record().Skipped != 9 || m.Skipped() != 9 || m.Record().Late != 30*time.Microsecond {
		t.Fatalf("k=%d skipped=%d late=%v", k, m.Record().Skipped, m.Record().Late)
	}
	if _, due := m.Due(); due != 1100*us {
		t.Fatalf("next due %d, want 1100µs", due)
	}
}

func TestSyncAndRetries(t *testing.T) {
	m := NewMaster(Config{Slice: 100 * time.Microsecond, Nodes: 3}, 0)
	m.Strobe(0)
	m.Retry()
	m.Retry()
	if done, _ := m.Arrive(0, PhaseDEM, 0, 5*us); done {
		t.Fatal("done after 1 of 3")
	}
	if _, err := m.Arrive(0, PhaseDEM, 0, 5*us); !errors.Is(err, ErrProtocol) {
		t.Fatalf("duplicate arrival: %v", err)
	}
	if _, err := m.Arrive(1, PhaseMSM, 0, 5*us); !errors.Is(err, ErrProtocol) {
		t.Fatalf("MSM before DEM sync: %v", err)
	}
	m.Arrive(1, PhaseDEM, 0, 6*us)
	if done, _ := m.Arrive(2, PhaseDEM, 0, 7*us); !done || m.Phase() != PhaseMSM {
		t.Fatal("DEM sync did not complete")
	}
	r := m.Record()
	if r.USRDEM != 2 || r.GTDEM != 7*time.Microsecond {
		t.Fatalf("record %+v", r)
	}
}

func TestFollowerOrder(t *testing.T) {
	f := NewFollower(1)
	steps := []struct {
		p  Phase
		k  uint64
		ok bool
	}{
		{PhaseMSM, 0, false}, {PhaseDEM, 0, true}, {PhaseTX, 0, false}, {PhaseMSM, 0, true},
		{PhaseTX, 0, true}, {PhaseIdle, 0, true}, {PhaseDEM, 0, false}, {PhaseDEM, 3, true},
	}
	for i, s := range steps {
		err := f.Step(s.p, sliceID(s.k))
		if (err == nil) != s.ok {
			t.Fatalf("step %d (%v,%d): err=%v", i, s.p, s.k, err)
		}
	}
}

func TestSpinEstimator(t *testing.T) {
	e := NewSpinEstimator(100 * time.Microsecond)
	if e.Spin() != 100*time.Microsecond {
		t.Fatalf("starts at %v, want the maximum until it has observed the host", e.Spin())
	}
	for i := 0; i < 64; i++ {
		e.Observe(time.Duration(i%8) * time.Microsecond)
	}
	if e.Spin() != 12*time.Microsecond {
		t.Fatalf("spin %v, want the 95th percentile oversleep (7µs) + 5µs", e.Spin())
	}
	for i := 0; i < 3; i++ { // three stalls in 64 strobes do not move the spin
		e.Observe(300 * time.Microsecond)
	}
	if e.Spin() != 12*time.Microsecond {
		t.Fatalf("spin %v after 3 stalls, want still 12µs", e.Spin())
	}
	e.Observe(300 * time.Microsecond) // a fourth does, capped at the maximum
	if e.Spin() != 100*time.Microsecond {
		t.Fatalf("spin %v, want capped at 100µs", e.Spin())
	}
	for i := 0; i < 64; i++ {
		e.Observe(-time.Microsecond) // woke early (EINTR path): counts as 0
	}
	if e.Spin() != 5*time.Microsecond {
		t.Fatalf("spin %v after a quiet period, want the 5µs margin", e.Spin())
	}
}
