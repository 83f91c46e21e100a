package gangd

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/bcsmpi/bcsmpi/internal/launch"
	"github.com/bcsmpi/bcsmpi/internal/unix"
)

// ExitError is a job the daemon did not run, or lost: the client prints Msg
// and exits with Code.
type ExitError struct {
	Code int
	Msg  string
}

func (e *ExitError) Error() string { return e.Msg }

// Client is a connection to this user's daemon, for one request. Not safe
// for concurrent use.
type Client struct {
	c         *net.UnixConn
	Socket    string
	DaemonPID int
}

// Dial connects to the daemon of runtime directory dir. It returns an
// error matching ErrNoDaemon when none is up (no directory, no socket, or a
// socket nobody listens on), and another error when the directory is not
// this user's alone or the daemon runs as another user.
func Dial(dir string) (*Client, error) {
	sock := filepath.Join(dir, SocketName)
	if err := checkDir(dir); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("%w (no directory %s)", ErrNoDaemon, dir)
		}
		return nil, err
	}
	c, err := net.DialUnix("unix", nil, &net.UnixAddr{Name: sock, Net: "unix"})
	if err != nil {
		if errors.Is(err, os.ErrNotExist) || errors.Is(err, syscall.ECONNREFUSED) {
			return nil, fmt.Errorf("%w (socket %s: %v)", ErrNoDaemon, sock, err)
		}
		return nil, fmt.Errorf("gangd: connecting to %s: %w", sock, err)
	}
	pid, uid, err := unix.PeerCred(c)
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("gangd: %s: %w", sock, err)
	}
	if uid != os.Getuid() {
		c.Close()
		return nil, fmt.Errorf("gangd: the daemon on %s (pid %d) runs as uid %d, not as you (uid %d): not using it", sock, pid, uid, os.Getuid())
	}
	return &Client{c: c, Socket: sock, DaemonPID: pid}, nil
}

// Close closes the connection.
func (cl *Client) Close() error { return cl.c.Close() }

// ask sends a request without descriptors and reads one reply.
func (cl *Client) ask(op string) (Reply, error) {
	defer cl.c.Close()
	if err := writeFrame(cl.c, Request{Version: Version, Op: op}); err != nil {
		if ref := cl.refusal(); ref != nil {
			return Reply{}, ref
		}
		return Reply{}, fmt.Errorf("gangd: %s: %w", cl.Socket, err)
	}
	var r Reply
	files, err := readFrame(cl.c, &r)
	closeFiles(files)
	if err != nil {
		return r, fmt.Errorf("gangd: %s: the daemon's answer: %w", cl.Socket, err)
	}
	if r.Kind == "refused" {
		return r, &ExitError{Code: r.Code, Msg: r.Notice}
	}
	return r, nil
}

// Status asks for the daemon's jobs.
func (cl *Client) Status() (Status, error) {
	r, err := cl.ask("status")
	if err != nil {
		return Status{}, err
	}
	if r.Kind != "status" || r.Status == nil {
		return Status{}, fmt.Errorf("gangd: %s: answered %q to a status request", cl.Socket, r.Kind)
	}
	return *r.Status, nil
}

// Stop asks the daemon to stop, and returns once it has (its jobs ended,
// its socket and lock released).
func (cl *Client) Stop() error {
	r, err := cl.ask("stop")
	if err != nil {
		return err
	}
	if r.Kind != "stopped" {
		return fmt.Errorf("gangd: %s: answered %q to a stop request", cl.Socket, r.Kind)
	}
	return nil
}

