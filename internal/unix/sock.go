//go:build linux

package unix

import (
	"errors"
	"fmt"
	"net"
	"os"

	"golang.org/x/sys/unix"
)

// Unix-domain sockets and file locks for the per-user daemon (internal/gangd).

// SendFiles writes b on c with files attached (SCM_RIGHTS), in one sendmsg:
// the receiver gets the descriptors with the first byte of b. The caller
// keeps its files; the receiver gets its own copies.
func SendFiles(c *net.UnixConn, b []byte, files []*os.File) error {
	fds := make([]int, len(files))
	for i, f := range files {
		fds[i] = int(f.Fd())
	}
	var oob []byte
	if len(fds) > 0 {
		oob = unix.UnixRights(fds...)
	}
	n, oobn, err := c.WriteMsgUnix(b, oob, nil)
	if err != nil {
		return err
	}
	if n != len(b) || oobn != len(oob) {
		return fmt.Errorf("sendmsg: wrote %d of %d bytes and %d of %d control bytes", n, len(b), oobn, len(oob))
	}
	return nil
}

// RecvFiles reads into b from c (one recvmsg) and returns the descriptors
// that came with it, at most max of them, as files the caller owns and must
// close. More than max descriptors, or a control message the kernel had to
// truncate, is an error; every descriptor that did arrive is closed then.
func RecvFiles(c *net.UnixConn, b []byte, max int) (int, []*os.File, error) {
	oob := make([]byte, unix.CmsgSpace(4*(max+1)))
	n, oobn, flags, _, err := c.ReadMsgUnix(b, oob)
	var files []*os.File
	if oobn > 0 {
		msgs, perr := unix.ParseSocketControlMessage(oob[:oobn])
		if perr != nil && err == nil {
			err = fmt.Errorf("control message: %w", perr)
		}
		for _, m := range msgs {
			fds, ferr := unix.ParseUnixRights(&m)
			if ferr != nil {
				continue // not SCM_RIGHTS (credentials are not asked for)
			}
			for _, fd := range fds {
				unix.CloseOnExec(fd)
				files = append(files, os.NewFile(uintptr(fd), fmt.Sprintf("fd %d from a peer", fd)))
			}
		}
	}
	if err == nil && flags&unix.MSG_CTRUNC != 0 {
		err = fmt.Errorf("descriptors truncated (more than %d sent)", max)
	}
	if err == nil && len(files) > max {
		err = fmt.Errorf("%d descriptors sent, want at most %d", len(files), max)
	}
	if err != nil {
		for _, f := range files {
			f.Close()
		}
		return n, nil, err
	}
	return n, files, nil
}

// PeerCred is the process id and user id of the process that connected c
// (SO_PEERCRED: as they were at connect time).
func PeerCred(c *net.UnixConn) (pid, uid int, err error) {
	rc, err := c.SyscallConn()
	if err != nil {
		return 0, 0, err
	}
	var cred *unix.Ucred
	var serr error
	if err := rc.Control(func(fd uintptr) {
		cred, serr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
	}); err != nil {
		return 0, 0, err
	}
	if serr != nil {
		return 0, 0, fmt.Errorf("SO_PEERCRED: %w", serr)
	}
	return int(cred.Pid), int(cred.Uid), nil
}

// TryLock takes an exclusive lock (flock) on f without waiting. A lock held
// through another open file description, in this process or another, gives
// an error matching ErrLocked. The lock lasts until f is closed, or its
// holder dies.
func TryLock(f *os.File) error {
	err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
	if errors.Is(err, unix.EWOULDBLOCK) {
		return ErrLocked
	}
	return err
}
