package gangd

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/bcsmpi/bcsmpi/internal/launch"
	"github.com/bcsmpi/bcsmpi/internal/unix"
	"github.com/bcsmpi/bcsmpi/nicthread"
	"github.com/bcsmpi/bcsmpi/strobe"
)

// Exit statuses of jobs the daemon did not run.
const (
	ExitRefused  = 2  // bad request, or the job would not fit in memory
	ExitTempFail = 75 // the machine is full (--no-queue), or the daemon stopped: nothing ran, try again
)

// requestWait bounds how long a new connection may take to send its request.
const requestWait = 10 * time.Second

// Config is what a daemon is started with.
type Config struct {
	Dir string    // the runtime directory (RuntimeDir)
	MPL int       // jobs running at once, >= 1 (key gang_mpl)
	Log io.Writer // one line per event; nil: none
}

// Daemon hosts the jobs of one user on this machine (see the package
// comment). Safe for concurrent use.
type Daemon struct {
	// Prepare, if set, is called on every job just before launch.Run, from
	// the job's own goroutine; the gang scheduler plugs in here. Set it
	// before Serve.
	Prepare func(*launch.Job)
	// Gang, if set, is the gang master the daemon gives the masters of
	// jobs across hosts a place in (across.go); nil: such jobs are
	// refused. Set it before Serve.
	Gang *nicthread.Gang

	cfg    Config
	sock   string
	ln     *net.UnixListener
	lock   *os.File
	uid    int
	run    func(launch.Job) (launch.Result, error) // launch.Run; tests replace it
	memAvl func() (uint64, error)                  // MemAvailable; tests replace it

	mu       sync.Mutex
	running  []*job
	queue    []*job
	remotes  []*remoteJob // jobs across hosts whose master is here
	nextID   int
	stopping bool

	jobs     sync.WaitGroup // job goroutines
	stopOnce sync.Once
	stopped  chan struct{} // closed when Stop has finished
	quit     chan struct{} // closed when a client's stop request has been answered
	quitOnce sync.Once
	logMu    sync.Mutex
}

// job is one client's job, from its request to its result.
type job struct {
	id        int
	spec      JobSpec
	files     []*os.File // [stdin,] stdout, stderr: the client's, ours to close
	conn      *net.UnixConn
	clientPID int
	wmu       sync.Mutex     // one frame at a time on conn
	sigs      chan os.Signal // launch.Job.Signals
	state     string         // "queued", "running", "ended"; under Daemon.mu
	arrived   time.Time
	started   time.Time
	queued    bool          // it waited in the queue
	slice     atomic.Uint64 // the master's last slice
}

func (j *job) send(r Reply) error {
	j.wmu.Lock()
	defer j.wmu.Unlock()
	return writeFrame(j.conn, r)
}

// end closes what the job holds of its client.
func (j *job) end() {
	closeFiles(j.files)
	j.files = nil
	j.conn.Close()
}

// Start takes the lock in cfg.Dir (creating the directory), replaces a stale
// socket, and listens. Serve then answers clients. An error names what is in
// the way, such as another daemon's pid.
func Start(cfg Config) (*Daemon, error) {
	if cfg.MPL < 1 {
		return nil, fmt.Errorf("gangd: multiprogramming level %d, want 1 or more (key gang_mpl)", cfg.MPL)
	}
	if cfg.Log == nil {
		cfg.Log = io.Discard
	}
	if err := MakeDir(cfg.Dir); err != nil {
		return nil, err
	}
	lockPath := filepath.Join(cfg.Dir, LockName)
	lock, err := os.OpenFile(lockPath, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("gangd: lock file: %w", err)
	}
	if err := unix.TryLock(lock); err != nil {
		lock.Close()
		if errors.Is(err, unix.ErrLocked) {
			pid := "unknown"
			if b, rerr := os.ReadFile(lockPath); rerr == nil && len(strings.TrimSpace(string(b))) > 0 {
				pid = strings.TrimSpace(string(b))
			}
			return nil, fmt.Errorf("bcsd: already running (pid %s, socket %s)", pid, filepath.Join(cfg.Dir, SocketName))
		}
		return nil, fmt.Errorf("gangd: locking %s: %w", lockPath, err)
	}
	d := &Daemon{cfg: cfg, sock: filepath.Join(cfg.Dir, SocketName), lock: lock, uid: os.Getuid(), run: launch.Run, memAvl: MemAvailable,
		stopped: make(chan struct{}), quit: make(chan struct{})}
	fail := func(err error) (*Daemon, error) {
		lock.Close()
		return nil, err
	}
	if err := lock.Truncate(0); err != nil {
		return fail(fmt.Errorf("gangd: lock file: %w", err))
	}
	if _, err := lock.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0); err != nil {
		return fail(fmt.Errorf("gangd: lock file: %w", err))
	}
	// We hold the lock, so no daemon listens on a socket left here.
	if fi, err := os.Lstat(d.sock); err == nil {
		if fi.Mode().Type() != os.ModeSocket {
			return fail(fmt.Errorf("bcsd: %s is not a socket (%v); remove it", d.sock, fi.Mode().Type()))
		}
		if err := os.Remove(d.sock); err != nil {
			return fail(fmt.Errorf("bcsd: removing the stale socket %s: %w", d.sock, err))
		}
		d.logf("replaced the stale socket %s of a daemon that is gone", d.sock)
	}
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: d.sock, Net: "unix"})
	if err != nil {
		return fail(fmt.Errorf("bcsd: listening on %s: %w", d.sock, err))
	}
	d.ln = ln
	return d, nil
}

