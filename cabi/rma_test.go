package main

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestRMA runs testdata/rma.c: windows and their attributes, every
// operation with basic and derived datatypes, every synchronisation mode,
// passive target against a target blocked in MPI_Barrier and MPI_Recv,
// Fetch_and_op atomicity, transfers longer than a header message and the
// error classes; as a singleton and on 2 and
// 4 ranks over 1 and 2 logical nodes, and on 3 in deterministic mode,
// leaving no request behind.
func TestRMA(t *testing.T) {
	exe := compile(t, "bcscc", "testdata/rma.c")
	t.Run("singleton", func(t *testing.T) { okRanks(t, run(t, exe), "rma", 1) })
	for _, c := range []struct {
		ranks, nodes int
		determ       bool
	}{{2, 1, false}, {2, 2, false}, {4, 1, false}, {4, 2, false}, {3, 1, true}} {
		name := fmt.Sprintf("n%d-nodes%d", c.ranks, c.nodes)
		args := []string{"-n", strconv.Itoa(c.ranks), "--nodes", strconv.Itoa(c.nodes)}
		if c.determ {
			name += "-deterministic"
			args = append(args, "--deterministic")
		}
		t.Run(name, func(t *testing.T) {
			r := bcsrun(t, append(args, exe)...)
			okRanks(t, r, "rma", c.ranks)
			// MPI_Win_free withdraws the window's receives: nothing is left.
			if strings.Contains(r.stderr, "not released") {
				t.Fatalf("resources left behind:\n%s", r.stderr)
			}
		})
	}
}

// Under the default handler, an out-of-range put, a put outside any epoch
// and MPI_Win_free with a put not completed by a closing fence end the job
// with a message naming the values and what is valid.
func TestRMAErrorsFatal(t *testing.T) {
	exe := compile(t, "bcscc", "testdata/rma.c")
	for _, c := range []struct{ mode, want string }{
		{"range", "rank 0: MPI_Put: MPI_ERR_RMA_RANGE: target_disp = 7 (disp_unit 4) with target_count = 1 of MPI_INT touches bytes [28, 32) of rank 1's window, which has 16 bytes"},
		{"sync", "rank 0: MPI_Put: MPI_ERR_RMA_SYNC: no access epoch to rank 0 is open on this window; open one with MPI_Win_fence"},
		{"freeopen", "rank 0: MPI_Win_free: MPI_ERR_RMA_SYNC: 1 RMA operation(s) issued since the last MPI_Win_fence are not completed; end the fence epoch with MPI_Win_fence first"},
	} {
		t.Run(c.mode, func(t *testing.T) {
			r := bcsrun(t, "-n", "2", exe, c.mode)
			if r.code == 0 || !strings.Contains(r.stderr, c.want) || strings.Contains(r.stdout, "not reached 0") {
				t.Fatalf("exit %d, want stderr containing %q\nstdout:\n%s\nstderr:\n%s", r.code, c.want, r.stdout, r.stderr)
			}
		})
	}
}

// A window the program never frees is named at MPI_Finalize, and its
// receives are withdrawn rather than reported as pending requests.
func TestRMAWindowNotFreed(t *testing.T) {
	exe := compile(t, "bcscc", "testdata/rma.c")
	r := bcsrun(t, "-n", "2", exe, "nofree")
	okRanks(t, r, "nofree", 2)
	want := `("kept") was never freed (MPI_Win_free)`
	if !strings.Contains(r.stderr, want) || strings.Contains(r.stderr, "MPI_Irecv") {
		t.Fatalf("stderr should name the window (%s) and no pending receive:\n%s", want, r.stderr)
	}
}

// layoutInts is the layout a request carries for count MPI_INTs.
func layoutInts(t *testing.T, disp, count int64) (header, *dtInfo) {
	t.Helper()
	h := header{op: opPut, disp: disp, count: count, extent: 4, wire: 4, nseg: 1}
	b := make([]byte, 32)
	for i, v := range []int64{0, 4, 1, 0} { // one segment: off, len, n, stride
		le.PutUint64(b[8*i:], uint64(v))
	}
	tt, msg := layout(h, b)
	if tt == nil {
		t.Fatalf("layout: %s", msg)
	}
	return h, tt
}

