package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/spf13/pflag"

	"github.com/bcsmpi/bcsmpi/internal/gangd"
	"github.com/bcsmpi/bcsmpi/internal/jobenv"
	"github.com/bcsmpi/bcsmpi/internal/launch"
)

// gangFlag is --gang, or BCS_GANG when the flag is not given: auto, on or off.
func gangFlag(fs *pflag.FlagSet, flag string) (string, error) {
	v, src := flag, "--gang"
	if e := os.Getenv(jobenv.VarGang); e != "" && !fs.Changed("gang") {
		v, src = e, jobenv.VarGang
	}
	switch v {
	case "auto", "on", "off":
		return v, nil
	}
	return "", fmt.Errorf("%s %q, want auto, on or off", src, v)
}

// printStatus is bcsrun --status: the daemon's jobs, or why there are none.
func printStatus() int {
	dir, err := gangd.RuntimeDir()
	if err != nil {
		fmt.Fprintln(os.Stderr, "bcsrun:", err)
		return 1
	}
	c, err := gangd.Dial(dir)
	if errors.Is(err, gangd.ErrNoDaemon) {
		fmt.Fprintf(os.Stderr, "bcsrun: no bcsd running for you on this machine (%s); jobs run inside bcsrun\n", filepath.Join(dir, gangd.SocketName))
		return 3
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bcsrun:", err)
		return 1
	}
	st, err := c.Status()
	if err != nil {
		fmt.Fprintln(os.Stderr, "bcsrun:", err)
		return 1
	}
	gangd.FormatStatus(os.Stdout, st)
	return 0
}

// runAttached hands job to this user's bcsd. attached is false (and err
// nil) when no daemon is up and mode is auto: the caller runs the job
// itself. The job's paths are made absolute here, where they mean what the
// user meant: the daemon runs elsewhere.
func runAttached(mode string, job launch.Job, noQueue bool, memPerRank uint64) (res launch.Result, attached bool, err error) {
	dir, err := gangd.RuntimeDir()
	if err != nil {
		return res, false, err
	}
	c, err := gangd.Dial(dir)
	if err != nil {
		switch {
		case mode == "on":
			return res, false, fmt.Errorf("bcsrun: --gang on: %v; start one with: bcsd start", err)
		case !errors.Is(err, gangd.ErrNoDaemon):
			fmt.Fprintf(os.Stderr, "bcsrun: warning: not attaching to a bcsd: %v; running the job in bcsrun\n", err)
		}
		return res, false, nil
	}
	defer c.Close()
	spec, err := resolve(job)
	if err != nil {
		return res, true, err
	}
	spec.NoQueue, spec.MemPerRank = noQueue, memPerRank
	stdout, stderr := usable(os.Stdout), usable(os.Stderr)
	res, err = c.Run(spec, job.Stdin, stdout, stderr, job.Signals, os.Stderr)
	return res, true, err
}

// resolve makes the job's spec as the daemon needs it: the program found in
// this PATH and made absolute, this environment and working directory, and
// every path of the configuration absolute.
func resolve(job launch.Job) (gangd.JobSpec, error) {
	prog, err := exec.LookPath(job.Program)
	if err != nil {
		return gangd.JobSpec{}, fmt.Errorf("bcsrun: program %q: %w", job.Program, err) // as launch.Run says it
	}
	wd, err := os.Getwd()
	if err != nil {
		return gangd.JobSpec{}, fmt.Errorf("bcsrun: working directory: %w", err)
	}
	abs := func(p string) string {
		if p == "" || filepath.IsAbs(p) {
			return p
		}
		return filepath.Join(wd, p)
	}
	cfg := job.Config
	cfg.MDSDir, cfg.MDSKernelBTF = abs(cfg.MDSDir), abs(cfg.MDSKernelBTF)
	return gangd.JobSpec{Program: abs(prog), Args: job.Args, Env: os.Environ(), Dir: wd, Ranks: job.Ranks, Config: cfg,
		Record: abs(job.Record), Replay: abs(job.Replay)}, nil
}

// usable is f, or /dev/null where f is not open (bcsrun started with its
// output closed), so that there is a descriptor to pass.
func usable(f *os.File) *os.File {
	if _, err := f.Stat(); err == nil {
		return f
	}
	if n, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0); err == nil {
		return n
	}
	return f
}
