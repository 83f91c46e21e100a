package core

import (
	"errors"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"

	"github.com/bcsmpi/bcsmpi/internal/proto"
	"github.com/bcsmpi/bcsmpi/internal/reduce"
	"github.com/bcsmpi/bcsmpi/scheduler"
)

// harness drives several Nodes the way the master and the agents do, and
// prints a trace. The scripts in testdata are datadriven files (go test
// ./internal/core -rewrite regenerates the expected output); each directive
// prints what it caused:
//
//	config nodes=N ranks=R budget=B [restart=slice|early] [deadlock=G] [action=fail|warn]
//	    a job of R ranks spread over N nodes in blocks; deadlock=G sets
//	    DeadlockSlices, action=warn keeps the job going after a report
//	post
//	rR KIND [key=value ...]
//	    one descriptor per input line, posted during the current slice (see post)
//	status rR=STATUS ...
//	    the status byte of ranks (see parseStatus) that the agents send with
//	    every DEM from then on; none are sent before the first status
//	    directive (no deadlock detection)
//	slice [n=N]
//	    runs N slices (default 1) on every node and prints their trace
//
// Arguments are parsed strictly: a missing, unknown, repeated or unparsable
// argument fails the test, naming it.
type harness struct {
	t      testing.TB
	nodes  []*Node
	nodeOf []proto.NodeID
	cur    proto.SliceID
	seq    []uint64
	cseq   []uint32
	failed bool
	queued [][]proto.Descriptor // per node, in post order
	status []uint8              // nil: not sent
	out    strings.Builder
}

// args hands out a directive's arguments once each and fails the test on
// anything malformed or left over.
type args struct {
	t     testing.TB
	where string
	m     map[string]string
	keys  []string // in order, for done's message
	bare  []string // arguments without a value
}

func newArgs(t testing.TB, where string, cas []datadriven.CmdArg) *args {
	a := &args{t: t, where: where, m: map[string]string{}}
	for _, ca := range cas {
		switch len(ca.Vals) {
		case 0:
			a.bare = append(a.bare, ca.Key)
			continue
		case 1:
		default:
			t.Fatalf("%s: argument %s has %d values, want one", where, ca, len(ca.Vals))
		}
		if _, dup := a.m[ca.Key]; dup {
			t.Fatalf("%s: argument %q given twice", where, ca.Key)
		}
		a.m[ca.Key] = ca.Vals[0]
		a.keys = append(a.keys, ca.Key)
	}
	return a
}

// str takes key's value, or def when it is absent.
func (a *args) str(key, def string) string {
	v, ok := a.m[key]
	if !ok {
		return def
	}
	delete(a.m, key)
	return v
}

// need takes key's value and fails when it is absent.
func (a *args) need(key string) string {
	v, ok := a.m[key]
	if !ok {
		a.t.Fatalf("%s: missing argument %s=...", a.where, key)
	}
	delete(a.m, key)
	return v
}

