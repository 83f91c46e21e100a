package launch

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"

	"github.com/bcsmpi/bcsmpi/configs"
	"github.com/bcsmpi/bcsmpi/emds"
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

// newHostMonitor makes the MDS part of node me of a job across hosts; nil
// when the MDS is off. Remove its directory with removeDir.
func newHostMonitor(cfg configs.Config, jobID string, me, ranks int) (*monitor, error) {
	m := &monitor{mode: cfg.MDSMode(), ranks: ranks}
	if !m.mode.Main && !m.mode.Elan {
		return nil, nil
	}
	m.fmode, m.dmode = cfg.MDSFileModes()
	dir, err := os.MkdirTemp("", fmt.Sprintf("%s%s-node%d-", stagingPrefix, jobID, me))
	if err != nil {
		return nil, fmt.Errorf("MDS directory: %w", err)
	}
	m.dir = dir
	if err := os.Chmod(dir, m.dmode); err != nil {
		os.RemoveAll(dir)
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
		mem += int64(m.global.Bytes()) + int64(16*len(m.msgs))
		fail("communication matrix", m.writeMatrix())
	}
	if m.nodes != nil && m.nodes[me] != nil {
		w := m.nodes[me]
		fail("EMDS node dump", w.Dump(filepath.Join(m.dir, fmt.Sprintf("emds-node%d.csv", me)), m.fmode))
		mem += int64(w.Bytes())
	}
	return mem, probs
}

// ship sends the host's MDS files to bcsrun and then its end ('Z', with
// code); a nil m sends the end alone.
func (h *hostControl) ship(m *monitor, me, code int) error {
	done := hostDone{Code: code, Files: map[string]int64{}}
	if m != nil {
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
	if m != nil && m.dir != "" {
		return os.RemoveAll(m.dir)
	}
	return nil
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
// Only directories owned by the caller are removed.
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
		fi, err := os.Lstat(p)
		if err != nil || !fi.IsDir() {
			continue
		}
		if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Getuid() {
			continue
		}
		if err := os.RemoveAll(p); err != nil {
			errs = append(errs, err)
			continue
		}
		removed = append(removed, p)
	}
	return removed, errors.Join(errs...)
}
