// Command bcsd runs one host's node of a BCS-MPI job across hosts. bcsrun
// starts one per host of a Slurm allocation:
//
//	srun --mpi=pmi2 -N M -n M --ntasks-per-node=1 --kill-on-bad-exit=0 --wait=W bcsd --ranks N -- PROGRAM [ARGS...]
//
// Users do not start it themselves. It speaks PMI-2 to srun (its node id is
// its PMI rank), listens on the configured address (key address), exchanges
// endpoints with the other bcsds through the PMI key/value space, builds the
// authenticated mesh, creates its node's shared memory, starts its block of
// ranks, forwards their output to srun, and exits with the job's status on
// this host (see internal/launch.RunHost). Node 0's bcsd also runs the
// master. Under srun --mpi=none (bcsrun's slurm_mpi key) BCSD_PMI names
// bcsrun's port instead, where the bcsds meet as they do over ssh, each as
// its Slurm task (SLURM_PROCID). The job's secret, id and configuration come from the environment
// (BCSD_SECRET, BCSD_JOB, BCSD_CONFIG), never from the command line; it
// dials bcsrun's control port (BCSD_CONTROL) for the job's verdict, its MDS
// data, and, over ssh, rank 0's input.
//
// bcsd --cleanup JOB removes job JOB's MDS staging directories on its host:
// bcsrun runs it (through srun, or ssh) on a host whose bcsd ended without
// saying it had removed its own (killed, or cut off), once the job has ended.
//
// Started by bcsrun --hosts over ssh, it takes --pmi-port (bcsrun's PMI
// server), --node and --host, reads the job as one JSON line on standard
// input, and stops when that input ends.
//
// On one machine, a user starts a daemon of their own that hosts several
// jobs (package internal/gangd):
//
//	bcsd start [--foreground]   start this user's daemon (in the background, logging to bcsd.log)
//	bcsd status                 list its jobs (as bcsrun --status does)
//	bcsd stop                   end its jobs and stop it
//
// Every bcsrun of that user on this machine then hands its job to the daemon
// (bcsrun --gang=off runs it in bcsrun as before). The daemon's socket, lock
// and log are in $BCS_RUNTIME_DIR, else $XDG_RUNTIME_DIR/bcsmpi, else
// /tmp/bcsmpi-<uid>; the multiprogramming level is the gang_mpl key, read
// when the daemon starts. A job across hosts whose first host runs the
// daemon shares the hosts too: its node 0's bcsd asks the daemon for a
// place for the job's master in its gang (BCSD_GANG or the ssh job line's
// "gang" carry bcsrun's --gang; internal/launch's gangacross.go). Exit statuses: 0 done; 1 failed (start: a daemon is
// already running; the message names its pid); 2 bad usage; 3 (status) no
// daemon running.
package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"syscall"

	"github.com/spf13/pflag"

	"github.com/bcsmpi/bcsmpi/configs"
	"github.com/bcsmpi/bcsmpi/internal/gangd"
	"github.com/bcsmpi/bcsmpi/internal/launch"
	"github.com/bcsmpi/bcsmpi/internal/pmi"
)

func main() {
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, launch.TermSignals...)
	os.Exit(run(sigs))
}

