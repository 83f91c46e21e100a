package launch

// Record and replay (bcsrun --record DIR, --replay DIR; the format is package
// internal/replay's). Recording: Run writes DIR's manifest, gives every
// node's region a log ring, tells each rank to log (BCS_RECORD) and hands
// every agent a writer per rank for the records it drains; after the agents
// stop it drains the rings once more (MPI_Finalize's END) and closes the
// files. Replaying: Run reads DIR's manifest, refuses a recording of another
// number of ranks or with a missing or foreign rank file, warns about every
// other difference from the recorded job (program, arguments, nodes,
// timeslice, configuration; a program rebuilt with extra prints is a fair
// thing to replay), and tells each rank the directory (BCS_REPLAY); the
// ranks check their calls against the recording as they make them.
//
// Level B (--record DIR,slices): node 0's agent also hands every slice's
// exchange and plan to the recording (onExchange), which keeps the slice
// log; a replay of such a recording on the recorded nodes and configuration
// gives the log to every agent (which re-form the slices) and tells the
// ranks (replay.EnvSlices), and reports how many recorded slices it
// re-formed.

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/bcsmpi/bcsmpi/internal/core"
	"github.com/bcsmpi/bcsmpi/internal/proto"
	"github.com/bcsmpi/bcsmpi/internal/replay"
	"github.com/bcsmpi/bcsmpi/nicthread"
)

// recordSpec splits --record's value: DIR, DIR,slices (Level B: the slice
// log as well) or DIR,calls (Level A only); dflt is what DIR alone records.
// Only a last ",slices" or ",calls" is the level: a directory may hold
// commas.
func recordSpec(spec string, dflt bool) (dir string, slices bool) {
	if i := strings.LastIndexByte(spec, ','); i >= 0 {
		d, level := spec[:i], spec[i+1:]
		switch level {
		case "slices":
			return d, true
		case "calls":
			return d, false
		}
	}
	return spec, dflt
}

// slicesByDefault: whether --record DIR records the slice log too.
const slicesByDefault = false

// logRingBytes is each rank's log ring in a recorded job: a slice's worth of
// records for any program that does not poll in a tight loop of changing
// answers (runs of the same answer are one record).
const logRingBytes = 64 << 10

// manifestOf describes the job for a recording (cfg: as given, before the
// launcher resolves automatic values, so that it hashes the same every run).
func manifestOf(job Job, prog, jobID string) (replay.Manifest, error) {
	job.Record, _ = recordSpec(job.Record, slicesByDefault)
	abs, err := filepath.Abs(prog)
	if err != nil {
		return replay.Manifest{}, fmt.Errorf("bcsrun: %w", err)
	}
	m := replay.Manifest{Program: abs, Args: append([]string{}, job.Args...), Ranks: job.Ranks, Nodes: job.Config.Nodes,
		TimesliceNS: job.Config.Timeslice.Nanoseconds(), Restart: job.Config.Restart, Job: jobID, Started: time.Now().UTC().Format(time.RFC3339)}
	f, err := os.Open(prog)
	if err != nil {
		return m, fmt.Errorf("bcsrun: reading the program for the recording: %w", err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return m, fmt.Errorf("bcsrun: reading the program for the recording: %w", err)
	}
	m.ProgramSHA256 = hex.EncodeToString(h.Sum(nil))
	cb, _ := json.Marshal(job.Config)
	ch := sha256.Sum256(cb)
	m.ConfigHash = hex.EncodeToString(ch[:])
	return m, nil
}

// recording is a job being recorded: one writer per rank. The agents hand
// it each slice's checked records (onLog, on their real-time threads): they
// are appended to a per-rank buffer in memory, and a writer goroutine moves
// the buffers to the files every flushEvery, so no file I/O happens inside a
// slice. Once grown, the buffers are reused (swapped with the writer's).
type recording struct {
	dir     string
	writers []*replay.Writer

	// The slice log (Level B), when recorded: node 0's agent hands every
	// slice to onExchange, which encodes it into spend (mu).
	slices      *replay.Writer
	senc        replay.SliceEncoder
	spend       []byte
	sspare      []byte
	count, hash []uint64 // per rank (node 0's agent only)
	touched     []proto.Rank
	counts      []replay.RankCount

	mu    sync.Mutex
	pend  [][]byte // per rank: records not yet handed to the writer (mu)
	spare [][]byte // per rank: the writer's buffers (the writer goroutine only)
	stop  chan struct{}
	done  chan struct{}
}

// flushEvery is how often the recording's writer empties the buffers.
const flushEvery = 20 * time.Millisecond

func startRecording(job Job, prog, jobID string) (*recording, error) {
	m, err := manifestOf(job, prog, jobID)
	if err != nil {
		return nil, err
	}
	dir, withSlices := recordSpec(job.Record, slicesByDefault)
	job.Record = dir
	m.Slices = withSlices
	if err := replay.CreateDir(job.Record, m); err != nil {
		return nil, fmt.Errorf("bcsrun: %w", err)
	}
	rec := &recording{dir: job.Record}
	if withSlices {
		w, err := replay.CreateSlices(job.Record, job.Ranks, replay.IDOf(jobID))
		if err != nil {
			return nil, fmt.Errorf("bcsrun: --record %s: %w", job.Record, err)
		}
		rec.slices = w
		rec.count, rec.hash = make([]uint64, job.Ranks), make([]uint64, job.Ranks)
	}
	for r := 0; r < job.Ranks; r++ {
		w, err := replay.Create(job.Record, r, job.Ranks, replay.IDOf(jobID))
		if err != nil {
			rec.close()
			return nil, fmt.Errorf("bcsrun: --record %s: %w", job.Record, err)
		}
		rec.writers = append(rec.writers, w)
	}
	rec.pend, rec.spare = make([][]byte, job.Ranks), make([][]byte, job.Ranks)
	rec.stop, rec.done = make(chan struct{}), make(chan struct{})
	go func() {
		defer close(rec.done)
		t := time.NewTicker(flushEvery)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				rec.flush()
			case <-rec.stop:
				return
			}
		}
	}()
	return rec, nil
}

