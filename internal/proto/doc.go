// Package proto is the wire vocabulary of bcsmpi: slice numbers, node and rank
// identifiers, descriptors, chunks and the control/data messages agents and the
// master exchange, with their binary encoding.
//
// Glossary (docs/design.md §1): a Descriptor is a rank's request to the runtime (send,
// receive, probe); a Chunk is the part of a matched message that moves in one
// slice; a Msg is one frame of the control or data plane.
//
// Encoding is little-endian, fixed-layout, length-prefixed: every frame is
// [type u8][len u32][body]. Decode never trusts a length: bodies larger than
// MaxFrame or shorter than their fixed part are rejected with ErrMalformed.
// No type here is safe for concurrent mutation; values are passed by copy.
package proto
