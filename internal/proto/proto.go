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
	KindSend    Kind = 1 // send Len bytes at Addr to Peer
	KindRecv    Kind = 2 // receive up to Len bytes at Addr from Peer
	KindProbe   Kind = 3 // wait until a message matching (Peer, Tag) is pending
	KindIprobe  Kind = 4 // say, in the next slice, whether such a message is pending
	KindBarrier Kind = 5 // enter a barrier on Comm; completes when every member has
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
	case KindBarrier:
		return "barrier"
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
	Inline    bool
	Comm      CommID
	Rank      Rank   // the posting rank
	Peer      Rank   // destination of a send; source (or AnySource) of a recv/probe
	Tag       int32  // AnyTag allowed for recv/probe
	Req       uint32 // request slot of the posting rank; completions name it
	Seq       uint64 // per-rank post order, from 1
	PostSlice SliceID
	Addr      uint64 // buffer address in the posting process
	Len       uint64 // bytes
}

// DescriptorSize is the encoded size of a Descriptor.
const DescriptorSize = 56

// Describe renders a descriptor for traces.
func (d Descriptor) Describe() string {
	var b strings.Builder
	fmt.Fprintf(&b, "r%d#%d %s", d.Rank, d.Seq, d.Kind)
	switch d.Kind {
	case KindSend:
		fmt.Fprintf(&b, " to=%d", d.Peer)
	case KindBarrier:
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
)

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
	}
	return fmt.Sprintf("err(%d)", uint32(e))
}

// Completion tells a rank that its request Req finished.
type Completion struct {
	Rank   Rank
	Req    uint32
	Kind   Kind
	Source Rank   // matched source (recv, probe)
	Tag    int32  // matched tag
	Count  uint64 // bytes delivered (recv), sent (send) or pending (probe)
	Found  bool   // iprobe: a message was pending
	Err    Err
}

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

// Chunk is the part of a matched message that moves in one slice.
type Chunk struct {
	Xfer     uint64 // transfer id, unique in the job
	Src, Dst Rank
	SrcNode  NodeID
	DstNode  NodeID
	SendSeq  uint64 // the send descriptor's Seq (finds inline payloads)
	Inline   bool
	Last     bool   // the transfer's final chunk
	SrcAddr  uint64 // already offset
	DstAddr  uint64 // already offset
	Off      uint64 // offset inside the message
	Len      uint64
}

func (c Chunk) Describe() string {
	s := fmt.Sprintf("chunk x%d r%d->r%d off=%d len=%d", c.Xfer, c.Src, c.Dst, c.Off, c.Len)
	if c.SrcNode != c.DstNode {
		s += fmt.Sprintf(" n%d->n%d", c.SrcNode, c.DstNode)
	}
	if c.Inline {
		s += " inline"
	}
	return s
}

// CallNames are the blocking calls a rank can be waiting in; a rank's status
// byte (see Status) is an index into it.
var CallNames = [...]string{"", "MPI_Send", "MPI_Recv", "MPI_Sendrecv", "MPI_Wait", "MPI_Waitall",
	"MPI_Waitany", "MPI_Probe", "MPI_Iprobe", "MPI_Barrier"}

// CallCode is the status byte of a rank blocked in call (0 if unknown).
func CallCode(call string) uint8 {
	for i, n := range CallNames {
		if n == call {
			return uint8(i)
		}
	}
	return 0
}

// Rank status bytes exchanged with every DEM: 0 running, 1..len(CallNames)-1
// blocked in that call, or one of these.
const (
	StatusRunning   uint8 = 0
	StatusFinalized uint8 = 0xFE // called MPI_Finalize
	StatusNotMPI    uint8 = 0xFF // never called MPI_Init (not an MPI participant)
)

// DescribeStatus renders a status byte.
func DescribeStatus(s uint8) string {
	switch {
	case s == StatusRunning:
		return "running"
	case s == StatusFinalized:
		return "finalized"
	case s == StatusNotMPI:
		return "not an MPI process"
	case int(s) < len(CallNames):
		return "in " + CallNames[s]
	}
	return fmt.Sprintf("status %d", s)
}
