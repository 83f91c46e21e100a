package gangd

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"github.com/bcsmpi/bcsmpi/internal/jobenv"
)

// Names of the daemon's files in its runtime directory.
const (
	SocketName = "bcsd.sock"
	LockName   = "bcsd.lock"
	LogName    = "bcsd.log"
)

// ErrNoDaemon means no daemon is up for this user: no socket, or one that
// nothing listens on any more.
var ErrNoDaemon = errors.New("gangd: no bcsd running")

// RuntimeDir is this user's runtime directory, as an absolute path:
// $BCS_RUNTIME_DIR, else $XDG_RUNTIME_DIR/bcsmpi, else /tmp/bcsmpi-<uid>.
func RuntimeDir() (string, error) {
	d := os.Getenv(jobenv.VarRuntimeDir)
	switch {
	case d != "":
	case os.Getenv("XDG_RUNTIME_DIR") != "":
		d = filepath.Join(os.Getenv("XDG_RUNTIME_DIR"), "bcsmpi")
	default:
		d = fmt.Sprintf("/tmp/bcsmpi-%d", os.Getuid())
	}
	abs, err := filepath.Abs(d)
	if err != nil {
		return "", fmt.Errorf("gangd: runtime directory %q: %w", d, err)
	}
	return abs, nil
}

// MakeDir creates dir (mode 0700) if it does not exist, and checks that it
// is a directory of this user's that nobody else can enter (a mode other
// than 0700 on one of ours is set back to 0700).
func MakeDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("gangd: runtime directory: %w", err)
	}
	if err := checkDir(dir); err != nil {
		if errors.Is(err, errLoose) {
			return os.Chmod(dir, 0o700)
		}
		return err
	}
	return nil
}

var errLoose = errors.New("open to others")

// checkDir says whether dir is a usable runtime directory: a real directory
// (not a link), owned by this user, closed to group and others (errLoose
// otherwise).
func checkDir(dir string) error {
	fi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("gangd: runtime directory %s is not a directory (%v); remove it, or set %s to a directory of yours", dir, fi.Mode().Type(), jobenv.VarRuntimeDir)
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if ok && int(st.Uid) != os.Getuid() {
		return fmt.Errorf("gangd: runtime directory %s belongs to uid %d, not to you (uid %d); remove it, or set %s to a directory of yours", dir, st.Uid, os.Getuid(), jobenv.VarRuntimeDir)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return fmt.Errorf("gangd: runtime directory %s has mode %04o, want 0700: %w", dir, fi.Mode().Perm(), errLoose)
	}
	return nil
}
