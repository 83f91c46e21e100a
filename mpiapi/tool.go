package mpiapi

import (
	"github.com/bcsmpi/bcsmpi/internal/proto"
	"github.com/bcsmpi/bcsmpi/internal/shm"
	"github.com/bcsmpi/bcsmpi/mds"
)

// Counters for the C ABI's tool information interface (MPI_T performance
// variables): what this rank's point-to-point requests moved through the
// runtime, counted when a request completes without error. Collectives,
// probes and cancelled requests are not counted. They are never reset and
// survive Finalize. Not safe for concurrent use, like the rest of the
// package.
type Traffic struct {
	MsgsSent, BytesSent         uint64
	MsgsReceived, BytesReceived uint64
}

var traffic Traffic

func (t *Traffic) note(k proto.Kind, n uint64) {
	switch k {
	case proto.KindSend:
		t.MsgsSent++
		t.BytesSent += n
	case proto.KindRecv:
		t.MsgsReceived++
		t.BytesReceived += n
	}
}

// TrafficSoFar returns this rank's point-to-point counters.
func TrafficSoFar() Traffic { return traffic }

// RequestsInUse returns the request slots this rank holds and how many it
// has (requests_max); 0, 0 before Init and after Finalize.
func RequestsInUse() (inUse, slots int) {
	if self == nil {
		return 0, 0
	}
	slots = int(self.region.G.ReqMax)
	return slots - len(self.free), slots
}

// EagerHeld returns this rank's eager sends (blocking sends of at most
// inline_max bytes that returned at their post, eager.go) not yet matched by
// a receive now and at most so far, as the runtime's eager-matched word
// tells, and the limit a Send waits at (max(eager_max, the job's size));
// zeros before Init.
func EagerHeld() (now, most, limit uint64) {
	if self == nil {
		return 0, 0, 0
	}
	return self.eagerHeld(), self.eagerMost, self.eagerLimit()
}

// MMDSTotals returns the MMDS's totals for primitive p (calls, nanoseconds
// in them, bytes they moved); ok is false when this rank records no MMDS
// (mds without main, or a rank outside mds_ranks) or before Init.
func MMDSTotals(p mds.Prim) (count, ns, bytes int64, ok bool) {
	if self == nil || self.mmds.rec == nil {
		return 0, 0, 0, false
	}
	count, ns, bytes = self.mmds.rec.Totals(p)
	return count, ns, bytes, true
}

// Geometry returns the node region's geometry (ring_slots, requests_max,
// inline_max, deterministic); ok is false before Init and after Finalize.
func Geometry() (g shm.Geometry, ok bool) {
	if self == nil {
		return g, false
	}
	return self.region.G, true
}

// Watch returns a request that completes, with an empty status, once every
// request of rs has completed (MPI_Buffer_iflush: the buffered sends
// pending when it was called). The requests of rs are only polled, never
// retired: their owner still tests or waits for them as before. Cancel and
// the error of a request of rs do not pass to the watch.
func Watch(call string, rs []*Request) (*Request, error) {
	p, err := current(call)
	if err != nil {
		return nil, err
	}
	for _, r := range rs {
		if err := p.checkLive(call, r); err != nil {
			return nil, err
		}
	}
	// No kind: not a send, receive or collective of the runtime, so
	// MPI_Request_free may free it and MPI_Cancel refuses it.
	w := &Request{call: call, active: true, watch: append([]*Request(nil), rs...)}
	if len(rs) == 0 {
		w.done, w.active, w.watch, w.status = true, false, nil, emptyStatus
	}
	return p.track(w), nil
}

// pollWatch advances a Watch request: polled requests drop off the list.
func (p *process) pollWatch(w *Request) bool {
	for len(w.watch) > 0 {
		if !p.poll(w.watch[0]) {
			return false
		}
		w.watch[0] = nil
		w.watch = w.watch[1:]
	}
	w.watch, w.done, w.active = nil, true, false
	w.status = emptyStatus
	return true
}
