package mpiapi

import (
	"fmt"
	"os"
	"os/signal"
	"slices"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/bcsmpi/bcsmpi/internal/jobenv"
	"github.com/bcsmpi/bcsmpi/internal/proto"
	"github.com/bcsmpi/bcsmpi/internal/replay"
	"github.com/bcsmpi/bcsmpi/internal/unix"
	"github.com/bcsmpi/bcsmpi/mds"
)

// Record and replay (bcsrun --record DIR, --replay DIR; the log's format and
// what it holds are package internal/replay's).
//
// A logged call is one whose outcome depends on timing: a receive or probe
// with MPI_ANY_SOURCE or MPI_ANY_TAG, every MPI_Iprobe, the test family
// (Test, Testall, Testany, Testsome, Waitany, Waitsome) over at least one
// active request, and MPI_Cancel of a request the program has not seen
// complete (whether the cancel won; in a recorded or replayed job Cancel
// posts without polling the request first, so that whether it posts does
// not depend on timing). The rank numbers them from 1 whether it records, replays
// or neither matters not: only recorded and replayed jobs count.
//
// Recording: each outcome is appended to the rank's log ring in shared memory
// (its agent drains and writes it); a wildcard receive's record is written
// when the receive completes, under the number it got when it was posted.
// Identical answers in a row (a polling loop's "not yet") are one record
// with a run length, written when the answer changes, at MPI_Finalize, or
// when another record is written.
//
// Replaying: the rank reads its records at MPI_Init and
//   - posts a wildcard receive or probe for the recorded source and tag (as
//     if the program had named them), so it matches what it matched before;
//   - answers Iprobe from the log: "not found" at once, "found" by waiting
//     (a blocking probe) for the recorded message;
//   - answers the test family from the log: it polls the requests as usual
//     (progress), then gives the recorded answer, waiting for the recorded
//     requests to complete where the recorded answer says they had;
//   - does not post a cancel that failed in the recording (the request
//     completes as it did), and checks that one that succeeded succeeds.
//
// When the runtime replays the slice log too (Level B, replay.EnvSlices),
// wildcard receives, probes and Iprobe are posted as the program makes them,
// as they were recorded, and their answers (which the re-formed slices
// reproduce) are checked against the log; so are cancels.
//
// A call that cannot be given its recorded answer — another call than the one
// recorded at its number, a different array length, a named source or tag
// other than the recorded one, a call past the end of the recording, or
// MPI_Finalize before its end — stops the rank with a message naming the
// rank, the call's number and both sides, and the rank exits with status 1
// (bcsrun then ends the job), whatever the error handler: the program is not
// the one recorded. A wildcard receive that never completed in the recording
// has no record and is posted unchanged. A receive posted for its recorded
// source and tag whose message never comes (the sender changed: the job
// deadlocks and bcsrun stops it) is reported when the rank is stopped, as
// the divergence of that call (stuck).
type recordReplay struct {
	calls uint64 // logged calls so far
	// cancels are the requests an MPI_Cancel was logged for, with its
	// number, until they complete (noteMatch).
	cancels map[*Request]uint64
	// waits are the pending requests posted for a recorded source and tag
	// (replay: a wildcard receive or probe, an Iprobe found in the
	// recording), by number: the call as the program made it, for the
	// message when the job stops while one waits (stuck).
	waits map[uint64]string
	rec   *recorder   // recording: BCS_RECORD=1
	log   *replay.Log // replaying: BCS_REPLAY
	dir   string
	// slices: the runtime replays the recording's slices too (Level B,
	// BCS_REPLAY_SLICES=1): wildcards and Iprobe are posted as the program
	// makes them, as in the recording, and their answers checked.
	slices bool
}

type recorder struct {
	enc  replay.Encoder
	open replay.Record // the run not yet written (Op 0: none)
	buf  []byte
}

func (rr *recordReplay) on() bool { return rr.rec != nil || rr.log != nil }

// RecordReplay reports whether this process's job is recorded (bcsrun
// --record) and whether it is replayed (bcsrun --replay); both are false
// before Init. A layer above (the C ABI) refuses what the log cannot
// reproduce.
func RecordReplay() (recorded, replayed bool) {
	if self == nil {
		return false, false
	}
	return self.rr.rec != nil, self.rr.log != nil
}

