package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
	"testing"

	"github.com/bcsmpi/bcsmpi/emds"
)

// Helpers of the tests of the MDS across hosts (slurm_test.go, ssh_test.go).

// hostsManifest is the part of manifest.json these tests read.
type hostsManifest struct {
	Hosts        []string `json:"hosts"`
	MissingHosts []string `json:"missing_hosts"`
	Finished     bool     `json:"finished"`
	Complete     bool     `json:"complete"`
	ExitCode     *int     `json:"exit_code"`
	Slices       uint64   `json:"slices"`
	Problems     []string `json:"problems"`
}

func readHostsManifest(t *testing.T, dir string) hostsManifest {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m hostsManifest
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("manifest.json: %v\n%s", err, raw)
	}
	return m
}

// mdsFiles lists the data files of a job's MDS directory (sorted).
func mdsFiles(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	slices.Sort(out)
	return out
}

// latestDir is root/latest resolved.
func latestDir(t *testing.T, root, stderr string) string {
	t.Helper()
	dir, err := filepath.EvalSymlinks(filepath.Join(root, "latest"))
	if err != nil {
		t.Fatalf("no %s/latest: %v\nstderr:\n%s", root, err, stderr)
	}
	return dir
}

// localMDSFiles runs the same job on logical nodes of this machine and
// returns its MDS files: what a job across hosts must produce too.
func localMDSFiles(t *testing.T, args ...string) []string {
	t.Helper()
	var files []string
	t.Run("on one machine", func(t *testing.T) { // t.Setenv for this job only
		root := t.TempDir()
		t.Setenv("BCS_MDS", "main,elan")
		t.Setenv("BCS_MDS_DIR", root)
		r := bcsrun(t, append([]string{"--launcher", "local"}, args...)...)
		if r.code != 0 {
			t.Fatalf("the local job %v: exit %d\n%s", args, r.code, r.stderr)
		}
		files = mdsFiles(t, latestDir(t, root, r.stderr))
	})
	return files
}

// checkHostsMDS checks a whole MDS directory of a job across hosts: the
// files of the same job on one machine, the manifest naming the hosts and
// complete, the master's slices in emds-global.csv, and bcsreport reads it.
func checkHostsMDS(t *testing.T, dir string, want []string, hosts []string) {
	t.Helper()
	if got := mdsFiles(t, dir); !slices.Equal(got, want) {
		t.Errorf("MDS files %q, want those of the same job on one machine %q", got, want)
	}
	m := readHostsManifest(t, dir)
	if !slices.Equal(m.Hosts, hosts) || !m.Finished || !m.Complete || len(m.MissingHosts) > 0 || m.Slices == 0 {
		t.Errorf("manifest: hosts %q (want %q), finished %v, complete %v, missing %q, slices %d, problems %q", m.Hosts, hosts, m.Finished, m.Complete, m.MissingHosts, m.Slices, m.Problems)
	}
	f, err := os.Open(filepath.Join(dir, "emds-global.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s, err := emds.ReadCSV(f)
	if err != nil {
		t.Fatal(err)
	}
	if getts, err := s.Col("GETTS"); err != nil || len(getts) == 0 {
		t.Errorf("emds-global.csv: no GETTS rows (%v)", err)
	}
	if out, err := exec.Command(filepath.Join(bin, "bcsreport"), dir).CombinedOutput(); err != nil {
		t.Errorf("bcsreport %s: %v\n%s", dir, err, out)
	}
	// The figures draw: the master's (node 0's bcsd) and another host's node.
	for _, fig := range [][]string{{"getts", dir}, {"ncoll", dir, "--node", "1"}} {
		if out, err := exec.Command(filepath.Join(bin, "bcsplot"), fig...).CombinedOutput(); err != nil {
			t.Errorf("bcsplot %v: %v\n%s", fig, err, out)
		}
	}
}

// hostMDSLeft lists the bcs-mds-* staging directories of jobs across hosts
// (jobs whose id has prefix) left in the temporary directory.
func hostMDSLeft(prefix string) []string {
	l, _ := filepath.Glob(filepath.Join(os.TempDir(), "bcs-mds-"+prefix+"*"))
	return l
}

// processIn returns the pid of a process running exe in network namespace
// ns (0 if none).
func processIn(ns, exe string) int {
	var want syscall.Stat_t
	if syscall.Stat("/run/netns/"+ns, &want) != nil {
		return 0
	}
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		if e, err := os.Readlink(d + "/exe"); err != nil || e != exe {
			continue
		}
		var st syscall.Stat_t
		if syscall.Stat(d+"/ns/net", &st) == nil && st.Ino == want.Ino {
			pid, _ := strconv.Atoi(filepath.Base(d))
			return pid
		}
	}
	return 0
}
