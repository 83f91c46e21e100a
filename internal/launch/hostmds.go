package launch

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/bcsmpi/bcsmpi/configs"
	"github.com/bcsmpi/bcsmpi/emds"
	"github.com/bcsmpi/bcsmpi/mds"
)

// The MDS of a job across hosts: each bcsd keeps its node's part in a
// private temporary directory (newHostMonitor): its ranks write their MMDS
// files there, its agent's EMDS window is dumped there, and node 0's bcsd
// adds the master's (emds-global.csv) and the communication matrix, which
// come from the master and node 0's plans. At the end each bcsd sends the
// files over its control connection (control.go) and removes the directory;
// bcsrun writes them into the job's MDS directory, with the manifest naming
// every host, and prints the summary as for a job on one machine.

// newHostMonitor makes the MDS part of node me of a job across hosts; nil
// when the MDS is off. Remove its directory with removeDir.
func newHostMonitor(cfg configs.Config, jobID string, me, ranks int) (*monitor, error) {
	m := &monitor{mode: cfg.MDSMode(), ranks: ranks}
	if !m.mode.Main && !m.mode.Elan {
		return nil, nil
	}
	m.fmode, m.dmode = cfg.MDSFileModes()
	dir, err := os.MkdirTemp("", fmt.Sprintf("bcs-mds-%s-node%d-", jobID, me))
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
		done.Problem = strings.Join(probs, "; ")
	}
	return h.sendJSON('Z', done)
}

// removeDir removes the host's MDS directory (every path out of RunHost).
func (m *monitor) removeDir() {
	if m != nil && m.dir != "" {
		os.RemoveAll(m.dir)
	}
}
