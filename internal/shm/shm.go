// Package shm is the versioned layout of the shared-memory region between the
// ranks of one node and their agent. One region per node, created by the agent
// side (mode 0600, named after the job) and passed to rank processes as an
// inherited file descriptor.
//
// Layout (all offsets in bytes, all multi-byte fields little-endian, atomics
// 8-byte aligned):
//
//	0       header, 4096 bytes: magic, version, geometry, current slice, abort word
//	4096    rank block 0: control page, descriptor ring, completion table, log ring (recorded jobs)
//	...     rank block 1 .. nlocal-1
//
// Control page of a rank block (4096 bytes): pid (the attach word: 0 until a
// process claims the block with a compare-and-swap of its pid, see Claim),
// state (none/init/finalized), wake (futex word bumped by the agent when it
// publishes completions), sleeping (1 while the rank sleeps on wake), world
// rank (written by the agent when it creates the region), blocked (the
// blocking call the rank is in, for deadlock detection), seen (the value of
// wake at which the rank, blocked, last found its call still waiting: while
// seen == wake it has looked at every completion published to it); the ring
// head (written by the rank only) and tail (written by the agent only) on their
// own cache lines; counters (ring-full waits).
//
// Ring: RingSlots slots of SlotSize bytes: an encoded proto.Descriptor at 0 and
// an inline payload at 128. Single producer (the rank), single consumer (the
// agent): the rank fills slot head%RingSlots, then stores head+1; the agent reads
// up to head, then stores the new tail.
//
// Completion table: ReqMax records of 64 bytes, one per request slot of the
// rank. The rank clears a record before posting; the agent fills it and sets
// state=1 last, then bumps wake.
//
// # Trust
//
// A rank can write every byte of the region, not only its own block, so
// everything the agent reads from it is input, never state: the agent keeps
// its own copy of what it must rely on and checks the rest where the bound is
// known. Here: Drain reads the ring from the agent's own count of drained
// descriptors (the shared tail is only published for the rank), refuses a head
// more than RingSlots ahead of it and an inline length over InlineMax, and
// Complete writes only inside the block's own completion table. Package
// nicthread checks the rest (the world rank, the attached process, request
// slots, sequence numbers, kinds, peers) against its own tables. A refused
// value is a *FieldError naming the field; the agent aborts the job with it.
// Version 4 made the pid an attach word (claimed once) and the tail
// agent-owned, and added the seen word; version 5 added pull orders (below);
// version 6 added the cancel descriptor (proto.KindCancel) and the cancelled
// completion (proto.ErrCancelled), which an older agent or rank refuses, and
// the check words of completion records and pull entries' sums (BCS_CHECK,
// below), and the header's flags word (bit 0: deterministic mode) and the
// control page's release word (offset 28: bumped by the agent, before wake,
// when it releases the rank from a Test-family call in deterministic mode);
// version 7 added the replay log ring (below) and Geometry.LogBytes;
// version 8 added type signatures to point-to-point descriptors (their
// DType) and the type mismatch completion (proto.ErrType) with the other
// side's element type at byte 6 of the completion record; version 9 added
// the control page's pull-sum words (offsets 2688 and 2692: the flow check's
// sums done and verified, under flow alone) and gave point-to-point
// descriptors' CollSeq the partitioned pair number; version 10 added the
// header's eager_max (offset 44, Geometry.EagerMax) and the control page's
// eager-matched word (offset 32: the count of the rank's eager sends,
// proto.Descriptor.Eager, that receives have matched, written by the agent
// only, before it bumps wake; package mpiapi's eager.go reads it) and the
// accumulate lock word (offset 40, RankBlock.RMALock: ranks of the node
// only).
//
// A Region is safe for concurrent use by one rank and its agent as described;
// it is not safe for two ranks to share a rank block.
package shm

import (
	"encoding/binary"
	"fmt"
	"sync/atomic"
	"unsafe"

	"github.com/bcsmpi/bcsmpi/internal/proto"
)

const (
	Magic       = 0x31304d4853534342 // "BCSSHM01"
	Version     = 10
	HeaderSize  = 4096
	controlSize = 4096
	SlotHeader  = 128
	CompSize    = 64

	flagDeterministic = 1 // header flags: Geometry.Deterministic
)

// FieldError is a value a rank wrote into the region that the agent refuses.
type FieldError struct {
	Field string // what the rank wrote, e.g. "descriptor req", "ring head"
	Value any
	Want  string // what would be valid
}

func (e *FieldError) Error() string { return fmt.Sprintf("%s = %v, want %s", e.Field, e.Value, e.Want) }

