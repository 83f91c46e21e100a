package launch

import (
	"strings"
	"testing"

	"github.com/bcsmpi/bcsmpi/internal/proto"
)

// TestReadLeaks: lines from the ranks are checked (rank in range, text
// present), kept in rank order with each rank's order preserved, and the rest
// counted as dropped.
func TestReadLeaks(t *testing.T) {
	in := "1 b first\n0 a\nx no rank\n7 out of range\n-1 negative\n2\n1 b second\n" + "0 " + strings.Repeat("z", leakLineMax+10) + "\n0 after the long line\n"
	leaks, dropped := readLeaks(strings.NewReader(in), 3)
	var got []string
	for _, l := range leaks {
		got = append(got, string(rune('0'+l.rank))+":"+l.text)
	}
	want := "0:a|0:after the long line|1:b first|1:b second"
	if strings.Join(got, "|") != want {
		t.Errorf("leaks %q, want %q", strings.Join(got, "|"), want)
	}
	if dropped < 5 {
		t.Errorf("dropped %d, want at least the 4 malformed lines and the long one", dropped)
	}
}

// TestLeakReportText: one report, a warning or an error by mode, nothing
// when off or empty, bounded in length.
func TestLeakReportText(t *testing.T) {
	leaks := []rankLeak{{0, "communicator 1 (2 ranks, made by MPI_Comm_dup) was never freed"}}
	lost := []proto.Descriptor{{Kind: proto.KindSend, Rank: 0, Peer: 1, Tag: 3, Len: 4}, {Kind: proto.KindSend, Comm: 2, Rank: 1, Peer: 0, Tag: 5, Len: 8}}
	text, fail := leakReport("warn", leaks, 0, lost)
	want := "bcsmpi: warning: 3 resource(s) were not released by the end of the job (leak_check: error fails the job, off silences this):\n" +
		"  rank 0: communicator 1 (2 ranks, made by MPI_Comm_dup) was never freed\n" +
		"  message rank 0 -> rank 1, tag 3, 4 bytes: sent but never received\n" +
		"  message rank 1 -> rank 0, tag 5, 8 bytes on communicator 2: sent but never received\n"
	if text != want || fail {
		t.Errorf("warn: fail %v, report\n%s\nwant\n%s", fail, text, want)
	}
	if text, fail := leakReport("error", leaks, 1, nil); !fail || !strings.HasPrefix(text, "bcsmpi: error: 1 resource(s)") || !strings.Contains(text, "(1 malformed or excess report line(s) from the ranks were dropped)") {
		t.Errorf("error: fail %v, report\n%s", fail, text)
	}
	if text, fail := leakReport("off", leaks, 0, lost); text != "" || fail {
		t.Errorf("off: %q, %v", text, fail)
	}
	if text, fail := leakReport("error", nil, 0, nil); text != "" || fail {
		t.Errorf("nothing leaked: %q, %v", text, fail)
	}
	many := make([]rankLeak, leakPrintedMax+7)
	for i := range many {
		many[i] = rankLeak{0, "x"}
	}
	text, _ = leakReport("warn", many, 0, nil)
	if strings.Count(text, "\n  rank 0: x") != leakPrintedMax || !strings.Contains(text, "  ... and 7 more\n") {
		t.Errorf("%d items: report\n%s", len(many), text)
	}
}
