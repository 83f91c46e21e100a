package gangd

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bcsmpi/bcsmpi/configs"
	"github.com/bcsmpi/bcsmpi/internal/launch"
	"github.com/bcsmpi/bcsmpi/transport"
)

// A job across hosts asking for a place for its master: refused by a
// daemon without a gang, and for a bad request, naming why; a place holds
// a slot of the multiprogramming level (a second is refused, not queued,
// and the daemon's status lists the first across its hosts); a place whose
// bcsd goes before its start frees the slot. The whole conversation, with
// agents on namespace hosts, is cmd/bcsrun's TestGangAcrossHosts.
func TestPlace(t *testing.T) {
	cfg := configs.Default()
	cfg.Nodes = 2
	req := launch.GangRequest{Job: "j1", Ranks: 4, Hosts: 2, Program: "/bin/prog", Args: []string{"a"}, IP: "127.0.0.1", Secret: transport.NewSecret(), Config: cfg}
	place := func(d *Daemon, r launch.GangRequest) (launch.GangPlace, error) {
		t.Helper()
		c, err := Dial(filepath.Dir(d.Socket()))
		if err != nil {
			t.Fatal(err)
		}
		return c.Place(r)
	}
	wantRefusal := func(err error, want string) {
		t.Helper()
		var ee *ExitError
		if !errors.As(err, &ee) || !strings.Contains(ee.Msg, want) {
			t.Errorf("refusal %v, want one saying %q", err, want)
		}
	}

	plain, _ := startDaemon(t, 1, nil)
	_, err := place(plain, req)
	wantRefusal(err, "this daemon has no gang master")

	log := newLog()
	d, err := Start(Config{Dir: filepath.Join(t.TempDir(), "run"), MPL: 1, Log: log})
	if err != nil {
		t.Fatal(err)
	}
	g, err := launch.NewGang(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	d.Gang = g
	served := make(chan error, 1)
	go func() { served <- d.Serve() }()
	defer func() {
		d.Stop()
		if err := <-served; err != nil {
			t.Errorf("Serve: %v", err)
		}
	}()
	bad := req
	bad.Secret = []byte("short")
	_, err = place(d, bad)
	wantRefusal(err, "the job's secret is not at least 16 bytes of hex")
	bad = req
	bad.Hosts = 0
	_, err = place(d, bad)
	wantRefusal(err, "a job across 0 hosts, want 1 .. 4096")
	bad = req
	bad.Config.NodeTimeout = time.Hour
	_, err = place(d, bad)
	wantRefusal(err, "node_timeout = 1h0m0s, want 10ms .. 10m")
	bad = req
	bad.Config.TXTimeout = 0
	_, err = place(d, bad)
	wantRefusal(err, "tx_timeout = 0s, want 1ms .. 10m")

	p, err := place(d, req)
	if err != nil {
		t.Fatal(err)
	}
	if p.Addr() == "" || !strings.HasPrefix(p.Addr(), "127.0.0.1:") {
		t.Errorf("the place's endpoint %q, want one on 127.0.0.1", p.Addr())
	}
	st := d.Status()
	if len(st.Jobs) != 1 || st.Jobs[0].Hosts != 2 || st.Jobs[0].Ranks != 4 || st.Jobs[0].State != "running" {
		t.Errorf("status with a place: %+v", st.Jobs)
	}
	_, err = place(d, req)
	wantRefusal(err, "1 job running at multiprogramming level 1 (a job across hosts does not wait in the queue)")
	p.Close() // its bcsd gone before the start: the slot is free again
	log.waitFor("job 1: ended before its start")
	p2, err := place(d, req)
	if err != nil {
		t.Fatalf("a place after the first left: %v", err)
	}
	p2.Close()
}
