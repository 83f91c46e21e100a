package strobe

import (
	"errors"
	"fmt"

	"github.com/bcsmpi/bcsmpi/internal/proto"
)

// GangConfig is the gang matrix: how many jobs time-share the nodes and for
// how many slices each runs before the next one's turn.
type GangConfig struct {
	MPL     int    // multiprogramming level: slots of the matrix, 1 .. 64 (0: 2)
	Quantum uint64 // slices a job runs before the next slot's turn, 1 .. 1e6 (0: 20)
}

// Defaults fills the zero fields.
func (c GangConfig) Defaults() GangConfig {
	if c.MPL == 0 {
		c.MPL = 2
	}
	if c.Quantum == 0 {
		c.Quantum = 20
	}
	return c
}

// Validate reports the first out-of-range field (after Defaults).
func (c GangConfig) Validate() error {
	if c.MPL < 1 || c.MPL > 64 {
		return fmt.Errorf("strobe: gang_mpl = %d, want 1 .. 64 jobs", c.MPL)
	}
	if c.Quantum < 1 || c.Quantum > 1_000_000 {
		return fmt.Errorf("strobe: gang_quantum = %d, want 1 .. 1000000 slices", c.Quantum)
	}
	return nil
}

// ErrGangFull is matched by the error of a Join that finds every slot taken.
var ErrGangFull = errors.New("strobe: every gang slot is taken")

// GangFullError says how many jobs hold the slots.
type GangFullError struct{ MPL int }

func (e *GangFullError) Error() string {
	return fmt.Sprintf("strobe: %d jobs already time-share the nodes (gang_mpl %d); wait for one to end or raise gang_mpl", e.MPL, e.MPL)
}
func (e *GangFullError) Is(t error) bool { return t == ErrGangFull }

// Gang is the pure gang matrix (Ousterhout): one row per slot, each row a
// job that spans its own nodes. The master calls Slice at the start of every
// slice to learn which job runs in it, and Observe after each job's DEM with
// the status bytes it gathered. The decision is global, taken once per slice
// by the master and carried to every node in that slice's messages, so every
// node switches at the same strobe (a gang switch by construction).
//
// Rules, at the start of slice k:
//
//  1. If no job runs (the running one left, or none yet), the first job in
//     slot order after the last running one that can use the CPU runs, else
//     the next in slot order; the quantum restarts.
//  2. After Quantum slices of the running job, the next job in slot order
//     runs, whether it can use the CPU or not (a job whose ranks are all
//     blocked gets its slice each turn: rule 3 then passes the rest on after
//     one slice, and its deadlock detection, which counts only slices run,
//     still makes progress); the quantum restarts.
//  3. Work-conserving: if in the previous slice every rank of the running job
//     was blocked or had ended and it exchanged nothing, and another job can
//     use the CPU, that job runs for the rest of the quantum (which does not
//     restart).
//
// A job "can use the CPU" when its last observed status had a rank running,
// woken, or starting (proto status bytes), or when it was never observed.
//
// A held job (Hold) is one whose nodes the slice's decision cannot reach:
// its previous slice is still under way (a host that stopped answering).
// The rules pass it over as if its slot were free: it is not chosen, the
// running job that is held hands over at once to the next job in slot
// order (rule 1, the quantum restarts), and with every job held none runs.
// It is not counted alive (not strobed) until released.
// Not safe for concurrent use.
type Gang struct {
	cfg      GangConfig
	slots    []gangSlot
	cur      int    // slot running, -1: none
	q        uint64 // slices of the current quantum so far
	switches uint64
	last     int // job that ran in the previous slice, -1: none
	after    int // when none runs: the slot rule 1 scans after (the last running one's), -1: from slot 0
	owner    int // slot whose quantum this is (rules 1 and 2 set it; rule 3 keeps it), -1: none
}

type gangSlot struct {
	id    int // job id; -1: free
	able  bool
	idle  bool // last observed: every rank blocked or ended, nothing exchanged
	held  bool // Hold: the slice's decision cannot reach its nodes
	ran   uint64
	alive uint64
	given uint64 // slices of its quantum another job ran (rule 3)
}

// NewGang returns an empty matrix; cfg must be valid (after Defaults).
func NewGang(cfg GangConfig) *Gang {
	if err := cfg.Validate(); err != nil {
		panic(err.Error())
	}
	g := &Gang{cfg: cfg, slots: make([]gangSlot, cfg.MPL), cur: -1, last: -1, after: -1, owner: -1}
	for i := range g.slots {
		g.slots[i].id = -1
	}
	return g
}

// Join places job id in the lowest free slot and returns the slot, or a
// *GangFullError.
func (g *Gang) Join(id int) (int, error) {
	for i := range g.slots {
		if g.slots[i].id == id {
			panic(fmt.Sprintf("strobe: job %d joined the gang twice", id))
		}
	}
	for i := range g.slots {
		if g.slots[i].id < 0 {
			g.slots[i] = gangSlot{id: id, able: true}
			return i, nil
		}
	}
	return -1, &GangFullError{MPL: g.cfg.MPL}
}

