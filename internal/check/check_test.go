package check

import (
	"math/rand/v2"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Mode
	}{
		{"", Mode{}},
		{"none", Mode{}},
		{"buffers", Mode{Buffers: true}},
		{"buffers:warn", Mode{Buffers: true, Warn: true}},
		{"flow", Mode{Flow: true}},
		{"buffers,flow", Mode{Buffers: true, Flow: true}},
		{" flow , buffers:warn ", Mode{Buffers: true, Warn: true, Flow: true}},
		{"all", Mode{Buffers: true, Flow: true}},
	} {
		got, err := Parse(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("Parse(%q) = %+v, %v; want %+v", tc.in, got, err, tc.want)
		}
		if back, err := Parse(got.String()); err != nil || back != got {
			t.Errorf("Parse(%q) = %+v, %v; want %+v", got.String(), back, err, got)
		}
	}
	for _, bad := range []string{"buffer", "flow,bufers", "buffers:error"} {
		_, err := Parse(bad)
		if err == nil || !strings.Contains(err.Error(), "buffers:warn") {
			t.Errorf("Parse(%q) = %v, want an error listing the valid words", bad, err)
		}
	}
}

func TestDiffNamesBlocks(t *testing.T) {
	buf := make([]byte, 5*BlockSize+100)
	for i := range buf {
		buf[i] = byte(i * 7)
	}
	sums := Sums(nil, buf)
	if len(sums) != 6 || Blocks(len(buf)) != 6 {
		t.Fatalf("%d sums, Blocks %d; want 6", len(sums), Blocks(len(buf)))
	}
	if _, _, ok := Diff(sums, buf, 0); ok {
		t.Fatal("unchanged buffer reported as changed")
	}
	buf[BlockSize+5]++
	buf[3*BlockSize]++
	lo, hi, ok := Diff(sums, buf, 0)
	if !ok || lo != 1 || hi != 3 {
		t.Fatalf("Diff = %d, %d, %v; want blocks 1 .. 3", lo, hi, ok)
	}
	if from, to := Range(lo, hi, len(buf)); from != BlockSize || to != 4*BlockSize {
		t.Fatalf("Range = [%d, %d), want [%d, %d)", from, to, BlockSize, 4*BlockSize)
	}
	buf[len(buf)-1]++
	if lo, hi, ok := Diff(sums[4:], buf, 4); !ok || lo != 5 || hi != 5 {
		t.Fatalf("Diff from block 4 = %d, %d, %v; want block 5", lo, hi, ok)
	}
	if from, to := Range(5, 5, len(buf)); from != 5*BlockSize || to != len(buf) {
		t.Fatalf("Range of the last block = [%d, %d), want [%d, %d)", from, to, 5*BlockSize, len(buf))
	}
}

// TestIntervalsAgainstNaive runs random inserts, removals and queries on
// Intervals and on a plain list, and compares the answers.
func TestIntervalsAgainstNaive(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var s Intervals
	var live []Interval
	for step := range 20000 {
		switch op := rng.IntN(3); {
		case op == 0 || len(live) == 0:
			lo := rng.Uint64N(1000)
			iv := Interval{Lo: lo, Hi: lo + 1 + rng.Uint64N(50), ID: uint64(step), Write: rng.IntN(2) == 0}
			s.Insert(iv)
			live = append(live, iv)
		case op == 1:
			i := rng.IntN(len(live))
			s.Remove(live[i].Lo, live[i].ID)
			live = append(live[:i], live[i+1:]...)
		default:
			lo := rng.Uint64N(1000)
			q := Interval{Lo: lo, Hi: lo + 1 + rng.Uint64N(50), Write: rng.IntN(2) == 0, ID: ^uint64(0)}
			if len(live) > 0 && rng.IntN(4) == 0 {
				q.ID = live[rng.IntN(len(live))].ID // the request's own ranges never conflict
			}
			want := false
			for _, x := range live {
				if x.ID != q.ID && x.Lo < q.Hi && q.Lo < x.Hi && (x.Write || q.Write) {
					want = true
				}
			}
			got, ok := s.Conflict(q)
			if ok != want {
				t.Fatalf("step %d: Conflict(%+v) = %+v, %v; want %v (live %v)", step, q, got, ok, want, live)
			}
			if ok && (got.ID == q.ID || got.Lo >= q.Hi || q.Lo >= got.Hi || !(got.Write || q.Write)) {
				t.Fatalf("step %d: Conflict(%+v) returned %+v, which does not conflict", step, q, got)
			}
		}
		if s.Len() != len(live) {
			t.Fatalf("step %d: Len %d, want %d", step, s.Len(), len(live))
		}
	}
}

func BenchmarkSums16MiB(b *testing.B) {
	buf := make([]byte, 16<<20)
	sums := make([]uint32, 0, Blocks(len(buf)))
	b.SetBytes(int64(len(buf)))
	for b.Loop() {
		sums = Sums(sums[:0], buf)
	}
}

// Combine gives the sum of a concatenation from the sums of its parts, for
// every split of random data, full blocks (the table path) included.
func TestCombine(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	buf := make([]byte, 3*BlockSize+77)
	for i := range buf {
		buf[i] = byte(r.Uint32())
	}
	for _, split := range []int{0, 1, 5, 100, BlockSize - 1, BlockSize, BlockSize + 1, 2 * BlockSize, 2*BlockSize + 77, len(buf)} {
		for _, end := range []int{split, split + 1, split + 3, split + BlockSize, len(buf)} {
			if end > len(buf) {
				continue
			}
			a, b := buf[:split], buf[split:end]
			if got, want := Combine(Sum(a), Sum(b), len(b)), Sum(buf[:end]); got != want {
				t.Fatalf("split %d end %d: Combine %#08x, want %#08x", split, end, got, want)
			}
		}
	}
	// A chunk's sum from its block sums, as the flow check takes it.
	var s uint32
	for off := 0; off < len(buf); off += BlockSize {
		b := buf[off:min(off+BlockSize, len(buf))]
		s = Combine(s, Sum(b), len(b))
	}
	if s != Sum(buf) {
		t.Fatalf("sum from block sums %#08x, want %#08x", s, Sum(buf))
	}
}

// TestHeaderSummed: a header made whole counts every block; one being
// filled counts what SetSummed says, as the agent reads it (Summed, from
// the header's bytes).
func TestHeaderSummed(t *testing.T) {
	buf := make([]byte, 5*BlockSize+7)
	asBytes := func(h []uint32) []byte {
		b := make([]byte, 4*len(h))
		for i, w := range h {
			b[4*i], b[4*i+1], b[4*i+2], b[4*i+3] = byte(w), byte(w>>8), byte(w>>16), byte(w>>24)
		}
		return b
	}
	h := NewHeader(buf)
	if got := Summed(asBytes(h)); got != 6 || len(HeaderSums(h)) != 6 {
		t.Fatalf("NewHeader: %d blocks summed, %d sums; want 6, 6", got, len(HeaderSums(h)))
	}
	e := EmptyHeader(buf)
	if got := Summed(asBytes(e)); got != 0 {
		t.Fatalf("EmptyHeader: %d blocks summed, want 0", got)
	}
	SetSummed(e, 3)
	if got := Summed(asBytes(e)); got != 3 {
		t.Fatalf("after SetSummed(3): %d blocks summed, want 3", got)
	}
}
