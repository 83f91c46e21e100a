// Command bcsrun launches a BCS-MPI job on this machine:
//
//	bcsrun -n 8 [--nodes 2] [--timeslice 500us] [--restart slice|early] [--tag-output] [--deterministic] PROGRAM [ARGS...]
//
// It hosts the master and the node agents itself (nothing else to install or
// start), runs N rank processes spread over the logical nodes, forwards its
// standard input to rank 0 and the ranks' output to its own, and exits with
// the job's status. SIGINT, SIGTERM and SIGHUP end the job at any moment,
// start-up included, with a message and status 128+signal.
//
// Scripts written for mpirun keep working: "-np N" is accepted, and Open
// MPI's --allow-run-as-root and --oversubscribe are accepted and ignored, so
// bcsrun can stand in as mpirun or mpiexec (a symbolic link will do).
//
// bcsrun --record DIR writes a log of every timing-dependent outcome the
// ranks see (wildcard matches, Iprobe answers, the test family) into DIR;
// bcsrun --replay DIR runs the job again with those outcomes and stops it,
// naming the rank and the call, where the program no longer makes the
// recorded calls (package internal/replay).
//
// Inside a Slurm allocation (SLURM_JOB_ID set: salloc, sbatch), or with
// --launcher slurm, it runs the job across the allocation's hosts instead:
// srun starts one bcsd per host (bcsd beside bcsrun, else on PATH), the
// ranks are placed by block, and bcsrun exits with srun's status
// (internal/launch.RunSlurm). --launcher local keeps the job on this machine.
// With --hosts a,b,c or --hostfile FILE it starts one bcsd per host over ssh
// instead, and is their PMI server (internal/launch.RunSSH).
//
// When this user has a bcsd running on this machine (bcsd start), a job run
// on this machine is handed to it (package internal/gangd): the daemon runs
// it beside the user's other jobs, at most gang_mpl at once, the others
// waiting in its queue ("bcsrun: queued: ..."), and bcsrun forwards its
// signals and exits with the job's status as if the job had run inside it.
// --gang=off (or BCS_GANG=off) runs the job in bcsrun itself; --gang=on
// fails when no daemon is up. --no-queue refuses to wait (status 75);
// --mem-per-rank declares what one rank needs, checked against the memory
// available. bcsrun --status lists the daemon's jobs. A job across hosts
// (Slurm, --hosts) joins the gang of this user's bcsd on its first host
// when one runs there (--gang: auto, on, off), its master a place in that
// daemon's strobe (internal/launch's gangacross.go).
package main

import (
	"errors"
	"fmt"
	"os"
	"os/signal"
	"runtime/pprof"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/bcsmpi/bcsmpi/configs"
	"github.com/bcsmpi/bcsmpi/internal/gangd"
	"github.com/bcsmpi/bcsmpi/internal/jobenv"
	"github.com/bcsmpi/bcsmpi/internal/launch"
)

