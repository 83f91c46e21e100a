// Command bcsplot draws the data of a monitored job (BCS_MDS) to PNG and SVG.
//
//	bcsplot getts  DIR              GETTS against slice number (paper Figure 5)
//	bcsplot ncoll  DIR [--node K]   NCOLLDEM and NCOLLMSM of node K (Figure 6)
//	bcsplot series DIR METRIC [--node K]   any EMDS metric (global without --node)
//	bcsplot matrix DIR              communication matrix heat map
//	bcsplot hist   DIR --rank R --metric TAG   an MMDS distribution (comm, comp, MPI_Send.latency, ...)
//	bcsplot kernel DIR [--rank R | --entity master|runtime|runtime-node<k>]   the kernel monitor (BCS_MDS=…,kernel):
//	                                rank × slice heat maps of preempted time and wake-up latency,
//	                                and per-slice stacked time (on CPU, runnable, blocked) of rank R
//	bcsplot all    DIR              getts, ncoll of node 0, the matrix, rank 0's comm/comp distributions
//	                                (and the kernel figures when the job has them)
//
// --from/--to limit the EMDS figures to a range of slices.
//
// DIR is a job's MDS directory (e.g. bcs-mds/latest). Figures go to DIR unless -o says otherwise.
//
// If the data is incomplete (bcsrun did not finish, a rank's or node's dump
// is missing, partial or was interrupted) bcsplot names what is missing on
// stderr, draws what it can and exits 3 (mds.ExitIncomplete), or 0 with
// --partial. Exit 1 is an error, 2 a usage error.
package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/pflag"

	"github.com/bcsmpi/bcsmpi/emds/kernel"
	"github.com/bcsmpi/bcsmpi/mds"
	"github.com/bcsmpi/bcsmpi/tools/plots"
)

func main() {
	fs := pflag.NewFlagSet("bcsplot", pflag.ContinueOnError)
	node := fs.Int("node", -1, "node for local metrics")
	rank := fs.Int("rank", 0, "rank for hist")
	metric := fs.String("metric", "comm", "distribution for hist")
	out := fs.StringP("out", "o", "", "output directory (default: DIR)")
	from := fs.Uint64("from", 0, "first slice to draw")
	to := fs.Uint64("to", 0, "last slice to draw (0: the last recorded)")
	partial := fs.Bool("partial", false, "accept incomplete data: warn, but exit 0")
	entity := fs.String("entity", "", "kernel: master, runtime (runtime-node<k> across hosts) instead of --rank")
	fs.Usage = func() {
		fmt.Fprintf(os.Stderr, "usage: bcsplot getts|ncoll|series|matrix|hist|kernel|all DIR [METRIC] [flags]\n%s", fs.FlagUsages())
	}
	if err := fs.Parse(os.Args[1:]); err != nil {
		os.Exit(2)
	}
	args := fs.Args()
	if len(args) < 2 {
		fs.Usage()
		os.Exit(2)
	}
	cmd, dir := args[0], args[1]
	if *out == "" {
		*out = dir
	}
	st, err := mds.Check(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bcsplot:", err)
		os.Exit(1)
	}
	if cmd == "hist" {
		st = st.Only(mds.SetOf(*rank))
	}
	st.Warn(os.Stderr, "bcsplot", dir)
	var files []string
	rng := plots.Range{From: *from, To: *to}
	switch cmd {
	case "getts":
		files, err = plots.GETTS(dir, *out, rng)
	case "ncoll":
		files, err = plots.NCOLL(dir, *out, max(*node, 0), rng)
	case "series":
		if len(args) < 3 {
			err = errors.New("series needs a METRIC (e.g. GTTS, LTDEM, BPTS)")
			break
		}
		files, err = plots.Metric(dir, *out, args[2], *node, rng)
	case "matrix":
		files, err = plots.Matrix(dir, *out)
	case "hist":
		files, err = plots.Histogram(dir, *out, *rank, *metric)
	case "kernel":
		ent := *entity
		if ent == "" {
			ent = fmt.Sprintf("rank%d", *rank)
		} else if ent != "master" && ent != "runtime" && !kernel.IsHostRuntime(ent) {
			err = fmt.Errorf("--entity %q, want master, runtime, or runtime-node<k> across hosts (or --rank R)", ent)
			break
		}
		files, err = plots.KernelHeat(dir, *out, rng)
		if err == nil {
			var fl []string
			fl, err = plots.KernelStack(dir, *out, ent, rng)
			files = append(files, fl...)
		}
	case "all":
		figs := []func() ([]string, error){
			func() ([]string, error) { return plots.GETTS(dir, *out, rng) },
			func() ([]string, error) { return plots.NCOLL(dir, *out, max(*node, 0), rng) },
			func() ([]string, error) { return plots.Matrix(dir, *out) },
			func() ([]string, error) { return plots.Histogram(dir, *out, *rank, "comm") },
			func() ([]string, error) { return plots.Histogram(dir, *out, *rank, "comp") },
		}
		if _, err := os.Stat(filepath.Join(dir, "emds-kernel-rank0.csv")); err == nil {
			figs = append(figs,
				func() ([]string, error) { return plots.KernelHeat(dir, *out, rng) },
				func() ([]string, error) { return plots.KernelStack(dir, *out, fmt.Sprintf("rank%d", *rank), rng) })
		}
		for _, f := range figs {
			fl, e := f()
			if e != nil {
				fmt.Fprintln(os.Stderr, "bcsplot:", e)
				continue
			}
			files = append(files, fl...)
		}
		if len(files) == 0 {
			err = fmt.Errorf("nothing to plot in %s", dir)
		}
	default:
		err = fmt.Errorf("unknown figure %q; want getts, ncoll, series, matrix, hist, kernel or all", cmd)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bcsplot:", err)
		os.Exit(1)
	}
	for _, f := range files {
		fmt.Println(f)
	}
	if !st.Complete && !*partial {
		fmt.Fprintln(os.Stderr, "bcsplot: the figures show only the data present; --partial accepts that and exits 0")
		os.Exit(mds.ExitIncomplete)
	}
}
