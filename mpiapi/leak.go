package mpiapi

import (
	"cmp"
	"fmt"
	"maps"
	"os"
	"slices"

	"github.com/bcsmpi/bcsmpi/internal/jobenv"
	"github.com/bcsmpi/bcsmpi/internal/proto"
)

// The leak report (MPI_Finalize). A rank knows what it did not release: user
// operations, communicators other than the world, requests still pending or
// completed but never waited for, tested or freed, and freed requests the
// runtime had not completed. Only the runtime knows the messages sent but
// never received. So each rank writes its part to bcsrun over the report pipe
// (jobenv.VarReportFD), one line "RANK TEXT" per leak in a single write (at most
// leakLineMax bytes, less than PIPE_BUF, so the lines of ranks finalizing at
// the same time do not interleave), and bcsrun prints one report with the
// unreceived messages at the end of the job: a warning, or an error that
// fails the job under leak_check: error. Without the pipe the rank prints its
// own lines as warnings. Under leak_check: off nothing is collected.

// leakLineMax bounds one report line, rank number and newline included.
const leakLineMax = 1024

// leaks lists what the rank has not released, each as a sentence.
func (p *process) leaks() []string {
	var out []string
	ops := slices.SortedFunc(maps.Keys(userOps), func(a, b *Op) int { return cmp.Compare(a.seq, b.seq) })
	for _, o := range ops {
		out = append(out, fmt.Sprintf("user operation %q (on %s elements) was never freed (Op.Free, MPI_Op_free)", o.name, o.elem))
	}
	for _, id := range slices.Sorted(maps.Keys(p.comms)) {
		c := p.comms[id]
		out = append(out, fmt.Sprintf("communicator %d (%d ranks, made by %s) was never freed (Comm.Free, MPI_Comm_free)", c.id, c.size, c.made))
	}
	for _, gen := range slices.Sorted(maps.Keys(p.live)) {
		r := p.live[gen]
		if r.chain == nil { // a chain's next step would post collectives: leave it
			p.poll(r)
		}
		if r.done {
			out = append(out, fmt.Sprintf("request #%d, %s, completed but was never waited for, tested or freed", r.gen, describeRequest(r)))
		} else {
			out = append(out, fmt.Sprintf("request #%d, %s, was still pending", r.gen, describeRequest(r)))
		}
	}
	for _, r := range p.freed {
		out = append(out, fmt.Sprintf("request #%d, %s, was freed with MPI_Request_free but had not completed", r.gen, describeRequest(r)))
	}
	return out
}

// describeRequest renders r as the call that started it, e.g. "MPI_Irecv
// from rank 1, tag 9".
func describeRequest(r *Request) string {
	s := r.call
	switch {
	case r.peer == ProcNull && (r.kind == proto.KindSend || r.kind == proto.KindRecv):
		s += fmt.Sprintf(" with MPI_PROC_NULL, tag %d", r.tag)
	case r.kind == proto.KindSend:
		s += fmt.Sprintf(" to rank %d, tag %d", r.peer, r.tag)
	case r.kind == proto.KindRecv:
		if r.peer == AnySource {
			s += " from any source"
		} else {
			s += fmt.Sprintf(" from rank %d", r.peer)
		}
		if r.tag == AnyTag {
			s += ", any tag"
		} else {
			s += fmt.Sprintf(", tag %d", r.tag)
		}
	}
	if r.comm != nil && r.comm.id != 0 {
		s += fmt.Sprintf(" on communicator %d", r.comm.id)
	}
	return s
}

// reportLeaks hands the rank's leaks to bcsrun (or prints them).
func (p *process) reportLeaks() {
	if p.env.LeakCheck == jobenv.LeakOff {
		return
	}
	lines := p.leaks()
	if len(lines) == 0 {
		return
	}
	if fd := p.env.ReportFD; fd > 2 {
		f := os.NewFile(uintptr(fd), "bcsrun leak report")
		defer f.Close()
		for _, l := range lines {
			b := fmt.Appendf(nil, "%d %s", p.rank, l)
			if len(b) > leakLineMax-1 {
				b = append(b[:leakLineMax-4], "..."...)
			}
			if _, err := f.Write(append(b, '\n')); err != nil {
				break // bcsrun is gone: nobody to tell
			}
		}
		return
	}
	for _, l := range lines {
		fmt.Fprintf(os.Stderr, "bcsmpi: warning: rank %d: %s\n", p.rank, l)
	}
}
