package launch

import (
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/bcsmpi/bcsmpi/nicthread"
)

// stallWatch notices that bcsrun itself did not run for a while: stopped by
// SIGSTOP or Ctrl-Z (SIGTSTP), or starved of CPU. The master and every agent
// live in bcsrun, so when the master gives up on a node after node_timeout
// and bcsrun had not been running for a large part of that time, the silence
// was bcsrun's own, not the node's, and the job's message says so.
//
// The rule: a goroutine beats every period; a gap of at least min (half of
// node_timeout) between two beats is a stall. An error that arrives while a
// stall is still under way (no beat since min ago) or within window after a
// stall ended (window: the master's longest wait, node_timeout + tx_timeout,
// plus a period) is blamed on the stall, if it is a timeout (isTimeout). A node that really stops answering
// leaves the beats regular, so its message is unchanged.
//
// beat, cont and stalled take the time as input (unit-tested with synthetic
// times); run is the thin driver. Safe for concurrent use.
type stallWatch struct {
	period, min, window time.Duration

	mu     sync.Mutex
	last   time.Time     // latest beat
	gap    time.Duration // the latest stall, if any
	gapEnd time.Time     // when it ended
	conted bool          // a SIGCONT arrived: bcsrun was stopped, not starved
}

func newStallWatch(nodeTimeout, txTimeout time.Duration, now time.Time) *stallWatch {
	period := min(max(nodeTimeout/8, time.Millisecond), 50*time.Millisecond)
	return &stallWatch{period: period, min: nodeTimeout / 2, window: nodeTimeout + txTimeout + period, last: now}
}

func (s *stallWatch) beat(now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if g := now.Sub(s.last); g >= s.min {
		s.gap, s.gapEnd = g, now
	}
	s.last = now
}

func (s *stallWatch) cont() {
	s.mu.Lock()
	s.conted = true
	s.mu.Unlock()
}

// stalled says for how long bcsrun did not run around now, if that explains
// a timeout reported at now; 0 if it does not.
func (s *stallWatch) stalled(now time.Time) (time.Duration, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if g := now.Sub(s.last); g >= s.min {
		return g, s.conted
	}
	if s.gap > 0 && now.Sub(s.gapEnd) <= s.window {
		return s.gap, s.conted
	}
	return 0, false
}

// explain returns the job's message for err, a timeout or failure the master
// or an agent reported at now: err itself, or, if bcsrun had stalled around
// now, the stall first and err as what the master saw.
func (s *stallWatch) explain(err error, nodeTimeout time.Duration, now time.Time) string {
	g, stopped := s.stalled(now)
	if g == 0 || !isTimeout(err) {
		return "bcsmpi: job aborted: " + err.Error()
	}
	how := "did not run for %.1fs (stopped by SIGSTOP or Ctrl-Z, or starved of CPU)"
	if stopped {
		how = "was stopped for %.1fs (SIGSTOP or Ctrl-Z, then SIGCONT)"
	}
	return fmt.Sprintf("bcsmpi: job aborted: bcsrun itself "+how+", half of node_timeout (%v) or more; the master and the agents run inside bcsrun, so the nodes could not answer meanwhile. The master saw: %v",
		g.Seconds(), nodeTimeout, err)
}

// isTimeout says whether err is something a stall of bcsrun can cause: the
// master's "stopped answering ... (node_timeout)" or an agent's "chunks ...
// did not arrive within" (nicthread's wording), or a network timeout. Other
// failures (a deadlock, a protocol error) are never blamed on a stall.
func isTimeout(err error) bool {
	var je *nicthread.JobError
	if errors.As(err, &je) {
		return strings.Contains(je.Why, "(node_timeout)") || strings.Contains(je.Why, "did not arrive within")
	}
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// run beats until stop is closed; cont carries SIGCONT.
func (s *stallWatch) run(cont <-chan os.Signal, stop <-chan struct{}) {
	t := time.NewTicker(s.period)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			s.beat(time.Now())
		case <-cont:
			s.cont()
		case <-stop:
			return
		}
	}
}
