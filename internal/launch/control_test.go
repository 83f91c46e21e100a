package launch

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bcsmpi/bcsmpi/configs"
	"github.com/bcsmpi/bcsmpi/emds/kernel"
)

func TestControlFrames(t *testing.T) {
	var b bytes.Buffer
	if err := writeFrame(&b, 'V', []byte(`{"code":3}`)); err != nil {
		t.Fatal(err)
	}
	typ, p, err := readFrame(bufio.NewReader(&b))
	if err != nil || typ != 'V' || string(p) != `{"code":3}` {
		t.Fatalf("round trip: %q %q %v", typ, p, err)
	}
	if err := writeFrame(io.Discard, 'F', make([]byte, maxFrame+1)); err == nil {
		t.Errorf("a frame over maxFrame was written")
	}
	// A length over the limit is refused before anything is allocated; a
	// short frame is an error, not a panic.
	for _, in := range []string{"F\xff\xff\xff\xff", "F\x00\x00\x00\x05ab", "F\x00"} {
		if _, _, err := readFrame(bufio.NewReader(strings.NewReader(in))); err == nil {
			t.Errorf("readFrame(%q) accepted", in)
		}
	}
}

// testCtl starts a ctlServer for 3 ranks on 2 hosts, with the MDS on
// (its directory returned), listening on loopback.
func testCtl(t *testing.T, stdin *os.File) (*ctlServer, *across, string, string) {
	t.Helper()
	return testCtlMDS(t, stdin, "main,elan")
}

// testCtlMDS is testCtl for a job whose BCS_MDS is mode.
func testCtlMDS(t *testing.T, stdin *os.File, mode string) (*ctlServer, *across, string, string) {
	t.Helper()
	cfg := configs.Default()
	cfg.Nodes, cfg.MDS, cfg.MDSDir = 2, mode, t.TempDir()
	a := &across{cfg: cfg, hosts: 2, jobID: "j1", secret: []byte("0123456789abcdef")}
	mon, err := newMonitorFor(Job{Ranks: 3, Program: "p"}, cfg, "j1", NodeOf(3, 2, false, 0), io.Discard, false)
	if err != nil {
		t.Fatal(err)
	}
	s := newCtlServer(a, 3, []string{"ha", "hb"}, mon, stdin, stdin != nil, io.Discard)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	stopped := s.accept(ln)
	t.Cleanup(func() { ln.Close(); <-stopped })
	return s, a, ln.Addr().String(), mon.dir
}

// TestControlEndsTheJobAndGathersMDS: a host's verdict ends the job on the
// other ('A'), both send their files, both are released ('R'), and the
// files are in the job's directory; a wrong secret is refused both ways.
func TestControlEndsTheJobAndGathersMDS(t *testing.T) {
	s, a, addr, dir := testCtl(t, nil)
	if _, err := dialControl(addr, []byte("fedcba9876543210"), "j1", 0, "ha"); err == nil {
		t.Errorf("a bcsd without the secret was admitted")
	}
	var hs []*hostControl
	for n := range 2 {
		h, err := dialControl(addr, a.secret, "j1", n, "h")
		if err != nil {
			t.Fatal(err)
		}
		defer h.close()
		hs = append(hs, h)
	}
	if _, err := dialControl(addr, a.secret, "j1", 1, "h"); err == nil {
		t.Errorf("node 1 connected twice")
	}
	if err := hs[1].sendJSON('V', hostVerdict{Code: 3, Message: "bcsd on hb: rank 2 exited with status 3; job aborted"}); err != nil {
		t.Fatal(err)
	}
	<-hs[0].abort // the other host is told to end the job
	for n, h := range hs {
		staging := t.TempDir()
		files := map[int][]string{0: {"mmds-rank0.csv", "mmds-rank1.csv", "emds-global.csv"}, 1: {"mmds-rank2.csv", "emds-node1.csv"}}[n]
		for _, f := range files {
			os.WriteFile(filepath.Join(staging, f), bytes.Repeat([]byte(f), 100000), 0o600) // several frames
		}
		if err := h.ship(&monitor{dir: staging}, n, 3); err != nil {
			t.Fatal(err)
		}
	}
	for _, h := range hs {
		<-h.release
	}
	cr := s.finish()
	if cr.verdict == nil || cr.verdict.Code != 3 || !strings.Contains(cr.verdict.Message, "rank 2") || len(cr.missing) != 0 {
		t.Fatalf("verdict %+v, missing %q; want node 1's, none missing", cr.verdict, cr.missing)
	}
	for _, f := range []string{"mmds-rank0.csv", "mmds-rank2.csv", "emds-global.csv", "emds-node1.csv"} {
		if b, err := os.ReadFile(filepath.Join(dir, f)); err != nil || !bytes.Equal(b, bytes.Repeat([]byte(f), 100000)) {
			t.Errorf("%s: %d bytes, %v", f, len(b), err)
		}
	}
	if l, _ := filepath.Glob(filepath.Join(dir, "*.tmp")); len(l) > 0 {
		t.Errorf("temporary files left: %v", l)
	}
}

