package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/bcsmpi/bcsmpi/internal/unix"
)

// cpuList parses a Cpus_allowed_list ("0-3,6").
func cpuList(t *testing.T, s string) []int {
	t.Helper()
	var out []int
	for _, part := range strings.Split(strings.TrimSpace(s), ",") {
		lo, hi, rng := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		b := a
		if rng {
			b, err = strconv.Atoi(hi)
		}
		if err != nil {
			t.Fatalf("Cpus_allowed_list %q: %v", s, err)
		}
		for c := a; c <= b; c++ {
			out = append(out, c)
		}
	}
	return out
}

// Ranks pinned to cores (key rank_pin): on pins every rank to one of the
// launcher's cores, round robin in rank order; auto pins the ranks of a job
// in a gang (bcsd start) when they fit in the cores, and leaves a job
// outside a gang, or one with more ranks than cores, to the kernel; off
// never pins. Each rank says what its own mask is.
func TestRankPin(t *testing.T) {
	cpus, err := unix.Affinity()
	if err != nil {
		t.Skipf("no CPU affinity here: %v", err)
	}
	prog := []string{"/bin/sh", "-c", `echo "rank $BCS_RANK $(grep Cpus_allowed_list /proc/self/status | cut -f2)"`}
	masks := func(t *testing.T, env []string, n int) [][]int {
		t.Helper()
		r := command(t, env, bin, "", filepath.Join(bin, "bcsrun"), append([]string{"-n", strconv.Itoa(n)}, prog...)...)
		if r.code != 0 {
			t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}
		out := make([][]int, n)
		for _, l := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
			var rank int
			var list string
			if _, err := fmt.Sscanf(l, "rank %d %s", &rank, &list); err != nil || rank < 0 || rank >= n {
				t.Fatalf("rank output %q: %v", l, err)
			}
			out[rank] = cpuList(t, list)
		}
		return out
	}
	wantPinned := func(t *testing.T, what string, got [][]int) {
		t.Helper()
		for r, m := range got {
			if want := []int{cpus[r%len(cpus)]}; !slices.Equal(m, want) {
				t.Errorf("%s: rank %d's CPUs %v, want %v (the launcher's %v, round robin)", what, r, m, want, cpus)
			}
		}
	}
	wantFree := func(t *testing.T, what string, got [][]int) {
		t.Helper()
		for r, m := range got {
			if !slices.Equal(m, cpus) {
				t.Errorf("%s: rank %d's CPUs %v, want the launcher's %v (not pinned)", what, r, m, cpus)
			}
		}
	}
	base := append(os.Environ(), "BCS_GANG=off", "BCS_RUNTIME_DIR="+filepath.Join(t.TempDir(), "none"))
	wantPinned(t, "on", masks(t, append(base, "BCS_RANK_PIN=on"), len(cpus)+1))
	wantFree(t, "auto outside a gang", masks(t, base, 2))
	wantFree(t, "off", masks(t, append(base, "BCS_RANK_PIN=off"), 2))
	if r := command(t, append(base, "BCS_RANK_PIN=maybe"), bin, "", filepath.Join(bin, "bcsrun"), "-n", "1", "true"); r.code != 2 || !strings.Contains(r.stderr, `bcsrun: configs: rank_pin = "maybe", want "auto", "on" or "off"`) {
		t.Errorf("BCS_RANK_PIN=maybe: exit %d, want 2 naming the value\n%s", r.code, r.stderr)
	}

	g := startGangd(t, "")
	genv := append(append([]string(nil), g.env...), "BCS_GANG=on")
	wantPinned(t, "auto in a gang", masks(t, genv, len(cpus)))
	wantFree(t, "auto in a gang, more ranks than cores", masks(t, genv, len(cpus)+1))
	wantFree(t, "off in a gang", masks(t, append(genv, "BCS_RANK_PIN=off"), len(cpus)))
	g.stop(t)
}
