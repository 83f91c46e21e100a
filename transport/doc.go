// Package transport carries control and data frames between the master and the
// agents of a job over TCP. Endpoint 0 is the master; endpoint 1+n is node n.
//
// # Glossary
//
//   - Endpoint: one participant of a job's mesh, with one listener (the master
//     is endpoint 0, node n's agent endpoint 1+n).
//   - Connection: a TCP connection from a dialer to an acceptor, used by the
//     dialer only to send. Each ordered pair (a→b) has at most one, so frames
//     from a to b arrive in the order a sent them.
//   - Direct peer: one whose frames the owner reads itself with Recv (no reader
//     goroutine, no hand-off): the master reads its agents' control frames this
//     way, and an agent its master's. Direct peers are connected eagerly.
//     Mesh.Interrupt ends a Recv under way, and every later one (a master
//     that stops a job while one of its agents is silent); sends still work.
//   - Lazy peer: every other one. The connection to it is dialled the first time
//     it is needed (Connect or Send), not at Start.
//
// # Who talks to whom
//
// The frames a job exchanges (internal/proto, nicthread, internal/core):
//
//   - master → agent: MsgDEM (the strobe), MsgMSM (every node's descriptors of
//     the slice), MsgTX, MsgStop, and in a gang MsgHold (the job is held:
//     stop its ranks; read between the slice's steps, or by a watcher
//     goroutine while the agent waits in TX: nicthread's doc.go); agent →
//     master: MsgDEMDone (the node's descriptors and status), MsgMSMDone,
//     MsgTXDone, MsgFail. Every node,
//     every slice, both ways: these pairs are direct and connected at Start.
//   - agent → agent: MsgData only, one frame per chunk of the slice's plan whose
//     source and destination nodes differ, sent in TX. The descriptor exchange
//     (DEM) and the plan (MSM) go through the master: every agent computes the
//     same plan from the gathered descriptors, so agents never exchange control
//     frames. Point-to-point traffic connects exactly the nodes whose ranks
//     exchange data. Collectives are flat stars (scheduler/doc.go): a broadcast
//     goes from the root's node to every node, a reduction's contributions go
//     to the fold node and its result back out, so each collective root or
//     fold node connects to every node of its communicator; Alltoall and
//     Allgather (one broadcast per member) connect every pair of their nodes.
//
// So with lazy agent↔agent connections a job needs, per endpoint, two
// connections to the master plus one per node it sends to and one per node
// that sends to it: O(N) in all for neighbour exchanges and rooted
// collectives, and still O(N²) for all-to-all patterns, which need the pairs.
//
// # Lazy connections
//
// Start dials the direct peers, waits for them to dial in (at most 10 s), and
// serves the listener until Close: a lazy peer may dial in at any time of the
// job, and is authenticated by the same mutual handshake (auth.go) before a
// single frame of it is read. At most two handshakes per peer plus 16 run at
// once, so strangers cannot pile up goroutines; a connection beyond that
// closes the oldest connection still handshaking (counted as refused) rather
// than being refused itself, so strangers holding every slot with idle
// connections cannot keep the job's own peers out: a peer answers the
// challenge at once, a silent stranger is the oldest. A displaced connection
// is told so ("BCSBUSY1" before it is closed) and never told it is in (the
// acceptor takes a handshake off the list before sending its proof); the
// dialer then tries again (below). Not defended: a stranger opening
// connections without pause, more than the bound within one handshake's round
// trip, for the whole of a dial's time limit. The listener is closed early
// once every peer has connected.
//
// Connect(to) starts the dial to a lazy peer in a background goroutine and
// returns at once; Send to a peer whose dial is running waits for it (at most
// DialTimeout for the connect and 5 s for the handshake, then the error), and
// Send to a peer never dialled dials it itself. A dial whose connection the
// peer closes before sending its challenge, or displaces for a newer one, is
// tried again with backoff within that time, and if it never gets in the
// error says so ("closed the connection before its challenge" or "displaced
// the connection ..., N times in 10s (its handshake bound full of
// strangers?)"). The agent calls Connect in MSM for each node its part of the plan
// sends to (nicthread: AgentConfig.Connect), so the dial overlaps the rest of
// MSM and the master's round trip to TX, and the first data frame rarely
// waits; a dial costs one connect and one handshake (three messages), once
// per ordered pair and job. A failed dial is sticky (every later Send to that
// peer returns the same error; a refused connect, a wrong secret), except
// one that ran out of time while the peer kept turning it away (above):
// the next Send dials again. Either way the agent fails the job naming the
// chunk.
// Failure detection is unchanged: the master still holds a direct connection
// to every node and reads its reports every slice (node_timeout), whether or
// not any other node ever dialled it; a lazily accepted connection is served
// like an eager one, and its reader's error (a peer closing, a bad frame)
// reaches Errors.
//
// Rejected designs:
//
//   - Queueing frames while a dial runs and returning from Send at once: the
//     payload of a data frame is the agent's bounce buffer, reused for the next
//     chunk, so a queued frame would have to be copied (an allocation and a copy
//     per chunk in the slice loop) to save a wait that the MSM-time Connect
//     already hides.
//   - Relaying data through the master: O(N) connections for every pattern,
//     but every byte twice over the network and the master's link the
//     bottleneck of the job.
//   - One connection per unordered pair (both directions on one socket): it
//     halves the count, but for a lazy pair both ends may dial at once and one
//     of the two connections must then be dropped by agreement, after which
//     frames already written to the loser must not be lost or reordered; that
//     needs a second protocol round on every dial (or a fixed dialer, which a
//     lazy pair does not have: the node that needs the pair first may be
//     either). Halving an O(N) count is not worth that risk; the O(N²) → O(N)
//     step is what laziness buys. The direct pairs (master and agent) do have
//     a fixed dialer and could share one socket, saving 2 of the 7 descriptors
//     per node that a neighbour-exchanging job holds in one process (the
//     other 5: the two ends of the master's other connection, of the one to a
//     neighbour, and the agent's listener); not done: the handshake would have
//     to say which connections serve both ways, and every start path (bcsrun,
//     bcsd, the gang daemon) would change, for a saving of 2 in 7.
//
// # Concurrency and ownership
//
// Inbound connections from lazy peers are served by one goroutine each, which
// decodes frames and calls the endpoint's Handler; the Handler sees a Msg whose
// Payload is valid only during the call. Peers marked direct are not served by
// a goroutine: their frames are read by the owner with Recv, which saves two
// goroutine hand-offs per control frame (they dominated the cost of a slice).
// Being direct must be mutual (the master marks every agent, each agent the
// master): Start waits for every direct peer to dial in.
//
// A Mesh is safe for concurrent use: Send and Connect may be called from any
// goroutine (sends to one peer are serialised). Send blocks while the
// peer's connection takes nothing, unless SetSendTimeout bounds it (the
// agents across hosts: a cut link or a partition must not hang a sender);
// SetDirectKeepAlive has the kernel probe the direct peers' connections (a
// connection whose options the kernel refuses is kept without probes, and
// KeepAliveFailed names it for the owner to report). The Mesh owns its listener,
// its connections and its goroutines (readers, handshakes, dials); Close ends
// them all and waits for them.
//
// The single-node embedded case does not use this package: the master calls
// its one agent directly.
//
// An agent's endpoint uses a mesh through the Link interface, so tests can
// wrap it: transport/transporttest holds the fault-injecting wrappers, which
// production builds do not link (see internal/launch on the bcsfault tag).
package transport
