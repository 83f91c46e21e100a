package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The C programs that run across the namespace hosts (TestSlurmAcrossHosts/C):
// cabi's MPI semantics suites, compiled with bcscc against libmpi_abi.so.1,
// each a self-checking program that prints "<name> ok <rank>" on every rank
// whose checks held (cabi's tests run them on logical nodes). The set covers
// each family once: point-to-point (p2p, p2pstd), collectives (coll; omb:
// persistent and neighbourhood collectives and one-sided traffic under
// every synchronization), communicators and groups (comm, create, idup,
// intercoll, intercomm), datatypes on the wire (dtype), topologies (topo),
// the rest (misc, suite), MPI_Comm_split_type by host (splittype), one-sided
// communication between hosts and shared windows within each (rma,
// rmashared), MPI-IO on the hosts' shared file system (io), user reductions
// (userop), and threads calling MPI at once (threadsmt).
//
// Left out, to keep the subtest near a minute: the programs whose subject
// is the library's argument checking rather than traffic (nullargs, sigs,
// optypes, pairtype, alias, groups, ctx, stress, intercreate; they passed
// across hosts when tried), and rmaedge, whose flood sections move 5 GB
// through the bridge (it passed, in minutes).
//
// The hosts are network namespaces of one kernel, so io's shared file
// pointer (a memfd that the members map through /proc, cabi/doc.go) works
// across them; on real hosts the shared-pointer calls fail with
// MPI_ERR_UNSUPPORTED_OPERATION, as documented, and io.c would report it.
type cProg struct {
	name, src string
	ranks     int      // 0: compiled for the error cases only
	args      []string // after the program; "DIR" is a fresh directory
	flags     []string // bcscc's
}

var cProgs = []cProg{
	{"suite", "suite.c", 6, nil, nil},
	{"p2p", "diff/p2p.c", 5, nil, nil},
	{"p2pstd", "diff/p2pstd.c", 5, nil, nil},
	{"coll", "diff/coll.c", 5, nil, nil},
	{"omb", "diff/omb.c", 6, nil, nil},
	{"comm", "diff/comm.c", 5, nil, nil},
	{"create", "diff/create.c", 5, nil, nil},
	{"idup", "diff/idup.c", 5, nil, nil},
	{"intercoll", "diff/intercoll.c", 6, nil, nil},
	{"intercomm", "intercomm.c", 5, nil, nil},
	{"dtype", "diff/dtype.c", 3, nil, nil},
	{"topo", "diff/topo.c", 6, nil, nil},
	{"misc", "diff/misc.c", 5, nil, nil},
	{"splittype", "diff/splittype.c", 5, []string{"3"}, nil},
	{"rma", "rma.c", 4, nil, nil},
	{"rmashared", "rmashared.c", 6, nil, nil},
	{"io", "io.c", 6, []string{"DIR"}, nil},
	{"userop", "diff/userop.c", 5, nil, nil},
	{"threadsmt", "threadsmt.c", 3, nil, []string{"-pthread"}},
	{"ssend_deadlock", "ssend_deadlock.c", 0, nil, nil},
}

// cBuild compiles cProgs into bin in the background (bcscc, the library
// into bin/lib, then each program), so that the build overlaps the
// cluster's start and the other subtests.
type cBuild struct {
	done chan struct{}
	err  error
}

func startCBuild(t *testing.T) *cBuild {
	b := &cBuild{done: make(chan struct{})}
	t.Cleanup(func() { <-b.done }) // before TestMain removes bin
	go func() {
		defer close(b.done)
		cmd := exec.Command("go", "build", "-o", bin+"/", "../bcscc")
		if out, err := cmd.CombinedOutput(); err != nil {
			b.err = fmt.Errorf("go build bcscc: %v\n%s", err, out)
			return
		}
		if out, err := exec.Command(filepath.Join(bin, "bcscc"), "--build").CombinedOutput(); err != nil {
			b.err = fmt.Errorf("bcscc --build: %v\n%s", err, out)
			return
		}
		for _, p := range cProgs {
			args := append([]string{"-Wall", "-Werror", "-o", filepath.Join(bin, p.name), filepath.Join("..", "..", "cabi", "testdata", p.src)}, p.flags...)
			if out, err := exec.Command(filepath.Join(bin, "bcscc"), args...).CombinedOutput(); err != nil {
				b.err = fmt.Errorf("bcscc %s: %v\n%s", strings.Join(args, " "), err, out)
				return
			}
		}
	}()
	return b
}

