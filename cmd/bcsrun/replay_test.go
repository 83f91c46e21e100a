package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var replayRuns = flag.Int("replay.runs", 0, "extra replays with new random delays in TestRecordReplay")

// TestRecordReplay: a program of races (wildcard receives, Iprobe and Probe,
// Improbe and Mprobe, Testany/Waitany, Testsome, Test, Testall against senders that sleep at
// random) is recorded once on two nodes (whose agents write their ranks'
// files concurrently) and replayed with other delays — senders in the
// opposite order, new random ones, and on one node — and prints the recorded
// outcomes every time, down to the number of polls that found nothing. The
// same program with other arguments under replay stops at the first call
// that differs, naming the rank and the call. More replays with new random
// delays: -replay.runs=20.
func TestRecordReplay(t *testing.T) {
	rec := filepath.Join(t.TempDir(), "rec")
	t.Setenv("E2E_DELAY", "random:2000")
	first := bcsrun(t, "-n", "4", "--nodes", "2", "--record", rec, "./e2eprog", "replayrace", "2")
	if first.code != 0 || strings.Count(first.stdout, "\n") != 5 {
		t.Fatalf("recording: exit %d\nstdout:\n%s\nstderr:\n%s", first.code, first.stdout, first.stderr)
	}
	cases := []struct {
		delay string
		flags []string
	}{
		{"down:3000", []string{"--nodes", "2"}},
		{"random:3000", []string{"--nodes", "2"}},
		{"up:1000", nil},
	}
	for i := range *replayRuns {
		cases = append(cases, struct {
			delay string
			flags []string
		}{"random:3000", []string{"--nodes", fmt.Sprint(1 + i%3)}})
	}
	for _, c := range cases {
		t.Setenv("E2E_DELAY", c.delay)
		r := bcsrun(t, append(append([]string{"-n", "4", "--replay", rec}, c.flags...), "./e2eprog", "replayrace", "2")...)
		if r.code != 0 || r.stdout != first.stdout {
			t.Fatalf("replay with E2E_DELAY=%s %v: exit %d\nstdout:\n%s\nrecorded:\n%s\nstderr:\n%s", c.delay, c.flags, r.code, r.stdout, first.stdout, r.stderr)
		}
		if c.flags == nil && !strings.Contains(r.stderr, "bcsrun: warning: replaying "+rec+": nodes: recorded 2, now 1;") {
			t.Errorf("replay on 1 node: no warning about the nodes\nstderr:\n%s", r.stderr)
		}
	}

	// Three messages per sender instead of two: rank 0's seventh logged
	// call is the seventh wildcard receive, where the recording has the
	// first Iprobe.
	r := bcsrun(t, "-n", "4", "--nodes", "2", "--replay", rec, "./e2eprog", "replayrace", "3")
	for _, want := range []string{
		`bcsrun: warning: replaying ` + rec + `: arguments: recorded ["replayrace" "2"], now ["replayrace" "3"]`,
		"bcsmpi: replay diverged from the recording " + rec + ": rank 0, call 7 MPI_Recv(source ANY_SOURCE, tag ANY_TAG): recorded MPI_Iprobe (",
		"bcsrun: rank 0 exited with status 1; job aborted",
	} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("changed program under replay: stderr lacks %q\nexit %d, stderr:\n%s", want, r.code, r.stderr)
		}
	}
	if r.code == 0 {
		t.Errorf("changed program under replay: exit 0")
	}

	// The same arguments, but the first receive asks for tag 7 (the
	// recording matched tag 0 or 1 there): the program changed outside MPI.
	t.Setenv("E2E_TAG", "7")
	r = bcsrun(t, "-n", "4", "--nodes", "2", "--replay", rec, "./e2eprog", "replayrace", "2")
	for _, want := range []string{
		"bcsmpi: replay diverged from the recording " + rec + ": rank 0, call 1 MPI_Recv(source ANY_SOURCE, tag 7): recorded source ",
		"; the program posted a receive for tag 7",
	} {
		if r.code == 0 || !strings.Contains(r.stderr, want) {
			t.Errorf("tag changed under replay: exit %d, stderr lacks %q:\n%s", r.code, want, r.stderr)
		}
	}
	if strings.Contains(r.stderr, "warning: replaying") {
		t.Errorf("same program and arguments, yet a warning:\n%s", r.stderr)
	}
}