// Socket is the daemon's socket path.
func (d *Daemon) Socket() string { return d.sock }

// Quit is closed once a client's stop request has been carried out and
// answered.
func (d *Daemon) Quit() <-chan struct{} { return d.quit }

func (d *Daemon) logf(format string, args ...any) {
	d.logMu.Lock()
	defer d.logMu.Unlock()
	fmt.Fprintf(d.cfg.Log, "bcsd: "+format+"\n", args...)
}

// Serve answers clients until Stop. It returns nil after Stop, or the
// listener's error.
func (d *Daemon) Serve() error {
	var backoff time.Duration
	for {
		c, err := d.ln.AcceptUnix()
		if err != nil {
			select {
			case <-d.stopped:
				return nil
			default:
			}
			d.mu.Lock()
			stopping := d.stopping
			d.mu.Unlock()
			if stopping {
				return nil
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			if transientAccept(err) {
				// Out of descriptors or buffers, or a client gone before
				// its accept: the running jobs must not pay for it. Say so,
				// back off as net/http does, and go on.
				backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
				d.logf("accepting on %s: %v; retrying in %v", d.sock, err, backoff)
				select {
				case <-time.After(backoff):
				case <-d.stopped:
					return nil
				}
				continue
			}
			return fmt.Errorf("bcsd: accepting on %s: %w", d.sock, err)
		}
		backoff = 0
		go d.serveConn(c)
	}
}

// transientAccept says whether an accept error passes with time: the
// process or the system is out of descriptors or buffers, or the client
// closed its connection before it was accepted.
func transientAccept(err error) bool {
	return errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE) || errors.Is(err, syscall.ENOBUFS) ||
		errors.Is(err, syscall.ENOMEM) || errors.Is(err, syscall.ECONNABORTED) || errors.Is(err, syscall.EINTR)
}

// Stop refuses new jobs, drops the queued ones (status 75), ends the running
// ones as SIGTERM would, waits for them, and removes the socket and releases
// the lock. Safe to call more than once and from several goroutines; every
// call returns when the daemon has stopped.
func (d *Daemon) Stop() {
	d.stopOnce.Do(func() {
		d.mu.Lock()
		d.stopping = true
		queued, running := d.queue, slices.Clone(d.running)
		d.queue = nil
		for _, j := range queued {
			j.state = "ended"
		}
		for _, j := range running {
			select {
			case j.sigs <- syscall.SIGTERM:
			default:
			}
		}
		d.stopRemotesLocked()
		d.mu.Unlock()
		d.ln.Close() // removes the socket file
		for _, j := range queued {
			msg := "bcsrun: bcsd stopped before the job started; nothing ran"
			j.send(Reply{Kind: "refused", Job: j.id, Code: ExitTempFail, Notice: msg})
			j.end()
			d.logf("job %d: dropped from the queue (the daemon stops)", j.id)
		}
		d.jobs.Wait()
		d.lock.Close()
		d.logf("stopped (%d running job(s) ended, %d queued dropped)", len(running), len(queued))
		close(d.stopped)
	})
	<-d.stopped
}

