package replay

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

// Format identifiers.
const (
	Magic = "BCSRPL01"
	// Version 3: spans and pulled chunks changed the plans; version 4:
	// persistent collectives match in initialization order
	// (proto.PersistKey), so their plans differ from version 3's; version
	// 5: communicator creations carry their rank's count of live
	// communicators (proto.Descriptor.Lives) and the scheduler judges
	// proto.CommsMax from it and never drops a freed communicator, so
	// plans with refusals, or descriptors on freed communicators, differ;
	// version 6: a blocking Comm_dup asks for a grant of local duplicates
	// (proto.Descriptor.DupGrant), so communicator ids and the plans of
	// duplicates differ.
	Version      = 6
	FormatName   = "bcs-replay"
	ManifestName = "replay.json"
	HeaderSize   = 32
	// MaxFile bounds a rank file a rank reads back (it holds the whole log
	// in memory): 1 GiB.
	MaxFile = 1 << 30
)

// Manifest describes a recording (DIR/replay.json).
type Manifest struct {
	Format        string   `json:"format"`  // FormatName
	Version       int      `json:"version"` // Version
	Program       string   `json:"program"` // the program as bcsrun resolved it
	ProgramSHA256 string   `json:"program_sha256"`
	Args          []string `json:"args"`
	Ranks         int      `json:"ranks"`
	Nodes         int      `json:"nodes"`
	TimesliceNS   int64    `json:"timeslice_ns"`
	Restart       string   `json:"restart"`
	ConfigHash    string   `json:"config_hash"` // sha256 of the whole configuration, as bcsrun prints it
	Job           string   `json:"job"`
	Started       string   `json:"started"` // RFC 3339
	// Slices: the recording has the slice log (SlicesName, Level B).
	Slices bool `json:"slices,omitempty"`
}

// RankFile is the path of rank's records in dir.
func RankFile(dir string, rank int) string {
	return filepath.Join(dir, fmt.Sprintf("rank%d.rpl", rank))
}

// IDOf is the recording id of a job id (the rank files' header field).
func IDOf(job string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(job))
	return h.Sum64()
}

// ErrNoRecording is matched by the error of ReadManifest for a directory
// that holds no recording.
var ErrNoRecording = errors.New("replay: no recording")

// CreateDir prepares dir for a new recording and writes its manifest. A dir
// that already holds a manifest is refused (a recording is not overwritten).
func CreateDir(dir string, m Manifest) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("replay: --record %s: %w", dir, err)
	}
	path := filepath.Join(dir, ManifestName)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, os.ErrExist) {
		return fmt.Errorf("replay: --record %s: the directory already holds a recording (%s); remove it or choose another directory", dir, ManifestName)
	}
	if err != nil {
		return fmt.Errorf("replay: --record %s: %w", dir, err)
	}
	m.Format, m.Version = FormatName, Version
	b, _ := json.MarshalIndent(m, "", "  ")
	_, err = f.Write(append(b, '\n'))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("replay: writing %s: %w", path, err)
	}
	return nil
}

// ReadManifest reads dir's manifest and checks its format and version.
func ReadManifest(dir string) (Manifest, error) {
	var m Manifest
	path := filepath.Join(dir, ManifestName)
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return m, fmt.Errorf("%w: --replay %s is not a directory (want one written by bcsrun --record)", ErrNoRecording, dir)
	}
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return m, fmt.Errorf("%w: --replay %s has no %s (want a directory written by bcsrun --record)", ErrNoRecording, dir, ManifestName)
	}
	if err != nil {
		return m, fmt.Errorf("replay: %w", err)
	}
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		return m, fmt.Errorf("replay: %s: %v (want the manifest bcsrun --record writes)", path, err)
	}
	switch {
	case m.Format != FormatName:
		return m, fmt.Errorf("replay: %s: format %q, want %q", path, m.Format, FormatName)
	case m.Version != Version:
		return m, fmt.Errorf("replay: %s: version %d, this bcsrun reads version %d (record the run again with this bcsrun)", path, m.Version, Version)
	case m.Ranks < 1:
		return m, fmt.Errorf("replay: %s: ranks = %d, want >= 1", path, m.Ranks)
	}
	return m, nil
}