// TestControlLateHostHearsTheEnd: a host that connects after another
// host's failure is told to end the job ('A') once its handshake is
// answered: the broadcast, which went out before it was listed, missed it,
// and the handshake's answer comes before any frame.
func TestControlLateHostHearsTheEnd(t *testing.T) {
	s, a, addr, _ := testCtl(t, nil)
	h1, err := dialControl(addr, a.secret, "j1", 1, "hb")
	if err != nil {
		t.Fatal(err)
	}
	defer h1.close()
	if err := h1.sendJSON('V', hostVerdict{Code: 3, Message: "bcsd on hb: rank 2 exited with status 3; job aborted"}); err != nil {
		t.Fatal(err)
	}
	<-h1.abort // the broadcast reached the hosts listed: node 1 alone
	h0, err := dialControl(addr, a.secret, "j1", 0, "ha")
	if err != nil {
		t.Fatalf("node 0 after node 1's failure: %v", err)
	}
	defer h0.close()
	select {
	case <-h0.abort:
	case <-time.After(time.Minute): // a guard against a hang, not a measure
		t.Fatal("node 0, connected after node 1's failure, was never told to end the job")
	}
	for n, h := range []*hostControl{h0, h1} {
		if err := h.ship(nil, n, 0); err != nil {
			t.Fatal(err)
		}
	}
	<-h0.release
	<-h1.release
	if cr := s.finish(); cr.verdict == nil || cr.verdict.Code != 3 {
		t.Errorf("verdict %+v, want node 1's", cr.verdict)
	}
}

