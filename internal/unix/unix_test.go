//go:build linux

package unix

import (
	"os"
	"testing"

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