// Run hands a job to the daemon with the client's descriptors (stdin may be
// nil: rank 0 reads /dev/null), forwards sigs until the job ends, writes the
// daemon's notices (queued, started) to notices, and returns the job's
// result. An error from launch.Run (the job could not start) comes back as
// an error with launch.Run's text; a refusal, or the daemon lost, as an
// *ExitError.
func (cl *Client) Run(spec JobSpec, stdin, stdout, stderr *os.File, sigs <-chan os.Signal, notices io.Writer) (launch.Result, error) {
	defer cl.c.Close()
	files := []*os.File{stdout, stderr}
	spec.Stdin = stdin != nil
	if stdin != nil {
		files = append([]*os.File{stdin}, files...)
	}
	if err := writeFrame(cl.c, Request{Version: Version, Op: "run", Job: &spec}, files...); err != nil {
		if ref := cl.refusal(); ref != nil {
			return launch.Result{}, ref
		}
		return launch.Result{}, &ExitError{Code: ExitRefused, Msg: fmt.Sprintf("bcsrun: handing the job to bcsd (pid %d, %s): %v", cl.DaemonPID, cl.Socket, err)}
	}
	done := make(chan struct{})
	defer close(done)
	go func() {
		for {
			select {
			case s := <-sigs:
				if n, ok := s.(syscall.Signal); ok {
					writeFrame(cl.c, Request{Version: Version, Op: "signal", Signal: int(n)})
				}
			case <-done:
				return
			}
		}
	}()
	for {
		var r Reply
		files, err := readFrame(cl.c, &r)
		closeFiles(files)
		if err != nil {
			return launch.Result{}, &ExitError{Code: 1, Msg: fmt.Sprintf("bcsrun: lost bcsd (pid %d, %s) before the job ended: %v", cl.DaemonPID, cl.Socket, err)}
		}
		if r.Notice != "" && r.Kind != "refused" {
			fmt.Fprintln(notices, r.Notice)
		}
		switch r.Kind {
		case "queued", "started":
		case "refused":
			return launch.Result{}, &ExitError{Code: r.Code, Msg: r.Notice}
		case "result":
			if r.Err != "" {
				return launch.Result{}, errors.New(r.Err)
			}
			if r.Result == nil {
				return launch.Result{}, &ExitError{Code: 1, Msg: "bcsrun: bcsd sent a result without the job's status"}
			}
			return *r.Result, nil
		default:
			return launch.Result{}, &ExitError{Code: 1, Msg: fmt.Sprintf("bcsrun: bcsd sent %q while the job ran, want queued, started, refused or result", r.Kind)}
		}
	}
}

// refusal reads the refusal a daemon sent before closing a connection that
// could not be written to (another uid's): nil if there is none.
func (cl *Client) refusal() error {
	var r Reply
	files, err := readFrame(cl.c, &r)
	closeFiles(files)
	if err != nil || r.Kind != "refused" {
		return nil
	}
	return &ExitError{Code: r.Code, Msg: r.Notice}
}

// FormatStatus writes st as bcsd status and bcsrun --status print it.
func FormatStatus(w io.Writer, st Status) {
	running, held, queued := 0, 0, 0
	for _, j := range st.Jobs {
		switch j.State {
		case "running":
			running++
		case "held":
			held++
		default:
			queued++
		}
	}
	heldNote := ""
	if held > 0 {
		heldNote = fmt.Sprintf(", %d held (a host late: passed over by the gang)", held)
	}
	fmt.Fprintf(w, "bcsd: pid %d, socket %s, multiprogramming level %d: %d running%s, %d queued\n", st.PID, st.Socket, st.MPL, running, heldNote, queued)
	if len(st.Jobs) == 0 {
		return
	}
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "JOB\tRANKS\tSTATE\tSLICES\tELAPSED\tCLIENT\tPROGRAM")
	for _, j := range st.Jobs {
		slices := "-"
		if j.State != "queued" {
			slices = fmt.Sprint(j.Slices)
		}
		prog := strings.Join(append([]string{j.Program}, j.Args...), " ")
		if j.Hosts > 0 {
			prog += fmt.Sprintf(" (across %d hosts)", j.Hosts)
		}
		fmt.Fprintf(tw, "%d\t%d\t%s\t%s\t%s\t%d\t%s\n", j.ID, j.Ranks, j.State, slices, j.Elapsed.Round(100*time.Millisecond), j.ClientPID, prog)
	}
	tw.Flush()
}
