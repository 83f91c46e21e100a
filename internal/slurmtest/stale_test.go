package slurmtest

import (
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
)

// What a run killed before its Close left (a process whose environment
// names a cluster directory, and the directory) is ended and removed by the
// next run, under the machine-wide lock that no live cluster then holds.
func TestKillStale(t *testing.T) {
	lock, err := os.OpenFile(lockPath, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		t.Skipf("slurmtest: %v", err)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "bcs-slurm-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	cmd := exec.Command("sleep", "600")
	cmd.Env = append(os.Environ(), "SLURM_CONF="+filepath.Join(dir, "slurm.conf"))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	other := exec.Command("sleep", "600") // not a cluster's: left alone
	if err := other.Start(); err != nil {
		t.Fatal(err)
	}
	defer other.Process.Kill()
	if n := killStale(); n < 1 {
		t.Errorf("killStale killed %d processes, want the stale one", n)
	}
	cmd.Wait()
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Errorf("the stale process ended with %v, want SIGKILL", cmd.ProcessState)
	}
	if err := other.Process.Signal(syscall.Signal(0)); err != nil {
		t.Errorf("a process outside any cluster was ended too: %v", err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("the stale directory %s is still there (%v)", dir, err)
	}
}
