package nicthread

import (
	"os"
	"runtime"
	"testing"
	"unsafe"

	"github.com/bcsmpi/bcsmpi/internal/check"
	"github.com/bcsmpi/bcsmpi/internal/proto"
	"github.com/bcsmpi/bcsmpi/internal/unix"
)

// The agent's share of the checks' cost, before and after the passes were
// cut, in one run (the machine these figures come from is shared, so
// compare the two sub-benchmarks of one run, not runs):
//
//	go test -run NONE -bench 'FlowSource|SendPiece' -count 5 ./nicthread

// benchSend sets up a node of two ranks played by this process, under
// buffers,flow, with a send of a 64 MiB buffer by rank 0 whose check header
// is set, and returns the agent, the buffer and its header.
func benchSend(b *testing.B) (*Agent, []byte, []uint32) {
	nodes := checkNodes(b, false, check.Mode{Buffers: true, Flow: true})
	if err := runSlices(nodes, 1); err != nil { // the agent verifies the ranks' processes
		b.Fatal(err)
	}
	a := nodes[0].a
	buf := message(64 << 20)
	hdr := check.NewHeader(buf)
	rankBlock(nodes, 0).SetCheck(0, uint64(uintptr(unsafe.Pointer(unsafe.SliceData(hdr)))))
	a.chk.sends[inlineKey{0, 1}] = 0 // as drained() records it
	return a, buf, hdr
}

// BenchmarkFlowSource is the agent's work for the source sum of a 1 MiB
// pull chunk (the default slice budget) (the receiving rank copies it):
// "read" reads the chunk from the sender and sums it (a send without a
// check header: under flow alone before the sender summed large sends
// after posting them, and under buffers,flow before the post sums were
// used), "post" combines the send buffer's block sums (under buffers and,
// for a send of at least check.FlowSumMin bytes within the node, under flow
// alone now; the chunk starts 100 bytes into a block, so the partial blocks
// at its ends are read). The chunks cycle through the 64 MiB
// buffer, which is not in the cache, as a bandwidth test's are not.
func BenchmarkFlowSource(b *testing.B) {
	a, buf, hdr := benchSend(b)
	const n = 1 << 20
	var cs []proto.Chunk
	for off := 100; off+n <= len(buf); off += n {
		cs = append(cs, proto.Chunk{Xfer: 1, Src: 0, Dst: 1, SendSeq: 1, SrcAddr: addrOf(buf) + uint64(off), Len: n})
	}
	for _, v := range []struct {
		name string
		sum  func(c *proto.Chunk) (uint32, error)
	}{
		{"read", a.sumSource},
		{"post", func(c *proto.Chunk) (uint32, error) {
			s, ok, err := a.postSource(c)
			if !ok && err == nil {
				b.Fatal("no header")
			}
			return s, err
		}},
	} {
		b.Run(v.name, func(b *testing.B) {
			b.SetBytes(n)
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			i := 0
			t0 := threadCPU()
			for b.Loop() {
				if _, err := v.sum(&cs[i%len(cs)]); err != nil {
					b.Fatal(err)
				}
				i++
			}
			b.ReportMetric(float64(threadCPU()-t0)/float64(i), "cpu-ns/op")
		})
	}
	runtime.KeepAlive(hdr)
}

// BenchmarkSendPiece is the agent's check work on one piece (128 KiB, in
// the cache) of a send it copies under buffers,flow: "separate" compares
// the piece's blocks with the post and then sums the piece for the flow
// check (two passes, as before this change), "fused" does both in one pass
// (checkRead with the flow sum).
func BenchmarkSendPiece(b *testing.B) {
	a, buf, hdr := benchSend(b)
	c := proto.Chunk{Xfer: 1, Src: 0, Dst: 1, SendSeq: 1, SrcAddr: addrOf(buf), Len: 1 << 20}
	v, ok := a.sendView(&c, false)
	if !ok {
		b.Fatal("no header")
	}
	for _, fused := range []bool{false, true} {
		name := "separate"
		if fused {
			name = "fused"
		}
		b.Run(name, func(b *testing.B) {
			b.SetBytes(check.PieceSize)
			var src uint32
			off := 0
			for b.Loop() {
				p := buf[off : off+check.PieceSize] // 1 MiB cycled: in the cache
				if fused {
					a.checkRead(1, &v, off, p, &src)
				} else {
					a.checkRead(1, &v, off, p, nil)
					src = check.Update(src, p)
				}
				off = (off + check.PieceSize) % (1 << 20)
			}
		})
	}
	runtime.KeepAlive(hdr)
}

// BenchmarkPullServe is the receiving rank's work for one 1 MiB pull entry
// under flow alone (package mpiapi, servePull), before and after the
// destination sum was taken off the slice's critical path, in one run:
// "fused" copies the entry piece by piece (check.PieceSize) and sums each
// piece while it is in the cache (before: all of it done before the order
// is reported done), "copy" is the single process_vm_readv of the entry
// (now, before the order is reported done; the same as with the checks
// off), and "sum" the sum of the entry just copied (now, after the order
// is reported done; the copy before it is not timed). The entries cycle
// through 64 MiB buffers, as a bandwidth test's do. cpu-ns/op is the
// thread's CPU time in what is timed, which a loaded host disturbs less
// than the wall time:
//
//	go test -run NONE -bench PullServe -count 5 ./nicthread
func BenchmarkPullServe(b *testing.B) {
	const n, size = 1 << 20, 64 << 20
	src, dst := message(size), make([]byte, size)
	pid := os.Getpid()
	copyIn := func(d []byte, off int) {
		if err := unix.ReadFrom(pid, d, addrOf(src)+uint64(off)); err != nil {
			b.Fatal(err)
		}
	}
	copyIn(dst, 0) // fault the pages in
	for _, v := range []string{"fused", "copy", "sum"} {
		b.Run(v, func(b *testing.B) {
			b.SetBytes(n)
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			var cpu int64
			off, ops := 0, 0
			var s uint32
			for b.Loop() {
				d := dst[off : off+n]
				if v == "sum" {
					b.StopTimer()
					copyIn(d, off) // just copied, as after the order
					b.StartTimer()
				}
				t := threadCPU()
				switch v {
				case "fused":
					s = 0
					for p := 0; p < n; p += check.PieceSize {
						copyIn(d[p:p+check.PieceSize], off+p)
						s = check.Update(s, d[p:p+check.PieceSize])
					}
				case "copy":
					copyIn(d, off)
				case "sum":
					s = check.Sum(d)
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

var sink uint32

// threadCPU is the calling thread's CPU time in nanoseconds.
func threadCPU() int64 { return unix.ThreadCPUTime() }
