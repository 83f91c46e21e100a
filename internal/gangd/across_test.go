package gangd

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bcsmpi/bcsmpi/configs"
	"github.com/bcsmpi/bcsmpi/internal/core"
	"github.com/bcsmpi/bcsmpi/internal/launch"
	"github.com/bcsmpi/bcsmpi/internal/proto"
	"github.com/bcsmpi/bcsmpi/internal/shm"
	"github.com/bcsmpi/bcsmpi/nicthread"
	"github.com/bcsmpi/bcsmpi/transport"
	"github.com/bcsmpi/bcsmpi/transport/transporttest"
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

// A job across hosts whose host goes silent is held ("held" in the
// status), and asked to leave meanwhile (its bcsrun interrupted) it leaves
// at once as a stopped job, not at its node_timeout (ten minutes here):
// no error in its end, and its healthy host gets the stop.
func TestPlaceHeldJobLeavesAtOnce(t *testing.T) {
	cfg := configs.Default()
	cfg.Nodes = 2
	cfg.NodeTimeout = 10 * time.Minute
	req := launch.GangRequest{Job: "j1", Ranks: 2, Hosts: 2, Program: "/bin/prog", IP: "127.0.0.1", Secret: transport.NewSecret(), Config: cfg}
	d, err := Start(Config{Dir: filepath.Join(t.TempDir(), "run"), MPL: 2, Log: newLog()})
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
	c, err := Dial(filepath.Dir(d.Socket()))
	if err != nil {
		t.Fatal(err)
	}
	p, err := c.Place(req)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	// The job's two agents, node 1's link silent from slice 1.
	addrs := []string{p.Addr(), "", ""}
	meshes := make([]*transport.Mesh, 2)
	for i := range meshes {
		if meshes[i], err = transport.Listen("127.0.0.1:0", req.Secret); err != nil {
			t.Fatal(err)
		}
		addrs[i+1] = meshes[i].Addr()
	}
	geo := shm.Geometry{Ranks: 1, RingSlots: 8, ReqMax: 16, InlineMax: 64}
	agentErrs := make(chan error, 2)
	for i, m := range meshes {
		region, err := shm.Init(make([]byte, geo.Size()), geo)
		if err != nil {
			t.Fatal(err)
		}
		ep := nicthread.NewAgentEndpoint(nicthread.NewAgent(nicthread.AgentConfig{Node: proto.NodeID(i), NodeOf: []proto.NodeID{0, 1},
			Sched: core.DefaultSchedConfig, Region: region, DeadlockSlices: 100000}), m, time.Second)
		if i == 1 {
			ep.Link = transporttest.Stall(m, 1)
		}
		go func() {
			if err := m.Start(i+1, addrs, ep.Handler, ep.Direct()); err != nil {
				agentErrs <- err
				return
			}
			agentErrs <- ep.Serve()
		}()
	}
	defer func() {
		for _, m := range meshes {
			m.Close()
		}
	}()
	if err := p.Start(addrs, nil); err != nil {
		t.Fatal(err)
	}
	// Hang guards, not thresholds: the node_timeout is ten minutes.
	for end := time.Now().Add(time.Minute); d.Status().Jobs[0].State != "held"; time.Sleep(time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("the job is not held within a minute: %+v", d.Status().Jobs)
		}
	}
	var b strings.Builder
	FormatStatus(&b, d.Status())
	if !strings.Contains(b.String(), ": 0 running, 1 held (a host late: passed over by the gang), 0 queued") || !strings.Contains(b.String(), "held") {
		t.Errorf("the status of a held job:\n%s", b.String())
	}
	p.Stop()
	ended := make(chan error, 1)
	go func() { _, err := p.Wait(); ended <- err }()
	select {
	case err := <-ended:
		if err != nil {
			t.Fatalf("the held job's end: %v; want none (stopped)", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("the held job did not leave on its stop within a minute")
	}
	select {
	case err := <-agentErrs: // node 0: node 1 is silent until the teardown
		if err != nil {
			t.Fatalf("the healthy agent: %v; want its stop", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("the healthy agent did not get the stop within a minute")
	}
}