// A dynamic window's target checks target_disp, an address another process
// sent, without wrapping: MaxInt64-3 with one MPI_INT used to pass (its end
// wrapped to MinInt64) and the target wrote to an unmapped address.
func TestRMADynamicRangeNoWrap(t *testing.T) {
	const top = math.MaxUint64
	regions := [][2]uint64{{0x1000, 0x2000}, {top - 16, top - 8}}
	for _, c := range []struct {
		disp  uint64
		count int64
		ok    bool
	}{
		{0x1000, 1, true},
		{0x1ffc, 1, true},
		{0x1ffd, 1, false},
		{0x1000, 1024, true},
		{0x1000, 1025, false},
		{0xffc, 1, false},
		{top - 16, 2, true},
		{top - 12, 2, false},
		{math.MaxInt64 - 3, 1, false},
		{math.MaxInt64, 1, false},
		{top - 3, 1, false},
		{top, 1, false},
		{0, 1, false},
		// Regions attached back to back hold an access spanning them
		// (MPICH's win_dynamic_rma_flush_get -count=9216 used to fail with
		// MPI_ERR_RMA_RANGE); a gap between regions does not.
		{0x3000, 2048, true},
		{0x3ffc, 2, true},
		{0x2ffc, 1, false},
		{0x3000, 3072, true},
		{0x3000, 3073, false},
		{0x4ffc, 3, true},
		{0x5ffc, 2, false},
		{0x6004, 1, true},
	} {
		h, tt := layoutInts(t, int64(c.disp), c.count)
		w := &window{flavor: flavorDynamic, regions: append(regions, [][2]uint64{{0x5000, 0x6000}, {0x4000, 0x5000}, {0x3000, 0x4000}, {0x6004, 0x7000}}...)}
		addr, class, msg := w.target(h, tt)
		if c.ok && (class != 0 || uintptr(addr) != uintptr(c.disp)) {
			t.Errorf("disp 0x%x, %d ints: class %d (%s), address %p; want 0x%x", c.disp, c.count, class, msg, addr, c.disp)
		}
		if !c.ok && (class != errRMARange || addr != nil || !strings.Contains(msg, fmt.Sprintf("0x%x", c.disp))) {
			t.Errorf("disp 0x%x, %d ints: class %d, address %p, message %q; want MPI_ERR_RMA_RANGE naming the address", c.disp, c.count, class, addr, msg)
		}
	}
}

// MPI_REPLACE and MPI_NO_OP given to a reduction end the job naming them
// as operations of the one-sided accumulates (the message was "op = 0x3c
// is not an operation"; MPI-Corrbench ArgError-MPIReduce-Op-2).
func TestOneSidedOpInReduction(t *testing.T) {
	exe := compile(t, "bcscc", "testdata/onesidedop.c")
	for _, c := range []struct{ mode, want string }{
		{"replace", "MPI_Reduce: MPI_ERR_OP: op = MPI_REPLACE is for one-sided accumulates only (MPI_Accumulate, MPI_Get_accumulate, MPI_Fetch_and_op)"},
		{"noop", "MPI_Allreduce: MPI_ERR_OP: op = MPI_NO_OP is for one-sided accumulates only"},
	} {
		r := bcsrun(t, "-n", "2", exe, c.mode)
		if r.code == 0 || !strings.Contains(r.stderr, c.want) || strings.Contains(r.stdout, "not reported") {
			t.Fatalf("%s: exit %d, want stderr containing %q\nstdout:\n%s\nstderr:\n%s", c.mode, r.code, c.want, r.stdout, r.stderr)
		}
	}
}

// posted is what window.post was asked to send while recordPosts is on.
type posted struct {
	t, tag int
	n      int
}

func recordPosts(t *testing.T) *[]posted {
	t.Helper()
	var got []posted
	postHook = func(to, tag int, msg []byte) { got = append(got, posted{to, tag, len(msg)}) }
	t.Cleanup(func() { postHook = nil })
	return &got
}

