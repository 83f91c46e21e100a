package mds

import (
	"bufio"
	"encoding/csv"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unsafe"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// Prim names an MPI primitive.
type Prim uint8

// The primitives the MMDS knows, in report order.
const (
	Send Prim = iota
	Recv
	Isend
	Irecv
	Sendrecv
	Wait
	Waitall
	Waitany
	Test
	Testall
	Probe
	Iprobe
	Barrier
	Bcast
	Reduce
	Allreduce
	Gather
	Gatherv
	Scatter
	Scatterv
	Allgather
	Allgatherv
	Alltoall
	Alltoallv
	ReduceScatter
	Scan
	Exscan
	Ibarrier
	Ibcast
	Ireduce
	Iallreduce
	Igather
	Iscatter
	Iallgather
	Ialltoall
	Igatherv
	Iscatterv
	Iallgatherv
	Ialltoallv
	Iscan
	Iexscan
	IreduceScatter
	CommSplit
	CommDup
	CommCreate
	CommFree
	Ssend
	Issend
	Mprobe
	Improbe
	Mrecv
	Imrecv
	// One-sided communication (the C library: cabi/rma*.go); the _c forms
	// count as their int forms.
	Put
	Get
	Accumulate
	GetAccumulate
	FetchAndOp
	CompareAndSwap
	Rput
	Rget
	Raccumulate
	RgetAccumulate
	WinCreate
	WinAllocate
	WinAllocateShared
	WinCreateDynamic
	WinFree
	WinFence
	WinPost
	WinStart
	WinComplete
	WinWait
	WinTest
	WinLock
	WinUnlock
	WinLockAll
	WinUnlockAll
	WinFlush
	WinFlushAll
	WinFlushLocal
	WinFlushLocalAll
	WinSync
	NumPrims
)

var primNames = [NumPrims]string{"MPI_Send", "MPI_Recv", "MPI_Isend", "MPI_Irecv", "MPI_Sendrecv", "MPI_Wait",
	"MPI_Waitall", "MPI_Waitany", "MPI_Test", "MPI_Testall", "MPI_Probe", "MPI_Iprobe", "MPI_Barrier",
	"MPI_Bcast", "MPI_Reduce", "MPI_Allreduce", "MPI_Gather", "MPI_Gatherv", "MPI_Scatter", "MPI_Scatterv",
	"MPI_Allgather", "MPI_Allgatherv", "MPI_Alltoall", "MPI_Alltoallv", "MPI_Reduce_scatter", "MPI_Scan",
	"MPI_Exscan", "MPI_Ibarrier", "MPI_Ibcast", "MPI_Ireduce", "MPI_Iallreduce", "MPI_Igather", "MPI_Iscatter",
	"MPI_Iallgather", "MPI_Ialltoall", "MPI_Igatherv", "MPI_Iscatterv", "MPI_Iallgatherv", "MPI_Ialltoallv",
	"MPI_Iscan", "MPI_Iexscan", "MPI_Ireduce_scatter", "MPI_Comm_split", "MPI_Comm_dup", "MPI_Comm_create", "MPI_Comm_free",
	"MPI_Ssend", "MPI_Issend", "MPI_Mprobe", "MPI_Improbe", "MPI_Mrecv", "MPI_Imrecv",
	"MPI_Put", "MPI_Get", "MPI_Accumulate", "MPI_Get_accumulate", "MPI_Fetch_and_op", "MPI_Compare_and_swap",
	"MPI_Rput", "MPI_Rget", "MPI_Raccumulate", "MPI_Rget_accumulate",
	"MPI_Win_create", "MPI_Win_allocate", "MPI_Win_allocate_shared", "MPI_Win_create_dynamic", "MPI_Win_free",
	"MPI_Win_fence", "MPI_Win_post", "MPI_Win_start", "MPI_Win_complete", "MPI_Win_wait", "MPI_Win_test",
	"MPI_Win_lock", "MPI_Win_unlock", "MPI_Win_lock_all", "MPI_Win_unlock_all",
	"MPI_Win_flush", "MPI_Win_flush_all", "MPI_Win_flush_local", "MPI_Win_flush_local_all", "MPI_Win_sync"}

func (p Prim) String() string { return primNames[p] }

// ParsePrim reads a primitive name ("MPI_Send" or "send").
func ParsePrim(s string) (Prim, error) {
	for i, n := range primNames {
		if strings.EqualFold(s, n) || strings.EqualFold("MPI_"+s, n) {
			return Prim(i), nil
		}
	}
	return 0, fmt.Errorf("mds: primitive %q unknown; known: %s", s, strings.Join(primNames[:], ", "))
}

// Mode says which parts of the MDS run. Kernel (the EMDS kernel monitor,
// package emds/kernel) implies Elan: its data are EMDS windows.
type Mode struct{ Main, Elan, Kernel bool }

// ParseMode reads BCS_MDS: "none", or a comma list of "main", "elan",
// "kernel" (which implies elan) and "all" (main and elan; the kernel monitor
// needs privileges and is asked for by name).
func ParseMode(s string) (Mode, error) {
	var m Mode
	s = strings.TrimSpace(s)
	if s == "" || s == "none" {
		return m, nil
	}
	for _, part := range strings.Split(s, ",") {
		switch strings.TrimSpace(part) {
		case "main":
			m.Main = true
		case "elan":
			m.Elan = true
		case "kernel":
			m.Elan, m.Kernel = true, true
		case "all":
			m.Main, m.Elan = true, true
		default:
			return Mode{}, fmt.Errorf("mds: BCS_MDS=%q: %q is not one of none, main, elan, kernel, all (or a comma list of them)", s, part)
		}
	}
	return m, nil
}

func (m Mode) String() string {
	var parts []string
	if m.Main {
		parts = append(parts, "main")
	}
	if m.Elan {
		parts = append(parts, "elan")
	}
	if m.Kernel {
		parts = append(parts, "kernel")
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ",")
}

// Set is a set of small non-negative integers (ranks, nodes) read from
// "" or "all" (everything), or a list like "0,2-5".
type Set struct {
	all bool
	in  map[int]bool
}

// ParseSet reads a selection.
func ParseSet(s string) (Set, error) {
	s = strings.TrimSpace(s)
	if s == "" || s == "all" {
		return Set{all: true}, nil
	}
	set := Set{in: map[int]bool{}}
	for _, part := range strings.Split(s, ",") {
		lo, hi, rng := strings.Cut(strings.TrimSpace(part), "-")
		a, err := strconv.Atoi(lo)
		b := a
		if err == nil && rng {
			b, err = strconv.Atoi(hi)
		}
		if err != nil || a < 0 || b < a || b-a > 1<<20 {
			return Set{}, fmt.Errorf("mds: selection %q: %q is not N or N-M with 0 <= N <= M", s, part)
		}
		for i := a; i <= b; i++ {
			set.in[i] = true
		}
	}
	return set, nil
}

// SetOf is the set holding just the given numbers.
func SetOf(is ...int) Set {
	s := Set{in: map[int]bool{}}
	for _, i := range is {
		s.in[i] = true
	}
	return s
}

// Has reports whether i is selected.
func (s Set) Has(i int) bool { return s.all || s.in[i] }

// Config selects what a rank records.
type Config struct {
	Digits     int           // significant digits of the distributions, 1 .. 5
	Primitives []bool        // NumPrims entries: distributions for these
	LatencyMax time.Duration // highest latency a distribution tracks
	SizeMax    int64         // highest message size a distribution tracks
	FileMode   os.FileMode   // permissions of the dumped files; 0 means DefaultFileMode
}

// DefaultConfig: every primitive, 2 significant digits (1% resolution),
// latencies up to 1 h, sizes up to 1 TiB.
func DefaultConfig() Config {
	c := Config{Digits: 2, Primitives: make([]bool, NumPrims), LatencyMax: time.Hour, SizeMax: 1 << 40, FileMode: DefaultFileMode}
	for i := range c.Primitives {
		c.Primitives[i] = true
	}
	return c
}

// ParsePrimitives reads "all" or a list of primitive names.
func ParsePrimitives(s string) ([]bool, error) {
	out := make([]bool, NumPrims)
	s = strings.TrimSpace(s)
	if s == "" || s == "all" {
		for i := range out {
			out[i] = true
		}
		return out, nil
	}
	for _, n := range strings.Split(s, ",") {
		p, err := ParsePrim(strings.TrimSpace(n))
		if err != nil {
			return nil, err
		}
		out[p] = true
	}
	return out, nil
}

type stat struct{ count, min, max, total, bytes int64 }

// Recorder is one rank's MMDS. Not safe for concurrent use (see the package doc).
type Recorder struct {
	stats      [NumPrims]stat
	lat, size  [NumPrims]*hdr.Histogram // made on a selected primitive's first call
	want       [NumPrims]bool           // distributions selected (mds_primitives)
	lmax, smax int64
	digits     int
	mode       os.FileMode
	comp, comm *hdr.Histogram
	// The paper's two counters, and exact totals beside the two arrays.
	compStart, commStart int64
	compTotal, commTotal int64
	compN, commN         int64
	base                 time.Time
	end                  int64 // run time, set by Close
}

// New returns a recorder whose run starts now.
func New(cfg Config) *Recorder {
	r := &Recorder{base: time.Now(), lmax: int64(cfg.LatencyMax), smax: cfg.SizeMax, digits: cfg.Digits, mode: cfg.FileMode}
	if r.mode == 0 {
		r.mode = DefaultFileMode
	}
	copy(r.want[:], cfg.Primitives)
	r.comp = hdr.New(1, r.lmax, cfg.Digits)
	r.comm = hdr.New(1, r.lmax, cfg.Digits)
	return r
}

// Bytes is the memory held by the recorder's distributions and counters.
func (r *Recorder) Bytes() int {
	n := int(unsafe.Sizeof(*r))
	for p := range r.lat {
		if r.lat[p] != nil {
			n += r.lat[p].ByteSize() + r.size[p].ByteSize()
		}
	}
	return n + r.comp.ByteSize() + r.comm.ByteSize()
}

// Now is the recorder's clock: nanoseconds since New.
func (r *Recorder) Now() int64 { return int64(time.Since(r.base)) }

// Begin marks entry into primitive p and returns the entry time. A blocking
// primitive closes the current computation interval.
func (r *Recorder) Begin(blocking bool) int64 {
	t := r.Now()
	if blocking {
		r.closeComp(t)
		r.commStart = t
	}
	return t
}

// closeComp ends the computation interval that started at compStart.
func (r *Recorder) closeComp(t int64) {
	d := t - r.compStart
	r.compTotal += d
	r.compN++
	r.comp.RecordValue(max(d, 1))
}

// End marks the return from primitive p entered at t0, moving bytes.
func (r *Recorder) End(p Prim, t0 int64, bytes int64, blocking bool) {
	t := r.Now()
	d := t - t0
	s := &r.stats[p]
	if s.count == 0 || d < s.min {
		s.min = d
	}
	if d > s.max {
		s.max = d
	}
	s.count++
	s.total += d
	s.bytes += max(bytes, 0)
	if r.want[p] {
		h := r.lat[p]
		if h == nil { // a primitive's distributions cost ~75 KB: only for the ones a program calls
			h = hdr.New(1, r.lmax, r.digits)
			r.lat[p], r.size[p] = h, hdr.New(1, r.smax, r.digits)
		}
		h.RecordValue(max(d, 1))
		if bytes > 0 {
			r.size[p].RecordValue(bytes)
		}
	}
	if blocking {
		c := t - r.commStart
		r.commTotal += c
		r.commN++
		r.comm.RecordValue(max(c, 1))
		r.compStart = t
	}
}

// Totals returns primitive p's calls so far, the nanoseconds spent in them
// and the bytes they moved (as End was told), for the C ABI's MPI_T
// performance variables.
func (r *Recorder) Totals(p Prim) (count, ns, bytes int64) {
	s := r.stats[p]
	return s.count, s.total, s.bytes
}

// Close ends the run (at Finalize): the last computation interval is closed.
func (r *Recorder) Close() {
	if r.end != 0 {
		return
	}
	t := r.Now()
	r.closeComp(t)
	r.compStart, r.end = t, t
}

// Summary is a rank's per-primitive table, as dumped and read back.
type Summary struct {
	Rank  int
	Rows  []Row // primitives with count > 0, in Prim order
	Comp  Row   // computation granularity
	Comm  Row   // communication overhead
	RunNs int64 // run time covered
	Final bool  // dumped at Finalize (Close); false for a dump at an interval, MPI_Abort or a signal
}

// Row is one line of the summary (times in ns).
type Row struct {
	Name                   string
	Count, Min, Max, Total int64
}

// Summary returns the current table.
func (r *Recorder) Summary(rank int) Summary {
	s := Summary{Rank: rank}
	for p := Prim(0); p < NumPrims; p++ {
		if st := r.stats[p]; st.count > 0 {
			s.Rows = append(s.Rows, Row{p.String(), st.count, st.min, st.max, st.total})
		}
	}
	s.Comp = Row{"comp_granularity", r.compN, r.comp.Min(), r.comp.Max(), r.compTotal}
	s.Comm = Row{"comm_overhead", r.commN, r.comm.Min(), r.comm.Max(), r.commTotal}
	s.RunNs, s.Final = r.end, r.end != 0
	if s.RunNs == 0 { // dumped before Close (signal, abort, periodic): the run so far
		s.RunNs = r.Now()
	}
	return s
}

// Dump writes the rank's three files into dir, each atomically (WriteAtomic),
// the summary last: a summary that says Final was written after the final
// distributions.
func (r *Recorder) Dump(dir string, rank int) error {
	s := r.Summary(rank)
	base := filepath.Join(dir, fmt.Sprintf("mmds-rank%d", rank))
	type named struct {
		tag string
		h   *hdr.Histogram
	}
	var hs []named
	for p := Prim(0); p < NumPrims; p++ {
		if r.lat[p] != nil && r.stats[p].count > 0 {
			hs = append(hs, named{p.String() + ".latency", r.lat[p]}, named{p.String() + ".size", r.size[p]})
		}
	}
	hs = append(hs, named{"comp", r.comp}, named{"comm", r.comm})
	if err := WriteAtomic(base+".hlog", r.mode, func(w io.Writer) error {
		lw := hdr.NewHistogramLogWriter(w)
		if err := lw.OutputLogFormatVersion(); err != nil {
			return err
		}
		lw.OutputComment(fmt.Sprintf("bcsmpi MMDS, rank %d, values in ns (latency) or bytes (size)", rank))
		if err := lw.OutputLegend(); err != nil {
			return err
		}
		for _, n := range hs {
			n.h.SetTag(n.tag)
			n.h.SetStartTimeMs(r.base.UnixMilli())
			n.h.SetEndTimeMs(r.base.UnixMilli() + r.Now()/1e6)
			if err := lw.OutputIntervalHistogram(n.h); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		return err
	}
	if err := WriteAtomic(base+"-dist.csv", r.mode, func(w io.Writer) error {
		bw := bufio.NewWriter(w)
		fmt.Fprintln(bw, "metric,from,to,count")
		for _, n := range hs {
			for _, b := range n.h.Distribution() {
				if b.Count > 0 {
					fmt.Fprintf(bw, "%s,%d,%d,%d\n", n.tag, b.From, b.To, b.Count)
				}
			}
		}
		return bw.Flush()
	}); err != nil {
		return err
	}
	return WriteAtomic(base+".csv", r.mode, func(w io.Writer) error { return WriteSummary(w, s) })
}

const summaryHeader = "primitive,count,min_ns,max_ns,total_ns"

// WriteSummary writes s as CSV.
func WriteSummary(w io.Writer, s Summary) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintln(bw, summaryHeader)
	for _, r := range append(s.Rows, s.Comp, s.Comm) {
		fmt.Fprintf(bw, "%s,%d,%d,%d,%d\n", r.Name, r.Count, r.Min, r.Max, r.Total)
	}
	fmt.Fprintf(bw, "run_time,1,%d,%d,%d\n", s.RunNs, s.RunNs, s.RunNs)
	final := 0
	if s.Final {
		final = 1
	}
	fmt.Fprintf(bw, "finalized,%d,0,0,0\n", final)
	return bw.Flush()
}

// ReadSummary reads a summary file written by WriteSummary.
func ReadSummary(rd io.Reader, rank int) (Summary, error) {
	cr := csv.NewReader(rd)
	cr.FieldsPerRecord = 5
	recs, err := cr.ReadAll()
	if err != nil {
		return Summary{}, fmt.Errorf("mds: summary of rank %d: %w", rank, err)
	}
	if len(recs) == 0 || strings.Join(recs[0], ",") != summaryHeader {
		return Summary{}, fmt.Errorf("mds: summary of rank %d: header is not %q", rank, summaryHeader)
	}
	s := Summary{Rank: rank}
	seen := map[string]bool{}
	for i, rec := range recs[1:] {
		var v [4]int64
		for j := range v {
			if v[j], err = strconv.ParseInt(rec[j+1], 10, 64); err != nil || v[j] < 0 {
				return Summary{}, fmt.Errorf("mds: summary of rank %d line %d: %q is not a non-negative integer", rank, i+2, rec[j+1])
			}
		}
		if seen[rec[0]] {
			return Summary{}, fmt.Errorf("mds: summary of rank %d line %d: %s twice", rank, i+2, rec[0])
		}
		seen[rec[0]] = true
		row := Row{rec[0], v[0], v[1], v[2], v[3]}
		switch rec[0] {
		case "comp_granularity":
			s.Comp = row
		case "comm_overhead":
			s.Comm = row
		case "run_time":
			s.RunNs = v[3]
		case "finalized":
			s.Final = v[0] == 1
		default:
			if _, err := ParsePrim(rec[0]); err != nil {
				return Summary{}, fmt.Errorf("mds: summary of rank %d line %d: %v", rank, i+2, err)
			}
			s.Rows = append(s.Rows, row)
		}
	}
	for _, need := range []string{"comp_granularity", "comm_overhead", "run_time"} {
		if !seen[need] {
			return Summary{}, fmt.Errorf("mds: summary of rank %d has no %s row", rank, need)
		}
	}
	return s, nil
}

// ReadHistograms reads every histogram of a rank's .hlog file, by tag.
func ReadHistograms(rd io.Reader) (map[string]*hdr.Histogram, error) {
	lr := hdr.NewHistogramLogReader(rd)
	out := map[string]*hdr.Histogram{}
	for {
		h, err := lr.NextIntervalHistogram()
		if err != nil {
			return nil, fmt.Errorf("mds: histogram log: %w", err)
		}
		if h == nil {
			return out, nil
		}
		out[h.Tag()] = h
	}
}
