package pmi

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
)

// ErrNoPMI is returned by Open when the process was not started by a PMI
// launcher (neither PMI_FD nor PMI_PORT is set).
var ErrNoPMI = errors.New("pmi: not started by a PMI launcher (neither PMI_FD nor PMI_PORT is set)")

// ErrPMIxOnly is matched by Open's error when the launcher offers PMIx only.
var ErrPMIxOnly = errors.New("pmi: the launcher offers PMIx only; bcsmpi speaks PMI-2: launch with srun --mpi=pmi2")

// Version selects the protocol.
type Version int

const (
	V2 Version = 2 // PMI-2 (the default; what bcsd speaks)
	V1 Version = 1 // PMI-1, for launchers that serve nothing else
)

// Client is one task's conversation with its PMI server. Not safe for
// concurrent use.
type Client struct {
	conn io.ReadWriteCloser
	r    *bufio.Reader
	v    Version

	// Filled in by the handshake.
	Rank   int    // this task's rank in the step
	Size   int    // tasks in the step
	AppNum int    // the application number (-1 under Slurm)
	JobID  string // the KVS name, "<jobid>.<stepid>" under Slurm

	closed bool
}

// Env names the variables Open reads.
const (
	EnvFD    = "PMI_FD"    // inherited descriptor of a connected stream socket (Slurm)
	EnvPort  = "PMI_PORT"  // host:port of the server (Hydra-style launchers)
	EnvID    = "PMI_ID"    // with PMI_PORT: the task's id for the server
	EnvRank  = "PMI_RANK"  // this task's rank
	EnvSize  = "PMI_SIZE"  // tasks in the step
	EnvJobID = "PMI_JOBID" // "<jobid>.<stepid>"
)

// Open connects to the launcher named by the environment and performs the
// handshake with protocol version v.
func Open(v Version) (*Client, error) { return openEnv(os.Getenv, v) }

func openEnv(getenv func(string) string, v Version) (*Client, error) {
	fdStr, port := getenv(EnvFD), getenv(EnvPort)
	if fdStr == "" && port == "" {
		for _, k := range []string{"PMIX_RANK", "PMIX_VERSION", "PRTE_LAUNCHED", "PMIX_NAMESPACE"} {
			if getenv(k) != "" {
				return nil, fmt.Errorf("%w (%s is set, PMI_FD and PMI_PORT are not)", ErrPMIxOnly, k)
			}
		}
		return nil, ErrNoPMI
	}
	rank := -1
	if s := getenv(EnvRank); s != "" {
		r, err := strconv.Atoi(s)
		if err != nil || r < 0 {
			return nil, fmt.Errorf("pmi: %s=%q is not a rank >= 0", EnvRank, s)
		}
		rank = r
	}
	id := -1
	if s := getenv(EnvID); s != "" {
		r, err := strconv.Atoi(s)
		if err != nil || r < 0 {
			return nil, fmt.Errorf("pmi: %s=%q is not an id >= 0", EnvID, s)
		}
		id = r
	}
	var conn io.ReadWriteCloser
	switch {
	case fdStr != "":
		fd, err := strconv.Atoi(fdStr)
		if err != nil || fd < 0 {
			return nil, fmt.Errorf("pmi: %s=%q is not a file descriptor", EnvFD, fdStr)
		}
		f := os.NewFile(uintptr(fd), "pmi")
		c, err := net.FileConn(f)
		f.Close() // FileConn dups it
		if err != nil {
			return nil, fmt.Errorf("pmi: %s=%d is not a connected socket: %w", EnvFD, fd, err)
		}
		conn = c
	default:
		c, err := net.Dial("tcp", port)
		if err != nil {
			return nil, fmt.Errorf("pmi: %s=%q: %w", EnvPort, port, err)
		}
		conn = c
	}
	c, err := NewClient(conn, v, Identity{Rank: rank, ID: id, JobID: getenv(EnvJobID)})
	if err != nil {
		conn.Close()
		return nil, err
	}
	return c, nil
}

// Identity is what a task tells the server about itself in the PMI-2
// fullinit: its rank (Slurm requires it, with the jobid) or, under a
// Hydra-style launcher, its PMI_ID. Negative values are omitted.
type Identity struct {
	Rank  int
	ID    int
	JobID string
}

