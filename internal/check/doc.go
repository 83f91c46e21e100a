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
// with CRC-32C (Castagnoli, hardware-accelerated on amd64 and arm64), so a
// difference is located to a block: reports name the byte range of the
// first to the last differing block, not single bytes. Two buffers with
// the same sums differ with probability about 2^-32 per block. A chunk's
// flow sum is the CRC-32C of the whole chunk, which Update computes piece by
// piece (PieceSize): the copy paths sum each piece while it is in the cache.
// CRC-32C was kept over faster-looking hashes: measured on the development
// host, a 4-lane 64-bit multiply-xor hash was no faster on buffers in memory
// (both bound by the memory at about 5 GB/s, both about 25 GB/s in cache),
// and CRC-32C detects every burst of up to 32 bits.
//
// The package is pure: no I/O, no clock, no goroutines. Nothing here is safe
// for concurrent use.
package check
