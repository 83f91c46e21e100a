package core

import (
	"github.com/bcsmpi/bcsmpi/internal/plan"
	"github.com/bcsmpi/bcsmpi/internal/proto"
	"github.com/bcsmpi/bcsmpi/scheduler"
)

// The core's output: what MSM decided for a slice (package internal/plan,
// which the scheduler fills in). Drivers use these names and never import
// package scheduler: the core is the only way into the protocol
// (docs/design.md §4).
type (
	// Plan is what MSM decided for one slice; valid until the next MSM.
	Plan = plan.Plan
	// Match is one pairing decision, for traces and tests.
	Match = plan.Match
	// Fold is a reduction a node's agent runs between stage 0 and stage 1.
	Fold = plan.Fold
	// Write is data the scheduler produces for a rank (a new communicator's members).
	Write = plan.Write
	// CollError is a collective mismatch or communicator misuse (Plan.Err).
	CollError = plan.Error
)

// What drivers and the configuration need of the scheduler, through the core.
type (
	// SchedConfig is the scheduler's part of Config: per-node budgets per
	// slice and deterministic mode (scheduler/doc.go).
	SchedConfig = scheduler.Config
	// DetStats count deterministic mode's decisions since the job began.
	DetStats = scheduler.DetStats
)

// DefaultSchedConfig is the scheduler's default configuration.
var DefaultSchedConfig = scheduler.DefaultConfig

// CheckDescriptor checks what the scheduler requires of a descriptor of a job
// of size ranks (kind, ranks, communicator, counts, types), before MSM.
func CheckDescriptor(d proto.Descriptor, size int) error {
	return scheduler.CheckDescriptor(d, size)
}
