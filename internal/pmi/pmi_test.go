package pmi

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// recConn records every Write call made on it.
type recConn struct {
	net.Conn
	mu     sync.Mutex
	writes [][]byte
}

func (c *recConn) Write(b []byte) (int, error) {
	c.mu.Lock()
	c.writes = append(c.writes, append([]byte(nil), b...))
	c.mu.Unlock()
	return c.Conn.Write(b)
}

func (c *recConn) Writes() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var s []string
	for _, w := range c.writes {
		s = append(s, string(w))
	}
	return s
}

func v2(body string) string { return fmt.Sprintf("%-6d", len(body)) + body }

// TestClientSpeaksSlurmBytes plays slurmstepd's side of a PMI-2 conversation
// from the exact bytes of NEXT.md §2.3 (Slurm's pmi2.c and client.c) and
// checks that every request is exactly the expected bytes, in one write.
func TestClientSpeaksSlurmBytes(t *testing.T) {
	script := []struct{ req, resp string }{
		{"cmd=init pmi_version=2 pmi_subversion=0\n", "cmd=response_to_init rc=0 pmi_version=2 pmi_subversion=0\n"},
		{"54    cmd=fullinit;pmijobid=1234.0;pmirank=3;threaded=FALSE;",
			v2("cmd=fullinit-response;rc=0;pmi-version=2;pmi-subversion=0;rank=3;size=8;appnum=-1;debugged=FALSE;pmiverbose=FALSE;")},
		{v2("cmd=job-getid;"), v2("cmd=job-getid-response;rc=0;jobid=1234.0;")},
		{v2("cmd=kvs-put;key=bcs.ep.3;value=10.0.0.3:4000;"), v2("cmd=kvs-put-response;rc=0;")},
		{v2("cmd=kvs-put;key=semi;value=a;;b;;;"), v2("cmd=kvs-put-response;rc=0;")},
		{v2("cmd=kvs-fence;"), v2("cmd=kvs-fence-response;rc=0;")},
		{v2("cmd=kvs-get;jobid=1234.0;srcid=-1;key=bcs.ep.0;"), v2("cmd=kvs-get-response;rc=0;found=TRUE;value=10.0.0.1:4000;")},
		{v2("cmd=kvs-get;jobid=1234.0;srcid=-1;key=none;"), v2("cmd=kvs-get-response;rc=0;found=FALSE;")},
		{v2("cmd=info-getjobattr;key=PMI_process_mapping;"), v2("cmd=info-getjobattr-response;rc=0;found=TRUE;value=(vector,(0,4,2));")},
		{v2("cmd=finalize;"), v2("cmd=finalize-response;rc=0;")},
	}
	cli, srv := net.Pipe()
	rc := &recConn{Conn: cli}
	done := make(chan error, 1)
	go func() {
		defer srv.Close()
		for i, s := range script {
			got := make([]byte, len(s.req))
			if _, err := io.ReadFull(srv, got); err != nil {
				done <- fmt.Errorf("step %d: reading request: %v", i, err)
				return
			}
			if string(got) != s.req {
				done <- fmt.Errorf("step %d: request %q, want %q", i, got, s.req)
				return
			}
			if _, err := srv.Write([]byte(s.resp)); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	c, err := NewClient(rc, V2, Identity{Rank: 3, ID: -1, JobID: "1234.0"})
	if err != nil {
		t.Fatal(err)
	}
	if c.Rank != 3 || c.Size != 8 || c.AppNum != -1 || c.JobID != "1234.0" {
		t.Fatalf("handshake gave rank %d size %d appnum %d jobid %q", c.Rank, c.Size, c.AppNum, c.JobID)
	}
	must(t, c.Put("bcs.ep.3", "10.0.0.3:4000"))
	must(t, c.Put("semi", "a;b;"))
	must(t, c.Fence())
	if v, ok, err := c.Get("bcs.ep.0"); err != nil || !ok || v != "10.0.0.1:4000" {
		t.Fatalf("Get = %q %v %v", v, ok, err)
	}
	if v, ok, err := c.Get("none"); err != nil || ok || v != "" {
		t.Fatalf("Get(missing) = %q %v %v", v, ok, err)
	}
	m, ok, err := c.JobAttr("PMI_process_mapping")
	if err != nil || !ok {
		t.Fatalf("JobAttr: %v %v", ok, err)
	}
	bl, err := ParseProcessMapping(m)
	if err != nil || !reflect.DeepEqual(NodeOf(bl, 8), []int{0, 0, 1, 1, 2, 2, 3, 3}) {
		t.Fatalf("mapping %q: %v %v", m, bl, err)
	}
	must(t, c.Finalize())
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	w := rc.Writes()
	if len(w) != len(script) {
		t.Fatalf("%d writes for %d requests: %q", len(w), len(script), w)
	}
	for i, s := range script {
		if w[i] != s.req {
			t.Errorf("write %d = %q, want one write of %q", i, w[i], s.req)
		}
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestServerAnswersLikeSlurm sends raw requests to a Server and compares the
// responses with Slurm's bytes.
func TestServerAnswersLikeSlurm(t *testing.T) {
	for _, tc := range []struct {
		name   string
		script [][2]string
	}{
		{"pmi2", [][2]string{
			{"cmd=init pmi_version=2 pmi_subversion=0\n", "cmd=response_to_init rc=0 pmi_version=2 pmi_subversion=0\n"},
			{v2("cmd=fullinit;pmijobid=77.1;pmirank=0;threaded=FALSE;"),
				v2("cmd=fullinit-response;rc=0;pmi-version=2;pmi-subversion=0;rank=0;size=1;appnum=-1;debugged=FALSE;pmiverbose=FALSE;")},
			{v2("cmd=job-getid;"), v2("cmd=job-getid-response;rc=0;jobid=77.1;")},
			{v2("cmd=kvs-put;key=k;value=v;;w;"), v2("cmd=kvs-put-response;rc=0;")},
			{v2("cmd=kvs-get;jobid=77.1;srcid=-1;key=k;"), v2("cmd=kvs-get-response;rc=0;found=FALSE;")},
			{v2("cmd=kvs-fence;"), v2("cmd=kvs-fence-response;rc=0;")},
			{v2("cmd=kvs-get;jobid=77.1;srcid=-1;key=k;"), v2("cmd=kvs-get-response;rc=0;found=TRUE;value=v;;w;")},
			{v2("cmd=info-getjobattr;key=PMI_process_mapping;"), v2("cmd=info-getjobattr-response;rc=0;found=TRUE;value=(vector,(0,1,1));")},
			{v2("cmd=info-putnodeattr;key=sock;value=@x;"), v2("cmd=info-putnodeattr-response;rc=0;")},
			{v2("cmd=info-getnodeattr;key=sock;wait=TRUE;"), v2("cmd=info-getnodeattr-response;rc=0;found=TRUE;value=@x;")},
			{v2("cmd=finalize;"), v2("cmd=finalize-response;rc=0;")},
		}},
		{"pmi1", [][2]string{
			{"cmd=init pmi_version=1 pmi_subversion=1\n", "cmd=response_to_init rc=0 pmi_version=1 pmi_subversion=1\n"},
			{"cmd=get_maxes\n", "cmd=maxes rc=0 kvsname_max=256 keylen_max=64 vallen_max=1024\n"},
			{"cmd=get_my_kvsname\n", "cmd=my_kvsname rc=0 kvsname=77.1\n"},
			{"cmd=get_universe_size\n", "cmd=universe_size rc=0 size=1\n"},
			{"cmd=get_appnum\n", "cmd=appnum rc=0 appnum=-1\n"},
			{"cmd=put kvsname=77.1 key=k value=v\n", "cmd=put_result rc=0\n"},
			{"cmd=barrier_in\n", "cmd=barrier_out rc=0\n"},
			{"cmd=get kvsname=77.1 key=k\n", "cmd=get_result rc=0 value=v\n"},
			{"cmd=get kvsname=77.1 key=nope\n", "cmd=get_result rc=1\n"},
			{"cmd=finalize\n", "cmd=finalize_ack rc=0\n"},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := NewServer(ServerConfig{Size: 1, JobID: "77.1", JobAttrs: map[string]string{"PMI_process_mapping": "(vector,(0,1,1))"}})
			must(t, err)
			cli, srv := net.Pipe()
			done := make(chan error, 1)
			go func() { done <- s.Serve(srv, -1) }()
			r := bufio.NewReader(cli)
			for i, st := range tc.script {
				if _, err := cli.Write([]byte(st[0])); err != nil {
					t.Fatalf("step %d: %v", i, err)
				}
				got := make([]byte, len(st[1]))
				if _, err := io.ReadFull(r, got); err != nil {
					t.Fatalf("step %d (%q): %v", i, st[0], err)
				}
				if string(got) != st[1] {
					t.Fatalf("step %d: %q answered %q, want %q", i, st[0], got, st[1])
				}
			}
			if err := <-done; err != nil {
				t.Fatalf("Serve: %v", err)
			}
			cli.Close()
		})
	}
}

// step runs n clients against one server, each in its own goroutine, and
// returns the first error of any.
func step(t *testing.T, n int, v Version, body func(c *Client) error) []error {
	t.Helper()
	s, err := NewServer(ServerConfig{Size: n, JobID: "5.0"})
	must(t, err)
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := 0; i < n; i++ {
		cli, srv := net.Pipe()
		wg.Add(2)
		go func() { defer wg.Done(); s.Serve(srv, i) }()
		go func() {
			defer wg.Done()
			c, err := NewClient(cli, v, Identity{Rank: i, ID: -1, JobID: "5.0"})
			if err != nil {
				errs[i] = err
				cli.Close()
				return
			}
			errs[i] = body(c)
			c.Close() // after Finalize, a no-op
		}()
	}
	wg.Wait()
	return errs
}

func TestPutFenceGetAcrossTasks(t *testing.T) {
	for _, v := range []Version{V2, V1} {
		t.Run("v"+strconv.Itoa(int(v)), func(t *testing.T) {
			const n = 5
			errs := step(t, n, v, func(c *Client) error {
				if c.Size != n {
					return fmt.Errorf("size %d, want %d", c.Size, n)
				}
				me := "ep." + strconv.Itoa(c.Rank)
				if err := c.Put(me, EncodeValue([]byte{0, ';', ' ', '=', byte(c.Rank)})); err != nil {
					return err
				}
				if _, ok, err := c.Get(me); err != nil || ok {
					return fmt.Errorf("own key visible before the fence: %v %v", ok, err)
				}
				if err := c.Fence(); err != nil {
					return err
				}
				for r := 0; r < n; r++ {
					v, ok, err := c.Get("ep." + strconv.Itoa(r))
					if err != nil || !ok {
						return fmt.Errorf("rank %d: Get(ep.%d) = %v %v", c.Rank, r, ok, err)
					}
					b, err := DecodeValue(v)
					if err != nil || !bytes.Equal(b, []byte{0, ';', ' ', '=', byte(r)}) {
						return fmt.Errorf("rank %d: ep.%d = %q (%v)", c.Rank, r, b, err)
					}
				}
				// A second round: a put replaces the value after the next fence.
				if c.Rank == 0 {
					if err := c.Put("ep.0", "again"); err != nil {
						return err
					}
				}
				if err := c.Fence(); err != nil {
					return err
				}
				if v, _, _ := c.Get("ep.0"); v != "again" {
					return fmt.Errorf("rank %d: ep.0 = %q after the second fence", c.Rank, v)
				}
				return c.Finalize()
			})
			for i, err := range errs {
				if err != nil {
					t.Errorf("task %d: %v", i, err)
				}
			}
		})
	}
}

func TestVersionIsFixedForTheStep(t *testing.T) {
	s, err := NewServer(ServerConfig{Size: 2, JobID: "5.0"})
	must(t, err)
	a, as := net.Pipe()
	b, bs := net.Pipe()
	go s.Serve(as, 0)
	go s.Serve(bs, 1)
	ca, err := NewClient(a, V2, Identity{Rank: 0, ID: -1, JobID: "5.0"})
	must(t, err)
	defer ca.Close()
	_, err = NewClient(b, V1, Identity{Rank: 1, ID: -1})
	if err == nil || !strings.Contains(err.Error(), "same version") {
		t.Fatalf("a PMI-1 task in a PMI-2 step: err = %v", err)
	}
}

// A task that vanishes before the fence makes the others' fence fail with
// its rank instead of waiting forever.
func TestVanishedTaskFailsTheFence(t *testing.T) {
	errs := step(t, 3, V2, func(c *Client) error {
		if c.Rank == 2 {
			return c.Close()
		}
		return c.Fence()
	})
	for r := 0; r < 2; r++ {
		if errs[r] == nil || !strings.Contains(errs[r].Error(), "task 2") {
			t.Errorf("task %d: fence error %v, want one naming task 2", r, errs[r])
		}
	}
}

func TestAbortReachesTheLauncher(t *testing.T) {
	var mu sync.Mutex
	var got []string
	s, err := NewServer(ServerConfig{Size: 2, JobID: "5.0", OnAbort: func(rank int, msg string) {
		mu.Lock()
		got = append(got, fmt.Sprintf("%d:%s", rank, msg))
		mu.Unlock()
	}})
	must(t, err)
	var wg sync.WaitGroup
	var fenceErr error
	for i := 0; i < 2; i++ {
		cli, srv := net.Pipe()
		wg.Add(2)
		go func() { defer wg.Done(); s.Serve(srv, i) }()
		go func() {
			defer wg.Done()
			c, err := NewClient(cli, V2, Identity{Rank: i, ID: -1, JobID: "5.0"})
			if err != nil {
				t.Error(err)
				return
			}
			if i == 1 {
				c.Abort(3, "rank 7: MPI_Abort(code 3)\nsecond line")
				return
			}
			fenceErr = c.Fence()
			c.Close()
		}()
	}
	wg.Wait()
	if len(got) != 1 || got[0] != "1:rank 7: MPI_Abort(code 3) second line" {
		t.Errorf("OnAbort saw %q", got)
	}
	if fenceErr == nil || !strings.Contains(fenceErr.Error(), "aborted") {
		t.Errorf("the other task's fence: %v, want an error saying the step was aborted", fenceErr)
	}
}

func TestLimitsAreCheckedBeforeWriting(t *testing.T) {
	errs := step(t, 1, V2, func(c *Client) error {
		defer c.Finalize()
		for _, tc := range []struct {
			k, v, want string
		}{
			{strings.Repeat("k", 65), "v", "want 1..64"},
			{"", "v", "want 1..64"},
			{"a;b", "v", "contains"},
			{"k", strings.Repeat("v", 1025), "at most 1024"},
			{"k", "two\nlines", "EncodeValue"},
		} {
			err := c.Put(tc.k, tc.v)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				return fmt.Errorf("Put(%.10q, %.10q) = %v, want an error containing %q", tc.k, tc.v, err, tc.want)
			}
		}
		// The conversation is intact after the refusals.
		if err := c.Put("k", strings.Repeat("v", 1024)); err != nil {
			return err
		}
		return c.Fence()
	})
	must(t, errs[0])
}

func TestOpenFromEnvironment(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	if _, err := openEnv(env(nil), V2); !errors.Is(err, ErrNoPMI) {
		t.Errorf("no launcher: %v, want ErrNoPMI", err)
	}
	_, err := openEnv(env(map[string]string{"PMIX_RANK": "0"}), V2)
	if !errors.Is(err, ErrPMIxOnly) || !strings.Contains(err.Error(), "--mpi=pmi2") || !strings.Contains(err.Error(), "PMIX_RANK") {
		t.Errorf("PMIx only: %v", err)
	}
	for _, m := range []map[string]string{
		{EnvFD: "x"}, {EnvFD: "3", EnvRank: "-1"}, {EnvPort: "h:1", EnvID: "z"},
	} {
		if _, err := openEnv(env(m), V2); err == nil || !strings.Contains(err.Error(), "PMI_") {
			t.Errorf("%v: %v, want an error naming the variable", m, err)
		}
	}

	// PMI_FD: one end of a socketpair, as slurmstepd passes it.
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	must(t, err)
	srvFile := os.NewFile(uintptr(fds[1]), "srv")
	srvConn, err := net.FileConn(srvFile)
	srvFile.Close()
	must(t, err)
	s, err := NewServer(ServerConfig{Size: 2, JobID: "9.0"})
	must(t, err)
	go s.Serve(srvConn, 1)
	c, err := openEnv(env(map[string]string{EnvFD: strconv.Itoa(fds[0]), EnvRank: "1", EnvJobID: "9.0"}), V2)
	syscall.Close(fds[0]) // openEnv dups it
	must(t, err)
	if c.Rank != 1 || c.Size != 2 || c.JobID != "9.0" {
		t.Errorf("PMI_FD client: rank %d size %d job %q", c.Rank, c.Size, c.JobID)
	}
	must(t, c.Finalize())

	// PMI_PORT with PMI_ID, as a Hydra-style launcher sets them.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	defer ln.Close()
	go func() {
		conn, err := ln.Accept()
		if err == nil {
			s.Serve(conn, -1)
		}
	}()
	c, err = openEnv(env(map[string]string{EnvPort: ln.Addr().String(), EnvID: "0"}), V2)
	must(t, err)
	if c.Rank != 0 || c.Size != 2 {
		t.Errorf("PMI_PORT client: rank %d size %d", c.Rank, c.Size)
	}
	must(t, c.Finalize())
}

// The client rejects a server's malformed bytes with ErrProtocol and
// allocates nothing for a length it claims.
func TestMalformedResponses(t *testing.T) {
	for _, resp := range []string{
		"abc   cmd=x;",
		"999999",
		"-5    ",
		"12    cmd=x",                      // closed mid-body
		"5     rc=0;",                      // no cmd
		v2("cmd=fullinit-response;rc"),     // field without '='
		v2("cmd=job-getid-response;rc=0;"), // wrong response name
	} {
		cli, srv := net.Pipe()
		go func() {
			r := bufio.NewReader(srv)
			readLine(r)
			srv.Write([]byte("cmd=response_to_init rc=0 pmi_version=2 pmi_subversion=0\n"))
			readV2(r)
			srv.Write([]byte(resp))
			srv.Close()
		}()
		_, err := NewClient(cli, V2, Identity{Rank: 0, ID: -1, JobID: "1.0"})
		if !errors.Is(err, ErrProtocol) {
			t.Errorf("response %q: err = %v, want ErrProtocol", resp, err)
		}
		cli.Close()
	}
}

func TestParseProcessMapping(t *testing.T) {
	for _, tc := range []struct {
		in    string
		size  int
		nodes []int
		err   string
	}{
		{"(vector,(0,3,2))", 6, []int{0, 0, 1, 1, 2, 2}, ""},
		{"(vector,(0,4,1))", 8, []int{0, 1, 2, 3, 0, 1, 2, 3}, ""},
		{"(vector, (0,2,2), (2,1,1))", 5, []int{0, 0, 1, 1, 2}, ""},
		{"(vector)", 0, nil, "empty vector"},
		{"vector,(0,1,1)", 0, nil, "not a vector"},
		{"(vector,(0,1))", 0, nil, "has 2 fields"},
		{"(vector,(0,0,1))", 0, nil, "not a number"},
		{"(vector,(0,x,1))", 0, nil, "not a number"},
		{"(vector,(0,1,1)", 0, nil, "unclosed entry"},
	} {
		bl, err := ParseProcessMapping(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: err = %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", tc.in, err)
			continue
		}
		if got := NodeOf(bl, tc.size); !reflect.DeepEqual(got, tc.nodes) {
			t.Errorf("%q: nodes %v, want %v", tc.in, got, tc.nodes)
		}
	}
}

// FuzzParseV2: any body parses or fails with ErrProtocol; what parses
// re-encodes to a body that parses to the same message.
func FuzzParseV2(f *testing.F) {
	for _, s := range []string{"cmd=x;", "cmd=kvs-put;key=k;value=a;;b;", "cmd=;", ";;;", "cmd=a;b=;;;;c=d"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		m, err := parseV2(body)
		if err != nil {
			if !errors.Is(err, ErrProtocol) {
				t.Fatalf("error %v is not ErrProtocol", err)
			}
			return
		}
		enc := encodeV2(m)
		m2, err := readV2(bytes.NewReader(enc))
		if err != nil {
			if len(enc)-6 > maxBody {
				return
			}
			t.Fatalf("re-encoded %q does not parse: %v", enc, err)
		}
		if !reflect.DeepEqual(m, m2) {
			t.Fatalf("%q -> %+v -> %q -> %+v", body, m, enc, m2)
		}
	})
}

// A task's puts are bounded, node attributes are checked like KVS values,
// and a refused put leaves the conversation intact.
func TestServerBoundsPuts(t *testing.T) {
	errs := step(t, 1, V2, func(c *Client) error {
		defer c.Finalize()
		for i := 0; i < MaxPuts; i++ {
			if err := c.Put("k"+strconv.Itoa(i), "v"); err != nil {
				return fmt.Errorf("put %d: %v", i, err)
			}
		}
		err := c.Put("one-too-many", "v")
		if err == nil || !strings.Contains(err.Error(), `"one-too-many"`) || !strings.Contains(err.Error(), strconv.Itoa(MaxPuts)) {
			return fmt.Errorf("put %d: %v, want a refusal naming the key and the bound", MaxPuts+1, err)
		}
		r, err := c.call("info-putnodeattr", "info-putnodeattr-response", "key", strings.Repeat("k", 65), "value", "v")
		if err == nil || !strings.Contains(err.Error(), "want 1..64") {
			return fmt.Errorf("node attribute with a 65-byte key: %v %v", r, err)
		}
		return c.Fence()
	})
	must(t, errs[0])
}