// Geometry sizes a region.
type Geometry struct {
	Ranks     int // ranks on this node, 1 .. 4096
	RingSlots int // descriptors in flight per rank, power of two, 8 .. 65536
	ReqMax    int // request slots per rank, 16 .. 1<<20
	InlineMax int // bytes of a send copied into its ring slot, 0 .. 65536, multiple of 64
	LogBytes  int // bytes of each rank's replay log ring: 0 (none: the job is not recorded) or a power of two, 4096 .. 1<<20
	// EagerMax bounds a rank's eager sends not yet matched (package mpiapi,
	// eager.go): 0 .. 1<<20, 0 meaning DefaultEagerMax.
	EagerMax int
	// Deterministic: the job runs in deterministic mode (header flags bit
	// 0), which changes what the ranks' Test-family calls do (package
	// mpiapi).
	Deterministic bool
}

// DefaultEagerMax is Geometry.EagerMax when it is 0 (configs' eager_max
// default; mpiapi's eager.go says why this many).
const DefaultEagerMax = 1024

// Eager is EagerMax with 0 resolved to DefaultEagerMax.
func (g Geometry) Eager() int {
	if g.EagerMax == 0 {
		return DefaultEagerMax
	}
	return g.EagerMax
}

// DefaultGeometry is used unless configured otherwise.
var DefaultGeometry = Geometry{RingSlots: 256, ReqMax: 4096, InlineMax: 960}

// Validate reports the first out-of-range field.
func (g Geometry) Validate() error {
	switch {
	case g.Ranks < 1 || g.Ranks > 4096:
		return fmt.Errorf("shm: ranks per node = %d, want 1 .. 4096", g.Ranks)
	case g.RingSlots < 8 || g.RingSlots > 65536 || g.RingSlots&(g.RingSlots-1) != 0:
		return fmt.Errorf("shm: ring_slots = %d, want a power of two in 8 .. 65536", g.RingSlots)
	case g.ReqMax < 16 || g.ReqMax > 1<<20:
		return fmt.Errorf("shm: requests_max = %d, want 16 .. 1048576", g.ReqMax)
	case g.InlineMax < 0 || g.InlineMax > 65536 || g.InlineMax%64 != 0:
		return fmt.Errorf("shm: inline_max = %d, want a multiple of 64 in 0 .. 65536", g.InlineMax)
	case g.EagerMax < 0 || g.EagerMax > 1<<20:
		return fmt.Errorf("shm: eager_max = %d, want 1 .. 1048576 (0: the default, %d)", g.EagerMax, DefaultEagerMax)
	case g.LogBytes != 0 && (g.LogBytes < 4096 || g.LogBytes > 1<<20 || g.LogBytes&(g.LogBytes-1) != 0):
		return fmt.Errorf("shm: log ring = %d bytes, want 0 or a power of two in 4096 .. 1048576", g.LogBytes)
	}
	return nil
}

// SlotSize is the size of one ring slot.
func (g Geometry) SlotSize() int { return SlotHeader + g.InlineMax }

func (g Geometry) blockSize() int {
	n := controlSize + g.RingSlots*g.SlotSize() + g.ReqMax*CompSize + g.LogBytes
	return (n + 4095) &^ 4095
}

// Size is the region's total size.
func (g Geometry) Size() int { return HeaderSize + g.Ranks*g.blockSize() }

// Region is a mapped shared-memory region.
type Region struct {
	Mem []byte
	G   Geometry
}

// Init writes a fresh header into mem (agent side).
func Init(mem []byte, g Geometry) (*Region, error) {
	if len(mem) < g.Size() {
		return nil, fmt.Errorf("shm: mapping of %d bytes is smaller than the region (%d)", len(mem), g.Size())
	}
	le := binary.LittleEndian
	le.PutUint32(mem[8:], Version)
	le.PutUint32(mem[12:], uint32(g.Ranks))
	le.PutUint32(mem[24:], uint32(g.RingSlots))
	le.PutUint32(mem[28:], uint32(g.ReqMax))
	le.PutUint32(mem[32:], uint32(g.InlineMax))
	var flags uint32
	if g.Deterministic {
		flags |= flagDeterministic
	}
	le.PutUint32(mem[36:], flags)
	le.PutUint32(mem[40:], uint32(g.LogBytes))
	le.PutUint32(mem[44:], uint32(g.EagerMax))
	atomic.StoreUint64((*uint64)(unsafe.Pointer(&mem[0])), Magic)
	return &Region{Mem: mem, G: g}, nil
}