// onLog is the agents' OnLog: the records are checked and whole. It only
// copies them into memory (see recording).
func (r *recording) onLog(rank proto.Rank, b []byte) {
	r.mu.Lock()
	r.pend[rank] = append(r.pend[rank], b...)
	r.mu.Unlock()
}

// flush hands the buffered records to the files (the writer goroutine, or
// close after it stopped).
func (r *recording) flush() {
	r.mu.Lock()
	r.pend, r.spare = r.spare, r.pend
	r.mu.Unlock()
	for i, b := range r.spare {
		if len(b) > 0 {
			r.writers[i].Write(b)
			r.spare[i] = b[:0]
		}
	}
	if r.slices != nil {
		r.mu.Lock()
		r.spend, r.sspare = r.sspare, r.spend
		r.mu.Unlock()
		r.slices.Write(r.sspare)
		r.sspare = r.sspare[:0]
	}
}

// onExchange is node 0's agent's OnExchange (Level B): the slice's count
// and hash of descriptors per rank and its plan's hash, encoded into memory
// (see recording).
func (r *recording) onExchange(k proto.SliceID, all []proto.Descriptor, p *core.Plan) {
	r.touched = r.touched[:0]
	for _, d := range all { // checked by the agents and the core
		if r.count[d.Rank] == 0 {
			r.touched = append(r.touched, d.Rank)
		}
		r.count[d.Rank]++
		r.hash[d.Rank] = nicthread.DescHash(r.hash[d.Rank], d)
	}
	slices.Sort(r.touched)
	r.counts = r.counts[:0]
	for _, rk := range r.touched {
		r.counts = append(r.counts, replay.RankCount{Rank: int(rk), Count: r.count[rk], Hash: nicthread.Fold32(r.hash[rk])})
		r.count[rk], r.hash[rk] = 0, 0
	}
	idle := len(all) == 0 && nicthread.PlanEmpty(p)
	var plan uint32
	if !idle {
		plan = nicthread.PlanHash(p)
	}
	r.mu.Lock()
	r.spend = r.senc.Slice(r.spend, uint64(k), r.counts, plan, idle)
	r.mu.Unlock()
}

// agentHooks sets node's agent's recording and replay hooks (Level B).
func agentHooks(ac *nicthread.AgentConfig, node int, rec *recording, sl *replay.Slices) {
	if rec != nil && rec.slices != nil && node == 0 {
		ac.OnExchange = rec.onExchange
	}
	if (rec != nil && rec.slices != nil) || sl != nil {
		// Spans without looking at the ranks' status, which the slice log
		// does not hold: the plans are then a function of the exchange, as
		// the replay needs (scheduler doc.go, "Spans"). Every node alike.
		ac.Sched.SpanBlind = true
	}
	ac.Slices = sl
}

