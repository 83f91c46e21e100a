package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/spf13/pflag"

	"github.com/bcsmpi/bcsmpi/configs"
	"github.com/bcsmpi/bcsmpi/internal/gangd"
	"github.com/bcsmpi/bcsmpi/internal/jobenv"
	"github.com/bcsmpi/bcsmpi/internal/launch"
)

// daemonCommand is bcsd start, stop or status: this user's daemon on this
// machine (package internal/gangd).
func daemonCommand(sigs <-chan os.Signal, cmd string, args []string) int {
	fs := pflag.NewFlagSet("bcsd "+cmd, pflag.ContinueOnError)
	foreground := fs.Bool("foreground", false, "start: serve in this process, logging to standard error, until SIGINT, SIGTERM, SIGHUP or bcsd stop")
	readyFD := fs.Int("ready-fd", -1, "start --foreground: write ready (or the error) on this descriptor once serving (used by bcsd start)")
	fs.MarkHidden("ready-fd")
	fs.Usage = func() {
		fmt.Fprintf(os.Stderr, "usage: bcsd start [--foreground] | bcsd stop | bcsd status\n\nflags:\n%s", fs.FlagUsages())
	}
	if err := fs.Parse(args); err != nil {
		if err == pflag.ErrHelp {
			return 0
		}
		fmt.Fprintf(os.Stderr, "bcsd %s: %v\n", cmd, err)
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "bcsd %s: unexpected argument %q\n", cmd, fs.Arg(0))
		fs.Usage()
		return 2
	}
	if cmd != "start" && fs.NFlag() > 0 {
		fmt.Fprintf(os.Stderr, "bcsd %s: takes no flags (--foreground is for bcsd start)\n", cmd)
		return 2
	}
	dir, err := gangd.RuntimeDir()
	if err != nil {
		fmt.Fprintln(os.Stderr, "bcsd:", err)
		return 1
	}
	switch {
	case cmd == "start" && *foreground:
		return serve(sigs, dir, *readyFD)
	case cmd == "start":
		return daemonise(dir)
	}
	c, err := gangd.Dial(dir)
	if errors.Is(err, gangd.ErrNoDaemon) {
		if cmd == "stop" {
			fmt.Fprintf(os.Stderr, "bcsd: not running (no daemon at %s)\n", filepath.Join(dir, gangd.SocketName))
			return 0
		}
		fmt.Fprintf(os.Stderr, "bcsd: not running (no daemon at %s); start one with: bcsd start\n", filepath.Join(dir, gangd.SocketName))
		return 3
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bcsd:", err)
		return 1
	}
	if cmd == "stop" {
		pid := c.DaemonPID
		if err := c.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "bcsd:", err)
			return 1
		}
		fmt.Fprintf(os.Stderr, "bcsd: stopped (pid %d)\n", pid)
		return 0
	}
	st, err := c.Status()
	if err != nil {
		fmt.Fprintln(os.Stderr, "bcsd:", err)
		return 1
	}
	gangd.FormatStatus(os.Stdout, st)
	return 0
}

// serve is bcsd start --foreground: the daemon itself.
func serve(sigs <-chan os.Signal, dir string, readyFD int) int {
	var ready *os.File
	if readyFD >= 0 {
		ready = os.NewFile(uintptr(readyFD), "ready pipe")
		defer ready.Close()
	}
	fail := func(code int, err error) int {
		fmt.Fprintln(os.Stderr, err)
		if ready != nil {
			fmt.Fprintln(ready, err)
		}
		return code
	}
	cfg, err := configs.Load(nil)
	if err != nil {
		return fail(2, fmt.Errorf("bcsd: %w", err))
	}
	d, err := gangd.Start(gangd.Config{Dir: dir, MPL: cfg.GangMPL, Log: os.Stderr})
	if err != nil {
		return fail(1, err)
	}
	// One gang master for every job: the jobs time-share the machine slice
	// by slice (launch.NewGang; issue 17), each joining it as it starts.
	gang, err := launch.NewGang(cfg)
	if err != nil {
		d.Stop()
		return fail(2, fmt.Errorf("bcsd: %w", err))
	}
	defer gang.Close()
	d.Prepare = func(j *launch.Job) { j.Gang = gang }
	d.Gang = gang // and the masters of jobs across hosts whose node 0 is this host
	served := make(chan error, 1)
	go func() { served <- d.Serve() }()
	fmt.Fprintf(os.Stderr, "bcsd: listening on %s (pid %d, multiprogramming level %d)\n", d.Socket(), os.Getpid(), cfg.GangMPL)
	if ready != nil {
		fmt.Fprintln(ready, "ready")
		ready.Close()
		ready = nil
	}
	select {
	case s := <-sigs:
		fmt.Fprintf(os.Stderr, "bcsd: %v received: stopping\n", s)
		d.Stop()
	case <-d.Quit():
	case err := <-served: // nil only once stopping: a client's stop, answered soon
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			d.Stop()
			return 1
		}
		<-d.Quit()
	}
	return 0
}

// daemonise is bcsd start: it starts bcsd start --foreground in a session
// of its own, its output appended to bcsd.log in the runtime directory, and
// returns once that daemon serves (or has said why it cannot).
func daemonise(dir string) int {
	if err := gangd.MakeDir(dir); err != nil {
		fmt.Fprintln(os.Stderr, "bcsd:", err)
		return 1
	}
	logPath := filepath.Join(dir, gangd.LogName)
	logf, err := os.OpenFile(logPath, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bcsd: log:", err)
		return 1
	}
	defer logf.Close()
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintln(os.Stderr, "bcsd:", err)
		return 1
	}
	r, w, err := os.Pipe()
	if err != nil {
		fmt.Fprintln(os.Stderr, "bcsd:", err)
		return 1
	}
	defer r.Close()
	cmd := exec.Command(self, "start", "--foreground", "--ready-fd=3")
	cmd.Dir = "/"
	cmd.Env = append(os.Environ(), jobenv.VarRuntimeDir+"="+dir) // absolute: the daemon runs in /
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.ExtraFiles = []*os.File{w}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		w.Close()
		fmt.Fprintln(os.Stderr, "bcsd: starting the daemon:", err)
		return 1
	}
	w.Close()
	said, _ := io.ReadAll(io.LimitReader(r, 64<<10)) // until the daemon serves or exits
	if strings.TrimSpace(string(said)) == "ready" {
		fmt.Fprintf(os.Stderr, "bcsd: started (pid %d, socket %s, log %s)\n", cmd.Process.Pid, filepath.Join(dir, gangd.SocketName), logPath)
		cmd.Process.Release()
		return 0
	}
	cmd.Wait()
	if msg := strings.TrimSpace(string(said)); msg != "" {
		fmt.Fprintln(os.Stderr, msg)
	} else {
		fmt.Fprintf(os.Stderr, "bcsd: the daemon exited while starting (%v); see %s\n", cmd.ProcessState, logPath)
	}
	return 1
}
