package scheduler

import (
	"fmt"
	"slices"
	"strings"

	"github.com/bcsmpi/bcsmpi/internal/proto"
)

// Wait is one unfinished operation of a rank, as the scheduler sees it.
type Wait struct {
	Rank proto.Rank
	D    proto.Descriptor
	// Why: "recv" (a receive or probe with no matching send), "send" (a send
	// no receive has matched), "collective" (a collective not every member
	// of its communicator entered), "eager" (an eager send, proto.Descriptor.Eager,
	// no receive has matched, of a rank blocked waiting for one: buffered, so
	// complete, but past package mpiapi's eager_max a later send waits until
	// one is matched; see eagerWaiting), "moving" (matched, bytes still to move).
	Why string
}

// eagerWaiting reports whether rank r's status byte (status, one per rank;
// nil: unknown) says it is blocked in MPI_Send waiting for a match of its
// eager sends (proto.CallSendMatch). Only then are its unmatched eager
// sends operations it waits for: a rank that returned from them, or is
// blocked in another call, does not wait for their receivers, and counting
// them would make its wait-for edges false (a cycle printed through a
// receiver it does not wait for) and mark it stuck while it runs (weakening
// the guard of deadlock detection, and of deterministic mode's forced
// wildcards, internal/core's noneCanProgress).
func eagerWaiting(status []uint8, r proto.Rank) bool {
	if int(r) >= len(status) {
		return false
	}
	st := status[r]
	return proto.StatusBlocked(st) && proto.StatusCode(st) == proto.CallSendMatch
}

// Waits lists every unfinished operation, ordered by rank then post order.
// status is the ranks' status bytes (nil: unknown), for the eager sends
// (eagerWaiting).
func (s *Scheduler) Waits(status []uint8) []Wait {
	var out []Wait
	for _, q := range s.pending {
		for _, o := range q {
			out = append(out, Wait{o.d.Rank, o.d, "recv"})
		}
	}
	for _, q := range s.unexpected {
		for _, o := range q {
			switch {
			case !o.d.Inline:
				out = append(out, Wait{o.d.Rank, o.d, "send"})
			case o.d.Eager && eagerWaiting(status, o.d.Rank): // complete, but its sender waits for a match (eager_max)
				out = append(out, Wait{o.d.Rank, o.d, "eager"})
			} // other buffered sends have completed for their sender
		}
	}
	out = s.collWaits(out)
	out = s.groupWaits(out)
	for _, x := range s.active {
		out = append(out, Wait{x.recv.Rank, x.recv, "moving"})
	}
	slices.SortFunc(out, func(a, b Wait) int {
		if a.Rank != b.Rank {
			return int(a.Rank - b.Rank)
		}
		return int(a.D.Seq) - int(b.D.Seq)
	})
	return out
}

// Incomplete sets mark[r] for every rank r with at least one unfinished
// operation, the ranks Waits would name, without allocating (deadlock
// detection asks every quiet slice). mark has one entry per rank; entries of
// other ranks are left as they are. status is as for Waits.
func (s *Scheduler) Incomplete(mark []bool, status []uint8) {
	for _, q := range s.pending {
		for _, o := range q {
			mark[o.d.Rank] = true
		}
	}
	for _, q := range s.unexpected {
		for _, o := range q {
			if !o.d.Inline || (o.d.Eager && eagerWaiting(status, o.d.Rank)) {
				mark[o.d.Rank] = true
			}
		}
	}
	for _, c := range s.colls {
		if c.posted == len(c.heads) {
			continue
		}
		for _, d := range c.heads {
			if d.Kind != 0 {
				mark[d.Rank] = true
			}
		}
	}
	for _, g := range s.groups {
		for _, d := range g.heads {
			if d.Kind != 0 {
				mark[d.Rank] = true
			}
		}
	}
	for _, x := range s.active {
		mark[x.recv.Rank] = true
	}
}

// Unmatched lists the sends no receive ever matched (for the end-of-job report).
func (s *Scheduler) Unmatched() []proto.Descriptor {
	var out []proto.Descriptor
	for _, q := range s.unexpected {
		for _, o := range q {
			out = append(out, o.d)
		}
	}
	slices.SortFunc(out, func(a, b proto.Descriptor) int {
		if a.Rank != b.Rank {
			return int(a.Rank - b.Rank)
		}
		return int(a.Seq) - int(b.Seq)
	})
	return out
}

