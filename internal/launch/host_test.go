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
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/bcsmpi/bcsmpi/configs"
	"github.com/bcsmpi/bcsmpi/nicthread"
	"github.com/bcsmpi/bcsmpi/transport"
)

// TestSlurmArgsKeepSecretsOff: srun's command line names bcsd, the ranks
// and the program, one bcsd per host, and nothing of the job's secret.
func TestSlurmArgsKeepSecretsOff(t *testing.T) {
	a := SlurmArgs(3, 7, "/opt/bcs/bcsd", "/home/u/ring", []string{"-laps", "2"}, false, 1500*time.Millisecond, "pmi2")
	line := strings.Join(a, " ")
	for _, want := range []string{"--mpi=pmi2", "-N 3 -n 3", "--ntasks-per-node=1", "--kill-on-bad-exit=0", "--wait=2", "--input=0", "/opt/bcs/bcsd --ranks 7 -- /home/u/ring -laps 2"} {
		if !strings.Contains(line, want) {
			t.Errorf("srun %s: missing %q", line, want)
		}
	}
	if strings.Contains(line, "BCSD_") || slices.Contains(a, "--overlap") {
		t.Errorf("srun %s: secret variables or --overlap outside a step", line)
	}
	if a := SlurmArgs(1, 1, "b", "p", nil, true, 0, "none"); !slices.Contains(a, "--overlap") {
		t.Errorf("inside a step: %v, want --overlap", a)
	}
}

// TestRankEnvironDropsBcsdAndPMI: the ranks inherit neither the job's
// secret nor srun's PMI descriptor.
func TestRankEnvironDropsBcsdAndPMI(t *testing.T) {
	got := rankEnviron([]string{"PATH=/bin", VarSecret + "=00", VarConfig + "={}", "PMI_FD=5", "PMI_RANK=0", "SLURM_NODEID=1", "BCS_TIMESLICE=1ms"})
	want := []string{"PATH=/bin", "SLURM_NODEID=1", "BCS_TIMESLICE=1ms"}
	if !slices.Equal(got, want) {
		t.Errorf("rankEnviron = %q, want %q", got, want)
	}
}

func TestParseSecret(t *testing.T) {
	if b, err := ParseSecret("00112233445566778899aabbccddeeff"); err != nil || len(b) != 16 {
		t.Errorf("ParseSecret(16 bytes) = %x, %v", b, err)
	}
	for _, bad := range []string{"", "zz", "0011"} {
		if _, err := ParseSecret(bad); err == nil || !strings.Contains(err.Error(), VarSecret) {
			t.Errorf("ParseSecret(%q) = %v, want an error naming %s", bad, err, VarSecret)
		}
	}
}

func TestListenAddress(t *testing.T) {
	if ip, err := ListenAddress("10.1.2.3"); err != nil || ip != "10.1.2.3" {
		t.Errorf("ListenAddress(IP) = %q, %v", ip, err)
	}
	if ip, err := ListenAddress("lo"); err != nil || ip != "127.0.0.1" {
		t.Errorf("ListenAddress(lo) = %q, %v, want 127.0.0.1", ip, err)
	}
	if _, err := ListenAddress("nosuchif0"); err == nil || !strings.Contains(err.Error(), `"nosuchif0"`) || !strings.Contains(err.Error(), "auto") {
		t.Errorf("ListenAddress(nosuchif0) = %v, want an error naming it and the valid forms", err)
	}
	t.Setenv("SLURM_LAUNCH_NODE_IPADDR", "127.0.0.1")
	if ip, err := ListenAddress("auto"); err != nil || ip != "127.0.0.1" {
		t.Errorf("ListenAddress(auto) routing to 127.0.0.1 = %q, %v", ip, err)
	}
}

func TestParseHostfile(t *testing.T) {
	hosts, err := ParseHostfile(strings.NewReader("# cluster\nn1 slots=4\n\nn2   # spare\nn3 slots=1\n"), "hf")
	if err != nil || !slices.Equal(hosts, []string{"n1", "n2", "n3"}) {
		t.Errorf("ParseHostfile = %q, %v", hosts, err)
	}
	for in, want := range map[string]string{
		"n1 slots=0\n":       `hf:1: "n1 slots=0", want "host" or "host slots=N" with N >= 1`,
		"n1\nn2 cpus=2\n":    `hf:2: "n2 cpus=2"`,
		"n1\nn1\n":           "hf:2: host n1 is named twice",
		"# none\n":           "hf: no host",
		"-oProxyCommand=x\n": `hf:1: host "-oProxyCommand=x", want a name or address`,
		"n1\nn$(id)\n":       `hf:2: host "n$(id)"`,
	} {
		if _, err := ParseHostfile(strings.NewReader(in), "hf"); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseHostfile(%q) = %v, want an error containing %q", in, err, want)
		}
	}
	if h, err := ParseHosts("a,b"); err != nil || !slices.Equal(h, []string{"a", "b"}) {
		t.Errorf("ParseHosts(a,b) = %q, %v", h, err)
	}
}

