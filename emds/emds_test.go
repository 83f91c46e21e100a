package emds

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestWindowRoundTrip(t *testing.T) {
	sel, err := SelectMetrics(GlobalMetrics, "getts,USRDEM")
	if err != nil {
		t.Fatal(err)
	}
	w := NewWindow(GlobalMetrics, sel, 100, 5)
	vals := make([]int64, len(GlobalMetrics))
	for k := uint64(95); k < 110; k++ {
		vals[0], vals[5] = int64(k*10), int64(k%3)
		if k != 102 { // a skipped slice leaves no row
			w.Record(k, vals)
		}
	}
	var b bytes.Buffer
	if err := w.WriteCSV(&b); err != nil {
		t.Fatal(err)
	}
	want := "slice,GETTS,USRDEM\n100,1000,1\n101,1010,2\n103,1030,1\n104,1040,2\n"
	if b.String() != want {
		t.Fatalf("got\n%s\nwant\n%s", b.String(), want)
	}
	s, err := ReadCSV(strings.NewReader(want))
	if err != nil {
		t.Fatal(err)
	}
	col, _ := s.Col("getts")
	if !reflect.DeepEqual(s.Slices, []uint64{100, 101, 103, 104}) || !reflect.DeepEqual(col, []int64{1000, 1010, 1030, 1040}) {
		t.Fatalf("read back %+v", s)
	}
	if _, err := s.Col("NCOLLMSM"); err == nil || !strings.Contains(err.Error(), "GETTS, USRDEM") {
		t.Fatalf("missing metric error: %v", err)
	}
	if w.Bytes() != 2*5*8+5 {
		t.Fatalf("window uses %d bytes", w.Bytes())
	}
}

func TestSelectMetricsRejects(t *testing.T) {
	_, err := SelectMetrics(LocalMetrics, "LTDEM,NCOLL")
	if err == nil || !strings.Contains(err.Error(), `"NCOLL"`) || !strings.Contains(err.Error(), "NCOLLMSM") {
		t.Fatalf("err = %v", err)
	}
}

func TestReadCSVRejects(t *testing.T) {
	for _, in := range []string{"", "slices,A\n", "slice,A,A\n", "slice,A\n1,2\n1,3\n", "slice,A\nx,1\n", "slice,A\n1,y\n", "slice,A\n1,2,3\n"} {
		if _, err := ReadCSV(strings.NewReader(in)); err == nil {
			t.Errorf("accepted %q", in)
		}
	}
}

func FuzzReadCSV(f *testing.F) {
	f.Add("slice,GETTS,GTDEM\n1,500000,1000\n2,500100,900\n")
	f.Add("slice\n3\n")
	f.Fuzz(func(t *testing.T, in string) {
		s, err := ReadCSV(strings.NewReader(in))
		if err != nil {
			return
		}
		for i := range s.Cols {
			if len(s.Cols[i]) != len(s.Slices) {
				t.Fatalf("column %s has %d values for %d slices", s.Names[i], len(s.Cols[i]), len(s.Slices))
			}
		}
	})
}

func BenchmarkRecord(b *testing.B) {
	w := NewWindow(LocalMetrics, nil, 0, 10000)
	vals := make([]int64, len(LocalMetrics))
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		w.Record(uint64(i%10000), vals)
	}
}

// Dump writes the whole file with the given permissions and leaves no
// temporary file beside it.
func TestDumpModeAndNoTemporary(t *testing.T) {
	w := NewWindow(GlobalMetrics, nil, 0, 4)
	w.Record(0, make([]int64, len(GlobalMetrics)))
	for _, mode := range []os.FileMode{0o600, 0o640} {
		dir := t.TempDir()
		path := filepath.Join(dir, "emds-global.csv")
		if err := w.Dump(path, mode); err != nil {
			t.Fatal(err)
		}
		fi, err := os.Stat(path)
		if err != nil || fi.Mode().Perm() != mode {
			t.Fatalf("mode %v, want %v (%v)", fi.Mode().Perm(), mode, err)
		}
		if ents, _ := os.ReadDir(dir); len(ents) != 1 {
			t.Fatalf("%d files in the directory, want just the dump", len(ents))
		}
	}
	if err := w.Dump(filepath.Join(t.TempDir(), "no", "such", "dir.csv"), 0o600); err == nil {
		t.Fatal("dump into a missing directory succeeded")
	}
}
