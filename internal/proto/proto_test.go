package proto

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestFrameRoundTrip(t *testing.T) {
	msgs := []Msg{
		{Type: MsgDEM, Slice: 42},
		{Type: MsgDEMDone, Slice: 7, Node: 3, Count: 2, Descs: []Descriptor{
			{Kind: KindSend, Inline: true, Comm: 0, Rank: 1, Peer: 2, Tag: 9, Req: 4, Seq: 11, PostSlice: 6, Addr: 0xdeadbeef, Len: 100},
			{Kind: KindRecv, Rank: 2, Peer: AnySource, Tag: AnyTag, Req: 1, Seq: 1, Len: 1 << 40},
			{Kind: KindColl, Coll: CollReduceScatter, InPlace: true, Op: 3, DType: 10, CollSeq: 1 << 31, Comm: 7, Rank: 5,
				Peer: 2, Req: 3, Seq: 99, PostSlice: 4, Addr: 0x1000, RAddr: 0xffffffff0000, Len: 4096},
			{Kind: KindCollPart, Tag: PartRecv, CollSeq: 2, Peer: 1, Addr: 8, Len: 16},
			{Kind: KindColl, Coll: CollBcast, Persist: true, CollSeq: PersistKey(70000, 3), Len: 8},
			{Kind: KindColl, Coll: CollGather, CollSeq: 3, DType: 10, Len: 8, UserOp: 0xbeef, UserColl: CollAllreduce},
		}},
		{Type: MsgData, Slice: 1, Index: 5, Payload: []byte("hello")},
		{Type: MsgFail, Code: -1, Text: "rank 3 exited"},
		{Type: MsgHold, Slice: 12},
	}
	var b []byte
	for i := range msgs {
		b = AppendFrame(b, &msgs[i])
	}
	r := bytes.NewReader(b)
	var scratch []byte
	for i := range msgs {
		var got Msg
		if err := ReadFrame(r, &scratch, &got); err != nil {
			t.Fatalf("frame %d: %v", i, err)
		}
		if got.Payload != nil {
			got.Payload = append([]byte(nil), got.Payload...)
		}
		if !reflect.DeepEqual(got, msgs[i]) {
			t.Errorf("frame %d:\n got %+v\nwant %+v", i, got, msgs[i])
		}
	}
}

func TestDecodeRejects(t *testing.T) {
	good := AppendFrame(nil, &Msg{Type: MsgDEMDone, Descs: []Descriptor{{Kind: KindSend}}})
	body := good[frameHeaderLen:]
	cases := map[string]struct {
		t    MsgType
		body []byte
	}{
		"type zero":                {0, body},
		"type too large":           {msgTypeMax + 1, body},
		"short":                    {MsgDEMDone, body[:10]},
		"truncated descs":          {MsgDEMDone, body[:len(body)-20]},
		"bad kind":                 {MsgDEMDone, func() []byte { c := append([]byte(nil), body...); c[30] = 9; return c }()},
		"user op without its call": {MsgDEMDone, func() []byte { c := append([]byte(nil), body...); c[30+69] = 1; return c }()},
		"user op on a send": {MsgDEMDone, func() []byte {
			c := append([]byte(nil), body...)
			c[30+69], c[30+71] = 1, uint8(CollAllreduce)
			return c
		}()},
	}
	for name, c := range cases {
		var m Msg
		err := DecodeBody(c.t, c.body, &m)
		if !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: err = %v, want ErrMalformed", name, err)
		}
	}
}

func FuzzDecodeBody(f *testing.F) {
	f.Add(uint8(MsgDEMDone), AppendFrame(nil, &Msg{Type: MsgDEMDone, Descs: []Descriptor{{Kind: KindRecv}}})[frameHeaderLen:])
	f.Add(uint8(MsgData), AppendFrame(nil, &Msg{Type: MsgData, Payload: []byte{1, 2, 3}})[frameHeaderLen:])
	f.Fuzz(func(t *testing.T, typ uint8, body []byte) {
		var m Msg
		if err := DecodeBody(MsgType(typ), body, &m); err != nil {
			return
		}
		// A body that decodes must re-encode to the same bytes (canonical form).
		again := AppendFrame(nil, &m)[frameHeaderLen:]
		var m2 Msg
		if err := DecodeBody(MsgType(typ), again, &m2); err != nil {
			t.Fatalf("re-decode: %v", err)
		}
		if !reflect.DeepEqual(m, m2) {
			t.Fatalf("round trip changed the message:\n%+v\n%+v", m, m2)
		}
	})
}

