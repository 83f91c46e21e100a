// Package ccwrap is the compiler wrapper behind bcscc and bcscxx, in the
// shape of mpicc: it adds bcsmpi's include directory and, when the
// invocation links, the MPI library and its run path, and passes every other
// argument to the C or C++ compiler (cc and c++, or $BCS_CC and $BCS_CXX).
//
// Where things are:
//   - the header: <source tree>/cabi/include/mpi.h, found through the path
//     this package was compiled from (or $BCS_ROOT);
//   - the library: <directory of the bcscc executable>/lib/libmpi_abi.so.1,
//     with libmpi_abi.so beside it for -lmpi_abi, and a copy of the header
//     in <that directory>/include, used when the source tree is gone (a
//     bin/ copied elsewhere).
//
// The library is built from the source tree with go build -buildmode=c-shared
// on the first link, and again whenever a Go, C or header file of the tree
// changed since (a fingerprint of their names, sizes and modification times
// is kept beside the library), so a rebuilt checkout never links a stale
// library. "bcscc --build" only builds it. Concurrent wrappers take a lock.
//
// Build systems ask MPI wrappers what they add rather than compiling through
// them (CMake's FindMPI, for one), so the wrappers answer both families'
// query flags, in their formats, and exit without compiling:
//   - MPICH's -show (also --show), -compile-info and -link-info print the
//     whole command line; alone, they print the linking one
//     (cc -I<inc> -L<lib> -lmpi_abi -Wl,-rpath,<lib>), as mpicc -show does;
//     with -c, -S, -E or -M among the arguments, the compiling one.
//   - Open MPI's -showme and --showme, the same; -showme:<what> or
//     --showme:<what> prints one part: command (the compiler), compile (the
//     flags added when compiling), link (those added when linking), incdirs,
//     libdirs, libs (-I, -L and -l values, space-separated), version, help.
//     An unknown <what> is an error (exit 1), as under Open MPI.
//
// A query whose answer names the library (all but -showme:compile,
// :incdirs, :command, :version, :help and compile-only -show) builds it
// first, so that a build system linking with the printed flags finds it.
// Two differences from MPICH's output, neither seen by the parsers: -I comes
// before the user's arguments (MPICH appends it), and the run path is added
// (MPICH's Debian build relies on the system library path). MPICH's
// MPICH_CC/MPICH_CXX and Open MPI's OMPI_CC are not read: BCS_CC/BCS_CXX are;
// MPICH's -cc=<compiler> (bcscc) and -cxx=<compiler> (bcscxx) override them.
package ccwrap

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
)

// Lib names the library and its link name.
const (
	Lib     = "libmpi_abi.so.1"
	LibLink = "libmpi_abi.so"
)

// Version is the library's version string, as MPI_Get_library_version
// returns it (cabi/shim.c).
const Version = "bcsmpi (MPI 5.0 standard ABI 1.0, libmpi_abi.so.1)"

// Tool is one wrapper: its name, the compiler it runs by default, the
// environment variable that overrides it, MPICH's flag that overrides both
// (-cc=clang), and its language (for -showme:version).
type Tool struct {
	Name, Compiler, Env, Select, Lang string
}

var (
	CC  = Tool{Name: "bcscc", Compiler: "cc", Env: "BCS_CC", Select: "-cc=", Lang: "C"}
	CXX = Tool{Name: "bcscxx", Compiler: "c++", Env: "BCS_CXX", Select: "-cxx=", Lang: "C++"}
)

// Root is the bcsmpi source tree: $BCS_ROOT, or the tree this package was
// compiled from.
func Root() (string, error) {
	root := os.Getenv("BCS_ROOT")
	if root == "" {
		_, file, _, ok := runtime.Caller(0)
		if ok && filepath.IsAbs(file) {
			root = filepath.Join(filepath.Dir(file), "..", "..")
		}
	}
	if root == "" {
		return "", errors.New("cannot locate the bcsmpi source tree (built with -trimpath?); set BCS_ROOT to it")
	}
	root = filepath.Clean(root)
	if _, err := os.Stat(filepath.Join(root, "cabi", "include", "mpi.h")); err != nil {
		return "", fmt.Errorf("%s is not the bcsmpi source tree (no cabi/include/mpi.h); set BCS_ROOT to it", root)
	}
	return root, nil
}