// Diff lists how now differs from the recording m, one phrase per field
// (program binary, arguments, nodes, timeslice, restart, configuration).
// Ranks are not compared: a different count is an error of its own.
func (m Manifest) Diff(now Manifest) []string {
	var out []string
	if m.Program != now.Program {
		out = append(out, fmt.Sprintf("program: recorded %s, now %s", m.Program, now.Program))
	}
	if m.ProgramSHA256 != now.ProgramSHA256 {
		out = append(out, "program binary: its sha256 differs from the recorded one")
	}
	if !slices.Equal(m.Args, now.Args) {
		out = append(out, fmt.Sprintf("arguments: recorded %q, now %q", m.Args, now.Args))
	}
	if m.Nodes != now.Nodes {
		out = append(out, fmt.Sprintf("nodes: recorded %d, now %d", m.Nodes, now.Nodes))
	}
	if m.TimesliceNS != now.TimesliceNS {
		out = append(out, fmt.Sprintf("timeslice: recorded %dns, now %dns", m.TimesliceNS, now.TimesliceNS))
	}
	if m.Restart != now.Restart {
		out = append(out, fmt.Sprintf("restart: recorded %s, now %s", m.Restart, now.Restart))
	}
	if m.ConfigHash != now.ConfigHash && len(out) == 0 {
		out = append(out, "configuration: its hash differs from the recorded one")
	}
	return out
}

func header(rank, ranks int, id uint64) []byte {
	h := make([]byte, HeaderSize)
	copy(h, Magic)
	binary.LittleEndian.PutUint16(h[8:], Version)
	binary.LittleEndian.PutUint32(h[12:], uint32(rank))
	binary.LittleEndian.PutUint32(h[16:], uint32(ranks))
	binary.LittleEndian.PutUint64(h[20:], id)
	return h
}

// CheckHeader checks a rank file's header against the rank, the job's ranks
// and the recording id.
func CheckHeader(h []byte, path string, rank, ranks int, id uint64) error {
	le := binary.LittleEndian
	switch {
	case len(h) < HeaderSize:
		return fmt.Errorf("replay: %s: %d bytes, shorter than the %d-byte header", path, len(h), HeaderSize)
	case string(h[:8]) != Magic:
		return fmt.Errorf("replay: %s: magic %q, want %q", path, h[:8], Magic)
	case le.Uint16(h[8:]) != Version:
		return fmt.Errorf("replay: %s: version %d, this bcsrun reads version %d", path, le.Uint16(h[8:]), Version)
	case le.Uint16(h[10:]) != 0:
		return fmt.Errorf("replay: %s: flags %#x, want 0 (Level A)", path, le.Uint16(h[10:]))
	case int64(le.Uint32(h[12:])) != int64(rank) || int64(le.Uint32(h[16:])) != int64(ranks):
		return fmt.Errorf("replay: %s: rank %d of %d, want rank %d of %d", path, le.Uint32(h[12:]), le.Uint32(h[16:]), rank, ranks)
	case le.Uint64(h[20:]) != id:
		return fmt.Errorf("replay: %s: recording id %#x, want %#x (the file belongs to another recording than %s)", path, le.Uint64(h[20:]), id, ManifestName)
	}
	return nil
}

// Writer appends one rank's records to its file. It is used by one
// goroutine at a time (its node's agent, then the launcher at the end).
type Writer struct {
	f    *os.File
	w    *bufio.Writer
	err  error
	size int64
	path string // for errors
}

// Create makes rank's file in dir with its header.
func Create(dir string, rank, ranks int, id uint64) (*Writer, error) {
	f, err := os.OpenFile(RankFile(dir, rank), os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, fmt.Errorf("replay: %w", err)
	}
	w := &Writer{f: f, w: bufio.NewWriterSize(f, 64<<10), path: RankFile(dir, rank)}
	w.Write(header(rank, ranks, id))
	return w, nil
}

