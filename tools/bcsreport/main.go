// Command bcsreport prints the MMDS summary of a monitored job: the paper's
// Table 2 (per primitive Min, Max, Total, Count and Average in ms, plus
// computation granularity and communication overhead), for one rank or
// aggregated over ranks with the spread of each total across ranks.
//
//	bcsreport [--rank R | --ranks 0,2-5] [--format text|csv|json] [--partial] [--alone DIR0] DIR
//	bcsreport --kernel [--top N] DIR
//	bcsreport --gang [--alone DIR0] [--format text|json] DIR
//
// --kernel prints the kernel monitor's summary instead (BCS_MDS=…,kernel):
// per rank, the master's thread and the runtime, the share of the run on
// CPU, runnable and preempted, the wake-up latency's p50 and p99, and the
// tasks that ran longest while it waited. Where a host's kernel files did
// not all come back (a job across hosts), it summarizes the rest, names
// each missing file and its node on stderr, and exits 3, or 0 with
// --partial, as for the MMDS.
//
// A job that ran in a gang (bcsd start; its manifest has a "gang" object)
// gets, after the text table, its gang report; --gang prints that alone
// (text or json), without the MMDS (it needs only the manifest, and the
// EMDS for the switches' distribution). A job that did not run in a gang
// gets nothing more, and --gang refuses it. The report's lines:
//
//	response time  end − submitted (the bcsd received the job); without a
//	               submit time in the manifest, end − start
//	queue wait     admitted − submitted: the wait in the bcsd's queue
//	start-up       start − admitted: the launcher's start before the MDS
//	run time       end − start
//	slices         run of alive: slices in which its ranks could run, of
//	               those in which it was strobed; run share = run ÷ alive;
//	               given away: slices of its turns another job ran while
//	               its ranks were all blocked (work-conserving)
//	slowdown       alive ÷ run: what the share implies for a CPU-bound job
//	slowdown alone with --alone DIR0 (the MDS directory of a run of the same
//	               program alone): run time ÷ DIR0's run time, measured,
//	               and response time ÷ DIR0's run time
//	switches       the gang's switches into and out of the job; the nodes'
//	               stops and continues (SWITCHNS > 0 over all slices), their
//	               total and mean, and the mean as a share of the slice
//	switch cost    p50, p99 and max of the EMDS's non-zero SWITCHNS cells
//	               (the recorded window, every recorded node), as shares of
//	               the slice too
//	EMDS RUN       slices run among those node 0's EMDS recorded
//
// --format json gives the same as one object (times in ns, shares as
// fractions); README's "Monitoring and debugging" defines the manifest's
// fields it reads.
//
// Before the table it checks that the data is whole (the job's manifest says
// bcsrun finished, and every selected rank left a final dump, with no dump
// interrupted). If not, it names what is missing on stderr, prints the table
// over the ranks present and exits 3 (mds.ExitIncomplete), or 0 with
// --partial. Exit 1 is an error, 2 a usage error.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"

	"github.com/spf13/pflag"

	"github.com/bcsmpi/bcsmpi/emds/kernel"
	"github.com/bcsmpi/bcsmpi/mds"
	"github.com/bcsmpi/bcsmpi/tools/plots"
)

