package main

import (
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestCommDupLocal runs testdata/dupfast.c: duplicates made from the
// runtime's grants without a collective (mpiapi, "Local duplicates").
func TestCommDupLocal(t *testing.T) {
	exe := compile(t, "bcscc", "testdata/dupfast.c")
	// Messages on 90 duplicates, splits and duplicates of duplicates, the
	// parent and the world, in flight at once with one tag, never cross.
	for _, args := range [][]string{{"-n", "2"}, {"-n", "3", "--nodes", "2"}, {"-n", "4", "--deterministic"}} {
		t.Run("cross"+strings.Join(args, ""), func(t *testing.T) {
			n, _ := strconv.Atoi(args[1])
			okRanks(t, bcsrun(t, append(args, exe, "cross")...), "dupfast", n)
		})
	}
	// 4001 duplicates and as many frees: the runtime's collective
	// descriptors (EMDS NCOLLDEM over the whole job, counted, not timed)
	// are the frees, a few duplicates through the runtime (the grants) and
	// the program's Allreduce and Barrier: at most one per 100 duplicates
	// beyond the frees (each duplicate was one before).
	t.Run("churn", func(t *testing.T) {
		root := t.TempDir()
		const window = 400_000
		for k, v := range map[string]string{"BCS_MDS": "elan", "BCS_MDS_DIR": root, "BCS_EMDS_FIRST": "0", "BCS_EMDS_SLICES": strconv.Itoa(window)} {
			t.Setenv(k, v)
		}
		const ranks, dups = 2, 4001
		okRanks(t, bcsrun(t, "-n", strconv.Itoa(ranks), exe, "churn"), "dupfast", ranks)
		dir, err := filepath.EvalSymlinks(filepath.Join(root, "latest"))
		if err != nil {
			t.Fatal(err)
		}
		var man struct {
			Slices uint64 `json:"slices"`
		}
		raw, _ := os.ReadFile(filepath.Join(dir, "manifest.json"))
		if err := json.Unmarshal(raw, &man); err != nil || man.Slices == 0 || man.Slices > window {
			t.Fatalf("the job ran %d slices, want 1 .. %d (the EMDS window) (%v):\n%s", man.Slices, window, err, raw)
		}
		f, err := os.Open(filepath.Join(dir, "emds-node0.csv"))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		rows, err := csv.NewReader(f).ReadAll()
		if err != nil || len(rows) < 2 {
			t.Fatalf("emds-node0.csv: %d rows, %v", len(rows), err)
		}
		col := slices.Index(rows[0], "NCOLLDEM")
		if col < 0 {
			t.Fatalf("emds-node0.csv: no NCOLLDEM column in %v", rows[0])
		}
		total := 0
		for _, r := range rows[1:] {
			v, err := strconv.Atoi(r[col])
			if err != nil {
				t.Fatalf("emds-node0.csv: NCOLLDEM %q: %v", r[col], err)
			}
			total += v
		}
		perRank := total / ranks
		extra := perRank - dups // the frees
		if total%ranks != 0 || extra < 0 || extra > dups/100 {
			t.Fatalf("%d collective descriptors exchanged (%d per rank): %d beyond the %d frees, want 0 .. %d", total, perRank, extra, dups, dups/100)
		}
		t.Logf("%d collective descriptors per rank for %d duplicates and frees (%d beyond the frees)", perRank, dups, extra)
	})
	// The bound (proto.CommsMax) with a grant outstanding: the granted
	// duplicates are made on every rank though rank 0 is at the bound, and
	// the next one through the runtime is refused on every rank.
	t.Run("over-n2", func(t *testing.T) {
		okRanks(t, bcsrun(t, "-n", "2", exe, "over"), "dupfast", 2)
	})
	// Record and replay of a job whose wildcard receives are on local
	// duplicates: the replay matches as recorded.
	t.Run("wild-replay", func(t *testing.T) {
		rec := filepath.Join(t.TempDir(), "rec")
		t.Setenv("DUPFAST_JITTER", "1")
		first := bcsrun(t, "-n", "3", "--record", rec, exe, "wild")
		okRanks(t, first, "dupfast", 3)
		for i := range 2 {
			r := bcsrun(t, "-n", "3", "--replay", rec, exe, "wild")
			okRanks(t, r, "dupfast", 3)
			if got, want := sourcesLine(r.stdout), sourcesLine(first.stdout); got == "" || got != want {
				t.Fatalf("replay %d matched %q, recorded %q", i, got, want)
			}
		}
	})
}

// sourcesLine is the "dupfast sources" line of out.
func sourcesLine(out string) string {
	for l := range strings.SplitSeq(out, "\n") {
		if strings.HasPrefix(l, "dupfast sources") {
			return l
		}
	}
	return ""
}

// TestCommDupBadArg runs testdata/dupbadarg.c: rank 1 alone passes a freed
// info or a NULL newcomm/request to four duplicates of the world that the
// other ranks make from a grant; it gets the error and yet takes (and
// drops) each duplicate, so the ranks' next duplicate is the same
// communicator everywhere: the messages on it arrive there, never on the
// duplicates rank 1 dropped (before, rank 1's next duplicate had the id of
// the others' first, and the job deadlocked or crossed messages).
func TestCommDupBadArg(t *testing.T) {
	exe := compile(t, "bcscc", "testdata/dupbadarg.c")
	for _, args := range [][]string{{"-n", "2"}, {"-n", "3", "--nodes", "2"}} {
		t.Run(strings.Join(args, ""), func(t *testing.T) {
			n, _ := strconv.Atoi(args[1])
			okRanks(t, bcsrun(t, append(args, exe)...), "dupbadarg", n)
		})
	}
}

// TestCommDupSkipped runs testdata/dupskip.c: rank 1 skips one of the
// world's duplicates that the others make locally, then all call
// MPI_Barrier on the world. A local duplicate counts as a collective call
// on its parent (mpiapi dupFromGrant), so rank 1's barrier is call #2 and
// the others' #3: the job is reported (deadlock, naming both call
// numbers), where it would otherwise go on with rank 1's duplicates taking
// the others' ids.
func TestCommDupSkipped(t *testing.T) {
	exe := compile(t, "bcscc", "testdata/dupskip.c")
	r := bcsrun(t, "-n", "3", exe)
	if r.code == 0 || strings.Contains(r.stdout, "dupskip wrong") {
		t.Fatalf("exit %d, want a failed job\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	for _, want := range []string{"rank 1 (in MPI_Barrier): waits in MPI_Barrier() (call #2 on MPI_COMM_WORLD)",
		"rank 0 (in MPI_Barrier): waits in MPI_Barrier() (call #3 on MPI_COMM_WORLD)"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("report lacks %q\nstderr:\n%s", want, r.stderr)
		}
	}
}
