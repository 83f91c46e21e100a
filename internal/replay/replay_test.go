package replay

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func many(n, step int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i * step
	}
	return out
}

// sample is one record of every kind, out of call order as a rank writes
// them (a MATCH when its receive completes), with a SOME answer long enough
// to be split.
var sample = []Record{
	{Op: OpFlag, Call: CallTest, Seq: 2, Run: 1000, Flag: false},
	{Op: OpMatch, Call: CallIrecv, Seq: 1, Run: 1, Source: 3, Tag: 5},
	{Op: OpFlag, Call: CallTest, Seq: 1002, Run: 1, Flag: true},
	{Op: OpProbe, Call: CallIprobe, Seq: 1003, Run: 7},
	{Op: OpProbe, Call: CallIprobe, Seq: 1010, Run: 1, Flag: true, Source: 0, Tag: MaxTag},
	{Op: OpIndex, Call: CallTestany, Seq: 1011, Run: 2, NReq: 4, Index: -1},
	{Op: OpIndex, Call: CallWaitany, Seq: 1013, Run: 1, NReq: 4, Index: 3},
	{Op: OpSome, Call: CallWaitsome, Seq: 1014, Run: 1, NReq: 2000, Indices: many(600, 3)},
	{Op: OpSome, Call: CallTestsome, Seq: 1015, Run: 5, NReq: 2},
	{Op: OpFlag, Call: CallTestall, Seq: 1020, Run: 1, Flag: true},
	{Op: OpCancel, Call: CallCancel, Seq: 1022, Run: 1, Flag: true},
	{Op: OpCancel, Call: CallCancel, Seq: 1021, Run: 1, Flag: false},
}

func encode(recs []Record, end uint64) []byte {
	b := header(1, 4, IDOf("job"))
	var e Encoder
	for _, r := range recs {
		for _, c := range Split(r) {
			b = e.Append(b, c)
		}
	}
	return e.Append(b, Record{Op: OpEnd, Seq: end})
}

// What a rank writes reads back as its calls in order, the split SOME answer
// whole again, and At answers every call a run covers.
func TestRoundTrip(t *testing.T) {
	l, err := Parse(encode(sample, 1022), "rank1.rpl", 1, 4, IDOf("job"))
	if err != nil {
		t.Fatal(err)
	}
	if !l.Ended || l.End != 1022 || l.Last() != 1022 {
		t.Fatalf("end %d ended %v last %d, want 1022 true 1022", l.End, l.Ended, l.Last())
	}
	if len(l.Records) != len(sample) {
		t.Fatalf("%d records, want %d", len(l.Records), len(sample))
	}
	for _, want := range sample {
		for _, seq := range []uint64{want.Seq, want.Seq + want.Run - 1} {
			got, ok := l.At(seq)
			if !ok || !got.Same(want) || got.Seq != want.Seq || got.Run != want.Run {
				t.Errorf("At(%d) = %+v %v, want %+v", seq, got, ok, want)
			}
		}
	}
	if _, ok := l.At(1023); ok {
		t.Error("At(1023) answered past the end")
	}
}

// A program without logged calls has a file of the header and END.
func TestEmptyLog(t *testing.T) {
	b := encode(nil, 0)
	if len(b) != HeaderSize+2 {
		t.Fatalf("empty log of %d bytes, want %d", len(b), HeaderSize+2)
	}
	l, err := Parse(b, "x", 1, 4, IDOf("job"))
	if err != nil || len(l.Records) != 0 || !l.Ended {
		t.Fatalf("%+v %v", l, err)
	}
}