// WaitsFor returns, for each rank, the ranks it waits for (the edges of the
// wait-for graph), derived from Waits: a receive waits for its source (every
// other rank for ANY_SOURCE), a send for its destination (an eager send:
// only when Waits listed it, its rank waiting for a match), a collective for the
// members that have not entered it.
func (s *Scheduler) WaitsFor(ws []Wait) [][]proto.Rank {
	n := len(s.nodeOf)
	edges := make([][]proto.Rank, n)
	add := func(from, to proto.Rank) {
		if from != to && !slices.Contains(edges[from], to) {
			edges[from] = append(edges[from], to)
		}
	}
	for _, w := range ws {
		switch w.Why {
		case "recv":
			if w.D.Peer == proto.AnySource {
				for r := 0; r < n; r++ {
					add(w.Rank, proto.Rank(r))
				}
			} else {
				add(w.Rank, w.D.Peer)
			}
		case "send", "eager":
			add(w.Rank, w.D.Peer)
		case "collective":
			for _, r := range s.missing(w.D) {
				add(w.Rank, r)
			}
		}
	}
	return edges
}

// Cycle finds a cycle in the wait-for graph restricted to ranks in blocked,
// or returns nil.
func Cycle(edges [][]proto.Rank, blocked []bool) []proto.Rank {
	const white, grey, black = 0, 1, 2
	color := make([]int, len(edges))
	var stack []proto.Rank
	var found []proto.Rank
	var visit func(r proto.Rank) bool
	visit = func(r proto.Rank) bool {
		color[r] = grey
		stack = append(stack, r)
		for _, t := range edges[r] {
			if !blocked[t] {
				continue
			}
			if color[t] == grey {
				i := slices.Index(stack, t)
				found = append(slices.Clone(stack[i:]), t)
				return true
			}
			if color[t] == white && visit(t) {
				return true
			}
		}
		stack = stack[:len(stack)-1]
		color[r] = black
		return false
	}
	for r := range edges {
		if blocked[r] && color[r] == white && visit(proto.Rank(r)) {
			return found
		}
	}
	return nil
}

// DescribeWait says in words what w waits for.
func DescribeWait(w Wait) string {
	d := w.D
	tag := fmt.Sprintf("tag %d", d.Tag)
	if d.Tag == proto.AnyTag {
		tag = "any tag"
	}
	if k := d.Pair(); k != 0 {
		tag += fmt.Sprintf(", partitioned pair %d", k)
	}
	comm := ""
	if d.Comm != 0 {
		comm = fmt.Sprintf(", communicator %d", d.Comm)
	}
	switch w.Why {
	case "recv":
		src := fmt.Sprintf("rank %d", d.Peer)
		if d.Peer == proto.AnySource {
			src = "any rank"
		}
		what := "a message"
		if d.Kind != proto.KindRecv {
			what = "a message to probe"
		}
		return fmt.Sprintf("waits for %s from %s (%s%s)", what, src, tag, comm)
	case "send":
		return fmt.Sprintf("its send to rank %d (%s, %d bytes%s) waits for a matching receive", d.Peer, tag, d.Len, comm)
	case "eager": // no tag: a rank's eager sends to one rank collapse into one line
		return fmt.Sprintf("its eager sends to rank %d (MPI_Send of at most inline_max bytes, returned at their post%s) wait for matching receives; past max(eager_max, size) of them a send waits for one", d.Peer, comm)
	case "collective":
		which := fmt.Sprintf("call #%d", d.CollSeq)
		if d.Persist {
			which = d.CollCall()
		}
		return fmt.Sprintf("waits in %s (%s on %s) for the members that have not entered it", DescribeCall(d), which, commName(d.Comm))
	case "moving":
		return "has a message still moving"
	}
	return w.Why
}

// FormatCycle renders a cycle as "0 -> 1 -> 0".
func FormatCycle(c []proto.Rank) string {
	parts := make([]string, len(c))
	for i, r := range c {
		parts[i] = fmt.Sprint(r)
	}
	return strings.Join(parts, " -> ")
}