// TestPMIPortAdmitsOnlyTheJobsBcsds: bcsrun's PMI port over ssh admits a
// connection only with the proof of the job's secret, once per node.
func TestPMIPortAdmitsOnlyTheJobsBcsds(t *testing.T) {
	a := &across{jobID: "j1", secret: []byte("0123456789abcdef")}
	claimed := make([]bool, 2)
	var mu sync.Mutex
	try := func(line string) (int, error) {
		c, s := net.Pipe()
		defer c.Close()
		defer s.Close()
		go io.WriteString(c, line)
		l, err := readLine(s, 200)
		if err != nil {
			return 0, err
		}
		return a.admit(l, claimed, &mu)
	}
	if _, err := try(pmiAuth([]byte("fedcba9876543210"), "j1", 1)); err == nil {
		t.Errorf("a wrong secret was admitted")
	}
	if _, err := try(pmiAuth(a.secret, "j2", 1)); err == nil {
		t.Errorf("another job's proof was admitted")
	}
	if _, err := try("bcsd 7 00\n"); err == nil {
		t.Errorf("node 7 of 2 was admitted")
	}
	if n, err := try(pmiAuth(a.secret, "j1", 1)); err != nil || n != 1 {
		t.Errorf("the right proof: node %d, %v", n, err)
	}
	if _, err := try(pmiAuth(a.secret, "j1", 1)); !errors.Is(err, errJobNode) || !strings.Contains(err.Error(), "node 1 claimed twice") {
		t.Errorf("node 1 admitted twice: %v, want errJobNode naming the node", err)
	}
}

// TestRemoveStaging: bcsd --cleanup removes the job's staging directories
// of every node, with what they hold, and nothing else: not another job's
// (one whose id starts with this one's), nor a file or a link of that name.
func TestRemoveStaging(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	mk := func(name string) string {
		p := filepath.Join(tmp, name)
		if err := os.MkdirAll(filepath.Join(p, "sub"), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(p, "mmds-rank0.csv.123.tmp"), []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	mine := []string{mk("bcs-mds-slurm6-ab12-node0-111"), mk("bcs-mds-slurm6-ab12-node2-222")}
	other := mk("bcs-mds-slurm6-ab123-node0-333")
	file := filepath.Join(tmp, "bcs-mds-slurm6-ab12-node3-444")
	os.WriteFile(file, nil, 0o600)
	link := filepath.Join(tmp, "bcs-mds-slurm6-ab12-node4-555")
	os.Symlink(other, link)
	// A live bcsd's (its lock held): kept.
	live, held, err := makeStaging("slurm6-ab12", 5)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()

	removed, err := RemoveStaging("slurm6-ab12")
	if err != nil || !slices.Equal(removed, mine) {
		t.Errorf("RemoveStaging = %q, %v; want %q", removed, err, mine)
	}
	for _, p := range mine {
		if _, err := os.Lstat(p); !os.IsNotExist(err) {
			t.Errorf("%s: still there (%v)", p, err)
		}
	}
	for _, p := range []string{other, file, link, filepath.Join(other, "sub"), live} {
		if _, err := os.Lstat(p); err != nil {
			t.Errorf("%s: removed, want it kept: %v", p, err)
		}
	}
	for _, bad := range []string{"", "a/b", "..", "x*", "a b"} {
		if _, err := RemoveStaging(bad); err == nil || !strings.Contains(err.Error(), "want letters") {
			t.Errorf("RemoveStaging(%q) = %v, want an error naming what is allowed", bad, err)
		}
	}
}

// TestSlurmCleanupArgs: one task per host named, no MPI plugin, and
// --overlap only inside a step.
func TestSlurmCleanupArgs(t *testing.T) {
	a := SlurmCleanupArgs([]string{"h2", "h3"}, "/opt/bcs/bcsd", "slurm6-ab12", false)
	line := strings.Join(a, " ")
	for _, want := range []string{"--mpi=none", "-N 2 -n 2", "--ntasks-per-node=1", "-w h2,h3", "--input=none", "/opt/bcs/bcsd --cleanup slurm6-ab12"} {
		if !strings.Contains(line, want) {
			t.Errorf("srun %s: missing %q", line, want)
		}
	}
	if slices.Contains(a, "--overlap") || !slices.Contains(SlurmCleanupArgs([]string{"h1"}, "b", "j", true), "--overlap") {
		t.Errorf("--overlap: want it inside a step only: %v", a)
	}
}

// TestSlurmMPI: slurm_mpi = auto is pmi2 where srun --mpi=list names it (in
// the formats of Slurm 23 and of older versions), none where it does not,
// and pmi2 where the listing fails; pmi2 and none are taken as they are.
func TestSlurmMPI(t *testing.T) {
	list := func(out string, err error) func() ([]byte, error) {
		return func() ([]byte, error) { return []byte(out), err }
	}
	slurm23 := "MPI plugin types are...\n\tpmix\n\tnone\n\tcray_shasta\n\tpmi2\nspecific pmix plugin versions available: pmix_v4\n"
	old := "srun: MPI types are...\nsrun: none\nsrun: pmi2\nsrun: openmpi\n"
	noPMI2 := "MPI plugin types are...\n\tnone\n\tcray_shasta\n\tpmix\nspecific pmix plugin versions available: pmix_v4\n"
	for _, c := range []struct {
		key, out string
		err      error
		want     string
	}{
		{"auto", slurm23, nil, "pmi2"},
		{"auto", old, nil, "pmi2"},
		{"auto", noPMI2, nil, "none"},
		{"auto", "", errors.New("exit status 1"), "pmi2"},
		{"none", slurm23, nil, "none"},
		{"pmi2", noPMI2, nil, "pmi2"},
	} {
		if got := slurmMPI(c.key, list(c.out, c.err)); got != c.want {
			t.Errorf("slurmMPI(%q) with %q, %v = %q, want %q", c.key, c.out, c.err, got, c.want)
		}
	}
}

// TestSweepStaging: a bcsd starting with the MDS removes every job's
// staging directory whose bcsd is gone (its lock free), and none that a
// live bcsd holds.
func TestSweepStaging(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	live, held, err := makeStaging("aa11", 0)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	dead, deadHeld, err := makeStaging("bb22", 3)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dead, "mmds-rank7.csv"), []byte("x"), 0o600)
	sweepStaging()
	for _, p := range []string{live, dead} {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("%s removed while its bcsd holds it: %v", p, err)
		}
	}
	deadHeld.Close() // its bcsd died
	sweepStaging()
	if _, err := os.Stat(dead); !os.IsNotExist(err) {
		t.Errorf("%s: still there after its holder closed it (%v)", dead, err)
	}
	if _, err := os.Stat(live); err != nil {
		t.Errorf("%s: removed while held: %v", live, err)
	}
}

