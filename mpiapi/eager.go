package mpiapi

import (
	"fmt"
	"os"

	"github.com/bcsmpi/bcsmpi/internal/proto"
)

// Eager sends: a blocking standard send (Send, SendBytes; the C library's
// MPI_Send and MPI_Rsend) of at most inline_max bytes returns as soon as its
// descriptor is posted. Its payload is copied into the ring slot with the
// descriptor (startPair), so the caller's buffer may be reused at once,
// which is all a standard-mode send promises (MPI 5.0 §3.4: it may be
// buffered); Open MPI and MPICH return from small sends the same way
// (their eager protocol). Before, the call waited for the next slice's
// exchange and the wake-up after it (1.5 to 2 slices), and a rank that
// sends and then receives posted its receive that much later.
//
// The request is handled as one released with MPI_Request_free while
// active: it is retired at the post (the program has no handle) and kept in
// process.eager until the agent's completion record for it is read; reap
// consumes the records (reapEager) and gives the slots back. The scheduler
// completes an inline send in the slice it is exchanged, matched or not
// (scheduler/doc.go, Buffered sends), with no error: the cancel, type and
// truncation errors are never a buffered send's, and a job that aborts is
// noticed by the rank's next blocking call, as for any call. So eager sends
// complete in post order within a bounded time, and:
//
//   - a request slot is held from the post to the exchange: a call that
//     needs a slot while every one is held, some by eager sends, waits
//     (awaitEager) until the exchange returns them, instead of failing; a
//     full ring blocks the post as for any descriptor (process.post);
//   - Finalize waits until every eager send has been exchanged, so the
//     last messages of a rank are delivered and the leak report does not
//     name them (they are no one's request);
//   - the buffer checks (check.go) check the send's buffer against active
//     requests at the post (an overlap with a receive buffer is an error
//     then, as for any send) but do not keep its range or sums: the bytes
//     sent are the copy made at the post, and the program may write the
//     buffer as soon as the call returns;
//   - the traffic counters (tool.go, MPI_T's bcs_msgs_sent) count the
//     message at the post, once;
//   - the MMDS records the Send's real duration (the post, and the wait
//     for a match past eager_max, below), and the deterministic and
//     record/replay modes are unaffected: sends are not logged events, and
//     what the scheduler matches does not depend on when the sender
//     returns.
//
// # Back-pressure (eager_max)
//
// A buffered message costs the runtime about 1.2 KB until a receive matches
// it: its inline copy (up to inline_max, 960 bytes) in the sender's agent and
// its descriptor in every node's scheduler. A rank that sends small messages
// faster than its receiver receives (MPICH's pt2pt/sendflood: 700,000 sends
// into rank 0; any producer and consumer) would grow that without bound, so
// the number of a rank's eager sends not yet matched is bounded, as Open MPI
// and MPICH bound theirs with flow control:
//
//   - every eager send's descriptor says so (proto.Descriptor.Eager); the
//     sender's agent counts those that receives match, in the slice they
//     are matched, in the rank block's eager-matched word (shm), and wakes
//     the rank as for a completion (nicthread's noteEager);
//   - the rank counts its eager sends posted (process.eagerPosted); the
//     difference is its eager sends unmatched, read after each post (the
//     word lags the matching by the publication, so the rank's count is never
//     below the runtime's);
//   - a Send that leaves that count below the limit returns at once, as
//     before; one that reaches it was posted as usual (its descriptor is the
//     same either way) and waits, in the call (MMDS records the wait), until
//     a receive matches it or any earlier eager send (awaitMatch). So a rank
//     never has more than the limit unmatched, and a Send never waits longer
//     than a rendezvous send would (until its own match, or an earlier one
//     of the same thread's): no correct program deadlocks, and a program
//     that relies on more buffering than the limit is erroneous (MPI 5.0
//     §3.5: a standard send may wait for its match);
//   - the bound applies to ranks without threads, funneled and serialized
//     ones (MPI_THREAD_SINGLE .. MPI_THREAD_SERIALIZED: one thread calls at
//     a time). With threads on (MPI_THREAD_MULTIPLE, threads.go) a Send
//     never waits for a match: the word counts the rank's matches in one
//     total, so a thread B waiting past the limit would not be released by
//     its own send's match while an earlier thread A's send is unmatched,
//     and if B's next action is what lets A's send be matched, a correct
//     program would hang. Such a rank's eager sends are bounded by its
//     request slots and ring only, as before eager_max;
//   - such a program is reported, not left hanging: a Send waiting for a
//     match shows the status proto.CallSendMatch (read as MPI_Send), and
//     while it does the scheduler counts the rank's unmatched eager sends
//     as its unfinished operations and wait-for edges (scheduler's
//     waitfor.go, "eager"; not while the rank runs or waits in another
//     call, when it does not wait for them), so when every rank waits the
//     deadlock detector names them ("its eager sends to rank 1 ... wait for
//     matching receives") and the wait-for cycle; raising eager_max lets it
//     run (cabi's TestEagerBoundDeadlockReported).
//
// The limit is per rank, in total, and is max(eager_max, the job's size):
// eager_max (configs, default 1024, 1 .. 1048576, carried in the region
// header) or one message for every rank, whichever is more, so that "every
// rank sends to every other, then receives" works at any eager_max and job
// size. Per rank rather than per destination: the runtime's memory is then
// at most ranks × limit × 1.2 KB for the whole job, and ppn × limit × 1.2 KB
// of inline copies on one agent (64 ranks on a node at the default: 80 MB;
// MPICH's sendflood with 8 ranks: 7 × 1024 × 1.2 KB, about 8.6 MB), whereas
// a per-destination limit L gives ranks × (ranks − 1) × L, quadratic in the
// job's size (1024 ranks, L = 16: 20 GB of descriptors on every node). The
// default 1024 keeps "everyone sends a stream of a few hundred small
// messages, then receives" working (cabi/testdata/eager.c sends 400), and a
// stream to a slow receiver waits only once 1024 are queued, where its rate
// is the receiver's anyway.
//
// Timing only: which Send waits depends on when receives match, but the
// descriptors posted, their order and what the scheduler matches do not
// (the flag is a function of the call, and it is left out of the plan and
// descriptor hashes), so deterministic mode and --replay are unaffected: in
// a replay every match is published in the same virtual slice as recorded,
// so a Send that returned before some later post of the recording returns
// before it again. A buffered send whose receive fails the type check
// (scheduler's sig.go consumes the pair without a match; the job's error
// handler sees the receive's error) counts as matched: the plan lists it in
// Consumed, which noteEager counts too. Not counted: nonblocking sends
// (MPI_Isend) of at most inline_max bytes are buffered as before and not
// bounded here: each holds
// its request slot until exchanged (requests_max), and a program that frees
// or waits for them as fast as it posts them grows the runtime as a flood of
// blocking sends did (bounding them would make MPI_Test's answer depend on
// timing in deterministic mode).
//
// Synchronous sends (Ssend, Issend) are never inline and wait for their
// match; Sendrecv waits for its receive, so its send gains nothing by
// returning early and is unchanged; the C library's MPI_Bsend copies into
// the attached buffer and returns at once already.

