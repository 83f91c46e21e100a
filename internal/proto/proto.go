package proto

import (
	"fmt"
	"strings"
)

// SliceID numbers time slices from 0 at job start.
type SliceID uint64

// NodeID numbers the job's nodes (agents) from 0.
type NodeID int32

// Rank is a rank in MPI_COMM_WORLD.
type Rank int32

// Wildcards and the null process, with MPI's meaning.
const (
	AnySource Rank  = -1
	ProcNull  Rank  = -2
	AnyTag    int32 = -1
)

// Kind says what a descriptor asks for.
type Kind uint8

const (
	KindSend   Kind = 1 // send Len bytes at Addr to Peer
	KindRecv   Kind = 2 // receive up to Len bytes at Addr from Peer
	KindProbe  Kind = 3 // wait until a message matching (Peer, Tag) is pending
	KindIprobe Kind = 4 // say, in the next slice, whether such a message is pending
	// KindColl enters collective number CollSeq on Comm (Coll says which); it
	// runs when every member of Comm has posted it.
	KindColl Kind = 5
	// KindCollPart carries one per-peer block of a v-collective (Gatherv,
	// Scatterv, Allgatherv, Alltoallv, Reduce_scatter): Peer is the other
	// rank, Dir is PartSend or PartRecv, Addr/Len the block in the posting
	// rank (see Part). Parts are posted before their KindColl header.
	KindCollPart Kind = 6
	// KindCancel asks the scheduler to withdraw the rank's own unmatched
	// receive (Withdraws CancelRecv) or unmatched, unbuffered send (CancelSend)
	// whose request slot is Req and whose descriptor was posted before this
	// one (a smaller Seq); Comm and Peer repeat the target's. The target then
	// completes with ErrCancelled; if it is matched (or a buffered send) the
	// cancel does nothing and the target completes as it would have. A
	// cancel has no completion of its own.
	KindCancel Kind = 7

	// KindRelease is never posted: it is a completion the runtime sends a
	// rank waiting in a Test-family call in deterministic mode (Req 0, no
	// request slot) when the job is quiescent, telling the call to return
	// with the requests complete so far (see scheduler/doc.go,
	// "Deterministic mode").
	KindRelease Kind = 8
)

// What a KindCancel withdraws (Descriptor.Withdraws).
const (
	CancelRecv int32 = 0
	CancelSend int32 = 1
)

// Directions of a KindCollPart (Descriptor.Dir).
const (
	PartSend int32 = 0
	PartRecv int32 = 1
)

func (k Kind) String() string {
	switch k {
	case KindSend:
		return "send"
	case KindRecv:
		return "recv"
	case KindProbe:
		return "probe"
	case KindIprobe:
		return "iprobe"
	case KindColl:
		return "coll"
	case KindCollPart:
		return "collpart"
	case KindCancel:
		return "cancel"
	case KindRelease:
		return "release"
	}
	return fmt.Sprintf("kind(%d)", uint8(k))
}

// CommID identifies a communicator; 0 is MPI_COMM_WORLD.
type CommID uint32

