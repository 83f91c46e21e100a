package replay

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
)

// Op is a record's kind (see the package comment).
type Op uint8

const (
	OpMatch  Op = 0x01
	OpProbe  Op = 0x02
	OpFlag   Op = 0x03
	OpIndex  Op = 0x04
	OpSome   Op = 0x05
	OpCancel Op = 0x06
	OpEnd    Op = 0x7F
)

func (o Op) String() string {
	switch o {
	case OpMatch:
		return "MATCH"
	case OpProbe:
		return "PROBE"
	case OpFlag:
		return "FLAG"
	case OpIndex:
		return "INDEX"
	case OpSome:
		return "SOME"
	case OpCancel:
		return "CANCEL"
	case OpSlice:
		return "SLICE"
	case OpIdle:
		return "IDLE"
	case OpEnd:
		return "END"
	}
	return fmt.Sprintf("op %#x", uint8(o))
}

// Call is the MPI call a record answers.
type Call uint8

const (
	CallRecv Call = 1 + iota
	CallIrecv
	CallSendrecv
	CallProbe
	CallIprobe
	CallTest
	CallTestall
	CallTestany
	CallWaitany
	CallTestsome
	CallWaitsome
	CallMprobe
	CallImprobe
	CallCancel
	callEnd
)

var callNames = [...]string{"", "MPI_Recv", "MPI_Irecv", "MPI_Sendrecv", "MPI_Probe", "MPI_Iprobe", "MPI_Test",
	"MPI_Testall", "MPI_Testany", "MPI_Waitany", "MPI_Testsome", "MPI_Waitsome", "MPI_Mprobe", "MPI_Improbe", "MPI_Cancel"}

func (c Call) String() string {
	if c > 0 && c < callEnd {
		return callNames[c]
	}
	return fmt.Sprintf("call %d", uint8(c))
}

// CallOf is the Call named name ("MPI_Recv"), or 0.
func CallOf(name string) Call {
	for i, n := range callNames {
		if i > 0 && n == name {
			return Call(i)
		}
	}
	return 0
}

// OpOf is the op that answers call c.
func OpOf(c Call) Op {
	switch c {
	case CallRecv, CallIrecv, CallSendrecv, CallProbe, CallMprobe:
		return OpMatch
	case CallIprobe, CallImprobe:
		return OpProbe
	case CallTest, CallTestall:
		return OpFlag
	case CallTestany, CallWaitany:
		return OpIndex
	case CallTestsome, CallWaitsome:
		return OpSome
	case CallCancel:
		return OpCancel
	}
	return 0
}

// Bounds of the format.
const (
	// MaxIndices is the most indices one SOME record holds.
	MaxIndices = 256
	// MaxRecord bounds the encoded size of one record: op, five varints,
	// MaxIndices varints.
	MaxRecord = 1 + 5*binary.MaxVarintLen64 + MaxIndices*binary.MaxVarintLen64
	// MaxTag bounds a recorded tag (mpiapi.TagUB).
	MaxTag = 1<<30 - 1
)

// Record is one logged outcome. Seq .. Seq+Run-1 are the logged calls it
// answers (Run is 1 for MATCH and END).
type Record struct {
	Op      Op
	Call    Call
	Seq     uint64 // the (first) logged call answered; for END: the rank's count of logged calls
	Run     uint64 // calls in a row with this answer, >= 1
	Flag    bool   // FLAG: the flag; PROBE: found; CANCEL: cancelled
	Source  int    // MATCH, PROBE found: communicator rank of the message
	Tag     int    // MATCH, PROBE found: its tag
	NReq    int    // INDEX, SOME: length of the request array
	Index   int    // INDEX: the completed request, -1: none
	Indices []int  // SOME: the completed requests, ascending
}

// Same reports whether r and o give the same answer (everything but Seq and Run).
func (r Record) Same(o Record) bool {
	return r.Op == o.Op && r.Call == o.Call && r.Flag == o.Flag && r.Source == o.Source && r.Tag == o.Tag &&
		r.NReq == o.NReq && r.Index == o.Index && slices.Equal(r.Indices, o.Indices)
}

