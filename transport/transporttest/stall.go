// Package transporttest holds fault-injecting wrappers of transport.Link for
// tests, in the tradition of net/http/httptest. Production code does not
// import it: bcsrun and bcsd link it only when built with the bcsfault tag
// (internal/launch/fault.go), as the end-to-end tests of cmd/bcsrun build them.
package transporttest

import (
	"sync/atomic"
	"time"

	"github.com/bcsmpi/bcsmpi/internal/proto"
	"github.com/bcsmpi/bcsmpi/transport"
)

// Stall wraps an agent's link so that the agent stops answering the master
// from slice at on, as an agent whose process hangs or whose host dies: the
// first frame from the master (endpoint 0) of a slice >= at is not delivered,
// nor is anything after it, and every frame the agent sends from then on is
// dropped. A stalled Recv waits until the mesh is closed (the job's teardown)
// and then delivers a MsgStop, so the agent ends quietly as a stopped one.
// at must be at least 1.
func Stall(l transport.Link, at proto.SliceID) transport.Link {
	return &stall{Link: l, at: at}
}

type stall struct {
	transport.Link
	at      proto.SliceID
	stalled atomic.Bool
}

// Stalled reports whether a link made by Stall has stalled (false for any
// other link).
func Stalled(l transport.Link) bool {
	s, ok := l.(*stall)
	return ok && s.stalled.Load()
}

func (s *stall) Recv(from int, msg *proto.Msg, timeout time.Duration) error {
	if !s.stalled.Load() {
		if err := s.Link.Recv(from, msg, timeout); err != nil {
			return err
		}
		if from != 0 || msg.Slice < s.at {
			return nil
		}
		s.stalled.Store(true)
	}
	<-s.Link.Done() // silent until the job is torn down
	*msg = proto.Msg{Type: proto.MsgStop}
	return nil
}

// Connect dials nothing once stalled: a hung agent makes no connection.
func (s *stall) Connect(to int) {
	if !s.stalled.Load() {
		s.Link.Connect(to)
	}
}

func (s *stall) Send(to int, msg *proto.Msg) error {
	if s.stalled.Load() {
		return nil // dropped
	}
	return s.Link.Send(to, msg)
}