// initRecordReplay sets up recording or replay as the launcher asked.
func (p *process) initRecordReplay(env jobenv.Env) error {
	if env.Record {
		if p.region.G.LogBytes == 0 {
			return fmt.Errorf("%s=1, but the node's shared memory has no log ring: only bcsrun --record records a job", jobenv.VarRecord)
		}
		p.rr.rec = &recorder{buf: make([]byte, 0, replay.MaxRecord)}
	}
	if env.Replay != "" {
		m, err := replay.ReadManifest(env.Replay)
		if err != nil {
			return fmt.Errorf("%s: %w", jobenv.VarReplay, err)
		}
		if m.Ranks != int(p.size) {
			return fmt.Errorf("%s=%s: the recording has %d ranks, the job %d", jobenv.VarReplay, env.Replay, m.Ranks, p.size)
		}
		l, err := replay.ReadRank(env.Replay, int(p.rank), int(p.size), m.Job)
		if err != nil {
			return err
		}
		p.rr.log, p.rr.dir = l, env.Replay
		p.rr.slices = os.Getenv(replay.EnvSlices) == "1"
		p.holdTerm()
	}
	return nil
}

// logged numbers a logged call.
func (p *process) logged() uint64 {
	p.rr.calls++
	return p.rr.calls
}

// note records r: a run-able answer extends or opens the pending run.
func (p *process) note(r replay.Record) {
	rec := p.rr.rec
	r.Run = 1
	if o := rec.open; o.Op != 0 && o.Same(r) && o.Seq+o.Run == r.Seq && len(r.Indices) == 0 {
		rec.open.Run++
		return
	}
	p.flushLog()
	if r.Op != replay.OpMatch && r.Op != replay.OpCancel && len(r.Indices) == 0 {
		rec.open = r
		return
	}
	for _, c := range replay.Split(r) {
		p.appendLog(c)
	}
}

// flushLog writes the pending run.
func (p *process) flushLog() {
	if rec := p.rr.rec; rec != nil && rec.open.Op != 0 {
		o := rec.open
		rec.open = replay.Record{}
		p.appendLog(o)
	}
}

// appendLog writes one record into the log ring, waiting (a slice at a time)
// while the ring is full. A job that is aborting drops it.
func (p *process) appendLog(r replay.Record) {
	rec := p.rr.rec
	rec.buf = rec.enc.Append(rec.buf[:0], r)
	for !p.blk.LogAppend(rec.buf) {
		atomic.AddUint64(p.blk.LogWaits(), 1)
		if p.region.Aborting() {
			return
		}
		unix.FutexWait(p.blk.Wake(), atomic.LoadUint32(p.blk.Wake()), p.slice)
	}
}

// finishLog ends the log at MPI_Finalize: the END record, or on replay the
// check that the program made every recorded call.
func (p *process) finishLog() {
	if p.rr.rec != nil {
		p.flushLog()
		p.appendLog(replay.Record{Op: replay.OpEnd, Seq: p.rr.calls})
	}
	if l := p.rr.log; l != nil && l.Ended && p.rr.calls != l.End {
		p.diverge(p.rr.calls+1, "MPI_Finalize", "the recording has %d logged calls of this rank, the program made %d before MPI_Finalize", l.End, p.rr.calls)
	}
}

// diverge stops the rank: its program no longer makes the recorded calls.
func (p *process) diverge(seq uint64, what, format string, a ...any) {
	fmt.Fprintf(os.Stderr, "bcsmpi: replay diverged from the recording %s: rank %d, call %d %s: %s\n", p.rr.dir, p.rank, seq, what, fmt.Sprintf(format, a...))
	p.mmds.dump()
	os.Exit(1)
}

func peerName(peer int) string {
	if peer == AnySource {
		return "ANY_SOURCE"
	}
	return fmt.Sprint(peer)
}

func tagName(tag int) string {
	if tag == AnyTag {
		return "ANY_TAG"
	}
	return fmt.Sprint(tag)
}

