package kernel

import (
	"math"
	"math/bits"
	"sync/atomic"
	"unsafe"

	"github.com/bcsmpi/bcsmpi/internal/unix"
)

// The records' kinds and flags (sched.bpf.c's EV_*, FL_*).
const (
	evSwitch  = 1
	evWaking  = 2
	evWakeNew = 3
	evMigrate = 4
	evComm    = 5

	flPreempted = 1
	flLatency   = 2
	flWaking    = 4
)

// The summed fields of a row: Metrics' first nsum.
const (
	fOnCPU = iota
	fRunQ
	fPreempt
	fWake
	fNWake
	fNIvcsw
	fNMigr
	nsum
)

// topCap is the number of interfering (entity, task) pairs one slice's
// candidates hold; a pair that does not fit is counted in Dropped.
const topCap = 32

// maxRefused bounds the set of refused interference pairs (beyond it a
// refused pair may be counted by Dropped more than once).
const maxRefused = 1 << 16

// slack is how far behind the clock the reader stops taking records: a
// program takes its time stamp some ns before its record is visible, and
// the records of all CPUs are taken in time order up to the same instant.
const slack = 2_000_000 // ns

type intfKey struct {
	Ent uint32
	Pid uint32
}

type cand struct {
	k  intfKey
	ns int64
}

type topEntry struct {
	pid uint32
	ns  int64
}

// cpuState is what the reader knows of one CPU from its records.
type cpuState struct {
	start     int64  // when curr was switched in (the last logged switch), 0: not seen
	currEnt   int    // entity of curr, -1: none
	currTid   uint32 // the task switched in last
	waitEnt   int    // entity of the task marked waiting here, -1: none
	waitTid   uint32
	waitSince int64
	curr      *task // currTid's state when tracked, nil: none or not followed
}

// task is a tracked thread's state.
type task struct {
	since int64 // runnable since (woken or preempted), 0: running or asleep
	wake  int64 // woken at (the latency clock), 0: none pending
	ent   int   // its entity (the one its wait counts for)
	wi    int   // its index in reader.waiting while since != 0
}

// reader turns the programs' records into rows (Monitor.drain); under
// Monitor.mu.
type reader struct {
	m      *Monitor
	d      uint64 // the first slice not recorded
	qAt    uint64 // the slice of the last record taken
	lastTs int64  // the last record's time
	tail   []uint64
	stage  [][]schedEv // per CPU: records read in this drain
	pos    []int
	act    []int // the CPUs with records staged, in order: merge scans only those
	cs     []cpuState
	tasks  map[uint32]*task
	tcache [256]struct { // tasks by tid % 256, in front of the map
		tid uint32
		t   *task
	}
	pool    []task
	nTasks  []int // per entity
	waiting []*task
	acc     []int64 // per (slice − d, entity, field)
	bnd     []int64 // per slice % ring: when it began (Monitor.bounds of slices d .. c)
	cands   []cand  // per (slice − d): topCap candidates
	nCands  []int   // per slice − d
	open    []int64 // per (entity, field): the open intervals' parts in the slice being recorded
	top     []topEntry
	vals    []int64
	hist    []int64           // per (entity, bucket)
	itot    map[intfKey]int64 // the whole run's interference by pair, filled at Dump from ipairs
	ipairs  []cand            // the pairs' totals; ikeys indexes them
	ikeys   map[intfKey]int32
	refused map[intfKey]struct{} // pairs refused (counted in dropped once each, up to maxRefused)
	icache  [1024]struct {       // ipairs' indexes by pair hash, in front of ikeys
		k intfKey
		i int32 // index + 1, 0: none, -1: not kept (over InterferersPerEntity)
	}
	nIntf    []int // per entity: pairs in itot
	comm     map[uint32]string
	dropped  int64
	records  int64 // taken
	lostRecs int64
	backlog  uint64 // the most records a CPU's log held unread at the last drain
}