// Outcome describes the answer for messages: "source 3 tag 5", "flag true",
// "index 2 of 4", "indices [0 2] of 4", "not found".
func (r Record) Outcome() string {
	switch r.Op {
	case OpMatch:
		return fmt.Sprintf("source %d tag %d", r.Source, r.Tag)
	case OpProbe:
		if !r.Flag {
			return "not found"
		}
		return fmt.Sprintf("found source %d tag %d", r.Source, r.Tag)
	case OpFlag:
		return fmt.Sprintf("flag %v", r.Flag)
	case OpIndex:
		if r.Index < 0 {
			return fmt.Sprintf("none of %d complete", r.NReq)
		}
		return fmt.Sprintf("index %d of %d", r.Index, r.NReq)
	case OpSome:
		return fmt.Sprintf("indices %v of %d", r.Indices, r.NReq)
	case OpCancel:
		if r.Flag {
			return "the cancel succeeded"
		}
		return "the cancel failed (the request completed)"
	case OpEnd:
		return fmt.Sprintf("finalized after %d logged calls", r.Seq)
	}
	return r.Op.String()
}

// Encoder appends records in the log's encoding; it carries the previous
// record's number from one record to the next (the stream of one rank).
type Encoder struct {
	prev uint64
}

// Append appends r (an END, or a record with a Call and Run >= 1; a SOME
// record of at most MaxIndices indices: see Split) to b.
func (e *Encoder) Append(b []byte, r Record) []byte {
	b = append(b, byte(r.Op))
	if r.Op == OpEnd {
		return binary.AppendUvarint(b, r.Seq)
	}
	b = binary.AppendVarint(b, int64(r.Seq-e.prev))
	e.prev = r.Seq
	switch r.Op {
	case OpMatch:
		b = append(b, byte(r.Call))
		b = binary.AppendVarint(b, int64(r.Source))
		b = binary.AppendVarint(b, int64(r.Tag))
	case OpProbe:
		b = append(b, byte(r.Call))
		b = binary.AppendUvarint(b, r.Run)
		b = appendBool(b, r.Flag)
		if r.Flag {
			b = binary.AppendVarint(b, int64(r.Source))
			b = binary.AppendVarint(b, int64(r.Tag))
		}
	case OpFlag:
		b = append(b, byte(r.Call))
		b = binary.AppendUvarint(b, r.Run)
		b = appendBool(b, r.Flag)
	case OpCancel:
		b = append(b, byte(r.Call))
		b = appendBool(b, r.Flag)
	case OpIndex:
		b = append(b, byte(r.Call))
		b = binary.AppendUvarint(b, r.Run)
		b = binary.AppendUvarint(b, uint64(r.NReq))
		b = binary.AppendVarint(b, int64(r.Index))
	case OpSome:
		if len(r.Indices) > MaxIndices {
			panic(fmt.Sprintf("replay: Append of a SOME record of %d indices, at most %d: split it with Split", len(r.Indices), MaxIndices))
		}
		b = append(b, byte(r.Call))
		b = binary.AppendUvarint(b, r.Run)
		b = binary.AppendUvarint(b, uint64(r.NReq))
		b = binary.AppendUvarint(b, uint64(len(r.Indices)))
		last := 0
		for _, i := range r.Indices {
			b = binary.AppendUvarint(b, uint64(i-last))
			last = i
		}
	default:
		panic(fmt.Sprintf("replay: Append of a record with op %v: the caller builds records of the ops this package defines", r.Op))
	}
	return b
}

func appendBool(b []byte, v bool) []byte {
	if v {
		return append(b, 1)
	}
	return append(b, 0)
}

// Split cuts a SOME answer of more than MaxIndices indices into records of
// at most MaxIndices, with the same call number: the first and its
// continuations. Other records come back alone. The records share r's
// Indices array.
func Split(r Record) []Record {
	if r.Op != OpSome || len(r.Indices) <= MaxIndices {
		return []Record{r}
	}
	var out []Record
	for idx := r.Indices; len(idx) > 0; {
		c := r
		n := min(len(idx), MaxIndices)
		c.Indices, idx = idx[:n], idx[n:]
		out = append(out, c)
	}
	return out
}

// ErrShort is returned by Decoder.Next for bytes that end inside a record.
var ErrShort = errors.New("replay: record cut short")

// FieldError is a record field the decoder refuses.
type FieldError struct {
	Op    Op
	Field string
	Value any
	Want  string
}