// TestRecordEmptyLog: a program without wildcards, Iprobe or the test
// family has an empty log: each rank's file is its header and END. A second
// recording into the same directory is refused.
func TestRecordEmptyLog(t *testing.T) {
	rec := filepath.Join(t.TempDir(), "rec")
	r := bcsrun(t, "-n", "3", "--record", rec, "./ring")
	if r.code != 0 {
		t.Fatalf("exit %d\nstderr:\n%s", r.code, r.stderr)
	}
	for i := range 3 {
		st, err := os.Stat(filepath.Join(rec, "rank"+string(rune('0'+i))+".rpl"))
		if err != nil || st.Size() != 32+2 {
			t.Errorf("rank %d's file: %v, want 34 bytes (header and END)", i, err)
		}
	}
	r = bcsrun(t, "-n", "3", "--record", rec, "./ring")
	if r.code != 2 || !strings.Contains(r.stderr, "the directory already holds a recording (replay.json)") {
		t.Errorf("second recording: exit %d\nstderr:\n%s", r.code, r.stderr)
	}
}

// TestReplayBadRecording: --replay of a directory that is missing, holds no
// recording, a recording of another version or rank count, or lacks a rank's
// file, or that comes with --record, fails before any rank starts, saying why.
func TestReplayBadRecording(t *testing.T) {
	rec := filepath.Join(t.TempDir(), "rec")
	if r := bcsrun(t, "-n", "2", "--record", rec, "./ring"); r.code != 0 {
		t.Fatalf("recording: exit %d\nstderr:\n%s", r.code, r.stderr)
	}
	empty := t.TempDir()
	manifest, _ := os.ReadFile(filepath.Join(rec, "replay.json"))
	v7 := t.TempDir()
	os.WriteFile(filepath.Join(v7, "replay.json"), []byte(strings.Replace(string(manifest), `"version": 6`, `"version": 7`, 1)), 0o644)
	for _, c := range []struct {
		dir  string
		n    string
		want string
	}{
		{filepath.Join(empty, "missing"), "2", "is not a directory (want one written by bcsrun --record)"},
		{empty, "2", "has no replay.json (want a directory written by bcsrun --record)"},
		{v7, "2", "version 7, this bcsrun reads version 6"},
		{rec, "3", "the recording has 2 ranks, this job -n 3"},
	} {
		r := bcsrun(t, "-n", c.n, "--replay", c.dir, "./ring")
		if r.code != 2 || !strings.Contains(r.stderr, c.want) {
			t.Errorf("--replay %s -n %s: exit %d, want 2 and %q\nstderr:\n%s", c.dir, c.n, r.code, c.want, r.stderr)
		}
	}
	if r := bcsrun(t, "-n", "2", "--replay", rec, "--record", filepath.Join(empty, "again"), "./ring"); r.code != 2 || !strings.Contains(r.stderr, "a job is recorded or replayed, not both") {
		t.Errorf("--record with --replay: exit %d\nstderr:\n%s", r.code, r.stderr)
	}
	os.Remove(filepath.Join(rec, "rank1.rpl"))
	if r := bcsrun(t, "-n", "2", "--replay", rec, "./ring"); r.code != 2 || !strings.Contains(r.stderr, "rank 1's records: open ") {
		t.Errorf("missing rank file: exit %d\nstderr:\n%s", r.code, r.stderr)
	}
}