func (r *reader) init(m *Monitor) {
	r.m = m
	ring, nent := int(m.ring), m.nent
	r.tail = make([]uint64, m.ncpu)
	r.stage = make([][]schedEv, m.ncpu)
	for i := range r.stage {
		r.stage[i] = make([]schedEv, 0, m.nlog)
	}
	r.pos = make([]int, m.ncpu)
	r.act = make([]int, 0, m.ncpu)
	r.cs = make([]cpuState, m.ncpu)
	for i := range r.cs {
		r.cs[i] = cpuState{currEnt: -1, waitEnt: -1}
	}
	nt := max(256, TasksPerEntity*nent)
	r.tasks = make(map[uint32]*task, nt)
	r.pool = make([]task, 0, nt)
	r.nTasks = make([]int, nent)
	r.waiting = make([]*task, 0, nt)
	r.acc = make([]int64, ring*nent*nsum)
	r.bnd = make([]int64, ring)
	r.cands = make([]cand, ring*topCap)
	r.nCands = make([]int, ring)
	r.open = make([]int64, nent*nsum)
	r.top = make([]topEntry, nent*Top)
	r.vals = make([]int64, len(Metrics))
	r.hist = make([]int64, nent*HistBuckets)
	// The whole run's pairs grow as they are seen (at most
	// InterferersPerEntity per entity): sized for that bound up front they
	// would take hundreds of MB at 1,024 ranks, outside KernelBytesMax.
	r.itot = make(map[intfKey]int64)
	r.ikeys = make(map[intfKey]int32)
	r.refused = make(map[intfKey]struct{})
	r.nIntf = make([]int, nent)
	r.comm = make(map[uint32]string)
}

// bound is when slice q began, from the reader's copy of the bounds of
// slices d .. c (taken at the start of each drain: Publish writes them on
// another CPU).
func (r *reader) bound(q uint64) int64 { return r.bnd[q&(r.m.ring-1)] }

// drain takes the records up to the horizon (slack behind now; all of them
// when final), in time order over the CPUs, and records the slices that
// ended before it: what the records credited, plus the parts of the
// intervals still open at the horizon (a task running, a task waiting,
// another task running while it waits). An interval credited when it ends
// leaves the slices already recorded alone.
//
// A drain by Publish (byPublish: the reader starved) takes the records up
// to now: slices published faster than slack would otherwise never be
// recorded.
func (m *Monitor) drain(final, byPublish bool) {
	r := &m.rd
	now := unix.Now()
	c := m.cur.Load()
	ring := m.ring
	if c >= ring-2 && r.d < c-(ring-2) { // their bounds and labels may be reused
		m.lost += int64(c - (ring - 2) - r.d)
		r.advance(c-(ring-2), c)
	}
	r.qAt = max(r.qAt, r.d)
	r.snapBounds(c)
	hz := now - slack
	if byPublish {
		hz = now
	}
	if final {
		hz = math.MaxInt64
	}
	hz = r.read(hz)
	r.merge(hz, c)
	r.registeredRunning()
	if final {
		hz = now
	}
	last := r.d
	for last < c && r.bound(last+1) <= hz {
		last++
	}
	for q := r.d; q < last; q++ {
		r.record(q, hz)
	}
	r.advance(last, c)
	m.done.Store(last)
}

// snapBounds copies the bounds of slices d .. c.
func (r *reader) snapBounds(c uint64) {
	mask := r.m.ring - 1
	for q := r.d; q <= c; q++ {
		r.bnd[q&mask] = r.m.bounds[q&mask].Load()
	}
}

// read copies each CPU's new records into its stage, and returns the
// horizon lowered to where a CPU's log has a record still being written.
func (r *reader) read(hz int64) int64 {
	m := r.m
	n := m.nlog
	r.act = r.act[:0]
	r.backlog = 0
	for cpu := range m.ncpu {
		st := r.stage[cpu][:0]
		r.pos[cpu] = 0
		h := atomic.LoadUint64(&m.cpus[cpu].Head)
		t := r.tail[cpu]
		r.backlog = max(r.backlog, h-t)
		if h-t > n { // overwritten before read
			r.lostRecords(cpu, h-n-t)
			t = h - n
		}
		log := m.logs[cpu*int(n):][:n]
		for i := t; i < h; i++ {
			e := &log[i%n]
			if atomic.LoadUint32(&e.Seq) != uint32(i+1) { // being written: its time is at least the last one's
				last := r.lastTs
				for j := len(st) - 1; j >= 0; j-- {
					if st[j].Kind != evComm { // a name's record holds no time
						last = max(last, int64(st[j].Ts))
						break
					}
				}
				hz = min(hz, last)
				break
			}
			st = append(st, *e)
		}
		// A record copied while a program was already reusing its place
		// may be torn: drop those.
		if h2 := atomic.LoadUint64(&m.cpus[cpu].Head); h2 > t+n {
			bad := min(h2-n-t, uint64(len(st)))
			r.lostRecords(cpu, bad)
			st = st[bad:]
			t += bad
		}
		r.tail[cpu] = t
		r.stage[cpu] = st
		if len(st) > 0 {
			r.act = append(r.act, cpu)
		}
	}
	return hz
}

