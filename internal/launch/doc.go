// Package launch runs one job: it creates a shared-memory region and an
// agent per node, starts the master, spawns the rank processes, forwards
// their output, watches them, and tears everything down on every path
// (normal end, a failing rank, a runtime error, SIGINT, SIGTERM or SIGHUP,
// at any moment from the start).
//
// Two launchers share what one node needs (node.go: the region, the agent
// and its mesh endpoint, rank spawning with the jobenv contract, judging a
// rank's exit):
//
//   - Run, the embedded launcher: every node is a logical node of this
//     process (over loopback TCP when there are several), and so is the
//     master.
//   - Across hosts under Slurm (slurm.go, host.go): RunSlurm, in bcsrun,
//     starts one bcsd per host of the allocation with srun --mpi=pmi2, and
//     RunHost, in each bcsd, runs that host's node. The bcsds exchange their
//     endpoints through the PMI key/value space (put, fence, get) and build
//     the authenticated mesh on the address key's interface; the job's
//     secret comes in the environment, never on a command line.
//   - Across hosts over ssh (ssh.go): RunSSH starts one bcsd per host with
//     ssh and is itself the PMI server they meet at (rendezvous.go: one
//     port for their PMI and control connections); the secret comes on
//     ssh's standard input. Each bcsd runs RunHost as under Slurm.
//   - Under Slurm without PMI-2 (the slurm_mpi key: none, or auto where
//     srun --mpi=list does not name pmi2): RunSlurm runs srun --mpi=none
//     and the bcsds meet at bcsrun's rendezvous port as over ssh (VarPMI;
//     each bcsd's node is its Slurm task id).
//
// Where the master runs across hosts: in node 0's bcsd, not in bcsrun. The
// strobe is the job's heartbeat, a round trip to every node each slice: it
// belongs on the compute hosts' network, one hop from every agent, not on the
// host where the user typed salloc (a login node that may not even be
// reachable from the compute hosts, and is loaded by other users). It also
// ties the master's life to the Slurm step, which Slurm ends and cleans up
// as a whole; bcsrun is then only srun's caller, and its death ends the
// step without leaving a master behind.
//
// Job end across hosts: a bcsd whose ranks all ended well enters a second
// PMI fence; it completes when every host's ranks have, and node 0 then
// stops the master, whose stop ends every agent. Each bcsd keeps a control
// connection to bcsrun (control.go). A bcsd that judges a rank's exit a
// failure prints the job message (naming the rank and its host) and sends
// it to bcsrun, which ends the job on every other host; bcsrun exits with
// the failing rank's status, not its launcher's. A verdict on the whole
// job (a deadlock, a collective mismatch) is reached by every host's
// replica of the schedule in the same slice: node 0's bcsd says it, and the
// others say theirs only if bcsrun has not ended the job within quietWait,
// so that the user reads it once, as on one machine. Each bcsd then sends its
// MDS files (hostmds.go) and exits when bcsrun has every host's part; a
// host that died is named in the job's MDS directory as missing. bcsrun
// takes from a host only its own node's files, and only of the parts of
// the MDS the job asked for (an emds-kernel-* file without mds: kernel,
// an mmds-* file without main, an EMDS file without elan is refused like
// a foreign name: that host's data is then named missing). With the
// kernel monitor (mds: kernel) each bcsd runs its host's (emds/kernel:
// its ranks, its agent publishing the slices; its decoding and loading
// prefetched at the start of RunHost) and sends its files with its EMDS;
// a host that cannot load it runs without it, and its 'Z' says why
// (the manifest's kernel_hosts). A bcsd
// whose control connection ends before bcsrun released it (bcsrun killed)
// ends its host's part at once, saying so: under Slurm nothing else would
// (srun, orphaned, waits for its tasks). Each bcsd, like Run, is the reaper
// of its ranks' orphans.
//
// Failures between hosts: the master notices a host that stops answering
// (its bcsd killed, its link to the master cut) within node_timeout (cut
// off while it transmits: through keepalive probes,
// transport.Mesh.SetDirectKeepAlive, in about node_timeout, at least
// 2 s). Where the kernel refuses those socket options on a connection
// (transport.Mesh.KeepAliveFailed), node 0's bcsd warns once, naming the
// nodes and the error, and the job goes on: that is a slower detection,
// not none (the master's wait for a node's report still ends, after
// node_timeout + tx_timeout), and failing a job that is healthy for a
// socket option would cost more than the late notice it avoids. A
// link cut or a partition between two hosts that both still answer the
// master is noticed by their agents: RunHost gives each agent node_timeout
// as its PeerTimeout and its mesh's send timeout, and the host names to
// put in its messages (nicthread's package comment, "A silent peer"); the
// agent that notices fails its slice, and its bcsd's message names both
// hosts. A slow link is not a failure: the job goes on, its slices longer
// (EMDS GTTS, LTR3, LTR4), as long as a peer takes or sends something
// within each node_timeout.
//
// Nothing left on a host: a bcsd's MDS staging directory (hostmds.go) is
// the only named thing a host's part creates (regions are memfds, sockets
// and pipes end with their process). A bcsd removes it before it tells
// bcsrun it is done; for a host that connected and never said so (its
// bcsd killed, its link cut), bcsrun runs `bcsd --cleanup JOB` there
// (srun -w HOST, or ssh) once the job has ended on every host, and warns
// naming the host if that fails too (the host unreachable): then the next
// bcsd with the MDS on that host removes it as it starts (each bcsd holds
// its directory's flock while it lives, so only those of dead bcsds go).
//
// Ownership: a job (job.go) owns every resource it creates — regions
// (anonymous memfd files with no name in any file system, inherited by the
// ranks as fd 3, so nothing is left behind whatever kills bcsrun, SIGKILL
// included), transport listeners and connections, pipes, child processes,
// and goroutines; all are released before Run (or RunHost) returns.
//
// # The job and its lifecycle
//
// Run and RunHost (and so bcsrun, the gang daemon, whose jobs are Runs in
// one process, and bcsd) hold a job's resources in one type, job, whose
// life is create, start, watch, finish, Close:
//
//   - create acquires the parts in order, each with a small function that
//     first records how to release its part: the reaper (the registry entry
//     that makes the job's orphans its own), the recording (--record), the
//     MDS (the monitor, or a host's private directory), one region per node
//     on this host, the leak report pipe, the mesh (transport endpoints and
//     the goroutines serving them; none for a single embedded node), the
//     master (its goroutine, or the job's place in a gang: Job.Gang), the
//     stall watch (Run), and the ranks. RunHost takes the parts it needs in
//     its own order (the mesh and its PMI exchange before the MDS).
//   - start spawns the ranks from an OS thread locked until Close.
//   - watch (watch.go, one loop for both) follows the ranks, the master,
//     the agents and the signals until the last rank has been reaped;
//     RunHost's adds the end fence, bcsrun's control words and the quiet
//     wait (its sources are nil channels in Run), and each gives its own
//     handlers (the verdict, the master's and the agent's ends).
//   - finish ends the orphans, stops the master and then the agents — the
//     order Close would use — reading each one's counts once it has
//     stopped, drains the output and writes the reports.
//   - Close releases every part acquired, in reverse order, once (a second
//     call releases nothing and returns the first's error), and returns
//     their errors joined; only the recording's can fail a job that ran. It is safe after any step of create has
//     failed, or after a rank could not start: ranks still alive are killed
//     and reaped, the master is stopped, meshes closed, regions unmapped.
//
// A test fails each step (and each rank's start) in turn and checks that
// Close releases exactly the parts acquired, in reverse, leaving no
// descriptor, socket, region or process (job_test.go).
//
// Processes: ranks are started with PDEATHSIG=SIGKILL from a locked thread, so
// they die with bcsrun. That thread also pins them (pin.go, key rank_pin:
// by default the ranks of a job in a gang, one per core, when they fit). The calling process becomes a child subreaper
// (PR_SET_CHILD_SUBREAPER, for the rest of its life), so every process a rank
// starts and leaves behind is re-parented to it; when the last rank has ended,
// Run kills (SIGKILL) and reaps every remaining child: no process a rank
// started outlives the job. (If bcsrun itself is killed with SIGKILL, the
// ranks die but such grandchildren cannot be reached.) Orphans that exit
// during the job are reaped on SIGCHLD.
//
// Gangs (gang.go): with Job.Gang set, Run joins that gang master instead of
// starting its own, and several Runs may share it concurrently in one
// process; each job's ranks form a process group per node, stopped and
// continued at the strobe when the gang switches jobs, and each Run reaps
// and ends only its own processes (reap.go's registry). With gang_stop
// freezer (or auto, where a cgroup v2 directory can be made beside this
// process's own; the default, signal, is cheaper per switch) the node's ranks are also put in a cgroup of their own
// (freezer.go) and the switch writes its cgroup.freeze instead of sending
// SIGSTOP/SIGCONT: nothing the ranks can see, catch or have reported by
// wait, and whatever they start is stopped with them. The cgroup is
// removed with the job; one left by a SIGKILLed launcher is removed by the
// next freezer made.
//
// Gangs across hosts (gangacross.go): node 0's bcsd of a job across hosts
// asks this user's gang daemon on its host (HostJob.JoinGang) for a place
// for the job's master instead of running one; every host then gives its
// ranks a process group, stopped and continued by its agent when the gang's
// decision arrives in the slice's MsgDEM.
//
// Input and output: rank 0 reads Job.Stdin (across hosts: through srun, or
// over ssh through node 0's control connection), the other ranks /dev/null. Output
// goes straight to Job.Stdout/Stderr when they are files; otherwise, and with
// TagOutput, through pipes read by Run, with no limit on a line's length.
// The job ends when its ranks end: Run does not wait for a process outside
// the job that still holds an output pipe open (it reads what the pipe holds,
// for at most drainWait, then closes it).
//
// At the end of a job that otherwise succeeded, Run prints one report of what
// was not released (leak.go): the ranks' parts, which they write to the
// report pipe (fd 4) at MPI_Finalize, and the messages no receive matched. The
// leak_check key makes it a warning, an error that fails the job, or nothing.
//
// Fault injection (fault.go, nofault.go): the agents' links carry no fault
// logic in production. A build with the bcsfault tag (go build -tags
// bcsfault), which is how cmd/bcsrun's end-to-end tests build bcsrun and bcsd
// in their TestMain, reads BCS_FAULT_STALL_NODE=node@slice and wraps that
// node's transport.Link with transporttest.Stall: its agent stops answering
// the master from that slice on, so the tests see a silent node end to end. A
// normal build ignores the variable and does not link transporttest (a test
// checks both with go list -deps). Why a tag rather than an environment
// switch alone: the tests run the real binaries, so the hook must be compiled
// into some build of them; the tag keeps it out of the one users run, and the
// variable, read only in that build, still picks the node and slice per test.
package launch