// Attach reads the header of an existing region (rank side).
func Attach(mem []byte) (*Region, error) {
	if len(mem) < HeaderSize {
		return nil, fmt.Errorf("shm: region of %d bytes has no header", len(mem))
	}
	if m := atomic.LoadUint64((*uint64)(unsafe.Pointer(&mem[0]))); m != Magic {
		return nil, fmt.Errorf("shm: bad magic %#x, want %#x", m, uint64(Magic))
	}
	le := binary.LittleEndian
	if v := le.Uint32(mem[8:]); v != Version {
		return nil, fmt.Errorf("shm: layout version %d, this library speaks %d", v, Version)
	}
	flags := le.Uint32(mem[36:])
	if flags&^flagDeterministic != 0 {
		return nil, fmt.Errorf("shm: header flags %#x, want bits of %#x (deterministic)", flags, flagDeterministic)
	}
	g := Geometry{Ranks: int(le.Uint32(mem[12:])), RingSlots: int(le.Uint32(mem[24:])), ReqMax: int(le.Uint32(mem[28:])), InlineMax: int(le.Uint32(mem[32:])),
		Deterministic: flags&flagDeterministic != 0, LogBytes: int(le.Uint32(mem[40:])), EagerMax: int(le.Uint32(mem[44:]))}
	if err := g.Validate(); err != nil {
		return nil, err
	}
	if len(mem) < g.Size() {
		return nil, fmt.Errorf("shm: region of %d bytes, header says %d", len(mem), g.Size())
	}
	return &Region{Mem: mem, G: g}, nil
}

func (r *Region) u64(off int) *uint64 { return (*uint64)(unsafe.Pointer(&r.Mem[off])) }
func (r *Region) u32(off int) *uint32 { return (*uint32)(unsafe.Pointer(&r.Mem[off])) }

// Slice is the slice the node's agent is in (set at each strobe).
func (r *Region) Slice() proto.SliceID     { return proto.SliceID(atomic.LoadUint64(r.u64(16))) }
func (r *Region) SetSlice(k proto.SliceID) { atomic.StoreUint64(r.u64(16), uint64(k)) }
func (r *Region) Aborting() bool           { return atomic.LoadUint32(r.u32(48)) != 0 }
func (r *Region) SetAborting()             { atomic.StoreUint32(r.u32(48), 1) }
func (r *Region) Block(local int) *RankBlock {
	return &RankBlock{r: r, base: HeaderSize + local*r.G.blockSize()}
}

// Rank states.
const (
	StateNone      = 0
	StateInit      = 1
	StateFinalized = 2
)

// RankBlock is one rank's part of the region, as seen by one process: the
// rank's and the agent's RankBlock for a block are different values.
type RankBlock struct {
	r    *Region
	base int
	// taken counts the descriptors the agent has drained: its own tail,
	// in its own memory, so a rank that overwrites the shared tail cannot
	// make it read a slot twice.
	taken uint64
	// logTaken is the agent's own count of log bytes drained (the same for
	// the log ring).
	logTaken uint64
}

// PID is the attach word: the pid of the process that claimed the block, or 0.
func (b *RankBlock) PID() int { return int(int32(atomic.LoadUint32(b.r.u32(b.base)))) }

// Claim attaches process pid to the block, once: it stores pid if the
// attach word is still 0. Otherwise it returns false and the pid that holds
// the block (rank side, in MPI_Init).
func (b *RankBlock) Claim(pid int) (holder int, ok bool) {
	if atomic.CompareAndSwapUint32(b.r.u32(b.base), 0, uint32(pid)) {
		return pid, true
	}
	return b.PID(), false
}

func (b *RankBlock) State() uint32     { return atomic.LoadUint32(b.r.u32(b.base + 4)) }
func (b *RankBlock) SetState(s uint32) { atomic.StoreUint32(b.r.u32(b.base+4), s) }
func (b *RankBlock) Wake() *uint32     { return b.r.u32(b.base + 8) }
func (b *RankBlock) Sleeping() *uint32 { return b.r.u32(b.base + 12) }
func (b *RankBlock) WorldRank() proto.Rank {
	return proto.Rank(int32(atomic.LoadUint32(b.r.u32(b.base + 16))))
}
func (b *RankBlock) SetWorldRank(r proto.Rank) {
	atomic.StoreUint32(b.r.u32(b.base+16), uint32(r))
}

// Blocked is the proto.CallNames index of the blocking call the rank is in (0: none).
func (b *RankBlock) Blocked() uint8     { return uint8(atomic.LoadUint32(b.r.u32(b.base + 20))) }
func (b *RankBlock) SetBlocked(c uint8) { atomic.StoreUint32(b.r.u32(b.base+20), uint32(c)) }

