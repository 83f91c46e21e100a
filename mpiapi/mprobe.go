package mpiapi

import (
	"github.com/bcsmpi/bcsmpi/internal/proto"
	"github.com/bcsmpi/bcsmpi/internal/reduce"
	"github.com/bcsmpi/bcsmpi/mds"
)

// Matched probes (MPI_Mprobe, MPI_Improbe, MPI_Mrecv, MPI_Imrecv). A
// matched probe claims the message it finds: as soon as the probe reports
// it, the rank posts a receive for exactly that message (its source and tag,
// its size) into a buffer of the Message, so no later receive of the rank
// can take it; Mrecv and Imrecv wait for that receive and copy the data into
// the caller's buffer. MPI's non-overtaking rule makes the claim exact: the
// probed message is the earliest pending one from its source with its tag,
// and no other receive of the rank is posted in between. The MMDS counts
// Mprobe and Improbe as Probe and Iprobe.
//
// With threads on (threads.go) other threads' calls run while a matched
// probe waits for its answer, so a receive of another thread, or another
// matched probe's claim, may be posted between the probe and its claim and
// take the probed message first: two threads probing MPI_ANY_TAG were both
// answered with the same message, one received it and the other's claim
// waited for a message that never came (or took a later one, with the
// probe's status wrong). A matched probe therefore notes every receive the
// rank posts while it waits (claimWatch); if one posted after its probe
// could match the answered envelope, the answer may be stale and the probe
// asks again (its new probe comes after that receive, so the scheduler
// answers with what is still unclaimed). At least one of the racing probes
// claims in each round, so they all end.

// Message is a message matched by Mprobe or Improbe (MPI_Message). It is
// received once, by Mrecv or Imrecv; a Message for MPI_PROC_NULL
// (MPI_MESSAGE_NO_PROC) receives nothing.
type Message struct {
	recv     *Request // the claiming receive; nil for MPI_PROC_NULL
	buf      []byte
	status   Status
	received string // the call that received it; "" until then
}

// NoProc reports whether m is MPI_MESSAGE_NO_PROC (a probe of MPI_PROC_NULL).
func (m *Message) NoProc() bool { return m.recv == nil }

func (p *process) claim(call string, c *Comm, st Status) (*Message, error) {
	buf := make([]byte, st.Bytes())
	r, err := startMode(p, call, proto.KindRecv, c, buf, reduce.Uint8, st.Source, st.Tag, sendStandard)
	if err != nil {
		return nil, err
	}
	return &Message{recv: r, buf: buf, status: st}, nil
}

// Mprobe blocks until a message from source with tag is pending, claims it
// and returns it with its envelope (Count in bytes).
func Mprobe(c *Comm, source, tag int) (*Message, Status, error) {
	const call = "MPI_Mprobe"
	p, err := current(call)
	if err != nil {
		return nil, Status{}, err
	}
	if source == ProcNull {
		return &Message{}, Status{Source: ProcNull, Tag: AnyTag}, nil
	}
	t0 := p.mmds.begin(true)
	defer p.mmds.end(mds.Mprobe, t0, 0, true)
	for {
		w := watchClaims()
		r, err := probe(p, call, proto.KindProbe, c, source, tag)
		if err != nil {
			w.done()
			return nil, Status{}, err
		}
		if w != nil { // nil with threads off
			w.since = p.seq
		}
		st, err := p.wait(r, call)
		stale := err == nil && w.stale(c, st)
		w.done()
		if err != nil {
			return nil, st, err
		}
		if stale {
			continue
		}
		m, err := p.claim(call, c, st)
		return m, st, err
	}
}

// Improbe asks whether a message from source with tag is pending; if one
// is, it claims it and returns it (found true).
func Improbe(c *Comm, source, tag int) (*Message, bool, Status, error) {
	const call = "MPI_Improbe"
	p, err := current(call)
	if err != nil {
		return nil, false, Status{}, err
	}
	if source == ProcNull {
		return &Message{}, true, Status{Source: ProcNull, Tag: AnyTag}, nil
	}
	t0 := p.mmds.begin(true)
	defer p.mmds.end(mds.Improbe, t0, 0, true)
	if p.rr.on() { // recorded or replayed: the answer is logged (replay.go)
		found, st, err := p.iprobeLogged(call, c, source, tag)
		if err != nil || !found {
			return nil, false, st, err
		}
		m, err := p.claim(call, c, st)
		return m, err == nil, st, err
	}
	for {
		w := watchClaims()
		r, err := probe(p, call, proto.KindIprobe, c, source, tag)
		if err != nil {
			w.done()
			return nil, false, Status{}, err
		}
		if w != nil { // nil with threads off
			w.since = p.seq
		}
		st, err := p.wait(r, call)
		stale := err == nil && st.Source != AnySource && w.stale(c, st)
		w.done()
		if err != nil || st.Source == AnySource {
			return nil, false, st, err
		}
		if stale {
			continue
		}
		m, err := p.claim(call, c, st)
		return m, err == nil, st, err
	}
}

