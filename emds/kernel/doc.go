// Package kernel is the EMDS kernel monitor (BCS_MDS=…,kernel): what the
// operating system's scheduler did to each rank, to the master's strobe
// thread and to the rest of the runtime, slice by slice. eBPF programs
// (sched.bpf.c, loaded through cilium/ebpf, CO-RE against the kernel's BTF)
// run on the scheduler's tracepoints sched_switch, sched_waking,
// sched_wakeup_new and sched_migrate_task (as tp_btf programs) and only
// log: each event that concerns a tracked task, and each switch on a CPU
// where a tracked task waits after a preemption or a wake-up by that CPU,
// becomes a 32-byte record in its CPU's log (a memory-mapped array). A reader goroutine on its own thread takes the
// records every few ms (DrainEvery), in time order over the CPUs, keeps
// the tasks' and CPUs' states, credits the slices and records them into
// EMDS windows. The slice's path does no reading: after node 0's
// transmission microphase the agent calls Publish, which stores the time
// and the slice's end in the reader's memory (a clock read and three
// stores, no system call but one, once, to raise a reader that lags; see
// Cost).
//
// # Entities
//
// Entity e < R is rank e: every thread of the rank's process (registered by
// pid with AddRank when the launcher starts it). Entity R, "master", is the
// master's strobe thread (registered by SetMasterThread from that thread;
// in the embedded single-node job the agent runs on it too). Entity R+1,
// "runtime", is every other thread of bcsrun (with --nodes > 1 the agents and
// the master run there, on threads Go chooses). A task is the master's when
// its thread id is the master's, else its process's (thread-group id), if
// that is registered.
//
// Across hosts (a job of one bcsd per host, internal/launch) each host's
// bcsd opens its own Monitor (Config.Across, Node k) for the ranks it
// starts: it registers only those, records a row file only for them
// (Config.Recorded), is itself entity "runtime-node<k>", and its agent
// publishes the slices as node 0's does on one machine, so the rows follow
// that host's own slice ends. The master's thread is not registered (it is
// not locked to a thread there); node 0's master row is written, empty, as
// with --nodes > 1 on one machine, and no other host writes one
// (Config.NoMaster). The files a monitor has of its own carry "-node<k>"
// (emds-kernel-ids-node<k>.csv, …), so that bcsrun gathers every host's
// into one directory; Summarize reads each host's ids, histograms and
// interferers together (an interferer is named by its own host's ids: the
// process ids of different hosts are not comparable). A host whose monitor
// could not load sends no kernel file; the manifest's kernel_hosts says
// why. A host that sent some of its files but not all (its data did not
// all come back) is summarized from what is there, and Summarize names
// each missing file with its node and host rather than failing for all.
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
// the row; TEND is the second). The reader numbers the rows by q, the count
// of Publish calls, keeps the last ring of them (RingMin to RingMax, as
// many as fit KernelBytesMax) and labels row q with the slice number
// Publish was given, so a slice that the master skipped is folded into the
// next recorded one.
//
// The reader takes the records older than a horizon (2 ms behind the
// clock: a record is visible some ns after its time stamp, and those of
// all CPUs are taken in time order up to the same instant) and credits a
// run, a wait or an interference when it ends, split at the slices'
// bounds over the rows it overlaps; when it records a row (one whose end
// is before the horizon) it adds the parts of the intervals still open
// (each CPU's current run and interference, each tracked task's wait for a
// CPU), and from then on leaves that row alone. A rank computing or
// waiting through many slices is thus spread over them. A record that
// becomes visible after the horizon passed its time (a vCPU stalled
// between the two) is taken as if at the last record's time. A wait
// begins at sched_waking (before the wake-up chooses a CPU; a
// sched_migrate_task record follows when it moves the task), at a
// preemption, or, for a task woken while still on its way out of its CPU
// (sched_waking saw it running), at that switch; WAKELAT is credited when
// the woken task runs, to that row. A task woken by another CPU than its
// own is not marked on its own CPU by the programs (Cost says why): while
// it waits there, switches between untracked tasks are not logged, so the
// interference is credited, when the switch that ends the wait (logged, and
// naming prev) comes, to the last of those tasks, and rows recorded before
// it count the open interference only if the CPU's last logged switch
// brought in a task other than the idle one. A
// task registered while it ran (a rank's process switched in before
// AddRank) counts as running from its registration. Rows the reader could
// not record before their place was reused (the reader starved of CPU for
// ring − 2 slices; Publish drains itself when the reader is half the ring
// behind), and records the programs overwrote before the reader took them
// (LogMin to LogMax per CPU), are lost and counted in
// emds-kernel-cost.csv; after a lost record the reader forgets what it knew
// of that CPU until its next switch.
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
//	    thread); lost: the rows lost (count); records, lost_records: the
//	    programs' records taken and lost (counts); reader_raised: the
//	    times the reader, falling behind, raised its priority from
//	    ReaderNice to 0 (0 or 1; see Cost); start_btf: whether what the
//	    programs need of the kernel's BTF came from the CO-RE cache (1) or
//	    the BTF was decoded (0), and that step's wall time; start_load: the
//	    programs' loading (both run beside the launcher's start-up when it
//	    called Prefetch); start_wait: Open's wait for them; start_open:
//	    Open's whole time, that wait included; then each eBPF
//	    program's runs and time in the kernel (sched_switch, sched_waking,
//	    sched_wakeup_new, sched_migrate_task; counted by the kernel only
//	    while sysctl kernel.bpf_stats_enabled=1; 0 otherwise)
//	emds-kernel-wakehist.csv
//	    entity,lo_ns,hi_ns,count: the whole run's wake-up latencies in
//	    buckets of half a power of two ([lo, hi) ns)
//
// Across hosts (Config.Across) every file but the ranks' and the master's
// carries its host's "-node<k>" (emds-kernel-runtime-node<k>.csv,
// emds-kernel-interferers-node<k>.csv, …), and the runtime entity in them
// is runtime-node<k>.
//
// # When it cannot run
//
// Open returns an *UnavailableError (matching ErrUnavailable) that says what
// is missing: Linux 5.14 or later (task_struct.__state, BPF atomics), the
// kernel's BTF (CONFIG_DEBUG_INFO_BTF=y, at Config.BTFPath), or the
// capabilities (CAP_BPF and CAP_PERFMON, or CAP_SYS_ADMIN). The launcher says it once and
// runs the job without the monitor. Config.BTFPath is the BTF used for CO-RE
// relocations; the tracepoints themselves are always found in the running
// kernel's BTF. A verifier's refusal of the programs is reported as such
// (an EACCES, but not for want of privileges).
//
// # The CO-RE cache
//
// What loading the programs takes from the running kernel's BTF is small:
// for each CO-RE relocation (the task_struct fields sched.bpf.c reads,
// 26 instructions over the four programs) the instruction as the
// relocation leaves it, and the type ids of the four attach targets
// (btf_trace_<tracepoint>). Getting them means decoding the kernel's 5 MB
// of BTF, most of the monitor's fixed cost per job (Cost). The cache keeps
// them from one job to the next, in a file per kernel build and eBPF
// object:
//
//	location  Config.CacheDir (bcsrun: the mds_kernel_cache key,
//	          BCS_MDS_KERNEL_CACHE): "" for DefaultCacheDir(),
//	          $XDG_CACHE_HOME/bcsmpi, else $HOME/.cache/bcsmpi; "off"
//	          (CacheOff) for none. One file, emds-kernel-core-<16 hex
//	          digits>.json, per (kernel, object): hosts of different
//	          kernels sharing a home directory keep theirs apart
//	key       the running kernel's release, its GNU build id (from
//	          /sys/kernel/notes: a hash of the linked image, its .BTF
//	          included) and its BTF's size (a kernel without a build id: a
//	          CRC-32C of the whole BTF instead), and the SHA-256 of the
//	          embedded eBPF object; both are in the file and checked
//	format    a first line "bcsmpi emds/kernel CO-RE cache v1 crc32c=<hex>"
//	          (the checksum of the rest), then the facts in JSON: per
//	          program its relocated instructions by index (opcode,
//	          registers, offset, constant; poisoned where the kernel lacks
//	          the field, as cilium/ebpf does), and the attach ids
//	written   by the first job that decodes the BTF, once its programs
//	          loaded (the facts computed with cilium/ebpf's own
//	          btf.CORERelocate and COREFixup.Apply against the decoded BTF),
//	          as a temporary file renamed over the cache file (mode 0600;
//	          the directory is made 0700): concurrent first jobs each
//	          write a whole file, and the last rename wins
//	used      when the file is this user's regular file in a directory of
//	          this user's that group and others cannot write, whole (its
//	          checksum), for this kernel and object, and names exactly the
//	          relocated instructions of the object and attach ids within the
//	          BTF's range; otherwise, and when the kernel refuses the
//	          programs loaded from it (the verifier, not missing
//	          privileges), the BTF is decoded as without a cache and the
//	          file rewritten
//	clear it  rm ~/.cache/bcsmpi/emds-kernel-core-*.json (or the
//	          directory's); the next job rebuilds its file
//	without   (mds_kernel_cache off, no HOME nor XDG_CACHE_HOME, a
//	          directory that cannot be made or written, or a Config.BTFPath
//	          other than DefaultBTFPath: only the running kernel's BTF is
//	          cached) every job decodes the BTF as before; nothing is
//	          written, nothing is said, the monitor is the same
//
// A directory is made only inside one of this user's or root's (root with
// another user's HOME leaves nothing there). Loaded from the cache, the programs
// are the same instructions as those relocated against the decoded BTF
// (TestCacheHitLoadsTheSamePrograms compares the kernel's tags of both).
//
// The attach ids reach cilium/ebpf through a btf.Cache whose kernel BTF
// is made for the purpose (attachCache): the four typedefs at their ids,
// every other id a placeholder; v0.22 offers no way to give a tp_btf
// program its target by id, nor a Cache its kernel's BTF, so the spec is
// set in the Cache's unexported field after checking its name and type by
// reflection (a cilium/ebpf without it: the BTF is decoded;
// TestAttachCacheLooksUpTheIDs fails, so that an upgrade says so).
// Rejected: a minimized kernel BTF for ProgramOptions.KernelTypes alone
// (as BTFHub's btfgen makes): the attach targets' lookup would still
// decode all of vmlinux (its index of 126,000 types and names, then
// btf_trace_sched_switch's typedef, which reaches task_struct and most of
// the kernel: 13–16 and 6–9 ms on the quiet VM, most of the decoding), and
// cilium/ebpf does not export the relocations' accessors that pruning
// would need; raw_tp programs (attached by name, no BTF): their reads of
// task_struct would go through bpf_probe_read_kernel, a per-event cost;
// keeping the programs loaded (pinned) between jobs: kernel objects left
// behind, and per-job constants (runtime_tgid, nranks) that the verifier
// folds.
//
// # Bounds
//
// The reader keeps InterferersPerEntity (entity, task) pairs per entity
// for the whole run's totals of emds-kernel-interferers.csv, and 32 pairs
// per row for its TOP columns; a pair that does not fit is counted by
// Dropped (the launcher reports it). It follows TasksPerEntity threads per
// entity; a thread that does not fit is not followed. A task is named by
// the latest name its CPU logged for it: a switch where it interferes logs
// its name when the CPU's small cache of names (16 per CPU, by thread id)
// holds another task or name there. The programs' id table holds 4096
// slots, an id in one of 4 after its own (a registration that finds none
// fails with an error). The logs take CPUs × LogMax × 32 bytes of kernel
// memory (fewer records per CPU where that is over KernelBytesMax); the
// reader's rows ring × (entities × 56 + 544) bytes, its threads
// TasksPerEntity per entity, and the whole run's interference pairs as
// they are seen (some 60 bytes each, none sized in advance). Windows are
// preallocated like every EMDS window, for the master, the runtime and the
// ranks Config.Recorded selects (bcsrun: mds_ranks), at most
// MaxWindowBytes in all; Publish does not allocate, and the reader only
// for a task, a name or an interference pair it has not seen.
//
// # Cost
//
// At the job's start, Open. Without the CO-RE cache, decoding the
// kernel's BTF (5 MB; cilium/ebpf decodes a type and every type it reaches
// at its first lookup, and the tracepoints' types reach task_struct and
// most of the kernel's) is most of it. It is decoded once, for the CO-RE
// relocations and the attach targets both (a shared btf.Cache), and a
// launcher may start it early, with the programs' loading, with Prefetch
// (bcsrun's launch.Run does, before its own start-up checks; each bcsd
// across hosts too); Open then maps, registers and attaches.
// BenchmarkOpen, on the loaded 2-vCPU development VM: 42–48 ms of CPU for
// a whole Open, 70–84 ms when the BTF was decoded twice (as it was), 6 ms
// left once a Prefetch is done (16 ms when it only decoded the BTF, 39 ms
// when it did not look the types up either). On the §3.3 barrier job the
// start-up was most of the monitor's overhead (bench/kernel-ab.sh prints
// this fixed part of each variant: the job with -iters 1, and this tree's
// start_* rows).
//
// BenchmarkPhases times each part of that fixed cost on its own, with the
// CO-RE cache and without it side by side in each iteration. Before the
// cache, on the loaded 2-vCPU VM (load 15–18, 2026-11-28; rough, for the
// shares only): decoding the BTF 53–94 ms of wall time (its CPU profile:
// cilium/ebpf's index of the 5 MB's types and names, newDecoder, about
// 60%, inflating task_struct and what it reaches the rest), loading and
// verifying the programs 21–28 ms, the rest of Open 9–18 ms (attaching 0.2
// ms of it; the windows' and the reader's memory most of its CPU), Dump
// 10–26 ms, Close 1 ms (detaching 0.2–0.6 ms). With the cache (the same
// VM, load 8–9, 2026-11-28, four runs of -benchtime 10x in one go test
// -bench): what the programs need of the BTF 2.1–3.0 ms against 35–70 ms
// decoded (0.04–0.06×: reading the file, the object's parse, the attach
// targets' small BTF), the loading 5.1–10.4 ms against 7.4–14.1 (0.69–0.84×:
// no relocation left to do; the rest is the kernel's verifying and JIT of
// the four programs, about 1,750 instructions, and creating the maps),
// both together 0.16–0.20× of what they were. BenchmarkColdStart does the
// same in new processes, as a job does (a fresh heap, cilium/ebpf's feature
// probes once more), side by side: on the same VM at load 9–11, six runs
// of -benchtime 10x, the BTF from the cache 1.8–12 ms against 29–104 ms
// decoded (0.03–0.12×), the loading 4.0–25 ms against 7.4–30 ms
// (0.41–0.82×), both together 0.10–0.28×.
// In bcsrun's launch.Run these mostly end before Open needs them
// (emds-kernel-cost.csv's start_wait: 0 in three of five -iters 1 jobs at
// load 9, 1.3 and 9.4 ms in the others); what is left of the fixed part on
// the job's path is the rest of Open (1.3 ms of CPU in a loop of Opens:
// the reader's and the windows' memory, the maps' mappings, attaching),
// Dump (writing the files; the final drain and the reader's stop 0.2 ms)
// and Close. Keeping
// the loaded programs from one job to the next (the gang daemon) would
// take the loading off too.
//
// The reader runs on its own thread, named ReaderThread (so that
// emds-kernel-interferers.csv names it where it ran while an entity
// waited), at ReaderNice, the lowest priority: it runs in the time the
// ranks leave (a woken rank preempts it, and it does not preempt a
// computing one); on the loaded VM it ran 20–35 ms of a barrier job while
// a rank waited at nice 0, 4–16 ms at nice 10 or 19. Under a load that
// leaves it no idle time the programs would overwrite records before it
// reads them, and a drain preempted while it holds the reader's lock keeps
// Publish from draining: after a drain that lost records or found a CPU's
// log over an eighth full, or once Publish finds it an eighth of the ring
// behind (one system call, once), it runs at nice 0, as it did before, for
// the rest of the run (with CAP_SYS_NICE; reader_raised says so). At load 30
// on the 2-vCPU VM it lost records and rows at either priority.
// Where it gets no time for half the ring, Publish drains (on the agent's
// thread).
//
// On the slice's path, Publish: a clock read and three stores (about
// 0.1 µs). In the kernel, per scheduler event: an untracked switch reads
// the two tasks' thread-group ids, one slot of the id table each (none for
// the idle task), and its CPU's state (one cache line) and writes the
// current task there; a logged event adds a clock read and one 32-byte
// record (a switch where another task interferes, or an untracked task
// leaves for a tracked one, may add its name). A record is reserved by a
// plain increment of its CPU's head where interrupts are off
// (sched_switch, sched_migrate_task, sched_wakeup_new), by a locked one
// (a full barrier) only in sched_waking, which an interrupt's wake-up may
// interrupt. A wake-up marks the woken task's CPU only when that is the
// waker's own (deciding by the task's own on_rq): a CPU's state line is
// written by that CPU at every switch, and a mark from another CPU cost
// three transfers of the line between the CPUs per wake-up (the mark's
// read and write, the owner's next switch). sched_wakeup is not traced:
// sched_waking starts both the wait and the latency.
//
// BenchmarkPrograms (cost_test.go) runs these programs and the previous
// ones (testdata/sched_base_bpfel.o, sched.bpf.c at 518bd6c) side by side
// on a futex ping-pong between two threads on two CPUs: on the loaded
// 2-vCPU development VM (load 15-20) sched_switch took 126-148 ns per
// event against 169-192 ns, sched_waking 118-156 ns against 160-209 ns
// (medians of 30-40 phases each, six runs); the wall time per round trip
// was swamped by the host's load there. Earlier measurements, of the previous
// programs, with
// kernel.bpf_stats_enabled=1 on the 2-vCPU development VM, the §3.3
// barrier job (bench/mds.sh's), alternating with the first design, which
// aggregated per slice in the kernel: sched_switch 120–150 ns per event
// against 270–450 ns, sched_waking 100–190 ns against 110–180 ns plus
// sched_wakeup's 105–180 ns, on a host loaded by other jobs (load 8–80;
// the first design's figures on the quiet host were 460–480, 240–270 and
// 240–270 ns). The reader then does more: 100–180 ns of CPU per record
// (emds-kernel-cost.csv's drain_cpu over records), against the first
// design's 11–14 µs per 8 ms drain. Publish makes no system call (but the
// one raise) and the reader none per record; emds-kernel-cost.csv records what Publish, the
// reader and the programs took in the run. The reader's merge scans only
// the CPUs with records left, not every possible CPU: BenchmarkReader's
// host of 64 CPUs with 2 busy took 300-320 ns per record, against
// 2.2-2.8 µs when it scanned all 64 (190-230 against 270-470 ns with 2
// CPUs; the loaded development VM).
//
// # Building
//
// sched_bpfel.o and sched_bpfel.go are generated by `go generate
// ./emds/kernel` (bpf2go, pinned as a tool in go.mod, with clang and
// libbpf's headers) and committed: building and testing need only Go. A
// record is complete when its sequence number, stored last, is its
// index + 1: the reader relies on the CPU making stores visible in order,
// as x86-64 does.
//
// Publish is called from one goroutine (node 0's agent); AddRank and
// SetMasterThread may be called from any goroutine meanwhile; Dump and
// Close come after the last Publish.
package kernel