// TestRMADynamicRefusedFetch: every refusal of a fetching request whose
// header was read sends the origin an empty result, so that its flush
// raises the error instead of waiting forever: a request refused while
// queued behind a body (drain) and one whose bytes after the header do
// not match it (serve) used to send only the error. A request whose header
// could not be read gets no result (whether it fetches is unknown), nor
// does a refused put.
func TestRMADynamicRefusedFetch(t *testing.T) {
	const origin = 1
	for _, c := range []struct {
		name   string
		it     queued
		result bool
	}{
		{"get whose body failed", queued{h: header{op: opGet}, class: errOther, msg: "the body failed"}, true},
		{"get_accumulate whose body failed", queued{h: header{op: opGetAcc}, class: errOther, msg: "the body failed"}, true},
		{"compare_and_swap whose body failed", queued{h: header{op: opCAS}, class: errOther, msg: "the body failed"}, true},
		{"put whose body failed", queued{h: header{op: opPut}, class: errType, msg: "short put"}, false},
		{"unreadable header", queued{class: errIntern, msg: "short header"}, false},
	} {
		got := recordPosts(t)
		w := &window{rank: 0, flavor: flavorDynamic, peers: make([]winPeer, 2)}
		w.peers[origin].queue = []queued{c.it}
		w.drain(origin)
		if w.deferred != c.it.msg || w.defClass != c.it.class {
			t.Errorf("%s: deferred error %q (class %d), want %q (class %d)", c.name, w.deferred, w.defClass, c.it.msg, c.it.class)
		}
		want := []posted(nil)
		if c.result {
			want = []posted{{origin, tagResult, 0}}
		}
		if !slices.Equal(*got, want) {
			t.Errorf("%s: drain sent %v, want %v", c.name, *got, want)
		}
	}

	got := recordPosts(t)
	w := &window{rank: 0, flavor: flavorDynamic, peers: make([]winPeer, 2)}
	w.serve(origin, header{op: opGet, count: 1, extent: 4, wire: 4, nseg: 1}, make([]byte, 3))
	if w.defClass != errIntern || !slices.Equal(*got, []posted{{origin, tagResult, 0}}) {
		t.Errorf("get with 3 bytes after its header: deferred %q (class %d), sent %v; want MPI_ERR_INTERN and an empty result", w.deferred, w.defClass, *got)
	}
}

// TestRMAZeroBytesAnywhere: an access of no bytes (a count of 0, or items
// of a datatype with no data) is allowed at any displacement, in a dynamic
// window with no region there and past the end of an allocated window, as
// MPICH does; a get of it gets an empty result.
func TestRMAZeroBytesAnywhere(t *testing.T) {
	const origin = 1
	for _, c := range []struct {
		name string
		w    *window
		h    header
	}{
		{"dynamic, count 0", &window{flavor: flavorDynamic}, header{op: opGet, disp: 0x10, count: 0, extent: 4, wire: 4, nseg: 1}},
		{"dynamic, 5 items of no data", &window{flavor: flavorDynamic}, header{op: opGet, disp: 0x10, count: 5, extent: 4, nseg: 1}},
		{"dynamic, get_accumulate of no data", &window{flavor: flavorDynamic}, header{op: opGetAcc, red: redNoOp, disp: 0x10, count: 5, extent: 4, nseg: 1}},
		{"allocated, 5 items of no data past the end", &window{unit: 1, bytes: 16}, header{op: opGet, disp: 1000, count: 5, extent: 4, nseg: 1}},
	} {
		got := recordPosts(t)
		c.w.peers = make([]winPeer, 2)
		seg := make([]byte, 32) // one segment: off 0, len wire, n 1, stride 0
		le.PutUint64(seg[8:], uint64(c.h.wire))
		le.PutUint64(seg[16:], 1)
		c.w.serve(origin, c.h, seg)
		if c.w.deferred != "" || !slices.Equal(*got, []posted{{origin, tagResult, 0}}) {
			t.Errorf("%s: deferred %q (class %d), sent %v; want no error and an empty result", c.name, c.w.deferred, c.w.defClass, *got)
		}
	}
}
