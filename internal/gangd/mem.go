package gangd

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"

	"github.com/bcsmpi/bcsmpi/internal/launch"
)

// AssumedRankBytes is the memory a rank is assumed to need when its job
// does not declare it (bcsrun --mem-per-rank): 64 MiB, a small MPI program
// with its runtime and buffers.
const AssumedRankBytes = 64 << 20

// footprint is what a job needs resident: its ranks and its nodes'
// shared-memory regions.
type footprint struct {
	ranks    int
	perRank  uint64
	declared bool
	shm      uint64
}

func (f footprint) total() uint64 {
	r := uint64(f.ranks)
	if f.perRank > 0 && r > math.MaxUint64/f.perRank {
		return math.MaxUint64
	}
	return sat(r*f.perRank, f.shm)
}

func sat(a, b uint64) uint64 {
	if a > math.MaxUint64-b {
		return math.MaxUint64
	}
	return a + b
}

// footprintOf computes a job's footprint. The job's ranks and nodes are
// checked (by the caller) first.
func footprintOf(j *JobSpec) footprint {
	f := footprint{ranks: j.Ranks, perRank: j.MemPerRank, declared: j.MemPerRank > 0}
	if !f.declared {
		f.perRank = AssumedRankBytes
	}
	cfg := j.Config
	nodes := max(1, min(cfg.Nodes, j.Ranks))
	if cfg.PPN > 0 {
		nodes = (j.Ranks + cfg.PPN - 1) / cfg.PPN
	}
	counts := make([]int, nodes)
	for _, n := range launch.NodeOf(j.Ranks, nodes, cfg.Cyclic(), cfg.PPN) {
		counts[n]++
	}
	for _, c := range counts {
		if c > 0 {
			f.shm = sat(f.shm, uint64(cfg.Geometry(c).Size()))
		}
	}
	return f
}

// fits says why a job of footprint f does not fit in avail bytes ("" when
// it does).
func (f footprint) fits(avail uint64) string {
	if f.total() <= avail {
		return ""
	}
	how := "declared with --mem-per-rank"
	if !f.declared {
		how = "assumed per rank; declare the real figure with --mem-per-rank"
	}
	return fmt.Sprintf("bcsrun: refused: the job needs %s (%d ranks × %s %s, plus %s of shared memory) and this machine has %s available (MemAvailable in /proc/meminfo)",
		FormatBytes(f.total()), f.ranks, FormatBytes(f.perRank), how, FormatBytes(f.shm), FormatBytes(avail))
}

// MemAvailable is the kernel's estimate of the memory available for new
// work without swapping (MemAvailable in /proc/meminfo), in bytes.
func MemAvailable() (uint64, error) {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	return parseMemAvailable(f)
}

func parseMemAvailable(r io.Reader) (uint64, error) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), "MemAvailable:")
		if !ok {
			continue
		}
		fs := strings.Fields(rest)
		if len(fs) != 2 || fs[1] != "kB" {
			return 0, fmt.Errorf("gangd: /proc/meminfo: MemAvailable line %q, want \"MemAvailable: N kB\"", sc.Text())
		}
		kb, err := strconv.ParseUint(fs[0], 10, 64)
		if err != nil || kb > math.MaxUint64/1024 {
			return 0, fmt.Errorf("gangd: /proc/meminfo: MemAvailable %q is not a number of kB", fs[0])
		}
		return kb * 1024, nil
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return 0, fmt.Errorf("gangd: /proc/meminfo has no MemAvailable line")
}

// ParseBytes reads a size: a whole number with an optional unit, K, M, G or
// T (powers of 1024; KiB, MB and the like are read the same), or none for
// bytes. Zero is refused.
func ParseBytes(s string) (uint64, error) {
	t := strings.TrimSpace(s)
	upper := strings.ToUpper(t)
	num := strings.TrimRight(upper, "KMGTIB")
	unit := strings.TrimSpace(upper[len(num):])
	num = strings.TrimSpace(num)
	shift := map[string]uint{"": 0, "B": 0, "K": 10, "KB": 10, "KIB": 10, "M": 20, "MB": 20, "MIB": 20, "G": 30, "GB": 30, "GIB": 30, "T": 40, "TB": 40, "TIB": 40}
	sh, okUnit := shift[unit]
	n, err := strconv.ParseUint(num, 10, 64)
	if !okUnit || err != nil || n == 0 || n > math.MaxUint64>>sh {
		return 0, fmt.Errorf("%q, want a size such as 512M, 2G or 1048576 (bytes; units K, M, G, T are powers of 1024), more than 0", s)
	}
	return n << sh, nil
}

// FormatBytes writes n in the largest binary unit it reaches: "64 MiB",
// "23.5 GiB".
func FormatBytes(n uint64) string {
	units := []string{"bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}
	v, u := float64(n), 0
	for v >= 1024 && u < len(units)-1 {
		v /= 1024
		u++
	}
	if u == 0 {
		return fmt.Sprintf("%d bytes", n)
	}
	if v == math.Trunc(v) {
		return fmt.Sprintf("%.0f %s", v, units[u])
	}
	return fmt.Sprintf("%.1f %s", v, units[u])
}
