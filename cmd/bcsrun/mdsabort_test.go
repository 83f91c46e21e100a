package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/bcsmpi/bcsmpi/mds"
)

// manifest reads the parts of a job's manifest.json these tests check.
func manifest(t *testing.T, dir string) (mds.Status, map[string]any) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(dir, mds.ManifestFile))
	if err != nil {
		t.Fatal(err)
	}
	var st mds.Status
	var all map[string]any
	if err := json.Unmarshal(raw, &st); err != nil {
		t.Fatal(err)
	}
	json.Unmarshal(raw, &all)
	return st, all
}

// tool runs bcsreport or bcsplot and returns its exit status and output.
func tool(t *testing.T, name string, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(filepath.Join(bin, name), args...)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode(), o.String(), e.String()
	} else if err != nil {
		t.Fatal(err)
	}
	return 0, o.String(), e.String()
}

// A complete run: the manifest says so, and files and directory are private.
func TestMDSCompleteAndPrivate(t *testing.T) {
	for _, c := range []struct {
		env        []string
		file, dirm os.FileMode
	}{
		{nil, 0o600, 0o700},
		{[]string{"BCS_MDS_FILE_MODE=0640"}, 0o640, 0o750},
	} {
		r, dir := runMDS(t, append(c.env, "BCS_MDS=main,elan"), "-n", "3", "--nodes", "2", "./e2eprog", "exchange")
		if r.code != 0 {
			t.Fatalf("exit %d\n%s", r.code, r.stderr)
		}
		st, all := manifest(t, dir)
		if !st.Finished || st.ExitCode == nil || *st.ExitCode != 0 || !st.Complete || len(st.Dumps) != 3 || len(st.EMDSNodes) != 2 {
			t.Fatalf("manifest %+v", st)
		}
		for _, d := range st.Dumps {
			if !d.Dumped || !d.Finalized {
				t.Errorf("rank %d: %+v", d.Rank, d)
			}
		}
		if all["exit_code"] != 0.0 {
			t.Errorf("exit_code %v", all["exit_code"])
		}
		fi, err := os.Stat(dir)
		if err != nil || fi.Mode().Perm() != c.dirm {
			t.Fatalf("directory mode %v, want %v", fi.Mode().Perm(), c.dirm)
		}
		ents, _ := os.ReadDir(dir)
		for _, e := range ents {
			fi, _ := e.Info()
			if fi.Mode().Perm() != c.file || strings.Contains(e.Name(), ".tmp") {
				t.Errorf("%s: mode %v, want %v", e.Name(), fi.Mode().Perm(), c.file)
			}
		}
		if len(ents) != 1+3*3+1+2+1 { // manifest, 3 files per rank, EMDS global and 2 nodes, matrix
			t.Errorf("%d files: %v", len(ents), ents)
		}
		if code, _, stderr := tool(t, "bcsreport", dir); code != 0 || strings.Contains(stderr, "incomplete") {
			t.Errorf("bcsreport on complete data: exit %d\n%s", code, stderr)
		}
	}
}

// A rank exits with an error before Finalize: the job is aborted, and the
// manifest, bcsrun, bcsreport and bcsplot all say which rank left no data.
func TestMDSRankFailsDataIncomplete(t *testing.T) {
	r, dir := runMDS(t, []string{"BCS_MDS=main,elan"}, "-n", "3", "./e2eprog", "exit3")
	if r.code == 0 {
		t.Fatalf("exit 0 although rank 1 failed\n%s", r.stderr)
	}
	st, _ := manifest(t, dir)
	if !st.Finished || st.ExitCode == nil || *st.ExitCode != r.code || st.Complete {
		t.Fatalf("manifest %+v, want finished, exit code %d, incomplete", st, r.code)
	}
	if d := st.Dumps[1]; d.Rank != 1 || d.Dumped || !strings.Contains(d.Why, "no dump") {
		t.Errorf("rank 1 exited before dumping: %+v", d)
	}
	for _, d := range st.Dumps {
		if d.Finalized { // nobody reached Finalize
			t.Errorf("rank %d finalized? %+v", d.Rank, d)
		}
	}
	if !strings.Contains(r.stderr, "bcsrun: warning: the MDS data in "+dir+" is incomplete") || !strings.Contains(r.stderr, "rank 1: no dump") {
		t.Errorf("bcsrun does not say the data is incomplete:\n%s", r.stderr)
	}
	code, out, stderr := tool(t, "bcsreport", dir)
	if code != mds.ExitIncomplete || !strings.Contains(stderr, "rank 1: no dump") || !strings.Contains(out, "MMDS summary") {
		t.Errorf("bcsreport: exit %d, want %d with a warning and the table over what is there\n%s\n%s", code, mds.ExitIncomplete, out, stderr)
	}
	if code, _, stderr := tool(t, "bcsreport", "--partial", dir); code != 0 || !strings.Contains(stderr, "rank 1: no dump") {
		t.Errorf("bcsreport --partial: exit %d\n%s", code, stderr)
	}
	out2 := t.TempDir()
	if code, _, stderr := tool(t, "bcsplot", "getts", dir, "-o", out2); code != mds.ExitIncomplete || !strings.Contains(stderr, "rank 1: no dump") {
		t.Errorf("bcsplot getts: exit %d\n%s", code, stderr)
	}
	if code, _, stderr := tool(t, "bcsplot", "getts", dir, "-o", out2, "--partial"); code != 0 {
		t.Errorf("bcsplot getts --partial: exit %d\n%s", code, stderr)
	}
}

// bcsrun itself is SIGKILLed: nobody writes the final manifest, so it must
// not claim an exit code; the tools say the job did not finish.
func TestMDSLauncherKilled(t *testing.T) {
	before := listeners(t)
	root := t.TempDir()
	cmd := exec.Command(filepath.Join(bin, "bcsrun"), "-n", "2", "./e2eprog", "hang")
	cmd.Dir = bin
	cmd.Env = append(os.Environ(), "BCS_MDS=main,elan", "BCS_MDS_DIR="+root, "BCS_DEADLOCK_SLICES=0") // hangs until killed
	out, _ := cmd.StdoutPipe()
	if err := startJob(cmd); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(out)
	for i := 0; i < 2; i++ { // every rank is past Init
		if !sc.Scan() {
			t.Fatal("rank output ended early")
		}
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	nothingLeft(t, before) // the ranks die with bcsrun (parent-death signal)
	dirs, _ := filepath.Glob(filepath.Join(root, "*", mds.ManifestFile))
	if len(dirs) != 1 {
		t.Fatalf("manifests %v", dirs)
	}
	dir := filepath.Dir(dirs[0])
	st, all := manifest(t, dir)
	if st.Finished || st.ExitCode != nil || all["exit_code"] != nil || st.Complete {
		t.Fatalf("manifest of a killed bcsrun claims an ending: %+v %v", st, all["exit_code"])
	}
	code, _, stderr := tool(t, "bcsreport", dir)
	if code == 0 || !strings.Contains(stderr, "the job did not finish") || !strings.Contains(stderr, "exit code is unknown") {
		t.Errorf("bcsreport after SIGKILL: exit %d\n%s", code, stderr)
	}
	if code, _, stderr := tool(t, "bcsplot", "all", dir, "-o", t.TempDir()); code == 0 || !strings.Contains(stderr, "the job did not finish") {
		t.Errorf("bcsplot after SIGKILL: exit %d\n%s", code, stderr)
	}
}
