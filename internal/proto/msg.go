package proto

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"
)

// MsgType names a control- or data-plane frame.
type MsgType uint8

const (
	MsgHello   MsgType = 1  // endpoint introduces itself: Node
	MsgDEM     MsgType = 2  // master → agents: the strobe; slice Slice begins with DEM (Code DEMStopped: the gang runs another job in it)
	MsgDEMDone MsgType = 3  // agent → master: descriptors drained this slice
	MsgMSM     MsgType = 4  // master → agents: every node's descriptors, node order (DEM sync); run MSM
	MsgMSMDone MsgType = 5  // agent → master: MSM finished
	MsgTX      MsgType = 6  // master → agents: start transmission (MSM sync)
	MsgTXDone  MsgType = 7  // agent → master: transmission finished
	MsgData    MsgType = 8  // agent → agent: payload of plan chunk Index
	MsgStop    MsgType = 9  // master → agents: shut down (Code, Text)
	MsgFail    MsgType = 10 // agent → master: job must abort (Code=rank, Text=why)
	MsgHold    MsgType = 11 // master → agents, outside the slice's exchange: the gang holds the job in slice Slice; stop its ranks through that slice's MsgDEM and until a MsgDEM says it runs
	msgTypeMax         = MsgHold
)

// DEMStopped in a MsgDEM's Code: the gang scheduler has descheduled the job
// for this slice (its ranks are stopped; its data still moves). 0: it runs.
const DEMStopped int32 = 1

var msgNames = [...]string{"", "hello", "dem", "demdone", "msm", "msmdone", "tx", "txdone", "data", "stop", "fail", "hold"}

func (t MsgType) String() string {
	if t >= 1 && t <= msgTypeMax {
		return msgNames[t]
	}
	return fmt.Sprintf("msg(%d)", uint8(t))
}

// Msg is one frame. Fields a type does not use stay zero.
type Msg struct {
	Type    MsgType
	Slice   SliceID
	Node    NodeID
	Index   uint32
	Count   uint32
	Code    int32
	Text    string
	Descs   []Descriptor
	Payload []byte
}

// Bounds on what a decoder accepts.
const (
	MaxFrame       = 64 << 20 // bytes of one frame body
	MaxText        = 4096
	frameHeaderLen = 5
	msgFixedLen    = 8 + 4 + 4 + 4 + 4 + 2 + 4 + 4
)

// ErrMalformed is returned for frames that cannot be decoded.
var ErrMalformed = errors.New("proto: malformed frame")

// MalformedError says what was wrong with a frame; it matches ErrMalformed.
type MalformedError struct{ Why string }

func (e *MalformedError) Error() string        { return "proto: malformed frame: " + e.Why }
func (e *MalformedError) Is(target error) bool { return target == ErrMalformed }

func malformed(format string, a ...any) error {
	return &MalformedError{Why: fmt.Sprintf(format, a...)}
}

// AppendDescriptor appends the fixed-size encoding of d.
func AppendDescriptor(b []byte, d Descriptor) []byte {
	var flags uint8
	if d.Inline {
		flags |= 1
	}
	if d.InPlace {
		flags |= 2
	}
	if d.Persist {
		flags |= 4
	}
	if d.Eager {
		flags |= 8
	}
	b = append(b, uint8(d.Kind), flags, uint8(d.Coll), d.Op)
	b = binary.LittleEndian.AppendUint32(b, uint32(d.Comm))
	b = binary.LittleEndian.AppendUint32(b, uint32(d.Rank))
	b = binary.LittleEndian.AppendUint32(b, uint32(d.Peer))
	b = binary.LittleEndian.AppendUint32(b, uint32(d.Tag))
	b = binary.LittleEndian.AppendUint32(b, d.Req)
	b = binary.LittleEndian.AppendUint64(b, d.Seq)
	b = binary.LittleEndian.AppendUint64(b, uint64(d.PostSlice))
	b = binary.LittleEndian.AppendUint64(b, d.Addr)
	b = binary.LittleEndian.AppendUint64(b, d.Len)
	b = binary.LittleEndian.AppendUint64(b, d.RAddr)
	b = binary.LittleEndian.AppendUint32(b, d.CollSeq)
	b = append(b, d.DType)
	b = binary.LittleEndian.AppendUint16(b, d.UserOp)
	b = append(b, uint8(d.UserColl))
	return b
}

