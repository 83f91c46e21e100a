// Package sim is a deterministic simulation of a whole BCS-MPI job: a
// master, many nodes running internal/core, their ranks and the network, all
// driven by Step in one goroutine. It is how the protocol is tested at scales
// no machine here has (DESIGN.md §4: L3, above internal/core; it imports
// only L0–L1½ packages).
//
// # Glossary
//
//   - replica: a node that runs a full core.Node (strobe follower, scheduler,
//     restart policy, deadlock detection). Config.Cores says how many.
//   - agent model: what every node does around its core, as nicthread's Agent
//     does: publish completions, drain the ranks' posts, compute their status
//     bytes, move its part of the plan, report each microphase to the master.
//   - rank: a small scripted program (Workload) over a simulated memory: it
//     posts descriptors and consumes completions, and checks every byte
//     delivered to it against what its sender wrote.
//   - injector: a fault (Injector), consulted at Points of the run.
//
// # One slice
//
// Step follows nicthread/master.go's RunMaster over RemoteNodes, with a
// strobe.Master on a simulated clock: the strobe is issued when due (or as
// soon as the previous slice ends, skipping the slice numbers whose time has
// passed); every node publishes (restart policy "slice"), drains what its
// ranks posted during the previous slice and sends its batch and status bytes
// to the master, which collects the reports in node order (a report not yet
// there is a sync retry, one later than NodeTimeout aborts the job: "node N
// stopped answering"); the master broadcasts the all-gathered set; every
// replica runs DEM and MSM over it, and their plans are hashed and compared
// (they must be identical: the DEM all-gather is the only exchange MSM has);
// the first replica's plan is carried out over the rank memories and node
// staging areas (stage 0, folds, stage 1, stage 2, writes); each node's TX
// takes its bytes over its link's bandwidth; completions are published
// (restart policy "early") and the ranks run. Times are simulated: latencies
// with a seeded jitter, a cost per descriptor, link bandwidth.
//
// # Checks made on every slice
//
//   - identical plans on every replica (a hash of everything in the plan);
//   - each replica's core publishes exactly the completions the agent model
//     holds for its node, in the same order;
//   - every byte a rank receives is what its sender wrote; every allreduce
//     is the sum of its members' contributions; a split yields the expected
//     group and member list;
//   - every member of a collective completes in the same slice, not before
//     the slice its last member's descriptor was exchanged in;
//   - fairness: on a link, a transfer matched later never moves while one
//     matched before it waits (the scheduler's chunking rule);
//   - deadlock verdicts identical on every replica.
//
// # Determinism and replay
//
// The only randomness is the *rand.Rand given to New (the workload's seed,
// the network jitter, which nodes are replicas); injectors are pure
// functions of the Point. TraceHash digests everything (plans, status bytes,
// timing); ContentHash leaves out slice numbers and timing, so faults that
// only delay (SlowNode, SlowLink) leave it unchanged. The tests print the
// seed of a failing run and replay it with -sim.seed=N.
//
// # Why replicas and not every node a core
//
// Every node computes the same plan from the same set, so running all N
// replicas costs N times one scheduler and N copies of its state (a
// communicator alone costs 4 bytes per world rank in each replica). The
// tests run every node as a replica at hundreds of nodes (and thousands
// behind -sim.big); the 10,000-node run keeps a few replicas (node 0, the
// last node and seeded others) and models the rest as agents.
//
// Rejected: moving scheduler/coll_test.go's plan interpreter here and
// having that test import it. The scheduler's tests are in package
// scheduler, and sim imports scheduler through internal/core: an import
// cycle (and only internal/core may import scheduler). The interpreter is
// small; execute reimplements it for many nodes (staging areas grown on
// demand, bounds checked against the ranks' buffers).
//
// # Gang scheduling
//
// Gang (gang.go) time-shares several Sims under one strobe.Gang matrix, as
// nicthread's Gang does: each gang slice every live job steps once; the
// descheduled ones run no rank code but still exchange, schedule and move
// data, and pass no status to MSM (their slice does not count towards
// deadlock detection); every node of a job records the slice in which it
// applied each change of decision, carried by that slice's DEM.
//
// Not modelled: inline (buffered) sends, probes, v-collectives, the data
// plane's own framing, per-rank CPU contention. No goroutines, no clock, no
// I/O. A Sim is not safe for concurrent use.
package sim
