package main

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
)

// A program a rank executes after MPI_Init inherits the rank's environment
// but not the node's region (closed on exec), and its MPI_Init says so,
// naming the rank (issue 9 §3).
func TestExecutedChildDoesNotInheritRegion(t *testing.T) {
	r := bcsrun(t, "-n", "2", "./e2eprog", "exec-child")
	for _, want := range []string{"child: region descriptors: 0 []", "child: MPI_Init refused:", "rank 0's shared memory is not open in this process", "child exit: <nil>"} {
		if r.code != 0 || !strings.Contains(r.stdout, want) {
			t.Fatalf("exit %d, want stdout containing %q\nstdout:\n%s\nstderr:\n%s", r.code, want, r.stdout, r.stderr)
		}
	}
}

// A child a rank starts before its own MPI_Init inherits the region; once
// the rank has attached, the child's MPI_Init is refused, naming the rank and
// the process holding it: attachment is once per rank.
func TestSecondAttachRefused(t *testing.T) {
	r := bcsrun(t, "-n", "2", "./e2eprog", "spawn-before-init")
	m := regexp.MustCompile(`rank 0 is process (\d+); child exit: <nil>`).FindStringSubmatch(r.stdout)
	if r.code != 0 || m == nil {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	for _, want := range []string{"child: region descriptors: 1 ", "child: MPI_Init refused:", fmt.Sprintf("rank 0 is already attached by process %s", m[1])} {
		if !strings.Contains(r.stdout, want) {
			t.Fatalf("want stdout containing %q\nstdout:\n%s\nstderr:\n%s", want, r.stdout, r.stderr)
		}
	}
}

// A rank that writes another rank's number into its control page and posts
// as that rank aborts the job, named by its true rank. Before issue 9 the
// message arrived as from the impersonated rank, and across nodes bcsrun
// panicked in the agent.
func TestImpersonationAbortsJob(t *testing.T) {
	for _, nodes := range []string{"1", "2"} {
		t.Run("nodes"+nodes, func(t *testing.T) {
			r := bcsrun(t, "-n", "2", "--nodes", nodes, "./e2eprog", "impersonate")
			want := "rank 0 (node 0): shared memory: control page world_rank = 1, want 0"
			if r.code != 1 || !strings.Contains(r.stderr, want) || strings.Contains(r.stdout, "received a message") {
				t.Fatalf("exit %d, want 1 and stderr containing %q\nstdout:\n%s\nstderr:\n%s", r.code, want, r.stdout, r.stderr)
			}
		})
	}
}
