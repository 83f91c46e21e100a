//go:build ignore

// SPDX-License-Identifier: (MIT OR GPL-2.0)
// The kernel side of the EMDS kernel monitor (package kernel documents it).
// Built by `go generate ./emds/kernel` (bpf2go, clang); the object is
// committed, so building bcsmpi needs no clang.
//
// Entities are the tracked tasks' groups: ranks 0..R-1, then the master's
// strobe thread, then every other thread of bcsrun (the runtime). A task
// belongs to the entity its thread id is registered as, else the one its
// thread-group id is registered as, else to none.
//
// The programs credit what they see to slices themselves: user space
// publishes each slice's start in the slice clock (.bss), and a run, wait or
// interference is split at the slices' bounds when it ends, into per-CPU
// buckets of the last `ring` slices that the reader maps and takes.

typedef unsigned char __u8;
typedef unsigned int __u32;
typedef int __s32;
typedef unsigned long long __u64;
typedef __u32 u32;
typedef __u64 u64;
typedef _Bool bool;

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#define TASK_COMM_LEN 16
#define HIST_BUCKETS 128
#define RING_MAX 4096 // the most slices kept per entity and CPU (kernel.go's RingMax)

// The fields read from the kernel's task_struct, relocated through its BTF
// (CO-RE): the layout below is not the kernel's, only the names and types.
struct thread_info {
	unsigned int cpu;
} __attribute__((preserve_access_index));

struct task_struct {
	struct thread_info thread_info; // holds cpu on some kernels (x86 since 6.x)
	int pid;
	int tgid;
	unsigned int cpu;
	char comm[TASK_COMM_LEN];
} __attribute__((preserve_access_index));

// The slice clock, in .bss, memory-mapped by the reader: user space writes
// it, the programs only read it. Slices are numbered by q, the count of
// slice ends published (Monitor.Publish): slice q runs from bound[q % ring]
// to bound[(q+1) % ring] (CLOCK_MONOTONIC ns).
struct slice_clock {
	u64 cur;         // the slice running now (written after its bound)
	u64 done;        // slices below done are taken by the reader: never credit them
	u64 bound[RING_MAX]; // bound[q % ring]: when slice q began
};

struct slice_clock clock;

// What an entity did in one slice on one CPU, credited by that CPU only.
// F_OPEN_N and F_OPEN_SUM count the waits for a CPU that began in the slice
// and are still open (± across CPUs: a wait ends where its task runs).
#define F_ONCPU 0    // time running
#define F_RUNQ 1     // time runnable but not running (woken or preempted → running)
#define F_PREEMPT 2  // time other entities' tasks ran on a CPU where this entity waited
#define F_WAKE 3     // sum of wake-up latencies (waking → running)
#define F_NWAKE 4    // wake-ups measured
#define F_NIVCSW 5   // switched out while runnable (preempted)
#define F_NMIGR 6    // migrations to another CPU
#define F_OPEN_N 7   // waits begun in the slice, still open
#define F_OPEN_SUM 8 // the sum of their start times
#define NF 9

struct slot {
	u64 tag; // q + 1 of the slice it holds, 0: none yet
	u64 v[NF];
};

// Open waits per entity, whenever they began: the tasks waiting now
// (summed over CPUs, mod 2^64).
struct waits {
	u64 n;
};

// Per CPU: what runs there now, and which tracked task waits there.
// Padded to a cache line: each CPU writes its own.
struct cpu_state {
	u64 start;      // when curr was switched in
	u32 curr_ent;   // entity of curr + 1, 0: none
	u32 curr_pid;
	u32 wait_ent;   // entity of a task waiting on this CPU + 1, 0: none
	u32 wait_tid;
	u64 wait_since; // when it began waiting
	u64 dropped;    // interferer entries that did not fit the maps
	u64 pad[3];
};

struct task_state {
	u64 runnable_since; // woken or preempted at, 0: running or asleep
	u64 wake_ts;        // woken at (the latency clock), 0: none pending
	u64 since_q;        // the slice the open wait began in
	u32 ent;            // the task's entity (for the reader's open intervals)
	u32 pad;
};

struct intf_key {
	u32 ent;
	u32 pid;
};

