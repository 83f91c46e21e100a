package main

import "testing"

// TestRMARefusalReportAwaited: a refused fetching request's report (opErr
// flagged excl 1) and its empty result travel on different streams; the
// origin's peer is not settled (so a flush does not return) while an
// empty result came and its report did not, whichever arrives first.
func TestRMARefusalReportAwaited(t *testing.T) {
	const target = 1
	msg := []byte("out of range")
	report := header{op: opErr, red: errRMARange, excl: 1, data: int64(len(msg))}

	w := &window{rank: 0, peers: make([]winPeer, 2)}
	w.peers[target].errs++ // the empty result first (pollResults)
	if w.settled(target) {
		t.Fatal("settled with a refusal's report still due")
	}
	w.serve(target, report, msg)
	if !w.settled(target) || w.deferred != string(msg) || w.defClass != errRMARange {
		t.Fatalf("after the report: settled %v, deferred %q (class %d); want settled and the report's error", w.settled(target), w.deferred, w.defClass)
	}

	w = &window{rank: 0, peers: make([]winPeer, 2)}
	w.serve(target, report, msg) // the report first
	w.peers[target].errs++       // then its empty result
	if !w.settled(target) || w.peers[target].errs != 0 {
		t.Fatalf("report then result: settled %v, errs %d; want settled, 0", w.settled(target), w.peers[target].errs)
	}

	w = &window{rank: 0, peers: make([]winPeer, 2)}
	w.serve(target, header{op: opErr, red: errType, data: int64(len(msg))}, msg) // a refused put: no result follows
	if w.peers[target].errs != 0 {
		t.Fatalf("a refused put's report moved errs to %d", w.peers[target].errs)
	}
}