// DecodeDescriptor reads one descriptor from the first DescriptorSize bytes of b.
func DecodeDescriptor(b []byte) (Descriptor, error) {
	if len(b) < DescriptorSize {
		return Descriptor{}, malformed("descriptor needs %d bytes, have %d", DescriptorSize, len(b))
	}
	d := Descriptor{
		Kind:      Kind(b[0]),
		Inline:    b[1]&1 != 0,
		InPlace:   b[1]&2 != 0,
		Persist:   b[1]&4 != 0,
		Eager:     b[1]&8 != 0,
		Coll:      Coll(b[2]),
		Op:        b[3],
		Comm:      CommID(binary.LittleEndian.Uint32(b[4:])),
		Rank:      Rank(binary.LittleEndian.Uint32(b[8:])),
		Peer:      Rank(binary.LittleEndian.Uint32(b[12:])),
		Tag:       int32(binary.LittleEndian.Uint32(b[16:])),
		Req:       binary.LittleEndian.Uint32(b[20:]),
		Seq:       binary.LittleEndian.Uint64(b[24:]),
		PostSlice: SliceID(binary.LittleEndian.Uint64(b[32:])),
		Addr:      binary.LittleEndian.Uint64(b[40:]),
		Len:       binary.LittleEndian.Uint64(b[48:]),
		RAddr:     binary.LittleEndian.Uint64(b[56:]),
		CollSeq:   binary.LittleEndian.Uint32(b[64:]),
		DType:     b[68],
		UserOp:    binary.LittleEndian.Uint16(b[69:]),
		UserColl:  Coll(b[71]),
	}
	if d.Kind < KindSend || d.Kind > KindCancel {
		return Descriptor{}, malformed("descriptor kind %d not in 1..7", b[0])
	}
	if b[1] > 15 {
		return Descriptor{}, malformed("descriptor flags %#x not within 0xf", b[1])
	}
	if d.Eager && (d.Kind != KindSend || !d.Inline) {
		return Descriptor{}, malformed("eager flag on a %v descriptor that is not an inline send", d.Kind)
	}
	if d.Persist && !d.IsColl() {
		return Descriptor{}, malformed("persistent collective flag on a %v descriptor", d.Kind)
	}
	if d.Kind == KindColl && (d.Coll < 1 || d.Coll >= collEnd) {
		return Descriptor{}, malformed("collective code %d not in 1..%d", b[2], collEnd-1)
	}
	if (d.UserOp == 0) != (d.UserColl == 0) || (d.UserColl != 0 && (d.Kind != KindColl || !d.UserColl.Reduces())) {
		return Descriptor{}, malformed("user operation %d for collective code %d on a %v descriptor: want both 0, or an operation with a reducing collective on a coll descriptor", d.UserOp, b[71], d.Kind)
	}
	return d, nil
}

// AppendFrame appends m as one frame ([type][len][body]).
func AppendFrame(b []byte, m *Msg) []byte {
	start := len(b)
	b = append(b, uint8(m.Type), 0, 0, 0, 0)
	b = binary.LittleEndian.AppendUint64(b, uint64(m.Slice))
	b = binary.LittleEndian.AppendUint32(b, uint32(m.Node))
	b = binary.LittleEndian.AppendUint32(b, m.Index)
	b = binary.LittleEndian.AppendUint32(b, m.Count)
	b = binary.LittleEndian.AppendUint32(b, uint32(m.Code))
	text := m.Text
	if len(text) > MaxText {
		text = text[:MaxText]
	}
	b = binary.LittleEndian.AppendUint16(b, uint16(len(text)))
	b = append(b, text...)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(m.Descs)))
	for _, d := range m.Descs {
		b = AppendDescriptor(b, d)
	}
	b = binary.LittleEndian.AppendUint32(b, uint32(len(m.Payload)))
	b = append(b, m.Payload...)
	binary.LittleEndian.PutUint32(b[start+1:], uint32(len(b)-start-frameHeaderLen))
	return b
}