struct intf_val {
	u64 ns;
	char comm[TASK_COMM_LEN];
};

// The tasks that ran on a CPU in one slice while a tracked task waited
// there, and how long: TOPS entries; a task that does not fit is counted in
// cpu_state.dropped.
#define TOPS 8
struct slice_top {
	u64 tag; // q + 1 of the slice it holds, 0: none yet
	u32 ent[TOPS];
	u32 pid[TOPS];
	u64 ns[TOPS]; // 0: free
};

// Set by the loader before loading.
volatile const u32 runtime_tgid = 0;  // bcsrun's pid
volatile const u32 nranks = 0;        // entities below this are ranks
volatile const u32 nent = 1;          // entities: ranks, master, runtime
volatile const u32 ring = 256;        // slices kept: a power of two, at most RING_MAX

// RI is slice q's index in the ring.
#define RI(q) ((u32)(q) & (ring - 1) & (RING_MAX - 1))

// Per (CPU, slice % ring, entity): CPU-major, so that each CPU writes its
// own pages. Memory-mapped by the reader.
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1);           // sized by the loader: ncpu × ring × nent
	__type(key, u32);
	__type(value, struct slot);
} slots SEC(".maps");

// Per (CPU, entity). Memory-mapped by the reader.
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1);           // sized by the loader: ncpu × nent
	__type(key, u32);
	__type(value, struct waits);
} open_waits SEC(".maps");

// Per CPU. Memory-mapped by the reader.
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1);           // sized by the loader: ncpu
	__type(key, u32);
	__type(value, struct cpu_state);
} cpus SEC(".maps");

// Per (CPU, slice % ring). Memory-mapped by the reader.
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1);           // sized by the loader: ncpu × ring
	__type(key, u32);
	__type(value, struct slice_top);
} tops SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);           // sized by the loader
	__type(key, u32);                 // thread id or thread-group id
	__type(value, u32);               // entity
} ents SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);           // sized by the loader: entities × HIST_BUCKETS
	__type(key, u32);
	__type(value, u64);
} wakehist SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, u32);                 // thread id
	__type(value, struct task_state);
} tasks SEC(".maps");

// LRU: under a flood of tasks the pairs updated least recently make room.
struct {
	__uint(type, BPF_MAP_TYPE_LRU_PERCPU_HASH);
	__uint(max_entries, 4096);
	__type(key, struct intf_key);
	__type(value, struct intf_val);
} intf SEC(".maps");

static __always_inline struct cpu_state *cpu_of(u32 cpu)
{
	return bpf_map_lookup_elem(&cpus, &cpu);
}

// slot_of is entity e's bucket of slice q on cpu, emptied first when it
// still holds an older slice; 0 when a later slice holds it (q is gone).
static __always_inline struct slot *slot_of(u32 cpu, u32 e, u64 q)
{
	if (e >= nent)
		return 0;
	u32 k = (cpu * ring + RI(q)) * nent + e;
	struct slot *s = bpf_map_lookup_elem(&slots, &k);
	if (!s)
		return 0;
	if (s->tag != q + 1) {
		if (s->tag > q + 1)
			return 0;
		__builtin_memset(s->v, 0, sizeof(s->v));
		s->tag = q + 1;
	}
	return s;
}

// add adds d to field f of e's current slice on cpu.
static __always_inline void add_now(u32 cpu, int e, u32 f, u64 d)
{
	if (e < 0 || f >= NF)
		return;
	struct slot *s = slot_of(cpu, e, clock.cur);
	if (s)
		s->v[f] += d;
}

struct split {
	u64 from, to; // what is left to credit: [from, to)
	u64 q;        // the slice tried next
	u64 lo;       // the oldest slice that may be credited
	u32 cpu, e, f;
	u32 pid;      // the interfering task (f == F_PREEMPT), 0: none
};

