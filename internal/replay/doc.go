// Package replay is the record-and-replay log of a job (`bcsrun --record
// DIR`, `bcsrun --replay DIR`): its file format, the encoder the ranks use,
// the decoder that both checks what a rank wrote and reads a recording back.
//
// # What is logged (Level A of ../shared/NEXT.md §4.3)
//
// Matching in bcsmpi is a pure function of the descriptors each slice
// exchanges; what varies between runs is the slice each descriptor lands in,
// and with it the outcome of the calls whose answer depends on timing. Those
// calls, and only those, are logged, each with the number the rank gave it (a
// logged call, counted from 1 per rank; calls whose outcome follows from
// their arguments are not counted):
//
//	wildcard receive or probe   MPI_Recv, MPI_Irecv, MPI_Sendrecv, MPI_Probe, MPI_Mprobe
//	                            with MPI_ANY_SOURCE or MPI_ANY_TAG: the matched source and tag
//	MPI_Iprobe, MPI_Improbe     found or not; if found, source and tag (any arguments)
//	MPI_Test, MPI_Testall       the flag
//	MPI_Testany, MPI_Waitany    the index (-1: none completed)
//	MPI_Testsome, MPI_Waitsome  the completed indices
//	MPI_Cancel                  whether it took effect (it races the match), for a request
//	                            the program has not seen complete
//
// A call over no active request, or over MPI_PROC_NULL, answers from its
// arguments and is not logged. Not logged, and so not replayed: anything
// outside MPI (clocks, MPI_Wtime). With those outcomes fixed, everything
// else a program sees is determined (non-overtaking, collectives folded in
// rank order): a program with none of these calls has an empty log.
//
// # Files
//
// A recording is a directory:
//
//	replay.json     the manifest (Manifest): format, version, program, its
//	                sha256, arguments, ranks, nodes, timeslice, restart policy,
//	                a hash of the whole configuration, job id, start time
//	rank<N>.rpl     rank N's records, written by its node's agent
//	slices.rpl      the slice log (Level B, below), with --record DIR,slices
//
// The manifest and every file carry Version; a recording of another
// version is refused, naming both ("version 2, this bcsrun reads version
// 3"). Version 2 added the CANCEL record; version 3 marks the scheduler's
// span rule of the spans merge (one span for a message alone on its node,
// no pulled chunks in a recorded job): a slice log made before holds plans
// that the scheduler no longer makes, and would diverge in its first
// replayed slice with a span instead of being refused. Version 4:
// persistent collectives' keys; version 5: the bound on live communicators
// is judged from counts the ranks carry (proto.Descriptor.Lives), and freed
// communicators stay in the scheduler's table; version 6: duplicates made
// from the scheduler's grants (ids and duplicates' plans differ).
//
// A rank file is a 32-byte header followed by records:
//
//	0   magic "BCSRPL01"
//	8   version u16 (Version), flags u16 (0: a rank file; FlagSlices: the slice log)
//	12  rank u32, ranks u32
//	20  recording id u64 (IDOf(the manifest's job id): ties the file to its manifest)
//	28  reserved u32 (0)
//
// Every record is an op byte and unsigned varints (signed values zigzag):
//
//	0x01 MATCH  dseq call source tag             a wildcard receive or probe, at its post's number
//	0x02 PROBE  dseq call run found [source tag] Iprobe, Improbe; run: this many calls in a row answered alike
//	0x03 FLAG   dseq call run flag               Test, Testall
//	0x04 INDEX  dseq call run nreq index         Testany, Waitany (index -1: none completed)
//	0x05 SOME   dseq call run nreq k k×dindex    Testsome, Waitsome: k ≤ MaxIndices indices, ascending,
//	                                             each as the gap from the previous one (first: from 0);
//	                                             a longer answer continues in SOME records with dseq 0
//	                                             (Split), whose indices continue the ascent
//	0x06 CANCEL dseq call cancelled              MPI_Cancel (version 2), written when its request completes
//	0x7F END    calls                            the rank finalized after this many logged calls
//
// dseq is the record's call number minus the previous record's (zigzag: a
// MATCH is written when the receive completes, so its number may be lower
// than the Test that found it complete; the first record counts from 0). A
// record covers the calls seq .. seq+run-1. Sources are communicator ranks, as
// the program's status shows them; nreq is the length of the request array
// (checked on replay). No record exceeds MaxRecord bytes. The agent writes
// what a rank logged only after decoding it (Decoder), so a rank file holds
// whole, valid records; END is the last record of a rank that finalized, and
// a file without one is a recording that stopped (a rank killed, an aborted
// job): replay follows it as far as it goes.
//
// # Who writes what
//
// A rank appends its records to a byte ring in its shared-memory block
// (package shm, version 7: the log ring), keeping a run of identical
// not-found answers (Test false, Iprobe not found, …) open until the answer
// changes, and its agent drains the ring at every strobe, checks every record
// (Decoder: op, call, run, ranges, order) and appends it to the rank's file.
// Ranks never write the files, so a rank that crashes or is killed leaves
// its log up to its last record; records are small and the ring has room for
// a slice's worth, so a rank waits for space only when it logs faster than
// the strobe drains. On replay each rank reads its own file once, at
// MPI_Init (ReadRank), and answers its logged calls from it (package mpiapi).
//
// Rejected designs: logging wildcard outcomes in the agents from the
// completions they publish (NEXT.md's proposal) as well as Test outcomes in
// the ranks needs two writers, two orders and a join on descriptor sequence
// numbers at replay; the rank sees both kinds of outcome anyway, in the order
// the program saw them. One file per node (NEXT.md) makes every rank read its
// node's file; one file per rank is read once by its rank.
//
// # Level B: the slice log
//
// With --record DIR,slices the recording also holds slices.rpl, written from
// node 0's agent (nicthread AgentConfig.OnExchange): for every slice the
// master ran, how many descriptors each rank's post ring contributed to the
// exchange, a hash of them per rank (nicthread.DescHash) and a hash of the
// slice's plan (nicthread.PlanHash; the hashes live there, where plans and
// descriptors are, this package being plain data). Header as a rank file's (rank 0, flags FlagSlices), then:
//
//	0x10 SLICE  dslice n n×(drank count hash u32) plan u32
//	            a slice with descriptors or a non-empty plan; ranks ascending
//	            (drank: from the previous rank, the first from 0)
//	0x11 IDLE   dslice run   run slices with nothing exchanged and an empty
//	            plan, the first at dslice, the others consecutive
//	0x7F END    slices       the master stopped after this many slices
//
// dslice counts from the last slice the previous record covered (the first
// from 0); the slice numbers are the master's, gaps included (slices it
// skipped). A busy slice is numbered 1 or later (slice 0 exchanges
// nothing), and no slice after MaxSliceID. The hashes leave out what differs between runs of the same
// program: buffer addresses, request slots (which slot a request gets
// depends on the order completions were consumed) and PostSlice.
//
// Replay (nicthread/levelb.go) re-forms the recorded slices as virtual
// slices: each runs only once every rank has contributed exactly its
// recorded count (later posts are held in the ring, and the slice waits for
// a rank that is late), so the scheduler sees the recorded batches and
// computes the recorded plans, completions are published at the recorded
// slices, and each slice's descriptors and plan are checked against the
// hashes: the first difference stops the job naming the slice, and the rank
// and its calls where descriptors differ; a rank that cannot post its
// recorded count (blocked with every completion seen, finalized or exited)
// is reported naming the slice, the rank and the call it is in. The ranks,
// told by EnvSlices, then post wildcard receives, probes and Iprobe as the
// program makes them (the recorded descriptors) and check their answers
// against the rank file instead of rewriting them; the test family is still
// answered from the rank file (it posts nothing). The slice log is replayed
// only on the recorded number of nodes with the recorded configuration,
// and not in deterministic mode, whose releases depend on when ranks block,
// which a replay does not fix (otherwise bcsrun warns and replays the rank
// files alone). Deadlock reports are re-formed as far as the ranks' blocked
// states at each virtual slice are the recorded ones: they are not logged.
//
// It is not on by default (--record DIR records Level A; DIR,slices adds the
// slice log; DIR,calls says Level A explicitly). Measured with
// sh bench/replay.sh 5 4 [slices] on a quiet 2-core host: recording costs
// nothing measurable either way (node 0 spends about 4 µs on a busy slice of
// 32 descriptors, 50 ns on an idle one: BenchmarkOnExchange), but the log
// grows with the run, not with the logged calls (the stencil: 136 bytes
// without, 13 KB with; master-worker: 20 KB without, 108 KB with), and a
// slice replay waits for each slice's slowest post (the stencil replayed in
// 0.725 s against 0.617 s, master-worker in 4.02 s against 4.01 s).
//
// Values are plain data; an Encoder or Decoder is for one goroutine.
package replay
