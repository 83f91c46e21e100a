//go:build linux

package unix

import (
	"os"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

func TestParentAndDescent(t *testing.T) {
	me := os.Getpid()
	if p, err := ParentPID(me); err != nil || p != os.Getppid() {
		t.Fatalf("ParentPID(self) = %d, %v; want %d", p, err, os.Getppid())
	}
	if ok, err := DescendsFrom(me, os.Getppid(), 4); !ok || err != nil {
		t.Fatalf("self does not descend from its parent: %v", err)
	}
	if ok, err := DescendsFrom(os.Getppid(), me, 4); ok || err != nil {
		t.Fatalf("the parent descends from self (%v)", err)
	}
}

func TestShmFileAndCloseOnExec(t *testing.T) {
	f, err := CreateRegion("bcs-unixtest", 4096) // a region as bcsrun makes it (memfd)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	defer pw.Close()
	if !ShmFile(int(f.Fd())) || ShmFile(int(pr.Fd())) || ShmFile(-1) {
		t.Fatal("ShmFile: want true for the region only")
	}
	fd := int(f.Fd())
	if _, err := unix.FcntlInt(uintptr(fd), unix.F_SETFD, 0); err != nil { // as an inherited descriptor arrives
		t.Fatal(err)
	}
	if err := CloseOnExec(fd); err != nil {
		t.Fatal(err)
	}
	if fl, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); err != nil || fl&unix.FD_CLOEXEC == 0 {
		t.Fatalf("flags %#x, %v after CloseOnExec; want FD_CLOEXEC", fl, err)
	}
}

// Unmapped finds the first unmapped page of a range: none in a mapping,
// the hole left by unmapping its middle page (also for a range starting
// inside a page), and the page of an address no mapping holds.
func TestUnmapped(t *testing.T) {
	const page = 4096
	b, err := unix.Mmap(-1, 0, 3*page, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		t.Fatal(err)
	}
	base := uintptr(unsafe.Pointer(&b[0]))
	munmap := func(a, n uintptr) {
		if _, _, e := unix.Syscall(unix.SYS_MUNMAP, a, n, 0); e != 0 {
			t.Fatalf("munmap %#x: %v", a, e)
		}
	}
	defer munmap(base, 3*page)
	if u := Unmapped(base, 3*page); u != 0 {
		t.Fatalf("a mapped range: Unmapped = %#x, want 0", u)
	}
	if u := Unmapped(base+10, 0); u != 0 {
		t.Fatalf("an empty range: Unmapped = %#x, want 0", u)
	}
	munmap(base+page, page)
	if u := Unmapped(base, 3*page); u != base+page {
		t.Fatalf("a hole at %#x: Unmapped = %#x", base+page, u)
	}
	if u := Unmapped(base+100, page); u != base+page {
		t.Fatalf("[base+100, +4096) reaches the hole at %#x: Unmapped = %#x", base+page, u)
	}
	if u := Unmapped(base+page+8, 16); u != base+page+8 {
		t.Fatalf("a range inside the hole: Unmapped = %#x, want its start %#x", u, base+page+8)
	}
	if u := Unmapped(base, page); u != 0 {
		t.Fatalf("the first page alone: Unmapped = %#x, want 0", u)
	}
}