// TestReplayCancel: whether MPI_Cancel won is logged and replayed. A cancel
// that lost in the recording (the message came first) is not posted on
// replay, so the receive completes even where the cancel would now win; one
// that won wins again with the same timing, and where the message now comes
// first the replay stops at the cancel, naming it.
func TestReplayCancel(t *testing.T) {
	dir := t.TempDir()
	run := func(rec, flag, timing string) run {
		t.Helper()
		t.Setenv("E2E_CANCEL", timing)
		return bcsrun(t, "-n", "2", flag, rec, "./e2eprog", "cancelrace")
	}
	won, lost := filepath.Join(dir, "won"), filepath.Join(dir, "lost")
	if r := run(won, "--record", "0:300000"); r.code != 0 || r.stdout != "cancelled true\n" {
		t.Fatalf("recording a cancel that wins: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	if r := run(lost, "--record", "300000:0"); r.code != 0 || r.stdout != "cancelled false\n" {
		t.Fatalf("recording a cancel that loses: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	if r := run(won, "--replay", "0:300000"); r.code != 0 || r.stdout != "cancelled true\n" {
		t.Errorf("replaying the cancel that won: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	// The timing that made the cancel win in the first recording.
	if r := run(lost, "--replay", "0:300000"); r.code != 0 || r.stdout != "cancelled false\n" {
		t.Errorf("replaying the cancel that lost, with the timing of one that wins: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	r := run(won, "--replay", "300000:0")
	want := "bcsmpi: replay diverged from the recording " + won + ": rank 0, call 1 MPI_Cancel(request #"
	want2 := ", MPI_Irecv): recorded: the cancel succeeded; in this run the request completed first (source 1 tag 5)"
	if r.code == 0 || !strings.Contains(r.stderr, want) || !strings.Contains(r.stderr, want2) {
		t.Errorf("replaying the cancel that won, with the message first: exit %d, want the divergence %q…%q\nstdout:\n%s\nstderr:\n%s", r.code, want, want2, r.stdout, r.stderr)
	}
}

// TestReplayNeverSent: under replay a wildcard receive waits for the
// message it matched in the recording; when the program changed so that its
// sender never sends it (E2E_NOSEND), the job deadlocks, and the receiving
// rank reports the divergence: its rank, the call, the recorded source and
// tag and the message it waits for.
func TestReplayNeverSent(t *testing.T) {
	rec := filepath.Join(t.TempDir(), "rec")
	t.Setenv("E2E_DELAY", "random:2000")
	first := bcsrun(t, "-n", "4", "--record", rec, "./e2eprog", "replayrace", "2")
	if first.code != 0 {
		t.Fatalf("recording: exit %d\nstderr:\n%s", first.code, first.stderr)
	}
	// The first wildcard receive that matched rank 2, and its tag.
	line := strings.Fields(strings.TrimPrefix(strings.SplitN(first.stdout, "\n", 2)[0], "recv "))
	call, tag := 0, ""
	for i, m := range line {
		if src, tg, _ := strings.Cut(m, ":"); src == "2" {
			call, tag = i+1, tg
			break
		}
	}
	if call == 0 {
		t.Fatalf("the recording has no message from rank 2: %q", first.stdout)
	}
	t.Setenv("E2E_NOSEND", "2")
	t.Setenv("BCS_DEADLOCK_SLICES", "50")
	r := bcsrun(t, "-n", "4", "--replay", rec, "./e2eprog", "replayrace", "2")
	want := fmt.Sprintf("bcsmpi: replay diverged from the recording %s: rank 0, call %d MPI_Recv(source ANY_SOURCE, tag ANY_TAG): recorded source 2 tag %s; the replay waits for that message (from world rank 2, tag %s), which was never sent before the job stopped", rec, call, tag, tag)
	if r.code == 0 || !strings.Contains(r.stderr, want) || !strings.Contains(r.stderr, "deadlock: every MPI rank has been blocked") {
		t.Errorf("a recorded sender that never sends: exit %d, want a deadlock and %q\nstderr:\n%s", r.code, want, r.stderr)
	}
}

// replayedSlices parses bcsrun's report of a replay of the slice log: the
// recorded slices re-formed (with descriptors or a plan) and their numbers
// in the recording.
var replayedRE = regexp.MustCompile(`bcsrun: replayed \S+: (\d+) of the (\d+) recorded slices re-formed \((\d+) of the (\d+) with descriptors or a plan\), each with the recorded descriptors and plan`)

// TestReplaySlices: Level B. A job recorded with its slice log
// (--record DIR,slices) on two nodes is replayed with other delays: every
// recorded slice with descriptors or a plan is re-formed with the recorded
// count and hash of each rank's descriptors and the recorded plan hash (a
// difference stops the job), and the output is the recorded one. A program
// that changed under replay (E2E_TAG: rank 0's first receive asks for
// another tag) stops at the first slice that differs, naming it, the rank
// and its call; one whose sender skips a send and blocks (E2E_SKIPSEND) at
// the slice that lacks the send, naming the rank and the call it is blocked
// in. On one node the slices are not replayed (a warning), the calls are.
func TestReplaySlices(t *testing.T) {
	rec := filepath.Join(t.TempDir(), "rec")
	t.Setenv("E2E_DELAY", "random:2000")
	first := bcsrun(t, "-n", "4", "--nodes", "2", "--record", rec+",slices", "./e2eprog", "replayrace", "2")
	if first.code != 0 {
		t.Fatalf("recording: exit %d\nstderr:\n%s", first.code, first.stderr)
	}
	if _, err := os.Stat(filepath.Join(rec, "slices.rpl")); err != nil {
		t.Fatalf("no slice log: %v", err)
	}
	for _, delay := range []string{"down:3000", "random:3000"} {
		t.Setenv("E2E_DELAY", delay)
		r := bcsrun(t, "-n", "4", "--nodes", "2", "--replay", rec, "./e2eprog", "replayrace", "2")
		m := replayedRE.FindStringSubmatch(r.stderr)
		if r.code != 0 || r.stdout != first.stdout || m == nil {
			t.Fatalf("replay with E2E_DELAY=%s: exit %d\nstdout:\n%s\nrecorded:\n%s\nstderr:\n%s", delay, r.code, r.stdout, first.stdout, r.stderr)
		}
		if m[3] != m[4] || m[3] == "0" {
			t.Errorf("replay with E2E_DELAY=%s: %s of the %s busy recorded slices re-formed, want all", delay, m[3], m[4])
		}
		if strings.Contains(r.stderr, "warning") {
			t.Errorf("replay with E2E_DELAY=%s: a warning:\n%s", delay, r.stderr)
		}
	}

	t.Setenv("E2E_TAG", "7")
	r := bcsrun(t, "-n", "4", "--nodes", "2", "--replay", rec, "./e2eprog", "replayrace", "2")
	if want := regexp.MustCompile(`bcsmpi: job aborted: rank 0 \(node 0\): replay diverged from the recording: slice \d+: this rank's 1 descriptors differ from the recorded ones \(now: r0#1 recv from=any tag=7 `); r.code == 0 || !want.MatchString(r.stderr) {
		t.Errorf("a changed tag under replay: exit %d, stderr does not match %q:\n%s", r.code, want, r.stderr)
	}
	t.Setenv("E2E_TAG", "")

	t.Setenv("E2E_DELAY", "up:1000")
	r = bcsrun(t, "-n", "4", "--replay", rec, "./e2eprog", "replayrace", "2")
	if r.code != 0 || r.stdout != first.stdout || !strings.Contains(r.stderr, "the slices are not replayed (they need the recorded nodes and configuration), only the logged calls") || replayedRE.MatchString(r.stderr) {
		t.Errorf("replay on 1 node: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}

	// The cancel race, recorded with a cancel that wins, replayed with the
	// message first: the slices put the send after the cancel again.
	can := filepath.Join(t.TempDir(), "cancel")
	t.Setenv("E2E_CANCEL", "0:300000")
	if r := bcsrun(t, "-n", "2", "--record", can+",slices", "./e2eprog", "cancelrace"); r.code != 0 || r.stdout != "cancelled true\n" {
		t.Fatalf("recording the cancel race: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	t.Setenv("E2E_CANCEL", "300000:0")
	if r := bcsrun(t, "-n", "2", "--replay", can, "./e2eprog", "cancelrace"); r.code != 0 || r.stdout != "cancelled true\n" || !replayedRE.MatchString(r.stderr) {
		t.Errorf("replaying the slices of a cancel that won, with the message first: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	t.Setenv("E2E_SKIPSEND", "1")
	r = bcsrun(t, "-n", "2", "--replay", can, "./e2eprog", "cancelrace")
	if want := regexp.MustCompile(`bcsmpi: job aborted: rank 1 \(node 0\): replay diverged from the recording: slice \d+: the recording exchanged 1 descriptors of this rank in this slice; it posted 0 and is in MPI_Wait, so it will post no more before the slice`); r.code == 0 || !want.MatchString(r.stderr) {
		t.Errorf("a sender that skips its send under replay: exit %d, stderr does not match %q:\n%s", r.code, want, r.stderr)
	}
}