// Descriptor is one posted operation. Peer and Rank are world ranks; the API
// layer translates communicator-relative ranks before posting.
type Descriptor struct {
	Kind Kind
	// Inline: the send's payload was copied into the ring slot (a small or
	// zero-length message). The agent then holds the data, so the send is
	// buffered: it completes in the slice it is exchanged, matched or not.
	Inline bool
	// Eager: an Inline send posted by a blocking standard send (MPI_Send,
	// MPI_Rsend), which returned to its caller at its post (package mpiapi,
	// eager.go). The sender's agent counts such sends as they are matched
	// (shm: the control page's eager-matched word), which bounds how many
	// the rank has returned from unmatched. Set by the program's calls
	// alone, never by timing; the scheduler ignores it and the plan hashes
	// leave it out (recordings keep their hashes).
	Eager     bool
	Comm      CommID
	Rank      Rank   // the posting rank
	Peer      Rank   // destination of a send; source (or AnySource) of a recv/probe; see below for other kinds
	Tag       int32  // AnyTag allowed for recv/probe; see below for other kinds
	Req       uint32 // request slot of the posting rank; completions name it
	Seq       uint64 // per-rank post order, from 1
	PostSlice SliceID
	Addr      uint64 // buffer address in the posting process
	Len       uint64 // bytes

	// Collective fields (KindColl; CollSeq also on KindCollPart). See Coll
	// for what Addr, Len and RAddr mean. Peer and Tag carry other values on
	// some descriptors; read and write those through the accessors that name
	// them, never the fields: Root (a rooted collective), Color and Key
	// (CollSplit; DupGrant in Op), GroupTag, GroupRank, GroupSize and GroupID (CollGroup),
	// Dir (KindCollPart), Withdraws (KindCancel), and CollSeq on a send or
	// receive through Pair.
	Coll    Coll
	Op      uint8  // reduction operation (internal/reduce.Op)
	DType   uint8  // element type (internal/reduce.Type); on a send or receive its type signature (see below)
	InPlace bool   // MPI_IN_PLACE: the rank's own contribution is already in RAddr
	CollSeq uint32 // per-rank count of collectives on Comm, from 1; on a send or receive its Pair; see Persist
	// Persist: a start of a persistent collective (KindColl, KindCollPart),
	// matched in a space of its own: CollSeq is then its PersistKey.
	Persist bool
	RAddr   uint64 // receive buffer address

	// A reduction with a user operation runs in the runtime as a Gather (then
	// a fold in a rank, then a Bcast or Scatter); the Gather's descriptor
	// carries the operation's identity (UserOp, 1..65535: a hash of its name,
	// element type and commutativity, see mpiapi.NewOp) and the
	// call the user made (UserColl, a collective that Reduces), so that MSM
	// checks that every member passed the same operation. Both are 0 on every
	// other descriptor.
	UserOp   uint16
	UserColl Coll
}

// The type signature of a send or receive (KindSend, KindRecv) is DType:
// the internal/reduce.Type of every element of the buffer, whose element
// count is then Len / the type's size; 0 is unchecked (a buffer of several
// element kinds, or one of no Go element type), and Uint8 is bytes
// (MPI_BYTE, MPI_PACKED, a Go []byte), which match anything. MSM completes
// a match whose two checked signatures differ with ErrType (package
// scheduler, sig.go); a message shorter than its receive has a prefix of
// the receive's signature, which is legal, so only the kinds are compared
// and the lengths go through the truncation check as before.

// Root is the root's world rank of a rooted collective (KindColl with
// Coll.Rooted()); it travels in Peer.
func (d Descriptor) Root() Rank { return d.Peer }

// SetRoot makes r (a world rank) the root of a rooted collective.
func (d *Descriptor) SetRoot(r Rank) { d.Peer = r }

// Color is a CollSplit descriptor's color (UndefinedColor: the rank joins
// no new communicator); it travels in Tag.
func (d Descriptor) Color() int32 { return d.Tag }

// Key is a CollSplit descriptor's key, which orders the members of the new
// communicator; it travels in Peer.
func (d Descriptor) Key() int32 { return int32(d.Peer) }

// SetSplit gives a CollSplit descriptor its color and key.
func (d *Descriptor) SetSplit(color, key int32) { d.Tag, d.Peer = color, Rank(key) }

// Lives is the number of live communicators the posting rank belongs to
// once the CollSplit or CollGroup descriptor d makes it one more (the world
// included; 0: not counted, the descriptor makes the rank none or a test
// leaves it out). The rank counts them itself, in its program's order
// (mpiapi: +1 when it posts a creation that gives it a communicator, -1 when
// it posts a free or learns that a creation was refused), so the scheduler's
// proto.CommsMax decision depends on no timing. It travels in Len on a
// CollSplit and in Op (low byte) and DType (high byte) on a CollGroup,
// whose other fields are taken (saturated at 65535).
func (d Descriptor) Lives() uint32 {
	if d.Coll == CollGroup {
		return uint32(d.Op) | uint32(d.DType)<<8
	}
	return uint32(d.Len)
}

// SetLives gives a CollSplit or CollGroup descriptor its Lives; set the
// group's fields (SetGroup) first.
func (d *Descriptor) SetLives(n uint32) {
	if d.Coll == CollGroup {
		n = min(n, 0xffff)
		d.Op, d.DType = uint8(n), uint8(n>>8)
		return
	}
	d.Len = uint64(n)
}

// DupGrant reports whether a CollSplit descriptor asks for a grant of
// local duplicates (mpiapi's blocking Comm_dup): when every member asks and
// the Split makes a duplicate of its parent, the scheduler reserves the ids
// that follow the new one for the parent's next duplicates, which its
// members then make without the runtime (Completion.NewCommDups; scheduler
// doc.go, "Local duplicates"). It travels in Op, unused by a Split.
func (d Descriptor) DupGrant() bool { return d.Coll == CollSplit && d.Op == 1 }

