package pmi

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
)

// Server serves the tasks of one step the way Slurm's mpi/pmi2 plugin does:
// the same responses, byte for byte, for the commands a bcsmpi task uses
// (init, fullinit, job-getid, kvs-put/fence/get, info-getjobattr,
// info-putnodeattr/getnodeattr, abort, finalize; and PMI-1's get_maxes,
// get_my_kvsname, get_universe_size, get_appnum, put, barrier_in, get).
// Safe for concurrent use: one Serve call per task connection.
type Server struct {
	size    int
	jobID   string
	attrs   map[string]string
	onAbort func(rank int, msg string)

	mu        sync.Mutex
	cond      *sync.Cond
	version   Version
	kvs       map[string]string // visible: put before a completed fence
	pending   map[string]string // put since the last fence
	nodeAttrs map[string]string
	fenced    int    // tasks waiting in the current fence
	fenceGen  uint64 // completed fences
	failed    error  // set when a task vanished or Close was called
}

// ServerConfig describes the step a Server serves.
type ServerConfig struct {
	Size  int    // tasks in the step, >= 1
	JobID string // the KVS name, e.g. "1234.0"; non-empty, no ';', space or newline
	// JobAttrs answer info-getjobattr (e.g. "PMI_process_mapping").
	JobAttrs map[string]string
	// OnAbort, if set, is called when a task sends abort (rank -1 when the
	// task never said its rank).
	OnAbort func(rank int, msg string)
}

// NewServer returns a server for cfg.
func NewServer(cfg ServerConfig) (*Server, error) {
	if cfg.Size < 1 {
		return nil, fmt.Errorf("pmi: server size %d, want >= 1", cfg.Size)
	}
	if cfg.JobID == "" {
		return nil, errors.New("pmi: server needs a job id (e.g. \"1234.0\")")
	}
	if err := checkKV(true, "jobid", cfg.JobID); err != nil {
		return nil, fmt.Errorf("pmi: job id %q: %w", cfg.JobID, err)
	}
	s := &Server{
		size: cfg.Size, jobID: cfg.JobID, attrs: cfg.JobAttrs, onAbort: cfg.OnAbort,
		kvs: map[string]string{}, pending: map[string]string{}, nodeAttrs: map[string]string{},
	}
	s.cond = sync.NewCond(&s.mu)
	return s, nil
}

// Close fails every fence and node-attribute wait in progress and every
// later one; Serve calls return once their connections close.
func (s *Server) Close() {
	s.fail(errors.New("pmi: server closed"))
}

func (s *Server) fail(err error) {
	s.mu.Lock()
	if s.failed == nil {
		s.failed = err
	}
	s.mu.Unlock()
	s.cond.Broadcast()
}

// task is the state of one connection.
type task struct {
	s         *Server
	conn      io.ReadWriteCloser
	r         *bufio.Reader
	v         Version
	rank      int
	finalized bool
	puts      int // puts made, bounded by MaxPuts
}

// Serve answers one task on conn until it finalizes, aborts or closes the
// connection, and closes conn. rank is the task's rank when the launcher
// knows it (it made the connection for that task), or -1 to take it from
// the task's fullinit. A task that closes its connection without finalize
// fails the step's fences: the tasks waiting there get rc=-1 instead of
// waiting forever.
func (s *Server) Serve(conn io.ReadWriteCloser, rank int) (err error) {
	t := &task{s: s, conn: conn, r: bufio.NewReader(conn), rank: rank}
	defer func() {
		conn.Close()
		if !t.finalized {
			why := err
			if why == nil || errors.Is(why, io.EOF) {
				why = errors.New("closed its connection without finalize")
			}
			s.fail(fmt.Errorf("pmi: task %d: %w", t.rank, why))
		}
		if errors.Is(err, io.EOF) {
			err = nil
		}
	}()
	if err := t.init(); err != nil {
		return err
	}
	for !t.finalized {
		m, err := t.read()
		if err != nil {
			return err
		}
		if done, err := t.handle(m); err != nil || done {
			return err
		}
	}
	return nil
}

func (t *task) init() error {
	line, err := readLine(t.r)
	if err != nil {
		return err
	}
	m, err := parseV1(line)
	if err != nil {
		return err
	}
	if m.cmd != "init" {
		return protoErr("first message %s is not cmd=init", quote(line))
	}
	v, _ := m.get("pmi_version")
	switch v {
	case "1":
		t.v = V1
	case "2":
		t.v = V2
	default:
		t.send(newMessage("response_to_init", "rc", "-1", "pmi_version", v, "pmi_subversion", "0"))
		return protoErr("init asks for pmi_version=%q, want 1 or 2", v)
	}
	s := t.s
	s.mu.Lock()
	if s.version == 0 {
		s.version = t.v
	}
	stepV := s.version
	s.mu.Unlock()
	if stepV != t.v {
		// The version is fixed for the whole step by the first init, as in
		// Slurm's set_pmi_version.
		t.send1(newMessage("response_to_init", "rc", "-1", "pmi_version", strconv.Itoa(int(stepV)), "pmi_subversion", sub(stepV)))
		return fmt.Errorf("pmi: task asked for PMI-%d in a PMI-%d step", t.v, stepV)
	}
	return t.send1(newMessage("response_to_init", "rc", "0", "pmi_version", strconv.Itoa(int(t.v)), "pmi_subversion", sub(t.v)))
}

