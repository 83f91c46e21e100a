package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// build compiles the named commands into a fresh bin directory.
func build(t *testing.T, cmds ...string) string {
	t.Helper()
	bin := t.TempDir()
	args := []string{"build", "-o", bin + "/"}
	for _, c := range cmds {
		args = append(args, "../"+c)
	}
	if out, err := exec.Command("go", args...).CombinedOutput(); err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return bin
}

// The binary answers the queries that need no library at once, and rejects
// an unknown -showme part naming it.
func TestQueryFlags(t *testing.T) {
	bin := build(t, "bcscc")
	inc, err := filepath.Abs(filepath.Join("..", "..", "cabi", "include"))
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("BCS_CC", "")
	for _, c := range []struct{ flag, want string }{
		{"-showme:compile", "-I" + inc},
		{"--showme:incdirs", inc},
		{"--showme:command", "cc"},
		{"--showme:version", "bcscc: bcsmpi (MPI 5.0 standard ABI 1.0, libmpi_abi.so.1) (Language: C)"},
	} {
		out, err := exec.Command(filepath.Join(bin, "bcscc"), c.flag).Output()
		if err != nil || strings.TrimSuffix(string(out), "\n") != c.want {
			t.Errorf("bcscc %s = %q, %v; want %q", c.flag, out, err, c.want)
		}
	}
	if _, err := os.Stat(filepath.Join(bin, "lib")); err == nil {
		t.Error("a compile-side query built the library")
	}
	cmd := exec.Command(filepath.Join(bin, "bcscc"), "--showme:libz")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	var ee *exec.ExitError
	if err := cmd.Run(); !errors.As(err, &ee) || ee.ExitCode() != 1 || !strings.Contains(stderr.String(), "--showme:libz") {
		t.Errorf("bcscc --showme:libz: %v, stderr %q; want exit 1 naming the option", err, stderr.String())
	}
}

// CMake's FindMPI, given bcscc as MPI_C_COMPILER, reads its flags through
// the query flags (-showme:compile and -showme:link first), and the program
// it builds with them runs under bcsrun.
func TestCMakeFindMPI(t *testing.T) {
	cmake, err := exec.LookPath("cmake")
	if err != nil {
		t.Skip("cmake is not installed (apt-get install cmake; .ci/run installs it): FindMPI against bcscc not checked")
	}
	if testing.Short() {
		t.Skip("-short: builds the library and a CMake project")
	}
	bin := build(t, "bcscc", "bcsrun")
	t.Setenv("BCS_CC", "")
	src, err := filepath.Abs(filepath.Join("testdata", "cmake"))
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "build")
	run := func(name string, args ...string) string {
		t.Helper()
		out, err := exec.Command(name, args...).CombinedOutput()
		if err != nil {
			t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	run(cmake, "-S", src, "-B", dir, "-DMPI_C_COMPILER="+filepath.Join(bin, "bcscc"))
	cache, err := os.ReadFile(filepath.Join(dir, "CMakeCache.txt"))
	if err != nil {
		t.Fatal(err)
	}
	want := "MPI_mpi_abi_LIBRARY:FILEPATH=" + filepath.Join(bin, "lib", "libmpi_abi.so")
	if !strings.Contains(string(cache), want+"\n") {
		t.Errorf("CMakeCache.txt lacks %q (FindMPI did not take bcscc's library)", want)
	}
	run(cmake, "--build", dir)
	out := run(filepath.Join(bin, "bcsrun"), "-n", "4", filepath.Join(dir, "hello"))
	if !strings.Contains(out, "cmake hello: 4 ranks, sum 6\n") {
		t.Errorf("bcsrun -n 4 hello printed %q", out)
	}
}