// SetDupGrant makes a CollSplit descriptor ask for a grant of local
// duplicates.
func (d *Descriptor) SetDupGrant() { d.Op = 1 }

// GroupTag is the user's tag of a CollGroup descriptor
// (MPI_Comm_create_group's tag); it travels in Tag.
func (d Descriptor) GroupTag() int32 { return d.Tag }

// GroupRank is the caller's rank in the group a CollGroup descriptor makes
// a communicator of (not a world rank); it travels in Peer.
func (d Descriptor) GroupRank() int32 { return int32(d.Peer) }

// GroupSize is the number of ranks in a CollGroup descriptor's group; it
// travels in Len.
func (d Descriptor) GroupSize() uint64 { return d.Len }

// GroupID is the GroupHash of a CollGroup descriptor's group (its world
// ranks in order); it travels in Addr.
func (d Descriptor) GroupID() uint64 { return d.Addr }

// SetGroup gives a CollGroup descriptor the user's tag, the caller's rank
// in the group, the group's size and its GroupHash.
func (d *Descriptor) SetGroup(tag, rank int32, size int, id uint64) {
	d.Tag, d.Peer, d.Len, d.Addr = tag, Rank(rank), uint64(size), id
}

// Part is the KindCollPart descriptor of one per-peer block: dir is
// PartSend or PartRecv, peer the other rank (a world rank), addr and n the
// block in the posting rank. The poster fills in Comm, CollSeq and Req.
func Part(dir int32, peer Rank, addr, n uint64) Descriptor {
	return Descriptor{Kind: KindCollPart, Tag: dir, Peer: peer, Addr: addr, Len: n}
}

// Dir is a KindCollPart's direction, PartSend or PartRecv; it travels in
// Tag.
func (d Descriptor) Dir() int32 { return d.Tag }

// Withdraws is what a KindCancel withdraws, CancelRecv or CancelSend; it
// travels in Tag.
func (d Descriptor) Withdraws() int32 { return d.Tag }

// SetWithdraws says what a KindCancel withdraws: CancelRecv or CancelSend.
func (d *Descriptor) SetWithdraws(what int32) { d.Tag = what }

// Pair is the pair number of a partitioned send or receive (KindSend,
// KindRecv: one start of an MPI_Psend_init or MPI_Precv_init request): k
// for the poster's k-th partitioned initialization call with this Comm,
// peer and tag (from 1), 0 on every other send, receive and probe. A send
// matches only a receive of the same Pair, so partitioned operations match
// only each other, in the order of their initialization calls (MPI 5.0
// §4.2), and never a plain receive, probe or wildcard. It travels in
// CollSeq.
func (d Descriptor) Pair() uint32 {
	if d.Kind == KindSend || d.Kind == KindRecv {
		return d.CollSeq
	}
	return 0
}

// SetPair gives a send or receive its pair number (0: not partitioned).
func (d *Descriptor) SetPair(k uint32) { d.CollSeq = k }

// PersistKey is the CollSeq of a persistent collective's step (Persist
// set): k (the index of the MPI_X_init call among the communicator's
// persistent collective initializations, from 1) in the high 16 bits and
// step (the count of runtime collectives its starts have posted, from 1:
// one per start, two for a reduction with a user operation) in the low 16,
// both modulo 2^16. Members match by initialization order, as MPI 4.0
// §6.13 says, not by the order of their starts, and never an ordinary
// collective of Comm (which keeps its own count). The wrap is harmless: a
// request's starts follow one another, and two requests whose k differ by
// 65536 would collide only if both were in flight at the same step.
func PersistKey(k, step uint32) uint32 { return k<<16 | step&0xffff }

// PersistIndex is k of a persistent collective's descriptor (PersistKey), modulo 2^16.
func (d Descriptor) PersistIndex() uint32 { return d.CollSeq >> 16 }

// PersistStep is the step of a persistent collective's descriptor (PersistKey), modulo 2^16.
func (d Descriptor) PersistStep() uint32 { return d.CollSeq & 0xffff }

