package launch

import (
	"bufio"
	"cmp"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/bcsmpi/bcsmpi/internal/proto"
)

// The leak report. Every rank writes what it did not release to the report
// pipe at MPI_Finalize, one "RANK TEXT" line per leak (mpiapi's leak.go);
// the runtime knows the messages sent but never received. At the end of a job
// that otherwise succeeded, bcsrun prints both in one report: a warning under
// leak_check: warn, an error that fails the job under leak_check: error.

// Bounds on what the ranks may send: lines beyond them are counted, not kept.
const (
	leakLinesMax   = 10000
	leakLineMax    = 4096
	leakPrintedMax = 50 // items printed; the rest are counted
)

// rankLeak is one line of a rank's part of the report.
type rankLeak struct {
	rank int
	text string
}

// readLeaks reads the report pipe until EOF (or an error such as a read
// deadline) and returns the well-formed lines, in rank order (each rank's in
// the order it wrote them), and how many lines were dropped as malformed or
// beyond the bounds. The bytes come from the rank processes: they are checked,
// never trusted.
func readLeaks(r io.Reader, ranks int) (leaks []rankLeak, dropped int) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, leakLineMax), leakLineMax)
	for {
		if !sc.Scan() {
			if sc.Err() == bufio.ErrTooLong { // skip the long line, keep reading
				dropped++
				sc = bufio.NewScanner(r)
				sc.Buffer(make([]byte, 0, leakLineMax), leakLineMax)
				continue
			}
			break
		}
		num, text, ok := strings.Cut(sc.Text(), " ")
		rank, err := strconv.Atoi(num)
		if !ok || err != nil || rank < 0 || rank >= ranks || text == "" || len(leaks) == leakLinesMax {
			dropped++
			continue
		}
		leaks = append(leaks, rankLeak{rank: rank, text: strings.ToValidUTF8(text, "?")})
	}
	slices.SortStableFunc(leaks, func(a, b rankLeak) int { return cmp.Compare(a.rank, b.rank) })
	return leaks, dropped
}

// leakReport renders the one report, or "" when there is nothing to report.
// fail says whether it fails the job (leak_check: error).
func leakReport(mode string, leaks []rankLeak, dropped int, lost []proto.Descriptor) (report string, fail bool) {
	n := len(leaks) + len(lost)
	if mode == "off" || (n == 0 && dropped == 0) {
		return "", false
	}
	var b strings.Builder
	level, hint := "warning", `leak_check: error fails the job, off silences this`
	if mode == "error" {
		level, hint, fail = "error", "leak_check: error", true
	}
	fmt.Fprintf(&b, "bcsmpi: %s: %d resource(s) were not released by the end of the job (%s):\n", level, n, hint)
	printed := 0
	item := func(format string, a ...any) {
		if printed < leakPrintedMax {
			fmt.Fprintf(&b, "  "+format+"\n", a...)
		}
		printed++
	}
	for _, l := range leaks {
		item("rank %d: %s", l.rank, l.text)
	}
	for _, d := range lost {
		on := ""
		if d.Comm != 0 {
			on = fmt.Sprintf(" on communicator %d", d.Comm)
		}
		item("message rank %d -> rank %d, tag %d, %d bytes%s: sent but never received", d.Rank, d.Peer, d.Tag, d.Len, on)
	}
	if printed > leakPrintedMax {
		fmt.Fprintf(&b, "  ... and %d more\n", printed-leakPrintedMax)
	}
	if dropped > 0 {
		fmt.Fprintf(&b, "  (%d malformed or excess report line(s) from the ranks were dropped)\n", dropped)
	}
	return b.String(), fail
}
