package mpiapi

import (
	"testing"
	"unsafe"

	"github.com/bcsmpi/bcsmpi/internal/shm"
)

// TestPullTarget: a pull order comes from shared memory that every rank of
// the node can write; the rank copies only into the pending receive buffer
// the entry names, and only inside it.
func TestPullTarget(t *testing.T) {
	buf := make([]byte, 4096)
	base := uint64(uintptr(unsafe.Pointer(&buf[0])))
	p := &process{owner: make([]*Request, 4)}
	p.owner[1] = &Request{active: true, mem: buf}
	p.owner[2] = &Request{active: false, mem: buf} // completed
	p.owner[3] = &Request{active: true, mem: nil}  // a send or a collective
	for _, c := range []struct {
		name string
		e    shm.Pull
		off  int // -1: refused
		n    int
	}{
		{"whole buffer", shm.Pull{Req: 1, DstAddr: base, Len: 4096}, 0, 4096},
		{"inside", shm.Pull{Req: 1, DstAddr: base + 100, Len: 200}, 100, 200},
		{"past the end", shm.Pull{Req: 1, DstAddr: base + 4000, Len: 200}, -1, 0},
		{"before the start", shm.Pull{Req: 1, DstAddr: base - 1, Len: 2}, -1, 0},
		{"length overflows", shm.Pull{Req: 1, DstAddr: base + 8, Len: ^uint64(0) - 4}, -1, 0},
		{"free slot", shm.Pull{Req: 0, DstAddr: base, Len: 1}, -1, 0},
		{"completed receive", shm.Pull{Req: 2, DstAddr: base, Len: 1}, -1, 0},
		{"not a receive", shm.Pull{Req: 3, DstAddr: base, Len: 1}, -1, 0},
		{"slot past the table", shm.Pull{Req: 4, DstAddr: base, Len: 1}, -1, 0},
	} {
		got := p.pullTarget(c.e)
		if c.off < 0 {
			if got != nil {
				t.Errorf("%s: pull entry %+v accepted, want refused", c.name, c.e)
			}
			continue
		}
		if len(got) != c.n || &got[0] != &buf[c.off] {
			t.Errorf("%s: target of %d bytes, want %d at offset %d", c.name, len(got), c.n, c.off)
		}
	}
}