func TestParseRefuses(t *testing.T) {
	good := encode(sample[:2], 1002)
	twice := encode([]Record{{Op: OpFlag, Call: CallTest, Seq: 1, Run: 3}, {Op: OpMatch, Call: CallRecv, Seq: 2, Run: 1, Source: 1}}, 5)
	for _, c := range []struct {
		name string
		b    []byte
		id   uint64
		want string
	}{
		{"short header", good[:10], IDOf("job"), "shorter than the 32-byte header"},
		{"magic", append([]byte("BCSRPL99"), good[8:]...), IDOf("job"), `magic "BCSRPL99"`},
		{"version", append(append(append([]byte{}, good[:8]...), 9, 0), good[10:]...), IDOf("job"), "version 9, this bcsrun reads version 6"},
		{"other recording", good, IDOf("other"), "belongs to another recording"},
		{"two records for a call", twice, IDOf("job"), "two records answer logged call 2"},
		{"record past END", encode(sample[:3], 100), IDOf("job"), "END record: calls = 100, want at least 1002"},
		{"cut short", good[:len(good)-2], IDOf("job"), "record cut short"},
	} {
		_, err := Parse(c.b, "rank1.rpl", 1, 4, c.id)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
}

// The manifest round-trips; a missing directory or manifest, another
// format or version are errors naming the directory and what is wanted.
func TestManifest(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "rec")
	m := Manifest{Program: "/bin/app", Args: []string{"a"}, Ranks: 4, Nodes: 2, Job: "j"}
	if err := CreateDir(dir, m); err != nil {
		t.Fatal(err)
	}
	if err := CreateDir(dir, m); err == nil || !strings.Contains(err.Error(), "already holds a recording") {
		t.Fatalf("second recording into %s: %v", dir, err)
	}
	got, err := ReadManifest(dir)
	m.Format, m.Version = FormatName, Version
	if err != nil || !reflect.DeepEqual(got, m) {
		t.Fatalf("ReadManifest = %+v, %v; want %+v", got, err, m)
	}
	now := m
	now.Args = []string{"b"}
	if d := m.Diff(now); len(d) != 1 || !strings.Contains(d[0], `arguments: recorded ["a"], now ["b"]`) {
		t.Errorf("Diff = %q", d)
	}
	if _, err := ReadManifest(filepath.Join(dir, "nope")); !errors.Is(err, ErrNoRecording) {
		t.Errorf("missing dir: %v", err)
	}
	if _, err := ReadManifest(t.TempDir()); !errors.Is(err, ErrNoRecording) || !strings.Contains(err.Error(), "has no replay.json") {
		t.Errorf("empty dir: %v", err)
	}
	b, _ := os.ReadFile(filepath.Join(dir, ManifestName))
	os.WriteFile(filepath.Join(dir, ManifestName), []byte(strings.Replace(string(b), `"version": 6`, `"version": 7`, 1)), 0o644)
	if _, err := ReadManifest(dir); err == nil || !strings.Contains(err.Error(), "version 7, this bcsrun reads version 6") {
		t.Errorf("version 7: %v", err)
	}
}

// FuzzParse: whatever the bytes, Parse returns a log or an error, never
// panics, and a log it returns answers At without overlaps.
func FuzzParse(f *testing.F) {
	f.Add(encode(sample, 1020))
	f.Add(encode(nil, 0))
	f.Add(encode(sample[:3], 1002)[:40])
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) >= HeaderSize {
			copy(b, header(1, 4, IDOf("job"))) // get past the header
		}
		l, err := Parse(b, "fuzz", 1, 4, IDOf("job"))
		if err != nil {
			return
		}
		for i, r := range l.Records {
			if r.Run < 1 || (i > 0 && l.Records[i-1].Seq+l.Records[i-1].Run > r.Seq) {
				t.Fatalf("record %d %+v overlaps or has no run", i, r)
			}
			if got, ok := l.At(r.Seq); !ok || got.Seq != r.Seq {
				t.Fatalf("At(%d) = %+v %v", r.Seq, got, ok)
			}
			if r.Source < 0 || r.Source >= 4 || (r.Op == OpIndex && r.Index >= r.NReq) {
				t.Fatalf("record %+v out of range", r)
			}
		}
	})
}

// BenchmarkAppendMatch: encoding one wildcard receive's record, what a
// recording rank adds to each such receive (besides the ring copy).
func BenchmarkAppendMatch(b *testing.B) {
	var e Encoder
	buf := make([]byte, 0, MaxRecord)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		buf = e.Append(buf[:0], Record{Op: OpMatch, Call: CallRecv, Seq: uint64(i + 1), Source: i & 15, Tag: 2})
	}
}