// TestFieldAccessorsRoundTrip: what the accessors of the collectives' other
// meanings write is what they read back, after the descriptor's encoding,
// and it lands in the fields the layout has always used (no wire change).
func TestFieldAccessorsRoundTrip(t *testing.T) {
	var root, split, group Descriptor
	root.Kind, root.Coll = KindColl, CollBcast
	root.SetRoot(7)
	split.Kind, split.Coll = KindColl, CollSplit
	split.SetSplit(UndefinedColor, -3)
	split.SetLives(70000)
	group.Kind, group.Coll = KindColl, CollGroup
	group.SetGroup(42, 2, 5, 0xfeedface)
	group.SetLives(4097)
	dec := func(d Descriptor) Descriptor {
		t.Helper()
		got, err := DecodeDescriptor(AppendDescriptor(nil, d))
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	if d := dec(root); d.Root() != 7 || d.Peer != 7 {
		t.Errorf("root: %+v", d)
	}
	if d := dec(split); d.Color() != UndefinedColor || d.Key() != -3 || d.Lives() != 70000 || d.Tag != UndefinedColor || d.Peer != -3 {
		t.Errorf("split: %+v", d)
	}
	if d := dec(group); d.GroupTag() != 42 || d.GroupRank() != 2 || d.GroupSize() != 5 || d.GroupID() != 0xfeedface || d.Lives() != 4097 ||
		d.Tag != 42 || d.Peer != 2 || d.Len != 5 || d.Addr != 0xfeedface {
		t.Errorf("group: %+v", d)
	}
	pair := Descriptor{Kind: KindRecv, Peer: 1, Tag: 5}
	pair.SetPair(3)
	if d := dec(pair); d.Pair() != 3 || d.CollSeq != 3 || !strings.Contains(d.Describe(), " pair=3") {
		t.Errorf("partitioned receive: %+v (%s)", d, d.Describe())
	}
	if d := (Descriptor{Kind: KindColl, CollSeq: 3}); d.Pair() != 0 {
		t.Errorf("a collective's CollSeq read as a pair number: %d", d.Pair())
	}
	c := NewCommCompletion(3, 9, 12, 1, 4)
	if c.Rank != 3 || c.Req != 9 || c.Kind != KindColl || c.NewComm() != 12 || c.NewCommRank() != 1 || c.NewCommSize() != 4 ||
		c.Count != 12 || c.Tag != 1 || c.Source != 4 {
		t.Errorf("new communicator completion: %+v", c)
	}
}

// A persistent collective's key: its init index and step, each modulo
// 2^16; the flag travels, and is refused on a point-to-point descriptor.
func TestPersistKey(t *testing.T) {
	d := Descriptor{Kind: KindColl, Coll: CollBarrier, Persist: true, CollSeq: PersistKey(3, 65537)}
	if d.PersistIndex() != 3 || d.PersistStep() != 1 || !strings.Contains(d.Describe(), "barrier#p3.1") && !strings.Contains(d.Describe(), "#p3.1") {
		t.Fatalf("index %d step %d describe %q", d.PersistIndex(), d.PersistStep(), d.Describe())
	}
	if !strings.Contains(d.CollCall(), "persistent collective #3") {
		t.Errorf("CollCall = %q", d.CollCall())
	}
	b := AppendDescriptor(nil, Descriptor{Kind: KindSend, Persist: true})
	if _, err := DecodeDescriptor(b); err == nil || !strings.Contains(err.Error(), "persistent collective flag on a send") {
		t.Errorf("persistent send decoded: %v", err)
	}
}

// The eager flag (a blocking send returned at its post) travels on an
// inline send, and is refused on anything else.
func TestEagerFlag(t *testing.T) {
	d := Descriptor{Kind: KindSend, Inline: true, Eager: true, Rank: 1, Peer: 2, Len: 8}
	got, err := DecodeDescriptor(AppendDescriptor(nil, d))
	if err != nil || got != d {
		t.Fatalf("decoded %+v, %v; want %+v", got, err, d)
	}
	for _, bad := range []Descriptor{{Kind: KindSend, Eager: true}, {Kind: KindRecv, Inline: true, Eager: true}} {
		if _, err := DecodeDescriptor(AppendDescriptor(nil, bad)); err == nil || !strings.Contains(err.Error(), "eager flag") {
			t.Errorf("%+v decoded: %v", bad, err)
		}
	}
}
