package main

/*
#include "shim.h"
*/
import "C"

import (
	"cmp"
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"unsafe"

	"github.com/bcsmpi/bcsmpi/internal/unix"
	"github.com/bcsmpi/bcsmpi/mpiapi"
)

// MPI-IO (MPI_File_*): see "I/O" in doc.go for the contract.
//
// A file is opened collectively over a private duplicate of its
// communicator (so its synchronisation never matches the program's
// messages); every member holds its own descriptor and moves its data with
// pread and pwrite. A view (displacement, etype, filetype) is mapped
// through the filetype's compiled layout (datatype.go): the data of an
// access is a stream of packed bytes, byte v of which lies in filetype item
// v/wire at the run the layout names; adjacent runs are merged into one
// system call. The shared file pointer is an int64 in a memfd of the
// file's rank 0 that every member maps (through /proc/<pid>/fd), moved
// with atomic adds.

const kindFile = 17

const hFileNull = 0x118

// The I/O error classes of the standard ABI.
const (
	errAccess        = 20
	errAmode         = 21
	errBadFile       = 23
	errDupDatarep    = 27
	errFileExists    = 28
	errFileErr       = 30
	errIO            = 35
	errNoSpace       = 41
	errNoSuchFile    = 42
	errNotSame       = 40
	errQuota         = 44
	errReadOnly      = 45
	errUnsupDatarep  = 54
	errFileInUse     = 29
	maxDatarepString = 128
)

// Access modes (MPI_MODE_*).
const (
	modeAppend     = 1
	modeCreate     = 2
	modeDelete     = 4
	modeExcl       = 8
	modeRdonly     = 16
	modeRdwr       = 32
	modeSequential = 64
	modeUnique     = 128
	modeWronly     = 256
	modeAll        = 511
)

func amodeString(a int) string {
	if a&^modeAll != 0 {
		return fmt.Sprintf("%d", a)
	}
	var s []string
	for _, m := range []struct {
		bit  int
		name string
	}{{modeRdonly, "MPI_MODE_RDONLY"}, {modeWronly, "MPI_MODE_WRONLY"}, {modeRdwr, "MPI_MODE_RDWR"},
		{modeCreate, "MPI_MODE_CREATE"}, {modeExcl, "MPI_MODE_EXCL"}, {modeDelete, "MPI_MODE_DELETE_ON_CLOSE"},
		{modeUnique, "MPI_MODE_UNIQUE_OPEN"}, {modeSequential, "MPI_MODE_SEQUENTIAL"}, {modeAppend, "MPI_MODE_APPEND"}} {
		if a&m.bit != 0 {
			s = append(s, m.name)
		}
	}
	if len(s) == 0 {
		return "0"
	}
	return fmt.Sprintf("%s (%d)", strings.Join(s, "|"), a)
}

// file is an open file (MPI_File).
type file struct {
	idx  int
	gen  uint32
	live bool

	name    string
	amode   int
	fd      int
	c       *mpiapi.Comm // private duplicate; nil: one process
	ci      int          // the communicator it was opened over
	rank    int
	size    int
	members []int
	errh    uintptr
	atomic  bool

	disp           int64
	etype, ftype   *dtInfo  // in the file: the view's types, or their twins in rep (datarep.go)
	uetype, uftype *dtInfo  // the view's types as the program gave them
	rep            *datarep // the view's data representation; nil: "native"
	indiv          int64    // individual file pointer, in etypes

	shared    *int64 // the shared file pointer, in etypes (mapped memory, or local)
	sharedMem []byte // the mapping, unmapped at close
	sharedWhy string // why there is no shared file pointer

	split *splitOp // the split collective begun and not ended
}

// splitOp is a split collective between its _begin and _end: _begin
// checked it, _end runs it.
type splitOp struct {
	call  string // the _begin call
	kind  int    // ioOp bits of the position (ioAt, ioOrdered, none)
	write bool
	buf   unsafe.Pointer
	a     *access
}

var (
	files        []*file
	freeFiles    []int
	fileNullErrh uintptr = hErrhReturn // MPI_FILE_NULL's handler: the default of new files
)

func (f *file) handle() uintptr { return userHandle(kindFile, f.idx, f.gen) }

// lookupFile resolves a file handle; errors go to MPI_FILE_NULL's handler.
func lookupFile(call string, h C.uintptr_t) (*file, C.int) {
	if rc := enter(call); rc != 0 {
		return nil, rc
	}
	if uintptr(h) == hFileNull {
		return nil, nullFail(call, errFileErr, "fh = MPI_FILE_NULL, want a file from MPI_File_open")
	}
	kind, i, gen := splitHandle(uintptr(h))
	if kind == kindFile && i < len(files) {
		if f := files[i]; f.live && f.gen == gen {
			return f, 0
		}
		return nil, nullFail(call, errFileErr, "fh = 0x%x was closed with MPI_File_close", uintptr(h))
	}
	return nil, nullFail(call, errFileErr, "fh = %s is not a file", describe(uintptr(h)))
}

// nullFail raises an error on MPI_FILE_NULL's handler (errors with no
// valid file: MPI_File_open, MPI_File_delete, a bad file handle).
func nullFail(call string, class int, format string, a ...any) C.int {
	name := C.GoString(C.bcs_class_name(C.int(class)))
	return raiseWith(fileNullErrh, hFileNull, class, fmt.Sprintf("rank %d: %s: %s: %s", worldRank, call, name, fmt.Sprintf(format, a...)))
}

// nullFailErr raises an error returned by mpiapi on MPI_FILE_NULL's
// handler.
func nullFailErr(err error) C.int {
	var e *mpiapi.Error
	if errors.As(err, &e) {
		return raiseWith(fileNullErrh, hFileNull, abiClass(e.Class), e.Error())
	}
	return raiseWith(fileNullErrh, hFileNull, errIntern, fmt.Sprintf("rank %d: %v", worldRank, err))
}

// openComm resolves MPI_File_open's communicator as comm does, but says
// what is wrong instead of raising it on a communicator's handler (the
// errors of MPI_File_open go to MPI_FILE_NULL's).
func openComm(h uintptr) (int, string) {
	switch h {
	case hCommWorld:
		return 0, ""
	case hCommSelf:
		return 1, ""
	case hCommNull:
		return -1, "comm = MPI_COMM_NULL, want a communicator such as MPI_COMM_WORLD"
	}
	kind, i, gen := splitHandle(h)
	if kind == kindComm && i < len(comms) {
		if e := &comms[i]; e.live && e.gen == gen {
			if e.inter != nil {
				return -1, fmt.Sprintf("comm = %s is an intercommunicator, want an intracommunicator", describe(h))
			}
			return i, ""
		}
		return -1, fmt.Sprintf("comm = %s was freed with MPI_Comm_free", describe(h))
	}
	return -1, fmt.Sprintf("comm = %s is not a communicator", describe(h))
}

// fail raises an error on the file's handler.
func (f *file) fail(call string, class int, format string, a ...any) C.int {
	name := C.GoString(C.bcs_class_name(C.int(class)))
	return raiseWith(f.errh, f.handle(), class, fmt.Sprintf("rank %d: %s: %s: %s", worldRank, call, name, fmt.Sprintf(format, a...)))
}

func (f *file) failErr(err error) C.int {
	if err == nil {
		return 0
	}
	var e *mpiapi.Error
	if errors.As(err, &e) {
		return raiseWith(f.errh, f.handle(), abiClass(e.Class), e.Error())
	}
	return raiseWith(f.errh, f.handle(), errIntern, fmt.Sprintf("rank %d: %v", worldRank, err))
}

// ioError is an error found while opening or moving data: a class and a
// message.
type ioError struct {
	class int
	msg   string
}

func ioErr(class int, format string, a ...any) *ioError {
	return &ioError{class, fmt.Sprintf(format, a...)}
}

// errnoClass is the class of a system call's error.
func errnoClass(err error) int {
	switch {
	case errors.Is(err, syscall.ENOENT):
		return errNoSuchFile
	case errors.Is(err, syscall.EEXIST):
		return errFileExists
	case errors.Is(err, syscall.EACCES), errors.Is(err, syscall.EPERM):
		return errAccess
	case errors.Is(err, syscall.EROFS):
		return errReadOnly
	case errors.Is(err, syscall.ENAMETOOLONG), errors.Is(err, syscall.ENOTDIR), errors.Is(err, syscall.EISDIR), errors.Is(err, syscall.ELOOP):
		return errBadFile
	case errors.Is(err, syscall.ENOSPC), errors.Is(err, syscall.EFBIG):
		return errNoSpace
	case errors.Is(err, syscall.EDQUOT):
		return errQuota
	case errors.Is(err, syscall.ETXTBSY):
		return errFileInUse
	}
	return errIO
}

