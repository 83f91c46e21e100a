package mds

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// jobDir makes a job's MDS directory: a manifest expecting MMDS from ranks
// and EMDS from nodes, the final dump of each rank in dumped, and the EMDS
// files of each node in emdsNodes.
func jobDir(t *testing.T, finished bool, ranks, dumped, emdsNodes []int) string {
	t.Helper()
	dir := t.TempDir()
	st := Status{Finished: finished, MMDSRanks: ranks, EMDSNodes: []int{0, 1}, EMDS: true}
	if finished {
		code := 0
		st.ExitCode = &code
	}
	raw, _ := json.Marshal(st)
	if err := os.WriteFile(filepath.Join(dir, ManifestFile), raw, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, r := range dumped {
		rec := New(DefaultConfig())
		rec.End(Send, rec.Begin(true), 8, true)
		rec.Close()
		if err := rec.Dump(dir, r); err != nil {
			t.Fatal(err)
		}
	}
	for _, n := range append([]int{-1}, emdsNodes...) {
		name := "emds-global.csv"
		if n >= 0 {
			name = "emds-node" + string(rune('0'+n)) + ".csv"
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte("slice\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func check(t *testing.T, dir string) Status {
	t.Helper()
	st, err := Check(dir)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func TestCheckComplete(t *testing.T) {
	st := check(t, jobDir(t, true, []int{0, 1, 2}, []int{0, 1, 2}, []int{0, 1}))
	if !st.Complete || len(st.Problems) != 0 || len(st.Dumps) != 3 {
		t.Fatalf("%+v", st)
	}
	for _, d := range st.Dumps {
		if !d.Dumped || !d.Finalized || d.Why != "" {
			t.Errorf("rank %d: %+v", d.Rank, d)
		}
	}
}

func TestCheckIncomplete(t *testing.T) {
	cases := []struct {
		name  string
		setup func(t *testing.T) string
		want  []string // substrings of the problems
		ranks []int    // Incomplete()
	}{
		{"missing rank dump", func(t *testing.T) string { return jobDir(t, true, []int{0, 1, 2}, []int{0, 2}, []int{0, 1}) },
			[]string{"rank 1: no dump"}, []int{1}},
		{"leftover tmp", func(t *testing.T) string {
			dir := jobDir(t, true, []int{0, 1}, []int{0, 1}, []int{0, 1})
			os.WriteFile(filepath.Join(dir, "mmds-rank1.hlog.123456.tmp"), []byte("half"), 0o600)
			return dir
		}, []string{"rank 1: a dump was interrupted, leaving mmds-rank1.hlog.123456.tmp"}, []int{1}},
		{"manifest without final exit code", func(t *testing.T) string { return jobDir(t, false, []int{0}, []int{0}, []int{0, 1}) },
			[]string{"the job did not finish", "exit code is unknown"}, nil},
		{"no manifest", func(t *testing.T) string {
			dir := jobDir(t, true, []int{0}, []int{0}, []int{0, 1})
			os.Remove(filepath.Join(dir, ManifestFile))
			return dir
		}, []string{"no readable manifest.json"}, nil},
		{"dump before Finalize", func(t *testing.T) string {
			dir := jobDir(t, true, []int{0, 1}, []int{0}, []int{0, 1})
			rec := New(DefaultConfig())
			rec.End(Send, rec.Begin(true), 8, true) // no Close: an interval or signal dump
			if err := rec.Dump(dir, 1); err != nil {
				t.Fatal(err)
			}
			return dir
		}, []string{"rank 1: dumped before MPI_Finalize"}, []int{1}},
		{"one of three files missing", func(t *testing.T) string {
			dir := jobDir(t, true, []int{0}, []int{0}, []int{0, 1})
			os.Remove(filepath.Join(dir, "mmds-rank0-dist.csv"))
			return dir
		}, []string{"rank 0: mmds-rank0-dist.csv missing"}, []int{0}},
		{"torn summary", func(t *testing.T) string {
			dir := jobDir(t, true, []int{0}, []int{0}, []int{0, 1})
			os.WriteFile(filepath.Join(dir, "mmds-rank0.csv"), []byte("primitive,count\n"), 0o600)
			return dir
		}, []string{"rank 0: mds: summary of rank 0"}, []int{0}},
		{"EMDS node missing", func(t *testing.T) string { return jobDir(t, true, []int{0}, []int{0}, []int{0}) },
			[]string{"node 1: emds-node1.csv missing"}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			st := check(t, c.setup(t))
			all := strings.Join(st.Problems, "\n")
			if st.Complete {
				t.Fatalf("complete, want problems %q", c.want)
			}
			for _, w := range c.want {
				if !strings.Contains(all, w) {
					t.Errorf("problems\n%s\nlack %q", all, w)
				}
			}
			if got := st.Incomplete(); !slices.Equal(got, c.ranks) {
				t.Errorf("Incomplete() = %v, want %v", got, c.ranks)
			}
			var b strings.Builder
			st.Warn(&b, "tool", "DIR")
			if !strings.HasPrefix(b.String(), "tool: warning: the MDS data in DIR is incomplete:\n") {
				t.Errorf("Warn:\n%s", b.String())
			}
		})
	}
}

func TestOnlyKeepsSelectedRanks(t *testing.T) {
	st := check(t, jobDir(t, true, []int{0, 1, 2}, []int{0, 2}, []int{0, 1}))
	if o := st.Only(SetOf(0, 2)); !o.Complete {
		t.Errorf("ranks 0 and 2 are whole: %+v", o.Problems)
	}
	if o := st.Only(SetOf(1)); o.Complete || len(o.Problems) != 1 {
		t.Errorf("rank 1 is missing: %+v", o.Problems)
	}
	st = check(t, jobDir(t, false, []int{0}, []int{0}, []int{0, 1}))
	if o := st.Only(SetOf(0)); o.Complete {
		t.Error("an unfinished job's problem was filtered away with the ranks")
	}
}

func TestDumpPermissions(t *testing.T) {
	for _, mode := range []os.FileMode{0, 0o600, 0o640, 0o644} {
		dir := t.TempDir()
		cfg := DefaultConfig()
		cfg.FileMode = mode
		rec := New(cfg)
		rec.Close()
		if err := rec.Dump(dir, 0); err != nil {
			t.Fatal(err)
		}
		want := mode
		if want == 0 {
			want = DefaultFileMode
		}
		ents, _ := os.ReadDir(dir)
		if len(ents) != 3 {
			t.Fatalf("%d files, want 3 (no temporary left)", len(ents))
		}
		for _, e := range ents {
			fi, _ := e.Info()
			if fi.Mode().Perm() != want {
				t.Errorf("FileMode %v: %s has mode %v, want %v", mode, e.Name(), fi.Mode().Perm(), want)
			}
		}
	}
}

func TestParseFileMode(t *testing.T) {
	for s, want := range map[string]os.FileMode{"0600": 0o600, "600": 0o600, "0640": 0o640, "0777": 0o777} {
		if m, err := ParseFileMode(s); err != nil || m != want {
			t.Errorf("ParseFileMode(%q) = %v, %v; want %v", s, m, err, want)
		}
	}
	for _, s := range []string{"", "0400", "0200", "1777", "0800", "rw", "-1"} {
		if _, err := ParseFileMode(s); err == nil || !strings.Contains(err.Error(), `"`+s+`"`) {
			t.Errorf("ParseFileMode(%q) err = %v, want an error naming the value", s, err)
		}
	}
	for m, want := range map[os.FileMode]os.FileMode{0o600: 0o700, 0o640: 0o750, 0o644: 0o755, 0o660: 0o770} {
		if d := DirMode(m); d != want {
			t.Errorf("DirMode(%v) = %v, want %v", m, d, want)
		}
	}
}

// Two dumps at once (the rank's goroutine and its signal goroutine) never
// share a temporary file: each write is whole, and none is left behind.
func TestWriteAtomicUniqueTemp(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	err := WriteAtomic(path, 0o600, func(w io.Writer) error {
		io.WriteString(w, "outer")
		return WriteAtomic(path, 0o600, func(w io.Writer) error { // a second writer, mid-way through the first
			_, err := io.WriteString(w, "inner")
			return err
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != "outer" {
		t.Fatalf("content %q, want the last whole write %q", b, "outer")
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Fatalf("%d files left, want 1", len(ents))
	}
}