func main() {
	started := time.Now() // for -v's start-up figure (to the first slice)
	// First of all, so that no terminating signal is missed during start-up.
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, launch.TermSignals...)

	fs := pflag.NewFlagSet("bcsrun", pflag.ContinueOnError)
	fs.SetInterspersed(false)
	n := fs.IntP("np", "n", 1, "number of ranks")
	verbose := fs.BoolP("verbose", "v", false, "print a summary of the runtime after the job")
	record := fs.String("record", "", "record the job's wildcard matches, Iprobe answers and test results into this directory (new, or without a recording)")
	replayDir := fs.String("replay", "", "replay the recording in this directory (written by --record)")
	hostList := fs.String("hosts", "", "run across these hosts (a,b,c), one bcsd each, started over ssh (key ssh)")
	hostfile := fs.String("hostfile", "", `run across the hosts of this file ("host [slots=N]" per line), started over ssh`)
	gang := fs.String("gang", "auto", `"auto" (hand the job to this user's bcsd when one is up), "on" (hand it over, or fail) or "off" (run it in bcsrun) (env BCS_GANG)`)
	status := fs.Bool("status", false, "list the jobs of this user's bcsd and exit")
	noQueue := fs.Bool("no-queue", false, "with a bcsd: refuse (status 75) rather than wait when gang_mpl jobs already run")
	memPerRank := fs.String("mem-per-rank", "", "with a bcsd: the memory one rank needs (512M, 2G); the job is refused if its ranks do not fit in the memory available (default: 64M assumed)")
	launcher := fs.String("launcher", "auto", `"local" (this machine), "slurm" (one bcsd per host of the allocation, through srun) or "auto" (slurm when SLURM_JOB_ID is set)`)
	configs.Flags(fs)
	fs.Usage = func() {
		fmt.Fprintf(os.Stderr, "usage: bcsrun -n N [flags] PROGRAM [ARGS...]\n\nflags:\n%s", fs.FlagUsages())
	}
	if err := fs.Parse(mpirunArgs(fs, os.Args[1:])); err != nil {
		if err == pflag.ErrHelp {
			os.Exit(0)
		}
		fmt.Fprintln(os.Stderr, "bcsrun:", err)
		fs.Usage()
		os.Exit(2)
	}
	if *status {
		os.Exit(printStatus())
	}
	gangMode, err := gangFlag(fs, *gang)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bcsrun:", err)
		os.Exit(2)
	}
	var memBytes uint64
	if *memPerRank != "" {
		if memBytes, err = gangd.ParseBytes(*memPerRank); err != nil {
			fmt.Fprintln(os.Stderr, "bcsrun: --mem-per-rank", err)
			os.Exit(2)
		}
	}
	if fs.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "bcsrun: no program given")
		fs.Usage()
		os.Exit(2)
	}
	cfg, info, err := configs.LoadInfo(fs)
	info.Print(os.Stderr, *verbose) // warnings; with -v also the file and BCS_* variables read
	if err != nil {
		fmt.Fprintln(os.Stderr, "bcsrun:", err)
		os.Exit(2)
	}
	if path := os.Getenv(jobenv.VarCPUProfile); path != "" { // for developers: profile the runtime itself
		f, err := os.Create(path)
		if err == nil && pprof.StartCPUProfile(f) == nil {
			defer pprof.StopCPUProfile()
		}
	}
	stdin := os.Stdin // for rank 0, like mpirun; none if bcsrun was started without one
	if _, err := stdin.Stat(); err != nil {
		stdin = nil
	}
	job := launch.Job{Ranks: *n, Program: fs.Arg(0), Args: fs.Args()[1:], Config: cfg, Stdin: stdin, Signals: sigs, Record: *record, Replay: *replayDir,
		AcrossGang: gangMode}
	var res launch.Result
	via := "srun" // how the hosts' bcsds were started, for -v
	switch {
	case (*record != "" || *replayDir != "") && (*hostList != "" || *hostfile != "" || *launcher == "slurm" || *launcher == "auto" && launch.InSlurm()):
		err = fmt.Errorf("bcsrun: --record and --replay run on this machine only (--launcher local); across hosts they are not supported yet")
	case *hostList != "" || *hostfile != "":
		var hosts []string
		if *hostList != "" && *hostfile != "" {
			err = fmt.Errorf("bcsrun: --hosts and --hostfile both given; want one")
		} else if *hostList != "" {
			hosts, err = launch.ParseHosts(*hostList)
		} else if f, ferr := os.Open(*hostfile); ferr != nil {
			err = fmt.Errorf("bcsrun: --hostfile: %w", ferr)
		} else {
			hosts, err = launch.ParseHostfile(f, *hostfile)
			f.Close()
		}
		if err == nil {
			via = "ssh"
			res, err = launch.RunSSH(job, hosts)
		}
	case *launcher == "slurm" || *launcher == "auto" && launch.InSlurm():
		res, err = launch.RunSlurm(job)
	case *launcher == "local" || *launcher == "auto":
		attached := false
		if gangMode != "off" {
			res, attached, err = runAttached(gangMode, job, *noQueue, memBytes)
		}
		if !attached && err == nil {
			res, err = launch.Run(job)
		}
	default:
		fmt.Fprintf(os.Stderr, "bcsrun: --launcher %q, want auto, local or slurm\n", *launcher)
		os.Exit(2)
	}
	var refused *gangd.ExitError
	if errors.As(err, &refused) {
		if refused.Msg != "" {
			fmt.Fprintln(os.Stderr, refused.Msg)
		}
		os.Exit(refused.Code)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	if *verbose && res.Hosts > 0 {
		fmt.Fprintf(os.Stderr, "bcsrun: job %s: %d ranks on %d host(s) through %s, %d slices of %v (%d skipped), %.3fs wall\n",
			res.JobID, *n, res.Hosts, via, res.Slices, cfg.Timeslice, res.Skipped, res.Elapsed.Seconds())
	} else if *verbose {
		fmt.Fprintf(os.Stderr, "bcsrun: job %s: %d ranks on %d node(s), %d slices of %v (%d skipped), SCHED_FIFO %v, %.3fs wall, %.3fs runtime CPU\n",
			res.JobID, *n, cfg.Nodes, res.Slices, cfg.Timeslice, res.Skipped, res.FIFO, res.Elapsed.Seconds(), res.RuntimeCPU.Seconds())
		if res.Slices > 0 && !res.Ganged {
			fmt.Fprintf(os.Stderr, "bcsrun: strobe lateness: mean %.1fµs, max %.1fµs; strobe_spin %v, spin %v\n",
				float64(res.Late.Nanoseconds())/1e3/float64(res.Slices), float64(res.LateMax.Nanoseconds())/1e3, res.StrobeSpin, res.Spin)
		}
		fmt.Fprintf(os.Stderr, "bcsrun: bytes_per_slice_max %d; pull orders: %d served (%d bytes copied by the receivers), %d revoked, %d unfinished; %d spans\n",
			res.BytesPerSliceMax, res.Pulls.Served, res.Pulls.Bytes, res.Pulls.Revoked, res.Pulls.Unfinished, res.Pulls.Spans)
		if *record != "" {
			fmt.Fprintf(os.Stderr, "bcsrun: recorded into %s: %d bytes of rank files\n", *record, res.RecordBytes)
		}
	}
	if *verbose && res.Ganged { // in the gang of a bcsd (bcsd start here, or on the first host)
		fmt.Fprintf(os.Stderr, "bcsrun: job %s: in a gang: ran in %d of its %d slices\n", res.JobID, res.SlicesRun, res.SlicesAlive)
	}
	if *verbose && !res.FirstSlice.IsZero() {
		// Across hosts the first slice's time is node 0's host's clock:
		// as good as the hosts' clocks agree (the same clock in one machine).
		fmt.Fprintf(os.Stderr, "bcsrun: job %s: first slice %.3fs after bcsrun started\n", res.JobID, res.FirstSlice.Sub(started).Seconds())
	}
	pprof.StopCPUProfile()
	os.Exit(res.ExitCode)
}

