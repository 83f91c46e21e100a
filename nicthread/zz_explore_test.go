package nicthread

import (
	"os"
	"runtime"
	"testing"

	"github.com/bcsmpi/bcsmpi/internal/check"
	"github.com/bcsmpi/bcsmpi/internal/unix"
)

func BenchmarkExploreSrc(b *testing.B) {
	const n, size = 1 << 20, 64 << 20
	src := message(size)
	pid := os.Getpid()
	buf := make([]byte, n)
	for _, piece := range []int{16 << 10, 32 << 10, 128 << 10, 256 << 10, 1 << 20} {
		for _, sum := range []bool{false, true} {
			name := map[bool]string{false: "read", true: "readsum"}[sum]
			b.Run(name+"/"+itoa(piece>>10)+"k", func(b *testing.B) {
				b.SetBytes(n)
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
				var cpu int64
				off, ops := 0, 0
				var s uint32
				for b.Loop() {
					t := threadCPU()
					for p := 0; p < n; p += piece {
						d := buf[:piece]
						if err := unix.ReadFrom(pid, d, addrOf(src)+uint64(off+p)); err != nil {
							b.Fatal(err)
						}
						if sum {
							s = check.Update(s, d)
						}
					}
					cpu += threadCPU() - t
					off = (off + n) % size
					ops++
				}
				b.ReportMetric(float64(cpu)/float64(ops), "cpu-ns/op")
				sink = s
			})
		}
	}
}

func itoa(i int) string {
	s := ""
	for {
		s = string(rune('0'+i%10)) + s
		i /= 10
		if i == 0 {
			return s
		}
	}
}
