package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestKernelMonitorAcrossHosts runs BCS_MDS=main,elan,kernel across three
// namespace hosts over ssh (one rank each, e2eprog's spin scenario): each
// host's bcsd loads its own monitor, and its files come back to bcsrun's
// directory, naming only that host's rank; each rank's rows agree with
// the kernel's own accounting of it (agreesWithKernel, as on one machine);
// bcsreport --kernel and bcsplot kernel read the directory. Then, with no
// BTF anywhere, the job runs, each host says once why, and the manifest
// names every host's state.
func TestKernelMonitorAcrossHosts(t *testing.T) {
	if testing.Short() {
		t.Skip("starts namespace hosts and sshd")
	}
	kernelOK(t)
	cl, sshCmd := startSSHHosts(t, 3)
	hosts := strings.Join(cl.HostAddr, ",")
	job := func(t *testing.T, env ...string) (run, string) {
		t.Helper()
		root := t.TempDir()
		ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, filepath.Join(bin, "bcsrun"), "--hosts", hosts, "--tag-output", "-n", "3", "--timeslice", "500us", "./e2eprog", "spin")
		cmd.Env = append(append(os.Environ(), "BCS_SSH="+sshCmd, "BCS_MDS=main,elan,kernel", "BCS_MDS_DIR="+root), env...)
		cmd.Dir = bin
		var o, e bytes.Buffer
		cmd.Stdout, cmd.Stderr = &o, &e
		err := cmd.Run()
		if ctx.Err() != nil {
			t.Fatalf("bcsrun hung (killed after 120s)\nstdout:\n%s\nstderr:\n%s", o.String(), e.String())
		}
		r := run{stdout: o.String(), stderr: e.String()}
		if ee, ok := err.(*exec.ExitError); ok {
			r.code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		nothingLeft(t, map[string]string{})
		if l := hostMDSLeft(""); len(l) > 0 {
			t.Errorf("the hosts' MDS staging directories were left: %v", l)
		}
		if r.code != 0 {
			t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
		}
		return r, latestDir(t, root, r.stderr)
	}
	var man struct {
		hostsManifest
		Kernel      string   `json:"kernel"`
		KernelHosts []string `json:"kernel_hosts"`
	}
	readMan := func(t *testing.T, dir string) {
		t.Helper()
		raw, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(raw, &man); err != nil {
			t.Fatal(err)
		}
	}

	t.Run("on", func(t *testing.T) {
		r, dir := job(t)
		checkKernelAcrossHosts(t, r, dir, cl.HostAddr)
	})

	t.Run("no BTF", func(t *testing.T) {
		r, dir := job(t, "BCS_MDS_KERNEL_BTF=/nonexistent/vmlinux")
		for _, h := range cl.HostAddr {
			msg := "bcsd on " + h + ": MDS kernel monitor off: needs the kernel's BTF at /nonexistent/vmlinux"
			if n := strings.Count(r.stderr, msg); n != 1 {
				t.Errorf("stderr has %q %d times, want once:\n%s", msg, n, r.stderr)
			}
		}
		readMan(t, dir)
		if !strings.HasPrefix(man.Kernel, "off: needs the kernel's BTF at /nonexistent/vmlinux") || len(man.KernelHosts) != 3 ||
			!strings.HasPrefix(man.KernelHosts[1], cl.HostAddr[1]+": off: needs the kernel's BTF") {
			t.Errorf("manifest: kernel %q, kernel_hosts %q", man.Kernel, man.KernelHosts)
		}
		if l, _ := filepath.Glob(filepath.Join(dir, "emds-kernel-*")); len(l) > 0 {
			t.Errorf("kernel files without the monitor: %v", l)
		}
		if _, err := os.Stat(filepath.Join(dir, "emds-node2.csv")); err != nil {
			t.Errorf("the EMDS still runs: %v", err)
		}
	})
}

