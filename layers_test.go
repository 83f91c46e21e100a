package bcsmpi_test

// The layering test: docs/design.md §4's table against the imports of every
// package in the module, as `go list -json ./...` reports them. The table is
// the rule; this file only reads it (see §4 for what each column means).

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const designDoc = "docs/design.md"

// layers in order, lowest first.
var layers = []string{"L0", "L1", "L1½", "L2", "L3", "L4"}

// exclusive third-party modules: the one package pattern that may import each.
var exclusive = map[string]string{
	"golang.org/x/sys":       "internal/unix",
	"github.com/spf13/viper": "configs",
	"github.com/cilium/ebpf": "emds/...",
}

// exclusiveInModule: packages of this module (relative paths) and the one
// package pattern that may import each, test files included; the package's
// own tests aside. The core is the only way into the protocol (§4).
var exclusiveInModule = map[string]string{
	"scheduler": "internal/core",
}

type row struct {
	layer   int      // index in layers
	pattern string   // package pattern relative to the module: "mds", "emds/..."
	may     []string // tokens of the "may import" column
	line    int
}

// readTable parses §4's table: rows "| Lx | `pattern` | owns | may import |".
func readTable(t *testing.T) []row {
	t.Helper()
	f, err := os.Open(designDoc)
	if err != nil {
		t.Fatalf("%v: the layering table lives there", err)
	}
	defer f.Close()
	var rows []row
	in := false
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		l := sc.Text()
		if strings.HasPrefix(l, "## ") {
			in = strings.HasPrefix(l, "## 4.")
			continue
		}
		if !in || !strings.HasPrefix(l, "| L") {
			continue
		}
		cells := strings.Split(strings.Trim(l, "|"), "|")
		if len(cells) != 4 {
			t.Fatalf("%s:%d: %d cells, want 4 (layer, package, owns, may import): %s", designDoc, n, len(cells), l)
		}
		li := slices.Index(layers, strings.TrimSpace(cells[0]))
		if li < 0 {
			t.Fatalf("%s:%d: layer %q, want one of %v", designDoc, n, strings.TrimSpace(cells[0]), layers)
		}
		r := row{layer: li, pattern: strings.Trim(strings.TrimSpace(cells[1]), "`"), line: n}
		for _, tok := range strings.Split(cells[3], ",") {
			if tok = strings.TrimSpace(tok); tok != "" {
				r.may = append(r.may, tok)
			}
		}
		rows = append(rows, r)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	for i := 1; i < len(rows); i++ {
		if rows[i].layer < rows[i-1].layer {
			t.Errorf("%s:%d: row %s comes after %s: the table runs from the lowest layer up, so that it reads as the tree by layer; move the row", designDoc, rows[i].line, rows[i].pattern, layers[rows[i-1].layer])
		}
	}
	if len(rows) < 10 {
		t.Fatalf("%s: found %d rows in §4's table; has its format changed?", designDoc, len(rows))
	}
	return rows
}

// match reports whether rel (a package path relative to the module) matches
// pattern: the path itself, or with "/..." the directory and all below it.
func match(pattern, rel string) bool {
	if dir, ok := strings.CutSuffix(pattern, "/..."); ok {
		return rel == dir || strings.HasPrefix(rel, dir+"/")
	}
	return rel == pattern
}

func (r row) String() string {
	return fmt.Sprintf("%s %s (%s:%d, may import: %s)", layers[r.layer], r.pattern, designDoc, r.line, strings.Join(r.may, ", "))
}

// layerRange parses "L1" or "L0–L2" (en dash or hyphen) into [lo, hi].
func layerRange(tok string) (lo, hi int, ok bool) {
	a, b, isRange := strings.Cut(strings.ReplaceAll(tok, "–", "-"), "-")
	if !isRange {
		b = a
	}
	lo, hi = slices.Index(layers, a), slices.Index(layers, b)
	return lo, hi, lo >= 0 && hi >= lo
}

type pkg struct {
	ImportPath   string
	Name         string
	GoFiles      []string
	CgoFiles     []string
	Imports      []string
	TestImports  []string
	XTestImports []string
	Error        *struct{ Err string }
	Module       *struct{ Path string }
}

