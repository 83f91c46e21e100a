package nicthread

import (
	"os"
	"time"
	"unsafe"

	"github.com/bcsmpi/bcsmpi/internal/unix"
)

// Bounds of the budget AutoBudget chooses.
const (
	AutoBudgetMin = 256 << 10
	AutoBudgetMax = 64 << 20
)

// AutoBudget sizes bytes_per_slice_max from this host's copy rate: the bytes
// one process_vm_readv (a pull order's copy) moves in half a slice, measured
// now (best of five copies of 4 MiB, a few milliseconds), rounded down to
// 64 KiB and bounded to AutoBudgetMin .. AutoBudgetMax. Half a slice leaves
// room for the exchange, the scheduling and a wake-up; a chunk the agent has
// to copy itself (two copies) then takes about the whole slice. A fixed
// budget is a fixed bandwidth (budget / slice) whatever the host; this one
// follows the host. Every node of a job must use the same budget (each
// computes the same plan), so the launcher calls it once per job and hands
// the result to every agent.
func AutoBudget(slice time.Duration) uint64 {
	const n = 4 << 20
	src, dst := make([]byte, n), make([]byte, n)
	for i := range src {
		src[i] = byte(i)
	}
	copy(dst, src) // both mapped before timing
	pid, addr := os.Getpid(), uint64(uintptr(unsafe.Pointer(&src[0])))
	best := time.Duration(1 << 62)
	for range 5 {
		t0 := unix.Now()
		if err := unix.ReadFrom(pid, dst, addr); err != nil {
			return AutoBudgetMin // copies refused here: the agent's path, keep it small
		}
		best = min(best, time.Duration(unix.Now()-t0))
	}
	b := uint64(float64(n) * float64(slice/2) / float64(max(best, 1)))
	return min(max(b&^(64<<10-1), AutoBudgetMin), AutoBudgetMax)
}