// NewClient performs the handshake with a server on conn and returns the
// client, which owns conn from then on (Close closes it).
func NewClient(conn io.ReadWriteCloser, v Version, id Identity) (*Client, error) {
	if v != V1 && v != V2 {
		return nil, fmt.Errorf("pmi: version %d, want 1 or 2", v)
	}
	c := &Client{conn: conn, r: bufio.NewReader(conn), v: v, Rank: -1, AppNum: -1}
	init := newMessage("init", "pmi_version", strconv.Itoa(int(v)), "pmi_subversion", map[Version]string{V1: "1", V2: "0"}[v])
	if err := c.write(encodeV1(init)); err != nil {
		return nil, err
	}
	line, err := readLine(c.r)
	if err != nil {
		return nil, fmt.Errorf("pmi: init: %w", err)
	}
	resp, err := parseV1(line)
	if err != nil {
		return nil, err
	}
	if resp.cmd != "response_to_init" {
		return nil, protoErr("init answered with %s", quote(line))
	}
	if got, _ := resp.get("pmi_version"); got != strconv.Itoa(int(v)) {
		return nil, fmt.Errorf("pmi: asked for PMI-%d, the server answered pmi_version=%q (every task of a step must use the same version)", v, got)
	}
	if err := resp.rc(); err != nil {
		return nil, err
	}
	if v == V1 {
		return c, c.initV1(id)
	}
	return c, c.initV2(id)
}

func (c *Client) initV2(id Identity) error {
	var kv []string
	if id.JobID != "" {
		kv = append(kv, "pmijobid", id.JobID)
	}
	if id.Rank >= 0 {
		kv = append(kv, "pmirank", strconv.Itoa(id.Rank))
	}
	if id.ID >= 0 {
		kv = append(kv, "pmiid", strconv.Itoa(id.ID))
	}
	kv = append(kv, "threaded", "FALSE")
	r, err := c.call("fullinit", "fullinit-response", kv...)
	if err != nil {
		return err
	}
	if c.Rank, err = intField(r, "rank"); err != nil {
		return err
	}
	if c.Size, err = intField(r, "size"); err != nil {
		return err
	}
	if c.Rank < 0 || c.Rank >= c.Size {
		return protoErr("fullinit gave rank %d of size %d", c.Rank, c.Size)
	}
	if s, ok := r.get("appnum"); ok {
		if c.AppNum, err = strconv.Atoi(s); err != nil {
			return protoErr("appnum %q is not a number", s)
		}
	}
	r, err = c.call("job-getid", "job-getid-response")
	if err != nil {
		return err
	}
	c.JobID, _ = r.get("jobid")
	if c.JobID == "" {
		return protoErr("job-getid answered without a jobid")
	}
	return nil
}

func (c *Client) initV1(id Identity) error {
	// PMI-1 has no fullinit: the rank and size come from the environment
	// (Slurm) or from get_universe_size; the KVS name from get_my_kvsname.
	c.Rank = id.Rank
	r, err := c.call("get_universe_size", "universe_size")
	if err != nil {
		return err
	}
	if c.Size, err = intField(r, "size"); err != nil {
		return err
	}
	if c.Rank < 0 || c.Rank >= c.Size {
		return fmt.Errorf("pmi: PMI-1 needs %s in 0..%d, got %d", EnvRank, c.Size-1, c.Rank)
	}
	r, err = c.call("get_my_kvsname", "my_kvsname")
	if err != nil {
		return err
	}
	c.JobID, _ = r.get("kvsname")
	if c.JobID == "" {
		return protoErr("get_my_kvsname answered without a kvsname")
	}
	if r, err = c.call("get_appnum", "appnum"); err != nil {
		return err
	}
	if c.AppNum, err = intField(r, "appnum"); err != nil {
		return err
	}
	return nil
}

func intField(m message, k string) (int, error) {
	s, ok := m.get(k)
	if !ok {
		return 0, protoErr("%s has no %s", m.cmd, k)
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0, protoErr("%s=%q in %s is not a number", k, s, m.cmd)
	}
	return n, nil
}

// write sends one request with one write, as Slurm reads it with one read.
func (c *Client) write(b []byte) error {
	if c.closed {
		return errors.New("pmi: client is closed")
	}
	n, err := c.conn.Write(b)
	if err == nil && n != len(b) {
		err = io.ErrShortWrite
	}
	if err != nil {
		return fmt.Errorf("pmi: write %s: %w", quote(b), err)
	}
	return nil
}

func (c *Client) read() (message, error) {
	if c.v == V2 {
		return readV2(c.r)
	}
	line, err := readLine(c.r)
	if err != nil {
		return message{}, err
	}
	return parseV1(line)
}

