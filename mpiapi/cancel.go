package mpiapi

import "github.com/bcsmpi/bcsmpi/internal/proto"

// Cancel (MPI_Cancel) asks the runtime to withdraw r, a receive or a send
// that no receive has matched yet, and returns at once; the request must
// still be completed with Wait or Test (or freed), and its status then says
// whether the cancel took effect (Status.Cancelled). The scheduler applies
// the cancel in the next slice unless r is matched by then; a send buffered
// by the agent (a standard send of at most inline_max bytes) has completed
// when it was exchanged and is never cancelled, which MPI allows (cancelling
// sends is deprecated since MPI 4). Cancelling a completed request, the
// receive of a matched message (Imrecv), a request to MPI_PROC_NULL, or one
// already cancelled does nothing.
// Collective and probe requests cannot be cancelled: MPI_ERR_REQUEST.
func (r *Request) Cancel() error {
	const call = "MPI_Cancel"
	p, err := current(call)
	if err != nil {
		return err
	}
	if r == nil {
		return p.errf(ErrRequest, call, "request = nil (MPI_REQUEST_NULL), want an active request")
	}
	if err := p.checkLive(call, r); err != nil {
		return err
	}
	if r.kind != proto.KindSend && r.kind != proto.KindRecv {
		return p.errf(ErrRequest, call, "request #%d (%s) is not a point-to-point request; only sends and receives can be cancelled", r.gen, r.call)
	}
	if r.done || !r.active || r.chain != nil || r.cancelPosted {
		return nil
	}
	if p.rr.on() {
		// Logged (replay.go); posted without polling first, so that whether
		// a descriptor is posted does not depend on timing (the slice log).
		if !p.cancelLogged(r) {
			return nil // replay: a cancel that failed in the recording
		}
	} else if p.poll(r) {
		return nil
	}
	d := proto.Descriptor{Kind: proto.KindCancel, Comm: r.comm.id, Req: r.slot}
	d.SetWithdraws(proto.CancelRecv)
	if r.kind == proto.KindSend {
		d.SetWithdraws(proto.CancelSend)
		d.Peer = r.comm.worldRank(r.peer)
	}
	r.cancelPosted = true
	return p.post(d, nil)
}

// Cancelled reports whether the request the status describes was withdrawn
// by Request.Cancel (MPI_Test_cancelled).
func (s Status) Cancelled() bool { return s.cancelled }
