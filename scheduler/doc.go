// Package scheduler is the pure message-scheduling microphase (MSM) of BCS-MPI:
// it matches send descriptors with receive/probe descriptors and decides which
// chunks of which matched messages move in the current slice.
//
// # Glossary
//
//   - pending queue: per (communicator, receiving rank), the receives and probes
//     not yet matched, in the receiver's post order.
//   - unexpected queue: per (communicator, receiving rank), the sends not yet
//     matched, ordered by (DEM slice, source rank, post order).
//   - transfer: a matched (send, receive) pair with bytes still to move.
//
// # Matching rule (DESIGN.md §3 rule 4)
//
// In each slice the descriptors exchanged in DEM are taken in (rank, seq) order.
//
//  1. Every new send is offered to the receiver's pending queue and matches the
//     earliest pending receive that accepts it (source and tag, with wildcards).
//     A pending blocking probe that accepts it completes without consuming it.
//     A send that matches nothing joins the unexpected queue.
//  2. Every new receive, probe and iprobe then looks through the receiver's
//     unexpected queue and takes the earliest send that it accepts. A receive or
//     probe that finds nothing joins the pending queue; an iprobe completes with
//     "not found".
//
// This keeps MPI's non-overtaking order per (communicator, source, tag), and it
// resolves wildcards deterministically: earliest slice, then lowest source rank,
// then post order. The same posting pattern therefore gives the same matching on
// every run and on every node, which is what lets every agent run MSM over the
// same global descriptor set and arrive at the same plan without further talk.
//
// # Chunking rule
//
// Active transfers are served in match order. Each node may copy at most
// BytesPerSliceMax bytes and ChunksPerSliceMax chunks per slice; a chunk uses
// the budget of its source node and of its destination node (once if they are
// the same). A transfer that gets no budget waits for the next slice, keeping its
// place, so a large message never starves the ones matched before it and never
// overtakes them. A transfer completes in the slice its last chunk moves;
// zero-length transfers complete in the slice they are matched.
//
// Buffered sends: a send marked Inline (its payload already copied to the
// agent) completes in the slice it is exchanged, whether or not it is matched,
// like an eager send in other MPI implementations; only its receive waits for
// the data. Larger sends complete with their transfer (rendezvous), which MPI
// allows for MPI_Send.
//
// The Scheduler is a plain value: no clock, no goroutines, no I/O. It is not safe
// for concurrent use. It reuses its internal storage, so Schedule does not
// allocate in steady state.
package scheduler
