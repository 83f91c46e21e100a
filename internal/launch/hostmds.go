package launch

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"

	"github.com/bcsmpi/bcsmpi/configs"
	"github.com/bcsmpi/bcsmpi/emds"
	"github.com/bcsmpi/bcsmpi/internal/proto"
	"github.com/bcsmpi/bcsmpi/internal/unix"
	"github.com/bcsmpi/bcsmpi/mds"
)

// The MDS of a job across hosts: each bcsd keeps its node's part in a
// private temporary directory (newHostMonitor): its ranks write their MMDS
// files there, its agent's EMDS window is dumped there, and node 0's bcsd
// adds the master's (emds-global.csv) and the communication matrix, which
// come from the master and node 0's plans. At the end each bcsd sends the
// files over its control connection (control.go) and removes the directory
// before it says it is done ('Z'); bcsrun writes them into the job's MDS
// directory, with the manifest naming every host, and prints the summary as
// for a job on one machine.
//
// A bcsd that cannot remove its directory (SIGKILLed, or its host's
// connection lost before its 'Z') leaves it to bcsrun: once the job has
// ended on every host, bcsrun starts `bcsd --cleanup JOB` on each host that
// connected and never said it was done (through srun, or ssh), which removes
// that job's staging directories there (RemoveStaging). The directory's name
// holds the job's id, which bcsrun knows, so nothing else is touched.
//
// Each bcsd holds its directory's flock while it lives (makeStaging; the
// kernel drops it when the process dies, and ranks do not inherit it), so
// only a directory whose bcsd is gone is removed, by --cleanup or by the
// sweep each bcsd with the MDS on makes as it starts (sweepStaging): what
// bcsrun could not clean (the host unreachable at the job's end) goes at
// the host's next job across hosts with the MDS.

// newHostMonitor makes the MDS part of node me of a job across hosts; nil
// when the MDS is off. Remove its directory with removeDir. With the kernel
// monitor (mds: kernel) it opens this host's (openKernel: its own ranks,
// bcsd as the runtime, its agent publishing the slices), whose files are
// dumped with the host's EMDS; where it cannot load, who says why on
// stderr and the host's part runs without it ('Z' tells bcsrun).
func newHostMonitor(cfg configs.Config, jobID string, me, ranks int, nodeOf []proto.NodeID, who string, stderr io.Writer) (*monitor, error) {
	m := &monitor{mode: cfg.MDSMode(), ranks: ranks}
	if !m.mode.Main && !m.mode.Elan {
		return nil, nil
	}
	m.fmode, m.dmode = cfg.MDSFileModes()
	sweepStaging()
	dir, held, err := makeStaging(jobID, me)
	if err != nil {
		return nil, fmt.Errorf("MDS directory: %w", err)
	}
	m.dir, m.held = dir, held
	if err := os.Chmod(dir, m.dmode); err != nil {
		m.removeDir()
		return nil, fmt.Errorf("MDS directory: %w", err)
	}
	if m.mode.Elan {
		gsel, lsel, _ := cfg.EMDSSelection()
		if me == 0 {
			m.global = emds.NewWindow(emds.GlobalMetrics, gsel, cfg.EMDSFirst, cfg.EMDSSlices)
			m.gvals = make([]int64, len(emds.GlobalMetrics))
			m.msgs = make([]uint64, ranks*ranks)
			m.bytes = make([]uint64, ranks*ranks)
			m.rmsgs = make([]uint64, ranks*ranks)
			m.rbytes = make([]uint64, ranks*ranks)
		}
		m.nodes = make([]*emds.Window, cfg.Nodes)
		m.nvals = make([][]int64, cfg.Nodes)
		if sel, _ := mds.ParseSet(cfg.MDSNodes); sel.Has(me) {
			m.nodes[me] = emds.NewWindow(emds.LocalMetrics, lsel, cfg.EMDSFirst, cfg.EMDSSlices)
			m.nvals[me] = make([]int64, 0, len(emds.LocalMetrics))
		}
	}
	if m.mode.Kernel {
		m.openKernel(cfg, ranks, nodeOf, me, who, stderr)
	}
	return m, nil
}

// dumpHost writes node me's EMDS files (and node 0's the master's and the
// matrix) into the host's directory, once the agent and the master have
// stopped; it returns the memory the windows used and the problems met.
func (m *monitor) dumpHost(me int) (int64, []string) {
	var mem int64
	var probs []string
	fail := func(what string, err error) {
		if err != nil {
			probs = append(probs, fmt.Sprintf("%s: %v", what, err))
		}
	}
	if m.global != nil {
		fail("EMDS global dump", m.global.Dump(filepath.Join(m.dir, "emds-global.csv"), m.fmode))
		mem += int64(m.global.Bytes())
	}
	if m.msgs != nil { // node 0 (its master's traffic added, in a gang: gangmds.go)
		mem += int64(16 * len(m.msgs))
		fail("communication matrix", m.writeMatrix())
	}
	if m.gangProblem != "" {
		probs = append(probs, m.gangProblem)
	}
	if m.nodes != nil && m.nodes[me] != nil {
		w := m.nodes[me]
		fail("EMDS node dump", w.Dump(filepath.Join(m.dir, fmt.Sprintf("emds-node%d.csv", me)), m.fmode))
		mem += int64(w.Bytes())
	}
	if m.kern != nil { // the agent has stopped: no Publish runs
		fail("EMDS kernel dump", m.kern.Dump(m.dir, m.fmode))
		if d := m.kern.Dropped(); d > 0 { // a note, as on one machine, not missing data
			fmt.Fprintf(m.kernOut, "%s: MDS kernel monitor: %d interfering tasks did not fit its map and are not named\n", m.kernWho, d)
		}
		mem += int64(m.kern.Bytes())
		m.close()
	}
	return mem, probs
}