// TestControlRefusesForeignFiles: a host may send only its own node's
// files; a host that ends without its 'Z' is named as missing, and what it
// began to send is removed.
func TestControlRefusesForeignFiles(t *testing.T) {
	s, a, addr, dir := testCtlMDS(t, nil, "main,kernel")
	r := &mdsReceiver{s: s, node: 1}
	for name, ok := range map[string]bool{"mmds-rank2.csv": true, "mmds-rank2.hlog": true, "mmds-rank2-dist.csv": true, "emds-node1.csv": true,
		"mmds-rank0.csv": false, "mmds-rank02.csv": false, "emds-node0.csv": false, "emds-global.csv": false, "../x": false, "manifest.json": false, "mmds-rank3.csv": false,
		"emds-kernel-rank2.csv": true, "emds-kernel-rank0.csv": false, "emds-kernel-rank02.csv": false, "emds-kernel-rank2.csv.x": false,
		"emds-kernel-runtime-node1.csv": true, "emds-kernel-ids-node1.csv": true, "emds-kernel-cost-node1.csv": true,
		"emds-kernel-interferers-node1.csv": true, "emds-kernel-wakehist-node1.csv": true,
		"emds-kernel-runtime-node0.csv": false, "emds-kernel-ids.csv": false, "emds-kernel-master.csv": false, "emds-kernel-runtime.csv": false} {
		if err := r.refuse(name); (err == nil) != ok || !ok && !strings.Contains(err.Error(), "not one of its node's") {
			t.Errorf("node 1 sending %q: refused %v, want refused %v as not its node's", name, err, !ok)
		}
	}
	h0, err := dialControl(addr, a.secret, "j1", 0, "ha")
	if err != nil {
		t.Fatal(err)
	}
	defer h0.close()
	h1, err := dialControl(addr, a.secret, "j1", 1, "hb")
	if err != nil {
		t.Fatal(err)
	}
	h1.send('F', append([]byte{0, 14}, "mmds-rank2.csvpartial"...))
	h1.close() // dies before its 'Z'
	<-h0.abort
	if err := h0.ship(nil, 0, 1); err != nil {
		t.Fatal(err)
	}
	<-h0.release
	cr := s.finish()
	if len(cr.missing) != 1 || !strings.Contains(cr.missing[0], "host hb (node 1): MDS data missing") {
		t.Errorf("missing %q, want host hb named", cr.missing)
	}
	if l, _ := filepath.Glob(filepath.Join(dir, "mmds-rank2*")); len(l) > 0 {
		t.Errorf("a dead host's partial file was kept: %v", l)
	}

	// A foreign file name ends the conversation with that host.
	s, a, addr, _ = testCtl(t, nil)
	h, err := dialControl(addr, a.secret, "j1", 1, "hb")
	if err != nil {
		t.Fatal(err)
	}
	defer h.close()
	h.send('F', append([]byte{0, 14}, "mmds-rank0.csvstolen"...))
	<-h.release // bcsrun hung up
	h0, _ = dialControl(addr, a.secret, "j1", 0, "ha")
	h0.ship(nil, 0, 0)
	<-h0.release
	h0.close()
	if cr := s.finish(); len(cr.missing) != 1 || !strings.Contains(cr.missing[0], `"mmds-rank0.csv"`) {
		t.Errorf("missing %q, want node 1's refusal naming the file", cr.missing)
	}
}

// TestControlRefusesPartsNotAsked: a host's own file of a part of the MDS
// the job did not ask for (the kernel monitor's without BCS_MDS=…,kernel,
// an MMDS file without main, an EMDS file without elan) is refused, naming
// the file, the part and the job's BCS_MDS; a file of a part asked for is
// taken.
func TestControlRefusesPartsNotAsked(t *testing.T) {
	for _, tc := range []struct {
		mode string
		ok   []string
		no   map[string]string // file → the part named in its refusal
	}{
		{"main,elan", []string{"mmds-rank2.csv", "emds-node1.csv"},
			map[string]string{"emds-kernel-rank2.csv": "kernel", "emds-kernel-runtime-node1.csv": "kernel", "emds-kernel-ids-node1.csv": "kernel"}},
		{"elan,kernel", []string{"emds-node1.csv", "emds-kernel-rank2.csv", "emds-kernel-wakehist-node1.csv"},
			map[string]string{"mmds-rank2.csv": "main", "mmds-rank2.hlog": "main"}},
		{"main", []string{"mmds-rank2-dist.csv"},
			map[string]string{"emds-node1.csv": "elan", "emds-kernel-cost-node1.csv": "kernel"}},
	} {
		s, _, _, _ := testCtlMDS(t, nil, tc.mode)
		r := &mdsReceiver{s: s, node: 1}
		for _, name := range tc.ok {
			if err := r.refuse(name); err != nil {
				t.Errorf("BCS_MDS=%s: node 1's %s refused: %v", tc.mode, name, err)
			}
		}
		for name, part := range tc.no {
			err := r.refuse(name)
			if err == nil || !strings.Contains(err.Error(), name) || !strings.Contains(err.Error(), "MDS's "+part+" part") ||
				!strings.Contains(err.Error(), fmt.Sprintf("%q", tc.mode)) {
				t.Errorf("BCS_MDS=%s: node 1's %s: %v, want a refusal naming it, the %s part and the job's MDS", tc.mode, name, err, part)
			}
		}
	}

	// Through the control connection: the refusal ends the conversation
	// with that host, named in the missing data, and nothing is kept.
	s, a, addr, dir := testCtlMDS(t, nil, "main,elan")
	h, err := dialControl(addr, a.secret, "j1", 1, "hb")
	if err != nil {
		t.Fatal(err)
	}
	defer h.close()
	h.send('F', append([]byte{0, 21}, "emds-kernel-rank2.csvrows"...))
	h.ship(nil, 1, 0) // its end, which bcsrun no longer reads (taken, had the file been allowed)
	h0, err := dialControl(addr, a.secret, "j1", 0, "ha")
	if err != nil {
		t.Fatal(err)
	}
	h0.ship(nil, 0, 0)
	<-h.release // bcsrun hung up (or released it)
	<-h0.release
	h0.close()
	if cr := s.finish(); len(cr.missing) != 1 || !strings.Contains(cr.missing[0], "host hb (node 1)") || !strings.Contains(cr.missing[0], "emds-kernel-rank2.csv") ||
		!strings.Contains(cr.missing[0], "kernel part") {
		t.Errorf("missing %q, want host hb's kernel file refused", cr.missing)
	}
	if l, _ := filepath.Glob(filepath.Join(dir, "emds-kernel-*")); len(l) > 0 {
		t.Errorf("a refused file was kept: %v", l)
	}
}