// cAcrossHosts runs each C program once with bcsrun in `salloc -N3`, its
// ranks dealt round-robin (--map-by cyclic) so that every host has ranks and
// every neighbour exchange and collective crosses hosts, and checks what
// cabi checks on logical nodes: exit 0, every rank's ok line, printed from
// the host the placement put it on (--tag-output), and nothing left behind
// (no resource unreleased, no file in io's directory; sallocHook checks the
// processes and /dev/shm).
func cAcrossHosts(t *testing.T, b *cBuild, sallocHook func(t *testing.T, env []string, stdin string, during func(o, e *watched), args ...string) run) {
	<-b.done
	if b.err != nil {
		t.Fatal(b.err)
	}
	salloc := func(t *testing.T, args ...string) run { t.Helper(); return sallocHook(t, nil, "", nil, args...) }
	for _, p := range cProgs {
		if p.ranks == 0 {
			continue
		}
		t.Run(p.name, func(t *testing.T) {
			args := []string{"--map-by", "cyclic", "--tag-output", "-n", strconv.Itoa(p.ranks), "./" + p.name}
			dir := ""
			for _, a := range p.args {
				if a == "DIR" {
					dir = t.TempDir()
					a = dir
				}
				args = append(args, a)
			}
			r := salloc(t, args...)
			if r.code != 0 {
				t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
			}
			for i := range p.ranks {
				if want := fmt.Sprintf("[%d@h%d] %s ok %d\n", i, i%3+1, p.name, i); !strings.Contains(r.stdout, want) {
					t.Fatalf("no %q\nstdout:\n%s\nstderr:\n%s", want, r.stdout, r.stderr)
				}
			}
			for _, bad := range []string{"not released", "never freed", "warning"} {
				if strings.Contains(r.stderr, bad) {
					t.Errorf("stderr says %q:\n%s", bad, r.stderr)
				}
			}
			if dir != "" {
				if left, _ := os.ReadDir(dir); len(left) > 0 {
					t.Errorf("files left in the program's directory: %v", left)
				}
			}
		})
	}
	// A shared window over ranks on two hosts is erroneous (the standard:
	// MPI_Win_allocate_shared is for processes that share memory, i.e. of
	// one MPI_COMM_TYPE_SHARED communicator): the job fails naming the call,
	// the class and where the members are.
	t.Run("rmashared across hosts", func(t *testing.T) {
		r := salloc(t, "--map-by", "cyclic", "-n", "2", "./rmashared", "world")
		want := "MPI_Win_allocate_shared: MPI_ERR_RMA_SHARED: the communicator's members are on more than one node (rank 0 on node 0, rank 1 on node 1)"
		if r.code == 0 || !strings.Contains(r.stderr, want) || strings.Contains(r.stdout, "not reached") {
			t.Fatalf("exit %d, want a failed job and stderr containing %q\nstdout:\n%s\nstderr:\n%s", r.code, want, r.stdout, r.stderr)
		}
	})
	// Failing jobs whose ranks are on two hosts end as on one machine
	// (cabi's TestSsendHeadToHeadDeadlock, TestDiffUserOp): non-zero, with
	// the cause said once, although every host's replica of the schedule
	// finds it (each host printed it).
	t.Run("deadlock", func(t *testing.T) {
		r := sallocHook(t, []string{"BCS_DEADLOCK_SLICES=50"}, "", nil, "--map-by", "cyclic", "-n", "2", "./ssend_deadlock")
		for _, w := range []string{
			"deadlock: every MPI rank has been blocked",
			"rank 0 (in MPI_Ssend): its send to rank 1 (tag 0, 4 bytes) waits for a matching receive",
			"rank 1 (in MPI_Ssend): its send to rank 0 (tag 0, 4 bytes) waits for a matching receive",
			"wait-for cycle: 0 -> 1 -> 0",
		} {
			if r.code == 0 || strings.Count(r.stderr, w) != 1 {
				t.Errorf("exit %d, want non-zero and stderr containing %q once:\n%s", r.code, w, r.stderr)
			}
		}
	})
	t.Run("collective mismatch", func(t *testing.T) {
		r := salloc(t, "--map-by", "cyclic", "-n", "3", "./userop", "mismatch")
		if w := "collective mismatch on MPI_COMM_WORLD, collective call #1: rank "; r.code == 0 || strings.Contains(r.stdout, "not detected") || strings.Count(r.stderr, w) != 1 || !strings.Contains(r.stderr, "called MPI_Allreduce(user operation") || !strings.Contains(r.stderr, "(different operations)") {
			t.Errorf("exit %d, want a failed job naming the mismatch once\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
		}
	})
}
