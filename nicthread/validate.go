package nicthread

import (
	"errors"
	"fmt"

	"github.com/bcsmpi/bcsmpi/internal/core"
	"github.com/bcsmpi/bcsmpi/internal/proto"
	"github.com/bcsmpi/bcsmpi/internal/replay"
	"github.com/bcsmpi/bcsmpi/internal/shm"
	"github.com/bcsmpi/bcsmpi/internal/unix"
)

// What a rank writes into shared memory is input (STYLE.md habit 14): a rank
// can write every byte of the region, its own block's and its neighbours'.
// The agent therefore trusts only its own tables — which block belongs to
// which world rank (NewAgent), which process the launcher started for it
// (Spawned), which process attached (latched once) and what each rank posted
// last (sequence number, post slice) — and checks every field a rank writes
// against them before anything reaches the scheduler or a completion record.
// A violation aborts the job with a *JobError naming the rank (the block's,
// never the one the rank claims) and the field; it is never a panic and
// never a write outside the rank's own block.

// spawnDepth bounds the walk from an attached process up to the one the
// launcher started (wrappers such as `time ./app` or `sh -c` fork the program).
const spawnDepth = 16

// Spawned tells the agent which process the launcher started for rank r, a
// rank of this node. The agent drains nothing from r's block until it knows;
// then it accepts the block's attach word only if it holds pid or a
// descendant of pid. Safe for concurrent use with the slice loop.
func (a *Agent) Spawned(r proto.Rank, pid int) {
	if r < 0 || int(r) >= a.size || a.localOf[r] < 0 || pid <= 0 {
		panic(fmt.Sprintf("nicthread: node %d: Spawned(rank %d, pid %d): the launcher must name a rank of this node and a started process", a.node, r, pid))
	}
	a.spawned[a.localOf[r]].Store(int64(pid))
}

// violation is the job error for a value block l's rank wrote.
func (a *Agent) violation(l int, fe *shm.FieldError) error {
	return a.fail(a.rankOf[l], "shared memory: %v", fe)
}

// checkControl checks block l's control page at a strobe and reports whether
// the block's process has attached and been verified (nothing is drained
// before). Fields: world rank (the agent's), state (none → init → finalized,
// never back), blocked (a proto.CallNames index), pid (the attach word).
func (a *Agent) checkControl(l int) (bool, error) {
	b := a.blocks[l]
	me := a.rankOf[l]
	if w := b.WorldRank(); w != me {
		return false, a.violation(l, &shm.FieldError{Field: "control page world_rank", Value: w,
			Want: fmt.Sprintf("%d, written by the agent (a rank cannot change which rank it is)", me)})
	}
	s := b.State()
	if s > shm.StateFinalized || s < a.lastState[l] {
		return false, a.violation(l, &shm.FieldError{Field: "control page state", Value: s,
			Want: fmt.Sprintf("%d .. %d (it was %d; none 0 → init 1 → finalized 2, never back)", a.lastState[l], shm.StateFinalized, a.lastState[l])})
	}
	a.lastState[l] = s
	if c := b.Blocked(); int(c) >= len(proto.CallNames) {
		return false, a.violation(l, &shm.FieldError{Field: "control page blocked", Value: c,
			Want: fmt.Sprintf("0 .. %d (an index of proto.CallNames)", len(proto.CallNames)-1)})
	}
	pid := b.PID()
	if have := a.pids[l].Load(); have != 0 {
		if int64(pid) != have {
			return false, a.violation(l, &shm.FieldError{Field: "control page pid", Value: pid,
				Want: fmt.Sprintf("%d, the process that attached (attachment is once per rank)", have)})
		}
		return true, nil
	}
	if pid == 0 {
		return false, nil // not attached yet
	}
	if pid < 0 {
		return false, a.violation(l, &shm.FieldError{Field: "control page pid", Value: pid, Want: "a process id > 0"})
	}
	spawned := int(a.spawned[l].Load())
	if spawned == 0 {
		return false, nil // the launcher has not reported the process yet: check next slice
	}
	ok := pid == spawned
	if !ok {
		var err error
		ok, err = unix.DescendsFrom(pid, spawned, spawnDepth)
		if errors.Is(err, unix.ErrProcessGone) {
			return false, nil // gone before it could be checked: its ring is never drained
		}
		if err != nil {
			return false, a.fail(me, "checking the process that attached (pid %d): %v", pid, err)
		}
	}
	if !ok {
		return false, a.violation(l, &shm.FieldError{Field: "control page pid", Value: pid,
			Want: fmt.Sprintf("%d, the process bcsrun started for rank %d, or a process it started (a process a rank does not descend from cannot attach as it)", spawned, me)})
	}
	a.pids[l].Store(int64(pid))
	return true, nil
}