// expect is the record answering logged call seq, a call of kind call; any
// other answer is a divergence.
func (p *process) expect(seq uint64, call replay.Call, what string) replay.Record {
	l := p.rr.log
	rec, ok := l.At(seq)
	switch {
	case !ok && seq > l.Last() && l.Ended:
		p.diverge(seq, what, "the recording ends after %d logged calls of this rank, where it called MPI_Finalize", l.End)
	case !ok && seq > l.Last():
		p.diverge(seq, what, "the recording stops after %d logged calls of this rank (the recorded run ended before this call)", l.Last())
	case !ok:
		p.diverge(seq, what, "the recorded run made a wildcard receive or probe here, which never completed")
	case rec.Call != call:
		p.diverge(seq, what, "recorded %s (%s)", rec.Call, rec.Outcome())
	}
	return rec
}

// wildcard is called where a receive or probe is posted (call, on c, from
// peer with tag, arguments checked). With MPI_ANY_SOURCE or MPI_ANY_TAG it is
// a logged call: seq is its number, and on replay peer and tag become the
// recorded ones. seq is 0 for a call that is not logged.
func (p *process) wildcard(call string, c *Comm, peer, tag int) (int, int, uint64) {
	if !p.rr.on() || (peer != AnySource && tag != AnyTag) {
		return peer, tag, 0
	}
	seq := p.logged()
	l := p.rr.log
	if l == nil {
		return peer, tag, seq
	}
	what := fmt.Sprintf("%s(source %s, tag %s)", call, peerName(peer), tagName(tag))
	if p.rr.slices {
		p.waitFor(seq, what) // posted as made; its match is checked when it completes (noteMatch)
		return peer, tag, seq
	}
	if _, ok := l.At(seq); !ok && (seq <= l.Last() || !l.Ended) {
		return peer, tag, seq // it never completed in the recorded run (or the recording stops before it)
	}
	rec := p.expect(seq, replay.CallOf(call), what)
	switch {
	case peer != AnySource && peer != rec.Source:
		p.diverge(seq, what, "recorded source %d tag %d; the program posted a receive from source %d", rec.Source, rec.Tag, peer)
	case tag != AnyTag && tag != rec.Tag:
		p.diverge(seq, what, "recorded source %d tag %d; the program posted a receive for tag %d", rec.Source, rec.Tag, tag)
	case rec.Source >= c.size:
		p.diverge(seq, what, "recorded source %d, not a rank of this communicator of %d ranks", rec.Source, c.size)
	}
	p.waitFor(seq, what)
	return rec.Source, rec.Tag, seq
}

// noteMatch records the outcome of a logged wildcard receive or probe, and
// of a logged MPI_Cancel, when the request completes (finish); on replay it
// checks the cancel's outcome.
func (p *process) noteMatch(r *Request) {
	if seq, ok := p.rr.cancels[r]; ok {
		delete(p.rr.cancels, r)
		p.cancelDone(r, seq)
	}
	if p.rr.waits != nil && r.logSeq != 0 {
		what := p.rr.waits[r.logSeq]
		delete(p.rr.waits, r.logSeq)
		if p.rr.slices && r.status.Source >= 0 && r.status.Tag >= 0 {
			rec := p.expect(r.logSeq, replay.CallOf(r.call), what)
			if rec.Op == replay.OpMatch && (rec.Source != r.status.Source || rec.Tag != r.status.Tag) {
				p.diverge(r.logSeq, what, "recorded source %d tag %d; it matched source %d tag %d", rec.Source, rec.Tag, r.status.Source, r.status.Tag)
			}
		}
	}
	if p.rr.rec == nil || r.logSeq == 0 || r.status.Source < 0 || r.status.Tag < 0 {
		return // not logged, or no message (an error): replay posts it unchanged
	}
	p.note(replay.Record{Op: replay.OpMatch, Call: replay.CallOf(r.call), Seq: r.logSeq, Source: r.status.Source, Tag: r.status.Tag})
}