// Leave frees job id's slot (a job that is not in the matrix is ignored).
func (g *Gang) Leave(id int) {
	for i := range g.slots {
		if g.slots[i].id == id {
			g.slots[i] = gangSlot{id: -1}
			if g.cur == i {
				g.cur, g.after = -1, i
			}
			if g.owner == i {
				g.owner = -1
			}
		}
	}
}

// Jobs is the number of jobs in the matrix.
func (g *Gang) Jobs() int {
	n := 0
	for i := range g.slots {
		if g.slots[i].id >= 0 {
			n++
		}
	}
	return n
}

// next returns the first occupied slot after from (cyclically, from itself
// last); with preferAble the first that can use the CPU if any; with
// onlyAble -1 if none can. -1 if the matrix is empty.
func (g *Gang) next(from int, preferAble, onlyAble bool) int {
	n := len(g.slots)
	first := -1
	for d := 1; d <= n; d++ {
		i := ((from+d)%n + n) % n
		if g.slots[i].id < 0 || g.slots[i].held {
			continue
		}
		if first < 0 {
			first = i
		}
		if !preferAble || g.slots[i].able {
			return i
		}
	}
	if onlyAble {
		return -1
	}
	return first
}

// Slice decides the job that runs in the slice that starts now: its id
// (-1 if the matrix is empty) and whether that is a switch from the job that
// ran in the previous slice.
func (g *Gang) Slice() (id int, switched bool) {
	if g.cur >= 0 && g.slots[g.cur].held { // rule 1 for the others
		g.cur, g.after = -1, g.cur
	}
	switch {
	case g.cur < 0:
		g.cur, g.q = g.next(g.after, true, false), 0
		g.owner = g.cur
	case g.q >= g.cfg.Quantum:
		g.cur, g.q = g.next(g.cur, false, false), 0
		g.owner = g.cur
	case g.slots[g.cur].idle:
		if i := g.next(g.cur, true, true); i >= 0 && i != g.cur {
			g.cur = i
		}
	}
	if g.cur < 0 {
		g.last = -1
		return -1, false
	}
	g.q++
	for i := range g.slots {
		if g.slots[i].id >= 0 && !g.slots[i].held {
			g.slots[i].alive++
		}
	}
	g.slots[g.cur].ran++
	if g.owner >= 0 && g.owner != g.cur && !g.slots[g.owner].held {
		g.slots[g.owner].given++
	}
	id = g.slots[g.cur].id
	switched = g.last >= 0 && g.last != id
	if switched {
		g.switches++
	}
	g.last = id
	return id, switched
}

// Hold marks job id held (true) or released (false) from the next Slice
// on; a job that is not in the matrix is ignored.
func (g *Gang) Hold(id int, held bool) {
	for i := range g.slots {
		if g.slots[i].id == id {
			g.slots[i].held = held
		}
	}
}

// Observe records what job id's DEM of this slice gathered: its ranks'
// status bytes and how many descriptors it exchanged.
func (g *Gang) Observe(id int, status []uint8, exchanged int) {
	for i := range g.slots {
		if g.slots[i].id != id {
			continue
		}
		able := false
		for _, s := range status {
			if !proto.StatusBlocked(s) && !proto.StatusInert(s) { // running, woken, starting
				able = true
			}
		}
		g.slots[i].able = able
		g.slots[i].idle = !able && exchanged == 0 && len(status) > 0
	}
}

// Slot returns job id's slot and whether it runs now (in the slice Slice
// last decided); slot -1 if the job is not in the matrix.
func (g *Gang) Slot(id int) (slot int, running bool) {
	for i := range g.slots {
		if g.slots[i].id == id {
			return i, i == g.cur
		}
	}
	return -1, false
}

// Counts returns job id's slices run and slices alive (strobed while in the
// matrix).
func (g *Gang) Counts(id int) (ran, alive uint64) {
	for i := range g.slots {
		if g.slots[i].id == id {
			return g.slots[i].ran, g.slots[i].alive
		}
	}
	return 0, 0
}

// Given returns how many slices of job id's quanta another job ran
// because job id's ranks were all blocked (rule 3, work-conserving): the
// quantum's slices decided while the turn was its and another job ran.
func (g *Gang) Given(id int) uint64 {
	for i := range g.slots {
		if g.slots[i].id == id {
			return g.slots[i].given
		}
	}
	return 0
}

// Owner returns the id of the job whose quantum the slice Slice last
// decided belongs to (rules 1 and 2 give a job its quantum; rule 3 lends
// the rest of it to another job), -1 if none.
func (g *Gang) Owner() int {
	if g.owner < 0 {
		return -1
	}
	return g.slots[g.owner].id
}

// Switches is the number of slices so far whose running job differed from
// the one that ran in the previous slice (a slice after the matrix was
// empty is not a switch).
func (g *Gang) Switches() uint64 { return g.switches }