// detachEager releases the eager send r of n bytes, just posted by call:
// the caller returns, and r completes in the background (reapEager,
// Finalize). The traffic counters (tool.go) count it now, when the program
// sees it sent, not when its record is consumed.
func (p *process) detachEager(r *Request, call string, n uint64) {
	traffic.note(r.kind, n)
	r.eager = true
	p.retire(r, call)
	p.eager = append(p.eager, r)
	p.eagerPosted++
	p.eagerMost = max(p.eagerMost, p.eagerHeld())
}

// eagerHeld is the number of this rank's eager sends not yet matched, as far
// as the agent has told (the eager-matched word). A word past the sends
// posted (the rank, or a stray write of its process, overwrote it) turns the
// bound off for this rank (only its own flow control suffers): said once on
// stderr, naming the rank and both counts.
func (p *process) eagerHeld() uint64 {
	m := p.blk.EagerMatched()
	if m > p.eagerPosted {
		if !p.eagerWarned {
			p.eagerWarned = true
			fmt.Fprintf(os.Stderr, "bcsmpi: rank %d: the eager-matched word of its control page says %d eager sends matched, but the rank posted %d (the word was overwritten): eager_max no longer bounds this rank's unmatched eager sends\n", p.rank, m, p.eagerPosted)
		}
		return 0
	}
	return p.eagerPosted - m
}

// eagerLimit is how many eager sends may be unmatched before a Send waits:
// eager_max, or the job's size if that is larger (see above).
func (p *process) eagerLimit() uint64 {
	return uint64(max(p.region.G.Eager(), int(p.size)))
}

// awaitMatch is the end of an eager Send named call: it returns at once
// while fewer than eagerLimit eager sends are unmatched, and otherwise waits
// (block) until a receive matches one of them, this one included. Inside the
// progress function, which must never block (progress.go), it does not wait.
//
// It counts matches, not what others post meanwhile: it waits until the
// matched word shows enough matches that the sends posted up to its own
// would be below the limit. With threads on (mt.on) it never waits: see
// Back-pressure above.
func (p *process) awaitMatch(call string) {
	limit := p.eagerLimit()
	if inProgressCall || mt.on || p.eagerHeld() < limit {
		return
	}
	need := p.eagerPosted - limit + 1 // matches that bring this rank's sends so far below limit
	// CallSendMatch: the status by which the deadlock detector counts this
	// rank's unmatched eager sends as what it waits for.
	p.blockAs(call, proto.CallSendMatch, func() bool { return p.blk.EagerMatched() >= need })
}

// reapEager consumes the completion records of the eager sends exchanged
// so far. They complete in post order (all posted in one slice complete
// in the same later slice), so it stops at the first still pending.
func (p *process) reapEager() {
	k := 0
	for k < len(p.eager) && p.poll(p.eager[k]) {
		if r := p.eager[k]; r.err != nil { // never expected: see above
			fmt.Fprintf(os.Stderr, "bcsmpi: %v (%s returned at its post, as the message was buffered; reported here, when its exchange completed)\n", r.err, describeRequest(r))
		}
		k++
	}
	if k == 0 {
		return
	}
	n := copy(p.eager, p.eager[k:])
	clear(p.eager[n:])
	p.eager = p.eager[:n]
}

// awaitEager waits until a request slot is free again, when every slot is
// held and some by eager sends: their exchange in the next slice frees
// them. It waits as a blocking call named call does (block): with threads
// on, the call lock released while it sleeps (threads.go); inside a call
// that is blocked already (a chain's next step posted from its condition),
// in that call's blocked state, still serving pull orders and the progress
// function and setting the seen word. Inside the progress function (which
// must never block: progress.go) it does not wait, and the caller's
// newRequest fails as when every slot is the program's (the C library's
// one-sided target then refuses the request it could not take, as it did
// before eager sends when the program held every slot).
func (p *process) awaitEager(call string) {
	if inProgressCall {
		return
	}
	p.block(call, func() bool {
		p.reapEager()
		return len(p.free) > 0 || len(p.eager) == 0
	})
}

// eagerDone reports whether every eager send has been exchanged (Finalize).
func (p *process) eagerDone() bool {
	p.reapEager()
	return len(p.eager) == 0
}
