// Package kernel is the EMDS kernel monitor (BCS_MDS=…,kernel): what the
// operating system's scheduler did to each rank, to the master's strobe
// thread and to the rest of the runtime, slice by slice. eBPF programs
// (sched.bpf.c, loaded through cilium/ebpf, CO-RE against the kernel's BTF)
// run on the scheduler's tracepoints sched_switch, sched_waking,
// sched_wakeup, sched_wakeup_new and sched_migrate_task (as tp_btf
// programs) and attribute what they see to slices themselves. The slice's
// path does no reading: after node 0's transmission microphase the agent
// calls Publish, which stores the time and the slice's end into the
// programs' memory-mapped slice clock (a clock read and three stores, no
// system call); a reader goroutine on its own thread takes the finished
// slices from memory-mapped maps every few ms (DrainEvery) and records them
// into EMDS windows.
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
// microphase of slice k−1 to the end of that of slice k: the two Publish
// calls (their CLOCK_MONOTONIC times, the clock of bpf_ktime_get_ns, bound
// the row; TEND is the second). The programs number the rows by q, the count
// of Publish calls, and keep the last ring of them (RingMin to RingMax, as
// many as fit KernelBytesMax) per entity and CPU; the reader labels row q
// with the slice number Publish was given, so a slice that the master
// skipped is folded into the next recorded one.
//
// A program credits a run, a wait or an interference when it ends (at a
// context switch), split at the slices' bounds over the rows it overlaps;
// when the reader takes a row it adds the parts of the intervals still open
// (the current task's run on each CPU, the current interference, every
// tracked task's current wait for a CPU, from per-entity counts of the
// waits by the row they began in), and from then on the programs leave that
// row alone. A rank computing or waiting through many slices is thus spread
// over them. What the programs and the reader do at the same instant is not
// atomic together: an interval that ends within the µs of a read, or a
// program that runs while Publish moves the clock, can move a few µs
// between neighbouring rows. WAKELAT is credited when the woken task runs,
// to that row. A row the reader could not take before the programs reused
// its place (the reader starved of CPU for ring − 2 slices; Publish takes
// the rows itself when the reader is half the ring behind) is lost and
// counted in emds-kernel-cost.csv.
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
//	    what,count,ns: publish: Publish's calls and their elapsed time (the
//	    monitor's whole cost on the slice's path); drain, drain_cpu: the
//	    reader's drains, their elapsed time and its thread's CPU time;
//	    publish_drain, publish_drain_cpu: the same for the drains Publish
//	    made because the reader was half the ring behind (on the agent's
//	    thread); lost: the rows lost (count); then each eBPF program's runs
//	    and time in the kernel (counted by the kernel only while sysctl
//	    kernel.bpf_stats_enabled=1; 0 otherwise)
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
// columns do not); each row keeps 8 interfering (entity, task) pairs per
// CPU, and a pair that does not fit is counted by Dropped; the task state
// map holds TasksPerEntity threads per entity, and a thread that does not
// fit is not followed. The per-row maps take ring × CPUs × (entities × 80 +
// 136) bytes of kernel memory, at most KernelBytesMax. Windows are
// preallocated like every EMDS window, for the master, the runtime and the
// ranks Config.Recorded selects (bcsrun: mds_ranks), at most MaxWindowBytes
// in all; Publish and the reader do not allocate.
//
// # Cost
//
// On the slice's path, Publish: a clock read and three stores (about
// 0.1 µs; the per-slice bpf(2) reads of the first design took 6–8 µs of
// the agent's CPU per slice). The reader makes no system call: the slice
// clock (.bss), the rows, the rows' interference, the open waits and the
// CPUs' state are memory-mapped arrays (BPF_F_MMAPABLE), each CPU writing
// its own part; it wakes every DrainEvery and reads only the rows it
// takes. The whole run's interference and histograms are read at Dump.
// emds-kernel-cost.csv records what Publish, the reader and the programs
// took in the run.
//
// # Building
//
// sched_bpfel.o and sched_bpfel.go are generated by `go generate
// ./emds/kernel` (bpf2go, pinned as a tool in go.mod, with clang and
// libbpf's headers) and committed: building and testing need only Go.
//
// Publish is called from one goroutine (node 0's agent); AddRank and
// SetMasterThread may be called from any goroutine meanwhile; Dump and
// Close come after the last Publish.
package kernel