// CollCall names a collective descriptor's place among its communicator's
// collectives, for messages: "collective call #n", or for a persistent
// collective "persistent collective #k (its k-th init call), step s".
func (d Descriptor) CollCall() string {
	if d.Persist {
		return fmt.Sprintf("persistent collective #%d (in initialization order), step %d", d.PersistIndex(), d.PersistStep())
	}
	return fmt.Sprintf("collective call #%d", d.CollSeq)
}

// DescriptorSize is the encoded size of a Descriptor.
const DescriptorSize = 72

// IsColl reports whether d belongs to a collective.
func (d Descriptor) IsColl() bool { return d.Kind == KindColl || d.Kind == KindCollPart }

// Coll says which collective a KindColl descriptor enters. The buffers, per
// collective (bytes; "block" = one member's share):
//
//	Barrier, Free         none
//	Bcast                 Addr, Len: the buffer (root sends, others receive)
//	Reduce, Allreduce,
//	Scan, Exscan          Addr: send, RAddr: receive, Len: vector bytes
//	Gather, Allgather     Addr, Len: own block; RAddr: p blocks (Gather: root only)
//	Scatter               Addr: p blocks (root); RAddr, Len: own block
//	Alltoall              Addr: p blocks; RAddr: p blocks; Len: one block
//	Gatherv, Allgatherv   Addr, Len: own block; receive blocks as PartRecv parts
//	Scatterv              root: PartSend parts; RAddr, Len: own block
//	Alltoallv             PartSend and PartRecv parts, one per member each
//	Reduce_scatter        Addr, Len: the whole vector; one PartRecv: own block
//	Split                 Color (UndefinedColor: none), Key; RAddr: room
//	                      for the new group's world ranks (4 bytes each)
//	Group                 MPI_Comm_create_group: posted by the group's members only.
//	                      GroupTag: the user's tag; GroupRank: the caller's rank in
//	                      the group; GroupSize: the group's size; GroupID: GroupHash
//	                      of its world ranks; RAddr: room for them (4 bytes each);
//	                      CollSeq: the caller's count of such calls with this Comm,
//	                      tag and hash (the parent's own collective count is not used)
type Coll uint8

// GroupHash identifies a group (its world ranks in order) in a CollGroup
// descriptor: FNV-1a over the size and the ranks.
func GroupHash(ranks []Rank) uint64 {
	h := uint64(14695981039346656037)
	mix := func(v uint32) {
		for i := 0; i < 4; i++ {
			h ^= uint64(byte(v >> (8 * i)))
			h *= 1099511628211
		}
	}
	mix(uint32(len(ranks)))
	for _, r := range ranks {
		mix(uint32(r))
	}
	return h
}

// UndefinedColor is MPI_UNDEFINED as the color of a Split descriptor
// (Descriptor.Color): the rank joins no new communicator.
const UndefinedColor int32 = -1

const (
	CollBarrier Coll = iota + 1
	CollBcast
	CollReduce
	CollAllreduce
	CollGather
	CollGatherv
	CollScatter
	CollScatterv
	CollAllgather
	CollAllgatherv
	CollAlltoall
	CollAlltoallv
	CollReduceScatter
	CollScan
	CollExscan
	CollSplit
	CollFree
	CollGroup
	collEnd
)

var collNames = [...]string{"", "barrier", "bcast", "reduce", "allreduce", "gather", "gatherv", "scatter",
	"scatterv", "allgather", "allgatherv", "alltoall", "alltoallv", "reduce_scatter", "scan", "exscan",
	"comm_split", "comm_free", "comm_create_group"}

func (c Coll) String() string {
	if c >= 1 && c < collEnd {
		return collNames[c]
	}
	return fmt.Sprintf("coll(%d)", uint8(c))
}

// MPIName is the MPI call that posts c, e.g. "MPI_Allreduce".
func (c Coll) MPIName() string {
	if c < 1 || c >= collEnd {
		return c.String()
	}
	n := collNames[c]
	switch c {
	case CollSplit:
		return "MPI_Comm_split"
	case CollFree:
		return "MPI_Comm_free"
	case CollGroup:
		return "MPI_Comm_create_group"
	case CollReduceScatter:
		return "MPI_Reduce_scatter"
	case CollAllgatherv:
		return "MPI_Allgatherv"
	case CollAllgather:
		return "MPI_Allgather"
	case CollAllreduce:
		return "MPI_Allreduce"
	case CollAlltoall:
		return "MPI_Alltoall"
	case CollAlltoallv:
		return "MPI_Alltoallv"
	}
	return "MPI_" + strings.ToUpper(n[:1]) + n[1:]
}

