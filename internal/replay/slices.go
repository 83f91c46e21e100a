package replay

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Level B: the slice log (see the package comment).
const (
	SlicesName = "slices.rpl"
	// FlagSlices is the header flag of the slice log.
	FlagSlices    = 1
	OpSlice    Op = 0x10
	OpIdle     Op = 0x11
	// MaxSliceID bounds the slice numbers of a slice log (ParseSlices
	// refuses a record that reaches past it, so no slice number wraps).
	MaxSliceID = math.MaxInt64
	// MaxSlicesFile bounds the slice log the launcher reads back.
	MaxSlicesFile = 1 << 30
	// EnvSlices=1 in a replaying rank's environment says that the runtime
	// replays the slice log (bcsrun sets it with BCS_REPLAY; package mpiapi).
	EnvSlices = "BCS_REPLAY_SLICES"
)

// RankCount is what one rank contributed to a slice's exchange: how many
// descriptors its post ring gave, and a hash of them (nicthread.DescHash).
type RankCount struct {
	Rank  int // world rank
	Count uint64
	Hash  uint32
}

// Slice is one entry of the slice log: an executed slice with descriptors
// or a non-empty plan, or a run of Run idle slices (nothing exchanged, an
// empty plan), the first ID and the others consecutive.
type Slice struct {
	ID     uint64 // the master's slice number
	Idle   bool
	Run    uint64 // idle slices in the run (>= 1); 1 for a busy slice
	Counts []RankCount
	Plan   uint32 // hash of the slice's plan (nicthread.PlanHash; busy slices)
}

// Slices is a slice log read back.
type Slices struct {
	List  []Slice
	Total uint64 // slices covered
	Busy  uint64 // of which with descriptors or a non-empty plan
	Ended bool   // the END record was read: the job's master stopped normally
}

// SliceEncoder encodes the slice log's records. Slice is called once per
// executed slice, in order; it keeps a run of idle slices open until a busy
// slice (or Flush) ends it.
type SliceEncoder struct {
	prev    uint64 // last slice covered by a written record
	idleAt  uint64 // first slice of the open idle run
	idleRun uint64
	Total   uint64
}

// Slice appends slice k (counts by ascending rank, the plan's hash; idle:
// no counts and an empty plan) to b.
func (e *SliceEncoder) Slice(b []byte, k uint64, counts []RankCount, plan uint32, idle bool) []byte {
	e.Total++
	if idle {
		if e.idleRun > 0 && e.idleAt+e.idleRun == k {
			e.idleRun++
			return b
		}
		b = e.Flush(b)
		e.idleAt, e.idleRun = k, 1
		return b
	}
	b = e.Flush(b)
	b = append(b, byte(OpSlice))
	b = binary.AppendUvarint(b, uint64(k-e.prev))
	b = binary.AppendUvarint(b, uint64(len(counts)))
	last := 0
	for _, c := range counts {
		b = binary.AppendUvarint(b, uint64(c.Rank-last))
		b = binary.AppendUvarint(b, c.Count)
		b = binary.LittleEndian.AppendUint32(b, c.Hash)
		last = c.Rank
	}
	b = binary.LittleEndian.AppendUint32(b, plan)
	e.prev = k
	return b
}

// Flush writes the open idle run, if any.
func (e *SliceEncoder) Flush(b []byte) []byte {
	if e.idleRun == 0 {
		return b
	}
	b = append(b, byte(OpIdle))
	b = binary.AppendUvarint(b, uint64(e.idleAt-e.prev))
	b = binary.AppendUvarint(b, e.idleRun)
	e.prev = e.idleAt + e.idleRun - 1
	e.idleRun = 0
	return b
}

// End flushes and appends the END record.
func (e *SliceEncoder) End(b []byte) []byte {
	b = e.Flush(b)
	b = append(b, byte(OpEnd))
	return binary.AppendUvarint(b, e.Total)
}

// SlicesHeader is the slice log's header (the rank field is 0).
func SlicesHeader(ranks int, id uint64) []byte {
	h := header(0, ranks, id)
	binary.LittleEndian.PutUint16(h[10:], FlagSlices)
	return h
}

// CreateSlices makes the slice log in dir with its header.
func CreateSlices(dir string, ranks int, id uint64) (*Writer, error) {
	path := filepath.Join(dir, SlicesName)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, fmt.Errorf("replay: %w", err)
	}
	w := &Writer{f: f, w: bufio.NewWriterSize(f, 64<<10), path: path}
	w.Write(SlicesHeader(ranks, id))
	return w, nil
}

// ReadSlices reads and checks the slice log of the recording in dir.
func ReadSlices(dir string, ranks int, job string) (*Slices, error) {
	path := filepath.Join(dir, SlicesName)
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("replay: the slice log: %w", err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, MaxSlicesFile+1))
	if err != nil {
		return nil, fmt.Errorf("replay: %s: %w", path, err)
	}
	if len(b) > MaxSlicesFile {
		return nil, fmt.Errorf("replay: %s: larger than %d bytes, the most bcsrun reads back", path, MaxSlicesFile)
	}
	return ParseSlices(b, path, ranks, IDOf(job))
}