// checkDescriptor checks one descriptor drained from block l in slice k
// (Drain has checked the ring head, the encoding and the inline length).
func (a *Agent) checkDescriptor(l int, k proto.SliceID, d proto.Descriptor) error {
	me := a.rankOf[l]
	switch {
	case d.Rank != me:
		return a.violation(l, &shm.FieldError{Field: "descriptor rank", Value: d.Rank,
			Want: fmt.Sprintf("%d, the rank of this block (a rank posts only as itself)", me)})
	case int(d.Req) >= a.region.G.ReqMax:
		return a.violation(l, &shm.FieldError{Field: "descriptor req", Value: d.Req,
			Want: fmt.Sprintf("0 .. %d (requests_max %d)", a.region.G.ReqMax-1, a.region.G.ReqMax)})
	case d.Seq <= a.lastSeq[l]:
		return a.violation(l, &shm.FieldError{Field: "descriptor seq", Value: d.Seq,
			Want: fmt.Sprintf("more than %d (the previous descriptor's)", a.lastSeq[l])})
	case d.PostSlice < a.lastPost[l] || d.PostSlice >= k:
		return a.violation(l, &shm.FieldError{Field: "descriptor post_slice", Value: d.PostSlice,
			Want: fmt.Sprintf("%d .. %d (the previous descriptor's slice .. this slice - 1)", a.lastPost[l], k-1)})
	case d.Addr+d.Len < d.Addr:
		return a.violation(l, &shm.FieldError{Field: "descriptor len", Value: d.Len,
			Want: fmt.Sprintf("at most %d (addr %#x + len must not wrap)", ^d.Addr, d.Addr)})
	case d.Inline && d.Kind != proto.KindSend:
		return a.violation(l, &shm.FieldError{Field: "descriptor kind (with an inline payload)", Value: d.Kind, Want: "send (only sends carry an inline payload)"})
	}
	if err := core.CheckDescriptor(d, a.size); err != nil {
		return a.fail(me, "bad descriptor %s: %v", d.Describe(), err)
	}
	a.lastSeq[l], a.lastPost[l] = d.Seq, d.PostSlice
	return nil
}

// drainLog drains block l's replay log ring (a recorded job), checks every
// record the rank wrote — whole records, known ops and calls, runs of at
// least one, sources below the job's size, indices inside their arrays, call
// numbers that do not wrap, nothing after END (replay.Decoder) — and hands
// them to OnLog. A refused record fails the job naming the rank and the
// field, before anything of the drain reaches the recording.
func (a *Agent) drainLog(l int) error {
	buf, err := a.blocks[l].LogDrain(a.logBuf[:0])
	a.logBuf = buf[:0]
	var fe *shm.FieldError
	if errors.As(err, &fe) {
		return a.violation(l, fe)
	}
	if len(buf) == 0 {
		return nil
	}
	if _, err := a.logDec[l].Check(buf); err != nil {
		var re *replay.FieldError
		switch {
		case errors.Is(err, replay.ErrShort):
			return a.violation(l, &shm.FieldError{Field: "log ring head", Value: "inside a record", Want: "at a record boundary (a rank appends whole records)"})
		case errors.As(err, &re):
			return a.violation(l, &shm.FieldError{Field: "log record (" + re.Op.String() + ") " + re.Field, Value: re.Value, Want: re.Want})
		}
		return a.fail(a.rankOf[l], "shared memory: log ring: %v", err)
	}
	a.onLog(a.rankOf[l], buf)
	return nil
}

// DrainLogs drains the log rings of the attached ranks once more: what they
// logged after the last strobe (MPI_Finalize's END, a rank's last records
// before it was stopped). Call it after the agent has stopped, from the
// goroutine that owns it; without OnLog it does nothing.
func (a *Agent) DrainLogs() error {
	if a.logDec == nil {
		return nil
	}
	var first error
	for l := range a.blocks {
		if a.pids[l].Load() == 0 {
			continue // never attached and checked: nothing of it is read
		}
		if err := a.drainLog(l); err != nil && first == nil {
			first = err
		}
	}
	return first
}