// registeredRunning takes the task running on a CPU whose switch-in the
// programs did not log, or logged as untracked, because the task was
// registered only afterwards (a rank's process switched in before
// AddRank): a registered id running on a CPU that no record, taken or
// pending, brought in as tracked has been running there since before its
// registration.
func (r *reader) registeredRunning() {
	m := r.m
	for cpu := range r.cs {
		k := atomic.LoadUint32(&m.cpus[cpu].Curr)
		cs := &r.cs[cpu]
		if k == 0 || (k == cs.currTid && cs.currEnt >= 0) {
			continue
		}
		st := r.stage[cpu]
		if atomic.LoadUint64(&m.cpus[cpu].Head) != r.tail[cpu]+uint64(len(st)-r.pos[cpu]) {
			continue // a record being written
		}
		pending := false
		for _, e := range st[r.pos[cpu]:] {
			pending = pending || (e.Kind == evSwitch && e.B == k)
		}
		if pending {
			continue
		}
		m.idsMu.RLock()
		e, ok := m.ids[k]
		at := m.regAt[k]
		m.idsMu.RUnlock()
		if ok {
			cs.start, cs.currEnt, cs.currTid, cs.curr = max(cs.start, at), e, k, r.task(k, e, false)
		}
	}
}

// lostRecords counts n records of cpu lost and forgets what the reader
// knew of the CPU: its next switch says it again.
func (r *reader) lostRecords(cpu int, n uint64) {
	if n == 0 {
		return
	}
	r.lostRecs += int64(n)
	r.cs[cpu] = cpuState{currEnt: -1, waitEnt: -1}
}

// merge takes the staged records older than hz in time order (each CPU's
// are in order), c being the slice running when the drain began. It scans
// the CPUs with records left (act), not every possible CPU: a host's idle
// CPUs cost nothing per record.
func (r *reader) merge(hz int64, c uint64) {
	for {
		best, bestTs := -1, int64(math.MaxInt64)
		for i := 0; i < len(r.act); i++ {
			cpu := r.act[i]
			st := r.stage[cpu]
			p := r.pos[cpu]
			for p < len(st) && st[p].Kind == evComm { // a name goes with the record after it
				r.name(&st[p])
				p++
				r.tail[cpu]++
			}
			r.pos[cpu] = p
			if p == len(st) { // none left: out of act, which stays in CPU order
				r.act = append(r.act[:i], r.act[i+1:]...)
				i--
				continue
			}
			if int64(st[p].Ts) < hz && int64(st[p].Ts) < bestTs {
				best, bestTs = cpu, int64(st[p].Ts)
			}
		}
		if best < 0 {
			return
		}
		e := &r.stage[best][r.pos[best]]
		r.pos[best]++
		r.tail[best]++
		r.records++
		now := max(bestTs, r.lastTs) // a late record: as if at the last one's time
		r.lastTs = now
		for r.qAt < c && r.bound(r.qAt+1) <= now {
			r.qAt++
		}
		switch e.Kind {
		case evSwitch:
			r.onSwitch(best, e, now)
		case evWaking, evWakeNew:
			r.onWake(e, now)
		case evMigrate:
			r.onMigrate(e)
		}
	}
}

// name keeps the task's latest name (a task renames itself at exec).
func (r *reader) name(e *schedEv) {
	b := (*[16]byte)(unsafe.Pointer(&e.Ts))[:]
	n := 0
	for n < len(b) && b[n] != 0 {
		n++
	}
	if s, ok := r.comm[e.A]; !ok || s != string(b[:n]) {
		r.comm[e.A] = string(b[:n])
	}
}

