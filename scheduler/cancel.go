package scheduler

import (
	"fmt"
	"slices"

	"github.com/bcsmpi/bcsmpi/internal/proto"
)

// Cancel (MPI_Cancel): a KindCancel descriptor withdraws its rank's own
// receive, or unbuffered send, that is still unmatched when the cancel is
// scheduled — after the sends and receives of the same slice were matched,
// so a target matched by then runs to completion and the cancel does
// nothing. A withdrawn target completes with ErrCancelled. Only a target
// posted before the cancel (a smaller Seq) qualifies: its request slot may
// already hold a newer request when the old one completed first.

func checkCancel(d proto.Descriptor, size int) error {
	if d.Withdraws() != proto.CancelRecv && d.Withdraws() != proto.CancelSend {
		return fmt.Errorf("cancel of kind %d, want 0 (a receive) or 1 (a send)", d.Withdraws())
	}
	if d.Withdraws() == proto.CancelSend && (d.Peer < 0 || int(d.Peer) >= size) {
		return fmt.Errorf("cancel of a send to %d, not in 0..%d", d.Peer, size-1)
	}
	return nil
}

func (s *Scheduler) cancels() {
	for _, d := range s.order {
		if d.Kind != proto.KindCancel {
			continue
		}
		// A receive waits under its own rank; a send under its destination.
		k, kind, table := key{d.Comm, d.Rank}, proto.KindRecv, s.pending
		if d.Withdraws() == proto.CancelSend {
			k, kind, table = key{d.Comm, d.Peer}, proto.KindSend, s.unexpected
		}
		q := table[k]
		for i, o := range q {
			t := o.d
			if t.Kind != kind || t.Rank != d.Rank || t.Req != d.Req || t.Seq >= d.Seq || t.Inline {
				continue
			}
			table[k] = slices.Delete(q, i, i+1)
			if s.det.on && s.det.held(t) {
				s.det.heldN[k]-- // a withdrawn wildcard is no longer held (determ.go)
			}
			s.complete(proto.Completion{Rank: t.Rank, Req: t.Req, Kind: t.Kind, Source: proto.AnySource, Tag: proto.AnyTag, Err: proto.ErrCancelled})
			break
		}
	}
}
