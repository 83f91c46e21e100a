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
//
// A call over no active request, or over MPI_PROC_NULL, answers from its
// arguments and is not logged. Not logged either, and so not replayed:
// whether an MPI_Cancel succeeded (it races the match), and anything outside
// MPI (clocks, MPI_Wtime). With those outcomes fixed, everything else a
// program sees is determined (non-overtaking, collectives folded in rank
// order): a program with none of these calls has an empty log.
//
// # Files
//
// A recording is a directory:
//
//	replay.json     the manifest (Manifest): format, version, program, its
//	                sha256, arguments, ranks, nodes, timeslice, restart policy,
//	                a hash of the whole configuration, job id, start time
//	rank<N>.rpl     rank N's records, written by its node's agent
//
// A rank file is a 32-byte header followed by records:
//
//	0   magic "BCSRPL01"
//	8   version u16 (Version), flags u16 (0: Level A)
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
// Level B (per-slice drain counts and a plan hash, replaying the runtime slice
// for slice) is not implemented; the flags word is reserved for it.
//
// Values are plain data; an Encoder or Decoder is for one goroutine.
package replay