func (e *FieldError) Error() string {
	return fmt.Sprintf("replay: %v record: %s = %v, want %s", e.Op, e.Field, e.Value, e.Want)
}

// Decoder reads and checks one rank's records in order. Ranks bounds
// sources (communicator ranks are below the job's size).
type Decoder struct {
	Ranks int
	// CheckOnly: Next checks a SOME record's indices without returning
	// them (Record.Indices stays nil), so checking allocates nothing: what
	// the agent does with every drained ring.
	CheckOnly bool
	prev      uint64
	ended     bool
	// What a SOME continuation continues: the last SOME record's call
	// (Seq, Call, Run, NReq) and its last index. Scalars only, so a rank
	// cannot grow the decoder by continuing one call forever.
	someOK, someHas  bool // the last record was a SOME; it had indices
	someSeq, someRun uint64
	someCall         Call
	someNReq         int
	someLast         int
}

type reader struct {
	b   []byte
	n   int
	err error
	op  Op
}

func (r *reader) uvarint(field string, hi uint64) uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b[r.n:])
	switch {
	case n == 0:
		r.err = ErrShort
	case n < 0:
		r.err = &FieldError{Op: r.op, Field: field, Value: "overflow", Want: "an unsigned varint of at most 64 bits"}
	case v > hi:
		r.err = &FieldError{Op: r.op, Field: field, Value: v, Want: fmt.Sprintf("0 .. %d", hi)}
	}
	r.n += max(n, 0)
	return v
}

func (r *reader) varint(field string, lo, hi int64) int64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Varint(r.b[r.n:])
	switch {
	case n == 0:
		r.err = ErrShort
	case n < 0:
		r.err = &FieldError{Op: r.op, Field: field, Value: "overflow", Want: "a signed varint of at most 64 bits"}
	case v < lo || v > hi:
		r.err = &FieldError{Op: r.op, Field: field, Value: v, Want: fmt.Sprintf("%d .. %d", lo, hi)}
	}
	r.n += max(n, 0)
	return v
}

func (r *reader) byte1() byte {
	if r.err != nil {
		return 0
	}
	if r.n >= len(r.b) {
		r.err = ErrShort
		return 0
	}
	r.n++
	return r.b[r.n-1]
}

func (r *reader) call(want Op) Call {
	c := Call(r.byte1())
	if r.err == nil && OpOf(c) != want {
		r.err = &FieldError{Op: r.op, Field: "call", Value: uint8(c), Want: fmt.Sprintf("a call answered by %v records", want)}
	}
	return c
}

func (r *reader) bool1(field string) bool {
	v := r.byte1()
	if r.err == nil && v > 1 {
		r.err = &FieldError{Op: r.op, Field: field, Value: v, Want: "0 or 1"}
	}
	return v == 1
}

