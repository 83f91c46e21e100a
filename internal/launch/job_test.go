package launch

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/bcsmpi/bcsmpi/configs"
	"github.com/bcsmpi/bcsmpi/internal/pmi"
	"github.com/bcsmpi/bcsmpi/internal/unix"
)

var errInjected = errors.New("injected failure")

// partialJob builds a job on this machine as Run does (3 ranks of spec's
// program on 2 logical nodes, so with loopback meshes; recorded; MDS and
// leak report on), with step failAt failing ("" for none), and closes it
// without watching it. It returns the parts acquired, in order, the parts
// Close released, in its order, and the creation's error.
func partialJob(t *testing.T, spec Job, failAt string) (acquired, released []string, err error) {
	t.Helper()
	failStep = func(name string) error {
		if name == failAt {
			return errInjected
		}
		return nil
	}
	onRelease = func(name string) { released = append(released, name) }
	defer func() { failStep, onRelease = nil, nil }()
	cfg, prog, err := checkJob(spec)
	if err != nil {
		t.Fatal(err)
	}
	j := newJob("bcsrun", "", cfg, spec.Ranks, NodeOf(spec.Ranks, cfg.Nodes, cfg.Cyclic(), cfg.PPN), io.Discard)
	lj, err := j.create(spec, prog, func() bool { return false })
	if err == nil {
		err = j.spawnRanks(lj.spawner(spec, prog, io.Discard, io.Discard), nil)
	}
	for _, p := range j.parts {
		acquired = append(acquired, p.name)
	}
	if cerr := j.Close(); cerr != nil {
		t.Errorf("fail at %q: Close: %v", failAt, cerr)
	}
	n := len(released)
	if cerr := j.Close(); cerr != nil || len(released) != n {
		t.Errorf("fail at %q: a second Close released %v (error %v), want nothing", failAt, released[n:], cerr)
	}
	return acquired, released, err
}

// held is what this process holds that a job could leave behind: its open
// descriptors (regions are memfd files, sockets, pipes), by number with
// what they point to, and its children.
type held struct {
	fds  map[string]string
	kids map[int]bool
}

func snapshot(t *testing.T) held {
	t.Helper()
	h := held{fds: map[string]string{}, kids: map[int]bool{}}
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if target, err := os.Readlink(filepath.Join("/proc/self/fd", e.Name())); err == nil {
			h.fds[e.Name()] = target
		}
	}
	kids, err := unix.Children()
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range kids {
		h.kids[k.PID] = true
	}
	return h
}

// leftSince lists what after holds and before did not: only what was
// acquired meanwhile counts, whatever else the process closed.
func (after held) leftSince(before held) []string {
	var left []string
	for fd, target := range after.fds {
		if before.fds[fd] != target {
			left = append(left, fmt.Sprintf("fd %s → %s", fd, target))
		}
	}
	for pid := range after.kids {
		if !before.kids[pid] {
			left = append(left, fmt.Sprintf("child process %d", pid))
		}
	}
	slices.Sort(left)
	return left
}

// TestCloseReleasesWhatEachStepMade fails each step of a job's creation in
// turn, the spawning of each rank included, and checks that Close releases
// exactly the parts acquired before it, in reverse, once, and that nothing
// the job made is left: no descriptor (region, socket, pipe), no child
// process (the ranks sleep: only Close ends them), no /dev/shm file.
func TestCloseReleasesWhatEachStepMade(t *testing.T) {
	dir := t.TempDir()
	cfg := configs.Default()
	cfg.Nodes = 2
	cfg.MDS = "main"
	cfg.MDSDir = filepath.Join(dir, "mds")
	spec := Job{Ranks: 3, Program: "sleep", Args: []string{"60"}, Config: cfg, Record: filepath.Join(dir, "rec")}

	// The whole creation, to learn its steps (and to warm up what the Go
	// runtime opens once, such as the network poller).
	all, released, err := partialJob(t, spec, "")
	if err != nil {
		t.Fatalf("no failure injected: %v", err)
	}
	want := []string{"reaper", "recording", "MDS", "region 0", "region 1", "leak pipe", "mesh", "master", "stall watch", "ranks"}
	if !slices.Equal(all, want) {
		t.Fatalf("parts %q, want %q", all, want)
	}
	if r := slices.Clone(released); !slices.Equal(r, reversed(all)) {
		t.Fatalf("released %q, want %q", r, reversed(all))
	}
	steps := append(slices.Clone(all), "rank 0", "rank 1", "rank 2")
	for i, step := range steps {
		os.RemoveAll(spec.Record) // a recording refuses an existing directory's files
		before := snapshot(t)
		acquired, released, err := partialJob(t, spec, step)
		if !errors.Is(err, errInjected) {
			t.Errorf("fail at %q: creation returned %v, want the injected failure", step, err)
		}
		wantAcq := all[:min(i, len(all))]
		if strings.HasPrefix(step, "rank ") {
			wantAcq = all // the ranks part is acquired before its first rank starts
		}
		if !slices.Equal(acquired, wantAcq) {
			t.Errorf("fail at %q: acquired %q, want %q", step, acquired, wantAcq)
		}
		if !slices.Equal(released, reversed(acquired)) {
			t.Errorf("fail at %q: released %q, want %q (the acquired parts, in reverse)", step, released, reversed(acquired))
		}
		if left := snapshot(t).leftSince(before); len(left) > 0 {
			t.Errorf("fail at %q: left behind:\n%s", step, strings.Join(left, "\n"))
		}
	}
	if shm, _ := filepath.Glob("/dev/shm/bcs-" + fmt.Sprint(os.Getpid()) + "-*"); len(shm) > 0 {
		t.Errorf("left in /dev/shm: %v", shm)
	}
}