// ParseSlices reads a slice log's bytes (path is for messages).
func ParseSlices(b []byte, path string, ranks int, id uint64) (*Slices, error) {
	le := binary.LittleEndian
	switch {
	case len(b) < HeaderSize:
		return nil, fmt.Errorf("replay: %s: %d bytes, shorter than the %d-byte header", path, len(b), HeaderSize)
	case string(b[:8]) != Magic:
		return nil, fmt.Errorf("replay: %s: magic %q, want %q", path, b[:8], Magic)
	case le.Uint16(b[8:]) != Version:
		return nil, fmt.Errorf("replay: %s: version %d, this bcsrun reads version %d", path, le.Uint16(b[8:]), Version)
	case le.Uint16(b[10:]) != FlagSlices:
		return nil, fmt.Errorf("replay: %s: flags %#x, want %#x (the slice log)", path, le.Uint16(b[10:]), FlagSlices)
	case int64(le.Uint32(b[16:])) != int64(ranks):
		return nil, fmt.Errorf("replay: %s: a log of %d ranks, want %d", path, le.Uint32(b[16:]), ranks)
	case le.Uint64(b[20:]) != id:
		return nil, fmt.Errorf("replay: %s: recording id %#x, want %#x (the file belongs to another recording than %s)", path, le.Uint64(b[20:]), id, ManifestName)
	}
	s := &Slices{}
	r := &reader{b: b, n: HeaderSize}
	prev := uint64(0)
	for r.n < len(b) && r.err == nil {
		at := r.n
		r.op = Op(r.byte1())
		if s.Ended {
			return nil, fmt.Errorf("replay: %s at byte %d: a record after END", path, at)
		}
		switch r.op {
		case OpSlice:
			d := r.uvarint("dslice", math.MaxInt64)
			n := r.uvarint("ranks", uint64(ranks))
			sl := Slice{ID: prev + d, Run: 1}
			last := uint64(0)
			for i := uint64(0); i < n && r.err == nil; i++ {
				rk := last + r.uvarint("drank", uint64(ranks-1))
				if r.err == nil && (rk >= uint64(ranks) || (i > 0 && rk == last)) {
					r.err = &FieldError{Op: r.op, Field: "rank", Value: rk, Want: fmt.Sprintf("ascending, in 0 .. %d", ranks-1)}
				}
				c := r.uvarint("count", math.MaxUint32)
				if r.err == nil && r.n+4 > len(b) {
					r.err = ErrShort
				}
				if r.err != nil {
					break
				}
				sl.Counts = append(sl.Counts, RankCount{Rank: int(rk), Count: c, Hash: le.Uint32(b[r.n:])})
				r.n += 4
				last = rk
			}
			if r.err == nil && r.n+4 > len(b) {
				r.err = ErrShort
			}
			if r.err == nil {
				sl.Plan = le.Uint32(b[r.n:])
				r.n += 4
				switch {
				case d == 0 && len(s.List) > 0:
					r.err = &FieldError{Op: r.op, Field: "dslice", Value: d, Want: "a later slice than the last record's"}
				case sl.ID == 0:
					// Nothing posted can be exchanged in slice 0 (rule 1:
					// posted in slice k, exchanged after it).
					r.err = &FieldError{Op: r.op, Field: "slice", Value: sl.ID, Want: "a busy slice numbered 1 or later (slice 0 exchanges nothing)"}
				case sl.ID > MaxSliceID: // prev, d <= MaxSliceID: no wrap
					r.err = &FieldError{Op: r.op, Field: "slice", Value: sl.ID, Want: fmt.Sprintf("at most %d", uint64(MaxSliceID))}
				}
			}
			if r.err == nil {
				s.List = append(s.List, sl)
				s.Total++
				s.Busy++
				prev = sl.ID
			}
		case OpIdle:
			d := r.uvarint("dslice", math.MaxInt64)
			run := r.uvarint("run", math.MaxInt32)
			if r.err == nil && (run == 0 || (d == 0 && len(s.List) > 0)) {
				r.err = &FieldError{Op: r.op, Field: "dslice, run", Value: fmt.Sprint(d, run), Want: "a later slice than the last record's, and a run of at least 1"}
			}
			// prev, d <= MaxSliceID: prev+d does not wrap.
			if first := prev + d; r.err == nil && (first > MaxSliceID || run-1 > MaxSliceID-first) {
				r.err = &FieldError{Op: r.op, Field: "dslice, run", Value: fmt.Sprint(d, run),
					Want: fmt.Sprintf("a run that ends at slice %d at the latest (it starts at slice %d)", uint64(MaxSliceID), first)}
			}
			if r.err == nil {
				s.List = append(s.List, Slice{ID: prev + d, Idle: true, Run: run})
				s.Total += run
				prev += d + run - 1
			}
		case OpEnd:
			n := r.uvarint("slices", math.MaxInt64)
			if r.err == nil && n != s.Total {
				r.err = &FieldError{Op: r.op, Field: "slices", Value: n, Want: fmt.Sprintf("%d (the slices of the records before it)", s.Total)}
			}
			s.Ended = r.err == nil
		default:
			return nil, fmt.Errorf("replay: %s at byte %d: op %#x, want 0x10 (SLICE), 0x11 (IDLE) or 0x7f (END)", path, at, uint8(r.op))
		}
		if r.err != nil {
			return nil, fmt.Errorf("replay: %s at byte %d: %w", path, at, r.err)
		}
	}
	return s, nil
}

// Describe renders a slice's recorded counts for messages.
func (s Slice) Describe() string {
	if s.Idle {
		return "nothing exchanged"
	}
	var parts []string
	for _, c := range s.Counts {
		parts = append(parts, fmt.Sprintf("rank %d: %d", c.Rank, c.Count))
	}
	return strings.Join(parts, ", ")
}

// CountOf is rank r's recorded count in s.
func (s Slice) CountOf(r int) (RankCount, bool) {
	i, ok := slices.BinarySearchFunc(s.Counts, r, func(c RankCount, r int) int { return c.Rank - r })
	if !ok {
		return RankCount{Rank: r}, false
	}
	return s.Counts[i], true
}