func main() {
	fs := pflag.NewFlagSet("bcsreport", pflag.ContinueOnError)
	rank := fs.Int("rank", -1, "one rank")
	ranks := fs.String("ranks", "all", "ranks to aggregate")
	format := fs.String("format", "text", "text, csv or json")
	partial := fs.Bool("partial", false, "accept incomplete data: warn, but exit 0")
	kern := fs.Bool("kernel", false, "summarize the kernel monitor's data (BCS_MDS=…,kernel)")
	top := fs.Int("top", 3, "interfering tasks listed per entity with --kernel")
	gangOnly := fs.Bool("gang", false, "only the gang report: response time, queue wait, run share, slowdown, switch cost (text or json)")
	alone := fs.String("alone", "", "with the gang report: the MDS directory of a run of the same program alone, for the measured slowdown")
	fs.Usage = func() { fmt.Fprintf(os.Stderr, "usage: bcsreport [flags] DIR\n%s\n%s", fs.FlagUsages(), gangHelp) }
	if err := fs.Parse(os.Args[1:]); err != nil || fs.NArg() != 1 {
		fs.Usage()
		os.Exit(2)
	}
	if *kern {
		if *top < 0 {
			fmt.Fprintf(os.Stderr, "bcsreport: --top %d, want 0 or more\n", *top)
			os.Exit(2)
		}
		sums, missing, err := kernel.Summarize(fs.Arg(0), plots.Timeslice(fs.Arg(0)), *top)
		for _, m := range missing {
			fmt.Fprintf(os.Stderr, "bcsreport: kernel monitor data incomplete: %s\n", m)
		}
		if err == nil {
			err = kernel.WriteSummaries(os.Stdout, sums)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "bcsreport:", err)
			os.Exit(1)
		}
		if len(missing) > 0 && !*partial {
			fmt.Fprintln(os.Stderr, "bcsreport: the table covers only the data present; --partial accepts that and exits 0")
			os.Exit(mds.ExitIncomplete)
		}
		return
	}
	if *gangOnly {
		if *format != "text" && *format != "json" {
			fmt.Fprintf(os.Stderr, "bcsreport: --gang --format %q, want text or json\n", *format)
			os.Exit(2)
		}
		r, err := makeGangReport(fs.Arg(0), *alone)
		if err == nil {
			err = r.write(os.Stdout, *format)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "bcsreport:", err)
			os.Exit(1)
		}
		return
	}
	sel := *ranks
	if *rank >= 0 {
		sel = strconv.Itoa(*rank)
	}
	set, err := mds.ParseSet(sel)
	if err == nil && *format != "text" && *format != "csv" && *format != "json" {
		err = fmt.Errorf("--format %q, want text, csv or json", *format)
	}
	var st mds.Status
	if err == nil {
		st, err = mds.Check(fs.Arg(0))
		st = st.Only(set)
	}
	var sums []mds.Summary
	if err == nil {
		st.Warn(os.Stderr, "bcsreport", fs.Arg(0))
		sums, err = mds.ReadDir(fs.Arg(0), &set)
	}
	if err == nil {
		err = mds.Aggregate(sums).Write(os.Stdout, *format)
	}
	if err == nil && (*format == "text" || *alone != "") {
		err = gangAfterTable(os.Stdout, fs.Arg(0), *alone, *format)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bcsreport:", err)
		os.Exit(1)
	}
	if !st.Complete && !*partial {
		fmt.Fprintf(os.Stderr, "bcsreport: the table covers only the data present (ranks %v); --partial accepts that and exits 0\n", ranksOf(sums))
		os.Exit(mds.ExitIncomplete)
	}
}

const gangHelp = `A job that ran in a gang (bcsd start) gets its gang report after the text
table (--gang: that report alone, text or json; nothing for another job):
  response time  end - submitted (the bcsd received it)
  queue wait     admitted - submitted; start-up: start - admitted; run time: end - start
  slices         run of alive (run share = run / alive); given away: slices of
                 its turns another job ran while its ranks were all blocked
  slowdown       alive / run, implied by the share; with --alone DIR0 (a run of
                 the same program alone) measured: run time / DIR0's run time
  switches       the gang's switches in and out; the nodes' stops and continues,
                 total, mean, and mean / slice; EMDS SWITCHNS p50, p99, max
`

// gangAfterTable prints the gang report after the MMDS table, for a job
// that ran in a gang; nothing for another job, unless --alone asked for
// it. Without --alone, a report that cannot be made (the job has not
// finished) is a note on stderr: the table stands.
func gangAfterTable(w io.Writer, dir, alone, format string) error {
	if format != "text" {
		return fmt.Errorf("--alone goes with the text table or --gang, not --format %s", format)
	}
	r, err := makeGangReport(dir, alone)
	switch {
	case err != nil && alone != "":
		return err
	case err != nil && errors.Is(err, errNotGang):
		return nil
	case err != nil:
		if m, merr := readManifest(dir); merr == nil && m.Gang != nil {
			fmt.Fprintln(os.Stderr, "bcsreport: no gang report:", err)
		}
		return nil
	}
	fmt.Fprintln(w)
	return r.write(w, "text")
}

func ranksOf(sums []mds.Summary) []int {
	var out []int
	for _, s := range sums {
		out = append(out, s.Rank)
	}
	return out
}
