package check

import (
	"fmt"
	"hash/crc32"
	"strings"
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

var table = crc32.MakeTable(crc32.Castagnoli)

// Sum is the CRC-32C of b.
func Sum(b []byte) uint32 { return crc32.Checksum(b, table) }

// Blocks is the number of blocks of a buffer of n bytes.
func Blocks(n int) int { return (n + BlockSize - 1) / BlockSize }

// Sums appends the block checksums of b to dst and returns it.
func Sums(dst []uint32, b []byte) []uint32 {
	for len(b) > 0 {
		n := min(len(b), BlockSize)
		dst = append(dst, crc32.Checksum(b[:n], table))
		b = b[n:]
	}
	return dst
}

// Diff compares the block checksums of buf (its blocks from first on, as
// many as sums holds) with sums and returns the first and last differing
// block (absolute indices), or ok false if none differs.
func Diff(sums []uint32, buf []byte, first int) (lo, hi int, ok bool) {
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
		}
	}
	return lo, hi, lo >= 0
}

// Range is the byte range [from, to) of blocks lo .. hi of a buffer of n bytes.
func Range(lo, hi, n int) (from, to int) {
	return lo * BlockSize, min((hi+1)*BlockSize, n)
}