// add_top adds d ns of c->pid's time to the slice's interference on c->cpu.
static __always_inline void add_top(struct split *c, u64 q, u64 d)
{
	u32 k = c->cpu * ring + RI(q);
	struct slice_top *t = bpf_map_lookup_elem(&tops, &k);
	if (!t)
		return;
	if (t->tag != q + 1) {
		if (t->tag > q + 1)
			return;
		__builtin_memset(t->ns, 0, sizeof(t->ns));
		t->tag = q + 1;
	}
	int free = -1;
#pragma unroll
	for (int i = 0; i < TOPS; i++) {
		if (t->ns[i] == 0) {
			if (free < 0)
				free = i;
		} else if (t->ent[i] == c->e && t->pid[i] == c->pid) {
			t->ns[i] += d;
			return;
		}
	}
	if (free < 0) { // full: counted, not named
		struct cpu_state *cs = cpu_of(c->cpu);
		if (cs)
			cs->dropped++;
		return;
	}
	free &= TOPS - 1;
	t->ent[free] = c->e;
	t->pid[free] = c->pid;
	t->ns[free] = d;
}

// credit_part adds d to e's field f of slice q, and to the slice's
// interference when c->pid is the interfering task.
static __always_inline void credit_part(struct split *c, u64 q, u64 d)
{
	struct slot *s = slot_of(c->cpu, c->e, q);
	if (s && c->f < NF)
		s->v[c->f] += d;
	if (c->pid)
		add_top(c, q, d);
}

// split_step credits the part of [from, to) in slice q, then moves to q-1.
static long split_step(u64 i, void *ctx)
{
	struct split *c = ctx;
	if (c->to <= c->from || c->q < c->lo)
		return 1;
	u64 b = clock.bound[RI(c->q)];
	u64 start = c->from > b ? c->from : b;
	if (c->to > start)
		credit_part(c, c->q, c->to - start);
	if (b <= c->from || c->q == 0)
		return 1;
	c->to = b;
	c->q--;
	return 0;
}

// credit adds the interval [from, to) to e's field f, split over the slices
// it overlaps that the reader has not taken yet (the reader counted the
// parts in the slices it took while the interval was open).
static __always_inline void credit(u32 cpu, int e, u32 f, u64 from, u64 to, u32 pid)
{
	if (e < 0 || to <= from)
		return;
	u64 cur = clock.cur, lo = clock.done;
	if (cur >= ring - 2 && lo < cur - (ring - 2))
		lo = cur - (ring - 2);
	struct split c = { .from = from, .to = to, .q = cur, .lo = lo, .cpu = cpu, .e = e, .f = f, .pid = pid };
	if (from >= clock.bound[RI(cur)]) { // within the current slice: the common case
		credit_part(&c, cur, to - from);
		return;
	}
	bpf_loop(ring, split_step, &c, 0);
}

// task_cpu: the CPU whose run queue holds t.
static __always_inline u32 task_cpu(struct task_struct *t)
{
	if (bpf_core_field_exists(t->cpu))
		return BPF_CORE_READ(t, cpu);
	return BPF_CORE_READ(t, thread_info.cpu);
}

static __always_inline int ent_of(struct task_struct *t)
{
	u32 id = t->pid;
	u32 *e = bpf_map_lookup_elem(&ents, &id);
	if (!e) {
		id = t->tgid;
		e = bpf_map_lookup_elem(&ents, &id);
	}
	return e ? (int)*e : -1;
}

// bucket: 2 per power of two of the latency in ns (the bit below the top one).
static __always_inline u32 bucket(u64 v)
{
	u32 b = 0;
	if (v < 2)
		return 0;
	u64 x = v;
	if (x >> 32) { b += 32; x >>= 32; }
	if (x >> 16) { b += 16; x >>= 16; }
	if (x >> 8) { b += 8; x >>= 8; }
	if (x >> 4) { b += 4; x >>= 4; }
	if (x >> 2) { b += 2; x >>= 2; }
	if (x >> 1) { b += 1; }
	// b = floor(log2 v) >= 1
	u32 half = (v >> (b - 1)) & 1;
	u32 r = 2 * b + half;
	return r < HIST_BUCKETS ? r : HIST_BUCKETS - 1;
}