// ent is a record's entity field (entity + 1) as an entity, -1: none.
func (r *reader) ent(v uint32) int {
	if v == 0 || int(v) > r.m.nent {
		return -1
	}
	return int(v) - 1
}

func (r *reader) task(tid uint32, e int, create bool) *task {
	c := &r.tcache[tid%uint32(len(r.tcache))]
	if c.tid == tid && c.t != nil {
		return c.t
	}
	if t := r.tasks[tid]; t != nil || !create {
		if t != nil {
			c.tid, c.t = tid, t
		}
		return t
	}
	if r.nTasks[e] >= TasksPerEntity || len(r.pool) == cap(r.pool) {
		return nil // not followed
	}
	r.nTasks[e]++
	r.pool = append(r.pool, task{ent: e})
	t := &r.pool[len(r.pool)-1]
	r.tasks[tid] = t
	c.tid, c.t = tid, t
	return t
}

// setRunnable starts t's wait for a CPU, unless it is already waiting.
func (r *reader) setRunnable(t *task, e int, now int64) {
	if t.since != 0 {
		return
	}
	t.since, t.ent = now, e
	t.wi = len(r.waiting)
	r.waiting = append(r.waiting, t)
}

// endWait ends t's wait.
func (r *reader) endWait(t *task) {
	if t.since == 0 {
		return
	}
	t.since = 0
	last := r.waiting[len(r.waiting)-1]
	r.waiting[t.wi] = last
	last.wi = t.wi
	r.waiting = r.waiting[:len(r.waiting)-1]
}

// markWaiting marks a task of entity e waiting on cs's CPU. One task is
// marked per CPU: a rank displaces the master or the runtime, never the
// reverse.
func (r *reader) markWaiting(cs *cpuState, e int, tid uint32, now int64) {
	if cs.waitEnt < 0 || (e < r.m.cfg.Ranks && cs.waitEnt >= r.m.cfg.Ranks) {
		cs.waitEnt, cs.waitTid, cs.waitSince = e, tid, now
	}
}

func (r *reader) onSwitch(cpu int, ev *schedEv, now int64) {
	cs := &r.cs[cpu]
	pe, ne := r.ent(ev.Ea), r.ent(ev.Eb)
	pt, nt := ev.A, ev.B
	// What prev did since it was switched in.
	if cs.start != 0 {
		if pe >= 0 {
			r.credit(pe, fOnCPU, cs.start, now, 0)
		}
		if cs.waitEnt >= 0 && cs.waitEnt != pe && pt != 0 {
			from := max(cs.waitSince, cs.start)
			if now > from {
				r.credit(cs.waitEnt, fPreempt, from, now, pt)
			}
		}
	}
	// A task that ran is not waiting any more.
	if cs.waitEnt >= 0 && cs.waitTid == pt {
		cs.waitEnt, cs.waitTid = -1, 0
	}
	// prev leaves: preempted (still runnable) or going to sleep.
	if pe >= 0 {
		t := cs.curr
		if t == nil || cs.currTid != pt {
			t = r.task(pt, pe, ev.Flags&(flPreempted|flWaking) != 0)
		}
		if t != nil {
			r.endWait(t)
		}
		if ev.Flags&flPreempted != 0 {
			r.addNow(pe, fNIvcsw, 1)
		}
		if ev.Flags&(flPreempted|flWaking) != 0 { // runnable: preempted, or woken on its way out
			if t != nil {
				r.setRunnable(t, pe, now)
			}
			r.markWaiting(cs, pe, pt, now)
		}
	}
	// next comes in.
	cs.curr = nil
	if ne >= 0 {
		if t := r.task(nt, ne, false); t != nil {
			cs.curr = t
			if since := t.since; since != 0 {
				r.endWait(t)
				if now > since {
					r.credit(ne, fRunQ, since, now, 0)
				}
			}
			t.ent = ne
			if t.wake != 0 && now > t.wake {
				lat := now - t.wake
				r.addNow(ne, fWake, lat)
				r.addNow(ne, fNWake, 1)
				r.hist[ne*HistBuckets+latBucket(uint64(lat))]++
			}
			t.wake = 0
		}
	}
	if cs.waitEnt >= 0 && cs.waitTid == nt {
		cs.waitEnt, cs.waitTid = -1, 0
	}
	cs.start, cs.currEnt, cs.currTid = now, ne, nt
}