// iprobeLogged is MPI_Iprobe or MPI_Improbe (call) in a recorded or replayed
// job, up to the answer (arguments not yet checked; source is not
// MPI_PROC_NULL; the caller counts it in the MMDS).
func (p *process) iprobeLogged(call string, c *Comm, source, tag int) (bool, Status, error) {
	if err := p.checkComm(call, c); err != nil {
		return false, Status{}, err
	}
	if err := p.checkPeer(call, "source", c, source, true); err != nil {
		return false, Status{}, err
	}
	if err := p.checkTag(call, tag, true); err != nil {
		return false, Status{}, err
	}
	seq := p.logged()
	if p.rr.log != nil && !p.rr.slices {
		what := fmt.Sprintf("%s(source %s, tag %s)", call, peerName(source), tagName(tag))
		rec := p.expect(seq, replay.CallOf(call), what)
		if !rec.Flag {
			return false, Status{Source: AnySource, Tag: AnyTag}, nil
		}
		switch {
		case source != AnySource && source != rec.Source, tag != AnyTag && tag != rec.Tag, rec.Source >= c.size:
			p.diverge(seq, what, "recorded %s", rec.Outcome())
		}
		r, err := probe(p, call, proto.KindProbe, c, rec.Source, rec.Tag) // wait for the recorded message
		if err != nil {
			return false, Status{}, err
		}
		r.logSeq = seq
		p.waitFor(seq, what)
		st, err := p.wait(r, call)
		return err == nil, st, err
	}
	r, err := probe(p, call, proto.KindIprobe, c, source, tag)
	if err != nil {
		return false, Status{}, err
	}
	st, err := p.wait(r, call)
	found := err == nil && st.Source != AnySource
	if err == nil && p.rr.log != nil { // replaying the slices: the runtime's answer is the recorded one
		what := fmt.Sprintf("%s(source %s, tag %s)", call, peerName(source), tagName(tag))
		rec := p.expect(seq, replay.CallOf(call), what)
		if rec.Flag != found || found && (rec.Source != st.Source || rec.Tag != st.Tag) {
			now := replay.Record{Op: replay.OpProbe, Flag: found, Source: st.Source, Tag: st.Tag}
			p.diverge(seq, what, "recorded %s; the runtime answered %s", rec.Outcome(), now.Outcome())
		}
		return found, st, err
	}
	if err == nil {
		p.note(replay.Record{Op: replay.OpProbe, Call: replay.CallOf(call), Seq: seq, Flag: found, Source: max(st.Source, 0), Tag: max(st.Tag, 0)})
	}
	return found, st, err
}

// testLogged gives Test's answer over one (rs nil) or Testall's over rs
// (all polled: done) in a recorded or replayed job; on replay it waits for
// them if the recorded flag is true.
func (p *process) testLogged(call string, one *Request, rs []*Request, done bool) bool {
	seq := p.logged()
	c := replay.CallOf(call)
	if p.rr.log == nil {
		p.note(replay.Record{Op: replay.OpFlag, Call: c, Seq: seq, Flag: done})
		return done
	}
	rec := p.expect(seq, c, call)
	if rec.Flag && !done {
		p.block(call, func() bool {
			if one != nil {
				return p.poll(one)
			}
			all := true
			for _, r := range rs {
				if r != nil {
					all = p.poll(r) && all
				}
			}
			return all
		})
	}
	return rec.Flag
}

// anyLogged gives Testany's or Waitany's index over rs in a recorded or
// replayed job: found is the index polling found (-1: none) — for Waitany
// while recording, the one it waited for. On replay it is the recorded
// index, waited for (blocking code: MPI_Waitany); -1 only for Testany.
func (p *process) anyLogged(call string, rs []*Request, found int) int {
	seq := p.logged()
	c := replay.CallOf(call)
	if p.rr.log == nil {
		p.note(replay.Record{Op: replay.OpIndex, Call: c, Seq: seq, NReq: len(rs), Index: found})
		return found
	}
	rec := p.expect(seq, c, call)
	switch {
	case rec.NReq != len(rs):
		p.diverge(seq, call, "recorded over %d requests (%s); the program passed %d", rec.NReq, rec.Outcome(), len(rs))
	case rec.Index >= 0 && rs[rec.Index] == nil:
		p.diverge(seq, call, "recorded %s; that entry is MPI_REQUEST_NULL now", rec.Outcome())
	case rec.Index < 0 && c == replay.CallWaitany:
		p.diverge(seq, call, "the recording says MPI_Waitany returned no index (%s)", rec.Outcome())
	case rec.Index < 0:
		return -1
	}
	r := rs[rec.Index]
	p.block("MPI_Waitany", func() bool { return p.poll(r) })
	return rec.Index
}