// open_wait counts a wait of a task of e that began at since in slice q
// (dir 1) or ends it (dir -1), on cpu: in the entity's open waits and in the
// slice's, while the reader has not taken the slice.
static __always_inline void open_wait(u32 cpu, u32 e, u64 q, u64 since, int dir)
{
	if (e >= nent)
		return;
	u32 k = cpu * nent + e;
	struct waits *w = bpf_map_lookup_elem(&open_waits, &k);
	if (w)
		w->n += dir;
	if (q < clock.done)
		return;
	struct slot *s = slot_of(cpu, e, q);
	if (s) {
		s->v[F_OPEN_N] += dir;
		s->v[F_OPEN_SUM] += dir > 0 ? since : -since;
	}
}

// set_runnable starts t's wait for a CPU, unless it is already waiting.
static __always_inline void set_runnable(u32 cpu, struct task_state *t, int e, u64 now)
{
	if (t->runnable_since)
		return;
	t->runnable_since = now;
	t->since_q = clock.cur;
	t->ent = e; // the entity whose open waits count it, until it runs
	open_wait(cpu, e, t->since_q, now, 1);
}

// end_wait ends t's wait in the open counts.
static __always_inline void end_wait(u32 cpu, struct task_state *t)
{
	if (!t->runnable_since)
		return;
	open_wait(cpu, t->ent, t->since_q, t->runnable_since, -1);
	t->runnable_since = 0;
}

// new_task_state adds a state for tid (a thread seen for the first time),
// runnable since now when runnable.
static __always_inline void new_task_state(u32 cpu, u32 tid, int e, u64 now, bool runnable, u64 wake)
{
	struct task_state ts = { .wake_ts = wake, .ent = e, .since_q = clock.cur };
	if (runnable)
		ts.runnable_since = now;
	if (bpf_map_update_elem(&tasks, &tid, &ts, BPF_NOEXIST) == 0 && runnable)
		open_wait(cpu, e, ts.since_q, now, 1);
}

// mark_waiting records that a task of entity e waits on cs's CPU. One task
// is marked per CPU: a rank displaces the master or the runtime, never the
// reverse.
static __always_inline void mark_waiting(struct cpu_state *cs, int e, u32 tid, u64 now)
{
	if (!cs)
		return;
	if (cs->wait_ent == 0 || ((u32)e < nranks && cs->wait_ent - 1 >= nranks)) {
		cs->wait_ent = e + 1;
		cs->wait_tid = tid;
		cs->wait_since = now;
	}
}

SEC("tp_btf/sched_switch")
int BPF_PROG(on_switch, bool preempt, struct task_struct *prev, struct task_struct *next, unsigned int prev_state)
{
	u64 now = bpf_ktime_get_ns();
	u32 cpu = bpf_get_smp_processor_id();
	struct cpu_state *cs = cpu_of(cpu);
	if (!cs)
		return 0;
	int pe = ent_of(prev);
	int ne = ent_of(next);
	u32 prev_tid = prev->pid, next_tid = next->pid;

	// What prev did since it was switched in.
	if (cs->start) {
		credit(cpu, pe, F_ONCPU, cs->start, now, 0);
		if (cs->wait_ent && (int)cs->wait_ent - 1 != pe && prev_tid != 0) {
			u64 from = cs->wait_since > cs->start ? cs->wait_since : cs->start;
			int we = cs->wait_ent - 1;
			if (now > from) {
				u64 d = now - from;
				credit(cpu, we, F_PREEMPT, from, now, prev_tid);
				struct intf_key k = { .ent = we, .pid = prev_tid };
				struct intf_val *v = bpf_map_lookup_elem(&intf, &k);
				if (v) {
					v->ns += d;
					// the latest name: a task renames itself at exec
					__builtin_memcpy(v->comm, prev->comm, TASK_COMM_LEN);
				} else {
					struct intf_val nv = { .ns = d };
					__builtin_memcpy(nv.comm, prev->comm, TASK_COMM_LEN);
					if (bpf_map_update_elem(&intf, &k, &nv, BPF_NOEXIST))
						cs->dropped++;
				}
			}
		}
	}
	// A task that ran is not waiting any more (a wake-up of a task still on
	// its CPU marks it too).
	if (cs->wait_ent && cs->wait_tid == prev_tid) {
		cs->wait_ent = 0;
		cs->wait_tid = 0;
	}
	// prev leaves: preempted (still runnable) or going to sleep.
	if (pe >= 0) {
		struct task_state *t = bpf_map_lookup_elem(&tasks, &prev_tid);
		if (t)
			end_wait(cpu, t);
		if (prev_state == 0) {
			add_now(cpu, pe, F_NIVCSW, 1);
			if (t) {
				set_runnable(cpu, t, pe, now);
			} else {
				new_task_state(cpu, prev_tid, pe, now, 1, 0);
			}
			mark_waiting(cs, pe, prev_tid, now);
		}
	}
	// next comes in.
	if (ne >= 0) {
		struct task_state *t = bpf_map_lookup_elem(&tasks, &next_tid);
		if (t) {
			u64 since = t->runnable_since;
			if (since) {
				// the open wait was counted for the entity the task had then
				end_wait(cpu, t);
				if (now > since)
					credit(cpu, ne, F_RUNQ, since, now, 0);
			}
			t->ent = ne;
			if (t->wake_ts && now > t->wake_ts) {
				u64 lat = now - t->wake_ts;
				add_now(cpu, ne, F_WAKE, lat);
				add_now(cpu, ne, F_NWAKE, 1);
				u32 hk = (u32)ne * HIST_BUCKETS + bucket(lat);
				u64 *h = bpf_map_lookup_elem(&wakehist, &hk);
				if (h)
					(*h)++;
			}
			t->wake_ts = 0;
		}
	}
	if (cs->wait_ent && cs->wait_tid == next_tid) {
		cs->wait_ent = 0;
		cs->wait_tid = 0;
	}
	cs->start = now;
	cs->curr_ent = ne + 1;
	cs->curr_pid = next_tid;
	return 0;
}

