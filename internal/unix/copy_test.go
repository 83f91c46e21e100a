//go:build linux

package unix

import (
	"fmt"
	"os"
	"testing"
	"unsafe"
)

func addr(b []byte) uint64 { return uint64(uintptr(unsafe.Pointer(&b[0]))) }

// BenchmarkCopy compares the ways an agent can move n bytes between two
// address spaces (here both its own: process_vm_* on itself costs the same
// page pinning and copying): memcpy, one process_vm_readv, and the agent's
// two copies through a staging buffer of the given block size.
func BenchmarkCopy(b *testing.B) {
	pid := os.Getpid()
	for _, n := range []int{1 << 20, 16 << 20} {
		src, dst := make([]byte, n), make([]byte, n)
		for i := range src {
			src[i] = byte(i)
		}
		copy(dst, src)
		b.Run(fmt.Sprintf("memcpy/%d", n), func(b *testing.B) {
			b.SetBytes(int64(n))
			for b.Loop() {
				copy(dst, src)
			}
		})
		b.Run(fmt.Sprintf("readv/%d", n), func(b *testing.B) {
			b.SetBytes(int64(n))
			for b.Loop() {
				if err := ReadFrom(pid, dst, addr(src)); err != nil {
					b.Fatal(err)
				}
			}
		})
		for _, blk := range []int{64 << 10, 256 << 10, 1 << 20, n} {
			if blk > n {
				continue
			}
			st := make([]byte, blk)
			b.Run(fmt.Sprintf("staged/%d/block=%d", n, blk), func(b *testing.B) {
				b.SetBytes(int64(n))
				for b.Loop() {
					for off := 0; off < n; off += blk {
						if err := ReadFrom(pid, st, addr(src[off:])); err != nil {
							b.Fatal(err)
						}
						if err := WriteTo(pid, st, addr(dst[off:])); err != nil {
							b.Fatal(err)
						}
					}
				}
			})
		}
	}
}