// waitanyReplay is MPI_Waitany on replay: the recorded index, waited for.
func (p *process) waitanyReplay(call string, rs []*Request, t0 int64) (int, Status, error) {
	idx := p.anyLogged(call, rs, -1)
	r := rs[idx]
	p.retire(r, call)
	rs[idx] = nil
	p.mmds.end(mds.Waitany, t0, int64(r.status.bytes), true)
	return idx, r.status, r.err
}

// noteSome records the indices Testsome or Waitsome returned over rs
// (recording only; rs's completed entries are nil by now).
func (p *process) noteSome(call string, rs []*Request, idx []int) {
	if p.rr.rec != nil {
		p.note(replay.Record{Op: replay.OpSome, Call: replay.CallOf(call), Seq: p.logged(), NReq: len(rs), Indices: idx})
	}
}

// someReplay is Testsome or Waitsome on replay: it polls rs (progress),
// waits for the recorded indices and returns only those.
func (p *process) someReplay(call string, rs []*Request) (int, []int, []Status, error) {
	seq := p.logged()
	c := replay.CallOf(call)
	p.someDone(rs)
	rec := p.expect(seq, c, call)
	if rec.NReq != len(rs) {
		p.diverge(seq, call, "recorded over %d requests (%s); the program passed %d", rec.NReq, rec.Outcome(), len(rs))
	}
	if len(rec.Indices) == 0 && c == replay.CallWaitsome {
		p.diverge(seq, call, "the recording says MPI_Waitsome completed nothing (%s)", rec.Outcome())
	}
	for _, i := range rec.Indices {
		if rs[i] == nil {
			p.diverge(seq, call, "recorded %s; entry %d is MPI_REQUEST_NULL now", rec.Outcome(), i)
		}
	}
	p.block("MPI_Waitsome", func() bool {
		all := true
		for _, i := range rec.Indices {
			all = p.poll(rs[i]) && all
		}
		return all
	})
	var sts []Status
	var first error
	for _, i := range rec.Indices {
		r := rs[i]
		p.retire(r, call)
		rs[i] = nil
		sts = append(sts, r.status)
		if first == nil {
			first = r.err
		}
	}
	return len(rec.Indices), slices.Clone(rec.Indices), sts, first
}

// cancelLogged is MPI_Cancel of r in a recorded or replayed job, r being
// active and, as far as the program has seen, not complete: a logged call,
// since whether the cancel wins depends on when the request's match comes.
// It reports whether Cancel goes on (polls r and posts the cancel). On
// replay, a cancel that failed in the recording is not posted, so r
// completes as it did; one that succeeded is posted and checked when r
// completes (cancelDone).
func (p *process) cancelLogged(r *Request) bool {
	seq := p.logged()
	l := p.rr.log
	if l == nil {
		p.trackCancel(r, seq)
		return true
	}
	if _, ok := l.At(seq); !ok && (seq <= l.Last() || !l.Ended) {
		return true // its request never completed in the recorded run
	}
	rec := p.expect(seq, replay.CallCancel, cancelName(r))
	if !rec.Flag && !p.rr.slices {
		return false
	}
	p.trackCancel(r, seq)
	return true
}

func (p *process) trackCancel(r *Request, seq uint64) {
	if p.rr.cancels == nil {
		p.rr.cancels = map[*Request]uint64{}
	}
	p.rr.cancels[r] = seq
}

func cancelName(r *Request) string {
	return fmt.Sprintf("MPI_Cancel(request #%d, %s)", r.gen, r.call)
}