// Rooted reports whether c has a root.
func (c Coll) Rooted() bool {
	switch c {
	case CollBcast, CollReduce, CollGather, CollGatherv, CollScatter, CollScatterv:
		return true
	}
	return false
}

// Reduces reports whether c applies a reduction operation.
func (c Coll) Reduces() bool {
	switch c {
	case CollReduce, CollAllreduce, CollReduceScatter, CollScan, CollExscan:
		return true
	}
	return false
}

// Describe renders a descriptor for traces.
func (d Descriptor) Describe() string {
	var b strings.Builder
	fmt.Fprintf(&b, "r%d#%d %s", d.Rank, d.Seq, d.Kind)
	switch d.Kind {
	case KindSend:
		fmt.Fprintf(&b, " to=%d", d.Peer)
	case KindColl:
		if d.Persist {
			fmt.Fprintf(&b, " %s#p%d.%d", d.Coll, d.PersistIndex(), d.PersistStep())
		} else {
			fmt.Fprintf(&b, " %s#%d", d.Coll, d.CollSeq)
		}
		if d.Comm != 0 {
			fmt.Fprintf(&b, " comm=%d", d.Comm)
		}
		if d.Coll.Rooted() {
			fmt.Fprintf(&b, " root=%d", d.Root())
		}
		if d.Coll != CollBarrier && d.Coll != CollFree && d.Coll != CollSplit && d.Coll != CollGroup {
			fmt.Fprintf(&b, " len=%d", d.Len)
		}
		return b.String()
	case KindCancel:
		what := "recv"
		if d.Withdraws() == CancelSend {
			what = "send"
		}
		fmt.Fprintf(&b, " %s req=%d peer=%d", what, d.Req, d.Peer)
		if d.Comm != 0 {
			fmt.Fprintf(&b, " comm=%d", d.Comm)
		}
		return b.String()
	case KindCollPart:
		dir := "send-to"
		if d.Dir() == PartRecv {
			dir = "recv-from"
		}
		if d.Persist {
			fmt.Fprintf(&b, " #p%d.%d", d.PersistIndex(), d.PersistStep())
		} else {
			fmt.Fprintf(&b, " #%d", d.CollSeq)
		}
		fmt.Fprintf(&b, " %s=%d len=%d", dir, d.Peer, d.Len)
		if d.Comm != 0 {
			fmt.Fprintf(&b, " comm=%d", d.Comm)
		}
		return b.String()
	default:
		if d.Peer == AnySource {
			b.WriteString(" from=any")
		} else {
			fmt.Fprintf(&b, " from=%d", d.Peer)
		}
	}
	if d.Tag == AnyTag && d.Kind != KindSend {
		b.WriteString(" tag=any")
	} else {
		fmt.Fprintf(&b, " tag=%d", d.Tag)
	}
	if d.Comm != 0 {
		fmt.Fprintf(&b, " comm=%d", d.Comm)
	}
	if d.Kind == KindSend || d.Kind == KindRecv {
		fmt.Fprintf(&b, " len=%d", d.Len)
		if k := d.Pair(); k != 0 {
			fmt.Fprintf(&b, " pair=%d", k)
		}
	}
	return b.String()
}

// Err codes carried in completions. They mirror MPI error classes so a C layer
// can map them to MPI_ERR_*.
type Err uint32

const (
	ErrNone     Err = 0
	ErrTruncate Err = 1 // message longer than the receive buffer
	ErrPeerGone Err = 2 // the peer process vanished before the data moved
	ErrInternal Err = 3
	// ErrNoComm: Split gave the rank MPI_UNDEFINED as color (no new communicator).
	ErrNoComm Err = 4
	// ErrCancelled: a KindCancel withdrew the request (MPI_Cancel); the
	// status says cancelled, the request itself did not fail.
	ErrCancelled Err = 5
	// ErrType: the send and the receive MSM matched have different type
	// signatures (see Descriptor); both complete with it, nothing moves, and
	// Completion.PeerType names the other side's element type.
	ErrType Err = 6
	// ErrTooManyComms: a communicator-making collective (CollSplit,
	// CollGroup) would have made a rank a member of more than CommsMax live
	// communicators (its descriptor's Lives is over CommsMax); every caller
	// of that collective completes with it and no communicator is made.
	// Source is the first such rank (world rank), Count the live
	// communicators it belongs to already (Lives - 1).
	ErrTooManyComms Err = 7
)

