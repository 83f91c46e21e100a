package main

import (
	"math/rand/v2"
	"os"
	"testing"
	"unsafe"
)

// Property test of the view mapping (file.go): random filetypes that
// MPI_File_set_view accepts, tiled from a random displacement, against the
// naive stream of file offsets the typemap gives: every byte of a random
// range of the view (runs), the file offset of an etype (byteOffset) and
// the view position of the end of a file (eofPos).
func TestViewRunsAgainstNaiveTypemap(t *testing.T) {
	seed := uint64(rand.Int64())
	t.Logf("seed %d", seed)
	g := &gen{r: rand.New(rand.NewPCG(seed, 2))}
	for _, h := range []uintptr{0x209, 0x214, 0x243, 0x208} { // INT, DOUBLE, CHAR, SHORT
		g.basic = append(g.basic, predefinedType(h))
	}
	byteT := predefinedType(0x247)
	tried := 0
	for i := 0; i < 20000 && tried < 2000; i++ {
		typ, desc := g.typ(3)
		if !typ.compile() || checkFiletype(byteT, typ) != "" {
			continue
		}
		tried++
		disp := g.n(0, 50)
		f := &file{disp: disp, etype: byteT, ftype: typ}
		// The naive stream: byte v of the view at file offset stream[v].
		tm := naive(typ)
		const items = 4
		var stream []int64
		for k := int64(0); k < items; k++ {
			for _, e := range tm {
				for j := int64(0); j < e.basic.wire; j++ {
					stream = append(stream, disp+k*typ.extent()+e.off+j)
				}
			}
		}
		fail := func(format string, a ...any) {
			t.Helper()
			t.Fatalf("seed %d, type %d: %s (disp %d)\nsegs %v\n"+format, append([]any{seed, i, desc, disp, typ.segs}, a...)...)
		}
		for trial := 0; trial < 5; trial++ {
			v := g.n(0, len(stream)-1)
			n := g.n(1, len(stream)-int(v))
			var got []int64
			next := int64(0)
			f.runs(v, n, func(off, pos, l int64) bool {
				if pos != next {
					fail("run at pos %d, want %d", pos, next)
				}
				for j := int64(0); j < l; j++ {
					got = append(got, off+j)
				}
				next = pos + l
				return true
			})
			if int64(len(got)) != n {
				fail("runs(%d, %d) gave %d bytes", v, n, len(got))
			}
			for j := range got {
				if got[j] != stream[v+int64(j)] {
					fail("runs(%d, %d): byte %d at %d, want %d", v, n, j, got[j], stream[v+int64(j)])
				}
			}
			if o := f.byteOffset(v); o != stream[v] {
				fail("byteOffset(%d) = %d, want %d", v, o, stream[v])
			}
		}
		// eofPos: the view bytes before the end of a file, where the
		// stream is increasing (overlapping tiles have no such order).
		mono := true
		for j := 1; j < len(stream); j++ {
			mono = mono && stream[j] > stream[j-1]
		}
		if !mono || len(stream) == 0 {
			continue
		}
		size := g.n(0, int(stream[len(stream)-1])+1)
		want := int64(0)
		for _, o := range stream {
			if o < size {
				want++
			}
		}
		if got := f.eofPos(size); got != want {
			fail("eofPos(%d) = %d, want %d", size, got, want)
		}
	}
	if tried < 100 {
		t.Fatalf("seed %d: only %d filetypes tried", seed, tried)
	}
}

// Reads through random views of a file of random length against the naive
// stream: the bytes before the first that lies beyond the end of the file
// are read, from where the typemap puts them, in batches read with one
// pread (dense) or run by run (sparse: a vector with a large stride).
func TestViewReadsAgainstNaiveTypemap(t *testing.T) {
	seed := uint64(rand.Int64())
	t.Logf("seed %d", seed)
	g := &gen{r: rand.New(rand.NewPCG(seed, 3))}
	for _, h := range []uintptr{0x209, 0x214, 0x243, 0x208} {
		g.basic = append(g.basic, predefinedType(h))
	}
	byteT := predefinedType(0x247)
	sparse := &dtInfo{combiner: combHvector, ints: []int32{3, 1}, aints: []int64{sieveSlack * 3}, types: []*dtInfo{predefinedType(0x209)}}
	if e := sparse.build(); e != nil {
		t.Fatal(e.msg)
	}
	fd, err := os.CreateTemp(t.TempDir(), "view")
	if err != nil {
		t.Fatal(err)
	}
	defer fd.Close()
	tried := 0
	for i := 0; i < 20000 && tried < 500; i++ {
		typ, desc := g.typ(3)
		if i%10 == 0 {
			typ, desc = sparse, "sparse hvector"
		}
		if !typ.compile() || checkFiletype(byteT, typ) != "" {
			continue
		}
		tm := naive(typ)
		disp := g.n(0, 50)
		var stream []int64
		for k := int64(0); k < 4; k++ {
			for _, e := range tm {
				for j := int64(0); j < e.basic.wire; j++ {
					stream = append(stream, disp+k*typ.extent()+e.off+j)
				}
			}
		}
		mono := len(stream) > 0
		for j := 1; j < len(stream); j++ {
			mono = mono && stream[j] > stream[j-1]
		}
		if !mono {
			continue
		}
		tried++
		size := g.n(0, int(stream[len(stream)-1])+10)
		content := make([]byte, size)
		for k := range content {
			content[k] = byte(k*7 + 3)
		}
		if err := fd.Truncate(0); err != nil {
			t.Fatal(err)
		}
		if _, err := fd.WriteAt(content, 0); err != nil {
			t.Fatal(err)
		}
		f := &file{fd: int(fd.Fd()), name: "view", disp: disp, etype: byteT, ftype: typ}
		v := g.n(0, len(stream)-1)
		n := g.n(1, len(stream)-int(v))
		buf := make([]byte, n)
		moved, _, bad := f.move(false, v, &access{buf: unsafe.Pointer(&buf[0]), count: int(n), t: byteT, bytes: n})
		if bad != nil {
			t.Fatalf("seed %d: %s", seed, bad.msg)
		}
		want := int64(0)
		for want < n && stream[v+want] < size {
			want++
		}
		if moved != want {
			t.Fatalf("seed %d, type %d: %s (disp %d, size %d): read %d bytes from %d, want %d", seed, i, desc, disp, size, moved, v, want)
		}
		for j := int64(0); j < moved; j++ {
			if buf[j] != content[stream[v+j]] {
				t.Fatalf("seed %d, type %d: %s: byte %d = %d, want %d (file offset %d)", seed, i, desc, j, buf[j], content[stream[v+j]], stream[v+j])
			}
		}
	}
	if tried < 100 {
		t.Fatalf("seed %d: only %d filetypes tried", seed, tried)
	}
}
