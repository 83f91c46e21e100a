// Package emds is the Elan MDS of the paper (§3.2, Table 1), kept under its
// name: per-slice counters of the master (global metrics) and of every agent
// (local metrics), recorded into preallocated windows.
//
// # Metrics
//
// Global, recorded by the master for each slice (times in ns):
//
//	GETTS   elapsed time since the previous strobe
//	GTDEM   strobe → every node done with DEM (descriptor exchange)
//	GTMSM   strobe → every node done with MSM (scheduling)
//	GTTS    strobe → every node done with the slice
//	USRTS, USRDEM, USRMSM  unsuccessful sync retries: times the master found the
//	        transmission, DEM or MSM microphase not finished on some node and had
//	        to wait for it
//	LATE    (bcsmpi addition) strobe start minus its scheduled time
//	SKIPPED (bcsmpi addition) slices skipped just before this one
//
// Local, recorded by each agent for each slice:
//
//	LETTS   elapsed time since the previous strobe seen by this agent
//	LTDEM, LTMSM, LTTS  time this node spent in DEM, in MSM, and strobe → end of TX
//	NP2PDEM descriptors of this node's ranks exchanged in DEM
//	NP2PMSM point-to-point chunks scheduled in MSM that touch this node
//	NCOLLDEM collective descriptors of this node's ranks exchanged in DEM
//	NCOLLMSM collectives scheduled (completed) in MSM
//	BPTS    this node's ranks asleep in a blocking call at the strobe
//	LTR0..LTR4 the agent's internal routines (ns): 0 drain the descriptor rings,
//	        1 publish completions and wake ranks, 2 intra-node copies, 3 sends to
//	        other nodes, 4 wait for chunks from other nodes
//	RUN     1 if the job ran in this slice, 0 if the gang scheduler had
//	        stopped its ranks for another job (always 1 outside a gang)
//	SWITCHNS time the agent spent stopping or continuing this node's ranks
//	        at this slice's strobe (ns; 0: no gang switch in this slice)
//
// # Windows
//
// A Window covers slices [First, First+Len); slices outside it are not
// recorded. Its columns are allocated once, for the selected metrics only;
// Record does not allocate. Not safe for concurrent use: each agent and the
// master own their windows.
//
// # Files
//
//	emds-global.csv     slice,<global metrics...>
//	emds-node<K>.csv    slice,<local metrics...>
//
// One row per recorded slice, increasing; integers only. Read them back with
// ReadCSV. The kernel monitor (package emds/kernel, BCS_MDS=…,kernel) writes
// emds-kernel-*.csv in the same format; its doc.go defines them.
package emds