// serveConn answers one connection.
func (d *Daemon) serveConn(c *net.UnixConn) {
	pid, uid, err := unix.PeerCred(c)
	if err != nil {
		d.logf("a connection whose peer is unknown (%v): closed", err)
		c.Close()
		return
	}
	if uid != d.uid {
		msg := fmt.Sprintf("bcsd: refused: this bcsd (pid %d) runs the jobs of uid %d only, and you are uid %d; start your own with: bcsd start", os.Getpid(), d.uid, uid)
		writeFrame(c, Reply{Kind: "refused", Code: ExitRefused, Notice: msg})
		c.Close()
		d.logf("refused pid %d of uid %d (another user)", pid, uid)
		return
	}
	c.SetReadDeadline(time.Now().Add(requestWait))
	var req Request
	files, err := readFrame(c, &req)
	c.SetReadDeadline(time.Time{})
	refuse := func(msg string) {
		closeFiles(files)
		writeFrame(c, Reply{Kind: "refused", Code: ExitRefused, Notice: msg})
		c.Close()
		d.logf("refused a request of pid %d: %s", pid, msg)
	}
	if err != nil {
		refuse(fmt.Sprintf("bcsd: reading the request: %v", err))
		return
	}
	if req.Version != Version {
		refuse(fmt.Sprintf("bcsd: protocol version %d, this bcsd speaks %d: bcsrun and bcsd are from different builds (bcsd stop; bcsd start)", req.Version, Version))
		return
	}
	switch req.Op {
	case "status":
		closeFiles(files)
		st := d.Status()
		writeFrame(c, Reply{Kind: "status", Status: &st})
		c.Close()
	case "stop":
		closeFiles(files)
		d.logf("stop requested by pid %d", pid)
		d.Stop()
		writeFrame(c, Reply{Kind: "stopped"})
		c.Close()
		d.quitOnce.Do(func() { close(d.quit) })
	case "run":
		if req.Job == nil {
			refuse("bcsd: a run request without a job")
			return
		}
		if msg := checkSpec(req.Job, len(files)); msg != "" {
			refuse(msg)
			return
		}
		d.submit(&job{spec: *req.Job, files: files, conn: c, clientPID: pid, sigs: make(chan os.Signal, 4), arrived: time.Now()})
	case "master":
		closeFiles(files)
		if req.Master == nil {
			refuse("bcsd: a master request without its job")
			return
		}
		d.hostMaster(c, pid, req.Master)
	default:
		refuse(fmt.Sprintf("bcsd: request %q, want run, master, status or stop", req.Op))
	}
}

// checkSpec says what is wrong with a job as it came ("" if nothing), given
// the number of descriptors that came with it.
func checkSpec(j *JobSpec, files int) string {
	want := 2
	if j.Stdin {
		want = 3
	}
	switch {
	case files != want:
		return fmt.Sprintf("bcsd: %d descriptors came with the job, want %d (stdin %v, stdout, stderr)", files, want, j.Stdin)
	case !filepath.IsAbs(j.Program):
		return fmt.Sprintf("bcsd: program %q is not an absolute path", j.Program)
	case !filepath.IsAbs(j.Dir):
		return fmt.Sprintf("bcsd: working directory %q is not an absolute path", j.Dir)
	case j.Ranks < 1 || j.Ranks > 4096:
		return fmt.Sprintf("bcsrun: -n %d, want 1 .. 4096 ranks", j.Ranks)
	}
	if err := j.Config.Validate(); err != nil {
		return err.Error()
	}
	return ""
}

// admission is what happens to a job that arrives.
type admission int

const (
	admitStart admission = iota
	admitQueue
	admitRefuse
)

// admit decides for a job arriving while running jobs run and queued wait,
// at multiprogramming level mpl: start when there is room and nobody waits
// before it, else queue (or refuse with noQueue).
func admit(running, queued, mpl int, noQueue bool) admission {
	switch {
	case running < mpl && queued == 0:
		return admitStart
	case noQueue:
		return admitRefuse
	}
	return admitQueue
}

func jobsRunning(n, mpl int) string {
	s := "s"
	if n == 1 {
		s = ""
	}
	return fmt.Sprintf("%d job%s running at multiprogramming level %d", n, s, mpl)
}

