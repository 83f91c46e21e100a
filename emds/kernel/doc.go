// Package kernel is the EMDS kernel monitor (BCS_MDS=…,kernel): what the
// operating system's scheduler did to each rank, to the master's strobe
// thread and to the rest of the runtime, slice by slice. eBPF programs
// (sched.bpf.c, loaded through cilium/ebpf, CO-RE against the kernel's BTF)
// run on the scheduler's tracepoints sched_switch, sched_waking,
// sched_wakeup, sched_wakeup_new and sched_migrate_task (as tp_btf
// programs) and keep cumulative counters in per-CPU maps; the launcher reads
// them once per slice, after node 0's transmission microphase (outside the
// slice's critical path), and records the differences into EMDS windows.
//
// # Entities
//
// Entity e < R is rank e: every thread of the rank's process (registered by
// pid with AddRank when the launcher starts it). Entity R, "master", is the
// master's strobe thread (registered by SetMasterThread from that thread;
// in the embedded single-node job the agent runs on it too). Entity R+1,
// "runtime", is every other thread of bcsrun (with --nodes > 1 the agents and
// the master run there, on threads Go chooses). A task is looked up by its
// thread id, then by its process id.
//
// # Metrics (per entity, per slice; times in ns)
//
//	ONCPU    time its threads ran
//	RUNQ     time its threads were runnable but not running: from a wake-up or
//	         a preemption to being switched in
//	PREEMPT  time other tasks ran on a CPU while a thread of this entity was
//	         waiting on that CPU's run queue (the interference; see TOP)
//	WAKELAT  sum of wake-up latencies, from sched_waking to running. A rank's
//	         wake-ups count only when a thread of bcsrun wakes it (the agent
//	         publishing a completion), not the Go runtime's hand-offs
//	         between the rank's own threads; the master's and the runtime's
//	         count whoever wakes them
//	NWAKE    wake-ups measured (WAKELAT/NWAKE is the mean latency)
//	NIVCSW   involuntary context switches (switched out while runnable)
//	NMIGR    migrations to another CPU
//	TOPiPID, TOPiNS  (i = 1..3) the tasks (thread ids) that ran longest while
//	         this entity waited, and for how long; 0 when fewer interfered
//	TEND     when the row's interval ended: CLOCK_MONOTONIC in ns (the clock
//	         of bpf_ktime_get_ns and of internal/unix.Now)
//
// # Slice boundaries and precision
//
// The row of slice k covers the time from the end of node 0's transmission
// microphase of slice k−1 to the end of that of slice k: that is when Sample
// runs (on the agent's thread, after the slice's work is done). The kernel
// adds a run or wait interval when it ends (at a context switch); Sample adds
// the parts of the intervals still open at the read (the current task's run
// on each CPU, the current interference, every tracked task's current wait
// for a CPU) so that a rank computing or waiting through several slices is
// spread over them. The reads of the CPUs are not atomic
// together: an interval that ends during a read can move a few µs between
// neighbouring slices, and a negative difference is recorded as 0. WAKELAT
// is credited when the woken task runs, to that slice. A slice
// that the master skipped is folded into the next recorded one.
//
// # Files (in the job's MDS directory)
//
//	emds-kernel-rank<R>.csv, emds-kernel-master.csv, emds-kernel-runtime.csv
//	    slice,<the metrics above>; integers, read back with emds.ReadCSV
//	emds-kernel-interferers.csv
//	    entity,pid,comm,ns: over the whole run, every task that ran while the
//	    entity waited (entity is rank<R>, master or runtime)
//	emds-kernel-ids.csv
//	    id,entity,kind: the registered ids (kind process: a rank's or
//	    bcsrun's pid; thread: the master's thread id), to tell the runtime's
//	    own tasks among the interferers
//	emds-kernel-cost.csv
//	    what,count,ns: Sample's calls and their total time (sample: elapsed,
//	    sample_cpu: the thread's CPU time; they differ when the thread was
//	    preempted during a Sample), and each eBPF
//	    program's runs and time in the kernel (counted by the kernel only
//	    while sysctl kernel.bpf_stats_enabled=1; 0 otherwise)
//	emds-kernel-wakehist.csv
//	    entity,lo_ns,hi_ns,count: the whole run's wake-up latencies in
//	    buckets of half a power of two ([lo, hi) ns)
//
// # When it cannot run
//
// Open returns an *UnavailableError (matching ErrUnavailable) that says what
// is missing: Linux 5.19 or later (bpf_map_lookup_percpu_elem), the kernel's
// BTF (CONFIG_DEBUG_INFO_BTF=y, at Config.BTFPath), or the capabilities
// (CAP_BPF and CAP_PERFMON, or CAP_SYS_ADMIN). The launcher says it once and
// runs the job without the monitor. Config.BTFPath is the BTF used for CO-RE
// relocations; the tracepoints themselves are always found in the running
// kernel's BTF.
//
// # Bounds
//
// The interference map holds InterferersPerEntity (entity, task) pairs per
// entity, least recently updated first out (an LRU map: a pair evicted and
// seen again counts from 0, so the whole run's totals of
// emds-kernel-interferers.csv can miss what it had before; the rows' TOP
// columns do not; the slice map holds 16 pairs per entity, what does not fit
// is counted by Dropped); the task state map holds TasksPerEntity threads per
// entity, and a thread that does not fit is not followed. Windows are
// preallocated like every EMDS window, for the master, the runtime and the
// ranks Config.Recorded selects (bcsrun: mds_ranks), at most MaxWindowBytes
// in all; Sample allocates only for a task seen for the first time.
//
// # Cost
//
// Sample makes two bpf(2) calls (the per-entity counters, the CPUs' state)
// and, when some entity's PREEMPT moved since the previous Sample, a batch
// lookup-and-delete of the slice's interference map, which holds only the
// pairs that interfered since (the whole run's map is read at Dump; an
// increment the kernel makes between the lookup and the delete of its pair
// is lost); open waits come from per-entity counters kept by
// the kernel (tasks waiting, sum of their start times), not from a walk of
// the task map. emds-kernel-cost.csv records what Sample and the programs
// took in the run.
//
// # Building
//
// sched_bpfel.o and sched_bpfel.go are generated by `go generate
// ./emds/kernel` (bpf2go, pinned as a tool in go.mod, with clang and
// libbpf's headers) and committed: building and testing need only Go.
//
// A Monitor is not safe for concurrent use, except AddRank, which may be
// called from any goroutine while Sample runs.
package kernel
