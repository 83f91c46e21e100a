package check

import (
	"hash/crc32"
	"testing"
)

// BenchmarkSums measures the block sums (Sums) of a buffer in the cache
// (128 KiB, a piece) and in memory (64 MiB), with the polynomial in use
// (CRC-32, IEEE) and with CRC-32C (Castagnoli), the one used before: the
// checks' cost is mostly these sums. On the development host (Xeon with
// AVX-512 VPCLMULQDQ, which Go's IEEE code uses) IEEE took about half the
// CPU time of Castagnoli in the cache:
//
//	go test -run NONE -bench Sums -count 5 ./internal/check
func BenchmarkSums(b *testing.B) {
	castagnoli := crc32.MakeTable(crc32.Castagnoli)
	for _, size := range []struct {
		name string
		n    int
	}{{"piece", PieceSize}, {"64MiB", 64 << 20}} {
		buf := make([]byte, size.n)
		for i := range buf {
			buf[i] = byte(i % 251)
		}
		sums := make([]uint32, 0, Blocks(len(buf)))
		b.Run("ieee/"+size.name, func(b *testing.B) {
			b.SetBytes(int64(len(buf)))
			for b.Loop() {
				sums = Sums(sums[:0], buf)
			}
		})
		b.Run("castagnoli/"+size.name, func(b *testing.B) {
			b.SetBytes(int64(len(buf)))
			for b.Loop() {
				sums = sums[:0]
				for off := 0; off < len(buf); off += BlockSize {
					sums = append(sums, crc32.Checksum(buf[off:min(off+BlockSize, len(buf))], castagnoli))
				}
			}
		})
	}
}