// Write appends b (whole records, already checked). The first error is kept
// (Err, Close) and later writes are dropped.
func (w *Writer) Write(b []byte) {
	if w.err != nil {
		return
	}
	if w.size+int64(len(b)) > MaxFile {
		// What replay cannot read back is refused now, at record time.
		w.err = fmt.Errorf("replay: %s: the rank's log would pass %d bytes, the most a rank reads back at replay; the recording stops here and cannot be replayed", w.path, MaxFile)
		return
	}
	_, w.err = w.w.Write(b)
	w.size += int64(len(b))
}

// Size is the number of bytes written, header included.
func (w *Writer) Size() int64 { return w.size }

// Close flushes and closes the file and returns the first error.
func (w *Writer) Close() error {
	if err := w.w.Flush(); w.err == nil {
		w.err = err
	}
	if err := w.f.Close(); w.err == nil {
		w.err = err
	}
	return w.err
}

// Log is one rank's recording, read back: its records in call order.
type Log struct {
	Records []Record // by Seq; SOME continuations merged; no two cover the same call
	// End is the number of logged calls of a rank that finalized; 0 with
	// Ended false: the recording stopped before (the rank or job ended early).
	End   uint64
	Ended bool
}

// ReadRank reads and checks rank's file of the recording in dir (whose
// manifest names the job id).
func ReadRank(dir string, rank, ranks int, job string) (*Log, error) {
	path := RankFile(dir, rank)
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("replay: rank %d's records: %w", rank, err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, MaxFile+1))
	if err != nil {
		return nil, fmt.Errorf("replay: %s: %w", path, err)
	}
	if len(b) > MaxFile {
		return nil, fmt.Errorf("replay: %s: larger than %d bytes, the most a rank reads back", path, MaxFile)
	}
	return Parse(b, path, rank, ranks, IDOf(job))
}

// Parse reads a rank file's bytes (path is for messages).
func Parse(b []byte, path string, rank, ranks int, id uint64) (*Log, error) {
	if err := CheckHeader(b, path, rank, ranks, id); err != nil {
		return nil, err
	}
	l := &Log{}
	d := Decoder{Ranks: ranks}
	off := HeaderSize
	for off < len(b) {
		r, n, err := d.Next(b[off:])
		if err != nil {
			return nil, fmt.Errorf("replay: %s at byte %d: %w", path, off, err)
		}
		off += n
		if r.Op == OpEnd {
			l.End, l.Ended = r.Seq, true
			continue
		}
		if k := len(l.Records); r.Op == OpSome && k > 0 && l.Records[k-1].Op == OpSome && l.Records[k-1].Seq == r.Seq {
			l.Records[k-1].Indices = append(l.Records[k-1].Indices, r.Indices...)
			continue
		}
		l.Records = append(l.Records, r)
	}
	sort.SliceStable(l.Records, func(i, j int) bool { return l.Records[i].Seq < l.Records[j].Seq })
	for i := 1; i < len(l.Records); i++ {
		p, r := l.Records[i-1], l.Records[i]
		if p.Seq+p.Run > r.Seq {
			return nil, fmt.Errorf("replay: %s: two records answer logged call %d (%v %v and %v %v)", path, r.Seq, p.Op, p.Outcome(), r.Op, r.Outcome())
		}
	}
	if k := len(l.Records); l.Ended && k > 0 {
		if last := l.Records[k-1]; last.Seq+last.Run-1 > l.End {
			return nil, fmt.Errorf("replay: %s: a record answers logged call %d, after END at %d", path, last.Seq+last.Run-1, l.End)
		}
	}
	return l, nil
}

// At is the record that answers logged call seq, if any.
func (l *Log) At(seq uint64) (Record, bool) {
	i := sort.Search(len(l.Records), func(i int) bool { return l.Records[i].Seq+l.Records[i].Run > seq })
	if i < len(l.Records) && l.Records[i].Seq <= seq {
		return l.Records[i], true
	}
	return Record{}, false
}

// Last is the highest logged call the log answers (0: none).
func (l *Log) Last() uint64 {
	if l.Ended {
		return l.End
	}
	if k := len(l.Records); k > 0 {
		return l.Records[k-1].Seq + l.Records[k-1].Run - 1
	}
	return 0
}
