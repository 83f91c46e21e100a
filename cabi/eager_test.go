package main

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestEagerSend runs testdata/eager.c: a stream of small blocking sends
// round a ring before any receive (each buffer written again as soon as
// MPI_Send returns), a ready send, and a rank's last sends just before its
// MPI_Finalize, every message checked byte for byte; on one node and two,
// under --deterministic, under --check buffers (and buffers,flow), which
// must not report the send buffers written, or received into, after the
// sends returned, and recorded and replayed. Nothing is left for the leak
// report.
func TestEagerSend(t *testing.T) {
	exe := compile(t, "bcscc", "testdata/eager.c")
	rec := filepath.Join(t.TempDir(), "rec")
	for _, c := range []struct {
		name string
		n    int
		args []string
	}{
		{"n3", 3, nil},
		{"nodes2", 4, []string{"--nodes", "2"}},
		{"deterministic", 3, []string{"--deterministic"}},
		{"check", 3, []string{"--check", "buffers"}},
		{"check-flow", 3, []string{"--check", "buffers,flow"}},
		{"record", 3, []string{"--record", rec}},
		{"replay", 3, []string{"--replay", rec}}, // of the record case's job
	} {
		t.Run(c.name, func(t *testing.T) {
			args := append([]string{"-n", strconv.Itoa(c.n)}, c.args...)
			r := bcsrun(t, append(args, exe)...)
			okRanks(t, r, "eager", c.n)
			for _, bad := range []string{"MPI_ERR_BUFFER", "leak", "never received", "warning"} {
				if strings.Contains(r.stderr, bad) {
					t.Errorf("stderr mentions %q:\n%s", bad, r.stderr)
				}
			}
		})
	}
}

// TestEagerFlood runs testdata/eagerflood.c (eager_max, back-pressure):
// every rank sends one message to every other before receiving, at the
// smallest eager_max (the limit is then the job's size) and others; then
// every other rank floods rank 0 with many times the limit of small
// blocking sends, each checked byte for byte and in order, and each sender
// finds from the runtime's count (MPI_T bcs_eager_unmatched_max) that it
// had exactly the limit unmatched at most: reached (the program makes sure
// of it before rank 0 receives) and never passed. On one node and two,
// under --deterministic, and recorded and replayed (the sends that waited
// for a match change nothing the replay checks).
func TestEagerFlood(t *testing.T) {
	exe := compile(t, "bcscc", "testdata/eagerflood.c")
	rec := filepath.Join(t.TempDir(), "rec")
	for _, c := range []struct {
		name     string
		n        int
		eagerMax string
		msgs     string
		args     []string
	}{
		{"smallest", 3, "1", "100", nil},
		{"max16", 3, "16", "300", nil},
		{"nodes2", 4, "8", "100", []string{"--nodes", "2"}},
		{"deterministic", 3, "4", "100", []string{"--deterministic"}},
		{"record", 3, "4", "100", []string{"--record", rec}},
		{"replay", 3, "4", "100", []string{"--replay", rec}}, // of the record case's job
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv("BCS_EAGER_MAX", c.eagerMax)
			args := append([]string{"-n", strconv.Itoa(c.n)}, c.args...)
			r := bcsrun(t, append(args, exe, c.eagerMax, c.msgs)...)
			okRanks(t, r, "eagerflood", c.n)
			for _, bad := range []string{"leak", "never received", "warning"} {
				if strings.Contains(r.stderr, bad) {
					t.Errorf("stderr mentions %q:\n%s", bad, r.stderr)
				}
			}
		})
	}
}

// TestEagerBoundDeadlockReported runs testdata/eagerh2h.c: two ranks each
// send 100 small messages to the other before receiving. With eager_max
// 128 the runtime buffers them all and the job completes; with eager_max
// 16 the program relies on more buffering than the bound, both ranks wait
// in MPI_Send, and the job ends with the deadlock report naming the eager
// sends and the cycle, not a hang.
func TestEagerBoundDeadlockReported(t *testing.T) {
	exe := compile(t, "bcscc", "testdata/eagerh2h.c")
	t.Setenv("BCS_DEADLOCK_SLICES", "50")
	t.Run("fits", func(t *testing.T) {
		t.Setenv("BCS_EAGER_MAX", "128")
		okRanks(t, bcsrun(t, "-n", "2", exe, "100"), "h2h", 2)
	})
	t.Run("past", func(t *testing.T) {
		t.Setenv("BCS_EAGER_MAX", "16")
		r := bcsrun(t, "-n", "2", exe, "100")
		if r.code == 0 {
			t.Fatalf("the job succeeded, want a deadlock report\nstdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
		}
		for _, want := range []string{"deadlock", "rank 0 (in MPI_Send): its eager sends to rank 1", "rank 1 (in MPI_Send): its eager sends to rank 0", ", 16 requests", "wait-for cycle: 0 -> 1 -> 0"} {
			if !strings.Contains(r.stderr, want) {
				t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
			}
		}
	})
}
