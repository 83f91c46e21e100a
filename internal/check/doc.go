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
// The package is pure: no I/O, no clock, no goroutines. Nothing here is safe
// for concurrent use.
package check
