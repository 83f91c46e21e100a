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

// Cumulative per entity, one copy per CPU (summed by the reader).
struct ent_stats {
	u64 oncpu_ns;   // time running
	u64 runq_ns;    // time runnable but not running (woken or preempted → running)
	u64 wake_ns;    // sum of wake-up latencies (waking → running)
	u64 nwake;      // wake-ups measured
	u64 wake_max;   // largest wake-up latency seen (max, not a sum)
	u64 nivcsw;     // switched out while runnable (preempted)
	u64 nmigr;      // migrations to another CPU
	u64 preempt_ns; // time other entities' tasks ran on a CPU where this entity waited
	// Open waits: tasks that became runnable on this CPU minus those that
	// were switched in here, and the sum of their runnable_since. Summed
	// over CPUs (mod 2^64) they give the number of the entity's tasks
	// waiting now and when they began: the reader adds n·now − sum to RUNQ.
	u64 nwait;
	u64 since_sum;
};

// Per CPU (key 0): what runs there now, and which tracked task waits there.
struct cpu_state {
	u64 start;      // when curr was switched in
	u32 curr_ent;   // entity of curr + 1, 0: none
	u32 curr_pid;
	u32 wait_ent;   // entity of a task waiting on this CPU + 1, 0: none
	u32 wait_tid;
	u64 wait_since; // when it began waiting
	u64 dropped;    // interferer entries that did not fit the map
};

struct task_state {
	u64 runnable_since; // woken or preempted at, 0: running or asleep
	u64 wake_ts;        // woken at (the latency clock), 0: none pending
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

// The same pairs' time since the reader's last read: it takes them out
// (lookup and delete) once per slice, so the map holds only the pairs of a
// slice or two and its read stays short.
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, 1024);
	__type(key, struct intf_key);
	__type(value, u64);
} slice_intf SEC(".maps");

// Set by the loader before loading.
volatile const u32 runtime_tgid = 0;  // bcsrun's pid
volatile const u32 nranks = 0;        // entities below this are ranks

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);           // sized by the loader
	__type(key, u32);                 // thread id or thread-group id
	__type(value, u32);               // entity
} ents SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);           // sized by the loader: entities
	__type(key, u32);
	__type(value, struct ent_stats);
} stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);           // sized by the loader: entities × HIST_BUCKETS
	__type(key, u32);
	__type(value, u64);
} wakehist SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, struct cpu_state);
} cpus SEC(".maps");

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

