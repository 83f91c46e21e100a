package sim

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/bcsmpi/bcsmpi/strobe"
)

func newGang(t *testing.T, mc strobe.GangConfig, jobs []Config, seed uint64) *Gang {
	t.Helper()
	g, err := NewGang(mc, jobs, rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("gang seed %d; replay: go test ./internal/sim -run '^%s$' -sim.seed=%d", seed, t.Name(), seed)
		}
	})
	return g
}

// runs splits the gang's log into maximal runs: job and length.
func runs(g *Gang) (jobs, lens []int) {
	for i, s := range g.Log {
		if i == 0 || s.Running != g.Log[i-1].Running {
			jobs, lens = append(jobs, s.Running), append(lens, 0)
		}
		lens[len(lens)-1]++
	}
	return jobs, lens
}

// Two jobs of different sizes, one with a node that reports late for a
// while: every node of a job applies each gang switch in the same slice,
// the one the master decided; no job runs longer than a quantum while the
// other waits; both finish with every byte checked (Step's checks).
func TestSimGangSwitchesAtTheSameSliceOnEveryNode(t *testing.T) {
	const q = 5
	w := DefaultWorkload
	w.Rounds = 12
	a := Config{Nodes: 20, RanksPerNode: 2, DeadlockSlices: 50, Workload: w,
		Inject: SlowNode{Node: 7, From: 10, To: 40, Delay: 2 * time.Millisecond}}
	b := Config{Nodes: 12, RanksPerNode: 3, DeadlockSlices: 50, Workload: w}
	g := newGang(t, strobe.GangConfig{MPL: 2, Quantum: q}, []Config{a, b}, seedOr(21))
	g.Run(20000)
	for i, s := range g.Jobs {
		if !s.Done() || s.Err() != nil || s.Stats().Finalized != len(s.ranks) {
			t.Fatalf("job %d: done %v, err %v, %d of %d finalized", i, s.Done(), s.Err(), s.Stats().Finalized, len(s.ranks))
		}
	}
	for j := range g.Jobs {
		// The master's decisions for job j, as the job's slice numbers.
		var want []GateChange
		prev := true
		for i, d := range g.Log {
			if k := g.JobSlice[j][i]; k != 0 || i == 0 {
				if run := d.Running == j; run != prev {
					want = append(want, GateChange{Slice: k, Run: run})
					prev = run
				}
			}
		}
		if len(want) < 4 {
			t.Fatalf("job %d was switched only %d times: %v", j, len(want), want)
		}
		for n := range g.Jobs[j].gateSeen {
			if got := g.GateChanges(j, n); fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("job %d node %d applied switches %v, the master decided %v", j, n, got, want)
			}
		}
	}
	jobs, lens := runs(g)
	for i := range jobs {
		if lens[i] > q && i < len(jobs)-1 {
			t.Fatalf("job %d ran %d slices in a row while another waited, quantum %d", jobs[i], lens[i], q)
		}
	}
}

// Work-conserving: once every rank of job 0 is blocked in a receive cycle
// (deadlock detection off), it runs one slice per turn and gives the rest of
// its quantum to job 1, which finishes.
func TestSimGangWorkConserving(t *testing.T) {
	w := DefaultWorkload
	w.Rounds = 6
	a := Config{Nodes: 4, RanksPerNode: 2, Workload: w, Inject: RecvCycle{A: 1, B: 6, Round: 1}}
	w.Rounds = 40
	b := Config{Nodes: 6, RanksPerNode: 2, Workload: w}
	g := newGang(t, strobe.GangConfig{MPL: 2, Quantum: 10}, []Config{a, b}, seedOr(22))
	for n := 0; n < 20000 && !g.Jobs[1].Done(); n++ {
		g.Step()
	}
	if s := g.Jobs[1]; !s.Done() || s.Err() != nil {
		t.Fatalf("job 1: done %v, err %v", s.Done(), s.Err())
	}
	// From the first slice job 0 was stuck in, every turn it gets is one slice.
	first := -1
	for t, st := range g.Stuck[0] {
		if st {
			first = t
			break
		}
	}
	if first < 0 {
		t.Fatal("job 0 never got stuck")
	}
	turns := 0
	for i := first + 1; i < len(g.Log); i++ {
		if g.Log[i].Running == 0 {
			turns++
			// Job 0 was stuck in that slice, job 1 could use the CPU and was still there.
			if i+1 < len(g.Log) && g.Log[i+1].Running == 0 && g.Stuck[0][i] && g.Able[1][i] && g.JobSlice[1][i+1] != 0 {
				t.Fatalf("stuck job 0 ran slices %d and %d in a row; work-conserving gives the rest of the quantum away", i, i+1)
			}
		}
	}
	if turns < 2 {
		t.Fatalf("stuck job 0 got %d turns; it must still be scheduled each quantum", turns)
	}
}

// Deadlock detection counts only the slices in which the job ran: a receive
// cycle is declared after deadlock_slices stuck slices *run*, however many
// slices the job spent descheduled meanwhile.
func TestSimGangDeadlockCountsRunSlices(t *testing.T) {
	w := DefaultWorkload
	w.Rounds = 6
	a := Config{Nodes: 4, RanksPerNode: 2, DeadlockSlices: 5, Workload: w, Inject: RecvCycle{A: 1, B: 6, Round: 1}}
	w.Rounds = 0 // runs until the test stops it
	b := Config{Nodes: 6, RanksPerNode: 2, Workload: w}
	g := newGang(t, strobe.GangConfig{MPL: 2, Quantum: 10}, []Config{a, b}, seedOr(23))
	for n := 0; n < 20000 && !g.Jobs[0].Done(); n++ {
		g.Step()
	}
	var je *JobError
	if err := g.Jobs[0].Err(); !errors.As(err, &je) || je.Deadlock == nil || je.Deadlock.Slices != 5 {
		t.Fatalf("job 0: %v, want a deadlock after 5 slices", err)
	}
	// Stuck slices: those run while stuck, and all of them, up to the verdict.
	ranStuck, aliveStuck := 0, 0
	for i := range g.Log {
		if g.Stuck[0][i] {
			aliveStuck++
			if g.Log[i].Running == 0 {
				ranStuck++
			}
		}
	}
	if ranStuck < 5 || aliveStuck <= ranStuck {
		t.Fatalf("deadlock declared after %d stuck slices run (%d alive): want at least 5 run, and descheduled ones besides", ranStuck, aliveStuck)
	}
	if s := g.Jobs[1]; s.Err() != nil {
		t.Fatalf("job 1 failed: %v", s.Err())
	}
}
