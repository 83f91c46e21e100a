package launch

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// freezer is the cgroup v2 directory that holds one job's ranks on one node
// when the gang stops jobs with the cgroup freezer (gang_stop: freezer, or
// auto where one is delegated) instead of SIGSTOP/SIGCONT to their process
// group. Writing 1 to its cgroup.freeze stops every process in it, the
// ranks and whatever they started, without a signal any of them can see,
// catch or have reported by wait (a rank's own SIGCONT handler, a debugger,
// a shell's job control); 0 lets them go on. A frozen process can still be
// killed.
//
// The directory is made beside this process's own cgroup (under it: a
// cgroup whose subtree_control is empty may hold processes and children),
// named bcsmpi-<pid>-<job>-node<N>, and removed at the end of the job.
// Ranks are born in it (clone3's CLONE_INTO_CGROUP, Linux 5.7), so nothing
// they start can be outside it; a rank of a descheduled job is started in
// the job's next turn (a process born frozen would not reach its exec, and
// the spawner would wait for it holding the group's lock). Before
// a freezer is used, a probe process is started in it the same way; where
// that fails, gang_stop auto uses signals.
//
// A launcher SIGKILLed while its job is frozen: the ranks die (their
// parent-death signal gets through a freeze), but what they started stays
// frozen in the directory until the next launcher or gang daemon in the
// same cgroup starts (sweepFreezers: a directory whose launcher's pid is
// gone is thawed, emptied and removed). Signals had the same gap in
// another form (a stopped orphaned group is continued by the kernel, not
// ended).
type freezer struct {
	mu     sync.Mutex
	dir    string   // "" once closed
	fd     *os.File // the directory, for CLONE_INTO_CGROUP
	freeze *os.File // its cgroup.freeze, open for the switches (one write each, on the strobe thread)
}

// cgroup2Base is the directory of this process's cgroup v2, or an error
// saying why there is none: no cgroup2 mount, or no v2 entry in
// /proc/self/cgroup.
func cgroup2Base() (string, error) {
	mnt, root := "", "/"
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// id parent major:minor root mountpoint options ... - fstype source superoptions
		fields := strings.Fields(sc.Text())
		for i, x := range fields {
			if x == "-" && i+1 < len(fields) && fields[i+1] == "cgroup2" && len(fields) > 4 {
				mnt, root = fields[4], fields[3] // root: the cgroup the mount shows as its top (a container's own)
			}
		}
		if mnt != "" {
			break
		}
	}
	if mnt == "" {
		return "", errors.New("no cgroup2 file system is mounted")
	}
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return "", err
	}
	for _, l := range strings.Split(string(b), "\n") {
		if p, ok := strings.CutPrefix(l, "0::"); ok {
			if root != "/" {
				if rel, ok := strings.CutPrefix(p, root); ok && (rel == "" || rel[0] == '/') {
					p = rel
				}
			}
			return filepath.Join(mnt, p), nil
		}
	}
	return "", errors.New("this process has no cgroup v2 entry in /proc/self/cgroup")
}

// newFreezer makes the freezer of node of job jobID, or says why it cannot
// (no cgroup v2, the directory not writable, a kernel without
// cgroup.freeze, before Linux 5.2).
func newFreezer(jobID string, node int) (*freezer, error) {
	base, err := cgroup2Base()
	if err != nil {
		return nil, err
	}
	sweepFreezers(base)
	dir := filepath.Join(base, fmt.Sprintf("bcsmpi-%d-%s-node%d", os.Getpid(), jobID, node))
	if err := os.Mkdir(dir, 0o700); err != nil {
		return nil, fmt.Errorf("cannot make a cgroup for the ranks: %w", err)
	}
	fz := &freezer{dir: dir}
	if _, err := os.Stat(filepath.Join(dir, "cgroup.freeze")); err != nil {
		fz.close()
		return nil, fmt.Errorf("%s has no cgroup.freeze (Linux 5.2 or later is needed)", dir)
	}
	if fz.fd, err = os.Open(dir); err != nil {
		fz.close()
		return nil, err
	}
	if fz.freeze, err = os.OpenFile(filepath.Join(dir, "cgroup.freeze"), os.O_WRONLY, 0); err != nil {
		fz.close()
		return nil, err
	}
	// The probe: a process born in the cgroup, as the ranks will be.
	probe, err := exec.LookPath("true")
	if err == nil {
		cmd := exec.Command(probe)
		cmd.SysProcAttr = &syscall.SysProcAttr{}
		fz.into(cmd.SysProcAttr)
		err = cmd.Run()
	}
	if err != nil {
		fz.close()
		return nil, fmt.Errorf("cannot start a process in the cgroup %s (CLONE_INTO_CGROUP, Linux 5.7 or later): %w", dir, err)
	}
	return fz, nil
}