static __always_inline struct ent_stats *stats_of(int e)
{
	u32 k = e;
	return bpf_map_lookup_elem(&stats, &k);
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

// mark_waiting records that a task of entity e waits on cs's CPU. One task
// is marked per CPU: a rank displaces the master or the runtime, never the
// reverse.
// set_runnable starts t's wait for a CPU, unless it is already waiting.
static __always_inline void set_runnable(struct task_state *t, int e, u64 now)
{
	if (t->runnable_since)
		return;
	t->runnable_since = now;
	t->ent = e; // the entity whose open waits count it, until it runs
	struct ent_stats *s = stats_of(e);
	if (s) {
		s->nwait++;
		s->since_sum += now;
	}
}

// clear_runnable ends t's wait without counting it: a wake-up of a task
// still on its CPU leaves a wait that never was; its switch-out ends it.
static __always_inline void clear_runnable(struct task_state *t)
{
	if (!t->runnable_since)
		return;
	struct ent_stats *s = stats_of(t->ent);
	if (s) {
		s->nwait--;
		s->since_sum -= t->runnable_since;
	}
	t->runnable_since = 0;
}

// new_task_state adds a state for tid (a thread seen for the first time),
// runnable since now when runnable.
static __always_inline void new_task_state(u32 tid, int e, u64 now, bool runnable, u64 wake)
{
	struct task_state ts = { .wake_ts = wake, .ent = e };
	if (runnable)
		ts.runnable_since = now;
	if (bpf_map_update_elem(&tasks, &tid, &ts, BPF_NOEXIST) == 0 && runnable) {
		struct ent_stats *s = stats_of(e);
		if (s) {
			s->nwait++;
			s->since_sum += now;
		}
	}
}

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
	u32 zero = 0;
	struct cpu_state *cs = bpf_map_lookup_elem(&cpus, &zero);
	if (!cs)
		return 0;
	int pe = ent_of(prev);
	int ne = ent_of(next);
	u32 prev_tid = prev->pid, next_tid = next->pid;

	// What prev did since it was switched in.
	if (cs->start) {
		u64 dur = now - cs->start;
		if (pe >= 0) {
			struct ent_stats *s = stats_of(pe);
			if (s)
				s->oncpu_ns += dur;
		}
		if (cs->wait_ent && (int)cs->wait_ent - 1 != pe && prev_tid != 0) {
			u64 from = cs->wait_since > cs->start ? cs->wait_since : cs->start;
			u64 d = now > from ? now - from : 0;
			int we = cs->wait_ent - 1;
			struct ent_stats *ws = stats_of(we);
			if (ws)
				ws->preempt_ns += d;
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
			u64 *sv = bpf_map_lookup_elem(&slice_intf, &k);
			if (sv) {
				*sv += d;
			} else if (bpf_map_update_elem(&slice_intf, &k, &d, BPF_NOEXIST)) {
				cs->dropped++;
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
			clear_runnable(t);
		if (prev_state == 0) {
			struct ent_stats *s = stats_of(pe);
			if (s)
				s->nivcsw++;
			if (t) {
				set_runnable(t, pe, now);
			} else {
				new_task_state(prev_tid, pe, now, 1, 0);
			}
			mark_waiting(cs, pe, prev_tid, now);
		}
	}
	// next comes in.
	if (ne >= 0) {
		struct task_state *t = bpf_map_lookup_elem(&tasks, &next_tid);
		struct ent_stats *s = stats_of(ne);
		if (t && s) {
			if (t->runnable_since) {
				if (now > t->runnable_since)
					s->runq_ns += now - t->runnable_since;
				// the open wait was counted for the entity the task had then
				struct ent_stats *ws = stats_of(t->ent);
				if (ws) {
					ws->nwait--;
					ws->since_sum -= t->runnable_since;
				}
			}
			t->runnable_since = 0;
			t->ent = ne;
			if (t->wake_ts && now > t->wake_ts) {
				u64 lat = now - t->wake_ts;
				s->wake_ns += lat;
				s->nwake++;
				if (lat > s->wake_max)
					s->wake_max = lat;
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
		new_task_state(tid, e, now, 0, now);
	return 0;
}

static __always_inline int woken(struct task_struct *p)
{
	int e = ent_of(p);
	if (e < 0)
		return 0;
	u32 tid = p->pid;
	u64 now = bpf_ktime_get_ns();
	u32 zero = 0;
	struct cpu_state *cs = bpf_map_lookup_percpu_elem(&cpus, &zero, task_cpu(p));
	if (cs && cs->curr_pid == tid)
		return 0; // woken while still running there: it never waits
	struct task_state *t = bpf_map_lookup_elem(&tasks, &tid);
	if (t)
		set_runnable(t, e, now);
	else
		new_task_state(tid, e, now, 1, 0);
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
	struct ent_stats *s = stats_of(e);
	if (s)
		s->nmigr++;
	u32 tid = p->pid, zero = 0;
	struct cpu_state *from = bpf_map_lookup_percpu_elem(&cpus, &zero, task_cpu(p));
	if (from && from->wait_tid == tid && from->wait_ent) {
		u64 since = from->wait_since;
		from->wait_ent = 0;
		from->wait_tid = 0;
		struct cpu_state *to = bpf_map_lookup_percpu_elem(&cpus, &zero, dest_cpu);
		if (to && to->wait_ent == 0) {
			to->wait_ent = e + 1;
			to->wait_tid = tid;
			to->wait_since = since;
		}
	}
	return 0;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
