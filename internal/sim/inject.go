package sim

import (
	"fmt"
	"strings"
	"time"

	"github.com/bcsmpi/bcsmpi/internal/proto"
)

// Op says where in a slice an injector is consulted.
type Op uint8

const (
	// OpReport: node Point.Node reports microphase Point.Phase of slice
	// Point.Slice to the master. Effect.Delay delays the report,
	// Effect.Silent loses it (and every later one: the node stopped
	// answering).
	OpReport Op = iota + 1
	// OpLink: node Point.Node moves its part of slice Point.Slice's plan.
	// Effect.Slowdown multiplies the time its link takes.
	OpLink
	// OpRank: rank Point.Rank would run during slice Point.Slice.
	// Effect.Hold keeps it from running (descheduled, stopped, not yet
	// exec'd: a rank that has not reached MPI_Init stays starting),
	// Effect.Exit makes a rank that has not reached MPI_Init exit without
	// calling it.
	OpRank
	// OpProgram: rank Point.Rank starts round Point.Round of its program.
	// Effect.RecvFrom, if not -1, replaces the round by a blocking receive
	// from that rank with a tag no send uses (a programming error that
	// deadlocks).
	OpProgram
)

// Point is one place of the run where injectors may act.
type Point struct {
	Op    Op
	Slice proto.SliceID
	Phase string // OpReport: "DEM", "MSM" or "TX"
	Node  proto.NodeID
	Rank  proto.Rank
	Round int
}

// Effect is what injectors decided at a Point; each injector only adds to it.
type Effect struct {
	Delay    time.Duration
	Silent   bool
	Slowdown int // 0 and 1: none
	Hold     bool
	Exit     bool
	RecvFrom proto.Rank
}

// Injector is one fault, in the style of pebble's vfs/errorfs: a small value
// consulted at every Point, which prints itself. Injectors compose (Inject is
// called for each in turn) and must be deterministic functions of the Point:
// a run is replayed from its seed and its injectors.
type Injector interface {
	Inject(p Point, e *Effect)
	String() string
}

// Injectors is a list of injectors; it is itself an Injector.
type Injectors []Injector

func (is Injectors) Inject(p Point, e *Effect) {
	for _, i := range is {
		i.Inject(p, e)
	}
}

func (is Injectors) String() string {
	if len(is) == 0 {
		return "none"
	}
	s := make([]string, len(is))
	for i, in := range is {
		s[i] = in.String()
	}
	return strings.Join(s, " ")
}

// LateStart keeps Rank from reaching MPI_Init until slice At: it is alive
// and starting (proto.StatusStarting) until then.
type LateStart struct {
	Rank proto.Rank
	At   proto.SliceID
}

func (l LateStart) Inject(p Point, e *Effect) {
	if p.Op == OpRank && p.Rank == l.Rank && p.Slice < l.At {
		e.Hold = true
	}
}
func (l LateStart) String() string { return fmt.Sprintf("late-start(r%d@%d)", l.Rank, l.At) }

// NoMPI makes Rank exit without calling MPI_Init (proto.StatusNotMPI) at
// slice At.
type NoMPI struct {
	Rank proto.Rank
	At   proto.SliceID
}

func (n NoMPI) Inject(p Point, e *Effect) {
	if p.Op == OpRank && p.Rank == n.Rank {
		e.Hold = true
		e.Exit = e.Exit || p.Slice >= n.At
	}
}
func (n NoMPI) String() string { return fmt.Sprintf("no-mpi(r%d@%d)", n.Rank, n.At) }

// StopRank stops Rank (SIGSTOP) during slices From .. To-1: it runs no code,
// so it posts nothing and consumes no completion.
type StopRank struct {
	Rank     proto.Rank
	From, To proto.SliceID
}

func (s StopRank) Inject(p Point, e *Effect) {
	if p.Op == OpRank && p.Rank == s.Rank && p.Slice >= s.From && p.Slice < s.To {
		e.Hold = true
	}
}
func (s StopRank) String() string {
	return fmt.Sprintf("stop-rank(r%d@%d..%d)", s.Rank, s.From, s.To)
}

// SlowNode delays every report of Node to the master by Delay during slices
// From .. To-1 (a node descheduled, paging, on a congested control network).
type SlowNode struct {
	Node     proto.NodeID
	From, To proto.SliceID
	Delay    time.Duration
}

func (s SlowNode) Inject(p Point, e *Effect) {
	if p.Op == OpReport && p.Node == s.Node && p.Slice >= s.From && p.Slice < s.To {
		e.Delay += s.Delay
	}
}
func (s SlowNode) String() string {
	return fmt.Sprintf("slow-node(n%d@%d..%d+%v)", s.Node, s.From, s.To, s.Delay)
}

// SilentNode stops Node from answering the master from slice At on (the
// agent hangs or its host dies: BCS_FAULT_STALL_NODE=node@slice).
type SilentNode struct {
	Node proto.NodeID
	At   proto.SliceID
}

func (s SilentNode) Inject(p Point, e *Effect) {
	if p.Op == OpReport && p.Node == s.Node && p.Slice >= s.At {
		e.Silent = true
	}
}
func (s SilentNode) String() string { return fmt.Sprintf("silent-node(n%d@%d)", s.Node, s.At) }

// SlowLink divides the bandwidth of Node's link by Factor.
type SlowLink struct {
	Node   proto.NodeID
	Factor int
}

func (s SlowLink) Inject(p Point, e *Effect) {
	if p.Op == OpLink && p.Node == s.Node {
		e.Slowdown = max(e.Slowdown, 1) * s.Factor
	}
}
func (s SlowLink) String() string { return fmt.Sprintf("slow-link(n%d/%d)", s.Node, s.Factor) }

// RecvCycle makes ranks A and B, at round Round of their programs, each
// block receiving from the other with a tag nobody sends: a true deadlock.
type RecvCycle struct {
	A, B  proto.Rank
	Round int
}

func (c RecvCycle) Inject(p Point, e *Effect) {
	if p.Op == OpProgram && p.Round == c.Round {
		switch p.Rank {
		case c.A:
			e.RecvFrom = c.B
		case c.B:
			e.RecvFrom = c.A
		}
	}
}
func (c RecvCycle) String() string {
	return fmt.Sprintf("recv-cycle(r%d<->r%d@round%d)", c.A, c.B, c.Round)
}

// Deschedule keeps each rank from running in a slice with probability
// Percent/100, drawn from a hash of (Seed, slice, rank): timing noise (the
// OS running something else) that changes when ranks post, never what they
// post.
type Deschedule struct {
	Seed    uint64
	Percent uint64 // 0 .. 100
}

func (d Deschedule) Inject(p Point, e *Effect) {
	if p.Op == OpRank && mix(d.Seed^mix(uint64(p.Slice)<<20^uint64(p.Rank)))%100 < d.Percent {
		e.Hold = true
	}
}
func (d Deschedule) String() string {
	return fmt.Sprintf("deschedule(%d%%, seed %d)", d.Percent, d.Seed)
}