// CommsMax bounds the live communicators a rank belongs to (the world
// included; a communicator is live on a rank from its posting of the
// collective that makes it until its posting of its free, as the rank
// itself counts them: Descriptor.Lives). It stands for MPICH's context ids
// (2048 in MPICH 4.0: 64 mask words of 32 bits): twice that, because an
// intercommunicator of the C layer takes three runtime communicators (its
// union, the union's collective twin, the local group's duplicate), so a
// program that fits MPICH's ids fits here. Open MPI's limit is higher (its
// communicator ids are array indices); a program that creates communicators
// without freeing them gets an error here, as under MPICH (a duplicate
// made from a grant, Completion.NewCommDups, is never refused: a rank can
// pass the bound by a grant's remainder; scheduler doc.go). Ids of freed
// communicators are not reused (they are 32 bits, never exhausted by a
// run); the slots they held are.
const CommsMax = 4096

func (e Err) String() string {
	switch e {
	case ErrNone:
		return "ok"
	case ErrTruncate:
		return "truncated"
	case ErrPeerGone:
		return "peer gone"
	case ErrInternal:
		return "internal"
	case ErrNoComm:
		return "no communicator"
	case ErrCancelled:
		return "cancelled"
	case ErrType:
		return "type signature mismatch"
	case ErrTooManyComms:
		return "too many communicators"
	}
	return fmt.Sprintf("err(%d)", uint32(e))
}

// Completion tells a rank that its request Req finished.
type Completion struct {
	Rank   Rank
	Req    uint32
	Kind   Kind
	Source Rank   // matched source (recv, probe); see NewCommCompletion for a Split's
	Tag    int32  // matched tag; see NewCommCompletion for a Split's
	Count  uint64 // bytes delivered (recv), sent (send) or pending (probe); see NewCommCompletion
	Found  bool   // iprobe: a message was pending
	Err    Err
	// PeerType: with ErrType, the other side's element type (DType).
	PeerType uint8
}

// NewCommCompletion is the completion of rank's request req for a
// collective that makes a communicator (CollSplit, CollGroup): the new
// communicator's id, the rank's rank in it and its size. They travel in
// Count, Tag and Source; read them with NewComm, NewCommRank and
// NewCommSize.
func NewCommCompletion(rank Rank, req uint32, id CommID, index, size int) Completion {
	return Completion{Rank: rank, Req: req, Kind: KindColl, Source: Rank(size), Tag: int32(index), Count: uint64(id)}
}

// NewComm is the id of the communicator a NewCommCompletion made.
func (c Completion) NewComm() CommID { return CommID(c.Count) }

// NewCommDups is the number of local duplicates a NewCommCompletion grants
// (0 but for a CollSplit that asked, Descriptor.DupGrant): the parent's
// next NewCommDups duplicates take the ids NewComm+1, NewComm+2, ... in
// the order its members make them, without the runtime. It travels in the
// high 32 bits of Count.
func (c Completion) NewCommDups() uint32 { return uint32(c.Count >> 32) }

// SetNewCommDups gives a NewCommCompletion its grant of local duplicates.
func (c *Completion) SetNewCommDups(n uint32) { c.Count = uint64(uint32(c.Count)) | uint64(n)<<32 }

// NewCommRank is the completing rank's rank in the communicator a
// NewCommCompletion made.
func (c Completion) NewCommRank() int { return int(c.Tag) }

// NewCommSize is the size of the communicator a NewCommCompletion made.
func (c Completion) NewCommSize() int { return int(c.Source) }

func (c Completion) Describe() string {
	s := fmt.Sprintf("done r%d req=%d %s", c.Rank, c.Req, c.Kind)
	switch c.Kind {
	case KindRecv, KindProbe:
		s += fmt.Sprintf(" src=%d tag=%d count=%d", c.Source, c.Tag, c.Count)
	case KindIprobe:
		if c.Found {
			s += fmt.Sprintf(" found src=%d tag=%d count=%d", c.Source, c.Tag, c.Count)
		} else {
			s += " none"
		}
	case KindSend:
		s += fmt.Sprintf(" count=%d", c.Count)
	}
	if c.Err != ErrNone {
		s += " err=" + c.Err.String()
	}
	return s
}

// Stages is the number of transmission stages of a slice (Chunk.Stage).
const Stages = 3

