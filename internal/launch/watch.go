package launch

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"
)

// watch follows a job on this host until its last rank has ended (and, for
// RunHost, until the job's end on the other hosts is settled): the ranks'
// exits (the first that fails the job aborts it), the master's end, the
// agent's end, the terminating signals and, for RunHost, the end fence,
// bcsrun's control words and the quiet wait. Run and RunHost share the
// loop (run) and the abort; each gives the handlers of what it does its
// own way. A source a side does not have is a nil channel, which never
// fires.
type watch struct {
	j        *job
	aborting bool
	killTime <-chan time.Time // abort's SIGTERM has had its 2 s: the ranks still alive are killed

	sigs  <-chan os.Signal // the terminating signals
	agent <-chan error     // an agent's end: Run sends its errors, RunHost its Serve's result

	// RunHost's alone.
	fenced            <-chan error     // the end fence's outcome
	ctlAbort, ctlGone <-chan struct{}  // bcsrun's words (control.go)
	quietTime         <-chan time.Time // the quiet wait's end (quiet)
	quietMsg          string
	// secondary marks the next abort's message as a consequence of
	// another host's end.
	secondary bool

	// The handlers. verdict records (and tells) why the job is aborted,
	// before abort stops the ranks; it runs once.
	verdict  func(code int, msg string)
	sigMsg   func(os.Signal) string // the abort message for a signal
	master   func(err error)        // the master's end (j.ended is set)
	agentEnd func(err error)
	fence    func(err error) // RunHost
	// more, if set, keeps the loop going once every rank has ended;
	// before and after run around each event (RunHost: start the end
	// fence, judge the agent's end).
	more          func() bool
	before, after func()
}

// abort ends the job: the verdict, then every agent aborted, the ranks
// sent SIGTERM and killed 2 s later. Only the first abort counts.
func (w *watch) abort(code int, msg string) {
	if w.aborting {
		return
	}
	w.aborting = true
	w.verdict(code, msg) // the reason first, before the ranks report being stopped
	j := w.j
	for _, n := range j.nodes {
		n.agent.Abort()
	}
	j.signalRanks(syscall.SIGTERM)
	for _, n := range j.nodes { // a descheduled rank handles SIGTERM only once continued (gang)
		n.group.cont()
	}
	w.killTime = time.After(2 * time.Second)
}

// quiet aborts with msg after up to quietWait, unless bcsrun's word that
// another host ended the job comes first (RunHost: msg is a consequence
// of another host's end, which that host's report explains).
func (w *watch) quiet(msg string) {
	if w.aborting || w.quietTime != nil {
		return
	}
	w.quietMsg, w.quietTime = msg, time.After(quietWait)
}

// run watches until the last rank has ended and more (if set) says stop.
func (w *watch) run() {
	j := w.j
	// Orphans that exit during the job are reaped as they go: on SIGCHLD, at
	// most every reapEvery (listing children may scan all of /proc).
	chld := make(chan os.Signal, 1)
	signal.Notify(chld, syscall.SIGCHLD)
	defer signal.Stop(chld)
	var reapTime <-chan time.Time
	for len(j.live) > 0 || w.more != nil && w.more() {
		if w.before != nil {
			w.before()
		}
		select {
		case <-chld:
			if reapTime == nil {
				reapTime = time.After(reapEvery)
			}
		case <-reapTime:
			reapTime = nil
			reapJobZombies(j.procs)
		case e := <-j.exits:
			j.reaped(e)
			if !w.aborting { // else the first failure's verdict stands
				if msg, code := judge(e, j.nodeOfRank(e.rank), j.who); msg != "" {
					w.abort(code, msg)
				}
			}
		case md := <-j.master:
			j.ended = &md
			w.master(md.err)
		case err := <-w.agent:
			w.agentEnd(err)
		case err := <-w.fenced:
			w.fence(err)
		case s := <-w.sigs:
			w.abort(128+int(s.(syscall.Signal)), w.sigMsg(s))
		case <-w.ctlAbort:
			w.ctlAbort = nil
			w.abort(1, "") // another host failed: bcsrun has its verdict
		case <-w.ctlGone:
			// bcsrun died (SIGKILL): nobody would end this host's part
			// (srun, orphaned, waits for its tasks), so it ends here.
			w.ctlGone = nil
			w.abort(1, j.who+": the control connection to bcsrun ended (bcsrun is gone); job aborted")
		case <-w.quietTime:
			w.quietTime = nil
			w.secondary = true
			w.abort(1, w.quietMsg)
		case <-w.killTime:
			for _, p := range j.live {
				p.Kill()
			}
		}
		if w.after != nil {
			w.after()
		}
	}
}

// signalMsg is Run's abort message for a signal.
func signalMsg(s os.Signal) string {
	return fmt.Sprintf("bcsrun: %v received, job terminated", s)
}
