package mpiapi

import (
	"fmt"
	"os"
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
//   - the MMDS records the Send's real duration (the post), the deadlock
//     detector never sees the rank blocked in it (the scheduler never
//     counted a buffered send as unfinished either), and the deterministic
//     and record/replay modes are unaffected: sends are not logged events,
//     and what the scheduler matches does not depend on when the sender
//     returns.
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
