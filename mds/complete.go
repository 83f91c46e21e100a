package mds

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// DefaultFileMode is the permission of MDS files unless mds_file_mode says
// otherwise: the data names the program, its arguments and its timings, so
// only the owner reads it.
const DefaultFileMode os.FileMode = 0o600

// ParseFileMode reads an octal permission such as "0600". The owner must be
// able to read and write (the tools read the files back, a later dump
// rewrites them); nothing beyond the nine permission bits is allowed.
func ParseFileMode(s string) (os.FileMode, error) {
	n, err := strconv.ParseUint(strings.TrimSpace(s), 8, 32)
	if err != nil || n > 0o777 || n&0o600 != 0o600 {
		return 0, fmt.Errorf("mds: file mode %q, want octal permissions 0600 .. 0777 that let the owner read and write (e.g. 0600, 0640, 0644)", s)
	}
	return os.FileMode(n), nil
}

// DirMode is the permission of a directory holding files of mode m: m with
// search (x) wherever m gives read.
func DirMode(m os.FileMode) os.FileMode {
	return m | (m&0o444)>>2
}

// Status is the part of a job's manifest.json that says whether its MDS data
// is whole. bcsrun writes the manifest when the job starts (Finished false,
// no exit code) and again when it ends; a manifest that still says Finished
// false belongs to a bcsrun that was killed or is still running.
type Status struct {
	Finished  bool       `json:"finished"`
	ExitCode  *int       `json:"exit_code,omitempty"` // absent until the job ended
	MMDSRanks []int      `json:"mmds_ranks"`          // ranks expected to dump MMDS files
	EMDSNodes []int      `json:"emds_nodes"`          // nodes expected to have an EMDS file
	EMDS      bool       `json:"emds"`                // emds-global.csv expected
	Complete  bool       `json:"complete"`            // Finished, and every expected file whole
	Problems  []string   `json:"problems,omitempty"`
	Dumps     []RankDump `json:"mmds_dumps,omitempty"`
}

// RankDump says what one rank left behind.
type RankDump struct {
	Rank      int    `json:"rank"`
	Dumped    bool   `json:"dumped"`    // its summary file exists and reads back
	Finalized bool   `json:"finalized"` // the dump was taken at MPI_Finalize (not at an interval, MPI_Abort or a signal)
	Why       string `json:"why,omitempty"`
}

// ManifestFile is the manifest's name in a job's MDS directory.
const ManifestFile = "manifest.json"

// Check looks at a job's MDS directory and says what is missing or partial:
// the manifest's Status with Dumps, Problems and Complete recomputed from the
// files present (see Recheck). A missing or unreadable manifest is a
// problem, not an error; the error is for a directory that cannot be listed.
func Check(dir string) (Status, error) {
	var st Status
	var problem string
	if raw, err := os.ReadFile(filepath.Join(dir, ManifestFile)); err != nil {
		problem = fmt.Sprintf("no readable %s (%v): which ranks and nodes should have dumped is unknown", ManifestFile, err)
	} else if err := json.Unmarshal(raw, &st); err != nil {
		st, problem = Status{}, fmt.Sprintf("%s: %v: which ranks and nodes should have dumped is unknown", ManifestFile, err)
	}
	st, err := st.Recheck(dir)
	if problem != "" {
		st.Problems = append([]string{problem}, st.Problems...)
		st.Complete = false
	}
	return st, err
}

