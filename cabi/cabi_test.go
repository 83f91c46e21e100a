package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The tests build bcsrun, bcscc and bcscxx into a temporary bin/, let bcscc
// build libmpi_abi.so.1 into bin/lib as it does for a user, compile the C
// and C++ programs of testdata/ with the wrappers, and run them.

var bin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "cabi-e2e-")
	if err != nil {
		panic(err)
	}
	bin = dir
	code := func() int {
		cmd := exec.Command("go", "build", "-o", dir+"/", "../cmd/bcsrun", "../cmd/bcscc", "../cmd/bcscxx")
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		if err := cmd.Run(); err != nil {
			fmt.Fprintln(os.Stderr, "building bcsrun and the wrappers:", err)
			return 1
		}
		cmd = exec.Command(filepath.Join(dir, "bcscc"), "--build")
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		if err := cmd.Run(); err != nil {
			fmt.Fprintln(os.Stderr, "building libmpi_abi.so.1 (needs gcc):", err)
			return 1
		}
		return m.Run()
	}()
	os.RemoveAll(dir)
	os.Exit(code)
}

// compile builds a program from testdata (or the repository) with bcscc or
// bcscxx and returns the executable's path.
func compile(t *testing.T, wrapper, src string, flags ...string) string {
	t.Helper()
	exe := filepath.Join(t.TempDir(), strings.TrimSuffix(filepath.Base(src), filepath.Ext(src)))
	args := append([]string{"-Wall", "-Werror", "-o", exe, src}, flags...)
	out, err := exec.Command(filepath.Join(bin, wrapper), args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", wrapper, strings.Join(args, " "), err, out)
	}
	return exe
}

type result struct {
	code           int
	stdout, stderr string
}

// run runs a command with a deadline and checks that no shared-memory file
// of a job is left behind.
func run(t *testing.T, name string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("%s %v: timed out\nstdout:\n%s\nstderr:\n%s", name, args, out.String(), errb.String())
	}
	r := result{stdout: out.String(), stderr: errb.String()}
	if ee, ok := err.(*exec.ExitError); ok {
		r.code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("%s %v: %v", name, args, err)
	}
	return r
}

// bcsrun runs a job with the default settings (deadlock detection included:
// a rank still loading the library before MPI_Init, or descheduled on a
// loaded machine, is never taken for a deadlock).
func bcsrun(t *testing.T, args ...string) result {
	t.Helper()
	return run(t, filepath.Join(bin, "bcsrun"), args...)
}

// okRanks checks that the job succeeded and every rank printed "<word> ok <rank>".
func okRanks(t *testing.T, r result, word string, n int) {
	t.Helper()
	if r.code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	for i := range n {
		if !strings.Contains(r.stdout, fmt.Sprintf("%s ok %d\n", word, i)) {
			t.Fatalf("rank %d did not finish\nstdout:\n%s\nstderr:\n%s", i, r.stdout, r.stderr)
		}
	}
}

func TestSuite(t *testing.T) {
	exe := compile(t, "bcscc", "testdata/suite.c")
	t.Run("singleton", func(t *testing.T) { okRanks(t, run(t, exe), "suite", 1) })
	for _, c := range []struct {
		ranks, nodes int
	}{{1, 1}, {3, 1}, {4, 1}, {4, 2}, {5, 2}, {6, 3}} {
		t.Run(fmt.Sprintf("n%d-nodes%d", c.ranks, c.nodes), func(t *testing.T) {
			okRanks(t, bcsrun(t, "-n", strconv.Itoa(c.ranks), "--nodes", strconv.Itoa(c.nodes), exe), "suite", c.ranks)
		})
	}
}