func sub(v Version) string {
	if v == V1 {
		return "1"
	}
	return "0"
}

func (t *task) read() (message, error) {
	if t.v == V2 {
		return readV2(t.r)
	}
	line, err := readLine(t.r)
	if err != nil {
		return message{}, err
	}
	return parseV1(line)
}

// send1 writes a PMI-1 line (init's response, in either version).
func (t *task) send1(m message) error {
	_, err := t.conn.Write(encodeV1(m))
	return err
}

func (t *task) send(m message) error {
	if t.v == V2 {
		_, err := t.conn.Write(encodeV2(m))
		return err
	}
	return t.send1(m)
}

// handle answers one request; done is true when the conversation is over.
func (t *task) handle(m message) (done bool, err error) {
	s := t.s
	if t.v == V1 {
		return t.handle1(m)
	}
	switch m.cmd {
	case "fullinit":
		jobid, okJ := m.get("pmijobid")
		rankS, okR := m.get("pmirank")
		idS, okI := m.get("pmiid")
		_, okT := m.get("threaded")
		if !okT || (!okI && (!okJ || !okR)) {
			// Slurm: "pmijobid, pmirank or threaded missing in fullinit command".
			t.send(newMessage("fullinit-response", "rc", "-1", "errmsg", "pmijobid, pmirank or threaded missing in fullinit command"))
			return true, protoErr("fullinit without pmijobid, pmirank or threaded")
		}
		if okJ && jobid != s.jobID {
			t.send(newMessage("fullinit-response", "rc", "-1", "errmsg", "wrong pmijobid"))
			return true, fmt.Errorf("pmi: fullinit for job %q, this step is %q", jobid, s.jobID)
		}
		r := rankS
		if !okR {
			r = idS
		}
		rank, err := strconv.Atoi(r)
		if err != nil || rank < 0 || rank >= s.size || (t.rank >= 0 && rank != t.rank) {
			t.send(newMessage("fullinit-response", "rc", "-1", "errmsg", "invalid pmirank"))
			return true, fmt.Errorf("pmi: fullinit with rank %q; want 0..%d (and %d for this connection)", r, s.size-1, t.rank)
		}
		t.rank = rank
		return false, t.send(newMessage("fullinit-response", "rc", "0", "pmi-version", "2", "pmi-subversion", "0",
			"rank", strconv.Itoa(rank), "size", strconv.Itoa(s.size), "appnum", "-1", "debugged", "FALSE", "pmiverbose", "FALSE"))
	case "job-getid":
		return false, t.send(newMessage("job-getid-response", "rc", "0", "jobid", s.jobID))
	case "kvs-put":
		k, _ := m.get("key")
		v, _ := m.get("value")
		if err := t.admitPut(false, k, v); err != nil {
			return false, t.send(newMessage("kvs-put-response", "rc", "-1", "errmsg", err.Error()))
		}
		s.put(k, v)
		return false, t.send(newMessage("kvs-put-response", "rc", "0"))
	case "kvs-fence":
		if err := s.fence(); err != nil {
			return false, t.send(newMessage("kvs-fence-response", "rc", "-1", "errmsg", err.Error()))
		}
		return false, t.send(newMessage("kvs-fence-response", "rc", "0"))
	case "kvs-get":
		k, _ := m.get("key")
		v, ok := s.get(k)
		if !ok {
			return false, t.send(newMessage("kvs-get-response", "rc", "0", "found", "FALSE"))
		}
		return false, t.send(newMessage("kvs-get-response", "rc", "0", "found", "TRUE", "value", v))
	case "info-getjobattr":
		k, _ := m.get("key")
		v, ok := s.attrs[k]
		if !ok {
			return false, t.send(newMessage("info-getjobattr-response", "rc", "0", "found", "FALSE"))
		}
		return false, t.send(newMessage("info-getjobattr-response", "rc", "0", "found", "TRUE", "value", v))
	case "info-putnodeattr":
		k, _ := m.get("key")
		v, _ := m.get("value")
		if err := t.admitPut(false, k, v); err != nil {
			return false, t.send(newMessage("info-putnodeattr-response", "rc", "-1", "errmsg", err.Error()))
		}
		s.mu.Lock()
		s.nodeAttrs[k] = v
		s.mu.Unlock()
		s.cond.Broadcast()
		return false, t.send(newMessage("info-putnodeattr-response", "rc", "0"))
	case "info-getnodeattr":
		k, _ := m.get("key")
		w, _ := m.get("wait")
		v, ok, err := s.nodeAttr(k, w == "TRUE")
		if err != nil {
			return false, t.send(newMessage("info-getnodeattr-response", "rc", "-1", "errmsg", err.Error()))
		}
		if !ok {
			return false, t.send(newMessage("info-getnodeattr-response", "rc", "0", "found", "FALSE"))
		}
		return false, t.send(newMessage("info-getnodeattr-response", "rc", "0", "found", "TRUE", "value", v))
	case "abort":
		msg, _ := m.get("msg")
		t.finalized = true // an abort is an orderly end of this task's conversation
		if s.onAbort != nil {
			s.onAbort(t.rank, msg)
		}
		s.fail(fmt.Errorf("pmi: task %d aborted the step: %s", t.rank, msg))
		return true, nil
	case "finalize":
		t.finalized = true
		return true, t.send(newMessage("finalize-response", "rc", "0"))
	}
	return false, t.send(newMessage(m.cmd+"-response", "rc", "-1", "errmsg", "unknown command"))
}

