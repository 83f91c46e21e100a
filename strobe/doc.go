// Package strobe holds the pure state machines of the global strobe: the
// master's absolute slice schedule and microphase synchronisation, and the
// follower (agent) side that checks the order of what it is told.
//
// # Glossary
//
//   - schedule: slice k is due at t0 + k·slice; it never drifts.
//   - late: a strobe issued after its due time (the previous slice overran or the
//     host stalled); the lateness is returned, never hidden.
//   - skipped: slices whose whole window passed before the master could start
//     them; the schedule jumps ahead to the slice whose window contains now, and
//     the count is returned.
//   - sync retry: the master looked and found a node not yet done with the
//     current microphase (USRDEM, USRMSM, USRTS of the paper's Table 1).
//
// Nothing here reads a clock, sleeps or starts goroutines: the driver passes now
// in and sleeps until Due() itself. Types here are not safe for concurrent use.
package strobe