// Recheck recomputes Dumps, Problems and Complete from the files in dir,
// given what st says was expected (MMDSRanks, EMDSNodes, EMDS, Finished).
func (st Status) Recheck(dir string) (Status, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return Status{}, err
	}
	st.Problems, st.Dumps = nil, nil
	if !st.Finished {
		st.Problems = append(st.Problems, "the job did not finish: bcsrun never wrote its final manifest (killed, or still running); its exit code is unknown")
	}
	names := map[string]bool{}
	var tmps []string
	for _, e := range ents {
		names[e.Name()] = true
		if strings.Contains(e.Name(), ".tmp") {
			tmps = append(tmps, e.Name())
		}
	}
	for _, r := range st.MMDSRanks {
		d := RankDump{Rank: r}
		base := fmt.Sprintf("mmds-rank%d", r)
		var why []string
		if f, err := os.Open(filepath.Join(dir, base+".csv")); err == nil {
			s, err := ReadSummary(f, r)
			f.Close()
			if err != nil {
				why = append(why, err.Error())
			} else {
				d.Dumped, d.Finalized = true, s.Final
				if !s.Final {
					why = append(why, "dumped before MPI_Finalize (at an interval, MPI_Abort or a signal): the run after that dump is missing")
				}
			}
		} else {
			why = append(why, "no dump (the rank died before dumping, or never started)")
		}
		for _, suf := range []string{".hlog", "-dist.csv"} {
			if d.Dumped && !names[base+suf] {
				why = append(why, base+suf+" missing")
			}
		}
		for _, t := range tmps {
			if strings.HasPrefix(t, base+".") || strings.HasPrefix(t, base+"-") {
				why = append(why, "a dump was interrupted, leaving "+t)
			}
		}
		d.Why = strings.Join(why, "; ")
		if d.Why != "" {
			st.Problems = append(st.Problems, fmt.Sprintf("rank %d: %s", r, d.Why))
		}
		st.Dumps = append(st.Dumps, d)
	}
	if st.EMDS && !names["emds-global.csv"] {
		st.Problems = append(st.Problems, "emds-global.csv missing (the master's EMDS)")
	}
	for _, n := range st.EMDSNodes {
		if name := fmt.Sprintf("emds-node%d.csv", n); !names[name] {
			st.Problems = append(st.Problems, fmt.Sprintf("node %d: %s missing", n, name))
		}
	}
	for _, t := range tmps {
		if !strings.HasPrefix(t, "mmds-rank") {
			st.Problems = append(st.Problems, "an interrupted write left "+t)
		}
	}
	st.Complete = len(st.Problems) == 0
	return st, nil
}

// ExitIncomplete is the exit status of bcsreport and bcsplot when they
// showed what there was but the data is incomplete (and --partial was not
// given): distinct from 1 (error) and 2 (usage).
const ExitIncomplete = 3

// Warn prints st's problems to w as a warning a tool gives before showing
// partial data.
func (st Status) Warn(w io.Writer, tool, dir string) {
	if st.Complete {
		return
	}
	fmt.Fprintf(w, "%s: warning: the MDS data in %s is incomplete:\n", tool, dir)
	for _, p := range st.Problems {
		fmt.Fprintf(w, "  %s\n", p)
	}
}

// Only keeps the problems of the ranks sel has (and those of the job as a
// whole): a report on rank 2 is not spoiled by rank 5's missing dump.
func (st Status) Only(sel Set) Status {
	var ps []string
	for _, p := range st.Problems {
		var r int
		if n, _ := fmt.Sscanf(p, "rank %d:", &r); n == 1 && !sel.Has(r) {
			continue
		}
		ps = append(ps, p)
	}
	st.Problems = ps
	st.Complete = len(ps) == 0
	return st
}

// Incomplete lists the ranks of st.Dumps that are not whole.
func (st Status) Incomplete() []int {
	var out []int
	for _, d := range st.Dumps {
		if d.Why != "" {
			out = append(out, d.Rank)
		}
	}
	sort.Ints(out)
	return out
}

// createTemp opens a temporary file beside path for an atomic write.
func createTemp(path string) (*os.File, error) {
	return os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".*.tmp")
}

// WriteAtomic writes path whole or not at all: fill writes a temporary file
// beside it (unique to this writer, so two dumps never share one), which gets
// mode perm and is then renamed over path.
func WriteAtomic(path string, perm os.FileMode, fill func(io.Writer) error) error {
	f, err := createTemp(path)
	if err != nil {
		return err
	}
	tmp := f.Name()
	err = fill(f)
	if err == nil {
		err = f.Chmod(perm)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}