// claimWatch is a matched probe's watch over the receives the rank posts
// while it waits for the probe's answer (threads only; a nil watch, off,
// sees nothing).
type claimWatch struct {
	since uint64 // the probe's descriptor sequence number; 0 until it is posted
}

// claims is the receives posted while any matched probe waits (under the
// call lock): for each (communicator, peer, tag) as posted, the newest
// receive's sequence number, which is all stale asks (is there one newer
// than the probe that could match its answer?). It is bounded: entries no
// live watch can see (not newer than the oldest watch's probe) are dropped,
// and past claimsMax/2 entries at a prune (so at most claimsMax+1, or one
// per communicator, are kept), those left are folded into one
// (MPI_ANY_SOURCE, MPI_ANY_TAG) entry per communicator, which answers
// "stale" at least as often (a watch then live may retry once, and asks
// again with a newer probe that the folded entries do not concern). So a
// thread blocked in MPI_Mprobe for the whole run, while others post
// receives with ever new tags, does not grow it without end.
var claims struct {
	watching map[*claimWatch]struct{}
	posted   map[claimKey]uint64
	pruneAt  int // len(posted) at which noteReceive next prunes
}

type claimKey struct {
	comm      proto.CommID
	peer, tag int // as posted: AnySource and AnyTag included
}

// claimsMax is the most entries claims.posted keeps before folding them.
const claimsMax = 1024

func watchClaims() *claimWatch {
	if !mt.on {
		return nil
	}
	w := &claimWatch{}
	if claims.watching == nil {
		claims.watching = make(map[*claimWatch]struct{})
		claims.posted = make(map[claimKey]uint64)
	}
	claims.watching[w] = struct{}{}
	return w
}

func (w *claimWatch) done() {
	if w == nil {
		return
	}
	delete(claims.watching, w)
	if len(claims.watching) == 0 {
		clear(claims.posted)
		claims.pruneAt = 0
	}
}

// stale reports whether a receive posted after the probe could have taken
// the message it was answered with (st on c).
func (w *claimWatch) stale(c *Comm, st Status) bool {
	if w == nil {
		return false
	}
	for _, k := range [4]claimKey{
		{c.id, st.Source, st.Tag}, {c.id, AnySource, st.Tag},
		{c.id, st.Source, AnyTag}, {c.id, AnySource, AnyTag},
	} {
		if seq, ok := claims.posted[k]; ok && seq > w.since {
			return true
		}
	}
	return false
}

// noteReceive records a receive just posted (seq) while matched probes wait.
func noteReceive(c *Comm, peer, tag int, seq uint64) {
	if len(claims.watching) == 0 {
		return
	}
	k := claimKey{c.id, peer, tag}
	if seq > claims.posted[k] {
		claims.posted[k] = seq
	}
	if len(claims.posted) > claims.pruneAt {
		pruneClaims()
	}
}

// pruneClaims drops the entries no live watch can see and, if more than
// claimsMax/2 remain, folds them per communicator. It runs when the map has
// doubled since the last prune (or reached claimsMax), so its cost is spread
// over the receives noted in between.
func pruneClaims() {
	oldest := uint64(0)
	first := true
	for w := range claims.watching {
		if first || w.since < oldest {
			oldest, first = w.since, false
		}
	}
	for k, seq := range claims.posted {
		if seq <= oldest {
			delete(claims.posted, k)
		}
	}
	if len(claims.posted) > claimsMax/2 {
		folded := make(map[claimKey]uint64)
		for k, seq := range claims.posted {
			f := claimKey{k.comm, AnySource, AnyTag}
			folded[f] = max(folded[f], seq)
		}
		claims.posted = folded
	}
	claims.pruneAt = min(max(2*len(claims.posted), 64), claimsMax)
}

func (p *process) takeMessage(call string, m *Message) error {
	if m == nil {
		return p.errf(ErrRequest, call, "message = nil (MPI_MESSAGE_NULL), want one returned by Mprobe or Improbe")
	}
	if m.received != "" {
		return p.errf(ErrRequest, call, "the message was already received by %s; a matched message is received once", m.received)
	}
	m.received = call
	return nil
}

// deliver copies the claimed data into buf and returns the status.
func (m *Message) deliver(p *process, call string, buf []byte, elem int) (Status, error) {
	st := m.recv.status
	st.elem = elem
	n := copy(buf, m.buf)
	st.bytes = uint64(n)
	m.buf = nil
	if n < int(m.status.bytes) {
		return st, p.errf(ErrTruncate, call, "message from rank %d tag %d is longer than the receive buffer (%d bytes sent, %d received)", st.Source, st.Tag, m.status.bytes, n)
	}
	return st, nil
}

// Mrecv receives the message m into buf.
func Mrecv[T Elem](m *Message, buf []T) (Status, error) {
	return MrecvBytes(m, bytesView(buf), typeOf[T]())
}

// Imrecv starts receiving the message m into buf; the request completes
// when the claimed data has arrived and been copied into buf.
func Imrecv[T Elem](m *Message, buf []T) (*Request, error) {
	return ImrecvBytes(m, bytesView(buf), typeOf[T]())
}
