package ccwrap

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestLinking(t *testing.T) {
	for _, c := range []struct {
		args []string
		want bool
	}{
		{[]string{"-o", "hello", "hello.c"}, true},
		{[]string{"hello.o", "-lm"}, true},
		{[]string{"-c", "hello.c"}, false},
		{[]string{"-S", "hello.c"}, false},
		{[]string{"-E", "hello.c"}, false},
		{[]string{"-M", "hello.c"}, false},
		{[]string{"-MM", "hello.c"}, false},
		{[]string{"--version"}, false},
		{nil, false},
	} {
		if got := linking(c.args); got != c.want {
			t.Errorf("linking(%q) = %v, want %v", c.args, got, c.want)
		}
	}
}

func TestCommand(t *testing.T) {
	t.Setenv("BCS_CC", "")
	got := Command(CC, "/src/cabi/include", "/bin/lib", []string{"-O2", "-o", "a", "a.c"})
	want := []string{"cc", "-I/src/cabi/include", "-O2", "-o", "a", "a.c", "-L/bin/lib", "-lmpi_abi", "-Wl,-rpath,/bin/lib"}
	if !slices.Equal(got, want) {
		t.Errorf("Command = %q, want %q", got, want)
	}
	t.Setenv("BCS_CC", "clang -fuse-ld=lld")
	got = Command(CC, "/src/cabi/include", "/bin/lib", []string{"-c", "a.c"})
	want = []string{"clang", "-fuse-ld=lld", "-I/src/cabi/include", "-c", "a.c"}
	if !slices.Equal(got, want) {
		t.Errorf("with BCS_CC: Command = %q, want %q", got, want)
	}
}

// The fingerprint changes when a source file changes and ignores tests.
func TestFingerprint(t *testing.T) {
	root := t.TempDir()
	write := func(name, s string) {
		t.Helper()
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("cabi/shim.c", "int x;")
	a, err := fingerprint(root)
	if err != nil {
		t.Fatal(err)
	}
	write("cabi/x_test.go", "package main")
	write("bin/lib/.fingerprint", "whatever")
	if b, _ := fingerprint(root); b != a {
		t.Error("a test file or bin/ changed the fingerprint")
	}
	write("cabi/shim.c", "int xy;")
	if c, _ := fingerprint(root); c == a {
		t.Error("changing cabi/shim.c left the fingerprint as it was")
	}
}

func TestRootRejectsOtherTrees(t *testing.T) {
	t.Setenv("BCS_ROOT", t.TempDir())
	if _, err := Root(); err == nil {
		t.Error("Root accepted a directory without cabi/include/mpi.h")
	}
}