// submit admits a new job: it starts, waits in the queue, or is refused.
// Then it reads the client's signals until the connection ends.
func (d *Daemon) submit(j *job) {
	d.mu.Lock()
	if d.stopping {
		d.mu.Unlock()
		j.send(Reply{Kind: "refused", Code: ExitTempFail, Notice: "bcsrun: bcsd is stopping; nothing ran"})
		j.end()
		return
	}
	d.nextID++
	j.id = d.nextID
	if msg := d.memCheck(j); msg != "" {
		d.mu.Unlock()
		j.send(Reply{Kind: "refused", Job: j.id, Code: ExitRefused, Notice: msg})
		j.end()
		d.logf("job %d: refused: %s", j.id, msg)
		return
	}
	switch admit(len(d.running)+len(d.remotes), len(d.queue), d.cfg.MPL, j.spec.NoQueue) {
	case admitRefuse:
		n := len(d.running) + len(d.remotes)
		msg := "bcsrun: refused (--no-queue): " + jobsRunning(n, d.cfg.MPL)
		d.mu.Unlock()
		j.send(Reply{Kind: "refused", Job: j.id, Code: ExitTempFail, Notice: msg})
		j.end()
		d.logf("job %d: refused (--no-queue, %d running)", j.id, n)
		return
	case admitQueue:
		msg := "bcsrun: queued: " + jobsRunning(len(d.running)+len(d.remotes), d.cfg.MPL)
		if len(d.queue) > 0 {
			msg += fmt.Sprintf(", %d job(s) queued before this one", len(d.queue))
		}
		j.state, j.queued = "queued", true
		d.queue = append(d.queue, j)
		j.send(Reply{Kind: "queued", Job: j.id, Notice: msg})
		d.logf("job %d: %d rank(s) of %s for pid %d: queued", j.id, j.spec.Ranks, j.spec.Program, j.clientPID)
	case admitStart:
		d.startLocked(j)
	}
	d.mu.Unlock()
	d.readSignals(j)
}

// memCheck says why j does not fit in memory now ("" if it fits). Called
// with d.mu held.
//
// Jobs started in the last memSettle have not allocated yet, so
// MemAvailable does not show them: their footprints are reserved, so that
// jobs arriving together (or leaving the queue together) are not all let in
// against the same free memory.
func (d *Daemon) memCheck(j *job) string {
	avail, err := d.memAvl()
	if err != nil {
		d.logf("job %d: memory not checked: %v", j.id, err)
		return ""
	}
	var reserved uint64
	n := 0
	for _, r := range d.running {
		if time.Since(r.started) < memSettle {
			reserved = sat(reserved, footprintOf(&r.spec).total())
			n++
		}
	}
	msg := footprintOf(&j.spec).fits(avail - min(avail, reserved))
	if msg != "" && n > 0 {
		msg += fmt.Sprintf(", less %s kept for the %d job(s) started in the last %v", FormatBytes(reserved), n, memSettle)
	}
	return msg
}

// memSettle is how long a started job's footprint is kept aside by
// memCheck, while its ranks start and allocate.
const memSettle = 10 * time.Second

// startLocked starts j's goroutine. Called with d.mu held.
func (d *Daemon) startLocked(j *job) {
	j.state = "running"
	j.started = time.Now()
	d.running = append(d.running, j)
	d.jobs.Add(1)
	d.logf("job %d: %d rank(s) of %s for pid %d: running", j.id, j.spec.Ranks, j.spec.Program, j.clientPID)
	go d.runJob(j)
}

// runJob runs j with launch.Run and sends its result.
func (d *Daemon) runJob(j *job) {
	defer d.jobs.Done()
	if j.queued {
		j.send(Reply{Kind: "started", Job: j.id, Notice: fmt.Sprintf("bcsrun: job %d started after %.1fs in the queue", j.id, j.started.Sub(j.arrived).Seconds())})
	}
	s := j.spec
	lj := launch.Job{Ranks: s.Ranks, Program: s.Program, Args: s.Args, Config: s.Config, Signals: j.sigs,
		Record: s.Record, Replay: s.Replay, Env: s.Env, Dir: s.Dir, Submitted: j.arrived, Admitted: j.started,
		OnSlice: func(r *strobe.SliceRecord) { j.slice.Store(uint64(r.Slice)) }}
	fs := j.files
	if s.Stdin {
		lj.Stdin, fs = fs[0], fs[1:]
	}
	lj.Stdout, lj.Stderr = fs[0], fs[1]
	if d.Prepare != nil {
		d.Prepare(&lj)
	}
	res, err := d.run(lj)
	rep := Reply{Kind: "result", Job: j.id, Result: &res}
	if err != nil {
		rep.Err = err.Error()
	}
	j.send(rep)
	d.mu.Lock()
	j.state = "ended"
	d.running = slices.DeleteFunc(d.running, func(x *job) bool { return x == j })
	d.mu.Unlock()
	j.end()
	if err != nil {
		d.logf("job %d: not started: %v", j.id, err)
	} else {
		d.logf("job %d: ended with status %d%s", j.id, res.ExitCode, ifMsg(res.Message))
	}
	d.mu.Lock()
	d.startQueuedLocked()
	d.mu.Unlock()
}

