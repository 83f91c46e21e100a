// Package gangd is the per-user daemon that hosts several jobs on one
// machine, and the protocol bcsrun speaks to it (issue 17, parts 1 and 6).
//
// # Glossary
//
//   - Daemon: one bcsd per user per machine, started with "bcsd start"
//     (daemonised) or "bcsd start --foreground". It runs every job of its
//     user that a bcsrun hands it, each with launch.Run, in its own
//     goroutine.
//   - Client: a bcsrun attached to the daemon. It resolves everything that
//     depends on where and by whom it was started (the program's absolute
//     path, the configuration, the environment, the working directory,
//     absolute MDS and recording directories), hands the job over with its
//     own standard input, output and error, forwards the signals it gets,
//     and exits with the job's status exactly as a job run inside it would.
//   - Runtime directory: where the socket (bcsd.sock), the lock (bcsd.lock,
//     holding the daemon's pid) and the daemonised daemon's log (bcsd.log)
//     live: $BCS_RUNTIME_DIR, else $XDG_RUNTIME_DIR/bcsmpi, else
//     /tmp/bcsmpi-<uid>. Mode 0700, owned by the user; a directory owned by
//     anyone else is refused, by the daemon and by the client, naming its
//     owner.
//   - Multiprogramming level (MPL, key gang_mpl, read by the daemon when it
//     starts, default 2): how many jobs run at once. A job beyond it waits in
//     the daemon's queue, first come first served, or is refused with
//     bcsrun --no-queue.
//
// # One daemon per user
//
// The lock is the truth: a daemon holds an exclusive flock on bcsd.lock for
// its whole life, and the kernel drops it when the daemon dies, however it
// dies. A second daemon fails to take it and says which pid holds it. A
// daemon that has the lock removes whatever socket file is left (a daemon
// killed with SIGKILL leaves one) and listens anew; a client that finds the
// socket but no listener (ECONNREFUSED) knows the daemon is gone and runs the
// job itself.
//
// Every connection's peer is checked with SO_PEERCRED: another uid gets a
// refusal naming both uids and the connection is closed. (The 0700
// directory already keeps other users out; the check holds where the
// directory's mode was loosened.) The client checks the daemon's uid the same
// way.
//
// # The protocol
//
// A stream Unix socket; every message is a frame: a 4-byte big-endian length
// and that many bytes of JSON, at most FrameMax bytes. Decoding is strict
// (unknown fields are errors), so a bcsrun and a bcsd of different builds
// refuse each other's messages, naming the field, rather than dropping a
// setting.
//
//	client → daemon   Request{Op: "run", Job}   with 2 or 3 descriptors (SCM_RIGHTS):
//	                                            [stdin,] stdout, stderr
//	daemon → client   Reply{Kind: "queued"}     zero or one, with a notice to print
//	daemon → client   Reply{Kind: "started"}    after a wait in the queue
//	client → daemon   Request{Op: "signal"}     zero or more: SIGINT, SIGTERM or SIGHUP
//	daemon → client   Reply{Kind: "result"}     the launch.Result, or the error that kept the job from starting
//
// or, instead of a queue and a result, Reply{Kind: "refused"} with the exit
// status and the message. Request{Op: "status"} is answered with
// Reply{Kind: "status"}; Request{Op: "stop"} with Reply{Kind: "stopped"} once
// the daemon has ended every job and released its socket and lock.
// Request{Op: "master"} is node 0's bcsd of a job across hosts asking for a
// place for the job's master in the daemon's gang (across.go has the
// conversation; "A silent host" below says how one job's silent host is
// kept from stalling the others).
//
// The ranks get the client's descriptors themselves (rank 0 its standard
// input, every rank its output), so what they write reaches the client's
// terminal or files without a copy through the daemon, and launch.Run's own
// messages (a failing rank, a deadlock report, the leak report) are written
// to the client's standard error: the output is the one an embedded run
// gives. The client's end of the connection closing (bcsrun killed) is a
// SIGHUP to its job; while it waits in the queue, the job is dropped.
//
// # Admission
//
// A job is started when fewer than MPL jobs run and none waits before it. A
// job is refused (exit status 2) when its footprint does not fit in the
// memory available now: ranks × the declared size per rank
// (bcsrun --mem-per-rank; AssumedRankBytes when not declared) plus its
// shared-memory regions, against MemAvailable of /proc/meminfo. The running
// jobs' present use is already out of MemAvailable, except for jobs started
// in the last 10 s (memSettle), whose ranks may not have allocated yet: their
// footprints are kept aside, so that jobs arriving together are not all let
// in against the same free memory. Growth still to come is not foreseen
// (declare the peak with --mem-per-rank). The check is made when
// the job arrives and again when it leaves the queue. A full machine under
// --no-queue, and a queued job when the daemon stops, get exit status 75
// (EX_TEMPFAIL: nothing ran, try again).
//
// # Where the gang scheduler plugs in
//
// Daemon.Prepare, when set, is called on every job just before launch.Run,
// from the job's goroutine: it is where the gang master (one strobe for
// every job) is given to the job. bcsd start sets it to one gang master
// (launch.NewGang) for all of its jobs; without it, jobs in the daemon would
// be concurrent launch.Runs, each with its own master. Daemon.Gang, set to
// the same gang master, is where the masters of jobs across hosts whose
// node 0 is this host get their place (across.go, and internal/launch's
// gangacross.go): the daemon holds only the job's master endpoint (a
// transport mesh endpoint with the job's secret, on node 0's address) and
// drives it from the gang's strobe thread; the job's bcsds, regions and ranks
// stay in their own processes. Such a job counts towards the
// multiprogramming level and is refused, not queued, when the gang is full.
//
// # A silent host (jobs across hosts)
//
// Each job across hosts has its own failure domain in time as well: its
// master's slices run on a goroutine of their own in the gang
// (nicthread's gang.go), not on the gang's strobe thread. When a remote host
// serving one job goes silent (its link cut: no reset, no FIN; its kernel
// frozen), that job's master waits in its slice for the host's report,
// while the strobe thread waits for it at most the gang's hold (100 ms, and
// at least two slices) past the strobe, then strobes the other jobs without
// it: their slices keep coming, delayed once by at most the hold. The
// silent job is held: the matrix passes it over (if it was running, the
// next job in slot order runs from that strobe), it is not strobed and its
// slices are not counted as run or alive. Its own master ends it at its
// node_timeout (plus tx_timeout when the silence falls in a transmission):
// the error keeps the node and rank it is about (MasterEnd's ErrNode and
// ErrRank), so node 0's bcsd names the host ("node 1: stopped answering: no
// DEM report for slice 607 within 5s (node_timeout) [node 1 is host h3];
// job aborted") and the job fails alone; the daemon logs its end and goes
// on. A host that answers late but within the node_timeout costs its own
// job the strobes it missed (its skipped slices), not the others' time.
// A held job stopped meanwhile (its bcsrun ended or interrupted, a leave,
// bcsd stop) ends at once, at the next strobe, as a stopped job, not at its
// node_timeout: the gang cancels its master's wait (nicthread.Canceller) and
// its healthy hosts get the stop. bcsd status lists a held job as "held".
// Its master thread runs SCHED_FIFO when the gang's fifo is on, as the
// strobe thread does.
//
// What the held job's hosts still see: if the last gang decision that
// reached them was to run, the gang tells them, outside the slice's
// exchange (nicthread.Holder, a MsgHold frame), that the job is held, and
// each host that still answers stops its ranks there, as at a switch (the
// process group's SIGSTOP, or the freezer): they do not compete for the
// cores with the job that now has the turn. They stay stopped until the job
// is released and its turn comes (the host came back within node_timeout)
// or the job ends (aborted or stopped: its bcsd continues and ends them, as
// any descheduled job's ranks). A host whose agent waits in a transmission
// for the silent host's data reads the hold there too, at once (the
// agent's watcher, nicthread's doc.go), stops its ranks and goes on waiting
// for the data; it fails the job at its node_timeout if the silent host
// stays silent, naming it, and a stop read there ends it quietly.
//
// CLOCK_MONOTONIC time, as everywhere in the strobe; the hold is a design
// constant (nicthread.DefaultHold), not a configuration key: long enough
// that a busy host's ordinary lateness stretches slices rather than costing
// a job its turns, short against node_timeout (default 5 s). Tests:
// nicthread's TestGangSilentHostStallsOnlyItsJob and
// TestGangSilentHostAbortsItsJobAtNodeTimeout (agents over loopback TCP, one
// made silent with transporttest.Stall), TestGangHeldJobsRanksAreStopped,
// TestGangHoldStopsRanksWaitingInTX, TestGangHoldInTXThenNodeTimeout and
// TestGangStopReachesAgentWaitingInTX (a node silent in TX while its peer
// waits for its data), strobe's TestGangHeldJobIsPassedOver,
// and cmd/bcsrun's TestGangAcrossHostsSilentHost (namespace hosts over
// ssh, h3's link cut).
//
// # The MDS of a job across hosts in the gang
//
// The master's part of the MDS (emds-global.csv, the user traffic of the
// communication matrix) comes from the master's hooks, which run in this
// daemon. Node 0's bcsd asks for it in its start (Request.MDS, a
// launch.GangMDS: its staging directory, which is on this host, the EMDS
// window and selection, the file mode); the daemon keeps the window and the
// counts (launch.MasterMDS), writes emds-global.csv into that directory when
// the job leaves the gang, and sends the traffic's non-zero cells in the
// left reply (at most maxTraffic of them; beyond, the reply says so and
// the matrix has the collectives' traffic only). A request the daemon
// cannot serve (a directory not the user's, a window out of range) does not
// stop the job: the reply's MDSProblem says why the file is missing, and
// bcsrun prints it and lists it in the manifest's missing_hosts as node 0's
// host's ("h1: MDS data missing: the gang's master: ...").
//
// # Concurrency and ownership
//
// A Daemon is safe for concurrent use. It owns its listener, its lock file,
// every accepted connection and every descriptor a client passes; a job's
// descriptors are closed when its launch.Run has returned (every rank has
// ended then) or when it leaves the queue unstarted. A Client is used by one
// goroutine; it owns its connection.
//
// # Rejected designs
//
//   - Copying the ranks' output through the socket: every byte would cross
//     the daemon, and the ranks could no longer tell a terminal from a file
//     (isatty, line buffering).
//   - A pid file without a lock: a stale pid is recycled by another process,
//     and two daemons starting together both see no daemon. flock is released
//     by the kernel on death, so no stale state survives.
//   - Passing the client's configuration file and environment for the daemon
//     to load: the daemon's cwd, HOME and files are not the client's; the
//     client resolves the configuration and sends the result.
//
// Differences from an embedded run: the ranks are children of the daemon, so
// they get its umask, resource limits and session; Ctrl-Z stops bcsrun, not
// the job.
package gangd
