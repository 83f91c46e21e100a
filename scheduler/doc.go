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
// # Matching rule (docs/design.md §3 rule 4)
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
// Partitioned operations (MPI_Psend_init, MPI_Precv_init) match in a space
// of their own: each start's send and receive carry a pair number
// (proto.Descriptor.Pair, k for the poster's k-th partitioned
// initialization call with that communicator, peer and tag), and "accepts"
// includes equal pair numbers. A plain send (pair 0) never matches a
// partitioned receive, nor a partitioned send a plain receive, probe or
// wildcard; the k-th Psend_init pairs with the peer's k-th Precv_init
// whatever order their starts are posted in (MPI 5.0 §4.2: matching in the
// order of the initialization calls). A partitioned receive names its
// source and tag (CheckDescriptor refuses wildcards there).
//
// Type signatures (sig.go): a matched send and receive whose descriptors
// both carry a checked element type (DType; 0 is unchecked, Uint8 is bytes
// and matches anything) must carry the same one; otherwise both complete
// with proto.ErrType (a buffered inline send has already completed, so only
// its receive does) and nothing moves. Matching itself ignores types: the
// pair is consumed, as MPI's matching rules say.
//
// # Deterministic mode (issue 13)
//
// The rule above is deterministic given the slice each descriptor arrives
// in, but that slice depends on timing (OS noise, start-up, wake-up
// lateness), so a wildcard race can go either way from run to run. With
// Config.Deterministic (bcsrun --deterministic, key deterministic) the
// outcome of every ANY_SOURCE receive and probe, every Iprobe and (with
// package mpiapi) every Test-family call is a function of the program and
// its input alone, whatever the timing, the number of nodes and the slice
// length. The design is dMPI's (../shared/papers/dmpi-determinism.txt)
// fitted to the slices:
//
//   - logical clock: a rank's Seq, the count of descriptors it has posted.
//     Every descriptor already carries it, so no field, no wire or shm
//     change; it is a function of the program as long as every outcome the
//     rank saw before was (induction over the run). MSM knows each rank's
//     clock as the highest Seq exchanged (ranks drain in post order), and
//     every rank's status byte from the DEM: a finalized rank's clock is
//     final (infinite bound).
//   - held entry: an ANY_SOURCE receive or probe, or any Iprobe. It joins
//     the pending queue without matching, and a queue with held entries
//     matches only in resolve (after step 2), in post order: an entry is
//     unsettled while what it gets is not known yet, and a later entry that
//     could take a send an earlier unsettled one may be owed (sources and
//     tags overlap: MPI gives a message to the earliest posted receive that
//     accepts it) waits too; every other entry matches as usual, so a
//     receive for another tag is not held behind a wildcard (holding it
//     could deadlock a program that needs it first). Queues without held
//     entries, and so programs without wildcards or Iprobe, run exactly the
//     rule above: nothing else changes.
//   - answer (keys in (communicator, rank) order): the candidate of a held
//     entry is the accepted unexpected send with the least (Seq, source);
//     for an Iprobe only sends with a Seq below the
//     Iprobe's count (it answers as at its own logical time). The entry is
//     answered once no rank it accepts sends from can still post a send
//     with a smaller key: rank r's future sends have Seq >= last(r)+1, so
//     it must hold (last(r)+1, r) > (Seq, source) for every member r of the
//     communicator. The receiving rank itself is a member (it may send to
//     itself); it is left out when its status shows it blocked in this
//     slice and the previous one with no completion in between (it has not
//     run since, so everything it posted has been exchanged) and the held
//     entry is its only unfinished operation: its next post comes after the
//     answer. An Iprobe never waits for its own rank (its later posts have
//     larger Seqs).
//   - quiescent point (internal/core, with SetView's force): when the
//     previous slice and this one exchanged, moved and completed nothing and
//     no rank can progress (the facts of deadlock detection), the state is
//     the same however the run was timed, so every held entry with a
//     candidate is answered with the least one posted so far and every held
//     Iprobe with what has been posted. This is dMPI's deadlock escape: a
//     wildcard whose potential sender waits (transitively) for the
//     wildcard's own rank. If nothing can be answered, the core releases the
//     ranks waiting in a Test-family call (proto.KindRelease); if there are
//     none either, the job is deadlocked and reported as such.
//
// Why this is deterministic: non-wildcard matching is already (MPI's
// non-overtaking order), collectives are; an answer given before a
// quiescent point is the least key among every send that will ever be
// posted, which no timing changes; and the state at a quiescent point is
// unique, because each rank's progress is a function of the outcomes it
// saw, and those are the same. The tests check it: TestDeterministicRace
// (random slice splits), internal/sim's TestDeterministicModeTiming
// (random descheduling on 32 nodes) and cmd/bcsrun's TestDeterministicRaces
// (real processes with random sleeps, 1 to 3 nodes, 200 µs to 2 ms slices).
//
// The cost falls on the held entries only: a wildcard waits until every
// potential sender's clock has passed the candidate's (a rank computing
// for long delays the wildcard as long), or for a quiescent point (two
// quiet slices). A master-worker farm therefore serves results in order of
// the workers' post counts, not of their arrival. Rejected: Lamport clocks
// (merging the matched send's clock into the receiver's). They would let
// a blocked rank's bound follow the ranks it waits for, but the merge
// must happen at a point of the program, not when a completion happens
// to be read, which needs a new descriptor field, a shm layout change and
// bookkeeping in every Wait; and the order they give (by assignment) is no
// fairer in a task farm. Rejected too: dMPI's fixed delays (a completion
// visible K calls after the post, waiting there if late), which deadlock
// programs that poll with Test while producing what the request needs.
//
// # Chunking rule
//
// Active transfers are served in match order. Each node may copy at most
// BytesPerSliceMax bytes (a pulled chunk, below, counts at the pull rate)
// and ChunksPerSliceMax chunks per slice; a chunk uses
// the budget of its source node and of its destination node (once if they are
// the same). A transfer that gets no budget waits for the next slice, keeping its
// place, so a large message never starves the ones matched before it and never
// overtakes them. A transfer completes in the slice its last chunk moves;
// zero-length transfers complete in the slice they are matched.
//
// Spans (Config.PullBytesPerSlice, SpanSlicesMax; nicthread's doc.go says
// how they are carried): a transfer between two ranks of one node, not
// buffered, with more than BytesPerSliceMax bytes left, whose receiver is
// in a blocking call (its status byte, woken or not, and not marked
// proto.StatusNoPull: the rank serves no pull orders; SpanBlind: whatever
// it is), and which is the first to use its node's budget in the slice,
// gets the rest of its message, up to SpanSlicesMax × PullBytesPerSlice
// bytes, as one chunk with Span = n, the number of slices it may take:
// ceil(bytes ÷ PullBytesPerSlice), at least 2 and at most SpanSlicesMax
// (twice SpanSlicesMax when the node's last judged span kept up, below, and
// no other active transfer uses the node's budget — later transfers between the same two ranks aside, which follow
// it in match order anyway, and transfers that complete in the slice
// without a chunk (their span ends with it) counting as done —, found by
// one pass over the active transfers per slice that records each node's
// earliest transfer and whether another rank pair uses the node: a large message then moves as one copy
// rather than being cut where its receiver stops, sleeps and is woken for
// the next piece; a transfer matched meanwhile waits at most that long) —
// provided the span moves more than n budgets (otherwise chunks move it in
// as many slices and leave the rest of the last one to other transfers, as
// a stream of messages just above the budget needs). The span holds its
// node's whole budget in those n slices (no other chunk of the node is
// scheduled beside it), except that the node's next span may begin in the
// last of them (the agent finishes the ending one first, so the spans of
// a node follow each other without a gap) — unless an older transfer found
// no room on the node's budget earlier in that slice: then no span begins
// there, and the older transfer goes first in the next slice (match order),
// so a stream of spans never overtakes an older transfer. No span is given
// on a node where a ready collective with a member there has bytes to move
// (collectives are chunked after point-to-point: a span would hold the
// budget they wait for for several slices); the transfer completes in the
// last slice if the span carried the rest of it, and goes on with another
// span (in that same slice) or chunks otherwise. Plan.Spanning counts the
// transfers with a span in flight, which internal/core's deadlock
// detection takes as progress. The decision reads only the exchange and the status bytes, so
// every node makes it alike; a job recording or replaying its slice log
// sets SpanBlind, whose plans follow from the exchange alone. A late
// strobe that skips slice numbers ends a span at the first slice after its
// last one (slice numbers are compared, not counted).
//
// Doubling is earned. A span's last slice waits for the receiver's whole
// copy, and the receiver's copy may run at half the rate the plan assumes
// (bench/peers/README.md: 3.1 to 6.3 GB/s against 6 to 7.5), so a span of
// n slices may overrun its last slice by up to about n slices, stalling
// the whole job (and failing it under a small tx_timeout): doubling n
// doubles that worst overrun. So a node's span is doubled only if the
// node's last judged span kept up: the slice after the one it ended in was
// scheduled next, with no slice number skipped (the strobe skips the
// numbers of the slices whose window passed while a slice overran, and
// every node, a replay included, sees the same numbers, so every node
// judges alike). A node's first span is never doubled, and a late one
// stops doubling there until a span keeps up again; a span that begins
// back to back in the last slice of the one before is judged on the span
// before that. A doubled span is thus granted only after a span of at most
// SpanSlicesMax slices overran by less than a slice, and overruns by less
// than about two. Rejected: correcting the plan's rate by the measured
// rate of completed spans (each node measures only its own, and the rate
// would have to travel in the exchange for the plans to agree); letting
// the agent copy the tail in the last slice (the receiver's order covers
// the whole rest, and it would still read the sender's buffer after the
// send completes).
//
// Pulled chunks (Config.PullChunkMin, with PullBytesPerSlice): a chunk
// that the receiving rank will copy itself — within a node, not buffered,
// at least PullChunkMin bytes (nicthread's pull orders take no smaller
// one), to a receiver that would be given a span (spanTo), one of its
// first PullEntriesMax in the slice (a pull order's entries) — costs its
// node's budget BytesPerSliceMax ÷ PullBytesPerSlice of its bytes, rounded
// up, so such chunks move at the span rate, PullBytesPerSlice per slice,
// and not at the budget's. The automatic budget is what one copy moves in
// half a slice, so that the agent's two copies of it fill a slice; the
// receiver's single copy, on its own core, moves twice that, of which
// PullBytesPerSlice (1.5 budgets, configs.SpanRate) asks three quarters.
// A stream of messages too small for spans (bench/bw: 1 MiB, 64 in
// flight) was held at the agent's rate before. Every other chunk
// costs its size. The decision reads the status bytes, as for spans, so
// every node makes it alike; a chunk whose receiver leaves its call before
// TX is copied by the agent, overrunning the slice by about half, as a
// span's share is. Under SpanBlind (a recorded or replayed job) there are
// no pulled chunks: the status bytes are not read there, so the receiver
// may be computing, and the agent would copy every such chunk itself,
// overrunning those slices by about half.
//
// Buffered sends: a send marked Inline (its payload already copied to the
// agent) completes in the slice it is exchanged, whether or not it is matched,
// like an eager send in other MPI implementations; only its receive waits for
// the data. Larger sends complete with their transfer (rendezvous), which MPI
// allows for MPI_Send. A synchronous send (MPI_Ssend) is posted never Inline,
// so it completes only with its transfer, after a receive matched it.
// An Inline send marked Eager (a blocking send that returned at its post,
// package mpiapi's eager.go) is matched and completed like any other, but
// while unmatched it counts as an unfinished operation of its sender for
// deadlock detection (waitfor.go), and as a wait-for edge to its
// destination, when the sender's status byte is proto.CallSendMatch: it
// waits in a later send until one of its eager sends is matched
// (eager_max). A sender that runs, or waits in any other call, does not
// wait for them.
//
// Cancel (cancel.go): a KindCancel descriptor withdraws its rank's own
// receive, or unbuffered send, that is still unmatched after the sends and
// receives of its slice were matched; the target completes with
// ErrCancelled. A matched target, or one posted after the cancel (its
// request slot reused), is left alone.
//
// # Collectives and communicators
//
// A collective call is one KindColl descriptor per member (plus KindCollPart
// descriptors carrying the per-peer blocks of the v-variants), keyed by
// (communicator, per-communicator call number). The scheduler keeps each call
// until every member of the communicator has posted it (docs/design.md: a
// collective runs only when all members have posted it); each member's
// descriptor is compared with the first one when it arrives, and a different
// collective, root, operation, element type or count is an Error naming both
// ranks and their calls, in the MSM of the slice that brought it. Blocks of
// the v-variants are checked pairwise once every member has posted. A
// reduction with a user operation reaches the scheduler as a Gather whose
// descriptor carries the user's call (UserColl) and the operation's number
// (UserOp); both are compared like a predefined operation, and the report
// renders the call the user made ("MPI_Allreduce(user operation 0x3a1f, ...)").
//
// A ready collective becomes one of:
//
//   - nothing to move (Barrier, Free, zero-length): completes at once, so a
//     barrier completes in the slice its last member's descriptor is exchanged;
//   - moves (Gather(v), Scatter(v), Allgatherv, Alltoall(v)): one
//     rank-to-rank block per (source, destination), chunked under the same
//     per-node budgets as messages, after the point-to-point chunks;
//   - a broadcast: per slice one segment of the root's buffer, sent once to
//     each node (into its staging area, when it has several members) and
//     copied there to the node's members in the next stage, so the network
//     carries one copy per node, not one per member; Allgather is one such
//     broadcast per member, segmented together;
//   - a reduction (Reduce, Allreduce, Scan, Exscan, Reduce_scatter): per slice
//     one segment of the vector, as long as every node's remaining budget
//     allows; stage-0 chunks bring each member's segment into slot i of the
//     fold node's staging area (the node hosting most members; the root's node
//     for Reduce); the Fold runs there in slot = communicator rank order; stage-1
//     chunks send slot 0 (or slot i for Scan, i-1 for Exscan, the member's
//     block for Reduce_scatter) to the members — Allreduce's result fanned out
//     once per node like a broadcast, and copied to that node's members in
//     stage 2. The fold order is fixed by
//     communicator rank, so the result is bit-identical whichever slice each
//     member posted in. If no budget is left, a collective waits for the next
//     slice, but a reduction always moves at least one element in a slice that
//     has not moved anything yet.
//
// Every member completes in the slice the collective's last chunk moves.
//
// Why stages instead of the paper's separate barrier/broadcast and reduce
// microphases after point-to-point: a reduction needs its contributions before
// the fold and its results after it, so it needs one wait for data between
// the two; barrier and broadcast need none. Stage 0 therefore carries the
// point-to-point chunks, the broadcast and other moves and the
// contributions together (one wait), the folds are the reduce microphase,
// stage 1 carries the results (a second wait, only in slices that have one)
// and stage 2 the copies within nodes (no wait: nothing crosses the
// network). That keeps an 8-double Allreduce in one slice, like a barrier.
//
// Split (and Dup and Create, which are Splits) is a collective whose result
// the scheduler computes itself: groups by color, ordered by (key, parent
// rank); new communicator ids are handed out in color order from a counter
// every node advances identically, and the member list is written into each
// member's buffer (plan.Plan.Writes). Ids are never reused.
// MPI_Comm_create_group (proto.CollGroup, group.go) is posted by the new
// group's members only: it is gathered outside the parent's collectives,
// keyed by (parent, tag, group hash, the caller's count of such calls),
// checked against the hash once every member has posted, and given the
// next id the same way.
//
// Live communicators are bounded: a rank belongs to at most proto.CommsMax
// (4096, the world included; the reason is at the constant). The scheduler
// keeps no count of its own: each rank counts its communicators in its
// program's order (mpiapi: one more when it posts a creation that gives it
// one, one less when it posts its free, forgets a duplicate it never
// showed the program, or learns that a creation was refused) and carries
// the count, this creation included, in its CollSplit or CollGroup
// descriptor (proto.Descriptor.Lives; 0: not counted). A creation any of
// whose joining members carries more than the bound makes no communicator
// and completes every caller with proto.ErrTooManyComms naming that member
// and its count, so the members agree (mpiapi raises MPI_ERR_OTHER). The
// answer is a function of the descriptors alone, never of the slice in
// which another process's free lands, so a --deterministic run and its
// replay reach it alike.
//
// Communicators are never dropped from the table (ids are never reused):
// MPI lets a receive stay pending across MPI_Comm_free and be matched or
// cancelled afterwards (MPI 5.0 §7.4.3), and a deterministic wildcard
// receive pending on a freed communicator is settled from its members'
// clocks like any other. An entry (commInfo) holds the communicator's
// member list and its world-sized index, 4 bytes per member and per world
// rank, except a duplicate's (Comm_dup, Comm_idup), which shares its
// parent's: 200,000 Comm_dup/Comm_free pairs of the world grow the heap by
// about 88 bytes each, 17 MiB, on 2 ranks as on 64 (TestCommTableGrowth,
// go test -v -run TestCommTableGrowth ./scheduler/). A Split's or a
// group's entry keeps its lists (its members, 4 bytes each, plus 4 bytes
// per world rank).
//
// # Local duplicates
//
// A communicator made through the runtime costs its callers two slices
// under the default restart policy (posted during slice k-1, made in slice
// k's MSM, the callers woken at the strobe of k+1), so MPICH's comm/ctxalloc
// (200,000 MPI_Comm_dup and as many frees on 2 ranks) ran past its 60 s
// timeout at 500 µs slices. Duplicates therefore need no runtime most of
// the time:
//
//  1. A blocking Comm_dup asks for a grant (proto.Descriptor.DupGrant). When
//     every member of the parent asked, and the Split makes a duplicate
//     (one group, the parent's members in the parent's order), the
//     scheduler hands out the new id as before and reserves the next n ids
//     (dupRange) for the parent's next n duplicates; every member's
//     completion carries n (proto.Completion.NewCommDups).
//  2. n is dupGrantFirst (4) for a communicator's first grant and doubles
//     with each next one, up to dupGrantMax (1024): a communicator
//     duplicated once wastes 4 ids (ids are 32 bits and never reused), one
//     duplicated 200,000 times goes through the runtime about 200 times.
//     n never takes the member whose descriptor carries the most live
//     communicators (Lives) past proto.CommsMax.
//  3. The members (mpiapi, "Local duplicates") then make the parent's next
//     n duplicates, Comm_dup or Comm_idup, without posting anything: the
//     k-th takes the k-th reserved id. Creations on a communicator are
//     collective and ordered, and the grant reaches every member in the
//     same place of its program (the blocking Dup that asked), so every
//     member gives the same duplicate the same id.
//  4. The scheduler makes a reserved id's entry the first time a
//     descriptor names it (comm): it shares its parent's lists like any
//     duplicate's. An id nobody reserved is still "does not exist".
//
// The answer depends on the descriptors alone (the Lives and the grants of
// earlier duplicates), so a --deterministic run and its replay reach the
// same ids (the recording's format version is 6 since). What it costs:
// a local duplicate is never refused, so a rank that makes communicators
// in other ways between a grant and its use can pass proto.CommsMax by at
// most the grant's remainder; its next creation through the runtime is
// then refused on every member, as before. A member calling Dup while
// another calls a different collective on the parent is no longer a
// mismatch reported at the Dup (the Dup posts nothing). EMDS's NCOLLDEM
// and NCOLLMSM count the duplicates made through the runtime only.
//
// A member that makes one duplicate of the parent fewer or more than the
// others (an erroneous program: a Dup in a rank-dependent branch, or an
// invalid parent handle on one rank alone, which fails before any
// duplicate) would from then on give its k-th duplicate the id of the
// others' (k+1)-th or (k-1)-th, and messages on two different
// communicators of the program would match each other with no report.
// Two things keep that from passing silently: the C layer takes the
// duplicate even when a Dup fails on an argument of one rank alone (a
// freed info, a NULL newcomm or request: cabi comm.go dupArgs,
// TestCommDupBadArg), and a local duplicate counts as a collective call on
// the parent (mpiapi dupFromGrant advances its CollSeq, as a Dup through
// the runtime does), so the skewed member's next collective on the parent
// carries another CollSeq than the others': it matches none of theirs,
// and the job is reported, as a deadlock naming both call numbers or as a
// collective mismatch (TestCommDupSkipped). What remains: between the skew
// and the parent's next collective, point-to-point traffic on the
// duplicates made meanwhile can cross unreported (a program that, after
// the skew, makes duplicates and only sends and receives on them, with no
// collective on the parent, is not caught by this). Carrying the parent's count of local duplicates in every
// descriptor would close that, but no descriptor field is free.
//
// Designs weighed: (a) ids derived from the parent's id and its count of
// creations by hashing would collide in 32 bits among the never-reused ids
// of a long run, and a collision crosses messages silently; reserving ids
// from the counter every node advances identically cannot collide. (b)
// Completing a creation in fewer slices: the scheduler already makes it in
// the slice that exchanges its last member's descriptor; the second slice
// is the restart policy's (--restart early makes it about one), so a
// Split, which needs every member's color and key, stays at that cost:
// MPICH's comm/ctxsplit (100,000 splits on 4 ranks) needs about 2 slices
// each, over a minute at 500 µs. (c) A local MPI_Comm_free: Free already
// costs its caller no slice (its CollFree completes in the background,
// mpiapi), and keeping it a collective keeps its mismatch report and lets
// Finalize wait for every member's free.
//
// # Output and importers
//
// Schedule returns a *plan.Plan (package internal/plan): the type is not
// this package's, so that internal/core, the only package allowed to import
// this one (docs/design.md §4, checked by layers_test.go), can hand it out
// as core.Plan. Drivers (nicthread, internal/sim, internal/launch) and
// configs reach the scheduler's configuration, counters and descriptor
// checks through internal/core too (core.SchedConfig, core.DetStats,
// core.CheckDescriptor).
//
// The Scheduler is a plain value: no clock, no goroutines, no I/O. It is not safe
// for concurrent use. It reuses its internal storage — a finished
// collective's bookkeeping goes to a free list for the next one — so Schedule
// does not allocate in steady state, for point-to-point traffic or for
// collectives (TestCollectivesDoNotAllocate; BenchmarkSchedule and
// BenchmarkAllreduce report 0 allocs/op). What does allocate: a Split's
// result (the new group and the bytes written to its members), a new
// communicator, a mismatch report, and storage growing the first time a slice
// needs more of it than any before.
package scheduler
