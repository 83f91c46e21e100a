package slurmtest

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// StartSSH starts an sshd in each host's namespace that accepts a key made
// here for root, and returns the ssh command (bcsrun's BCS_SSH) that logs
// into them. The sshds accept BCS_RUNTIME_DIR from the client (ssh -o
// SendEnv=BCS_RUNTIME_DIR: a gang daemon's directory). They are stopped by
// pid at the end of the test, before the cluster's Close (cleanups run last
// first), and die with the test binary (Pdeathsig). Without sshd the test
// fails under CI (.ci/run installs openssh-server) and is skipped elsewhere.
func (c *Cluster) StartSSH(t testing.TB) string {
	t.Helper()
	sshd, err := exec.LookPath("sshd")
	if err != nil {
		sshd = "/usr/sbin/sshd"
		if _, err := os.Stat(sshd); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatal("no sshd; .ci/run installs openssh-server")
			}
			t.Skip("no sshd (apt-get install openssh-server)")
		}
	}
	dir := t.TempDir()
	os.Chmod(dir, 0o700)
	for _, k := range []string{"host", "user"} {
		if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", filepath.Join(dir, k)).CombinedOutput(); err != nil {
			t.Fatalf("ssh-keygen: %v\n%s", err, out)
		}
	}
	pub, _ := os.ReadFile(filepath.Join(dir, "user.pub"))
	if err := os.WriteFile(filepath.Join(dir, "authorized_keys"), pub, 0o600); err != nil {
		t.Fatal(err)
	}
	os.MkdirAll("/run/sshd", 0o755) // sshd's privilege separation directory
	var daemons []*exec.Cmd
	t.Cleanup(func() {
		for _, d := range daemons {
			d.Process.Signal(syscall.SIGTERM)
			d.Wait()
		}
	})
	for i, addr := range c.HostAddr {
		conf := filepath.Join(dir, fmt.Sprintf("sshd%d.conf", i))
		os.WriteFile(conf, []byte(fmt.Sprintf("ListenAddress %s\nPort 22\nHostKey %s\nAuthorizedKeysFile %s\nPermitRootLogin prohibit-password\nPasswordAuthentication no\nKbdInteractiveAuthentication no\nUsePAM no\nStrictModes no\nPidFile none\nAcceptEnv BCS_RUNTIME_DIR\n",
			addr, filepath.Join(dir, "host"), filepath.Join(dir, "authorized_keys"))), 0o600)
		d := exec.Command("nsenter", "--net=/run/netns/"+c.ns(i+1), sshd, "-D", "-e", "-f", conf)
		var log bytes.Buffer
		d.Stdout, d.Stderr = &log, &log
		d.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		if err := d.Start(); err != nil {
			t.Fatalf("sshd: %v", err)
		}
		daemons = append(daemons, d)
		up := false
		for end := time.Now().Add(30 * time.Second); time.Now().Before(end); time.Sleep(50 * time.Millisecond) { // a bound on start-up
			if c, err := net.DialTimeout("tcp", addr+":22", time.Second); err == nil {
				c.Close()
				up = true
				break
			}
		}
		if !up {
			t.Fatalf("sshd on %s did not listen in 30 s:\n%s", addr, log.String())
		}
	}
	return "ssh -F /dev/null -i " + filepath.Join(dir, "user") + " -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR"
}