// replayEnv is the ranks' environment: with the slice log replayed, they
// post wildcards and Iprobe as the program makes them (package mpiapi).
func replayEnv(env []string, sl *replay.Slices) []string {
	if sl == nil {
		return env
	}
	return append(env, replay.EnvSlices+"=1")
}

// finish stops the writer goroutine and flushes what is left: call it once
// the agents have stopped. Safe to call more than once.
func (r *recording) finish() {
	if r.stop != nil {
		close(r.stop)
		<-r.done
		r.stop = nil
		if r.slices != nil {
			r.spend = r.senc.End(r.spend)
		}
		r.flush()
	}
}

// close flushes and closes every file; the first error names its file.
func (r *recording) close() error {
	r.finish()
	var first error
	for i, w := range r.writers {
		if err := w.Close(); err != nil && first == nil {
			first = fmt.Errorf("bcsrun: recording %s: %w", replay.RankFile(r.dir, i), err)
		}
	}
	if r.slices != nil {
		if err := r.slices.Close(); err != nil && first == nil {
			first = fmt.Errorf("bcsrun: recording %s: %w", filepath.Join(r.dir, replay.SlicesName), err)
		}
	}
	return first
}

// checkReplay checks the recording in job.Replay against the job and
// returns its absolute path, the differences worth a warning and, for a
// recording with a slice log that the job can replay (the same nodes and
// configuration), the log.
func checkReplay(job Job, prog string) (string, []string, *replay.Slices, error) {
	dir, err := filepath.Abs(job.Replay)
	if err != nil {
		return "", nil, nil, fmt.Errorf("bcsrun: --replay %s: %w", job.Replay, err)
	}
	m, err := replay.ReadManifest(dir)
	if err != nil {
		return "", nil, nil, fmt.Errorf("bcsrun: %w", err)
	}
	if m.Ranks != job.Ranks {
		return "", nil, nil, fmt.Errorf("bcsrun: --replay %s: the recording has %d ranks, this job -n %d; replay needs the same number", job.Replay, m.Ranks, job.Ranks)
	}
	for r := 0; r < job.Ranks; r++ {
		path := replay.RankFile(dir, r)
		f, err := os.Open(path)
		if err != nil {
			return "", nil, nil, fmt.Errorf("bcsrun: --replay %s: rank %d's records: %w", job.Replay, r, err)
		}
		h := make([]byte, replay.HeaderSize)
		n, _ := io.ReadFull(f, h)
		f.Close()
		if err := replay.CheckHeader(h[:n], path, r, job.Ranks, replay.IDOf(m.Job)); err != nil {
			return "", nil, nil, fmt.Errorf("bcsrun: --replay %s: %w", job.Replay, err)
		}
	}
	now, err := manifestOf(job, prog, m.Job)
	if err != nil {
		return "", nil, nil, err
	}
	diffs := m.Diff(now)
	if !m.Slices {
		return dir, diffs, nil, nil
	}
	if m.Nodes != now.Nodes || m.ConfigHash != now.ConfigHash {
		diffs = append(diffs, "the slices are not replayed (they need the recorded nodes and configuration), only the logged calls")
		return dir, diffs, nil, nil
	}
	if job.Config.Deterministic {
		// Its releases depend on when the ranks block, which a replay
		// does not fix; the mode is reproducible without a log anyway.
		diffs = append(diffs, "the slices are not replayed in deterministic mode (its releases depend on when ranks block), only the logged calls")
		return dir, diffs, nil, nil
	}
	sl, err := replay.ReadSlices(dir, job.Ranks, m.Job)
	if err != nil {
		return "", nil, nil, fmt.Errorf("bcsrun: --replay %s: %w", job.Replay, err)
	}
	return dir, diffs, sl, nil
}

// bytes is the size of a recording's rank files (records and headers).
func (r *recording) bytes() int64 {
	r.finish() // the agents have stopped
	var n int64
	for _, w := range r.writers {
		n += w.Size()
	}
	if r.slices != nil {
		n += r.slices.Size()
	}
	return n
}

// replayReport says how far a replay of the slice log got: node 0's count
// of recorded slices re-formed with the recorded descriptors and plan.
func replayReport(w io.Writer, dir string, sl *replay.Slices, nodes []*node) {
	if sl == nil || len(nodes) == 0 || nodes[0].agent == nil {
		return
	}
	n, busy := nodes[0].agent.Replayed()
	fmt.Fprintf(w, "bcsrun: replayed %s: %d of the %d recorded slices re-formed (%d of the %d with descriptors or a plan), each with the recorded descriptors and plan\n", dir, n, sl.Total, busy, sl.Busy)
}