func (t *task) handle1(m message) (done bool, err error) {
	s := t.s
	switch m.cmd {
	case "get_maxes":
		return false, t.send(newMessage("maxes", "rc", "0", "kvsname_max", "256", "keylen_max", "64", "vallen_max", "1024"))
	case "get_my_kvsname":
		return false, t.send(newMessage("my_kvsname", "rc", "0", "kvsname", s.jobID))
	case "get_universe_size":
		return false, t.send(newMessage("universe_size", "rc", "0", "size", strconv.Itoa(s.size)))
	case "get_appnum":
		return false, t.send(newMessage("appnum", "rc", "0", "appnum", "-1"))
	case "put":
		k, _ := m.get("key")
		v, _ := m.get("value")
		if err := t.admitPut(true, k, v); err != nil {
			return false, t.send(newMessage("put_result", "rc", "-1", "msg", "invalid_key_or_value"))
		}
		s.put(k, v)
		return false, t.send(newMessage("put_result", "rc", "0"))
	case "barrier_in":
		if err := s.fence(); err != nil {
			return false, t.send(newMessage("barrier_out", "rc", "-1"))
		}
		return false, t.send(newMessage("barrier_out", "rc", "0"))
	case "get":
		k, _ := m.get("key")
		v, ok := s.get(k)
		if !ok {
			return false, t.send(newMessage("get_result", "rc", "1"))
		}
		return false, t.send(newMessage("get_result", "rc", "0", "value", v))
	case "abort":
		t.finalized = true
		code, _ := m.get("exitcode")
		if s.onAbort != nil {
			s.onAbort(t.rank, "exitcode "+code)
		}
		s.fail(fmt.Errorf("pmi: task %d aborted the step (exit code %s)", t.rank, code))
		return true, nil
	case "finalize":
		t.finalized = true
		return true, t.send(newMessage("finalize_ack", "rc", "0"))
	}
	return false, t.send(newMessage(m.cmd+"_result", "rc", "-1", "msg", "unknown_command"))
}

// MaxPuts bounds the puts (KVS and node attributes) one task may make, so
// that a task cannot grow the server without bound.
const MaxPuts = 4096

// admitPut checks a put's key and value and the task's count of puts.
func (t *task) admitPut(v1 bool, k, v string) error {
	if err := checkKV(v1, k, v); err != nil {
		return err
	}
	if t.puts >= MaxPuts {
		return fmt.Errorf("pmi: task %d: put of key %q refused: a task may make at most %d puts", t.rank, k, MaxPuts)
	}
	t.puts++
	return nil
}

func (s *Server) put(k, v string) {
	s.mu.Lock()
	s.pending[k] = v
	s.mu.Unlock()
}

func (s *Server) get(k string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.kvs[k]
	return v, ok
}

// fence waits until every task of the step has entered the current fence,
// then makes every put made before it visible.
func (s *Server) fence() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failed != nil {
		return s.failed
	}
	gen := s.fenceGen
	s.fenced++
	if s.fenced == s.size {
		for k, v := range s.pending {
			s.kvs[k] = v
		}
		clear(s.pending)
		s.fenced = 0
		s.fenceGen++
		s.cond.Broadcast()
		return nil
	}
	for s.fenceGen == gen && s.failed == nil {
		s.cond.Wait()
	}
	if s.fenceGen == gen {
		return s.failed
	}
	return nil
}

func (s *Server) nodeAttr(k string, wait bool) (string, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for {
		if v, ok := s.nodeAttrs[k]; ok {
			return v, true, nil
		}
		if !wait {
			return "", false, nil
		}
		if s.failed != nil {
			return "", false, s.failed
		}
		s.cond.Wait()
	}
}
