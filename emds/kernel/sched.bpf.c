//go:build ignore

// SPDX-License-Identifier: (MIT OR GPL-2.0)
// The kernel side of the EMDS kernel monitor (package kernel documents it).
// Built by `go generate ./emds/kernel` (bpf2go, clang); the object is
// committed, so building bcsmpi needs no clang.
//
// Entities are the tracked tasks' groups: ranks 0..R-1, then the master's
// strobe thread, then every other thread of bcsrun (the runtime). A task
// belongs to the master when its thread id is the master's, else to the
// entity its thread-group id is registered as, else to none.
//
// The programs only log: each event that concerns a tracked task (or a
// switch on a CPU where a tracked task waits, marked there) becomes a
// 32-byte record in its CPU's log, a memory-mapped array that the reader
// drains; the reader keeps the tasks' states and credits the slices
// (kernel.go). Per event the kernel reads the tasks' thread-group ids, one
// entry of a small id table each, its CPU's state (one cache line, written
// by that CPU only, but for a migration's mark) and, for a logged event,
// the clock, and writes one record.

typedef unsigned char __u8;
typedef unsigned short __u16;
typedef unsigned int __u32;
typedef int __s32;
typedef unsigned long long __u64;
typedef __u16 u16;
typedef __u32 u32;
typedef __u64 u64;
typedef _Bool bool;

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#define TASK_COMM_LEN 16
#define IDS 4096  // the id table's size (kernel.go's idSlots): a power of two
#define PROBE 4   // the slots an id may sit in: (id + 0 .. PROBE-1) % IDS

// The fields read from the kernel's task_struct, relocated through its BTF
// (CO-RE): the layout below is not the kernel's, only the names and types.
struct thread_info {
	unsigned int cpu;
} __attribute__((preserve_access_index));

struct task_struct {
	struct thread_info thread_info; // holds cpu on some kernels (x86 since 6.x)
	unsigned int __state;
	int on_rq;
	int pid;
	int tgid;
	unsigned int cpu;
	char comm[TASK_COMM_LEN];
} __attribute__((preserve_access_index));

// Shared with user space (.bss, memory-mapped): written by the reader's
// side, read by the programs.
struct shared {
	u32 master_tid; // the master's strobe thread, 0: none yet
	u32 pad;
};

struct shared shared;

// Record kinds (kernel.go's ev*).
#define EV_SWITCH 1   // a = prev tid, b = next tid, ea/eb = their entities + 1
#define EV_WAKING 2   // a = tid, b = its CPU then, ea = entity + 1
#define EV_WAKE_NEW 3 // as EV_WAKING, for a new task (sched_wakeup_new)
#define EV_MIGRATE 4  // a = tid, b = destination CPU, ea = entity + 1, eb = source CPU
#define EV_COMM 5     // a = tid, ts..eb: its name (before the switch that names it as prev)

// Record flags.
#define FL_PREEMPTED 1 // EV_SWITCH: prev was still runnable
#define FL_LATENCY 2   // EV_WAKING: starts the wake-up latency clock
#define FL_WAKING 4    // EV_SWITCH: prev went to sleep but is being woken already

#define TASK_WAKING 0x0200 // include/linux/sched.h

// One record. seq is written last: the record's index in its CPU's log + 1
// (mod 2^32), so that the reader can tell a record being written or
// overwritten.
struct ev {
	u32 seq;
	u16 kind;
	u16 flags;
	u32 a;
	u32 b;
	u64 ts; // bpf_ktime_get_ns (CLOCK_MONOTONIC); EV_COMM: ts, ea and eb hold the name
	u32 ea;
	u32 eb;
};

// Per CPU, padded to a cache line: written by its CPU (and, for the
// waiting mark, by a CPU that wakes or moves a task onto it).
struct cpu_log {
	u64 head;     // records written (the next record's index)
	u32 curr;     // the task running now (every switch sets it)
	u32 wait_tid; // a tracked task waiting on this CPU, 0: none
	u32 wait_ent; // its entity + 1
	u32 pad0;
	u64 pad[5];
};

// Set by the loader before loading.
volatile const u32 runtime_tgid = 0; // bcsrun's pid
volatile const u32 nranks = 0;       // entities below this are ranks
volatile const u32 nlog = 4096;      // records per CPU's log: a power of two

struct id_slot {
	u32 id;  // thread-group id, 0: free
	u32 ent; // entity + 1
};

// The registered thread-group ids (ranks' processes, bcsrun), open
// addressing over PROBE slots. Written by user space before the id's tasks
// matter; an array lookup is a single load.
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, IDS);
	__type(key, u32);
	__type(value, struct id_slot);
} ids SEC(".maps");

// Per CPU. Memory-mapped by the reader.
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1); // sized by the loader: ncpu
	__type(key, u32);
	__type(value, struct cpu_log);
} cpus SEC(".maps");

