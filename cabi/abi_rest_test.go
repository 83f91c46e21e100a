package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// abiFunctions is the standard ABI's function list (testdata/abi_functions.txt).
func abiFunctions(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile("testdata/abi_functions.txt")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for line := range strings.Lines(string(b)) {
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
			names = append(names, line)
		}
	}
	return names
}

// probedNames are the functions left undefined because configure scripts
// probe them: none now (MPI_Accumulate, MPI_Get_accumulate and
// MPI_Session_init are implemented).
var probedNames = map[string]bool{}

// TestHeaderDeclaresTheABI checks that mpi.h declares exactly the 664
// functions of the standard ABI.
func TestHeaderDeclaresTheABI(t *testing.T) {
	want := abiFunctions(t)
	if len(want) != 664 {
		t.Fatalf("testdata/abi_functions.txt has %d names, want 664", len(want))
	}
	hdr, err := os.ReadFile("include/mpi.h")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^BCSMPI_FN\([\w ]+?, (\w+),`).FindAllSubmatch(hdr, -1) {
		got["MPI_"+string(m[1])] = true
	}
	var missing []string
	for _, n := range want {
		if !got[n] {
			missing = append(missing, n)
		}
		delete(got, n)
	}
	if len(missing) > 0 || len(got) > 0 {
		var extra []string
		for n := range got {
			extra = append(extra, n)
		}
		sort.Strings(extra)
		t.Fatalf("mpi.h lacks %v and declares %v, which are not in the ABI", missing, extra)
	}
}

// TestEveryFunctionLinks compiles and links a program that takes the
// address of every MPI_ and PMPI_ function of the ABI (but the probed
// names), as a program using all of them would.
func TestEveryFunctionLinks(t *testing.T) {
	var src strings.Builder
	src.WriteString("#include <mpi.h>\n#include <stdio.h>\nstatic void *fns[] = {\n")
	n := 0
	for _, name := range abiFunctions(t) {
		if probedNames[name] {
			continue
		}
		fmt.Fprintf(&src, "    (void *)%s, (void *)P%s,\n", name, name)
		n += 2
	}
	src.WriteString("};\nint main(void) {\n    int n = 0;\n    for (unsigned i = 0; i < sizeof fns / sizeof fns[0]; i++)\n        n += fns[i] != 0;\n    printf(\"%d\\n\", n);\n    return 0;\n}\n")
	file := filepath.Join(t.TempDir(), "all.c")
	if err := os.WriteFile(file, []byte(src.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	r := run(t, compile(t, "bcscc", file))
	if r.code != 0 || strings.TrimSpace(r.stdout) != fmt.Sprint(n) {
		t.Fatalf("exit %d, printed %q, want %d\n%s", r.code, r.stdout, n, r.stderr)
	}
}

// TestRest runs the C checks of stubs, info objects, handle conversion,
// status accessors, attributes and MPI_ERR_IN_STATUS.
func TestRest(t *testing.T) {
	exe := compile(t, "bcscc", "testdata/rest.c")
	t.Run("singleton", func(t *testing.T) { okRanks(t, run(t, exe), "rest", 1) })
	t.Run("n3", func(t *testing.T) { okRanks(t, bcsrun(t, "-n", "3", exe), "rest", 3) })
	t.Run("n4-nodes2", func(t *testing.T) { okRanks(t, bcsrun(t, "-n", "4", "--nodes", "2", exe), "rest", 4) })
}

// Two synchronous sends head to head can never complete (with standard
// sends of the same size, buffered, the program runs): the deadlock
// detector reports both ranks in MPI_Ssend and the cycle.
func TestSsendHeadToHeadDeadlock(t *testing.T) {
	t.Setenv("BCS_DEADLOCK_SLICES", "50")
	exe := compile(t, "bcscc", "testdata/ssend_deadlock.c")
	okRanks(t, bcsrun(t, "-n", "2", exe, "standard"), "ssend_deadlock", 2)
	r := bcsrun(t, "-n", "2", exe)
	if r.code == 0 {
		t.Fatalf("the job succeeded\nstdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	}
	for _, w := range []string{
		"deadlock: every MPI rank has been blocked",
		"rank 0 (in MPI_Ssend): its send to rank 1 (tag 0, 4 bytes) waits for a matching receive",
		"rank 1 (in MPI_Ssend): its send to rank 0 (tag 0, 4 bytes) waits for a matching receive",
		"wait-for cycle: 0 -> 1 -> 0",
	} {
		if !strings.Contains(r.stderr, w) {
			t.Errorf("stderr lacks %q:\n%s", w, r.stderr)
		}
	}
}

// TestStubsUpToDate regenerates shim_stubs.c and compares: after a function
// is implemented (a strong PMPI_X already wins over its weak stub), the
// stub should go, so that the list of stubs stays true.
func TestStubsUpToDate(t *testing.T) {
	fresh := filepath.Join(t.TempDir(), "shim_stubs.c")
	if out, err := exec.Command("go", "run", "./genstubs", fresh).CombinedOutput(); err != nil {
		t.Fatalf("go run ./genstubs: %v\n%s", err, out)
	}
	want, err := os.ReadFile(fresh)
	if err != nil {
		t.Fatal(err)
	}
	have, err := os.ReadFile("shim_stubs.c")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(have, want) {
		t.Fatalf("shim_stubs.c is stale: run go generate ./cabi")
	}
}
