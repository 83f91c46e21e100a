package check

import (
	"fmt"
	"hash/crc32"
	"strings"
	"sync/atomic"
	"unsafe"
)

// Mode is a parsed selection (see the package comment).
type Mode struct {
	Buffers bool // buffer checks on
	Warn    bool // buffer violations are warnings, not errors (buffers:warn)
	Flow    bool // delivery verification on
}

// Valid lists the selection's words, for error messages.
const Valid = `a comma list of "buffers", "buffers:warn", "flow", "all", or "none"`

// Parse reads a selection; "" is none. An unknown word is an error naming
// it and the valid ones.
func Parse(s string) (Mode, error) {
	var m Mode
	if strings.TrimSpace(s) == "" {
		return m, nil
	}
	for _, w := range strings.Split(s, ",") {
		switch strings.TrimSpace(w) {
		case "buffers":
			m.Buffers = true
		case "buffers:warn":
			m.Buffers, m.Warn = true, true
		case "flow":
			m.Flow = true
		case "all":
			m.Buffers, m.Flow = true, true
		case "none", "off":
		default:
			return Mode{}, fmt.Errorf("check %q: unknown word %q, want %s", s, strings.TrimSpace(w), Valid)
		}
	}
	return m, nil
}

// String is the canonical spelling of m ("none" when nothing is on).
func (m Mode) String() string {
	var w []string
	switch {
	case m.Buffers && m.Warn:
		w = append(w, "buffers:warn")
	case m.Buffers:
		w = append(w, "buffers")
	}
	if m.Flow {
		w = append(w, "flow")
	}
	if len(w) == 0 {
		return "none"
	}
	return strings.Join(w, ",")
}

// On reports whether any check is selected.
func (m Mode) On() bool { return m.Buffers || m.Flow }

// BlockSize is the granularity of block checksums, in bytes.
const BlockSize = 4096

// Sum is the CRC-32 (IEEE) of b.
func Sum(b []byte) uint32 { return crc32.ChecksumIEEE(b) }

// Update is the CRC-32 of the bytes summed into crc followed by b: a chunk
// summed piece by piece (Update(Update(0, a), b)) has the Sum of the whole
// (a then b).
func Update(crc uint32, b []byte) uint32 { return crc32.Update(crc, crc32.IEEETable, b) }

// PieceSize is the unit in which the checked copy paths move a chunk (a
// multiple of BlockSize): each piece is summed, compared and written while
// it is still in the cache, so a check costs passes over cached bytes, not
// extra passes over memory.
const PieceSize = 128 << 10

// Blocks is the number of blocks of a buffer of n bytes.
func Blocks(n int) int { return (n + BlockSize - 1) / BlockSize }

// Sums appends the block checksums of b to dst and returns it.
func Sums(dst []uint32, b []byte) []uint32 {
	for len(b) > 0 {
		n := min(len(b), BlockSize)
		dst = append(dst, crc32.ChecksumIEEE(b[:n]))
		b = b[n:]
	}
	return dst
}

// Diff compares the block checksums of buf (its blocks from first on, as
// many as sums holds) with sums and returns the first and last differing
// block (absolute indices), or ok false if none differs.
func Diff(sums []uint32, buf []byte, first int) (lo, hi int, ok bool) {
	lo, hi, n := DiffCount(sums, buf, first)
	return lo, hi, n > 0
}

// DiffCount is Diff that also counts the differing blocks (0: none).
func DiffCount(sums []uint32, buf []byte, first int) (lo, hi, n int) {
	lo, hi = -1, -1
	for i, s := range sums {
		b := first + i
		off := b * BlockSize
		if off >= len(buf) {
			break
		}
		if Sum(buf[off:min(off+BlockSize, len(buf))]) != s {
			if lo < 0 {
				lo = b
			}
			hi = b
			n++
		}
	}
	return lo, hi, n
}

// Describe names the differing blocks lo .. hi (n of them) of a buffer of
// size bytes: "bytes [a, b)" for one block, else the first and the last
// block's byte ranges.
func Describe(lo, hi, n, size int) string {
	a, b := Range(lo, lo, size)
	if n <= 1 || lo == hi {
		return fmt.Sprintf("bytes [%d, %d) (4 KiB block %d)", a, b, lo)
	}
	c, d := Range(hi, hi, size)
	return fmt.Sprintf("%d 4 KiB blocks from bytes [%d, %d) (block %d) to bytes [%d, %d) (block %d)", n, a, b, lo, c, d, hi)
}

// Range is the byte range [from, to) of blocks lo .. hi of a buffer of n bytes.
func Range(lo, hi, n int) (from, to int) {
	return lo * BlockSize, min((hi+1)*BlockSize, n)
}

// A request's check header, as a rank keeps it in its own memory for the
// agent to read (see package internal/shm, check words): the buffer's
// address and length (two little-endian uint64, as four uint32 words), the
// number of blocks summed so far (a prefix of the buffer; all of them,
// except for a send under flow alone, which the rank sums after posting it:
// see SetSummed), a word of padding, then the block sums at post.
const HeaderWords = 6

// summedWord is the header word holding the number of blocks summed.
const summedWord = 4

// NewHeader makes the check header of buf, all of it summed.
func NewHeader(buf []byte) []uint32 {
	h := Sums(EmptyHeader(buf), buf)
	SetSummed(h, Blocks(len(buf)))
	return h
}

// EmptyHeader is the check header of buf without its block sums, which the
// caller appends (Sums, possibly piece by piece) and then counts
// (SetSummed).
func EmptyHeader(buf []byte) []uint32 {
	h := make([]uint32, HeaderWords, HeaderWords+Blocks(len(buf)))
	var addr uint64
	if len(buf) > 0 {
		addr = uint64(uintptr(unsafe.Pointer(unsafe.SliceData(buf))))
	}
	h[0], h[1] = uint32(addr), uint32(addr>>32)
	h[2], h[3] = uint32(len(buf)), uint32(uint64(len(buf))>>32)
	return h
}

// SetSummed records that the first n block sums of header h are in place
// (the agent reads the header while the rank sums: the sums are stored
// before the count, which is stored atomically).
func SetSummed(h []uint32, n int) { atomic.StoreUint32(&h[summedWord], uint32(n)) }

// Summed is the number of blocks summed in a header read as bytes (at least
// HeaderWords*4 of them; little-endian).
func Summed(raw []byte) int {
	return int(uint32(raw[summedWord*4]) | uint32(raw[summedWord*4+1])<<8 | uint32(raw[summedWord*4+2])<<16 | uint32(raw[summedWord*4+3])<<24)
}

// FlowSumMin is the smallest send whose block sums the rank takes under
// flow alone (after posting it, SetSummed): the sends that the receiver may
// copy itself (pull orders, package nicthread: pullMin), whose source sum
// the agent then combines from them instead of reading the send buffer.
const FlowSumMin = 256 << 10

// HeaderSums are the block sums of header h.
func HeaderSums(h []uint32) []uint32 { return h[HeaderWords:] }

// Touched is the range of blocks b0 .. b1 of a buffer of n bytes to compare
// before bytes [off, off+length) are written: the blocks that start inside
// that range (a block that starts before it was checked with the write that
// reached its start, and has been written since). b0 > b1: none.
func Touched(off, length, n int) (b0, b1 int) {
	if length <= 0 || off < 0 || off+length > n {
		return 1, 0
	}
	return (off + BlockSize - 1) / BlockSize, (off + length - 1) / BlockSize
}