// LibDir is where the library lives: lib/ beside the executable.
func LibDir() (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", err
	}
	if exe, err = filepath.EvalSymlinks(exe); err != nil {
		return "", err
	}
	return filepath.Join(filepath.Dir(exe), "lib"), nil
}

// linking reports whether a compiler invocation links: not when it only
// compiles, assembles, preprocesses or lists dependencies, and not without
// arguments (the compiler then just complains).
func linking(args []string) bool {
	if len(args) == 0 {
		return false
	}
	for _, a := range args {
		switch a {
		case "-c", "-S", "-E", "-M", "-MM", "--version", "-v", "-dumpversion", "-dumpmachine":
			return false
		}
	}
	return true
}

// compiler is the compiler command: $Env's words, or the default.
func compiler(t Tool) []string {
	if t.Env == "" {
		return strings.Fields(t.Compiler)
	}
	if v := os.Getenv(t.Env); strings.TrimSpace(v) != "" {
		return strings.Fields(v)
	}
	return []string{t.Compiler}
}

// linkFlags are the flags added when linking against the library in libdir.
func linkFlags(libdir string) []string {
	return []string{"-L" + libdir, "-lmpi_abi", "-Wl,-rpath," + libdir}
}

// Command is the compiler command line for args, with the header in incdir
// and the library in libdir.
func Command(t Tool, incdir, libdir string, args []string) []string {
	return command(t, incdir, libdir, args, linking(args))
}

func command(t Tool, incdir, libdir string, args []string, link bool) []string {
	cmd := append(compiler(t), "-I"+incdir)
	cmd = append(cmd, args...)
	if link {
		cmd = append(cmd, linkFlags(libdir)...)
	}
	return cmd
}

// Query is what a query flag asks for.
type Query string

// The queries: QueryNone compiles; QueryShow prints the whole command; the
// others print the part of the same name of Open MPI's -showme:<part>.
const (
	QueryNone    Query = ""
	QueryShow    Query = "show"
	QueryCommand Query = "command"
	QueryCompile Query = "compile"
	QueryLink    Query = "link"
	QueryIncdirs Query = "incdirs"
	QueryLibdirs Query = "libdirs"
	QueryLibs    Query = "libs"
	QueryVersion Query = "version"
	QueryHelp    Query = "help"
)

var showmeParts = []Query{QueryCommand, QueryCompile, QueryLink, QueryIncdirs, QueryLibdirs, QueryLibs, QueryVersion, QueryHelp}

// Args is a wrapper's command line taken apart.
type Args struct {
	Tool  Tool     // with the compiler -cc= or -cxx= chose
	Query Query    // QueryNone to compile
	Build bool     // --build
	Rest  []string // the compiler's arguments
}

// ParseArgs separates the wrapper's own flags (the queries, MPICH's -cc= for
// bcscc and -cxx= for bcscxx, and --build) from the compiler's arguments.
// The first query wins; later ones are passed on, as Open MPI does.
func ParseArgs(t Tool, args []string) (Args, error) {
	q, build, rest, err := parseArgs(t, args)
	for i := 0; err == nil && i < len(rest); i++ {
		if cc, ok := strings.CutPrefix(rest[i], t.Select); ok {
			if strings.TrimSpace(cc) == "" {
				err = fmt.Errorf("%s names no compiler (%sclang, for one)", rest[i], t.Select)
				break
			}
			t.Compiler, t.Env = cc, ""
			rest = slices.Delete(rest, i, i+1)
			i--
		}
	}
	if err != nil {
		return Args{}, err
	}
	return Args{Tool: t, Query: q, Build: build, Rest: rest}, nil
}