// Chunk is the part of a matched message that moves in one slice.
type Chunk struct {
	Xfer     uint64 // transfer id, unique in the job
	Src, Dst Rank
	SrcNode  NodeID
	DstNode  NodeID
	SendSeq  uint64 // the send descriptor's Seq (finds inline payloads)
	RecvReq  uint32 // point-to-point: the receive descriptor's Req (names it in pull orders)
	Inline   bool
	Last     bool   // the transfer's final chunk
	SrcAddr  uint64 // already offset
	DstAddr  uint64 // already offset
	Off      uint64 // offset inside the message
	Len      uint64
	// Span, when not 0, is the number of slices (at least 2), from this
	// one, over which the chunk may be copied (a span: package scheduler's
	// doc.go); it must be in the receiver's buffer by the end of the last.
	Span uint32
	// Collective chunks (Xfer 0). Stage 0 moves before the reduce
	// microphase's folds, stage 1 after them, stage 2 copies within a node
	// what stage 1 brought into its staging area. SrcAcc/DstAcc: the source or
	// destination is the node's collective staging area (the address is an
	// offset into it) instead of a rank's memory.
	Stage          uint8
	SrcAcc, DstAcc bool
}

func (c Chunk) Describe() string {
	s := fmt.Sprintf("chunk x%d r%d->r%d off=%d len=%d", c.Xfer, c.Src, c.Dst, c.Off, c.Len)
	if c.Xfer == 0 {
		src, dst := fmt.Sprintf("r%d", c.Src), fmt.Sprintf("r%d", c.Dst)
		if c.SrcAcc {
			src = fmt.Sprintf("acc%d@%d", c.SrcNode, c.SrcAddr)
		}
		if c.DstAcc {
			dst = fmt.Sprintf("acc%d@%d", c.DstNode, c.DstAddr)
		}
		s = fmt.Sprintf("coll chunk stage%d %s->%s len=%d", c.Stage, src, dst, c.Len)
	}
	if c.SrcNode != c.DstNode {
		s += fmt.Sprintf(" n%d->n%d", c.SrcNode, c.DstNode)
	}
	if c.Inline {
		s += " inline"
	}
	if c.Span != 0 {
		s += fmt.Sprintf(" span=%d", c.Span)
	}
	return s
}

// CallNames are the blocking calls a rank can be waiting in; a rank's status
// byte (see Status) is an index into it. The last, CallSendMatch, is
// MPI_Send again.
var CallNames = [...]string{"", "MPI_Send", "MPI_Recv", "MPI_Sendrecv", "MPI_Wait", "MPI_Waitall",
	"MPI_Waitany", "MPI_Probe", "MPI_Iprobe", "MPI_Barrier", "MPI_Bcast", "MPI_Reduce", "MPI_Allreduce",
	"MPI_Gather", "MPI_Gatherv", "MPI_Scatter", "MPI_Scatterv", "MPI_Allgather", "MPI_Allgatherv",
	"MPI_Alltoall", "MPI_Alltoallv", "MPI_Reduce_scatter", "MPI_Scan", "MPI_Exscan", "MPI_Comm_split",
	"MPI_Comm_free", "MPI_Comm_dup", "MPI_Comm_create", "MPI_Testall", "MPI_Test", "MPI_Waitsome",
	"MPI_Ssend", "MPI_Mprobe", "MPI_Mrecv", "MPI_Testany", "MPI_Testsome", "MPI_Finalize",
	"MPI_Send"} // CallSendMatch: keep it last

// CallSendMatch is the status byte of a rank blocked in MPI_Send waiting
// for a receive to match one of its eager sends (package mpiapi's
// eager_max), not for the send's own completion (CallCode("MPI_Send")).
// It reads as MPI_Send; deadlock detection counts the rank's unmatched
// eager sends as what it waits for only with this code (scheduler's
// waitfor.go).
const CallSendMatch = uint8(len(CallNames) - 1)

// Settling reports whether status byte s is a rank blocked in a Test-family
// call that, in deterministic mode, waits until its requests complete or the
// job is quiescent (MPI_Test, MPI_Testall, MPI_Testany, MPI_Testsome; mpiapi
// also shows MPI_Waitany and MPI_Waitsome as MPI_Testany and MPI_Testsome
// once one of their requests has completed). The runtime releases such a
// rank with a KindRelease completion when nothing else can progress.
func Settling(s uint8) bool {
	if !StatusBlocked(s) {
		return false
	}
	switch CallNames[StatusCode(s)] {
	case "MPI_Test", "MPI_Testall", "MPI_Testany", "MPI_Testsome":
		return true
	}
	return false
}

