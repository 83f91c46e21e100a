package main

import (
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
)

// spansRE reads bcsrun -v's pull-order line: unfinished orders and spans.
var spansRE = regexp.MustCompile(`pull orders: \d+ served \(\d+ bytes copied by the receivers\), \d+ revoked, (\d+) unfinished; (\d+) spans`)

func spanCount(t *testing.T, r run) int {
	t.Helper()
	m := spansRE.FindStringSubmatch(r.stderr)
	if m == nil {
		t.Fatalf("bcsrun -v printed no pull-order line:\n%s", r.stderr)
	}
	if m[1] != "0" {
		t.Errorf("%s pull orders unfinished, want 0 (the rank and the agent disagree on a receive buffer)\n%s", m[1], r.stderr)
	}
	n, _ := strconv.Atoi(m[2])
	return n
}

// TestSpans runs the spans scenario (large messages between the ranks of
// each node, odd sizes, blocking and non-blocking receives, both directions,
// several in flight, every byte checked) on one and on two nodes, at a
// small budget (many spans, each message crossing span and slice
// boundaries) and at the automatic one: the data arrive intact, and spans
// carried some of them (the receiver of the blocking 9 MiB receive is
// blocked in MPI_Recv for many slices, so a span cannot be missed).
func TestSpans(t *testing.T) {
	for _, c := range []struct{ budget, nodes string }{{"262144", "1"}, {"262144", "2"}, {"", "1"}} {
		t.Setenv("BCS_BYTES_PER_SLICE_MAX", c.budget)
		r := bcsrun(t, "-v", "-n", "4", "--nodes", c.nodes, "./e2eprog", "spans")
		if r.code != 0 || r.stdout != "spans ok: 4 ranks\n" {
			t.Fatalf("budget %q, %s nodes: exit %d\nstdout:\n%s\nstderr:\n%s", c.budget, c.nodes, r.code, r.stdout, r.stderr)
		}
		if n := spanCount(t, r); n == 0 {
			t.Errorf("budget %q, %s nodes: no span\n%s", c.budget, c.nodes, r.stderr)
		}
	}
	// span_slices_max 0: none.
	t.Setenv("BCS_BYTES_PER_SLICE_MAX", "262144")
	t.Setenv("BCS_SPAN_SLICES_MAX", "0")
	r := bcsrun(t, "-v", "-n", "2", "./e2eprog", "spans")
	if r.code != 0 || spanCount(t, r) != 0 {
		t.Errorf("span_slices_max 0: exit %d, want 0 and no span\n%s", r.code, r.stderr)
	}
}

// TestSpansChecked: under the checks, large messages move in per-slice
// chunks (no span), verified as before, and intact.
func TestSpansChecked(t *testing.T) {
	t.Setenv("BCS_BYTES_PER_SLICE_MAX", "262144")
	t.Setenv("BCS_CHECK", "buffers,flow")
	r := bcsrun(t, "-v", "-n", "2", "./e2eprog", "spans")
	if r.code != 0 || r.stdout != "spans ok: 2 ranks\n" {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	if n := spanCount(t, r); n != 0 {
		t.Errorf("%d spans under BCS_CHECK, want none", n)
	}
}

// TestSpansReplay: the spans scenario recorded with its slice log on two
// nodes (spans given whatever the ranks' status, so the plans follow from
// the exchange alone) replays slice by slice: every busy recorded slice is
// re-formed with the recorded descriptors and plan, spans included.
func TestSpansReplay(t *testing.T) {
	t.Setenv("BCS_BYTES_PER_SLICE_MAX", "262144")
	rec := filepath.Join(t.TempDir(), "rec")
	first := bcsrun(t, "-v", "-n", "4", "--nodes", "2", "--record", rec+",slices", "./e2eprog", "spans")
	if first.code != 0 {
		t.Fatalf("recording: exit %d\nstderr:\n%s", first.code, first.stderr)
	}
	if n := spanCount(t, first); n == 0 {
		t.Fatalf("recording: no span\n%s", first.stderr)
	}
	r := bcsrun(t, "-v", "-n", "4", "--nodes", "2", "--replay", rec, "./e2eprog", "spans")
	m := replayedRE.FindStringSubmatch(r.stderr)
	if r.code != 0 || r.stdout != first.stdout || m == nil {
		t.Fatalf("replay: exit %d\nstdout:\n%s\nrecorded:\n%s\nstderr:\n%s", r.code, r.stdout, first.stdout, r.stderr)
	}
	if m[3] != m[4] || m[3] == "0" {
		t.Errorf("replay: %s of the %s busy recorded slices re-formed, want all", m[3], m[4])
	}
	if n := spanCount(t, r); n == 0 {
		t.Errorf("replay: no span\n%s", r.stderr)
	}
}
