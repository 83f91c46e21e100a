package sim

import (
	"fmt"
	"math/rand/v2"

	"github.com/bcsmpi/bcsmpi/internal/proto"
	"github.com/bcsmpi/bcsmpi/strobe"
)

// Gang time-shares several simulated jobs under one master strobe, as
// nicthread's Gang does: every gang slice, the pure matrix (strobe.Gang)
// decides which job runs; that decision travels in every job's slice (its
// DEM message, so every node of the job applies it at the same strobe);
// every job's DEM, MSM and TX run every slice (buffered coscheduling: a
// descheduled job's data keeps moving), but only the running job's ranks
// run code, and a descheduled slice does not count towards its deadlock
// detection. After each job's DEM the matrix observes its status bytes and
// how much it exchanged (work-conserving switches). Not safe for concurrent
// use.
type Gang struct {
	m    *strobe.Gang
	Jobs []*Sim
	// Log is, per gang slice, the index of the job that ran (-1: none) and
	// whether that was a switch.
	Log []GangSlice
	// JobSlice is, per job, the job's own slice number in each gang slice
	// (0 before it joined or after it ended).
	JobSlice [][]proto.SliceID
	// Stuck is, per job, whether in each gang slice every rank was blocked
	// or had ended and the job exchanged nothing (what the matrix observes
	// as idle).
	Stuck [][]bool
	// Able is, per job, whether in each gang slice one of its ranks could
	// use the CPU (running, woken or starting).
	Able  [][]bool
	ended []bool
}

// GangSlice is one gang slice's decision.
type GangSlice struct {
	Running  int
	Switched bool
}

// GateChange is a node's application of a gang decision that changed it.
type GateChange struct {
	Slice proto.SliceID
	Run   bool
}

// NewGang makes one simulation per job configuration, each seeded from rng
// in order, all in the matrix from the first slice.
func NewGang(mc strobe.GangConfig, jobs []Config, rng *rand.Rand) (*Gang, error) {
	mc = mc.Defaults()
	if err := mc.Validate(); err != nil {
		return nil, err
	}
	g := &Gang{m: strobe.NewGang(mc), JobSlice: make([][]proto.SliceID, len(jobs)), Stuck: make([][]bool, len(jobs)), Able: make([][]bool, len(jobs)), ended: make([]bool, len(jobs))}
	for i, c := range jobs {
		s, err := New(c, rand.New(rand.NewPCG(rng.Uint64(), rng.Uint64())))
		if err != nil {
			return nil, fmt.Errorf("job %d: %w", i, err)
		}
		s.gateSeen = make([][]GateChange, c.Nodes)
		if _, err := g.m.Join(i); err != nil {
			return nil, err
		}
		g.Jobs = append(g.Jobs, s)
	}
	return g, nil
}

// Matrix is the gang matrix (for its counts).
func (g *Gang) Matrix() *strobe.Gang { return g.m }

// Done reports whether every job has ended (finished or failed).
func (g *Gang) Done() bool {
	for _, e := range g.ended {
		if !e {
			return false
		}
	}
	return true
}

// Step runs one gang slice: every live job one slice.
func (g *Gang) Step() {
	id, switched := g.m.Slice()
	g.Log = append(g.Log, GangSlice{Running: id, Switched: switched})
	for i, s := range g.Jobs {
		if g.ended[i] {
			g.JobSlice[i] = append(g.JobSlice[i], 0)
			g.Stuck[i] = append(g.Stuck[i], false)
			g.Able[i] = append(g.Able[i], false)
			continue
		}
		s.paused = i != id
		s.Step()
		g.JobSlice[i] = append(g.JobSlice[i], s.k)
		able := false
		for _, st := range s.status {
			if !proto.StatusBlocked(st) && !proto.StatusInert(st) {
				able = true
			}
		}
		g.Stuck[i] = append(g.Stuck[i], !able && len(s.all) == 0)
		g.Able[i] = append(g.Able[i], able)
		g.m.Observe(i, s.status, len(s.all))
		if s.Done() {
			g.ended[i] = true
			g.m.Leave(i)
		}
	}
}

// Run steps until every job has ended or maxSlices gang slices have run.
func (g *Gang) Run(maxSlices int) {
	for n := 0; n < maxSlices && !g.Done(); n++ {
		g.Step()
	}
}

// GateChanges returns, for job j's node n, the slices in which the node
// applied a changed gang decision, and the decision.
func (g *Gang) GateChanges(j, n int) []GateChange { return g.Jobs[j].gateSeen[n] }

// gate applies the gang's decision for slice k on every node of the job (a
// no-op outside a gang): what nicthread's Agent.Gate does when the slice's
// DEM arrives, recorded when it changes.
func (s *Sim) gate(k proto.SliceID) {
	if s.gateSeen == nil {
		return
	}
	for n := range s.gateSeen {
		l := s.gateSeen[n]
		run := !s.paused
		if len(l) == 0 && run || len(l) > 0 && l[len(l)-1].Run == run {
			continue // ranks start running; no change
		}
		s.gateSeen[n] = append(l, GateChange{Slice: k, Run: run})
	}
}
