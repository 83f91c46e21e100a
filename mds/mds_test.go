package mds

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestParseMode(t *testing.T) {
	good := map[string]Mode{"": {}, "none": {}, "main": {Main: true}, "elan": {Elan: true},
		"main,elan": {Main: true, Elan: true}, "elan,main": {Main: true, Elan: true}, "all": {Main: true, Elan: true},
		"kernel": {Elan: true, Kernel: true}, "main,elan,kernel": {Main: true, Elan: true, Kernel: true}}
	for s, want := range good {
		if m, err := ParseMode(s); err != nil || m != want {
			t.Errorf("ParseMode(%q) = %v, %v; want %v", s, m, err, want)
		}
		if m, _ := ParseMode(want.String()); m != want { // the launcher passes String() to the ranks
			t.Errorf("ParseMode(%q) = %v, want %v", want.String(), m, want)
		}
	}
	for _, s := range []string{"mian", "main,", "on", "main;elan"} {
		_, err := ParseMode(s)
		if err == nil || !strings.Contains(err.Error(), s) || !strings.Contains(err.Error(), "none, main, elan, kernel, all") {
			t.Errorf("ParseMode(%q) err = %v; want the value and the valid ones named", s, err)
		}
	}
}

func TestParseSet(t *testing.T) {
	s, err := ParseSet("0,2-4")
	if err != nil || !s.Has(0) || s.Has(1) || !s.Has(3) || s.Has(5) {
		t.Fatalf("%v %v", s, err)
	}
	for _, bad := range []string{"x", "3-1", "-1", "1,,2"} {
		if _, err := ParseSet(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// The paper's accuracy claim (§3.4): computation plus communication add up to
// the run time. Here they must add up exactly, whatever the call pattern.
func TestCompPlusCommIsRunTime(t *testing.T) {
	r := New(DefaultConfig())
	spin := func(d time.Duration) {
		for t0 := time.Now(); time.Since(t0) < d; {
		}
	}
	for i := 0; i < 50; i++ {
		spin(time.Duration(i%5) * 10 * time.Microsecond)
		t0 := r.Begin(false) // a non-blocking call counts as computation
		r.End(Isend, t0, 100, false)
		t0 = r.Begin(true)
		spin(20 * time.Microsecond)
		r.End(Wait, t0, 0, true)
	}
	spin(50 * time.Microsecond)
	r.Close()
	s := r.Summary(0)
	if s.Comp.Total+s.Comm.Total != s.RunNs {
		t.Fatalf("comp %d + comm %d = %d, run time %d", s.Comp.Total, s.Comm.Total, s.Comp.Total+s.Comm.Total, s.RunNs)
	}
	if s.Comm.Count != 50 || s.Comp.Count != 51 {
		t.Fatalf("comm intervals %d, comp intervals %d; want 50 and 51", s.Comm.Count, s.Comp.Count)
	}
	if s.Comm.Total < 50*20*int64(time.Microsecond) {
		t.Fatalf("comm total %v shorter than the time spent blocked", time.Duration(s.Comm.Total))
	}
}

func TestDumpRoundTrip(t *testing.T) {
	r := New(DefaultConfig())
	for i := 1; i <= 10; i++ {
		t0 := r.Begin(true)
		r.End(Send, t0, int64(i*1000), true)
	}
	t0 := r.Begin(true)
	r.End(Recv, t0, 8, true)
	r.Close()
	dir := t.TempDir()
	if err := r.Dump(dir, 3); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(dir, "mmds-rank3.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	got, err := ReadSummary(f, 3)
	if err != nil {
		t.Fatal(err)
	}
	if want := r.Summary(3); !reflect.DeepEqual(got, want) {
		t.Fatalf("summary round trip:\n got %+v\nwant %+v", got, want)
	}
	hf, err := os.Open(filepath.Join(dir, "mmds-rank3.hlog"))
	if err != nil {
		t.Fatal(err)
	}
	defer hf.Close()
	hs, err := ReadHistograms(hf)
	if err != nil {
		t.Fatal(err)
	}
	if h := hs["MPI_Send.size"]; h == nil || h.TotalCount() != 10 || !h.ValuesAreEquivalent(h.Max(), 10000) {
		t.Fatalf("MPI_Send.size read back as %v", h)
	}
	if h := hs["comm"]; h == nil || h.TotalCount() != 11 {
		t.Fatalf("comm distribution read back as %v", h)
	}
	dist, _ := os.ReadFile(filepath.Join(dir, "mmds-rank3-dist.csv"))
	if !bytes.Contains(dist, []byte("MPI_Recv.size,8,8,1")) {
		t.Fatalf("dist csv lacks the 8-byte receive:\n%s", dist)
	}
}

func TestReadSummaryRejects(t *testing.T) {
	bad := []string{
		"",
		"primitive,count\n",
		summaryHeader + "\nMPI_Send,1,2,3,x\nrun_time,1,1,1,1\n",
		summaryHeader + "\nMPI_Frobnicate,1,2,3,4\nrun_time,1,1,1,1\n",
		summaryHeader + "\nMPI_Send,1,2,3,4\n",
		summaryHeader + "\nrun_time,1,1,1,1\n",
		summaryHeader + "\nMPI_Send,1,2,3,4\nMPI_Send,1,2,3,4\nrun_time,1,1,1,1\n",
	}
	for _, b := range bad {
		if _, err := ReadSummary(strings.NewReader(b), 0); err == nil {
			t.Errorf("accepted %q", b)
		}
	}
}

func FuzzReadSummary(f *testing.F) {
	var b bytes.Buffer
	WriteSummary(&b, Summary{Rows: []Row{{"MPI_Send", 1, 2, 3, 4}}, Comp: Row{"comp_granularity", 1, 1, 1, 1}, Comm: Row{"comm_overhead", 1, 1, 1, 1}, RunNs: 2})
	f.Add(b.String())
	f.Add("primitive,count,min_ns,max_ns,total_ns\ncomp_granularity,1,1,1,1\ncomm_overhead,0,0,0,0\nrun_time,1,1,1,1\n")
	f.Fuzz(func(t *testing.T, in string) {
		s, err := ReadSummary(strings.NewReader(in), 0)
		if err != nil {
			return
		}
		var out bytes.Buffer
		if err := WriteSummary(&out, s); err != nil {
			t.Fatal(err)
		}
		s2, err := ReadSummary(&out, 0)
		if err != nil || !reflect.DeepEqual(s.Rows, s2.Rows) || s.RunNs != s2.RunNs {
			t.Fatalf("re-read differs: %v\n%+v\n%+v", err, s, s2)
		}
	})
}

func FuzzReadHistograms(f *testing.F) {
	r := New(DefaultConfig())
	t0 := r.Begin(true)
	r.End(Send, t0, 10, true)
	r.Close()
	dir := f.TempDir()
	if err := r.Dump(dir, 0); err != nil {
		f.Fatal(err)
	}
	seed, _ := os.ReadFile(filepath.Join(dir, "mmds-rank0.hlog"))
	f.Add(string(seed))
	f.Fuzz(func(t *testing.T, in string) {
		ReadHistograms(strings.NewReader(in)) // must not panic or hang
	})
}

// BenchmarkRecord is the cost of recording one blocking primitive (two clock
// reads, the summary, two latency/size histograms and the comp/comm pair).
func BenchmarkRecord(b *testing.B) {
	r := New(DefaultConfig())
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		t0 := r.Begin(true)
		r.End(Send, t0, 4096, true)
	}
}

// BenchmarkNoRecord is the same call pattern with the clock reads only, for
// the ratio.
func BenchmarkNoRecord(b *testing.B) {
	r := New(DefaultConfig())
	var sink int64
	for i := 0; i < b.N; i++ {
		t0 := r.Now()
		sink += r.Now() - t0
	}
	_ = sink
}

// TestMemoryAtDefaults reports (and bounds) the MMDS memory per rank at the
// default settings, in the worst case: a program that calls every primitive
// (distributions are made on a primitive's first call), at 2 digits.
func TestMemoryAtDefaults(t *testing.T) {
	r := New(DefaultConfig())
	idle := r.Bytes()
	for p := Prim(0); p < NumPrims; p++ {
		r.End(p, r.Begin(true), 8, true)
	}
	n := r.Bytes()
	t.Logf("MMDS memory per rank at defaults: %d bytes before any call, %d with all %d primitives called", idle, n, NumPrims)
	if n > 8<<20 {
		t.Fatalf("MMDS uses %d bytes per rank at defaults; the paper's bound is a few MB", n)
	}
}
