//go:build linux

package unix

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"strconv"
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

// BenchmarkCopyRemote is a pull order's copy as a rank makes it: one
// process_vm_readv from another process (a child holding n bytes) into this
// one, beside a memcpy of the same size in this process, so the two rates
// come from one run (a loaded or frequency-scaled host moves both):
//
//	go test -run X -bench CopyRemote ./internal/unix
func BenchmarkCopyRemote(b *testing.B) {
	for _, n := range []int{1 << 20, 16 << 20} {
		c := exec.Command(os.Args[0], "-test.run=^TestCopyChild$")
		c.Env = append(os.Environ(), "BCS_COPY_CHILD="+strconv.Itoa(n))
		in, err := c.StdinPipe()
		if err != nil {
			b.Fatal(err)
		}
		out, err := c.StdoutPipe()
		if err != nil {
			b.Fatal(err)
		}
		if err := c.Start(); err != nil {
			b.Fatal(err)
		}
		var remote uint64
		if _, err := fmt.Fscan(bufio.NewReader(out), &remote); err != nil {
			b.Fatal(err)
		}
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
		b.Run(fmt.Sprintf("readv-remote/%d", n), func(b *testing.B) {
			b.SetBytes(int64(n))
			for b.Loop() {
				if err := ReadFrom(c.Process.Pid, dst, remote); err != nil {
					b.Fatal(err)
				}
			}
		})
		if dst[n-1] != byte(n-1) {
			b.Errorf("byte %d read from the child = %d, want %d", n-1, dst[n-1], byte(n-1))
		}
		in.Close()
		if err := c.Wait(); err != nil {
			b.Fatal(err)
		}
	}
}

// TestCopyChild is BenchmarkCopyRemote's child: with BCS_COPY_CHILD=n it
// fills n bytes, prints their address and waits for its stdin to close.
// Without it (an ordinary test run) it returns at once.
func TestCopyChild(t *testing.T) {
	n, err := strconv.Atoi(os.Getenv("BCS_COPY_CHILD"))
	if err != nil {
		return
	}
	buf := make([]byte, n)
	for i := range buf {
		buf[i] = byte(i)
	}
	fmt.Println(addr(buf))
	var one [1]byte
	os.Stdin.Read(one[:])
	if buf[n-1] != byte(n-1) {
		t.Fatalf("buffer changed")
	}
}