// Seen is the value of Wake at which the rank, blocked, last looked at its
// completions and found its call still waiting (written by the rank after that
// look, before it sleeps; read by the agent for deadlock detection).
func (b *RankBlock) Seen() uint32     { return atomic.LoadUint32(b.r.u32(b.base + 24)) }
func (b *RankBlock) SetSeen(w uint32) { atomic.StoreUint32(b.r.u32(b.base+24), w) }

// RMALock is the rank's accumulate lock (offset 40 of the control page):
// ranks of the node only, the agent never reads it. The rank holds it
// while it applies a one-sided accumulate to its window memory, and so
// does another rank of the node that applies one there itself (package
// cabi, direct operations), so that accumulates to one location are
// atomic against each other. 0 free, 1 held, 2 held with waiters (futex).
// Layout version 10 (with the eager-matched word at offset 32).
func (b *RankBlock) RMALock() *uint32 { return b.r.u32(b.base + 40) }

// Release is the word the agent bumps (then wake) to release the rank from
// a Test-family call in deterministic mode (a proto.KindRelease completion):
// the rank reads it when it enters the call and returns, with what has
// completed, once it changes.
func (b *RankBlock) Release() uint32 { return atomic.LoadUint32(b.r.u32(b.base + 28)) }

// BumpRelease releases the rank (agent).
func (b *RankBlock) BumpRelease() { atomic.AddUint32(b.r.u32(b.base+28), 1) }

// EagerMatched is the count of the rank's eager sends (proto.Descriptor.Eager)
// that receives have matched: written by the agent only (SetEagerMatched),
// then wake is bumped; read by the rank (package mpiapi, eager.go).
func (b *RankBlock) EagerMatched() uint64 { return atomic.LoadUint64(b.r.u64(b.base + 32)) }

// SetEagerMatched stores the count (agent).
func (b *RankBlock) SetEagerMatched(n uint64) { atomic.StoreUint64(b.r.u64(b.base+32), n) }

func (b *RankBlock) head() *uint64      { return b.r.u64(b.base + 64) }
func (b *RankBlock) tail() *uint64      { return b.r.u64(b.base + 128) }
func (b *RankBlock) FullWaits() *uint64 { return b.r.u64(b.base + 192) }

func (b *RankBlock) slot(i uint64) []byte {
	ss := b.r.G.SlotSize()
	off := b.base + controlSize + int(i&uint64(b.r.G.RingSlots-1))*ss
	return b.r.Mem[off : off+ss]
}

// Post appends d (with inline payload, if any) to the ring. It returns false
// if the ring is full; the caller waits for the agent and retries.
func (b *RankBlock) Post(d proto.Descriptor, inline []byte) bool {
	h := atomic.LoadUint64(b.head())
	if h-atomic.LoadUint64(b.tail()) >= uint64(b.r.G.RingSlots) {
		return false
	}
	s := b.slot(h)
	proto.AppendDescriptor(s[:0], d)
	copy(s[SlotHeader:], inline)
	atomic.StoreUint64(b.head(), h+1)
	return true
}

