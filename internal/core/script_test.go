package core

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/bcsmpi/bcsmpi/internal/proto"
	"github.com/bcsmpi/bcsmpi/internal/reduce"
	"github.com/bcsmpi/bcsmpi/scheduler"
)

var update = flag.Bool("update", false, "rewrite testdata expectations")

// harness drives several Nodes the way the master and the agents do, and
// prints a trace. Each script line "post rR kind k=v..." posts a descriptor
// during the current slice; "slice [N]" runs N slices on every node;
// "status rR=S ..." sets the status byte of ranks (see parseStatus) that the
// agents send with every DEM from then on (none are sent until the first
// status line: no deadlock detection). "config ... deadlock N" sets
// DeadlockSlices, "action warn" keeps the job going after a report.
type harness struct {
	t      *testing.T
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

func (h *harness) config(args map[string]string) {
	nn, _ := strconv.Atoi(args["nodes"])
	nr, _ := strconv.Atoi(args["ranks"])
	budget, _ := strconv.ParseUint(args["budget"], 10, 64)
	pol, err := ParseRestart(args["restart"])
	if err != nil {
		h.t.Fatal(err)
	}
	guard, _ := strconv.ParseUint(args["deadlock"], 10, 64)
	h.nodeOf = make([]proto.NodeID, nr)
	for r := range h.nodeOf {
		h.nodeOf[r] = proto.NodeID(r * nn / nr)
	}
	for i := 0; i < nn; i++ {
		h.nodes = append(h.nodes, New(Config{Node: proto.NodeID(i), NodeOf: h.nodeOf, Restart: pol,
			Sched:          scheduler.Config{BytesPerSliceMax: budget, ChunksPerSliceMax: 64},
			DeadlockSlices: guard, DeadlockWarn: args["action"] == "warn"}))
	}
	h.seq = make([]uint64, nr)
	h.cseq = make([]uint32, nr)
	h.queued = make([][]proto.Descriptor, nn)
}

func (h *harness) post(rank string, kind string, args map[string]string) {
	r, _ := strconv.Atoi(strings.TrimPrefix(rank, "r"))
	d := proto.Descriptor{Rank: proto.Rank(r), PostSlice: h.cur}
	switch kind {
	case "send":
		d.Kind = proto.KindSend
	case "recv":
		d.Kind = proto.KindRecv
	case "probe":
		d.Kind = proto.KindProbe
	case "iprobe":
		d.Kind = proto.KindIprobe
	case "barrier":
		d.Kind, d.Coll = proto.KindColl, proto.CollBarrier
	case "coll": // post rR coll NAME [root=R] [len=B] [type=float64] [op=sum] [inplace=yes]
		d.Kind = proto.KindColl
		for c := proto.CollBarrier; c <= proto.CollFree; c++ {
			if c.String() == args["name"] {
				d.Coll = c
			}
		}
		if d.Coll == 0 {
			h.t.Fatalf("unknown collective %q", args["name"])
		}
		d.DType = uint8(reduce.Float64)
		for t := reduce.Int8; t.Valid(); t++ {
			if t.String() == args["type"] {
				d.DType = uint8(t)
			}
		}
		for o := reduce.Sum; o <= reduce.Maxloc; o++ {
			if strings.EqualFold(o.String(), "MPI_"+args["op"]) {
				d.Op = uint8(o)
			}
		}
		d.InPlace = args["inplace"] == "yes"
	default:
		h.t.Fatalf("unknown kind %q", kind)
	}
	num := func(k string, any int64) int64 {
		v, ok := args[k]
		if !ok {
			return 0
		}
		if v == "any" {
			return any
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			h.t.Fatalf("%s=%s: %v", k, v, err)
		}
		return n
	}
	if kind == "send" {
		d.Peer = proto.Rank(num("to", 0))
	} else if kind == "coll" {
		d.Peer = proto.Rank(num("root", 0))
		d.Addr, d.RAddr = 0x1000, 0x100000
	} else {
		d.Peer = proto.Rank(num("from", -1))
	}
	d.Tag = int32(num("tag", -1))
	d.Len = uint64(num("len", 0))
	d.Inline = args["inline"] == "yes"
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
func (h *harness) parseStatus(s string) uint8 {
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
		h.t.Fatalf("status %q: want running, starting, finalized, exited, MPI_<Call> or woken:MPI_<Call>", s)
	}
	return woken | code
}

func (h *harness) setStatus(fields []string) {
	if h.status == nil {
		h.status = make([]uint8, len(h.nodeOf))
	}
	for _, f := range fields {
		r, v, _ := strings.Cut(f, "=")
		i, err := strconv.Atoi(strings.TrimPrefix(r, "r"))
		if err != nil || i < 0 || i >= len(h.status) {
			h.t.Fatalf("status %q: want rR=STATUS with R in 0 .. %d", f, len(h.status)-1)
		}
		h.status[i] = h.parseStatus(v)
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
		pub, err := n.Strobe(k)
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
		if err := n.DEM(k, all, h.status); err != nil {
			fmt.Fprintf(&h.out, "  n%d error: %v\n", i, err)
			return
		}
		p, err := n.MSM(k)
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
			var se *scheduler.Error
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

func parseArgs(fields []string) map[string]string {
	m := map[string]string{}
	for i := 0; i+1 < len(fields); i += 2 {
		m[fields[i]] = fields[i+1]
	}
	return m
}

func kv(fields []string) map[string]string {
	m := map[string]string{}
	for _, f := range fields {
		k, v, _ := strings.Cut(f, "=")
		m[k] = v
	}
	return m
}

func TestScripts(t *testing.T) {
	files, _ := filepath.Glob("testdata/*.txt")
	if len(files) == 0 {
		t.Fatal("no scripts in testdata")
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			raw, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			script, want, _ := strings.Cut(string(raw), "----\n")
			h := &harness{t: t}
			for _, line := range strings.Split(script, "\n") {
				f := strings.Fields(line)
				if len(f) == 0 || strings.HasPrefix(f[0], "#") {
					continue
				}
				switch f[0] {
				case "config":
					h.config(parseArgs(f[1:]))
				case "post":
					h.post(f[1], f[2], kv(f[3:]))
				case "status":
					h.setStatus(f[1:])
				case "slice":
					n := 1
					if len(f) > 1 {
						n, _ = strconv.Atoi(f[1])
					}
					for i := 0; i < n; i++ {
						h.slice()
					}
				default:
					t.Fatalf("unknown command %q", f[0])
				}
			}
			got := h.out.String()
			if *update {
				os.WriteFile(file, []byte(script+"----\n"+got), 0o644)
				return
			}
			if got != want {
				t.Errorf("trace differs (go test ./internal/core -update to accept):\n--- got\n%s--- want\n%s", got, want)
			}
		})
	}
}
