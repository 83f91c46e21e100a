package main

/*
#include "shim.h"
*/
import "C"

import (
	"fmt"

	"github.com/bcsmpi/bcsmpi/mpiapi"
)

// Messages on a local communicator (one process: MPI_COMM_SELF, or the
// world of a program started without bcsrun) never reach the runtime: a send
// is buffered here (it completes at once) or delivered to the earliest
// matching posted receive, and a receive takes the earliest matching
// buffered message or is posted. The process is the only sender, so, below
// MPI_THREAD_MULTIPLE, a receive or probe that finds nothing when it must
// block can never complete: it is reported as a deadlock instead of
// hanging. Under MULTIPLE another thread may send it, and the call waits
// (mpiapi.WaitThreads; doc.go, "Threads").

// localReq is a point-to-point request on a local communicator.
type localReq struct {
	ci     int
	recv   bool
	done   bool
	buf    []byte
	tag    int    // wanted tag of a receive (mpiapi.AnyTag allowed)
	pair   uint32 // a partitioned receive's pair number (partition.go); 0: plain
	source int    // status: mpiapi sentinels
	rtag   int
	bytes  uint64
	class  int // error class of the completion (MPI_ERR_TRUNCATE), 0 if none
	msg    string
	// A synchronous send (sync.go) is done when a receive takes its message;
	// cancelled: MPI_Cancel withdrew the request.
	cancelled bool
	g         *greq       // a generalized request (grequest.go)
	part      *persistent // a partitioned send waiting for its partitions (partition.go)
}

type localMsg struct {
	ci   int
	tag  int
	pair uint32 // a partitioned send's pair number (partition.go); 0: plain
	data []byte
	sync *localReq // the synchronous send that sent it, done when it is received
}

var (
	localQueue  []localMsg  // buffered sends, in send order
	localPosted []*localReq // posted receives, in post order
)

func tagMatch(want, got int) bool { return want == mpiapi.AnyTag || want == got }

// accepts reports whether posted receive r takes a message with this
// envelope: partitioned operations match only each other, by pair number.
func (r *localReq) accepts(ci, tag int, pair uint32) bool {
	return r.ci == ci && tagMatch(r.tag, tag) && r.pair == pair
}

func (r *localReq) deliver(call string, m localMsg) {
	n := copy(r.buf, m.data)
	r.done, r.source, r.rtag, r.bytes = true, 0, m.tag, uint64(n)
	if len(m.data) > len(r.buf) {
		r.class = errTruncate
		r.msg = fmt.Sprintf("message from rank 0 tag %d is longer than the receive buffer (%d bytes sent, %d received)", m.tag, len(m.data), n)
	} else if m.pair != 0 && len(m.data) < len(r.buf) {
		r.class = errOther
		r.msg = partSizeMsg(0, m.tag, len(m.data), len(r.buf))
	}
}

func procNullReq(ci int) *localReq {
	return &localReq{ci: ci, done: true, source: mpiapi.ProcNull, rtag: mpiapi.AnyTag}
}

// localSend buffers or delivers a send; it is complete on return.
func localSend(a p2p) *localReq {
	if a.peer == mpiapi.ProcNull {
		return procNullReq(a.ci)
	}
	m := localMsg{ci: a.ci, tag: a.tag, pair: a.pair, data: append([]byte(nil), a.buf...)}
	for i, r := range localPosted {
		if r.accepts(a.ci, a.tag, a.pair) {
			localPosted = append(localPosted[:i], localPosted[i+1:]...)
			r.deliver("MPI_Send", m)
			return &localReq{ci: a.ci, done: true}
		}
	}
	localQueue = append(localQueue, m)
	return &localReq{ci: a.ci, done: true}
}

// localFind is the index of the earliest buffered message a receive or
// probe with tag on communicator ci matches, or -1. Partitioned messages
// are left out (localFindPair).
func localFind(ci, tag int) int { return localFindPair(ci, tag, 0) }

// localFindPair is localFind for a receive of pair number pair
// (partition.go; 0: a plain receive or probe).
func localFindPair(ci, tag int, pair uint32) int {
	for i, m := range localQueue {
		if m.ci == ci && tagMatch(tag, m.tag) && m.pair == pair {
			return i
		}
	}
	return -1
}

// localRecv takes a buffered message or posts the receive.
func localRecv(call string, a p2p) *localReq {
	if a.peer == mpiapi.ProcNull {
		return procNullReq(a.ci)
	}
	r := &localReq{ci: a.ci, recv: true, buf: a.buf, tag: a.tag, pair: a.pair}
	if i := localFindPair(a.ci, a.tag, a.pair); i >= 0 {
		m := localQueue[i]
		localQueue = append(localQueue[:i], localQueue[i+1:]...)
		r.deliver(call, m)
		m.matched()
		return r
	}
	localPosted = append(localPosted, r)
	return r
}

// localDeadlock reports a local receive that can never complete.
func localDeadlock(call string, r *localReq) C.int {
	if p := r.part; p != nil {
		k := 0
		for k < p.parts && p.ready[k] {
			k++
		}
		return fail(r.ci, call, errOther, "deadlock: partition %d of the partitioned send (%d of %d ready) was not marked with MPI_Pready, and no other thread can mark it while this one waits (MPI_THREAD_MULTIPLE was not provided: no other thread calls MPI during this call)", k, p.nready, p.parts)
	}
	if r.g != nil {
		return fail(r.ci, call, errOther, "deadlock: the generalized request is not complete, and no other thread can call MPI_Grequest_complete while this one waits (MPI_THREAD_MULTIPLE was not provided: no other thread calls MPI during this call)")
	}
	if !r.recv {
		return fail(r.ci, call, errOther, "deadlock: the synchronous send (tag %s) on a one-process communicator has no matching receive, and this process is the only one that could post it", tagName(r.rtag))
	}
	return fail(r.ci, call, errOther, "deadlock: the receive (tag %s) on a one-process communicator has no matching send, and this process is the only one that could send it", tagName(r.tag))
}

func tagName(t int) string {
	if t == mpiapi.AnyTag {
		return "MPI_ANY_TAG"
	}
	return fmt.Sprint(t)
}

// result raises a completed local request's error, if any.
func (r *localReq) result(call string) C.int {
	r.gcomplete() // grequest.go
	if r.class != 0 {
		return fail(r.ci, call, r.class, "%s", r.msg)
	}
	return 0
}

func (r *localReq) status(st *C.MPI_Status, class int) {
	if r.g != nil {
		r.gquery()
		r.gstatus(st, class)
		return
	}
	src, t := r.source, r.rtag
	if src == mpiapi.ProcNull {
		src = C.MPI_PROC_NULL
	}
	if t == mpiapi.AnyTag {
		t = C.MPI_ANY_TAG
	}
	putRaw(st, src, t, r.bytes, class)
	if st != nil && r.cancelled {
		st.MPI_internal[2] = 1
	}
}

// localDrop forgets the messages and receives of a freed communicator.
func localDrop(ci int) {
	q := localQueue[:0]
	for _, m := range localQueue {
		if m.ci != ci {
			q = append(q, m)
		}
	}
	localQueue = q
	p := localPosted[:0]
	for _, r := range localPosted {
		if r.ci != ci {
			p = append(p, r)
		}
	}
	localPosted = p
}