// CallCode is the status byte of a rank blocked in call (0 if unknown).
func CallCode(call string) uint8 {
	for i, n := range CallNames {
		if n == call {
			return uint8(i)
		}
	}
	return 0
}

// Rank status bytes. A rank's agent computes one per rank at every strobe and
// sends it with the DEM; deadlock detection (internal/core) reads them. Each
// says whether the rank can still make progress on its own:
//
//	StatusRunning            initialised, not in a blocking call: it can post
//	1 .. len(CallNames)-1    blocked in that call, and it has looked at every
//	                         completion published to it since: it waits for
//	                         something not yet complete
//	StatusWoken|code         blocked in that call, but a completion was published
//	                         to it that it has not looked at yet (it has not run
//	                         since: descheduled, paging, stopped): it can go on
//	StatusStarting           alive, has not called MPI_Init yet: it may still post
//	StatusFinalized          called MPI_Finalize: it posts nothing more
//	StatusNotMPI             exited without calling MPI_Init: it posts nothing
//
// StatusNoPull may be added to the first three (running, blocked, woken): the
// rank serves no pull orders (it failed one, or its node's Yama setting
// refuses sibling reads: nicthread's doc.go), so the scheduler gives it no
// span; it is exchanged with the byte, so every node decides alike. The
// functions below read the byte with or without it. Any other value is
// invalid (CheckStatus).
const (
	StatusRunning   uint8 = 0
	StatusNoPull    uint8 = 0x40
	StatusWoken     uint8 = 0x80
	StatusStarting  uint8 = 0xFD
	StatusFinalized uint8 = 0xFE
	StatusNotMPI    uint8 = 0xFF
)

// StatusCode is s without StatusNoPull.
func StatusCode(s uint8) uint8 {
	if s >= StatusStarting {
		return s
	}
	return s &^ StatusNoPull
}

// StatusServesNoPulls reports whether s carries StatusNoPull.
func StatusServesNoPulls(s uint8) bool { return s < StatusStarting && s&StatusNoPull != 0 }

// CheckStatus reports whether s is a valid status byte.
func CheckStatus(s uint8) error {
	c := StatusCode(s)
	switch {
	case int(c) < len(CallNames), c > StatusWoken && int(c-StatusWoken) < len(CallNames),
		s == StatusStarting, s == StatusFinalized, s == StatusNotMPI:
		return nil
	}
	return fmt.Errorf("status byte %#x, want 0 (running), 1 .. %d (blocked in a call), %#x .. %#x (woken in a call), any of these plus %#x (serves no pull orders), %#x (starting), %#x (finalized) or %#x (exited without MPI)",
		s, len(CallNames)-1, StatusWoken+1, int(StatusWoken)+len(CallNames)-1, StatusNoPull, StatusStarting, StatusFinalized, StatusNotMPI)
}

// StatusBlocked reports whether s is a rank blocked in a call with nothing
// published to it that it has not looked at: a rank that cannot go on until
// another rank posts something.
func StatusBlocked(s uint8) bool {
	s = StatusCode(s)
	return s != StatusRunning && int(s) < len(CallNames)
}

// StatusInert reports whether s is a rank that will never post again
// (finalized, or exited without MPI).
func StatusInert(s uint8) bool { return s == StatusFinalized || s == StatusNotMPI }

// DescribeStatus renders a status byte.
func DescribeStatus(s uint8) string {
	if StatusServesNoPulls(s) && CheckStatus(s) == nil {
		return DescribeStatus(StatusCode(s)) + ", serves no pull orders"
	}
	switch {
	case s == StatusRunning:
		return "running"
	case s == StatusFinalized:
		return "finalized"
	case s == StatusNotMPI:
		return "exited without calling MPI_Init"
	case s == StatusStarting:
		return "alive, has not called MPI_Init yet"
	case int(s) < len(CallNames):
		return "in " + CallNames[s]
	case s > StatusWoken && int(s-StatusWoken) < len(CallNames):
		return "in " + CallNames[s-StatusWoken] + ", woken: a completion is waiting for it to run"
	}
	return fmt.Sprintf("status %#x", s)
}