// onWake: a tracked task woken (sched_waking, in the waker's context, or
// sched_wakeup_new) on the CPU where it last ran (a migration record
// follows when the wake-up moves it).
func (r *reader) onWake(ev *schedEv, now int64) {
	e := r.ent(ev.Ea)
	if e < 0 {
		return
	}
	t := r.task(ev.A, e, true)
	if t != nil && ev.Kind == evWaking && ev.Flags&flLatency != 0 {
		t.wake = now
	}
	if int(ev.B) >= r.m.ncpu {
		return
	}
	cs := &r.cs[ev.B]
	if cs.currTid == ev.A && cs.currEnt >= 0 {
		return // woken while still running there: it never waits
	}
	if t != nil {
		r.setRunnable(t, e, now)
	}
	r.markWaiting(cs, e, ev.A, now)
}

func (r *reader) onMigrate(ev *schedEv) {
	e := r.ent(ev.Ea)
	if e < 0 {
		return
	}
	r.addNow(e, fNMigr, 1)
	from, to := int(ev.Eb), int(ev.B)
	if from >= r.m.ncpu || to >= r.m.ncpu {
		return
	}
	f := &r.cs[from]
	if f.waitEnt >= 0 && f.waitTid == ev.A {
		d := &r.cs[to]
		if d.waitEnt < 0 {
			d.waitEnt, d.waitTid, d.waitSince = f.waitEnt, f.waitTid, f.waitSince
		}
		f.waitEnt, f.waitTid = -1, 0
	}
}

// addNow adds v to field f of e's slice of the record being taken.
func (r *reader) addNow(e, f int, v int64) {
	if r.qAt < r.d {
		return
	}
	r.acc[(int(r.qAt-r.d)*r.m.nent+e)*nsum+f] += v
}

// credit adds the interval [from, to) (to: the record being taken) to e's
// field f, split over the slices it overlaps that are not recorded yet (the
// recorded ones counted their parts while it was open); pid: the
// interfering task, for the slices' candidates.
func (r *reader) credit(e, f int, from, to int64, pid uint32) {
	if e < 0 || e >= r.m.nent || to <= from {
		return
	}
	m := r.m
	for q := r.qAt; q >= r.d; q-- {
		b := r.bound(q)
		if start := max(from, b); to > start {
			d := to - start
			r.acc[(int(q-r.d)*m.nent+e)*nsum+f] += d
			if pid != 0 {
				r.addCand(q, intfKey{uint32(e), pid}, d)
			}
		}
		if b <= from || q == 0 {
			return
		}
		to = b
	}
}

func (r *reader) addCand(q uint64, k intfKey, d int64) {
	i := int(q - r.d)
	list := r.cands[i*topCap:][:r.nCands[i]]
	for j := range list {
		if list[j].k == k {
			list[j].ns += d
			return
		}
	}
	if len(list) == topCap {
		r.dropped++
		return
	}
	r.cands[i*topCap+len(list)] = cand{k, d}
	r.nCands[i]++
}

// addIntf adds to the whole run's interference of k.
func (r *reader) addIntf(k intfKey, d int64) {
	c := &r.icache[(k.Pid*7+k.Ent)%uint32(len(r.icache))]
	if c.i != 0 && c.k == k {
		if c.i < 0 {
			return // counted when first refused
		}
		r.ipairs[c.i-1].ns += d
		return
	}
	i, ok := r.ikeys[k]
	if !ok {
		if r.nIntf[k.Ent] >= InterferersPerEntity {
			if _, seen := r.refused[k]; !seen {
				if len(r.refused) < maxRefused {
					r.refused[k] = struct{}{}
				}
				r.dropped++
			}
			c.k, c.i = k, -1
			return
		}
		r.nIntf[k.Ent]++
		i = int32(len(r.ipairs))
		r.ipairs = append(r.ipairs, cand{k, 0})
		r.ikeys[k] = i
	}
	r.ipairs[i].ns += d
	c.k, c.i = k, i+1
}

// totals fills itot from the pairs' totals.
func (r *reader) totals() {
	for _, p := range r.ipairs {
		r.itot[p.k] = p.ns
	}
}