// BenchmarkDecodeMatch: the agent's check of one such record.
func BenchmarkDecodeMatch(b *testing.B) {
	var e Encoder
	var buf []byte
	for i := 0; i < 1000; i++ {
		buf = e.Append(buf, Record{Op: OpMatch, Call: CallRecv, Seq: uint64(i + 1), Source: i & 15, Tag: 2})
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i += 1000 {
		d := Decoder{Ranks: 16}
		if _, err := d.Check(buf); err != nil {
			b.Fatal(err)
		}
	}
}

// A rank file is refused at record time once it would pass what replay
// reads back.
func TestWriterStopsAtMaxFile(t *testing.T) {
	dir := t.TempDir()
	w, err := Create(dir, 0, 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	w.size = MaxFile - 3 // as if the run had logged that much
	w.Write([]byte{1, 2, 3, 4})
	if err := w.Close(); err == nil || !strings.Contains(err.Error(), RankFile(dir, 0)) || !strings.Contains(err.Error(), "cannot be replayed") {
		t.Fatalf("Close = %v, want an error naming the file and saying it cannot be replayed", err)
	}
}

// The slice log: busy slices with their ranks' counts and hashes, idle runs
// (one record for consecutive idle slices, a new one after a skipped slice
// number), END with the total; it reads back as written, and damaged or
// foreign logs are refused naming the field.
func TestSliceLog(t *testing.T) {
	var e SliceEncoder
	b := SlicesHeader(4, IDOf("job"))
	c1 := []RankCount{{Rank: 0, Count: 3, Hash: 0xdeadbeef}, {Rank: 2, Count: 1, Hash: 7}}
	b = e.Slice(b, 1, nil, 0, true)
	b = e.Slice(b, 2, nil, 0, true)
	b = e.Slice(b, 3, c1, 0x12345678, false)
	b = e.Slice(b, 5, nil, 0, true) // 4 skipped by the master
	b = e.Slice(b, 6, nil, 0, true)
	b = e.Slice(b, 8, nil, 0, true)
	b = e.Slice(b, 9, []RankCount{{Rank: 3, Count: 1, Hash: 1}}, 9, false)
	b = e.End(b)
	s, err := ParseSlices(b, "slices.rpl", 4, IDOf("job"))
	if err != nil {
		t.Fatal(err)
	}
	want := []Slice{
		{ID: 1, Idle: true, Run: 2},
		{ID: 3, Run: 1, Counts: c1, Plan: 0x12345678},
		{ID: 5, Idle: true, Run: 2},
		{ID: 8, Idle: true, Run: 1},
		{ID: 9, Run: 1, Counts: []RankCount{{Rank: 3, Count: 1, Hash: 1}}, Plan: 9},
	}
	if !reflect.DeepEqual(s.List, want) || s.Total != 7 || s.Busy != 2 || !s.Ended {
		t.Fatalf("read back %+v (total %d, busy %d, ended %v)\nwant %+v", s.List, s.Total, s.Busy, s.Ended, want)
	}
	if c, ok := s.List[1].CountOf(2); !ok || c.Count != 1 {
		t.Errorf("CountOf(2) = %+v %v", c, ok)
	}
	if _, ok := s.List[1].CountOf(1); ok {
		t.Errorf("CountOf(1) found a count for a rank that posted nothing")
	}
	rank9 := append([]byte{}, b...)
	rank9[HeaderSize+6] = 9 // after the IDLE record (3 bytes): the SLICE record's first rank, 9 of 4
	for _, c := range []struct {
		name  string
		b     []byte
		ranks int
		want  string
	}{
		{"rank file header", header(0, 4, IDOf("job")), 4, "flags 0x0, want 0x1 (the slice log)"},
		{"ranks", b, 5, "a log of 4 ranks, want 5"},
		{"cut short", b[:len(b)-3], 4, "record cut short"},
		{"rank out of range", rank9, 4, "SLICE record: drank = 9, want 0 .. 3"},
		{"unknown op", append(append([]byte{}, b[:HeaderSize]...), 0x42), 4, "op 0x42, want 0x10 (SLICE), 0x11 (IDLE) or 0x7f (END)"},
		{"after END", append(append([]byte{}, b...), byte(OpIdle), 1, 1), 4, "a record after END"},
		{"busy slice 0", badSlices[0], 4, "at byte 32: replay: SLICE record: slice = 0, want a busy slice numbered 1 or later"},
		{"idle run wraps", badSlices[1], 4, "at byte 43: replay: IDLE record: dslice, run = 9223372036854775807 3, want a run that ends at slice 9223372036854775807 at the latest (it starts at slice 18446744073709551614)"},
		{"idle after the last slice", badSlices[2], 4, "at byte 43: replay: IDLE record: dslice, run = 1 1, want a run that ends at slice 9223372036854775807 at the latest (it starts at slice 9223372036854775808)"},
		{"busy after the last slice", badSlices[3], 4, "at byte 43: replay: SLICE record: slice = 18446744073709551614, want at most 9223372036854775807"},
	} {
		if _, err := ParseSlices(c.b, "slices.rpl", c.ranks, IDOf("job")); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
}

// FuzzParseSlices: whatever the bytes, ParseSlices returns a log or an
// error, never a panic.
func FuzzParseSlices(f *testing.F) {
	var e SliceEncoder
	b := SlicesHeader(4, IDOf("job"))
	b = e.Slice(b, 3, []RankCount{{Rank: 1, Count: 2, Hash: 5}}, 1, false)
	b = e.Slice(b, 4, nil, 0, true)
	f.Add(e.End(b))
	for _, b := range badSlices {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := ParseSlices(b, "x", 4, IDOf("job"))
		if err != nil {
			return
		}
		if err := replayable(s); err != nil {
			t.Fatalf("accepted a log the replay cannot run: %v: %+v", err, s.List)
		}
	})
}

// replayable checks what the Level B replay (nicthread) relies on in an
// accepted log: a busy slice is numbered 1 or later (its descriptors get
// PostSlice v-1, which must be below v), and the slice numbers increase
// from record to record, and within an idle run, without wrapping and up to
// MaxSliceID (the replay counts on from the last one).
func replayable(s *Slices) error {
	next := uint64(0) // the first number the next record may have
	for i, e := range s.List {
		switch {
		case !e.Idle && e.ID == 0:
			return fmt.Errorf("record %d: a busy slice 0", i)
		case e.Run == 0 || (!e.Idle && e.Run != 1):
			return fmt.Errorf("record %d: a run of %d", i, e.Run)
		case e.ID < next && i > 0:
			return fmt.Errorf("record %d: slice %d, after slice %d", i, e.ID, next-1)
		case e.ID > MaxSliceID || e.Run-1 > MaxSliceID-e.ID:
			return fmt.Errorf("record %d: slices %d + %d past %d", i, e.ID, e.Run, uint64(MaxSliceID))
		}
		next = e.ID + e.Run
	}
	return nil
}

// badSlices are slice logs of 4 ranks that the replay cannot run: a busy
// slice 0, an idle run that wraps the slice numbers, an idle slice and a
// busy one after MaxSliceID.
var badSlices = func() [][]byte {
	rec := func(op Op, vs ...uint64) []byte {
		b := []byte{byte(op)}
		for _, v := range vs {
			b = binary.AppendUvarint(b, v)
		}
		return b
	}
	h := SlicesHeader(4, IDOf("job"))
	last := rec(OpIdle, math.MaxInt64, 1) // slice MaxSliceID, 11 bytes
	return [][]byte{
		append(append(h[:len(h):len(h)], rec(OpSlice, 0, 0)...), 0, 0, 0, 0),
		append(append(h[:len(h):len(h)], last...), rec(OpIdle, math.MaxInt64, 3)...),
		append(append(h[:len(h):len(h)], last...), rec(OpIdle, 1, 1)...),
		append(append(append(h[:len(h):len(h)], last...), rec(OpSlice, math.MaxInt64, 0)...), 0, 0, 0, 0),
	}
}()

// TestOldVersionRefused: a recording made before version 6 (whose slice
// log holds plans from before duplicates were granted) is refused by its
// manifest, its rank files and its slice log, each naming both versions,
// instead of diverging in its first replayed slice.
func TestOldVersionRefused(t *testing.T) {
	if Version != 6 {
		t.Fatalf("Version = %d; update this test with the versions a recording of the old one is refused with", Version)
	}
	dir := filepath.Join(t.TempDir(), "rec")
	if err := CreateDir(dir, Manifest{Program: "/bin/app", Ranks: 2, Nodes: 1, Job: "j"}); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(dir, ManifestName))
	os.WriteFile(filepath.Join(dir, ManifestName), []byte(strings.Replace(string(b), `"version": 6`, `"version": 5`, 1)), 0o644)
	const want = "version 5, this bcsrun reads version 6"
	if _, err := ReadManifest(dir); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("manifest of version 5: %v, want %q", err, want)
	}
	old := func(b []byte) []byte { b = append([]byte{}, b...); b[8], b[9] = 5, 0; return b }
	if _, err := Parse(old(encode(sample[:2], 1002)), "rank1.rpl", 1, 4, IDOf("job")); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("rank file of version 5: %v, want %q", err, want)
	}
	if _, err := ParseSlices(old(SlicesHeader(2, IDOf("job"))), "slices.rpl", 2, IDOf("job")); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("slice log of version 5: %v, want %q", err, want)
	}
}