// Next decodes the record at the start of b and returns it with its length.
// Bytes that end inside a record give ErrShort (more may follow); a value
// out of range gives a *FieldError naming the field, and the decoder is then
// unusable. A SOME continuation (dseq 0) is returned as its own record with
// Seq, Call, Run and NReq of the record it continues. The Indices of a
// returned record are the caller's.
func (d *Decoder) Next(b []byte) (Record, int, error) {
	if len(b) == 0 {
		return Record{}, 0, ErrShort
	}
	r := &reader{b: b, op: Op(b[0]), n: 1}
	rec := Record{Op: r.op, Run: 1}
	if d.ended {
		return Record{}, 0, &FieldError{Op: r.op, Field: "op", Value: r.op, Want: "nothing after END"}
	}
	if r.op == OpEnd {
		rec.Seq = r.uvarint("calls", math.MaxInt64)
		if r.err == nil && rec.Seq < d.prev {
			r.err = &FieldError{Op: r.op, Field: "calls", Value: rec.Seq, Want: fmt.Sprintf("at least %d (the last record's call)", d.prev)}
		}
		if r.err != nil {
			return Record{}, 0, r.err
		}
		d.ended = true
		return rec, r.n, nil
	}
	switch r.op {
	case OpMatch, OpProbe, OpFlag, OpIndex, OpSome, OpCancel:
	default:
		return Record{}, 0, &FieldError{Op: r.op, Field: "op", Value: uint8(r.op), Want: "0x01 .. 0x06 or 0x7f"}
	}
	dseq := r.varint("dseq", math.MinInt64, math.MaxInt64)
	seq := d.prev + uint64(dseq)
	if r.err == nil && (seq < 1 || seq > math.MaxInt64 || (dseq > 0 && seq < d.prev) || (dseq < 0 && seq > d.prev)) {
		r.err = &FieldError{Op: r.op, Field: "dseq", Value: dseq, Want: fmt.Sprintf("a step from call %d to a call in 1 .. 2^63-1", d.prev)}
	}
	rec.Seq = seq
	src := func() {
		rec.Source = int(r.varint("source", 0, int64(max(d.Ranks, 1)-1)))
		rec.Tag = int(r.varint("tag", 0, MaxTag))
	}
	run := func() {
		rec.Run = r.uvarint("run", math.MaxInt64-min(seq, math.MaxInt64))
		if r.err == nil && rec.Run < 1 {
			r.err = &FieldError{Op: r.op, Field: "run", Value: 0, Want: "at least 1"}
		}
	}
	switch r.op {
	case OpMatch:
		rec.Call = r.call(OpMatch)
		src()
	case OpProbe:
		rec.Call = r.call(OpProbe)
		run()
		if rec.Flag = r.bool1("found"); rec.Flag {
			src()
		}
	case OpFlag:
		rec.Call = r.call(OpFlag)
		run()
		rec.Flag = r.bool1("flag")
	case OpCancel:
		rec.Call = r.call(OpCancel)
		rec.Flag = r.bool1("cancelled")
	case OpIndex:
		rec.Call = r.call(OpIndex)
		run()
		rec.NReq = int(r.uvarint("nreq", math.MaxInt32))
		rec.Index = int(r.varint("index", -1, int64(rec.NReq)-1))
	case OpSome:
		rec.Call = r.call(OpSome)
		run()
		rec.NReq = int(r.uvarint("nreq", math.MaxInt32))
		k := int(r.uvarint("k", MaxIndices))
		above := -1 // indices must be above this one
		if dseq == 0 && d.someOK && d.someSeq == seq && r.err == nil {
			if rec.Call != d.someCall || rec.Run != d.someRun || rec.NReq != d.someNReq || !d.someHas || k == 0 {
				r.err = &FieldError{Op: r.op, Field: "continuation", Value: rec.Outcome(), Want: "indices, and the call, run and nreq of the SOME record it continues"}
			} else {
				above = d.someLast
			}
		}
		if r.err == nil && k > 0 && !d.CheckOnly {
			rec.Indices = make([]int, 0, k)
		}
		last := int64(0)
		for i := 0; i < k && r.err == nil; i++ {
			at := last + int64(r.uvarint("index gap", math.MaxInt32))
			if r.err == nil && (at <= int64(above) || at >= int64(rec.NReq)) {
				r.err = &FieldError{Op: r.op, Field: "index", Value: at, Want: fmt.Sprintf("ascending, in %d .. %d (nreq %d)", above+1, rec.NReq-1, rec.NReq)}
			}
			last, above = at, int(at)
			if !d.CheckOnly {
				rec.Indices = append(rec.Indices, int(at))
			}
		}
		if r.err == nil && rec.Run > 1 && k > 0 {
			r.err = &FieldError{Op: r.op, Field: "run", Value: rec.Run, Want: "1 for an answer with indices"}
		}
		if r.err == nil {
			if !(dseq == 0 && d.someOK && d.someSeq == seq) { // a new call, not a continuation
				d.someSeq, d.someCall, d.someRun, d.someNReq, d.someHas = seq, rec.Call, rec.Run, rec.NReq, false
			}
			if k > 0 {
				d.someHas, d.someLast = true, above
			}
		}
	}
	if r.err != nil {
		return Record{}, 0, r.err
	}
	d.someOK = rec.Op == OpSome
	d.prev = seq
	return rec, r.n, nil
}

// Ended reports whether the decoder has read an END record.
func (d *Decoder) Ended() bool { return d.ended }

// Check decodes every record of b, which must end at a record boundary, and
// returns how many there were (what the agent does with a drained ring).
func (d *Decoder) Check(b []byte) (int, error) {
	n := 0
	for len(b) > 0 {
		_, k, err := d.Next(b)
		if err != nil {
			return n, err
		}
		b = b[k:]
		n++
	}
	return n, nil
}