// TestControlForwardsInput: bcsrun's input reaches node 0's rank pipe
// whole, through the window, and its end closes the pipe.
func TestControlForwardsInput(t *testing.T) {
	in, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	data := bytes.Repeat([]byte("0123456789"), 100000) // 1 MB: many windows
	go func() { w.Write(data); w.Close() }()
	s, a, addr, _ := testCtl(t, in)
	h, err := dialControl(addr, a.secret, "j1", 0, "ha")
	if err != nil {
		t.Fatal(err)
	}
	defer h.close()
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	go h.feedInput(pw, make(chan struct{}))
	got, err := io.ReadAll(pr) // ends at EOF: the input's end closed the pipe
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("rank 0 read %d bytes (%v), want %d", len(got), err, len(data))
	}
	h.ship(nil, 0, 0)
	h1, _ := dialControl(addr, a.secret, "j1", 1, "hb")
	h1.ship(nil, 1, 0)
	<-h.release
	<-h1.release
	h1.close()
	if cr := s.finish(); cr.verdict != nil || len(cr.missing) != 0 {
		t.Errorf("verdict %+v, missing %q; want none", cr.verdict, cr.missing)
	}
}

// TestHostMonitorFiles: node 0's bcsd keeps the master's window and the
// matrix besides its node's; another node only its own, and none when
// mds_nodes leaves it out; the staging directory goes with removeDir.
func TestHostMonitorFiles(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	cfg := configs.Default()
	cfg.Nodes, cfg.MDS, cfg.MDSNodes = 3, "main,elan", "0,1"
	for _, c := range []struct {
		node int
		want []string
	}{
		{0, []string{"comm-matrix.csv", "emds-global.csv", "emds-node0.csv"}},
		{1, []string{"emds-node1.csv"}},
		{2, nil},
	} {
		m, err := newHostMonitor(cfg, "j", c.node, 4, NodeOf(4, 3, false, 0), "bcsd", io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		if env := m.env(cfg); env.JobDir != m.dir || env.Mode != "main,elan" {
			t.Errorf("node %d: the ranks' MDS %+v, want the staging directory %s", c.node, env, m.dir)
		}
		if _, probs := m.dumpHost(c.node); len(probs) > 0 {
			t.Fatalf("node %d: %v", c.node, probs)
		}
		ents, _ := os.ReadDir(m.dir)
		var got []string
		for _, e := range ents {
			got = append(got, e.Name())
		}
		if strings.Join(got, " ") != strings.Join(c.want, " ") {
			t.Errorf("node %d dumped %q, want %q", c.node, got, c.want)
		}
		m.removeDir()
		if _, err := os.Stat(m.dir); !os.IsNotExist(err) {
			t.Errorf("node %d: %s left: %v", c.node, m.dir, err)
		}
	}
	cfg.MDS = "none"
	if m, err := newHostMonitor(cfg, "j", 0, 4, NodeOf(4, cfg.Nodes, false, 0), "bcsd", io.Discard); m != nil || err != nil {
		t.Errorf("mds none: %v, %v; want no monitor", m, err)
	}
}

// TestKernelStates: the manifest of a job across hosts says which host ran
// the kernel monitor and why another did not.
func TestKernelStates(t *testing.T) {
	for _, c := range []struct {
		states []string
		want   string
		lines  []string
	}{
		{[]string{"on", "on"}, "on", []string{"ha: on", "hb: on"}},
		{[]string{"off: needs X", "off: needs X"}, "off: needs X", []string{"ha: off: needs X", "hb: off: needs X"}},
		{[]string{"on", "off: needs X"}, "off on hb (kernel_hosts says why)", []string{"ha: on", "hb: off: needs X"}},
		{[]string{"off: needs Y", ""}, "off on ha, hb (kernel_hosts says why)", []string{"ha: off: needs Y", "hb: unknown (its bcsd did not report)"}},
	} {
		got, lines := kernelStates(c.states, []string{"ha", "hb"})
		if got != c.want || strings.Join(lines, "|") != strings.Join(c.lines, "|") {
			t.Errorf("kernelStates(%q) = %q, %q; want %q, %q", c.states, got, lines, c.want, c.lines)
		}
	}
}

// TestHostMonitorKernel: a host's kernel monitor dumps its own files, named
// for its node, and a rank file for its own ranks only; where it cannot
// load (no BTF) the host says why once, with who, and dumps no kernel file.
func TestHostMonitorKernel(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	cfg := configs.Default()
	cfg.Nodes, cfg.MDS = 3, "elan,kernel"
	cfg.MDSKernelCache = t.TempDir() // the CO-RE cache: the test's own
	nodeOf := NodeOf(4, 3, false, 0) // ranks 0, 1 on node 0; 2 on node 1; 3 on node 2
	names := func(m *monitor) []string {
		t.Helper()
		if _, probs := m.dumpHost(1); len(probs) > 0 {
			t.Fatal(probs)
		}
		ents, _ := os.ReadDir(m.dir)
		var got []string
		for _, e := range ents {
			got = append(got, e.Name())
		}
		return got
	}
	cfg.MDSKernelBTF = "/nonexistent/vmlinux"
	var errb strings.Builder
	m, err := newHostMonitor(cfg, "j", 1, 4, nodeOf, "bcsd on hb", &errb)
	if err != nil {
		t.Fatal(err)
	}
	const msg = "bcsd on hb: MDS kernel monitor off: needs the kernel's BTF at /nonexistent/vmlinux"
	if strings.Count(errb.String(), msg) != 1 || !strings.HasPrefix(m.man.Kernel, "off: needs the kernel's BTF") {
		t.Errorf("stderr %q, state %q; want %q once", errb.String(), m.man.Kernel, msg)
	}
	if got := names(m); strings.Join(got, " ") != "emds-node1.csv" {
		t.Errorf("dumped %q without the monitor, want emds-node1.csv only", got)
	}
	m.removeDir()
	if _, err := os.Stat(kernel.DefaultBTFPath); err != nil || os.Getuid() != 0 {
		t.Skip("the monitor itself needs root and the kernel's BTF")
	}
	cfg.MDSKernelBTF = kernel.DefaultBTFPath
	m, err = newHostMonitor(cfg, "j", 1, 4, nodeOf, "bcsd on hb", io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	defer m.removeDir()
	defer m.close()
	if m.man.Kernel != "on" || m.kern == nil {
		t.Fatalf("kernel monitor %q", m.man.Kernel)
	}
	m.rankStarted(2, os.Getpid())
	for k := range uint64(5) {
		m.publishKernel(k)
	}
	want := "emds-kernel-cost-node1.csv emds-kernel-ids-node1.csv emds-kernel-interferers-node1.csv emds-kernel-rank2.csv " +
		"emds-kernel-runtime-node1.csv emds-kernel-wakehist-node1.csv emds-node1.csv"
	if got := names(m); strings.Join(got, " ") != want {
		t.Errorf("dumped %q, want %q", got, want)
	}
	if m.kern != nil {
		t.Error("the monitor was not released once dumped")
	}
}