func goList(t *testing.T) []pkg {
	t.Helper()
	gobin, err := exec.LookPath("go")
	if err != nil {
		gobin = "/usr/local/go/bin/go"
	}
	cmd := exec.Command(gobin, "list", "-e", "-json", "./...")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	var pkgs []pkg
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p pkg
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("go list output: %v", err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs
}

// TestLayers checks every package of the module against §4's table.
func TestLayers(t *testing.T) {
	rows := readTable(t)
	pkgs := goList(t)
	if len(pkgs) == 0 || pkgs[0].Module == nil {
		t.Fatal("go list found no packages of a module")
	}
	mod := pkgs[0].Module.Path
	rel := func(path string) (string, bool) {
		if r, ok := strings.CutPrefix(path, mod+"/"); ok {
			return r, true
		}
		return "", false
	}
	rowOf := func(r string) (row, bool) {
		for _, rw := range rows {
			if match(rw.pattern, r) {
				return rw, true
			}
		}
		return row{}, false
	}
	for _, p := range pkgs {
		if p.Error != nil {
			t.Errorf("%s: %s", p.ImportPath, p.Error.Err)
		}
		r, ok := rel(p.ImportPath)
		if !ok {
			continue // the module root: this test only
		}
		own, found := rowOf(r)
		if !found {
			t.Errorf("%s is in no row of %s §4's table: add a row (layer, package, what it owns, what it may import)", r, designDoc)
			continue
		}
		for _, imp := range p.Imports {
			if why := disallowed(own, imp, mod, rowOf); why != "" {
				t.Errorf("%s imports %s: %s; the table allows %s", r, imp, why, own)
			}
		}
	}
	// Modules with one importer, test files included.
	for _, p := range pkgs {
		r, _ := rel(p.ImportPath)
		for _, imp := range slices.Concat(p.Imports, p.TestImports, p.XTestImports) {
			for m, only := range exclusive {
				if (imp == m || strings.HasPrefix(imp, m+"/")) && !match(only, r) {
					t.Errorf("%s imports %s: only %s may import %s (%s §4)", p.ImportPath, imp, only, m, designDoc)
				}
			}
			if dep, inModule := rel(imp); inModule {
				if only, ok := exclusiveInModule[dep]; ok && r != dep && !match(only, r) {
					t.Errorf("%s imports %s: only %s may import %s; use %s's names for it (%s §4)", p.ImportPath, imp, only, dep, only, designDoc)
				}
			}
		}
	}
}

// disallowed says why own's row does not allow importing imp ("" if it does).
func disallowed(own row, imp, mod string, rowOf func(string) (row, bool)) string {
	if !strings.Contains(strings.SplitN(imp, "/", 2)[0], ".") {
		return "" // the standard library (and cgo's "C")
	}
	r, inModule := strings.CutPrefix(imp, mod+"/")
	if !inModule {
		for _, tok := range own.may {
			if tok == "anything" || imp == tok || strings.HasPrefix(imp, tok+"/") {
				return ""
			}
		}
		return "a third-party import not in its row"
	}
	dep, ok := rowOf(r)
	if !ok {
		return "a package in no row of the table"
	}
	named, inLayers := false, false
	for _, tok := range own.may {
		switch lo, hi, isLayer := layerRange(tok); {
		case tok == "anything":
			return ""
		case isLayer:
			inLayers = inLayers || (lo <= dep.layer && dep.layer <= hi)
		case match(tok, r):
			named = true
		}
	}
	switch {
	case dep.layer > own.layer:
		return fmt.Sprintf("an upward import (%s is %s)", r, layers[dep.layer])
	case dep.layer == own.layer && !named:
		return fmt.Sprintf("a sibling in layer %s that the row does not name", layers[dep.layer])
	case !named && !inLayers:
		return fmt.Sprintf("%s (%s) is not in its row", r, layers[dep.layer])
	}
	return ""
}

// TestLayerTableParses guards the parser itself: the rows the runtime's
// rules hang on are read as written.
func TestLayerTableParses(t *testing.T) {
	rows := readTable(t)
	want := map[string]string{
		"internal/unix":   "L2 golang.org/x/sys",
		"internal/proto":  "L0 stdlib",
		"internal/jobenv": "L0 stdlib",
		"internal/plan":   "L0 internal/proto,internal/reduce",
		"nicthread":       "L3 L0–L2",
		"configs":         "L4 L0–L3,github.com/spf13/viper,github.com/spf13/pflag",
	}
	for _, r := range rows {
		if w, ok := want[r.pattern]; ok {
			if got := layers[r.layer] + " " + strings.Join(r.may, ","); got != w {
				t.Errorf("row %s reads as %q, want %q", r.pattern, got, w)
			}
			delete(want, r.pattern)
		}
	}
	for p := range want {
		t.Errorf("no row for %s", p)
	}
	for _, c := range []struct {
		tok    string
		lo, hi int
		ok     bool
	}{{"L0", 0, 0, true}, {"L0–L2", 0, 3, true}, {"L0-L1½", 0, 2, true}, {"L2–L0", 3, 0, false}, {"mpiapi", -1, -1, false}} {
		lo, hi, ok := layerRange(c.tok)
		if ok != c.ok || (ok && (lo != c.lo || hi != c.hi)) {
			t.Errorf("layerRange(%q) = %d, %d, %v; want %d, %d, %v", c.tok, lo, hi, ok, c.lo, c.hi, c.ok)
		}
	}
}
