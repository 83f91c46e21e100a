package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestRecordReplayC: record and replay work for C programs through the ABI
// unchanged: wildcard receives, an Iprobe polling loop, and MPI_Testany and
// MPI_Waitsome (which the ABI composes from mpiapi's Test and Waitany)
// replay to the recorded outcomes with the senders' delays reversed or new.
func TestRecordReplayC(t *testing.T) {
	exe := compile(t, "bcscc", "testdata/replayrace.c")
	rec := filepath.Join(t.TempDir(), "rec")
	t.Setenv("E2E_DELAY", "random:2000")
	first := bcsrun(t, "-n", "4", "--record", rec, exe, "2")
	if first.code != 0 || strings.Count(first.stdout, "\n") != 3 {
		t.Fatalf("recording: exit %d\nstdout:\n%s\nstderr:\n%s", first.code, first.stdout, first.stderr)
	}
	for _, delay := range []string{"down:3000", "random:3000"} {
		t.Setenv("E2E_DELAY", delay)
		r := bcsrun(t, "-n", "4", "--replay", rec, exe, "2")
		if r.code != 0 || r.stdout != first.stdout {
			t.Fatalf("replay with E2E_DELAY=%s: exit %d\nstdout:\n%s\nrecorded:\n%s\nstderr:\n%s", delay, r.code, r.stdout, first.stdout, r.stderr)
		}
	}
}

// TestRecordReplayRefusesWindows: one-sided communication is refused in a
// recorded and in a replayed job (its progress is outside the replay log):
// each window constructor fails with MPI_ERR_UNSUPPORTED_OPERATION and a
// message naming the call and why.
func TestRecordReplayRefusesWindows(t *testing.T) {
	exe := compile(t, "bcscc", "testdata/replaywin.c")
	rec := filepath.Join(t.TempDir(), "rec")
	okRanks(t, bcsrun(t, "-n", "2", "--record", rec, exe), "replaywin", 2)
	okRanks(t, bcsrun(t, "-n", "2", "--replay", rec, exe), "replaywin", 2)
	for _, c := range []struct{ flag, want string }{
		{"--record", "MPI_Win_create: MPI_ERR_UNSUPPORTED_OPERATION: one-sided communication is not recorded (bcsrun --record): a window's progress posts and polls receives"},
		{"--replay", "MPI_Win_create: MPI_ERR_UNSUPPORTED_OPERATION: one-sided communication is not replayed (bcsrun --replay)"},
	} {
		dir := rec
		if c.flag == "--record" {
			dir = filepath.Join(t.TempDir(), "rec2")
		}
		r := bcsrun(t, "-n", "2", c.flag, dir, exe, "fatal")
		if r.code == 0 || strings.Contains(r.stdout, "not reached") || !strings.Contains(r.stderr, c.want) {
			t.Fatalf("%s fatal: exit %d, want stderr containing %q\nstdout:\n%s\nstderr:\n%s", c.flag, r.code, c.want, r.stdout, r.stderr)
		}
	}
}