func parseArgs(t Tool, args []string) (q Query, build bool, rest []string, err error) {
	for _, a := range args {
		if a == "--build" {
			build = true
			continue
		}
		if q != QueryNone {
			rest = append(rest, a)
			continue
		}
		switch a {
		case "-show", "--show", "-showme", "--showme", "-compile-info", "-compile_info", "-link-info", "-link_info":
			q = QueryShow
			continue
		}
		if part, ok := strings.CutPrefix(a, "-showme:"); ok || strings.HasPrefix(a, "--showme:") {
			if !ok {
				part = strings.TrimPrefix(a, "--showme:")
			}
			if !slices.Contains(showmeParts, Query(part)) {
				return QueryNone, false, nil, fmt.Errorf("unrecognized option: %s (valid: -showme:%s); type '%s --showme:help' for usage", a, joinQueries(showmeParts, ",-showme:"), t.Name)
			}
			q = Query(part)
			continue
		}
		rest = append(rest, a)
	}
	return q, build, rest, nil
}

func joinQueries(qs []Query, sep string) string {
	s := make([]string, len(qs))
	for i, q := range qs {
		s[i] = string(q)
	}
	return strings.Join(s, sep)
}

// needsLib reports whether the answer to q (with the compiler arguments
// rest) names the library, which must then be built.
func needsLib(q Query, rest []string) bool {
	switch q {
	case QueryShow:
		return len(rest) == 0 || linking(rest)
	case QueryLink, QueryLibdirs, QueryLibs:
		return true
	}
	return false
}

// Answer is what the query q prints (without the final newline).
func Answer(t Tool, q Query, incdir, libdir string, rest []string) string {
	var out []string
	switch q {
	case QueryShow:
		out = command(t, incdir, libdir, rest, needsLib(q, rest))
	case QueryCommand:
		out = append(compiler(t), rest...)
	case QueryCompile:
		out = append(slices.Clone(rest), "-I"+incdir)
	case QueryLink:
		out = append(slices.Clone(rest), linkFlags(libdir)...)
	case QueryIncdirs:
		out = []string{incdir}
	case QueryLibdirs:
		out = []string{libdir}
	case QueryLibs:
		out = []string{"mpi_abi"}
	case QueryVersion:
		return fmt.Sprintf("%s: %s (Language: %s)", t.Name, Version, t.Lang)
	case QueryHelp:
		return fmt.Sprintf(`%[1]s [-show | -compile-info | -link-info | -showme[:<what>]] args
  -show, -showme     Show the whole command (the linking one, alone)
  -compile-info      The same (MPICH's spelling)
  -link-info         The same (MPICH's spelling)
  -showme:command    Show command used to invoke real compiler
  -showme:compile    Show flags added when compiling
  -showme:link       Show flags added when linking
  -showme:incdirs    Show list of include dirs added when compiling
  -showme:libdirs    Show list of library dirs added when linking
  -showme:libs       Show list of libraries added when linking
  -showme:version    Show version of bcsmpi
  -showme:help       This help message
  %-18[2]s Compile with <compiler> (else $%[3]s, else %[4]s)
  --build            (Re)build the library only`, t.Name, t.Select+"<compiler>", t.Env, t.Compiler)
	}
	return strings.Join(out, " ")
}

// Main runs the wrapper and returns its exit code (on success it execs the
// compiler and does not return).
func Main(t Tool, args []string) int {
	a, err := ParseArgs(t, args)
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", t.Name, err)
		return 1
	}
	t, q, build, rest := a.Tool, a.Query, a.Build, a.Rest
	switch q {
	case QueryVersion, QueryHelp, QueryCommand:
		if !build {
			fmt.Println(Answer(t, q, "", "", rest))
			return 0
		}
	}
	show := q != QueryNone
	needLib := build || (show && needsLib(q, rest)) || (!show && linking(rest))
	libdir, err := LibDir()
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", t.Name, err)
		return 2
	}
	incdir := filepath.Join(filepath.Dir(libdir), "include") // the installed copy of mpi.h
	root, err := Root()
	switch {
	case err == nil:
		if needLib {
			if err := Ensure(root, libdir, build); err != nil {
				fmt.Fprintf(os.Stderr, "%s: building %s: %v\n", t.Name, filepath.Join(libdir, Lib), err)
				return 1
			}
			if build && !show && len(rest) == 0 {
				return 0
			}
		}
		incdir = filepath.Join(root, "cabi", "include")
	case build:
		fmt.Fprintf(os.Stderr, "%s: %v\n", t.Name, err)
		return 2
	default: // a bin/ without its source tree: use what was built into it
		_, herr := os.Stat(filepath.Join(incdir, "mpi.h"))
		_, lerr := os.Stat(filepath.Join(libdir, Lib))
		if herr != nil || (needLib && lerr != nil) {
			fmt.Fprintf(os.Stderr, "%s: %v; and %s or %s is missing\n", t.Name, err, filepath.Join(incdir, "mpi.h"), filepath.Join(libdir, Lib))
			return 2
		}
	}
	if show {
		fmt.Println(Answer(t, q, incdir, libdir, rest))
		return 0
	}
	cmd := Command(t, incdir, libdir, rest)
	path, err := exec.LookPath(cmd[0])
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: compiler %q not found (set %s): %v\n", t.Name, cmd[0], t.Env, err)
		return 127
	}
	err = syscall.Exec(path, cmd, os.Environ())
	fmt.Fprintf(os.Stderr, "%s: running %s: %v\n", t.Name, path, err)
	return 126
}