// The names a CPU logged last, NAMED per CPU by thread id: a name is
// logged again only when the task's slot held another task or name.
#define NAMED 16
struct named {
	u32 tid;
	u32 pad;
	u64 comm8; // the name's first 8 bytes
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1); // sized by the loader: ncpu × NAMED
	__type(key, u32);
	__type(value, struct named);
} names SEC(".maps");

// The logs, CPU-major (nlog records each). Memory-mapped by the reader.
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1); // sized by the loader: ncpu × nlog
	__type(key, u32);
	__type(value, struct ev);
} evlog SEC(".maps");

static __always_inline struct cpu_log *cpu_of(u32 cpu)
{
	return bpf_map_lookup_elem(&cpus, &cpu);
}

// ent_of is the entity + 1 of the task with thread id tid and thread-group
// id tgid (mt: the master's thread id), 0: not tracked. The idle task (0)
// costs no lookup.
static __always_inline u32 ent_of(u32 tid, u32 tgid, u32 mt)
{
	if (mt && tid == mt)
		return nranks + 1;
	u32 id = tgid;
	if (!id)
		return 0;
#pragma unroll
	for (int i = 0; i < PROBE; i++) {
		u32 k = (id + i) & (IDS - 1);
		struct id_slot *s = bpf_map_lookup_elem(&ids, &k);
		if (!s || s->id == 0)
			return 0;
		if (s->id == id)
			return s->ent;
	}
	return 0;
}

// put reserves the next record of cpu's log (c, the running CPU's: only
// that CPU writes its log); commit publishes it. put runs where interrupts
// are off (sched_switch, sched_migrate_task, sched_wakeup_new run under a
// run-queue or pi lock), so that no other program can run on this CPU
// between its load and store of head: a plain increment, not a locked one
// (a full barrier) on the scheduler's path. sched_waking may run with
// interrupts on (a task waking itself) and an interrupt's wake-up may
// migrate a task meanwhile: it reserves with put_atomic.
static __always_inline struct ev *put(struct cpu_log *c, u32 cpu, u32 *seq)
{
	u64 i = c->head;
	c->head = i + 1;
	u32 k = cpu * nlog + ((u32)i & (nlog - 1));
	*seq = (u32)i + 1;
	return bpf_map_lookup_elem(&evlog, &k);
}

static __always_inline struct ev *put_atomic(struct cpu_log *c, u32 cpu, u32 *seq)
{
	u64 i = __sync_fetch_and_add(&c->head, 1);
	u32 k = cpu * nlog + ((u32)i & (nlog - 1));
	*seq = (u32)i + 1;
	return bpf_map_lookup_elem(&evlog, &k);
}

static __always_inline void commit(struct ev *e, u32 seq)
{
	asm volatile("" ::: "memory"); // the fields before seq (x86 keeps stores in order)
	e->seq = seq;
}

// mark_waiting records that a task of entity e (+ 1) waits on c's CPU, for
// the filter: switches there are logged until it runs. One task is marked
// per CPU: a rank displaces the master or the runtime, never the reverse.
// A CPU marks itself (a preemption, a wake-up onto the waker's CPU);
// a wake-up onto another CPU does not mark it: that CPU writes its state
// line at every switch, and a write from another CPU would move the line
// there and back (three transfers per wake-up). The switch that ends such
// a wait is logged anyway (next is tracked) and names prev; only switches
// between untracked tasks during it go unlogged (their time is credited to
// the last of them). The reader marks from the records as before.
static __always_inline void mark_waiting(struct cpu_log *c, u32 e, u32 tid)
{
	if (c->wait_tid == 0 || (e - 1 < nranks && c->wait_ent - 1 >= nranks)) {
		c->wait_ent = e;
		c->wait_tid = tid;
	}
}

