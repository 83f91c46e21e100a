package nicthread

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"testing"
	"unsafe"

	"github.com/bcsmpi/bcsmpi/internal/core"
	"github.com/bcsmpi/bcsmpi/internal/proto"
	"github.com/bcsmpi/bcsmpi/internal/reduce"
	"github.com/bcsmpi/bcsmpi/internal/shm"
	"github.com/bcsmpi/bcsmpi/internal/unix"
)

// fuzzGeometry: two ranks on one node, small rings.
var fuzzGeometry = shm.Geometry{Ranks: 2, RingSlots: 8, ReqMax: 16, InlineMax: 64}

const fuzzCtl = 16 // control bytes at the start of a fuzz input, then each block's ring

// fuzzInput lays out what two ranks wrote: control-page values and raw ring
// slots (descriptors encoded at 0, inline payloads at SlotHeader).
func fuzzInput(ctl [fuzzCtl]byte, rings [2][]proto.Descriptor) []byte {
	g := fuzzGeometry
	out := append([]byte(nil), ctl[:]...)
	for _, ds := range rings {
		ring := make([]byte, g.RingSlots*g.SlotSize())
		for i, d := range ds {
			s := ring[i*g.SlotSize():]
			proto.AppendDescriptor(s[:0], d)
			for j := range g.InlineMax {
				s[shm.SlotHeader+j] = byte(j)
			}
		}
		out = append(out, ring...)
	}
	return out
}

