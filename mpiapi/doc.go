// Package mpiapi is the MPI interface that rank processes call. It posts
// descriptors into the node's shared-memory ring and waits on completion
// records the agent writes. It moves message data itself in one case only:
// while a rank is in a blocking call the agent may hand it a pull order for
// large messages within the node, and the rank copies each entry with one
// process_vm_readv from the sender into its own pending receive buffer
// (after checking the entry against that buffer; see package nicthread).
//
// Blocking calls follow the BCS-MPI model (paper §2.1): an operation posted
// during slice k is exchanged and moved in slice k+1 and, under the default
// restart policy, the caller wakes at the strobe of slice k+2. Waiting spins
// briefly on the completion record (spin, BCS_SPIN_NS: 20µs by default, 0
// under restart "slice" when the launcher finds the job's ranks and the strobe
// thread outnumber the CPUs, where a spin only takes the CPU from a rank that
// computes: the completion comes at a strobe at least a slice after the post,
// so sleeping at once costs a futex wake-up, not a slice), then sleeps on the
// rank's futex word, which
// the agent bumps when it publishes completions (or posts a pull order), so
// blocked ranks use no CPU. At MPI_Init a rank lets its launcher's
// descendants (its sibling ranks) read its memory (PR_SET_PTRACER), for pull
// orders on hosts where Yama would refuse them.
//
// Probe and Iprobe are answered by the scheduler: Iprobe posts a query and
// returns the answer of the next slice (so it takes about 1.5 slices, like any
// blocking call), which keeps wildcard resolution deterministic.
//
// Eager sends (eager.go): a blocking standard send (Send; the C library's
// MPI_Send and MPI_Rsend) of at most inline_max bytes, whose payload is
// copied with its descriptor, returns as soon as it is posted, like an
// Isend whose request is freed at once; Finalize waits until such sends
// have been exchanged. At most max(eager_max, the job's size) of a rank's
// eager sends may be unmatched at once: past that, a Send waits until a
// receive matches it or an earlier one (back-pressure; eager.go says why
// per rank and why this default, 1024).
//
// Send modes and withdrawal: Ssend and Issend (ssend.go) are never buffered
// by the agent, so they complete only once matched; Request.Cancel
// (cancel.go, MPI_Cancel) withdraws an unmatched receive or unbuffered send
// in the next slice, and Status.Cancelled tells; Mprobe and Improbe
// (mprobe.go) claim the message they find for a later Mrecv or Imrecv.
//
// Deterministic mode (determ.go; bcsrun --deterministic): the scheduler
// answers ANY_SOURCE receives and probes and every Iprobe by logical time
// (scheduler/doc.go), and the Test family (Test, Testany, Testall,
// Testsome, and Waitany and Waitsome after their first completion) settles
// before it answers: it waits until every request it was given has
// completed or the runtime releases it at a quiescent point, so what it
// returns does not depend on timing. Nothing else changes.
//
// Buffers are typed slices of the Numeric types ([]byte included) or of
// ValIdx value–index pairs (the Elem constraint). A buffer
// given to a non-blocking call is referenced by its Request until completion
// (which also keeps the Go garbage collector from freeing it) and must not be
// touched until then, as in MPI.
//
// The byte-level core (core.go): every call that moves data is written
// once, on bytes. Its entry points are the XBytes functions (SendBytes,
// RecvBytes, BcastBytes, ReduceBytes, AlltoallvBytes, ... one per generic
// call, blocking and non-blocking, and NewOpBytes for user operations):
// each takes the generic call's arguments with every []T replaced by a
// []byte and the element type t (an internal/reduce.Type code) after the
// last buffer (Sendrecv: after each buffer); counts and displacements stay
// in elements. The core holds every argument check and its message, the
// MMDS record, the MPI_IN_PLACE and overlap rules, the buffer checks and
// the chained requests of user operations. The generic functions are thin
// wrappers (their slice's bytes and T's code), and the C library (package
// cabi) calls the XBytes functions directly, so a Go and a C program get
// the same checks and the same messages. The core adds one check the
// generic API cannot fail: t must be a runtime element type (MPI_ERR_TYPE)
// and each buffer a whole number of its elements (MPI_ERR_COUNT). A user
// operation is a function on bytes (in, inout aligned for t) tied to its
// element type by code: NewOp[T] wraps its func(in, inout []T), and a
// reduction of elements of another code is MPI_ERR_OP (Go types with one
// code are one element type: int and int64 on a 64-bit machine, a named
// type and its underlying type).
//
// Partitioned communication (C's MPI_Psend_init and MPI_Precv_init) moves
// each start's buffer with PsendBytes and PrecvBytes: a send and a receive
// in a matching space of their own, paired by a number the caller gives (its
// count of partitioned initializations with that communicator, peer and
// tag), so the k-th partitioned send of an envelope matches the peer's k-th
// partitioned receive and nothing else (scheduler/doc.go). They have no Go
// generic form.
//
// Collectives (coll.go) are executed by the runtime: each call posts one
// descriptor, and the scheduler runs it in the slice its last member's
// descriptor is exchanged, reducing in communicator rank order, so results are
// bit-identical from run to run. Predefined operations run in the agents; user
// operations (NewOp) cannot, so reductions with them are composed from
// runtime Gather/Bcast/Scatter and folded in a rank process (for the
// non-blocking forms, when the request is polled by Wait or Test). Collective buffers may also hold ValIdx pairs
// (MINLOC/MAXLOC). A mismatched collective aborts the job with a report naming
// the ranks and their calls, whatever the error handler: it is found by the
// runtime, not by the calling rank.
//
// Communicators (comm.go): Dup, Idup (nonblocking: the communicator is
// Request.Comm once the request completes; Request.Discard leaves one
// the caller will not use to complete in the background), Split, Create
// (from a Group; members may pass disjoint groups), CreateGroup
// (group.go: collective over the group's members only), CreateFromGroup
// (no parent: sessions), Free, Compare, and the group operations. Most
// Dups and Idups post nothing: they take an id the runtime granted with
// an earlier Dup of the same communicator (comm.go, "Local duplicates";
// scheduler/doc.go).
// Point-to-point ranks are communicator ranks; the API translates them to
// world ranks in descriptors and back in statuses.
//
// Attachment (Init): a rank attaches once, from the process bcsrun started
// for it (or one that process started before the rank's own Init): Init
// claims the block's attach word with its pid and makes the region's
// descriptor close-on-exec as soon as it is mapped, so a program a rank
// executes neither holds the region nor can join the job as the rank; a
// second Init for a rank is refused naming the rank and the holder.
//
// Requests (request.go) follow MPI 4.1 §3.7. Each non-blocking call makes a
// new handle with a generation (the process's n-th request); it holds one of
// the rank's completion slots while the runtime works on it, but the slot is
// reused, never the handle. The call that completes a request — Wait, a
// successful Test, the any/some/all families — retires its generation, and a
// retired (stale) handle passed to any request call is MPI_ERR_REQUEST through
// the error handler. nil is MPI_REQUEST_NULL: Wait and Test return an empty
// status, the array calls ignore it and set the entries they complete to nil,
// and an array with no active request gives Undefined (MPI_UNDEFINED).
// Request.Free is MPI_Request_free (not for collectives).
//
// Finalize (leak.go) hands bcsrun what the rank has not released — user
// operations, communicators, requests never completed or never waited for —
// and bcsrun prints it with the messages sent but never received in one
// report at the end of the job: a warning, or an error under leak_check: error.
//
// A reduction with a user operation marks its runtime Gather with the
// operation's identity (a hash of its name, element type and commutativity)
// and the call made, so MSM reports members passing different user
// operations as a collective mismatch.
//
// Checks (check.go): under BCS_CHECK=buffers (or buffers:warn) every
// request records the CRC-32 sums of its buffers in 4 KiB blocks at post
// and enters their ranges into the rank's interval set (package
// internal/check). An overlap with another active request's buffer, where
// one of the two is written, is reported at the post; a send buffer is
// compared at completion (and by the agent as it reads it, through the
// check header the completion record names); a receive buffer is compared
// just before the runtime writes each chunk (by the agent, or by this rank
// when it serves a pull order) and past the delivered bytes at completion.
// A nonblocking collective's written buffer (its receive buffer, a
// broadcast's away from the root) gets a check header too, and the agent
// compares it before writing each chunk, as a receive's (the blocks wholly
// inside the chunk; see package nicthread); its send buffer is compared at
// completion only. A blocking collective's receive buffer is not summed:
// the program is inside the call while the runtime writes it. Reads of a
// receive buffer before completion are not detected (see package
// internal/check, "Not detected").
// The rank sums in pieces of check.PieceSize and serves pull orders between
// pieces (at post it offers them while it sums), so the checks do not keep
// it from taking its orders; a pull order it serves is compared, copied and
// summed piece by piece while the piece is in the cache. A finding is an
// MPI_ERR_BUFFER error from the call that completes or posts the request,
// through the error handler (a warning under buffers:warn).
// With no check selected the hooks are one nil test each.
//
// Record and replay (replay.go; bcsrun --record DIR, --replay DIR; the log is
// package internal/replay's): in a recorded job the rank numbers its calls
// whose outcome depends on timing — receives and probes with a wildcard,
// every Iprobe, the test family over active requests — and appends each
// outcome to a log ring its agent drains. In a replayed job it reads its
// recording at MPI_Init, posts each wildcard receive or probe for the
// recorded source and tag, answers Iprobe and the test family from the log
// (waiting where the recorded answer says a request had completed), and
// stops with a message naming the rank and the call at the first call that
// cannot get its recorded answer. A replaying rank whose SIGTERM action is
// the default holds bcsrun's SIGTERM of an abort for up to a second, to
// report a call that waits for a recorded message, then ends as the
// default action would; a program that ignores or handles SIGTERM itself
// (before MPI_Init) keeps its own action.
//
// Type signatures (sig.go): a send or receive carries its slice's element
// type; a receive matched with a send of another element type fails with
// MPI_ERR_TYPE on both sides (a buffered small send has completed already:
// only the receive), naming both types, even where the byte lengths agree.
// []byte is bytes and matches anything. SetSignatures lets a layer whose
// buffers are bytes (package cabi) give its next send and receive a type.
//
// Handles (communicators, requests) are small values so that a C layer can
// index them later.
//
// Errors: every failing call returns an *Error carrying its MPI error class,
// the rank, the call and a message naming the bad value and what would be
// valid. Test the class with errors.Is(err, mpiapi.ErrTruncate) (a Class is
// an error); errors.As finds the *Error under wrapping. Building an error
// (newError) is separate from applying the error handler (handle): under
// ErrorsAreFatal handle prints the error and ends the process, which the
// launcher reports as the job's failure.
//
// Nothing in this package is safe for concurrent use from several
// goroutines. Calls may come from any goroutine or OS thread, one at a time,
// each finishing before the next starts (MPI_THREAD_SERIALIZED): nothing
// here depends on the calling thread (no thread-locals, no locked OS
// threads; a blocked call sleeps on a futex in shared memory, which any
// thread may wait on, and serves pull orders with process_vm_readv, which
// names the process). The caller orders the calls (a mutex, a channel), which
// also makes this package's state visible to the next caller. A layer that
// lets its callers' calls overlap (the C ABI under MPI_THREAD_MULTIPLE)
// holds its own call lock around each call and gives this package a way to
// release it while a blocked call sleeps (SetThreaded, threads.go): then
// several calls may be blocked at once, each waiting without the lock.
package mpiapi