// ---- collective helpers over the file's private communicator ----

func allgather(c *mpiapi.Comm, mine []int64) ([]int64, error) {
	if c == nil {
		return mine, nil
	}
	all := make([]int64, len(mine)*c.Size())
	err := mpiapi.Allgather(c, mine, all)
	return all, err
}

// agree makes every member learn whether any failed: each passes its own
// error (nil: none); the first failing member's class is every member's
// result, with the failing member's own message on it and a message
// naming that member on the others. It returns nil when none failed.
func agree(c *mpiapi.Comm, mine *ioError, what string) (*ioError, error) {
	my := int64(0)
	if mine != nil {
		my = int64(mine.class)
	}
	all, err := allgather(c, []int64{my})
	if err != nil {
		return nil, err
	}
	if mine != nil {
		return mine, nil
	}
	for r, cl := range all {
		if cl != 0 {
			name := C.GoString(C.bcs_class_name(C.int(cl)))
			return ioErr(int(cl), "%s failed on rank %d of the communicator with %s (its message names the cause), so it fails on every member", what, r, name), nil
		}
	}
	return nil, nil
}

// ---- open, close, delete ----

func checkAmode(a int) *ioError {
	n := 0
	for _, b := range []int{modeRdonly, modeWronly, modeRdwr} {
		if a&b != 0 {
			n++
		}
	}
	switch {
	case a&^modeAll != 0:
		return ioErr(errAmode, "amode = %d has bits that are no MPI_MODE_* access mode (valid: 0x%x)", a, modeAll)
	case n != 1:
		return ioErr(errAmode, "amode = %s, want exactly one of MPI_MODE_RDONLY, MPI_MODE_WRONLY and MPI_MODE_RDWR", amodeString(a))
	case a&modeRdonly != 0 && a&(modeCreate|modeExcl) != 0:
		return ioErr(errAmode, "amode = %s: MPI_MODE_RDONLY cannot be combined with MPI_MODE_CREATE or MPI_MODE_EXCL", amodeString(a))
	case a&modeRdwr != 0 && a&modeSequential != 0:
		return ioErr(errAmode, "amode = %s: MPI_MODE_RDWR cannot be combined with MPI_MODE_SEQUENTIAL", amodeString(a))
	}
	return nil
}

func openFlags(a int, create bool) int {
	fl := syscall.O_CLOEXEC
	switch {
	case a&modeRdonly != 0:
		fl |= syscall.O_RDONLY
	case a&modeWronly != 0:
		fl |= syscall.O_WRONLY
	default:
		fl |= syscall.O_RDWR
	}
	if create && a&modeCreate != 0 {
		fl |= syscall.O_CREAT
		if a&modeExcl != 0 {
			fl |= syscall.O_EXCL
		}
	}
	return fl
}

func sysOpen(name string, a int, create bool) (int, *ioError) {
	fd, err := syscall.Open(name, openFlags(a, create), 0o666)
	if err != nil {
		cl := errnoClass(err)
		why := err.Error()
		switch cl {
		case errNoSuchFile:
			why += " (open it with MPI_MODE_CREATE to create it)"
		case errFileExists:
			why += " (MPI_MODE_EXCL was given)"
		}
		return -1, ioErr(cl, "opening %q with amode = %s: %s", name, amodeString(a), why)
	}
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err == nil && st.Mode&syscall.S_IFMT == syscall.S_IFDIR {
		syscall.Close(fd)
		return -1, ioErr(errBadFile, "filename = %q is a directory", name)
	}
	return fd, nil
}

//export bcs_file_open
func bcs_file_open(commH C.uintptr_t, cname *C.char, amode C.int, infoH C.uintptr_t, out *C.uintptr_t) C.int {
	const call = "MPI_File_open"
	if rc := enter(call); rc != 0 {
		return rc
	}
	ci, why := openComm(uintptr(commH))
	if why != "" {
		return nullFail(call, errComm, "%s", why)
	}
	// A NULL argument is this member's error: it still takes part in the
	// collective steps (with an empty name), so every member fails.
	var mine *ioError
	name, a := "", int(amode)
	switch {
	case out == nil:
		mine = ioErr(errArg, "fh = NULL, want the address of an MPI_File")
	case cname == nil:
		mine = ioErr(errBadFile, "filename = NULL, want a file name")
	default:
		name = C.GoString(cname)
	}
	f := &file{name: name, amode: a, fd: -1, ci: ci, c: comms[ci].c, size: 1, errh: fileNullErrh,
		etype: predefinedType(0x247), ftype: predefinedType(0x247), members: members(ci)}
	f.uetype, f.uftype = f.etype, f.ftype
	fail := func(e *ioError, err error) C.int {
		if f.fd >= 0 {
			syscall.Close(f.fd)
		}
		if f.c != nil {
			f.c.Free()
		}
		if err != nil {
			return nullFailErr(err)
		}
		return nullFail(call, e.class, "%s", e.msg)
	}
	if f.c != nil {
		var err error
		if f.c, err = f.c.Dup(); err != nil {
			return nullFailErr(err)
		}
		f.rank, f.size = f.c.Rank(), f.c.Size()
	}
	// Every member must pass rank 0's name and amode.
	if f.c != nil {
		hdr := []int64{int64(a), int64(len(name))}
		if err := mpiapi.Bcast(f.c, hdr, 0); err != nil {
			return fail(nil, err)
		}
		nb := make([]byte, hdr[1])
		copy(nb, name)
		if err := mpiapi.Bcast(f.c, nb, 0); err != nil {
			return fail(nil, err)
		}
		switch {
		case mine != nil:
		case int(hdr[0]) != a:
			mine = ioErr(errNotSame, "amode = %s differs from rank 0's %s; every member must pass the same", amodeString(a), amodeString(int(hdr[0])))
		case string(nb) != name:
			mine = ioErr(errNotSame, "filename = %q differs from rank 0's %q; every member must pass the same", name, string(nb))
		}
	}
	if mine == nil {
		mine = checkAmode(a)
	}
	if why := infoProblem(uintptr(infoH)); mine == nil && why != "" {
		mine = ioErr(errInfo, "%s", why)
	}
	e, err := agree(f.c, mine, "MPI_File_open")
	if e != nil || err != nil {
		return fail(e, err)
	}
	// Rank 0 creates the file (MPI_MODE_EXCL applies to it alone), then the
	// others open it.
	if f.rank == 0 {
		f.fd, mine = sysOpen(name, a, true)
	}
	if e, err := agree(f.c, mine, fmt.Sprintf("opening %q", name)); e != nil || err != nil {
		return fail(e, err)
	}
	if f.rank != 0 {
		f.fd, mine = sysOpen(name, a, false)
	}
	if e, err := agree(f.c, mine, fmt.Sprintf("opening %q", name)); e != nil || err != nil {
		return fail(e, err)
	}
	if a&modeAppend != 0 {
		var st syscall.Stat_t
		if err := syscall.Fstat(f.fd, &st); err == nil {
			f.indiv = st.Size
		}
	}
	if err := f.mapShared(); err != nil {
		return fail(nil, err)
	}
	f.live = true
	if n := len(freeFiles); n > 0 {
		f.idx, freeFiles = freeFiles[n-1], freeFiles[:n-1]
		f.gen = files[f.idx].gen
		files[f.idx] = f
	} else {
		f.idx = len(files)
		files = append(files, f)
	}
	*out = C.uintptr_t(f.handle())
	return 0
}