// TestCloseEndsStartedRanks checks the ranks part alone: ranks that were
// started (and would sleep for a minute) are killed and reaped by Close,
// and the spawning thread is released.
func TestCloseEndsStartedRanks(t *testing.T) {
	cfg := configs.Default()
	cfg.LeakCheck = "off"
	spec := Job{Ranks: 2, Program: "sleep", Args: []string{"60"}, Config: cfg}
	before := snapshot(t)
	_, _, err := partialJob(t, spec, "rank 1")
	if !errors.Is(err, errInjected) {
		t.Fatalf("creation returned %v, want the injected failure", err)
	}
	if left := snapshot(t).leftSince(before); len(left) > 0 {
		t.Errorf("left behind:\n%s", strings.Join(left, "\n"))
	}
}

func reversed(s []string) []string {
	r := slices.Clone(s)
	slices.Reverse(r)
	return r
}

// TestHostCloseReleasesWhatEachStepMade is the test above for bcsd's path
// (RunHost, one host, over an in-process PMI server): a step that fails
// ends RunHost with its error, a rank that cannot start ends the job; each
// time the parts acquired are released in reverse and nothing is left.
func TestHostCloseReleasesWhatEachStepMade(t *testing.T) {
	cfg := configs.Default()
	cfg.Nodes, cfg.Address = 1, "127.0.0.1"
	want := []string{"reaper", "region 0", "mesh", "MDS", "master", "leak pipe", "ranks"}
	steps := append(slices.Clone(want), "rank 0", "rank 1")
	for i, step := range steps {
		before := snapshot(t)
		var acquired, released []string
		failStep = func(name string) error {
			if name == step {
				return errInjected
			}
			if !strings.HasPrefix(name, "rank ") {
				acquired = append(acquired, name)
			}
			return nil
		}
		onRelease = func(name string) { released = append(released, name) }
		srv, err := pmi.NewServer(pmi.ServerConfig{Size: 1, JobID: "1.0"})
		if err != nil {
			t.Fatal(err)
		}
		cs, ss := net.Pipe()
		served := make(chan error, 1)
		go func() { served <- srv.Serve(ss, 0) }()
		c, err := pmi.NewClient(cs, pmi.V2, pmi.Identity{Rank: 0, ID: -1, JobID: "1.0"})
		if err != nil {
			t.Fatal(err)
		}
		code, err := RunHost(HostJob{Ranks: 2, Program: "sleep", Args: []string{"60"}, Config: cfg, JobID: "test-host", Secret: make([]byte, 16),
			PMI: c, Stdout: io.Discard, Stderr: io.Discard, Signals: make(chan os.Signal)})
		failStep, onRelease = nil, nil
		srv.Close()
		<-served
		if strings.HasPrefix(step, "rank") { // the ranks part, or one rank: the job ends, watched
			if err != nil || code != 1 {
				t.Errorf("fail at %q: RunHost gave %d, %v; want exit status 1 (a rank that could not start ends the job)", step, code, err)
			}
		} else if !errors.Is(err, errInjected) {
			t.Errorf("fail at %q: RunHost gave %d, %v; want the injected failure", step, code, err)
		}
		wantAcq := want[:min(i, len(want))]
		if !slices.Equal(acquired, wantAcq) {
			t.Errorf("fail at %q: acquired %q, want %q", step, acquired, wantAcq)
		}
		if !slices.Equal(released, reversed(acquired)) {
			t.Errorf("fail at %q: released %q, want %q (the acquired parts, in reverse)", step, released, reversed(acquired))
		}
		if left := snapshot(t).leftSince(before); len(left) > 0 {
			t.Errorf("fail at %q: left behind:\n%s", step, strings.Join(left, "\n"))
		}
	}
}