// int takes key's value as an integer in lo..hi; anyVal is what "any" means
// (nil: "any" is not allowed).
func (a *args) int(key string, def, lo, hi int64, anyVal *int64) int64 {
	v, ok := a.m[key]
	if !ok {
		return def
	}
	delete(a.m, key)
	if v == "any" && anyVal != nil {
		return *anyVal
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < lo || n > hi {
		want := fmt.Sprintf("an integer in %d .. %d", lo, hi)
		if anyVal != nil {
			want += " or any"
		}
		a.t.Fatalf("%s: %s=%s: want %s", a.where, key, v, want)
	}
	return n
}

// reqInt takes key's value as an integer in lo..hi and fails when it is absent.
func (a *args) reqInt(key string, lo, hi int64) int64 {
	if _, ok := a.m[key]; !ok {
		a.t.Fatalf("%s: missing argument %s=...", a.where, key)
	}
	return a.int(key, 0, lo, hi, nil)
}

// oneOf takes key's value, which must be one of choices.
func (a *args) oneOf(key, def string, choices ...string) string {
	v := a.str(key, def)
	for _, c := range choices {
		if v == c {
			return v
		}
	}
	a.t.Fatalf("%s: %s=%s: want one of %s", a.where, key, v, strings.Join(choices, ", "))
	return ""
}

// done fails the test if an argument was not used.
func (a *args) done() {
	var left []string
	for _, k := range a.keys {
		if v, ok := a.m[k]; ok {
			left = append(left, k+"="+v)
		}
	}
	left = append(left, a.bare...)
	if len(left) > 0 {
		a.t.Fatalf("%s: unknown argument(s) %s", a.where, strings.Join(left, " "))
	}
}

func (h *harness) config(a *args) {
	if h.nodes != nil {
		h.t.Fatalf("%s: config given twice", a.where)
	}
	nn := int(a.reqInt("nodes", 1, 1<<10))
	nr := int(a.reqInt("ranks", 1, 1<<14))
	if nn > nr {
		h.t.Fatalf("%s: nodes=%d: want at most ranks=%d", a.where, nn, nr)
	}
	budget := uint64(a.int("budget", int64(scheduler.DefaultConfig.BytesPerSliceMax), 1024, 1<<32, nil))
	pol, err := ParseRestart(a.oneOf("restart", "slice", "slice", "early"))
	if err != nil {
		h.t.Fatal(err)
	}
	guard := uint64(a.int("deadlock", 0, 0, 1<<20, nil))
	warn := a.oneOf("action", "fail", "fail", "warn") == "warn"
	a.done()
	h.nodeOf = make([]proto.NodeID, nr)
	for r := range h.nodeOf {
		h.nodeOf[r] = proto.NodeID(r * nn / nr)
	}
	for i := 0; i < nn; i++ {
		h.nodes = append(h.nodes, New(Config{Node: proto.NodeID(i), NodeOf: h.nodeOf, Restart: pol,
			Sched:          scheduler.Config{BytesPerSliceMax: budget, ChunksPerSliceMax: 64},
			DeadlockSlices: guard, DeadlockWarn: warn}))
	}
	h.seq = make([]uint64, nr)
	h.cseq = make([]uint32, nr)
	h.queued = make([][]proto.Descriptor, nn)
}

// rank reads "rR" with R a rank of the job.
func (h *harness) rank(where, s string) int {
	r, err := strconv.Atoi(strings.TrimPrefix(s, "r"))
	if !strings.HasPrefix(s, "r") || err != nil || r < 0 || r >= len(h.nodeOf) {
		h.t.Fatalf("%s: rank %q: want r0 .. r%d", where, s, len(h.nodeOf)-1)
	}
	return r
}

// post reads one line "rR KIND key=value...": KIND is send (to=, tag=, len=,
// inline=yes), recv, probe, iprobe (from=R|any, tag=T|any, len=), barrier, or
// coll=NAME (root=, len=, type=, op=, inplace=yes).
func (h *harness) post(where, line string) {
	cmd, cas, err := datadriven.ParseLine(line)
	if err != nil {
		h.t.Fatalf("%s: %v", where, err)
	}
	r := h.rank(where, cmd)
	d := proto.Descriptor{Rank: proto.Rank(r), PostSlice: h.cur}
	var kind string
	var rest []datadriven.CmdArg
	for i, ca := range cas {
		if i == 0 {
			kind = ca.Key
			if kind == "coll" && len(ca.Vals) == 1 {
				rest = append(rest, datadriven.CmdArg{Key: "name", Vals: ca.Vals})
				continue
			}
			if len(ca.Vals) != 0 {
				h.t.Fatalf("%s: kind %s takes no value", where, ca)
			}
			continue
		}
		rest = append(rest, ca)
	}
	a := newArgs(h.t, where, rest)
	anySrc, anyTag := int64(proto.AnySource), int64(proto.AnyTag)
	maxRank := int64(len(h.nodeOf) - 1)
	switch kind {
	case "send":
		d.Kind = proto.KindSend
		d.Peer = proto.Rank(a.int("to", 0, 0, maxRank, nil))
		d.Tag = int32(a.int("tag", 0, 0, 1<<30, nil))
		d.Inline = a.oneOf("inline", "no", "no", "yes") == "yes"
	case "recv", "probe", "iprobe":
		d.Kind = map[string]proto.Kind{"recv": proto.KindRecv, "probe": proto.KindProbe, "iprobe": proto.KindIprobe}[kind]
		d.Peer = proto.Rank(a.int("from", 0, 0, maxRank, &anySrc))
		d.Tag = int32(a.int("tag", 0, 0, 1<<30, &anyTag))
	case "barrier":
		d.Kind, d.Coll = proto.KindColl, proto.CollBarrier
	case "coll":
		d.Kind = proto.KindColl
		name := a.need("name")
		for c := proto.CollBarrier; c <= proto.CollFree; c++ {
			if c.String() == name {
				d.Coll = c
			}
		}
		if d.Coll == 0 {
			h.t.Fatalf("%s: coll=%s: not a collective (barrier, bcast, allreduce, ...)", where, name)
		}
		d.SetRoot(proto.Rank(a.int("root", 0, 0, maxRank, nil)))
		d.Addr, d.RAddr = 0x1000, 0x100000
		typ := a.str("type", reduce.Float64.String())
		for t := reduce.Int8; t.Valid(); t++ {
			if t.String() == typ {
				d.DType = uint8(t)
			}
		}
		if d.DType == 0 {
			h.t.Fatalf("%s: type=%s: not an element type (int8, ..., float64)", where, typ)
		}
		if op, ok := a.m["op"]; ok {
			a.str("op", "")
			found := false
			for o := reduce.Sum; o <= reduce.Maxloc; o++ {
				if strings.EqualFold(o.String(), "MPI_"+op) {
					d.Op, found = uint8(o), true
				}
			}
			if !found {
				h.t.Fatalf("%s: op=%s: not a reduction (sum, max, bxor, ...)", where, op)
			}
		}
		d.InPlace = a.oneOf("inplace", "no", "no", "yes") == "yes"
	default:
		h.t.Fatalf("%s: kind %q: want send, recv, probe, iprobe, barrier or coll=NAME", where, kind)
	}
	if kind != "barrier" {
		d.Len = uint64(a.int("len", 0, 0, 1<<40, nil))
	}
	a.done()
	h.seq[r]++
	d.Seq, d.Req = h.seq[r], uint32(h.seq[r])
	if d.Kind == proto.KindColl {
		h.cseq[r]++
		d.CollSeq = h.cseq[r]
	}
	nd := h.nodeOf[r]
	h.queued[nd] = append(h.queued[nd], d)
}

// parseStatus reads one rank's status: running, starting (alive, not yet in
// MPI_Init), finalized, exited (without MPI_Init), MPI_<Call> (blocked in it)
// or woken:MPI_<Call> (blocked in it with a completion it has not consumed).
func (h *harness) parseStatus(where, s string) uint8 {
	switch s {
	case "running":
		return proto.StatusRunning
	case "starting":
		return proto.StatusStarting
	case "finalized":
		return proto.StatusFinalized
	case "exited":
		return proto.StatusNotMPI
	}
	woken, call := uint8(0), s
	if c, ok := strings.CutPrefix(s, "woken:"); ok {
		woken, call = proto.StatusWoken, c
	}
	code := proto.CallCode(call)
	if code == 0 {
		h.t.Fatalf("%s: status %q: want running, starting, finalized, exited, MPI_<Call> or woken:MPI_<Call>", where, s)
	}
	return woken | code
}

func (h *harness) setStatus(where string, cas []datadriven.CmdArg) {
	if len(cas) == 0 {
		h.t.Fatalf("%s: status needs rR=STATUS arguments", where)
	}
	if h.status == nil {
		h.status = make([]uint8, len(h.nodeOf))
	}
	for _, ca := range cas {
		if len(ca.Vals) != 1 {
			h.t.Fatalf("%s: status %s: want rR=STATUS", where, ca)
		}
		h.status[h.rank(where, ca.Key)] = h.parseStatus(where, ca.Vals[0])
	}
}

func (h *harness) slice() {
	if h.failed { // the job aborts at the first error
		return
	}
	h.cur++
	k := h.cur
	fmt.Fprintf(&h.out, "slice %d\n", k)
	for i, n := range h.nodes {
		pub, err := n.DEM(k)
		if err != nil {
			h.t.Fatal(err)
		}
		for _, c := range pub {
			fmt.Fprintf(&h.out, "  n%d wake at strobe: %s\n", i, c.Describe())
		}
	}
	// DEM: every node drains what was posted before this slice, node order.
	var all []proto.Descriptor
	for i := range h.queued {
		keep := h.queued[i][:0]
		for _, d := range h.queued[i] {
			if d.PostSlice < k {
				all = append(all, d)
				fmt.Fprintf(&h.out, "  n%d dem: %s\n", i, d.Describe())
			} else {
				keep = append(keep, d)
			}
		}
		h.queued[i] = keep
	}
	var first, firstDL string
	for i, n := range h.nodes {
		p, err := n.MSM(k, all, h.status)
		var de *DescriptorError
		if errors.As(err, &de) {
			fmt.Fprintf(&h.out, "  n%d error: %v\n", i, err)
			return
		}
		var dl *DeadlockError
		if errors.As(err, &dl) {
			// Every node sees the same state and must reach the same verdict.
			if i == 0 {
				firstDL = dl.Report
				fmt.Fprintf(&h.out, "  n0 deadlock after %d slices (fatal %v):\n    %s\n", dl.Slices, dl.Fatal,
					strings.ReplaceAll(dl.Report, "\n", "\n    "))
			} else if dl.Report != firstDL {
				h.t.Fatalf("slice %d: node %d reported differently from node 0:\n%s\nvs\n%s", k, i, dl.Report, firstDL)
			}
			h.failed = h.failed || dl.Fatal
			err = nil
		} else if i > 0 && firstDL != "" {
			h.t.Fatalf("slice %d: node 0 reported a deadlock, node %d did not", k, i)
		}
		if err != nil {
			var se *CollError
			if !errors.As(err, &se) {
				h.t.Fatal(err)
			}
			fmt.Fprintf(&h.out, "  n%d error: %v\n", i, err)
			h.failed = true
			continue
		}
		var b strings.Builder
		for _, m := range p.Matches {
			fmt.Fprintf(&b, "  match x%d: r%d#%d -> r%d#%d\n", m.Xfer, m.Send.Rank, m.Send.Seq, m.Recv.Rank, m.Recv.Seq)
		}
		for _, c := range p.Chunks {
			fmt.Fprintf(&b, "  %s\n", c.Describe())
		}
		for _, f := range p.Folds {
			fmt.Fprintf(&b, "  fold n%d %s %s mode=%d base=%d stride=%d seg=%d n=%d\n", f.Node, f.Op, f.Type, f.Mode, f.Base, f.Stride, f.Seg, f.N)
		}
		for _, c := range p.Completions {
			fmt.Fprintf(&b, "  %s\n", c.Describe())
		}
		if p.Collectives > 0 {
			fmt.Fprintf(&b, "  collectives completed: %d\n", p.Collectives)
		}
		if p.Waiting+p.Pending+p.Unexpected > 0 {
			fmt.Fprintf(&b, "  state: waiting=%d pending=%d unexpected=%d\n", p.Waiting, p.Pending, p.Unexpected)
		}
		if i == 0 {
			first = b.String()
			h.out.WriteString(first)
		} else if b.String() != first {
			h.t.Fatalf("slice %d: node %d planned differently from node 0:\n%s\nvs\n%s", k, i, b.String(), first)
		}
	}
	if h.failed {
		return
	}
	for i, n := range h.nodes {
		if err := n.TX(k); err != nil {
			h.t.Fatal(err)
		}
		pub, err := n.EndSlice(k)
		if err != nil {
			h.t.Fatal(err)
		}
		for _, c := range pub {
			fmt.Fprintf(&h.out, "  n%d wake at end of TX: %s\n", i, c.Describe())
		}
	}
}

// TestScripts runs the datadriven scripts in testdata; go test
// ./internal/core -rewrite accepts a changed trace.
func TestScripts(t *testing.T) {
	datadriven.Walk(t, "testdata", func(t *testing.T, path string) {
		h := &harness{}
		datadriven.RunTest(t, path, func(t *testing.T, td *datadriven.TestData) string {
			return h.run(t, td)
		})
	})
}

// run carries out one directive and returns its output.
func (h *harness) run(t testing.TB, td *datadriven.TestData) string {
	h.t = t
	if td.Cmd != "config" && h.nodes == nil {
		t.Fatalf("%s: %s before config", td.Pos, td.Cmd)
	}
	if td.Cmd != "post" && td.Input != "" {
		t.Fatalf("%s: %s takes no input lines", td.Pos, td.Cmd)
	}
	h.out.Reset()
	switch td.Cmd {
	case "config":
		h.config(newArgs(t, td.Pos, td.CmdArgs))
	case "post":
		if len(td.CmdArgs) > 0 {
			t.Fatalf("%s: post takes no arguments, one descriptor per input line", td.Pos)
		}
		if td.Input == "" {
			t.Fatalf("%s: post without input lines", td.Pos)
		}
		for i, line := range strings.Split(td.Input, "\n") {
			h.post(fmt.Sprintf("%s (input line %d)", td.Pos, i+1), line)
		}
	case "status":
		h.setStatus(td.Pos, td.CmdArgs)
	case "slice":
		a := newArgs(t, td.Pos, td.CmdArgs)
		n := a.int("n", 1, 1, 1<<20, nil)
		a.done()
		for range n {
			h.slice()
		}
	default:
		t.Fatalf("%s: unknown command %q: want config, post, status or slice", td.Pos, td.Cmd)
	}
	return h.out.String()
}

// fatalTB records the first Fatal and ends the goroutine, as testing does.
type fatalTB struct {
	testing.TB
	msg string
}

func (f *fatalTB) Fatalf(format string, args ...any) {
	f.msg = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

func (f *fatalTB) Fatal(args ...any) {
	f.msg = fmt.Sprint(args...)
	runtime.Goexit()
}

// TestScriptArgumentsAreStrict: a malformed directive fails the test with a
// message naming the bad argument (the previous harness ignored strconv
// errors: "ranks=x" made a job of zero ranks).
func TestScriptArgumentsAreStrict(t *testing.T) {
	const cfg = "config nodes=2 ranks=4 budget=4096"
	for _, c := range []struct{ script, want string }{
		{"config nodes=2 ranks=x budget=4096", "ranks=x"},
		{"config nodes=2 ranks=4 budget=4096 colour=red", "unknown argument(s) colour=red"},
		{"config nodes=2 budget=4096", "missing argument ranks"},
		{"config nodes=2 ranks=4 restart=later", "restart=later"},
		{"config nodes=5 ranks=4", "nodes=5"},
		{"slice", "slice before config"},
		{cfg + "\nslice n=abc", "n=abc"},
		{cfg + "\nslice 3", "unknown argument(s) 3"},
		{cfg + "\nstatus r9=running", `rank "r9"`},
		{cfg + "\nstatus r1=sleeping", `status "sleeping"`},
		{cfg + "\npost r0", "post takes no arguments"},
		{cfg + "\npost\nr0 send to=1 tag=x", "tag=x"},
		{cfg + "\npost\nr0 send to=9", "to=9"},
		{cfg + "\npost\nr0 send to=1 bogus=1", "unknown argument(s) bogus=1"},
		{cfg + "\npost\nr0 recv from=any tag=any len=-1", "len=-1"},
		{cfg + "\npost\nr0 coll=nosuch", "coll=nosuch"},
		{cfg + "\npost\nr0 coll=allreduce type=float80", "type=float80"},
		{cfg + "\npost\nr0 coll=allreduce op=median", "op=median"},
		{cfg + "\npost\nr0 fly", `kind "fly"`},
		{cfg + "\npost\nr0 barrier root=1", "unknown argument(s) root=1"},
	} {
		h := &harness{}
		f := &fatalTB{TB: t}
		done := make(chan struct{})
		go func() {
			defer close(done)
			for _, d := range strings.Split(c.script, "\n") {
				if strings.HasPrefix(d, "r") {
					continue // input of the post above
				}
				cmd, cas, err := datadriven.ParseLine(d)
				if err != nil {
					f.Fatal(err)
				}
				td := &datadriven.TestData{Pos: "script", Cmd: cmd, CmdArgs: cas}
				if cmd == "post" && len(cas) == 0 {
					_, td.Input, _ = strings.Cut(c.script, "post\n")
				}
				h.run(f, td)
			}
		}()
		<-done
		if !strings.Contains(f.msg, c.want) {
			t.Errorf("%q: failure %q, want one naming %q", c.script, f.msg, c.want)
		}
	}
}