// mapShared makes the shared file pointer: a local int64 for one process;
// otherwise rank 0 makes a memfd (nothing named, so nothing is left behind
// on any path) and every member maps it through /proc/<pid>/fd/<fd> and
// checks a random cookie there, which fails on another host. A member that
// cannot map it leaves every member without a shared file pointer (the
// shared-pointer calls then fail, saying why); the open goes on.
func (f *file) mapShared() error {
	if f.c == nil {
		f.shared = new(int64)
		*f.shared = f.indiv
		return nil
	}
	const segBytes = 64
	var cookie [16]byte
	hdr := make([]int64, 4) // pid, fd, cookie
	mfd := -1
	if f.rank == 0 {
		rand.Read(cookie[:])
		fd, err := unix.Memfd("bcs-file-pointer")
		if err == nil {
			if err = syscall.Ftruncate(fd, segBytes); err != nil {
				syscall.Close(fd)
			} else {
				mfd = fd
			}
		}
		if mfd >= 0 {
			hdr[0], hdr[1] = int64(os.Getpid()), int64(mfd)
			hdr[2] = *(*int64)(unsafe.Pointer(&cookie[0]))
			hdr[3] = *(*int64)(unsafe.Pointer(&cookie[8]))
		} else {
			hdr[1] = -1
		}
	}
	if err := mpiapi.Bcast(f.c, hdr, 0); err != nil {
		if mfd >= 0 {
			syscall.Close(mfd)
		}
		return err
	}
	why := ""
	if hdr[1] < 0 {
		why = "rank 0 could not make its shared memory (memfd_create)"
	} else {
		fd := mfd
		if f.rank != 0 {
			// Only a memfd of this name is opened: on another host the
			// pid and fd name some other process's file.
			p := fmt.Sprintf("/proc/%d/fd/%d", hdr[0], hdr[1])
			var err error
			if l, e := os.Readlink(p); e != nil && !errors.Is(e, fs.ErrNotExist) {
				fd, why = -1, fmt.Sprintf("rank %d cannot read the link %s to rank 0's shared memory (%v): /proc restricted (ptrace access to rank 0 denied)", f.rank, p, e)
			} else if e != nil || !strings.HasPrefix(l, "/memfd:bcs-file-pointer") {
				fd, why = -1, fmt.Sprintf("rank %d cannot find rank 0's shared memory at %s: the members are not all on one host", f.rank, p)
			} else if fd, err = syscall.Open(p, syscall.O_RDWR|syscall.O_CLOEXEC, 0); err != nil {
				fd, why = -1, fmt.Sprintf("rank %d cannot open rank 0's shared memory at %s (%v): another host, or /proc restricted", f.rank, p, err)
			}
		}
		if fd >= 0 {
			mem, err := syscall.Mmap(fd, 0, segBytes, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
			if f.rank != 0 {
				syscall.Close(fd)
			}
			if err != nil {
				why = fmt.Sprintf("rank %d cannot map the shared file pointer: %v", f.rank, err)
			} else {
				if f.rank == 0 {
					copy(mem[8:24], cookie[:])
					*(*int64)(unsafe.Pointer(&mem[0])) = f.indiv
				}
				f.sharedMem = mem
			}
		}
	}
	// Rank 0 wrote the cookie before the allgather; the others check it after.
	bad := int64(0)
	if why != "" {
		bad = 1
	}
	all, err := allgather(f.c, []int64{bad})
	if mfd >= 0 {
		syscall.Close(mfd) // every member has opened it (or failed)
	}
	if err != nil {
		return err
	}
	if why == "" && f.rank != 0 {
		if *(*int64)(unsafe.Pointer(&f.sharedMem[8])) != hdr[2] || *(*int64)(unsafe.Pointer(&f.sharedMem[16])) != hdr[3] {
			why = fmt.Sprintf("rank %d mapped another process's memory: the members are not all on one host", f.rank)
		}
	}
	bad = 0
	if why != "" {
		bad = 1
	}
	for r, b := range all {
		if b != 0 && why == "" {
			why = fmt.Sprintf("rank %d of the file's communicator could not map the shared file pointer (the members are not all on one host, or /proc is restricted there)", r)
		}
	}
	all2, err := allgather(f.c, []int64{bad})
	if err != nil {
		return err
	}
	for r, b := range all2 {
		if b != 0 && why == "" {
			why = fmt.Sprintf("rank %d of the file's communicator found another process's memory (the members are not all on one host)", r)
		}
	}
	if why != "" {
		if f.sharedMem != nil {
			syscall.Munmap(f.sharedMem)
			f.sharedMem = nil
		}
		f.sharedWhy = why
		return nil
	}
	f.shared = (*int64)(unsafe.Pointer(&f.sharedMem[0]))
	return nil
}

// release frees what the file holds in this process.
func (f *file) release() {
	if f.fd >= 0 {
		syscall.Close(f.fd)
		f.fd = -1
	}
	if f.sharedMem != nil {
		syscall.Munmap(f.sharedMem)
		f.sharedMem = nil
	}
	f.shared = nil
	f.live = false
	f.gen = (f.gen + 1) & genMask
	freeFiles = append(freeFiles, f.idx)
}

//export bcs_file_close
func bcs_file_close(h *C.uintptr_t) C.int {
	const call = "MPI_File_close"
	if h == nil {
		return nullFail(call, errArg, "fh = NULL, want the address of an MPI_File")
	}
	f, rc := lookupFile(call, *h)
	if rc != 0 {
		return rc
	}
	var firstErr *ioError
	if f.fd >= 0 {
		if err := syscall.Close(f.fd); err != nil {
			firstErr = ioErr(errnoClass(err), "closing %q: %v", f.name, err)
		}
		f.fd = -1
	}
	var err error
	if f.c != nil {
		err = mpiapi.Barrier(f.c)
	}
	if f.amode&modeDelete != 0 && f.rank == 0 {
		if e := syscall.Unlink(f.name); e != nil && !errors.Is(e, syscall.ENOENT) && firstErr == nil {
			firstErr = ioErr(errnoClass(e), "deleting %q (MPI_MODE_DELETE_ON_CLOSE): %v", f.name, e)
		}
	}
	if f.c != nil { // freed even when the Barrier failed: nothing is left behind
		if e := f.c.Free(); err == nil {
			err = e
		}
		f.c = nil
	}
	errh, fh := f.errh, f.handle()
	f.release()
	*h = hFileNull
	if err != nil {
		var e *mpiapi.Error
		if errors.As(err, &e) {
			return raiseWith(errh, fh, abiClass(e.Class), e.Error())
		}
		return raiseWith(errh, fh, errIntern, err.Error())
	}
	if firstErr != nil {
		name := C.GoString(C.bcs_class_name(C.int(firstErr.class)))
		return raiseWith(errh, fh, firstErr.class, fmt.Sprintf("rank %d: %s: %s: %s", worldRank, call, name, firstErr.msg))
	}
	return 0
}

// finalizeFiles closes the files the program left open, with a warning
// naming each (MPI_MODE_DELETE_ON_CLOSE files are deleted by their rank 0),
// and frees their private communicators in the order of their job-wide ids,
// so that members of several such files free them in one order.
func finalizeFiles() {
	var open []*file
	for _, f := range files {
		if f.live {
			open = append(open, f)
		}
	}
	slices.SortFunc(open, func(a, b *file) int { return cmp.Compare(commID(a.c), commID(b.c)) })
	for _, f := range open {
		fmt.Fprintf(os.Stderr, "bcsmpi: warning: rank %d: file %q (0x%x) was never closed (MPI_File_close); closed by MPI_Finalize\n", worldRank, f.name, f.handle())
		if f.fd >= 0 {
			syscall.Close(f.fd)
			f.fd = -1
		}
		if f.c != nil {
			mpiapi.Barrier(f.c) // every member has closed it before it is deleted
		}
		if f.amode&modeDelete != 0 && f.rank == 0 {
			syscall.Unlink(f.name)
		}
		if f.c != nil {
			f.c.Free()
		}
		f.release()
	}
}

func commID(c *mpiapi.Comm) uint32 {
	if c == nil {
		return 0
	}
	return c.ID()
}

//export bcs_file_delete
func bcs_file_delete(cname *C.char, infoH C.uintptr_t) C.int {
	const call = "MPI_File_delete"
	if rc := enter(call); rc != 0 {
		return rc
	}
	if cname == nil {
		return nullFail(call, errBadFile, "filename = NULL, want a file name")
	}
	if why := infoProblem(uintptr(infoH)); why != "" {
		return nullFail(call, errInfo, "%s", why)
	}
	name := C.GoString(cname)
	var st syscall.Stat_t
	if err := syscall.Stat(name, &st); err == nil && st.Mode&syscall.S_IFMT == syscall.S_IFDIR {
		return nullFail(call, errBadFile, "filename = %q is a directory", name)
	}
	if err := syscall.Unlink(name); err != nil {
		return nullFail(call, errnoClass(err), "deleting %q: %v", name, err)
	}
	return 0
}

// ---- queries and settings ----

func fsize(f *file) (int64, *ioError) {
	var st syscall.Stat_t
	if err := syscall.Fstat(f.fd, &st); err != nil {
		return 0, ioErr(errnoClass(err), "fstat of %q: %v", f.name, err)
	}
	return st.Size, nil
}

//export bcs_file_get_size
func bcs_file_get_size(h C.uintptr_t, out *C.MPI_Offset) C.int {
	const call = "MPI_File_get_size"
	f, rc := lookupFile(call, h)
	if rc != 0 {
		return rc
	}
	if out == nil {
		return f.fail(call, errArg, "size = NULL")
	}
	n, e := fsize(f)
	if e != nil {
		return f.fail(call, e.class, "%s", e.msg)
	}
	*out = C.MPI_Offset(n)
	return 0
}

// bcs_file_resize is MPI_File_set_size (grow == 0) and
// MPI_File_preallocate: rank 0 changes the file, then every member
// synchronises.
//
//export bcs_file_resize
func bcs_file_resize(h C.uintptr_t, size C.MPI_Offset, grow C.int) C.int {
	call := "MPI_File_set_size"
	if grow != 0 {
		call = "MPI_File_preallocate"
	}
	f, rc := lookupFile(call, h)
	if rc != 0 {
		return rc
	}
	var mine *ioError
	switch {
	case size < 0:
		mine = ioErr(errArg, "size = %d, want >= 0", int64(size))
	case f.amode&modeSequential != 0:
		mine = ioErr(errUnsupported, "%q was opened with MPI_MODE_SEQUENTIAL, which does not allow %s", f.name, call)
	case f.amode&modeRdonly != 0:
		mine = ioErr(errReadOnly, "%q was opened with MPI_MODE_RDONLY", f.name)
	}
	if f.c != nil { // every member takes part, so the collectives pair up
		my := int64(size)
		if mine != nil {
			my = -1
		}
		all, err := allgather(f.c, []int64{my})
		if err != nil {
			return f.failErr(err)
		}
		for r, s := range all {
			if mine == nil && s >= 0 && s != int64(size) {
				mine = ioErr(errNotSame, "size = %d differs from rank %d's %d; every member must pass the same", int64(size), r, s)
				break
			}
		}
	}
	if e, err := agree(f.c, mine, call); err != nil {
		return f.failErr(err)
	} else if e != nil {
		return f.fail(call, e.class, "%s", e.msg)
	}
	if f.rank == 0 {
		cur, e := fsize(f)
		switch {
		case e != nil:
			mine = e
		case grow == 0:
			if err := syscall.Ftruncate(f.fd, int64(size)); err != nil {
				mine = ioErr(errnoClass(err), "truncating %q to %d bytes: %v", f.name, int64(size), err)
			}
		case int64(size) > cur:
			err := syscall.Fallocate(f.fd, 0, 0, int64(size))
			if errors.Is(err, syscall.EOPNOTSUPP) || errors.Is(err, syscall.ENOSYS) {
				err = syscall.Ftruncate(f.fd, int64(size))
			}
			if err != nil {
				mine = ioErr(errnoClass(err), "allocating %d bytes of %q: %v", int64(size), f.name, err)
			}
		}
	}
	if e, err := agree(f.c, mine, call); err != nil {
		return f.failErr(err)
	} else if e != nil {
		return f.fail(call, e.class, "%s", e.msg)
	}
	return 0
}

//export bcs_file_sync
func bcs_file_sync(h C.uintptr_t) C.int {
	const call = "MPI_File_sync"
	f, rc := lookupFile(call, h)
	if rc != 0 {
		return rc
	}
	var mine *ioError
	if f.amode&modeRdonly == 0 {
		if err := syscall.Fsync(f.fd); err != nil {
			mine = ioErr(errnoClass(err), "fsync of %q: %v", f.name, err)
		}
	}
	if e, err := agree(f.c, mine, call); err != nil {
		return f.failErr(err)
	} else if e != nil {
		return f.fail(call, e.class, "%s", e.msg)
	}
	return 0
}

// bcs_file_query answers the small queries: what 0 amode, 1 group,
// 2 info (an empty one: no hints are used), 3 atomicity, 4 errhandler.
//
//export bcs_file_query
func bcs_file_query(what C.int, h C.uintptr_t, out unsafe.Pointer) C.int {
	call := [...]string{"MPI_File_get_amode", "MPI_File_get_group", "MPI_File_get_info", "MPI_File_get_atomicity", "MPI_File_get_errhandler"}[what]
	if what == 4 && uintptr(h) == hFileNull {
		if rc := enter(call); rc != 0 {
			return rc
		}
		if out == nil {
			return nullFail(call, errArg, "errhandler = NULL")
		}
		*(*C.uintptr_t)(out) = C.uintptr_t(fileNullErrh)
		return 0
	}
	f, rc := lookupFile(call, h)
	if rc != 0 {
		return rc
	}
	if out == nil {
		return f.fail(call, errArg, "the output argument is NULL")
	}
	switch what {
	case 0:
		*(*C.int)(out) = C.int(f.amode)
	case 1:
		*(*C.uintptr_t)(out) = C.uintptr_t(newGroup(append([]int(nil), f.members...)))
	case 2:
		*(*C.uintptr_t)(out) = C.uintptr_t(newInfo(nil, nil))
	case 3:
		*(*C.int)(out) = 0
		if f.atomic {
			*(*C.int)(out) = 1
		}
	case 4:
		*(*C.uintptr_t)(out) = C.uintptr_t(f.errh)
	}
	return 0
}

//export bcs_file_set_info
func bcs_file_set_info(h, infoH C.uintptr_t) C.int {
	const call = "MPI_File_set_info"
	f, rc := lookupFile(call, h)
	if rc != 0 {
		return rc
	}
	var mine *ioError
	if why := infoProblem(uintptr(infoH)); why != "" {
		mine = ioErr(errInfo, "%s", why)
	}
	if e, err := agree(f.c, mine, call); err != nil {
		return f.failErr(err)
	} else if e != nil {
		return f.fail(call, e.class, "%s", e.msg)
	}
	return 0
}

//export bcs_file_set_atomicity
func bcs_file_set_atomicity(h C.uintptr_t, flag C.int) C.int {
	const call = "MPI_File_set_atomicity"
	f, rc := lookupFile(call, h)
	if rc != 0 {
		return rc
	}
	on := int64(0)
	if flag != 0 {
		on = 1
	}
	all, err := allgather(f.c, []int64{on})
	if err != nil {
		return f.failErr(err)
	}
	for r, v := range all {
		if v != on {
			return f.fail(call, errNotSame, "flag = %d differs from rank %d's; every member must pass the same", on, r)
		}
	}
	f.atomic = on != 0
	return 0
}

//export bcs_file_set_errhandler
func bcs_file_set_errhandler(h, eh C.uintptr_t) C.int {
	const call = "MPI_File_set_errhandler"
	if !validErrhandler(uintptr(eh)) {
		if rc := enter(call); rc != 0 {
			return rc
		}
		return nullFail(call, errArg, "errhandler = %s, want MPI_ERRORS_ARE_FATAL, MPI_ERRORS_RETURN, MPI_ERRORS_ABORT or one from MPI_File_create_errhandler", describe(uintptr(eh)))
	}
	if uintptr(h) == hFileNull {
		if rc := enter(call); rc != 0 {
			return rc
		}
		fileNullErrh = uintptr(eh)
		return 0
	}
	f, rc := lookupFile(call, h)
	if rc != 0 {
		return rc
	}
	f.errh = uintptr(eh)
	return 0
}

//export bcs_file_call_errhandler
func bcs_file_call_errhandler(h C.uintptr_t, code C.int) C.int {
	const call = "MPI_File_call_errhandler"
	msg := fmt.Sprintf("rank %d: %s: error code %d raised by the program", worldRank, call, int(code))
	if uintptr(h) == hFileNull {
		if rc := enter(call); rc != 0 {
			return rc
		}
		raiseWith(fileNullErrh, hFileNull, int(code), msg)
		return 0
	}
	f, rc := lookupFile(call, h)
	if rc != 0 {
		return rc
	}
	raiseWith(f.errh, f.handle(), int(code), msg)
	return 0
}

// infoProblem says why h is not an info argument (MPI_INFO_NULL allowed),
// or "": unlike infoArg it raises nothing, so a collective call's members
// can fail together.
func infoProblem(h uintptr) string {
	if h == hInfoNull || h == hInfoEnv {
		return ""
	}
	kind, i, gen := splitHandle(h)
	if kind == kindInfo && i < len(infos) {
		if e := &infos[i]; e.live && e.gen == gen {
			return ""
		}
		return fmt.Sprintf("info = 0x%x was freed with MPI_Info_free", h)
	}
	return fmt.Sprintf("info = %s is not an info object", describe(h))
}

// ---- views ----

// checkFiletype says why t cannot be a filetype over etype e, or "".
func checkFiletype(e, t *dtInfo) string {
	if t.wire == 0 {
		return "it holds no data"
	}
	if t.extent() <= 0 {
		return fmt.Sprintf("its extent is %d; a filetype's extent must be positive", t.extent())
	}
	if t.wire%e.wire != 0 {
		return fmt.Sprintf("its %d bytes of data are not a whole number of etypes of %d bytes", t.wire, e.wire)
	}
	end := int64(-1 << 62)
	for _, s := range t.segs {
		if s.off < 0 {
			return fmt.Sprintf("it has data at the negative displacement %d", s.off)
		}
		if s.off < end || s.n > 1 && s.stride < s.len {
			return "its data go back or overlap (the standard wants displacements nonnegative and nondecreasing, and no overlap on a file opened for writing; bcsmpi takes no repeated displacements on any file)"
		}
		end = s.off + (s.n-1)*s.stride + s.len
	}
	return ""
}

//export bcs_file_set_view
func bcs_file_set_view(h C.uintptr_t, disp C.MPI_Offset, etH, ftH C.uintptr_t, crep *C.char, infoH C.uintptr_t) C.int {
	const call = "MPI_File_set_view"
	f, rc := lookupFile(call, h)
	if rc != 0 {
		return rc
	}
	var mine *ioError
	if why := infoProblem(uintptr(infoH)); why != "" {
		mine = ioErr(errInfo, "%s", why)
	}
	typeArg := func(what string, th C.uintptr_t) *dtInfo {
		t := predefinedType(uintptr(th))
		if t == nil {
			kind, i, gen := splitHandle(uintptr(th))
			if kind == kindType && i < len(typeSlots) && typeSlots[i].live && typeSlots[i].gen == gen {
				t = typeSlots[i].t
			}
		}
		switch {
		case mine != nil:
		case t == nil:
			mine = ioErr(errType, "%s = %s is not a datatype", what, describe(uintptr(th)))
		case !t.committed:
			mine = ioErr(errType, "%s = %s is not committed; call MPI_Type_commit first", what, describe(uintptr(th)))
		}
		return t
	}
	et := typeArg("etype", etH)
	ft := typeArg("filetype", ftH)
	rep := ""
	if crep != nil {
		rep = C.GoString(crep)
	}
	d := int64(disp)
	var dr *datarep // nil: native
	if mine == nil {
		if crep == nil {
			mine = ioErr(errArg, "datarep = NULL, want \"native\" or a registered name")
		} else {
			dr, mine = lookupDatarep(rep)
		}
	}
	fet, fft := et, ft // in the file
	if mine == nil && dr != nil {
		if fet, mine = dr.fileType(et); mine == nil {
			fft, mine = dr.fileType(ft)
		}
	}
	if mine == nil {
		switch {
		case d == -1 && f.amode&modeSequential == 0:
			mine = ioErr(errArg, "disp = MPI_DISPLACEMENT_CURRENT is allowed only on files opened with MPI_MODE_SEQUENTIAL")
		case d != -1 && f.amode&modeSequential != 0:
			mine = ioErr(errArg, "disp = %d: a file opened with MPI_MODE_SEQUENTIAL takes MPI_DISPLACEMENT_CURRENT (its view starts at the shared file pointer)", d)
		case d < 0 && d != -1:
			mine = ioErr(errArg, "disp = %d, want >= 0", d)
		case d > maxTypeBound:
			mine = ioErr(errArg, "disp = %d lies beyond bcsmpi's bound of %d bytes on the file", d, maxTypeBound)
		case et.wire == 0:
			mine = ioErr(errType, "etype = %s holds no data", et.describe())
		}
	}
	if mine == nil {
		if why := checkFiletype(fet, fft); why != "" {
			mine = ioErr(errType, "filetype = %s cannot be a filetype over etype = %s: %s", ft.describe(), et.describe(), why)
		}
	}
	if mine == nil && f.split != nil {
		mine = ioErr(errIO, "%s is still active; call its _end first", f.split.call)
	}
	// The members' etypes must have one extent and the members one
	// representation (the standard: "the values for datarep and the
	// extents of etype in the file data representation must be
	// identical"); a member that failed passes neither.
	ok, ew, rh := int64(0), int64(0), int64(0)
	if mine == nil {
		ok, ew, rh = 1, fet.extent(), nameHash(rep)
	}
	if d == -1 && mine == nil { // read before the allgather: rank 0 resets the pointer after it
		d = f.byteOffset(f.sharedPos())
	}
	all, err := allgather(f.c, []int64{ok, ew, rh})
	if err != nil {
		return f.failErr(err)
	}
	for r := 0; r < len(all)/3; r++ {
		if mine != nil || all[3*r] == 0 {
			continue
		}
		if w := all[3*r+1]; w != ew {
			mine = ioErr(errNotSame, "etype = %s has extent %d in the file; rank %d's has extent %d: every member must use etypes of one extent", et.describe(), ew, r, w)
		} else if all[3*r+2] != rh {
			mine = ioErr(errNotSame, "datarep = %q differs from rank %d's; every member must pass the same", rep, r)
		}
	}
	if e, err := agree(f.c, mine, call); err != nil {
		return f.failErr(err)
	} else if e != nil {
		return f.fail(call, e.class, "%s", e.msg)
	}
	f.disp, f.etype, f.ftype, f.indiv = d, fet, fft, 0
	f.uetype, f.uftype, f.rep = et, ft, dr
	if f.shared != nil && f.rank == 0 {
		atomic.StoreInt64(f.shared, 0)
	}
	if f.c != nil {
		if err := mpiapi.Barrier(f.c); err != nil {
			return f.failErr(err)
		}
	}
	return 0
}

// sharedPos is the shared file pointer, or 0 when there is none.
func (f *file) sharedPos() int64 {
	if f.shared == nil {
		return 0
	}
	return atomic.LoadInt64(f.shared)
}

// dupType is a new handle of a committed copy of t (MPI_File_get_view
// returns the view's derived types as new handles the program frees).
func dupType(t *dtInfo) uintptr {
	if t.predefined() {
		return t.h
	}
	d := &dtInfo{combiner: combDup, types: []*dtInfo{t}}
	if d.build() != nil || !d.compile() {
		return t.h
	}
	d.committed = true
	return newTypeHandle(d)
}

//export bcs_file_get_view
func bcs_file_get_view(h C.uintptr_t, disp *C.MPI_Offset, et, ft *C.uintptr_t, datarep *C.char) C.int {
	const call = "MPI_File_get_view"
	f, rc := lookupFile(call, h)
	if rc != 0 {
		return rc
	}
	if disp == nil || et == nil || ft == nil || datarep == nil {
		return f.fail(call, errArg, "disp, etype, filetype or datarep = NULL")
	}
	*disp = C.MPI_Offset(f.disp)
	*et = C.uintptr_t(dupType(f.uetype))
	*ft = C.uintptr_t(dupType(f.uftype))
	copyOut(datarep, maxDatarepString, f.datarepName())
	return 0
}

//export bcs_file_get_type_extent
func bcs_file_get_type_extent(h C.uintptr_t, th C.uintptr_t, out *C.MPI_Count, large C.int) C.int {
	call := "MPI_File_get_type_extent"
	if large != 0 {
		call += "_c"
	}
	f, rc := lookupFile(call, h)
	if rc != 0 {
		return rc
	}
	if out == nil {
		return f.fail(call, errArg, "extent = NULL")
	}
	t := predefinedType(uintptr(th))
	if t == nil {
		kind, i, gen := splitHandle(uintptr(th))
		if kind == kindType && i < len(typeSlots) && typeSlots[i].live && typeSlots[i].gen == gen {
			t = typeSlots[i].t
		}
	}
	if t == nil {
		return f.fail(call, errType, "datatype = %s is not a datatype", describe(uintptr(th)))
	}
	e, bad := f.fileExtent(t)
	if bad != nil {
		return f.fail(call, bad.class, "%s", bad.msg)
	}
	*out = C.MPI_Count(e)
	return 0
}

// ---- mapping the view ----

// runs calls fn for the file runs holding view bytes [v, v+n): fn(off, pos,
// len) is len bytes at file offset off, bytes pos.. of the access; adjacent
// runs are merged. fn returning false stops.
func (f *file) runs(v, n int64, fn func(off, pos, l int64) bool) {
	ft := f.ftype
	if n <= 0 {
		return
	}
	if ft.contig && len(ft.segs) == 1 {
		fn(f.disp+ft.segs[0].off+v, 0, n)
		return
	}
	var pOff, pPos, pLen int64 = 0, 0, 0
	emit := func(off, pos, l int64) bool {
		if pLen > 0 && off == pOff+pLen && pos == pPos+pLen {
			pLen += l
			return true
		}
		if pLen > 0 && !fn(pOff, pPos, pLen) {
			return false
		}
		pOff, pPos, pLen = off, pos, l
		return true
	}
	item, in, ext := v/ft.wire, v%ft.wire, ft.extent()
	pos := int64(0)
	for n > 0 {
		base := f.disp + item*ext
		acc := int64(0)
		for _, s := range ft.segs {
			sb := s.len * s.n
			if in >= acc+sb {
				acc += sb
				continue
			}
			for k := (in - acc) / s.len; k < s.n && n > 0; k++ {
				skip := max(0, in-(acc+k*s.len))
				l := min(s.len-skip, n)
				if !emit(base+s.off+k*s.stride+skip, pos, l) {
					return
				}
				pos, n, in = pos+l, n-l, in+l
			}
			acc += sb
			if n == 0 {
				break
			}
		}
		item, in = item+1, 0
	}
	if pLen > 0 {
		fn(pOff, pPos, pLen)
	}
}

// viewBytes is the view byte of view position pos (in etypes), checked
// with an access of bytes view bytes from there: every file offset it
// touches must lie within maxTypeBound (so no product or sum on the way
// wraps, and no offset lands before the one asked for). It returns an
// error naming what (the argument, in the caller's words) and the bound.
func (f *file) viewBytes(pos, bytes int64, what string) (int64, *ioError) {
	ft := f.ftype
	v, ok := mulCheck(pos, f.etype.wire)
	if ok && within(v, maxTypeBound) {
		// The file offsets of view bytes [v, v+bytes) lie below those of
		// the filetype item after the last one they touch.
		items, okI := mulCheck((v+bytes)/ft.wire+1, ft.extent())
		if okI && within(items, maxTypeBound) && within(f.disp+items+max(0, ft.trueUB), maxTypeBound) {
			return v, nil
		}
	}
	return 0, ioErr(errArg, "%s = %d etypes of %d bytes (disp %d, filetype extent %d) lies beyond bcsmpi's bound of %d bytes on the file", what, pos, f.etype.wire, f.disp, ft.extent(), maxTypeBound)
}

// byteOffset is the file offset of view position pos (in etypes).
func (f *file) byteOffset(pos int64) int64 {
	out := f.disp
	f.runs(pos*f.etype.wire, 1, func(off, _, _ int64) bool { out = off; return false })
	return out
}

// eofPos is the view position (in etypes) of the end of a file of size
// bytes: the view bytes that lie before it.
func (f *file) eofPos(size int64) int64 {
	ft := f.ftype
	if size <= f.disp {
		return 0
	}
	ext := ft.extent()
	rel := size - f.disp
	item := max(0, (rel-ft.trueUB)/ext) // items wholly before the end
	v := item * ft.wire
	for ; ; item++ {
		base := f.disp + item*ext
		if base+ft.trueLB >= size {
			break
		}
		for _, s := range ft.segs {
			for k := int64(0); k < s.n; k++ {
				o := base + s.off + k*s.stride
				if o >= size {
					break
				}
				v += min(s.len, size-o)
			}
		}
	}
	return v / f.etype.wire
}

// ---- data access ----

// The ioOp bits of bcs_file_io (shim.h mirrors them in shim_file.c).
const (
	ioWrite   = 1
	ioAt      = 2 // explicit offset
	ioShared  = 4
	ioOrdered = 8
	ioAll     = 16 // collective
	ioNB      = 32 // nonblocking: a request
	ioBegin   = 64 // split collective _begin
	ioLarge   = 128
)

func ioCall(op int) string {
	var b strings.Builder
	b.WriteString("MPI_File_")
	if op&ioNB != 0 {
		b.WriteString("i")
	}
	if op&ioWrite != 0 {
		b.WriteString("write")
	} else {
		b.WriteString("read")
	}
	switch {
	case op&ioAt != 0:
		b.WriteString("_at")
	case op&ioShared != 0:
		b.WriteString("_shared")
	case op&ioOrdered != 0:
		b.WriteString("_ordered")
	}
	if op&ioAll != 0 {
		b.WriteString("_all")
	}
	if op&ioBegin != 0 {
		b.WriteString("_begin")
	}
	if op&ioLarge != 0 {
		b.WriteString("_c")
	}
	return b.String()
}

// access is one read or write, checked: err is what check found (the
// access then moves nothing and fails).
type access struct {
	o      int
	call   string
	offset int64
	buf    unsafe.Pointer
	count  int
	t      *dtInfo
	dt     uintptr // t's handle (a conversion function is passed it)
	bytes  int64   // in the view
	err    *ioError
}

// bcs_file_io is every read and write: op says which (ioOp bits). A split
// collective's _begin checks and records the access, which its _end runs,
// so _begin never blocks.
//
//export bcs_file_io
func bcs_file_io(op C.int, h C.uintptr_t, offset C.MPI_Offset, buf unsafe.Pointer, count C.MPI_Count, dt C.uintptr_t, st *C.MPI_Status, reqOut *C.uintptr_t) C.int {
	o := int(op)
	call := ioCall(o)
	f, rc := lookupFile(call, h)
	if rc != 0 {
		return rc
	}
	a := &access{o: o, call: call, offset: int64(offset), buf: buf, count: int(count), dt: uintptr(dt)}
	a.err = f.check(o, offset, buf, count, dt, reqOut)
	if a.err == nil {
		a.t, _ = committedTypeQuiet(uintptr(dt))
		a.bytes, _ = f.accessBytes(a.t, int64(count)) // checked by check
	}
	if o&ioBegin != 0 {
		if f.split != nil {
			return f.fail(call, errIO, "%s is still active on this file; call its _end first (one split collective at a time)", f.split.call)
		}
		f.split = &splitOp{call: call, kind: o & (ioAt | ioOrdered), write: o&ioWrite != 0, buf: buf, a: a}
		return 0
	}
	return f.run(a, st, reqOut)
}

// run does a checked access: where it starts, the system calls, and for
// the blocking collectives the members' synchronisation (every member's
// data is in the file once any returns, and they fail together).
func (f *file) run(a *access, st *C.MPI_Status, reqOut *C.uintptr_t) C.int {
	o, mine := a.o, a.err
	var start int64 // where the access starts, in view bytes
	switch {
	case mine != nil:
	case o&ioAt != 0:
		start = a.offset * f.etype.wire // checked by check
	case o&ioOrdered != 0:
		var err error
		if start, err = f.ordered(a.bytes); err != nil {
			return f.failErr(err)
		}
		_, mine = f.viewBytes(start/f.etype.wire, a.bytes, "the shared file pointer")
	case o&ioShared != 0:
		n := a.bytes / f.etype.wire
		p := atomic.AddInt64(f.shared, n) - n
		if start, mine = f.viewBytes(p, a.bytes, "the shared file pointer"); mine != nil {
			atomic.AddInt64(f.shared, -n)
		}
	default:
		start = f.indiv * f.etype.wire // checked by check
	}
	if o&ioOrdered != 0 && a.err != nil && f.shared != nil { // still take part in the ordering
		if _, err := f.ordered(0); err != nil {
			return f.failErr(err)
		}
	}
	var moved int64 // native packed bytes, for the status
	if mine == nil {
		var inView int64
		inView, moved, mine = f.move(o&ioWrite != 0, start, a)
		if o&(ioAt|ioShared|ioOrdered) == 0 {
			f.indiv += inView / f.etype.wire
		}
	}
	if o&(ioAll|ioOrdered) != 0 && o&ioNB == 0 && f.c != nil {
		e, err := agree(f.c, mine, a.call)
		if err != nil {
			return f.failErr(err)
		}
		mine = e
	}
	if mine != nil {
		// The status says what moved before the error (a short write:
		// what the individual file pointer passed).
		putRaw(st, C.MPI_ANY_SOURCE, C.MPI_ANY_TAG, uint64(moved), mine.class)
		return f.fail(a.call, mine.class, "%s", mine.msg)
	}
	if reqOut != nil {
		*reqOut = C.uintptr_t(newReq(nil, &localReq{done: true, source: -1, rtag: mpiapi.AnyTag, bytes: uint64(moved)}, 0))
		return 0
	}
	putRaw(st, C.MPI_ANY_SOURCE, C.MPI_ANY_TAG, uint64(moved), 0)
	return 0
}

// committedTypeQuiet resolves a committed datatype without raising.
func committedTypeQuiet(h uintptr) (*dtInfo, string) {
	if t := predefinedType(h); t != nil {
		return t, ""
	}
	if h == hTypeNull {
		return nil, "MPI_DATATYPE_NULL, want a datatype such as MPI_INT"
	}
	kind, i, gen := splitHandle(h)
	if kind == kindType && i < len(typeSlots) {
		if e := &typeSlots[i]; e.live && e.gen == gen {
			if !e.t.committed {
				return nil, describe(h) + " is not committed; call MPI_Type_commit before using it to move data"
			}
			return e.t, ""
		}
		return nil, describe(h) + " was freed with MPI_Type_free"
	}
	return nil, describe(h) + " is not a datatype"
}

// check validates an access's arguments.
func (f *file) check(o int, offset C.MPI_Offset, buf unsafe.Pointer, count C.MPI_Count, dt C.uintptr_t, reqOut *C.uintptr_t) *ioError {
	write := o&ioWrite != 0
	t, why := committedTypeQuiet(uintptr(dt))
	switch {
	case write && f.amode&modeRdonly != 0:
		return ioErr(errReadOnly, "%q was opened with MPI_MODE_RDONLY", f.name)
	case !write && f.amode&modeWronly != 0:
		return ioErr(errAccess, "%q was opened with MPI_MODE_WRONLY, so it cannot be read", f.name)
	case f.amode&modeSequential != 0 && o&(ioShared|ioOrdered) == 0:
		return ioErr(errUnsupported, "%q was opened with MPI_MODE_SEQUENTIAL: only the shared file pointer calls may access it", f.name)
	case o&(ioShared|ioOrdered) != 0 && f.shared == nil:
		return ioErr(errUnsupported, "this file has no shared file pointer: %s", f.sharedWhy)
	case o&ioNB != 0 && reqOut == nil:
		return ioErr(errArg, "request = NULL")
	case count < 0:
		return ioErr(errCount, "count = %d, want >= 0", int64(count))
	case t == nil:
		return ioErr(errType, "datatype = %s", why)
	case o&ioAt != 0 && offset < 0:
		return ioErr(errArg, "offset = %d, want >= 0 (in etypes of the view)", int64(offset))
	}
	if _, e := t.countBytes("count", int64(count)); e != nil {
		return ioErr(e.class, "%s", e.msg)
	}
	bytes, bad := f.accessBytes(t, int64(count))
	if bad != nil {
		return bad
	}
	if bytes%f.etype.wire != 0 {
		return ioErr(errType, "%d items of %s are %d bytes in the file, not a whole number of etypes (%s, %d bytes)", int64(count), t.describe(), bytes, f.uetype.describe(), f.etype.wire)
	}
	if f.rep != nil && !f.rep.builtin && bytes != t.wire*int64(count) && (write && f.rep.write == nil || !write && f.rep.read == nil) {
		return ioErr(errConversion, "datarep %q has no %s conversion function (MPI_CONVERSION_FN_NULL), so the access moves native data, but its extent function gives %s's %d native bytes %d bytes in the file", f.rep.name, map[bool]string{true: "write", false: "read"}[write], t.describe(), t.wire*int64(count), bytes)
	}
	if bytes > 0 && buf == nil {
		return ioErr(errBuffer, "buf = NULL with count = %d", int64(count))
	}
	switch {
	case o&ioAt != 0:
		if _, e := f.viewBytes(int64(offset), bytes, "offset"); e != nil {
			return e
		}
	case o&(ioShared|ioOrdered) == 0:
		if _, e := f.viewBytes(f.indiv, bytes, "the individual file pointer"); e != nil {
			return e
		}
	}
	return nil
}

// ordered is the start (view bytes) of this member's part of an ordered
// access of bytes: members in rank order from the shared file pointer,
// which moves past them all before any member goes on.
func (f *file) ordered(bytes int64) (int64, error) {
	base := int64(0)
	if f.rank == 0 {
		base = atomic.LoadInt64(f.shared)
	}
	all, err := allgather(f.c, []int64{bytes / f.etype.wire, base})
	if err != nil {
		return 0, err
	}
	base = all[1]
	start, total := base, int64(0)
	for r := 0; r < len(all)/2; r++ {
		if r < f.rank {
			start += all[2*r]
		}
		total += all[2*r]
	}
	if f.rank == 0 {
		atomic.StoreInt64(f.shared, base+total)
	}
	if f.c != nil {
		if err := mpiapi.Barrier(f.c); err != nil {
			return 0, err
		}
	}
	return start * f.etype.wire, nil
}

// move does the system calls of an access a of a.bytes view bytes from
// start: the view bytes moved (a read stops at the end of the file) and
// the native packed bytes they hold (the status's count).
func (f *file) move(write bool, start int64, a *access) (int64, int64, *ioError) {
	buf, count, t, bytes := a.buf, a.count, a.t, a.bytes
	if bytes == 0 {
		return 0, 0, nil
	}
	defer f.lock(write)()
	if f.rep != nil && (f.rep.builtin || write && f.rep.write != nil || !write && f.rep.read != nil) {
		return f.moveConverted(write, start, buf, count, t, a.dt, bytes)
	}
	var data []byte
	if t.contig {
		data = unsafe.Slice((*byte)(unsafe.Add(buf, t.trueLB)), bytes)
	} else {
		data = make([]byte, bytes)
		if write {
			t.pack(data, buf, count)
		}
	}
	var moved int64
	var bad *ioError
	if write {
		moved, bad = f.writeView(start, data)
	} else {
		moved, bad = f.readView(start, data)
	}
	if !write && !t.contig && moved > 0 {
		t.unpack(buf, data[:moved], count)
	}
	return moved, moved, bad
}

// lock takes, in atomic mode, an fcntl lock of the whole file for an
// access (shared for reads); it returns its release.
func (f *file) lock(write bool) func() {
	if !f.atomic {
		return func() {}
	}
	lt := int16(syscall.F_RDLCK)
	if write {
		lt = syscall.F_WRLCK
	}
	lk := syscall.Flock_t{Type: lt, Whence: 0}
	if err := syscall.FcntlFlock(uintptr(f.fd), syscall.F_SETLKW, &lk); err != nil {
		return func() {}
	}
	return func() {
		lk.Type = syscall.F_UNLCK
		syscall.FcntlFlock(uintptr(f.fd), syscall.F_SETLK, &lk)
	}
}

// writeView writes data at view bytes start..: the bytes written.
func (f *file) writeView(start int64, data []byte) (int64, *ioError) {
	var moved int64
	var bad *ioError
	f.runs(start, int64(len(data)), func(off, pos, l int64) bool {
		n, e := f.pio(true, data[pos:pos+l], off)
		moved, bad = moved+n, e
		return e == nil && n == l
	})
	return moved, bad
}

// readView reads view bytes start.. into data, stopping at the end of the
// file: the bytes read. Data sieving: runs are read in batches, each batch
// whose span is dense enough with one pread of the span.
func (f *file) readView(start int64, data []byte) (int64, *ioError) {
	var moved int64
	var bad *ioError
	var batch []fileRun
	more := true
	flush := func() {
		if more && len(batch) > 0 {
			var n int64
			n, bad, more = f.sieveRead(batch, data)
			moved += n
		}
		batch = batch[:0]
	}
	f.runs(start, int64(len(data)), func(off, pos, l int64) bool {
		batch = append(batch, fileRun{off, pos, l})
		if len(batch) == sieveRuns {
			flush()
		}
		return more
	})
	flush()
	return moved, bad
}

// pio is one pread or pwrite of all of b at off, retried until it has
// moved everything, the file ends (a read) or it fails: the bytes moved.
func (f *file) pio(write bool, b []byte, off int64) (int64, *ioError) {
	var done int64
	for done < int64(len(b)) {
		var n int
		var err error
		if write {
			n, err = syscall.Pwrite(f.fd, b[done:], off+done)
		} else {
			n, err = syscall.Pread(f.fd, b[done:], off+done)
		}
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil {
			what := "reading"
			if write {
				what = "writing"
			}
			return done, ioErr(errnoClass(err), "%s %d bytes of %q at offset %d: %v", what, len(b), f.name, off, err)
		}
		if n == 0 { // the end of the file
			break
		}
		done += int64(n)
	}
	return done, nil
}

// fileRun is l bytes at file offset off, bytes pos.. of an access.
type fileRun struct{ off, pos, l int64 }

// Data sieving: a batch of at most sieveRuns runs is read with one pread of
// its span when the span is at most twice the data plus sieveSlack and at
// most sieveMax bytes.
const (
	sieveRuns  = 1 << 14
	sieveSlack = 64 << 10
	sieveMax   = 64 << 20
)

// sieveRead reads a batch of runs into data: the bytes read up to the
// first that lies beyond the end of the file, an error, and whether to go
// on (the file did not end).
func (f *file) sieveRead(rs []fileRun, data []byte) (int64, *ioError, bool) {
	var moved, want int64
	lo, hi := rs[0].off, rs[0].off+rs[0].l
	for _, r := range rs {
		lo, hi, want = min(lo, r.off), max(hi, r.off+r.l), want+r.l
	}
	if span := hi - lo; len(rs) > 1 && span <= 2*want+sieveSlack && span <= sieveMax {
		win := make([]byte, span)
		got, bad := f.pio(false, win, lo)
		if bad != nil {
			return 0, bad, false
		}
		for _, r := range rs {
			avail := min(r.l, max(0, lo+got-r.off))
			copy(data[r.pos:r.pos+avail], win[r.off-lo:])
			moved += avail
			if avail < r.l {
				return moved, nil, false
			}
		}
		return moved, nil, true
	}
	for _, r := range rs {
		n, bad := f.pio(false, data[r.pos:r.pos+r.l], r.off)
		moved += n
		if bad != nil || n < r.l {
			return moved, bad, false
		}
	}
	return moved, nil, true
}

// bcs_file_end is the _end of a split collective: what says which (ioAt,
// ioOrdered or 0, with ioWrite).
//
//export bcs_file_end
func bcs_file_end(what C.int, h C.uintptr_t, buf unsafe.Pointer, st *C.MPI_Status) C.int {
	w := int(what)
	call := "MPI_File_read"
	if w&ioWrite != 0 {
		call = "MPI_File_write"
	}
	switch {
	case w&ioAt != 0:
		call += "_at_all_end"
	case w&ioOrdered != 0:
		call += "_ordered_end"
	default:
		call += "_all_end"
	}
	f, rc := lookupFile(call, h)
	if rc != 0 {
		return rc
	}
	s := f.split
	var bad *ioError
	switch {
	case s == nil:
		bad = ioErr(errIO, "no split collective is active on this file; call the matching _begin first")
	case s.kind != w&(ioAt|ioOrdered) || s.write != (w&ioWrite != 0):
		bad = ioErr(errIO, "the active split collective is %s, which this call does not end", s.call)
	case s.buf != buf:
		bad = ioErr(errBuffer, "buf = %p differs from %s's %p", buf, s.call, s.buf)
	}
	f.split = nil
	if bad != nil {
		// The _end is collective: this member still takes part in the
		// ordering and the agreement the others' _end does (run with an
		// error moves nothing), so every member fails together.
		o := w & (ioAt | ioOrdered | ioWrite)
		if o&ioOrdered == 0 {
			o |= ioAll
		}
		return f.run(&access{o: o, call: call, buf: buf, err: bad}, st, nil)
	}
	s.a.call = call
	return f.run(s.a, st, nil)
}

// ---- file pointers ----

//export bcs_file_seek
func bcs_file_seek(h C.uintptr_t, offset C.MPI_Offset, whence C.int, shared C.int) C.int {
	call := "MPI_File_seek"
	if shared != 0 {
		call = "MPI_File_seek_shared"
	}
	f, rc := lookupFile(call, h)
	if rc != 0 {
		return rc
	}
	var mine *ioError
	cur := f.indiv
	if shared != 0 {
		switch {
		case f.amode&modeSequential != 0:
			mine = ioErr(errUnsupported, "%q was opened with MPI_MODE_SEQUENTIAL, whose shared file pointer only moves forward with its accesses", f.name)
		case f.shared == nil:
			mine = ioErr(errUnsupported, "this file has no shared file pointer: %s", f.sharedWhy)
		default:
			cur = f.sharedPos()
		}
	} else if f.amode&modeSequential != 0 {
		mine = ioErr(errUnsupported, "%q was opened with MPI_MODE_SEQUENTIAL, which has no individual file pointer", f.name)
	}
	var pos int64
	if mine == nil && !within(int64(offset), maxTypeBound) {
		mine = ioErr(errArg, "offset = %d etypes lies beyond bcsmpi's bound of %d bytes on the file", int64(offset), maxTypeBound)
	}
	if mine == nil {
		switch whence {
		case C.MPI_SEEK_SET:
			pos = int64(offset)
		case C.MPI_SEEK_CUR:
			pos = cur + int64(offset)
		case C.MPI_SEEK_END:
			size, e := fsize(f)
			if e != nil {
				mine = e
			}
			pos = f.eofPos(size) + int64(offset)
		default:
			mine = ioErr(errArg, "whence = %d, want MPI_SEEK_SET (%d), MPI_SEEK_CUR (%d) or MPI_SEEK_END (%d)", int(whence), C.MPI_SEEK_SET, C.MPI_SEEK_CUR, C.MPI_SEEK_END)
		}
	}
	if mine == nil && pos < 0 {
		mine = ioErr(errArg, "offset = %d moves the file pointer to %d etypes, before the start of the view", int64(offset), pos)
	}
	if mine == nil {
		_, mine = f.viewBytes(pos, 0, fmt.Sprintf("offset = %d moves the file pointer to", int64(offset)))
	}
	if shared != 0 { // collective: every member must reach one position
		p := pos
		if mine != nil {
			p = -1
		}
		all, err := allgather(f.c, []int64{p})
		if err != nil {
			return f.failErr(err)
		}
		for r, q := range all {
			if mine == nil && q >= 0 && q != pos {
				mine = ioErr(errNotSame, "the shared file pointer would move to %d etypes here and to %d on rank %d; every member must pass the same offset and whence", pos, q, r)
			}
		}
		e, err := agree(f.c, mine, call)
		if err != nil {
			return f.failErr(err)
		}
		if e != nil {
			return f.fail(call, e.class, "%s", e.msg)
		}
		if f.rank == 0 {
			atomic.StoreInt64(f.shared, pos)
		}
		if f.c != nil {
			if err := mpiapi.Barrier(f.c); err != nil {
				return f.failErr(err)
			}
		}
		return 0
	}
	if mine != nil {
		return f.fail(call, mine.class, "%s", mine.msg)
	}
	f.indiv = pos
	return 0
}

//export bcs_file_get_position
func bcs_file_get_position(h C.uintptr_t, out *C.MPI_Offset, shared C.int) C.int {
	call := "MPI_File_get_position"
	if shared != 0 {
		call = "MPI_File_get_position_shared"
	}
	f, rc := lookupFile(call, h)
	if rc != 0 {
		return rc
	}
	if out == nil {
		return f.fail(call, errArg, "offset = NULL")
	}
	if shared != 0 && f.amode&modeSequential != 0 {
		return f.fail(call, errUnsupported, "%q was opened with MPI_MODE_SEQUENTIAL, whose shared file pointer is not to be asked for", f.name)
	}
	if shared != 0 {
		if f.shared == nil {
			return f.fail(call, errUnsupported, "this file has no shared file pointer: %s", f.sharedWhy)
		}
		*out = C.MPI_Offset(f.sharedPos())
		return 0
	}
	*out = C.MPI_Offset(f.indiv)
	return 0
}

//export bcs_file_get_byte_offset
func bcs_file_get_byte_offset(h C.uintptr_t, offset C.MPI_Offset, out *C.MPI_Offset) C.int {
	const call = "MPI_File_get_byte_offset"
	f, rc := lookupFile(call, h)
	if rc != 0 {
		return rc
	}
	if out == nil {
		return f.fail(call, errArg, "disp = NULL")
	}
	if offset < 0 {
		return f.fail(call, errArg, "offset = %d, want >= 0 (in etypes of the view)", int64(offset))
	}
	if _, e := f.viewBytes(int64(offset), 0, "offset"); e != nil {
		return f.fail(call, e.class, "%s", e.msg)
	}
	*out = C.MPI_Offset(f.byteOffset(int64(offset)))
	return 0
}