// ship sends the host's MDS files to bcsrun and then its end ('Z', with
// code); a nil m sends the end alone.
func (h *hostControl) ship(m *monitor, me, code int) error {
	done := hostDone{Code: code, Files: map[string]int64{}}
	if m != nil {
		done.Kernel = m.man.Kernel
		mem, probs := m.dumpHost(me)
		done.Memory = mem
		ents, err := os.ReadDir(m.dir)
		if err != nil {
			probs = append(probs, err.Error())
		}
		var names []string
		for _, e := range ents {
			// A name with ".tmp" is a dump a rank did not finish (killed
			// while writing): not data.
			if e.Type().IsRegular() && !strings.Contains(e.Name(), ".tmp") {
				names = append(names, e.Name())
			}
		}
		sort.Strings(names)
		for _, name := range names {
			n, err := h.sendFile(m.dir, name)
			if err != nil {
				return err
			}
			done.Files[name] = n
		}
		// Sent: the directory goes now, before 'Z', so that a host that
		// said it is done has left nothing (bcsrun cleans up after the
		// others).
		if err := m.removeDir(); err != nil {
			probs = append(probs, fmt.Sprintf("removing the staging directory: %v", err))
		}
		done.Problem = strings.Join(probs, "; ")
	}
	return h.sendJSON('Z', done)
}

// removeDir removes the host's MDS directory (every path out of RunHost;
// again is harmless).
func (m *monitor) removeDir() error {
	if m == nil || m.dir == "" {
		return nil
	}
	err := os.RemoveAll(m.dir)
	if m.held != nil { // what could not be removed is left to a sweep
		m.held.Close()
		m.held = nil
	}
	return err
}

// makeStaging creates node me's staging directory for job, locked (flock)
// through the returned file for as long as it is open: a bcsd that dies
// leaves it unlocked, which RemoveStaging and sweepStaging read as left
// behind. A sweeper that took the new directory's lock first (between
// mkdir and lock) removes it: then another is made.
func makeStaging(job string, me int) (string, *os.File, error) {
	for range 3 {
		dir, err := os.MkdirTemp("", fmt.Sprintf("%s%s-node%d-", stagingPrefix, job, me))
		if err != nil {
			return "", nil, err
		}
		f, err := os.Open(dir)
		if err == nil {
			if err = unix.TryLock(f); err == nil && sameDir(f, dir) {
				return dir, f, nil
			}
			f.Close()
		}
		if err != nil && !errors.Is(err, unix.ErrLocked) && !os.IsNotExist(err) {
			os.RemoveAll(dir)
			return "", nil, err
		}
	}
	return "", nil, errors.New("the staging directory was removed as it was made, three times over (another bcsd sweeping the temporary directory?)")
}

// sameDir reports whether the open directory f is still what path names.
func sameDir(f *os.File, path string) bool {
	a, err1 := f.Stat()
	b, err2 := os.Lstat(path)
	return err1 == nil && err2 == nil && os.SameFile(a, b)
}

// removeIfLeft removes the staging directory at path if it is the caller's
// and no live bcsd holds its lock, and reports whether it did.
func removeIfLeft(path string) (bool, error) {
	fi, err := os.Lstat(path)
	if err != nil || !fi.IsDir() {
		return false, nil
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Getuid() {
		return false, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return false, nil
	}
	defer f.Close()
	if unix.TryLock(f) != nil || !sameDir(f, path) {
		return false, nil // a live bcsd's, or already gone
	}
	if err := os.RemoveAll(path); err != nil {
		return false, err
	}
	return true, nil
}

// sweepStaging removes the staging directories of any job in the temporary
// directory that no live bcsd holds: left by a bcsd that died where bcsrun
// could not clean up after it (its host unreachable at the job's end). Each
// bcsd with the MDS on sweeps as it starts.
func sweepStaging() {
	paths, _ := filepath.Glob(filepath.Join(os.TempDir(), stagingPrefix+"*-node*-*"))
	for _, p := range paths {
		removeIfLeft(p)
	}
}

// stagingPrefix starts the name of a host's MDS staging directory in the
// temporary directory: stagingPrefix + job + "-node" + node + "-" + random.
const stagingPrefix = "bcs-mds-"

// validJobID reports whether id can name a job's staging directories: what
// bcsrun makes (hex, "slurm", digits, '-'), nothing a glob or a path reads
// as special.
func validJobID(id string) bool {
	if id == "" || len(id) > 128 {
		return false
	}
	for _, c := range id {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// RemoveStaging removes job's MDS staging directories on this host (in the
// temporary directory: stagingPrefix + job + "-node…"), those of every node,
// and returns the paths removed. It is `bcsd --cleanup JOB`, which bcsrun
// runs on a host whose bcsd did not say it had removed its own, once the job
// has ended on every host (so no process of the job still writes there).
// Only directories owned by the caller and held by no live bcsd (the
// directory's flock, makeStaging) are removed.
func RemoveStaging(job string) ([]string, error) {
	if !validJobID(job) {
		return nil, fmt.Errorf("job id %q, want letters, digits, '-' and '_' (at most 128)", job)
	}
	paths, err := filepath.Glob(filepath.Join(os.TempDir(), stagingPrefix+job+"-node*"))
	if err != nil {
		return nil, err
	}
	var removed []string
	var errs []error
	for _, p := range paths {
		ok, err := removeIfLeft(p)
		if err != nil {
			errs = append(errs, err)
		}
		if ok {
			removed = append(removed, p)
		}
	}
	return removed, errors.Join(errs...)
}
