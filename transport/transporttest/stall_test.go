package transporttest

import (
	"runtime"
	"testing"
	"time"

	"github.com/bcsmpi/bcsmpi/internal/proto"
)

// fakeLink delivers the frames pushed into in and records what is sent.
type fakeLink struct {
	in   chan proto.Msg
	sent []proto.Msg
	done chan struct{}
	errs chan error
}

func (f *fakeLink) Send(to int, m *proto.Msg) error { f.sent = append(f.sent, *m); return nil }
func (f *fakeLink) Connect(int)                     {}
func (f *fakeLink) Recv(from int, m *proto.Msg, _ time.Duration) error {
	*m = <-f.in
	return nil
}
func (f *fakeLink) Done() <-chan struct{} { return f.done }
func (f *fakeLink) Errors() <-chan error  { return f.errs }

func TestStallFromSlice(t *testing.T) {
	f := &fakeLink{in: make(chan proto.Msg, 1), done: make(chan struct{}), errs: make(chan error)}
	l := Stall(f, 3)
	var m proto.Msg
	for k := proto.SliceID(1); k < 3; k++ {
		f.in <- proto.Msg{Type: proto.MsgDEM, Slice: k}
		if err := l.Recv(0, &m, time.Second); err != nil || m.Type != proto.MsgDEM || m.Slice != k {
			t.Fatalf("slice %d: got %v %+v, want the master's DEM delivered", k, err, m)
		}
		if err := l.Send(0, &proto.Msg{Type: proto.MsgDEMDone, Slice: k}); err != nil {
			t.Fatal(err)
		}
	}
	if len(f.sent) != 2 || Stalled(l) {
		t.Fatalf("before slice 3: %d frames sent (want 2), stalled %v", len(f.sent), Stalled(l))
	}
	got := make(chan proto.Msg, 1)
	go func() {
		var m proto.Msg
		if err := l.Recv(0, &m, time.Second); err != nil {
			t.Error(err)
		}
		got <- m
	}()
	f.in <- proto.Msg{Type: proto.MsgDEM, Slice: 3}
	for deadline := time.Now().Add(10 * time.Second); !Stalled(l); runtime.Gosched() {
		if time.Now().After(deadline) {
			t.Fatal("the link did not stall on the master's frame of slice 3")
		}
	}
	select {
	case m := <-got:
		t.Fatalf("a stalled Recv returned %+v before the teardown", m)
	default:
	}
	if err := l.Send(0, &proto.Msg{Type: proto.MsgDEMDone, Slice: 3}); err != nil || len(f.sent) != 2 {
		t.Fatalf("a stalled Send: %v, %d frames reached the link (want it dropped: 2)", err, len(f.sent))
	}
	close(f.done)
	if m := <-got; m.Type != proto.MsgStop {
		t.Fatalf("after the teardown the stalled Recv delivered %+v, want a stop", m)
	}
	if err := l.Recv(0, &m, time.Second); err != nil || m.Type != proto.MsgStop {
		t.Fatalf("a later Recv: %v %+v, want a stop", err, m)
	}
}

// Frames from other endpoints than the master do not start the stall.
func TestStallOnlyOnMasterFrames(t *testing.T) {
	f := &fakeLink{in: make(chan proto.Msg, 1), done: make(chan struct{}), errs: make(chan error)}
	l := Stall(f, 1)
	f.in <- proto.Msg{Type: proto.MsgData, Slice: 5}
	var m proto.Msg
	if err := l.Recv(2, &m, time.Second); err != nil || m.Type != proto.MsgData || Stalled(l) {
		t.Fatalf("got %v %+v stalled %v, want the data frame delivered and no stall", err, m, Stalled(l))
	}
	if Stalled(f) {
		t.Fatal("Stalled is true for a link not made by Stall")
	}
}