func TestHello(t *testing.T) {
	exe := compile(t, "bcscc", "../examples/c/hello.c")
	r := bcsrun(t, "-n", "4", exe)
	if r.code != 0 || strings.Count(r.stdout, "hello from rank") != 4 || !strings.Contains(r.stdout, "sum of ranks = 6 (want 6)") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	// Started without bcsrun, the program is a job of one rank.
	r = run(t, exe)
	if r.code != 0 || !strings.Contains(r.stdout, "hello from rank 0 of 1 on") || !strings.Contains(r.stdout, "sum of ranks = 0 (want 0)") {
		t.Fatalf("singleton: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
}

func TestCxx(t *testing.T) {
	exe := compile(t, "bcscxx", "testdata/cxx.cpp")
	r := bcsrun(t, "-n", "2", exe)
	for i := range 2 {
		want := fmt.Sprintf("cxx rank %d of 2: sum 2 type MPI_DOUBLE world ok", i)
		if r.code != 0 || !strings.Contains(r.stdout, want) {
			t.Fatalf("want %q; exit %d\nstdout:\n%s\nstderr:\n%s", want, r.code, r.stdout, r.stderr)
		}
	}
}

// Under MPI_ERRORS_ARE_FATAL an invalid rank ends the job with bcsmpi's
// message, and the program's buffered output before it is not lost.
func TestFatalError(t *testing.T) {
	exe := compile(t, "bcscc", "testdata/fatal.c")
	r := bcsrun(t, "-n", "2", exe)
	if r.code == 0 {
		t.Fatalf("the job succeeded\nstdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	}
	want := "rank 1: MPI_Send: MPI_ERR_RANK: dest = 99, want 0..1 or MPI_PROC_NULL (MPI_ERRORS_ARE_FATAL: aborting the job)"
	if !strings.Contains(r.stderr, want) {
		t.Fatalf("stderr lacks %q:\n%s", want, r.stderr)
	}
	if !strings.Contains(r.stdout, "before the error 1\n") {
		t.Fatalf("rank 1's output before the error was lost:\n%s", r.stdout)
	}
}

func TestForkedChildGetsAnError(t *testing.T) {
	exe := compile(t, "bcscc", "testdata/fork.c")
	r := run(t, exe)
	if r.code != 0 || !strings.Contains(r.stdout, "child exit 0") || !strings.Contains(r.stderr, "MPI_Barrier called in a forked child") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
}

// TestHeaderConstants prints every constant of the standard through
// include/mpi.h and compares it with the transcribed table, and checks the
// layout of MPI_Status and the integer types.
func TestHeaderConstants(t *testing.T) {
	var src strings.Builder
	src.WriteString("#include <mpi.h>\n#include <stddef.h>\n#include <stdio.h>\nint main(void) {\n")
	for _, c := range standard {
		fmt.Fprintf(&src, "    printf(\"%s %%lld\\n\", (long long)(intptr_t)(%s));\n", c.name, c.name)
	}
	layout := map[string]int64{
		"sizeof(MPI_Status)": 32, "offsetof(MPI_Status, MPI_SOURCE)": 0, "offsetof(MPI_Status, MPI_TAG)": 4,
		"offsetof(MPI_Status, MPI_ERROR)": 8, "sizeof(MPI_Aint)": 8, "sizeof(MPI_Count)": 8, "sizeof(MPI_Offset)": 8,
		"sizeof(MPI_Comm)": 8,
	}
	for expr := range layout {
		fmt.Fprintf(&src, "    printf(\"%s %%lld\\n\", (long long)(%s));\n", expr, expr)
	}
	src.WriteString("    return 0;\n}\n")
	file := filepath.Join(t.TempDir(), "constants.c")
	if err := os.WriteFile(file, []byte(src.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	r := run(t, compile(t, "bcscc", file))
	got := map[string]int64{}
	for line := range strings.Lines(r.stdout) {
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseInt(strings.TrimSpace(line[i+1:]), 10, 64)
		if err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		got[line[:i]] = v
	}
	for _, c := range standard {
		if got[c.name] != c.value {
			t.Errorf("%s = %d in mpi.h, the standard says %d", c.name, got[c.name], c.value)
		}
	}
	for expr, want := range layout {
		if got[expr] != want {
			t.Errorf("%s = %d, want %d", expr, got[expr], want)
		}
	}
}

// TestExports checks that the library defines PMPI_X and a weak MPI_X for
// every function the header declares.
func TestExports(t *testing.T) {
	hdr, err := os.ReadFile("include/mpi.h")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, m := range regexp.MustCompile(`(?m)^BCSMPI_FN\([\w ]+?, (\w+),`).FindAllSubmatch(hdr, -1) {
		names = append(names, string(m[1]))
	}
	if len(names) < 50 {
		t.Fatalf("found only %d functions in mpi.h", len(names))
	}
	out, err := exec.Command("nm", "-D", "--defined-only", filepath.Join(bin, "lib", "libmpi_abi.so.1")).Output()
	if err != nil {
		t.Fatalf("nm: %v", err)
	}
	syms := map[string]string{}
	for line := range strings.Lines(string(out)) {
		if f := strings.Fields(line); len(f) == 3 {
			syms[f[2]] = f[1]
		}
	}
	for _, n := range names {
		if probedNames["MPI_"+n] {
			continue
		}
		// A stub (shim_stubs.c) is weak in both names.
		if p := syms["PMPI_"+n]; (p != "T" && p != "W") || syms["MPI_"+n] != "W" {
			t.Errorf("PMPI_%s is %q (want T, or W for a stub), MPI_%s is %q (want W, weak)", n, syms["PMPI_"+n], n, syms["MPI_"+n])
		}
	}
	// MPI_Session_init, which configure scripts probe to switch sessions
	// on, is there now that sessions work, strong in its profiling name.
	if syms["PMPI_Session_init"] != "T" || syms["MPI_Session_init"] != "W" {
		t.Errorf("PMPI_Session_init is %q, MPI_Session_init %q; want T and W", syms["PMPI_Session_init"], syms["MPI_Session_init"])
	}
	t.Logf("%d functions exported as MPI_ and PMPI_", len(names))
}

func TestWrapperShow(t *testing.T) {
	cc := filepath.Join(bin, "bcscc")
	out, err := exec.Command(cc, "-show", "-o", "x", "x.c").Output()
	if err != nil {
		t.Fatal(err)
	}
	lib := filepath.Join(bin, "lib")
	if want := "-o x x.c -L" + lib + " -lmpi_abi -Wl,-rpath," + lib + "\n"; !strings.HasPrefix(string(out), "cc -I") || !strings.HasSuffix(string(out), want) {
		t.Errorf("bcscc -show -o x x.c = %q, want cc -I... %q", out, want)
	}
	cmd := exec.Command(filepath.Join(bin, "bcscxx"), "-show", "-c", "x.cpp")
	cmd.Env = append(os.Environ(), "BCS_CXX=g++ -O1")
	out, err = cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	if s := string(out); !strings.HasPrefix(s, "g++ -O1 -I") || strings.Contains(s, "-lmpi_abi") {
		t.Errorf("BCS_CXX='g++ -O1' bcscxx -show -c x.cpp = %q, want g++ -O1 -I... without the library", s)
	}
}

func TestPingpongExample(t *testing.T) {
	exe := compile(t, "bcscc", "../examples/c/pingpong.c", "-O2")
	for _, nodes := range []string{"1", "2"} {
		r := bcsrun(t, "-n", "2", "--nodes", nodes, exe, "70000", "5")
		if r.code != 0 || !strings.Contains(r.stdout, "pingpong: 5 iterations of 70000 bytes:") || !strings.Contains(r.stdout, "data verified") {
			t.Fatalf("nodes %s: exit %d\nstdout:\n%s\nstderr:\n%s", nodes, r.code, r.stdout, r.stderr)
		}
	}
}

func TestCallsOutsideInitAndFinalize(t *testing.T) {
	exe := compile(t, "bcscc", "testdata/lifecycle.c")
	for _, c := range []struct{ arg, want string }{
		{"before", "rank -1: MPI_Comm_size: MPI_ERR_OTHER: MPI_Init has not been called"},
		{"after", "rank 0: MPI_Barrier: MPI_ERR_OTHER: called after MPI_Finalize"},
		// The datatype queries check it first too: on a predefined type,
		// and before a NULL output argument (shim.c NONNULL).
		{"before-size", "rank -1: MPI_Type_get_extent: MPI_ERR_OTHER: MPI_Init has not been called"},
		{"before-null", "rank -1: MPI_Type_size_c: MPI_ERR_OTHER: MPI_Init has not been called"},
		{"after-null", "MPI_Type_get_envelope: MPI_ERR_OTHER: called after MPI_Finalize"},
	} {
		r := run(t, exe, c.arg)
		if r.code == 0 || strings.Contains(r.stdout, "not reached") || !strings.Contains(r.stderr, c.want) {
			t.Errorf("%s: exit %d, want an error %q\nstdout:\n%s\nstderr:\n%s", c.arg, r.code, c.want, r.stdout, r.stderr)
		}
	}
}

func TestStencilExample(t *testing.T) {
	exe := compile(t, "bcscc", "../examples/c/stencil.c", "-O2", "-lm")
	r := bcsrun(t, "-n", "4", "--nodes", "2", exe, "20", "4096", "0.1")
	if r.code != 0 || !strings.Contains(r.stdout, "stencil: 4 ranks, 20 iterations, 4096-byte halos:") || !strings.Contains(r.stdout, "checksum ok") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	// A singleton exchanges its halos with itself.
	r = run(t, exe, "5", "4096", "0")
	if r.code != 0 || !strings.Contains(r.stdout, "stencil: 1 ranks, 5 iterations") || !strings.Contains(r.stdout, "checksum ok") {
		t.Fatalf("singleton: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
}

// A bin/ copied away from the source tree keeps compiling with the header
// and library built into it.
func TestWrapperWithoutSourceTree(t *testing.T) {
	dir := t.TempDir()
	for _, p := range []string{"bcscc", "include/mpi.h", "lib/" + "libmpi_abi.so.1"} {
		b, err := os.ReadFile(filepath.Join(bin, p))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, p), b, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("libmpi_abi.so.1", filepath.Join(dir, "lib", "libmpi_abi.so")); err != nil {
		t.Fatal(err)
	}
	noTree := "BCS_ROOT=" + t.TempDir() // no source tree there
	cmd := exec.Command(filepath.Join(dir, "bcscc"), "-show", "x.c")
	cmd.Env = append(os.Environ(), noTree)
	if out, err := cmd.Output(); err != nil || !strings.HasPrefix(string(out), "cc -I"+filepath.Join(dir, "include")+" ") {
		t.Fatalf("bcscc -show x.c from a copied bin/ = %q (%v), want the copied include directory", out, err)
	}
	exe := filepath.Join(dir, "hello")
	cmd = exec.Command(filepath.Join(dir, "bcscc"), "-o", exe, "../examples/c/hello.c")
	cmd.Env = append(os.Environ(), noTree)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("bcscc from a copied bin/: %v\n%s", err, out)
	}
	r := run(t, exe)
	if r.code != 0 || !strings.Contains(r.stdout, "hello from rank 0 of 1") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
}