// advance drops the slices below to (recorded or lost): the pending ones,
// to .. c, move to the front of acc and cands (indexed by q − d, so that
// the reader's per-slice state stays in the same few cache lines).
func (r *reader) advance(to, c uint64) {
	if to <= r.d {
		return
	}
	w := r.m.nent * nsum
	// Slices d .. c may hold credits, and only the ring's first ones: a
	// drain after the publisher ran more than a ring ahead (Publish
	// outrunning a reader that held the lock) has c − d over the ring.
	used := int(min(c-r.d+1, r.m.ring))
	k := int(to - r.d)
	if k < used {
		copy(r.acc, r.acc[k*w:used*w])
		copy(r.cands, r.cands[k*topCap:used*topCap])
		copy(r.nCands, r.nCands[k:used])
		clear(r.acc[(used-k)*w : used*w])
		clear(r.nCands[used-k : used])
	} else {
		clear(r.acc[:used*w])
		clear(r.nCands[:used])
	}
	r.d = to
}

// record records slice q's row: what was credited to it plus the parts of
// the intervals open at hz; adds its interference to the whole run's.
func (r *reader) record(q uint64, hz int64) {
	m := r.m
	label := m.labels[q%m.ring].Load()
	in := label >= m.cfg.First && label-m.cfg.First < m.cfg.Len
	b0, b1 := r.bound(q), r.bound(q+1)
	clear(r.open)
	for cpu := range r.cs {
		cs := &r.cs[cpu]
		if cs.start == 0 || hz <= cs.start {
			continue
		}
		if e := cs.currEnt; e >= 0 && e < m.nent {
			r.open[e*nsum+fOnCPU] += overlap(cs.start, hz, b0, b1)
		}
		if w := cs.waitEnt; w >= 0 && w < m.nent && w != cs.currEnt && cs.currTid != 0 {
			if o := overlap(max(cs.start, cs.waitSince), hz, b0, b1); o > 0 {
				r.open[w*nsum+fPreempt] += o
				r.addCand(q, intfKey{uint32(w), cs.currTid}, o)
			}
		}
	}
	// The slice's interferers, credited and open, by pair.
	i := int(q - r.d)
	list := r.cands[i*topCap:][:r.nCands[i]]
	for _, c := range list {
		r.addIntf(c.k, c.ns)
	}
	if !in {
		return // outside the windows
	}
	for _, t := range r.waiting {
		if t.ent >= 0 && t.ent < m.nent {
			r.open[t.ent*nsum+fRunQ] += overlap(t.since, hz, b0, b1)
		}
	}
	clear(r.top)
	for _, c := range list {
		r.addTop(c.k, c.ns)
	}
	for e := range m.nent {
		if m.win[e] == nil {
			continue
		}
		a := r.acc[(i*m.nent+e)*nsum:][:nsum]
		for k := range nsum {
			r.vals[k] = max(a[k]+r.open[e*nsum+k], 0)
		}
		for k, t := range r.top[e*Top:][:Top] {
			r.vals[nsum+2*k], r.vals[nsum+2*k+1] = int64(t.pid), t.ns
		}
		r.vals[nsum+2*Top] = b1
		m.win[e].Record(label, r.vals)
	}
}

// overlap is the length of [from, to) ∩ [b0, b1).
func overlap(from, to, b0, b1 int64) int64 {
	return max(0, min(to, b1)-max(from, b0))
}

// addTop enters d ns of interference by k.Pid into k.Ent's top list.
func (r *reader) addTop(k intfKey, d int64) {
	if d <= 0 || int(k.Ent) >= r.m.nent {
		return
	}
	t := r.top[int(k.Ent)*Top:][:Top]
	for i := range t {
		if d > t[i].ns {
			copy(t[i+1:], t[i:Top-1])
			t[i] = topEntry{k.Pid, d}
			return
		}
	}
}

// latBucket is v's wake-up latency bucket: 2 per power of two of the latency
// in ns (the bit below the top one); BucketBounds is its range.
func latBucket(v uint64) int {
	if v < 2 {
		return 0
	}
	b := bits.Len64(v) - 1 // floor(log2 v) >= 1
	half := int(v>>uint(b-1)) & 1
	return min(2*b+half, HistBuckets-1)
}