func ifMsg(m string) string {
	if m == "" {
		return ""
	}
	return " (" + m + ")"
}

// startQueuedLocked starts queued jobs while there is room, refusing those
// that no longer fit in memory. Called with d.mu held.
func (d *Daemon) startQueuedLocked() {
	for !d.stopping && len(d.queue) > 0 && len(d.running)+len(d.remotes) < d.cfg.MPL {
		j := d.queue[0]
		d.queue = d.queue[1:]
		if msg := d.memCheck(j); msg != "" {
			j.state = "ended"
			go func() {
				j.send(Reply{Kind: "refused", Job: j.id, Code: ExitRefused, Notice: msg})
				j.end()
			}()
			d.logf("job %d: refused on leaving the queue: %s", j.id, msg)
			continue
		}
		d.startLocked(j)
	}
}

// readSignals reads the client's frames until its connection ends: each
// signal goes to the job, and the end of the connection is a SIGHUP.
func (d *Daemon) readSignals(j *job) {
	for {
		var req Request
		files, err := readFrame(j.conn, &req)
		closeFiles(files)
		if err != nil {
			d.signal(j, syscall.SIGHUP)
			return
		}
		sig := syscall.Signal(req.Signal)
		if req.Op != "signal" || !slices.Contains(launch.TermSignals, os.Signal(sig)) {
			d.logf("job %d: a message %q with signal %d from its client, want signal with SIGINT, SIGTERM or SIGHUP: taken as a hangup", j.id, req.Op, req.Signal)
			d.signal(j, syscall.SIGHUP)
			return
		}
		d.signal(j, sig)
	}
}

// signal delivers s to j: a running job ends as launch.Run ends on s; a
// queued one leaves the queue with the status and message it would have got.
func (d *Daemon) signal(j *job, s syscall.Signal) {
	d.mu.Lock()
	switch j.state {
	case "running":
		select {
		case j.sigs <- s:
		default: // the job already has signals to end on
		}
		d.mu.Unlock()
	case "queued":
		j.state = "ended"
		d.queue = slices.DeleteFunc(d.queue, func(x *job) bool { return x == j })
		d.mu.Unlock()
		msg := fmt.Sprintf("bcsrun: %v received, job terminated", s)
		j.send(Reply{Kind: "result", Job: j.id, Notice: msg, Result: &launch.Result{ExitCode: 128 + int(s), Message: msg}})
		j.end()
		d.logf("job %d: left the queue on %v", j.id, s)
	default:
		d.mu.Unlock()
	}
}

// Status lists the daemon's jobs: running, then queued in order.
func (d *Daemon) Status() Status {
	d.mu.Lock()
	defer d.mu.Unlock()
	now := time.Now()
	st := Status{PID: os.Getpid(), Socket: d.sock, MPL: d.cfg.MPL, Jobs: []JobStatus{}}
	for _, j := range d.running {
		st.Jobs = append(st.Jobs, JobStatus{ID: j.id, Ranks: j.spec.Ranks, Program: j.spec.Program, Args: j.spec.Args, State: "running",
			Slices: j.slice.Load(), Elapsed: now.Sub(j.started), ClientPID: j.clientPID})
	}
	for _, rj := range d.remotes {
		st.Jobs = append(st.Jobs, rj.status(now))
	}
	for _, j := range d.queue {
		st.Jobs = append(st.Jobs, JobStatus{ID: j.id, Ranks: j.spec.Ranks, Program: j.spec.Program, Args: j.spec.Args, State: "queued",
			Elapsed: now.Sub(j.arrived), ClientPID: j.clientPID})
	}
	return st
}