var errClosed = errors.New("the ranks' cgroup is closed")

// into makes the process that attr starts be born in the freezer.
func (fz *freezer) into(attr *syscall.SysProcAttr) {
	attr.UseCgroupFD = true
	attr.CgroupFD = int(fz.fd.Fd())
}

var freezeValue = [2][]byte{[]byte("0"), []byte("1")}

// set freezes (true) or thaws (false) every process in the freezer: one
// write to the open cgroup.freeze.
func (fz *freezer) set(frozen bool) error {
	fz.mu.Lock()
	defer fz.mu.Unlock()
	if fz.dir == "" {
		return errClosed
	}
	v := freezeValue[0]
	if frozen {
		v = freezeValue[1]
	}
	_, err := fz.freeze.Write(v)
	return err
}

// frozen reads cgroup.events: whether every process in the freezer is
// frozen now (freezing completes asynchronously after set(true)).
func (fz *freezer) frozen() (bool, error) {
	fz.mu.Lock()
	defer fz.mu.Unlock()
	if fz.dir == "" {
		return false, errClosed
	}
	b, err := os.ReadFile(filepath.Join(fz.dir, "cgroup.events"))
	if err != nil {
		return false, err
	}
	return strings.Contains(string(b), "frozen 1"), nil
}

// close thaws the freezer, kills what is still in it (what the ranks left:
// the job is over) and removes it. Idempotent.
func (fz *freezer) close() error {
	if fz == nil {
		return nil
	}
	fz.mu.Lock()
	defer fz.mu.Unlock()
	if fz.dir == "" {
		return nil
	}
	os.WriteFile(filepath.Join(fz.dir, "cgroup.freeze"), []byte("0"), 0)
	err := removeCgroup(fz.dir)
	for _, f := range []*os.File{fz.fd, fz.freeze} {
		if f != nil {
			f.Close()
		}
	}
	fz.dir = ""
	return err
}

// removeCgroup kills the processes in dir and removes it; a killed process
// leaves its cgroup when it has been reaped, so rmdir is retried for a
// while (EBUSY) before giving up with the error.
func removeCgroup(dir string) error {
	var err error
	for i := 0; i < 200; i++ {
		if b, rerr := os.ReadFile(filepath.Join(dir, "cgroup.procs")); rerr == nil {
			for _, f := range strings.Fields(string(b)) {
				if pid, perr := strconv.Atoi(f); perr == nil {
					syscall.Kill(pid, syscall.SIGKILL)
				}
			}
		}
		if err = syscall.Rmdir(dir); err == nil || errors.Is(err, syscall.ENOENT) {
			return nil
		}
		if !errors.Is(err, syscall.EBUSY) {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	return fmt.Errorf("removing the ranks' cgroup %s: %w", dir, err)
}

// SweepFreezers removes the freezers beside this process's cgroup whose
// launcher is gone (sweepFreezers); a gang daemon calls it as it starts.
func SweepFreezers() {
	if base, err := cgroup2Base(); err == nil {
		sweepFreezers(base)
	}
}

// sweepFreezers removes the freezers under base whose launcher (the pid in
// the name) is gone: one SIGKILLed before it could remove them.
func sweepFreezers(base string) {
	ents, _ := filepath.Glob(filepath.Join(base, "bcsmpi-*-*-node*"))
	for _, d := range ents {
		f := strings.SplitN(filepath.Base(d), "-", 3)
		pid, err := strconv.Atoi(f[1])
		if err != nil || pid == os.Getpid() {
			continue
		}
		if syscall.Kill(pid, 0) == syscall.ESRCH {
			os.WriteFile(filepath.Join(d, "cgroup.freeze"), []byte("0"), 0)
			removeCgroup(d)
		}
	}
}