import (
	"bufio"
	"encoding/csv"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Metric names, in column order.
var (
	GlobalMetrics = []string{"GETTS", "GTDEM", "GTMSM", "GTTS", "USRTS", "USRDEM", "USRMSM", "LATE", "SKIPPED"}
	LocalMetrics  = []string{"LETTS", "LTDEM", "LTMSM", "LTTS", "NP2PDEM", "NP2PMSM", "NCOLLDEM", "NCOLLMSM", "BPTS", "LTR0", "LTR1", "LTR2", "LTR3", "LTR4", "RUN", "SWITCHNS"}
)

// Window records selected metrics for a range of slices.
type Window struct {
	First, Len uint64
	names      []string // all metrics, column order
	sel        []int    // indices into names of the recorded ones
	cols       [][]int64
	seen       []bool
}

// SelectMetrics reads "" / "all" or a comma list of metric names from names.
func SelectMetrics(names []string, s string) ([]bool, error) {
	out := make([]bool, len(names))
	s = strings.TrimSpace(s)
	if s == "" || s == "all" {
		for i := range out {
			out[i] = true
		}
		return out, nil
	}
	for _, m := range strings.Split(s, ",") {
		found := false
		for i, n := range names {
			if strings.EqualFold(strings.TrimSpace(m), n) {
				out[i], found = true, true
			}
		}
		if !found {
			return nil, fmt.Errorf("emds: metric %q unknown; known: %s", m, strings.Join(names, ", "))
		}
	}
	return out, nil
}

// NewWindow allocates a window for the metrics of names marked in sel.
func NewWindow(names []string, sel []bool, first, length uint64) *Window {
	w := &Window{First: first, Len: length, names: names, seen: make([]bool, length)}
	for i := range names {
		if sel == nil || sel[i] {
			w.sel = append(w.sel, i)
			w.cols = append(w.cols, make([]int64, length))
		}
	}
	return w
}

// Record stores the values (one per metric of names, in order) of slice.
func (w *Window) Record(slice uint64, vals []int64) {
	if slice < w.First || slice-w.First >= w.Len {
		return
	}
	i := slice - w.First
	for c, m := range w.sel {
		w.cols[c][i] = vals[m]
	}
	w.seen[i] = true
}

// Bytes is the memory the window's columns use.
func (w *Window) Bytes() int { return len(w.cols)*int(w.Len)*8 + int(w.Len) }

// WriteCSV writes the recorded slices.
func (w *Window) WriteCSV(out io.Writer) error {
	bw := bufio.NewWriter(out)
	bw.WriteString("slice")
	for _, m := range w.sel {
		bw.WriteString("," + w.names[m])
	}
	bw.WriteByte('\n')
	var b []byte
	for i, ok := range w.seen {
		if !ok {
			continue
		}
		b = strconv.AppendUint(b[:0], w.First+uint64(i), 10)
		for c := range w.cols {
			b = append(b, ',')
			b = strconv.AppendInt(b, w.cols[c][i], 10)
		}
		b = append(b, '\n')
		bw.Write(b)
	}
	return bw.Flush()
}

// Dump writes the window to path with permissions perm, whole or not at
// all: to a temporary file beside it, renamed over path when complete.
func (w *Window) Dump(path string, perm os.FileMode) error {
	f, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	err = w.WriteCSV(f)
	if err == nil {
		err = f.Chmod(perm)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
	}
	return err
}

// Series is an EMDS file read back.
type Series struct {
	Names  []string
	Slices []uint64
	Cols   [][]int64 // Cols[i][j]: metric Names[i] at Slices[j]
}

// Col returns the column of metric name, or an error naming the ones present.
func (s *Series) Col(name string) ([]int64, error) {
	for i, n := range s.Names {
		if strings.EqualFold(n, name) {
			return s.Cols[i], nil
		}
	}
	return nil, fmt.Errorf("emds: metric %q not in this file; it has %s", name, strings.Join(s.Names, ", "))
}

// MaxRows bounds what ReadCSV accepts (10× the largest sensible window).
const MaxRows = 10_000_000

// ReadCSV reads a file written by WriteCSV.
func ReadCSV(r io.Reader) (*Series, error) {
	cr := csv.NewReader(r)
	hdr, err := cr.Read()
	if err != nil {
		return nil, fmt.Errorf("emds: header: %w", err)
	}
	if len(hdr) < 1 || hdr[0] != "slice" {
		return nil, fmt.Errorf("emds: first column is %q, want \"slice\"", strings.Join(hdr[:min(len(hdr), 1)], ""))
	}
	s := &Series{Names: hdr[1:], Cols: make([][]int64, len(hdr)-1)}
	seen := map[string]bool{}
	for _, n := range s.Names {
		if n == "" || seen[n] {
			return nil, fmt.Errorf("emds: metric name %q empty or repeated", n)
		}
		seen[n] = true
	}
	cr.FieldsPerRecord = len(hdr)
	for line := 2; ; line++ {
		rec, err := cr.Read()
		if err == io.EOF {
			return s, nil
		}
		if err != nil {
			return nil, fmt.Errorf("emds: %w", err)
		}
		if len(s.Slices) >= MaxRows {
			return nil, fmt.Errorf("emds: more than %d rows", MaxRows)
		}
		k, err := strconv.ParseUint(rec[0], 10, 64)
		if err != nil || (len(s.Slices) > 0 && k <= s.Slices[len(s.Slices)-1]) {
			return nil, fmt.Errorf("emds: line %d: slice %q is not an integer above the previous row's", line, rec[0])
		}
		s.Slices = append(s.Slices, k)
		for i := range s.Names {
			v, err := strconv.ParseInt(rec[i+1], 10, 64)
			if err != nil {
				return nil, fmt.Errorf("emds: line %d: %s = %q is not an integer", line, s.Names[i], rec[i+1])
			}
			s.Cols[i] = append(s.Cols[i], v)
		}
	}
}