// TestWholeJob: a deadlock or collective mismatch (a JobError of no node,
// reached by every host's replica of the schedule) is said by node 0's
// bcsd only; a node's own failure, and anything else, is not such a verdict.
func TestWholeJob(t *testing.T) {
	for _, c := range []struct {
		err  error
		want bool
	}{
		{&nicthread.JobError{Node: -1, Rank: -1, Why: "deadlock: ..."}, true},
		{&nicthread.JobError{Node: -1, Rank: 2, Why: "collective mismatch ..."}, true},
		{fmt.Errorf("agent: %w", &nicthread.JobError{Node: -1, Rank: -1}), true},
		{&nicthread.JobError{Node: 1, Rank: 3, Why: "MPI_Send: ..."}, false},
		{&nicthread.JobError{Node: 2, Rank: -1, Why: "stopped answering"}, false},
		{io.EOF, false},
	} {
		if got := wholeJob(c.err); got != c.want {
			t.Errorf("wholeJob(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}

// The master's keepalive options refused on some of its connections: one
// warning naming each node (endpoint k is node k-1), its host and the
// kernel's error, and how much later a cut-off host there is noticed;
// nothing when all were set.
func TestKeepAliveWarning(t *testing.T) {
	cfg := configs.Default()
	cfg.NodeTimeout, cfg.TXTimeout = 5*time.Second, 30*time.Second
	if w := keepAliveWarning("bcsd on ha", nil, []string{"ha", "hb"}, cfg); w != "" {
		t.Errorf("no failure, yet %q", w)
	}
	w := keepAliveWarning("bcsd on ha", []transport.KeepAliveError{{Endpoint: 2, Err: syscall.EINVAL}, {Endpoint: 3, Err: syscall.ENOPROTOOPT}},
		[]string{"ha", "hb", ""}, cfg)
	for _, want := range []string{"bcsd on ha: warning: ", "node 1 (host hb): invalid argument", "node 2: protocol not available",
		"node_timeout + tx_timeout (35s), not node_timeout (5s)", "the job goes on"} {
		if !strings.Contains(w, want) {
			t.Errorf("warning %q has no %q", w, want)
		}
	}
	if strings.Count(w, "\n") != 0 {
		t.Errorf("warning %q: want one line", w)
	}
}