// mpirunArgs accepts the spellings of mpirun and mpiexec that scripts
// written for Open MPI and MPICH use, before the program name: "-np N"
// (pflag would read it as -n with the value "p") becomes --np N, and Open
// MPI's --allow-run-as-root and --oversubscribe, which mean nothing here
// (bcsmpi runs as root and always allows more ranks than cores), are
// dropped. Arguments from the program name on are left alone.
func mpirunArgs(fs *pflag.FlagSet, args []string) []string {
	out := make([]string, 0, len(args))
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			return append(out, args[i:]...)
		case !strings.HasPrefix(a, "-") || a == "-":
			return append(out, args[i:]...) // the program
		case a == "-np" || strings.HasPrefix(a, "-np="):
			out = append(out, "-"+a)
			continue
		case a == "--allow-run-as-root" || a == "--oversubscribe":
			continue
		}
		out = append(out, a)
		// A flag given as "--name value" or "-x value" takes the next
		// argument with it.
		if strings.Contains(a, "=") {
			continue
		}
		var f *pflag.Flag
		if strings.HasPrefix(a, "--") {
			f = fs.Lookup(a[2:])
		} else if len(a) == 2 {
			f = fs.ShorthandLookup(a[1:])
		}
		if f != nil && f.NoOptDefVal == "" && i+1 < len(args) {
			i++
			out = append(out, args[i])
		}
	}
	return out
}
