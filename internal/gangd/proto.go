package gangd

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"time"

	"github.com/bcsmpi/bcsmpi/configs"
	"github.com/bcsmpi/bcsmpi/internal/launch"
	"github.com/bcsmpi/bcsmpi/internal/unix"
)

// Version is the protocol's version; a request of another is refused.
const Version = 1

// FrameMax bounds one frame: a run request carries the client's whole
// environment and arguments (Linux bounds both together to a quarter of the
// stack limit, 2 MiB by default).
const FrameMax = 8 << 20

// filesMax is the most descriptors a request brings: stdin, stdout, stderr.
const filesMax = 3

// Request is a client's message to the daemon.
type Request struct {
	Version int      `json:"version"`
	Op      string   `json:"op"`               // "run", "signal", "status", "stop"; "master", "start", "leave" (across.go)
	Job     *JobSpec `json:"job,omitempty"`    // run
	Signal  int      `json:"signal,omitempty"` // signal: SIGINT, SIGTERM or SIGHUP, by number
	// master: a job across hosts asks for a place in the gang for its
	// master; start: the agents' endpoints, once exchanged.
	Master *MasterSpec `json:"master,omitempty"`
	Addrs  []string    `json:"addrs,omitempty"`
	// start: node 0's MDS asks the master for its part (launch's gangmds.go).
	MDS *launch.GangMDS `json:"mds,omitempty"`
}

// JobSpec is a job as the client resolved it.
type JobSpec struct {
	Program string         `json:"program"` // absolute path
	Args    []string       `json:"args"`
	Env     []string       `json:"env"` // the ranks' environment (the client's)
	Dir     string         `json:"dir"` // the ranks' working directory, absolute
	Ranks   int            `json:"ranks"`
	Config  configs.Config `json:"config"` // resolved by the client; mds_dir absolute
	Record  string         `json:"record,omitempty"`
	Replay  string         `json:"replay,omitempty"`
	// Stdin says the first descriptor is rank 0's standard input; without
	// it the descriptors are stdout and stderr only.
	Stdin   bool `json:"stdin,omitempty"`
	NoQueue bool `json:"no_queue,omitempty"` // refuse rather than wait
	// MemPerRank is the memory one rank needs, in bytes, as declared with
	// --mem-per-rank; 0: AssumedRankBytes.
	MemPerRank uint64 `json:"mem_per_rank,omitempty"`
}

// Reply is the daemon's message to a client.
type Reply struct {
	Kind   string         `json:"kind"` // "queued", "started", "result", "refused", "status" or "stopped"
	Job    int            `json:"job,omitempty"`
	Notice string         `json:"notice,omitempty"` // for the client's standard error
	Code   int            `json:"code,omitempty"`   // refused: the client's exit status
	Result *launch.Result `json:"result,omitempty"` // result
	Err    string         `json:"err,omitempty"`    // result: why the job could not start (launch.Run's error)
	Status *Status        `json:"status,omitempty"`
	Addr   string         `json:"addr,omitempty"` // listening: the master's endpoint for the job across hosts
	Left   *MasterEnd     `json:"left,omitempty"` // left: how the job across hosts left the gang
}

// Status is the daemon and its jobs (bcsd status, bcsrun --status).
type Status struct {
	PID    int         `json:"pid"`
	Socket string      `json:"socket"`
	MPL    int         `json:"mpl"`
	Jobs   []JobStatus `json:"jobs"` // running (or held) first, then queued in order
}

// JobStatus is one job of the daemon.
type JobStatus struct {
	ID        int           `json:"id"`
	Ranks     int           `json:"ranks"`
	Program   string        `json:"program"`
	Args      []string      `json:"args"`
	State     string        `json:"state"`   // "running", "held" (across hosts: a host late past the gang's hold) or "queued"
	Slices    uint64        `json:"slices"`  // the job's master's last slice (running)
	Elapsed   time.Duration `json:"elapsed"` // running: since it started; queued: since it arrived
	ClientPID int           `json:"client_pid"`
	Hosts     int           `json:"hosts,omitempty"` // a job across hosts whose master is here: its hosts
}

// writeFrame writes v as one frame, with files attached when there are any.
func writeFrame(c *net.UnixConn, v any, files ...*os.File) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if len(b) > FrameMax {
		return fmt.Errorf("gangd: a %d-byte message, over the %d-byte limit (is the environment that large?)", len(b), FrameMax)
	}
	buf := binary.BigEndian.AppendUint32(make([]byte, 0, 4+len(b)), uint32(len(b)))
	buf = append(buf, b...)
	if len(files) > 0 {
		return unix.SendFiles(c, buf, files)
	}
	_, err = c.Write(buf)
	return err
}

// readFrame reads one frame into v, and the descriptors that come with it
// (at most filesMax), which the caller owns. io.EOF means the peer closed
// the connection between frames. On any error no descriptor is left open.
func readFrame(c *net.UnixConn, v any) (files []*os.File, err error) {
	defer func() {
		if err != nil {
			closeFiles(files)
			files = nil
		}
	}()
	var hdr [4]byte
	got := 0
	for got < len(hdr) {
		n, fs, err := unix.RecvFiles(c, hdr[got:], filesMax)
		files = append(files, fs...)
		if len(files) > filesMax {
			return files, fmt.Errorf("gangd: %d descriptors with one message, want at most %d", len(files), filesMax)
		}
		got += n
		if err != nil {
			return files, err
		}
		if n == 0 {
			if got == 0 {
				return files, io.EOF
			}
			return files, io.ErrUnexpectedEOF
		}
	}
	size := binary.BigEndian.Uint32(hdr[:])
	if size > FrameMax {
		return files, fmt.Errorf("gangd: a message of %d bytes, want at most %d", size, FrameMax)
	}
	body := make([]byte, size)
	if _, err := io.ReadFull(c, body); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return files, err
	}
	return files, decode(body, v)
}

// decode is strict JSON: unknown fields and trailing data are errors.
func decode(b []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		return fmt.Errorf("gangd: a message that does not decode (%v): are bcsrun and bcsd from the same build? (bcsd stop; bcsd start)", err)
	}
	if d.More() {
		return fmt.Errorf("gangd: a message with trailing data")
	}
	return nil
}

func closeFiles(fs []*os.File) {
	for _, f := range fs {
		if f != nil {
			f.Close()
		}
	}
}