// checkKernelAcrossHosts checks the gathered MDS directory of a job of
// e2eprog spin with one rank on each of hosts (named so in the manifest
// and in --tag-output) and BCS_MDS=…,kernel: every host's monitor ran,
// each sent its own files, its ids name its own rank and bcsd only, each
// rank's rows agree with the kernel's own figures for it (agreesWithKernel,
// as on one machine), and bcsreport --kernel and bcsplot kernel read it.
func checkKernelAcrossHosts(t *testing.T, r run, dir string, hosts []string) {
	t.Helper()
	if strings.Contains(r.stderr, "kernel monitor off") {
		t.Fatalf("root with BTF, yet:\n%s", r.stderr)
	}
	var man struct {
		hostsManifest
		Kernel      string   `json:"kernel"`
		KernelHosts []string `json:"kernel_hosts"`
	}
	raw, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &man); err != nil {
		t.Fatal(err)
	}
	if man.Kernel != "on" || len(man.KernelHosts) != len(hosts) || !man.Complete || len(man.MissingHosts) > 0 {
		t.Fatalf("manifest: kernel %q, kernel_hosts %q, complete %v, missing %q", man.Kernel, man.KernelHosts, man.Complete, man.MissingHosts)
	}
	for k, h := range hosts {
		if man.KernelHosts[k] != h+": on" {
			t.Errorf("kernel_hosts[%d] = %q, want %q", k, man.KernelHosts[k], h+": on")
		}
		// The host's own files, its ids naming its rank and its bcsd only.
		tag := fmt.Sprintf("-node%d", k)
		for _, f := range []string{"runtime", "interferers", "wakehist", "ids", "cost"} {
			if _, err := os.Stat(filepath.Join(dir, "emds-kernel-"+f+tag+".csv")); err != nil {
				t.Errorf("host %d: %v", k, err)
			}
		}
		raw, err := os.ReadFile(filepath.Join(dir, "emds-kernel-ids"+tag+".csv"))
		if err != nil {
			t.Fatal(err)
		}
		var ents []string
		for line := range strings.Lines(string(raw)) {
			if f := strings.Split(strings.TrimSpace(line), ","); len(f) == 3 && f[0] != "id" {
				ents = append(ents, f[1]+"/"+f[2])
			}
		}
		if want := fmt.Sprintf("rank%d/process runtime-node%d/process", k, k); strings.Join(ents, " ") != want {
			t.Errorf("host %d's registered ids: %q, want %q (its own rank and bcsd only)", k, ents, want)
		}
		// The rank's rows against the kernel's own figures for it (its
		// sched line, tagged with its rank and host).
		var own strings.Builder
		prefix := fmt.Sprintf("[%d@%s] ", k, h)
		for line := range strings.Lines(r.stdout) {
			if rest, ok := strings.CutPrefix(line, prefix); ok {
				own.WriteString(rest)
			}
		}
		s := readSeries(t, filepath.Join(dir, fmt.Sprintf("emds-kernel-rank%d.csv", k)))
		if len(s.Slices) == 0 {
			t.Fatalf("rank %d: no rows", k)
		}
		f := schedOfCost(t, s, own.String(), filepath.Join(dir, "emds-kernel-cost"+tag+".csv"))
		// (Not at SCHED_FIFO as on one machine, a rank's 2 ms of wall time
		// per iteration are less on CPU on a loaded host: the kernel's
		// figure is the reference.)
		agreesWithKernel(t, f)
		if f.On <= 0 || f.outer["ONCPU"] == 0 {
			t.Errorf("rank %d: on CPU %d ns (the kernel), %d ns in the monitor's rows; want both above 0", k, f.On, f.outer["ONCPU"])
		}
	}
	if l, _ := filepath.Glob(filepath.Join(dir, "emds-kernel-rank*.csv")); len(l) != len(hosts) {
		t.Errorf("rank files %q, want one for each of the %d ranks", l, len(hosts))
	}
	if _, err := os.Stat(filepath.Join(dir, "emds-kernel-ids.csv")); err == nil {
		t.Error("a one-machine emds-kernel-ids.csv across hosts")
	}
	out, err := exec.Command(filepath.Join(bin, "bcsreport"), "--kernel", dir).CombinedOutput()
	if err != nil {
		t.Fatalf("bcsreport --kernel: %v\n%s", err, out)
	}
	for k := range hosts {
		for _, e := range []string{fmt.Sprintf("rank%d", k), fmt.Sprintf("runtime-node%d", k)} {
			if !strings.Contains(string(out), e) {
				t.Errorf("bcsreport --kernel has no %s:\n%s", e, out)
			}
		}
	}
	figs := t.TempDir()
	for _, fig := range [][]string{{"kernel", dir, "--rank", "1", "-o", figs}, {"kernel", dir, "--entity", "runtime-node1", "-o", figs}} {
		if out, err := exec.Command(filepath.Join(bin, "bcsplot"), fig...).CombinedOutput(); err != nil {
			t.Errorf("bcsplot %v: %v\n%s", fig, err, out)
		}
	}
}