SEC("tp_btf/sched_switch")
int BPF_PROG(on_switch, bool preempt, struct task_struct *prev, struct task_struct *next, unsigned int prev_state)
{
	u32 cpu = bpf_get_smp_processor_id();
	struct cpu_log *c = cpu_of(cpu);
	if (!c)
		return 0;
	u32 pt = prev->pid, nt = next->pid;
	c->curr = nt;
	u32 mt = shared.master_tid;
	u32 pe = ent_of(pt, prev->tgid, mt), ne = ent_of(nt, next->tgid, mt);
	u32 w = c->wait_tid, we = c->wait_ent;
	if (!pe && !ne && !w)
		return 0; // nothing tracked runs, leaves or waits here
	u64 now = bpf_ktime_get_ns();
	u32 seq;
	struct ev *e;
	// prev ran while a task of another entity waited, or leaves for a
	// tracked task that may have waited for it (woken onto this CPU from
	// another, unmarked): the reader names it.
	if (pt && ((w && we != pe) || (!pe && ne))) {
		u32 nk = cpu * NAMED + (pt & (NAMED - 1));
		struct named *n = bpf_map_lookup_elem(&names, &nk);
		u64 c8 = *(u64 *)prev->comm;
		e = 0;
		if (n && (n->tid != pt || n->comm8 != c8)) {
			n->tid = pt;
			n->comm8 = c8;
			e = put(c, cpu, &seq);
		}
		if (e) {
			e->kind = EV_COMM;
			e->flags = 0;
			e->a = pt;
			e->b = 0;
			__builtin_memcpy(&e->ts, prev->comm, TASK_COMM_LEN);
			commit(e, seq);
		}
	}
	if (w == pt)
		c->wait_tid = 0;
	u16 fl = 0;
	if (pe && prev_state == 0) {
		fl = FL_PREEMPTED;
		mark_waiting(c, pe, pt);
	} else if (pe && prev->__state == TASK_WAKING) {
		// Woken while still on its way out (sched_waking saw it running):
		// it waits from now, here until the wake-up moves it.
		fl = FL_WAKING;
		mark_waiting(c, pe, pt);
	}
	if (c->wait_tid == nt)
		c->wait_tid = 0;
	e = put(c, cpu, &seq);
	if (!e)
		return 0;
	e->kind = EV_SWITCH;
	e->flags = fl;
	e->a = pt;
	e->b = nt;
	e->ts = now;
	e->ea = pe;
	e->eb = ne;
	commit(e, seq);
	return 0;
}

// task_cpu: the CPU whose run queue holds t (or held it last).
static __always_inline u32 task_cpu(struct task_struct *t)
{
	if (bpf_core_field_exists(t->cpu))
		return BPF_CORE_READ(t, cpu);
	return BPF_CORE_READ(t, thread_info.cpu);
}

// woken logs a wake-up of p, a tracked task, on the waker's CPU, and marks
// p's CPU when that is the waker's (mark_waiting) unless p is still queued
// there (running, or preempted and marked then): p's own on_rq, which the
// wake-up reads next anyway. sched_migrate_task follows when the wake-up
// moves p.
static __always_inline int woken(struct task_struct *p, u16 kind)
{
	u32 tid = p->pid;
	u32 pe = ent_of(tid, p->tgid, shared.master_tid);
	if (!pe)
		return 0;
	u32 pc = task_cpu(p);
	u16 fl = 0;
	// A rank's latency counts only when the runtime (bcsrun) wakes it: the
	// agent's completions, not the Go runtime's own thread hand-offs.
	if (kind == EV_WAKING && (pe - 1 >= nranks || (bpf_get_current_pid_tgid() >> 32) == runtime_tgid))
		fl = FL_LATENCY;
	u64 now = bpf_ktime_get_ns();
	u32 cpu = bpf_get_smp_processor_id();
	struct cpu_log *c = cpu_of(cpu);
	if (!c)
		return 0;
	if (pc == cpu && !p->on_rq)
		mark_waiting(c, pe, tid);
	u32 seq;
	struct ev *e = kind == EV_WAKING ? put_atomic(c, cpu, &seq) : put(c, cpu, &seq);
	if (!e)
		return 0;
	e->kind = kind;
	e->flags = fl;
	e->a = tid;
	e->b = pc;
	e->ts = now;
	e->ea = pe;
	e->eb = 0;
	commit(e, seq);
	return 0;
}

// sched_waking runs in the waker's context, before the wake-up chooses a
// CPU: the latency and the wait start here (sched_wakeup is not needed).
SEC("tp_btf/sched_waking")
int BPF_PROG(on_waking, struct task_struct *p)
{
	return woken(p, EV_WAKING);
}

// A new task is woken without sched_waking.
SEC("tp_btf/sched_wakeup_new")
int BPF_PROG(on_wakeup_new, struct task_struct *p)
{
	return woken(p, EV_WAKE_NEW);
}

SEC("tp_btf/sched_migrate_task")
int BPF_PROG(on_migrate, struct task_struct *p, int dest_cpu)
{
	u32 tid = p->pid;
	u32 pe = ent_of(tid, p->tgid, shared.master_tid);
	if (!pe)
		return 0;
	u32 from = task_cpu(p);
	u64 now = bpf_ktime_get_ns();
	struct cpu_log *f = cpu_of(from);
	if (f && f->wait_tid == tid) {
		u32 we = f->wait_ent;
		f->wait_tid = 0;
		struct cpu_log *to = cpu_of(dest_cpu);
		if (to && to->wait_tid == 0) {
			to->wait_ent = we;
			to->wait_tid = tid;
		}
	}
	u32 cpu = bpf_get_smp_processor_id();
	struct cpu_log *c = cpu_of(cpu);
	if (!c)
		return 0;
	u32 seq;
	struct ev *e = put(c, cpu, &seq);
	if (!e)
		return 0;
	e->kind = EV_MIGRATE;
	e->flags = 0;
	e->a = tid;
	e->b = dest_cpu;
	e->ts = now;
	e->ea = pe;
	e->eb = from;
	commit(e, seq);
	return 0;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
