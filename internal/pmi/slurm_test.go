package pmi

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bcsmpi/bcsmpi/internal/slurmtest"
)

// The test binary doubles as the task srun starts on the cluster's hosts.
const envTask = "BCS_PMI_TEST_TASK"

func TestMain(m *testing.M) {
	if mode := os.Getenv(envTask); mode != "" {
		if err := slurmTask(mode); err != nil {
			fmt.Fprintf(os.Stderr, "task: %v\n", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// slurmTask is what every task of the step does: publish its host address,
// fence, read everyone's, and print one line
// "rank R size S node N mapnode M eps A,B,...".
func slurmTask(mode string) error {
	v := V2
	if mode == "v1" {
		v = V1
	}
	c, err := Open(v)
	if mode == "nopmi" {
		if !errors.Is(err, ErrNoPMI) {
			return fmt.Errorf("Open without PMI: %v, want ErrNoPMI", err)
		}
		fmt.Println("no pmi")
		return nil
	}
	if err != nil {
		return err
	}
	addr := "?"
	if ifs, err := net.InterfaceAddrs(); err == nil {
		for _, a := range ifs {
			if ip, ok := a.(*net.IPNet); ok && !ip.IP.IsLoopback() && ip.IP.To4() != nil {
				addr = ip.IP.String()
			}
		}
	}
	if mode == "abort" && c.Rank == 1 {
		return c.Abort(7, "rank 1 gives up")
	}
	if err := c.Put("ep."+strconv.Itoa(c.Rank), addr); err != nil {
		return err
	}
	if err := c.Fence(); err != nil {
		return err
	}
	eps := make([]string, c.Size)
	for r := range eps {
		v, ok, err := c.Get("ep." + strconv.Itoa(r))
		if err != nil || !ok {
			return fmt.Errorf("rank %d: Get(ep.%d): found %v, %v", c.Rank, r, ok, err)
		}
		eps[r] = v
	}
	mapNode := -1
	if v == V2 {
		m, ok, err := c.JobAttr("PMI_process_mapping")
		if err != nil || !ok {
			return fmt.Errorf("PMI_process_mapping: found %v, %v", ok, err)
		}
		bl, err := ParseProcessMapping(m)
		if err != nil {
			return err
		}
		mapNode = NodeOf(bl, c.Size)[c.Rank]
	}
	fmt.Printf("rank %d size %d node %s mapnode %d eps %s\n", c.Rank, c.Size, os.Getenv("SLURM_NODEID"), mapNode, strings.Join(eps, ","))
	return c.Finalize()
}

// TestAgainstRealSlurm runs the client under srun --mpi=pmi2 on a real
// Slurm of three namespace hosts: six tasks put, fence and get in PMI-2 and
// PMI-1; the process mapping agrees with SLURM_NODEID; an abort ends the
// step with an error instead of a hang; and srun --mpi=none is ErrNoPMI.
func TestAgainstRealSlurm(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a Slurm cluster")
	}
	cl := slurmtest.Start(t, 3, 2)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	run := func(mode string, args ...string) (string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		defer cancel()
		cmd := cl.CommandContext(ctx, "srun", append(args, "--export=ALL,"+envTask+"="+mode, exe)...)
		var stderr strings.Builder
		cmd.Stderr = &stderr // srun's own notes ("job 2 queued ...") stay out of the tasks' lines
		out, err := cmd.Output()
		if ctx.Err() != nil {
			t.Fatalf("srun %s did not end in 90 s:\n%s%s\n%s", mode, out, stderr.String(), cl.Logs())
		}
		if err != nil {
			err = fmt.Errorf("%w: %s", err, stderr.String())
		}
		return string(out), err
	}
	for _, mode := range []string{"v2", "v1"} {
		out, err := run(mode, "--mpi=pmi2", "-N3", "-n6")
		if err != nil {
			t.Fatalf("%s: srun: %v\n%s", mode, err, out)
		}
		lines := strings.Split(strings.TrimSpace(out), "\n")
		sort.Strings(lines)
		if len(lines) != 6 {
			t.Fatalf("%s: %d lines, want 6:\n%s", mode, len(lines), out)
		}
		var eps string
		for _, l := range lines {
			var rank, size, mapNode int
			var node, e string
			if _, err := fmt.Sscanf(l, "rank %d size %d node %s mapnode %d eps %s", &rank, &size, &node, &mapNode, &e); err != nil {
				t.Fatalf("%s: line %q: %v", mode, l, err)
			}
			if size != 6 {
				t.Errorf("%s: %q: size %d, want 6", mode, l, size)
			}
			if mode == "v2" && strconv.Itoa(mapNode) != node {
				t.Errorf("%s: %q: PMI_process_mapping puts the rank on node %d, SLURM_NODEID says %s", mode, l, mapNode, node)
			}
			if eps == "" {
				eps = e
			} else if e != eps {
				t.Errorf("%s: tasks disagree on the endpoints: %q vs %q", mode, e, eps)
			}
		}
		seen := map[string]bool{}
		for _, a := range strings.Split(eps, ",") {
			seen[a] = true
		}
		for _, a := range cl.HostAddr {
			if !seen[a] {
				t.Errorf("%s: endpoints %q miss host address %s", mode, eps, a)
			}
		}
	}
	out, err := run("abort", "--mpi=pmi2", "-N3", "-n3")
	if err == nil {
		t.Errorf("a step whose task aborted exited 0:\n%s", out)
	}
	out, err = run("nopmi", "--mpi=none", "-N1", "-n1")
	if err != nil || !strings.Contains(out, "no pmi") {
		t.Errorf("--mpi=none: %v\n%s", err, out)
	}
}