// waking runs in the waker's context: the latency clock starts here. A rank's
// wake-ups count only when the runtime (bcsrun) wakes it: those are the
// agent's completions, not the Go runtime's own thread hand-offs.
SEC("tp_btf/sched_waking")
int BPF_PROG(on_waking, struct task_struct *p)
{
	int e = ent_of(p);
	if (e < 0)
		return 0;
	if ((u32)e < nranks && (bpf_get_current_pid_tgid() >> 32) != runtime_tgid)
		return 0;
	u32 tid = p->pid;
	u64 now = bpf_ktime_get_ns();
	struct task_state *t = bpf_map_lookup_elem(&tasks, &tid);
	if (t)
		t->wake_ts = now;
	else
		new_task_state(bpf_get_smp_processor_id(), tid, e, now, 0, now);
	return 0;
}

static __always_inline int woken(struct task_struct *p)
{
	int e = ent_of(p);
	if (e < 0)
		return 0;
	u32 tid = p->pid;
	u64 now = bpf_ktime_get_ns();
	u32 cpu = bpf_get_smp_processor_id();
	struct cpu_state *cs = cpu_of(task_cpu(p));
	if (cs && cs->curr_pid == tid)
		return 0; // woken while still running there: it never waits
	struct task_state *t = bpf_map_lookup_elem(&tasks, &tid);
	if (t)
		set_runnable(cpu, t, e, now);
	else
		new_task_state(cpu, tid, e, now, 1, 0);
	mark_waiting(cs, e, tid, now);
	return 0;
}

SEC("tp_btf/sched_wakeup")
int BPF_PROG(on_wakeup, struct task_struct *p)
{
	return woken(p);
}

SEC("tp_btf/sched_wakeup_new")
int BPF_PROG(on_wakeup_new, struct task_struct *p)
{
	return woken(p);
}

SEC("tp_btf/sched_migrate_task")
int BPF_PROG(on_migrate, struct task_struct *p, int dest_cpu)
{
	int e = ent_of(p);
	if (e < 0)
		return 0;
	add_now(bpf_get_smp_processor_id(), e, F_NMIGR, 1);
	u32 tid = p->pid;
	struct cpu_state *from = cpu_of(task_cpu(p));
	if (from && from->wait_tid == tid && from->wait_ent) {
		u64 since = from->wait_since;
		from->wait_ent = 0;
		from->wait_tid = 0;
		struct cpu_state *to = cpu_of(dest_cpu);
		if (to && to->wait_ent == 0) {
			to->wait_ent = e + 1;
			to->wait_tid = tid;
			to->wait_since = since;
		}
	}
	return 0;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