// cancelDone records whether the logged cancel seq of r took effect, or on
// replay checks that it did, as recorded.
func (p *process) cancelDone(r *Request, seq uint64) {
	if p.rr.rec != nil {
		p.note(replay.Record{Op: replay.OpCancel, Call: replay.CallCancel, Seq: seq, Flag: r.status.cancelled})
		return
	}
	rec, ok := p.rr.log.At(seq)
	if ok && rec.Flag && !r.status.cancelled {
		p.diverge(seq, cancelName(r), "recorded: %s; in this run the request completed first (source %d tag %d)",
			rec.Outcome(), r.status.Source, r.status.Tag)
	}
	if ok && !rec.Flag && r.status.cancelled {
		p.diverge(seq, cancelName(r), "recorded: %s; in this run the cancel succeeded", rec.Outcome())
	}
}

func (p *process) waitFor(seq uint64, what string) {
	if p.rr.waits == nil {
		p.rr.waits = map[uint64]string{}
	}
	p.rr.waits[seq] = what
}

// stuck is called on replay when the job stops while the rank waits (it is
// aborting): every pending request posted for a recorded source and tag is
// a call the recorded run answered and this one cannot, since that message
// was never sent — the program no longer makes the recorded calls (a rank
// the runtime found deadlocked, typically: the recorded sender went
// elsewhere). Each is reported as the divergence it is, naming the rank,
// the call, the recorded source and tag, and the message it waits for.
func (p *process) stuck() {
	if p.rr.log == nil || len(p.rr.waits) == 0 {
		return
	}
	for _, r := range p.owner {
		if r == nil || r.logSeq == 0 || r.done {
			continue
		}
		what, ok := p.rr.waits[r.logSeq]
		rec, rok := p.rr.log.At(r.logSeq)
		if !ok || !rok {
			continue
		}
		fmt.Fprintf(os.Stderr, "bcsmpi: replay diverged from the recording %s: rank %d, call %d %s: recorded source %d tag %d; the replay waits for that message (from world rank %d, tag %d), which was never sent before the job stopped\n",
			p.rr.dir, p.rank, r.logSeq, what, rec.Source, rec.Tag, r.comm.worldRank(rec.Source), rec.Tag)
	}
}

// termGrace is how long a replaying rank that bcsrun stops (SIGTERM while
// the job aborts) leaves its goroutine to notice the abort and report the
// call it waits in (stuck); bcsrun kills at 2 s.
const termGrace = time.Second

// holdTerm: on replay, SIGTERM during an abort wakes the rank's goroutine
// and leaves it termGrace to exit by itself (abortExit, which reports a
// call that waits for a recorded message); any other SIGTERM, and one the
// rank does not exit on in time, ends the rank as the default action would
// (reset, then raised again). It holds SIGTERM only where its action is the
// default (termDefault): a program that ignores SIGTERM or handles it itself
// keeps doing so under replay, as when it was recorded.
func (p *process) holdTerm() {
	if !termDefault() {
		return
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM)
	go func() {
		<-sig
		if p.region.Aborting() {
			atomic.AddUint32(p.blk.Wake(), 1)
			unix.FutexWake(p.blk.Wake(), 1)
			time.Sleep(termGrace)
		}
		signal.Reset(syscall.SIGTERM)
		syscall.Kill(os.Getpid(), syscall.SIGTERM)
		time.Sleep(termGrace) // the signal is delivered to some thread
		os.Exit(128 + int(syscall.SIGTERM))
	}()
}

// termDefault reports whether SIGTERM's action in this process is the
// default one, to end it: SIG_DFL (a C program that left it alone: the Go
// runtime of the C library handles only what is notified), or the Go
// runtime's own handler (the one it has for SIGSEGV, in every build mode)
// with SIGTERM not ignored through os/signal (a Go program; one that
// handles SIGTERM itself through signal.Notify is not told apart). SIG_IGN
// or another handler (a C program's own) is not the default.
func termDefault() bool {
	t, ok := sigaction(syscall.SIGTERM, nil)
	if !ok {
		return false
	}
	switch t.handler() {
	case sigDFL:
		return true
	case sigIGN:
		return false
	}
	g, ok := sigaction(syscall.SIGSEGV, nil)
	return ok && t.handler() == g.handler() && !signal.Ignored(syscall.SIGTERM)
}