// fingerprint summarises the source files the library is built from: the
// names, sizes and modification times of every Go, C and header file of the
// tree outside tests, bin/ and hidden directories.
func fingerprint(root string) (string, error) {
	h := sha256.New()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if p != root && (strings.HasPrefix(name, ".") || name == "bin" || name == "testdata" || name == "bcs-mds") {
				return filepath.SkipDir
			}
			return nil
		}
		switch filepath.Ext(name) {
		case ".go", ".c", ".h", ".mod", ".sum":
		default:
			return nil
		}
		if strings.HasSuffix(name, "_test.go") {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%s %d %d\n", p, info.Size(), info.ModTime().UnixNano())
		return nil
	})
	return hex.EncodeToString(h.Sum(nil)), err
}

// Ensure builds the library into libdir unless it is there and was built
// from the tree as it is now (always, if force).
func Ensure(root, libdir string, force bool) error {
	if err := os.MkdirAll(libdir, 0o755); err != nil {
		return err
	}
	lock, err := os.OpenFile(filepath.Join(libdir, ".lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return err
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return err
	}
	defer syscall.Flock(int(lock.Fd()), syscall.LOCK_UN)

	fp, err := fingerprint(root)
	if err != nil {
		return err
	}
	stamp := filepath.Join(libdir, ".fingerprint")
	lib := filepath.Join(libdir, Lib)
	if !force {
		if old, err := os.ReadFile(stamp); err == nil && string(old) == fp {
			if _, err := os.Stat(lib); err == nil {
				return nil
			}
		}
	}
	tmp, err := os.MkdirTemp(libdir, ".build-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	gobin := "/usr/local/go/bin/go" // where the README installs Go; PATH wins
	if p, err := exec.LookPath("go"); err == nil {
		gobin = p
	}
	cmd := exec.Command(gobin, "build", "-buildmode=c-shared",
		"-ldflags=-extldflags=-Wl,-soname,"+Lib, "-o", filepath.Join(tmp, Lib), "./cabi")
	cmd.Dir = root
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	cmd.Env = append(os.Environ(), "CGO_ENABLED=1")
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s: %w", strings.Join(cmd.Args, " "), err)
	}
	if err := os.Rename(filepath.Join(tmp, Lib), lib); err != nil {
		return err
	}
	// A copy of the header beside lib/, so that the wrappers keep working
	// from a bin/ copied away from the source tree.
	hdr, err := os.ReadFile(filepath.Join(root, "cabi", "include", "mpi.h"))
	if err != nil {
		return err
	}
	incdir := filepath.Join(filepath.Dir(libdir), "include")
	if err := os.MkdirAll(incdir, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(tmp, "mpi.h"), hdr, 0o644); err != nil {
		return err
	}
	if err := os.Rename(filepath.Join(tmp, "mpi.h"), filepath.Join(incdir, "mpi.h")); err != nil {
		return err
	}
	link := filepath.Join(libdir, LibLink)
	if target, err := os.Readlink(link); err != nil || target != Lib {
		os.Remove(link)
		if err := os.Symlink(Lib, link); err != nil {
			return err
		}
	}
	return os.WriteFile(stamp, []byte(fp), 0o644)
}