func run(sigs <-chan os.Signal) int {
	if len(os.Args) > 1 {
		switch os.Args[1] {
		case "start", "stop", "status": // srun and ssh start bcsd with flags first, never with these
			return daemonCommand(sigs, os.Args[1], os.Args[2:])
		}
	}
	fs := pflag.NewFlagSet("bcsd", pflag.ContinueOnError)
	fs.SetInterspersed(false)
	ranks := fs.Int("ranks", 0, "ranks in the whole job")
	pmiPort := fs.String("pmi-port", "", "over ssh: bcsrun's PMI server (host:port); the job comes as one line on standard input")
	node := fs.Int("node", -1, "over ssh: this host's node id")
	hostName := fs.String("host", "", "over ssh: this host's name in messages")
	cleanup := fs.String("cleanup", "", "remove job `JOB`'s MDS staging directories on this host (bcsrun runs it where a bcsd could not), then exit")
	fs.Usage = func() {
		fmt.Fprintf(os.Stderr, "usage: bcsd start [--foreground] | bcsd stop | bcsd status\n       bcsd --ranks N -- PROGRAM [ARGS...] (started by bcsrun through srun)\n\nflags:\n%s", fs.FlagUsages())
	}
	if err := fs.Parse(os.Args[1:]); err != nil {
		if err == pflag.ErrHelp {
			return 0
		}
		fmt.Fprintln(os.Stderr, "bcsd:", err)
		return 2
	}
	if *cleanup != "" {
		if _, err := launch.RemoveStaging(*cleanup); err != nil {
			fmt.Fprintln(os.Stderr, "bcsd: --cleanup:", err)
			return 1
		}
		return 0
	}
	if fs.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "bcsd: no program given")
		fs.Usage()
		return 2
	}
	host := os.Getenv("SLURMD_NODENAME")
	if *hostName != "" {
		host = *hostName
	}
	if host == "" {
		host, _ = os.Hostname()
	}
	if *pmiPort != "" {
		return overSSH(sigs, *pmiPort, *node, host, *ranks, fs.Args())
	}
	secret, err := launch.ParseSecret(os.Getenv(launch.VarSecret))
	if err != nil {
		fmt.Fprintf(os.Stderr, "bcsd on %s: %v: bcsd is started by bcsrun\n", host, err)
		return 2
	}
	cfg := configs.Default()
	if err := json.Unmarshal([]byte(os.Getenv(launch.VarConfig)), &cfg); err != nil {
		fmt.Fprintf(os.Stderr, "bcsd on %s: %s: %v: bcsd is started by bcsrun\n", host, launch.VarConfig, err)
		return 2
	}
	var c *pmi.Client
	if addr := os.Getenv(launch.VarPMI); addr != "" {
		// srun --mpi=none: the bcsds meet at bcsrun's port, each as its
		// Slurm task.
		node, err := strconv.Atoi(os.Getenv("SLURM_PROCID"))
		if err != nil || node < 0 {
			fmt.Fprintf(os.Stderr, "bcsd on %s: %s is set but SLURM_PROCID=%q is not a task id: bcsd is started by bcsrun through srun\n", host, launch.VarPMI, os.Getenv("SLURM_PROCID"))
			return 2
		}
		c, err = launch.DialPMI(addr, secret, os.Getenv(launch.VarJob), node)
		if err != nil {
			fmt.Fprintf(os.Stderr, "bcsd on %s: %v\n", host, err)
			return 2
		}
	} else if c, err = pmi.Open(pmi.V2); err != nil {
		fmt.Fprintf(os.Stderr, "bcsd on %s: %v\n", host, err)
		return 2
	}
	code, err := launch.RunHost(launch.HostJob{Ranks: *ranks, Program: fs.Arg(0), Args: fs.Args()[1:], Config: cfg,
		JobID: os.Getenv(launch.VarJob), Secret: secret, PMI: c, Host: host, Stdin: os.Stdin, Signals: sigs, Control: os.Getenv(launch.VarControl),
		Gang: os.Getenv(launch.VarGang), JoinGang: joinGang})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return code
}

// overSSH is bcsd started by bcsrun --hosts over ssh: the job comes on
// standard input, bcsrun serves PMI at pmiPort, and the end of standard
// input (bcsrun gone, or ending the job) stops this host's part.
func overSSH(sigs <-chan os.Signal, pmiPort string, node int, host string, ranks int, args []string) int {
	env, err := launch.ReadSSHEnv(os.Stdin)
	if err != nil {
		fmt.Fprintf(os.Stderr, "bcsd on %s: %v: bcsd is started by bcsrun\n", host, err)
		return 2
	}
	secret, err := launch.ParseSecret(env.Secret)
	if err != nil {
		fmt.Fprintf(os.Stderr, "bcsd on %s: %v\n", host, err)
		return 2
	}
	cfg := configs.Default()
	if err := json.Unmarshal(env.Config, &cfg); err != nil {
		fmt.Fprintf(os.Stderr, "bcsd on %s: the job's configuration: %v\n", host, err)
		return 2
	}
	c, err := launch.DialPMI(pmiPort, secret, env.Job, node)
	if err != nil {
		fmt.Fprintf(os.Stderr, "bcsd on %s: %v\n", host, err)
		return 2
	}
	stop := make(chan os.Signal, 2)
	go func() {
		io.Copy(io.Discard, os.Stdin) // until bcsrun closes it
		stop <- syscall.SIGTERM
	}()
	go func() {
		for s := range sigs {
			stop <- s
		}
	}()
	code, err := launch.RunHost(launch.HostJob{Ranks: ranks, Program: args[0], Args: args[1:], Config: cfg,
		JobID: env.Job, Secret: secret, PMI: c, Host: host, Signals: stop, Control: pmiPort,
		Gang: env.Gang, JoinGang: joinGang})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return code
}

// joinGang asks this user's daemon on this host (bcsd start) for a place
// in its gang for the master of a job across hosts (node 0's bcsd).
func joinGang(req launch.GangRequest) (launch.GangPlace, error) {
	dir, err := gangd.RuntimeDir()
	if err != nil {
		return nil, err
	}
	c, err := gangd.Dial(dir)
	if errors.Is(err, gangd.ErrNoDaemon) {
		return nil, fmt.Errorf("%w: %v", launch.ErrNoGang, err)
	}
	if err != nil {
		return nil, err
	}
	return c.Place(req)
}
