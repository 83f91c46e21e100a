// Command kernelexplain reads the kernel monitor's data (BCS_MDS=…,kernel;
// package emds/kernel) to explain two things issue 15 asks about; run by
// bench/kernel-explain.sh.
//
//	kernelexplain barrier [-compute D] [-spin D] DIR
//
// The paper's §3.3 job (examples/barrier) in DIR: the barrier period's
// distribution in slices against the ideal (2 + compute ÷ slice, with the
// compute from the job's -compute argument, default 1.9 ms), and for each
// cycle the rank that entered the barrier last and what the kernel says
// delayed its post: its wake-up latency after the completion that released
// it, its runnable time and its time on CPU after its computation's nominal
// end, and the tasks that ran while it waited. The extra slices over the
// ideal are split over these causes cumulatively (see cycles in
// barrier.go), the rest being what the kernel did not see.
//
//	kernelexplain compute [-mds DIR] CSV...
//
// bench/computephase's files of the same calibrated work under bcsmpi
// (mode bcs) and in plain processes (mode plain): per process the compute
// phases' wall time, time on CPU, time runnable, involuntary switches and
// migrations per iteration, then bcsmpi against plain: how much of the
// slowdown the scheduler saw (runnable time) and how much it did not (the
// same work taking more time on CPU: caches, TLB, frequency, a sibling
// hyperthread). With -mds, the bcsmpi job's kernel rows in which a rank
// was computing (active at least 90% of the row) name who interfered.
package main

import (
	"encoding/csv"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/bcsmpi/bcsmpi/emds"
)

func usage() {
	fmt.Fprintln(os.Stderr, "usage: kernelexplain barrier [-compute D] [-spin D] DIR | kernelexplain compute [-mds DIR] CSV...")
	os.Exit(2)
}

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	var err error
	switch os.Args[1] {
	case "barrier":
		fs := flag.NewFlagSet("barrier", flag.ExitOnError)
		compute := fs.Duration("compute", 0, "computation per iteration (0: the job's -compute argument, else 1.9ms)")
		spin := fs.Duration("spin", -1, "a blocked call's spin before it sleeps (-1: the job's configuration)")
		fs.Parse(os.Args[2:])
		if fs.NArg() != 1 {
			usage()
		}
		var j *job
		if j, err = loadJob(fs.Arg(0), compute.Nanoseconds(), spin.Nanoseconds()); err == nil {
			err = j.report(os.Stdout)
		}
	case "compute":
		fs := flag.NewFlagSet("compute", flag.ExitOnError)
		mds := fs.String("mds", "", "the bcsmpi job's MDS directory (kernel monitor on)")
		fs.Parse(os.Args[2:])
		if fs.NArg() == 0 {
			usage()
		}
		err = compute(os.Stdout, fs.Args(), *mds)
	default:
		usage()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "kernelexplain:", err)
		os.Exit(1)
	}
}

type manifest struct {
	Slice  int64    `json:"timeslice_ns"`
	Ranks  int      `json:"ranks"`
	Args   []string `json:"args"`
	Kernel string   `json:"kernel"`
	Config struct {
		Spin    int64  `json:"Spin"`
		Restart string `json:"Restart"`
	} `json:"config"`
}

func (m *manifest) read(dir string) error {
	raw, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if err != nil {
		return err
	}
	if err := json.Unmarshal(raw, m); err != nil {
		return fmt.Errorf("%s: %w", filepath.Join(dir, "manifest.json"), err)
	}
	if m.Slice <= 0 || m.Ranks < 1 {
		return fmt.Errorf("%s: timeslice_ns %d, ranks %d: want both positive", filepath.Join(dir, "manifest.json"), m.Slice, m.Ranks)
	}
	if m.Kernel != "" && m.Kernel != "on" {
		return fmt.Errorf("the kernel monitor did not run in this job: %s", m.Kernel)
	}
	return nil
}

// computeArg is the job's -compute argument (examples/barrier), or its
// default, 1.9 ms.
func (m *manifest) computeArg() int64 {
	for i, a := range m.Args {
		v := ""
		switch {
		case (a == "-compute" || a == "--compute") && i+1 < len(m.Args):
			v = m.Args[i+1]
		case len(a) > 9 && a[:9] == "-compute=":
			v = a[9:]
		case len(a) > 10 && a[:10] == "--compute=":
			v = a[10:]
		}
		if d, err := time.ParseDuration(v); err == nil && d > 0 {
			return d.Nanoseconds()
		}
	}
	return 1_900_000
}

func readSeries(path string) (*emds.Series, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	s, err := emds.ReadCSV(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

// taskNames maps thread ids to names from the interferers' file, marking
// the registered ones (the master's thread, the ranks' main threads).
func taskNames(dir string) map[int]string {
	out := map[int]string{}
	read := func(name string, f func([]string)) {
		fh, err := os.Open(filepath.Join(dir, name))
		if err != nil {
			return
		}
		defer fh.Close()
		recs, _ := csv.NewReader(fh).ReadAll()
		for i, r := range recs {
			if i > 0 && len(r) >= 3 {
				f(r)
			}
		}
	}
	read("emds-kernel-interferers.csv", func(r []string) {
		if pid, err := strconv.Atoi(r[1]); err == nil {
			out[pid] = r[2]
		}
	})
	read("emds-kernel-ids.csv", func(r []string) {
		if id, err := strconv.Atoi(r[0]); err == nil {
			out[id] += "(" + r[1] + ")"
		}
	})
	return out
}
