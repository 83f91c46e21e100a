package gangd

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/bcsmpi/bcsmpi/configs"
	"github.com/bcsmpi/bcsmpi/internal/launch"
)

func TestAdmit(t *testing.T) {
	cases := []struct {
		running, queued, mpl int
		noQueue              bool
		want                 admission
	}{
		{0, 0, 2, false, admitStart},
		{1, 0, 2, true, admitStart},
		{2, 0, 2, false, admitQueue},
		{2, 0, 2, true, admitRefuse},
		{1, 1, 2, false, admitQueue}, // room, but one waits before it: first come, first served
		{1, 1, 2, true, admitRefuse},
		{0, 0, 1, false, admitStart},
		{1, 0, 1, false, admitQueue},
	}
	for _, c := range cases {
		if got := admit(c.running, c.queued, c.mpl, c.noQueue); got != c.want {
			t.Errorf("admit(running %d, queued %d, mpl %d, noQueue %v) = %d, want %d", c.running, c.queued, c.mpl, c.noQueue, got, c.want)
		}
	}
}

func TestParseBytes(t *testing.T) {
	good := map[string]uint64{"1": 1, "512M": 512 << 20, "2G": 2 << 30, "2GiB": 2 << 30, "64 MB": 64 << 20, "3k": 3 << 10, "1T": 1 << 40, "100B": 100}
	for in, want := range good {
		if got, err := ParseBytes(in); err != nil || got != want {
			t.Errorf("ParseBytes(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "0", "-1", "2.5G", "12X", "G", "99999999999999999999", "20000000T"} {
		if _, err := ParseBytes(in); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("%q", in)) || !strings.Contains(err.Error(), "want a size such as 512M") {
			t.Errorf("ParseBytes(%q): %v; want an error naming the value and what is valid", in, err)
		}
	}
	for n, want := range map[uint64]string{100: "100 bytes", 64 << 20: "64 MiB", 3 << 29: "1.5 GiB", 1 << 40: "1 TiB"} {
		if got := FormatBytes(n); got != want {
			t.Errorf("FormatBytes(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestParseMemAvailable(t *testing.T) {
	got, err := parseMemAvailable(strings.NewReader("MemTotal:       32000000 kB\nMemFree: 1 kB\nMemAvailable:   24118796 kB\n"))
	if err != nil || got != 24118796*1024 {
		t.Fatalf("got %d, %v", got, err)
	}
	for _, in := range []string{"MemTotal: 1 kB\n", "MemAvailable: many kB\n", "MemAvailable: 12 MB\n", "MemAvailable: 99999999999999999999 kB\n"} {
		if _, err := parseMemAvailable(strings.NewReader(in)); err == nil || !strings.Contains(err.Error(), "MemAvailable") {
			t.Errorf("%q: %v; want an error about MemAvailable", in, err)
		}
	}
	if _, err := MemAvailable(); err != nil {
		t.Errorf("this machine's /proc/meminfo: %v", err)
	}
}

func TestFootprint(t *testing.T) {
	cfg := configs.Default()
	cfg.Nodes = 2
	spec := JobSpec{Ranks: 4, Config: cfg}
	f := footprintOf(&spec)
	shm := 2 * uint64(cfg.Geometry(2).Size())
	if f.perRank != AssumedRankBytes || f.declared || f.shm != shm || f.total() != 4*AssumedRankBytes+shm {
		t.Fatalf("footprint %+v, want 4 ranks × %d assumed + %d shared", f, AssumedRankBytes, shm)
	}
	if msg := f.fits(f.total()); msg != "" {
		t.Errorf("a job that fits exactly: %q", msg)
	}
	msg := f.fits(256 << 20)
	for _, want := range []string{"4 ranks × 64 MiB assumed per rank; declare the real figure with --mem-per-rank", "this machine has 256 MiB available (MemAvailable in /proc/meminfo)"} {
		if !strings.Contains(msg, want) {
			t.Errorf("refusal %q lacks %q", msg, want)
		}
	}
	spec.MemPerRank = 1 << 62 // 4 of these overflow: saturate, never wrap
	if f := footprintOf(&spec); f.total() != ^uint64(0) || !strings.Contains(f.fits(1<<40), "declared with --mem-per-rank") {
		t.Errorf("overflowing footprint %+v: total %d, %q", f, f.total(), f.fits(1<<40))
	}
}

// logBuf is a daemon log the test can read, and wait on, while the daemon
// writes it.
type logBuf struct {
	mu   sync.Mutex
	cond *sync.Cond
	b    bytes.Buffer
}

func newLog() *logBuf {
	l := &logBuf{}
	l.cond = sync.NewCond(&l.mu)
	return l
}

func (l *logBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.cond.Broadcast()
	return l.b.Write(p)
}

func (l *logBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// waitFor returns once the log holds s (the test's own timeout bounds it).
func (l *logBuf) waitFor(s string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for !strings.Contains(l.b.String(), s) {
		l.cond.Wait()
	}
}

// startDaemon starts a daemon in a new runtime directory, serving, and
// stops it at the end of the test.
func startDaemon(t *testing.T, mpl int, run func(launch.Job) (launch.Result, error)) (*Daemon, *logBuf) {
	t.Helper()
	log := newLog()
	d, err := Start(Config{Dir: filepath.Join(t.TempDir(), "run"), MPL: mpl, Log: log})
	if err != nil {
		t.Fatal(err)
	}
	if run != nil {
		d.run = run
	}
	served := make(chan error, 1)
	go func() { served <- d.Serve() }()
	t.Cleanup(func() {
		d.Stop()
		if err := <-served; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return d, log
}

// A second daemon in the same directory is refused, naming the first's
// pid; once the first has stopped, its socket is gone and a new one starts.
func TestOneDaemonPerDirectory(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	d, err := Start(Config{Dir: dir, MPL: 2})
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(dir)
	if err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("runtime directory: %v, %v; want mode 0700", fi.Mode(), err)
	}
	_, err = Start(Config{Dir: dir, MPL: 2})
	if want := fmt.Sprintf("bcsd: already running (pid %d, socket %s)", os.Getpid(), filepath.Join(dir, SocketName)); err == nil || err.Error() != want {
		t.Fatalf("second daemon: %v, want %q", err, want)
	}
	go d.Serve()
	c, err := Dial(dir)
	if err != nil {
		t.Fatal(err)
	}
	st, err := c.Status()
	if err != nil || st.PID != os.Getpid() || st.MPL != 2 || len(st.Jobs) != 0 {
		t.Fatalf("status %+v, %v", st, err)
	}
	c, _ = Dial(dir)
	if err := c.Stop(); err != nil {
		t.Fatal(err)
	}
	<-d.Quit()
	if _, err := os.Lstat(filepath.Join(dir, SocketName)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("socket after stop: %v, want none", err)
	}
	if _, err := Dial(dir); !errors.Is(err, ErrNoDaemon) {
		t.Errorf("Dial after stop: %v, want ErrNoDaemon", err)
	}
	d2, err := Start(Config{Dir: dir, MPL: 1})
	if err != nil {
		t.Fatalf("a daemon after the first stopped: %v", err)
	}
	d2.Stop()
}

// A socket left by a daemon that died (nothing listens on it) is no daemon
// for a client, and the next daemon replaces it.
func TestStaleSocketReplaced(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	if err := MakeDir(dir); err != nil {
		t.Fatal(err)
	}
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: filepath.Join(dir, SocketName), Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	ln.SetUnlinkOnClose(false)
	ln.Close() // as a daemon killed with SIGKILL leaves it
	if _, err := Dial(dir); !errors.Is(err, ErrNoDaemon) || !strings.Contains(err.Error(), "connection refused") {
		t.Fatalf("Dial on a stale socket: %v, want ErrNoDaemon (connection refused)", err)
	}
	d, log := startDaemon(t, 2, nil)
	_ = d
	d2log := newLog()
	d2, err := Start(Config{Dir: dir, MPL: 2, Log: d2log})
	if err != nil {
		t.Fatal(err)
	}
	defer d2.Stop()
	go d2.Serve()
	if !strings.Contains(d2log.String(), "replaced the stale socket "+filepath.Join(dir, SocketName)) {
		t.Errorf("log %q does not mention the stale socket", d2log.String())
	}
	if strings.Contains(log.String(), "stale") {
		t.Errorf("a fresh directory's daemon speaks of a stale socket: %q", log.String())
	}
	c, err := Dial(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Status(); err != nil {
		t.Fatal(err)
	}
}

// A runtime directory that is someone else's is refused by the daemon and
// the client, naming the owner.
func TestForeignDirectoryRefused(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root to give a directory away") // bcsmpi's tests run as root
	}
	dir := filepath.Join(t.TempDir(), "run")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(dir, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("runtime directory %s belongs to uid 65534, not to you (uid 0)", dir)
	if _, err := Start(Config{Dir: dir, MPL: 1}); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("Start: %v, want %q", err, want)
	}
	if _, err := Dial(dir); err == nil || errors.Is(err, ErrNoDaemon) || !strings.Contains(err.Error(), want) {
		t.Errorf("Dial: %v, want %q", err, want)
	}
}

// pipes gives a fake job's stdout and stderr as pipes whose read ends the
// test reads to EOF once every copy of the write ends is closed.
func pipes(t *testing.T) (stdout, stderr *os.File, out, errOut func() string) {
	t.Helper()
	read := func(r *os.File) func() string {
		ch := make(chan string, 1)
		go func() { b, _ := io.ReadAll(r); r.Close(); ch <- string(b) }()
		return func() string { return <-ch }
	}
	or, ow, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	er, ew, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	return ow, ew, read(or), read(er)
}

// fakeRun stands in for launch.Run: it says it started, writes on the
// job's stdout and stderr, and ends with code, or on the first signal the
// job gets (as launch.Run does), after release is closed.
type fakeRun struct {
	started chan int // the job's ranks
	release chan struct{}
}

func (f *fakeRun) run(j launch.Job) (launch.Result, error) {
	fmt.Fprintf(j.Stdout.(*os.File), "out of %s %v in %s, FOO=%s\n", filepath.Base(j.Program), j.Args, j.Dir, envOf(j.Env, "FOO"))
	fmt.Fprintf(j.Stderr.(*os.File), "err of %d ranks\n", j.Ranks)
	f.started <- j.Ranks
	select {
	case s := <-j.Signals:
		msg := fmt.Sprintf("bcsrun: %v received, job terminated", s)
		fmt.Fprintln(j.Stderr, msg)
		return launch.Result{ExitCode: 128 + int(s.(syscall.Signal)), Message: msg}, nil
	case <-f.release:
	}
	if j.Ranks == 3 {
		return launch.Result{}, errors.New("bcsrun: three ranks cannot start")
	}
	return launch.Result{ExitCode: j.Ranks, Slices: 42}, nil
}

func envOf(env []string, k string) string {
	for _, e := range env {
		if v, ok := strings.CutPrefix(e, k+"="); ok {
			return v
		}
	}
	return ""
}

func spec(ranks int) JobSpec {
	return JobSpec{Program: "/bin/true", Args: []string{"a", "b"}, Env: []string{"FOO=bar"}, Dir: "/tmp", Ranks: ranks, Config: configs.Default()}
}

type clientRun struct {
	res     launch.Result
	err     error
	notices string
}

// submit runs a job through a client in a goroutine.
func submit(t *testing.T, dir string, s JobSpec, sigs chan os.Signal, stdout, stderr *os.File) (<-chan clientRun, *Client) {
	t.Helper()
	c, err := Dial(dir)
	if err != nil {
		t.Fatal(err)
	}
	ch := make(chan clientRun, 1)
	go func() {
		var notices bytes.Buffer
		res, err := c.Run(s, nil, stdout, stderr, sigs, &notices)
		stdout.Close()
		stderr.Close()
		ch <- clientRun{res, err, notices.String()}
	}()
	return ch, c
}

// A job's descriptors, environment, directory and result go through the
// daemon; at MPL 1 a second job waits in the queue, with the message, and
// starts when the first ends; --no-queue is refused with status 75.
func TestQueueAtMPL1(t *testing.T) {
	f := &fakeRun{started: make(chan int, 4), release: make(chan struct{})}
	d, log := startDaemon(t, 1, f.run)
	dir := filepath.Dir(d.Socket())

	o1, e1, out1, err1 := pipes(t)
	r1, _ := submit(t, dir, spec(2), make(chan os.Signal), o1, e1)
	if n := <-f.started; n != 2 {
		t.Fatalf("first job started with %d ranks", n)
	}
	o2, e2, out2, _ := pipes(t)
	r2, _ := submit(t, dir, spec(1), make(chan os.Signal), o2, e2)
	// The status shows the second job queued once the daemon has taken it.
	log.waitFor(fmt.Sprintf("job 2: 1 rank(s) of /bin/true for pid %d: queued", os.Getpid()))
	st := d.Status()
	if st.Jobs[0].State != "running" || st.Jobs[0].ID != 1 || st.Jobs[1].State != "queued" || st.Jobs[1].ID != 2 || st.Jobs[1].Ranks != 1 {
		t.Fatalf("status %+v", st)
	}
	var b strings.Builder
	FormatStatus(&b, st)
	for _, want := range []string{"multiprogramming level 1: 1 running, 1 queued", "JOB  RANKS  STATE", "1    2      running", "2    1      queued   -", "/bin/true a b"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("status lacks %q:\n%s", want, b.String())
		}
	}

	o3, e3, _, _ := pipes(t)
	s3 := spec(1)
	s3.NoQueue = true
	r3, _ := submit(t, dir, s3, make(chan os.Signal), o3, e3)
	got3 := <-r3
	var ee *ExitError
	if !errors.As(got3.err, &ee) || ee.Code != ExitTempFail || ee.Msg != "bcsrun: refused (--no-queue): 1 job running at multiprogramming level 1" {
		t.Fatalf("--no-queue on a full daemon: %+v", got3)
	}

	close(f.release)
	got1 := <-r1
	if got1.err != nil || got1.res.ExitCode != 2 || got1.res.Slices != 42 || got1.notices != "" {
		t.Fatalf("first job: %+v", got1)
	}
	if o, e := out1(), err1(); o != "out of true [a b] in /tmp, FOO=bar\n" || e != "err of 2 ranks\n" {
		t.Errorf("first job's output %q, %q", o, e)
	}
	got2 := <-r2
	if got2.err != nil || got2.res.ExitCode != 1 || !strings.HasPrefix(got2.notices, "bcsrun: queued: 1 job running at multiprogramming level 1\nbcsrun: job 2 started after ") {
		t.Fatalf("second job: %+v", got2)
	}
	if o := out2(); o != "out of true [a b] in /tmp, FOO=bar\n" {
		t.Errorf("second job's output %q", o)
	}
	l := log.String()
	if i, j := strings.Index(l, "job 1: ended with status 2"), strings.Index(l, "job 2: 1 rank(s) of /bin/true for pid"+fmt.Sprintf(" %d: running", os.Getpid())); i < 0 || j < i {
		t.Errorf("the second job did not start after the first ended:\n%s", l)
	}
}

// A signal the client forwards ends its job; the client's connection
// closing is a SIGHUP to its job; a job launch.Run cannot start comes back as
// its error.
func TestSignalsAndHangup(t *testing.T) {
	f := &fakeRun{started: make(chan int, 4), release: make(chan struct{})}
	d, log := startDaemon(t, 1, f.run)
	dir := filepath.Dir(d.Socket())

	o, e, _, errOut := pipes(t)
	sigs := make(chan os.Signal, 1)
	r, _ := submit(t, dir, spec(2), sigs, o, e)
	<-f.started
	sigs <- syscall.SIGINT
	got := <-r
	if got.err != nil || got.res.ExitCode != 130 || got.res.Message != "bcsrun: interrupt received, job terminated" {
		t.Fatalf("after SIGINT: %+v", got)
	}
	if s := errOut(); !strings.HasSuffix(s, "bcsrun: interrupt received, job terminated\n") {
		t.Errorf("job's stderr %q", s)
	}

	// The client vanishes: its connection ends.
	c, err := Dial(dir)
	if err != nil {
		t.Fatal(err)
	}
	o, e, _, _ = pipes(t)
	s := spec(1)
	s.Stdin = false
	if err := writeFrame(c.c, Request{Version: Version, Op: "run", Job: &s}, o, e); err != nil {
		t.Fatal(err)
	}
	o.Close()
	e.Close()
	<-f.started
	c.Close()
	log.waitFor("job 2: ended with status 129 (bcsrun: hangup received, job terminated)") // as on SIGHUP

	close(f.release)
	o, e, _, _ = pipes(t)
	r, _ = submit(t, dir, spec(3), make(chan os.Signal), o, e)
	if got := <-r; got.err == nil || got.err.Error() != "bcsrun: three ranks cannot start" {
		t.Fatalf("a job that cannot start: %+v", got)
	}
}

// Bad requests are refused with a message naming the value.
func TestBadRequests(t *testing.T) {
	d, _ := startDaemon(t, 1, func(launch.Job) (launch.Result, error) { t.Error("a bad request ran"); return launch.Result{}, nil })
	dir := filepath.Dir(d.Socket())
	bad := []struct {
		mod  func(*JobSpec)
		want string
	}{
		{func(s *JobSpec) { s.Program = "true" }, `program "true" is not an absolute path`},
		{func(s *JobSpec) { s.Dir = "." }, `working directory "." is not an absolute path`},
		{func(s *JobSpec) { s.Ranks = 0 }, "-n 0, want 1 .. 4096 ranks"},
		{func(s *JobSpec) { s.Config.Timeslice = 1 }, "timeslice"},
		{func(s *JobSpec) { s.MemPerRank = 1 << 60 }, "bcsrun: refused: the job needs 2.0 EiB (2 ranks × 1 EiB declared with --mem-per-rank, plus "},
	}
	for _, b := range bad {
		s := spec(2)
		b.mod(&s)
		o, e, _, _ := pipes(t)
		r, _ := submit(t, dir, s, make(chan os.Signal), o, e)
		got := <-r
		var ee *ExitError
		if !errors.As(got.err, &ee) || ee.Code != ExitRefused || !strings.Contains(ee.Msg, b.want) {
			t.Errorf("%+v: %v, want a refusal (status 2) containing %q", s, got.err, b.want)
		}
	}
	// Another build's message: an unknown field.
	c, _ := Dial(dir)
	msg := `{"version":1,"op":"x","y":1}`
	c.c.Write(append([]byte{0, 0, 0, byte(len(msg))}, msg...))
	var r Reply
	if _, err := readFrame(c.c, &r); err != nil || r.Kind != "refused" || !strings.Contains(r.Notice, `unknown field "y"`) {
		t.Errorf("unknown field: %+v, %v", r, err)
	}
	c.Close()
	// A frame over the limit.
	c, _ = Dial(dir)
	c.c.Write([]byte{0xff, 0xff, 0xff, 0xff})
	r = Reply{}
	if _, err := readFrame(c.c, &r); err != nil || !strings.Contains(r.Notice, "a message of 4294967295 bytes, want at most 8388608") {
		t.Errorf("oversized frame: %+v, %v", r, err)
	}
	c.Close()
}

// FuzzDecode: no input of a peer's makes the decoder panic.
func FuzzDecode(f *testing.F) {
	f.Add([]byte(`{"version":1,"op":"run","job":{"program":"/bin/true","ranks":2}}`))
	f.Add([]byte(`{"kind":"result","result":{"ExitCode":3}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		var req Request
		decode(b, &req)
		var rep Reply
		decode(b, &rep)
	})
}

// The daemon refuses a peer of another uid, naming both; the 0700
// directory keeps such a peer from reaching the socket in the first place.
// The peer is a copy of this test binary run as uid 65534.
func TestOtherUIDRefused(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root to run a process as another user") // bcsmpi's tests run as root
	}
	d, log := startDaemon(t, 1, nil)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	pub, err := os.MkdirTemp("", "gangd-peer-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(pub)
	os.Chmod(pub, 0o755)
	b, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	peer := filepath.Join(pub, "peer.test")
	if err := os.WriteFile(peer, b, 0o755); err != nil {
		t.Fatal(err)
	}
	asNobody := func() string {
		cmd := exec.Command(peer, "-test.run=^TestPeerHelper$", "-test.v")
		cmd.Env = append(os.Environ(), "GANGD_PEER_SOCKET="+d.Socket())
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("peer: %v\n%s", err, out)
		}
		return string(out)
	}
	if out := asNobody(); !strings.Contains(out, "peer: dial: ") || !strings.Contains(out, "permission denied") {
		t.Errorf("through the 0700 directory: %s", out)
	}
	// Loosen the directory and the socket, as a mistake would: the peer
	// check still refuses.
	for p := filepath.Dir(d.Socket()); p != os.TempDir(); p = filepath.Dir(p) { // up to the test's temporary directory
		os.Chmod(p, 0o711)
	}
	os.Chmod(d.Socket(), 0o777)
	want := fmt.Sprintf("peer: refused 2: bcsd: refused: this bcsd (pid %d) runs the jobs of uid 0 only, and you are uid 65534; start your own with: bcsd start", os.Getpid())
	if out := asNobody(); !strings.Contains(out, want) {
		t.Errorf("peer of uid 65534: %s\nwant %q", out, want)
	}
	if !strings.Contains(log.String(), "of uid 65534 (another user)") {
		t.Errorf("log: %s", log.String())
	}
}

// TestPeerHelper is the other user's process of TestOtherUIDRefused; it
// does nothing in a normal run.
func TestPeerHelper(t *testing.T) {
	sock := os.Getenv("GANGD_PEER_SOCKET")
	if sock == "" {
		return
	}
	c, err := net.DialUnix("unix", nil, &net.UnixAddr{Name: sock, Net: "unix"})
	if err != nil {
		fmt.Println("peer: dial:", err)
		return
	}
	cl := &Client{c: c, Socket: sock}
	_, err = cl.Status()
	var ee *ExitError
	if errors.As(err, &ee) {
		fmt.Printf("peer: refused %d: %s\n", ee.Code, ee.Msg)
		return
	}
	fmt.Println("peer: not refused:", err)
}

// A queued job leaves the queue on its client's signal, with the status and
// message a signal gives, or when its client goes; bcsd stop ends the
// running job as SIGTERM does and drops the queued ones with status 75.
func TestQueuedJobsAndStop(t *testing.T) {
	f := &fakeRun{started: make(chan int, 4), release: make(chan struct{})}
	d, log := startDaemon(t, 1, f.run)
	dir := filepath.Dir(d.Socket())
	pid := os.Getpid()

	o, e, _, _ := pipes(t)
	r1, _ := submit(t, dir, spec(2), make(chan os.Signal), o, e)
	<-f.started

	o, e, _, _ = pipes(t)
	sigs := make(chan os.Signal, 1)
	r2, _ := submit(t, dir, spec(1), sigs, o, e)
	log.waitFor(fmt.Sprintf("job 2: 1 rank(s) of /bin/true for pid %d: queued", pid))
	sigs <- syscall.SIGTERM
	got := <-r2
	if got.err != nil || got.res.ExitCode != 143 || got.notices != "bcsrun: queued: 1 job running at multiprogramming level 1\nbcsrun: terminated received, job terminated\n" {
		t.Fatalf("a queued job signalled: %+v", got)
	}

	c, err := Dial(dir)
	if err != nil {
		t.Fatal(err)
	}
	o, e, _, _ = pipes(t)
	s := spec(1)
	if err := writeFrame(c.c, Request{Version: Version, Op: "run", Job: &s}, o, e); err != nil {
		t.Fatal(err)
	}
	o.Close()
	e.Close()
	log.waitFor(fmt.Sprintf("job 3: 1 rank(s) of /bin/true for pid %d: queued", pid))
	c.Close()
	log.waitFor("job 3: left the queue on hangup")

	o, e, _, _ = pipes(t)
	r4, _ := submit(t, dir, spec(1), make(chan os.Signal), o, e)
	log.waitFor(fmt.Sprintf("job 4: 1 rank(s) of /bin/true for pid %d: queued", pid))
	if st := d.Status(); len(st.Jobs) != 2 || st.Jobs[1].ID != 4 {
		t.Fatalf("status %+v: want job 1 running and job 4 queued", st)
	}
	c, _ = Dial(dir)
	if err := c.Stop(); err != nil {
		t.Fatal(err)
	}
	got = <-r1
	if got.err != nil || got.res.ExitCode != 143 {
		t.Errorf("the running job at stop: %+v", got)
	}
	got = <-r4
	var ee *ExitError
	if !errors.As(got.err, &ee) || ee.Code != ExitTempFail || ee.Msg != "bcsrun: bcsd stopped before the job started; nothing ran" {
		t.Errorf("the queued job at stop: %+v", got)
	}
	if !strings.Contains(log.String(), "stopped (1 running job(s) ended, 1 queued dropped)") {
		t.Errorf("log:\n%s", log.String())
	}
}

// Two jobs that each fit in the memory available, but not together, and
// arrive together: the second is refused, since the first's ranks have not
// allocated yet (MemAvailable does not show them), naming the reservation.
func TestMemoryReservedForJustStartedJobs(t *testing.T) {
	f := &fakeRun{started: make(chan int, 4), release: make(chan struct{})}
	d, _ := startDaemon(t, 2, f.run)
	dir := filepath.Dir(d.Socket())
	need := footprintOf(ptr(spec(2))).total()
	d.mu.Lock()
	d.memAvl = func() (uint64, error) { return need + need/2, nil }
	d.mu.Unlock()

	o1, e1, _, _ := pipes(t)
	r1, _ := submit(t, dir, spec(2), make(chan os.Signal), o1, e1)
	<-f.started
	o2, e2, _, _ := pipes(t)
	r2, _ := submit(t, dir, spec(2), make(chan os.Signal), o2, e2)
	var got2 clientRun
	select {
	case got2 = <-r2:
	case <-f.started:
		close(f.release)
		t.Fatal("the second job started against the memory the first has not allocated yet")
	}
	var ee *ExitError
	if !errors.As(got2.err, &ee) || ee.Code != ExitRefused || !strings.Contains(ee.Msg, "bcsrun: refused: the job needs ") ||
		!strings.Contains(ee.Msg, "kept for the 1 job(s) started in the last 10s") {
		t.Fatalf("a second job against the same free memory: %+v", got2)
	}
	close(f.release)
	if got1 := <-r1; got1.err != nil {
		t.Fatalf("first job: %+v", got1)
	}
}

func ptr[T any](v T) *T { return &v }
