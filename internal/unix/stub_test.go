package unix

import (
	"bytes"
	"go/ast"
	"go/build/constraint"
	"go/parser"
	"go/printer"
	"go/token"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The stub for other systems declares exactly the functions of the Linux
// files, with the same signatures, so that a function added on Linux alone
// breaks this test here rather than a build on another system later. The
// files are told apart by their //go:build lines; a file with none is shared.
func TestStubMatchesLinux(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	linux, other := map[string]string{}, map[string]string{}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		onLinux, onOther := true, true
		for _, c := range f.Comments {
			for _, l := range c.List {
				if expr, err := constraint.Parse(l.Text); err == nil {
					onLinux = expr.Eval(func(tag string) bool { return tag == "linux" || tag == "unix" })
					onOther = expr.Eval(func(tag string) bool { return tag == "darwin" || tag == "unix" })
				}
			}
		}
		if onLinux == onOther {
			continue // shared (or neither): declared once for both
		}
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || !fn.Name.IsExported() || fn.Recv != nil {
				continue
			}
			var b bytes.Buffer
			printer.Fprint(&b, fset, fn.Type)
			sig := fn.Name.Name + strings.TrimPrefix(b.String(), "func")
			if onLinux {
				linux[fn.Name.Name] = sig
			} else {
				other[fn.Name.Name] = sig
			}
		}
	}
	if len(linux) == 0 || len(other) == 0 {
		t.Fatalf("found %d Linux and %d other functions: the files' build lines are not what this test expects", len(linux), len(other))
	}
	for _, name := range slices.Sorted(maps.Keys(linux)) {
		if other[name] != linux[name] {
			t.Errorf("Linux declares %s; unix_other.go declares %q: give the stub the same signature", linux[name], other[name])
		}
	}
	for _, name := range slices.Sorted(maps.Keys(other)) {
		if _, ok := linux[name]; !ok {
			t.Errorf("unix_other.go declares %s, which Linux does not", other[name])
		}
	}
	if _, err := os.Stat("unix_other.go"); err != nil {
		t.Error(err)
	}
}
