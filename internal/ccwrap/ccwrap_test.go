package ccwrap

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
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

// The query flags of MPICH's mpicc and Open MPI's mpicc, and what each
// prints, in their formats.
func TestQueries(t *testing.T) {
	t.Setenv("BCS_CC", "")
	const inc, lib = "/src/cabi/include", "/bin/lib"
	link := "-L/bin/lib -lmpi_abi -Wl,-rpath,/bin/lib"
	for _, c := range []struct {
		args    []string
		q       Query
		rest    []string
		want    string
		needLib bool
	}{
		// MPICH: alone, the linking command; with -c, the compiling one.
		{[]string{"-show"}, QueryShow, nil, "cc -I/src/cabi/include " + link, true},
		{[]string{"--show"}, QueryShow, nil, "cc -I/src/cabi/include " + link, true},
		{[]string{"-compile-info"}, QueryShow, nil, "cc -I/src/cabi/include " + link, true},
		{[]string{"-link-info"}, QueryShow, nil, "cc -I/src/cabi/include " + link, true},
		{[]string{"-link_info"}, QueryShow, nil, "cc -I/src/cabi/include " + link, true},
		{[]string{"-show", "-c", "a.c"}, QueryShow, []string{"-c", "a.c"}, "cc -I/src/cabi/include -c a.c", false},
		{[]string{"-o", "a", "a.c", "-show"}, QueryShow, []string{"-o", "a", "a.c"}, "cc -I/src/cabi/include -o a a.c " + link, true},
		// Open MPI.
		{[]string{"-showme"}, QueryShow, nil, "cc -I/src/cabi/include " + link, true},
		{[]string{"--showme"}, QueryShow, nil, "cc -I/src/cabi/include " + link, true},
		{[]string{"-showme:compile"}, QueryCompile, nil, "-I/src/cabi/include", false},
		{[]string{"--showme:compile"}, QueryCompile, nil, "-I/src/cabi/include", false},
		{[]string{"--showme:link"}, QueryLink, nil, link, true},
		{[]string{"-showme:link"}, QueryLink, nil, link, true},
		{[]string{"--showme:incdirs"}, QueryIncdirs, nil, "/src/cabi/include", false},
		{[]string{"--showme:libdirs"}, QueryLibdirs, nil, "/bin/lib", true},
		{[]string{"--showme:libs"}, QueryLibs, nil, "mpi_abi", true},
		{[]string{"--showme:command"}, QueryCommand, nil, "cc", false},
		{[]string{"--showme:version"}, QueryVersion, nil, "bcscc: " + Version + " (Language: C)", false},
		// Open MPI: the first query wins, the rest are arguments.
		{[]string{"--showme:compile", "--showme:link"}, QueryCompile, []string{"--showme:link"}, "--showme:link -I/src/cabi/include", false},
		{[]string{"--showme:link", "-c", "x.c"}, QueryLink, []string{"-c", "x.c"}, "-c x.c " + link, true},
		// No query: compile.
		{[]string{"-c", "a.c"}, QueryNone, []string{"-c", "a.c"}, "", false},
	} {
		a, err := ParseArgs(CC, c.args)
		q, build, rest := a.Query, a.Build, a.Rest
		if err != nil || build || q != c.q || !slices.Equal(rest, c.rest) {
			t.Errorf("ParseArgs(%q) = %q, %v, %q, %v; want %q, false, %q, nil", c.args, q, build, rest, err, c.q, c.rest)
			continue
		}
		if got := needsLib(q, rest); got != c.needLib {
			t.Errorf("%q: needsLib = %v, want %v", c.args, got, c.needLib)
		}
		if q == QueryNone {
			continue
		}
		if got := Answer(CC, q, inc, lib, rest); got != c.want {
			t.Errorf("%q prints %q, want %q", c.args, got, c.want)
		}
	}
	if got := Answer(CXX, QueryVersion, inc, lib, nil); got != "bcscxx: "+Version+" (Language: C++)" {
		t.Errorf("bcscxx --showme:version prints %q", got)
	}
	t.Setenv("BCS_CXX", "clang++ -stdlib=libc++")
	if got := Answer(CXX, QueryCommand, inc, lib, nil); got != "clang++ -stdlib=libc++" {
		t.Errorf("bcscxx --showme:command with BCS_CXX prints %q", got)
	}
	if a, err := ParseArgs(CC, []string{"--build", "-show"}); err != nil || a.Query != QueryShow || !a.Build || len(a.Rest) != 0 {
		t.Errorf("ParseArgs(--build -show) = %+v, %v", a, err)
	}
	for _, bad := range []string{"--showme:foo", "-showme:", "-showme:COMPILE"} {
		_, err := ParseArgs(CC, []string{bad})
		if err == nil || !strings.Contains(err.Error(), bad) || !strings.Contains(err.Error(), "-showme:libdirs") {
			t.Errorf("ParseArgs(%q): error %v, want one naming it and the valid parts", bad, err)
		}
	}
	for _, q := range showmeParts {
		if help := Answer(CC, QueryHelp, inc, lib, nil); !strings.Contains(help, "-showme:"+string(q)+" ") {
			t.Errorf("-showme:help does not list -showme:%s", q)
		}
	}
}

// -showme:version says what MPI_Get_library_version says.
func TestVersionIsTheLibrarys(t *testing.T) {
	shim, err := os.ReadFile(filepath.Join("..", "..", "cabi", "shim.c"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(shim), `"`+Version+`"`) {
		t.Errorf("cabi/shim.c's MPI_Get_library_version does not return %q", Version)
	}
}

// MPICH's -cc= (bcscc) and -cxx= (bcscxx) choose the compiler over $BCS_CC;
// the other tool's flag is the compiler's, as under MPICH.
func TestSelectCompiler(t *testing.T) {
	t.Setenv("BCS_CC", "gcc")
	t.Setenv("BCS_CXX", "g++")
	for _, c := range []struct {
		tool Tool
		args []string
		want string
	}{
		{CC, []string{"-cc=clang", "-show", "-c", "a.c"}, "clang -I/i -c a.c"},
		{CC, []string{"-show", "-c", "a.c"}, "gcc -I/i -c a.c"},
		{CC, []string{"-cc=clang -m32", "-show", "-c", "a.c"}, "clang -m32 -I/i -c a.c"},
		{CXX, []string{"-cxx=clang++", "-show", "-c", "a.cc"}, "clang++ -I/i -c a.cc"},
		{CXX, []string{"-cc=clang", "-show", "-c", "a.cc"}, "g++ -I/i -cc=clang -c a.cc"},
	} {
		a, err := ParseArgs(c.tool, c.args)
		if err != nil {
			t.Errorf("%s %q: %v", c.tool.Name, c.args, err)
			continue
		}
		if got := Answer(a.Tool, a.Query, "/i", "/l", a.Rest); got != c.want {
			t.Errorf("%s %q prints %q, want %q", c.tool.Name, c.args, got, c.want)
		}
	}
	if _, err := ParseArgs(CC, []string{"-cc=", "-c", "a.c"}); err == nil || !strings.Contains(err.Error(), "-cc=") {
		t.Errorf("ParseArgs(-cc=): error %v, want one naming -cc=", err)
	}
}
