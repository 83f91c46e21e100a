// Package nicthread is the real-time part of bcsmpi: the per-node agent (the
// paper's NIC thread) and the master's strobe driver. Both are thin drivers
// around the pure state machines of strobe, scheduler and internal/core: they
// read the clock, sleep, touch shared memory, move bytes and talk over the
// transport, and leave every protocol decision to the pure code. The
// scheduler is reached through the core only (core.Plan, core.SchedConfig,
// core.CheckDescriptor; docs/design.md §4): this package does not import it.
//
// # Agent
//
// Each slice k the agent:
//
//  1. DEM: publishes the completions the restart policy releases now (writes
//     completion records, bumps each woken rank's futex word), stores k in the
//     region header, and drains every rank's ring up to the first descriptor
//     posted in slice k (rule 1). Inline send payloads are copied out of the
//     ring into agent memory. The drained descriptors are its DEM batch, sent
//     with one status byte per local rank (rankStatus: running, blocked in a
//     call, woken — blocked but with a completion newer than the last one it
//     looked at —, starting — no MPI state yet and its process, as far as the
//     launcher has said through RankExited, alive —, finalized, or exited
//     without MPI), from which internal/core judges deadlocks.
//
//  2. MSM: takes every node's batch (node order) and runs core.MSM; every node
//     computes the same plan.
//
//  3. TX: moves the chunks of the plan it is the source of: within the node,
//     large point-to-point chunks as pull orders to their receiving ranks (see
//     below), the rest by process_vm_readv from the sender into a bounce
//     buffer and process_vm_writev into the receiver (or straight from the
//     inline copy for small messages); to other nodes as data frames, which
//     the receiving agent's reader goroutine writes into the receiver. It
//     waits until every chunk the plan sends to it has arrived and every pull
//     order is served, so the network is empty at the end of every slice
//     (rule 3) — except a span's order (below), which is waited for at the
//     end of the span's last slice.
//
//     Collectives add a second stage (see package scheduler): stage 0 also
//     carries collective moves and each reduction member's segment into the
//     fold node's staging area (a local member's segment is read straight
//     into it); after the stage-0 wait the agent runs the plan's Folds for its
//     node (internal/reduce, slot order = communicator rank order), then sends
//     the stage-1 results from the staging area and waits for the stage-1
//     chunks sent to it; stage 2 copies what arrived in its staging area to
//     its members (broadcasts use stage 1 the same way). Member lists of new communicators (Plan.Writes) are
//     written last, before the slice's completions are published.
//
// # A silent peer
//
// Across hosts (AgentConfig.PeerTimeout: the launcher across hosts sets it
// to node_timeout) a link between two agents can be cut, or the network
// partitioned between them, while both still answer the master: the master
// would see nothing wrong, and TCP gives up on a connection only after many
// minutes. So the TX wait keeps, per node, the chunks of the slice it still
// owes this node and when its last data frame came; a node that owes chunks
// and has sent nothing for PeerTimeout (counted from the start of the wait
// at the earliest) fails the slice, and the error (this node's, reported to
// the master like any other) names both nodes, their hosts (AgentConfig.Hosts)
// and node_timeout. A node that keeps sending, however slowly, is not silent
// (AgentConfig.Quiet: any bytes read from it on the mesh count, so a frame
// still arriving, or one delayed behind its other frames on that
// connection, is progress; a node busy sending to others for node_timeout
// before it starts on this one is not told apart from a silent one):
// only tx_timeout bounds the whole wait. The sending side is bounded too:
// the launcher gives the agent's mesh a send timeout of node_timeout per
// piece (transport.Mesh.SetSendTimeout), and a data frame that a node took
// none of for that long fails the slice with the same naming. A node that
// waits in a later stage for a node that is itself waiting on a silent one
// may report first and name its nearer neighbour; the silent one's own
// neighbours report it too. The master's wait for a node's TX report is
// node_timeout + tx_timeout (a transmission may legitimately take that
// long); for a node cut off meanwhile, the launcher across hosts has the
// master's mesh probe each agent's connection
// (transport.Mesh.SetDirectKeepAlive), and a connection the kernel ended
// is reported as the node's host answering nothing for node_timeout (at
// least about 2 s: keepalive counts whole seconds). On one machine (the
// local launcher) the bounds are not set: the agents share bcsrun's
// process, and a stall of bcsrun is explained by the launcher's stall
// watch instead.
//
// # Pull orders: a large message crosses memory once
//
// No system call copies between two other processes: the agent's
// process_vm_readv and process_vm_writev always copy to or from its own
// memory, so an agent-mediated copy within the node is two copies (sender →
// bounce buffer → receiver), measured at under half the rate of one
// process_vm_readv of the same size (BenchmarkCopy in internal/unix: 16 MiB
// at about 4 GB/s staged against 10 GB/s direct on the 2-core development
// host). One copy needs one of the two ranks to make the call. The receiver
// is the one to ask: the destination is its own memory, which it can check,
// and a blocked receiver has nothing else to do. So, for every
// point-to-point chunk of at least pullMin (256 KiB) between two ranks of the
// node, TX gathers a pull order per receiving rank (up to shm.PullMax
// entries: sender pid, addresses, length, receive request slot) and posts it
// to each rank that is in a blocking call (the rank offers while it is
// blocked, and only then), waking it. The rank copies each entry with a
// single process_vm_readv from the sender straight into its receive buffer,
// after checking that the entry lies inside the buffer of the pending
// receive it names (the order is shared memory that any rank can write).
// Meanwhile the agent does the slice's other copies; then it gives each
// rank until pullGrace (200 µs) after posting to take its order, revokes
// orders not taken by then and copies them itself, and waits for the taken
// ones. A rank that leaves an order unfinished (a refused entry, a copy the
// kernel refused) has the rest copied by the agent and gets no more orders.
// The receivers of a node copy in parallel, on their own cores. The
// scheduler counts such chunks on the node's budget at the span rate
// (scheduler doc.go, "Pulled chunks"; the same pullMin, shm.PullMin), so a
// slice may hand a blocked receiver 1.5 budgets of them: its one copy
// takes about three quarters of the slice where the agent's two would
// take one and a half. An order not taken within the grace period is
// copied by the agent as before, and then overruns the slice by about
// half.
//
// Permissions: reading a sibling's memory needs ptrace access. Ranks are
// siblings under bcsrun, which Yama's ptrace_scope 1 refuses unless the
// sender allows it, so each rank names its parent (the launcher, and so its
// descendants: the other ranks) with PR_SET_PTRACER at MPI_Init. Where the
// copy is refused anyway (ptrace_scope 2, a rank started through a wrapper
// process) the first order ends unfinished and the agent goes on copying.
//
// Designs not taken: (a) copying in cache-sized blocks through the bounce
// buffer, which keeps the second copy in cache, measured slower, not faster:
// each process_vm call pins pages and checks access, and 256 small calls
// cost more than the cache saves (BenchmarkCopy, staged/block=65536); (b) the
// sender writing into the receiver with process_vm_writev (the same single
// copy, but the sender would write into memory it cannot check); (c) a copy
// thread in every rank, always ready (a thread per rank that competes with
// the rank's computation, and wakes on a loaded core no faster than the rank
// itself); (d) several copy threads in the agent (still two copies each). A
// rank that is computing, or slow to run on a loaded host, costs at most the
// grace period: the agent then copies as before.
//
// # Spans: one copy across slices
//
// A pull order copies within a slice, so a message larger than the budget
// moves as one chunk per slice: the copy stops at every slice boundary (the
// exchange, the scheduling and the receiver's wake-up sit between two
// chunks), and the budget, sized so that a chunk fits half a slice, caps the
// bandwidth at budget ÷ slice, whatever the copy could do (bench/bw: 0.25 to
// 0.31 of a memcpy on the 2-core host at about 3 MiB). A span lifts both:
// the scheduler (its doc.go, "Spans") gives a transfer between two ranks of
// the node whose receiver is in a blocking call the rest of the message,
// up to span_slices_max slices' worth (twice that when no other transfer
// uses the node's budget and the node's last span kept up: scheduler
// doc.go, "Doubling is earned") at 1.5 times the budget per slice, as
// one chunk marked with the number of slices n it may take, holds the
// node's budget for those n slices, and completes the transfer in the last
// of them — a fixed slice, so every node computes the same plan and the
// completion does not depend on when the copy ends. The agent (span.go)
// posts the chunk as a one-entry pull order and does not wait for it: the
// receiver copies it with one process_vm_readv across the slice boundaries,
// and the agent waits only in the span's last slice (or the first slice
// after it, when a late strobe skipped its number). The node's next span
// may begin in that slice: the agent waits for the ending one before it
// posts the next, so a stream of large messages is copied back to back. The
// order's protocol is unchanged (offer, post, take, finish; the grace
// period and revocation; the receiver checks the entry against its pending
// receive), so mpiapi is unchanged.
//
// When the receiver does not take the order (it is not offering, it left
// its call, or it was slow beyond the grace period) the agent copies the slice's share itself — what is left divided
// by the slices left, two copies through its bounce buffer — and posts the
// rest again in the next slice, where the receiver may now take it. A
// share is about 1.5 budgets, which two copies fit in about one slice, so
// a span the agent carries alone overruns its slices by about half; that
// is why the scheduler gives spans only to receivers in a blocking call,
// which take them. Before the gang stops the job's ranks (Gate), a
// receiver copying a span may finish (a stopped rank could not), for as
// long as its copy should still take at two budgets per measured slice,
// plus a slice, at most 4 slices: Gate runs on the strobe's goroutine,
// which a gang shares with all its jobs. A copy not done by then is taken
// over: the agent copies the whole rest of the span itself in the slices
// the job does not run and no longer waits for the order
// (PullStats.Stopped); the receiver, continued, finishes its copy of the
// same bytes from the send buffer before it can see its receive complete,
// and its late result is not read (under flow alone it is compared). The
// send buffer stays unchanged meanwhile because the sender's completions
// are held back until the order's done word shows that copy ended
// (span.go, holdBack), then published with the next publish (a DEM or the
// end of a TX): the span completes in its last slice, maybe with the job
// still stopped, and a sender that saw it could rewrite its buffer under
// the continued receiver's copy. The receiver is posted no other order
// until then, so the word is read before a later order's replaces it. A
// receiver whose process exits releases them (its job fails); one never
// continued belongs to a job that stays stopped. The job's data keep moving while it is
// stopped. A job stopped from outside (Ctrl-Z, SIGSTOP) stops the agent
// with its ranks: the wait in the span's last slice does not count a gap
// in which the agent did not run toward tx_timeout, and reads the order
// once more before it fails the job. In a job that records or replays its
// slice log the scheduler gives spans whatever the ranks' status (the log does not hold
// it), so the plans follow from the exchange and replay as recorded; the
// agent copies there when the receiver is not blocked. Under the buffer
// checks there are no spans: they compare a receive buffer before each
// write within its slice (flow.go), and such a job keeps the per-slice
// chunks (NewAgent drops spans whatever its configuration says: the mode
// is the job's, so every node drops them alike). Under the flow check
// alone spans stay: the receiver sums the span as it copies it, the agent
// counts the entry once when the span starts, checks the shares it copies
// itself as it copies them (each piece must move once), compares the
// receiver's sum with the source's, combined from the sender's block sums,
// once the order is done (flow.go, flowSpan), and, when the span ends,
// that its shares and the order cover the chunk exactly (spanEnd); a
// pulled chunk the agent copies in pieces counts each piece apart
// (movePieces). A rank that serves no pull orders gets no
// span: one that left an order unfinished (a wrapper process, a refused
// copy), and every rank of a host whose Yama setting refuses sibling reads
// outright (ptrace_scope 3, or 2 without root; unix.SiblingReadsRefused,
// read by each node's agent at NewAgent, so a remote host stricter than the
// launching one counts). The agent marks such a rank's status byte with
// proto.StatusNoPull, which the DEM carries to every node, and every
// node's scheduler then gives it chunks (the decision stays identical on
// all nodes; a span already in flight when an order fails is finished by
// the agent). Where the launching host itself refuses sibling reads the
// launcher turns spans off for the whole job.
//
// What a span keeps of the slice model: the exchange, scheduling and
// completions stay per slice and identical on every node; a span holds its
// node's budget for its slices, so nothing else of the node moves beside it
// (as when one transfer took the whole budget slice after slice); deadlock
// detection counts a span in flight as progress (plan.Spanning); the
// slice stats count the span's bytes in the slice it starts (Bytes), the
// agent's waits for it and its shares as intra-node copies (EMDS LTR2),
// and bcsrun -v the spans carried. What it
// gives up: within a node the network is not empty at the end of a slice
// while a span is in flight, and its completion still waits for the span's
// last slice even when the copy ended earlier.
//
// Designs not taken: (a) completing a span when its copy ends, reported
// through the next exchange (an agent-made descriptor): faster, but the
// completion's slice would depend on timing, which the slice log would have
// to record apart from the ranks' descriptors, and it changes the wire
// vocabulary; the next step if spans are not enough. It gains only where
// the copy ends a slice or more before the span's last slice (the
// exchange that reports it is the next slice's), which on the 2-core
// development host it does not: there the receiver's process_vm_readv is
// slower than the plan's 1.5 budgets per slice (bench/peers/README.md,
// "Where the time goes"). (b) Spans with the
// same bytes per slice as the budget: the same completions as chunks, so
// no gain. (c) A span whatever the receiver's status outside record and
// replay: a receiver computing for the span's length leaves the agent to
// copy it, overrunning every slice of it. (d) The sender copying half
// (process_vm_writev into the receiver), not built: it would write into
// memory it cannot check, and a second copier pays only where one copy
// leaves memory bandwidth unused, which the loaded 2-core development host
// cannot measure.
//
// # What ranks write is input
//
// A rank can write every byte of its node's region, so the agent relies only
// on its own tables (validate.go): the world rank of each block (assigned
// here, never read back), the process the launcher started for it (Spawned)
// and the process that attached (checked to be that one or a descendant, then
// latched: process_vm copies use it, never the pid word), and each rank's last
// sequence number, post slice and state. Every control-page field (world
// rank, state, blocked, pid) and every drained descriptor field (rank, req <
// requests_max, seq, post slice, addr+len, inline kind and length, and the
// scheduler's per-kind checks of peers, tags, types and operations) is
// checked before it reaches the scheduler or a completion record; a
// violation is a *JobError naming the block's true rank and the field, which
// aborts the job. Of a pull order the agent reads back only the done word and
// the count of entries copied, checked against the order it posted; a rank
// that never serves a taken order fails the job after the TX timeout. Nothing is drained from a block before its process is
// verified. FuzzDrain feeds random control pages and rings through drain,
// MSM, TX and publish.
//
// # Checks
//
// Under BCS_CHECK (AgentConfig.Check; flow.go) the agent verifies its own
// deliveries (flow: every chunk summed at its source and read back at its
// destination, data frames carrying the source's sum in Count, pull orders
// summed by the receiving rank; every plan entry moved once from its source
// and arrived once at its destination; a violation is a *JobError naming
// the slice, the plan entry and the nodes), and helps the ranks' buffer
// checks: before writing a point-to-point chunk it compares the receive
// buffer's blocks with their sums at post (for a collective's chunk, the
// blocks wholly inside the chunk of the written buffer of the rank's active
// collective that contains it, found among the collectives drained and not
// yet completed: chunks of a collective land in any order and from several
// goroutines, so a block two chunks share is not compared), and after reading a send buffer
// it compares the bytes read, recording findings in the completion record
// (internal/shm, check words). With a check on, a chunk is moved in pieces
// of check.PieceSize (moveChecked, arriveChecked): each piece is read,
// summed, compared, written and read back while it is in the cache, so the
// checks add passes over cached bytes rather than over memory; under
// buffers,flow the comparison with the post and the source sum are one pass
// (the chunk's sum is combined from the block sums, check.Combine). For a
// pull order the source sum is combined from the send buffer's block sums
// (taken at post under buffers, right after the post under flow alone for
// a send of at least check.FlowSumMin bytes within the node), and the agent
// reads only the partial blocks at the chunk's ends and any blocks the
// sender has not summed yet (postSource), not the whole chunk; the sender
// is read again only when the rank's sum differs, to tell the program's
// modification (recorded for the sender) from a runtime bug. Under flow
// alone the receiving rank sums each piece as it copies it and stores the
// sums after reporting the order done, and the agent compares at its next
// TX if the sums are stored, else when the rank takes its next order
// (verifyPulls, verifyPull; the rank's MPI_Finalize waits for that
// comparison); a span's order likewise (flowSpan): internal/check doc.go,
// Passes, says what that takes off the slice's critical path. The sums are
// read from the rank's memory through a header whose address the rank
// wrote: input, used only to read that rank's own memory. Off, each hook is
// a nil test. copyFault is the tests' fault injector in the copy path
// (called with a chunk's first piece).
//
// # Recorded jobs
//
// In a recorded job (bcsrun --record; OnLog set, the region has log rings)
// the agent also drains each attached rank's replay log ring at every strobe
// and once more after the job (DrainLogs), decodes every record with
// replay.Decoder — whole records, known ops and calls, runs of at least one,
// sources below the job's size, indices inside their arrays, no call
// numbers that wrap, nothing after END — and only then hands the drained
// bytes to OnLog (validate.go: drainLog). A refused record fails the job like
// any other violation, and nothing of that drain is written.
//
// With the slice log (Level B, package internal/replay) node 0's agent hands
// every slice's exchange and plan to OnExchange after MSM (the recording
// encodes counts and hashes in memory; no I/O in the slice). Replaying it
// (AgentConfig.Slices, levelb.go) the agents run the recorded slices as
// virtual slices: a real slice runs virtual slice v only when every rank
// has contributed its recorded count, all nodes deciding alike from the
// exchange; the core, the scheduler and the data frames see virtual slice
// numbers, and each slice's descriptors and plan are checked against the
// recorded hashes.
//
// # Master
//
// RunMaster strobes on the absolute schedule of strobe.Master
// (clock_nanosleep to TIMER_ABSTIME, then a spin sized by strobe.SpinEstimator
// to the host's observed wake-up lateness, at most MasterConfig.Spin) and
// drives the nodes through the microphases. The spin is CPU taken from a
// rank whenever the ranks and the strobe thread outnumber the CPUs, so the
// launcher passes Spin 0 there unless the user set strobe_spin
// (configs.Config.ForHost): the strobe is then as late as the sleep wakes,
// which MasterStats.Late and LateMax sum up (bcsrun -v prints them;
// bench/idlecpu.sh measures the CPU per slice of each runtime thread before
// and after). With one node it runs on a locked OS thread with
// SCHED_FIFO when permitted (reset on fork, and before the thread is unlocked)
// and calls the agent directly: no transport, no goroutine hand-off. With
// several nodes it talks to them over transport.Mesh, reading their control
// frames itself, and stays an ordinary goroutine (see RunMaster for the
// measurement behind that choice). Each agent's AgentEndpoint sends and reads
// through a transport.Link, the node's *transport.Mesh in production: the
// endpoint has no fault logic of its own (tests wrap the link, see
// transport/transporttest). Agents connect to each other lazily: in MSM the
// agent names each node its part of the plan sends to (AgentConfig.Connect),
// and the mesh dials that node in the background if it has not yet, so the
// connection is usually up by TX (transport/doc.go).
//
// # Gang
//
// Gang (gang.go) is one strobe thread driving several jobs — each with its
// own Nodes, strobe.Master (slice numbers, lateness, synchronisation),
// hooks and failure domain — and time-sharing them with the gang matrix
// strobe.Gang (multiprogramming level, quantum, work-conserving hand-over).
// Each slice it asks the matrix which job runs, tells every job's Nodes
// (Gated: LocalNodes calls Agent.Gate, RemoteNodes sends the decision in the
// slice's MsgDEM, Code proto.DEMStopped), then runs every job's DEM, MSM and
// TX in turn, all strobed at the same instant so their schedules stay
// aligned. An agent whose job does not run in the slice has had its ranks
// stopped (AgentConfig.OnRun: the launcher's killpg SIGSTOP; SIGCONT when its
// turn comes), still exchanges, schedules and moves the job's data (buffered
// coscheduling: process_vm_* needs the memory, not the CPU), posts no pull
// orders (a stopped rank cannot serve one) and passes no status to MSM, so
// the slice does not count towards deadlock detection. SliceStats.Ran and
// Switch (EMDS RUN, SWITCHNS) record it; GangJob.Counts, Switches and
// Given count, from the gang's decisions, the slices a job ran in and was
// strobed in, its switches in and out, and the slices of its turns lent
// to another job (the launcher's manifest keeps them). After each job's DEM the matrix
// observes its status bytes: a running job whose every rank is blocked or
// ended and which exchanged nothing gives the rest of its quantum to a job
// that can use the CPU, from the next strobe, on every node at once. A
// job's node error stops that job alone (its Nodes.Stop and Wait get what
// RunMaster would have returned); jobs join and leave at slice boundaries.
// RunMaster is unchanged: the single-job path has no gang in it.
//
// A late job is held. A job whose Nodes are LocalNodes runs its slice on
// the strobe thread, by direct calls, as above. Any other job (agents over
// a transport, on this host or others) runs each slice on a goroutine of
// its own (the job's worker), strobed by the strobe thread, which then
// goes on to the next strobe. Before each strobe the thread takes the
// workers' ended slices and waits for those still under way at most
// GangConfig.Hold (DefaultHold: 100 ms, at least two slices) past the due
// time; a job whose slice is still under way then is held: not strobed,
// passed over by the matrix (strobe.Gang.Hold: the running job that is
// held hands over at once), not counted alive, and its ranks stopped on
// every node that still answers. The last decision its nodes got may have
// been to run, and its ranks would then compete for the cores with the job
// that now has the turn: if it was, the strobe thread tells its nodes
// (Holder: RemoteNodes.Hold sends MsgHold outside the slice's exchange,
// from goroutines, so a silent node delays nothing) and each agent stops
// its ranks as it reads the frame, between the slice's steps (Agent.Gate,
// the switch's own mechanism: the process group's SIGSTOP or the
// freezer). The frame names the held slice (MsgHold's Slice, the slice
// under way): that slice's own DEM, broadcast by the job's worker while
// the strobe thread holds it, may reach a node after the hold and still
// say the job runs, and the agent keeps its ranks stopped through the DEM
// of the named slice. The slice's deadlock count stays the DEM's decision
// on every node, wherever the hold reached it (SliceStats.Ran follows the
// decision, not whether the ranks were stopped). An agent reads the
// master's frames itself (a direct peer) between the slice's steps, where it
// waits for the master's next frame (the report rounds); its own DEM and MSM
// wait for nothing. Where it waits inside TX (for another node's data:
// Agent.await) for more than waitWatch (1 ms), a goroutine of its endpoint
// (the watcher; it goes on reading after TX, until the next frame that is
// not a hold, and a hold it reads while Serve waits for that frame stops
// the ranks there at once: AgentEndpoint.recv waits on it too) reads the
// master's frames meanwhile: a hold it passes to the
// wait, which stops the ranks at once, there, and goes on waiting (the data
// still owed arrives into the stopped ranks' memory, so the slice completes
// if the silent node comes back); a stop ends the wait (the job is over:
// the agent ends quietly, as at a stop between steps). The first other
// frame (the next DEM) the watcher hands to Serve and ends; a hold it read
// before is applied first, so the order of the master's frames holds. So
// an agent learns of a hold within a wake-up wherever it waits, not at its
// node_timeout. Where TX blocks in a send of a data frame, because the
// silent node takes nothing (a full socket buffer: more than the kernel's
// buffer of data for that node in the slice), the agent's send timer
// (armed at a TX's first send, firing every waitWatch while the TX lasts)
// starts the watcher once it finds the same send under way twice, and the
// watcher stops the ranks itself under the gate's lock (Agent.gmu: TX
// takes it before it goes on from the send, so the agent's state is the
// watcher's meanwhile), when no pull order or span is outstanding (a
// stopped rank would not serve it, and settling one is TX's); with one
// outstanding, the hold waits for TX's next wait or its end, as before
// (TestGangHoldStopsRanksBlockedInSend).
// Not covered: a stop read during a blocked send ends nothing until the
// send does (at the node_timeout, the mesh's send timeout); the send
// cannot be interrupted without closing the connection. A send that does
// not block pays the gate's lock twice (BenchmarkSendData: about 35 ns
// against 4 on the loaded 2-core machine).
// Waits under a watcher cost it a goroutine and one hand-off of the next
// frame; shorter waits (the ordinary ones) cost nothing more. The next DEM waits until the hold's frames are sent, so
// its decision follows the hold on every connection: a released job's
// ranks are continued when its turn comes. A job that ends while held
// (aborted, stopped) has its stopped ranks continued and ended by its
// launcher, as any descheduled job's (internal/launch, group.cont). Its slice ends
// either well (it is released and strobed at the next strobe, its skipped
// slices counted by its strobe.Master) or with its node error (a node
// silent past node_timeout: it leaves). So one job's silent or slow node
// delays the others' slices by at most Hold, once per late slice, instead
// of by its node_timeout. While its worker is busy the worker owns the
// job's Nodes, strobe.Master and counts; the strobe thread hands them over
// through channels (the slice to run, the slice ended), so no lock is
// taken. A held job is stopped at once: when its stop channel is closed
// (and at Gang.Close) the strobe thread cancels its slice (Canceller:
// RemoteNodes interrupts the master's wait for its nodes' reports,
// transport.Mesh.Interrupt), the slice ends with ErrSliceCancelled and the
// job leaves as stopped (Wait's error nil; ErrGangClosed at Close), its
// nodes told to stop; without a Canceller its leave waits for its slice to
// end (its node_timeout bounds that). The worker is the job's master
// thread: with the gang's FIFO on it runs SCHED_FIFO, as the strobe thread
// does. A held job is listed Held, not Running (Gang.Status, GangJob.Held).
//
// Types here are safe for concurrent use only as documented per method.
package nicthread
