package main

import (
	"bytes"
	"encoding/hex"
	"testing"
)

// TestExternal32Parts converts single components both ways against bytes
// worked out by hand: x87 long doubles to IEEE binary128, the narrowing of
// long and wchar_t, and the values external32 cannot hold.
func TestExternal32Parts(t *testing.T) {
	for _, c := range []struct {
		name   string
		p      e32Part
		native string // little-endian, as in memory
		ext    string // big-endian external32
		fails  bool
	}{
		// 1.0L: mantissa 0x8000000000000000, exponent 0x3fff.
		{"x87 1.0", e32Part{0, 16, 16, 'x'}, "0000000000000080ff3f000000000000", "3fff0000000000000000000000000000", false},
		// -0.75L: mantissa 0xc000000000000000, exponent 0x3ffe, sign.
		{"x87 -0.75", e32Part{0, 16, 16, 'x'}, "00000000000000c0febf000000000000", "bffe8000000000000000000000000000", false},
		// The lowest mantissa bit lands at bit 49 of the low word.
		{"x87 1+2^-63", e32Part{0, 16, 16, 'x'}, "0100000000000080ff3f000000000000", "3fff0000000000000002000000000000", false},
		{"long -3", e32Part{0, 8, 4, 'i'}, "fdffffffffffffff", "fffffffd", false},
		{"long 2^31-1", e32Part{0, 8, 4, 'i'}, "ffffff7f00000000", "7fffffff", false},
		{"long 2^31", e32Part{0, 8, 4, 'i'}, "0000008000000000", "", true},
		{"long -2^31-1", e32Part{0, 8, 4, 'i'}, "ffffff7fffffffff", "", true},
		{"unsigned long 2^32-1", e32Part{0, 8, 4, 'u'}, "ffffffff00000000", "ffffffff", false},
		{"unsigned long 2^32", e32Part{0, 8, 4, 'u'}, "0000000001000000", "", true},
		{"wchar 0x20ac", e32Part{0, 4, 2, 'u'}, "ac200000", "20ac", false},
		{"wchar 0x1f600", e32Part{0, 4, 2, 'u'}, "00f60100", "", true},
		{"int", e32Part{0, 4, 4, 'u'}, "04030201", "01020304", false},
	} {
		nb, _ := hex.DecodeString(c.native)
		eb := make([]byte, c.p.ext)
		err := e32Out(c.p, nb, eb)
		if c.fails {
			if err == nil {
				t.Errorf("%s: packed as %x, want an error", c.name, eb)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if got := hex.EncodeToString(eb); got != c.ext {
			t.Errorf("%s: packed %s, want %s", c.name, got, c.ext)
		}
		back := make([]byte, c.p.size)
		e32In(c.p, eb, back)
		if !bytes.Equal(back, nb) {
			t.Errorf("%s: unpacked %x, want %x", c.name, back, nb)
		}
	}
}
