// Package check holds the pure parts of the opt-in runtime checks
// (BCS_CHECK, the check configuration key): the syntax of the selection,
// block checksums of buffers, and the per-rank interval set of active
// buffers. The runtime parts live where the bytes are: package mpiapi
// (check.go: buffers at post, before the rank's own copies, at completion)
// and package nicthread (flow.go: before the agent's writes, and every
// chunk's bytes at source and destination).
//
// # Selection
//
// A comma list of
//
//	buffers        send buffers modified, receive buffers written, and
//	               overlapping buffers, while a request is in flight: an
//	               error under the communicator's error handler (MPI_ERR_BUFFER)
//	buffers:warn   the same, reported as a warning on standard error; the
//	               program goes on
//	flow           the runtime's own deliveries: every chunk's bytes at
//	               source and destination, and every scheduled chunk moved
//	               exactly once; a violation is a runtime bug and aborts the job
//	all            buffers,flow
//	none or off    nothing (the default)
//
// # Block checksums
//
// A buffer is summed in blocks of BlockSize (4 KiB) bytes from its start,
// with CRC-32 (the IEEE polynomial), so a difference is located to a block:
// reports name the byte range of the first to the last differing block, not
// single bytes. Two buffers with the same sums differ with probability
// about 2^-32 per block, and every burst of up to 32 bits is detected. A
// chunk's flow sum is the CRC-32 of the whole chunk, which Update computes
// piece by piece (PieceSize): the copy paths sum each piece while it is in
// the cache.
//
// The polynomial is chosen for speed: Go computes CRC-32 (IEEE) on amd64
// by carry-less multiplication, with 512-bit VPCLMULQDQ where the processor
// has it, and CRC-32C (Castagnoli) with the SSE4.2 crc32 instruction, three
// streams at a time. On the development host (Xeon, AVX-512) the block sums
// of a piece in the cache took half the time with IEEE
// (BenchmarkSums: about 8 GB/s against 3.5 GB/s on the loaded host), and
// the sums are most of the checks' cost. On a processor without VPCLMULQDQ
// both should be about as fast (about 8 bytes a cycle; not measured
// here). All nodes of a job must use the same function
// (data frames carry the source's sum), so it is fixed, not chosen per host.
// A 4-lane 64-bit multiply-xor hash written in Go was measured earlier and
// was no faster than CRC-32C.
//
// The sum is not what costs: measured in thread CPU time (2026-11-28, the
// shared development host), CRC-32 of 4 KiB blocks runs at about 40 GB/s
// on a piece in the cache and at about 8 GB/s on a buffer in memory, where
// a plain read loop ran at 5-6 GB/s; a four-accumulator AVX-512 fold
// written for the purpose was about 15% faster in the cache and slower in
// memory, and scalar Go alternatives (xxHash-like lanes, a 64-bit
// Fletcher) were slower, so CRC-32 stays. What costs is the number of
// passes over memory (below).
//
// Combine gives the sum of a concatenation from the sums of its parts
// (zlib's crc32_combine; a table per byte of the sum for a whole block), so
// a chunk's sum can be taken from block sums without reading the bytes
// again.
//
// # Passes
//
// Per point-to-point message of n bytes, what each check reads (a pass over
// memory costs about n / 8 GB/s of CPU; one over a piece in the cache
// about a fifth of that):
//
//	buffers  the sender sums its send buffer at post and again at
//	         completion, the receiver its receive buffer at post (three
//	         passes over memory); before writing a piece the runtime sums
//	         the receive buffer's bytes it overwrites (measured at about
//	         half a pass over memory: the write then finds those lines in
//	         the cache); the agent sums the pieces it reads of a send
//	         (cached)
//	flow     source and destination of every chunk summed: on the agent's
//	         copies, cached passes (read back after the write); on a pull
//	         order (a large message within a node, copied by the receiving
//	         rank), the rank sums what it copied, and the source sum is
//	         combined from the send buffer's block sums (below); under
//	         flow alone the sender takes those sums after posting a send
//	         of at least FlowSumMin (256 KiB) to a rank of its node (one
//	         pass over memory, in place, no copy), and the receiving rank
//	         sums each piece right after copying it (a cached pass)
//
// Under buffers,flow the two share their work: the agent's comparison of a
// send piece with the post and its flow sum are one cached pass (the
// chunk's sum combined from the block sums); and a pull chunk's source sum
// is combined from the send buffer's block sums at post, so the agent no
// longer reads the chunk (it reads only the partial blocks at the chunk's
// ends, at most 8 KiB). A pull chunk whose copy differs from the post is
// read again: equal to the copy, the program modified the buffer before the
// copy (recorded for the sender and reported at its completion, as when the
// agent reads a send); equal to the post but not the copy, a runtime bug,
// or a modification restored before that read, which the sums cannot tell
// apart (the report says both). BenchmarkFlowSource and BenchmarkSendPiece
// in package nicthread measure the two, old and new in one run.
//
// The completion pass over a send buffer stays. What it finds that nothing
// else does: a buffer modified after the runtime read the modified blocks
// and before the request completes (the message delivered is right, the
// program is not: under an MPI that moves the data later it would send the
// modified bytes); blocks the runtime's reads are not compared for (a block
// that two chunks share, pull copies under buffers alone, inline sends
// copied at the post, collectives' send buffers). Dropping it would stop
// detecting those. No cheaper equivalent was found: soft-dirty page bits
// (/proc/PID/clear_refs clears the whole process, walking its page tables,
// and every page written afterwards takes a fault), userfaultfd write
// protection (privileges or kernel 5.7+, a fault per written page, a
// handler thread) and mprotect (see reads below) cost more than a pass for
// buffers the program rewrites, as programs do. For the same reason the
// two sums at post stay: they are what a modification is measured
// against.
//
// Flow alone on a pull order. History (2026-11-28, quiet 2-core host,
// bench/checks.sh, 16 MiB messages within a node): 1.18x when the agent read
// every pull chunk from the sender while the receiver copied and summed it
// in pieces; then spans (package nicthread, doc.go "Spans": one copy of a
// large message across slices, at 1.5 budgets a slice) made the unchecked
// run faster while every check still turned them off, and flow alone
// measured 1.42-1.45x, though the agent no longer read the chunks. The
// checks' own passes were not what cost most: moving 16 MiB in per-slice
// chunks of one budget, each cut where the receiver stops, sleeps and is
// woken, instead of in spans, was. Now, under flow alone:
//
//   - Spans and the pull rate stay (configs, Sched; package nicthread,
//     NewAgent): a span's chunk is one pull order that the receiving rank
//     copies across slices; the buffer checks still turn spans off (they
//     compare the receive buffer before every write, within a slice).
//   - The receiving rank copies each entry (a pull order's, or a span's)
//     in pieces of PieceSize with one process_vm_readv each and sums each
//     piece right after its copy, while it is in the cache (package mpiapi,
//     flowCopy), reports the order done, then stores the sums (package
//     internal/shm, pull sums). Before, it copied each entry in one call
//     and summed it after reporting the order done: a second pass that
//     read the entry from memory again, which for a span (up to 24 MiB
//     at the default budget) lay between two spans, since the next order
//     is taken only once the sums are stored. BenchmarkFlowCopy in package
//     mpiapi measures the two against the unchecked copy, side by side.
//   - The agent compares them at the start of its next TX if they are
//     stored, else when the rank takes its next order (a rank stores an
//     order's sums before it takes the next; package nicthread,
//     verifyPulls and verifyPull), so neither side waits for the other in
//     the common case; the rank overwrites an order's sums only once the
//     agent has compared them. The agent waits for the sums before it
//     posts a rank's next order (they are stored right after the order is
//     reported done) and gives the grace period for taking it from then.
//     A span's order is compared likewise once it is done (flowSpan); its
//     entry counts as moved once when the span starts, the shares the
//     agent copies when the receiver does not take the order are checked
//     as it copies them (moveChecked; each piece must move once), and the
//     order covers the rest, which the agent asserts when the span ends
//     (the bytes checked add up to the chunk's length). A
//     mismatch names the slice of the plan the chunk belongs to, its plan
//     entry and the nodes. The rank stores its sums before its blocking
//     call looks at its completions, so the program gets its buffer back
//     only once summed, and MPI_Finalize waits until the agent has
//     compared the rank's last order, so no copy goes unchecked at the
//     end of a job.
//   - The sender, right after posting a send of at least FlowSumMin bytes
//     to a rank of its node, takes its block sums into a check header, as
//     the buffers check does at post, piece by piece, counting each piece
//     as it is stored (SetSummed: the header's summed word), and serving
//     pull orders between pieces. The agent combines a pull chunk's (or a
//     span's) source sum from the sums in place (Combine, a budget's worth
//     of blocks at a time) and reads from the sender only the partial
//     blocks at the chunk's ends and the blocks not summed yet. The
//     sender's pass reads its own memory once, in place, where the agent's
//     copied it out of the process first; it runs while the message moves
//     (the sums run ahead of the copy, at several times its rate), not
//     before the post, so a send is not delayed by it, and on the sender's
//     core, which is otherwise idle in its wait. BenchmarkFlowSource in
//     package nicthread: "read" is the agent's work per chunk before,
//     "post" now.
//
// What remains per 16 MiB message within a node: the receiver's cached
// pass over each piece it copied and a system call per 128 KiB piece (128
// instead of one), on the copy's critical path but inside a span's slack
// when the copy runs faster than the span rate; the sender's pass over its
// buffer, on another core; the agent's combination of the sums (a few
// microseconds). The end-to-end figure is bench/checks.sh's (a quiet host).
//
// What is proved is unchanged: the destination sum is of the receiver's
// buffer after the copy (not of a buffer the copy read from), the source
// sum of the sender's buffer read independently of the copy (by the sender
// itself, or by the agent), and every chunk is counted. What changed is
// when the two are compared, and so how a difference is explained: a send
// buffer modified by the program while in flight (erroneous) now makes the
// sender's sums differ from the bytes copied even if the modification came
// before the copy; at the comparison the agent reads the sender again if
// the send has not completed (modified: reported as the program's), and
// otherwise reports a runtime bug whose text says that such a modification
// reads the same (--check buffers tells them apart and names the call).
// Across nodes (agent copies, data frames) nothing changed: the sending
// agent sums each piece it reads, the receiving agent reads back each
// piece it writes; the cost measured there (1.09x) is those cached passes
// and the pieces' extra system calls. bench/checks.sh measures both.
//
// # What is exact and what is not detected
//
// Exact up to the sums (a block whose sum is unchanged, probability about
// 2^-32): a send buffer that differs at completion from the post, in any
// block; a point-to-point send buffer that the agent reads while it differs
// from the post (across nodes, and within a node when the agent copies),
// and under buffers,flow one that the receiving rank copies while it
// differs from the post (compared per chunk; the agent reads the sender
// again to name the blocks);
// a point-to-point receive buffer written by the program before the runtime
// writes the block (compared at the first write that reaches the block's
// start) or past the delivered bytes; a nonblocking collective's written
// buffer written before the runtime writes a block wholly inside one
// chunk; every overlap of active buffers where one is written. Nothing is
// sampled: every block of every buffer is summed and compared.
//
// A buffer that runs into unmapped memory (a count that describes more
// bytes than the buffer holds, a wrong address) is refused when it is
// posted: MPI_ERR_BUFFER naming the buffer and the first unmapped address
// (mincore(2), package internal/unix). This is an error under buffers:warn
// too: summing such a buffer would fault in the check itself, which a Go
// rank cannot survive. Pages mapped without read permission are not found.
//
// Not detected:
//
//   - Reads of a receive buffer before its completion. A read leaves no
//     trace in memory, so only a trap on access could see it, and none is
//     cheap and sound here: mprotect of the buffer's pages would make the
//     runtime's own writes into them fail (the agent writes with
//     process_vm_writev, and a receiving rank serving a pull order with
//     process_vm_readv; neither passes a protection, and the agent cannot
//     change another process's protections, so the pages would have to be
//     opened by the rank itself before every delivery, which happens in
//     the slices while the program runs, not inside its MPI calls), a
//     fault in a Go rank is taken by the Go runtime's signal handler,
//     which ends the process rather than letting a report be made and the
//     access resumed (a C program could have a handler of the C ABI ahead
//     of Go's; the deliveries are the obstacle there), only the pages a
//     buffer wholly covers could be protected (the rest are shared with
//     other data), and every
//     post and completion would cost two mprotect calls, a TLB shootdown
//     across the process's threads and a split of its mappings (bounded by
//     vm.max_map_count). Page access bits (/sys/kernel/mm/page_idle) need
//     root and do not tell the program's access from the runtime's own.
//     A read-modify-write of a receive buffer is found as a write when it
//     comes before the runtime writes that block.
//   - A write to a receive buffer after the runtime wrote that block and
//     before completion (indistinguishable from the data), and a write to
//     a block of a collective's receive buffer that two chunks share.
//   - A send buffer modified and restored while in flight, where the bytes
//     moved were not compared with the post: a receiving rank's pull copy
//     within a node under buffers without flow, and a collective's send
//     buffer (compared at completion only). Under buffers,flow, a pull copy
//     of a buffer modified and restored before the agent reads it again is
//     reported as a flow violation that names both causes (see Passes).
//   - Writes by another thread or goroutine into the receive buffer of a
//     blocking collective while the call runs (not summed, see package
//     mpiapi).
//
// The package is pure: no I/O, no clock, no goroutines. Nothing here is safe
// for concurrent use.
package check
