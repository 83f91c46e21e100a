// Command bcsreport prints the MMDS summary of a monitored job: the paper's
// Table 2 (per primitive Min, Max, Total, Count and Average in ms, plus
// computation granularity and communication overhead), for one rank or
// aggregated over ranks with the spread of each total across ranks.
//
//	bcsreport [--rank R | --ranks 0,2-5] [--format text|csv|json] DIR
package main

import (
	"fmt"
	"os"
	"strconv"

	"github.com/spf13/pflag"

	"github.com/bcsmpi/bcsmpi/mds"
)

func main() {
	fs := pflag.NewFlagSet("bcsreport", pflag.ContinueOnError)
	rank := fs.Int("rank", -1, "one rank")
	ranks := fs.String("ranks", "all", "ranks to aggregate")
	format := fs.String("format", "text", "text, csv or json")
	fs.Usage = func() { fmt.Fprintf(os.Stderr, "usage: bcsreport [flags] DIR\n%s", fs.FlagUsages()) }
	if err := fs.Parse(os.Args[1:]); err != nil || fs.NArg() != 1 {
		fs.Usage()
		os.Exit(2)
	}
	sel := *ranks
	if *rank >= 0 {
		sel = strconv.Itoa(*rank)
	}
	set, err := mds.ParseSet(sel)
	if err == nil && *format != "text" && *format != "csv" && *format != "json" {
		err = fmt.Errorf("--format %q, want text, csv or json", *format)
	}
	var sums []mds.Summary
	if err == nil {
		sums, err = mds.ReadDir(fs.Arg(0), &set)
	}
	if err == nil {
		err = mds.Aggregate(sums).Write(os.Stdout, *format)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bcsreport:", err)
		os.Exit(1)
	}
}
