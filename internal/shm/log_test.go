package shm

import (
	"errors"
	"testing"
)

// The log ring carries a byte stream across its wrap-around, refuses a
// record that does not fit until the agent drains, and reports a head more
// than a ring ahead of what the agent drained.
func TestLogRing(t *testing.T) {
	g := Geometry{Ranks: 1, RingSlots: 8, ReqMax: 16, LogBytes: 4096}
	r := newRegion(t, g)
	rank, agent := r.Block(0), r.Block(0)
	var want, got []byte
	rec := make([]byte, 1000)
	for i := 0; i < 20; i++ {
		for j := range rec {
			rec[j] = byte(i*7 + j)
		}
		if !rank.LogAppend(rec) {
			if i < 4 {
				t.Fatalf("record %d refused with %d bytes in a ring of 4096", i, len(want)-len(got))
			}
			var err error
			if got, err = agent.LogDrain(got); err != nil {
				t.Fatal(err)
			}
			if !rank.LogAppend(rec) {
				t.Fatalf("record %d refused after a drain", i)
			}
		}
		want = append(want, rec...)
	}
	got, err := agent.LogDrain(got)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Fatalf("drained %d bytes, not the %d appended (or not in order)", len(got), len(want))
	}
	*r.u64(HeaderSize + logHead) += 5000 // a rank claiming more than a ring
	var fe *FieldError
	if _, err := agent.LogDrain(nil); !errors.As(err, &fe) || fe.Field != "log ring head" {
		t.Fatalf("head a ring ahead: %v, want a FieldError on the log ring head", err)
	}
	if (Geometry{Ranks: 1, RingSlots: 8, ReqMax: 16, LogBytes: 5000}).Validate() == nil {
		t.Error("a log ring of 5000 bytes accepted")
	}
}

// BenchmarkLogAppend: a rank appending a 5-byte record (a wildcard match)
// to its log ring, drained every 1000 records.
func BenchmarkLogAppend(b *testing.B) {
	g := Geometry{Ranks: 1, RingSlots: 8, ReqMax: 16, LogBytes: 64 << 10}
	mem := make([]byte, g.Size())
	r, _ := Init(mem, g)
	rank, agent := r.Block(0), r.Block(0)
	rec := []byte{1, 2, 1, 6, 4}
	buf := make([]byte, 0, g.LogBytes)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if !rank.LogAppend(rec) {
			b.Fatal("ring full")
		}
		if i%1000 == 999 {
			buf, _ = agent.LogDrain(buf[:0])
		}
	}
}
