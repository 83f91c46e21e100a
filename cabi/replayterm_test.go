package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestReplayKeepsSIGTERMDisposition: a C program that handles SIGTERM
// itself, or ignores it, does so under --replay as when recorded (the
// replaying rank holds SIGTERM for its divergence report only where its
// action is the default).
func TestReplayKeepsSIGTERMDisposition(t *testing.T) {
	exe := compile(t, "bcscc", "testdata/termhandler.c")
	for _, mode := range []string{"handle", "ignore"} {
		rec := filepath.Join(t.TempDir(), "rec")
		want := "handled SIGTERM"
		if mode == "ignore" {
			want = "ignored SIGTERM"
		}
		for _, args := range [][]string{{"--record", rec}, {"--replay", rec}} {
			r := bcsrun(t, append(append([]string{"-n", "2"}, args...), exe, mode)...)
			if r.code != 0 || strings.Count(r.stdout, want) != 2 {
				t.Errorf("%s %s: exit %d, want 0 and %q from both ranks\nstdout:\n%s\nstderr:\n%s", mode, args[0], r.code, want, r.stdout, r.stderr)
			}
		}
	}
}
