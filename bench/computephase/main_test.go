package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestField(t *testing.T) {
	status := []byte("Name:\tx\nvoluntary_ctxt_switches:\t12\nnonvoluntary_ctxt_switches:\t7\n")
	if got := field(status, "nonvoluntary_ctxt_switches"); got != 7 {
		t.Errorf("nonvoluntary_ctxt_switches = %d, want 7", got)
	}
	sched := []byte("se.sum_exec_runtime                          :             3.1\nse.nr_migrations                             :                    42\n")
	if got := field(sched, "se.nr_migrations"); got != 42 {
		t.Errorf("se.nr_migrations = %d, want 42", got)
	}
	if got := field(sched, "absent"); got != -1 {
		t.Errorf("absent key = %d, want -1", got)
	}
}

// Phases of real work are counted (wall time, time on CPU, each phase) and
// written in the format kernelexplain reads.
func TestPhaseWrites(t *testing.T) {
	r := &result{}
	for i := 0; i < 3; i++ {
		r.phase(200_000)
	}
	if r.wall <= 0 || r.oncpu <= 0 || r.runq < 0 || len(r.phases) != 3 {
		t.Fatalf("after 3 phases: %+v", r)
	}
	path := filepath.Join(t.TempDir(), "x.csv")
	if err := r.write(path, "plain", -1); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != 2 || lines[0] != "mode,rank,iters,wall_ns,oncpu_ns,runq_ns,nivcsw,nmigr,p50_ns,p90_ns" || !strings.HasPrefix(lines[1], "plain,-1,3,") {
		t.Errorf("file:\n%s", b)
	}
}