// call sends one command and reads its response, which must be named want.
func (c *Client) call(cmd, want string, kv ...string) (message, error) {
	m := newMessage(cmd, kv...)
	b := encodeV1(m)
	if c.v == V2 {
		b = encodeV2(m)
	}
	if err := c.write(b); err != nil {
		return message{}, err
	}
	r, err := c.read()
	if err != nil {
		if errors.Is(err, io.EOF) {
			return message{}, fmt.Errorf("pmi: the server closed the connection instead of answering %s", cmd)
		}
		return message{}, fmt.Errorf("pmi: %s: %w", cmd, err)
	}
	if r.cmd != want {
		return message{}, protoErr("%s answered with %s, want %s", cmd, r.cmd, want)
	}
	return r, r.rc()
}

// Version returns the protocol in use.
func (c *Client) Version() Version { return c.v }

// Put stores key=value in the KVS; the other tasks see it after the next
// Fence.
func (c *Client) Put(key, value string) error {
	if err := checkKV(c.v == V1, key, value); err != nil {
		return err
	}
	if c.v == V1 {
		_, err := c.call("put", "put_result", "kvsname", c.JobID, "key", key, "value", value)
		return err
	}
	_, err := c.call("kvs-put", "kvs-put-response", "key", key, "value", value)
	return err
}

// Fence returns when every task of the step has entered it; puts made
// before it are then visible to all.
func (c *Client) Fence() error {
	if c.v == V1 {
		_, err := c.call("barrier_in", "barrier_out")
		return err
	}
	_, err := c.call("kvs-fence", "kvs-fence-response")
	return err
}

// Get reads key from the KVS; found is false when no task put it before the
// last fence.
func (c *Client) Get(key string) (value string, found bool, err error) {
	if err := checkKV(c.v == V1, key, ""); err != nil {
		return "", false, err
	}
	if c.v == V1 {
		r, err := c.call("get", "get_result", "kvsname", c.JobID, "key", key)
		if err != nil {
			// PMI-1 says "not found" as rc=1 (Slurm: "cmd=get_result rc=1").
			if rc, _ := r.get("rc"); rc == "1" {
				return "", false, nil
			}
			return "", false, err
		}
		v, ok := r.get("value")
		return v, ok, nil
	}
	r, err := c.call("kvs-get", "kvs-get-response", "jobid", c.JobID, "srcid", "-1", "key", key)
	if err != nil {
		return "", false, err
	}
	return foundValue(r)
}

func foundValue(r message) (string, bool, error) {
	f, _ := r.get("found")
	switch f {
	case "TRUE":
		v, _ := r.get("value")
		return v, true, nil
	case "FALSE":
		return "", false, nil
	}
	return "", false, protoErr("%s has found=%q, want TRUE or FALSE", r.cmd, f)
}

// JobAttr reads a job attribute (PMI-2 only), for example
// "PMI_process_mapping" (see ParseProcessMapping).
func (c *Client) JobAttr(key string) (string, bool, error) {
	if c.v != V2 {
		return "", false, fmt.Errorf("pmi: job attribute %q needs PMI-2 (this client speaks PMI-%d)", key, c.v)
	}
	if err := checkKV(false, key, ""); err != nil {
		return "", false, err
	}
	r, err := c.call("info-getjobattr", "info-getjobattr-response", "key", key)
	if err != nil {
		return "", false, err
	}
	return foundValue(r)
}

// Abort asks the launcher to kill the whole step; the server does not
// answer, and the client is closed.
func (c *Client) Abort(code int, msg string) error {
	msg = strings.Map(func(r rune) rune {
		if r == '\n' {
			return ' '
		}
		return r
	}, msg)
	if len(msg) > MaxValLen {
		msg = msg[:MaxValLen]
	}
	var b []byte
	if c.v == V1 {
		// PMI-1 values cannot hold spaces; Slurm ignores the message anyway.
		b = encodeV1(newMessage("abort", "exitcode", strconv.Itoa(code)))
	} else {
		b = encodeV2(newMessage("abort", "isworld", "TRUE", "msg", msg))
	}
	err := c.write(b)
	c.close()
	return err
}

// Finalize ends the conversation politely and closes the client.
func (c *Client) Finalize() error {
	if c.closed {
		return nil
	}
	var err error
	if c.v == V1 {
		_, err = c.call("finalize", "finalize_ack")
	} else {
		_, err = c.call("finalize", "finalize-response")
	}
	c.close()
	return err
}

// Close closes the connection without finalizing (the server sees the task
// vanish). Safe to call more than once.
func (c *Client) Close() error { return c.close() }

func (c *Client) close() error {
	if c.closed {
		return nil
	}
	c.closed = true
	return c.conn.Close()
}