// TestMain doubles as the fuzz target's rank process (BCS_FUZZ_RANK=1): it
// holds an arena of fuzzArena bytes, prints its address and waits for its
// stdin to close.
func TestMain(m *testing.M) {
	if os.Getenv("BCS_FUZZ_RANK") == "1" {
		arena := make([]byte, fuzzArena)
		fmt.Println(uint64(uintptr(unsafe.Pointer(&arena[0]))))
		io.Copy(io.Discard, os.Stdin)
		runtime.KeepAlive(arena)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

const fuzzArena = 1 << 20

// FuzzDrain feeds random control pages and ring contents of two ranks to the
// agent's drain, MSM, TX and publish paths for three slices. Whatever the
// ranks wrote, the agent must not panic, and must write nothing outside what
// it owns: the header's slice and abort words, each block's tail and wake
// words, and the completion records (the completion table's padding and the
// rings stay as the ranks left them). The ranks' process is a child (this
// binary, see TestMain): descriptor addresses are offsets into its arena, so
// the agent's process_vm copies land there or fail, never in the fuzzer.
//
//	go test -run '^$' -fuzz '^FuzzDrain$' -fuzztime 60s -fuzzminimizetime 2s ./nicthread
//
// (A short -fuzzminimizetime keeps the workers fuzzing: minimizing a new
// 3 KiB input for the default minute shows as "0/sec".)
func FuzzDrain(f *testing.F) {
	send := func(from, to proto.Rank, seq uint64, n uint64) proto.Descriptor {
		return proto.Descriptor{Kind: proto.KindSend, Inline: n <= 64, Rank: from, Peer: to, Tag: 3, Req: uint32(seq), Seq: seq, Len: n}
	}
	recv := func(me, from proto.Rank, seq uint64, n uint64) proto.Descriptor {
		return proto.Descriptor{Kind: proto.KindRecv, Rank: me, Peer: from, Tag: 3, Req: uint32(seq), Seq: seq, Len: n, Addr: 4096}
	}
	coll := func(me proto.Rank, c proto.Coll, seq uint64, cseq uint32) proto.Descriptor {
		return proto.Descriptor{Kind: proto.KindColl, Coll: c, Rank: me, Req: uint32(seq), Seq: seq, CollSeq: cseq, Len: 8, DType: uint8(reduce.Int64), Op: uint8(reduce.Sum), Addr: 4096, RAddr: 8192}
	}
	heads := [fuzzCtl]byte{0: 0, 4: 2, 5: 2}
	f.Add(fuzzInput(heads, [2][]proto.Descriptor{{send(0, 1, 1, 8), recv(0, 1, 2, 8)}, {recv(1, 0, 1, 8), send(1, 0, 2, 8)}}))
	f.Add(fuzzInput(heads, [2][]proto.Descriptor{{send(0, 1, 1, 5000), coll(0, proto.CollBarrier, 2, 1)}, {recv(1, proto.AnySource, 1, 5000), coll(1, proto.CollBarrier, 2, 1)}}))
	f.Add(fuzzInput(heads, [2][]proto.Descriptor{{coll(0, proto.CollAllreduce, 1, 1), coll(0, proto.CollBcast, 2, 2)}, {coll(1, proto.CollAllreduce, 1, 1), coll(1, proto.CollBcast, 2, 2)}}))
	f.Add(fuzzInput([fuzzCtl]byte{0: 0xff, 1: 1, 2: 2, 3: 7, 4: 2, 5: 2, 6: 9}, [2][]proto.Descriptor{{send(0, 1, 1, 8), recv(0, 1, 2, 8)}, {recv(1, 0, 1, 8), send(1, 0, 2, 8)}}))

	var child *exec.Cmd
	var stdin io.WriteCloser
	var arena uint64
	var gone chan struct{}
	start := func() {
		child = exec.Command(os.Args[0])
		child.Env = append(os.Environ(), "BCS_FUZZ_RANK=1")
		child.SysProcAttr = unix.DieWithParent()
		var err error
		if stdin, err = child.StdinPipe(); err != nil {
			f.Fatal(err)
		}
		out, err := child.StdoutPipe()
		if err != nil {
			f.Fatal(err)
		}
		if err := child.Start(); err != nil {
			f.Fatal(err)
		}
		if _, err := fmt.Fscan(out, &arena); err != nil {
			f.Fatalf("rank process: %v", err)
		}
		gone = make(chan struct{})
		go func(c *exec.Cmd, g chan struct{}) { c.Wait(); close(g) }(child, gone)
	}
	start()
	f.Cleanup(func() { stdin.Close(); <-gone })

	f.Fuzz(func(t *testing.T, in []byte) {
		select {
		case <-gone: // a random copy crashed it: start another
			start()
		default:
		}
		g := fuzzGeometry
		var ctl [fuzzCtl]byte
		copy(ctl[:], in)
		in = in[min(len(in), fuzzCtl):]
		mem := make([]byte, g.Size())
		region, err := shm.Init(mem, g)
		if err != nil {
			t.Fatal(err)
		}
		a := NewAgent(AgentConfig{NodeOf: []proto.NodeID{0, 0}, Sched: core.SchedConfig{BytesPerSliceMax: 4096, ChunksPerSliceMax: 16}, Region: region})
		tn := &testNode{a: a, mem: mem, rank: []*shm.RankBlock{region.Block(0), region.Block(1)}}
		pid := child.Process.Pid
		ringSize := g.RingSlots * g.SlotSize()
		for l := range 2 {
			tn.attach(t, l, pid, pid)
			base := blockBase(g, l)
			ring := mem[base+4096 : base+4096+ringSize]
			copy(ring, in[min(len(in), l*ringSize):])
			for i := 0; i < len(ring); i += g.SlotSize() { // addresses are arena offsets
				for _, at := range []int{40, 56} { // Addr, RAddr in an encoded descriptor
					v := binary.LittleEndian.Uint64(ring[i+at:])
					binary.LittleEndian.PutUint64(ring[i+at:], v+arena)
				}
			}
			binary.LittleEndian.PutUint64(mem[base+64:], uint64(ctl[4+l])) // head
		}
		b := tn.rank[1] // rank 1's control page, as ctl[0] says
		if ctl[0]&1 != 0 {
			b.SetWorldRank(proto.Rank(int8(ctl[1])))
		}
		if ctl[0]&2 != 0 {
			b.SetState(uint32(ctl[2]))
		}
		if ctl[0]&4 != 0 {
			b.SetBlocked(ctl[3])
		}
		if ctl[0]&8 != 0 {
			setPID(mem, g, 1, int(int32(binary.LittleEndian.Uint32(ctl[6:]))))
		}
		if ctl[0]&16 != 0 {
			setHead(mem, g, 0, binary.LittleEndian.Uint64(ctl[8:]))
		}
		before := bytes.Clone(mem)
		err = runSlices([]*testNode{tn}, 3)
		// any error aborts the job: fine, as long as it is not a panic
		// Only the agent's own words and completion records may have changed.
		owned := [][2]int{{16, 24}, {48, 52}}
		for l := range 2 {
			base := blockBase(g, l)
			owned = append(owned, [2]int{base + 8, base + 12}, [2]int{base + 128, base + 136},
				[2]int{base + 4096 + ringSize, base + 4096 + ringSize + g.ReqMax*shm.CompSize})
		}
		for i := range mem {
			if mem[i] == before[i] {
				continue
			}
			mine := false
			for _, o := range owned {
				mine = mine || (i >= o[0] && i < o[1])
			}
			if !mine {
				t.Fatalf("the agent wrote byte %d of the region (%s), which it does not own; error: %v", i, where(g, i), err)
			}
		}
	})
}

// where names the part of the region byte i is in.
func where(g shm.Geometry, i int) string {
	if i < shm.HeaderSize {
		return "header"
	}
	l := (i - shm.HeaderSize) / ((g.Size() - shm.HeaderSize) / g.Ranks)
	return fmt.Sprintf("block %d offset %d", l, i-blockBase(g, l))
}
