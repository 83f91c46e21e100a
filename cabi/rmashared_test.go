package main

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/bcsmpi/bcsmpi/mds"
)

// TestRMAShared runs testdata/rmashared.c: window attributes with user
// keyvals (delete callbacks counted, copy callbacks never run), shared
// windows over the ranks of each node (plain stores read by the other
// members after MPI_Win_sync and a barrier; Put, Get, Accumulate and
// Fetch_and_op on the same memory; contiguous and page-aligned segments;
// MPI_Win_shared_query of every rank and of MPI_PROC_NULL; a mapping
// backed by an anonymous memory file) and the _c forms of the one-sided
// calls; as a singleton, on 1 node and on 2 (where a window over
// MPI_COMM_WORLD is refused with MPI_ERR_RMA_SHARED).
func TestRMAShared(t *testing.T) {
	exe := compile(t, "bcscc", "testdata/rmashared.c")
	t.Run("singleton", func(t *testing.T) { okRanks(t, run(t, exe), "rmashared", 1) })
	for _, c := range []struct{ ranks, nodes int }{{1, 1}, {3, 1}, {4, 2}} {
		t.Run(fmt.Sprintf("n%d-nodes%d", c.ranks, c.nodes), func(t *testing.T) {
			r := bcsrun(t, "-n", strconv.Itoa(c.ranks), "--nodes", strconv.Itoa(c.nodes), exe)
			okRanks(t, r, "rmashared", c.ranks)
			if strings.Contains(r.stderr, "not released") || strings.Contains(r.stderr, "never freed") {
				t.Fatalf("resources left behind:\n%s", r.stderr)
			}
		})
	}
}

// TestRMASharedDirect runs testdata/rmashdirect.c: Put and Get on a shared
// window, which the origin copies itself once the target's exposure is
// certain: increments under an exclusive lock (not atomic, so lost if a copy
// ran before the lock was granted), strided layouts under lock_all, fence
// and post-start-complete-wait; on 2 and 4 ranks of one node, and 4 over 2
// nodes (a window per node).
func TestRMASharedDirect(t *testing.T) {
	exe := compile(t, "bcscc", "testdata/rmashdirect.c")
	for _, c := range []struct{ ranks, nodes int }{{2, 1}, {4, 1}, {4, 2}} {
		t.Run(fmt.Sprintf("n%d-nodes%d", c.ranks, c.nodes), func(t *testing.T) {
			okRanks(t, bcsrun(t, "-n", strconv.Itoa(c.ranks), "--nodes", strconv.Itoa(c.nodes), exe), "rmashdirect", c.ranks)
		})
	}
}

// Under the default handler, each refusal ends the job with a message
// naming the value and what is valid.
func TestRMASharedErrorsFatal(t *testing.T) {
	exe := compile(t, "bcscc", "testdata/rmashared.c")
	for _, c := range []struct {
		mode  string
		nodes int
		want  string
	}{
		{"bigput", 1, "rank 0: MPI_Put_c: MPI_ERR_RMA_RANGE: target_disp = 0 (disp_unit 1) with target_count = 2147483648 of MPI_BYTE touches bytes [0, 2147483648) of rank 1's window, which has 32 bytes"},
		{"bigget", 1, "rank 0: MPI_Get_c: MPI_ERR_COUNT: "},
		{"dispunit", 1, "MPI_Win_create_c: MPI_ERR_DISP: disp_unit = 2147483648, want 1..2147483647 bytes"},
		{"world", 2, "MPI_Win_allocate_shared: MPI_ERR_RMA_SHARED: the communicator's members are on more than one node (rank 0 on node 0, rank 1 on node 1)"},
	} {
		t.Run(c.mode, func(t *testing.T) {
			r := bcsrun(t, "-n", "2", "--nodes", strconv.Itoa(c.nodes), exe, c.mode)
			if r.code == 0 || !strings.Contains(r.stderr, c.want) || strings.Contains(r.stdout, "not reached") {
				t.Fatalf("exit %d, want stderr containing %q\nstdout:\n%s\nstderr:\n%s", r.code, c.want, r.stdout, r.stderr)
			}
		})
	}
	// A rank that aborts while a shared window is live ends the job; the
	// window's memory is an anonymous file (each rank checks its mapping
	// before the abort: exit 3 and a FAIL line otherwise), which dies with
	// the processes, so nothing is left in /dev/shm.
	t.Run("abort", func(t *testing.T) {
		r := bcsrun(t, "-n", "3", exe, "abort")
		if r.code == 0 || strings.Contains(r.stdout, "not reached") || strings.Contains(r.stdout, "FAIL") {
			t.Fatalf("exit %d, want the job aborted\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
		}
	})
}

// The MMDS records the one-sided calls as primitives of their own (a
// failed call too), and not the messages, barriers and waits they are made
// of: rmashared.c calls no MPI_Isend, MPI_Irecv or MPI_Send itself.
func TestRMAMMDSPrimitives(t *testing.T) {
	exe := compile(t, "bcscc", "testdata/rmashared.c")
	root := t.TempDir()
	t.Setenv("BCS_MDS", "main")
	t.Setenv("BCS_MDS_DIR", root)
	r := bcsrun(t, "-n", "2", exe)
	okRanks(t, r, "rmashared", 2)
	dir, err := filepath.EvalSymlinks(filepath.Join(root, "latest"))
	if err != nil {
		t.Fatalf("no MMDS directory: %v\nstderr:\n%s", err, r.stderr)
	}
	sums, err := mds.ReadDir(dir, nil)
	if err != nil || len(sums) != 2 {
		t.Fatalf("%d summaries, %v", len(sums), err)
	}
	// Per rank: shared() runs 3 times (twice over the node, once over the
	// world) with one MPI_Put each; large() makes one MPI_Put_c and two that
	// fail, and one MPI_Rput_c; bulk() 6 puts.
	want := map[string]int64{"MPI_Put": 12, "MPI_Rput": 1, "MPI_Get_accumulate": 1, "MPI_Rget_accumulate": 1,
		"MPI_Win_allocate_shared": 4, "MPI_Win_create": 3}
	for _, s := range sums {
		rows := map[string]int64{}
		for _, row := range s.Rows {
			rows[row.Name] = row.Count
		}
		for n, c := range want {
			if rows[n] != c {
				t.Errorf("rank %d: %s counted %d times, want %d (rows %v)", s.Rank, n, rows[n], c, rows)
			}
		}
		for _, n := range []string{"MPI_Get", "MPI_Accumulate", "MPI_Fetch_and_op", "MPI_Rget", "MPI_Raccumulate",
			"MPI_Win_fence", "MPI_Win_lock", "MPI_Win_unlock", "MPI_Win_lock_all", "MPI_Win_unlock_all",
			"MPI_Win_flush", "MPI_Win_sync", "MPI_Win_allocate", "MPI_Win_free"} {
			if rows[n] == 0 {
				t.Errorf("rank %d: no %s row (rows %v)", s.Rank, n, rows)
			}
		}
		for _, n := range []string{"MPI_Isend", "MPI_Irecv", "MPI_Send", "MPI_Recv"} {
			if rows[n] != 0 {
				t.Errorf("rank %d: %d %s rows, which the program never calls: the window's own messages were recorded", s.Rank, rows[n], n)
			}
		}
	}
}