// Drain hands the agent every posted descriptor whose PostSlice is before
// slice k, in post order, and frees their slots. fn gets the inline payload
// (valid only during the call). Drain stops at the first descriptor posted in
// slice k or later (docs/design.md §3 rule 1), or at the first that fn refuses.
// It reads from the agent's own tail; a head more than RingSlots ahead of it,
// a slot that does not decode and an inline length over InlineMax are errors
// naming the field (agent side only: one drainer per block).
func (b *RankBlock) Drain(k proto.SliceID, fn func(d proto.Descriptor, inline []byte) error) (int, error) {
	t := b.taken
	h := atomic.LoadUint64(b.head())
	if h-t > uint64(b.r.G.RingSlots) {
		return 0, &FieldError{Field: "ring head", Value: h, Want: fmt.Sprintf("%d .. %d (the drained count %d plus at most ring_slots %d)", t, t+uint64(b.r.G.RingSlots), t, b.r.G.RingSlots)}
	}
	n := 0
	defer func() {
		b.taken = t
		atomic.StoreUint64(b.tail(), t)
	}()
	for ; t < h; t++ {
		s := b.slot(t)
		d, err := proto.DecodeDescriptor(s)
		if err != nil {
			return n, fmt.Errorf("ring slot %d: %w", t, err)
		}
		if d.PostSlice >= k {
			break
		}
		var inl []byte
		if d.Inline {
			if d.Len > uint64(b.r.G.InlineMax) {
				return n, &FieldError{Field: "descriptor len (inline)", Value: d.Len, Want: fmt.Sprintf("0 .. %d (inline_max)", b.r.G.InlineMax)}
			}
			inl = s[SlotHeader : SlotHeader+int(d.Len)]
		}
		if err := fn(d, inl); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

// Undrained is how many descriptors the rank has posted that Drain has not
// handed over yet: those posted in the slice drained or later, or held back
// by the drain's fn (agent side, like Drain).
func (b *RankBlock) Undrained() uint64 { return atomic.LoadUint64(b.head()) - b.taken }

// RingFree is how many descriptors the rank may post before the ring is full.
func (b *RankBlock) RingFree() int {
	return b.r.G.RingSlots - int(atomic.LoadUint64(b.head())-atomic.LoadUint64(b.tail()))
}

// Completion record fields. A request slot past the table is a bug of the
// caller: the agent checks every descriptor's Req against ReqMax when it
// drains it, so a completion can only name a slot of the rank's own table.
func (b *RankBlock) comp(req uint32) int {
	if int(req) >= b.r.G.ReqMax {
		panic(fmt.Sprintf("shm: completion for request slot %d of a table of %d: descriptors must be checked against requests_max when drained", req, b.r.G.ReqMax))
	}
	return b.base + controlSize + b.r.G.RingSlots*b.r.G.SlotSize() + int(req)*CompSize
}

// ClearCompletion marks request slot req as pending (rank, before posting).
func (b *RankBlock) ClearCompletion(req uint32) { atomic.StoreUint32(b.r.u32(b.comp(req)), 0) }

// Done reports whether request slot req has completed.
func (b *RankBlock) Done(req uint32) bool { return atomic.LoadUint32(b.r.u32(b.comp(req))) == 1 }

// Completion reads a completed record.
func (b *RankBlock) Completion(req uint32) proto.Completion {
	o := b.comp(req)
	m := b.r.Mem
	le := binary.LittleEndian
	return proto.Completion{
		Req:      req,
		Kind:     proto.Kind(m[o+4]),
		Found:    m[o+5] != 0,
		PeerType: m[o+6],
		Err:      proto.Err(le.Uint32(m[o+8:])),
		Source:   proto.Rank(int32(le.Uint32(m[o+12:]))),
		Tag:      int32(le.Uint32(m[o+16:])),
		Count:    le.Uint64(m[o+24:]),
	}
}

// Complete writes c into its record and marks it done (agent).
func (b *RankBlock) Complete(c proto.Completion) {
	o := b.comp(c.Req)
	m := b.r.Mem
	le := binary.LittleEndian
	m[o+4] = uint8(c.Kind)
	m[o+5] = 0
	if c.Found {
		m[o+5] = 1
	}
	m[o+6] = c.PeerType
	le.PutUint32(m[o+8:], uint32(c.Err))
	le.PutUint32(m[o+12:], uint32(c.Source))
	le.PutUint32(m[o+16:], uint32(c.Tag))
	le.PutUint64(m[o+24:], c.Count)
	atomic.StoreUint32(b.r.u32(o), 1)
}

// Pull orders (version 5): the agent may hand the copies of a slice's
// intra-node chunks to their receiving rank, which copies each one with a
// single process_vm_readv from the sender straight into its receive buffer
// (one copy instead of the agent's two; see package nicthread). Control page:
//
//	256  pull state (rank and agent, compare-and-swap): PullIdle, PullOffered, PullPosted
//	260  entries in the posted order (agent), at most PullMax
//	264  order number (agent, bumped per order)
//	268  done: the number of the last order served (rank, stored last)
//	272  entries of that order copied, in order from the first (rank)
//	320  PullMax entries of 32 bytes: sender pid (u32), receive request slot
//	     (u32), sender address (u64), receiver address (u64), length (u64)
//
// The rank offers (Idle → Offered) while it is in a blocking call, and only
// then; the agent posts an order by writing its entries and compare-and-swapping
// Offered → Posted, then bumps wake. The rank takes a posted order (Posted →
// Serving), copies, stores the count and done, then the state (Offered if it
// goes on waiting, Idle if it leaves). Until the rank takes it the agent may
// revoke the order (Posted → Offered) and copy itself: a rank that is slow to
// run (a loaded host) costs the agent a grace period, not the slice. A rank
// never leaves its blocking call with an order posted: its Offered → Idle
// swap fails, and it serves the order first. An order the rank does not
// finish (a refused entry, a failed copy) is completed by the agent. Trust:
// the rank copies only into a receive buffer of its own that is still
// pending (mpiapi checks the slot and the range); the agent reads back only
// done and the copied count, which it checks against the order.
const (
	PullIdle    = 0
	PullOffered = 1
	PullPosted  = 2
	PullServing = 3
	PullMax     = 64
	// PullMin is the smallest chunk an agent hands to its receiving rank
	// as a pull order entry (nicthread; the scheduler counts such chunks
	// at the pull rate, configs.Sched): below it the rank's wake-up costs
	// more than the agent's second copy.
	PullMin     = 256 << 10
	pullBase    = 256
	pullEntries = 320
	pullEntry   = 32
)

// Pull is one entry of a pull order: copy Len bytes at SrcAddr in process
// PID into the receiver's memory at DstAddr, part of receive request Req.
type Pull struct {
	PID              int32
	Req              uint32
	SrcAddr, DstAddr uint64
	Len              uint64
}

func (b *RankBlock) pullState() *uint32 { return b.r.u32(b.base + pullBase) }

// PullDone is the word the rank stores (and wakes) when it has served an order.
func (b *RankBlock) PullDone() *uint32 { return b.r.u32(b.base + pullBase + 12) }

// OfferPull says the rank is in a blocking call and will serve pull orders
// until WithdrawPull (rank side). False: an offer was already on.
func (b *RankBlock) OfferPull() bool {
	return atomic.CompareAndSwapUint32(b.pullState(), PullIdle, PullOffered)
}

// WithdrawPull ends the offer (rank side). It returns false if an order is
// posted: the rank must serve it (TakePull, then FinishPull with stay false)
// and withdraw again.
func (b *RankBlock) WithdrawPull() bool {
	return atomic.CompareAndSwapUint32(b.pullState(), PullOffered, PullIdle) ||
		atomic.LoadUint32(b.pullState()) != PullPosted
}

// PullPosted reports whether an order waits for the rank.
func (b *RankBlock) PullPosted() bool { return atomic.LoadUint32(b.pullState()) == PullPosted }

// TakePull claims the posted order for copying (rank side); false if there
// is none or the agent revoked it.
func (b *RankBlock) TakePull() bool {
	return atomic.CompareAndSwapUint32(b.pullState(), PullPosted, PullServing)
}

// RevokePull takes back a posted order the rank has not taken (agent side):
// true if the agent must now copy the whole order itself.
func (b *RankBlock) RevokePull() bool {
	return atomic.CompareAndSwapUint32(b.pullState(), PullPosted, PullOffered)
}

// PullOrder reads the posted order (rank side): its number and entries (n
// is bounded by PullMax whatever the word says).
func (b *RankBlock) PullOrder() (seq uint32, n int) {
	o := b.base + pullBase
	return atomic.LoadUint32(b.r.u32(o + 8)), min(int(atomic.LoadUint32(b.r.u32(o+4))), PullMax)
}

// PullEntry reads entry i < PullMax of the order.
func (b *RankBlock) PullEntry(i int) Pull {
	o := b.base + pullEntries + i*pullEntry
	le := binary.LittleEndian
	m := b.r.Mem
	return Pull{PID: int32(le.Uint32(m[o:])), Req: le.Uint32(m[o+4:]), SrcAddr: le.Uint64(m[o+8:]), DstAddr: le.Uint64(m[o+16:]), Len: le.Uint64(m[o+24:])}
}

// FinishPull reports order seq served with its first copied entries copied,
// then offers again (stay) or leaves (rank side). The caller wakes PullDone.
func (b *RankBlock) FinishPull(seq uint32, copied int, stay bool) {
	o := b.base + pullBase
	atomic.StoreUint32(b.r.u32(o+16), uint32(copied))
	atomic.StoreUint32(b.r.u32(o+12), seq)
	st := uint32(PullIdle)
	if stay {
		st = PullOffered
	}
	atomic.StoreUint32(b.pullState(), st)
}

// PostPull writes an order of ps (at most PullMax) numbered seq and posts it
// if the rank offers (agent side). It returns false, posting nothing, if the
// rank is not in a blocking call. The caller then bumps wake.
func (b *RankBlock) PostPull(seq uint32, ps []Pull) bool {
	if len(ps) > PullMax {
		panic(fmt.Sprintf("shm: pull order of %d entries, at most %d (PullMax)", len(ps), PullMax))
	}
	if atomic.LoadUint32(b.pullState()) != PullOffered {
		return false
	}
	le := binary.LittleEndian
	m := b.r.Mem
	for i, p := range ps {
		o := b.base + pullEntries + i*pullEntry
		le.PutUint32(m[o:], uint32(p.PID))
		le.PutUint32(m[o+4:], p.Req)
		le.PutUint64(m[o+8:], p.SrcAddr)
		le.PutUint64(m[o+16:], p.DstAddr)
		le.PutUint64(m[o+24:], p.Len)
	}
	o := b.base + pullBase
	atomic.StoreUint32(b.r.u32(o+4), uint32(len(ps)))
	atomic.StoreUint32(b.r.u32(o+8), seq)
	return atomic.CompareAndSwapUint32(b.pullState(), PullOffered, PullPosted)
}

// PullResult reads whether order seq of n entries has been served and how
// many entries the rank copied (agent side). A count over n is a *FieldError.
func (b *RankBlock) PullResult(seq uint32, n int) (done bool, copied int, err error) {
	o := b.base + pullBase
	if atomic.LoadUint32(b.r.u32(o+12)) != seq {
		return false, 0, nil
	}
	c := atomic.LoadUint32(b.r.u32(o + 16))
	if int64(c) > int64(n) {
		return true, 0, &FieldError{Field: "pull order copied count", Value: c, Want: fmt.Sprintf("0 .. %d (the order's entries)", n)}
	}
	return true, int(c), nil
}

// Check words (version 6; BCS_CHECK, see packages internal/check, mpiapi and
// nicthread). Completion record, after the completion proper:
//
//	32  address, in the rank's memory, of the request's check header
//	    (internal/check, HeaderWords: buffer address, length, blocks
//	    summed so far, block sums), or 0
//	    (rank, before posting; the agent only reads it)
//	40  first and 44 last block, plus one, that the agent found written by
//	    the program before the runtime wrote into them (agent), 0: none
//	48  slice of the first such finding (agent)
//
// Control page, pull orders: at 2432, PullMax u32, the CRC-32 of what the
// rank copied for each entry (rank; read by the agent under the flow
// check): under buffers,flow stored before the rank stores done; under flow
// alone after it (taken as the rank copies, stored once the order is done), and then
//
//	2688  the number of the order whose sums are stored (rank, after the sums)
//	2692  the number of the last order whose sums the agent has compared
//	      (agent, then a futex wake; the rank waits for it before it
//	      stores the next order's sums over them, and at MPI_Finalize)
//
// The agent reads the header's bytes from the rank's own memory with
// process_vm_readv, checking the address range; a rank that lies there
// only spoils its own check.
const (
	pullSums     = 2432
	pullSumsDone = 2688
	pullVerified = 2692
)

// SetCheck stores the check header address of request slot req and clears
// its findings (rank side, before posting; only when the check is on).
func (b *RankBlock) SetCheck(req uint32, hdr uint64) {
	o := b.comp(req)
	m := b.r.Mem
	binary.LittleEndian.PutUint64(m[o+32:], hdr)
	clear(m[o+40 : o+56])
}

// CheckHeader is the check header address of request slot req (agent side).
func (b *RankBlock) CheckHeader(req uint32) uint64 {
	return binary.LittleEndian.Uint64(b.r.Mem[b.comp(req)+32:])
}

// ReportWritten records that blocks lo .. hi of request slot req's receive
// buffer were written by the program before the runtime wrote into them in
// slice k (agent side), widening an earlier finding.
func (b *RankBlock) ReportWritten(req uint32, lo, hi uint32, k proto.SliceID) {
	o := b.comp(req)
	m := b.r.Mem
	le := binary.LittleEndian
	if f := le.Uint32(m[o+40:]); f == 0 || lo+1 < f {
		le.PutUint32(m[o+40:], lo+1)
	}
	if l := le.Uint32(m[o+44:]); hi+1 > l {
		le.PutUint32(m[o+44:], hi+1)
	}
	if le.Uint64(m[o+48:]) == 0 {
		le.PutUint64(m[o+48:], uint64(k))
	}
}

// Written reads the agent's finding of request slot req (rank side, after
// the completion): the first and last block and the slice, ok false if none.
func (b *RankBlock) Written(req uint32) (lo, hi int, k proto.SliceID, ok bool) {
	o := b.comp(req)
	m := b.r.Mem
	le := binary.LittleEndian
	f, l := le.Uint32(m[o+40:]), le.Uint32(m[o+44:])
	if f == 0 || l < f {
		return 0, 0, 0, false
	}
	return int(f - 1), int(l - 1), proto.SliceID(le.Uint64(m[o+48:])), true
}

// SetPullSum stores the CRC-32 of what the rank copied for entry i of the
// order it serves (rank side).
func (b *RankBlock) SetPullSum(i int, sum uint32) {
	binary.LittleEndian.PutUint32(b.r.Mem[b.base+pullSums+(i%PullMax)*4:], sum)
}

// PullSum reads the rank's sum of entry i of a served order (agent side).
func (b *RankBlock) PullSum(i int) uint32 {
	return binary.LittleEndian.Uint32(b.r.Mem[b.base+pullSums+(i%PullMax)*4:])
}

// PullSumsDone is the word holding the number of the last order whose sums
// the rank has stored after finishing it (flow alone; the rank stores it
// after the sums and wakes it, the agent reads and waits on it).
func (b *RankBlock) PullSumsDone() *uint32 { return b.r.u32(b.base + pullSumsDone) }

// PullVerified is the word holding the number of the last order whose sums
// the agent has compared (flow alone; the agent stores it, the rank reads
// it at MPI_Finalize).
func (b *RankBlock) PullVerified() *uint32 { return b.r.u32(b.base + pullVerified) }

// The replay log ring (version 7; present when Geometry.LogBytes > 0, i.e.
// when the job is recorded): a byte ring of LogBytes after the completion
// table, holding the rank's replay records (package internal/replay) for its
// agent to drain at every strobe. Control page:
//
//	2752  log head: bytes the rank has appended (rank only, stored after the bytes)
//	2816  log tail: bytes the agent has drained (agent only; published for the rank)
//	2880  log waits: times the rank found the ring full (rank, counter)
//
// Single producer (the rank), single consumer (the agent). The rank appends
// whole records only, so head is always at a record boundary; the agent reads
// from its own count of drained bytes, refuses a head more than LogBytes
// ahead of it, and checks every record it drains (package nicthread) before
// it writes it anywhere.
const (
	logHead  = 2752 // after the pull orders' check sums (pullSums .. +PullMax*4) and their two words
	logTail  = 2816
	logWaits = 2880
)

func (b *RankBlock) logBase() int {
	return b.base + controlSize + b.r.G.RingSlots*b.r.G.SlotSize() + b.r.G.ReqMax*CompSize
}

// LogWaits counts the rank's waits for room in the log ring.
func (b *RankBlock) LogWaits() *uint64 { return b.r.u64(b.base + logWaits) }

// LogAppend appends rec to the log ring (rank side). It returns false, writing
// nothing, if the ring has no room for it; the caller waits a slice and
// retries. rec must be shorter than the ring (a record is at most
// replay.MaxRecord bytes, the ring at least 4096) and the region must have a
// log ring.
func (b *RankBlock) LogAppend(rec []byte) bool {
	size := uint64(b.r.G.LogBytes)
	if uint64(len(rec)) > size {
		panic(fmt.Sprintf("shm: log record of %d bytes for a ring of %d: records are bounded by replay.MaxRecord, rings by Geometry.Validate", len(rec), size))
	}
	h := atomic.LoadUint64(b.r.u64(b.base + logHead))
	if h-atomic.LoadUint64(b.r.u64(b.base+logTail))+uint64(len(rec)) > size {
		return false
	}
	base := b.logBase()
	at := int(h & (size - 1))
	n := copy(b.r.Mem[base+at:base+int(size)], rec)
	copy(b.r.Mem[base:], rec[n:])
	atomic.StoreUint64(b.r.u64(b.base+logHead), h+uint64(len(rec)))
	return true
}

// LogDrain appends the bytes the rank has logged since the last drain to buf
// and frees them (agent side: one drainer per block). A head more than
// LogBytes ahead of the agent's count is a *FieldError. With no log ring it
// returns buf unchanged.
func (b *RankBlock) LogDrain(buf []byte) ([]byte, error) {
	size := uint64(b.r.G.LogBytes)
	if size == 0 {
		return buf, nil
	}
	t := b.logTaken
	h := atomic.LoadUint64(b.r.u64(b.base + logHead))
	if h-t > size {
		return buf, &FieldError{Field: "log ring head", Value: h, Want: fmt.Sprintf("%d .. %d (the drained count %d plus at most the ring's %d bytes)", t, t+size, t, size)}
	}
	base := b.logBase()
	for t < h {
		at := int(t & (size - 1))
		end := min(int(size), at+int(h-t))
		buf = append(buf, b.r.Mem[base+at:base+end]...)
		t += uint64(end - at)
	}
	b.logTaken = t
	atomic.StoreUint64(b.r.u64(b.base+logTail), t)
	return buf, nil
}
