package sim

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/bcsmpi/bcsmpi/internal/proto"
)

// The deadlock detector's scenarios (issue 9) on 150 nodes, every node a
// replica: the verdict must be identical everywhere (Step checks), false
// alarms are failures, and true deadlocks are reported once no rank can
// make progress.

func deadlockConfig(inj Injector) Config {
	w := DefaultWorkload
	w.Rounds = 8
	return Config{Nodes: 150, RanksPerNode: 2, DeadlockSlices: 5, Workload: w, Inject: inj}
}

// A rank that reaches MPI_Init 60 slices late (far past the 5-slice guard)
// holds everyone in the first MPI_Comm_split: not a deadlock.
func TestSimLateStarterIsNoDeadlock(t *testing.T) {
	s := newSim(t, deadlockConfig(LateStart{Rank: 123, At: 60}), seedOr(11))
	st := mustFinish(t, s, 2000)
	if st.Slices < 60 {
		t.Fatalf("job finished in %d slices, before the late starter started", st.Slices)
	}
}

// A rank stopped for 100 slices (SIGSTOP) in a relay round (stopped_rank.txt
// at scale): it holds the completion of its first MPI_Send, unconsumed, and
// an Irecv that its partner will satisfy only after the rank's next Send;
// every other rank ends up waiting. Not a deadlock: the rank is woken and
// goes on when it runs again. (Seed 1 opens the program with a relay round;
// with the woken status ignored, this run reports a false deadlock in slice
// 36, checked.)
func TestSimStoppedRankIsNoDeadlock(t *testing.T) {
	s := newSim(t, deadlockConfig(StopRank{Rank: 76, From: 7, To: 107}), seedOr(1))
	st := mustFinish(t, s, 2000)
	if st.Slices < 107 {
		t.Fatalf("job finished in %d slices, while rank 76 was stopped", st.Slices)
	}
}

// A slow node (reports 2 ms late, 4 slices, for 50 slices) is not a
// deadlock either, and not a node timeout.
func TestSimSlowNodeIsNoDeadlock(t *testing.T) {
	s := newSim(t, deadlockConfig(SlowNode{Node: 40, From: 10, To: 60, Delay: 2 * time.Millisecond}), seedOr(13))
	st := mustFinish(t, s, 2000)
	if st.Skipped == 0 {
		t.Fatal("a node 2 ms late in every report made no slice late")
	}
}

// A process that exits without MPI_Init leaves every other rank waiting in
// the first split: a deadlock without a wait-for cycle, naming the rank.
func TestSimExitedWithoutMPIDeadlocks(t *testing.T) {
	s := newSim(t, deadlockConfig(NoMPI{Rank: 201, At: 3}), seedOr(14))
	dl := mustDeadlock(t, s)
	for _, want := range []string{"rank 201 (exited without calling MPI_Init)", "rank 0 (in MPI_Comm_split)", "no wait-for cycle"} {
		if !strings.Contains(dl, want) {
			t.Errorf("report lacks %q:\n%s", want, firstLines(dl, 8))
		}
	}
}

// Two ranks that receive from each other with a tag nobody sends: the rest
// of the job runs on until it finishes or waits on them, then the deadlock
// is reported with a wait-for cycle.
func TestSimRecvCycleDeadlocks(t *testing.T) {
	s := newSim(t, deadlockConfig(RecvCycle{A: 5, B: 250, Round: 2}), seedOr(15))
	dl := mustDeadlock(t, s)
	for _, want := range []string{"rank 5 (in MPI_Recv): waits for a message from rank 250 (tag 1073741824)",
		"rank 250 (in MPI_Recv): waits for a message from rank 5", "wait-for cycle: "} {
		if !strings.Contains(dl, want) {
			t.Errorf("report lacks %q:\n%s", want, firstLines(dl, 12))
		}
	}
	// Every rank is stuck or finished: nothing is running, starting or woken.
	for r, st := range s.status {
		if !proto.StatusBlocked(st) && !proto.StatusInert(st) {
			t.Errorf("deadlock declared while rank %d is %s", r, proto.DescribeStatus(st))
		}
	}
}

// deadlock_action warn: reported once, the job keeps waiting.
func TestSimDeadlockWarnKeepsWaiting(t *testing.T) {
	cfg := deadlockConfig(RecvCycle{A: 5, B: 250, Round: 2})
	cfg.DeadlockWarn = true
	s := newSim(t, cfg, seedOr(15))
	if err := s.Run(400); err != nil {
		t.Fatal(err)
	}
	if st := s.Stats(); st.Deadlocks != 1 || s.Done() {
		t.Fatalf("%d deadlock reports, done %v; want 1 report and a job still waiting", st.Deadlocks, s.Done())
	}
}

// A node that stops answering is the master's node timeout, not a deadlock.
func TestSimSilentNodeTimesOut(t *testing.T) {
	s := newSim(t, deadlockConfig(SilentNode{Node: 17, At: 30}), seedOr(16))
	err := s.Run(2000)
	var je *JobError
	if !errors.As(err, &je) || je.Node != 17 || je.Slice < 30 || je.Deadlock != nil ||
		!strings.Contains(err.Error(), "node 17 stopped answering: no DEM report for slice 30 within 1s (node_timeout)") {
		t.Fatalf("err = %v, want node 17's DEM timeout in slice 30", err)
	}
	if st := s.Stats(); st.Deadlocks != 0 {
		t.Fatalf("%d deadlock reports for a silent node", st.Deadlocks)
	}
}

func mustDeadlock(t *testing.T, s *Sim) string {
	t.Helper()
	err := s.Run(3000)
	var je *JobError
	if !errors.As(err, &je) || je.Deadlock == nil {
		t.Fatalf("err = %v after %d slices, want a deadlock", err, s.Stats().Slices)
	}
	if je.Deadlock.Slices != 5 || !je.Deadlock.Fatal {
		t.Fatalf("deadlock after %d slices (fatal %v), want the guard of 5, fatal", je.Deadlock.Slices, je.Deadlock.Fatal)
	}
	return je.Deadlock.Report
}

func firstLines(s string, n int) string {
	ls := strings.SplitN(s, "\n", n+1)
	if len(ls) > n {
		ls[n] = fmt.Sprintf("... (%d more bytes)", len(ls[n]))
	}
	return strings.Join(ls, "\n")
}
