package mpiapi

import (
	"os"
	"runtime"
	"testing"
	"unsafe"

	"github.com/bcsmpi/bcsmpi/internal/check"
	"github.com/bcsmpi/bcsmpi/internal/unix"
)

// BenchmarkFlowCopy is the receiving rank's copy of a 16 MiB pull entry
// (one message of bench/bw; the entries cycle through four 16 MiB buffers,
// as bw's window does) without the checks and under flow alone, side by
// side in one run:
//
//	none      one process_vm_readv of the entry (unchecked)
//	flow      flowCopy: the copy in pieces (check.PieceSize), each summed
//	          right after its copy, while in the cache (now)
//	deferred  one process_vm_readv, then the sum of the whole entry (the
//	          scheme before: its sum read the entry from memory again)
//	sender    the sender's block sums of its 16 MiB buffer in place
//	          (flowSums), on the sender's core, while the copy runs
//	ratio     none and flow alternated in each iteration: reports
//	          flow/none and deferred/none, in wall time and in the
//	          thread's CPU time (a loaded host disturbs the latter less)
//
// cpu-ns/op is the thread's CPU time. On a shared host compare the ratios
// of one run, not runs:
//
//	go test -run NONE -bench FlowCopy -count 5 ./mpiapi
func BenchmarkFlowCopy(b *testing.B) {
	const n, bufs = 16 << 20, 4
	src, dst := make([]byte, n*bufs), make([]byte, n*bufs)
	for i := range src {
		src[i] = byte(i*7 + i>>12)
	}
	pid := os.Getpid()
	base := uint64(uintptr(unsafe.Pointer(unsafe.SliceData(src))))
	if unix.ReadFrom(pid, dst, base) != nil { // fault the pages in
		b.Skip("process_vm_readv refused")
	}
	var sink uint32
	sums := make([]uint32, 0, check.Blocks(n))
	run := map[string]func(off int){
		"none": func(off int) { _ = unix.ReadFrom(pid, dst[off:off+n], base+uint64(off)) },
		"flow": func(off int) {
			s, ok := flowCopy(pid, dst[off:off+n], base+uint64(off))
			if !ok {
				b.Fatal("copy failed")
			}
			sink = s
		},
		"deferred": func(off int) {
			_ = unix.ReadFrom(pid, dst[off:off+n], base+uint64(off))
			sink = check.Sum(dst[off : off+n])
		},
		"sender": func(off int) { sums = check.Sums(sums[:0], src[off:off+n]) },
	}
	timed := func(f func(int), off int) (wall, cpu int64) {
		w, c := unix.Now(), unix.ThreadCPUTime()
		f(off)
		return unix.Now() - w, unix.ThreadCPUTime() - c
	}
	for _, name := range []string{"none", "flow", "deferred", "sender"} {
		b.Run(name, func(b *testing.B) {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			b.SetBytes(n)
			var cpu int64
			i := 0
			for b.Loop() {
				_, c := timed(run[name], i%bufs*n)
				cpu += c
				i++
			}
			b.ReportMetric(float64(cpu)/float64(i), "cpu-ns/op")
		})
	}
	b.Run("ratio", func(b *testing.B) {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		var wall, cpu [3]int64
		i := 0
		for b.Loop() {
			for j, name := range []string{"none", "flow", "deferred"} {
				w, c := timed(run[name], (i+j)%bufs*n)
				wall[j] += w
				cpu[j] += c
			}
			i++
		}
		b.ReportMetric(float64(wall[1])/float64(wall[0]), "flow/none")
		b.ReportMetric(float64(cpu[1])/float64(cpu[0]), "flow/none-cpu")
		b.ReportMetric(float64(wall[2])/float64(wall[0]), "deferred/none")
		b.ReportMetric(float64(cpu[2])/float64(cpu[0]), "deferred/none-cpu")
	})
	runtime.KeepAlive(sink)
}
