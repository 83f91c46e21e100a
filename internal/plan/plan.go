// Package plan is the output of the message-scheduling microphase (MSM): what
// one slice moves, folds, writes and completes. Package scheduler produces a
// Plan; package internal/core hands it out (core.Plan is this type) and is
// the only package that imports scheduler, so drivers (nicthread,
// internal/sim, internal/launch) reach the protocol through the core alone
// (docs/design.md §4).
//
// Plain data, and one digest of it (hash.go): Hash, with options for what
// differs between runs of the same program (addresses and request slots,
// slice numbers), is the one plan hash of the slice log
// (nicthread.PlanHash) and of the simulator's trace (internal/sim).
package plan

import (
	"github.com/bcsmpi/bcsmpi/internal/proto"
	"github.com/bcsmpi/bcsmpi/internal/reduce"
)

// Match records one pairing decision, for traces and tests.
type Match struct {
	Xfer       uint64
	Send, Recv proto.Descriptor
}

// Plan is what MSM decided for one slice. The scheduler owns its slices and
// reuses them on the next call.
type Plan struct {
	Slice   proto.SliceID
	Matches []Match
	// Consumed are the buffered (Inline) sends a receive took in this slice
	// without a transfer, because their type signatures differed (package
	// scheduler's sig.go): no Match names them, so the sender's agent frees
	// their inline copies and counts the eager ones as matched (nicthread's
	// noteEager) from here. Not in Hash: the receive's completion, which
	// is, names the send (its error, source and tag).
	Consumed    []proto.Descriptor
	Chunks      []proto.Chunk
	Completions []proto.Completion
	// Waiting is the number of matched transfers that still have bytes to move.
	Waiting int
	// Spanning is the number of transfers whose span, scheduled in this
	// slice or an earlier one, is being copied in this one (package
	// scheduler, "Spans"): they move though the plan may have no chunk of
	// theirs.
	Spanning int
	// Pending and Unexpected count unmatched receives/probes and sends.
	Pending, Unexpected int
	// Collectives is the number of collectives completed in this slice.
	Collectives int
	// Folds are the reductions agents run between stage 0 and stage 1.
	Folds []Fold
	// Writes are scheduler-produced data for ranks (new communicators).
	Writes []Write
	// Err, if set, is a collective mismatch or communicator misuse: the
	// job cannot go on correctly.
	Err error
}

// Fold is a reduction the agent of Node runs after stage 0 of the slice: N
// slots of Seg bytes, Stride apart from Base in its staging area, folded in
// slot (= communicator rank) order.
type Fold struct {
	Node              proto.NodeID
	Op                reduce.Op
	Type              reduce.Type
	Mode              reduce.Mode
	Base, Stride, Seg uint64
	N                 int
}

// Write is data the scheduler itself produces for a rank (the member list of
// a new communicator): the rank's agent writes it at Addr.
type Write struct {
	Rank proto.Rank
	Addr uint64
	Data []byte
}

// Error is a collective or communicator error found in MSM: mismatched
// collectives across members, or a descriptor naming a communicator its rank
// is not a member of. Ranks are world ranks.
type Error struct {
	Slice proto.SliceID
	Ranks []proto.Rank
	Why   string
}

func (e *Error) Error() string { return e.Why }