// DecodeBody decodes a frame body of type t into m. m.Payload aliases body,
// and m.Descs reuses the storage of m's previous Descs (so decoding into the
// same Msg every slice allocates nothing): copy them to keep them.
func DecodeBody(t MsgType, body []byte, m *Msg) error {
	descs := m.Descs[:0]
	if t < 1 || t > msgTypeMax {
		return malformed("message type %d not in 1..%d", uint8(t), uint8(msgTypeMax))
	}
	if len(body) < msgFixedLen {
		return malformed("%s body is %d bytes, shorter than the fixed part (%d)", t, len(body), msgFixedLen)
	}
	*m = Msg{Type: t}
	m.Slice = SliceID(binary.LittleEndian.Uint64(body))
	m.Node = NodeID(binary.LittleEndian.Uint32(body[8:]))
	m.Index = binary.LittleEndian.Uint32(body[12:])
	m.Count = binary.LittleEndian.Uint32(body[16:])
	m.Code = int32(binary.LittleEndian.Uint32(body[20:]))
	p := 24
	tl := int(binary.LittleEndian.Uint16(body[p:]))
	p += 2
	if tl > MaxText || p+tl > len(body) {
		return malformed("%s text length %d exceeds the body or MaxText (%d)", t, tl, MaxText)
	}
	m.Text = string(body[p : p+tl])
	p += tl
	if p+4 > len(body) {
		return malformed("%s body ends before the descriptor count", t)
	}
	nd := int(binary.LittleEndian.Uint32(body[p:]))
	p += 4
	if nd < 0 || nd > (len(body)-p)/DescriptorSize {
		return malformed("%s claims %d descriptors, body holds at most %d", t, nd, (len(body)-p)/DescriptorSize)
	}
	if nd > 0 {
		m.Descs = slices.Grow(descs, nd)[:nd]
		for i := range m.Descs {
			d, err := DecodeDescriptor(body[p:])
			if err != nil {
				return err
			}
			m.Descs[i] = d
			p += DescriptorSize
		}
	}
	if p+4 > len(body) {
		return malformed("%s body ends before the payload length", t)
	}
	pl := int(binary.LittleEndian.Uint32(body[p:]))
	p += 4
	if pl != len(body)-p {
		return malformed("%s payload length %d, body has %d bytes left", t, pl, len(body)-p)
	}
	if pl > 0 {
		m.Payload = body[p:]
	}
	return nil
}

// ReadFrame reads one frame from r into m, using *buf as scratch (grown as
// needed, never beyond MaxFrame). m.Payload aliases *buf until the next call.
func ReadFrame(r io.Reader, buf *[]byte, m *Msg) error {
	// The header is read into the scratch buffer too: a local array would
	// escape through io.Reader and cost an allocation per frame.
	if cap(*buf) < frameHeaderLen {
		*buf = make([]byte, 4096)
	}
	hdr := (*buf)[:frameHeaderLen]
	if _, err := io.ReadFull(r, hdr); err != nil {
		return err
	}
	t, n := MsgType(hdr[0]), binary.LittleEndian.Uint32(hdr[1:])
	if n > MaxFrame {
		return malformed("frame body of %d bytes exceeds MaxFrame (%d)", n, MaxFrame)
	}
	if cap(*buf) < int(n) {
		*buf = make([]byte, n)
	}
	body := (*buf)[:n]
	if _, err := io.ReadFull(r, body); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return err
	}
	return DecodeBody(t, body, m)
}
