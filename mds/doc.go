// Package mds is the Main MDS (MMDS) of the paper (§3.1): per-process
// statistics of every MPI primitive a rank calls, and the distributions that
// describe how the rank spends its time.
//
// # What is recorded
//
//   - For every primitive called: count, minimum, maximum and total latency
//     (average = total/count). Always on when MMDS is enabled.
//   - For the selected primitives: latency and message-size distributions on
//     HdrHistogram at the configured number of significant digits, made on
//     the primitive's first call (about 75 KB each at 2 digits; a rank pays
//     only for the primitives it uses, at most about 6 MB for all 82 of them).
//   - Computation granularity and communication overhead, kept as the paper's
//     two counters and two arrays: on entering a blocking primitive the rank
//     closes a computation interval (now − compStart) and opens a
//     communication interval (commStart = now); on leaving it closes that
//     (now − commStart) and opens the next computation interval. Time in
//     non-blocking primitives counts as computation. The intervals tile the
//     run from Init to Finalize exactly, so comp + comm = run time (the
//     totals are kept as exact integers beside the histograms).
//
// Recording is single-threaded (one Recorder per rank process, used only by
// the goroutine making MPI calls, as MPI_THREAD_FUNNELED requires): no lock,
// and no allocation except a primitive's first call.
//
// # Files (one set per rank, in the job's MDS directory)
//
//	mmds-rank<R>.csv   summary: primitive,count,min_ns,max_ns,total_ns
//	                   plus rows comp_granularity, comm_overhead, run_time
//	mmds-rank<R>.hlog  HdrHistogram interval log (V1.3 format), one histogram per
//	                   distribution, tagged "<primitive>.latency",
//	                   "<primitive>.size", "comp", "comm"; readable by every
//	                   HdrHistogram implementation
//	mmds-rank<R>-dist.csv  the same distributions as rows metric,from,to,count
//
// A dump rewrites the rank's files whole (WriteAtomic: a temporary name unique
// to the writer, then rename), the summary last, so a periodic or signal-time
// dump never leaves a torn file; a leftover "*.tmp" means a dump was
// interrupted. The rank has one dump path: its goroutine and its SIGTERM
// goroutine never dump at once (mpiapi serialises them). The summary's
// "finalized" row says whether the dump was taken at Finalize (1) or earlier,
// at an interval, MPI_Abort or a signal (0).
//
// Files are created with Config.FileMode (DefaultFileMode, 0600: they name
// the program, its arguments and its timings); DirMode gives the directory's.
//
// # Completeness
//
// Status is the part of the job's manifest.json that says whether the data
// is whole: bcsrun writes it at job start (finished false, no exit code) and
// at the end (the exit code, the ranks' dumps, the problems). Check recomputes
// it from the files, so a manifest that a killed bcsrun never finished, a rank
// that left no dump, a partial dump or an interrupted write are all named.
// bcsreport and bcsplot print the problems and exit ExitIncomplete (3) unless
// told --partial.
package mds
